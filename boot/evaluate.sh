#!/usr/bin/env bash
# Usage: boot/evaluate.sh DIR COLUMN [--expected FILE]
#                         [--profile fast|debug|clients] [--help]
#
# Compares the results of one boot in DIR (tap.log from the guest, host.tap
# from boot/check-host.sh, compare.tap when the main job compared the boot
# with another) with column COLUMN of boot/expected.tsv (base,
# 1..9, reference, or "final" for the last numbered column). Only the rows
# of the boot's profile count: --profile debug or clients (a boot of
# run-qemu.sh with that profile) judges the rows of the groups listed on the
# file's "# profile NAME:" line, the default fast profile every row of no
# such group. Writes
#   DIR/details.tsv  test, group, expected, observed, verdict (match/MISMATCH)
#   DIR/groups.tsv   group, cell: ok, xfail (failed as expected), - (skipped
#                    as expected), FAIL (anything not as expected)
# and prints every mismatch. Exits 0 when all results are as expected.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

EXPECTED=$SERIES_TOP/boot/expected.tsv
PROFILE=fast

# observed results, "name<TAB>ok|fail|skip", from the TAP files there are
observed_results() {
	local f
	for f in "$@"; do
		[ ! -f "$f" ] || cat "$f"
	done | awk '
		/^(not )?ok [0-9]+ / {
			res = ($1 == "not") ? "fail" : "ok"
			name = ($1 == "not") ? $4 : $3
			sub(/^pmem\./, "", name)
			if (res == "ok" && $0 ~ /# SKIP/) res = "skip"
			print name "\t" res
		}'
}

resolve_column() {
	local col=$1 header
	header=$(grep -m1 '^# test' "$EXPECTED" | sed 's/^# //')
	if [ "$col" = final ]; then
		col=$(tr -s '\t' '\n' <<<"$header" | grep -E '^[0-9]+$' | sort -n | tail -1)
	fi
	tr -s '\t' '\n' <<<"$header" | grep -qxF -- "$col" ||
		die "$EXPECTED has no column '$col'"
	printf '%s\n' "$col"
}

# profile_groups [NAME]: the groups of profile NAME ("# profile NAME:
# GROUP..." in EXPECTED), or of every named profile
profile_groups() {
	sed -n "s/^# profile ${1:-[a-z]*}:[[:space:]]*//p" "$EXPECTED" | paste -sd' '
}

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--expected) EXPECTED=$(realpath "${2:?}"); OPT_TAKES=2 ;;
	--profile) PROFILE=${2:?}; OPT_TAKES=2 ;;
	-*) OPT_TAKES=0 ;;
	*) args+=("$1") ;;
	esac
}

main() {
	local dir="" col="" args=()
	parse_options own_option "$@"
	[ ${#args[@]} -eq 2 ] || die "usage: boot/evaluate.sh DIR COLUMN"
	case "$PROFILE" in fast | debug | clients) ;; *) die "--profile must be fast, debug or clients" ;; esac
	dir=${args[0]}
	[ -d "$dir" ] || die "$dir: no such results directory"
	col=$(resolve_column "${args[1]}")
	observed_results "$dir/tap.log" "$dir/host.tap" "$dir/compare.tap" >"$dir/observed.tsv"
	awk -F'\t+' -v col="$col" -v details="$dir/details.tsv" -v groups="$dir/groups.tsv" \
		-v named="$(profile_groups)" -v mine="$(profile_groups "$PROFILE")" -v profile="$PROFILE" '
		BEGIN {
			n = split(named, d, " "); for (i = 1; i <= n; i++) other[d[i]] = 1
			n = split(mine, d, " "); for (i = 1; i <= n; i++) own[d[i]] = 1
		}
		FILENAME == ARGV[1] { obs[$1] = $2; next }
		/^# test/ { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		/^#/ || NF < 3 { next }
		profile == "fast" && ($2 in other) { next }
		profile != "fast" && !($2 in own) { next }
		{
			name = $1; group = $2; want = $c
			got = (name in obs) ? obs[name] : "missing"
			# any: a race decides (NEEDS_RESET on the reference): ok or fail
			verdict = (got == want || (want == "any" && (got == "ok" || got == "fail"))) ? "match" : "MISMATCH"
			print name "\t" group "\t" want "\t" got "\t" verdict > details
			if (!(group in seen)) { seen[group] = 1; order[++ng] = group }
			if (verdict == "MISMATCH") { bad[group] = 1; nbad++
				printf "MISMATCH %s: expected %s, got %s\n", name, want, got }
			if (want == "fail" || (want == "any" && got == "fail")) xf[group] = 1
			if (want != "skip") live[group] = 1
		}
		END {
			for (i = 1; i <= ng; i++) {
				g = order[i]
				cell = bad[g] ? "FAIL" : xf[g] ? "xfail" : live[g] ? "ok" : "-"
				print g "\t" cell > groups
			}
			exit nbad ? 1 : 0
		}' "$dir/observed.tsv" "$EXPECTED"
}

main "$@"
