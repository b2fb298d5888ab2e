#!/usr/bin/env bash
# Usage: ci/replay.sh [--work DIR] [--topics FILE] [--onto TAG] [--help]
#
# Replays the series onto the newest import in the mirror (base/import.sh):
#   base         the import plus base/unmerge.patch
#   topic/NAME   each topic of topic-branches.txt on its parent
#   series/v4    every patch of the topics on base, in topic-file order, on
#                base (bisect and b4)
# A topic whose parent is "import" is a stand-alone fix for the pristine
# import (the kernels people run): it is not part of series/v4.
# Topic commits carry the messages as 'git am' leaves them; series/v4 keeps
# each patch's notes under '---', which b4 mails with the patch.
#
#   --topics FILE  another topic list (default: topic-branches.txt)
#   --onto TAG     an import tag other than the newest
#   --unmerge FILE another unmerge patch (default: base/unmerge.patch)
#
# Commits are built in a temporary index, never in a work tree, and all refs
# move in one transaction at the end: a patch that does not apply stops the
# run with the topic, the patch and the failing hunk named, and nothing moves.
# The same patches on the same import give the same commit ids.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/patches.sh"

TOPICS_FILE=$SERIES_TOP/topic-branches.txt
ONTO=
UNMERGE_PATCH=$SERIES_TOP/base/unmerge.patch
SERIES_BRANCH=series/v4

declare -a TOPIC_NAMES=()
declare -A TOPIC_PARENT=() TOPIC_PATCHES=() TOPIC_LINE=()
declare -A NEW_REF=()

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--topics) TOPICS_FILE=$(realpath -m "${2:?--topics needs a file}"); OPT_TAKES=2 ;;
	--onto) ONTO=${2:?--onto needs a tag}; OPT_TAKES=2 ;;
	--unmerge) UNMERGE_PATCH=$(realpath -m "${2:?--unmerge needs a file}"); OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
}

# Resolve a patch path from the topic list: relative to the repository top.
patch_path() {
	case "$1" in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$SERIES_TOP" "$1" ;;
	esac
}

read_topics() {
	local n=0 line name parent patches p
	[ -r "$TOPICS_FILE" ] || die "$TOPICS_FILE: topic list not found"
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		line=${line%%#*}
		read -r name parent patches <<<"$line" || true
		[ -n "$name" ] || continue
		[ -n "$patches" ] || die "$TOPICS_FILE:$n: topic '$name' needs a parent and at least one patch"
		git check-ref-format "refs/heads/topic/$name" ||
			die "$TOPICS_FILE:$n: '$name' is not a valid branch name"
		[ -z "${TOPIC_PARENT[$name]+x}" ] || die "$TOPICS_FILE:$n: topic '$name' listed twice"
		for p in $patches; do
			[ -f "$(patch_path "$p")" ] || die "$TOPICS_FILE:$n: patch file $p of topic '$name' not found"
		done
		TOPIC_NAMES+=("$name")
		TOPIC_PARENT[$name]=$parent
		TOPIC_PATCHES[$name]=$patches
		TOPIC_LINE[$name]=$n
	done <"$TOPICS_FILE"
	[ ${#TOPIC_NAMES[@]} -gt 0 ] || die "$TOPICS_FILE: no topics"
	check_topic_graph
}

# Every parent is base or a topic, and following parents never loops.
check_topic_graph() {
	local name cur seen steps
	for name in "${TOPIC_NAMES[@]}"; do
		cur=${TOPIC_PARENT[$name]}
		[ "$cur" = base ] || [ "$cur" = import ] || [ -n "${TOPIC_PARENT[$cur]+x}" ] ||
			die "$TOPICS_FILE:${TOPIC_LINE[$name]}: topic '$name' has unknown parent '$cur'"
		seen=" $name " steps=0
		while [ "$cur" != base ] && [ "$cur" != import ]; do
			case "$seen" in *" $cur "*)
				die "$TOPICS_FILE:${TOPIC_LINE[$name]}: topic '$name' is part of a parent cycle ($seen$cur)" ;;
			esac
			seen+="$cur "
			cur=${TOPIC_PARENT[$cur]}
			steps=$((steps + 1))
		done
	done
}

check_mirror() {
	mirror_exists || die "no mirror at $(mirror_dir): run base/import.sh first"
	if [ -z "$ONTO" ]; then
		ONTO=$(newest_import_tag) || die "the mirror at $(mirror_dir) has no import: run base/import.sh"
	fi
	mgit rev-parse -q --verify "refs/tags/$ONTO^{commit}" >/dev/null ||
		die "base import '$ONTO' not found in $(mirror_dir)"
	[ -f "$UNMERGE_PATCH" ] || die "$UNMERGE_PATCH: unmerge patch not found"
}

# Refuse to move a branch that a work tree of the mirror has checked out,
# and to run while the main work tree has uncommitted changes.
check_worktrees() {
	local wt="" line branch
	while IFS= read -r line; do
		case "$line" in
		"worktree "*) wt=${line#worktree } ;;
		"branch refs/heads/"*)
			branch=${line#branch refs/heads/}
			case "$branch" in base | "$SERIES_BRANCH" | topic/*)
				die "branch $branch is checked out in $wt; check out another commit there first" ;;
			esac ;;
		esac
	done < <(mgit worktree list --porcelain)
	if mgit rev-parse -q --verify HEAD >/dev/null &&
		[ -n "$(mgit status --porcelain --untracked-files=no 2>/dev/null | head -1)" ]; then
		die "the mirror work tree $(mirror_dir) has uncommitted changes; commit or stash them first"
	fi
}

build_base() {
	local import
	import=$(mgit rev-parse "refs/tags/$ONTO^{commit}")
	NEW_REF[base]=$(commit_patch "$import" "$UNMERGE_PATCH" "base" no)
}

# topic_root NAME: base or import, where NAME's chain of parents starts
topic_root() {
	local cur=$1
	while [ "$cur" != base ] && [ "$cur" != import ]; do
		cur=${TOPIC_PARENT[$cur]}
	done
	printf '%s\n' "$cur"
}

build_topic() {
	local name=$1 parent p head
	[ -z "${NEW_REF[topic/$name]+x}" ] || return 0
	parent=${TOPIC_PARENT[$name]}
	if [ "$parent" = base ]; then
		head=${NEW_REF[base]}
	elif [ "$parent" = import ]; then
		head=$(mgit rev-parse "refs/tags/$ONTO^{commit}")
	else
		build_topic "$parent"
		head=${NEW_REF[topic/$parent]}
	fi
	for p in ${TOPIC_PATCHES[$name]}; do
		head=$(commit_patch "$head" "$(patch_path "$p")" "topic $name" no)
	done
	NEW_REF[topic/$name]=$head
}

build_series() {
	local name p head=${NEW_REF[base]}
	for name in "${TOPIC_NAMES[@]}"; do
		[ "$(topic_root "$name")" = base ] || continue
		for p in ${TOPIC_PATCHES[$name]}; do
			head=$(commit_patch "$head" "$(patch_path "$p")" "$SERIES_BRANCH (topic $name)" yes)
		done
	done
	NEW_REF[$SERIES_BRANCH]=$head
}

# The topics of series/v4 that no other topic builds on
leaf_topics() {
	local name other leaf
	for name in "${TOPIC_NAMES[@]}"; do
		[ "$(topic_root "$name")" = base ] || continue
		leaf=1
		for other in "${TOPIC_NAMES[@]}"; do
			[ "${TOPIC_PARENT[$other]}" != "$name" ] || leaf=0
		done
		[ $leaf = 0 ] || printf '%s\n' "$name"
	done
}

# The leaf topics merged together must give the tree of series/v4.
check_topics_merge_to_series() {
	local leaf merged="" tree want
	[ -n "$(leaf_topics)" ] || die "$TOPICS_FILE: no topic builds on base, so series/v4 would be empty"
	for leaf in $(leaf_topics); do
		if [ -z "$merged" ]; then
			merged=${NEW_REF[topic/$leaf]}
			tree=$(mgit rev-parse "$merged^{tree}")
		else
			tree=$(mgit merge-tree --write-tree "$merged" "${NEW_REF[topic/$leaf]}") ||
				die "leaf topics do not merge cleanly (at topic $leaf)"
			merged=$(printf 'merge\n' | mgit commit-tree "$tree" -p "$merged" -p "${NEW_REF[topic/$leaf]}")
		fi
	done
	want=$(mgit rev-parse "${NEW_REF[$SERIES_BRANCH]}^{tree}")
	[ "$tree" = "$want" ] ||
		die "merging the leaf topics gives tree $tree, $SERIES_BRANCH has $want"
}

# One transaction: either every ref moves or none does.
update_refs() {
	local ref old
	{
		for ref in "${!NEW_REF[@]}"; do
			old=$(mgit rev-parse -q --verify "refs/heads/$ref" || echo 0000000000000000000000000000000000000000)
			printf 'update refs/heads/%s %s %s\n' "$ref" "${NEW_REF[$ref]}" "$old"
		done
		# Topics that are no longer listed go away with the same transaction.
		mgit for-each-ref --format='%(refname)' refs/heads/topic/ | while read -r ref; do
			[ -n "${NEW_REF[${ref#refs/heads/}]+x}" ] || printf 'delete %s\n' "$ref"
		done
	} | mgit update-ref --stdin
}

report() {
	local ref
	for ref in base "${TOPIC_NAMES[@]/#/topic/}" "$SERIES_BRANCH"; do
		printf '%-22s %s\n' "$ref" "$(mgit log -1 --format='%h %s' "${NEW_REF[$ref]}")"
	done
	note "replayed ${#TOPIC_NAMES[@]} topics onto $ONTO"
}

main() {
	parse_args "$@"
	take_work_lock
	read_topics
	check_mirror
	check_worktrees
	make_patch_tmp
	export_tool_committer
	build_base
	local name
	for name in "${TOPIC_NAMES[@]}"; do
		build_topic "$name"
	done
	build_series
	check_topics_merge_to_series
	update_refs
	report
}

main "$@"
