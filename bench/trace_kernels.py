#!/usr/bin/env python3
"""What a profiled training step's kernels are, by the PyTorch operation behind each: reads the
gzipped Chrome traces of bench/run_megatron.py --trace (or bench/run_plan.py's) and prints the
kernels other than GEMMs and attention grouped by the autograd function they ran under
("fwd" outside the backward), the ATen operation that launched them and the kernel's name
(its loop and functor), with their count, total and mean time.

    bench/trace_kernels.py [--top N] TRACE.trace.json.gz

A kernel is tied to its operation by the profiler's External id; the operation to its autograd
function by the innermost autograd::engine::evaluate_function event around it on the same
thread. The names tell PyTorch's loops apart: vectorized_elementwise_kernel is the
vectorised loop, elementwise_kernel the one for strided or broadcast operands,
unrolled_elementwise_kernel the one with a cast on its loads (docs/step-model.md, "Megatron-
Core's pointwise kernels, one by one").
"""
import argparse
import bisect
import collections
import gzip
import json
import re

SKIP = ("nvjet", "cudnn", "gemm", "cutlass", "flash", "fmha", "multi_tensor")
FUNCTOR = re.compile(r"(CUDAFunctor\w*<[\w:]+>|BinaryFunctor<[\w:]+|\w+_kernel_cuda|silu\w*|"
                     r"FillFunctor<[\w:]+>|direct_copy|bfloat16_copy)")


def short(name):
    """The kernel's template name, with the functor that tells its work apart."""
    n = name.replace("(anonymous namespace)::", "")
    m = re.search(r"(\w+)\s*<", n) or re.search(r"(\w+)\s*\(", n)
    base = m.group(1) if m else n[:40]
    f = FUNCTOR.search(n)
    return base + (":" + f.group(1) if f else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--top", type=int, default=50, help="groups to print, longest first")
    a = p.parse_args()
    events = json.load(gzip.open(a.trace))["traceEvents"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    by_id = {}
    for e in ops:
        by_id.setdefault(e["args"].get("External id"), e)
    threads = collections.defaultdict(list)
    for e in ops:
        threads[e["tid"]].append(e)
    for v in threads.values():
        v.sort(key=lambda e: e["ts"])
    starts = {t: [e["ts"] for e in v] for t, v in threads.items()}

    def function(op):
        v = threads[op["tid"]]
        for e in reversed(v[:bisect.bisect_right(starts[op["tid"]], op["ts"])]):
            if e["ts"] + e["dur"] < op["ts"] + op["dur"]:
                continue
            if e["name"].startswith("autograd::engine::evaluate_function"):
                return e["name"].split(": ", 1)[1]
        return "fwd"

    groups = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("cat") != "kernel" or any(s in e["name"] for s in SKIP):
            continue
        op = by_id.get(e["args"].get("External id"))
        if op is None:
            continue
        g = groups[(function(op), op["name"], short(e["name"]))]
        g[0] += 1
        g[1] += e["dur"]
    print("%10s %6s %10s  %-28s %-30s %s" % ("ms", "count", "mean us", "autograd function",
                                            "operation", "kernel"))
    for (fn, op, kernel), (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:a.top]:
        print("%10.3f %6d %10.1f  %-28s %-30s %s" % (us / 1e3, n, us / n, fn[:28], op[:30],
                                                    kernel[:70]))


if __name__ == "__main__":
    main()
