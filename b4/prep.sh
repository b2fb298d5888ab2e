#!/usr/bin/env bash
# Usage: b4/prep.sh [--work DIR] [--tested-with RESULTS] [--cover FILE]
#                   [--series BRANCH] [--maintainers FILE] [--topics FILE]
#                   [--out DIR] [--draft] [--help]
#
# Writes the v4 posting with b4, ready for 'b4 send', and what maintainers
# need to pull the topic branches. The sender is you: `git config user.name`
# and `user.email` (or SERIES_SENDER="Name <email>"); a patch whose author
# is the tooling identity (virtio-pmem series tooling, the sender's own
# rewrite) is posted with the sender as its author, and every patch ends its
# trailers with the sender's Signed-off-by (ci/lib/posting.sh). With no
# identity or a placeholder one (example.org, *.example, *.invalid, *.test,
# localhost ...) it refuses, naming what it found, and writes nothing.
# In WORK/b4, a work tree of the mirror on branch b4/v4 (series/v4 as
# posted, with b4's cover commit on base; series/v4 itself stays as the
# replay made it), it enrolls the series for 'b4 prep' afresh on every run
# with fork point base, revision 4 and the cover letter b4/cover-letter.txt,
# whose @TESTED_WITH@ is filled from a ci/bisect-boot.sh results directory
# (default: WORK/results/bisect-boot/passed, the newest that passed); To
# and Cc come from scripts/get_maintainer.pl over the mirror's MAINTAINERS
# plus MAINTAINERS.local. It writes, in the output directory (default
# WORK/results/b4/TIME, then b4/latest), printed last:
#   mails/NNNN-*.eml   the series as 'b4 send -o' writes it
#   v4.mbox            the same mails in one mbox, for b4 am / b4 shazam
#   v4.patches.mbox    the patches without the cover, for git am
#   pull/TOPIC.txt     'git request-pull' of each topic against its parent
#   maintainers.txt    get_maintainer's To and Cc for the series
# Nothing is sent. Bad input (no or an empty cover letter, a series that does
# not start at base, a MAINTAINERS.local entry that matches no file) stops it
# before anything is written.
#
#   --draft        a posting for review and tests, without a sender: the
#                  tooling identity is the mails' sender and signs the
#                  patches, DRAFT in the output says why it is not sendable,
#                  and the b4 work tree (WORK/b4-draft) is left unenrolled,
#                  so 'b4 send' refuses there; WORK/b4 is not touched
#   --topics FILE  the topic list for the pull requests (topic-branches.txt)
#   --fix TOPIC    the posting of a stand-alone fix instead: topic/TOPIC, a
#                  topic on "import" in the topic list, on the pristine
#                  import, as its own [PATCH] (its notes from
#                  b4/fixes/TOPIC.txt, whose @TESTED_WITH@ becomes the
#                  matrix's reference and fix rows), To/Cc from the import's
#                  MAINTAINERS only, into WORK/b4-fix-TOPIC; it writes
#                  mails/, TOPIC.mbox, pull/TOPIC.txt and maintainers.txt
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"
. "$(dirname "$0")/../ci/lib/posting.sh"
. "$(dirname "$0")/../ci/lib/results.sh"

COVER=$SERIES_TOP/b4/cover-letter.txt
SERIES=series/v4
FORK=base
REVISION=4
MBOX=v4
FIX=
TESTED=
OUT=
B4_BRANCH=b4/v4
B4_DIR=b4
LOCAL_MAINTAINERS=$SERIES_TOP/MAINTAINERS.local
TOPICS=$SERIES_TOP/topic-branches.txt
DRAFT=no
OUT_IS_RESULT=no
SENDER=
GET_MAINTAINER=$SERIES_TOP/b4/get-maintainer.sh
GET_MAINTAINER_OPTS="--nogit --nogit-fallback --nogit-chief-penguins --norolestats"

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--tested-with) TESTED=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--cover) COVER=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--series) SERIES=${2:?}; OPT_TAKES=2 ;;
	--out) OUT=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--maintainers) LOCAL_MAINTAINERS=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--topics) TOPICS=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--draft) DRAFT=yes ;;
	--fix) FIX=${2:?--fix needs a topic}; OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -z "$FIX" ] || set_fix_posting
}

# --fix TOPIC: the topic on the import, its own notes, no local entries
set_fix_posting() {
	topics_on_import "$TOPICS" | grep -qxF -- "$FIX" ||
		die "--fix $FIX: $TOPICS has no topic '$FIX' on import"
	SERIES=topic/$FIX
	FORK=$(newest_import_tag) || die "the mirror at $(mirror_dir) has no import: run base/import.sh"
	REVISION=1
	MBOX=$FIX
	[ "$COVER" != "$SERIES_TOP/b4/cover-letter.txt" ] || COVER=$SERIES_TOP/b4/fixes/$FIX.txt
	B4_DIR=b4-fix-$FIX
	B4_BRANCH=b4/fix-$FIX
	LOCAL_MAINTAINERS=/dev/null
}

check_cover() {
	[ -f "$COVER" ] || die "cover letter $COVER not found"
	grep -q '[^[:space:]]' "$COVER" || die "cover letter $COVER is empty"
	! grep -q 'EDITME' "$COVER" || die "cover letter $COVER still says EDITME"
	[ "$(head -n 1 "$COVER")" != "" ] || die "cover letter $COVER: the first line (the subject) is empty"
}

check_series() {
	mgit rev-parse -q --verify "refs/heads/$SERIES" >/dev/null || die "branch $SERIES not found in the mirror"
	mgit rev-parse -q --verify "$FORK^{commit}" >/dev/null || die "$FORK not found in the mirror"
	[ "$(mgit merge-base "$FORK" "$SERIES")" = "$(mgit rev-parse "$FORK^{commit}")" ] ||
		die "$SERIES does not start at $FORK (merge-base is not $FORK)"
	[ "$(mgit rev-list --count --merges "$FORK..$SERIES")" -eq 0 ] || die "$SERIES has merges on $FORK"
	[ "$(mgit rev-list --count "$FORK..$SERIES")" -gt 0 ] || die "$SERIES has no commits on $FORK"
}

# Every F: pattern of MAINTAINERS.local must match a file of the series.
check_local_maintainers() {
	local pattern entry="" line
	[ -f "$LOCAL_MAINTAINERS" ] || [ "$LOCAL_MAINTAINERS" = /dev/null ] || die "$LOCAL_MAINTAINERS not found"
	while IFS= read -r line; do
		case "$line" in
		"" | "#"*) continue ;;
		F:*)
			pattern=$(sed 's/^F:[[:space:]]*//' <<<"$line")
			matches_a_file "$pattern" ||
				die "$LOCAL_MAINTAINERS: entry '$entry' has F: $pattern, which matches no file of $SERIES" ;;
		[A-Z]:*) ;;
		*) entry=$line ;;
		esac
	done <"$LOCAL_MAINTAINERS"
}

# matches_a_file PATTERN: a file, a directory (ending in /) or a glob;
# only the files under its literal directory are listed.
matches_a_file() {
	local pattern=$1 dir f files
	dir=${pattern%%[*?]*}
	[[ $dir == */* ]] && dir=${dir%/*} || dir=
	# listed whole first: a loop that stops at the first match would leave
	# git writing into a closed pipe
	files=$(mgit ls-tree -r --name-only "$SERIES" ${dir:+-- "$dir"})
	while IFS= read -r f; do
		case "$pattern" in
		*/) [[ $f == "$pattern"* ]] && return 0 ;;
		*)
			# shellcheck disable=SC2053 # the pattern is a glob on purpose
			[[ $f == $pattern ]] && return 0 ;;
		esac
	done <<<"$files"
	return 1
}

# The accelerator the boots of a results directory ran on: its
# accelerator file, or (results of a run whose boots all came from the
# cache, before it wrote one) its points' own.
results_accelerator() {
	local used
	used=$(cat "$1/accelerator" 2>/dev/null ||
		cat "$1"/points/*/accel 2>/dev/null | sort -u | paste -sd/ || true)
	[ -n "$used" ] || return 1
	printf '%s\n' "$used"
}

# The QEMU those boots ran on; results from before it was recorded name the
# QEMU installed now.
results_qemu_version() {
	local used
	used=$(cat "$1/qemu-version" 2>/dev/null ||
		cat "$1"/points/*/qemu-version 2>/dev/null | sort -u | paste -sd/ || true)
	[ -n "$used" ] || used=$("$QEMU_BIN" --version | head -n 1 | sed 's/ *Copyright.*//')
	printf '%s\n' "$used"
}

# matrix_table DIR WIDTH [ROW...]: DIR/matrix.tsv for a mail, indented,
# without the commit and subject columns, the point named in WIDTH
# columns: the header and every row, or the rows named
matrix_table() {
	local dir=$1 width=$2
	shift 2
	awk -F'\t' -v w="$width" -v rows="$*" '
		BEGIN { n = split(rows, r, " "); for (i = 1; i <= n; i++) want[r[i]] = 1 }
		NR == 1 || !n || ($1 in want) { printf "  %s", sprintf("%-" w "s", $1)
			for (i = 4; i <= NF; i++) printf " %-7s", $i; print "" }' "$dir/matrix.tsv"
}

# The "how it was tested" section, from a bisect-boot results directory.
tested_with_text() {
	local dir=$1 accel qemu when
	[ -f "$dir/matrix.tsv" ] || die "$dir has no matrix.tsv: run ci/bisect-boot.sh first"
	matrix_passed "$dir" || die "$dir/matrix.tsv has failures: the series is not tested good"
	accel=$(results_accelerator "$dir") || die "$dir names no accelerator: none of its points booted"
	qemu=$(results_qemu_version "$dir")
	when=$(basename "$dir")
	cat <<EOF
How it was tested
-----------------
Every bisect point (the base without the feature, each patch) and the
pristine packaged kernel as a reference were built (tinyconfig plus
virtio-pci, libnvdimm, BTT, pmem, virtio-pmem, FS_DAX, ext4, xfs, NUMA,
DEBUG_LIST, DEBUG_ATOMIC_SLEEP, PROVE_LOCKING) and booted in $qemu
($accel) with two virtio-pmem-pci devices, one whose first host fsync
fails, and an e820 pmem region (memmap=) as the synchronous control.
In-guest kselftest-style tests check DAX mounts, MAP_SYNC (refused on
virtio-pmem, allowed on e820), the region's NUMA node, sector mode (BTT)
refused, persistence in the host file, that every guest fsync reaches
the host and that at most one flush request is ever outstanding (QEMU
trace), EIO on the failed host fsync and on the flush after it, a
64-writer flush storm, unbind/rebind, MAP_SYNC after every step of
seeded orders of namespace disables and enables and of dm-linear
devices created and removed over them, and a clean kernel log.
The last patch and the reference were booted once more with slab
poisoning (slub_debug=FZP): more than 131,072 flushes (past the ring's
16-bit counters) and a device that asks for a reset (NEEDS_RESET set from
the host). Each commit also passed W=1 builds (built-in and modular,
papr_scm cross-built for ppc64le), sparse, coccinelle and checkpatch
--strict with no new finding. Run $when:

$(matrix_table "$dir" 9)

(xfail: fails as expected: the reference puts a virtio-pmem namespace in
sector mode, whose BTT then flushes in atomic context; its flush after a
failed host fsync succeeds; it offers MAP_SYNC on a virtio-pmem namespace
enabled again after an e820 one was disabled; and, when a race decides
it, its flush in flight at NEEDS_RESET waits forever: all fixed here.
dax-flags-fix: the reference with the stand-alone fix of the recycled
flag only. -: nothing to test yet, no device before the driver patch.)
EOF
}

# The notes of a stand-alone fix, from a bisect-boot results directory:
# the matrix's rows of the reference and of this fix, and the groups the
# fix ran in which they differ.
fix_tested_text() {
	local dir=$1 accel qemu differ
	[ -f "$dir/matrix.tsv" ] || die "$dir has no matrix.tsv: run ci/bisect-boot.sh first"
	matrix_passed "$dir" || die "$dir/matrix.tsv has failures: the fix is not tested good"
	[ -n "$(matrix_cell "$dir" "$FIX" verdict)" ] ||
		die "$dir/matrix.tsv has no row $FIX: run ci/bisect-boot.sh with the topic in $TOPICS"
	accel=$(results_accelerator "$dir") || die "$dir names no accelerator: none of its points booted"
	qemu=$(results_qemu_version "$dir")
	differ=$(awk -F'\t' -v fix="$FIX" 'NR == 1 { for (i = 7; i < NF; i++) name[i] = $i; next }
		$1 == "reference" { for (i = 7; i < NF; i++) r[i] = $i }
		$1 == fix { for (i = 7; i < NF; i++) f[i] = $i }
		END { for (i = 7; i < NF; i++) if (f[i] != "-" && r[i] != f[i]) printf "%s%s", (n++ ? ", " : ""), name[i] }' \
		"$dir/matrix.tsv")
	fmt -w 72 <<EOF
Tested in $qemu ($accel): the pristine import and the import with this
patch, booted with the guest tests of the virtio-pmem series (two
virtio-pmem-pci devices and an e820 pmem region). Of the groups both
ran, they differ in: ${differ:-nothing}. Run $(basename "$dir"):
EOF
	echo
	matrix_table "$dir" 13 reference "$FIX" | sed 's/ *$//'
	echo
	fmt -w 72 <<EOF
(xfail: fails as expected: the reference's other expected failures are
weaknesses of the merged driver this patch does not touch. -: not run;
the debug and clients groups run on the reference only.)
EOF
}

render_cover() {
	local out=$1 section=$2
	awk -v f="$section" '$0 == "@TESTED_WITH@" { while ((getline l < f) > 0) print l; next } { print }' \
		"$COVER" >"$out"
}

# get_maintainer over the mirror's MAINTAINERS and ours, as one directory,
# with the sender where the tooling identity stands (the maintainer of what
# the sender rewrote, known only now; in a draft, no maintainer there). It
# is named by its contents and kept: b4's To/Cc commands name it in the
# mirror's config, and b4/get-maintainer.sh's cache stays valid.
maintainers_dir() {
	local tmp dir tool
	tool=$(tool_identity)
	tmp=$(mktemp -d "$SERIES_WORK/.maintainers.XXXXXX")
	# a draft has no sender to address (b4 cannot parse the tooling's
	# localhost address as a recipient): the entry keeps its lists only
	local edit="s|$tool|$SENDER|"
	[ "$SENDER" != "$tool" ] || edit="/^M:[[:space:]]*$tool\$/d"
	mgit show "$SERIES:MAINTAINERS" | sed "$edit" >"$tmp/MAINTAINERS"
	sed "$edit" "$LOCAL_MAINTAINERS" >"$tmp/MAINTAINERS.local"
	dir=$SERIES_WORK/cache/maintainers/$(cat "$tmp"/MAINTAINERS* | sha256sum | cut -c1-16)
	if [ -d "$dir" ]; then
		rm -rf "$tmp"
	else
		mkdir -p "${dir%/*}"
		mv "$tmp" "$dir"
	fi
	printf '%s\n' "$dir"
}

# The sender, or a refusal that names the identity found and how to set
# one, before anything is written. A draft's sender is the tooling.
choose_sender() {
	local found problem
	if [ "$DRAFT" = yes ]; then
		SENDER=$(tool_identity)
		B4_DIR=$B4_DIR-draft
		B4_BRANCH=$B4_BRANCH-draft
		[ -n "$FIX" ] || B4_BRANCH=b4/draft
		return 0
	fi
	found=$(sender_identity)
	problem=$(identity_problem "$found")
	[ -n "$problem" ] || { SENDER=$found; return 0; }
	die "no sender identity for a sendable posting: found '$found'" \
		"(${SERIES_SENDER:+SERIES_SENDER; }$problem)." \
		"Set yours: git config --global user.name 'Your Name';" \
		"git config --global user.email you@your.domain (or SERIES_SENDER='Your Name <you@your.domain>')," \
		"or write a draft for review with --draft. Nothing was written."
}

# b4 sees the sender as user.name/user.email whatever the mirror's config
# says (git passes GIT_CONFIG_* on to every git b4 runs).
sender_env() {
	printf '%s\n' GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name "GIT_CONFIG_VALUE_0=$(ident_name "$SENDER")" \
		GIT_CONFIG_KEY_1=user.email "GIT_CONFIG_VALUE_1=$(ident_email "$SENDER")"
}

# The mirror's own user.name/user.email: the sender of a sendable posting
# (what a later 'b4 send' in WORK/b4 signs and sends as). A placeholder
# there was left by an older run, which also enrolled WORK/b4 with it: both
# go, so nothing is left ready to send as a placeholder.
set_mirror_identity() {
	local have old=$SERIES_WORK/b4
	if [ "$DRAFT" = no ]; then
		mgit config user.name "$(ident_name "$SENDER")"
		mgit config user.email "$(ident_email "$SENDER")"
		return 0
	fi
	have="$(mgit config --local user.name || true) <$(mgit config --local user.email || true)>"
	[ "$have" != " <>" ] && [ -n "$(identity_problem "$have")" ] || return 0
	mgit config --local --unset user.name || true
	mgit config --local --unset user.email || true
	if [ -e "$old/.git" ]; then
		git -C "$old" checkout -q -f -B b4/v4 "$SERIES"
		mgit config --remove-section branch.b4/v4 2>/dev/null || true
		note "$old was enrolled by an older run as '$have': unenrolled"
	fi
}

setup_b4_tree() {
	local wt=$SERIES_WORK/$B4_DIR mdir=$1 tip=$2
	if [ ! -e "$wt/.git" ]; then
		mgit worktree prune
		mgit worktree add -q -B "$B4_BRANCH" "$wt" "$tip" >&2
	else
		git -C "$wt" checkout -q -f -B "$B4_BRANCH" "$tip"
	fi
	# Every run enrolls the b4 branch afresh from the series as posted.
	mgit config --remove-section "branch.$B4_BRANCH" 2>/dev/null || true
	B4_TREE=$wt
	set_mirror_identity
	# b4 0.12 needs these to write mails offline without a patatt key.
	mgit config sendemail.smtpserver /bin/false
	mgit config b4.send-no-patatt-sign yes
	# The default "commit" strategy: b4 0.12 with "branch-description"
	# names the fork point's parent as base-commit. b4/v4 is ours to rewrite.
	mgit config b4.prep-cover-strategy commit
	mgit config b4.send-auto-to-cmd "$GET_MAINTAINER --mpath $mdir $GET_MAINTAINER_OPTS --nol"
	mgit config b4.send-auto-cc-cmd "$GET_MAINTAINER --mpath $mdir $GET_MAINTAINER_OPTS --nom"
	mgit config --unset core.editor 2>/dev/null || true
}

b4_in_tree() {
	local -a env
	mapfile -t env < <(sender_env)
	(cd "$B4_TREE" && env "${env[@]}" b4 --no-interactive --no-stdin --offline-mode "$@" </dev/null)
}

# A draft leaves its branch as posted, without b4's cover commit: not a
# prep-managed branch, so 'b4 send' refuses there.
unenroll_draft() {
	[ "$DRAFT" = yes ] || return 0
	git -C "$B4_TREE" checkout -q -f -B "$B4_BRANCH" "$1"
	mgit config --remove-section "branch.$B4_BRANCH" 2>/dev/null || true
}

# DRAFT in the output: why these mails cannot be sent as they are.
write_draft_note() {
	local out=$1 found problem
	[ "$DRAFT" = yes ] || return 0
	found=$(sender_identity)
	problem=$(identity_problem "$found")
	cat >"$out/DRAFT" <<EOF
DRAFT: not sendable.

The sender of these mails, the author of the patches the tooling wrote and
the last Signed-off-by of every patch are the tooling identity,
$SENDER,
not a person: b4/prep.sh ran with --draft, for review and for the tests.
The sender identity found was '$found'${problem:+ ($problem)}.
$SERIES_WORK/$B4_DIR is left unenrolled, so 'b4 send' refuses there.

To post: set your identity (git config --global user.name 'Your Name';
git config --global user.email you@your.domain, or SERIES_SENDER='Your
Name <you@your.domain>') and run b4/prep.sh without --draft; it signs every
patch with it and enrolls the series in $SERIES_WORK/b4 for 'b4 send'.
EOF
}

enroll_series() {
	b4_in_tree prep -e "$FORK" >&2
	b4_in_tree prep --force-revision "$REVISION" >&2
}

set_cover() {
	local cover=$1
	EDITOR="cp $cover" b4_in_tree prep --edit-cover >&2
	b4_in_tree prep --auto-to-cc >&2
}

# Header lines unfolded (b4 0.12's am cannot take a folded Subject from an
# mbox file) and body "From " lines quoted, as mboxrd does.
mbox_message() {
	awk 'hdr == 0 && /^$/ { if (cur != "") print cur; cur = ""; hdr = 1; print; next }
		hdr == 0 && /^[ \t]/ { sub(/^[ \t]+/, " "); cur = cur $0; next }
		hdr == 0 { if (cur != "") print cur; cur = $0; next }
		{ if ($0 ~ /^>*From /) $0 = ">" $0; print }' "$1"
}

# write_mbox OUT EML...: the mails in one mbox
write_mbox() {
	local out=$1 f
	shift
	: >"$out"
	for f in "$@"; do
		printf 'From mboxrd@z Thu Jan  1 00:00:00 1970\n' >>"$out"
		mbox_message "$f" >>"$out"
		printf '\n' >>"$out"
	done
}

write_pull_requests() {
	local dir=$1 name parent
	mkdir -p "$dir"
	while read -r name parent _; do
		[ -z "$FIX" ] || [ "$name" = "$FIX" ] || continue
		case "$parent" in
		base) ;;
		import) parent=$(newest_import_tag) ;;
		*) parent=topic/$parent ;;
		esac
		mgit request-pull "$parent" "file://$(mirror_dir)" "topic/$name" >"$dir/$name.txt" 2>&1 ||
			die "git request-pull for topic/$name failed: $(tail -n 1 "$dir/$name.txt")"
	done < <(sed 's/#.*//' "$TOPICS" | awk 'NF >= 3')
}

write_maintainers() {
	local mdir=$1 out=$2 tip=$3
	# shellcheck disable=SC2086 # a list of options
	(cd "$B4_TREE" && mgit format-patch -q --stdout "$FORK..$tip" |
		"$GET_MAINTAINER" --mpath "$mdir" $GET_MAINTAINER_OPTS) >"$out"
}

# A posting is kept by what decides its contents: the series and topics as
# posted, the cover letter (its test matrix, accelerator and QEMU; not the
# name of the run it came from), the maintainers, the sender and this
# tooling. b4 takes about 20 s to write one; a re-run with nothing changed
# takes the kept one.
posting_key() {
	local cover=$1 mdir=$2 tip=$3
	{
		printf '%s\n' "$tip" "$mdir" "$DRAFT" "$SENDER" "$(b4 --version 2>&1)"
		mgit for-each-ref --format='%(refname) %(objectname)' refs/heads/topic/ refs/heads/base
		sed 's/Run [0-9]\{8\}T[0-9]\{6\}Z:/Run (any):/' "$cover"
		cat "$0" "$SERIES_TOP"/ci/lib/{common,posting}.sh "$GET_MAINTAINER" "$TOPICS"
	} | sha256sum | cut -c1-24
}

# The b4 branch and its enrolment, as a kept posting left them.
b4_tree_state() {
	mgit rev-parse -q --verify "refs/heads/$B4_BRANCH" || true
	mgit config --get-regexp "^branch\.$B4_BRANCH\." || true
	[ -e "$SERIES_WORK/$B4_DIR/.git" ] && git -C "$SERIES_WORK/$B4_DIR" symbolic-ref -q HEAD || true
}

keep_posting() {
	local key=$1 out=$2 dir=$SERIES_WORK/cache/postings/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "$out" "$dir/out"
	b4_tree_state >"$dir/b4-tree"
}

# reuse_posting KEY: the kept posting of KEY into OUT, if the b4 tree is
# still as that posting left it.
reuse_posting() {
	local dir=$SERIES_WORK/cache/postings/$1
	[ -d "$dir/out" ] && [ "$(b4_tree_state)" = "$(cat "$dir/b4-tree" 2>/dev/null)" ] || return 1
	rm -rf "$OUT"
	cp -a "$dir/out" "$OUT"
	note "reused the posting kept for the same series, cover letter and test matrix" \
		"($(ls "$OUT/mails" | wc -l) mails; $(grep -m1 -o 'Run [0-9TZ]*' "$OUT/cover-letter.txt"))"
}

# The output directory, last; the default one is b4's latest.
print_output() {
	[ "$OUT_IS_RESULT" = no ] || results_link "$OUT" latest
	printf '%s\n' "$OUT"
}

main() {
	parse_args "$@"
	mirror_exists || die "no mirror at $(mirror_dir): run base/import.sh and ci/replay.sh"
	need_cmds b4 git-filter-repo perl
	check_cover
	check_series
	check_local_maintainers
	[ -f "$TOPICS" ] || die "topic list $TOPICS not found"
	[ -n "$TESTED" ] || TESTED=$(passed_results bisect-boot) ||
		die "no passing ci/bisect-boot.sh results ($(results_root)/bisect-boot/passed): run it first, or give --tested-with"
	choose_sender
	take_work_lock
	[ -n "$OUT" ] || { OUT=$(results_dir_name b4); OUT_IS_RESULT=yes; }
	local stage tip mail mdir key patches=()
	mkdir -p "$(dirname "$OUT")"
	make_temp_dir stage "$(dirname "$OUT")" .b4-stage
	if [ -n "$FIX" ]; then
		fix_tested_text "$TESTED" >"$stage/tested-with.txt"
	else
		tested_with_text "$TESTED" >"$stage/tested-with.txt"
	fi
	render_cover "$stage/cover.txt" "$stage/tested-with.txt"
	mdir=$(maintainers_dir)
	tip=$(posted_series "$FORK" "$SERIES" "$SENDER")
	key=$(posting_key "$stage/cover.txt" "$mdir" "$tip")
	if reuse_posting "$key"; then
		print_output
		return 0
	fi
	setup_b4_tree "$mdir" "$tip"
	enroll_series
	set_cover "$stage/cover.txt"
	mkdir -p "$stage/out/mails"
	b4_in_tree send -o "$stage/out/mails" >&2
	unenroll_draft "$tip"
	ls "$stage/out/mails"/*.eml >/dev/null 2>&1 || die "b4 send -o wrote no mail"
	write_draft_note "$stage/out"
	for mail in "$stage/out/mails"/*.eml; do
		[[ $mail == */0000-* ]] || patches+=("$mail")
	done
	write_mbox "$stage/out/$MBOX.mbox" "$stage/out/mails"/*.eml
	[ -n "$FIX" ] || write_mbox "$stage/out/$MBOX.patches.mbox" "${patches[@]}"
	write_pull_requests "$stage/out/pull"
	write_maintainers "$mdir" "$stage/out/maintainers.txt" "$tip"
	cp "$stage/cover.txt" "$stage/out/cover-letter.txt"
	keep_posting "$key" "$stage/out"
	rm -rf "$OUT"
	mv "$stage/out" "$OUT"
	note "wrote $(ls "$OUT/mails" | wc -l) mails, $MBOX.mbox and $(ls "$OUT/pull" | wc -l) pull requests" \
		"($([ "$DRAFT" = yes ] && echo "a draft: see DRAFT" || echo "sender $SENDER"))"
	print_output
}

main "$@"
