#!/usr/bin/env bash
# Usage: ci/test.sh [--quick] [--no-install] [--work DIR] [--help]
#
# The test suite: first installs the packages it needs (ci/install-deps.sh,
# which ends with the tool smoke test), then runs every ci/tests/*.sh in
# order and ends with the line 'N passed, N failed'. Tests run the real
# import and replay on the real linux-source-6.12 package and the whole
# ci/bisect-boot.sh; error-path tests use small fixture trees under a
# temporary directory. The work directory is ./work unless --work or
# SERIES_WORK says otherwise.
#
#   --quick       skip the slow tests: those with a '# Slow: WHY' line (kernel
#                 builds, boots, the fresh Debian chroot, what needs their
#                 results)
#   --no-install  do not run ci/install-deps.sh first
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

QUICK=no INSTALL=yes

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--quick) QUICK=yes ;;
	--no-install) INSTALL=no ;;
	*) OPT_TAKES=0 ;;
	esac
}

main() {
	parse_options own_option "$@"
	export SERIES_WORK QUICK
	if [ "$INSTALL" = yes ]; then
		"$SERIES_TOP/ci/install-deps.sh" || die "ci/install-deps.sh failed: the packages above are missing"
	fi
	local results t pass=0 failed=0 skipped=0 p f s start
	results=$(mktemp)
	export T_RESULTS=$results
	for t in "$SERIES_TOP"/ci/tests/[0-9]*.sh; do
		printf '== %s\n' "${t#"$SERIES_TOP"/}"
		if [ "$QUICK" = yes ] && grep -q '^# Slow: ' "$t"; then
			printf 'skip %s: --quick: %s\n' "${t##*/}" "$(sed -n 's/^# Slow: //p' "$t" | head -n 1)"
			printf '0 0 1\n' >>"$results"
			continue
		fi
		start=$(now_s)
		if ! bash "$t"; then
			printf 'FAIL %s exited non-zero\n' "${t#"$SERIES_TOP"/}"
			printf '0 1\n' >>"$results"
		fi
		printf '   (%ss)\n' "$(elapsed_since "$start")"
	done
	while read -r p f s; do
		pass=$((pass + p))
		failed=$((failed + f))
		skipped=$((skipped + ${s:-0}))
	done <"$results"
	rm -f "$results"
	[ "$skipped" -eq 0 ] || printf '(%d skipped, each with its reason on a skip line above)\n' "$skipped"
	printf '%d passed, %d failed\n' "$pass" "$failed"
	[ "$failed" -eq 0 ] || exit 1
}

main "$@"
