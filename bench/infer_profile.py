#!/usr/bin/env python3
"""Where a prefill's time goes: bench/run_infer.py's model on one GPU, its prefill of `batch`
sequences of `context` tokens timed as run_infer.py times it (CUDA events around one eager
call, median of --reps after one warm-up) and then once under torch.profiler, with every GPU
kernel's time summed by kernel name, and the host's time to issue the call (the forward
without a synchronisation, timed on the host's clock).

    python3 bench/infer_profile.py CLUSTER TASK --configs 1x1024,8x1024,32x4096 --out OUT.csv

OUT.csv has one row per (configuration, kernel): batch, context, the measured time to first
token, the host's issue time, the kernel's name (quoted), its launches and its summed time.
The kernel name is what the profiler reports; `bench/infer_profile.py --summary OUT.csv`
groups the names into the kinds the model prices (gemm, attention, quantize, elementwise...).
"""
import argparse
import csv
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402

# Kernel-name fragments, first match wins, to the model's operation kinds.
KINDS = [("quant", "quantize"), ("flash", "attention"), ("fmha", "attention"),
         ("attention", "attention"), ("gemm", "gemm"), ("sm90_xmma", "gemm"),
         ("cutlass", "gemm"), ("nvjet", "gemm"), ("splitk", "gemm"), ("rms", "norm"),
         ("norm", "norm"), ("cat", "copy"), ("copy", "copy"), ("embedding", "gather"),
         ("index", "gather"), ("elementwise", "elementwise"), ("vectorized", "elementwise"),
         ("reduce", "reduce"), ("nccl", "collective")]


def kind(name):
    low = name.lower()
    return next((k for frag, k in KINDS if frag in low), "other")


def summary(path):
    totals = {}
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        key = (r["task"], int(r["batch"]), int(r["context"]), float(r["ttft_s"]),
               float(r["host_s"]))
        per = totals.setdefault(key, {})
        k = kind(r["kernel"])
        calls, t = per.get(k, (0, 0.0))
        per[k] = (calls + int(r["calls"]), t + float(r["total_s"]))
    for (task, b, ctx, ttft, host), per in sorted(totals.items()):
        gpu = sum(t for _, t in per.values())
        print(f"{task} b={b} ctx={ctx}: ttft {ttft * 1e3:.3f} ms, kernels {gpu * 1e3:.3f} ms, "
              f"host issue {host * 1e3:.3f} ms")
        for k, (calls, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
            print(f"  {k:12s} {calls:6d} launches {t * 1e3:10.3f} ms")
    return 0


def profile(model, b, ctx, reps, seed):
    import torch
    from torch.profiler import ProfilerActivity, profile as prof
    m = model.m
    cache = torch.empty((m["layers"], 2, b, model.kvh, ctx + 1, model.hd), device="cuda",
                        dtype=torch.bfloat16)
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    tokens = torch.randint(0, m["vocab"], (b, ctx), device="cuda", generator=g)
    cos, sin = model.rope(torch.arange(ctx, device="cuda"))
    run = lambda: model.forward(tokens, cache, 0, cos, sin, decode=False)  # noqa: E731
    with torch.no_grad():
        run()
        ttft = sc.time_events(run, reps)
        torch.cuda.synchronize()
        hosts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            run()
            hosts.append(time.perf_counter() - t0)
            torch.cuda.synchronize()
        with prof(activities=[ProfilerActivity.CUDA]) as p:
            run()
            torch.cuda.synchronize()
    per = {}
    for e in p.events():
        if e.device_type.name == "CUDA" and e.device_time > 0:
            calls, t = per.get(e.name, (0, 0.0))
            per[e.name] = (calls + 1, t + e.device_time * 1e-6)
    del cache, tokens
    return ttft, statistics.median(hosts), per


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cluster", nargs="?")
    p.add_argument("task", nargs="?")
    p.add_argument("--configs", default="1x1024,8x1024,32x4096,1x16384")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default="infer_profile.csv")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--summary", help="print the kinds' totals of a written file and exit")
    a = p.parse_args(argv)
    if a.summary:
        return summary(a.summary)
    import torch
    from run_infer import Model, weights_precision
    from run_plan import probe_gqa_mode, provenance
    sc.init_distributed()
    task = sc.load_task(a.task)
    torch.manual_seed(a.seed)
    model = Model(task["model"], 1, 0, probe_gqa_mode(), fp8=weights_precision(task) == "fp8")
    prov = provenance(argv)
    prov[0] = "measured by bench/infer_profile.py: a prefill's kernels on one GPU"
    prov[-1] = "command: " + " ".join(["bench/infer_profile.py"] + argv)
    new = not os.path.exists(a.out)
    with open(a.out, "a", newline="") as f:
        if new:
            f.writelines(f"# {line}\n" for line in prov)
        w = csv.writer(f)
        if new:
            w.writerow(["task", "batch", "context", "ttft_s", "host_s", "kernel", "calls",
                        "total_s"])
        for cfg in a.configs.split(","):
            b, ctx = (int(x) for x in cfg.split("x"))
            ttft, host, per = profile(model, b, ctx, a.reps, a.seed)
            for name, (calls, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
                w.writerow([task["name"], b, ctx, f"{ttft:.6e}", f"{host:.6e}", name, calls,
                            f"{t:.6e}"])
            print(f"{task['name']} b={b} ctx={ctx}: ttft {ttft * 1e3:.3f} ms host "
                  f"{host * 1e3:.3f} ms kernels {sum(t for _, t in per.values()) * 1e3:.3f} ms",
                  flush=True)
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
