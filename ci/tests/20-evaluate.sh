#!/usr/bin/env bash
# boot/evaluate.sh and boot/check-host.sh on synthetic boot results: they
# must pass what is as expected and catch what is not.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T

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

# only_groups DIR fast|debug|clients: keep in DIR's TAP files only the
# results of that profile's groups ("# profile NAME:" lines; fast: every
# group of no named profile)
only_groups() {
	local dir=$1 which=$2 keep
	keep=$(awk -F'\t+' -v which="$which" '
		/^# profile [a-z]*:/ { name = $0; sub(/^# profile /, "", name); sub(/:.*/, "", name)
			sub(/^# profile [a-z]*:[ \t]*/, ""); n = split($0, g, " ")
			for (i = 1; i <= n; i++) prof[g[i]] = name; next }
		/^#/ || NF < 3 { next }
		(($2 in prof) ? prof[$2] : "fast") == which { print $1 }' "$SERIES_TOP/boot/expected.tsv")
	for f in tap.log host.tap; do
		grep -wF -f <(printf '%s\n' $keep) "$dir/$f" >"$dir/$f.tmp" || true
		mv "$dir/$f.tmp" "$dir/$f"
	done
}

COLUMNS_ALL=(base 1 2 3 4 5 6 7 8 9 reference fix)
for col in "${COLUMNS_ALL[@]}"; do
	mkdir -p "$T/$col"
	tap_for "$col" >"$T/$col/tap.log"
	host_for "$col" >"$T/$col/host.tap"
	check "results exactly as expected pass at point $col" "$SERIES_TOP/boot/evaluate.sh" "$T/$col" "$col"
done
check_eq "the header has base, nine patches, the reference and the fix" "${COLUMNS_ALL[*]}" \
	"$(grep -m1 '^# test' "$SERIES_TOP/boot/expected.tsv" | tr -s '\t' '\n' | tail -n +3 | paste -sd' ')"
check_fails "the tip's results at point 8 are caught (a virtio-pmem device before the driver)" \
	"MISMATCH virtio_pmem_probed: expected fail, got ok" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/9" 8
check_fails "point 8's results judged as final are caught" "MISMATCH xfs_map_sync_refused_virtio: expected ok, got skip" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/8" final
check "no MAP_SYNC refusal is an expected failure at any point of the series" \
	test -z "$(awk -F'\t+' '/^#/ || NF < 3 { next }
		$1 ~ /map_sync_refused/ { for (i = 3; i <= 12; i++) if ($i == "fail") print }' \
		"$SERIES_TOP/boot/expected.tsv")"
cp -r "$T/9" "$T/9-missing"
grep -v 'pmem.flush_storm_virtio' "$T/9/tap.log" >"$T/9-missing/tap.log"
check_fails "a test missing from the TAP is caught" "flush_storm_virtio: expected ok, got missing" \
	"$SERIES_TOP/boot/evaluate.sh" "$T/9-missing" 9
check_eq "the storm group shows FAIL in the matrix cell" "FAIL" \
	"$(awk -F'\t' '$1 == "storm" { print $2 }' "$T/9-missing/groups.tsv")"
"$SERIES_TOP/boot/evaluate.sh" "$T/1" 1 >/dev/null
check_eq "an expected failure shows as xfail (no device before the driver)" "xfail" \
	"$(awk -F'\t' '$1 == "probe" { print $2 }' "$T/1/groups.tsv")"
"$SERIES_TOP/boot/evaluate.sh" "$T/reference" reference >/dev/null
check_eq "the reference's sector mode on virtio-pmem is an xfail" "xfail" \
	"$(awk -F'\t' '$1 == "btt" { print $2 }' "$T/reference/groups.tsv")"
check_fails "an unknown column is refused" "no column 'nine'" "$SERIES_TOP/boot/evaluate.sh" "$T/9" nine
check_fails "an unknown profile is refused" "must be fast, debug or clients" \
	"$SERIES_TOP/boot/evaluate.sh" --profile slow "$T/9" 9

# Profiles: a fast boot is judged without the debug and clients rows, a
# debug boot by its rows alone; each writes only its own groups' cells.
for col in 9 reference; do
	cp -r "$T/$col" "$T/$col-fast"
	only_groups "$T/$col-fast" fast
	check "a fast boot without the other profiles' results passes at point $col" \
		"$SERIES_TOP/boot/evaluate.sh" "$T/$col-fast" "$col"
done

# profile_cases PROFILE "GROUP...": a PROFILE boot at point 9 and at the
# reference passes with --profile PROFILE and not when judged as a fast
# one; its cells are its groups, which the fast boot's cells leave out
profile_cases() {
	local profile=$1 groups=$2 col
	for col in 9 reference; do
		cp -r "$T/$col" "$T/$col-$profile"
		only_groups "$T/$col-$profile" "$profile"
		check "a $profile boot passes at point $col with --profile $profile" \
			"$SERIES_TOP/boot/evaluate.sh" --profile "$profile" "$T/$col-$profile" "$col"
		check_fails "a $profile boot judged as a fast one is caught at point $col" "MISMATCH" \
			"$SERIES_TOP/boot/evaluate.sh" "$T/$col-$profile" "$col"
	done
	"$SERIES_TOP/boot/evaluate.sh" --profile "$profile" "$T/9-$profile" 9 >/dev/null
	check_eq "the $profile boot's cells are its groups" "$groups" \
		"$(cut -f1 "$T/9-$profile/groups.tsv" | paste -sd' ')"
	check "the fast boot's cells leave the $profile groups out" \
		test -z "$(grep -E "^(${groups// /|})"$'\t' "$T/9-fast/groups.tsv")"
}

profile_cases debug "soak reset sleep"
sed -i 's/^ok \([0-9]*\) pmem.needs_reset_injected$/not ok \1 pmem.needs_reset_injected/' "$T/9-debug/tap.log"
check_fails "a failed NEEDS_RESET injection at the tip is caught" \
	"MISMATCH needs_reset_injected: expected ok, got fail" \
	"$SERIES_TOP/boot/evaluate.sh" --profile debug "$T/9-debug" 9

profile_cases clients "ndctl pmdk fio"
sed -i 's/^ok \([0-9]*\) pmem.pmdk_is_pmem_virtio$/not ok \1 pmem.pmdk_is_pmem_virtio/' "$T/9-clients/tap.log"
check_fails "libpmem's is_pmem on virtio-pmem failing at the tip is caught" \
	"MISMATCH pmdk_is_pmem_virtio: expected ok, got fail" \
	"$SERIES_TOP/boot/evaluate.sh" --profile clients "$T/9-clients" 9
printf 'not ok 1 pmem.ndctl_list_matches_tip\n' >"$T/reference-clients/compare.tap"
grep -v 'ndctl_list_matches_tip' "$T/reference-clients/tap.log" >"$T/reference-clients/tap.tmp"
mv "$T/reference-clients/tap.tmp" "$T/reference-clients/tap.log"
check_fails "the reference's ndctl list unlike the tip's (compare.tap) is caught" \
	"MISMATCH ndctl_list_matches_tip: expected ok, got fail" \
	"$SERIES_TOP/boot/evaluate.sh" --profile clients "$T/reference-clients" reference

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
for ret in -1 0; do
	printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_done fsync return=$ret" \
		"virtio_pmem_response flush response"
done >>"$H/trace.log"
"$SERIES_TOP/boot/check-host.sh" "$H" >/dev/null 2>&1 || true
for n in "ok 1 host_flushes_reach_host" "ok 2 host_flushes_answered" "ok 3 host_fsync_error_traced" \
	"ok 5 host_blk_data_persisted"; do
	grep -qx "$n" "$H/host.tap" && pass "check-host: $n once the host side matches" ||
		fail "check-host: $n once the host side matches" "$(tr '\n' ' ' <"$H/host.tap")"
done
# The shim fails the first host fsync only: a second failure is not the shim's.
printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_done fsync return=-1" \
	"virtio_pmem_response flush response" >>"$H/trace.log"
"$SERIES_TOP/boot/check-host.sh" "$H" >/dev/null 2>&1 || true
check_eq "a second failed host fsync fails host_fsync_error_traced" \
	"# 2 failed host fsyncs traced, want 1 (the shim fails the first)" \
	"$(grep -A1 -x 'not ok 3 host_fsync_error_traced' "$H/host.tap" | tail -n 1)"

# check-host: at most one request outstanding during the storm, in trace order.
S=$T/storm
mkdir -p "$S"
echo abc123 >"$S/token"
printf '%s\n' "ok 1 pmem.flush_storm_virtio" >"$S/tap.log"
for _ in 1 2 3; do
	printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_done fsync return=0" \
		"virtio_pmem_response flush response"
done >"$S/trace.log"
"$SERIES_TOP/boot/check-host.sh" "$S" >/dev/null 2>&1 || true
check "one request at a time passes host_flush_outstanding_max_one" \
	grep -qx "ok 6 host_flush_outstanding_max_one" "$S/host.tap"
printf '%s\n' "virtio_pmem_flush_request flush request" "virtio_pmem_flush_request flush request" \
	"virtio_pmem_response flush response" "virtio_pmem_response flush response" >>"$S/trace.log"
check_fails "two requests outstanding at once fail host_flush_outstanding_max_one" \
	"not ok 6 host_flush_outstanding_max_one" "$SERIES_TOP/boot/check-host.sh" "$S"
check_grep "the report says how many were outstanding" 'up to 2 flush requests outstanding' "$S/host.tap"
: >"$S/tap.log"
"$SERIES_TOP/boot/check-host.sh" "$S" >/dev/null 2>&1 || true
check "without the guest's storm the check is a skip" \
	grep -q '^ok 6 host_flush_outstanding_max_one # SKIP' "$S/host.tap"

# check-host: the soak and the NEEDS_RESET injection of the debug profile.
D=$T/debug
mkdir -p "$D"
echo abc123 >"$D/token"
# trace_of REQUESTS RESPONSES: a trace with that many of each, in pairs
trace_of() {
	awk -v q="$1" -v r="$2" 'BEGIN {
		for (i = 0; i < q; i++) {
			print "virtio_pmem_flush_request flush request"
			if (i < r) { print "virtio_pmem_flush_done fsync return=0"; print "virtio_pmem_response flush response" }
		} }'
}
printf '%s\n' "# vpmem-soak-flushes: 132096" "ok 2 pmem.flush_soak_virtio" \
	"# vpmem-stray-notifies: 1" "ok 3 pmem.needs_reset_injected" >"$D/tap.log"
trace_of 132101 132100 >"$D/trace.log"
echo "qemu-system-x86_64: virtio-pmem missing request data" >"$D/qemu.log"
"$SERIES_TOP/boot/check-host.sh" "$D" >/dev/null 2>&1 || true
for n in "ok 2 host_flushes_answered" "ok 7 host_soak_flushes_answered" "ok 8 host_stray_notify_once"; do
	check "check-host: $n after a clean soak and one stray notification" grep -qx "$n" "$D/host.tap"
done
# The 65,536th request notified twice: a second "missing request data".
trace_of 65538 65536 >"$D/trace.log"
printf '%s\n' "# vpmem-soak-flushes: 65535" "not ok 2 pmem.flush_soak_virtio" \
	"# vpmem-stray-notifies: 1" "ok 3 pmem.needs_reset_injected" >"$D/tap.log"
echo "qemu-system-x86_64: virtio-pmem missing request data" >>"$D/qemu.log"
check_fails "a soak broken at the 65,536th request fails host_soak_flushes_answered" \
	"not ok 7 host_soak_flushes_answered" "$SERIES_TOP/boot/check-host.sh" "$D"
check "... and host_stray_notify_once (two empty-queue notifications)" \
	grep -qx "not ok 8 host_stray_notify_once" "$D/host.tap"
check "... and host_flushes_answered (an unanswered request the guest did not inject)" \
	grep -qx "not ok 2 host_flushes_answered" "$D/host.tap"
: >"$D/qemu.log"
trace_of 132100 132100 >"$D/trace.log"
printf '%s\n' "# vpmem-soak-flushes: 132096" "ok 2 pmem.flush_soak_virtio" \
	"# vpmem-stray-notifies: 1" "ok 3 pmem.needs_reset_injected" >"$D/tap.log"
check_fails "a stray notification QEMU never saw fails host_stray_notify_once" \
	"not ok 8 host_stray_notify_once" "$SERIES_TOP/boot/check-host.sh" "$D"
printf '%s\n' "# vpmem-soak-flushes: 1000" "ok 2 pmem.flush_soak_virtio" >"$D/tap.log"
trace_of 1000 1000 >"$D/trace.log"
check_fails "a soak of fewer than two ring wraps fails host_soak_flushes_answered" \
	"not ok 7 host_soak_flushes_answered" "$SERIES_TOP/boot/check-host.sh" "$D"

# check-host: the suspend test's flushes after the host woke the guest.
W=$T/resume
mkdir -p "$W"
echo abc123 >"$W/token"
# resume_boot BEFORE AFTER FSYNCS: BEFORE flushes, the wake-up, AFTER more
resume_boot() {
	trace_of "$1" "$1" >"$W/trace.log"
	echo "woken 1 trace-bytes $(stat -c %s "$W/trace.log")" >"$W/wakeups.log"
	trace_of "$2" "$2" >>"$W/trace.log"
	printf '%s\n' "# vpmem-resume-fsyncs: $3" "ok 5 pmem.suspend_resume_under_storm" >"$W/tap.log"
}
resume_boot 50 20 640
"$SERIES_TOP/boot/check-host.sh" "$W" >/dev/null 2>&1 || true
check "check-host: host_flushes_after_resume when flushes came after the wake-up" \
	grep -qx "ok 9 host_flushes_after_resume" "$W/host.tap"
resume_boot 50 0 0
check_fails "no flush traced after the wake-up (the queue forgotten) fails host_flushes_after_resume" \
	"not ok 9 host_flushes_after_resume" "$SERIES_TOP/boot/check-host.sh" "$W"
resume_boot 50 20 1281
check_fails "fewer requests than 64 writers could share fails it" \
	"not ok 9 host_flushes_after_resume" "$SERIES_TOP/boot/check-host.sh" "$W"
resume_boot 50 20 640
: >"$W/wakeups.log"
check_fails "a guest the host never woke fails it" "the host never woke the guest" \
	"$SERIES_TOP/boot/check-host.sh" "$W"

finish_test_file
