# shellcheck shell=bash
# Building, in one place: the kernel tree and build directories, the config
# fragments, make through ccache (and distcc when DISTCC_HOSTS is set) with
# reproducible kbuild settings, and the kernel cache. Sourced after
# ci/lib/common.sh by ci/build-kernel.sh, the per-commit checks and the
# main job.

build_tree() {
	printf '%s/tree\n' "$SERIES_WORK"
}

build_dir() {
	printf '%s/build/%s\n' "$SERIES_WORK" "$1"
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

# ccache_dir: the ccache every build uses (SERIES_CCACHE_DIR, default
# ~/.cache/ccache); it outlives work directories
ccache_dir() {
	printf '%s\n' "${SERIES_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}"
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
	PATH=$path CCACHE_PREFIX=$prefix CCACHE_DIR=$(ccache_dir) \
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
# snippets, kconfig itself, the top and arch Makefiles (the *defconfig
# targets) and the scripts Kconfig runs, and the compiler and linker
# (Kconfig asks them).
config_stamp() {
	local cc=$1
	shift
	{
		cat "$@"
		git -C "$(build_tree)" ls-tree -r HEAD |
			awk -F'\t' '$2 ~ /(^|\/)Kconfig[^\/]*$|\/configs\/[^\/]*$|^scripts\/kconfig\/|^Makefile$|^arch\/[^\/]*\/Makefile$|^scripts\/Makefile\.defconf$|^scripts\/[^\/]*\.sh$/'
		"$cc" --version | head -n 1
		"${cc%gcc}ld" --version | head -n 1
	} | sha256sum | cut -c1-32
}

# configure_once OUT STAMP COMMAND...: run COMMAND, which configures OUT,
# unless OUT's .config was already made from what STAMP says. Configuring
# costs three kconfig runs per build directory (5 to 10 s), so the .config
# each STAMP and COMMAND (its code) gave is kept (WORK/cache/configs): a walk that
# goes back and forth over a Kconfig change (the driver commit adds one)
# puts the kept file back, and only when its content differs, so make
# syncs and rebuilds only what the changed symbols reach.
configure_once() {
	local out=$1 stamp=$2 kept
	shift 2
	[ -f "$out/.config" ] && [ "$(cat "$out/.config.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	rm -f "$out/.config.stamp"
	kept=$SERIES_WORK/cache/configs/$({ printf '%s\n' "$stamp"; declare -f "$1"; } | sha256sum | cut -c1-16).config
	if [ -f "$kept" ]; then
		cmp -s "$kept" "$out/.config" || cp "$kept" "$out/.config" || return 1
	else
		"$@" || return 1
		keep_config "$out/.config" "$kept"
	fi
	printf '%s\n' "$stamp" >"$out/.config.stamp"
}

# keep_config CONFIG KEPT: a copy of CONFIG as KEPT, whole or not at all
# (a full disk only costs the next walk its kconfig runs)
keep_config() {
	local tmp
	mkdir -p "$(dirname "$2")" && tmp=$(mktemp "$2.XXXXXX") || return 0
	cp "$1" "$tmp" && mv "$tmp" "$2" || rm -f "$tmp"
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
	kmake -C "$tree" O="$out" tinyconfig >/dev/null &&
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null &&
		kmake -C "$tree" O="$out" olddefconfig >/dev/null
}
