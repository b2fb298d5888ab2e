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

main() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--onto) ONTO=${2:?}; shift ;;
		--patch) PATCH=$(realpath -m "${2:?}"); shift ;;
		--ref) REF=${2:?}; shift ;;
		*) common_option "$@" || die "unknown argument '$1' (see --help)"
			shift "$COMMON_SHIFT"
			continue ;;
		esac
		shift
	done
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
