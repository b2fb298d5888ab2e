#!/usr/bin/env bash
# ci/bisect-boot.sh's matrix and summary, on fixture results (no build, no
# boot): a point whose commit failed its checks has the verdict FAIL; the
# summary counts every failed stage (checks, points, b4) and is 0 exactly
# when the run exits 0; the accelerator and QEMU version of boots that all
# came from the cache are written to the results (RESULTS/accelerator,
# RESULTS/qemu-version) and named in the summary.
# shellcheck disable=SC2034 # its variables are read by bisect-boot.sh's functions
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
make_temp_dir T
export SERIES_WORK=$T/work
# Sourced, ci/bisect-boot.sh only defines its functions (an older one that
# would run instead stops at the unknown option).
# shellcheck source=../bisect-boot.sh
. "$(dirname "$0")/../bisect-boot.sh" --no-such-option-when-sourced
. "$(dirname "$0")/../lib/testlib.sh"
set -euo pipefail

# A mirror of three commits: base and two series commits.
make_fixture_mirror() {
	local m
	m=$(mirror_dir)
	mkdir -p "$m"
	git -C "$m" init -q
	for s in "base: fixture" "virtio-pmem: fixture one" "virtio-pmem: fixture two"; do
		git -C "$m" -c user.name=T -c user.email=t@localhost commit -q --allow-empty -m "$s"
	done
}

# fixture_point I LABEL COMMIT VERDICT: a point directory as run_point and a
# cached boot leave it
fixture_point() {
	local i=$1 label=$2 commit=$3 verdict=$4 dir
	add_point "$commit" "$label" "$label"
	dir=$RESULTS/points/$(printf '%02d' "$i")-$label
	mkdir -p "$dir"
	printf 'ok\n' >"$dir/build.result"
	printf 'ok\n' >"$dir/boot.status"
	printf 'tcg\n' >"$dir/accel"
	printf 'QEMU emulator version 7.2.99 (fixture)\n' >"$dir/qemu-version"
	printf 'probe\tok\n' >"$dir/groups.tsv"
	printf '%s\n' "$verdict" >"$dir/verdict"
}

# new_results CHECK-OF-COMMIT-2 VERDICT-OF-COMMIT-2: fresh fixture results
new_results() {
	local c
	POINT_REV=() POINT_COL=() POINT_LABEL=()
	RESULTS=$(mktemp -d "$T/results.XXXXXX")
	mkdir -p "$RESULTS/checks"
	mapfile -t c < <(mgit rev-list --reverse HEAD)
	fixture_point 0 base "${c[0]}" ok
	fixture_point 1 1 "${c[1]}" ok
	fixture_point 2 2 "${c[2]}" "$2"
	printf '%s\tok\n%s\t%s\n' "${c[1]}" "${c[2]}" "$1" >"$RESULTS/checks/summary.tsv"
}

# verdict LABEL: the verdict column of a row of matrix.tsv
verdict() {
	matrix_cell "$RESULTS" "$1" verdict
}

summary_line() {
	print_matrix | grep '^accelerator:'
}

make_fixture_mirror

# Checks failed on commit 2; its build, boot and tests passed.
new_results FAIL ok
CHECKS_FAILED=1 FAILED_POINTS=0 B4_FAILED=0 ACCEL_USED=
write_matrix
check_eq "a commit whose checks failed has the verdict FAIL" FAIL "$(verdict 2)"
check_eq "a commit whose checks passed keeps its verdict" ok "$(verdict 1)"
check_eq "base (no checks) keeps its verdict" ok "$(verdict base)"
check "the summary counts the failed checks" grep -q 'failed: 1 (checks: 1, build/boot/tests: 0, b4: 0)' <<<"$(summary_line)"
check_eq "failed stages: 1, so the run exits non-zero" 1 "$(failed_stages)"
check_eq "the accelerator of boots all from the cache is written" tcg "$(cat "$RESULTS/accelerator" 2>/dev/null)"
check_eq "so is their QEMU version" 'QEMU emulator version 7.2.99 (fixture)' "$(cat "$RESULTS/qemu-version" 2>/dev/null)"
check "the summary names the accelerator and says every boot was cached" \
	grep -q '^accelerator: tcg (every boot from the cache) ' <<<"$(summary_line)"

# A point failed and the checks of three commits failed without a summary.
new_results ok FAIL
: >"$RESULTS/checks/summary.tsv"
CHECKS_FAILED=1 FAILED_POINTS=1 B4_FAILED=0 ACCEL_USED=tcg
write_matrix
check_eq "a point that failed has the verdict FAIL" FAIL "$(verdict 2)"
check "the summary counts a failed point and a failed checks stage" \
	grep -q 'failed: 2 (checks: 1, build/boot/tests: 1, b4: 0)' <<<"$(summary_line)"

# b4 failed after every point passed.
new_results ok ok
CHECKS_FAILED=0 FAILED_POINTS=0 B4_FAILED=1
write_matrix
check "the summary counts a failed b4 stage" grep -q 'failed: 1 (checks: 0, build/boot/tests: 0, b4: 1)' <<<"$(summary_line)"
check_eq "every verdict is ok when only b4 failed" "ok ok ok" "$(matrix_column "$RESULTS" verdict | paste -sd' ')"

# A step that fails inside a stage (here a cp into the point's directory)
# stops the job and names the command; called under 'if !' or '||' it
# would pass unseen and the point would read ok.
cat >"$T/stage-fails.sh" <<EOF
set -euo pipefail
. "$SERIES_TOP/ci/bisect-boot.sh" --no-such-option-when-sourced
RESULTS=$T/run
add_point HEAD 1 1
stage_build() { cp "$T/no-such-file" "\$2/"; STAGE_OK=yes; }
stage_boot() { STAGE_OK=yes; }
stage_evaluate() { STAGE_OK=yes; }
stage_extra_boots() { STAGE_OK=yes; }
run_point 0
echo "run_point went on: \$POINT_OK"
EOF
out=$(bash "$T/stage-fails.sh" 2>&1) && rc=0 || rc=$?
check_eq "a step that fails inside a stage stops the job" 1 "$rc"
check "the message names the failed command" grep -q "error: cp .*no-such-file.* failed with status 1" <<<"$out"
check "the point did not go on as if it had passed" bash -c "! grep -q 'run_point went on' <<<'$out'"

# All good.
B4_FAILED=0
check_eq "nothing failed: 0 failed stages" 0 "$(failed_stages)"
check "the summary says failed: 0" grep -q 'points: 3   failed: 0 ' <<<"$(summary_line)"

finish_test_file
