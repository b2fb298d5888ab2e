#!/usr/bin/env bash
# Usage: b4/get-maintainer.sh --mpath DIR GET_MAINTAINER_OPTION... < PATCH
#
# scripts/get_maintainer.pl of the current directory's tree, as b4's
# send-auto-to-cmd and send-auto-cc-cmd run it (the patch on stdin), with
# its answer cached under WORK/cache/get-maintainer by what decides it: the
# patch, the options, the MAINTAINERS files in DIR and get_maintainer.pl
# itself. b4 runs it twice per patch on every posting; uncached that is
# 0.8 s each, most of a warm posting's time. What b4 writes afresh on
# every run (Date, Message-Id, In-Reply-To, References, X-B4-Tracking
# headers and the cover's change-id) is dropped from the patch before it
# is read, so that a posting of the same series is a cache hit.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

stable_patch() {
	awk 'body { if (!/^change-id: /) print; next }
		/^$/ { body = 1; print; next }
		/^[ \t]/ { if (!skip) print; next }
		{ skip = tolower($0) ~ /^(date|message-id|in-reply-to|references|x-b4-tracking):/ }
		!skip'
}

main() {
	case "${1:-}" in
	-h | --help) usage_from_header "$0"; exit 0 ;;
	--mpath) [ -d "${2:-}" ] || die "--mpath: no directory '${2:-}'" ;;
	*) die "unknown argument '${1:-}': the first option must be --mpath DIR (see --help)" ;;
	esac
	local mdir=$2 tmp patch key cache
	[ -f scripts/get_maintainer.pl ] || die "no scripts/get_maintainer.pl in $PWD"
	make_temp_dir tmp
	patch=$tmp/patch
	stable_patch >"$patch"
	shift 2
	key=$({ printf '%s\n' "$@"; cat "$patch" "$mdir"/MAINTAINERS* scripts/get_maintainer.pl; } |
		sha256sum | cut -c1-32)
	cache=$SERIES_WORK/cache/get-maintainer/$key
	if [ ! -f "$cache" ]; then
		mkdir -p "${cache%/*}"
		perl scripts/get_maintainer.pl --mpath "$mdir" "$@" <"$patch" >"$cache.tmp"
		mv "$cache.tmp" "$cache"
	fi
	cat "$cache"
}

main "$@"
