#!/usr/bin/env bash
# Usage: ci/checks/sparse.sh --commit C --parent P --out DIR [--work WORK]
#
# sparse (make C=2) on the scanned C files in the guest config; a warning
# counts only if the commit adds it (line numbers dropped). The parent's
# scan normally comes from the cache (the previous commit of the walk).
# Runs after ci/checks/build.sh: a file is scanned if the guest build
# made its object. Contract: ci/lib/checks.sh.
# Inputs: boot/guest.config
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"

sparse_at() {
	local rev=$1
	has_findings sparse guest "$rev" && return 0
	checkout_build_tree "$rev"
	configure_build guest "$(config_fragment guest)"
	scan_objects sparse guest "$rev" C=2 CHECK=sparse
}

main() {
	parse_check_args "$@"
	need_cmds sparse
	[ -f "$(build_dir guest)/vmlinux" ] || check_error "no guest build in $(build_dir guest): run ci/checks/build.sh first"
	sparse_at "$CHECK_PARENT"
	sparse_at "$CHECK_COMMIT"
	new_scan_findings sparse guest >>"$CHECK_NEW"
	finish_check
}

main "$@"
