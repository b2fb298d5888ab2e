#!/usr/bin/env bash
# The main job a second time with nothing changed (after 50-bisect-boot.sh
# filled the work directory; it never builds cold itself): every boot comes
# from the cache and keeps what it proved, the accelerator and the QEMU
# version, in RESULTS/accelerator and RESULTS/qemu-version; the summary says
# so and counts no failure; the posting (a draft when no sender identity is
# set) names them in its cover letter; then b4/prep.sh alone finds these
# results and names the accelerator too.
# Slow: needs the results of 50-bisect-boot.sh (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"
. "$(dirname "$0")/../lib/posting.sh"

make_temp_dir T

# A passing full run must be there: its builds and boots are the cache.
needs main-job
if [ -z "$(matrix_cell "$(passed_results bisect-boot)" reference verdict)" ]; then
	fail "the passing ci/bisect-boot.sh run to take the caches from has the reference" \
		"$(passed_results bisect-boot) has no reference row: run ci/tests/50-bisect-boot.sh first (this test never builds cold)"
	finish_test_file
	exit 0
fi

qemu=$("$QEMU_BIN" --version | head -n 1 | sed 's/ *Copyright.*//')
draft=no
[ -z "$(identity_problem "$(sender_identity)")" ] || draft=yes

rc=0
"$SERIES_TOP/ci/bisect-boot.sh" --no-install --work "$SERIES_WORK" >"$T/run.log" 2>&1 || rc=$?
R=$(tail -n 1 "$T/run.log")
check_eq "the second run passes" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 30 "$T/run.log"
boots=$(grep -cE '^[^ ].* boot +ok' "$T/run.log" || true)
check_eq "every boot came from the cache" "$boots" "$(grep -cE ' boot +ok \(cached' "$T/run.log" || true)"
check "every point was booted" test "$boots" -gt 0
check "RESULTS/accelerator names what the cached boots ran on" grep -qxE '(kvm|tcg)' "$R/accelerator"
check_eq "RESULTS/qemu-version names the QEMU they ran on" "$qemu" "$(cat "$R/qemu-version" 2>/dev/null)"
check "the summary names the accelerator of cached boots" \
	grep -qE "^accelerator: (kvm|tcg) \(every boot from the cache\) +points: [0-9]+ +failed: 0 " "$T/run.log"
if [ "$draft" = yes ]; then
	check "with no sender identity the b4 stage writes a draft, and says so" \
		grep -qE ' b4 +ok \(draft: no sender identity; set git config user.name/user.email\)' "$T/run.log"
	check "the posting says DRAFT" test -f "$R/b4/DRAFT"
else
	check "with a sender identity the b4 stage writes a sendable posting" test ! -e "$R/b4/DRAFT"
fi
check "its cover letter names the accelerator" grep -qE "\((kvm|tcg)\) with two virtio-pmem-pci" "$R/b4/cover-letter.txt"
check "its cover letter names the QEMU version" grep -qF "$qemu" "$R/b4/cover-letter.txt"
check "no (unknown) in the cover letter" bash -c "! grep -q '(unknown)' '$R/b4/cover-letter.txt'"

# b4/prep.sh alone takes the newest passing results: this run's.
args=()
[ "$draft" = no ] || args=(--draft)
rc=0
"$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK" "${args[@]}" >"$T/prep.log" 2>&1 || rc=$?
O=$(tail -n 1 "$T/prep.log")
check_eq "b4/prep.sh alone succeeds after a fully cached run" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 10 "$T/prep.log"
check "its cover letter names the accelerator" grep -qE "\((kvm|tcg)\) with two virtio-pmem-pci" "$O/cover-letter.txt"
# A posting kept from an earlier run with the same matrix is reused as it
# was: it names that run (whose results are this run's), everywhere alike.
named=$(sed -n 's/.* Run \([0-9]\{8\}T[0-9]\{6\}Z\):$/\1/p' "$O/cover-letter.txt")
check "its cover letter names a run" test -n "$named"
check_eq "... a passing run whose matrix is this run's" "$(cat "$R/matrix.tsv")" \
	"$(cat "$(results_root)/bisect-boot/$named/matrix.tsv" 2>/dev/null)"
rm -rf "$O"

finish_test_file
