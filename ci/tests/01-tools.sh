#!/usr/bin/env bash
# The tool smoke test (ci/check-tools.sh) after the install step: every
# tool the pipeline calls runs here; every package it needs is in
# ci/install-deps.sh's list and every package of the list is checked; a
# missing tool (hidden from PATH, as on a machine where its package was never
# installed) is named with its package in seconds.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
CT=$SERIES_TOP/ci/check-tools.sh

rc=0
"$CT" >"$T/tools.log" 2>&1 || rc=$?
check_eq "every tool the pipeline calls works (ci/check-tools.sh)" 0 "$rc"
[ "$rc" -eq 0 ] || cat "$T/tools.log"

"$CT" --packages >"$T/checked" 2>&1 || true
"$SERIES_TOP/ci/install-deps.sh" --list 2>/dev/null | sort -u >"$T/installed" || true
check_eq "every package the tools need is in ci/install-deps.sh's list" "" \
	"$(comm -23 "$T/checked" "$T/installed" | paste -sd' ')"
check_eq "every package of ci/install-deps.sh's list is smoke-tested" "" \
	"$(comm -13 "$T/checked" "$T/installed" | paste -sd' ')"

# run_without NAME CMD...: check-tools.sh on a PATH without the CMDs; its
# exit status and output in $T/NAME.rc and $T/NAME.log
run_without() {
	local name=$1 path rc=0
	shift
	path=$(path_without "$T/$name" "$@")
	env PATH="$path" "$CT" >"$T/$name.log" 2>&1 || rc=$?
	printf '%s\n' "$rc" >"$T/$name.rc"
}

# names NAME PATTERN WHAT: the run failed and printed PATTERN
names() {
	if [ "$(cat "$T/$1.rc")" -eq 0 ]; then
		fail "$3" "check-tools.sh exited 0"
	elif grep -qE -- "$2" "$T/$1.log"; then
		pass "$3"
	else
		fail "$3" "no /$2/ in: $(tr '\n' ' ' <"$T/$1.log")"
	fi
}

# A machine without ocaml-nox: none of the commands of Debian's ocaml
# package (coccinelle itself brings only the OCaml runtime and findlib).
run_without no-ocaml ocamlc ocamlcmt ocamlcp ocamldebug ocamldep ocamldoc ocamldumpobj ocamllex \
	ocamlmklib ocamlmktop ocamlobjinfo ocamlopt ocamloptp ocamlprof ocamlyacc
names no-ocaml '^missing: ocamlopt \(package ocaml-nox\)' \
	"without ocamlopt, the OCaml compiler and its package are named"
check_eq "without ocamlopt, only ocamlopt is named" 1 "$(grep -c '^missing\|^not working' "$T/no-ocaml.log")"
run_without no-sparse-b4 sparse b4
names no-sparse-b4 '^missing: sparse \(package sparse\)' "without sparse, sparse and its package are named"
names no-sparse-b4 '^missing: b4 \(package b4\)' "without b4, b4 and its package are named"
names no-sparse-b4 'error: 2 of [0-9]+ tools missing or not working' "the last line counts what is missing"

finish_test_file
