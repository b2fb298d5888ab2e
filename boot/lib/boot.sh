# shellcheck shell=bash
# Booting, in one place: the accelerator, the test initramfs, QEMU's
# version and the boot cache. Sourced after ci/lib/common.sh by the boot/
# scripts and by the main job (for its estimate and its accelerator).

# KVM counts only if it boots a kernel to its root-mount stage within
# SERIES_KVM_PROBE_SECONDS: nested KVM here has hung at early boot.
probe_kvm() {
	local kernel=$1 log
	[ -w /dev/kvm ] || return 1
	log=$(mktemp)
	timeout --kill-after=5 "${SERIES_KVM_PROBE_SECONDS:-20}" "$QEMU_BIN" \
		-accel kvm -machine pc -m 256 -no-reboot -display none -monitor none \
		-kernel "$kernel" -append "console=ttyS0 panic=-1" \
		-serial "file:$log" </dev/null >/dev/null 2>&1 || true
	if grep -q -e 'VFS: Unable to mount root' -e 'Run /init' -e 'No working init' "$log"; then
		rm -f "$log"
		return 0
	fi
	rm -f "$log"
	return 1
}

# pick_accel auto|tcg|kvm KERNEL -> prints the accelerator to use. An auto
# probe's answer is kept for SERIES_ACCEL_CACHE_MINUTES (360) in the work
# directory, so 'git bisect run' does not probe at every step.
pick_accel() {
	local want=$1 kernel=$2 cache=$SERIES_WORK/cache/accel
	case "$want" in
	tcg) echo tcg ;;
	kvm) probe_kvm "$kernel" || die "KVM was asked for but does not boot a guest here"; echo kvm ;;
	*)
		if [ -n "$(find "$cache" -mmin -"${SERIES_ACCEL_CACHE_MINUTES:-360}" 2>/dev/null)" ]; then
			cat "$cache"
			return 0
		fi
		mkdir -p "$(dirname "$cache")"
		if probe_kvm "$kernel"; then echo kvm; else echo tcg; fi | tee "$cache"
		;;
	esac
}

# test_initramfs: the path of the test initramfs (boot/mkinitramfs.sh),
# built once per change of its inputs.
test_initramfs() {
	local key out
	key=$(cat "$SERIES_TOP/boot/init" "$SERIES_TOP/boot/tests/"*.[ch] \
		"$SERIES_TOP/boot/clients/"{run-clients.sh,pmdk-probe.c} "$SERIES_TOP/boot/mkinitramfs.sh" |
		sha256sum | cut -c1-16)
	out=$SERIES_WORK/cache/initramfs/$key.cpio.gz
	[ -f "$out" ] || "$SERIES_TOP/boot/mkinitramfs.sh" --work "$SERIES_WORK" --out "$out" >&2
	printf '%s\n' "$out"
}


qemu_version() {
	"$QEMU_BIN" --version | head -n 1 | sed 's/ *Copyright.*//'
}

# The clients profile runs the host's own binaries: their versions.
client_versions() {
	dpkg-query -W -f '${Package} ${Version}\n' fio ndctl daxctl pmdk-tools libpmem1 libpmem2 2>/dev/null || true
}

# boot_cache_dir KERNEL INITRD PROFILE [CMDLINE-ARG...]: where a boot that
# passed is kept, keyed by everything it depends on: the kernel, the
# initramfs, the profile, the kernel command line and the boot scripts
# (and, for the clients profile, the clients' package versions).
boot_cache_dir() {
	local kernel=$1 initrd=$2 key
	shift 2
	key=$( (sha256sum "$kernel" "$initrd" | cut -d' ' -f1
		printf '%s\n' "$@"
		[ "$1" != clients ] || client_versions
		cat "$SERIES_TOP"/boot/{lib/boot.sh,boot-point.sh,run-qemu.sh,check-host.sh,fsync-fault.c,wake-guest.py,clients/fio-figures.py}) |
		sha256sum | cut -c1-16)
	printf '%s/cache/boots/%s\n' "$SERIES_WORK" "$key"
}

# boot_cache_complete DIR: true when the entry DIR holds a boot that passed
# and says what ran it (accelerator, QEMU version)
boot_cache_complete() {
	[ -f "$1/boot.status" ] && [ -s "$1/qemu-version" ] && [ -s "$1/accel" ]
}

# boot_cached KERNEL INITRD PROFILE [CMDLINE-ARG...]: true when that boot
# passed before (see boot_cache_dir)
boot_cached() {
	boot_cache_complete "$(boot_cache_dir "$@")"
}
