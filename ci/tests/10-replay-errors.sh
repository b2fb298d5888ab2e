#!/usr/bin/env bash
# ci/replay.sh on a small fixture mirror: the happy path, and every bad
# input the replay must refuse with a clear message and no ref moved.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
W=$T/work
FIX=$T/fixture
REPLAY=("$SERIES_TOP/ci/replay.sh" --work "$W" --unmerge "$FIX/unmerge.patch")

# A scratch repository whose commits become the fixture patches.
make_patches() {
	local s=$T/scratch
	git init -q -b main "$s"
	(
		cd "$s"
		export GIT_AUTHOR_NAME=Fix GIT_AUTHOR_EMAIL=fix@example.org \
			GIT_COMMITTER_NAME=Fix GIT_COMMITTER_EMAIL=fix@example.org
		printf 'one\ntwo\nthree\n' >a.txt
		printf 'alpha\nbeta\n' >b.txt
		git add . && git commit -q -m "import"
		sed -i 's/two/TWO/' a.txt && git commit -q -am "base: unmerge"
		sed -i 's/beta/BETA/' b.txt && git commit -q -am "b: change beta"
		echo new >c.txt && git add c.txt && git commit -q -m "c: add c"
		sed -i 's/three/THREE/' a.txt && git commit -q -am "a: change three"
		mkdir -p "$FIX"
		git format-patch -q -o "$FIX" HEAD~4..HEAD
		mv "$FIX"/0001-*.patch "$FIX/unmerge.patch"
	)
	mkdir -p "$W"
	git init -q -b main "$W/linux"
	git -C "$s" push -q "$W/linux" HEAD~4:refs/heads/import
	git -C "$W/linux" tag base/import/1.0 import
}

write_topics() {
	cat >"$T/topics.txt"
}

make_patches
P2=$(ls "$FIX"/0002-*.patch) P3=$(ls "$FIX"/0003-*.patch) P4=$(ls "$FIX"/0004-*.patch)
write_topics <<EOF2
# fixture topics
tb	base	$P2
tc	tb	$P3
ta	tb	$P4
EOF2

check "replay of the fixture topics succeeds" "${REPLAY[@]}" --topics "$T/topics.txt"
M=$W/linux
check_eq "series/v4 has the three patches on base" 3 "$(git -C "$M" rev-list --count base..series/v4)"
check_eq "base is the import plus the unmerge" "import" "$(git -C "$M" log -1 --format=%s base~1)"
merged=$(git -C "$M" merge-tree --write-tree topic/tc topic/ta)
check_eq "merging the leaf topics gives the tree of series/v4" \
	"$(git -C "$M" rev-parse "series/v4^{tree}")" "$merged"
before=$(refs_snapshot "$W/linux")
check "a second replay succeeds" "${REPLAY[@]}" --topics "$T/topics.txt"
check_eq "replaying the same patches gives the same commits" "$before" "$(refs_snapshot "$W/linux")"

# Bad inputs: each must fail, say what is wrong, and move no ref.
expect_refused() {
	local name=$1 pattern=$2
	shift 2
	before=$(refs_snapshot "$W/linux")
	check_fails "$name" "$pattern" "$@"
	check_eq "$name: no ref moved" "$before" "$(refs_snapshot "$W/linux")"
}

write_topics <<EOF2
tb	base	$P2 $T/no-such.patch
EOF2
expect_refused "missing patch file is named" "no-such.patch.*not found" "${REPLAY[@]}" --topics "$T/topics.txt"

write_topics <<EOF2
tb	tc	$P2
tc	tb	$P3
EOF2
expect_refused "a parent cycle is refused" "cycle" "${REPLAY[@]}" --topics "$T/topics.txt"

write_topics <<EOF2
tb	nowhere	$P2
EOF2
expect_refused "an unknown parent is refused" "unknown parent 'nowhere'" "${REPLAY[@]}" --topics "$T/topics.txt"

sed 's/^-beta$/-gamma/' "$P2" >"$T/corrupt.patch"
write_topics <<EOF2
tb	base	$T/corrupt.patch
EOF2
expect_refused "a patch that does not apply names topic, patch and hunk" \
	"topic tb: patch .*corrupt.patch does not apply: failing hunk in b.txt: @@" \
	"${REPLAY[@]}" --topics "$T/topics.txt"

printf 'not a patch\n' >"$T/garbage.patch"
write_topics <<EOF2
tb	base	$T/garbage.patch
EOF2
expect_refused "a file that is no patch is refused" "garbage.patch" "${REPLAY[@]}" --topics "$T/topics.txt"

write_topics <<EOF2
tb	base	$P2
EOF2
expect_refused "an unknown import is refused" "base import 'base/import/9.9' not found" \
	"${REPLAY[@]}" --topics "$T/topics.txt" --onto base/import/9.9
expect_refused "a missing mirror is refused" "no mirror" \
	"$SERIES_TOP/ci/replay.sh" --work "$T/empty" --topics "$T/topics.txt"

# Mangled patches: refused before git sees them, nothing written outside.
sed 's/$/\r/' "$P2" >"$T/crlf.patch"
write_topics <<EOF2
tb	base	$T/crlf.patch
EOF2
expect_refused "a patch with CRLF line endings is refused" "crlf.patch: CRLF line endings" \
	"${REPLAY[@]}" --topics "$T/topics.txt"

{ sed '/^diff --git/,$d' "$P2"; printf '%s\n' 'diff --git a/blob.bin b/blob.bin' 'new file mode 100644' \
	'index 0000000..e69de29' 'GIT binary patch' 'literal 0' 'HcmV?d00001' ''; } >"$T/binary.patch"
write_topics <<EOF2
tb	base	$T/binary.patch
EOF2
expect_refused "a patch with a binary hunk is refused" "binary.patch: contains a binary hunk" \
	"${REPLAY[@]}" --topics "$T/topics.txt"

sed 's|a/b.txt|a/../escape.txt|g; s|b/b.txt|b/../escape.txt|g' "$P2" >"$T/escape.patch"
write_topics <<EOF2
tb	base	$T/escape.patch
EOF2
expect_refused "a patch touching a path outside the tree is refused" "escape.patch: touches a path outside the tree" \
	"${REPLAY[@]}" --topics "$T/topics.txt"
check "nothing was written outside the mirror" test ! -e "$W/escape.txt" -a ! -e "$T/escape.txt"

# Two runs on one work directory: the second refuses instead of interleaving.
write_topics <<EOF2
tb	base	$P2
EOF2
(exec 9>"$W/.lock" && flock 9 && sleep 10 9>&-) &
holder=$!
sleep 1
expect_refused "a second run on the same work directory is refused" "another run holds .*\.lock" \
	env SERIES_LOCK_WAIT=0 "${REPLAY[@]}" --topics "$T/topics.txt"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

git -C "$M" worktree add -q "$T/wt" topic/tb
expect_refused "a checked-out topic branch is not moved" "topic/tb is checked out" \
	"${REPLAY[@]}" --topics "$T/topics.txt"
git -C "$M" worktree remove --force "$T/wt"

git -C "$M" checkout -q -f --detach base
echo dirty >>"$M/a.txt"
expect_refused "a dirty mirror work tree is refused" "uncommitted changes" \
	"${REPLAY[@]}" --topics "$T/topics.txt"
check_eq "the user's uncommitted change is kept" "dirty" "$(tail -n 1 "$M/a.txt")"

finish_test_file
