#!/usr/bin/python3
"""Usage: fio-figures.py GUEST-DIR [TRACE-LOG]

The figures of one clients-profile boot, from fio's own JSON
(GUEST-DIR/fio-NAME.json) and, for the host's side, QEMU's trace log
(default GUEST-DIR/../trace.log) cut into each run's span by
GUEST-DIR/runs.tsv. Prints "figure<TAB>value" lines:
  fsync_p50_us, fsync_p99_us       fio's sync latency percentiles at 1 job
  fsyncs_per_s_J                   fsyncs per second at J jobs (psync runs)
  host_flushes_per_fsync_J         host fsyncs of the backing file (QEMU's
                                   virtio_pmem_flush_done) per guest fsync
  uring_fsyncs_per_s               the io_uring overflow reproducer's rate
  dax_write_mib_s, dax_read_mib_s  fio's mmap engine on the DAX file
Exits 2 when a JSON file cannot be read or names an error.
"""
import json
import os
import sys

from clientargs import check_args


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # fio prints notes before the JSON when a job warns
    doc = json.loads(text[text.index("{"):])
    job = doc["jobs"][0]
    if job.get("error"):
        raise ValueError(f"{path}: fio job error {job['error']}")
    return job


def spans(guest):
    out = {}
    path = os.path.join(guest, "runs.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, start, end, _rc = line.rstrip("\n").split("\t")
                out[name] = (int(start), int(end))
    return out


def host_fsyncs(trace, span):
    """QEMU's fsyncs of the backing file (virtio_pmem_flush_done) in SPAN"""
    start, end = span
    count = 0
    with open(trace, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if start < number <= end and "virtio_pmem_flush_done" in line:
                count += 1
    return count


def sync_rate(job):
    seconds = job["write"]["runtime"] / 1000.0
    return job["sync"]["total_ios"] / seconds if seconds else 0.0


def figures(guest, trace):
    runs = spans(guest)
    out = []
    for jobs in (1, 8, 64):
        path = os.path.join(guest, f"fio-psync-{jobs}.json")
        if not os.path.exists(path):
            continue
        job = load(path)
        if jobs == 1:
            pct = job["sync"]["lat_ns"]["percentile"]
            out.append(("fsync_p50_us", pct["50.000000"] / 1000.0))
            out.append(("fsync_p99_us", pct["99.000000"] / 1000.0))
        out.append((f"fsyncs_per_s_{jobs}", sync_rate(job)))
        span = runs.get(f"fio-psync-{jobs}")
        if span and os.path.exists(trace) and job["sync"]["total_ios"]:
            out.append((f"host_flushes_per_fsync_{jobs}",
                        host_fsyncs(trace, span) / job["sync"]["total_ios"]))
    path = os.path.join(guest, "fio-uring-overflow.json")
    if os.path.exists(path):
        out.append(("uring_fsyncs_per_s", sync_rate(load(path))))
    for name, ddir in (("dax_write_mib_s", "write"), ("dax_read_mib_s", "read")):
        path = os.path.join(guest, f"fio-mmap-{ddir}.json")
        if os.path.exists(path):
            out.append((name, load(path)[ddir]["bw"] / 1024.0))
    return out


def main(argv):
    status = check_args(argv, __doc__, (2, 3))
    if status is not None:
        return status
    guest = argv[1]
    trace = argv[2] if len(argv) == 3 else os.path.join(guest, "..", "trace.log")
    try:
        for name, value in figures(guest, trace):
            print(f"{name}\t{value:.3f}")
    except (OSError, ValueError, KeyError) as err:
        print(f"fio-figures.py: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
