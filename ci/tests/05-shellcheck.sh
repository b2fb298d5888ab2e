#!/usr/bin/env bash
# Every shell script of the repository passes shellcheck -x at severity
# warning (boot/init, busybox ash, as dash); the findings are shown
# when one does not.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

need_cmds shellcheck
mapfile -t scripts < <(cd "$SERIES_TOP" && { git ls-files '*.sh' 2>/dev/null || find . -name '*.sh' -printf '%P\n'; } | sort -u)
check "there are scripts to check" test "${#scripts[@]}" -gt 20
for s in "${scripts[@]}"; do
	out=$(cd "$SERIES_TOP" && shellcheck -x -S warning "$s" 2>&1) && pass "$s: shellcheck clean" ||
		fail "$s: shellcheck clean" "$(head -n 12 <<<"$out")"
done
out=$(shellcheck -S warning -s dash "$SERIES_TOP/boot/init" 2>&1) && pass "boot/init: shellcheck clean (dash)" ||
	fail "boot/init: shellcheck clean (dash)" "$(head -n 12 <<<"$out")"

finish_test_file
