#!/usr/bin/env bash
# Usage: ci/check-tools.sh [--verbose] [--packages] [--help]
#
# The tool smoke test: runs every tool the pipeline calls once, on tiny
# inputs, in a few seconds, and names the Debian package of each tool that
# is missing or does not work, one line each:
#   missing: spatch (package coccinelle)
#   missing: ocamlopt (package ocaml-nox): spatch's @script:ocaml@ rules need it
#   not working: sparse (package sparse): ...
# spatch runs a rule with an @script:ocaml@ and an @script:python@ block
# (the kernel's badzero.cocci needs the OCaml compiler, its Python rules
# libpython3.X.so), then sparse, b4, git-filter-repo, QEMU (virtio-pmem-pci),
# mkfs.xfs, mkfs.ext4, debugfs, the static busybox, gcc -static, the kernel
# build's tools and headers, the ppc64le cross compiler, cpio, xz, perl,
# Debian's python3 with ply and git, ccache, mmdebstrap, shellcheck and the
# linux-source tarball. Exits 0 when every one works, 1 otherwise.
# ci/install-deps.sh runs it after installing; ci/tests/01-tools.sh tests it.
#
#   --verbose   also print a line for every tool that works
#   --packages  print the Debian packages the checks cover, one a line, and
#               exit (ci/tests/01-tools.sh compares them with install-deps)
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

VERBOSE=no
declare -a PROBLEMS=() REPORTED=()
TMP=

# name package function: every tool the pipeline calls, and its package
TOOLS=(
	"spatch coccinelle check_spatch"
	"ocamlopt ocaml-nox check_ocamlopt"
	"libpython3.so libpython3-dev check_libpython"
	"sparse sparse check_sparse"
	"b4 b4 check_b4"
	"git-filter-repo git-filter-repo check_filter_repo"
	"git git check_git"
	"$QEMU_BIN qemu-system-x86 check_qemu"
	"mkfs.xfs xfsprogs check_mkfs_xfs"
	"mkfs.ext4 e2fsprogs check_mkfs_ext4"
	"debugfs e2fsprogs check_debugfs"
	"busybox busybox-static check_busybox"
	"gcc build-essential check_gcc_static"
	"make build-essential check_make"
	"powerpc64le-linux-gnu-gcc gcc-powerpc64le-linux-gnu check_ppc64le_gcc"
	"gelf.h libelf-dev check_libelf"
	"openssl/evp.h libssl-dev check_libssl"
	"flex flex check_flex"
	"bison bison check_bison"
	"bc bc check_bc"
	"cpio cpio check_cpio"
	"xz xz-utils check_xz"
	"file file check_file"
	"depmod kmod check_depmod"
	"flock util-linux check_flock"
	"perl perl check_perl"
	"python3 python3 check_python3"
	"python3-ply python3-ply check_python_ply"
	"python3-git python3-git check_python_git"
	"ccache ccache check_ccache"
	"distcc distcc check_distcc"
	"mmdebstrap mmdebstrap check_mmdebstrap"
	"shellcheck shellcheck check_shellcheck"
	"fio fio check_fio"
	"ndctl ndctl check_ndctl"
	"daxctl daxctl check_daxctl"
	"pmempool pmdk-tools check_pmempool"
	"libpmem libpmem-dev check_libpmem"
	"libpmem2 libpmem2-dev check_libpmem2"
	"$LINUX_SOURCE_PKG.tar.xz $LINUX_SOURCE_PKG check_linux_source"
)

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--verbose) VERBOSE=yes ;;
	--packages) covered_packages; exit 0 ;;
	*) OPT_TAKES=0 ;;
	esac
}

parse_args() {
	parse_options own_option "$@"
}

covered_packages() {
	local row name pkg
	for row in "${TOOLS[@]}"; do
		read -r name pkg _ <<<"$row"
		printf '%s\n' "$pkg"
	done | sort -u
}

# report KIND NAME PACKAGE [WHY]: one problem line per tool name
report() {
	local kind=$1 name=$2 pkg=$3 why=${4:-} r
	for r in "${REPORTED[@]}"; do
		[ "$r" != "$name" ] || return 0
	done
	REPORTED+=("$name")
	PROBLEMS+=("$kind: $name (package $pkg)${why:+: $why}")
}

# have CMD PACKAGE: CMD is on PATH, or is reported missing
have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	report missing "$1" "$2"
	return 1
}

# runs NAME PACKAGE CMD...: CMD exits 0, or NAME is reported not working
# with the last line CMD printed
runs() {
	local name=$1 pkg=$2 out
	shift 2
	out=$("$@" 2>&1) && return 0
	report "not working" "$name" "$pkg" "'$*' failed: $(tail -n 1 <<<"$out")"
	return 1
}

# Debian's python3 (a pyenv or venv python3 earlier on PATH lacks its
# modules); checkpatch.pl and b4 use it the same way.
debian_python3() {
	PATH=/usr/bin:/bin:$PATH python3 "$@"
}

check_spatch() {
	local name=$1 pkg=$2 out
	have spatch "$pkg" || return 0
	cat >"$TMP/probe.c" <<'EOF'
int probe(int x)
{
	return x;
}
EOF
	cat >"$TMP/scripts.cocci" <<'EOF'
@r@
identifier f;
@@
f(...) { ... }

@script:ocaml@
f << r.f;
@@
Printf.printf "ocaml saw %s\n" f

@script:python@
f << r.f;
@@
print("python saw %s" % f)
EOF
	out=$(cd "$TMP" && spatch_run --very-quiet --sp-file scripts.cocci probe.c 2>&1) || true
	if grep -q 'No OCaml compiler' <<<"$out" || { ! ocamlopt_found && grep -q 'CompileFailure' <<<"$out"; }; then
		report missing ocamlopt ocaml-nox "spatch's @script:ocaml@ rules need it"
	elif grep -q 'Py.find_library' <<<"$out"; then
		report missing libpython3.so libpython3-dev "spatch's @script:python@ rules load it"
	elif ! grep -q '^ocaml saw probe$' <<<"$out" || ! grep -q '^python saw probe$' <<<"$out"; then
		report "not working" "$name" "$pkg" "an @script:ocaml@ + @script:python@ rule gave: $(tail -n 1 <<<"$out")"
	fi
}

ocamlopt_found() {
	command -v ocamlopt >/dev/null 2>&1 || command -v ocamlopt.opt >/dev/null 2>&1
}

check_ocamlopt() {
	ocamlopt_found || report missing "$1" "$2" "spatch's @script:ocaml@ rules need it"
}

# spatch's @script:python@ loads libpython3.X.so, the -dev package's link.
check_libpython() {
	local f
	for f in /usr/lib/*/libpython3.*.so /usr/lib/libpython3.*.so; do
		[ -e "$f" ] && return 0
	done
	report missing "$1" "$2" "spatch's @script:python@ rules load it"
}

check_sparse() {
	local out
	have sparse "$2" || return 0
	printf 'int x;\nint f(void)\n{\n\treturn x;\n}\n' >"$TMP/sparse.c"
	out=$(cd "$TMP" && sparse sparse.c 2>&1) || true
	grep -q "symbol 'x' was not declared" <<<"$out" ||
		report "not working" "$1" "$2" "no warning for an undeclared global: $(tail -n 1 <<<"$out")"
}

check_b4() {
	have b4 "$2" && runs "$1" "$2" b4 --version && runs "$1" "$2" b4 --help
}

check_filter_repo() {
	have git-filter-repo "$2" && runs "$1" "$2" git filter-repo --version
}

check_git() {
	have git "$2" && runs "$1" "$2" git --version
}

check_qemu() {
	have "$QEMU_BIN" "$2" || return 0
	runs "$1" "$2" "$QEMU_BIN" -version || return 0
	"$QEMU_BIN" -device help 2>&1 | grep -q '"virtio-pmem-pci"' ||
		report "not working" "$1" "$2" "'-device help' lists no virtio-pmem-pci"
	# the clients profile shares the host's root with -virtfs
	"$QEMU_BIN" -device help 2>&1 | grep -q '"virtio-9p-pci"' ||
		report "not working" "$1" "$2" "'-device help' lists no virtio-9p-pci (-virtfs)"
}

check_mkfs_xfs() {
	have mkfs.xfs "$2" || return 0
	truncate -s 300M "$TMP/xfs.img"
	runs "$1" "$2" mkfs.xfs -q -f "$TMP/xfs.img"
	rm -f "$TMP/xfs.img"
}

check_mkfs_ext4() {
	have mkfs.ext4 "$2" && truncate -s 8M "$TMP/ext4.img" && runs "$1" "$2" mkfs.ext4 -q -F "$TMP/ext4.img"
}

check_debugfs() {
	have debugfs "$2" || return 0
	[ -s "$TMP/ext4.img" ] || return 0
	runs "$1" "$2" debugfs -R 'ls -l /' "$TMP/ext4.img"
}

# boot/mkinitramfs.sh takes /bin/busybox and needs it static.
check_busybox() {
	if [ ! -x /bin/busybox ]; then
		report missing /bin/busybox "$2"
	elif ! file -L /bin/busybox 2>/dev/null | grep -q 'statically linked'; then
		report "not working" /bin/busybox "$2" "not statically linked (the dynamic busybox package?)"
	else
		runs "$1" "$2" /bin/busybox true
	fi
}

check_gcc_static() {
	have gcc "$2" || return 0
	printf '#include <stdio.h>\nint main(void)\n{\n\tputs("hello");\n\treturn 0;\n}\n' >"$TMP/hello.c"
	runs "$1 -static" "$2" gcc -static -O2 -o "$TMP/hello" "$TMP/hello.c" -lpthread || return 0
	[ "$("$TMP/hello")" = hello ] || report "not working" "$1 -static" "$2" "the static hello world does not run"
}

# ci/checks/ppc64le.sh cross-compiles papr_scm.c.
check_ppc64le_gcc() {
	have powerpc64le-linux-gnu-gcc "$2" || return 0
	printf 'int f(int x);\nint f(int x)\n{\n\treturn x + 1;\n}\n' >"$TMP/ppc.c"
	runs "$1" "$2" powerpc64le-linux-gnu-gcc -O2 -c -o "$TMP/ppc.o" "$TMP/ppc.c" &&
		runs "$1" "$2" powerpc64le-linux-gnu-ld --version
}

check_make() {
	have make "$2" && runs "$1" "$2" make --version
}

# header_compiles NAME PACKAGE HEADER
header_compiles() {
	command -v gcc >/dev/null 2>&1 || return 0
	printf '#include <%s>\n' "$3" | gcc -fsyntax-only -x c - >/dev/null 2>&1 ||
		report missing "$1" "$2" "the kernel build includes it"
}

check_libelf() {
	header_compiles "$1" "$2" gelf.h
}

check_libssl() {
	header_compiles "$1" "$2" openssl/evp.h
}

check_flex() {
	have flex "$2" && runs "$1" "$2" flex --version
}

check_bison() {
	have bison "$2" && runs "$1" "$2" bison --version
}

check_bc() {
	have bc "$2" || return 0
	[ "$(echo '2^10' | bc 2>&1)" = 1024 ] || report "not working" "$1" "$2" "2^10 is not 1024"
}

check_cpio() {
	have cpio "$2" && runs "$1" "$2" bash -c "cd '$TMP' && echo hello.c | cpio -o -H newc --quiet >/dev/null"
}

check_xz() {
	have xz "$2" || return 0
	[ "$(echo hello | xz | xz -d 2>&1)" = hello ] || report "not working" "$1" "$2" "compress and decompress"
}

check_file() {
	have file "$2" && runs "$1" "$2" file /bin/sh
}

check_depmod() {
	have depmod "$2" && runs "$1" "$2" depmod -V
}

check_flock() {
	have flock "$2" && runs "$1" "$2" flock "$TMP" true
}

check_perl() {
	have perl "$2" && runs "$1" "$2" perl -e 'use strict; use warnings; exit 0'
}

check_python3() {
	[ -x /usr/bin/python3 ] || { report missing /usr/bin/python3 "$2"; return 0; }
	runs "$1" "$2" debian_python3 -c 'import sys; sys.exit(0)'
}

check_python_ply() {
	[ -x /usr/bin/python3 ] || return 0
	debian_python3 -c 'import ply' >/dev/null 2>&1 ||
		report missing "python3 module ply" "$2" "scripts/spdxcheck.py (checkpatch) needs it"
}

check_python_git() {
	[ -x /usr/bin/python3 ] || return 0
	debian_python3 -c 'import git' >/dev/null 2>&1 ||
		report missing "python3 module git" "$2" "scripts/spdxcheck.py (checkpatch) needs it"
}

check_ccache() {
	have ccache "$2" && runs "$1" "$2" ccache --version
}

check_distcc() {
	have distcc "$2" && runs "$1" "$2" distcc --version && have distccd "$2" && runs distccd "$2" distccd --version
}

check_mmdebstrap() {
	have mmdebstrap "$2" && runs "$1" "$2" mmdebstrap --version
}

check_shellcheck() {
	have shellcheck "$2" && runs "$1" "$2" shellcheck --version
}

# The clients profile runs these in the guest, from the host's root.
check_fio() {
	have fio "$2" && runs "$1" "$2" fio --name=probe --ioengine=psync --rw=write --bs=4k --size=64k \
		--filename="$TMP/fio.dat" --fsync=1 --output-format=json
}

check_ndctl() {
	have ndctl "$2" && runs "$1" "$2" ndctl --version
}

check_daxctl() {
	have daxctl "$2" && runs "$1" "$2" daxctl --version
}

check_pmempool() {
	have pmempool "$2" && runs "$1" "$2" pmempool --version
}

# library_links NAME PACKAGE HEADER LIB: a program using HEADER links with LIB
library_links() {
	command -v gcc >/dev/null 2>&1 || return 0
	printf '#include <%s>\nint main(void)\n{\n\treturn 0;\n}\n' "$3" >"$TMP/$4.c"
	runs "$1" "$2" gcc -o "$TMP/$4" "$TMP/$4.c" "-l$4"
}

check_libpmem() {
	library_links "$1" "$2" libpmem.h pmem
}

check_libpmem2() {
	library_links "$1" "$2" libpmem2.h pmem2
}

check_linux_source() {
	local tarball=/usr/src/$LINUX_SOURCE_PKG.tar.xz
	[ -s "$tarball" ] || report missing "$tarball" "$2" "base/import.sh imports it"
}

run_checks() {
	local row name pkg fn before
	for row in "${TOOLS[@]}"; do
		read -r name pkg fn <<<"$row"
		before=${#PROBLEMS[@]}
		# A check reports what it finds; its own status only says it stopped early.
		"$fn" "$name" "$pkg" || true
		[ "$VERBOSE" = no ] || [ "${#PROBLEMS[@]}" -ne "$before" ] || printf 'ok: %s (package %s)\n' "$name" "$pkg"
	done
}

main() {
	parse_args "$@"
	local start p
	start=$(now_s)
	make_temp_dir TMP
	run_checks
	if [ ${#PROBLEMS[@]} -gt 0 ]; then
		for p in "${PROBLEMS[@]}"; do
			printf '%s\n' "$p" >&2
		done
		die "${#PROBLEMS[@]} of ${#TOOLS[@]} tools missing or not working (run ci/install-deps.sh)"
	fi
	note "all ${#TOOLS[@]} tools work ($(elapsed_since "$start")s)"
}

main "$@"
