#!/usr/bin/env python3
"""Converts the measured all-reduce tables published in the vidur and vTrain repositories
(kept in ../shared/validation/, MIT-licensed) into yirage's measured-CSV format
(data/benchmarks/README.md). Single-node rows only: the inter-node networks of those
clusters are not documented upstream. Run from the repository root:

    python3 scripts/convert_reference_collectives.py ../shared/validation data/benchmarks/reference
"""
import csv
import os
import sys

HEADER = ["kind", "op", "device", "fabric", "ranks", "ranks_per_node", "bytes", "dtype",
          "launch", "time_s", "stat"]


def write(path, provenance, rows):
    with open(path, "w", newline="") as f:
        for line in provenance:
            f.write("# " + line + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        for r in rows:
            w.writerow(r)


def vidur(src, dst, name, device, commit):
    rows = []
    with open(os.path.join(src, "vidur", name + "_all_reduce.csv")) as f:
        for r in csv.DictReader(f):
            if r["num_workers"] != r["devices_per_node"]:
                continue  # multi-node: network undocumented
            n = int(r["num_workers"])
            t = float(r["time_stats.all_reduce.median"]) * 1e-3
            # kernel time from the profiler: no host launch in it, as in a CUDA-graph replay
            rows.append(["collective", "all_reduce", device, "nvswitch", n, n, int(r["size"]), "",
                         "graph", "%.6g" % t, "median"])
    rows.sort(key=lambda r: (r[4], r[6]))
    write(os.path.join(dst, "vidur_%s_all_reduce.csv" % name), [
        "Measured all-reduce on one %s node (NCCL through torch.distributed, kernel time)." % name,
        "device: %s, one node, NVSwitch; software: NCCL via PyTorch (versions not published)" % device,
        "source: github.com/microsoft/vidur commit %s, network profiling table %s all_reduce" % (commit, name),
        "license: MIT (vidur); copied as data, with this provenance note",
        "stat: median of the profiled runs (kernel time: launch 'graph'); size in bytes; single-node rows only",
        "converted by: scripts/convert_reference_collectives.py",
    ], rows)


def vtrain(src, dst, commit):
    rows = []
    for n in range(2, 9):
        with open(os.path.join(src, "vtrain", "a100_allreduce_nccltests_%dgpu.csv" % n)) as f:
            r = csv.reader(f)
            next(r)
            for line in r:
                size = int(line[0])
                mib = size // (1 << 20)
                # Keep powers of two and every 16 MiB: a spread over the range, not all 1024.
                if mib & (mib - 1) != 0 and mib % 16 != 0:
                    continue
                rows.append(["collective", "all_reduce", "A100-80GB", "nvswitch", n, n, size,
                             line[2], "eager", "%.6g" % (float(line[3]) * 1e-9), "mean"])
    write(os.path.join(dst, "vtrain_a100_all_reduce.csv"), [
        "nccl-tests all_reduce_perf on one A100 node (8 GPUs, NVSwitch), 2 to 8 GPUs.",
        "device: A100 SXM (80 GB assumed; the memory size does not affect collectives)",
        "source: github.com/VIA-Research/vTrain commit %s, a100_allreduce_nccltests_{2..8}gpu.csv" % commit,
        "license: MIT (vTrain); copied as data, with this provenance note",
        "stat: nccl-tests out-of-place average time (eager launches); sizes: powers of two and multiples of 16 MiB",
        "converted by: scripts/convert_reference_collectives.py",
    ], rows)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    vidur(src, dst, "h100_dgx", "H100-SXM", "7d47513363ec447a741ac5e47241580b47724fbf")
    vidur(src, dst, "a100_dgx", "A100-80GB", "7d47513363ec447a741ac5e47241580b47724fbf")
    vtrain(src, dst, "f8dda8473a48b373b1d25f51f52d685bff5150c5")


if __name__ == "__main__":
    main()
