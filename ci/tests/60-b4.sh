#!/usr/bin/env bash
# b4/prep.sh: the v4 mails apply back to the tree of series/v4 (git am and
# b4 am/shazam offline), pass checkpatch, carry the right To/Cc; topic
# branches can be pulled from the mirror served on loopback; bad input
# stops the run before anything is written. The posting is a draft
# (--draft: the tooling identity signs it; the sender's identity rules are
# ci/tests/62-b4-identity.sh's), and without --draft a placeholder identity
# is refused. Needs a passing bisect-boot results directory
# (ci/tests/50-bisect-boot.sh makes one).
# Slow: needs the results of 50-bisect-boot.sh (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"
. "$(dirname "$0")/../lib/posting.sh"

needs main-job
make_temp_dir T
DAEMON_PID=
cleanup() {
	[ -z "$DAEMON_PID" ] || kill "$DAEMON_PID" 2>/dev/null || true
	mgit worktree remove --force "$T/am" >/dev/null 2>&1 || true
}
at_exit cleanup
PREP=("$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK" --draft)
TOOL=$(tool_identity)
series_before=$(mgit rev-parse series/v4)

rc=0
"${PREP[@]}" >"$T/prep.log" 2>&1 || rc=$?
check_eq "b4/prep.sh --draft writes the posting" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 20 "$T/prep.log"
O=$(tail -n 1 "$T/prep.log")
n=$(mgit rev-list --count base..series/v4)
check_eq "one mail per patch plus the cover letter" "$((n + 1))" "$(ls "$O"/mails/*.eml | wc -l)"
cover=$(ls "$O"/mails/0000-*.eml)
check "the cover is [PATCH v4 0/$n] virtio-pmem: paravirtualized pmem with an asynchronous flush" \
	grep -q "^Subject: \[PATCH v4 0/$n\] virtio-pmem: paravirtualized pmem" "$cover"
check "the cover names the base commit" grep -q "^base-commit: $(mgit rev-parse base)" "$cover"
check_grep "the cover has the Changes since v3 list" '^Changes since v3' "$cover"
check_grep "the cover has the side-channel section" '^Page-cache side channels' "$cover"
check_grep "the cover's test figures are generated (the accelerator is named)" '\((tcg|kvm)\) with two virtio-pmem-pci' "$cover"
check "no placeholder is left in the cover" bash -c "! grep -q '@TESTED_WITH@\|EDITME' '$cover'"
check_grep "the draft says it is not sendable" '^DRAFT: not sendable' "$O/DRAFT"
check_eq "series/v4 stays as replayed" "$series_before" "$(mgit rev-parse series/v4)"
for m in "$O"/mails/0*.eml; do
	name=$(basename "$m")
	[[ $name != 0000-* ]] || continue
	check_eq "$name: the sender's (tooling's) Signed-off-by is the last trailer" "Signed-off-by: $TOOL" \
		"$(awk '/^---$/ { print last; exit } NF { last = $0 }' "$m")"
	check_grep "$name: changelog under ---" '^Changes since v3' "$m"
	# the b4 tree has no upstream history: the commit ids the patches cite
	# are checked by ci/checks/hygiene.sh against upstream-commits.tsv
	out=$(cd "$SERIES_WORK/b4-draft" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict --no-tree \
		--ignore UNKNOWN_COMMIT_ID -q "$m" 2>&1) &&
		pass "$name: checkpatch --strict clean" || fail "$name: checkpatch --strict clean" "$out"
done

# To and Cc: what get_maintainer.pl gives for the series, and the people the
# patches' own trailers name (b4 Cc's them on the whole thread), from the
# cover's headers only.
want=$({ grep -oE '[^<, ]+@[^>, ]+' "$O/maintainers.txt"
	cat "$O"/mails/0[0-9][0-9][1-9]-*.eml | sed -n 's/^\(Cc\|Signed-off-by\): //p' | grep -oE '[^<, ]+@[^>, ]+'; } | sort -u)
got=$(sed '/^$/q' "$cover" | sed -n '/^To:/,/^[A-Z][a-z-]*: /p;/^Cc:/,/^[A-Z][a-z-]*: /p' | grep -v '^Subject:\|^Message\|^Date:\|^From:' |
	grep -oE '[^<, ]+@[^>, ]+' | grep -vxF "$(ident_email "$TOOL")" | sort -u)
want=$(grep -vxF "$(ident_email "$TOOL")" <<<"$want")
check_eq "the cover's To/Cc are get_maintainer's addresses" "$want" "$got"
check "in a draft the new driver has no maintainer to address (the sender stands there when posting for real)" \
	bash -c "! grep -q 'series-tooling@localhost' '$O/maintainers.txt'"
check_eq "Pankaj Gupta is Cc'd at his current address on the patches based on his v3 (1-3, 7, 8, 9)" \
	"0001 0002 0003 0007 0008 0009" \
	"$(grep -lx 'Cc: Pankaj Gupta <pankaj.gupta.linux@gmail.com>' "$O"/mails/0*.eml | xargs -n1 basename | cut -c1-4 | xargs)"
check_eq "his v3 address signs only the patches kept as his (7, 8)" "0007 0008" \
	"$(grep -l '^Signed-off-by: Pankaj Gupta <pagupta@redhat.com>' "$O"/mails/0*.eml | xargs -n1 basename | cut -c1-4 | xargs)"

# Round trip: git am onto base reproduces series/v4's tree.
mgit worktree add -q --detach "$T/am" base
(cd "$T/am" && git -c user.name=T -c user.email=t@example.org am -q "$O/v4.patches.mbox") >"$T/am.log" 2>&1 &&
	pass "git am applies the patches mbox onto base" || fail "git am applies the patches mbox onto base" "$(tail -n 3 "$T/am.log")"
check_eq "git am reproduces the tree of series/v4" "$(mgit rev-parse 'series/v4^{tree}')" \
	"$(git -C "$T/am" rev-parse 'HEAD^{tree}')"
check_eq "authors and subjects survive the round trip (as posted: b4/draft)" \
	"$(mgit log --format='%an <%ae> %s' base..b4/draft)" \
	"$(git -C "$T/am" log --format='%an <%ae> %s' base..HEAD)"
trailer_lines() {
	grep -E '^(Signed-off-by|Co-developed-by|Reviewed-by|Acked-by|Tested-by|Fixes|Link): |^\[' || true
}
check_eq "trailers survive the round trip (as posted: b4/draft)" \
	"$(mgit log --format=%B base..b4/draft | trailer_lines)" \
	"$(git -C "$T/am" log --format=%B base..HEAD | trailer_lines)"
check_eq "as posted, every commit is series/v4's plus the sender's Signed-off-by" \
	"$(for c in $(mgit rev-list base..series/v4); do posted_message "$c" "$TOOL"; done)" \
	"$(for c in $(mgit rev-list base..b4/draft); do mgit cat-file commit "$c" | sed '1,/^$/d'; done)"
check "the changelogs stay out of the applied commits" \
	bash -c "! git -C '$T/am' log --format=%B base..HEAD | grep -q '^Changes since v3:'"

# b4 am and shazam, offline, on the local mbox.
mkdir -p "$T/b4am"
(cd "$T/am" && b4 -n --no-stdin --offline-mode am -m "$O/v4.mbox" -o "$T/b4am") >"$T/b4am.log" 2>&1 &&
	pass "b4 am reads the mbox offline" || fail "b4 am reads the mbox offline" "$(tail -n 3 "$T/b4am.log")"
git -C "$T/am" checkout -q --detach base
(cd "$T/am" && GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@localhost GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@localhost \
	b4 -n --no-stdin --offline-mode shazam -m "$O/v4.mbox") >"$T/shazam.log" 2>&1 &&
	pass "b4 shazam applies the mbox offline" || fail "b4 shazam applies the mbox offline" "$(tail -n 3 "$T/shazam.log")"
check_eq "b4 shazam reproduces the tree of series/v4" "$(mgit rev-parse 'series/v4^{tree}')" \
	"$(git -C "$T/am" rev-parse 'HEAD^{tree}')"

# A maintainer pulls the ext4 topic from the mirror served on loopback.
for f in "$O"/pull/*.txt; do
	check "$(basename "$f"): a request-pull text" grep -q 'are available in the Git repository at' "$f"
done
port=$((20000 + RANDOM % 20000))
git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --export-all \
	--base-path="$SERIES_WORK" "$SERIES_WORK" >"$T/daemon.log" 2>&1 &
DAEMON_PID=$!
sleep 1
git clone -q --bare --shared --single-branch -b base "$(mirror_dir)" "$T/maintainer.git"
# The topic with the ext4 patch (topic-branches.txt), and what it holds.
ext4_topic=topic/$(sed 's/#.*//' "$SERIES_TOP/topic-branches.txt" | awk '/ext4/ { print $1; exit }')
git -C "$T/maintainer.git" fetch -q "git://127.0.0.1:$port/linux" "$ext4_topic" >"$T/fetch.log" 2>&1 &&
	pass "a maintainer fetches $ext4_topic over git://127.0.0.1" ||
	fail "a maintainer fetches $ext4_topic over git://127.0.0.1" "$(cat "$T/fetch.log")"
check_eq "the pull brings exactly the ext4 topic and its parents" \
	"$(mgit log --reverse --format=%s "base..$ext4_topic" | paste -sd'|')" \
	"$(git -C "$T/maintainer.git" log --reverse --format=%s base..FETCH_HEAD 2>/dev/null | paste -sd'|')"
check "the ext4 topic holds the ext4 patch" \
	grep -q '^ext4: ' <<<"$(git -C "$T/maintainer.git" log --format=%s base..FETCH_HEAD 2>/dev/null)"

# The stand-alone fix for the pristine import, posted on its own: one
# [PATCH] mail whose notes hold the reference's and the fix's rows, with
# To/Cc from the import's MAINTAINERS and its Cc: stable; it applies to
# the import with git am and gives the fix's topic.
fix=$(topics_on_import | head -n 1)
rc=0
"${PREP[@]}" --fix "$fix" --out "$T/fix" >"$T/fix.log" 2>&1 || rc=$?
check_eq "b4/prep.sh --fix $fix writes its posting" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 20 "$T/fix.log"
check_eq "the fix is one mail" 1 "$(ls "$T/fix/mails"/*.eml 2>/dev/null | wc -l)"
fixmail=$(ls "$T/fix/mails"/*.eml | head -n 1)
check "it is a [PATCH] of its own, not v4" grep -q "^Subject: \[PATCH\] $(mgit log -1 --format=%s "topic/$fix")" "$fixmail"
check_grep "it names the commit it fixes" '^Fixes: [0-9a-f]{12} \(".*"\)$' "$fixmail"
check_grep "stable is Cc'd" '^Cc:.*stable@vger\.kernel\.org|^ +.*stable@vger\.kernel\.org' "$fixmail"
check_grep "the DAX maintainers' list is addressed" '^(To|Cc|  ).*nvdimm@lists\.linux\.dev' "$fixmail"
check_grep "its notes show where it differs from the reference" 'they differ in: recycle\.' "$fixmail"
check "its notes are under ---" awk '/^---$/ { cut = 1 } cut && /they differ in/ { found = 1 } END { exit !found }' "$fixmail"
rm -rf "$T/fixam"
mgit worktree add -q --detach "$T/fixam" "$(newest_import_tag)" >/dev/null 2>&1
(cd "$T/fixam" && git am -q "$T/fix/$fix.mbox") >"$T/fixam.log" 2>&1 &&
	pass "the fix's mbox applies to the import with git am" ||
	fail "the fix's mbox applies to the import with git am" "$(tail -n 3 "$T/fixam.log")"
check_eq "... and gives the tree of topic/$fix" "$(mgit rev-parse "topic/$fix^{tree}")" \
	"$(git -C "$T/fixam" rev-parse 'HEAD^{tree}' 2>/dev/null)"
mgit worktree remove --force "$T/fixam" >/dev/null 2>&1 || true
check_fails "--fix with a topic not on the import is refused" "has no topic 'virtio-pmem' on import" \
	"${PREP[@]}" --fix virtio-pmem

# Bad input: a clear message, and nothing written.
b4_outputs() {
	find "$(results_root)/b4" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l
}
before=$(b4_outputs)
: >"$T/empty.txt"
check_fails "an empty cover letter is refused" "is empty" "${PREP[@]}" --cover "$T/empty.txt"
check_fails "a missing cover letter is refused" "not found" "${PREP[@]}" --cover "$T/none.txt"
mgit branch -f fixture/elsewhere "$(newest_import_tag)"
check_fails "a series that does not start at base is refused" "does not start at base" \
	"${PREP[@]}" --series fixture/elsewhere
mgit branch -D fixture/elsewhere >/dev/null
{ cat "$SERIES_TOP/MAINTAINERS.local"; printf '\nNOWHERE\nM:\tX <x@example.org>\nF:\tdrivers/nowhere/\n'; } >"$T/maint"
check_fails "a MAINTAINERS.local entry matching no file is refused" "NOWHERE.*matches no file" \
	"${PREP[@]}" --maintainers "$T/maint"
if [ -n "$(identity_problem "$(sender_identity)")" ]; then
	check_fails "without --draft, this machine's placeholder identity is refused" "no sender identity for a sendable posting" \
		"$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK"
fi
check_eq "the refused runs wrote no output" "$before" "$(b4_outputs)"

# A re-run with nothing changed takes the kept posting; once the b4 branch
# moved (a user's edit there), it writes the posting afresh.
mails_sum() {
	sed '/^Date: /d' "$1"/mails/*.eml | sha256sum
}
"${PREP[@]}" >"$T/again.log" 2>&1
check_grep "a re-run with nothing changed reuses the kept posting" '^prep.sh: reused the posting' "$T/again.log"
check_eq "the reused posting has the same mails" "$(mails_sum "$O")" "$(mails_sum "$(tail -n 1 "$T/again.log")")"
git -C "$SERIES_WORK/b4-draft" checkout -q -f -B b4/draft base
"${PREP[@]}" >"$T/moved.log" 2>&1
check_grep "after the b4 branch moved, the posting is written afresh" '^prep.sh: wrote [0-9]* mails' "$T/moved.log"
check_eq "as posted again: series/v4 with the sender's Signed-off-by" \
	"$(for c in $(mgit rev-list base..series/v4); do posted_message "$c" "$TOOL"; done)" \
	"$(for c in $(mgit rev-list base..b4/draft); do mgit cat-file commit "$c" | sed '1,/^$/d'; done)"

finish_test_file
