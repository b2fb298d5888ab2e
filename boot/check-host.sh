#!/usr/bin/env bash
# Usage: boot/check-host.sh DIR [--help]
#
# Checks, on the host, what a boot by boot/run-qemu.sh left in DIR, and
# writes the result as TAP to DIR/host.tap (and stdout):
#   host_flushes_reach_host   QEMU traced at least as many flush requests as
#                             the guest counted successful fsyncs of the main
#                             device that each need one ("# vpmem-fsyncs: N"
#                             in tap.log: fsyncs one after another; concurrent
#                             ones may share a flush): a flush that succeeds
#                             without asking the host fails here
#   host_flushes_answered     every traced request got a response, but for
#                             the guest's stray notifications ("# vpmem-stray-
#                             notifies: N"), each traced as a request QEMU
#                             never answers
#   host_flush_outstanding_max_one
#                             in trace order, +1 per request, -1 per
#                             response: never more than one outstanding
#                             (the guest's storm ran; its two devices are
#                             never flushed at the same time)
#   host_fsync_error_traced   the faulty device's host fsync failed exactly
#                             once (the fault shim was in effect, and fails
#                             the first only: a transient error)
#   host_dax_data_persisted   /persist.dat of the ext4 left on main.img holds
#                             what the guest wrote through its DAX mapping
#   host_blk_data_persisted   main.img at 508 MiB holds what the guest wrote
#                             through the block device
# and, for the debug profile's tests (boot/tests/pmem_debug.c):
#   host_soak_flushes_answered  the soak ran: more than SOAK_MIN responses,
#                             at least the guest's "# vpmem-soak-flushes: N",
#                             requests = responses + stray notifications,
#                             and QEMU logged "missing request data" (an
#                             empty queue at a notification) only for those
#   host_stray_notify_once    the NEEDS_RESET injection ran: one stray
#                             notification, one "missing request data" in
#                             qemu.log, one request never answered
#   host_flushes_after_resume the suspend test ran: boot/wake-guest.py woke
#                             the guest (DIR/wakeups.log), and after the
#                             last wake-up the trace has flush requests,
#                             each answered, and at least one per
#                             RESUME_FSYNCS_PER_REQUEST of the guest's
#                             "# vpmem-resume-fsyncs: N"
# and, for the clients profile (boot/clients/run-clients.sh):
#   host_client_flushes_answered  every request of the boot answered after
#                             a host fsync, and every fsync run of fio and
#                             the PMDK probe's persist on virtio-pmem (their
#                             spans of the trace log, DIR/guest/runs.tsv)
#                             with host fsyncs in it
#   host_fio_fsyncs_reach_host  fio's 1-job fsyncs each made a host fsync
#   host_pmdk_data_on_virtio_device  main.img holds what the PMDK probe
#                             wrote on virtio-pmem (the right device: with
#                             share=on the data reaches the file with or
#                             without a flush)
# A check whose guest side did not run is a skip. Exits 1 if any check fails.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

DIR=
PATTERN_LEN=1048576
BLK_OFFSET_MIB=508
SOAK_MIN=131072
# 64 writers share a flush at most: fewer requests means fsyncs answered
# without asking the host
RESUME_FSYNCS_PER_REQUEST=64
N=0 FAILED=0
REQUESTS=0 RESPONSES=0 STRAYS=0 MISSING=0

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

# guest_ran NAME: the guest test ran (passed or failed, not skipped)
guest_ran() {
	case "$(guest_result "$1")" in ok | fail) return 0 ;; *) return 1 ;; esac
}

# count_lines PATTERN FILE: matching lines, 0 for a missing file
count_lines() {
	local n
	n=$(grep -c -- "$1" "$2" 2>/dev/null) || true
	printf '%s\n' "${n:-0}"
}

count_trace() {
	count_lines "$1" "$DIR/trace.log"
}

# guest_sum KEY: the sum of the guest's "# KEY: N" lines, 0 if none
guest_sum() {
	sed -n "s/^# $1: \([0-9]*\)\$/\1/p" "$DIR/tap.log" 2>/dev/null |
		awk '{s += $1} END {print s + 0}'
}

count_figures() {
	REQUESTS=$(count_trace 'virtio_pmem_flush_request')
	RESPONSES=$(count_trace 'virtio_pmem_response')
	STRAYS=$(guest_sum vpmem-stray-notifies)
	MISSING=$(count_lines 'missing request data' "$DIR/qemu.log")
}

# yes dies of SIGPIPE once head has enough: not an error.
pattern() {
	{ yes "vpmem-$1-$(cat "$DIR/token")" || true; } | head -c "$PATTERN_LEN"
}

check_flushes() {
	local guest
	guest=$(guest_sum vpmem-fsyncs)
	if [ "$guest" -eq 0 ]; then
		tap skip host_flushes_reach_host "the guest counted no fsync of a virtio-pmem device"
	elif [ "$REQUESTS" -ge "$guest" ]; then
		tap ok host_flushes_reach_host
	else
		tap fail host_flushes_reach_host "guest fsyncs: $guest, flush requests seen by the host: $REQUESTS"
	fi
	if [ "$REQUESTS" -eq 0 ]; then
		tap skip host_flushes_answered "no flush request traced"
	elif [ "$((RESPONSES + STRAYS))" -eq "$REQUESTS" ]; then
		tap ok host_flushes_answered
	else
		tap fail host_flushes_answered "requests: $REQUESTS, responses: $RESPONSES, stray notifications: $STRAYS"
	fi
}

# The most requests outstanding at once, in the trace's order.
max_outstanding() {
	awk '/virtio_pmem_flush_request/ { if (++n > max) max = n }
		/virtio_pmem_response/ { if (n > 0) n-- }
		END { print max + 0 }' "$DIR/trace.log" 2>/dev/null || echo 0
}

check_outstanding() {
	local max
	if ! guest_ran flush_storm_virtio; then
		tap skip host_flush_outstanding_max_one "the guest's storm did not run"
		return
	fi
	max=$(max_outstanding)
	if [ "$STRAYS" -ne 0 ]; then
		tap fail host_flush_outstanding_max_one "stray notifications in a storm boot: the count is void"
	elif [ "$max" -le 1 ]; then
		tap ok host_flush_outstanding_max_one
	else
		tap fail host_flush_outstanding_max_one "up to $max flush requests outstanding at once"
	fi
}

check_soak() {
	local soak
	if ! guest_ran flush_soak_virtio; then
		tap skip host_soak_flushes_answered "the guest's soak did not run"
		return
	fi
	soak=$(guest_sum vpmem-soak-flushes)
	if [ "$RESPONSES" -le "$SOAK_MIN" ] || [ "$RESPONSES" -lt "$soak" ] ||
		[ "$REQUESTS" -ne "$((RESPONSES + STRAYS))" ] || [ "$MISSING" -ne "$STRAYS" ]; then
		tap fail host_soak_flushes_answered "requests: $REQUESTS, responses: $RESPONSES (more than $SOAK_MIN and the guest's $soak wanted), stray notifications: $STRAYS, \"missing request data\": $MISSING"
	else
		tap ok host_soak_flushes_answered
	fi
}

check_stray() {
	if ! guest_ran needs_reset_injected; then
		tap skip host_stray_notify_once "the guest's NEEDS_RESET injection did not run"
		return
	fi
	if [ "$STRAYS" -eq 1 ] && [ "$MISSING" -eq 1 ] && [ "$((REQUESTS - RESPONSES))" -eq 1 ]; then
		tap ok host_stray_notify_once
	else
		tap fail host_stray_notify_once "stray notifications: $STRAYS, \"missing request data\": $MISSING, unanswered requests: $((REQUESTS - RESPONSES))"
	fi
}

# flushes_after BYTES PATTERN: trace lines matching PATTERN past byte BYTES
flushes_after() {
	tail -c "+$(($1 + 1))" "$DIR/trace.log" 2>/dev/null | grep -c -- "$2" || true
}

check_resume() {
	local woken bytes req resp fsyncs
	if ! guest_ran suspend_resume_under_storm; then
		tap skip host_flushes_after_resume "the guest's suspend test did not run"
		return
	fi
	woken=$(count_lines '^woken ' "$DIR/wakeups.log")
	if [ "$woken" -eq 0 ]; then
		tap fail host_flushes_after_resume "the host never woke the guest (empty $DIR/wakeups.log)"
		return
	fi
	bytes=$(awk '/^woken / { b = $4 } END { print b + 0 }' "$DIR/wakeups.log")
	req=$(flushes_after "$bytes" virtio_pmem_flush_request)
	resp=$(flushes_after "$bytes" virtio_pmem_response)
	fsyncs=$(guest_sum vpmem-resume-fsyncs)
	if [ "$req" -gt 0 ] && [ "$req" -eq "$resp" ] &&
		[ "$((req * RESUME_FSYNCS_PER_REQUEST))" -ge "$fsyncs" ]; then
		tap ok host_flushes_after_resume
	else
		tap fail host_flushes_after_resume "after the wake-up ($woken in all): $req flush requests, $resp responses, the guest's fsyncs after resume: $fsyncs"
	fi
}

check_fsync_error() {
	local failed
	if [ "$(guest_result host_flush_error_reaches_guest)" != ok ]; then
		tap skip host_fsync_error_traced "guest test did not pass"
		return
	fi
	failed=$(count_trace 'virtio_pmem_flush_done fsync return=-')
	if [ "$failed" -eq 1 ]; then
		tap ok host_fsync_error_traced
	else
		tap fail host_fsync_error_traced "$failed failed host fsyncs traced, want 1 (the shim fails the first)"
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

# span_flushes START END: the host fsyncs QEMU traced (virtio_pmem_flush_done,
# one per fsync(2) of the backing file) in the trace log's lines START+1..END
span_flushes() {
	awk -v a="$1" -v b="$2" 'NR > a && NR <= b && /virtio_pmem_flush_done/ { d++ }
		END { print d + 0 }' "$DIR/trace.log" 2>/dev/null || echo 0
}

# The clients' runs: every request of the boot answered, each after a host
# fsync (a request QEMU pops but does not answer, or answers without an
# fsync, shows here), and every fsync run, and the PMDK probe's persist on
# virtio-pmem, with host fsyncs in its span. Spans are not judged request
# by request: a flush of the filesystem's own may straddle a span's edge.
check_client_flushes() {
	local runs=$DIR/guest/runs.tsv name start end rc d bad="" done_all
	if [ ! -s "$runs" ]; then
		tap skip host_client_flushes_answered "no clients run"
		return
	fi
	done_all=$(count_trace 'virtio_pmem_flush_done')
	[ "$REQUESTS" -eq "$RESPONSES" ] && [ "$RESPONSES" -eq "$done_all" ] ||
		bad=" the boot's requests $REQUESTS, responses $RESPONSES, host fsyncs $done_all;"
	while IFS=$'\t' read -r name start end rc; do
		case "$name" in fio-psync-* | fio-uring-* | pmdk-virtio) ;; *) continue ;; esac
		d=$(span_flushes "$start" "$end")
		[ "$rc" = 0 ] && [ "$d" -gt 0 ] || bad="$bad $name (status $rc, host fsyncs $d)"
	done <"$runs"
	if [ -z "$bad" ]; then tap ok host_client_flushes_answered; else
		tap fail host_client_flushes_answered "flushes not as they must be:$bad"; fi
}

# One job's fsyncs come one after another: each needs a host fsync of its
# own (fio's count from its JSON, the host's from the run's span).
check_client_fsyncs() {
	local per
	if [ ! -s "$DIR/guest/fio-psync-1.json" ]; then
		tap skip host_fio_fsyncs_reach_host "fio's 1-job run did not run"
		return
	fi
	per=$("$SERIES_TOP/boot/clients/fio-figures.py" "$DIR/guest" "$DIR/trace.log" 2>&1 |
		awk -F'\t' '$1 == "host_flushes_per_fsync_1" { print $2 }')
	if awk -v x="${per:-0}" 'BEGIN { exit !(x >= 1) }'; then
		tap ok host_fio_fsyncs_reach_host
	else
		tap fail host_fio_fsyncs_reach_host "host fsyncs per fsync of fio's 1-job run: ${per:-none}, want >= 1"
	fi
}

check_pmdk_data() {
	if [ "$(guest_result pmdk_is_pmem_virtio)" = missing ]; then
		tap skip host_pmdk_data_on_virtio_device "the PMDK probe did not run"
	elif grep -a -q -F "vpmem-pmdk-$(cat "$DIR/token")" "$DIR/main.img" 2>/dev/null; then
		tap ok host_pmdk_data_on_virtio_device
	else
		tap fail host_pmdk_data_on_virtio_device "main.img does not hold what the PMDK probe wrote"
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
		echo "1..12"
		count_figures
		check_flushes
		check_fsync_error
		check_dax_data
		check_blk_data
		check_outstanding
		check_soak
		check_stray
		check_resume
		check_client_flushes
		check_client_fsyncs
		check_pmdk_data
	} | tee "$DIR/host.tap"
	! grep -q '^not ok' "$DIR/host.tap"
}

main "$@"
