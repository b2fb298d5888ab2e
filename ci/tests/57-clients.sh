#!/usr/bin/env bash
# The real clients (the clients profile: Debian's ndctl, daxctl, pmempool,
# PMDK and fio in the guest from the host's root over virtio-9p) on the
# main job's tip and reference boots (50-bisect-boot.sh ran them), and each
# client's check failing when its property is broken:
#   ndctl  a region that differs from the reference's is named, unless
#          boot/clients/ndctl-differences.tsv says the series means it;
#   fio    a fio run whose flushes the host did not answer fails the host
#          check (its trace log cut);
#   PMDK and fio on a real broken kernel: the tip with the flush-noop
#          fixture and the sync-region fixture (the region not marked
#          asynchronous) built and booted with the clients profile: libpmem
#          says is_pmem=1 and libpmem2 cache-line on virtio-pmem, and the
#          fsyncs of fio never reach the host.
# Slow: needs the results of 50-bisect-boot.sh; builds and boots one fixture kernel
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
needs main-job
P=$(passed_results bisect-boot)
TIP=$(find "$P/points" -maxdepth 1 -name '[0-9]*-[0-9]*' | sort | tail -n 1)/clients
REF=$(find "$P/points" -maxdepth 1 -name '*-reference')/clients

# --- the main job's clients boots
for g in ndctl pmdk fio; do
	check_eq "the tip's $g cell is ok" ok "$(matrix_cell "$P" 9 "$g")"
done
for g in pmdk fio; do
	check_eq "the reference's $g cell is ok" ok "$(matrix_cell "$P" reference "$g")"
done
check_eq "the reference's ndctl cell is an expected failure" xfail "$(matrix_cell "$P" reference ndctl)"
check_grep "... its devdax namespace on virtio-pmem accepts MAP_SYNC" \
	'^not ok [0-9]* pmem.devdax_map_sync_refused_virtio$' "$REF/tap.log"
check_grep "the tip's refuses it" '^ok [0-9]* pmem.devdax_map_sync_refused_virtio$' "$TIP/tap.log"
check_eq "the base's fio cell is - (no clients boot there)" - "$(matrix_cell "$P" base fio)"
check "ndctl listed the virtio-pmem bus on the tip" grep -q '"provider":"virtio-pmem"' "$TIP/guest/ndctl-list.json"
check "fio's own JSON came from Debian's fio" grep -q "\"fio version\" : \"fio-$(fio --version | sed 's/^fio-//')\"" \
	"$TIP/guest/fio-psync-64.json"
check_grep "libpmem said is_pmem=0 on virtio-pmem" '^is_pmem=0$' "$TIP/guest/pmdk-virtio.txt"
check_grep "libpmem said is_pmem=1 on the e820 region" '^is_pmem=1$' "$TIP/guest/pmdk-e820.txt"
check_grep "the reference's ndctl list was compared with the tip's and matched" \
	'^ok 1 pmem.ndctl_list_matches_tip$' "$REF/compare.tap"
figures=$("$SERIES_TOP/boot/clients/fio-figures.py" "$TIP/guest" "$TIP/trace.log")
per_fsync=$(awk -F'\t' '$1 == "host_flushes_per_fsync_1" { print $2 }' <<<"$figures")
check "one job's fsyncs each reached the host (trace: $per_fsync host flushes per fsync)" \
	awk -v x="${per_fsync:-0}" 'BEGIN { exit !(x >= 1) }'
check_grep "the tip's host side counted every fio run's flushes answered" \
	'^ok [0-9]* host_client_flushes_answered$' "$TIP/host.tap"
check_grep "... and a host fsync for each of one job's fsyncs" '^ok [0-9]* host_fio_fsyncs_reach_host$' "$TIP/host.tap"
check_grep "daxctl onlined the devdax memory on the region's target node" '"mode":"system-ram"' \
	"$TIP/guest/daxctl-list.json"

# --- ndctl: a region unlike the reference's is named; a meant one is not
python3 - "$TIP/guest/ndctl-list.json" "$T/changed.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for bus in doc if isinstance(doc, list) else [doc]:
    for region in bus.get("regions", []):
        if bus.get("provider") == "virtio-pmem" and region.get("size") == 512 << 20:
            region["persistence_domain"] = "memory_controller"
json.dump(doc, open(sys.argv[2], "w"))
EOF
rc=0
out=$("$SERIES_TOP/boot/clients/ndctl-compare.py" "$T/changed.json" "$TIP/guest/ndctl-list.json") || rc=$?
check_eq "ndctl-compare fails on a region whose persistence domain differs" 1 "$rc"
check "... and names the region's key" grep -q '^DIFFERENT: virtio-pmem#[0-9]/region[0-9]*\.persistence_domain' <<<"$out"
check_eq "... and that difference alone" 1 "$(grep -c '^DIFFERENT' <<<"$out")"
key=$(sed -n 's/^DIFFERENT: \([^:]*\): ours \([^,]*\), reference \(.*\)$/\1\t\2\t\3/p' <<<"$out" | head -n 1)
printf '%s\ta fixture difference\n' "$key" >"$T/meant.tsv"
check "a difference listed as meant passes" \
	"$SERIES_TOP/boot/clients/ndctl-compare.py" "$T/changed.json" "$TIP/guest/ndctl-list.json" "$T/meant.tsv"
check_fails "a file that is not ndctl's JSON is refused, named" "ndctl-compare.py: .*" \
	"$SERIES_TOP/boot/clients/ndctl-compare.py" "$SERIES_TOP/README.md" "$TIP/guest/ndctl-list.json"

# --- fio's host check: one run's host fsyncs and responses taken out of
# the trace log (lines kept, so that every run's span stays where it was);
# main.img stands in with what the PMDK probe wrote, so that only the
# flush rows can fail
mkdir -p "$T/cut"
cp -r "$TIP/." "$T/cut/"
printf 'vpmem-pmdk-%s\n' "$(cat "$TIP/token")" >"$T/cut/main.img"
check "the copy passes the host checks before the cut" "$SERIES_TOP/boot/check-host.sh" "$T/cut"
read -r start end < <(awk -F'\t' '$1 == "fio-psync-8" { print $2, $3 }' "$T/cut/guest/runs.tsv")
awk -v a="$start" -v b="$end" 'NR > a && NR <= b { sub(/virtio_pmem_(response|flush_done)/, "taken-out") } 1' \
	"$TIP/trace.log" >"$T/cut/trace.log"
rc=0
"$SERIES_TOP/boot/check-host.sh" "$T/cut" >/dev/null 2>&1 || rc=$?
check_eq "check-host fails when a fio run's flushes went unanswered" 1 "$rc"
check_grep "... and names the run" 'not ok [0-9]* host_client_flushes_answered' "$T/cut/host.tap"
check_grep "... with its counts" 'fio-psync-8 .status 0, host fsyncs 0.' "$T/cut/host.tap"
check_grep "... and the boot's unanswered requests" "the boot's requests [0-9]*, responses [0-9]*" "$T/cut/host.tap"

# --- a real broken kernel: no host flush, and a region not marked asynchronous
noop=$("$SERIES_TOP/ci/commit-patch.sh" --work "$SERIES_WORK" --onto series/v4 \
	--patch "$SERIES_TOP/boot/fixtures/flush-noop.patch" --ref refs/fixtures/flush-noop)
"$SERIES_TOP/ci/commit-patch.sh" --work "$SERIES_WORK" --onto "$noop" \
	--patch "$SERIES_TOP/boot/fixtures/sync-region.patch" --ref refs/fixtures/clients-broken >/dev/null
kernel=$("$SERIES_TOP/ci/build-kernel.sh" --work "$SERIES_WORK" --rev refs/fixtures/clients-broken \
	2>"$T/build.log") || { tail -n 5 "$T/build.log"; kernel=""; }
check "the broken fixture builds" test -n "$kernel"
if [ -n "$kernel" ]; then
	"$SERIES_TOP/boot/boot-point.sh" --work "$SERIES_WORK" --kernel "$kernel" --out "$T/broken" \
		--profile clients --timeout 600 --no-cache >"$T/boot.log" 2>&1 || true
	check_grep "the broken kernel's clients boot ran to its end" '^ok' "$T/boot.log"
	rc=0
	"$SERIES_TOP/boot/evaluate.sh" --profile clients "$T/broken" 9 >"$T/eval.log" 2>&1 || rc=$?
	check_eq "the clients profile fails on it" 1 "$rc"
	check_grep "libpmem's is_pmem=1 on virtio-pmem is caught" 'MISMATCH pmdk_is_pmem_virtio' "$T/eval.log"
	check_grep "libpmem2's cache-line granularity on virtio-pmem is caught" \
		'MISMATCH pmdk_granularity_virtio' "$T/eval.log"
	check_grep "fio's fsyncs that never reach the host are caught" \
		'MISMATCH host_client_flushes_answered' "$T/eval.log"
	check_grep "the healthy e820 region is not blamed" $'^pmdk_is_pmem_e820\tpmdk\tok\tok\tmatch' "$T/broken/details.tsv"
fi

finish_test_file
