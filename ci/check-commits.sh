#!/usr/bin/env bash
# Usage: ci/check-commits.sh [RANGE...] [--checks LIST] [--work DIR] [--results DIR] [--help]
#
# What a subsystem's patch CI does to every posted patch, on every commit of
# each RANGE (default base..series/v4) of the mirror, in order: the checks of ci/checks/,
#   build       guest and modular configs, W=1 on the range's C files
#   sparse      C=2 on the range's C files
#   ppc64le     the range's powerpc C files cross-compiled with W=1
#   cocci       the kernel's semantic patches and ours (cocci/)
#   checkpatch  --strict, on the patch and its message
#   hygiene     author's Signed-off-by, Fixes: tags, subject prefix
# each judging the commit against its parent, so only what the commit adds
# counts. Results are cached by commit and check (a re-run of an unchanged
# series takes seconds); cocci's by the files it reads, so an edit of one
# patch does not re-run it on the commits whose files the edit left alone.
# Prints a progress line per commit and check, then a matrix (commit x check, count of new findings), writes matrix.tsv,
# summary.tsv and every log to the results directory (printed last), and
# exits 1 if any commit adds a finding or does not build. --checks runs only
# the comma-separated checks named (e.g. cocci,checkpatch,hygiene).
# --count-uncached prints how many commits of the ranges have a check whose
# verdict is not cached (the main job's estimate), and checks nothing.
# --cache-key CHECK[,CHECK...] prints the key (a line each) that CHECK's
# results are cached under: the
# check's script, the libraries it sources and the files its "# Inputs:"
# line declares (plus the sender identity for the checks that use it).
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/results.sh"
. "$(dirname "$0")/lib/posting.sh"

declare -a RANGES=()
RESULTS=
CHECKS=(build sparse ppc64le cocci checkpatch hygiene)
FOUND=0 COUNT_UNCACHED=no
declare -A CACHE_KEYS=()

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--results) RESULTS=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--checks) IFS=, read -r -a CHECKS <<<"${2:?}"; OPT_TAKES=2 ;;
	--cache-key) print_cache_keys "${2:?}"; exit 0 ;;
	--count-uncached) COUNT_UNCACHED=yes ;;
	-*) OPT_TAKES=0 ;;
	*) RANGES+=("$1") ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
}

# check_inputs CHECK: every file that defines CHECK's verdict: its script,
# the ci/lib/ libraries it sources, and what its "# Inputs:" line declares
# (paths or globs relative to the repository).
check_inputs() {
	local script=$SERIES_TOP/ci/checks/$1.sh g
	printf '%s\n' "$script"
	sed -n 's|^\. "\$(dirname "\$0")/\.\./lib/\([a-z]*\.sh\)"$|ci/lib/\1|p' "$script" |
		sed "s|^|$SERIES_TOP/|"
	for g in $(sed -n 's/^# Inputs: //p' "$script"); do
		compgen -G "$SERIES_TOP/$g" || die "ci/checks/$1.sh: its input '$g' does not exist"
	done
}

# The cache key: the commit, the contents of the check's inputs, and the
# sender identity for the checks that judge the commit as posted.
cache_key() {
	local check=$1 f inputs
	inputs=$(check_inputs "$check" | sort -u)
	{
		while read -r f; do
			printf '%s\n' "${f#"$SERIES_TOP"/}"
			cat "$f"
		done <<<"$inputs"
		! grep -q 'lib/posting\.sh' "$SERIES_TOP/ci/checks/$check.sh" || sender_identity
	} | sha256sum | cut -c1-12
}

# print_cache_keys CHECK[,CHECK...]: a key a line, in that order
print_cache_keys() {
	local check list
	IFS=, read -r -a list <<<"$1"
	for check in "${list[@]}"; do
		cache_key "$check"
	done
}

# cache_dir_for COMMIT CHECK: where CHECK's verdict on COMMIT is kept: by
# the commit, or for a check "# Cached by content" (ci/lib/checks.sh) by
# the content key it prints, so a commit an edit did not reach keeps it
cache_dir_for() {
	local commit=$1 check=$2 script=$SERIES_TOP/ci/checks/$2.sh subject=$1
	if grep -q '^# Cached by content' "$script"; then
		subject=content-$("$script" --work "$SERIES_WORK" --commit "$commit" --parent "$commit^" --content-key) ||
			die "$check: no content key for commit $commit"
	fi
	[ -n "${CACHE_KEYS[$check]:-}" ] || CACHE_KEYS[$check]=$(cache_key "$check")
	printf '%s/cache/checks/%s-%s-%s\n' "$SERIES_WORK" "$subject" "$check" "${CACHE_KEYS[$check]}"
}

# count_uncached COMMIT...: how many of the commits have a check whose
# verdict is not in the cache
count_uncached() {
	local c k n=0
	for c in "$@"; do
		for k in "${CHECKS[@]}"; do
			[ -f "$(cache_dir_for "$c" "$k")/rc" ] || { n=$((n + 1)); break; }
		done
	done
	echo "$n"
}

# run_check COMMIT CHECK DIR -> prints the cell: ok, "N new" or FAIL; a
# verdict from the cache leaves DIR/CHECK.cached naming the entry
run_check() {
	local commit=$1 check=$2 dir=$3 cache rc=0 n
	cache=$(cache_dir_for "$commit" "$check")
	rm -f "$dir/$check.cached"
	if [ -f "$cache/rc" ]; then
		cp "$cache/$check.log" "$cache/$check.new" "$dir/"
		printf '%s\n' "${cache##*/}" >"$dir/$check.cached"
		rc=$(cat "$cache/rc")
	else
		with_heartbeat "$check of $(mgit rev-parse --short "$commit")" "$dir/$check.log" \
			"$SERIES_TOP/ci/checks/$check.sh" --work "$SERIES_WORK" --commit "$commit" \
			--parent "$commit^" --out "$dir" >>"$dir/$check.log" 2>&1 || rc=$?
		if [ "$rc" -le 1 ]; then
			mkdir -p "$cache"
			cp "$dir/$check.log" "$dir/$check.new" "$cache/"
			printf '%s\n' "$rc" >"$cache/rc"
		fi
	fi
	n=$(grep -c . "$dir/$check.new" 2>/dev/null || true)
	case "$rc" in
	0) echo ok ;;
	1) echo "$n new" ;;
	*) echo FAIL ;;
	esac
}

check_commit() {
	local idx=$1 commit=$2 dir check cell start row subject
	subject=$(mgit log -1 --format=%s "$commit")
	dir=$RESULTS/$(printf '%02d' "$idx")-$(mgit rev-parse --short "$commit")
	mkdir -p "$dir"
	row="$(mgit rev-parse --short "$commit")	$subject"
	local worst=ok
	for check in "${CHECKS[@]}"; do
		start=$(now_s)
		cell=$(run_check "$commit" "$check" "$dir")
		printf '%-12s %-40.40s %-10s %s%s (%ss)\n' "$(mgit rev-parse --short "$commit")" "$subject" \
			"$check" "$cell" "$([ -f "$dir/$check.cached" ] && echo ', cached')" "$(elapsed_since "$start")"
		if [ "$cell" != ok ]; then
			FOUND=1
			worst=$cell
			sed "s/^/    $check: /" "$dir/$check.new" | head -n 20
		fi
		row+="	$cell"
	done
	printf '%s\n' "$row" >>"$RESULTS/matrix.tsv"
	[ "$worst" = ok ] && printf '%s\tok\n' "$commit" >>"$RESULTS/summary.tsv" ||
		printf '%s\tFAIL\n' "$commit" >>"$RESULTS/summary.tsv"
}

# Every C file the range adds or modifies: the build and sparse checks scan
# this same set at each commit (see scan_files in ci/lib/checks.sh).
range_c_files() {
	local c
	for c in "$@"; do
		mgit diff --name-only --diff-filter=AM "$c^" "$c"
	done | grep '\.c$' | sort -u | paste -sd' ' || true
}

print_matrix() {
	echo
	awk -F'\t' '{ line = sprintf("%-12s %-44.44s", $1, $2)
		for (i = 3; i <= NF; i++) line = line sprintf(" %-10s", $i); print line }' "$RESULTS/matrix.tsv"
	echo
}

# The commits of every range, in order; dies naming a range that is wrong
# or empty.
range_commits() {
	local range list
	[ ${#RANGES[@]} -gt 0 ] || RANGES=(base..series/v4)
	for range in "${RANGES[@]}"; do
		mgit rev-parse -q --verify "${range%%..*}^{commit}" >/dev/null ||
			die "range $range: '${range%%..*}' not found in the mirror"
		list=$(mgit rev-list --reverse "$range") || die "bad range $range"
		[ -n "$list" ] || die "range $range has no commits"
		printf '%s\n' "$list"
	done
}

main() {
	parse_args "$@"
	mirror_exists || die "no mirror at $(mirror_dir): run base/import.sh and ci/replay.sh"
	local commits list start i=0 c k
	for k in "${CHECKS[@]}"; do
		[ -x "$SERIES_TOP/ci/checks/$k.sh" ] || die "--checks: no check '$k' in ci/checks/"
	done
	list=$(range_commits)
	mapfile -t commits <<<"$list"
	if [ "$COUNT_UNCACHED" = yes ]; then
		count_uncached "${commits[@]}"
		return 0
	fi
	take_work_lock
	# shellcheck disable=SC2034 # with_heartbeat (common.sh) writes to it
	exec {HEARTBEAT_FD}>&1
	SERIES_CHECK_FILES=$(range_c_files "${commits[@]}")
	export SERIES_CHECK_FILES
	[ -n "$RESULTS" ] || RESULTS=$(new_results_dir checks)
	mkdir -p "$RESULTS"
	printf 'commit\tsubject\t%s\n' "$(IFS=$'\t'; echo "${CHECKS[*]}")" >"$RESULTS/matrix.tsv"
	: >"$RESULTS/summary.tsv"
	start=$(now_s)
	for c in "${commits[@]}"; do
		i=$((i + 1))
		check_commit "$i" "$c"
	done
	print_matrix
	printf 'checked %d commits in %ss; new findings: %s\n' "${#commits[@]}" "$(elapsed_since "$start")" \
		"$([ "$FOUND" = 0 ] && echo none || echo yes)"
	printf '%s\n' "$RESULTS"
	[ "$FOUND" = 0 ] || exit 1
}

main "$@"
