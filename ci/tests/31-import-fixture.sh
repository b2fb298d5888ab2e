#!/usr/bin/env bash
# base/import.sh on small fixture tarballs: a second package version becomes
# a second commit on the import history with both tags kept, a re-import is
# a no-op, a corrupted tarball fails with its name and changes nothing, and
# an import killed midway leaves the mirror consistent for the next run.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
W=$T/work
IMPORT=("$SERIES_TOP/base/import.sh" --work "$W")

make_tarball() {
	make_fixture_tarball "$T/$1" "$2"
}

make_tarball one.tar.xz "VERSION = 1"
check "importing a fixture tarball succeeds" "${IMPORT[@]}" --tarball "$T/one.tar.xz" --version 6.12.1-1~deb12u1
M=$W/linux
check_eq "the tag mangles ~ as DEP-14 does" "base/import/6.12.1-1_deb12u1" \
	"$(git -C "$M" tag -l 'base/import/*')"
check_eq "all five files are imported despite the .gitignore" 5 \
	"$(git -C "$M" ls-tree -r --name-only base/import/6.12.1-1_deb12u1 | wc -l)"
check_eq "the symlink stays a symlink" 120000 \
	"$(git -C "$M" ls-tree base/import/6.12.1-1_deb12u1 link | cut -d' ' -f1)"
before=$(refs_snapshot "$W/linux")
check "re-importing the same version succeeds" "${IMPORT[@]}" --tarball "$T/one.tar.xz" --version 6.12.1-1~deb12u1
check_eq "re-importing the same version changes nothing" "$before" "$(refs_snapshot "$W/linux")"

make_tarball two.tar.xz "VERSION = 2"
check "importing a newer version succeeds" "${IMPORT[@]}" --tarball "$T/two.tar.xz" --version 6.12.2-1~deb12u1
check_eq "the newer import is a commit on top of the older" \
	"$(git -C "$M" rev-parse base/import/6.12.1-1_deb12u1)" \
	"$(git -C "$M" rev-parse base/import/6.12.2-1_deb12u1~1)"
check_eq "refs/heads/import is the newest import" \
	"$(git -C "$M" rev-parse base/import/6.12.2-1_deb12u1)" "$(git -C "$M" rev-parse import)"
check_eq "both tags are kept" 2 "$(git -C "$M" tag -l 'base/import/*' | wc -l)"
check "the mirror's HEAD stays unborn (no work tree is touched)" \
	bash -c "! git -C '$M' rev-parse -q --verify HEAD"

head -c $(($(stat -c %s "$T/two.tar.xz") / 2)) "$T/two.tar.xz" >"$T/trunc.tar.xz"
before=$(refs_snapshot "$W/linux")
check_fails "a truncated tarball is refused with its name" "trunc.tar.xz" \
	"${IMPORT[@]}" --tarball "$T/trunc.tar.xz" --version 6.12.3-1
check_eq "a failed import moves no ref" "$before" "$(refs_snapshot "$W/linux")"
check_fails "a missing tarball is refused with its name" "nothere.tar.xz.*missing" \
	"${IMPORT[@]}" --tarball "$T/nothere.tar.xz" --version 6.12.4-1
check_fails "--tarball without --version is refused" "needs --version" \
	"${IMPORT[@]}" --tarball "$T/two.tar.xz"
before=$(refs_snapshot "$W/linux")
check_fails "a package version the archive does not have is named" \
	"cannot download linux-source-6.12=6.12.0-0nosuch" "${IMPORT[@]}" --version 6.12.0-0nosuch
check_eq "the missing package moves no ref" "$before" "$(refs_snapshot "$W/linux")"
check_eq "the missing package leaves no download behind" "" "$(ls "$W/packages" 2>/dev/null)"

# Kill an import at several points; the next run must finish it once.
make_tarball three.tar.xz "VERSION = 3"
for delay in 0.05 0.2 0.5; do
	"${IMPORT[@]}" --tarball "$T/three.tar.xz" --version 6.12.3-1 >/dev/null 2>&1 &
	sleep "$delay"
	kill -9 $! 2>/dev/null || true
	wait $! 2>/dev/null || true
done
check "an import run after killed ones succeeds" "${IMPORT[@]}" --tarball "$T/three.tar.xz" --version 6.12.3-1
check_eq "killed imports leave exactly one commit per version" 3 "$(git -C "$M" rev-list --count import)"
check "the mirror passes git fsck after the killed imports" git -C "$M" fsck --no-progress
check_eq "the next run removes the stages killed imports left" "" "$(ls -d "$W"/import.* 2>/dev/null)"

finish_test_file
