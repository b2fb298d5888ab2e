#!/usr/bin/env bash
# ci/install-deps.sh on a fresh Debian 12: mmdebstrap makes a minimal
# bookworm chroot (variant minbase) from the archive apt uses on this
# machine (/etc/apt/sources.list{,.d}), ci/install-deps.sh, ci/check-tools.sh
# and ci/lib are copied in, and inside it:
#   1. install-deps with ocaml-nox left out (SERIES_DROP_PACKAGE), then the
#      tool smoke test: it must fail and name ocamlopt and ocaml-nox;
#   2. install-deps with the whole list, then the smoke test: every tool
#      the pipeline calls works on a system that had nothing else.
# SERIES_DROP_PACKAGE from the environment is honoured in step 2 too, so
# 'SERIES_DROP_PACKAGE=ocaml-nox bash ci/tests/03-fresh-chroot.sh' fails.
# The base tarball is cached keyed by day, sources and variant, and the
# downloaded .debs in debs/ (bound to the chroot's apt cache), both outside
# the work directory (SERIES_CHROOT_CACHE, default
# ~/.cache/virtio-pmem-series/chroot, like ccache's), so a reused machine
# (CI's clean clones included) does not fetch them again.
# Needs root (chroot, mount) and the network to the archive.
# Slow: a Debian chroot and its packages (skipped by ci/test.sh --quick)
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

SUITE=bookworm
VARIANT=minbase
CACHE=${SERIES_CHROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virtio-pmem-series/chroot}
ROOT=
declare -a MOUNTS=()

# The host's apt sources for SUITE, one-line style ("deb URI SUITE COMP..."),
# from both the one-line and the deb822 formats.
host_debian_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
			uri = $i; suite = $(i + 1); comps = ""
			for (j = i + 2; j <= NF; j++) comps = comps " " $j
			if (suite ~ "^" s "(-updates|-security)?$") print "deb " uri " " suite comps
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" '
			function flush(   n, u, m, su, k) {
				if (types ~ /(^| )deb( |$)/ && enabled != "no") {
					n = split(uris, u, " "); m = split(suites, su, " ")
					for (k = 1; k <= n; k++) for (j = 1; j <= m; j++)
						if (su[j] ~ "^" s "(-updates|-security)?$") print "deb " u[k] " " su[j] " " comps
				}
				types = uris = suites = comps = enabled = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
			  if (key == "types") types = $0; else if (key == "uris") uris = $0
			  else if (key == "suites") suites = $0; else if (key == "components") comps = $0
			  else if (key == "enabled") enabled = tolower($0) }
			END { flush() }' "$f"
	done
}

# The cached base tarball for today, sources and variant; made when missing
# (older ones are removed).
base_tarball() {
	local sources=$1 key tar
	key=$( (printf '%s\n' "$SUITE" "$VARIANT"; mmdebstrap --version; cat "$sources") | sha256sum | cut -c1-12)
	tar=$CACHE/$SUITE-$VARIANT-$(date -u +%Y%m%d)-$key.tar
	if [ ! -s "$tar" ]; then
		mkdir -p "$CACHE"
		rm -f "$CACHE/$SUITE-$VARIANT"-*.tar
		local -a mirrors
		mapfile -t mirrors <"$sources"
		mmdebstrap --quiet --variant="$VARIANT" --format=tar "$SUITE" "$tar.part" "${mirrors[@]}" >&2 ||
			{ rm -f "$tar.part"; return 1; }
		mv "$tar.part" "$tar"
	fi
	printf '%s\n' "$tar"
}

mount_in_root() {
	mkdir -p "$ROOT$2"
	mount "${@:3}" "$1" "$ROOT$2"
	MOUNTS+=("$ROOT$2")
}

# Unmount in reverse order; the tree is deleted only when nothing is left
# mounted in it (a bound /dev must never meet rm -rf).
cleanup() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" || true
	done
	if [ -n "$ROOT" ] && [ -d "$ROOT" ]; then
		if findmnt -rn -o TARGET | grep -q "^$ROOT/"; then
			printf 'warning: %s still has mounts; not deleted\n' "$ROOT" >&2
		else
			rm -rf "$ROOT"
		fi
	fi
}

make_root() {
	local tar=$1
	mkdir -p "$CACHE/debs" "$SERIES_WORK"
	ROOT=$(mktemp -d "$SERIES_WORK/.fresh-chroot.XXXXXX")
	tar -C "$ROOT" -xf "$tar"
	cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
	# No daemon starts inside the chroot; dpkg skips its fsyncs (a
	# throw-away tree: what gets installed is the same).
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
	chmod +x "$ROOT/usr/sbin/policy-rc.d"
	printf 'force-unsafe-io\n' >"$ROOT/etc/dpkg/dpkg.cfg.d/series-unsafe-io"
	mount_in_root proc /proc -t proc
	mount_in_root sysfs /sys -t sysfs
	mount_in_root /dev /dev --bind
	mount_in_root /dev/pts /dev/pts --bind
	mount_in_root "$CACHE/debs" /var/cache/apt/archives --bind
	mkdir -p "$ROOT/src/ci"
	cp -r "$SERIES_TOP/ci/install-deps.sh" "$SERIES_TOP/ci/check-tools.sh" "$SERIES_TOP/ci/lib" "$ROOT/src/ci/"
}

# in_root CMD...: CMD in the chroot, with a clean environment
in_root() {
	chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
}

# step NAME DROP CMD...: CMD in the chroot with SERIES_DROP_PACKAGE=DROP;
# status and output in $T/NAME.rc and $T/NAME.log, seconds in $T/NAME.s
step() {
	local name=$1 drop=$2 rc=0 start
	shift 2
	start=$(now_s)
	in_root SERIES_DROP_PACKAGE="$drop" "$@" >"$T/$name.log" 2>&1 || rc=$?
	printf '%s\n' "$rc" >"$T/$name.rc"
	elapsed_since "$start" >"$T/$name.s"
	printf '     %s: exit %s in %ss\n' "$name" "$rc" "$(cat "$T/$name.s")"
}

make_temp_dir T
at_exit cleanup

needs root
need_cmds mmdebstrap chroot findmnt
START=$(now_s)
host_debian_sources >"$T/sources"
check "the host's apt sources name $SUITE" grep -q " $SUITE " "$T/sources"
sed 's/^/     source: /' "$T/sources"
rc=0
tar=$(base_tarball "$T/sources" 2>"$T/mmdebstrap.log") || rc=$?
check_eq "mmdebstrap makes a $VARIANT $SUITE chroot" 0 "$rc"
[ "$rc" -eq 0 ] || { tail -n 5 "$T/mmdebstrap.log"; finish_test_file; exit 0; }
printf '     base: %s (%s MiB, %ss so far)\n' "$tar" "$(($(stat -c %s "$tar") / 1048576))" "$(elapsed_since "$START")"
make_root "$tar"
check "the chroot has none of the tools (no spatch, no b4)" \
	bash -c "! chroot '$ROOT' /bin/sh -c 'command -v spatch || command -v b4'"
step manual-before "" apt-mark showmanual

# 1. A needed package left out: the smoke test names it.
step drop-ocaml "ocaml-nox ${SERIES_DROP_PACKAGE:-}" bash /src/ci/install-deps.sh --no-check
check_eq "install-deps without ocaml-nox installs the rest" 0 "$(cat "$T/drop-ocaml.rc")"
[ "$(cat "$T/drop-ocaml.rc")" -eq 0 ] || tail -n 15 "$T/drop-ocaml.log"
step smoke-no-ocaml "" bash /src/ci/check-tools.sh
check_eq "the smoke test fails without ocaml-nox" 1 "$(cat "$T/smoke-no-ocaml.rc")"
check "the smoke test names ocamlopt and ocaml-nox" \
	grep -q '^missing: ocamlopt (package ocaml-nox)' "$T/smoke-no-ocaml.log"
grep -E '^(missing|not working):' "$T/smoke-no-ocaml.log" | sed 's/^/     /' || true

# 2. The whole list: every tool works.
step install "${SERIES_DROP_PACKAGE:-}" bash /src/ci/install-deps.sh
check_eq "ci/install-deps.sh installs the whole list and its smoke test passes" 0 "$(cat "$T/install.rc")"
[ "$(cat "$T/install.rc")" -eq 0 ] || grep -E '^(missing|not working):|error' "$T/install.log" | tail -n 15
step smoke "" bash /src/ci/check-tools.sh --verbose
check_eq "ci/check-tools.sh passes on the fresh system" 0 "$(cat "$T/smoke.rc")"
[ "$(cat "$T/smoke.rc")" -eq 0 ] || grep -E '^(missing|not working):' "$T/smoke.log" | sed 's/^/     /'
check_grep "spatch runs an OCaml and a Python script rule there" '^ok: spatch' "$T/smoke.log"
step manual-after "" apt-mark showmanual
SERIES_DROP_PACKAGE="${SERIES_DROP_PACKAGE:-}" "$SERIES_TOP/ci/install-deps.sh" --list 2>/dev/null | sort -u >"$T/list"
check_eq "what install-deps marked manual there is its list (apt-mark showmanual)" \
	"$(comm -13 <(sort -u "$T/manual-before.log") "$T/list" | paste -sd' ')" \
	"$(comm -13 <(sort -u "$T/manual-before.log") <(sort -u "$T/manual-after.log") | paste -sd' ')"
printf '     total %ss (smoke test in the chroot %ss)\n' "$(elapsed_since "$START")" "$(cat "$T/smoke.s")"

finish_test_file
