#!/usr/bin/env bash
# Usage: ci/checks/sparse.sh --commit C --parent P --out DIR [--work WORK]
#
# sparse (make C=2) on the C files the commit touches, in the guest config,
# at the parent and at the commit; a warning counts only if the commit adds
# it (line numbers dropped). Runs after ci/checks/build.sh, whose guest
# build directory it reuses. Contract: ci/lib/checks.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/checks.sh"

# sparse_at REV OUT: sparse warnings of the touched files at REV
sparse_at() {
	local rev=$1 out=$2 objs=() f
	checkout_build_tree "$rev"
	configure_build guest "$SERIES_TOP/boot/guest.config"
	for f in $(touched_c_files); do
		mgit cat-file -e "$rev:$f" 2>/dev/null || continue
		[ -f "$(build_dir guest)/${f%.c}.o" ] && objs+=("${f%.c}.o")
	done
	: >"$out"
	[ ${#objs[@]} -gt 0 ] || return 0
	make -C "$(build_tree)" O="$(build_dir guest)" -j"$(build_jobs)" C=2 CHECK=sparse "${objs[@]}" \
		>"$out.log" 2>&1 || check_error "sparse run failed at $rev: $(tail -n 1 "$out.log")"
	cat "$out.log" >>"$CHECK_LOG"
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out.log" | normalize_warnings >"$out" || true
}

main() {
	parse_check_args "$@"
	need_cmds sparse
	[ -f "$(build_dir guest)/vmlinux" ] || check_error "no guest build in $(build_dir guest): run ci/checks/build.sh first"
	local tmp
	tmp=$(mktemp -d)
	SPARSE_TMP=$tmp
	trap 'rm -rf "$SPARSE_TMP"' EXIT
	sparse_at "$CHECK_PARENT" "$tmp/parent"
	sparse_at "$CHECK_COMMIT" "$tmp/child"
	new_findings "$tmp/parent" "$tmp/child" >>"$CHECK_NEW"
	finish_check
}

main "$@"
