#!/usr/bin/env python3
"""Runs the CUDA kernels that `yirage-plan CLUSTER TASK --emit-kernels DIR` wrote, on one GPU:
each kernel of DIR/manifest.json with backend cuda is built with nvcc for sm_90a, run on
random fp16 data at the plan's shape, checked against the program in float64 and timed as
bench/kernels.py times (CUDA-graph replay; weights rotated over sets > 2x L2; median of
batches: 50 of 20 calls, or 5 of 2 for a kernel over 1 ms). Prints one line per kernel and writes a CSV with provenance lines.

    yirage-plan data/clusters/mixed-h100-mi300x-910b.yaml data/tasks/llama3-8b-decode.yaml \\
        --emit-kernels DIR
    python3 bench/check_emitted.py DIR --out emitted.csv
"""
import argparse
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="the --emit-kernels directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", default="/tmp/yirage_emitted")
    args = ap.parse_args()
    os.makedirs(args.build, exist_ok=True)
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    rows, bad = [], []
    for k in manifest["kernels"]:
        if k["backend"] != "cuda" or "file" not in k:
            continue
        program = k["operation"]
        m, kk, n = k["shape"]
        nw = 2 if program == "gated_mlp" else 1
        src = os.path.join(args.dir, k["file"])
        entry = os.path.splitext(os.path.basename(src))[0]
        sets = kernels.make_sets(m, kk, n, nw)
        outs = [torch.empty(m, n, device="cuda", dtype=torch.half) for _ in sets]
        gen = kernels.Generated(kernels.build_source(src, args.build), entry)
        step = lambda i: gen.launch([sets[i][0]] + sets[i][1], [outs[i]])
        step(0)
        torch.cuda.synchronize()
        err = kernels.rel_err(outs[0], kernels.reference(program, sets[0][0], sets[0][1]))
        # Slow kernels (the library path at training shapes) get fewer, shorter batches.
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(1 % len(sets))
        b.record()
        b.synchronize()
        slow = a.elapsed_time(b) > 1.0  # ms
        saved = kernels.CALLS, kernels.REPEATS, kernels.WARMUP
        if slow:
            kernels.CALLS, kernels.REPEATS, kernels.WARMUP = 2, 5, 2
        t = kernels.time_graph(step, sets)
        kernels.CALLS, kernels.REPEATS, kernels.WARMUP = saved
        ok = err < kernels.TOLERANCE
        path = "fused µGraph" if k["ugraph_fused"] else "library kernels"
        print("%-16s %-22s %-16s %10.2f us  err %.1e%s  (model: %.2f us)" % (
            program, "x".join(map(str, k["shape"])), path, t * 1e6, err, "" if ok else " WRONG",
            k["ugraph_priced_s"] * 1e6), flush=True)
        rows.append("%s,%s,%s,%.4e,%.4e,%.2e,%s" % (program, "x".join(map(str, k["shape"])), path,
                                                  t, k["ugraph_priced_s"], err,
                                                  "yes" if ok else "no"))
        if not ok:
            bad.append(entry)
        del sets, outs, gen
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        f.write(kernels.provenance("Kernels written by yirage-plan --emit-kernels, run on one GPU "
                                   "(bench/check_emitted.py); plan %s on %s." % (
                                       manifest["plan"], manifest["cluster"]),
                                   "bench/check_emitted.py"))
        f.write("# method: as bench/kernels.py; fp16; err against float64 (pass below %g)\n"
                % kernels.TOLERANCE)
        f.write("operation,shape,path,kernel_s,model_s,err,correct\n")
        f.write("\n".join(rows) + "\n")
    if bad:
        print("INCORRECT: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
