#!/usr/bin/env bash
# Usage: ci/checks/ppc64le.sh --commit C --parent P --out DIR [--work WORK]
#
# The scanned C files under arch/powerpc (the series changes papr_scm.c)
# cross-compile for ppc64le (ppc64le_defconfig plus boot/ppc64le.config,
# with Debian's gcc-powerpc64le-linux-gnu) with W=1, and give no warning
# that the parent did not give. A range that touches no powerpc file passes
# without building. The x86 guest never runs this code: a build is all we
# can check of it here. Contract: ci/lib/checks.sh.
# Inputs: boot/ppc64le.config
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"

CROSS=(ARCH=powerpc CROSS_COMPILE=powerpc64le-linux-gnu-)

powerpc_files() {
	scan_files | grep '^arch/powerpc/' || true
}

configure_ppc64le() {
	local out
	out=$(build_dir ppc64le)
	mkdir -p "$out"
	configure_once "$out" "$(config_stamp powerpc64le-linux-gnu-gcc "$(config_fragment ppc64le)")" \
		defconfig_ppc64le "$out"
}

# defconfig_ppc64le OUT: OUT's .config from scratch
defconfig_ppc64le() {
	local out=$1 tree
	tree=$(build_tree)
	kmake -C "$tree" O="$out" "${CROSS[@]}" ppc64le_defconfig >/dev/null &&
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$(config_fragment ppc64le)" >/dev/null &&
		kmake -C "$tree" O="$out" "${CROSS[@]}" olddefconfig >/dev/null
}

# scan_ppc64le REV: compile the powerpc files at REV with W=1, cache the
# warnings (findings_cache w1 ppc64le REV)
scan_ppc64le() {
	local rev=$1 out objs f
	has_findings w1 ppc64le "$rev" && return 0
	out=$(findings_cache w1 ppc64le "$rev")
	mkdir -p "$(dirname "$out")"
	checkout_build_tree "$rev"
	configure_ppc64le
	objs=()
	for f in $(powerpc_files); do
		mgit cat-file -e "$rev:$f" 2>/dev/null && objs+=("${f%.c}.o")
	done
	printf '== w1 ppc64le at %s: %s\n' "$rev" "${objs[*]:-(none)}" >>"$CHECK_LOG"
	: >"$out.log"
	if [ ${#objs[@]} -gt 0 ]; then
		kmake -C "$(build_tree)" O="$(build_dir ppc64le)" "${CROSS[@]}" -j"$(build_jobs)" W=1 \
			"${objs[@]}" >"$out.log" 2>&1 ||
			check_error "does not cross-compile for ppc64le at $rev: $(first_error "$out.log")"
	fi
	cat "$out.log" >>"$CHECK_LOG"
	sed "s|^$(build_tree)/||" "$out.log" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' |
		normalize_warnings >"$out.tmp" || true
	mv "$out.tmp" "$out"
}

main() {
	parse_check_args "$@"
	if [ -z "$(powerpc_files)" ]; then
		printf 'no powerpc file scanned: nothing to cross-compile\n' >>"$CHECK_LOG"
		finish_check
	fi
	need_cmds powerpc64le-linux-gnu-gcc
	scan_ppc64le "$CHECK_PARENT"
	scan_ppc64le "$CHECK_COMMIT"
	new_scan_findings w1 ppc64le >>"$CHECK_NEW"
	finish_check
}

main "$@"
