#!/usr/bin/env bash
# Usage: cocci/run.sh [--rules DIR|RULE]... [-j N] [--which FILE] FILE... [--help]
#
# Runs every semantic patch under the rule directories (default: cocci/,
# searched recursively; only rules with a report mode) over the C files
# given, with the options each rule names in its '// Options:' line, N rules
# at a time, and prints the reports, one per line, sorted:
# FILE:LINE:COLS: message. Exits 1 if anything was reported, 2 if spatch
# failed on a rule. --which FILE writes the path of every rule that
# reported, one per line, so a second run can take only those (--rules RULE).
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

declare -a RULE_DIRS=() FILES=()
JOBS=1
COCCI_WHICH=

# run_rule RULE FILE...: one spatch run, reports on stdout
run_rule() {
	local rule=$1 opts out
	shift
	opts=$(sed -n 's|^// Options: *||p' "$rule" | head -n 1)
	# shellcheck disable=SC2086 # opts is a list of spatch options
	if ! out=$(spatch_run -D report --very-quiet --no-show-diff $opts --sp-file "$rule" "$@" 2>&1); then
		printf 'SPATCH-FAILED %s: %s\n' "${rule##*/}" "$(head -n 3 <<<"$out" | tr '\n' ' ')"
		return 0
	fi
	grep -E '^[^ ]+:[0-9]+:[0-9]+-[0-9]+: ' <<<"$out" || return 0
	# a line this short is appended whole, whichever job writes it
	[ -z "${COCCI_WHICH:-}" ] || printf '%s\n' "$rule" >>"$COCCI_WHICH"
}

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--rules) RULE_DIRS+=("$(realpath "${2:?}")"); OPT_TAKES=2 ;;
	-j) JOBS=${2:?}; OPT_TAKES=2 ;;
	--which) COCCI_WHICH=$(realpath -m "${2:?}"); : >"$COCCI_WHICH"; OPT_TAKES=2 ;;
	-*) OPT_TAKES=0 ;;
	*) FILES+=("$1") ;;
	esac
}

main() {
	parse_options own_option "$@"
	[ ${#FILES[@]} -gt 0 ] || die "usage: cocci/run.sh FILE..."
	[ ${#RULE_DIRS[@]} -gt 0 ] || RULE_DIRS=("$SERIES_TOP/cocci")
	need_cmds spatch
	export -f run_rule spatch_run
	export COCCI_WHICH
	local out
	out=$(find "${RULE_DIRS[@]}" -name '*.cocci' -not -path '*/tests/*' -print0 |
		xargs -0 grep -lZ '^virtual report' |
		xargs -0 -r -I{} -P "$JOBS" bash -c 'run_rule "$@"' run_rule_sh {} "${FILES[@]}" 2>&1 |
		sort -u) || true
	if grep -q '^SPATCH-FAILED' <<<"$out"; then
		grep '^SPATCH-FAILED' <<<"$out" >&2
		exit 2
	fi
	[ -n "$out" ] || return 0
	printf '%s\n' "$out"
	exit 1
}

main "$@"
