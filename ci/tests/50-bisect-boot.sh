#!/usr/bin/env bash
# The main job end to end: every point of series/v4, the pristine
# reference and the stand-alone fix for it build, boot and test as
# expected; then deliberately broken
# points (boot/fixtures) must be caught, named, and fail the run; and
# 'git bisect run ci/bisect-boot.sh --bisect-run' must find the broken one.
# Slow: builds and boots of every point (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
cleanup() {
	mgit worktree remove --force "$T/bisect" >/dev/null 2>&1 || true
}
at_exit cleanup
BB=("$SERIES_TOP/ci/bisect-boot.sh" --no-install --work "$SERIES_WORK")


rc=0
"${BB[@]}" >"$T/full.log" 2>&1 || rc=$?
R=$(tail -n 1 "$T/full.log")
check_eq "ci/bisect-boot.sh passes end to end" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 40 "$T/full.log"
check "the results directory has matrix.tsv" test -f "$R/matrix.tsv"
check_eq "the run is results/bisect-boot/latest" "$R" "$(linked_results bisect-boot latest || true)"
check_eq "the run passed: it is results/bisect-boot/passed" "$R" "$(passed_results bisect-boot || true)"
PASSED=$R
n=$(mgit rev-list --count base..series/v4)
fixes=$(topics_on_import | paste -sd' ')
check_eq "the matrix has base, every patch, the reference and its fixes" \
	"base $(seq -s' ' 1 "$n") reference $fixes" "$(matrix_column "$R" point | paste -sd' ')"
nfix=$(wc -w <<<"$fixes")
check_eq "every point's verdict is ok" "$(printf 'ok %.0s' $(seq 1 $((n + 2 + nfix))) | sed 's/ $//')" \
	"$(matrix_column "$R" verdict | paste -sd' ')"
check_grep "the accelerator is named" '^(kvm|tcg)$' "$R/accelerator"
check_eq "progress.tsv: every build, boot and the total have their seconds in a column of their own" "" \
	"$(awk -F'\t' '$2 ~ /^(build|boot|total)$/ && $3 !~ /^[0-9]+(\.[0-9]+)?$/' "$R/progress.tsv")"
check "progress.tsv has a row per build" test "$(awk -F'\t' '$2 == "build"' "$R/progress.tsv" | wc -l)" -eq "$((n + 2 + nfix))"
for point in "$R"/points/*; do
	check "$(basename "$point") kept its build log, console and TAP" \
		test -s "$point/build.log" -a -s "$point/console.log" -a -s "$point/tap.log"
done
# The tip passes every test group the reference passes; where they differ,
# the reference's cell is an expected failure (boot/expected.tsv names the
# reference weaknesses the series fixes), never an unexpected one.
tip_vs_reference() {
	awk -F'\t' -v tip="$n" '
		NR == 1 { for (i = 5; i < NF; i++) name[i] = $i; next }
		$1 == tip { for (i = 5; i < NF; i++) t[i] = $i }
		$1 == "reference" { for (i = 5; i < NF; i++) r[i] = $i }
		END { for (i = 5; i < NF; i++) if (t[i] != r[i]) printf "%s:%s/%s ", name[i], t[i], r[i] }' "$R/matrix.tsv"
}
diffs=$(tip_vs_reference)
check "the tip and the reference were compared" test -n "$(matrix_cell "$R" reference boot)"
check_eq "where the tip and the reference differ, the tip is ok and the reference an expected failure" "" \
	"$(printf '%s' "$diffs" | tr ' ' '\n' | grep -v ':ok/xfail$' || true)"
check "no point fails a MAP_SYNC test, even as expected (no bisect hole)" \
	test -z "$(matrix_column "$R" mapsync | grep -v -x -e ok -e - || true)"
check_eq "the virtio-pmem tests are expected skips at base" - "$(matrix_cell "$R" base flush)"
check_eq "the reference offers MAP_SYNC after a re-enable (expected: recycled flags)" xfail \
	"$(matrix_cell "$R" reference recycle)"
check_eq "the stand-alone fix refuses it" ok "$(matrix_cell "$R" dax-flags-fix recycle)"
check_eq "the tip flushes again after suspend to RAM" ok "$(matrix_cell "$R" "$n" sleep)"
check_eq "the reference does not (no freeze and restore: expected)" xfail "$(matrix_cell "$R" reference sleep)"
check_grep "... its writers stuck in an fsync after resume (or, after a stuck NEEDS_RESET flush, no suspend)" \
	'writers still in a write or fsync|echo mem > /sys/power/state: ' \
	"$R"/points/*-reference/debug/tap.log
check "the fix's commit on the import was checked like the series' commits" \
	test "$(awk -F'\t' -v c="$(mgit rev-parse topic/dax-flags-fix)" '$1 == c { print $2 }' \
		"$R/checks/summary.tsv")" = ok
check "the fix's posting was written with b4" test -s "$R/b4-fix-dax-flags-fix/dax-flags-fix.mbox"

# run_fixture NAME [OPTION...]: boot/fixtures/NAME.patch on series/v4 as
# refs/fixtures/NAME, then the main job on that point alone (OPTIONs
# added); the fixture's commit in FIXTURE, the job's status in rc, its
# results directory in R, its log in T/NAME.log
run_fixture() {
	local name=$1
	shift
	FIXTURE=$("$SERIES_TOP/ci/commit-patch.sh" --work "$SERIES_WORK" --onto series/v4 \
		--patch "$SERIES_TOP/boot/fixtures/$name.patch" --ref "refs/fixtures/$name")
	rc=0
	"${BB[@]}" --point "refs/fixtures/$name" "$@" >"$T/$name.log" 2>&1 || rc=$?
	R=$(tail -n 1 "$T/$name.log")
}

# Broken fixture 1: a flush that succeeds without asking the host.
run_fixture flush-noop
fix=$FIXTURE
check_eq "a flush that never reaches the host fails the run" 1 "$rc"
check_eq "the matrix names the broken point" "$(mgit rev-parse --short "$fix")" "$(matrix_cell "$R" "${fix:0:7}" commit)"
check_eq "its flush cell is FAIL" FAIL "$(matrix_cell "$R" "${fix:0:7}" flush)"
check_eq "the failed run is results/bisect-boot/latest" "$R" "$(linked_results bisect-boot latest || true)"
check_eq "... and the passed one is still results/bisect-boot/passed" "$PASSED" "$(passed_results bisect-boot || true)"
check_grep "the log names the host check that caught it" 'MISMATCH host_flushes_reach_host' "$T/flush-noop.log"

# Broken fixture 2: patch 2's clearing of a new dax_device's flags taken
# out, as the merged kernel has it: the generated re-enable orders catch it.
run_fixture recycled-flags
check_eq "a recycled DAXDEV_SYNC fails the run" 1 "$rc"
check_eq "its recycle cell is FAIL" FAIL "$(matrix_cell "$R" "${FIXTURE:0:7}" recycle)"
check_eq "... and nothing else is" "" \
	"$(awk -F'\t' 'NR == 1 { for (i = 7; i < NF; i++) h[i] = $i; next }
		{ for (i = 7; i < NF; i++) if ($i == "FAIL" && h[i] != "recycle") print h[i] }' "$R/matrix.tsv")"
check_grep "the log names the seed to replay" 'vpmem_seed=[0-9]' "$R"/points/*/tap.log

# Broken fixture 3: a driver that crashes at probe.
run_fixture probe-bug --timeout 240
check_eq "a kernel that crashes at probe fails the run" 1 "$rc"
check_eq "its boot cell says panic" panic "$(matrix_column "$R" boot)"
check "the console's last lines are in the report" grep -q 'fixture\|BUG\|invalid opcode' "$R"/points/*/boot.status

# git bisect run finds the broken commit among the series' points.
mgit worktree add -q --detach "$T/bisect" refs/fixtures/flush-noop
(
	cd "$T/bisect"
	git bisect start refs/fixtures/flush-noop base >/dev/null
	git bisect run "$SERIES_TOP/ci/bisect-boot.sh" --bisect-run >"$T/bisect.log" 2>&1 || true
	git bisect log >"$T/bisect.txt" 2>&1 || true
	git bisect reset -q >/dev/null 2>&1 || true
)
check "git bisect run names the broken commit as the first bad one" \
	grep -q "$fix is the first bad commit" "$T/bisect.log"
grep -q "$fix is the first bad commit" "$T/bisect.log" || { cat "$T/bisect.txt"; tail -n 40 "$T/bisect.log"; }

finish_test_file
