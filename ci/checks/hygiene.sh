#!/usr/bin/env bash
# Usage: ci/checks/hygiene.sh --commit C --parent P --out DIR [--work WORK]
#
# What a maintainer's tools check before applying: a Signed-off-by from the
# author, credit only as its people gave it (a Co-developed-by followed by
# that person's Signed-off-by, and every Signed-off-by, Acked-by,
# Reviewed-by or Tested-by not the sender's standing in a source the series
# cites: ci/checks/cited-signoffs.tsv), every 'commit ID ("subject")' it
# names found in the mirror or in ci/checks/upstream-commits.tsv with that
# subject (the mirror has no upstream history), every Fixes: tag naming
# such a commit by 12 or more hex digits with its subject, and a
# 'subsystem: summary' subject whose prefix fits the files touched
# (ci/checks/subsystems.tsv). The commit is judged as
# b4/prep.sh posts it (ci/lib/posting.sh): a patch the tooling authored is
# the sender's, and the sender's Signed-off-by comes last; what the commit
# itself lacks still counts. Contract: ci/lib/checks.sh.
# Inputs: ci/checks/subsystems.tsv ci/checks/cited-signoffs.tsv ci/checks/upstream-commits.tsv
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"
. "$(dirname "$0")/../lib/posting.sh"

SUBSYSTEMS=$SERIES_TOP/ci/checks/subsystems.tsv
CITED=$SERIES_TOP/ci/checks/cited-signoffs.tsv
UPSTREAM=$SERIES_TOP/ci/checks/upstream-commits.tsv

finding() {
	printf '%s\n' "$*" >>"$CHECK_NEW"
	printf 'finding: %s\n' "$*" >>"$CHECK_LOG"
}

check_signoff() {
	local author
	author=$(mgit log -1 --format='%an <%ae>' "$POSTED")
	grep -qxF "Signed-off-by: $author" <<<"$MESSAGE" ||
		finding "no Signed-off-by from the author ($author)"
}

# The statements the commit may carry from people other than the sender, as
# "SOURCE<TAB>TRAILER": v3's, and those of the upstream commits its message
# names above the '---' notes.
cited_statements() {
	local src trailer
	while IFS=$'\t' read -r src trailer; do
		case "$src" in '#'* | '') continue ;; esac
		if [ "$src" = v3 ] || grep -qiE "\\b${src}[0-9a-f]*\\b" <<<"$ABOVE_FOLD"; then
			printf '%s\t%s\n' "$src" "$trailer"
		fi
	done <"$CITED"
}

# statement_problem TRAILER: why TRAILER (a statement of someone but the
# sender) may not stand here, or nothing. A v3 statement counts on that
# person's own patch only; an upstream commit's where the message names it.
statement_problem() {
	local src
	src=$(awk -F'\t' -v t="$1" '$2 == t { print $1; exit }' <<<"$CITED_HERE")
	if [ -z "$src" ]; then
		echo "stands in no source the commit cites (v3, or an upstream commit it names: ci/checks/cited-signoffs.tsv)"
	elif [ "$src" = v3 ] && [ "${1#*: }" != "$AUTHOR" ]; then
		echo "is v3's statement on that person's own patch, and this commit is $AUTHOR's"
	fi
}

# A person's Signed-off-by (and so Co-developed-by), Acked-by, Reviewed-by
# or Tested-by is that person's own statement about this code: it must be
# the sender's, or stand in the source the commit cites. Trailer keys are
# matched as git and checkpatch read them: in any case.
check_credit() {
	local line key who prev_key="" prev_who="" sender why
	sender=$(posting_sender)
	AUTHOR=$(mgit log -1 --format='%an <%ae>' "$POSTED")
	ABOVE_FOLD=$(sed '/^---$/q' <<<"$MESSAGE")
	CITED_HERE=$(cited_statements)
	while IFS= read -r line; do
		key='' who=''
		if [[ $line =~ ^([A-Za-z-]+):[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]]; then
			key=${BASH_REMATCH[1],,} who=${BASH_REMATCH[2]}
		fi
		if [ "$prev_key" = co-developed-by ] && { [ "$key" != signed-off-by ] || [ "$who" != "$prev_who" ]; }; then
			finding "'Co-developed-by: $prev_who' is not followed by that person's Signed-off-by"
		fi
		prev_key=$key prev_who=$who
		case "$key" in
		signed-off-by) line="Signed-off-by: $who" ;;
		acked-by) line="Acked-by: $who" ;;
		reviewed-by) line="Reviewed-by: $who" ;;
		tested-by) line="Tested-by: $who" ;;
		*) continue ;;
		esac
		[ "$who" != "$sender" ] || continue
		why=$(statement_problem "$line")
		[ -z "$why" ] || finding "'$line' $why"
	done < <(printf '%s\n\n' "$ABOVE_FOLD")
}

# known_subject ID: the subject of commit ID, from the mirror or, for an
# upstream commit, from upstream-commits.tsv; nothing when neither has it
known_subject() {
	if mgit cat-file -e "$1^{commit}" 2>/dev/null; then
		mgit log -1 --format=%s "$1"
	else
		awk -F'\t' -v id="$1" '!/^#/ && (index($1, id) == 1 || index(id, $1) == 1) { print $2; exit }' "$UPSTREAM"
	fi
}

# Every commit the message names as 'commit ID ("subject")' above the
# notes: in the mirror, or an upstream commit of upstream-commits.tsv,
# with its subject.
check_commit_refs() {
	local id subject known
	while IFS=$'\t' read -r id subject; do
		known=$(known_subject "$id")
		if [ -z "$known" ]; then
			finding "commit $id is neither in the mirror nor in ci/checks/upstream-commits.tsv"
		elif [ "$known" != "$subject" ]; then
			finding "commit $id is (\"$known\"), not (\"$subject\")"
		fi
	done < <(tr '\n' ' ' <<<"$ABOVE_FOLD" | grep -oE 'commit [0-9a-f]{12,40} \("[^"]*"\)' |
		sed -E 's/^commit ([0-9a-f]+) \("(.*)"\)$/\1\t\2/')
}

# Every Fixes: tag names a known commit (known_subject) by at least 12
# hex digits, with its subject.
check_fixes() {
	local sha rest known
	while read -r sha rest; do
		[ -n "$sha" ] || continue
		known=$(known_subject "$sha")
		if [[ ! $sha =~ ^[0-9a-f]{12,40}$ ]]; then
			finding "Fixes: $sha is not a commit id of 12 or more hex digits"
		elif [ -z "$known" ]; then
			finding "Fixes: $sha is neither in the mirror nor in ci/checks/upstream-commits.tsv"
		elif [ "$rest" != "(\"$known\")" ]; then
			finding "Fixes: $sha has the subject ${rest:-(none)}, not (\"$known\")"
		fi
	done < <(sed -n 's/^Fixes: *//p' <<<"$MESSAGE")
}

# The prefixes accepted for one path, from the longest matching entry.
accepted_prefixes() {
	awk -F'\t' -v f="$1" '!/^#/ && NF == 2 && index(f, $1) == 1 && length($1) > best {
		best = length($1); p = $2 } END { print p }' "$SUBSYSTEMS"
}

check_subject() {
	local subject prefix file ok=0 known=""
	subject=$(head -n 1 <<<"$MESSAGE")
	if ! grep -qE '^[A-Za-z0-9/_.-]+(: [A-Za-z0-9/_.-]+)*: [^ ]' <<<"$subject"; then
		finding "subject '$subject' is not 'subsystem: summary'"
		return
	fi
	prefix=${subject%%: *}
	while read -r file; do
		[ -n "$file" ] || continue
		known+=",$(accepted_prefixes "$file")"
	done < <(mgit diff --name-only "$CHECK_PARENT" "$CHECK_COMMIT")
	tr ',' '\n' <<<"$known" | grep -qxF "$prefix" && ok=1
	[ "$ok" = 1 ] || finding "subject prefix '$prefix' fits none of the files touched (accepted:$(tr ',' ' ' <<<"$known" | xargs -n1 | sort -u | xargs))"
}

main() {
	parse_check_args "$@"
	POSTED=$(posted_commit "$CHECK_COMMIT" "$CHECK_PARENT" "$(posting_sender)") ||
		check_error "cannot write commit $CHECK_COMMIT as posted"
	MESSAGE=$(mgit log -1 --format=%B "$POSTED")
	check_signoff
	check_credit
	check_commit_refs
	check_fixes
	check_subject
	finish_check
}

main "$@"
