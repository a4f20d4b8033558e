#!/usr/bin/env python3
"""PyTorch's RMSNorm and LayerNorm (F.rms_norm, F.layer_norm, weights of the input's dtype)
forward and backward, in bf16 and fp32, at the row lengths of model widths: the kernels each
launches, with their grid and block, and the backward's time beside the forward's, which the
step model prices as a ratio of the forward (planner/workload/pricer.cpp, backward_ratio).

Each case is checked against float64 first (forward, and the backward against autograd in
float64 on the smaller cases); times are medians of triton.testing.do_bench (CUDA events, L2
flushed, 25 ms warm-up, 100 ms); the backward is timed alone (autograd.grad on a kept graph);
the kernels are the profiler's for one call.

    python3 bench/norm_probe.py --out norm_kernels.csv
"""
import argparse
import json
import os
import re
import sys
import tempfile

LENGTHS = [1024, 2048, 4096, 8192, 16384]
ROWS = [256, 4096, 32768]


def kernels(fn):
    """The kernels one call of fn launches: name (without namespaces or templates), grid and
    block, as the profiler's trace records them."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    p.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(path)
    out = []
    for e in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
        m = re.search(r"(\w+)\s*[<(]", e["name"].replace("(anonymous namespace)", ""))
        a = e.get("args", {})
        out.append("%s grid=%s block=%s" % (m.group(1) if m else e["name"].replace(",", ";"),
                                            "x".join(map(str, a.get("grid", []))),
                                            "x".join(map(str, a.get("block", [])))))
    return " | ".join(out)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    import torch
    import torch.nn.functional as F

    from ops import bench, check, write_measured  # bench/ops.py

    torch.manual_seed(0)
    rows = []
    for dtype, name in [(torch.bfloat16, "bf16"), (torch.float32, "fp32")]:
        for op in ["rmsnorm", "layernorm"]:
            for c in LENGTHS:
                for r in ROWS:
                    x = torch.randn(r, c, device="cuda", dtype=dtype, requires_grad=True)
                    w = torch.randn(c, device="cuda", dtype=dtype, requires_grad=True)
                    b = torch.randn(c, device="cuda", dtype=dtype, requires_grad=True)
                    params = (w,) if op == "rmsnorm" else (w, b)

                    def forward(x=x, w=w, b=b, op=op, c=c):
                        if op == "rmsnorm":
                            return F.rms_norm(x, (c,), w, eps=1e-6)
                        return F.layer_norm(x, (c,), w, b)

                    y = forward()
                    g = torch.randn_like(y)

                    def backward(y=y, g=g, x=x, params=params):
                        return torch.autograd.grad(y, (x,) + params, g, retain_graph=True)

                    if r * c <= 2 ** 23:
                        xd = x.detach().double().requires_grad_(True)
                        pd = [t.detach().double().requires_grad_(True) for t in params]
                        if op == "rmsnorm":
                            yd = F.rms_norm(xd, (c,), pd[0], eps=1e-6)
                        else:
                            yd = F.layer_norm(xd, (c,), pd[0], pd[1])
                        check(f"{op} {name} {r}x{c}", y.detach(), yd.detach(), 1e-2)
                        want = torch.autograd.grad(yd, [xd] + pd, g.double())
                        got = backward()
                        check(f"{op} backward {name} {r}x{c}", got[0], want[0], 2e-2)
                    with torch.no_grad():
                        fwd = bench(forward)
                    bwd = bench(backward)
                    with torch.no_grad():
                        fk = kernels(forward)
                    rows.append([op, f"{r}x{c}", name, f"{fwd:.6e}", f"{bwd:.6e}", fk,
                                 kernels(backward)])
                    print(",".join(rows[-1]), flush=True)
                    del x, w, b, y, g
                torch.cuda.empty_cache()
    write_measured(a.out, "PyTorch's RMSNorm and LayerNorm forward and backward, with the "
                   "kernels each launched (grid, block)",
                   "bench/norm_probe.py " + " ".join(argv),
                   "checked against float64 first; median of triton.testing.do_bench (CUDA "
                   "events, L2 flushed, 25 ms warm-up, 100 ms); backward alone (autograd.grad "
                   "on a kept graph)",
                   "op,shape,dtype,forward_s,backward_s,forward_kernels,backward_kernels", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
