#!/usr/bin/python3
"""Usage: ndctl-compare.py OURS.json REFERENCE.json [DIFFERENCES.tsv]

Compares two `ndctl list -B -R -N -v` outputs (or two `daxctl list`
outputs: each device's mode, size, target node, alignment and memory
blocks) (the clients profile's
ndctl-list.json of the series' tip and of the reference) by what a user
sees of each device: per bus provider, each region's type, size,
persistence domain, NUMA and target node and alignment, and each of its
namespaces' mode and size; buses of one provider in the order of their
regions' sizes. Kernel-assigned names (region0, namespace1.0, ndbus2) are
left out, as they follow probe order. A difference listed in
DIFFERENCES.tsv (key, ours, reference, why; '#' comments) is one the series
means; any other is printed and makes the exit status 1.
"""
import json
import sys

from clientargs import check_args

REGION_KEYS = ("type", "size", "persistence_domain", "numa_node", "target_node", "align")
NAMESPACE_KEYS = ("mode", "size", "align")
DAXCTL_KEYS = ("mode", "size", "target_node", "align", "online_memblocks", "total_memblocks", "movable")


def buses(listing):
    if isinstance(listing, dict):
        listing = [listing]
    return listing


def bus_order(bus):
    """buses of one provider (two virtio-pmem devices) by their regions' sizes"""
    return (bus.get("provider", "?"), sorted(r.get("size", 0) for r in bus.get("regions", [])))


def facts(path):
    """{key: value} of what a user sees, keyed by provider and position"""
    with open(path, encoding="utf-8") as f:
        listing = json.load(f)
    out = {}
    seen = {}
    if all("chardev" in item for item in buses(listing)):
        return daxctl_facts(listing)
    for bus in sorted(buses(listing), key=bus_order):
        provider = bus.get("provider", "?")
        seen[provider] = seen.get(provider, -1) + 1
        bus_name = f"{provider}#{seen[provider]}"
        regions = sorted(bus.get("regions", []), key=lambda r: (r.get("size", 0), r.get("type", "")))
        for i, region in enumerate(regions):
            where = f"{bus_name}/region{i}"
            for key in REGION_KEYS:
                out[f"{where}.{key}"] = region.get(key, "-")
            namespaces = sorted(region.get("namespaces", []), key=lambda n: n.get("size", 0))
            out[f"{where}.namespaces"] = len(namespaces)
            for j, ns in enumerate(namespaces):
                for key in NAMESPACE_KEYS:
                    out[f"{where}/namespace{j}.{key}"] = ns.get(key, "-")
    return out


def daxctl_facts(listing):
    """a `daxctl list` output: each device's mode, size, node and memory blocks"""
    out = {}
    for i, dev in enumerate(sorted(buses(listing), key=lambda d: d.get("size", 0))):
        for key in DAXCTL_KEYS:
            out[f"daxctl/dev{i}.{key}"] = dev.get(key, "-")
    return out


def meant(path):
    """{key: (ours, reference)} of the differences the series means"""
    out = {}
    if not path:
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            key, ours, ref = line.rstrip("\n").split("\t")[:3]
            out[key] = (ours, ref)
    return out


def main(argv):
    status = check_args(argv, __doc__, (3, 4))
    if status is not None:
        return status
    try:
        ours, ref = facts(argv[1]), facts(argv[2])
        allowed = meant(argv[3] if len(argv) == 4 else None)
    except (OSError, ValueError) as err:
        print(f"ndctl-compare.py: {err}", file=sys.stderr)
        return 2
    unexplained = 0
    for key in sorted(set(ours) | set(ref)):
        a, b = str(ours.get(key, "absent")), str(ref.get(key, "absent"))
        if a == b:
            continue
        if allowed.get(key) == (a, b):
            print(f"meant: {key}: ours {a}, reference {b}")
            continue
        print(f"DIFFERENT: {key}: ours {a}, reference {b}")
        unexplained += 1
    if not ours:
        print(f"DIFFERENT: {argv[1]} lists no bus")
        unexplained += 1
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
