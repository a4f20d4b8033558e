#!/usr/bin/env python3
"""Summarises bench/overlap.py's measurements (data/benchmarks/*/overlap*.csv): how much a
collective is delayed beside GEMMs, against the remaining time of the GEMM it waits behind,
and how much compute is slowed beside a collective.

    python3 scripts/overlap_summary.py data/benchmarks/H200x2/overlap*.csv data/benchmarks/H200x4/overlap.csv

A collective launched beside a kernel that holds every SM starts when that kernel ends: on
each of r ranks the wait is the kernel's remaining time, uniform over its duration d, and the
collective starts on all ranks at the last of them, r / (r + 1) x d on average. `wait` is the
measured delay over that figure (1: the mechanism accounts for all of it).
"""
import csv
import statistics
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main(paths):
    waits, gemm_slow, stream_slow, beside_stream = [], [], [], []
    print(f"{'file':28s} {'collective':15s} {'MiB':>5s} {'alone':>8s} {'beside GEMM':>11s} "
          f"{'wait':>5s} {'GEMM':>6s} {'copy':>6s}")
    for path in paths:
        by = {}
        for r in rows(path):
            by[(r["collective"], int(r["bytes"]), r["compute"])] = r
        for (coll, size, compute), r in sorted(by.items()):
            if compute != "gemm":
                continue
            s = by.get((coll, size, "stream"))
            ranks = int(r["gpus"])
            d = float(r["compute_alone_s"])
            alone = float(r["collective_alone_s"])
            extra = float(r["collective_beside_s"]) - alone
            wait = extra / (d * ranks / (ranks + 1))
            waits.append(wait)
            gemm_slow.append(float(r["compute_slowdown"]))
            if s:
                stream_slow.append(float(s["compute_slowdown"]))
                beside_stream.append(float(s["collective_slowdown"]))
            print(f"{path[-28:]:28s} {coll:15s} {size >> 20:5d} {alone * 1e3:6.3f}ms "
                  f"{float(r['collective_beside_s']) * 1e3:9.3f}ms {wait:5.2f} "
                  f"x{float(r['compute_slowdown']):.3f} "
                  f"x{float(s['compute_slowdown']) if s else float('nan'):.3f}")
    print(f"wait (measured delay / r/(r+1) x GEMM): median {statistics.median(waits):.2f}, "
          f"quartiles {statistics.quantiles(waits, n=4)[0]:.2f}-{statistics.quantiles(waits, n=4)[2]:.2f} "
          f"over {len(waits)} rows")
    print(f"GEMMs beside a collective: median x{statistics.median(gemm_slow):.3f} "
          f"(x{min(gemm_slow):.3f}-x{max(gemm_slow):.3f}); memory-bound copies: median "
          f"x{statistics.median(stream_slow):.3f} (x{min(stream_slow):.3f}-x{max(stream_slow):.3f})")
    print(f"collectives beside memory-bound copies: median x{statistics.median(beside_stream):.3f} "
          f"(x{min(beside_stream):.3f}-x{max(beside_stream):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
