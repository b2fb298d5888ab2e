#!/usr/bin/env bash
# Usage: ci/checks/checkpatch.sh --commit C --parent P --out DIR [--work WORK]
#
# scripts/checkpatch.pl --strict on the commit as a patch (its message
# included), with the checkpatch of the commit's own tree. The patch is the
# commit as b4/prep.sh posts it (ci/lib/posting.sh): the sender's
# Signed-off-by last, and the sender as the author of a commit the tooling
# wrote; with no sender identity set, the tooling identity, as in a draft.
# Every ERROR, WARNING and CHECK is a finding: checkpatch only judges what
# the patch adds. But for UNKNOWN_COMMIT_ID: the mirror holds package
# imports, not upstream history, so no upstream id is known to it;
# ci/checks/hygiene.sh checks the commit references instead. Contract:
# ci/lib/checks.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"
. "$(dirname "$0")/../lib/posting.sh"

main() {
	parse_check_args "$@"
	local tmp posted
	make_temp_dir tmp
	# checkpatch reads its data files next to itself and at --root.
	mgit archive "$CHECK_COMMIT" scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch scripts/spdxcheck.py scripts/spdxcheck-test.sh \
		LICENSES MAINTAINERS | tar -x -C "$tmp"
	posted=$(posted_commit "$CHECK_COMMIT" "$CHECK_PARENT" "$(posting_sender)") ||
		check_error "cannot write commit $CHECK_COMMIT as posted"
	mgit format-patch -1 --stdout "$posted" >"$tmp/commit.patch"
	# Debian's python3 has the ply module spdxcheck.py needs.
	(cd "$tmp" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict --no-tree \
		--ignore UNKNOWN_COMMIT_ID --root="$tmp" --showfile --terse commit.patch) >"$CHECK_LOG" 2>&1 || true
	grep -E ': (ERROR|WARNING|CHECK):' "$CHECK_LOG" | normalize_warnings >"$CHECK_NEW" || true
	finish_check
}

main "$@"
