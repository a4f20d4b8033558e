#!/usr/bin/env python3
"""How causal attention's tiles of unequal work share the units, read off the H200's measured
rows: each candidate form of the kernel's work per unit (in blocks of 128 x 128 scores) is
fitted with a fixed time beside it (least relative squares, two parameters) and its MAPE
printed. The forward is priced with the form that fits best (costmodel/gpu_kernel.cpp,
attention_kernel), the backward from the forward without the tail the backward's rows reject
(docs/validation.md, "Causal attention's tiles are unequal").

    python3 scripts/attention_tile_forms.py [--units 132]
"""
import argparse
import heapq
import math
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "benchmarks", "H200")
FORWARD_FILES = ["ops.csv", "ops_attention_backward.csv", "ops_unseen.csv"]
BACKWARD_FILES = ["ops_attention_backward.csv", "ops_attention_head_dims.csv"]


def rows(files, op):
    """(batch, heads, q_tiles, seconds) of the bf16 rows of `op` at head dimension 128."""
    out = []
    for name in files:
        for line in open(os.path.join(ROOT, name)):
            cell = line.strip().split(",")
            if len(cell) < 6 or cell[1] != op or cell[4] != "bf16":
                continue
            batch, heads, _kv, q, _k, d = map(int, cell[3].split("x"))
            if d == 128:
                out.append((batch, heads, math.ceil(q / 128), float(cell[5])))
    return out


def waves(b, h, qt, units):
    """Whole waves of the average tile (the model before)."""
    return math.ceil(b * h * qt / units) * (qt + 1) / 2


def share(b, h, qt, units, tail):
    """The units' average share, then `tail` of the longest tile."""
    return b * h * qt * (qt + 1) / 2 / units + tail * qt


def longest_bound(b, h, qt, units):
    return max(qt, b * h * qt * (qt + 1) / 2 / units)


def longest_first(b, h, qt, units):
    loads = [0.0] * units
    for w in range(qt, 0, -1):
        for _ in range(b * h):
            heapq.heappush(loads, heapq.heappop(loads) + w)
    return max(loads)


def fit(points):
    """Fixed time a and per-block time c minimising sum((a + c x) / y - 1)^2; the MAPE."""
    u = [1 / y for _, y in points]
    v = [x / y for x, y in points]
    suu = sum(p * p for p in u)
    svv = sum(p * p for p in v)
    suv = sum(p * q for p, q in zip(u, v))
    det = suu * svv - suv * suv
    a = (sum(u) * svv - sum(v) * suv) / det
    c = (sum(v) * suu - sum(u) * suv) / det
    errors = [abs(a * p + c * q - 1) for p, q in zip(u, v)]
    return a, c, 100 * sum(errors) / len(errors)


def report(title, data, forms, units):
    print(f"{title}: {len(data)} rows")
    for name, form in forms:
        a, c, mape = fit([(form(b, h, qt, units), t) for b, h, qt, t in data])
        print(f"  {name:<34} fixed {a * 1e6:6.2f} us  per block {c * 1e6:6.3f} us  MAPE {mape:5.2f}%")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--units", type=int, default=132, help="the GPU's SMs (H200: 132)")
    args = p.parse_args()
    report("causal forward (" + ", ".join(FORWARD_FILES) + ")",
           rows(FORWARD_FILES, "attention_causal"),
           [("whole waves of the average tile", waves),
            ("average share + half the longest", lambda b, h, q, u: share(b, h, q, u, 0.5)),
            ("the longest tile's bound", longest_bound),
            ("longest first", longest_first)], args.units)
    report("backward (" + ", ".join(BACKWARD_FILES) + ")",
           rows(BACKWARD_FILES, "attention_backward"),
           [("whole waves of the average tile", waves),
            ("average share, no tail", lambda b, h, q, u: share(b, h, q, u, 0)),
            ("average share + half the longest", lambda b, h, q, u: share(b, h, q, u, 0.5))],
           args.units)


if __name__ == "__main__":
    main()
