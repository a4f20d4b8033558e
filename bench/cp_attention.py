#!/usr/bin/env python3
"""Times causal attention under context parallelism as PyTorch's ring attention runs it
(torch.distributed.tensor.experimental.context_parallel, load-balanced: each rank holds two
of the sequence's 2 x cp chunks), forward and forward + backward, beside one causal SDPA
kernel over the whole sequence and one over a rank's share, on every GPU of one host:

    torchrun --nproc-per-node 2 bench/cp_attention.py --device H200 --out cp_attention.csv

What it checks in yirage: a context-parallel layer's attention priced as the ring's tiles
(its own chunks causally, then a non-causal tile of half its keys per other rank) and the
merges of their partial outputs (planner/workload/pricer.h, cp_attention_tiles), where it
had been priced as one kernel of the same work. Every shape is checked first against the
whole-sequence attention on random data (the gathered ring output against one SDPA call).
Times: CUDA events around 20 calls, median of 7 repetitions, slowest rank; inputs rotate
over 4 buffers so no input stays in L2.
"""
import argparse
import datetime
import os
import statistics
import subprocess

import torch
import torch.distributed as dist
import torch.nn.functional as F

DT = torch.bfloat16


def timed(fn, reps=7, calls=20):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            fn(i)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / calls)
    return statistics.median(times)


def slowest(t):
    x = torch.tensor([t], device="cuda", dtype=torch.float64)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    return x.item()


def buffers(b, h, s, d, n=4, grad=False):
    return [tuple(torch.randn(b, h, s, d, device="cuda", dtype=DT).requires_grad_(grad)
                  for _ in range(3)) for _ in range(n)]


def one_kernel(b, h, s, d):
    """Forward and forward + backward of one causal SDPA call over s tokens."""
    bufs = buffers(b, h, s, d, grad=True)
    grads = [torch.randn(b, h, s, d, device="cuda", dtype=DT) for _ in range(4)]

    def fwd(i=0):
        q, k, v = bufs[i % 4]
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def both(i=0):
        q, k, v = bufs[i % 4]
        F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grads[i % 4])

    return timed(fwd), timed(both)


def ring(mesh, b, h, s, d):
    """The same under context_parallel over `mesh`: checked, then timed per rank."""
    from torch.distributed.tensor.experimental import context_parallel
    world, rank = mesh.size(), dist.get_rank()
    g = torch.Generator(device="cuda").manual_seed(7)
    full = [torch.randn(b, h, s, d, device="cuda", dtype=DT, generator=g) for _ in range(3)]
    ref = F.scaled_dot_product_attention(*full, is_causal=True)
    q, k, v = (t.clone() for t in full)
    with context_parallel(mesh, buffers=[q, k, v], buffer_seq_dims=[2, 2, 2]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # The rank's tokens: chunks rank and 2 world - 1 - rank of 2 world (load-balanced), or
    # chunk rank of world (not).
    c = s // (2 * world)
    balanced = torch.cat((ref[:, :, rank * c:(rank + 1) * c],
                          ref[:, :, (2 * world - 1 - rank) * c:(2 * world - rank) * c]), dim=2)
    plain = ref[:, :, rank * (s // world):(rank + 1) * (s // world)]
    err = min((out.float() - x.float()).abs().max().item() for x in (balanced, plain))
    if err > 5e-2:
        raise SystemExit("ring attention differs from SDPA by %g at %s" % (err, (b, h, s, d)))
    bufs = [tuple(torch.randn(b, h, s, d, device="cuda", dtype=DT) for _ in range(3))
            for _ in range(4)]
    grads = [torch.randn(b, h, s // world, d, device="cuda", dtype=DT) for _ in range(4)]
    flat = [t for qkv in bufs for t in qkv]
    with context_parallel(mesh, buffers=flat, buffer_seq_dims=[2] * len(flat)):
        for t in flat:
            t.requires_grad_(True)

        def fwd(i=0):
            with torch.no_grad():
                F.scaled_dot_product_attention(*bufs[i % 4], is_causal=True)

        def both(i=0):
            F.scaled_dot_product_attention(*bufs[i % 4], is_causal=True).backward(grads[i % 4])

        times = timed(fwd), timed(both)
        for t in flat:  # the context restores the buffers' shape on exit, which a leaf
            t.grad = None  # that requires grad refuses
            t.requires_grad_(False)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (world,))
    rows = []
    for h, s in ((32, 8192), (32, 16384), (16, 8192), (8, 32768)):
        d, b = 128, 1
        whole = one_kernel(b, h, s, d)
        share = one_kernel(b, h, s // world, d)
        cp = ring(mesh, b, h, s, d)
        rows.append((h, s, [slowest(x) for x in whole + share + cp]))
    if rank == 0:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.split("\n")[0].strip()
        with open(a.out, "w") as f:
            f.write("# causal attention under context parallelism: PyTorch's ring attention "
                    "(context_parallel, load-balanced) beside one SDPA kernel over the whole "
                    "sequence and over a rank's share; seconds per call, slowest rank\n")
            f.write("# device: %s x %d; driver %s; torch %s, CUDA %s\n" % (
                torch.cuda.get_device_name(), world, driver, torch.__version__, torch.version.cuda))
            f.write("# method: checked against one SDPA call over the whole sequence first; "
                    "CUDA events around 20 calls, median of 7, the slowest rank; inputs rotate "
                    "over 4 buffers\n")
            f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC"))
            f.write("# script: torchrun --nproc-per-node %d bench/cp_attention.py --device %s "
                    "--out %s\n" % (world, a.device, os.path.basename(a.out)))
            f.write("device,cp,batch,heads,seq,head_dim,whole_forward_s,whole_step_s,"
                    "share_forward_s,share_step_s,ring_forward_s,ring_step_s\n")
            for h, s, t in rows:
                f.write("%s,%d,1,%d,%d,128,%s\n" % (a.device, world, h, s,
                                                    ",".join("%.6g" % x for x in t)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
