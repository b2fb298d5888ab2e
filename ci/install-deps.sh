#!/usr/bin/env bash
# Usage: ci/install-deps.sh [--help]
#
# Installs with apt-get the Debian 12 packages that the pipeline needs:
# kernel source and build tools, QEMU, busybox, filesystem tools, sparse,
# coccinelle and b4. Packages already present are left alone, so a second
# run costs only the dpkg query.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

PACKAGES=(
	linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	cpio xz-utils file kmod python3 perl git git-filter-repo
	qemu-system-x86 busybox-static e2fsprogs xfsprogs
	sparse coccinelle ocaml-nox b4 util-linux python3-ply python3-git
	mmdebstrap ccache
)

missing_packages() {
	local p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			printf '%s\n' "$p"
	done
}

main() {
	case "${1:-}" in
	-h | --help) usage_from_header "$0"; exit 0 ;;
	"") ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
	local todo
	mapfile -t todo < <(missing_packages)
	if [ ${#todo[@]} -eq 0 ]; then
		note "all ${#PACKAGES[@]} packages present"
		return 0
	fi
	note "installing: ${todo[*]}"
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${todo[@]}"
}

main "$@"
