#!/usr/bin/env bash
# boot/run-qemu.sh and boot/boot-point.sh against guests that go wrong
# (boot/fixtures/init-*) and QEMUs that cannot start: each is a failed boot
# with a named status, a bounded time and the console's tail in
# boot.status, never a pass, and boot-point never caches it.
# Slow: a kernel build and boots (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
KERNEL=$("$SERIES_TOP/ci/build-kernel.sh" --work "$SERIES_WORK" --rev series/v4 2>"$T/build.log")
RUN=("$SERIES_TOP/boot/run-qemu.sh" --accel tcg --kernel "$KERNEL")

# boot_fault NAME INIT TIMEOUT WANT-STATUS
boot_fault() {
	local name=$1 init=$2 timeout=$3 want=$4 rc=0 start took
	"$SERIES_TOP/boot/mkinitramfs.sh" --work "$SERIES_WORK" --init "$init" --out "$T/$name.cpio.gz" 2>/dev/null
	start=$(date +%s)
	"${RUN[@]}" --initrd "$T/$name.cpio.gz" --out "$T/$name" --timeout "$timeout" || rc=$?
	took=$(($(date +%s) - start))
	check_eq "$name: the boot fails" 1 "$rc"
	check_eq "$name: status $want" "$want" "$(head -n 1 "$T/$name/boot.status")"
	[ "$took" -le $((timeout + 30)) ] && pass "$name: ends within its timeout (${took}s)" ||
		fail "$name: ends within its timeout" "took ${took}s for a ${timeout}s timeout"
	[ "$(wc -l <"$T/$name/boot.status")" -gt 2 ] && pass "$name: the report carries the console's tail" ||
		fail "$name: the report carries the console's tail" "$(cat "$T/$name/boot.status")"
}

F=$SERIES_TOP/boot/fixtures
boot_fault hang "$F/init-hang" 20 timeout
boot_fault flood "$F/init-flood" 20 timeout
check "flood: the console log kept on disk is capped" test "$(stat -c %s "$T/flood/console.log")" -le $((2 * 1024 * 1024))
boot_fault early-poweroff "$F/init-early-poweroff" 60 early-exit
boot_fault init-exits "$F/init-exit" 60 panic

# QEMU that cannot start.
"$SERIES_TOP/boot/mkinitramfs.sh" --work "$SERIES_WORK" --out "$T/ok.cpio.gz" 2>/dev/null
rc=0
"${RUN[@]}" --initrd "$T/ok.cpio.gz" --out "$T/badopt" --timeout 30 --qemu-arg -no-such-option || rc=$?
check_eq "a bad QEMU option fails the boot" 1 "$rc"
check_eq "a bad QEMU option is a qemu-error" qemu-error "$(head -n 1 "$T/badopt/boot.status")"
check_grep "QEMU's complaint is in the report" 'no-such-option' "$T/badopt/boot.status"
check_fails "a missing QEMU binary is named" "missing commands: /nonexistent/qemu-system-x86_64" \
	env SERIES_QEMU=/nonexistent/qemu-system-x86_64 "${RUN[@]}" --initrd "$T/ok.cpio.gz" --out "$T/nobin"
mkdir -p "$T/ro/main.img"
check_fails "a backing file that cannot be created is named" "cannot create backing file .*main.img" \
	"${RUN[@]}" --initrd "$T/ok.cpio.gz" --out "$T/ro"
check_fails "a missing kernel is named" "kernel .*nokernel not found" \
	"$SERIES_TOP/boot/run-qemu.sh" --kernel "$T/nokernel" --initrd "$T/ok.cpio.gz" --out "$T/nok"

# boot/boot-point.sh, the main job's entry: one line, the status, no cache
# of a failed boot, and a QEMU that does not run named in boot.status.
BP=("$SERIES_TOP/boot/boot-point.sh" --work "$SERIES_WORK" --accel tcg --kernel "$KERNEL" --timeout 20)
for n in 1 2; do
	rc=0
	"${BP[@]}" --initrd "$T/hang.cpio.gz" --out "$T/bp$n" >"$T/bp$n.line" || rc=$?
	check_eq "boot-point, try $n: a hung guest fails" 1 "$rc"
	check_grep "boot-point, try $n: its one line says FAIL: timeout" '^FAIL: timeout \([0-9.]+s\); console tail in ' "$T/bp$n.line"
done
check "boot-point: the failed boot was not cached (the second try booted again)" \
	test ! -e "$T/bp2/boot.cached" -a -s "$T/bp2/console.log"
rc=0
env SERIES_QEMU=/nonexistent/qemu-system-x86_64 "${BP[@]}" --initrd "$T/ok.cpio.gz" --out "$T/bpq" >"$T/bpq.line" || rc=$?
check_eq "boot-point: a missing QEMU fails the boot" 1 "$rc"
check_grep "boot-point: ... as a qemu-error" '^FAIL: qemu-error' "$T/bpq.line"
check_grep "boot-point: ... with run-qemu.sh's message in boot.status" 'missing commands: /nonexistent/qemu-system-x86_64' "$T/bpq/boot.status"

finish_test_file
