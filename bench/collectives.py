#!/usr/bin/env python3
"""Measures NCCL collectives between the GPUs of one host with torch.distributed and writes
yirage's measured-CSV format (data/benchmarks/README.md): all-reduce, all-gather,
reduce-scatter, broadcast, all-to-all and send/recv (rank 0 to rank 1) from 4 KiB to
--max-size (default 1 GiB), bf16.

Method: each collective is checked first on random data against the result computed from
all ranks' inputs; then 10-50 calls (buffers rotated so that no input stays in L2) are
captured in a CUDA graph, the graph is replayed 7 times under CUDA events, and the median
time per call of the slowest rank is recorded. Sizes follow nccl-tests' convention (the buffer per rank; all-gather
and reduce-scatter: the gathered size). NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as on
the lent machines.

    torchrun --nproc-per-node 2 bench/collectives.py --device H200 --out data/benchmarks/H200x2/collectives.csv
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys

import torch
import torch.distributed as dist

DT = torch.bfloat16


def driver_version():
    out = subprocess.run(["nvidia-smi", "-i", str(torch.cuda.current_device()),
                          "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return out or "unknown"


def check(op, rank, world):
    n = 1 << 16
    g = torch.Generator(device="cuda").manual_seed(1234)
    inputs = [torch.randn(n, device="cuda", generator=g, dtype=torch.float32) for _ in range(world)]
    mine = inputs[rank].to(DT)
    if op == "all_reduce":
        x = mine.clone()
        dist.all_reduce(x)
        ref = sum(t.to(DT).float() for t in inputs)
        ok = torch.allclose(x.float(), ref, rtol=2e-2, atol=2e-2)
    elif op == "all_gather":
        out = torch.empty(n * world, device="cuda", dtype=DT)
        dist.all_gather_into_tensor(out, mine)
        ok = torch.equal(out, torch.cat([t.to(DT) for t in inputs]))
    elif op == "reduce_scatter":
        full = torch.cat([t.to(DT) for t in inputs])  # every rank contributes the same layout
        out = torch.empty(n, device="cuda", dtype=DT)
        dist.reduce_scatter_tensor(out, full)
        ok = torch.allclose(out.float(), world * full[rank * n:(rank + 1) * n].float(),
                            rtol=2e-2, atol=2e-2)
    elif op == "broadcast":
        x = mine.clone()
        dist.broadcast(x, 0)
        ok = torch.equal(x, inputs[0].to(DT))
    elif op == "all_to_all":
        # rank r sends its j-th chunk to rank j: chunk j of rank r's output is rank j's r-th
        out = torch.empty(n, device="cuda", dtype=DT)
        dist.all_to_all_single(out, mine)
        c = n // world
        ok = torch.equal(out, torch.cat([t.to(DT)[rank * c:(rank + 1) * c] for t in inputs]))
    else:
        x = mine.clone()
        if rank == 0:
            dist.send(x, 1)
            ok = True
        elif rank == 1:
            dist.recv(x, 0)
            ok = torch.equal(x, inputs[0].to(DT))
        else:
            ok = True
    if not ok:
        sys.exit("rank %d: %s gave a wrong result" % (rank, op))


def run_op(op, bufs, outs, i, rank):
    b = bufs[i % len(bufs)]
    o = outs[i % len(outs)]
    if op == "all_reduce":
        dist.all_reduce(b)
    elif op == "all_gather":
        dist.all_gather_into_tensor(o, b)
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(b, o)
    elif op == "broadcast":
        dist.broadcast(b, 0)
    elif op == "all_to_all":
        dist.all_to_all_single(o, b)
    elif rank == 0:
        dist.send(b, 1)
    elif rank == 1:
        dist.recv(b, 0)


def time_op(op, size, rank, world):
    # `size` is nccl-tests' size: per-rank buffer (all-reduce, broadcast, send/recv,
    # all-to-all) or the
    # gathered buffer (all-gather, reduce-scatter). The calls are captured in a CUDA graph
    # and the graph's replays timed, so that host overhead (large under the lent machines'
    # gVisor) stays out of the device time, as nccl-tests' averaged loop intends.
    elems = size // 2
    per_rank = elems // world if op in ("all_gather", "reduce_scatter") else elems
    nbuf = max(2, min(8, (1 << 30) // max(size, 1)))
    bufs = [torch.randn(per_rank, device="cuda", dtype=DT) for _ in range(nbuf)]
    out_elems = {"all_gather": per_rank * world, "reduce_scatter": per_rank * world,
                 "all_to_all": per_rank}.get(op, 0)
    outs = [torch.empty(out_elems, device="cuda", dtype=DT) for _ in range(nbuf)]
    iters = 10 if size >= (1 << 28) else 50
    for i in range(5):
        run_op(op, bufs, outs, i, rank)
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for i in range(iters):
                run_op(op, bufs, outs, i, rank)
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(7):
        dist.barrier()
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3 / iters)
    med = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    del graph
    return med.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--max-size", type=int, default=1 << 30, help="largest size in bytes")
    p.add_argument("--ops", default="all_reduce,all_gather,reduce_scatter,broadcast,all_to_all,"
                   "send_recv", help="comma-separated collectives to measure")
    a = p.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    ops = a.ops.split(",")
    rows = []
    for op in ops:
        check(op, rank, world)
        size = 4096
        while size <= a.max_size:
            t = time_op(op, size, rank, world)
            rows.append((op, size, t))
            size *= 2
    if rank == 0:
        with open(a.out, "w") as f:
            f.write("# NCCL collectives between %d %s of one host, measured with "
                    "torch.distributed.\n" % (world, a.device))
            f.write("# device: %s; NCCL %s; NCCL_NVLS_ENABLE=%s\n" % (
                torch.cuda.get_device_name(), ".".join(map(str, torch.cuda.nccl.version())),
                os.environ.get("NCCL_NVLS_ENABLE")))
            f.write("# software: torch %s, CUDA %s\n" % (torch.__version__, torch.version.cuda))
            f.write("# driver: %s (nvidia-smi)\n" % driver_version())
            f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC"))
            f.write("# script: torchrun --nproc-per-node %d bench/collectives.py %s\n"
                    % (world, " ".join(sys.argv[1:])))
            f.write("# method: checked on random data first; 10-50 calls captured in a CUDA graph "
                    "(buffers rotated), median of 7 timed replays per call, slowest rank\n")
            f.write("kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n")
            for op, size, t in rows:
                f.write("collective,%s,%s,nvswitch,%d,%d,%d,bf16,%.6g,median\n"
                        % (op, a.device, world, world, size, t))
        print("wrote %d rows to %s" % (len(rows), a.out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
