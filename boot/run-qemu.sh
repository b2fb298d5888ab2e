#!/usr/bin/env bash
# Usage: boot/run-qemu.sh --kernel BZIMAGE --initrd FILE --out DIR
#                         [--timeout SECONDS] [--accel auto|tcg|kvm]
#                         [--profile fast|debug|clients]
#                         [--qemu-arg ARG]... [--cmdline ARG]... [--help]
#
# Boots one kernel in QEMU with the test devices and runs the in-guest tests:
#   - virtio-pmem-pci, 512 MiB, backed by DIR/main.img (share=on);
#   - virtio-pmem-pci, 128 MiB, backed by DIR/faulty.img, whose first host
#     fsync fails, a transient error (boot/fsync-fault.c, LD_PRELOADed into
#     QEMU only);
#   - a legacy e820 pmem region, memmap=512M!1G, the synchronous control.
# Writes DIR/console.log (ttyS0), DIR/tap.log (ttyS1), DIR/trace.log (QEMU
# virtio_pmem* trace events), DIR/qemu.log, DIR/wakeups.log (a line each
# time boot/wake-guest.py woke the guest from suspend to RAM through
# QEMU's monitor), DIR/accel and DIR/boot.status:
# one word (ok, panic, timeout, no-init, early-exit, qemu-error), then the
# console's last lines when it is not ok. Exits 0 only for ok. A console
# or TAP log over 1 MiB (a guest flooding its console) keeps its last MiB.
# --qemu-arg adds an argument to QEMU's command line, --cmdline one to the
# kernel's (vpmem_fio_seconds=N sets the clients profile's fio runs);
# both repeatable.
# --profile debug (default fast) runs the debug profile's tests instead
# (boot/tests/pmem_debug.c: soak, NEEDS_RESET injection) with
# "vpmem_mode=debug slub_debug=FZP" on the kernel command line and the main
# device's backing file on tmpfs (SERIES_TMPFS, default /dev/shm; deleted
# after the boot). --profile clients runs the real clients instead
# (boot/clients/run-clients.sh: fio, ndctl, daxctl, pmempool, PMDK) with
# "vpmem_mode=clients" on a machine with two NUMA nodes and a third
# virtio-pmem device, 384 MiB (DIR/dax.img), for devdax and system RAM:
# the host's root shared read-only over virtio-9p
# (tag hostroot), DIR/guest shared writable (tag results) for their raw
# outputs, and QEMU's trace log written there during the boot (the guest
# marks each fio run's span of it) and moved to DIR/trace.log after.
# DIR/profile names the profile.
#
# SERIES_QEMU names another QEMU binary (default qemu-system-x86_64).
#
# A boot is ok only if the guest wrote its sentinel and left through the
# isa-debug-exit device (status 33): a panic with panic=-1 exits QEMU with
# status 0, so QEMU's status alone proves nothing.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"
. "$(dirname "$0")/lib/boot.sh"

KERNEL='' INITRD='' OUT='' TIMEOUT=300 ACCEL=auto PROFILE=fast
declare -a EXTRA_ARGS=() CMDLINE_ARGS=()
MAIN_IMG="" TMPFS_DIR="" TRACE_LOG="" MONITOR_DIR="" WAKER_PID=""
LOG_CAP=1048576
DEBUG_EXIT_OK=33
MAIN_SIZE=512M
FAULTY_SIZE=128M
DAX_SIZE=384M

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--kernel) KERNEL=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--initrd) INITRD=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--out) OUT=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--timeout) TIMEOUT=${2:?}; OPT_TAKES=2 ;;
	--accel) ACCEL=${2:?}; OPT_TAKES=2 ;;
	--qemu-arg) EXTRA_ARGS+=("${2:?}"); OPT_TAKES=2 ;;
	--cmdline) CMDLINE_ARGS+=("${2:?}"); OPT_TAKES=2 ;;
	--profile) PROFILE=${2:?}; OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -n "$KERNEL" ] && [ -n "$INITRD" ] && [ -n "$OUT" ] ||
		die "--kernel, --initrd and --out are required"
	[ -r "$KERNEL" ] || die "kernel $KERNEL not found"
	[ -r "$INITRD" ] || die "initramfs $INITRD not found"
	case "$ACCEL" in auto | tcg | kvm) ;; *) die "--accel must be auto, tcg or kvm" ;; esac
	case "$PROFILE" in fast | debug | clients) ;; *) die "--profile must be fast, debug or clients" ;; esac
}

# The debug profile: its tests, slab poisoning, the main image on tmpfs.
# The clients profile: its tests, the trace log in the results share.
apply_profile() {
	MAIN_IMG=$OUT/main.img
	TRACE_LOG=$OUT/trace.log
	if [ "$PROFILE" = clients ]; then
		[[ $OUT != *,* ]] || die "--out $OUT: QEMU's -virtfs cannot take a path with a comma"
		CMDLINE_ARGS+=(vpmem_mode=clients)
		rm -rf "$OUT/guest"
		mkdir -p "$OUT/guest"
		TRACE_LOG=$OUT/guest/trace.log
	fi
	[ "$PROFILE" = debug ] || return 0
	CMDLINE_ARGS+=(vpmem_mode=debug slub_debug=FZP)
	local tmpfs=${SERIES_TMPFS:-/dev/shm}
	[ "$(stat -f -c %T "$tmpfs" 2>/dev/null)" = tmpfs ] || note "$tmpfs is not a tmpfs: host fsyncs will be slow"
	make_temp_dir TMPFS_DIR "$tmpfs" vpmem-debug
	MAIN_IMG=$TMPFS_DIR/main.img
}

# The shim is built next to the guest artefacts, once per source change.
fault_shim() {
	local so="$SERIES_WORK/guest/fsync-fault.so" src="$SERIES_TOP/boot/fsync-fault.c"
	if [ ! -f "$so" ] || [ "$src" -nt "$so" ]; then
		mkdir -p "$(dirname "$so")"
		gcc -shared -fPIC -O2 -Wall -o "$so.tmp" "$src" -ldl || die "cannot build $src"
		mv "$so.tmp" "$so"
	fi
	printf '%s\n' "$so"
}

qemu_args() {
	local accel=$1 token=$2
	printf '%s\n' -accel "$accel" -machine pc -smp 2 \
		-m 2G,slots=4,maxmem=8G -no-reboot -display none \
		-monitor "unix:$MONITOR_DIR/hmp.sock,server=on,wait=off" \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 memmap=512M!1G vpmem_token=$token${CMDLINE_ARGS[*]:+ ${CMDLINE_ARGS[*]}}" \
		-serial "file:$OUT/console.log" -serial "file:$OUT/tap.log" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-object "memory-backend-file,id=vpmem-main,share=on,mem-path=$MAIN_IMG,size=$MAIN_SIZE" \
		-device virtio-pmem-pci,memdev=vpmem-main,id=vpmem0 \
		-object "memory-backend-file,id=vpmem-faulty,share=on,mem-path=$OUT/faulty.img,size=$FAULTY_SIZE" \
		-device virtio-pmem-pci,memdev=vpmem-faulty,id=vpmem1 \
		-trace 'virtio_pmem*' -D "$TRACE_LOG"
	[ "$PROFILE" != clients ] || clients_args
	[ ${#EXTRA_ARGS[@]} -eq 0 ] || printf '%s\n' "${EXTRA_ARGS[@]}"
}

# The clients profile's machine: two NUMA nodes (the device memory, where
# virtio-pmem lives, is the last node's, so its target node is not the
# trivial 0), a third virtio-pmem device for devdax and system RAM (its
# memory is the kernel's once onlined: the main device's backing file
# stays what the guest wrote), the host's root read-only and DIR/guest
# writable over virtio-9p.
clients_args() {
	printf '%s\n' \
		-object memory-backend-ram,id=ram0,size=1G -numa node,nodeid=0,cpus=0,memdev=ram0 \
		-object memory-backend-ram,id=ram1,size=1G -numa node,nodeid=1,cpus=1,memdev=ram1 \
		-object "memory-backend-file,id=vpmem-dax,share=on,mem-path=$OUT/dax.img,size=$DAX_SIZE" \
		-device virtio-pmem-pci,memdev=vpmem-dax,id=vpmem2 \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$OUT/guest,mount_tag=results,security_model=none"
}

# The guest's suspend test sleeps until the host wakes it. The socket is
# in a short temporary path: a unix socket's path is at most 107 bytes.
start_waker() {
	make_temp_dir MONITOR_DIR /tmp vpmem-monitor
	: >"$OUT/wakeups.log"
	python3 "$SERIES_TOP/boot/wake-guest.py" "$MONITOR_DIR/hmp.sock" "$OUT/wakeups.log" \
		"$TRACE_LOG" >"$OUT/waker.log" 2>&1 &
	WAKER_PID=$!
}

stop_waker() {
	kill "$WAKER_PID" 2>/dev/null || true
	wait "$WAKER_PID" 2>/dev/null || true
}

# Keep the last LOG_CAP bytes of a log a flooding guest blew up.
cap_log() {
	local f=$1
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -gt "$LOG_CAP" ] || return 0
	tail -c "$LOG_CAP" "$f" >"$f.cap"
	mv "$f.cap" "$f"
}

# The first lines that say what went wrong: an oops trace is longer than the
# console tail, and its head names the cause.
first_trouble() {
	local lines
	lines=$(grep -m 4 -E 'kernel BUG at|BUG:|Oops|invalid opcode|general protection|WARNING:|Kernel panic|hung_task' \
		"$OUT/console.log" 2>/dev/null) || return 0
	printf -- '--- first trouble on the console:\n%s\n' "$lines"
}

boot_status() {
	local rc=$1
	if [ "$rc" -eq 124 ]; then
		echo timeout
	elif grep -q 'Kernel panic' "$OUT/console.log" 2>/dev/null; then
		echo panic
	elif [ "$rc" -eq "$DEBUG_EXIT_OK" ] && grep -q '^vpmem-guest: tests done' "$OUT/tap.log" 2>/dev/null; then
		echo ok
	elif ! grep -q 'vpmem-guest: init reached' "$OUT/console.log" 2>/dev/null; then
		if [ ! -s "$OUT/console.log" ] && [ "$rc" -ne 0 ]; then echo qemu-error; else echo no-init; fi
	else
		echo early-exit
	fi
}

main() {
	parse_args "$@"
	need_cmds "$QEMU_BIN" timeout gcc python3
	mkdir -p "$OUT"
	rm -f "$OUT"/{console,tap,trace,qemu}.log
	rm -f "$OUT"/{main,faulty,dax}.img 2>/dev/null || true
	apply_profile
	printf '%s\n' "$PROFILE" >"$OUT/profile"
	truncate -s "$MAIN_SIZE" "$MAIN_IMG" 2>/dev/null || die "cannot create backing file $MAIN_IMG"
	truncate -s "$FAULTY_SIZE" "$OUT/faulty.img" 2>/dev/null || die "cannot create backing file $OUT/faulty.img"
	[ "$PROFILE" != clients ] || truncate -s "$DAX_SIZE" "$OUT/dax.img" 2>/dev/null ||
		die "cannot create backing file $OUT/dax.img"
	local accel token shim rc=0 status start
	accel=$(pick_accel "$ACCEL" "$KERNEL")
	printf '%s\n' "$accel" >"$OUT/accel"
	token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s\n' "$token" >"$OUT/token"
	shim=$(fault_shim)
	start_waker
	mapfile -t args < <(qemu_args "$accel" "$token")
	start=$(now_s)
	LD_PRELOAD=$shim VPMEM_FAIL_FSYNC=$(realpath "$OUT/faulty.img") VPMEM_FAIL_FSYNC_TIMES=1 \
		timeout --kill-after=10 "$TIMEOUT" "$QEMU_BIN" "${args[@]}" \
		</dev/null >"$OUT/qemu.log" 2>&1 || rc=$?
	elapsed_since "$start" >"$OUT/boot.seconds"
	stop_waker
	[ "$TRACE_LOG" = "$OUT/trace.log" ] || mv "$TRACE_LOG" "$OUT/trace.log" 2>/dev/null || true
	cap_log "$OUT/console.log"
	cap_log "$OUT/tap.log"
	# Serial lines end in CR LF.
	sed -i 's/\r$//' "$OUT/console.log" "$OUT/tap.log" 2>/dev/null || true
	status=$(boot_status "$rc")
	{
		printf '%s\n' "$status"
		if [ "$status" != ok ]; then
			printf 'qemu exit status %s after %ss (%s)\n' "$rc" "$(cat "$OUT/boot.seconds")" "$accel"
			first_trouble
			printf -- '--- last console lines:\n'
			tail -n 25 "$OUT/console.log" 2>/dev/null || true
			tail -n 5 "$OUT/qemu.log" 2>/dev/null || true
		fi
	} >"$OUT/boot.status"
	[ "$status" = ok ] || exit 1
}

main "$@"
