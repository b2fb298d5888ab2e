#!/usr/bin/env bash
# ci/check-commits.sh: the series adds no finding in any check; a fixture
# series (ci/tests/fixtures/checks) with a reintroduced v3 bug (in a form
# only our devm_kfree.cocci sees), a trailing space, a missing Signed-off-by
# and a sparse warning is reported commit by commit, check by check, and
# fails the run. cocci's verdict is reused where an edit of another file
# does not reach it.
# Slow: kernel builds of every commit of the series (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
CC=("$SERIES_TOP/ci/check-commits.sh" --work "$SERIES_WORK")

# cell RESULTS N CHECK: CHECK's cell of the N-th commit of the matrix
cell() {
	matrix_cell "$1" "$(matrix_column "$1" commit | sed -n "$2p")" "$3"
}

rc=0
"${CC[@]}" >"$T/series.log" 2>&1 || rc=$?
R=$(tail -n 1 "$T/series.log")
check_eq "the series adds no finding in any check" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 30 "$T/series.log"
check_eq "every commit and check of the series is ok" \
	"$(($(mgit rev-list --count base..series/v4) * $(head -n 1 "$R/matrix.tsv" | cut -f3- | wc -w)))" \
	"$(tail -n +2 "$R/matrix.tsv" | cut -f3- | tr '\t' '\n' | grep -cx ok)"
for k in build sparse cocci checkpatch hygiene; do
	check "the $k log of the first commit is kept" test -s "$(ls -d "$R"/01-*)/$k.log"
done
rc=0
"${CC[@]}" >"$T/again.log" 2>&1 || rc=$?
check_eq "a re-run of the unchanged series passes (from the cache)" 0 "$rc"

# The fixture series, as a chain on series/v4.
head=series/v4
for p in "$SERIES_TOP"/ci/tests/fixtures/checks/*.patch; do
	head=$("$SERIES_TOP/ci/commit-patch.sh" --work "$SERIES_WORK" --onto "$head" --patch "$p" \
		--ref refs/fixtures/checks)
done
rc=0
# Every check but the build one: sparse scans the fixture commits in the
# guest build directory the series run left, so the fixtures cost CI no
# kernel build of their own.
"${CC[@]}" --checks sparse,cocci,checkpatch,hygiene series/v4..refs/fixtures/checks >"$T/fixture.log" 2>&1 || rc=$?
R=$(tail -n 1 "$T/fixture.log")
check_eq "the fixture series fails the run" 1 "$rc"
check_eq "commit 1 (v3 kfree of devm memory): cocci reports it" "1 new" "$(cell "$R" 1 cocci)"
check "commit 1: the cocci finding names the devm field" grep -q "kfree() of devm-allocated memory (from ->req)" "$(ls -d "$R"/01-*)/cocci.new"
check_eq "commit 1: checkpatch has nothing to say" ok "$(cell "$R" 1 checkpatch)"
check_eq "commit 2 (trailing space): checkpatch reports it" "1 new" "$(cell "$R" 2 checkpatch)"
check "commit 2: the finding is the trailing whitespace" grep -q 'trailing whitespace' "$(ls -d "$R"/02-*)/checkpatch.new"
check_eq "commit 2: the earlier cocci finding is not counted again" ok "$(cell "$R" 2 cocci)"
check_eq "commit 3 (no sign-off): hygiene reports it" "1 new" "$(cell "$R" 3 hygiene)"
check "commit 3: checkpatch reports the missing sign-off too" grep -q 'Missing Signed-off-by' "$(ls -d "$R"/03-*)/checkpatch.new"
check_eq "commit 4 (le32 read in cpu order): sparse reports it" "1 new" "$(cell "$R" 4 sparse)"
check "commit 4: the finding is sparse's endianness warning in the driver" \
	grep -q '^\[sparse guest\] drivers/nvdimm/virtio_pmem.c: warning: restricted __le32 degrades to integer' \
	"$(ls -d "$R"/04-*)/sparse.new"
check_eq "commits 1-3: nothing for sparse" "ok ok ok" "$(cell "$R" 1 sparse) $(cell "$R" 2 sparse) $(cell "$R" 3 sparse)"
check_eq "commit 4: nothing for cocci, checkpatch or hygiene" "ok ok ok" \
	"$(cell "$R" 4 cocci) $(cell "$R" 4 checkpatch) $(cell "$R" 4 hygiene)"
check_eq "the matrix has only the checks asked for" "commit subject sparse cocci checkpatch hygiene" \
	"$(head -n 1 "$R/matrix.tsv" | tr '\t' ' ')"
check_fails "an unknown check is refused" "no check 'nosuch'" "${CC[@]}" --checks nosuch

# cocci's verdict is filed by what it reads (the touched files at the commit
# and its parent): fixture 1 again, after an edit of another file (which does
# not reach it: the verdict comes from the cache) and after an edit of the
# driver it changes (which does: cocci runs again).
# fixture_on_edit REF PATH: fixture 1 (as REF) on a commit of series/v4
# that adds a comment line (new every run) to PATH
fixture_on_edit() {
	local tree edit
	tree=$(tree_with_line series/v4 "$2" "/* ci/tests/45: an edit at $(date -u +%s.%N) */")
	edit=$(export_tool_committer
		GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
			mgit commit-tree "$tree" -p series/v4 -m "ci/tests/45: edit $2")
	"$SERIES_TOP/ci/commit-patch.sh" --work "$SERIES_WORK" --onto "$edit" --ref "$1" \
		--patch "$(ls "$SERIES_TOP"/ci/tests/fixtures/checks/0001-*.patch)" >/dev/null
}
# fixture_after_edit REF PATH: fixture_on_edit, then cocci on REF; prints
# the results directory
fixture_after_edit() {
	fixture_on_edit "$@"
	"${CC[@]}" --checks cocci "$1^..$1" >"$T/${1##*/}.log" 2>&1 || true
	tail -n 1 "$T/${1##*/}.log"
}
content_key() {
	"$SERIES_TOP/ci/checks/cocci.sh" --work "$SERIES_WORK" --commit "$1" --parent "$1^" --content-key
}
R=$(fixture_after_edit refs/fixtures/cocci-far fs/ext4/file.c)
check_eq "an edit of another file: fixture 1's cocci finding stands" "1 new" "$(cell "$R" 1 cocci)"
check "an edit of another file: the verdict comes from the cache" test -s "$(ls -d "$R"/01-*)/cocci.cached"
check "an edit of another file: the line says cached" grep -q 'cocci *1 new, cached' "$T/cocci-far.log"
R=$(fixture_after_edit refs/fixtures/cocci-near drivers/nvdimm/virtio_pmem.c)
check_eq "an edit of the driver: fixture 1's cocci finding stands" "1 new" "$(cell "$R" 1 cocci)"
check "an edit of the driver: cocci runs again" test ! -e "$(ls -d "$R"/01-*)/cocci.cached"
fixture_on_edit refs/fixtures/cocci-rules scripts/coccinelle/api/kfree_mismatch.cocci
check "an edit of the kernel's rules: a new cocci key" \
	test "$(content_key refs/fixtures/cocci-rules)" != "$(content_key refs/fixtures/cocci-far)"

finish_test_file
