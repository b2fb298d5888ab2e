#!/usr/bin/env bash
# Usage: cocci/run.sh [--rules DIR] FILE... [--help]
#
# Runs every semantic patch of cocci/ (or DIR) in report mode over the C
# files given, with the options each rule names in its '// Options:' line,
# and prints the reports: FILE:LINE:COLS: message. Exits 1 if anything was
# reported, 2 if spatch failed.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

RULES=$SERIES_TOP/cocci

rule_options() {
	sed -n 's|^// Options: *||p' "$1" | head -n 1
}

main() {
	local files=() rule out found=0 opts
	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help) usage_from_header "$0"; exit 0 ;;
		--rules) RULES=$(realpath "${2:?}"); shift ;;
		-*) die "unknown argument '$1' (see --help)" ;;
		*) files+=("$1") ;;
		esac
		shift
	done
	[ ${#files[@]} -gt 0 ] || die "usage: cocci/run.sh FILE..."
	need_cmds spatch
	for rule in "$RULES"/*.cocci; do
		opts=$(rule_options "$rule")
		# shellcheck disable=SC2086 # opts is a list of spatch options
		out=$(spatch -D report --very-quiet --no-show-diff $opts --sp-file "$rule" "${files[@]}" 2>&1) || {
			printf '%s: spatch failed:\n%s\n' "${rule##*/}" "$out" >&2
			exit 2
		}
		out=$(grep -E '^[^ ]+:[0-9]+:[0-9]+-[0-9]+: ' <<<"$out" || true)
		[ -z "$out" ] || { printf '%s\n' "$out"; found=1; }
	done
	return "$found"
}

main "$@"
