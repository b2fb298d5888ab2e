# shellcheck shell=bash
# Tiny test helpers for ci/tests/*.sh. Each check prints one line and adds
# its count to T_RESULTS at once ("passed failed skipped"), so a file that
# dies midway (set -e) keeps what it counted; the runner (ci/test.sh) adds
# them up, plus one failure for the file that exited non-zero. Sourced
# after ci/lib/common.sh.
. "$(dirname "${BASH_SOURCE[0]}")/results.sh"

T_PASS=0
T_FAIL=0
# Tests run failing commands on purpose: the library's ERR trap would only
# add noise to their output (set -e and inherit_errexit still hold).
trap - ERR
set +E

pass() {
	T_PASS=$((T_PASS + 1))
	printf '1 0\n' >>"${T_RESULTS:-/dev/null}"
	printf 'ok   %s\n' "$1"
}

fail() {
	T_FAIL=$((T_FAIL + 1))
	printf '0 1\n' >>"${T_RESULTS:-/dev/null}"
	printf 'FAIL %s\n' "$1"
	[ -z "${2:-}" ] || printf '     %s\n' "$2"
}

# check NAME COMMAND...: passes when COMMAND exits 0
check() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

# check_fails NAME PATTERN COMMAND...: COMMAND must exit non-zero and print
# PATTERN (grep -E) on stdout or stderr
check_fails() {
	local name=$1 pattern=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "expected a failure, got exit 0"
	elif ! grep -qE -- "$pattern" <<<"$out"; then
		fail "$name" "exit $rc but no /$pattern/ in: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

# check_eq NAME WANT GOT
check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want '$2', got '$3'"; fi
}

# make_fixture_tarball TARBALL MAKEFILE-TEXT [RANDOM-KIB]: a tarball shaped
# like Debian's linux-source one (top directory, .gitignore ignoring every
# top-level path, a symlink), optionally with an incompressible file.
make_fixture_tarball() {
	local out=$1 src
	src=$(mktemp -d)
	local d=$src/linux-source-6.12
	mkdir -p "$d/drivers/nvdimm" "$d/debian"
	printf '/*\n!/debian\n' >"$d/.gitignore"
	printf '%s\n' "$2" >"$d/Makefile"
	echo pmem >"$d/drivers/nvdimm/pmem.c"
	ln -s Makefile "$d/link"
	echo changelog >"$d/debian/changelog"
	[ -z "${3:-}" ] || head -c "$(($3 * 1024))" /dev/urandom >"$d/firmware.bin"
	tar -C "$src" -cJf "$out" linux-source-6.12
	rm -rf "$src"
}

# refs_snapshot REPO: every ref of REPO and its object, sorted, to compare
# before and after a step that must move none
refs_snapshot() {
	git -C "$1" for-each-ref --format='%(refname) %(objectname)' | sort
}

# check_grep NAME PATTERN FILE: a line of FILE matches PATTERN (grep -E);
# a failure shows FILE's last lines
check_grep() {
	if grep -qE -- "$2" "$3" 2>/dev/null; then
		pass "$1"
	else
		fail "$1" "no /$2/ in $3; it ends: $(tail -n 3 "$3" 2>/dev/null | tr '\n' ' ')"
	fi
}

# The file's own tally (the counts are already in T_RESULTS).
finish_test_file() {
	printf '# %s: %d passed, %d failed\n' "${0##*/}" "$T_PASS" "$T_FAIL"
}

# path_without DIR CMD...: fills DIR with links to every command on PATH but
# the CMDs (and their .opt/.byte variants), and prints DIR, to be the whole
# PATH of one command: a machine where those packages were never installed.
path_without() {
	local dir=$1 d c
	shift
	mkdir -p "$dir"
	IFS=: read -r -a T_PATH_DIRS <<<"$PATH"
	for d in "${T_PATH_DIRS[@]}"; do
		[ -d "$d" ] || continue
		cp -s -n "$d"/* "$dir"/ 2>/dev/null || true
	done
	for c in "$@"; do
		rm -f "$dir/$c" "$dir/$c".*
	done
	printf '%s\n' "$dir"
}

# skip NAME WHY: a check that cannot run here, said so; counted as skipped,
# neither passed nor failed
skip() {
	printf '0 0 1\n' >>"${T_RESULTS:-/dev/null}"
	printf 'skip %s: %s\n' "$1" "$2"
}

# seeds_dir: the seed series (the v3 patches), SERIES_SEEDS or ../shared/seeds
seeds_dir() {
	printf '%s\n' "${SERIES_SEEDS:-$SERIES_TOP/../shared/seeds}"
}

# prereq_missing PREREQ: why PREREQ is missing here, or fails (silent) when
# it is present. root: chroot and mounts; seeds: seeds_dir; main-job: a
# passing ci/bisect-boot.sh run of the whole series in the work directory.
prereq_missing() {
	case "$1" in
	root) [ "$(id -u)" -ne 0 ] || return 1; echo "needs root (chroot, mount)" ;;
	seeds) [ ! -d "$(seeds_dir)" ] || return 1; echo "needs the seed series in $(seeds_dir) (SERIES_SEEDS)" ;;
	main-job)
		! passed_results bisect-boot >/dev/null || return 1
		echo "needs a passing ci/bisect-boot.sh run in $SERIES_WORK (ci/tests/50-bisect-boot.sh makes one)" ;;
	*) echo "unknown prerequisite '$1'" ;;
	esac
}

# needs PREREQ...: the test file's prerequisites; when one is missing, the
# whole file is skipped with the reason (see prereq_missing)
needs() {
	local p why
	for p in "$@"; do
		why=$(prereq_missing "$p") || continue
		skip "${0##*/}" "$why"
		finish_test_file
		exit 0
	done
}
