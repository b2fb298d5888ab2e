#!/usr/bin/env bash
# Usage: ci/install-deps.sh [--list] [--no-check] [--help]
#
# Installs with apt-get the Debian 12 packages that the pipeline needs:
# kernel source and build tools (and the ppc64le cross compiler of the
# ppc64le check), QEMU, busybox, filesystem tools, sparse,
# coccinelle with the OCaml compiler and the libpython its script rules
# need, b4, distcc (builds on other hosts when DISTCC_HOSTS is set), the
# real clients the clients profile runs in the guest from the host's root
# (fio, ndctl, daxctl, pmempool, libpmem and libpmem2 for the PMDK probe),
# and the test suite's own tools (mmdebstrap, shellcheck).
# Packages already present are left alone, so a second run costs only the
# dpkg query. Then it runs the tool smoke test, ci/check-tools.sh (a few
# seconds), so a package that is missing or broken is named now, not an
# hour into the main job; once it passed, it runs again only when a
# package, PATH or the smoke test changed.
#
#   --list      print the packages it installs, one a line, and exit
#   --no-check  do not run ci/check-tools.sh afterwards
#
# Environment:
#   SERIES_DROP_PACKAGE="P1 P2"  leave these packages out of the list (space
#                                or comma separated): for the tests that show
#                                a missing package is caught and named
#                                (ci/tests/03-fresh-chroot.sh); a name that
#                                is not in the list is refused
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

PACKAGES=(
	linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	gcc-powerpc64le-linux-gnu
	cpio xz-utils file kmod python3 perl git git-filter-repo
	qemu-system-x86 busybox-static e2fsprogs xfsprogs
	sparse coccinelle ocaml-nox libpython3-dev b4 util-linux python3-ply python3-git
	mmdebstrap ccache shellcheck distcc
	fio ndctl daxctl pmdk-tools libpmem-dev libpmem2-dev
)

# Take SERIES_DROP_PACKAGE's packages out of PACKAGES.
drop_packages() {
	local spec=${SERIES_DROP_PACKAGE:-} drop p keep=() d found
	read -r -a drop <<<"${spec//,/ }"
	[ ${#drop[@]} -gt 0 ] || return 0
	for d in "${drop[@]}"; do
		found=no
		for p in "${PACKAGES[@]}"; do
			[ "$p" != "$d" ] || found=yes
		done
		[ "$found" = yes ] || die "SERIES_DROP_PACKAGE: '$d' is not in the package list"
	done
	for p in "${PACKAGES[@]}"; do
		for d in "${drop[@]}"; do
			[ "$p" != "$d" ] || continue 2
		done
		keep+=("$p")
	done
	note "SERIES_DROP_PACKAGE: leaving out ${drop[*]}"
	PACKAGES=("${keep[@]}")
}

# One query for the whole list: PACKAGE VERSION STATUS, a line each.
package_states() {
	dpkg-query -W -f='${Package} ${Version} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true
}

missing_packages() {
	local p
	for p in "${PACKAGES[@]}"; do
		grep -q "^$p .* install ok installed$" <<<"$STATES" || printf '%s\n' "$p"
	done
}

install_missing() {
	local todo sudo=()
	mapfile -t todo < <(missing_packages)
	if [ ${#todo[@]} -eq 0 ]; then
		note "all ${#PACKAGES[@]} packages present"
		return 0
	fi
	note "installing: ${todo[*]}"
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${todo[@]}"
}

# own_option ARG...: this script's own options (see parse_options, common.sh)
# shellcheck disable=SC2034 # parse_options reads OPT_TAKES
own_option() {
	case "$1" in
	--list) list=yes ;;
	--no-check) check=no ;;
	*) OPT_TAKES=0 ;;
	esac
}

main() {
	local list=no check=yes
	parse_options own_option "$@"
	drop_packages
	if [ "$list" = yes ]; then
		printf '%s\n' "${PACKAGES[@]}"
		return 0
	fi
	STATES=$(package_states)
	install_missing
	[ "$check" = no ] || check_tools_once
}

# The smoke test's verdict holds while the packages (name, version, state),
# PATH and the smoke test itself are as they were when it passed
# (WORK/cache/tools-ok): a warm run skips its few seconds.
tools_key() {
	{
		printf '%s\n' "$PATH"
		package_states
		cat "$SERIES_TOP/ci/check-tools.sh" "$SERIES_TOP/ci/lib/common.sh"
	} | sha256sum | cut -c1-32
}

check_tools_once() {
	local key stamp=$SERIES_WORK/cache/tools-ok
	key=$(tools_key)
	if [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
		note "the tool smoke test passed with these packages and PATH (${stamp#"$SERIES_TOP"/}): not run again"
		return 0
	fi
	"$SERIES_TOP/ci/check-tools.sh"
	mkdir -p "${stamp%/*}"
	printf '%s\n' "$key" >"$stamp"
}

main "$@"
