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

now_s() {
	date +%s.%N
}

elapsed_since() {
	awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'
}

build_tree() {
	printf '%s/tree\n' "$SERIES_WORK"
}

build_dir() {
	printf '%s/build/%s\n' "$SERIES_WORK" "$1"
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

# config_fragment NAME: the fragment of a named build config (boot/NAME.config),
# merged onto tinyconfig; each config has its own build directory.
config_fragment() {
	local f=$SERIES_TOP/boot/$1.config
	[ -r "$f" ] || die "no build config '$1' ($f)"
	printf '%s\n' "$f"
}

# make's -j: the cores here plus one, or, with distcc hosts, what they
# take (distcc -j) plus the cores here
build_jobs() {
	if distcc_on; then
		echo $(($(distcc -j) + $(nproc)))
	else
		echo $(($(nproc) + 1))
	fi
}

# DISTCC_HOSTS (distcc's own variable, e.g. "build1/8 build2/8") sends
# compiles to those distccd hosts
distcc_on() {
	[ -n "${DISTCC_HOSTS:-}" ] && command -v distcc >/dev/null 2>&1
}

# kmake ARG...: make for a kernel build. Compilers go through ccache
# (Debian's /usr/lib/ccache), whose cache outlives work directories
# (SERIES_CCACHE_DIR, default ~/.cache/ccache); paths under the work
# directory are rewritten relative (CCACHE_BASEDIR), and kbuild's version
# stamp is fixed (time, user, host and the link count '#N', which every
# relink would bump), so identical sources and config give identical
# objects and bzImages whatever the work directory: a fresh clone's cold
# build hits what an earlier one compiled, and a rebuilt kernel keeps its
# boot cache entry. SERIES_CCACHE=no turns ccache off. With DISTCC_HOSTS,
# what ccache does not have is compiled on those hosts (ccache's prefix
# command; distcc alone without ccache).
kmake() {
	local path=$PATH prefix=""
	if [ "${SERIES_CCACHE:-yes}" != no ] && [ -d /usr/lib/ccache ] && command -v ccache >/dev/null 2>&1; then
		path=/usr/lib/ccache:$PATH
		! distcc_on || prefix=distcc
	elif distcc_on; then
		path=/usr/lib/distcc:$PATH
	fi
	PATH=$path CCACHE_PREFIX=$prefix CCACHE_DIR=${SERIES_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache} \
		CCACHE_BASEDIR=$SERIES_WORK CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${SERIES_CCACHE_SIZE:-8G} \
		KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 KBUILD_BUILD_USER=series \
		KBUILD_BUILD_HOST=virtio-pmem make "$@"
}

# kernel_cache_key COMMIT EXTRA FRAGMENT...
kernel_cache_key() {
	local commit=$1 extra=$2 tree
	shift 2
	tree=$(mgit rev-parse "$commit^{tree}")
	printf '%s-%s\n' "${tree:0:16}" \
		"$( (cat "$@"; printf '%s\n' "$extra") | sha256sum | cut -c1-12)"
}

# kernel_cache_path KEY: where the bzImage of a kernel_cache_key is kept
kernel_cache_path() {
	printf '%s/cache/kernels/%s/bzImage\n' "$SERIES_WORK" "$1"
}

# store_kernel KEY BUILD-DIR: cache BUILD-DIR's bzImage under KEY, all or
# nothing (a full disk leaves no half-copied image behind).
store_kernel() {
	local dest
	dest=$(kernel_cache_path "$1")
	mkdir -p "$(dirname "$dest")"
	cp "$2/arch/x86/boot/bzImage" "$dest.tmp" ||
		{ rm -f "$dest.tmp"; die "cannot cache the bzImage of $2$(space_note "$(dirname "$dest")")"; }
	mv "$dest.tmp" "$dest"
}

# Check out COMMIT, detached, in the tooling's own work tree of the mirror.
# Only the files that differ are rewritten, so their mtimes alone change.
checkout_build_tree() {
	local commit=$1 tree
	tree=$(build_tree)
	if [ ! -e "$tree/.git" ]; then
		mgit worktree prune
		mgit worktree add -q --detach "$tree" "$commit" >&2
	else
		git -C "$tree" checkout -q -f --detach "$commit"
	fi
}

# config_stamp COMPILER FILE...: what a build directory's .config follows
# from: the files (fragments), the checked-out tree's Kconfig files, config
# snippets, kconfig itself, the top Makefile and the scripts Kconfig runs,
# and the compiler (Kconfig asks it).
config_stamp() {
	local cc=$1
	shift
	{
		cat "$@"
		git -C "$(build_tree)" ls-tree -r HEAD |
			awk -F'\t' '$2 ~ /(^|\/)Kconfig[^\/]*$|\/configs\/[^\/]*$|^scripts\/kconfig\/|^Makefile$|^scripts\/[^\/]*\.sh$/'
		"$cc" --version | head -n 1
	} | sha256sum | cut -c1-32
}

# configure_once OUT STAMP COMMAND...: run COMMAND, which configures OUT,
# unless OUT's .config was already made from what STAMP says. Configuring
# again costs three kconfig runs per build directory and makes the next
# make sync and relink, so it is done only when needed.
configure_once() {
	local out=$1 stamp=$2
	shift 2
	[ -f "$out/.config" ] && [ "$(cat "$out/.config.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	rm -f "$out/.config.stamp"
	"$@"
	printf '%s\n' "$stamp" >"$out/.config.stamp"
}

# configure_build NAME FRAGMENT...: tinyconfig plus the fragments, then
# olddefconfig; make only rebuilds what the symbols that changed touch.
# Skipped while the config_stamp is the one the directory was made with.
configure_build() {
	local name=$1 out
	shift
	out=$(build_dir "$name")
	mkdir -p "$out"
	configure_once "$out" "$(config_stamp gcc "$@")" tinyconfig_plus "$out" "$@"
}

# tinyconfig_plus OUT FRAGMENT...: OUT's .config from scratch
tinyconfig_plus() {
	local out=$1 tree
	shift
	tree=$(build_tree)
	kmake -C "$tree" O="$out" tinyconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
	kmake -C "$tree" O="$out" olddefconfig >/dev/null
}
