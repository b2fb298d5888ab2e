#!/usr/bin/env bash
# ci/replay.sh on the real import: base lacks the in-tree feature, series/v4
# is the nine patches on base, the topics merge to its tree, the pristine
# import keeps the reference, authorship is as kernel practice gives it, and
# a corrupted patch moves nothing.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T

check "ci/replay.sh succeeds" "$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK"
tag=$(newest_import_tag)
check_eq "base is the newest import plus one commit" "$(mgit rev-parse "$tag^{commit}")" \
	"$(mgit rev-parse base~1)"
check "base lacks drivers/nvdimm/virtio_pmem.c" bash -c "! git -C '$(mirror_dir)' cat-file -e base:drivers/nvdimm/virtio_pmem.c 2>/dev/null"
check "base lacks VIRTIO_ID_PMEM" bash -c "! git -C '$(mirror_dir)' grep -q VIRTIO_ID_PMEM base -- include"
check "base lacks DAXDEV_SYNC, dax_synchronous and ND_REGION_ASYNC" \
	bash -c "! git -C '$(mirror_dir)' grep -q -E 'DAXDEV_SYNC|dax_synchronous|ND_REGION_ASYNC|is_nvdimm_sync' base -- drivers fs include arch"
check "the pristine import still has the merged driver" mgit cat-file -e "$tag:drivers/nvdimm/virtio_pmem.c"
check_eq "series/v4 is nine commits on base" 9 "$(mgit rev-list --count base..series/v4)"
check_eq "series/v4 is linear" 0 "$(mgit rev-list --count --merges base..series/v4)"
check_eq "one subsystem per patch, the driver last" \
	"libnvdimm:|dax:|libnvdimm:|s390/dcssblk:|dm:|powerpc/papr_scm:|ext4:|xfs:|virtio-pmem:" \
	"$(mgit log --reverse --format=%s base..series/v4 | cut -d' ' -f1 | paste -sd'|')"
check "series/v4 adds drivers/nvdimm/virtio_pmem.c" mgit cat-file -e series/v4:drivers/nvdimm/virtio_pmem.c
check "the driver uses the virtio spec's pmem device ID 27" \
	bash -c "git -C '$(mirror_dir)' show series/v4:include/uapi/linux/virtio_ids.h | grep -Eq 'VIRTIO_ID_PMEM[[:space:]]+27'"
merged=$(mgit merge-tree --write-tree topic/papr-scm-flush topic/virtio-pmem)
check_eq "merging the leaf topics gives the tree of series/v4" "$(mgit rev-parse 'series/v4^{tree}')" "$merged"
# A topic on "import" is a stand-alone fix for the pristine kernel: one
# commit on the import tag, outside series/v4.
for fix in $(topics_on_import); do
	npatches=$(awk -v t="$fix" '$1 == t { print NF - 2 }' "$SERIES_TOP/topic-branches.txt")
	check_eq "topic/$fix is its $npatches patch(es) on the import" "$(mgit rev-parse "$tag^{commit}")" \
		"$(mgit rev-parse "topic/$fix~$npatches")"
	check "topic/$fix is not part of series/v4" bash -c "! git -C '$(mirror_dir)' merge-base --is-ancestor 'topic/$fix' series/v4"
	check_eq "no patch of series/v4 has topic/$fix's subject" "" \
		"$(mgit log --format=%s base..series/v4 | grep -xF "$(mgit log -1 --format=%s "topic/$fix")" || true)"
done
check "a topic list has a stand-alone fix" test -n "$(topics_on_import)"
grep -v '^#' "$SERIES_TOP/topic-branches.txt" | awk 'NF && $2 == "import"' >"$T/only-fixes.txt"
check_fails "a topic list with fixes only would make series/v4 empty, and is refused" \
	"no topic builds on base" "$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK" --topics "$T/only-fixes.txt"
check "series/v4 messages keep the changelog under ---" \
	bash -c "git -C '$(mirror_dir)' log -1 --format=%B series/v4 | grep -q '^Changes since v3:'"
check "topic messages are as git am leaves them (no changelog)" \
	bash -c "! git -C '$(mirror_dir)' log -1 --format=%B topic/fs-mapsync | grep -q '^Changes since v3:'"
check "every commit is the original author's (with his sign-off) or the sender's" bash -c "
	for c in \$(git -C '$(mirror_dir)' rev-list base..series/v4); do
		author=\$(git -C '$(mirror_dir)' log -1 --format='%an <%ae>' \$c)
		case \$author in
		'virtio-pmem series tooling <series-tooling@localhost>') ;;
		*) git -C '$(mirror_dir)' log -1 --format=%B \$c | grep -qF \"Signed-off-by: \$author\" || exit 1 ;;
		esac
	done"
check "rewritten patches credit Pankaj Gupta in the changelog, with a Link: to v3, and carry no trailer of his" bash -c "
	for c in \$(git -C '$(mirror_dir)' log --format=%H --author=series-tooling@localhost base..series/v4 -- drivers/nvdimm/virtio_pmem.c drivers/nvdimm/claim.c); do
		msg=\$(git -C '$(mirror_dir)' log -1 --format=%B \$c | sed '/^---\$/q')
		grep -q \"^Based on Pankaj Gupta's v3 patch\" <<<\"\$msg\" || exit 1
		grep -q '^Link: https://lore.kernel.org/.*pagupta' <<<\"\$msg\" || exit 1
		! grep -qE '^(Co-developed-by|Signed-off-by): Pankaj Gupta' <<<\"\$msg\" || exit 1
	done"
check "patches kept as their authors wrote them carry the sign-off they posted (v3, or the upstream commit)" bash -c "
	git -C '$(mirror_dir)' log --format='%an <%ae>|%B' base..series/v4 -- fs/ext4/file.c fs/xfs/xfs_file.c |
		grep -c '^Signed-off-by: Pankaj Gupta <pagupta@redhat.com>' | grep -qx 2 &&
	git -C '$(mirror_dir)' log -1 --format='%an <%ae>%n%B' topic/papr-scm-flush |
		grep -qx 'Signed-off-by: Shivaprasad G Bhat <sbhat@linux.ibm.com>'"
check "no placeholder identity in any commit of the series or in base's unmerge" bash -c "
	! git -C '$(mirror_dir)' log --format='%an %ae%n%B' base^..series/v4 | grep -qiE 'example\\.(org|com|net)|Porting Team'"

# A deliberately corrupted copy of a real patch: named, and no ref moves.
sed '0,/^+#define VIRTIO_ID_PMEM/s//+#define VIRTIO_ID_PMEM_BROKEN/; 0,/^ #define VIRTIO_ID_FS/s// #define VIRTIO_ID_FSX/' \
	"$SERIES_TOP/patches/v4/0009-virtio-pmem-add-the-virtio-pmem-driver.patch" >"$T/0009-corrupt.patch"
sed "s|patches/v4/0009-virtio-pmem-add-the-virtio-pmem-driver.patch|$T/0009-corrupt.patch|" \
	"$SERIES_TOP/topic-branches.txt" >"$T/topics.txt"
before=$(refs_snapshot "$(mirror_dir)")
check_fails "a corrupted patch is named with its topic and hunk" \
	"topic virtio-pmem: patch .*0009-corrupt.patch does not apply: failing hunk in include/uapi/linux/virtio_ids.h" \
	"$SERIES_TOP/ci/replay.sh" --work "$SERIES_WORK" --topics "$T/topics.txt"
check_eq "a corrupted patch leaves every ref as it was" "$before" \
	"$(refs_snapshot "$(mirror_dir)")"

finish_test_file
