#!/usr/bin/env bash
# The sender identity of the posting, on a fixture mirror (two patches on a
# base holding the kernel's own checkpatch.pl and get_maintainer.pl): one
# patch by an original author with his Signed-off-by and the sender's
# bracketed note, one the tooling wrote (the sender's rewrite, crediting
# the original author in its changelog, with no trailer of his). b4/prep.sh refuses a sendable posting with no identity
# or a placeholder one and writes nothing; --draft writes mails signed by
# the tooling identity, says DRAFT, and leaves nothing enrolled for 'b4
# send'; as posted, the rewritten patch is the sender's and every patch ends
# with the sender's Signed-off-by; checkpatch is clean on the mails and on
# the commits judged as posted (ci/checks/checkpatch.sh). With a sender
# identity that this machine can vouch for (the local user at a
# fully-qualified host name), the sendable path too.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"
. "$(dirname "$0")/../lib/posting.sh"

REAL_MIRROR=$(mirror_dir)
make_temp_dir T
export SERIES_WORK=$T/work
# No identity unless a check gives one: an empty global config.
: >"$T/gitconfig"
export GIT_CONFIG_GLOBAL=$T/gitconfig GIT_CONFIG_NOSYSTEM=1
unset SERIES_SENDER
ORIGINAL="Original Author <original.author@fixture.test>"
TOOL=$(tool_identity)
KFILES=(scripts/checkpatch.pl scripts/get_maintainer.pl scripts/spelling.txt
	scripts/const_structs.checkpatch scripts/spdxcheck.py scripts/spdxcheck-test.sh LICENSES COPYING)

# The kernel files the fixture needs, from the real mirror's import, or
# from the linux-source tarball when there is no mirror yet.
kernel_files() {
	local dir=$1 rev
	mkdir -p "$dir"
	if rev=$(git -C "$REAL_MIRROR" rev-parse -q --verify 'refs/heads/import^{commit}' 2>/dev/null); then
		git -C "$REAL_MIRROR" archive "$rev" "${KFILES[@]}" | tar -x -C "$dir"
	else
		tar -xJf "/usr/src/$LINUX_SOURCE_PKG.tar.xz" -C "$T" "${KFILES[@]/#/$LINUX_SOURCE_PKG/}"
		cp -r "$T/$LINUX_SOURCE_PKG/." "$dir/"
	fi
}

# fixture_commit AUTHOR MESSAGE-FILE: commit the work tree of the fixture
fixture_commit() {
	local m
	m=$(mirror_dir)
	git -C "$m" add -A
	(
		export_tool_committer
		git -C "$m" -c user.name=x -c user.email=x@localhost commit -q \
			--author="$1" -F "$2"
	)
}

make_fixture_mirror() {
	local m
	m=$(mirror_dir)
	mkdir -p "$m"
	git -C "$m" init -q
	kernel_files "$m"
	touch "$m"/{CREDITS,Kbuild,Makefile,README}
	for d in Documentation arch include fs init ipc kernel lib drivers/fixture; do
		mkdir -p "$m/$d"
		[ "$d" = drivers/fixture ] || touch "$m/$d/.keep"
	done
	printf 'THE REST\nM:\tFixture Rest <rest@fixture.test>\nL:\tfixture-list@fixture.test\nS:\tBuried alive in reporters\nF:\t*\nF:\t*/\n' \
		>"$m/MAINTAINERS"
	cat >"$m/drivers/fixture/fixture.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* The fixture driver of the b4/prep.sh identity tests. */

int fixture_value(int x);

int fixture_value(int x)
{
	return x;
}
EOF
	printf 'base: the fixture kernel\n' >"$T/msg"
	fixture_commit "$ORIGINAL" "$T/msg"
	git -C "$m" branch -q base
	sed -i 's/return x;/return x + 1;/' "$m/drivers/fixture/fixture.c"
	printf '%s\n' "fixture: return one more than the value" "" \
		"The original author's patch, as he wrote it." "" \
		"Signed-off-by: $ORIGINAL" "[sender: one more]" "---" "Changes since v3:" "- none" >"$T/msg"
	fixture_commit "$ORIGINAL" "$T/msg"
	git -C "$m" branch -q topic/fixture-a
	sed -i 's/return x + 1;/return 2 * x + 1;/' "$m/drivers/fixture/fixture.c"
	printf '%s\n' "fixture: return twice the value plus one" "" \
		"The sender's rewrite of a patch by the original author, who is" \
		"credited here." "---" "Changes since v3:" "- rewritten" >"$T/msg"
	fixture_commit "$TOOL" "$T/msg"
	git -C "$m" branch -q topic/fixture-b
	git -C "$m" branch -q series/v4
	git -C "$m" checkout -q --detach
	printf 'fixture-a\tbase\tnone.patch\nfixture-b\tfixture-a\tnone.patch\n' >"$T/topics"
	printf 'FIXTURE DRIVER\nM:\tFixture Maintainer <maintainer@fixture.test>\nS:\tMaintained\nF:\tdrivers/fixture/\n' \
		>"$T/maintainers.local"
	printf '%s\n' "fixture: a two-patch series" "" "The fixture's cover letter." "" "@TESTED_WITH@" >"$T/cover.txt"
}

# Results of a passing run whose boots all came from the cache, written
# before the results kept an accelerator file of their own.
make_fixture_results() {
	local r=$SERIES_WORK/results/bisect-boot/20260101T000000Z
	mkdir -p "$r/points/00-base"
	printf 'point\tcommit\tsubject\tchecks\tbuild\tboot\tverdict\nbase\t0\tbase\t-\tok\tok\tok\n' >"$r/matrix.tsv"
	printf 'tcg\n' >"$r/points/00-base/accel"
	results_link "$r" passed
}

PREP=("$SERIES_TOP/b4/prep.sh" --work "$SERIES_WORK" --cover "$T/cover.txt"
	--maintainers "$T/maintainers.local" --topics "$T/topics")

# What a refused run could have written, as one listing.
written_state() {
	{
		find "$SERIES_WORK" -path "$(mirror_dir)" -prune -o -print | sort
		refs_snapshot "$(mirror_dir)"
		mgit config --local --list
	} 2>&1
}

# refused NAME PATTERN [ENV...]: b4/prep.sh (sendable) exits non-zero,
# prints PATTERN, and writes nothing
refused() {
	local name=$1 pattern=$2 before
	shift 2
	before=$(written_state)
	check_fails "$name: refused" "$pattern" env "$@" "${PREP[@]}" --out "$T/out-refused"
	check_eq "$name: nothing written" "$before" "$(written_state)"
	check "$name: no output directory" test ! -e "$T/out-refused"
}

# last_trailer MAIL: the last line above the mail's '---'
last_trailer() {
	awk '/^---$/ { print last; exit } NF { last = $0 }' "$1" 2>/dev/null || true
}

make_fixture_mirror
make_fixture_results
A=$(mgit rev-parse topic/fixture-a)
B=$(mgit rev-parse topic/fixture-b)

# 1. No identity, placeholders: refused, nothing written.
refused "no identity" "no sender identity for a sendable posting: found ' <>' \(no email address\)"
check_fails "the refusal says how to set one" "git config --global user.name .*SERIES_SENDER.*--draft" "${PREP[@]}"
refused "an example.org identity" "found 'A B <a@example.org>' \(SERIES_SENDER; the domain example.org is reserved" \
	SERIES_SENDER='A B <a@example.org>'
refused "a .example identity" "found 'Seed maintainers <maintainers@users.noreply.a-seed.example>'" \
	SERIES_SENDER='Seed maintainers <maintainers@users.noreply.a-seed.example>'
refused "a git config identity at localhost" "found 'Some One <someone@localhost>'" \
	GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0='Some One' \
	GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1=someone@localhost
refused "an identity with no name" "no name" SERIES_SENDER='<someone@kernel.org>'
check_eq "the tooling identity is a placeholder" "the domain localhost is reserved for examples and tests, not mail" \
	"$(identity_problem "$TOOL")"

# 2. --draft: the tooling signs, nothing is left enrolled.
rc=0
"${PREP[@]}" --draft --out "$T/draft" >"$T/draft.log" 2>&1 || rc=$?
check_eq "b4/prep.sh --draft writes the posting with no identity" 0 "$rc"
[ "$rc" -eq 0 ] || tail -n 15 "$T/draft.log"
check_grep "the cover letter names the accelerator of cached boots" '\(tcg\) with two virtio-pmem-pci' "$T/draft/cover-letter.txt"
check "DRAFT says it is not sendable and why" grep -q "^DRAFT: not sendable" "$T/draft/DRAFT"
check "DRAFT names the identity found" grep -qF "The sender identity found was ' <>' (no email address)" "$T/draft/DRAFT"
mails=("$T"/draft/mails/000[1-9]-*.eml "$T/no-mail" "$T/no-mail")
check_eq "two patch mails" 2 "$(find "$T/draft/mails" -name '000[1-9]-*.eml' 2>/dev/null | wc -l)"
mails=("${mails[@]:0:2}")
for m in "${mails[@]}"; do
	n=$(basename "$m")
	check "$n: sent by the tooling identity" grep -qxF "From: $TOOL" "$m"
	check_eq "$n: the tooling's Signed-off-by is the last trailer" "Signed-off-by: $TOOL" "$(last_trailer "$m")"
	out=$(cd "$(mirror_dir)" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict --no-tree -q "$m" 2>&1) &&
		pass "$n: checkpatch --strict clean" || fail "$n: checkpatch --strict clean" "$out"
done
check "the original author's patch keeps him as author (in-body From:)" grep -qxF "From: $ORIGINAL" "${mails[0]}"
check "the tooling's patch has no other author" bash -c "[ \$(grep -c '^From: ' '${mails[1]}') -eq 1 ]"
check "the tooling's patch carries no trailer of the original author" \
	bash -c "! grep -qE '^[A-Za-z-]+-by: $ORIGINAL' '${mails[1]}'"
check "the original author's patch: the sender's note names the sender" \
	grep -qxF "[$(ident_name "$TOOL"): one more]" "${mails[0]}"
check_eq "series/v4 stays as replayed" "$B" "$(mgit rev-parse series/v4)"
check "WORK/b4 is not made by a draft" test ! -e "$SERIES_WORK/b4"
check_fails "the draft's work tree is not enrolled for b4 (b4 prep --show-revision)" 'not a prep-managed branch' \
	bash -c "cd '$SERIES_WORK/b4-draft' && b4 --no-interactive --offline-mode prep --show-revision </dev/null"
mkdir -p "$T/sent"
check "'b4 send' there sends nothing" \
	bash -c "! (cd '$SERIES_WORK/b4-draft' && b4 --no-interactive --offline-mode send -o '$T/sent' </dev/null) && [ -z \"\$(ls '$T/sent')\" ]"
check "the mirror's config has no user identity" bash -c "! git -C '$(mirror_dir)' config --local user.email"

# The draft round trip: git am gives the series' tree, the authors as
# posted, the tooling's Signed-off-by last.
mgit worktree add -q --detach "$T/am" base
(cd "$T/am" && git -c user.name=T -c user.email=t@localhost am -q "$T/draft/v4.patches.mbox") >"$T/am.log" 2>&1 &&
	pass "git am applies the draft" || fail "git am applies the draft" "$(tail -n 3 "$T/am.log")"
check_eq "git am reproduces the tree of series/v4" "$(mgit rev-parse 'series/v4^{tree}')" "$(git -C "$T/am" rev-parse 'HEAD^{tree}')"
check_eq "authors as posted in a draft" "$TOOL|$ORIGINAL" "$(git -C "$T/am" log --format='%an <%ae>' base..HEAD | paste -sd'|')"
check_eq "every applied commit ends with the tooling's Signed-off-by" "Signed-off-by: $TOOL|Signed-off-by: $TOOL" \
	"$(for c in $(git -C "$T/am" rev-list base..HEAD); do git -C "$T/am" log -1 --format=%B "$c" | grep . | tail -n 1; done | paste -sd'|')"
mgit worktree remove --force "$T/am"

# 3. The commit as posted (ci/lib/posting.sh), for a sender: the rewrite
# becomes the sender's, the original author's patch stays his.
S='A B <a@example.org>'
pa=$(posted_commit "$A" base "$S")
pb=$(posted_commit "$B" "$pa" "$S")
check_eq "as posted, the tooling's commit is the sender's" "$S" "$(mgit log -1 --format='%an <%ae>' "$pb")"
check_eq "as posted, the original author's commit stays his" "$ORIGINAL" "$(mgit log -1 --format='%an <%ae>' "$pa")"
check_eq "as posted, the sender's Signed-off-by is the last trailer" "Signed-off-by: $S" \
	"$(mgit log -1 --format=%B "$pb" | sed '/^---$/,$d' | grep . | tail -n 1)"
check_eq "above the '---' notes" "---" "$(mgit log -1 --format=%B "$pb" | grep -m1 -x -- '---')"
check_eq "posting twice adds no second Signed-off-by" "$(mgit log -1 --format=%B "$pb")" \
	"$(posted_message "$pb" "$S")"
check_eq "posting is deterministic (same commit id)" "$pb" "$(posted_commit "$B" "$pa" "$S")"
check_eq "the tree is the commit's own" "$(mgit rev-parse "$B^{tree}")" "$(mgit rev-parse "$pb^{tree}")"

# 4. The checkpatch check judges the commit as posted: no "Missing
# Signed-off-by: line by nominal patch author" on the tooling's commit.
rc=0
"$SERIES_TOP/ci/checks/checkpatch.sh" --work "$SERIES_WORK" --commit "$B" --parent "$A" --out "$T/cp" >/dev/null 2>&1 || rc=$?
check_eq "ci/checks/checkpatch.sh finds nothing on the tooling's commit" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/     /' "$T/cp/checkpatch.new"

# 5. A sendable posting, with an identity this machine vouches for.
S="$(id -un) <$(id -un)@$(hostname -f 2>/dev/null || hostname)>"
why=$(identity_problem "$S")
if [ -n "$why" ]; then
	skip "a sendable posting as '$S'" "$why (no identity this machine can vouch for; the draft above covers the mails)"
else
	rc=0
	SERIES_SENDER=$S "${PREP[@]}" --out "$T/send" >"$T/send.log" 2>&1 || rc=$?
	check_eq "b4/prep.sh writes a sendable posting as $S" 0 "$rc"
	check "no DRAFT in a sendable posting" test ! -e "$T/send/DRAFT"
	mails=("$T"/send/mails/000[1-9]-*.eml "$T/no-mail" "$T/no-mail")
	mails=("${mails[@]:0:2}")
	for m in "${mails[@]}"; do
		check_eq "$(basename "$m"): the sender's Signed-off-by is the last trailer" "Signed-off-by: $S" "$(last_trailer "$m")"
		out=$(cd "$(mirror_dir)" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict --no-tree -q "$m" 2>&1) &&
			pass "$(basename "$m"): checkpatch --strict clean" || fail "$(basename "$m"): checkpatch --strict clean" "$out"
	done
	check "the original author's patch keeps him as author (in-body From:)" grep -qxF "From: $ORIGINAL" "${mails[0]}"
	check "the rewritten patch is sent as the sender's own (no in-body From:)" \
		bash -c "[ \$(grep -c '^From: ' '${mails[1]}') -eq 1 ] && grep -qxF 'From: $S' '${mails[1]}'"
	check "WORK/b4 is enrolled for b4 send" bash -c "cd '$SERIES_WORK/b4' && b4 --offline-mode prep --show-revision </dev/null"
fi

finish_test_file
