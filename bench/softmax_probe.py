#!/usr/bin/env python3
"""PyTorch's softmax forward and backward at row lengths that take each of its four forward
kernels (SoftMax.cu's host_softmax: one warp a row up to 2,048 elements and 8 KiB, registers
up to nine elements a thread of 1,024, the row in 48 KiB of shared memory, the row read three
times), in bf16 and fp32: the backward's own kernel and time beside the forward's, which the
op model prices as one ratio of the forward (planner/workload/pricer.h, backward_ratio).

Each case is checked against float64 first (forward, and the backward against autograd in
float64 on the smaller cases); times are medians of triton.testing.do_bench (CUDA events, L2
flushed, 25 ms warm-up, 100 ms); the kernels are the profiler's names for one call.

    python3 bench/softmax_probe.py --out softmax_kernels.csv

--rows-from FILE --device NAME prints such a file's backward times as op rows of
data/benchmarks/README.md's format (op `softmax_backward`), without a GPU:

    python3 bench/softmax_probe.py --rows-from softmax_kernels.csv --device H200 > rows.csv
"""
import argparse
import csv
import re
import sys

LENGTHS = [768, 1536, 3072, 4096, 6144, 8192, 10240, 16384, 20480, 24576, 40960]
ROWS = [256, 2048, 16384]


def kernels(fn):
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    short = []
    for n in names:  # the kernel's own name, without namespaces, templates or arguments
        m = re.search(r"(\w+)\s*[<(]", n.replace("(anonymous namespace)", ""))
        short.append(m.group(1) if m else n.replace(",", ";"))
    return " | ".join(short)


def rows_from(path, device):
    """The backward column of a file this script wrote, as op rows (its '#' lines kept)."""
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("#"):
            print(line)
    print("# rows: bench/softmax_probe.py --rows-from %s --device %s (the backward_s column)"
          % (path.rsplit("/", 1)[-1], device))
    print("kind,op,device,shape,dtype,time_s,stat")
    for r in csv.DictReader(line for line in lines if not line.startswith("#")):
        print("op,softmax_backward,%s,%s,%s,%s,median" % (device, r["shape"], r["dtype"],
                                                         r["backward_s"]))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out")
    p.add_argument("--rows-from", help="print this file's backward times as op rows")
    p.add_argument("--device", help="yirage registry name of the GPU (with --rows-from)")
    a = p.parse_args(argv)
    if a.rows_from:
        if not a.device:
            p.error("--rows-from needs --device")
        return rows_from(a.rows_from, a.device)
    if not a.out:
        p.error("--out is required")
    import torch

    from ops import bench, check, write_measured  # bench/ops.py

    BF16 = torch.bfloat16
    torch.manual_seed(0)
    rows = []
    for dtype, name in [(BF16, "bf16"), (torch.float32, "fp32")]:
        for c in LENGTHS:
            for r in ROWS:
                if r * c > 2 ** 29:
                    continue
                x = torch.randn(r, c, device="cuda", dtype=dtype)
                y = torch.softmax(x, -1)
                g = torch.randn_like(y)

                def backward():
                    return torch._softmax_backward_data(g, y, -1, dtype)

                if r * c <= 2 ** 23:
                    xd = x.double().requires_grad_(True)
                    yd = torch.softmax(xd, -1)
                    check(f"softmax {name} {r}x{c}", y, yd.detach(), 1e-2)
                    (gd,) = torch.autograd.grad(yd, xd, g.double())
                    check(f"softmax backward {name} {r}x{c}", backward(), gd, 2e-2)
                fwd = bench(lambda: torch.softmax(x, -1))
                bwd = bench(backward)
                rows.append([f"{r}x{c}", name, f"{fwd:.6e}", f"{bwd:.6e}",
                             kernels(lambda: torch.softmax(x, -1)), kernels(backward)])
                print(",".join(rows[-1]), flush=True)
                del x, y, g
            torch.cuda.empty_cache()
    write_measured(a.out, "PyTorch's softmax forward and backward at row lengths that take "
                   "each of its forward kernels, with the kernels each launched",
                   "bench/softmax_probe.py " + " ".join(argv),
                   "checked against float64 first; median of triton.testing.do_bench (CUDA "
                   "events, L2 flushed, 25 ms warm-up, 100 ms)",
                   "shape,dtype,forward_s,backward_s,forward_kernels,backward_kernels", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
