#!/usr/bin/env bash
# Usage: ci/checks/build.sh --commit C --parent P --out DIR [--work WORK]
#
# The commit builds for the guest config (boot/guest.config, the kernel the
# boot stage runs) and for the lean modular one (boot/modules.config:
# libnvdimm, the pmem drivers, dax, dm and the filesystems as modules, so
# missing exports and link errors show), and compiling the scanned C files
# with W=1 gives no warning that the parent did not give. The parent's
# scan normally comes from the cache (the previous commit of the walk);
# only at the start of a range is the parent checked out and built. Each
# config has its own build directory, so only what changed rebuilds; the
# guest bzImage goes to the kernel cache the boot stage reads.
# Contract: ci/lib/checks.sh.
# Inputs: boot/guest.config boot/modules.config
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"

CONFIGS=(guest modules)
declare -A TARGETS=([guest]="bzImage" [modules]="vmlinux modules")

# build_at NAME REV: configure and build the config's targets (tree at REV)
build_at() {
	local name=$1 rev=$2
	printf '== %s config at %s\n' "$name" "$rev" >>"$CHECK_LOG"
	configure_build "$name" "$(config_fragment "$name")" || return 1
	# shellcheck disable=SC2086 # the target list is split on purpose
	kmake -C "$(build_tree)" O="$(build_dir "$name")" -j"$(build_jobs)" ${TARGETS[$name]} >>"$CHECK_LOG" 2>&1
}

cache_guest_kernel() {
	store_kernel "$(kernel_cache_key "$1" "" "$(config_fragment guest)")" "$(build_dir guest)"
}

# build_and_scan REV: build every config at REV and scan it with W=1.
# Called under '||', where set -e does not hold: every step says so itself.
build_and_scan() {
	local rev=$1 name
	checkout_build_tree "$rev" || return 1
	for name in "${CONFIGS[@]}"; do
		build_at "$name" "$rev" || return 1
		[ "$name" != guest ] || cache_guest_kernel "$rev" || return 1
		has_findings w1 "$name" "$rev" || scan_objects w1 "$name" "$rev" W=1 || return 1
	done
}

parent_scanned() {
	local name
	for name in "${CONFIGS[@]}"; do
		has_findings w1 "$name" "$CHECK_PARENT" || return 1
	done
}

main() {
	parse_check_args "$@"
	if ! parent_scanned; then
		build_and_scan "$CHECK_PARENT" || check_error "parent $CHECK_PARENT does not build: $(first_error "$CHECK_LOG")"
	fi
	build_and_scan "$CHECK_COMMIT" || check_error "does not build: $(first_error "$CHECK_LOG")"
	local name
	for name in "${CONFIGS[@]}"; do
		new_scan_findings w1 "$name" >>"$CHECK_NEW"
	done
	finish_check
}

main "$@"
