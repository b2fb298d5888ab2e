#!/usr/bin/env bash
# The shared library's helpers (ci/lib/common.sh) on small scripts: the
# exit actions of a library and of its caller both run, last added first,
# also when the script dies; make_temp_dir's directory goes at exit;
# common_option parses --help and --work alike for every entry point and
# exports the work directory; with_heartbeat reports a long step while it
# runs and returns its status; configure_once keeps each stamp's .config.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T

# script NAME BODY: a script that sources the library, in $T/NAME
script() {
	printf '#!/usr/bin/env bash\nset -euo pipefail\n. "%s/ci/lib/common.sh"\n%s\n' "$SERIES_TOP" "$2" >"$T/$1"
	chmod +x "$T/$1"
}

script exits 'lib_step() { make_temp_dir LIB_TMP "$1" lib; at_exit echo "library clean-up"; }
lib_step "$2"
echo "$LIB_TMP" >"$2/made"
at_exit echo "caller clean-up"
[ "$1" = die ] && die "stopped on purpose"
echo "normal end"'
for how in end die; do
	mkdir -p "$T/$how"
	out=$("$T/exits" "$how" "$T/$how" 2>&1) && rc=0 || rc=$?
	check_eq "$how: the caller's and the library's clean-ups run, last added first" \
		"caller clean-up|library clean-up" "$(grep 'clean-up' <<<"$out" | paste -sd'|')"
	check "$how: make_temp_dir's directory is gone at exit" test ! -e "$(cat "$T/$how/made")"
done
check_eq "a script that died still exits 1" 1 "$rc"

script opts 'own_option() {
	case "$1" in
	--flag) echo flag ;;
	--value) echo "value $2"; OPT_TAKES=2 ;;
	*) OPT_TAKES=0 ;;
	esac
}
parse_options own_option "$@"
bash -c '\''echo "child sees $SERIES_WORK"'\'''
sed -i '2i # Usage: opts [--flag] [--value V] [--work DIR]' "$T/opts"
check_eq "own options, --work and its value, in any order; --work reaches the scripts it runs, absolute" \
	"flag|value v|child sees $T/w" "$(cd "$T" && ./opts --flag --work w --value v 2>&1 | paste -sd'|')"
check_eq "--help prints the header" "Usage: opts [--flag] [--value V] [--work DIR]" "$("$T/opts" --help 2>&1)"
check_fails "--work without a directory is refused, by name" "--work needs a directory" "$T/opts" --work
check_fails "an unknown option is refused" "unknown argument '--nope'" "$T/opts" --nope

# set -e inside $(...): a failed initramfs build is no path to boot.
mkdir -p "$T/top/boot/tests" "$T/top/boot/clients"
printf '#!/bin/bash\n' >"$T/top/boot/clients/run-clients.sh"
printf 'int main(void) { return 0; }\n' >"$T/top/boot/clients/pmdk-probe.c"
printf 'int main(void) { return 0; }\n' >"$T/top/boot/tests/t.c"
printf '#!/bin/sh\n' >"$T/top/boot/init"
printf '#!/bin/sh\necho "mkinitramfs: cannot build" >&2\nexit 1\n' >"$T/top/boot/mkinitramfs.sh"
chmod +x "$T/top/boot/mkinitramfs.sh"
script initrd ". $SERIES_TOP/boot/lib/boot.sh
SERIES_TOP=$T/top SERIES_WORK=$T/initrd-work
INITRD=\$(test_initramfs)
echo \"booting with \$INITRD\""
out=$("$T/initrd" 2>&1) && rc=0 || rc=$?
check_eq "a failed initramfs build fails the script" 1 "$rc"
check "... with the builder's message" grep -q 'mkinitramfs: cannot build' <<<"$out"
check "... and no path to boot with" bash -c "! grep -q 'booting with' <<<'$out'"

script beats 'exec {HEARTBEAT_FD}>&1
slow() { echo "compiling foo.c" >"$1"; sleep 2.5; return 7; }
with_heartbeat "step of X" "$2" slow "$2" && rc=0 || rc=$?
echo "status $rc"'
out=$(SERIES_HEARTBEAT=1 "$T/beats" x "$T/beats.log" 2>&1)
check "a heartbeat line names the step and the log's last line" \
	grep -q '^  \.\.\. step of X: [0-9]*s so far; compiling foo.c$' <<<"$out"
check_eq "with_heartbeat returns the step's status" "status 7" "$(tail -n 1 <<<"$out")"

# configure_once (ci/lib/build.sh) keeps the .config each stamp gave: back
# on a stamp it has seen, it puts that file back without configuring, and
# leaves a .config of the same content untouched (make would sync it).
script configs '. "$SERIES_TOP/ci/lib/build.sh"
SERIES_WORK=$1/work
fake_kconfig() { [ -n "$2" ] && echo run >>"$1/../runs" && printf "CONFIG_%s=y\n" "$2" >"$1/.config"; }
configure_once "$1/out" "$2" fake_kconfig "$1/out" "$2"'
mkdir -p "$T/cfg/out"
for stamp in A B A A; do
	"$T/configs" "$T/cfg" "$stamp"
	cat "$T/cfg/out/.config" >>"$T/cfg/seen"
done
check_eq "each new stamp configures once; a stamp seen before gets its kept .config" \
	"CONFIG_A=y|CONFIG_B=y|CONFIG_A=y|CONFIG_A=y" "$(paste -sd'|' "$T/cfg/seen")"
check_eq "kconfig ran for the two new stamps only" 2 "$(grep -c run "$T/cfg/runs")"
check_fails "a configure step that fails fails configure_once" "error" "$T/configs" "$T/cfg" ""
check_eq "... and nothing is kept for its stamp" 2 "$(find "$T/cfg/work/cache/configs" -type f | wc -l)"
touch -d @1000000000 "$T/cfg/out/.config"
rm -f "$T/cfg/out/.config.stamp"
"$T/configs" "$T/cfg" A
check_eq "a kept .config equal to the one in place leaves it untouched" 1000000000 \
	"$(stat -c %Y "$T/cfg/out/.config")"

# The test library: a test file that dies midway keeps what it counted.
cat >"$T/dies.sh" <<EOF
set -euo pipefail
. "$SERIES_TOP/ci/lib/testlib.sh"
pass "one"
fail "two"
false
pass "never"
EOF
: >"$T/counts"
T_RESULTS=$T/counts bash "$T/dies.sh" >/dev/null 2>&1 || true
check_eq "a test file that dies midway keeps its counts (1 passed, 1 failed)" "1 1" \
	"$(awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }' "$T/counts")"

finish_test_file
