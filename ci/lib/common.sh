# shellcheck shell=bash
# Shared helpers for the virtio-pmem series tooling. Source it; do not run it.

# set -e holds inside $(...) too, and a command that fails where set -e
# stops the script names itself (ERR, inherited by functions and
# subshells) instead of ending it without a word.
shopt -s inherit_errexit
set -E
trap 'on_error $? "$BASH_COMMAND" "${BASH_SOURCE[0]##*/}" "$LINENO"' ERR

on_error() {
	printf '%s: error: %s failed with status %s (%s:%s)\n' "${0##*/}" "$2" "$1" "$3" "$4" >&2
}

SERIES_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Exported, so that a script's --work (an assignment after this) reaches
# every script it runs.
export SERIES_WORK=${SERIES_WORK:-$SERIES_TOP/work}
LINUX_SOURCE_PKG=${LINUX_SOURCE_PKG:-linux-source-6.12}
# shellcheck disable=SC2034 # used by boot/lib/boot.sh, b4/prep.sh and the tests
QEMU_BIN=${SERIES_QEMU:-qemu-system-x86_64}

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

# parse_options HANDLER ARG...: the option loop of every entry point.
# HANDLER gets the arguments from the current one on; it takes the
# script's own options and sets OPT_TAKES to the number of arguments it
# used (1 unless it says otherwise), or to 0 for one that is not its own
# (its last case: '*) OPT_TAKES=0 ;;'). A script with operands takes them
# in HANDLER too ('-*) OPT_TAKES=0 ;;' then '*) ...'). What HANDLER leaves
# is common_option's, or refused by name. HANDLER runs with set -e in force.
parse_options() {
	local handler=$1
	shift
	while [ $# -gt 0 ]; do
		OPT_TAKES=1
		"$handler" "$@"
		[ "$OPT_TAKES" -gt 0 ] || common_option "$@" || die "unknown argument '$1' (see --help)"
		shift "$OPT_TAKES"
	done
}

# common_option ARG...: the options every entry point takes: -h/--help
# (the script's header, then exit 0) and --work DIR (SERIES_WORK,
# exported to what the script runs); returns 1 for any other.
common_option() {
	case "$1" in
	-h | --help) usage_from_header "$0"; exit 0 ;;
	--work)
		[ -n "${2:-}" ] || die "--work needs a directory"
		SERIES_WORK=$(realpath -m "$2")
		OPT_TAKES=2 ;;
	*) return 1 ;;
	esac
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
	commit=$(mgit rev-parse -q --verify 'refs/heads/import^{commit}') || return 1
	mgit describe --tags --exact-match --match 'base/import/*' "$commit"
}

# Serialise runs that share a work directory: the second one waits up to
# SERIES_LOCK_WAIT seconds, then refuses.
# A script run by a lock holder inherits the lock (SERIES_LOCK_HELD).
# topics_on_import [FILE]: the topics of the topic list (default
# topic-branches.txt) whose parent is "import": stand-alone fixes for the
# pristine import, not part of series/v4
topics_on_import() {
	sed 's/#.*//' "${1:-$SERIES_TOP/topic-branches.txt}" | awk 'NF >= 3 && $2 == "import" { print $1 }'
}

take_work_lock() {
	mkdir -p "$SERIES_WORK"
	[ "${SERIES_LOCK_HELD:-}" != "$SERIES_WORK" ] || return 0
	exec {SERIES_LOCK_FD}>"$SERIES_WORK/.lock"
	if ! flock -w "${SERIES_LOCK_WAIT:-0}" "$SERIES_LOCK_FD"; then
		die "another run holds $SERIES_WORK/.lock; wait for it or use another --work"
	fi
	export SERIES_LOCK_HELD=$SERIES_WORK
}

need_cmds() {
	local c missing=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	[ ${#missing[@]} -eq 0 ] || die "missing commands: ${missing[*]} (run ci/install-deps.sh)"
}

# spatch with Debian's python3. Left alone, spatch takes the first python3
# on PATH and probes it (--version, ldd, ldconfig -p) at every start: behind
# a pyenv shim that is 0.8 s per rule instead of 0.2 s, and the shim's
# Python need not be the one whose libpython Debian's spatch was built for.
spatch_run() {
	spatch --python "${SERIES_SPATCH_PYTHON:-/usr/bin/python3}" "$@"
}

# at_exit CMD [ARG...]: run CMD when the script exits (the last added
# first), next to what others added: the one EXIT trap is shared, never
# replaced, so a library's clean-up and its caller's both run.
# (sourced twice, the library keeps what was added)
[[ -v SERIES_AT_EXIT ]] || SERIES_AT_EXIT=()
at_exit() {
	SERIES_AT_EXIT+=("$(printf '%q ' "$@")")
	trap run_at_exit EXIT
}

run_at_exit() {
	local i
	for ((i = ${#SERIES_AT_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${SERIES_AT_EXIT[i]}" || true
	done
}

# make_temp_dir VAR [PARENT [PREFIX]]: a new directory under PARENT (default
# TMPDIR or /tmp), its path in VAR, removed at exit. Call it in the script's
# own shell, not in $(...): the clean-up belongs to the shell that adds it.
make_temp_dir() {
	local -n temp_dir_var=$1
	local parent=${2:-${TMPDIR:-/tmp}} prefix=${3:-${0##*/}}
	mkdir -p "$parent"
	temp_dir_var=$(mktemp -d "$parent/$prefix.XXXXXX") || die "cannot create a temporary directory in $parent"
	at_exit rm -rf -- "$temp_dir_var"
}

# with_heartbeat LABEL LOG CMD...: runs CMD; while it runs, a line every
# SERIES_HEARTBEAT seconds (30) on fd HEARTBEAT_FD (stderr unless set)
# with LABEL, the time so far and LOG's last line: no stage is silent for
# long, and the line says what it is doing.
with_heartbeat() {
	local label=$1 log=$2 pid rc=0
	shift 2
	heartbeat "$label" "$log" &
	pid=$!
	"$@" || rc=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	return "$rc"
}

heartbeat() {
	local label=$1 log=$2 start=$SECONDS last sleeper=
	trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 0' TERM
	while :; do
		sleep "${SERIES_HEARTBEAT:-30}" >/dev/null 2>&1 &
		sleeper=$!
		wait "$sleeper" || true
		last=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r' | cut -c1-90 || true)
		printf '  ... %s: %ss so far%s\n' "$label" "$((SECONDS - start))" "${last:+; $last}" >&"${HEARTBEAT_FD:-2}"
	done
}

# Reproducible identity for commits made by the tooling, so replaying the same
# patches onto the same import yields the same commit ids on every machine.
export_tool_committer() {
	export GIT_COMMITTER_NAME="virtio-pmem series tooling"
	export GIT_COMMITTER_EMAIL="series-tooling@localhost"
}

# tree_with_line REV PATH LINE: the tree of REV with LINE appended to PATH,
# made with git's plumbing in a private index (no work tree is touched)
tree_with_line() {
	local rev=$1 path=$2 line=$3 blob index rc=0
	blob=$({ mgit cat-file blob "$rev:$path" && printf '%s\n' "$line"; } | mgit hash-object -w --stdin) ||
		die "cannot read $path at $rev"
	index=$(mktemp -u "${TMPDIR:-/tmp}/series-index.XXXXXX")
	{ GIT_INDEX_FILE=$index mgit read-tree "$rev" &&
		GIT_INDEX_FILE=$index mgit update-index --cacheinfo "100644,$blob,$path" &&
		GIT_INDEX_FILE=$index mgit write-tree; } || rc=$?
	rm -f "$index"
	[ "$rc" -eq 0 ] || die "cannot write a tree of $rev with $path edited"
}

now_s() {
	date +%s.%N
}

elapsed_since() {
	awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'
}

# space_note DIR: what to add to an error message when DIR's filesystem is
# (nearly) full, so "no space left" is named rather than guessed.
space_note() {
	local avail mnt
	avail=$(df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $4 }')
	mnt=$(df -P "$1" 2>/dev/null | awk 'NR == 2 { print $6 }')
	if [ -n "$avail" ] && [ "$avail" -lt 2048 ]; then
		printf ' (no space left on device: %s KiB free on %s)' "$avail" "$mnt"
	fi
	return 0
}
