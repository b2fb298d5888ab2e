#!/usr/bin/env bash
# The per-commit check cache is keyed by what defines each verdict: editing a
# check's declared input (cocci/run.sh, a config fragment, the subsystem
# table), a library it sources, or the sender identity of the checks that
# judge a commit as posted gives a new key, so old verdicts never come back;
# an edit outside a check's inputs keeps its key (its cache stays useful).
# Runs on a copy of the repository; needs no mirror.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
tar -C "$SERIES_TOP" --exclude=./work --exclude=./.git -cf - . | tar -C "$T" -xf -
export SERIES_SENDER="Ada Lovelace <ada@kernel.org>"

key() { SERIES_WORK=$T/work "$T/ci/check-commits.sh" --cache-key "$1"; }

# changes CHECK FILE: whether appending a comment line to FILE changes CHECK's key
changes() {
	local before after
	before=$(key "$1")
	printf '\n# edited by ci/tests/46\n' >>"$T/$2"
	after=$(key "$1")
	[ "$before" != "$after" ]
}

check "a key is a hash" grep -qxE '[0-9a-f]{12}' <<<"$(key cocci)"
check "cocci: editing cocci/run.sh gives a new key" changes cocci cocci/run.sh
check "cocci: editing one of our semantic patches gives a new key" changes cocci "cocci/$(cd "$T/cocci" && ls -- *.cocci | head -n 1)"
check "build: editing boot/modules.config gives a new key" changes build boot/modules.config
check "sparse: editing boot/guest.config gives a new key" changes sparse boot/guest.config
check "ppc64le: editing boot/ppc64le.config gives a new key" changes ppc64le boot/ppc64le.config
check "hygiene: editing ci/checks/subsystems.tsv gives a new key" changes hygiene ci/checks/subsystems.tsv
check "every check: editing ci/lib/common.sh gives a new key" changes build ci/lib/common.sh
check "every check: editing ci/lib/build.sh (kmake) gives a new key" changes cocci ci/lib/build.sh
check "checkpatch: editing ci/lib/posting.sh gives a new key" changes checkpatch ci/lib/posting.sh
check_eq "build: editing the cover letter keeps the key" "$(key build)" \
	"$(printf '\n' >>"$T/b4/cover-letter.txt" && key build)"
before=$(key checkpatch)
check_eq "build: another sender keeps the key" "$(key build)" \
	"$(SERIES_SENDER='Grace Hopper <grace@kernel.org>' key build)"
check "checkpatch: another sender gives a new key" \
	test "$(SERIES_SENDER='Grace Hopper <grace@kernel.org>' key checkpatch)" != "$before"

printf '# Inputs: no/such/file\n' >>"$T/ci/checks/sparse.sh"
rc=0
out=$(key sparse 2>&1) || rc=$?
check_eq "an input that does not exist is refused" 1 "$rc"
check "its error names the check and the input" grep -q 'ci/checks/sparse.sh.*no/such/file' <<<"$out"

finish_test_file
