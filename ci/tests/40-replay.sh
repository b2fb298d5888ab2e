#!/usr/bin/env bash
# ci/replay.sh on the real import: base lacks the in-tree feature, series/v4
# is the five patches on base, the topics merge to its tree, the pristine
# import keeps the reference, and a corrupted patch moves nothing.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

check "ci/replay.sh succeeds" "$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK"
tag=$(newest_import_tag)
check_eq "base is the newest import plus one commit" "$(mgit rev-parse "$tag^{commit}")" \
	"$(mgit rev-parse base~1)"
check "base lacks drivers/nvdimm/virtio_pmem.c" bash -c "! git -C '$(mirror_dir)' cat-file -e base:drivers/nvdimm/virtio_pmem.c 2>/dev/null"
check "base lacks VIRTIO_ID_PMEM" bash -c "! git -C '$(mirror_dir)' grep -q VIRTIO_ID_PMEM base -- include"
check "base lacks DAXDEV_SYNC, dax_synchronous and ND_REGION_ASYNC" \
	bash -c "! git -C '$(mirror_dir)' grep -q -E 'DAXDEV_SYNC|dax_synchronous|ND_REGION_ASYNC|is_nvdimm_sync' base -- drivers fs include arch"
check "the pristine import still has the merged driver" mgit cat-file -e "$tag:drivers/nvdimm/virtio_pmem.c"
check_eq "series/v4 is five commits on base" 5 "$(mgit rev-list --count base..series/v4)"
check_eq "series/v4 is linear" 0 "$(mgit rev-list --count --merges base..series/v4)"
check_eq "subjects follow the v3 split" \
	"libnvdimm:|virtio-pmem:|libnvdimm:|ext4:|xfs:" \
	"$(mgit log --reverse --format=%s base..series/v4 | cut -d' ' -f1 | paste -sd'|')"
check "series/v4 adds drivers/nvdimm/virtio_pmem.c" mgit cat-file -e series/v4:drivers/nvdimm/virtio_pmem.c
check "the driver uses the virtio spec's pmem device ID 27" \
	bash -c "git -C '$(mirror_dir)' show series/v4:include/uapi/linux/virtio_ids.h | grep -Eq 'VIRTIO_ID_PMEM[[:space:]]+27'"
merged=$(mgit merge-tree --write-tree topic/ext4-mapsync topic/xfs-mapsync)
check_eq "merging the leaf topics gives the tree of series/v4" "$(mgit rev-parse 'series/v4^{tree}')" "$merged"
check "series/v4 messages keep the changelog under ---" \
	bash -c "git -C '$(mirror_dir)' log -1 --format=%B series/v4 | grep -q '^Changes since v3:'"
check "topic messages are as git am leaves them (no changelog)" \
	bash -c "! git -C '$(mirror_dir)' log -1 --format=%B topic/xfs-mapsync | grep -q '^Changes since v3:'"
check "every series commit has the author's and the porter's Signed-off-by" bash -c "
	for c in \$(git -C '$(mirror_dir)' rev-list base..series/v4); do
		git -C '$(mirror_dir)' log -1 --format=%B \$c | grep -q '^Signed-off-by: Pankaj Gupta' || exit 1
		git -C '$(mirror_dir)' log -1 --format=%B \$c | grep -q '^Signed-off-by: Pmem Porting Team' || exit 1
	done"

# A deliberately corrupted copy of a real patch: named, and no ref moves.
sed '0,/^+#define VIRTIO_ID_PMEM/s//+#define VIRTIO_ID_PMEM_BROKEN/; 0,/^ #define VIRTIO_ID_FS/s// #define VIRTIO_ID_FSX/' \
	"$SERIES_TOP/patches/v4/0002-virtio-pmem-Add-virtio-pmem-driver.patch" >"$T/0002-corrupt.patch"
sed "s|patches/v4/0002-virtio-pmem-Add-virtio-pmem-driver.patch|$T/0002-corrupt.patch|" \
	"$SERIES_TOP/topic-branches.txt" >"$T/topics.txt"
before=$(mgit for-each-ref --format='%(refname) %(objectname)' | sort)
check_fails "a corrupted patch is named with its topic and hunk" \
	"topic virtio-pmem: patch .*0002-corrupt.patch does not apply: failing hunk in include/uapi/linux/virtio_ids.h" \
	"$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK" --topics "$T/topics.txt"
check_eq "a corrupted patch leaves every ref as it was" "$before" \
	"$(mgit for-each-ref --format='%(refname) %(objectname)' | sort)"

finish_test_file
