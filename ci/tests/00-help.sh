#!/usr/bin/env bash
# Every entry point answers --help with its usage, and refuses an unknown
# option with a non-zero exit; the README's layout table names every
# script and library, its settings table every SERIES_* variable.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

for script in "$SERIES_TOP"/{base,ci,boot,b4,cocci}/*.sh "$SERIES_TOP"/boot/*.py "$SERIES_TOP"/boot/clients/*.py; do
	[ -f "$script" ] || continue
	# a Python module the tools import is no entry point
	case "$script" in *.py) [ -x "$script" ] || continue ;; esac
	name=${script#"$SERIES_TOP"/}
	out=$("$script" --help 2>&1) && rc=0 || rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^Usage: ' <<<"$out"; then
		pass "$name --help"
	else
		fail "$name --help" "exit $rc: $(head -n 2 <<<"$out" | tr '\n' ' ')"
	fi
	check_fails "$name refuses an unknown option" "unknown argument|usage" "$script" --no-such-option
done

# The README's layout table names every script and library (or its folder).
names_in_readme() {
	grep -qF -e "\`$1\`" -e "\`$(dirname "$1")/\`" "$SERIES_TOP/README.md"
}
for script in "$SERIES_TOP"/{base,ci,ci/lib,ci/checks,boot,boot/lib,b4,cocci}/*.sh "$SERIES_TOP"/boot/*.py "$SERIES_TOP"/boot/clients/*; do
	name=${script#"$SERIES_TOP"/}
	check "README.md names $name" names_in_readme "$name"
done

# The README's settings table names every SERIES_* variable a script reads.
while read -r var; do
	check "README.md's Settings name $var" grep -qF "\`$var\`" "$SERIES_TOP/README.md"
done < <(cd "$SERIES_TOP" && git ls-files '*.sh' | xargs grep -ohE 'SERIES_[A-Z_]+' | sort -u)

finish_test_file
