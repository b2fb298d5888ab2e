#!/usr/bin/env bash
# Usage: ci/commit-patch.sh --onto REV --patch FILE --ref REF [--work DIR] [--help]
#
# Commits one mail-format patch on REV of the mirror, the way ci/replay.sh
# does (temporary index, no work tree touched), and points REF at the new
# commit. The tests use it to put deliberately broken fixture patches
# (boot/fixtures) on top of the series; it is handy to try a patch too.
# Prints the new commit.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/patches.sh"

ONTO='' PATCH='' REF=''

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--onto) ONTO=${2:?}; OPT_TAKES=2 ;;
	--patch) PATCH=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--ref) REF=${2:?}; OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

main() {
	parse_options own_option "$@"
	[ -n "$ONTO" ] && [ -n "$PATCH" ] && [ -n "$REF" ] || die "--onto, --patch and --ref are required"
	[ -f "$PATCH" ] || die "patch $PATCH not found"
	case "$REF" in refs/*) ;; *) die "--ref must be a full ref name (refs/...)" ;; esac
	case "$REF" in refs/heads/base | refs/heads/series/* | refs/heads/topic/* | refs/tags/base/import/*)
		die "--ref $REF belongs to the replay; use another ref" ;;
	esac
	mirror_exists || die "no mirror at $(mirror_dir)"
	local parent commit
	parent=$(mgit rev-parse -q --verify "$ONTO^{commit}") || die "revision '$ONTO' not found in the mirror"
	take_work_lock
	make_patch_tmp
	export_tool_committer
	commit=$(commit_patch "$parent" "$PATCH" "$ONTO" yes)
	mgit update-ref "$REF" "$commit"
	printf '%s\n' "$commit"
}

main "$@"
