#!/usr/bin/env python3
"""The kernels of causal attention's forward and backward, one by one, at the shapes of
bench/ops.py --only attention_backward: what cuDNN's flash backward runs beside its main
kernel (the dO.O product before it, dQ's conversion to 16 bits after it), and how far each
pass's time between CUDA events stands above its kernels (the host's dispatch of autograd).

    python3 bench/attention_kernels.py --device H200 --out attention_kernels.csv

Per shape (batch x heads x KV heads x queries x keys x head dimension, bf16,
F.scaled_dot_product_attention with is_causal and GQA): three warm-up calls of each pass,
then --calls calls under torch.profiler, each kernel's device time summed and divided by
the calls; then the same calls back to back between two CUDA events (`(wall)` rows), the
median of five such timings. Checked against float64 first where small enough.
"""
import argparse
import subprocess
import sys

import torch
import torch.nn.functional as F

import steps_common as sc

SHAPES = [(b, h, kv, l) for h, kv in [(32, 8), (64, 8), (16, 4), (8, 2), (32, 32)]
          for b, l in [(1, 1024), (4, 1024), (1, 2048), (2, 2048), (1, 4096), (2, 4096),
                       (1, 8192), (1, 16384)]]


def kernel_times(fn, calls):
    """{kernel name: device seconds per call} of `calls` calls of fn under the profiler."""
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    out = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = getattr(e, "device_time", None)
        if t is None:
            t = e.cuda_time
        out[e.name] = out.get(e.name, 0.0) + t * 1e-6 / calls
    return out


def check(q, k, v, out, grad):
    ref = [x.detach().double().requires_grad_(True) for x in (q, k, v)]
    want = F.scaled_dot_product_attention(*ref, is_causal=True, enable_gqa=True)
    assert torch.allclose(out.double(), want, atol=2e-2, rtol=2e-2), "forward"
    got = torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
    for g, w in zip(got, torch.autograd.grad(want, ref, grad.double())):
        assert torch.allclose(g.double(), w, atol=3e-2, rtol=3e-2), "backward"


def measure(b, h, kv, l, d, calls):
    q = torch.randn(b, h, l, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, l, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, l, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # noqa: E731
    out = fwd()
    grad = torch.randn_like(out)
    if b * h * l * l <= 2 ** 26:
        check(q, k, v, out, grad)
    bwd = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)  # noqa: E731
    rows = []
    shape = f"{b}x{h}x{kv}x{l}x{l}x{d}"
    for name, fn in [("forward", fwd), ("backward", bwd)]:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        for kernel, t in sorted(kernel_times(fn, calls).items()):
            rows.append([shape, name, kernel, t])
        rows.append([shape, name, "(wall)", sc.time_events(fn, 5, calls)])
    del q, k, v, out, grad
    torch.cuda.empty_cache()
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", required=True, help="the registry's name, e.g. H200")
    p.add_argument("--out", default="attention_kernels.csv")
    p.add_argument("--calls", type=int, default=10)
    args = p.parse_args(argv)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout
    rows = []
    for b, h, kv, l in SHAPES:
        rows += measure(b, h, kv, l, 128, args.calls)
        print(rows[-1], file=sys.stderr)
    with open(args.out, "w") as f:
        f.write("# Causal attention's forward and backward kernel by kernel "
                "(F.scaled_dot_product_attention, cuDNN's flash kernels), and each pass between "
                "CUDA events\n")
        f.write(f"# device: {args.device} (nvidia-smi: {smi.strip().splitlines()[0]})\n")
        f.write(f"# software: torch {torch.__version__}, CUDA {torch.version.cuda}\n")
        f.write(f"# date: {sc.utc_now()}\n")
        f.write(f"# script: bench/attention_kernels.py --device {args.device} --calls {args.calls}\n")
        f.write("# method: checked against float64 first where small; kernels: device time under "
                f"torch.profiler over {args.calls} calls, per call; (wall): the median of five "
                f"timings of {args.calls} calls back to back between CUDA events, per call\n")
        f.write("shape,pass,kernel,seconds_per_call\n")
        for shape, name, kernel, t in rows:
            kernel = kernel.replace(",", ";").replace('"', "")
            f.write(f"{shape},{name},{kernel[:160]},{t:.6e}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
