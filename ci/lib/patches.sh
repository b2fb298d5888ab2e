# shellcheck shell=bash
# Turning a mail-format patch into a commit of the mirror without a work
# tree: a temporary index is read from the parent, the diff applied to it
# with 'git apply --cached', and the tree committed. Needs common.sh.

# A temporary directory for the index and mailinfo output, removed on exit.
make_patch_tmp() {
	make_temp_dir PATCH_TMP "$SERIES_WORK" patch
}

# Refuse what a posted kernel patch never is, before git sees it.
check_patch_file() {
	local file=$1 bad
	[ -s "$file" ] || die "$file: empty patch file"
	! grep -q $'\r$' "$file" || die "$file: CRLF line endings (a mangled mail?); convert it with dos2unix first"
	! grep -q '^GIT binary patch' "$file" || die "$file: contains a binary hunk; the series has no binary files"
	bad=$(grep -E '^(diff --git|---|\+\+\+|rename (from|to)|copy (from|to)) ' "$file" |
		grep -E '(^| |[ab]/)(\.\./|/)|/\.\./|/\.\.$' | grep -v '^--- /dev/null$\|^+++ /dev/null$' | head -n 1 || true)
	[ -z "$bad" ] || die "$file: touches a path outside the tree: $bad"
}

# Patch parsing: sets P_AUTHOR, P_EMAIL, P_DATE, P_SUBJECT, P_MSG, P_NOTES.
parse_patch() {
	local file=$1 info body notes
	local tmp=$PATCH_TMP/mailinfo
	check_patch_file "$file"
	mkdir -p "$tmp"
	info=$(git mailinfo "$tmp/msg" "$tmp/patch" <"$file") ||
		die "$file: not a patch in mail format"
	P_AUTHOR=$(sed -n 's/^Author: //p' <<<"$info")
	P_EMAIL=$(sed -n 's/^Email: //p' <<<"$info")
	P_DATE=$(sed -n 's/^Date: //p' <<<"$info")
	P_SUBJECT=$(sed -n 's/^Subject: //p' <<<"$info")
	[ -n "$P_AUTHOR" ] && [ -n "$P_EMAIL" ] && [ -n "$P_SUBJECT" ] ||
		die "$file: missing From: or Subject:"
	grep -q '^diff --git ' "$tmp/patch" || die "$file: contains no diff"
	body=$(cat "$tmp/msg")
	P_MSG=$(printf '%s\n\n%s\n' "$P_SUBJECT" "$body")
	# Notes: what stands between the first '---' and the diffstat's '---'.
	notes=$(awk '/^diff --git /{exit} {print}' "$tmp/patch" |
		awk 'NR==1 && $0=="---"{next} {l[n++]=$0} END{last=-1; for(i=0;i<n;i++) if(l[i]=="---") last=i; for(i=0;i<last;i++) print l[i]}')
	P_NOTES=$notes
	cp "$tmp/patch" "$PATCH_TMP/diff"
}

# Name the hunk that failed: git apply says "patch failed: FILE:LINE".
describe_failure() {
	local patch=$1 err=$2 where file line hunk
	where=$(sed -n 's/^error: patch failed: //p' "$err" | head -1)
	if [ -n "$where" ]; then
		file=${where%:*} line=${where##*:}
		hunk=$(awk -v f="$file" -v l="$line" '
			/^diff --git /{cur=($0 ~ " b/" f "$")}
			cur && /^@@ /{split($2,a,","); if (substr(a[1],2)==l) {print; exit}}' "$patch")
		printf 'failing hunk in %s: %s\n' "$file" "${hunk:-at line $line}"
	else
		sed -n 's/^error: //p' "$err" | head -3
	fi
}

# A commit made from a patch is determined by the parent, the patch file,
# whether its notes are kept, the committer and this library; a replay of
# an unchanged series takes it from here (WORK/cache/patch-commits) instead
# of reading and writing an index of 86,692 files per patch.
patch_commit_key() {
	local parent=$1 file=$2 with_notes=$3
	{
		printf '%s\n' "$parent" "$with_notes" "${GIT_COMMITTER_NAME:-}" "${GIT_COMMITTER_EMAIL:-}"
		cat "$file" "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-32
}

# commit_patch PARENT PATCH-FILE CONTEXT WITH_NOTES -> prints the new commit
commit_patch() {
	local parent=$1 file=$2 context=$3 with_notes=$4 tree msg cache commit
	cache=$SERIES_WORK/cache/patch-commits/$(patch_commit_key "$parent" "$file" "$with_notes")
	if commit=$(cat "$cache" 2>/dev/null) && mgit cat-file -e "$commit^{commit}" 2>/dev/null; then
		printf '%s\n' "$commit"
		return 0
	fi
	parse_patch "$file"
	GIT_INDEX_FILE=$PATCH_TMP/index mgit read-tree "$parent"
	if ! GIT_INDEX_FILE=$PATCH_TMP/index mgit apply --cached --whitespace=nowarn \
		"$PATCH_TMP/diff" 2>"$PATCH_TMP/apply.err"; then
		die "$context: patch ${file#"$SERIES_TOP"/} does not apply: $(describe_failure "$file" "$PATCH_TMP/apply.err")"
	fi
	tree=$(GIT_INDEX_FILE=$PATCH_TMP/index mgit write-tree)
	msg=$P_MSG
	if [ "$with_notes" = yes ] && [ -n "$P_NOTES" ]; then
		msg=$(printf '%s\n---\n%s\n' "$P_MSG" "$P_NOTES")
	fi
	commit=$(printf '%s\n' "$msg" |
		GIT_AUTHOR_NAME=$P_AUTHOR GIT_AUTHOR_EMAIL=$P_EMAIL GIT_AUTHOR_DATE=$P_DATE \
			GIT_COMMITTER_DATE=$P_DATE mgit commit-tree "$tree" -p "$parent")
	mkdir -p "${cache%/*}"
	printf '%s\n' "$commit" >"$cache.tmp" && mv "$cache.tmp" "$cache"
	printf '%s\n' "$commit"
}

