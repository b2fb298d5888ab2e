#!/usr/bin/env bash
# Usage: boot/boot-point.sh --kernel BZIMAGE --out DIR [--initrd FILE]
#                           [--profile fast|debug|clients]
#                           [--accel auto|tcg|kvm]
#                           [--timeout SECONDS] [--cmdline ARG]...
#                           [--no-cache] [--keep-images] [--work DIR] [--help]
#
# Boots one built kernel and checks what the host saw: the one "boot a
# point" entry of the main job (every point, and the debug profile's
# boots), of 'git bisect run' and of the driver benchmark. The initramfs is
# the test one (boot/mkinitramfs.sh, built when its sources changed) unless
# --initrd names another. Boots with boot/run-qemu.sh (its log in
# DIR/run-qemu.log), then checks the host side with boot/check-host.sh
# (DIR/host.tap). A boot that passed is kept in WORK/cache/boots, keyed by
# the kernel, the initramfs, the profile, the command line and the boot
# scripts, with what it proved (the accelerator and the QEMU version): the
# same boot again copies that entry into DIR (and writes DIR/boot.cached)
# unless --no-cache. The backing files go after the boot unless
# --keep-images.
#
# Prints one line, "ok (12.9s, tcg)", "ok (cached, booted in 12.9s, tcg)"
# or "FAIL: STATUS (Ns); console tail in DIR/boot.status", and exits 0
# only when the boot is ok.
set -euo pipefail
. "$(dirname "$0")/../ci/lib/common.sh"
. "$(dirname "$0")/lib/boot.sh"

KERNEL='' OUT='' INITRD='' PROFILE=fast ACCEL=auto TIMEOUT=300 CACHE=yes KEEP_IMAGES=no BOOT_OK=yes
declare -a CMDLINE_ARGS=()
# what a passed boot keeps in the cache
CACHED_FILES=(boot.status boot.seconds accel qemu-version profile token console.log tap.log trace.log qemu.log host.tap wakeups.log)

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--kernel) KERNEL=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--out) OUT=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--initrd) INITRD=$(realpath -m "${2:?}"); OPT_TAKES=2 ;;
	--profile) PROFILE=${2:?}; OPT_TAKES=2 ;;
	--accel) ACCEL=${2:?}; OPT_TAKES=2 ;;
	--timeout) TIMEOUT=${2:?}; OPT_TAKES=2 ;;
	--cmdline) CMDLINE_ARGS+=("${2:?}"); OPT_TAKES=2 ;;
	--no-cache) CACHE=no ;;
	--keep-images) KEEP_IMAGES=yes ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
	[ -n "$KERNEL" ] && [ -n "$OUT" ] || die "--kernel and --out are required"
	[ -r "$KERNEL" ] || die "kernel $KERNEL not found"
	[ -z "$INITRD" ] || [ -r "$INITRD" ] || die "initramfs $INITRD not found"
}

copy_from_cache() {
	local cache=$1
	cp -r "$cache/." "$OUT/"
	: >"$OUT/boot.cached"
	printf 'ok (cached, booted in %ss, %s)\n' "$(cat "$OUT/boot.seconds")" "$(cat "$OUT/accel")"
}

# run-qemu.sh writes boot.status; when it stopped before (bad arguments, no
# space), its own message is the status.
run_qemu() {
	local a
	local -a args=(--kernel "$KERNEL" --initrd "$INITRD" --out "$OUT" --profile "$PROFILE"
		--accel "$ACCEL" --timeout "$TIMEOUT")
	for a in "${CMDLINE_ARGS[@]}"; do args+=(--cmdline "$a"); done
	rm -f "$OUT/boot.status" "$OUT/boot.cached"
	"$SERIES_TOP/boot/run-qemu.sh" "${args[@]}" >"$OUT/run-qemu.log" 2>&1 || true
	[ -s "$OUT/boot.status" ] || printf 'qemu-error\n%s\n' "$(tail -n 5 "$OUT/run-qemu.log")" >"$OUT/boot.status"
}

boot_fresh() {
	local cache=$1 status start
	start=$(now_s)
	# a QEMU that does not run is run-qemu.sh's to name, in boot.status
	qemu_version >"$OUT/qemu-version" 2>/dev/null || echo unknown >"$OUT/qemu-version"
	run_qemu
	status=$(head -n 1 "$OUT/boot.status")
	"$SERIES_TOP/boot/check-host.sh" "$OUT" >/dev/null 2>"$OUT/host.err" || true
	[ "$KEEP_IMAGES" = yes ] || rm -f "$OUT/main.img" "$OUT/faulty.img" "$OUT/dax.img"
	if [ "$status" != ok ]; then
		printf 'FAIL: %s (%ss); console tail in %s/boot.status\n' "$status" "$(elapsed_since "$start")" "$OUT"
		BOOT_OK=no
		return 0
	fi
	if [ "$CACHE" = yes ]; then
		mkdir -p "$cache"
		cp "${CACHED_FILES[@]/#/$OUT/}" "$cache/"
		[ ! -d "$OUT/guest" ] || cp -r "$OUT/guest" "$cache/"
	fi
	printf 'ok (%ss, %s)\n' "$(cat "$OUT/boot.seconds")" "$(cat "$OUT/accel")"
}

main() {
	parse_args "$@"
	[ -n "$INITRD" ] || INITRD=$(test_initramfs)
	mkdir -p "$OUT"
	local cache
	cache=$(boot_cache_dir "$KERNEL" "$INITRD" "$PROFILE" "${CMDLINE_ARGS[@]}")
	if [ "$CACHE" = yes ] && boot_cache_complete "$cache"; then
		copy_from_cache "$cache"
	else
		boot_fresh "$cache"
	fi
	[ "$BOOT_OK" = yes ] || exit 1
}

main "$@"
