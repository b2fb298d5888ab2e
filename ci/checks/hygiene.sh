#!/usr/bin/env bash
# Usage: ci/checks/hygiene.sh --commit C --parent P --out DIR [--work WORK]
#
# What a maintainer's tools check before applying: a Signed-off-by from the
# author, every Fixes: tag naming a commit that exists in the mirror (with
# its subject), and a 'subsystem: summary' subject whose prefix fits the
# files touched (ci/checks/subsystems.tsv). The commit is judged as
# b4/prep.sh posts it (ci/lib/posting.sh): a patch the tooling authored is
# the sender's, and the sender's Signed-off-by comes last; what the commit
# itself lacks still counts. Contract: ci/lib/checks.sh.
# Inputs: ci/checks/subsystems.tsv
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"
. "$(dirname "$0")/../lib/posting.sh"

SUBSYSTEMS=$SERIES_TOP/ci/checks/subsystems.tsv

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

check_fixes() {
	local sha rest
	while read -r sha rest; do
		[ -n "$sha" ] || continue
		if ! mgit cat-file -e "$sha^{commit}" 2>/dev/null; then
			finding "Fixes: $sha names no commit of the mirror"
		elif [ -n "$rest" ] && [ "$rest" != "(\"$(mgit log -1 --format=%s "$sha")\")" ]; then
			finding "Fixes: $sha has the wrong subject $rest"
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
	check_fixes
	check_subject
	finish_check
}

main "$@"
