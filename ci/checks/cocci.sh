#!/usr/bin/env bash
# Usage: ci/checks/cocci.sh --commit C --parent P (--out DIR | --content-key) [--work WORK]
#
# The kernel's semantic patches (scripts/coccinelle of the commit's tree)
# and ours (cocci/), in report mode, on the C files the commit touches. The
# files are read from git, not from a work tree. The parent is checked only
# when the commit has reports: a report counts only if the parent's version
# of the files does not have it; the parent runs only the rules that
# reported on the commit. Contract: ci/lib/checks.sh.
# Cached by content (see ci/lib/checks.sh): the touched C files at the
# commit and its parent, the commit's scripts/coccinelle and spatch.
# Inputs: cocci/run.sh cocci/*.cocci
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/build.sh"
. "$(dirname "$0")/../lib/checks.sh"

# extract REV DIR: the touched C files as they are at REV
extract() {
	local rev=$1 dir=$2 f
	for f in $(touched_c_files); do
		mgit cat-file -e "$rev:$f" 2>/dev/null || continue
		mkdir -p "$dir/$(dirname "$f")"
		mgit show "$rev:$f" >"$dir/$f"
	done
}

# reports REV DIR OUT COCCI-RUN-ARG...: normalized reports on the files of
# REV, by the rules the arguments name (--rules DIR|RULE, --which FILE)
reports() {
	local rev=$1 dir=$2 out=$3 files rc=0
	shift 3
	extract "$rev" "$dir"
	: >"$out"
	mapfile -t files < <(cd "$dir" && find . -name '*.c' | sed 's|^\./||')
	[ ${#files[@]} -gt 0 ] || return 0
	(cd "$dir" && "$SERIES_TOP/cocci/run.sh" -j "$(nproc)" "$@" "${files[@]}") >"$out.log" 2>&1 || rc=$?
	cat "$out.log" >>"$CHECK_LOG"
	[ "$rc" -ne 2 ] || check_error "spatch failed at $rev: $(grep -m1 SPATCH-FAILED "$out.log")"
	grep -E '^[^ ]+:[0-9]+:[0-9]+-[0-9]+: ' "$out.log" | normalize_warnings >"$out" || true
}

blob_at() {
	mgit rev-parse -q --verify "$1:$2" || echo none
}

content_key() {
	local f
	{
		mgit rev-parse "$CHECK_COMMIT:scripts/coccinelle"
		spatch --version | head -n 1
		for f in $(touched_c_files); do
			printf '%s %s %s\n' "$f" "$(blob_at "$CHECK_COMMIT" "$f")" "$(blob_at "$CHECK_PARENT" "$f")"
		done
	} | sha256sum | cut -c1-16
}

main() {
	parse_check_args "$@"
	need_cmds spatch
	local tmp rule rules=()
	make_temp_dir tmp
	RULES=$tmp/rules
	mkdir -p "$RULES"
	mgit archive "$CHECK_COMMIT" scripts/coccinelle | tar -x -C "$RULES"
	reports "$CHECK_COMMIT" "$tmp/child" "$tmp/child.txt" --which "$tmp/reported" \
		--rules "$RULES/scripts/coccinelle" --rules "$SERIES_TOP/cocci"
	if [ -s "$tmp/child.txt" ]; then
		while read -r rule; do rules+=(--rules "$rule"); done < <(sort -u "$tmp/reported")
		reports "$CHECK_PARENT" "$tmp/parent" "$tmp/parent.txt" "${rules[@]}"
		new_findings "$tmp/parent.txt" "$tmp/child.txt" >>"$CHECK_NEW"
	fi
	finish_check
}

main "$@"
