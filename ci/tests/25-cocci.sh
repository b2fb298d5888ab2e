#!/usr/bin/env bash
# Our semantic patches (cocci/): each reports its bad fixture and not its
# good one; over the v3 driver of the seeds they report the v3 bugs they
# target; over our v4 driver they report nothing.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/testlib.sh"

make_temp_dir T
SEEDS=$(seeds_dir)

for rule in "$SERIES_TOP"/cocci/*.cocci; do
	name=$(basename "$rule" .cocci)
	mkdir -p "$T/rules/$name"
	cp "$rule" "$T/rules/$name/"
	bad=$SERIES_TOP/cocci/tests/$name.bad.c good=$SERIES_TOP/cocci/tests/$name.good.c
	if [ ! -f "$bad" ] || [ ! -f "$good" ]; then
		fail "$name has a bad and a good fixture"
		continue
	fi
	check_fails "$name reports its bad fixture" "$name.bad.c:[0-9]+" \
		"$SERIES_TOP/cocci/run.sh" --rules "$T/rules/$name" "$bad"
	check "$name reports nothing on its good fixture" "$SERIES_TOP/cocci/run.sh" --rules "$T/rules/$name" "$good"
done

# The v3 driver, as the seed patch creates it; --which names the rules
# that reported, and those alone report the same.
v3_driver_checks() {
	mkdir -p "$T/v3" && git -C "$T/v3" init -q
	git -C "$T/v3" apply --include=drivers/nvdimm/virtio_pmem.c --include=drivers/virtio/pmem.c "$SEEDS/003-patch-virtio-pmem-add-virtio-pmem-driver.patch"
	v3=$("$SERIES_TOP/cocci/run.sh" "$T"/v3/drivers/nvdimm/virtio_pmem.c "$T"/v3/drivers/virtio/pmem.c || true)
	for want in "virtio_pmem.c:.*list_del\(\) of list head 'req_list'" \
		"virtio_pmem.c:.*list head 'req_list' passed as the new entry" \
		"pmem.c:.*kfree\(\) of devm-allocated memory" \
		"pmem.c:.*dereference before the NULL check" \
		"pmem.c:.*goto out_vq on failure with err still 0"; do
		grep -qE "$want" <<<"$v3" && pass "v3 driver: reports /$want/" || fail "v3 driver: reports /$want/" "$v3"
	done

	"$SERIES_TOP/cocci/run.sh" --which "$T/which" "$T"/v3/drivers/virtio/pmem.c >"$T/all.txt" || true
	check_eq "--which names each rule that reported on the v3 pmem.c" \
		"deref_before_check.cocci devm_kfree.cocci goto_err_unset.cocci" \
		"$(xargs -n1 basename <"$T/which" | sort | paste -sd' ')"
	mapfile -t only < <(sed 's/^/--rules\n/' "$T/which" | tr -s '\n' '\n')
	"$SERIES_TOP/cocci/run.sh" "${only[@]}" "$T"/v3/drivers/virtio/pmem.c >"$T/only.txt" || true
	check_eq "the rules --which named report what all of them did" "$(cat "$T/all.txt")" "$(cat "$T/only.txt")"
}
if why=$(prereq_missing seeds); then
	skip "the rules over the v3 driver of the seeds" "$why"
else
	v3_driver_checks
fi

# Our v4 driver, from the series' patches.
mkdir -p "$T/v4" && git -C "$T/v4" init -q
for p in "$SERIES_TOP"/patches/v4/*.patch; do
	git -C "$T/v4" apply --include='drivers/nvdimm/virtio_pmem.c' "$p"
done
check "v4 driver: the series creates it" test -s "$T/v4/drivers/nvdimm/virtio_pmem.c"
check "v4 driver: our rules report nothing" "$SERIES_TOP/cocci/run.sh" "$T/v4/drivers/nvdimm/virtio_pmem.c"

finish_test_file
