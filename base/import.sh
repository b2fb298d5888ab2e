#!/usr/bin/env bash
# Usage: base/import.sh [--work DIR] [--version VER | --tarball FILE --version VER] [--help]
#
# Imports Debian's linux-source-6.12 tarball into the mirror, a git tree at
# WORK/linux (WORK is ./work, or $SERIES_WORK, or --work DIR). Each package
# version becomes one commit on refs/heads/import, tagged
# base/import/<version> ('~' and ':' mangled to '_' and '%' as DEP-14 does), holding every file of the tarball; the commit message
# records the package, its version and the tarball's sha256.
#
#   --version VER   import that package version; fetched with
#                   'apt-get download linux-source-6.12=VER' unless installed
#   --tarball FILE  import FILE as version VER (needs --version)
#
# Re-running for an imported version checks the tag and exits. The import is
# staged in a temporary tree and index; refs move in one transaction at the
# end, so a killed or failed import leaves the mirror as it was.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

TARBALL=
VERSION=

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--version) VERSION=${2:?--version needs a version}; OPT_TAKES=2 ;;
	--tarball) TARBALL=$(realpath -m "${2:?--tarball needs a file}"); OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -z "$TARBALL" ] || [ -n "$VERSION" ] || die "--tarball needs --version"
}

installed_version() {
	dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG" 2>/dev/null || true
}

# Sets TARBALL and VERSION from the installed package, apt or the archive.
locate_tarball() {
	[ -z "$TARBALL" ] || return 0
	local have
	have=$(installed_version)
	if [ -z "$VERSION" ] && [ -z "$have" ]; then
		"$SERIES_TOP/ci/install-deps.sh"
		have=$(installed_version)
	fi
	[ -n "$VERSION" ] || VERSION=$have
	[ -n "$VERSION" ] || die "$LINUX_SOURCE_PKG is not installed and apt could not install it"
	if [ "$VERSION" = "$have" ]; then
		TARBALL=/usr/src/$LINUX_SOURCE_PKG.tar.xz
	else
		TARBALL=$(fetch_archived_tarball "$VERSION")
	fi
}

fetch_archived_tarball() {
	local ver=$1 dir="$SERIES_WORK/packages/$1"
	if [ ! -f "$dir/tarball.tar.xz" ]; then
		mkdir -p "$dir.tmp"
		(cd "$dir.tmp" && apt-get download -q "$LINUX_SOURCE_PKG=$ver" >&2) ||
			{ rm -rf "$dir.tmp"; die "cannot download $LINUX_SOURCE_PKG=$ver from the archive"; }
		dpkg-deb -x "$dir.tmp"/*.deb "$dir.tmp/root"
		mkdir -p "$dir"
		mv "$dir.tmp/root/usr/src/$LINUX_SOURCE_PKG.tar.xz" "$dir/tarball.tar.xz"
		rm -rf "$dir.tmp"
	fi
	printf '%s\n' "$dir/tarball.tar.xz"
}

ensure_mirror() {
	local m
	m=$(mirror_dir)
	if ! mirror_exists; then
		mkdir -p "$m"
		# HEAD stays unborn: import and replay never need a work tree.
		git init -q -b main "$m"
		# The kernel tree is large; keep git from repacking during the run.
		mgit config gc.auto 0
		mgit config core.bigFileThreshold 16m
	fi
}

# DEP-14 mangling: '~' and ':' are not allowed in git ref names.
tag_for() {
	local v=${1//\~/_}
	printf 'base/import/%s\n' "${v//:/%}"
}

already_imported() {
	mgit rev-parse -q --verify "refs/tags/$(tag_for "$VERSION")^{commit}" >/dev/null
}

# Extract the tarball into DIR (its single top directory is stripped).
extract_tarball() {
	local dir=$1
	mkdir -p "$dir"
	tar -xf "$TARBALL" -C "$dir" --strip-components=1 || {
		local why
		why=$(space_note "$dir")
		die "cannot extract $TARBALL${why:- (corrupted or truncated?)}"
	}
}

count_files() {
	find "$1" \( -type f -o -type l \) | wc -l
}

commit_message() {
	local sha=$1 count=$2
	cat <<MSG
Import $LINUX_SOURCE_PKG $VERSION

Debian package: $LINUX_SOURCE_PKG
Package version: $VERSION
Tarball: $(basename "$TARBALL")
Tarball sha256: $sha
Files: $count

Imported verbatim by base/import.sh; nothing is changed, nothing ignored.
MSG
}

import_version() {
	local tree parent commit count tracked sha mtime stage
	make_temp_dir stage "$SERIES_WORK" import
	note "extracting $TARBALL ($VERSION)"
	extract_tarball "$stage/tree"
	count=$(count_files "$stage/tree")
	sha=$(sha256sum "$TARBALL" | cut -d' ' -f1)
	note "adding $count files"
	# -f: Debian's top-level .gitignore ignores every path.
	GIT_INDEX_FILE="$stage/index" GIT_WORK_TREE="$stage/tree" mgit add -f -A . ||
		die "cannot add $TARBALL's files to $(mirror_dir)$(space_note "$(mirror_dir)")"
	tree=$(GIT_INDEX_FILE="$stage/index" mgit write-tree) ||
		die "cannot write the tree of $TARBALL to $(mirror_dir)$(space_note "$(mirror_dir)")"
	tracked=$(mgit ls-tree -r --name-only "$tree" | wc -l)
	[ "$tracked" -eq "$count" ] ||
		die "import of $TARBALL holds $tracked files, the tarball $count"
	parent=$(mgit rev-parse -q --verify "refs/heads/import^{commit}" || true)
	mtime=$(stat -c %Y "$TARBALL")
	export_tool_committer
	commit=$(commit_message "$sha" "$count" |
		GIT_AUTHOR_NAME="Debian kernel team (via base/import.sh)" \
			GIT_AUTHOR_EMAIL="debian-kernel@lists.debian.org" \
			GIT_AUTHOR_DATE="@$mtime +0000" GIT_COMMITTER_DATE="@$mtime +0000" \
			mgit commit-tree "$tree" ${parent:+-p "$parent"}) ||
		die "cannot write the import commit to $(mirror_dir)$(space_note "$(mirror_dir)")"
	printf 'update refs/heads/import %s %s\ncreate refs/tags/%s %s\n' \
		"$commit" "${parent:-0000000000000000000000000000000000000000}" \
		"$(tag_for "$VERSION")" "$commit" | mgit update-ref --stdin
	note "imported $VERSION as $(tag_for "$VERSION") = ${commit:0:12} ($count files)"
}

main() {
	parse_args "$@"
	take_work_lock
	# A killed import (SIGKILL skips its trap) leaves its stage behind.
	rm -rf "$SERIES_WORK"/import.??????
	locate_tarball
	[ -r "$TARBALL" ] || die "tarball $TARBALL is missing or unreadable"
	ensure_mirror
	if already_imported; then
		note "$(tag_for "$VERSION") already in $(mirror_dir); nothing to do"
		return 0
	fi
	import_version
}

main "$@"
