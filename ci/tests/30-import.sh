#!/usr/bin/env bash
# base/import.sh on the real linux-source-6.12 package: one tagged commit
# holding every file of the tarball, its sha256 recorded, a no-op re-run.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

check "base/import.sh succeeds" "$SERIES_TOP/base/import.sh" --work "$SERIES_WORK"
ver=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG")
tag=base/import/$(sed 's/~/_/g; s/:/%/g' <<<"$ver")
tarball=/usr/src/$LINUX_SOURCE_PKG.tar.xz
check "the import is tagged $tag" mgit rev-parse -q --verify "refs/tags/$tag"
want=$(tar -tf "$tarball" | grep -vc '/$')
got=$(mgit ls-tree -r --name-only "$tag" | wc -l)
check_eq "the import holds every file of the tarball ($want)" "$want" "$got"
check_eq "the commit message records the tarball's sha256" \
	"$(sha256sum "$tarball" | cut -d' ' -f1)" \
	"$(mgit log -1 --format=%B "$tag" | sed -n 's/^Tarball sha256: //p')"
check_eq "the commit message records the package version" "$ver" \
	"$(mgit log -1 --format=%B "$tag" | sed -n 's/^Package version: //p')"
check "Debian's top-level .gitignore is imported too" mgit cat-file -e "$tag:.gitignore"
check "the import holds drivers/nvdimm/virtio_pmem.c (the merged reference)" \
	mgit cat-file -e "$tag:drivers/nvdimm/virtio_pmem.c"
before=$(mgit rev-parse refs/heads/import)
out=$("$SERIES_TOP/base/import.sh" --work "$SERIES_WORK" 2>&1)
check_eq "re-importing the same package changes nothing" "$before" "$(mgit rev-parse refs/heads/import)"
grep -q 'nothing to do' <<<"$out" && pass "re-importing says there is nothing to do" ||
	fail "re-importing says there is nothing to do" "$out"

finish_test_file
