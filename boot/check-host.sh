#!/usr/bin/env bash
# Usage: boot/check-host.sh DIR [--help]
#
# Checks, on the host, what a boot by boot/run-qemu.sh left in DIR, and
# writes the result as TAP to DIR/host.tap (and stdout):
#   host_flushes_reach_host   QEMU traced at least as many flush requests as
#                             the guest counted successful fsyncs of the main
#                             device ("# vpmem-fsyncs: N" in tap.log): a flush
#                             that succeeds without asking the host fails here
#   host_flushes_answered     every traced request got a response
#   host_fsync_error_traced   the faulty device's host fsync failed at least
#                             once (the fault shim was in effect)
#   host_dax_data_persisted   /persist.dat of the ext4 left on main.img holds
#                             what the guest wrote through its DAX mapping
#   host_blk_data_persisted   main.img at 508 MiB holds what the guest wrote
#                             through the block device
# A check whose guest side did not run is a skip. Exits 1 if any check fails.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

DIR=
PATTERN_LEN=1048576
BLK_OFFSET_MIB=508
N=0 FAILED=0

tap() {
	local verdict=$1 name=$2 why=${3:-}
	N=$((N + 1))
	case "$verdict" in
	ok) printf 'ok %d %s\n' "$N" "$name" ;;
	skip) printf 'ok %d %s # SKIP %s\n' "$N" "$name" "$why" ;;
	*) printf 'not ok %d %s\n# %s\n' "$N" "$name" "$why"; FAILED=$((FAILED + 1)) ;;
	esac
}

# guest_result NAME -> ok, fail, skip or missing, from the guest's TAP
guest_result() {
	local line
	line=$(grep -E "^(not )?ok [0-9]+ pmem\.$1( |$)" "$DIR/tap.log" 2>/dev/null | head -1)
	case "$line" in
	"") echo missing ;;
	not*) echo fail ;;
	*"# SKIP"*) echo skip ;;
	*) echo ok ;;
	esac
}

count_trace() {
	grep -c -- "$1" "$DIR/trace.log" 2>/dev/null || true
}

# yes dies of SIGPIPE once head has enough: not an error.
pattern() {
	{ yes "vpmem-$1-$(cat "$DIR/token")" || true; } | head -c "$PATTERN_LEN"
}

check_flushes() {
	local guest requests responses
	guest=$(sed -n 's/^# vpmem-fsyncs: \([0-9]*\)$/\1/p' "$DIR/tap.log" 2>/dev/null |
		awk '{s += $1} END {print s + 0}')
	requests=$(count_trace 'virtio_pmem_flush_request')
	responses=$(count_trace 'virtio_pmem_response')
	if [ "$guest" -eq 0 ]; then
		tap skip host_flushes_reach_host "the guest counted no fsync of a virtio-pmem device"
	elif [ "$requests" -ge "$guest" ]; then
		tap ok host_flushes_reach_host
	else
		tap fail host_flushes_reach_host "guest fsyncs: $guest, flush requests seen by the host: $requests"
	fi
	if [ "$requests" -eq 0 ]; then
		tap skip host_flushes_answered "no flush request traced"
	elif [ "$responses" -eq "$requests" ]; then
		tap ok host_flushes_answered
	else
		tap fail host_flushes_answered "requests: $requests, responses: $responses"
	fi
}

check_fsync_error() {
	local failed
	if [ "$(guest_result host_flush_error_reaches_guest)" != ok ]; then
		tap skip host_fsync_error_traced "guest test did not pass"
		return
	fi
	failed=$(grep -c 'virtio_pmem_flush_done fsync return=-' "$DIR/trace.log" 2>/dev/null || true)
	if [ "$failed" -gt 0 ]; then
		tap ok host_fsync_error_traced
	else
		tap fail host_fsync_error_traced "no failed host fsync traced, yet the guest saw EIO"
	fi
}

check_dax_data() {
	local got=$DIR/persist.dat
	if [ "$(guest_result dax_write_persists_virtio)" != ok ]; then
		tap skip host_dax_data_persisted "guest test did not pass"
		return
	fi
	rm -f "$got"
	debugfs -R "dump /persist.dat $got" "$DIR/main.img" >/dev/null 2>&1 || true
	if [ ! -f "$got" ]; then
		tap fail host_dax_data_persisted "no /persist.dat in the ext4 on main.img"
	elif cmp -s "$got" <(pattern dax); then
		tap ok host_dax_data_persisted
	else
		tap fail host_dax_data_persisted "/persist.dat differs from what the guest wrote"
	fi
	rm -f "$got"
}

check_blk_data() {
	if [ "$(guest_result bdev_write_persists_virtio)" != ok ]; then
		tap skip host_blk_data_persisted "guest test did not pass"
		return
	fi
	if cmp -s <(dd if="$DIR/main.img" bs=1M skip="$BLK_OFFSET_MIB" count=1 status=none) <(pattern blk); then
		tap ok host_blk_data_persisted
	else
		tap fail host_blk_data_persisted "main.img at ${BLK_OFFSET_MIB} MiB differs from what the guest wrote"
	fi
}

main() {
	case "${1:-}" in
	-h | --help) usage_from_header "$0"; exit 0 ;;
	"") die "usage: boot/check-host.sh DIR" ;;
	-*) die "unknown argument '$1' (see --help)" ;;
	esac
	DIR=$(realpath "$1")
	[ -f "$DIR/token" ] || die "$DIR: no boot of boot/run-qemu.sh here (no token file)"
	need_cmds debugfs cmp dd
	{
		echo "TAP version 13"
		echo "1..5"
		check_flushes
		check_fsync_error
		check_dax_data
		check_blk_data
	} | tee "$DIR/host.tap"
	! grep -q '^not ok' "$DIR/host.tap"
}

main "$@"
