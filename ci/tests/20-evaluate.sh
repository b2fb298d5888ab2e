#!/usr/bin/env bash
# boot/evaluate.sh and boot/check-host.sh on synthetic boot results: they
# must pass what is as expected and catch what is not.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# tap_for COLUMN: a guest TAP file whose results are exactly that column
tap_for() {
	awk -F'\t+' -v col="$1" '
		/^# test/ { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		/^#/ || NF < 3 || $1 ~ /^host_/ { next }
		{ n++; r = $c
		  if (r == "ok") print "ok " n " pmem." $1
		  else if (r == "skip") print "ok " n " pmem." $1 " # SKIP no device"
		  else print "not ok " n " pmem." $1 }' "$SERIES_TOP/boot/expected.tsv"
}

host_for() {
	awk -F'\t+' -v col="$1" '
		/^# test/ { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		$1 !~ /^host_/ { next }
		{ n++; r = $c
		  if (r == "ok") print "ok " n " " $1
		  else if (r == "skip") print "ok " n " " $1 " # SKIP"
		  else print "not ok " n " " $1 }' "$SERIES_TOP/boot/expected.tsv"
}

for col in base 1 2 3 4 5 reference; do
	mkdir -p "$T/$col"
	tap_for "$col" >"$T/$col/tap.log"
	host_for "$col" >"$T/$col/host.tap"
	check "results exactly as expected pass at point $col" "$SERIES_TOP/boot/evaluate.sh" "$T/$col" "$col"
done
check_fails "the tip's results at point 2 are caught (MAP_SYNC refused too early)" \
	"MISMATCH xfs_map_sync_refused_virtio: expected fail, got ok" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/5" 2
check_fails "point 2's results judged as final are caught" "MISMATCH ext4_map_sync_refused_virtio" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/2" final
grep -v 'pmem.flush_storm_virtio' "$T/5/tap.log" >"$T/5/tap.tmp" && mv "$T/5/tap.tmp" "$T/5/tap.log"
check_fails "a test missing from the TAP is caught" "flush_storm_virtio: expected ok, got missing" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/5" 5
check_eq "the storm group shows FAIL in the matrix cell" "FAIL" \
	"$(awk -F'\t' '$1 == "storm" { print $2 }' "$T/5/groups.tsv")"
"$SERIES_TOP/boot/evaluate.sh" "$T/2" 2 >/dev/null
check_eq "an expected failure shows as xfail" "xfail" \
	"$(awk -F'\t' '$1 == "mapsync" { print $2 }' "$T/2/groups.tsv")"
check_fails "an unknown column is refused" "no column 'nine'" "$SERIES_TOP/boot/evaluate.sh" "$T/5" nine

# check-host: a guest that fsynced more than the host saw fails the check.
H=$T/host
mkdir -p "$H"
echo abc123 >"$H/token"
truncate -s 600M "$H/main.img"
printf '%s\n' "ok 11 pmem.dax_write_persists_virtio" "ok 12 pmem.bdev_write_persists_virtio" \
	"# vpmem-fsyncs: 5" "ok 14 pmem.host_flush_error_reaches_guest" >"$H/tap.log"
for _ in 1 2 3; do
	printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_done fsync return=0" \
		"virtio_pmem_response flush response"
done >"$H/trace.log"
check_fails "fewer host flushes than guest fsyncs fail host_flushes_reach_host" \
	"not ok 1 host_flushes_reach_host" "$SERIES_TOP/boot/check-host.sh" "$H"
grep -q '^not ok 3 host_fsync_error_traced' "$H/host.tap" &&
	pass "a guest EIO without a failed host fsync is caught" ||
	fail "a guest EIO without a failed host fsync is caught"
grep -q '^not ok 5 host_blk_data_persisted' "$H/host.tap" &&
	pass "a block write missing from the backing file is caught" ||
	fail "a block write missing from the backing file is caught"
{ yes "vpmem-blk-abc123" || true; } | head -c 1048576 | dd of="$H/main.img" bs=1M seek=508 conv=notrunc status=none
for _ in 1 2; do
	printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_done fsync return=-1" \
		"virtio_pmem_response flush response"
done >>"$H/trace.log"
"$SERIES_TOP/boot/check-host.sh" "$H" >/dev/null 2>&1 || true
for n in "ok 1 host_flushes_reach_host" "ok 2 host_flushes_answered" "ok 3 host_fsync_error_traced" \
	"ok 5 host_blk_data_persisted"; do
	grep -qx "$n" "$H/host.tap" && pass "check-host: $n once the host side matches" ||
		fail "check-host: $n once the host side matches" "$(tr '\n' ' ' <"$H/host.tap")"
done

finish_test_file
