#!/usr/bin/env bash
# Usage: ci/checks/build.sh --commit C --parent P --out DIR [--work WORK]
#
# The commit builds for the guest config (boot/guest.config) and for the
# modular one (boot/modules.config over it: LIBNVDIMM, BLK_DEV_PMEM and
# VIRTIO_PMEM as modules, so missing exports and link errors show), and
# compiling the C files it touches with W=1 gives no warning that the same
# files did not give at the parent. Each config has its own build directory
# walked commit by commit, so only what changed rebuilds; the guest bzImage
# goes to the kernel cache the boot stage reads. Contract: ci/lib/checks.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/checks.sh"

declare -A FRAGMENTS=(
	[guest]="$SERIES_TOP/boot/guest.config"
	[modules]="$SERIES_TOP/boot/guest.config $SERIES_TOP/boot/modules.config"
)
declare -A TARGETS=([guest]="bzImage" [modules]="vmlinux modules")

make_in() {
	local name=$1
	shift
	make -C "$(build_tree)" O="$(build_dir "$name")" -j"$(build_jobs)" "$@"
}

# Objects of the touched C files that REV has and this config builds.
built_objects() {
	local name=$1 rev=$2 f
	for f in $(touched_c_files); do
		mgit cat-file -e "$rev:$f" 2>/dev/null || continue
		[ -f "$(build_dir "$name")/${f%.c}.o" ] && printf '%s\n' "${f%.c}.o"
	done
	return 0
}

# w1_warnings NAME REV OUT: W=1 warnings of the touched objects at REV
w1_warnings() {
	local name=$1 rev=$2 out=$3 objs
	mapfile -t objs < <(built_objects "$name" "$rev")
	: >"$out"
	[ ${#objs[@]} -gt 0 ] || return 0
	make_in "$name" W=1 "${objs[@]}" >"$out.log" 2>&1 || true
	cat "$out.log" >>"$CHECK_LOG"
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out.log" | normalize_warnings >"$out" || true
}

# build_at NAME REV: configure and build the config's targets at REV
build_at() {
	local name=$1 rev=$2
	checkout_build_tree "$rev"
	# shellcheck disable=SC2086 # the fragment list is split on purpose
	configure_build "$name" ${FRAGMENTS[$name]}
	# shellcheck disable=SC2086
	make_in "$name" ${TARGETS[$name]} >>"$CHECK_LOG" 2>&1
}

cache_guest_kernel() {
	local key dest
	key=$(kernel_cache_key "$CHECK_COMMIT" "" "$SERIES_TOP/boot/guest.config")
	dest=$SERIES_WORK/cache/kernels/$key
	mkdir -p "$dest"
	cp "$(build_dir guest)/arch/x86/boot/bzImage" "$dest/bzImage.tmp"
	mv "$dest/bzImage.tmp" "$dest/bzImage"
}

check_config() {
	local name=$1 tmp=$2
	printf '== %s config at parent %s\n' "$name" "$CHECK_PARENT" >>"$CHECK_LOG"
	# The parent normally built already (the previous commit): cheap.
	build_at "$name" "$CHECK_PARENT" || check_error "parent $CHECK_PARENT does not build ($name config)"
	w1_warnings "$name" "$CHECK_PARENT" "$tmp/$name.parent"
	printf '== %s config at %s\n' "$name" "$CHECK_COMMIT" >>"$CHECK_LOG"
	build_at "$name" "$CHECK_COMMIT" || check_error "does not build ($name config): $(grep -m1 -E 'error:|Error [0-9]' "$CHECK_LOG" || tail -n 1 "$CHECK_LOG")"
	[ "$name" != guest ] || cache_guest_kernel
	w1_warnings "$name" "$CHECK_COMMIT" "$tmp/$name.child"
	new_findings "$tmp/$name.parent" "$tmp/$name.child" | sed "s/^/[$name W=1] /" >>"$CHECK_NEW"
}

main() {
	parse_check_args "$@"
	local tmp
	tmp=$(mktemp -d)
	BUILD_CHECK_TMP=$tmp
	trap 'rm -rf "$BUILD_CHECK_TMP"' EXIT
	check_config guest "$tmp"
	check_config modules "$tmp"
	finish_check
}

main "$@"
