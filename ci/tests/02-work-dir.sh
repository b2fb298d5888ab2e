#!/usr/bin/env bash
# The work directory a script was given (--work, an assignment after
# sourcing ci/lib/common.sh) reaches the scripts it runs: boot/run-qemu.sh
# builds the fsync shim and caches the accelerator under it, not under the
# clone's ./work. Boots nothing (the kernel is not a kernel).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
printf 'not a kernel\n' >"$T/bzImage"
printf 'not an initramfs\n' >"$T/initrd"

# As an entry point does it: source the library, then take --work.
env -u SERIES_WORK bash -c '
	. "$1/ci/lib/common.sh"
	SERIES_WORK=$2
	"$SERIES_TOP/boot/run-qemu.sh" --kernel "$3/bzImage" --initrd "$3/initrd" \
		--out "$3/out" --accel auto --timeout 20' run "$SERIES_TOP" "$T/w" "$T" >"$T/run.log" 2>&1 || true
check "the fsync shim is built under the work directory given" test -s "$T/w/guest/fsync-fault.so"
check "the accelerator is cached under the work directory given" test -s "$T/w/cache/accel"
check "the boot of a non-kernel is not ok" grep -qv '^ok$' "$T/out/boot.status"

finish_test_file
