#!/usr/bin/env bash
# Usage: boot/mkinitramfs.sh --out FILE [--init FILE] [--work DIR] [--help]
#
# Builds the test initramfs (gzip'ed cpio): busybox-static, boot/init, the
# in-guest TAP tests and the debug profile's tests
# (boot/tests/pmem_{tests,debug}.c, built static against the
# kselftest harness of the newest import in the mirror) and the host's
# mke2fs and mkfs.xfs with the shared libraries they need, and the clients
# profile's script and PMDK probe (boot/clients/, run in the guest from the
# host's root, so dynamically linked). --init puts
# another /init in (the fault tests use boot/fixtures/init-*).
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"

OUT=
INIT=$SERIES_TOP/boot/init
GUEST_TOOLS=(/sbin/mke2fs /sbin/mkfs.xfs)

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--out) OUT=$(realpath -m "${2:?--out needs a file}"); OPT_TAKES=2 ;;
	--init) INIT=$(realpath -m "${2:?--init needs a file}"); OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -n "$OUT" ] || die "--out FILE is required"
	[ -f "$INIT" ] || die "init $INIT not found"
}

# The harness headers come from the imported kernel, not from this repo.
fetch_harness() {
	local dir=$1 tag f
	tag=$(newest_import_tag) || die "no import in the mirror: run base/import.sh"
	mkdir -p "$dir"
	for f in kselftest_harness.h kselftest.h; do
		mgit show "$tag:tools/testing/selftests/$f" >"$dir/$f" ||
			die "$tag has no tools/testing/selftests/$f"
	done
}

build_tests() {
	local root=$1 inc=$2 prog
	for prog in pmem_tests pmem_debug; do
		gcc -static -O2 -Wall -Wno-format-truncation -I"$inc" \
			-o "$root/$prog" "$SERIES_TOP/boot/tests/$prog.c" -lpthread ||
			die "boot/tests/$prog.c does not build"
	done
}

# The clients profile's script and PMDK probe, run in the guest from a
# chroot of the host's root: the probe links Debian's libpmem and libpmem2
# dynamically, as applications do.
build_clients() {
	local root=$1
	mkdir -p "$root/clients"
	install -m 0755 "$SERIES_TOP/boot/clients/run-clients.sh" "$root/clients/run-clients.sh"
	gcc -O2 -Wall -o "$root/clients/pmdk-probe" "$SERIES_TOP/boot/clients/pmdk-probe.c" -lpmem -lpmem2 ||
		die "boot/clients/pmdk-probe.c does not build (install libpmem-dev and libpmem2-dev)"
}

# Copy a dynamic binary and every library ldd names into root.
copy_with_libs() {
	local root=$1 bin=$2 lib
	[ -x "$bin" ] || die "$bin not found (install e2fsprogs and xfsprogs)"
	install -D -m 0755 "$bin" "$root$bin"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] || install -D -m 0755 "$lib" "$root$lib"
	done
}

populate_root() {
	local root=$1 tool
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,mnt,tmp}
	[ -x /bin/busybox ] || die "/bin/busybox not found (install busybox-static)"
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
		die "/bin/busybox is not static (install busybox-static)"
	install -m 0755 /bin/busybox "$root/bin/busybox"
	install -m 0755 "$INIT" "$root/init"
	[ ! -f /etc/mke2fs.conf ] || install -m 0644 /etc/mke2fs.conf "$root/etc/mke2fs.conf"
	for tool in "${GUEST_TOOLS[@]}"; do
		copy_with_libs "$root" "$tool"
	done
}

main() {
	parse_args "$@"
	need_cmds gcc cpio gzip ldd file
	local tmp
	make_temp_dir tmp
	fetch_harness "$tmp/include"
	populate_root "$tmp/root"
	build_tests "$tmp/root" "$tmp/include"
	build_clients "$tmp/root"
	mkdir -p "$(dirname "$OUT")"
	(cd "$tmp/root" && find . -print0 | sort -z |
		cpio --null -o -H newc --reproducible --quiet) | gzip -n -9 >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	note "wrote $OUT ($(du -k "$OUT" | cut -f1) KiB)"
}

main "$@"
