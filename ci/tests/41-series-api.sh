#!/usr/bin/env bash
# What the series must keep of the merged kernel's interfaces, checked on the
# trees of series/v4 and of the pristine import (the reference), without
# booting: every definition of the reference's uapi header still compiles
# against the tip's uapi headers, and papr_scm flushes regions that need
# H_SCM_FLUSH through the nd_region callback and marks them asynchronous, as
# the reference does. Each check runs on the reference first, so a check
# that cannot pass anywhere is caught.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
UAPI=include/uapi/linux/virtio_pmem.h
PAPR=arch/powerpc/platforms/pseries/papr_scm.c

# uapi_names REV: "define NAME" and "struct NAME" lines of REV's uapi header
uapi_names() {
	mgit show "$1:$UAPI" | sed -nE \
		-e 's/^#define[[:space:]]+([A-Z0-9_]+)[[:space:]].*/define \1/p' \
		-e 's/^struct[[:space:]]+([a-z0-9_]+)[[:space:]]*\{.*/struct \1/p' |
		grep -v '_UAPI_LINUX_VIRTIO_PMEM_H'
}

# uapi_probe_source NAMES-FILE: a C file that fails to compile when one of
# the names is missing
uapi_probe_source() {
	local kind name
	printf '#include <linux/virtio_pmem.h>\n'
	while read -r kind name; do
		case "$kind" in
		define) printf '#ifndef %s\n#error "%s is missing"\n#endif\n' "$name" "$name" ;;
		struct) printf 'struct %s probe_%s;\n' "$name" "$name" ;;
		esac
	done <"$1"
}

# keeps_uapi REV: REV's uapi header, installed over the system's others as
# headers_install would (it has no __KERNEL__ part), defines every name of
# the reference's
keeps_uapi() {
	local rev=$1 dir=$T/uapi-$1
	rm -rf "$dir"
	mkdir -p "$dir/linux"
	mgit show "$rev:$UAPI" >"$dir/linux/virtio_pmem.h"
	! grep -q '__KERNEL__' "$dir/linux/virtio_pmem.h" || return 1
	uapi_probe_source "$T/names" >"$dir/probe.c"
	gcc -fsyntax-only -Werror -I"$dir" "$dir/probe.c" 2>"$dir/gcc.err" ||
		{ cat "$dir/gcc.err" >&2; return 1; }
}

# papr_flushes_async REV: in REV's papr_scm.c, the branch taken for a region
# that needs H_SCM_FLUSH sets a flush callback and ND_REGION_ASYNC, and the
# callback issues H_SCM_FLUSH
papr_flushes_async() {
	local src
	src=$(mgit show "$1:$PAPR")
	awk '/if \(p->hcall_flush_required\)/ { inside = 1; depth = 0 }
		inside { block = block $0 "\n"; depth += gsub(/\{/, "{"); depth -= gsub(/\}/, "}")
			if (depth <= 0 && block ~ /\}/) exit }
		END { exit !(block ~ /ndr_desc\.flush = [a-z_]+;/ && block ~ /set_bit\(ND_REGION_ASYNC, &ndr_desc\.flags\)/) }' \
		<<<"$src" || return 1
	grep -q 'plpar_hcall(H_SCM_FLUSH' <<<"$src"
}

reference=$(newest_import_tag)
uapi_names "$reference" >"$T/names"
check "the reference's uapi header defines the feature bit and region id" \
	grep -qx 'define VIRTIO_PMEM_F_SHMEM_REGION' "$T/names"
check "every reference uapi definition compiles against the reference" keeps_uapi "$reference"
check "every reference uapi definition compiles against series/v4" keeps_uapi series/v4
check "the reference's papr_scm flushes H_SCM_FLUSH regions asynchronously" papr_flushes_async "$reference"
check "series/v4's papr_scm flushes H_SCM_FLUSH regions asynchronously" papr_flushes_async series/v4
lacks_papr_flush() { ! papr_flushes_async "$1"; }
check "base lacks it (the unmerge removed it), so the check can fail" lacks_papr_flush base

finish_test_file
