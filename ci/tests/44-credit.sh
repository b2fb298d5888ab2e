#!/usr/bin/env bash
# Credit as its people gave it (ci/checks/hygiene.sh): the series carries no
# Signed-off-by, Co-developed-by, Acked-by, Reviewed-by or Tested-by of
# anyone but the sender that does not stand in the source it cites (v3, or an
# upstream commit it names), and names no upstream commit it cannot
# vouch for. Fixtures, each a commit of its own on series/v4 (the tree of
# the commit it copies) judged by the hygiene check alone, no build: the
# driver commit with the trailers v4 carried before (the sender's rewrite
# with Pankaj Gupta's Co-developed-by and Signed-off-by at an address he
# never signed it with), the same at his v3 address (v3's sign-off was on
# his own patch), a trailer key in lower case, a Co-developed-by without
# its Signed-off-by, Shivaprasad G Bhat's papr_scm patch with and without
# the upstream commit it cites (above the '---' notes), and commit
# references unknown or mis-titled. As posted: [sender: ...] and the
# driver's MAINTAINERS entry name the sender.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"
. "$(dirname "$0")/../lib/posting.sh"

make_temp_dir T
mirror_exists || { skip "${0##*/}" "needs the mirror (ci/replay.sh; 40-replay.sh makes it)"; finish_test_file; exit 0; }
PANKAJ_NOW='Pankaj Gupta <pankaj.gupta.linux@gmail.com>'
PANKAJ_V3='Pankaj Gupta <pagupta@redhat.com>'
BHAT='Shivaprasad G Bhat <sbhat@linux.ibm.com>'

# hygiene COMMIT: the hygiene check on COMMIT (against its parent): its
# status in HYGIENE_RC, its findings in OUT ("status:findings", findings one
# a line)
hygiene() {
	rm -rf "$T/out"
	HYGIENE_RC=0
	"$SERIES_TOP/ci/checks/hygiene.sh" --work "$SERIES_WORK" --commit "$1" --parent "$1^" --out "$T/out" \
		>/dev/null 2>&1 || HYGIENE_RC=$?
	OUT="$HYGIENE_RC:$(cat "$T/out/hygiene.new" 2>/dev/null || true)"
}

# fixture_commit COPY AUTHOR MESSAGE-FILE: a commit with COPY's tree on
# COPY's parent, by AUTHOR, with that message
fixture_commit() {
	(
		export_tool_committer
		GIT_AUTHOR_NAME=$(ident_name "$2") GIT_AUTHOR_EMAIL=$(ident_email "$2") \
			mgit commit-tree "$1^{tree}" -p "$1^" <"$3"
	)
}

# The series itself: nothing.
n=0
for c in $(mgit rev-list --reverse base..series/v4); do
	n=$((n + 1))
	hygiene "$c"
	check_eq "commit $n: no credit or hygiene finding" "0:" "$OUT"
done

driver=$(mgit rev-list --reverse base..series/v4 -- drivers/nvdimm/virtio_pmem.c | head -n 1)
papr=$(mgit rev-list --reverse base..series/v4 -- arch/powerpc/platforms/pseries/papr_scm.c | head -n 1)
tool=$(tool_identity)

# The driver commit as v4 carried it before: the sender's rewrite with
# Pankaj Gupta as co-developer, at his current address.
{ printf 'virtio-pmem: add the virtio pmem driver\n\nThe driver.\n\n'
  printf 'Co-developed-by: %s\nSigned-off-by: %s\n' "$PANKAJ_NOW" "$PANKAJ_NOW"; } >"$T/old"
hygiene "$(fixture_commit "$driver" "$tool" "$T/old")"
check_eq "the old trailers fail the check" 1 "$HYGIENE_RC"
check_grep "the old trailers: his Signed-off-by is named as cited nowhere" \
	"'Signed-off-by: $PANKAJ_NOW' stands in no source the commit cites" - <<<"$OUT"

{ printf 'virtio-pmem: add the virtio pmem driver\n\nThe driver.\n\n'
  printf 'Co-developed-by: %s\nReviewed-by: %s\n' "$PANKAJ_V3" "$PANKAJ_V3"; } >"$T/cdb"
hygiene "$(fixture_commit "$driver" "$tool" "$T/cdb")"
check_grep "a Co-developed-by not followed by that person's Signed-off-by is named" \
	"'Co-developed-by: $PANKAJ_V3' is not followed by that person's Signed-off-by" - <<<"$OUT"
check_grep "a Reviewed-by v3 never had is named" "'Reviewed-by: $PANKAJ_V3' stands in no source" - <<<"$OUT"

# The sender's rewrite with Co-developed-by and Signed-off-by at the address
# he did sign v3 with: v3's sign-off was on his own patch, not this one.
{ printf 'virtio-pmem: add the virtio pmem driver\n\nThe driver.\n\n'
  printf 'Co-developed-by: %s\nSigned-off-by: %s\n' "$PANKAJ_V3" "$PANKAJ_V3"; } >"$T/v3-cdb"
hygiene "$(fixture_commit "$driver" "$tool" "$T/v3-cdb")"
check_grep "his v3 sign-off on the sender's rewrite is named" \
	"'Signed-off-by: $PANKAJ_V3' is v3's statement on that person's own patch" - <<<"$OUT"
{ printf 'virtio-pmem: add the virtio pmem driver\n\nThe driver.\n\n'
  printf 'signed-off-by:%s\n' "$PANKAJ_NOW"; } >"$T/lower"
hygiene "$(fixture_commit "$driver" "$tool" "$T/lower")"
check_grep "a trailer key in lower case, without a space, is read as git reads it" \
	"'Signed-off-by: $PANKAJ_NOW' stands in no source" - <<<"$OUT"

{ printf 'virtio-pmem: add the virtio pmem driver\n\nHis v3 patch.\n\n'
  printf 'Signed-off-by: %s\n[sender: forward-ported]\n' "$PANKAJ_V3"; } >"$T/v3"
hygiene "$(fixture_commit "$driver" "$PANKAJ_V3" "$T/v3")"
check_eq "his patch with his v3 sign-off passes" "0:" "$OUT"

# Shivaprasad G Bhat's sign-off counts where the message names his commit.
{ printf 'powerpc/papr_scm: flush regions that need H_SCM_FLUSH\n\nHis code.\n\n'
  printf 'Signed-off-by: %s\n' "$BHAT"; } >"$T/bhat"
hygiene "$(fixture_commit "$papr" "$BHAT" "$T/bhat")"
check_grep "his sign-off without the upstream commit it comes from is named" \
	"'Signed-off-by: $BHAT' stands in no source the commit cites" - <<<"$OUT"
{ printf 'powerpc/papr_scm: flush regions that need H_SCM_FLUSH\n\nHis code.\n\n'
  printf 'Signed-off-by: %s\n---\nLike commit 75b7c05ebf90.\n' "$BHAT"; } >"$T/bhat-below"
hygiene "$(fixture_commit "$papr" "$BHAT" "$T/bhat-below")"
check_grep "the upstream commit named only below the --- does not count" \
	"'Signed-off-by: $BHAT' stands in no source the commit cites" - <<<"$OUT"
{ printf 'powerpc/papr_scm: flush regions that need H_SCM_FLUSH\n\nHis commit 75b7c05ebf90, adapted.\n\n'
  printf 'Signed-off-by: %s\n' "$BHAT"; } >"$T/bhat-cited"
hygiene "$(fixture_commit "$papr" "$BHAT" "$T/bhat-cited")"
check_eq "his sign-off with the upstream commit named passes" "0:" "$OUT"

# Commit references: an upstream id the mirror cannot know is checked
# against ci/checks/upstream-commits.tsv, subject included.
{ printf 'virtio-pmem: add the virtio pmem driver\n\nLike commit fefc1d97fa4b ("libnvdimm: add dax_dev\nsync flag"), and commit 0123456789ab ("dax: nothing").\n\n'; } >"$T/refs"
hygiene "$(fixture_commit "$driver" "$tool" "$T/refs")"
check_eq "a known upstream commit with its subject passes, an unknown id is named" \
	"1:commit 0123456789ab is neither in the mirror nor in ci/checks/upstream-commits.tsv" "$OUT"
{ printf 'virtio-pmem: add the virtio pmem driver\n\nLike commit fefc1d97fa4b ("dax: a sync flag").\n\n'; } >"$T/refs2"
hygiene "$(fixture_commit "$driver" "$tool" "$T/refs2")"
check_grep "an upstream commit with the wrong subject is named" \
	'commit fefc1d97fa4b is \("libnvdimm: add dax_dev sync flag"\), not \("dax: a sync flag"\)' - <<<"$OUT"

# Fixes: tags the same way (the stand-alone fix names the upstream commit
# that added DAXDEV_SYNC), and the id needs 12 digits.
fixes_fixture() {
	printf 'virtio-pmem: add the virtio pmem driver\n\nA fix.\n\nFixes: %s\n' "$1" >"$T/fixes"
	hygiene "$(fixture_commit "$driver" "$tool" "$T/fixes")"
}
fixes_fixture 'fefc1d97fa4b ("libnvdimm: add dax_dev sync flag")'
check_eq "a Fixes: tag naming a known upstream commit with its subject passes" "0:" "$OUT"
fixes_fixture 'fefc1d97fa4b ("libnvdimm: sync flag")'
check_grep "a Fixes: tag with the wrong subject is named" \
	'Fixes: fefc1d97fa4b has the subject \("libnvdimm: sync flag"\), not \("libnvdimm: add dax_dev sync flag"\)' - <<<"$OUT"
fixes_fixture 'fefc1d97 ("libnvdimm: add dax_dev sync flag")'
check_grep "a Fixes: tag with a short id is named" 'Fixes: fefc1d97 is not a commit id of 12' - <<<"$OUT"
fixes_fixture '0123456789ab ("dax: nothing")'
check_grep "a Fixes: tag naming an unknown commit is named" \
	'Fixes: 0123456789ab is neither in the mirror nor in' - <<<"$OUT"
check_eq "the stand-alone fix's Fixes: tag is known" "" \
	"$("$SERIES_TOP/ci/checks/hygiene.sh" --work "$SERIES_WORK" --commit topic/dax-flags-fix \
		--parent topic/dax-flags-fix^ --out "$T/fixout" >/dev/null 2>&1; cat "$T/fixout/hygiene.new")"

# The table's v3 statements are v3's, and every sign-off of v3 is in it.
if [ -d "$(seeds_dir)" ]; then
	check_eq "cited-signoffs.tsv's v3 rows are the sign-offs of the v3 posting" \
		"$(cat "$(seeds_dir)"/*.patch | grep -E '^(Signed-off-by|Acked-by|Reviewed-by|Tested-by): ' | sort -u)" \
		"$(awk -F'\t' '$1 == "v3" { print $2 }' "$SERIES_TOP/ci/checks/cited-signoffs.tsv" | sort -u)"
else
	skip "cited-signoffs.tsv against v3" "needs the seed series in $(seeds_dir) (SERIES_SEEDS)"
fi

# As posted, the sender's note on someone else's patch names the sender.
posted=$(posted_commit "$(fixture_commit "$driver" "$PANKAJ_V3" "$T/v3")" "$driver^" "Jane Roe <jane@kernel.org>")
check_grep "as posted, [sender: ...] names the sender" '^\[Jane Roe: forward-ported\]$' - \
	<<<"$(mgit log -1 --format=%B "$posted")"

# As posted, the driver's new MAINTAINERS entry names the sender where the
# tooling stands; nothing else of the tree changes.
posted=$(posted_commit "$driver" "$driver^" "Jane Roe <jane@kernel.org>")
check_grep "as posted, the VIRTIO PMEM DRIVER entry's maintainer is the sender" \
	'^M:	Jane Roe <jane@kernel.org>$' - <<<"$(mgit show "$posted:MAINTAINERS" | sed -n '/^VIRTIO PMEM DRIVER$/,/^$/p')"
check_eq "as posted, only MAINTAINERS differs from the commit's tree" "MAINTAINERS" \
	"$(mgit diff --name-only "$driver" "$posted")"

finish_test_file
