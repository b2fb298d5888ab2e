# shellcheck shell=bash
# Tiny test helpers for ci/tests/*.sh. Each check prints one line and adds
# its count to T_RESULTS at once, so a file that dies midway (set -e) keeps
# what it counted; the runner (ci/test.sh) adds them up, plus one failure
# for the file that exited non-zero.

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

# skip NAME WHY: a check that cannot run here, said so; counted neither way
skip() {
	printf 'skip %s: %s\n' "$1" "$2"
}
