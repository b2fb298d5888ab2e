#!/usr/bin/env bash
# Usage: ci/bench.sh [--work DIR] [--results DIR] [--warm] [--help]
#
# Prints the pipeline's figures: seconds per stage and per point (checks,
# build, boot, b4), and the boot time per accelerator, from a
# ci/bisect-boot.sh results directory (default: the newest one), and keeps
# the table as bench.txt beside it. --warm first runs ci/bisect-boot.sh again
# on the same work directory, where nothing changed: every build and boot
# comes from the caches (keyed by tree, config and test inputs), so its
# table shows what a re-run costs. Figures are measured, never asserted.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

RESULTS= WARM=no

seconds_of() {
	sed -nE 's/.*\(([0-9.]+)s.*/\1/p; s/.*booted in ([0-9.]+)s.*/\1/p' | head -n 1
}

stage_table() {
	local dir=$1
	printf '%-36s %-8s %10s  %s\n' point stage seconds note
	while IFS=$'\t' read -r label stage result; do
		printf '%-36s %-8s %10s  %s\n' "$label" "$stage" "$(seconds_of <<<"$result")" \
			"$(grep -o 'cached' <<<"$result" || true)"
	done <"$dir/progress.tsv"
}

boot_table() {
	local dir=$1 p
	printf '\n%-16s %-6s %8s\n' point accel boot_s
	for p in "$dir"/points/*; do
		[ -f "$p/boot.seconds" ] || continue
		printf '%-16s %-6s %8s\n' "$(basename "$p")" "$(cat "$p/accel" 2>/dev/null || echo -)" "$(cat "$p/boot.seconds")"
	done
	awk '{ s += $1; n++ } END { if (n) printf "mean boot: %.1fs over %d boots\n", s / n, n }' "$dir"/points/*/boot.seconds
}

main() {
	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help) usage_from_header "$0"; exit 0 ;;
		--work) SERIES_WORK=$(realpath -m "${2:?}"); shift ;;
		--results) RESULTS=$(realpath -m "${2:?}"); shift ;;
		--warm) WARM=yes ;;
		*) die "unknown argument '$1' (see --help)" ;;
		esac
		shift
	done
	if [ "$WARM" = yes ]; then
		RESULTS=$("$SERIES_TOP/ci/bisect-boot.sh" --no-install --work "$SERIES_WORK" | tail -n 1)
	fi
	[ -n "$RESULTS" ] || RESULTS=$(ls -1d "$(results_root)"/2* 2>/dev/null | sort | tail -n 1)
	[ -n "$RESULTS" ] && [ -f "$RESULTS/progress.tsv" ] ||
		die "no ci/bisect-boot.sh results with progress.tsv under $(results_root): run it first"
	{
		printf 'ci/bisect-boot.sh figures from %s (%s)\n\n' "$RESULTS" "$(nproc) cores"
		stage_table "$RESULTS"
		boot_table "$RESULTS"
		printf 'accelerator: %s\n' "$(cat "$RESULTS/accelerator" 2>/dev/null || echo none)"
	} | tee "$RESULTS/bench.txt"
}

main "$@"
