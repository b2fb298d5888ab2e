#!/usr/bin/env bash
# Usage: ci/bench.sh [--work DIR] [--results DIR] [--warm] [--help]
#        ci/bench.sh --driver [--rounds N] [--fio-seconds N] [--work DIR]
#        ci/bench.sh --touch [--work DIR]
#
# Prints the pipeline's figures: seconds per stage and per point (checks,
# build, boot, b4), and the boot time per accelerator, from a
# ci/bisect-boot.sh results directory (default: the newest one,
# WORK/results/bisect-boot/latest), and keeps the table as bench.txt
# beside it. --warm first runs ci/bisect-boot.sh again
# (as the README says, install step included) on the same work directory,
# where nothing changed: every check, build, boot and the posting come from
# the caches, so its table shows what a re-run costs. --warm and --touch
# end with the whole run's seconds against its target (10 s and 180 s) and
# ccache's hits and misses during the run. Figures are measured, never
# asserted.
#
# --driver boots series/v4's tip and the pristine reference import in turn,
# N rounds each (default 3, at least 2), their kernels booted with the
# clients profile (boot/clients/run-clients.sh, fio runs of --fio-seconds, default
# 10): from fio's JSON, fsync latency (p50, p99 of fio's sync percentiles at
# 1 job), fsyncs per second of 4 KiB random writes each followed by fsync
# with 1, 8 and 64 jobs, the io_uring overflow reproducer's rate, DAX mmap
# write and read bandwidth; from QEMU's trace log, host fsyncs of the
# backing file per guest fsync at 1, 8 and 64 jobs (boot/clients/fio-figures.py). All on
# the same QEMU and a fresh backing file of the same size. It prints ours,
# the reference, the
# ratio ours/reference and the run's noise (the largest spread between
# rounds of one kernel), keeps driver.txt and driver.tsv in
# WORK/results/bench-driver/TIME/, and says for each figure whether ours is
# worse than the reference by more than the noise, and whether the target
# holds: at 64 jobs, at least 1.5 times the reference's fsyncs per second
# with fewer host flushes per guest fsync. Under TCG the times are
# emulated: read the ratios, not the absolute figures.
#
# --touch measures the pipeline after one patch changed: it replays a copy
# of the series whose ext4 patch has one more comment line, runs
# ci/bisect-boot.sh (the ext4 commit and those after it are checked, rebuilt
# and rebooted, the rest comes from the caches), prints its table, then
# replays the real series back (also when the run fails), so the branches
# end as they were.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/results.sh"
. "$(dirname "$0")/lib/build.sh"

RESULTS='' WARM=no DRIVER=no TOUCH=no ROUNDS=3 FIO_SECONDS=10
DRIVER_KEYS=(fsync_p50_us fsync_p99_us fsyncs_per_s_1 fsyncs_per_s_8 fsyncs_per_s_64
	host_flushes_per_fsync_1 host_flushes_per_fsync_8 host_flushes_per_fsync_64
	uring_fsyncs_per_s dax_write_mib_s dax_read_mib_s)
TARGET_RATIO_64=1.5


stage_table() {
	local dir=$1
	printf '%-36s %-8s %10s  %s\n' point stage seconds note
	while IFS=$'\t' read -r label stage seconds text; do
		printf '%-36s %-8s %10s  %s\n' "$label" "$stage" "$seconds" "$(grep -o 'cached' <<<"$text" || true)"
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

# driver_boot KERNEL DIR: one benchmark boot, the clients profile (never
# from the cache); DIR/figures.tsv from fio's JSON and QEMU's trace
driver_boot() {
	local kernel=$1 dir=$2
	"$SERIES_TOP/boot/boot-point.sh" --work "$SERIES_WORK" --kernel "$kernel" --out "$dir" \
		--profile clients --cmdline "vpmem_fio_seconds=$FIO_SECONDS" --timeout 1200 --no-cache >/dev/null ||
		die "benchmark boot of $kernel failed: $(head -n 1 "$dir/boot.status"); see $dir/boot.status"
	! grep -q '^not ok [0-9]* pmem.fio' "$dir/tap.log" ||
		die "a fio run failed: $(grep -m1 '^not ok [0-9]* pmem.fio' "$dir/tap.log") ($dir/tap.log)"
	! grep -qE '^not ok [0-9]* host_(client|fio)' "$dir/host.tap" ||
		die "the host did not see the flushes: $(grep -m1 -E '^not ok [0-9]* host_(client|fio)' "$dir/host.tap") ($dir/host.tap)"
	"$SERIES_TOP/boot/clients/fio-figures.py" "$dir/guest" "$dir/trace.log" >"$dir/figures.tsv" ||
		die "no figures from $dir/guest"
	[ "$(wc -l <"$dir/figures.tsv")" -ge ${#DRIVER_KEYS[@]} ] ||
		die "the benchmark printed $(wc -l <"$dir/figures.tsv") of ${#DRIVER_KEYS[@]} figures ($dir/tap.log)"
}

# driver_table OUT: key, ours, reference, ratio, noise, verdict (from the
# rounds' figures.tsv files under OUT/ours-N and OUT/reference-N)
driver_table() {
	local out=$1 key
	printf 'figure\tours\treference\tours/ref\tnoise\tverdict\n'
	for key in "${DRIVER_KEYS[@]}"; do
		awk -F'\t' -v key="$key" '
			$1 != key { next }
			FILENAME ~ /\/ours-/ { o[++no] = $2 } FILENAME ~ /\/reference-/ { r[++nr] = $2 }
			function mean(a, n,   i, s) { for (i = 1; i <= n; i++) s += a[i]; return s / n }
			function spread(a, n, m,   i, lo, hi) { lo = hi = a[1]
				for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
				return m ? (hi - lo) / m : 0 }
			END {
				mo = mean(o, no); mr = mean(r, nr); ratio = mr ? mo / mr : 0
				noise = spread(o, no, mo); if (spread(r, nr, mr) > noise) noise = spread(r, nr, mr)
				worse = (key ~ /_us$|_per_fsync/) ? ratio - 1 : 1 - ratio
				verdict = worse > noise ? "ours worse beyond noise" : "within noise"
				if (-worse > noise) verdict = "ours better beyond noise"
				printf "%s\t%.2f\t%.2f\t%.2f\t%.0f%%\t%s\n", key, mo, mr, ratio, noise * 100, verdict
			}' "$out"/ours-*/figures.tsv "$out"/reference-*/figures.tsv
	done
}

# driver_kernel REV: REV's kernel (boot/guest.config serves the clients
# profile too), from the kernel cache when the main job built it
driver_kernel() {
	"$SERIES_TOP/ci/build-kernel.sh" --work "$SERIES_WORK" --rev "$1"
}

# target_line TSV: whether ours reaches TARGET_RATIO_64 times the
# reference's fsyncs per second at 64 jobs with fewer host flushes per
# fsync, and a 1-job fsync p50 not worse beyond the noise; a figure that is
# missing is a target not met
target_line() {
	awk -F'\t' -v want="$TARGET_RATIO_64" '
		$1 == "fsyncs_per_s_64" { rate = $4 }
		$1 == "host_flushes_per_fsync_64" { flushes = $4 }
		$1 == "fsync_p50_us" { p50 = $4; noise = $5; sub(/%/, "", noise); noise /= 100 }
		END {
			if (rate == "" || flushes == "" || p50 == "") { print "target: NOT met: a figure is missing"; exit }
			met = (rate >= want && flushes < 1 && p50 - 1 <= noise) ? "met" : "NOT met"
			printf "target: at 64 jobs fsyncs/s ours/ref %.2f (want >= %s) and host flushes per fsync ours/ref %.2f (want < 1); at 1 job fsync p50 ours/ref %.2f (want <= 1 + noise %.0f%%): %s\n", rate, want, flushes, p50, noise * 100, met
		}' "$1"
}

run_driver_bench() {
	local out ours ref n
	out=$(new_results_dir bench-driver)
	ours=$(driver_kernel series/v4 2>"$out/build-ours.log") ||
		die "series/v4 does not build (see $out/build-ours.log)"
	ref=$(driver_kernel "$(newest_import_tag)" 2>"$out/build-ref.log") ||
		die "the reference does not build (see $out/build-ref.log)"
	for n in $(seq 1 "$ROUNDS"); do
		note "round $n/$ROUNDS: ours"
		driver_boot "$ours" "$out/ours-$n"
		note "round $n/$ROUNDS: reference"
		driver_boot "$ref" "$out/reference-$n"
	done
	driver_table "$out" >"$out/driver.tsv"
	{
		printf 'driver benchmark: series/v4 (ours) vs %s (reference), %s rounds, accelerator %s, %s cores\n' \
			"$(newest_import_tag)" "$ROUNDS" "$(cat "$out/ours-1/accel")" "$(nproc)"
		printf 'latencies in us (lower is better), rates per second and MiB/s (higher is better)\n\n'
		column -t -s$'\t' "$out/driver.tsv"
		echo
		target_line "$out/driver.tsv"
	} | tee "$out/driver.txt"
	printf '%s\n' "$out"
}

# touched_topics DIR: a copy of the topic list in DIR whose ext4 patch
# changes one more line of fs/ext4/file.c (a comment at its end, naming
# the time, so every --touch is a new edit the caches have not seen). Made
# with git's plumbing in a private index: no kernel work tree to check out.
touched_topics() {
	local dir=$1 patch commit tree touched
	patch=$(grep -v '^#' "$SERIES_TOP/topic-branches.txt" | grep -o '[^[:space:]]*\.patch' | grep ext4 | head -n 1)
	[ -n "$patch" ] || die "topic-branches.txt names no ext4 patch to touch"
	commit=$(mgit log --format=%H -1 --grep='^ext4:' series/v4)
	[ -n "$commit" ] || die "series/v4 has no ext4 commit"
	tree=$(tree_with_line "$commit" fs/ext4/file.c \
		"/* touched by ci/bench.sh --touch at $(date -u +%Y%m%dT%H%M%S.%NZ) */")
	touched=$(mgit log -1 --format=%B "$commit" | (
		export_tool_committer
		GIT_AUTHOR_NAME=$(mgit log -1 --format=%an "$commit") GIT_AUTHOR_EMAIL=$(mgit log -1 --format=%ae "$commit") \
			GIT_AUTHOR_DATE=$(mgit log -1 --format=%ad --date=raw "$commit") \
			mgit commit-tree "$tree" -p "$commit^"
	))
	mkdir -p "$dir/$(dirname "$patch")"
	mgit format-patch -q -1 --stdout "$touched" >"$dir/$patch"
	sed "s|$patch|$dir/$patch|" "$SERIES_TOP/topic-branches.txt" >"$dir/topics.txt"
}

replay_real_series() {
	"$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK" >/dev/null 2>&1 || true
}

run_touch_bench() {
	local tmp
	make_temp_dir tmp
	# Whatever happens, replay the real series back.
	at_exit replay_real_series
	touched_topics "$tmp"
	RESULTS=$("$SERIES_TOP/ci/bisect-boot.sh" --work "$SERIES_WORK" --topics "$tmp/topics.txt" | tail -n 1)
}

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--results) RESULTS=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--warm) WARM=yes ;;
	--driver) DRIVER=yes ;;
	--rounds) ROUNDS=${2:?}; OPT_TAKES=2; [ "$ROUNDS" -ge 2 ] 2>/dev/null || die "--rounds needs a number >= 2: the noise is the spread between rounds" ;;
	--fio-seconds) FIO_SECONDS=${2:?}; OPT_TAKES=2; [ "$FIO_SECONDS" -ge 1 ] 2>/dev/null || die "--fio-seconds needs a number >= 1" ;;
	--touch) TOUCH=yes ;;
	*) OPT_TAKES=0 ;;
	esac
}

# ccache's hits and misses so far (its cache outlives work directories)
ccache_counts() {
	CCACHE_DIR=$(ccache_dir) ccache --print-stats 2>/dev/null |
		awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
			$1 == "cache_miss" { m += $2 } END { print h + 0, m + 0 }'
}

# targets_table KIND SECONDS CCACHE-BEFORE CCACHE-AFTER: the run against
# the target its kind has (issue 11)
targets_table() {
	local kind=$1 secs=$2 target h0 m0 h1 m1
	read -r h0 m0 <<<"$3"
	read -r h1 m1 <<<"$4"
	case "$kind" in warm) target=10 ;; touch) target=180 ;; *) return 0 ;; esac
	printf '\n%-8s %10s %10s  %s\n' run seconds target verdict
	printf '%-8s %10s %10s  %s\n' "$kind" "$secs" "$target" \
		"$(awk -v s="$secs" -v t="$target" 'BEGIN { print (s <= t ? "met" : "missed") }')"
	printf 'ccache during the run: %d hits, %d misses\n' "$((h1 - h0))" "$((m1 - m0))"
}

main() {
	parse_options own_option "$@"
	if [ "$DRIVER" = yes ]; then
		run_driver_bench
		return 0
	fi
	local kind="" start secs="" before
	before=$(ccache_counts)
	start=$(now_s)
	if [ "$TOUCH" = yes ]; then
		kind="touch"
		run_touch_bench
	elif [ "$WARM" = yes ]; then
		kind=warm
		# the README's main command, as a user re-runs it
		RESULTS=$("$SERIES_TOP/ci/bisect-boot.sh" --work "$SERIES_WORK" | tail -n 1)
	fi
	[ -z "$kind" ] || secs=$(elapsed_since "$start")
	[ -n "$RESULTS" ] || RESULTS=$(linked_results bisect-boot latest || true)
	[ -n "$RESULTS" ] && [ -f "$RESULTS/progress.tsv" ] ||
		die "no ci/bisect-boot.sh results with progress.tsv under $(results_root): run it first"
	{
		printf 'ci/bisect-boot.sh figures from %s (%s)\n\n' "$RESULTS" "$(nproc) cores"
		stage_table "$RESULTS"
		boot_table "$RESULTS"
		printf 'accelerator: %s\n' "$(cat "$RESULTS/accelerator" 2>/dev/null || echo none)"
		[ -z "$kind" ] || targets_table "$kind" "$secs" "$before" "$(ccache_counts)"
	} | tee "$RESULTS/bench.txt"
}

main "$@"
