#!/bin/bash
# The clients profile's tests, run in the guest by boot/init inside a chroot
# of the host's root file system (shared read-only over virtio-9p), so that
# Debian's own fio, ndctl, daxctl, pmempool and libpmem/libpmem2 (through
# boot/clients/pmdk-probe.c) run unchanged against the guest kernel. The
# root is an overlay (a tmpfs over the share): what it writes stays in the
# guest.
# /run is a tmpfs; /run/out is the boot's results directory on the host
# (a writable 9p share), where the raw outputs go: ndctl-*.json, fio-*.json,
# runs.tsv (one line per fio run: name, the host trace log's line count
# before and after it, fio's exit status) and QEMU's trace.log itself, so
# that the host counts the flushes of each run from its own trace.
# Prints TAP (test names pmem.NAME, as boot/evaluate.sh reads them) on
# stdout. Usage: run-clients.sh TOKEN FIO_SECONDS
set -uo pipefail

TOKEN=${1:?token}
FIO_SECONDS=${2:-3}
OUT=/run/out
MNT=/run/mnt
TRACE=$OUT/trace.log
N=0
VIRTIO_NEEDS_RESET=64
declare -A DEV=() VIRTIO=()

tap() {
	local verdict=$1 name=$2 why=${3:-}
	N=$((N + 1))
	case "$verdict" in
	ok) printf 'ok %d pmem.%s\n' "$N" "$name" ;;
	skip) printf 'ok %d pmem.%s # SKIP %s\n' "$N" "$name" "$why" ;;
	*) printf 'not ok %d pmem.%s\n# %s\n' "$N" "$name" "$why" ;;
	esac
}

# tap_run NAME CMD...: ok when CMD exits 0; its output's end explains a failure
tap_run() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		tap ok "$name"
	else
		tap fail "$name" "'$*' failed: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
	fi
}

# The pmem disks by kind (boot/run-qemu.sh --profile clients): the
# virtio-pmem main device (512 MiB), the one for devdax (384 MiB), the
# faulty one (128 MiB, its first host fsync fails) and the e820 region;
# for the virtio ones, their namespace, region and virtio device too.
find_devices() {
	local b path kind
	for b in /sys/block/pmem*; do
		[ -e "$b" ] || continue
		path=$(readlink -f "$b/device")
		case "$path" in
		*/virtio*)
			case $(($(cat "$b/size") * 512 >> 20)) in
			512) kind=main ;;
			384) kind=dax ;;
			*) kind=faulty ;;
			esac
			DEV[${kind}_ns]=$(basename "$path")
			DEV[${kind}_region]=$(basename "$(dirname "$path")")
			VIRTIO[$kind]=$(grep -o 'virtio[0-9]*' <<<"$path" | head -n 1)
			;;
		*) kind=e820 ;;
		esac
		DEV[$kind]=/dev/${b##*/}
	done
}

trace_lines() {
	wc -l <"$TRACE" 2>/dev/null || echo 0
}

check_ndctl() {
	ndctl list -B -R -N -v >"$OUT/ndctl-list.json" 2>"$OUT/ndctl-list.err"
	if grep -q '"provider":"virtio-pmem"' "$OUT/ndctl-list.json" &&
		grep -q '"provider":"e820"' "$OUT/ndctl-list.json"; then
		tap ok ndctl_lists_virtio_and_e820
	else
		tap fail ndctl_lists_virtio_and_e820 "ndctl list -BRNv: $(head -c 300 "$OUT/ndctl-list.json" "$OUT/ndctl-list.err" | tr '\n' ' ')"
	fi
}

# mount_dax NAME DEVICE: ext4 with -o dax on DEVICE at MNT/NAME, its
# inode tables and journal written now (no lazy init flushing in the
# background of a later run's span); a row saying the mount is DAX, so no
# PMDK row can pass on a file that is not
mount_dax() {
	local name=$1 dev=$2
	mkdir -p "$MNT/$name"
	if mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$dev" 400M >"$OUT/mkfs-$name.log" 2>&1 &&
		mount -t ext4 -o dax,noinit_itable "$dev" "$MNT/$name" 2>>"$OUT/mkfs-$name.log" &&
		grep -q "^$dev $MNT/$name ext4 .*dax" /proc/mounts; then
		tap ok "ext4_dax_mounted_$name"
		return 0
	fi
	tap fail "ext4_dax_mounted_$name" "ext4 -o dax on $dev: $(tail -n 2 "$OUT/mkfs-$name.log" | tr '\n' ' ') $(grep "$MNT/$name" /proc/mounts)"
	return 1
}

# pmdk_on NAME: the PMDK probe on a file of the DAX filesystem NAME,
# checked against what that device is: virtio-pmem flushes asynchronously
# (no MAP_SYNC, so is_pmem=0 and page granularity), e820 pmem does not.
pmdk_on() {
	local name=$1 want_pmem=$2 want_gran=$3 out
	if ! out=$(span "pmdk-$name" /run/clients/pmdk-probe "$MNT/$name/pmdk.file" "vpmem-pmdk-$TOKEN" 2>&1); then
		tap fail "pmdk_is_pmem_$name" "pmdk-probe: $out"
		tap fail "pmdk_granularity_$name" "pmdk-probe: $out"
		return
	fi
	printf '%s\n' "$out" >"$OUT/pmdk-$name.txt"
	if grep -qx "is_pmem=$want_pmem" <<<"$out"; then tap ok "pmdk_is_pmem_$name"; else
		tap fail "pmdk_is_pmem_$name" "want is_pmem=$want_pmem, libpmem says: $(grep is_pmem <<<"$out")"; fi
	if grep -qx "granularity=$want_gran" <<<"$out"; then tap ok "pmdk_granularity_$name"; else
		tap fail "pmdk_granularity_$name" "want $want_gran, libpmem2 says: $(grep granularity <<<"$out")"; fi
}

check_pmdk() {
	pmdk_on virtio 0 page
	pmdk_on e820 1 cache-line
	tap_run pmempool_create_virtio pmempool create --layout=vpmem --size=32M obj "$MNT/virtio/pool.obj"
	tap_run pmempool_check_virtio pmempool check "$MNT/virtio/pool.obj"
}

# span NAME CMD...: run CMD, its span of the host's trace log (line counts
# before and after) and its status a line in OUT/runs.tsv
span() {
	local name=$1 before after rc=0
	shift
	sync
	before=$(trace_lines)
	"$@" || rc=$?
	after=$(trace_lines)
	printf '%s\t%s\t%s\t%s\n' "$name" "$before" "$after" "$rc" >>"$OUT/runs.tsv"
	return "$rc"
}

# fio_run NAME FIO-ARG...: one fio run, its JSON in OUT/fio-NAME.json,
# its span in runs.tsv; the files it made in MNT/virtio go after it
fio_run() {
	local name=$1 rc=0
	shift
	span "fio-$name" fio --name="$name" --output-format=json \
		--output="$OUT/fio-$name.json" --thread --group_reporting --invalidate=0 "$@" >"$OUT/fio-$name.err" 2>&1 || rc=$?
	rm -f "$MNT/virtio/$name".* 2>/dev/null
	[ "$rc" -eq 0 ] || tail -n 3 "$OUT/fio-$name.err" >&2
	return "$rc"
}

# 4 KiB random writes, each followed by fsync, from JOBS threads, on the
# main device's block device before any filesystem is made on it: each
# fsync is one flush of the device (a filesystem's journal would batch
# them), so the device's own flush path is what is measured
fio_fsync() {
	local jobs=$1
	fio_run "psync-$jobs" --filename="${DEV[main]}" --ioengine=psync --rw=randwrite --bs=4k \
		--size=256m --fsync=1 --numjobs="$jobs" --time_based --runtime="$FIO_SECONDS"
}

# needs_reset: the main device's status has NEEDS_RESET, or cannot be read
needs_reset() {
	local status
	status=$(cat "/sys/bus/virtio/devices/${VIRTIO[main]}/status" 2>/dev/null) || return 0
	(((status & VIRTIO_NEEDS_RESET) != 0))
}

# The 2026 virtqueue-overflow report's reproducer: 64 jobs of io_uring,
# 64 deep, fsync after every write. It must end without an error, the
# device must not need a reset, and a flush must still work afterwards.
check_uring_overflow() {
	local why=""
	fio_run uring-overflow --directory="$MNT/virtio" --ioengine=io_uring --direct=1 --iodepth=64 --numjobs=64 --fsync=1 \
		--rw=randwrite --bs=4k --size=1m --time_based --runtime="$FIO_SECONDS" ||
		why="fio failed: $(tail -n 2 "$OUT/fio-uring-overflow.err" | tr '\n' ' ')"
	! needs_reset || why="$why the device needs a reset (status $(cat "/sys/bus/virtio/devices/${VIRTIO[main]}/status"))"
	dd if=/dev/zero of="$MNT/virtio/after-overflow" bs=4k count=1 conv=fsync status=none 2>/dev/null ||
		why="$why a flush after the run failed"
	if [ -z "$why" ]; then tap ok fio_uring_overflow_virtio; else tap fail fio_uring_overflow_virtio "$why"; fi
}

check_fio_fsync() {
	local jobs
	for jobs in 1 8 64; do
		tap_run "fio_psync_fsync_${jobs}_virtio" fio_fsync "$jobs"
	done
}

check_fio_dax() {
	check_uring_overflow
	tap_run fio_dax_mmap_write_virtio fio_run mmap-write --directory="$MNT/virtio" --ioengine=mmap \
		--rw=write --bs=1m --size=128m --filename=dax-mmap.dat --overwrite=1
	tap_run fio_dax_mmap_read_virtio fio_run mmap-read --directory="$MNT/virtio" --ioengine=mmap \
		--rw=read --bs=1m --size=128m --filename=dax-mmap.dat
}

# daxctl asks libkmod to load kmem; here it is built in, which libkmod
# reads from this kernel's modules.builtin, not in the host's /lib/modules:
# written, for the dax drivers, into the overlay.
builtin_dax_modules() {
	local dir
	dir=/lib/modules/$(uname -r)
	mkdir -p "$dir" || return 1
	printf 'kernel/drivers/dax/%s.ko\n' dax device_dax kmem dax_pmem >"$dir/modules.builtin"
	: >"$dir/modules.order"
	depmod "$(uname -r)"
}

# memory_blocks NODE: the memory blocks of NUMA node NODE
memory_blocks() {
	find "/sys/devices/system/node/node$1" -maxdepth 1 -name 'memory[0-9]*' | wc -l
}

# The dax device's namespace as devdax: its character device refuses
# MAP_SYNC (no cpu cache flush reaches the host); then its memory onlined
# as system RAM (kmem): every memory block online, on the region's target
# node.
check_devdax() {
	local chardev node before list why="" sync
	if ! ndctl create-namespace -f -e "${DEV[dax_ns]}" -m devdax >"$OUT/ndctl-devdax.json" 2>"$OUT/ndctl-devdax.err"; then
		tap fail devdax_namespace_virtio "ndctl create-namespace -m devdax: $(tail -n 2 "$OUT/ndctl-devdax.err" | tr '\n' ' ')"
		tap skip devdax_map_sync_refused_virtio "no devdax namespace"
		tap skip daxctl_system_ram_virtio "no devdax namespace"
		return
	fi
	tap ok devdax_namespace_virtio
	chardev=$(grep -o '"chardev":"dax[0-9.]*"' "$OUT/ndctl-devdax.json" | cut -d'"' -f4)
	sync=$(/run/clients/pmdk-probe --map-sync "/dev/$chardev" 2>&1)
	if [ "$sync" = map_sync=refused ]; then tap ok devdax_map_sync_refused_virtio; else
		tap fail devdax_map_sync_refused_virtio "MAP_SYNC on /dev/$chardev, a devdax namespace on virtio-pmem: ${sync:-no answer}"; fi
	ndctl list -B -R -N -v >"$OUT/ndctl-list-devdax.json" 2>"$OUT/ndctl-list-devdax.err"
	node=$(cat "/sys/bus/nd/devices/${DEV[dax_region]}/target_node" 2>/dev/null || echo none)
	before=$(memory_blocks "$node" 2>/dev/null || echo 0)
	builtin_dax_modules >"$OUT/depmod.log" 2>&1
	daxctl reconfigure-device -m system-ram "$chardev" >"$OUT/daxctl.json" 2>"$OUT/daxctl.err" ||
		why="daxctl reconfigure-device -m system-ram $chardev: $(tail -n 2 "$OUT/daxctl.err" | tr '\n' ' ')"
	list=$(daxctl list -d "$chardev" 2>&1)
	printf '%s\n' "$list" >"$OUT/daxctl-list.json"
	grep -q '"mode":"system-ram"' <<<"$list" || why="$why; not in system-ram mode: $list"
	grep -q "\"target_node\":$node," <<<"$list" || why="$why; daxctl's target node is not the region's ($node)"
	grep -Eq '"total_memblocks":[1-9]' <<<"$list" &&
		[ "$(grep -o '"online_memblocks":[0-9]*' <<<"$list" | cut -d: -f2)" = \
			"$(grep -o '"total_memblocks":[0-9]*' <<<"$list" | cut -d: -f2)" ] ||
		why="$why; not every memory block online"
	[ "$(memory_blocks "$node" 2>/dev/null || echo 0)" -gt "$before" ] ||
		why="$why; node $node gained no memory block"
	if [ -z "$why" ]; then tap ok daxctl_system_ram_virtio; else tap fail daxctl_system_ram_virtio "${why#; }"; fi
}

main() {
	echo "TAP version 13"
	find_devices
	local k
	for k in main dax faulty e820; do printf '%s\t%s\n' "$k" "${DEV[$k]:-}"; done >"$OUT/devices.tsv"
	check_ndctl
	if [ -z "${DEV[main]:-}" ] || [ -z "${DEV[e820]:-}" ] || [ -z "${DEV[dax]:-}" ]; then
		tap fail clients_devices "a virtio-pmem device or the e820 pmem is missing: $(tr '\n\t' '  ' <"$OUT/devices.tsv")"
		echo "1..$N"
		return
	fi
	check_fio_fsync
	if mount_dax virtio "${DEV[main]}" && mount_dax e820 "${DEV[e820]}"; then
		check_pmdk
		check_fio_dax
	fi
	umount "$MNT/virtio" "$MNT/e820" 2>/dev/null
	check_devdax
	echo "1..$N"
}

main
