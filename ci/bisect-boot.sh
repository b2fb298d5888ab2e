#!/usr/bin/env bash
# Usage: ci/bisect-boot.sh [--work DIR] [--point REV[=COLUMN]]... [--no-reference]
#                          [--accel auto|tcg|kvm] [--timeout SECONDS]
#                          [--no-install] [--no-checks] [--keep-images]
#                          [--topics FILE] [--help]
#        ci/bisect-boot.sh --bisect-run
#
# The main job: proves that every bisect point of series/v4 builds and boots
# and does what the series claims, against QEMU's virtio-pmem device, with the
# pristine packaged kernel as the reference. End to end on a fresh machine:
# installs its packages (ci/install-deps.sh), imports and replays when the
# mirror is missing or stale (base/import.sh, ci/replay.sh), then for base,
# each commit of base..series/v4, the pristine import and each stand-alone
# fix for it (a topic on "import" in topic-branches.txt, judged by column
# fix of boot/expected.tsv):
#   checks  ci/check-commits.sh on the series commits (what each one adds)
#   build   bzImage for boot/guest.config (ci/build-kernel.sh)
#   boot    QEMU with the test devices, in-guest TAP tests (boot/run-qemu.sh)
#   host    the host side of what the guest wrote (boot/check-host.sh)
#   debug   the last commit and the reference only: one more boot with the
#           debug profile (boot/run-qemu.sh --profile debug: slab poisoning,
#           the flush soak, the NEEDS_RESET injection), in points/*/debug
#   clients the last commit and the reference only: the same kernel
#           booted with the clients profile (Debian's fio, ndctl, daxctl,
#           pmempool and PMDK in the guest, from the host's root over
#           virtio-9p), in points/*/clients; the reference's ndctl list is
#           compared with the tip's
# and judges each result against boot/expected.tsv (boot/evaluate.sh).
# When every point passed, it writes the v4 posting with b4/prep.sh (b4/ in
# the results directory), the matrix's figures in its cover letter.
# Prints a progress line per point and stage, then a matrix (point x stage
# and test group), writes it to matrix.tsv in a results directory
# WORK/results/bisect-boot/TIME (bisect-boot/latest names the newest), with
# every log, and prints that directory last. Exits 0 only if every point is
# as expected; a whole series run that passed is also bisect-boot/passed,
# what b4/prep.sh posts from.
#
#   --point REV[=COLUMN]  test REV instead of the series (repeatable); its
#                         results are judged by COLUMN of boot/expected.tsv
#                         (default: final, the last patch's column)
#   --no-reference        skip the pristine reference kernel and its fixes
#   --no-checks           skip the per-commit checks stage
#   --no-b4               do not write the posting at the end
#   --keep-images         keep the 512 MiB virtio-pmem backing files
#   --topics FILE         replay another topic list (ci/replay.sh --topics)
#   --bisect-run          for 'git bisect run': test the HEAD of the current
#                         directory's repository; exit 0 good, 1 bad, 125 when
#                         it cannot be built
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/build.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/posting.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib/results.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../boot/lib/boot.sh"

ACCEL=auto TIMEOUT=300 INSTALL=yes REFERENCE=yes CHECKS=yes B4=yes KEEP_IMAGES=no BISECT_RUN=no
TOPICS_FILE=$SERIES_TOP/topic-branches.txt
declare -a POINT_ARGS=() TOPICS_ARGS=()
declare -a POINT_REV=() POINT_COL=() POINT_LABEL=()
RESULTS=
FAILED_POINTS=0 CHECKS_FAILED=0 B4_FAILED=0

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--point) POINT_ARGS+=("${2:?--point needs a revision}"); OPT_TAKES=2 ;;
	--no-reference) REFERENCE=no ;;
	--no-checks) CHECKS=no ;;
	--no-b4) B4=no ;;
	--no-install) INSTALL=no ;;
	--keep-images) KEEP_IMAGES=yes ;;
	--topics) TOPICS_FILE=$(realpath -m "${2:?}"); TOPICS_ARGS=(--topics "$TOPICS_FILE"); OPT_TAKES=2 ;;
	--accel) ACCEL=${2:?}; OPT_TAKES=2 ;;
	--timeout) TIMEOUT=${2:?}; OPT_TAKES=2 ;;
	--bisect-run) BISECT_RUN=yes ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
}

# progress LABEL STAGE TEXT [SECONDS]: a line on the terminal, and a row of
# RESULTS/progress.tsv: label, stage, seconds (- when none), text
progress() {
	printf '%-34s %-8s %s\n' "$1" "$2" "$3"
	[ -z "${RESULTS:-}" ] || printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${4:--}" "$3" >>"$RESULTS/progress.tsv"
}

add_point() {
	POINT_REV+=("$1")
	POINT_COL+=("$2")
	POINT_LABEL+=("$3")
}

subject_of() {
	mgit log -1 --format=%s "$1"
}

# base, every commit of base..series/v4 (column = its number), reference,
# each fix for the reference (column fix)
collect_series_points() {
	local n=0 c fix
	add_point "$(mgit rev-parse base)" base "base"
	for c in $(mgit rev-list --reverse base..series/v4); do
		n=$((n + 1))
		add_point "$c" "$n" "$n"
	done
	[ "$n" -gt 0 ] || die "series/v4 has no commits on base"
	if [ "$REFERENCE" = yes ]; then
		add_point "$(mgit rev-parse "$(newest_import_tag)^{commit}")" reference reference
		for fix in $(topics_on_import "$TOPICS_FILE"); do
			add_point "$(mgit rev-parse "topic/$fix")" fix "$fix"
		done
	fi
}

collect_given_points() {
	local arg rev col commit
	for arg in "${POINT_ARGS[@]}"; do
		rev=${arg%%=*}
		col=final
		[ "$rev" = "$arg" ] || col=${arg#*=}
		commit=$(mgit rev-parse -q --verify "$rev^{commit}") ||
			die "--point: revision '$rev' not found in the mirror"
		add_point "$commit" "$col" "$(mgit rev-parse --short "$commit")"
	done
}

prepare_mirror() {
	if [ "$INSTALL" = yes ]; then
		"$SERIES_TOP/ci/install-deps.sh" >&2
	fi
	"$SERIES_TOP/base/import.sh" --work "$SERIES_WORK" >&2
	"$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK" "${TOPICS_ARGS[@]}" >"$RESULTS/replay.log"
	cat "$RESULTS/replay.log" >&2
}

build_initramfs() {
	INITRD=$(test_initramfs)
}

stage_build() {
	local i=$1 dir=$2 start kernel secs
	STAGE_OK=no
	start=$(now_s)
	if kernel=$(with_heartbeat "build of $(point_name "$i")" "$dir/build.log" \
		"$SERIES_TOP/ci/build-kernel.sh" --work "$SERIES_WORK" --rev "${POINT_REV[$i]}" 2>"$dir/build.log"); then
		KERNEL=$kernel
		printf 'ok\n' >"$dir/build.result"
		secs=$(elapsed_since "$start")
		progress "$(point_name "$i")" build "ok (${secs}s)" "$secs"
		STAGE_OK=yes
		return 0
	fi
	printf 'FAIL\n' >"$dir/build.result"
	secs=$(elapsed_since "$start")
	progress "$(point_name "$i")" build "FAIL (${secs}s): $(tail -n 1 "$dir/build.log")" "$secs"
}

# What ran the boots: the accelerator of every point's boot, this run's or
# the cached one's (a cached boot keeps what it proved), e.g. "tcg".
accelerator_used() {
	local used
	used=$(cat "$RESULTS"/points/*/accel 2>/dev/null | sort -u | paste -sd/ || true)
	printf '%s\n' "${used:-none}"
}

# The QEMU that ran the boots, in the same way.
qemu_version_used() {
	local used
	used=$(cat "$RESULTS"/points/*/qemu-version 2>/dev/null | sort -u | paste -sd/ || true)
	printf '%s\n' "${used:-unknown}"
}

# RESULTS/accelerator and RESULTS/qemu-version, from every boot of the run,
# cached or not (b4/prep.sh names them in the cover letter).
write_boot_facts() {
	[ -n "$(cat "$RESULTS"/points/*/accel 2>/dev/null || true)" ] || return 0
	accelerator_used >"$RESULTS/accelerator"
	qemu_version_used >"$RESULTS/qemu-version"
}

pick_accelerator() {
	[ -z "${ACCEL_USED:-}" ] || return 0
	ACCEL_USED=$(pick_accel "$ACCEL" "$KERNEL")
	printf '%s\n' "$ACCEL_USED" >"$RESULTS/accelerator"
	note "accelerator: $ACCEL_USED"
}

# boot_point DIR PROFILE LABEL: boot/boot-point.sh for this point's
# kernel, a heartbeat while it runs; prints its one line. The accelerator
# is picked (once per run) in the caller's shell, before a boot that is not
# cached.
boot_point() {
	local out=$1 profile=$2 label=$3
	local -a args=(--work "$SERIES_WORK" --kernel "$KERNEL" --initrd "$INITRD" --out "$out"
		--profile "$profile" --accel "${ACCEL_USED:-$ACCEL}" --timeout "$TIMEOUT")
	[ "$KEEP_IMAGES" = no ] || args+=(--keep-images)
	with_heartbeat "$label" "$out/console.log" "$SERIES_TOP/boot/boot-point.sh" "${args[@]}"
}

# stage_boot_with DIR PROFILE LABEL: a boot of this point's kernel in the
# stage's own shell (the accelerator it picks is the run's); its line in
# BOOT_LINE, boot/boot-point.sh's status in BOOT_RC
stage_boot_with() {
	if ! boot_cached "$KERNEL" "$INITRD" "$2"; then pick_accelerator; fi
	BOOT_RC=0
	BOOT_LINE=$(boot_point "$@") || BOOT_RC=$?
	[ -n "$BOOT_LINE" ] || BOOT_LINE="FAIL: boot/boot-point.sh stopped with status $BOOT_RC"
}

stage_boot() {
	local i=$1 dir=$2 start
	start=$(now_s)
	stage_boot_with "$dir" fast "boot of $(point_name "$i")"
	progress "$(point_name "$i")" boot "$BOOT_LINE" "$(elapsed_since "$start")"
	STAGE_OK=yes
	[ "$BOOT_RC" -eq 0 ] || STAGE_OK=no
}

stage_evaluate() {
	local i=$1 dir=$2 out
	STAGE_OK=yes
	if out=$("$SERIES_TOP/boot/evaluate.sh" "$dir" "${POINT_COL[$i]}" 2>&1); then
		progress "$(point_name "$i")" tests "as expected ($(grep -c $'\tok\t' "$dir/details.tsv" || true) ok results)"
		return 0
	fi
	progress "$(point_name "$i")" tests "NOT as expected:"
	sed 's/^/    /' <<<"$out"
	STAGE_OK=no
}

point_name() {
	local i=$1
	printf '%s %s' "${POINT_LABEL[$i]}" "$(subject_of "${POINT_REV[$i]}" | cut -c1-24)"
}

# The tip (the last series point) and the reference get two more boots:
# the debug profile (boot/run-qemu.sh --profile debug: slab poisoning, the
# soak, the NEEDS_RESET injection) and the clients profile (Debian's fio,
# ndctl, daxctl, pmempool and PMDK in the guest), both on the point's
# kernel, into DIR/debug and DIR/clients; each judged
# by its profile's rows of boot/expected.tsv, whose group cells join
# DIR/groups.tsv (other points show -). Cached like stage_boot's boots,
# under keys of their own.
is_tip_or_reference() {
	local i=$1 j last=""
	[ ${#POINT_ARGS[@]} -eq 0 ] || return 1
	[ "${POINT_LABEL[$i]}" != reference ] || return 0
	for j in "${!POINT_COL[@]}"; do
		[[ ${POINT_COL[$j]} =~ ^[0-9]+$ ]] && last=$j
	done
	[ "$i" = "$last" ]
}

# compare_with_tip I DIR: for the reference's clients boot, what ndctl and
# daxctl list (buses, regions and namespaces; then the devdax namespace and
# its memory as system RAM) against the tip's, as DIR/compare.tap
compare_with_tip() {
	local i=$1 dir=$2 f out="" rc=0
	if [ "${POINT_LABEL[$i]}" != reference ] || [ -z "${TIP_CLIENTS:-}" ]; then
		printf 'TAP version 13\n1..1\nok 1 pmem.ndctl_list_matches_tip # SKIP %s\n' \
			"compared on the reference's clients boot" >"$dir/compare.tap"
		return 0
	fi
	for f in ndctl-list.json ndctl-list-devdax.json daxctl-list.json; do
		out+="$f:"$'\n'
		out+=$("$SERIES_TOP/boot/clients/ndctl-compare.py" "$TIP_CLIENTS/guest/$f" "$dir/guest/$f" \
			"$SERIES_TOP/boot/clients/ndctl-differences.tsv" 2>&1) || rc=1
		out+=$'\n'
	done
	{
		echo "TAP version 13"
		echo "1..1"
		if [ "$rc" -eq 0 ]; then echo "ok 1 pmem.ndctl_list_matches_tip"; else echo "not ok 1 pmem.ndctl_list_matches_tip"; fi
		sed 's/^/# /' <<<"$out"
	} >"$dir/compare.tap"
}

# stage_profile_boot I DIR PROFILE: the PROFILE (debug or clients) boot of
# point I into DIR/PROFILE
stage_profile_boot() {
	local i=$1 dir=$2 profile=$3 pdir=$2/$3 start status out
	STAGE_OK=yes
	is_tip_or_reference "$i" && [ -n "$KERNEL" ] || return 0
	start=$(now_s)
	mkdir -p "$pdir"
	stage_boot_with "$pdir" "$profile" "$profile boot of $(point_name "$i")"
	progress "$(point_name "$i")" "$profile" "$BOOT_LINE" "$(elapsed_since "$start")"
	status=$(head -n 1 "$pdir/boot.status" 2>/dev/null || echo missing)
	[ "$profile" != clients ] || compare_with_tip "$i" "$pdir"
	[ "$profile" != clients ] || [ "${POINT_LABEL[$i]}" = reference ] || [ "$status" != ok ] ||
		TIP_CLIENTS=$pdir
	if out=$("$SERIES_TOP/boot/evaluate.sh" --profile "$profile" "$pdir" "${POINT_COL[$i]}" 2>&1); then
		cat "$pdir/groups.tsv" >>"$dir/groups.tsv"
		[ "$status" = ok ] || { STAGE_OK=no; return 0; }
		progress "$(point_name "$i")" "$profile-tests" "as expected ($(grep -c $'\tok\t' "$pdir/details.tsv" || true) ok results)"
		return 0
	fi
	cat "$pdir/groups.tsv" >>"$dir/groups.tsv" 2>/dev/null || true
	progress "$(point_name "$i")" "$profile-tests" "NOT as expected:"
	sed 's/^/    /' <<<"$out"
	STAGE_OK=no
}

# stage_extra_boots I DIR: the debug and clients boots; STAGE_OK=no when
# either failed
stage_extra_boots() {
	local ok=yes profile
	for profile in debug clients; do
		stage_profile_boot "$1" "$2" "$profile"
		[ "$STAGE_OK" = yes ] || ok=no
	done
	STAGE_OK=$ok
}

run_point() {
	local i=$1 dir
	dir=$RESULTS/points/$(printf '%02d' "$i")-${POINT_LABEL[$i]}
	mkdir -p "$dir"
	printf '%s\n' "${POINT_REV[$i]}" >"$dir/commit"
	KERNEL=
	POINT_OK=no
	printf 'FAIL\n' >"$dir/verdict"
	stage_build "$i" "$dir"
	[ "$STAGE_OK" = yes ] || return 0
	stage_boot "$i" "$dir"
	if [ "$STAGE_OK" = no ]; then
		"$SERIES_TOP/boot/evaluate.sh" "$dir" "${POINT_COL[$i]}" >/dev/null 2>&1 || true
		stage_extra_boots "$i" "$dir"
		return 0
	fi
	stage_evaluate "$i" "$dir"
	if [ "$STAGE_OK" = no ]; then
		stage_extra_boots "$i" "$dir"
		return 0
	fi
	stage_extra_boots "$i" "$dir"
	[ "$STAGE_OK" = yes ] || return 0
	printf 'ok\n' >"$dir/verdict"
	POINT_OK=yes
}

# The ranges the checks stage checks: the series, and each fix on the
# import when the reference runs
check_ranges() {
	local fix
	printf '%s\n' base..series/v4
	[ "$REFERENCE" = yes ] || return 0
	for fix in $(topics_on_import "$TOPICS_FILE"); do
		printf '%s..topic/%s\n' "$(newest_import_tag)" "$fix"
	done
}

# ci/check-commits.sh's line per commit and check, and its heartbeats, as
# they come (a read loop: mawk would hold them back in its input buffer)
show_check_lines() {
	local line
	while IFS= read -r line; do
		[[ ! $line =~ \([0-9.]+s\)$|^\ \ \.\.\.\  ]] || printf '  %s\n' "$line"
	done
}

stage_checks() {
	[ "$CHECKS" = yes ] && [ ${#POINT_ARGS[@]} -eq 0 ] || return 0
	[ -x "$SERIES_TOP/ci/check-commits.sh" ] || return 0
	local start secs ranges
	start=$(now_s)
	mapfile -t ranges < <(check_ranges)
	# its line per commit and check, and its heartbeats, on the terminal too
	if "$SERIES_TOP/ci/check-commits.sh" --work "$SERIES_WORK" --results "$RESULTS/checks" \
		"${ranges[@]}" 2>&1 | tee "$RESULTS/checks.log" | show_check_lines; then
		secs=$(elapsed_since "$start")
		progress "series and fixes" checks "ok (${secs}s)" "$secs"
	else
		secs=$(elapsed_since "$start")
		progress "series and fixes" checks "FAIL (${secs}s): see $RESULTS/checks.log" "$secs"
		CHECKS_FAILED=1
	fi
}

# The posting, once the series is proven: b4/prep.sh into RESULTS/b4; a
# draft (b4/prep.sh --draft) when no sender identity is set.
stage_b4() {
	[ "$B4" = yes ] && [ ${#POINT_ARGS[@]} -eq 0 ] || return 0
	local start secs draft=() kind=ok
	start=$(now_s)
	if [ "$FAILED_POINTS" -ne 0 ] || [ "$CHECKS_FAILED" -ne 0 ]; then
		progress "series/v4" b4 "skipped: the series did not pass"
		return 0
	fi
	if [ -n "$(identity_problem "$(sender_identity)")" ]; then
		draft=(--draft)
		kind="ok (draft: no sender identity; set git config user.name/user.email)"
	fi
	if "$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK" --tested-with "$RESULTS" \
		--out "$RESULTS/b4" "${draft[@]}" >"$RESULTS/b4.log" 2>&1; then
		secs=$(elapsed_since "$start")
		progress "series/v4" b4 "$kind (${secs}s): $(ls "$RESULTS/b4/mails" | wc -l) mails in $RESULTS/b4" "$secs"
	else
		secs=$(elapsed_since "$start")
		progress "series/v4" b4 "FAIL (${secs}s): see $RESULTS/b4.log" "$secs"
		B4_FAILED=1
	fi
	stage_b4_fixes "$kind" "${draft[@]}"
}

# stage_b4_fixes KIND [--draft]: b4/prep.sh --fix for each fix the run
# tested, into RESULTS/b4-fix-NAME
stage_b4_fixes() {
	local kind=$1 fix start secs out
	shift
	[ "$REFERENCE" = yes ] || return 0
	for fix in $(topics_on_import "$TOPICS_FILE"); do
		start=$(now_s)
		out=$RESULTS/b4-fix-$fix
		if "$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK" --tested-with "$RESULTS" --fix "$fix" \
			--topics "$TOPICS_FILE" --out "$out" "$@" >"$out.log" 2>&1; then
			secs=$(elapsed_since "$start")
			progress "topic/$fix" b4 "$kind (${secs}s): $(ls "$out/mails" | wc -l) mail in $out" "$secs"
		else
			secs=$(elapsed_since "$start")
			progress "topic/$fix" b4 "FAIL (${secs}s): see $out.log" "$secs"
			B4_FAILED=1
		fi
	done
}

# What a run will cost, from the caches present: seconds per step not
# cached, as measured on a 2-core machine under TCG (README, Benchmarks).
EST_CHECK=75 EST_COLD_BUILDS=700 EST_COLD_BUILDS_NO_CCACHE=900 EST_BUILD=60 EST_BOOT=25 EST_DEBUG=30
EST_CLIENTS=50

uncached_checks() {
	local ranges
	mapfile -t ranges < <(check_ranges)
	"$SERIES_TOP/ci/check-commits.sh" --work "$SERIES_WORK" --count-uncached "${ranges[@]}"
}

print_estimate() {
	local i kernel secs=0 commits=0 kernels=0 boots=0 cold=""
	if [ "$CHECKS" = yes ] && [ ${#POINT_ARGS[@]} -eq 0 ]; then
		commits=$(uncached_checks)
		secs=$((commits * EST_CHECK))
		if [ "$commits" -gt 0 ] && [ ! -f "$(build_dir modules)/vmlinux" ]; then
			if [ -d "$(ccache_dir)" ]; then
				secs=$((secs + EST_COLD_BUILDS)) cold=" + the first builds of two configs (ccache present)"
			else
				secs=$((secs + EST_COLD_BUILDS_NO_CCACHE)) cold=" + the first builds of two configs (no ccache yet)"
			fi
		fi
	fi
	for i in "${!POINT_REV[@]}"; do
		kernel=$(kernel_cache_path "$(kernel_cache_key "${POINT_REV[$i]}" "" "$(config_fragment guest)")")
		if [ ! -f "$kernel" ]; then
			kernels=$((kernels + 1)) boots=$((boots + 1)) secs=$((secs + EST_BUILD + EST_BOOT))
			! is_tip_or_reference "$i" || boots=$((boots + 2)) secs=$((secs + EST_DEBUG + EST_CLIENTS))
			continue
		fi
		if ! boot_cached "$kernel" "$INITRD" fast; then
			boots=$((boots + 1)) secs=$((secs + EST_BOOT))
		fi
		if is_tip_or_reference "$i" && ! boot_cached "$kernel" "$INITRD" debug; then
			boots=$((boots + 1)) secs=$((secs + EST_DEBUG))
		fi
		if is_tip_or_reference "$i" && ! boot_cached "$kernel" "$INITRD" clients; then
			boots=$((boots + 1)) secs=$((secs + EST_CLIENTS))
		fi
	done
	printf 'estimate: about %d min: checks of %d commits%s, %d kernel builds, %d boots not cached\n' \
		"$(((secs + 59) / 60))" "$commits" "$cold" "$kernels" "$boots"
}

checks_cell() {
	local commit=$1 f=$RESULTS/checks/summary.tsv
	[ -f "$f" ] || { echo "-"; return; }
	awk -F'\t' -v c="$commit" '$1 == c { print $2; found = 1 } END { if (!found) print "-" }' "$f"
}

# point_verdict I DIR: ok only when the point's build, boot and tests are as
# expected and, for a commit of the series, its checks passed.
point_verdict() {
	local i=$1 dir=$2 verdict
	verdict=$(cat "$dir/verdict" 2>/dev/null || echo -)
	[ "$(checks_cell "${POINT_REV[$i]}")" != FAIL ] || verdict=FAIL
	printf '%s\n' "$verdict"
}

# The commits whose checks failed (1 when the stage failed without a
# per-commit summary, e.g. ci/check-commits.sh itself stopped).
failed_checks() {
	local n=0 f=$RESULTS/checks/summary.tsv
	[ "$CHECKS_FAILED" -ne 0 ] || { echo 0; return 0; }
	[ ! -f "$f" ] || n=$(grep -c $'\tFAIL$' "$f" || true)
	echo $((n > 0 ? n : 1))
}

# Every failed stage: commits whose checks failed, points whose build, boot
# or tests failed, and the posting. The run exits 0 only when it is 0.
failed_stages() {
	echo $(($(failed_checks) + FAILED_POINTS + B4_FAILED))
}

write_matrix() {
	local i dir groups g cells header
	write_boot_facts
	groups=$(cut -f2 <(grep -v '^#' "$SERIES_TOP/boot/expected.tsv" | tr -s '\t' '\t') | awk 'NF && !s[$0]++')
	header="point	commit	subject	checks	build	boot	$(tr '\n' '\t' <<<"$groups")verdict"
	{
		printf '%s\n' "$header"
		for i in "${!POINT_REV[@]}"; do
			dir=$RESULTS/points/$(printf '%02d' "$i")-${POINT_LABEL[$i]}
			cells=""
			for g in $groups; do
				cells+="$(awk -F'\t' -v g="$g" '$1 == g { print $2 }' "$dir/groups.tsv" 2>/dev/null || true)"
				cells+=$'\t'
			done
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n' "${POINT_LABEL[$i]}" \
				"$(mgit rev-parse --short "${POINT_REV[$i]}")" "$(subject_of "${POINT_REV[$i]}")" \
				"$(checks_cell "${POINT_REV[$i]}")" \
				"$(cat "$dir/build.result" 2>/dev/null || echo -)" \
				"$(head -n 1 "$dir/boot.status" 2>/dev/null || echo -)" \
				"${cells:-}" "$(point_verdict "$i" "$dir")"
		done
	} | sed 's/\t\t/\t-\t/g; s/\t\t/\t-\t/g' >"$RESULTS/matrix.tsv"
}

print_matrix() {
	echo
	awk -F'\t' 'BEGIN { OFS = "  " } {
		$3 = substr($3, 1, 40)
		line = sprintf("%-9s %-12s %-40s", $1, $2, $3)
		for (i = 4; i <= NF; i++) line = line sprintf(" %-7s", $i)
		print line
	}' "$RESULTS/matrix.tsv"
	echo
	printf 'accelerator: %s%s   points: %d   failed: %d (checks: %d, build/boot/tests: %d, b4: %d)\n' \
		"$(accelerator_used)" "$([ -n "${ACCEL_USED:-}" ] || echo ' (every boot from the cache)')" \
		"${#POINT_REV[@]}" "$(failed_stages)" "$(failed_checks)" "$FAILED_POINTS" "$B4_FAILED"
	printf 'cells: ok as expected, xfail failed as expected, - skipped as expected, FAIL not as expected\n'
}

bisect_run() {
	local head col=final c n=0
	head=$(git rev-parse HEAD) || exit 125
	take_work_lock
	mirror_exists || die "no mirror at $(mirror_dir)"
	mgit cat-file -e "$head^{commit}" 2>/dev/null || die "HEAD $head is not in the mirror $(mirror_dir)"
	[ "$head" != "$(mgit rev-parse -q --verify base || true)" ] || col=base
	for c in $(mgit rev-list --reverse base..series/v4 2>/dev/null); do
		n=$((n + 1))
		[ "$c" != "$head" ] || col=$n
	done
	RESULTS=$(new_results_dir bisect "${head:0:12}")
	build_initramfs
	add_point "$head" "$col" "bisect"
	mkdir -p "$RESULTS/points/00-bisect"
	stage_build 0 "$RESULTS/points/00-bisect"
	[ "$STAGE_OK" = yes ] || exit 125
	stage_boot 0 "$RESULTS/points/00-bisect"
	[ "$STAGE_OK" = yes ] || exit 1
	stage_evaluate 0 "$RESULTS/points/00-bisect"
	[ "$STAGE_OK" = yes ] || exit 1
	exit 0
}

main() {
	parse_args "$@"
	[ "$BISECT_RUN" = no ] || bisect_run
	RESULTS=$(new_results_dir bisect-boot)
	local start i secs
	start=$(now_s)
	SERIES_LOCK_WAIT=${SERIES_LOCK_WAIT:-600} take_work_lock
	# shellcheck disable=SC2034 # with_heartbeat (common.sh) writes to it
	exec {HEARTBEAT_FD}>&1
	prepare_mirror
	secs=$(elapsed_since "$start")
	printf 'prepare\tsetup\t%s\tok (%ss)\n' "$secs" "$secs" >>"$RESULTS/progress.tsv"
	if [ ${#POINT_ARGS[@]} -gt 0 ]; then collect_given_points; else collect_series_points; fi
	build_initramfs
	print_estimate
	CHECKS_FAILED=0
	stage_checks
	for i in "${!POINT_REV[@]}"; do
		run_point "$i"
		[ "$POINT_OK" = yes ] || FAILED_POINTS=$((FAILED_POINTS + 1))
	done
	write_matrix
	B4_FAILED=0
	stage_b4
	print_matrix
	secs=$(elapsed_since "$start")
	printf 'total\ttotal\t%s\tok (%ss)\n' "$secs" "$secs" >>"$RESULTS/progress.tsv"
	printf 'total time: %ss\n' "$secs"
	printf '%s\n' "$RESULTS"
	[ "$(failed_stages)" -eq 0 ] || exit 1
	[ ${#POINT_ARGS[@]} -gt 0 ] || results_link "$RESULTS" passed
}

# Sourced (ci/tests/47-matrix.sh tests the matrix and summary functions), it
# only defines them.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
