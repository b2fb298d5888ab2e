# shellcheck shell=bash
# Shared helpers for the virtio-pmem series tooling. Source it; do not run it.

SERIES_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERIES_WORK=${SERIES_WORK:-$SERIES_TOP/work}
LINUX_SOURCE_PKG=${LINUX_SOURCE_PKG:-linux-source-6.12}

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# Print the script's leading comment block (after the shebang) as its help.
usage_from_header() {
	sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$1"
}

mirror_dir() {
	printf '%s/linux\n' "$SERIES_WORK"
}

results_root() {
	printf '%s/results\n' "$SERIES_WORK"
}

# git in the mirror, never in this repository.
mgit() {
	git -C "$(mirror_dir)" "$@"
}

mirror_exists() {
	[ -d "$(mirror_dir)/.git" ] || [ -f "$(mirror_dir)/HEAD" ]
}

# The newest import tag, by import order (first parent chain of refs/heads/import).
newest_import_tag() {
	local commit
	commit=$(mgit rev-parse -q --verify refs/heads/import^{commit}) || return 1
	mgit describe --tags --exact-match --match 'base/import/*' "$commit"
}

# Serialise runs that share a work directory: the second one waits up to
# SERIES_LOCK_WAIT seconds, then refuses.
take_work_lock() {
	mkdir -p "$SERIES_WORK"
	exec {SERIES_LOCK_FD}>"$SERIES_WORK/.lock"
	if ! flock -w "${SERIES_LOCK_WAIT:-0}" "$SERIES_LOCK_FD"; then
		die "another run holds $SERIES_WORK/.lock; wait for it or use another --work"
	fi
}

need_cmds() {
	local c missing=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	[ ${#missing[@]} -eq 0 ] || die "missing commands: ${missing[*]} (run ci/install-deps.sh)"
}

# Reproducible identity for commits made by the tooling, so replaying the same
# patches onto the same import yields the same commit ids on every machine.
export_tool_committer() {
	export GIT_COMMITTER_NAME="virtio-pmem series tooling"
	export GIT_COMMITTER_EMAIL="series-tooling@localhost"
}

now_s() {
	date +%s.%N
}

elapsed_since() {
	awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'
}
