#!/usr/bin/env bash
# No space left in the work directory (a small tmpfs stands in): an import
# that cannot extract, one that cannot write its objects, and a kernel
# build whose build directory fills up each fail with a message that names
# the full disk, move no ref and leave the mirror whole; with space again,
# the import completes. Needs root (mount).
# Slow: a kernel build into a small tmpfs (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
MOUNTS=()
cleanup() {
	local m
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || true; done
}
at_exit cleanup

small_tmpfs() {
	mkdir -p "$2"
	mount -t tmpfs -o "size=$1" tmpfs "$2" && MOUNTS+=("$2")
}

cached_kernels() {
	{ find "$SERIES_WORK/cache/kernels" -name bzImage 2>/dev/null || true; } | wc -l
}

# Import: a first version fits, then the disk is too small for the next.
W=$T/work
check "a 6 MiB tmpfs is mounted as the work directory" small_tmpfs 6m "$W"
IMPORT=("$SERIES_TOP/base/import.sh" --work "$W")
make_fixture_tarball "$T/one.tar.xz" "VERSION = 1"
make_fixture_tarball "$T/huge.tar.xz" "VERSION = 2" 8192
make_fixture_tarball "$T/big.tar.xz" "VERSION = 3" 3584
check "the first import fits" "${IMPORT[@]}" --tarball "$T/one.tar.xz" --version 6.12.1-1
before=$(refs_snapshot "$W/linux")
check_fails "an import that cannot extract names the full disk" "huge.tar.xz.*no space left" \
	"${IMPORT[@]}" --tarball "$T/huge.tar.xz" --version 6.12.2-1
check_eq "it moves no ref" "$before" "$(refs_snapshot "$W/linux")"
check_fails "an import that cannot write its objects names the full disk" "no space left" \
	"${IMPORT[@]}" --tarball "$T/big.tar.xz" --version 6.12.3-1
check_eq "it moves no ref either" "$before" "$(refs_snapshot "$W/linux")"
check_eq "the failed imports leave no stage behind" "" "$(ls -d "$W"/import.* 2>/dev/null)"
check "the mirror passes git fsck" git -C "$W/linux" fsck --no-progress --connectivity-only
check "with space again, the import completes" \
	bash -c "mount -o remount,size=48m '$W' && $(printf '%q ' "${IMPORT[@]}") --tarball '$T/big.tar.xz' --version 6.12.3-1"
check_eq "both tags are there, one commit each" "2 2" \
	"$(git -C "$W/linux" tag -l 'base/import/*' | wc -l) $(git -C "$W/linux" rev-list --count import)"

# Build: the build directory of a config is a 4 MiB tmpfs.
if mirror_exists && mgit rev-parse -q --verify base >/dev/null; then
	B=$(build_dir diskfull)
	rm -rf "$B"
	check "a 4 MiB tmpfs is mounted as a build directory" small_tmpfs 4m "$B"
	before=$(refs_snapshot "$(mirror_dir)")
	kernels=$(cached_kernels)
	check_fails "a build that fills its directory names the full disk" "base.*does not build.*no space left" \
		"$SERIES_TOP/ci/build-kernel.sh" --work "$SERIES_WORK" --rev base --name diskfull \
		--make-args "KCFLAGS=-DVPMEM_DISK_FULL_TEST"
	check_eq "no kernel is cached for it" "$kernels" "$(cached_kernels)"
	check_eq "the mirror's refs are untouched" "$before" "$(refs_snapshot "$(mirror_dir)")"
	umount "$B" && rmdir "$B"
else
	fail "the build part needs the mirror with base (ci/tests/30-import.sh and 40-replay.sh run first)"
fi

finish_test_file
