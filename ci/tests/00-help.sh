#!/usr/bin/env bash
# Every entry point answers --help with its usage, and refuses an unknown
# option with a non-zero exit.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

for script in "$SERIES_TOP"/{base,ci,boot,b4,cocci}/*.sh; do
	[ -f "$script" ] || continue
	name=${script#"$SERIES_TOP"/}
	out=$("$script" --help 2>&1) && rc=0 || rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^Usage: ' <<<"$out"; then
		pass "$name --help"
	else
		fail "$name --help" "exit $rc: $(head -n 2 <<<"$out" | tr '\n' ' ')"
	fi
	check_fails "$name refuses an unknown option" "unknown argument|usage" "$script" --no-such-option
done

finish_test_file
