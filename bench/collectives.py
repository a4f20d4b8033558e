#!/usr/bin/env python3
"""Measures NCCL collectives between the GPUs of one host with torch.distributed and writes
yirage's measured-CSV format (data/benchmarks/README.md): all-reduce, all-gather,
reduce-scatter, broadcast, reduce, all-to-all and send/recv (rank 0 to rank 1), bf16, from
--min-size (default 8 B) to --max-size (default 4 GiB), doubling.

Sizes follow nccl-tests' convention: the buffer per rank, except all-gather and
reduce-scatter, whose size is the gathered buffer. Every collective is checked first on
random data against the result computed from all ranks' inputs. Each size is then timed in
up to three launch styles (column `launch`), because a step, a benchmark and a user's script
each see a different cost:

- `graph`: 10-50 calls captured in a CUDA graph, the graph replayed 7 times under CUDA
  events; time per call (what a decode step replaying a graph sees).
- `eager`: nccl-tests' method. 10-50 calls launched back to back from the host between two
  CUDA events, 7 times; time per call (what a training step's eager collectives see, and
  what nccl-tests prints). All-gather and reduce-scatter are also timed in place
  (column `in_place` = 1: the input is the rank's slice of the output), as nccl-tests does.
- `queued`: the eager calls queued behind a sleeping kernel long enough for the host to
  issue all of them before the GPU reaches the first, timed between CUDA events recorded
  after the sleep: back-to-back eager kernels with the host taken out (what the calls of a
  training step cost on the GPU once the host runs ahead). A repetition in which the GPU
  reached the calls before the host had queued them all is counted and reported.
- `synced`: one call at a time, the ranks lined up by a barrier and the host waiting for the
  GPU after each call, timed on the host, 15 times (what a user's timing loop sees: launch
  and synchronisation included).

The median of each style's repetitions is taken on every rank and the slowest rank's is
recorded. With --passes N the whole sweep runs N times, each pass in its own shuffled order
of (collective, size) (the same order on every rank), and a row keeps the median of its
passes, so that a change in the host's state during the run (a shared host's other tenants,
its clocks) falls on different sizes in each pass instead of on one band of sizes; every
pass's value goes to OUT_passes.csv beside OUT. Buffers rotate so that no input stays in L2. NVLink SHARP stays off
(NCCL_NVLS_ENABLE=0), as on the lent machines.

    torchrun --nproc-per-node 2 bench/collectives.py --device H200 --out data/benchmarks/H200x2/collectives.csv
"""
import argparse
import datetime
import os
import random
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist

DT = torch.bfloat16
OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all",
       "send_recv")
GATHERED = ("all_gather", "reduce_scatter")  # nccl-tests' size is the gathered buffer
LAUNCHES = ("graph", "eager", "queued", "synced")
SLEEP_PER_CALL_S = 150e-6  # the host issues an eager call in 20-60 us on the lent hosts


def driver_version():
    out = subprocess.run(["nvidia-smi", "-i", str(torch.cuda.current_device()),
                          "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return out or "unknown"


def provenance():
    """The '#' lines every file of these scripts opens with: device, NCCL, software, driver
    and date."""
    return ("# device: %s; NCCL %s; NCCL_NVLS_ENABLE=%s\n" % (
                torch.cuda.get_device_name(), ".".join(map(str, torch.cuda.nccl.version())),
                os.environ.get("NCCL_NVLS_ENABLE"))
            + "# software: torch %s, CUDA %s\n" % (torch.__version__, torch.version.cuda)
            + "# driver: %s (nvidia-smi)\n" % driver_version()
            + "# date: %s\n" % datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%d %H:%M UTC"))


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
    elif op == "reduce":
        x = mine.clone()
        dist.reduce(x, 0)
        ref = sum(t.to(DT).float() for t in inputs)
        ok = rank != 0 or torch.allclose(x.float(), ref, rtol=2e-2, atol=2e-2)
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


class Buffers:
    """Rotating buffers for one (op, size): `ins[i]`, `outs[i]`; in place, each input is the
    rank's slice of its output (all-gather) or each output the rank's slice of its input
    (reduce-scatter)."""

    def __init__(self, op, size, rank, world, in_place):
        elems = max(1, size // 2)
        per_rank = max(1, elems // world) if op in GATHERED else elems
        full = per_rank * world
        nbuf = max(2, min(8, (1 << 30) // max(size, 1)))
        self.ins, self.outs = [], []
        for _ in range(nbuf):
            if op == "all_gather":
                out = torch.empty(full, device="cuda", dtype=DT)
                mine = out[rank * per_rank:(rank + 1) * per_rank] if in_place else \
                    torch.empty(per_rank, device="cuda", dtype=DT)
                mine.normal_()
                self.ins.append(mine)
                self.outs.append(out)
            elif op == "reduce_scatter":
                inp = torch.randn(full, device="cuda", dtype=DT)
                self.ins.append(inp)
                self.outs.append(inp[rank * per_rank:(rank + 1) * per_rank] if in_place else
                                 torch.empty(per_rank, device="cuda", dtype=DT))
            else:
                self.ins.append(torch.randn(per_rank, device="cuda", dtype=DT))
                self.outs.append(torch.empty(per_rank if op == "all_to_all" else 0,
                                             device="cuda", dtype=DT))


def run_op(op, bufs, i, rank):
    b = bufs.ins[i % len(bufs.ins)]
    o = bufs.outs[i % len(bufs.outs)]
    if op == "all_reduce":
        dist.all_reduce(b)
    elif op == "all_gather":
        dist.all_gather_into_tensor(o, b)
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(o, b)
    elif op == "broadcast":
        dist.broadcast(b, 0)
    elif op == "reduce":
        dist.reduce(b, 0)
    elif op == "all_to_all":
        dist.all_to_all_single(o, b)
    elif rank == 0:
        dist.send(b, 1)
    elif rank == 1:
        dist.recv(b, 0)


def slowest(seconds):
    t = torch.tensor([seconds], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def timed_events(launch, iters, reps=7, sleep=0, late=None):
    """The median time per call of `reps` timed launches of `iters` calls each. With `sleep`,
    the calls queue behind a kernel spinning that many cycles, the first event after it, and
    `late()` is called where the sleep ended before the last call was queued."""
    times = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        if sleep:
            torch.cuda._sleep(sleep)
        s.record()
        launch()
        if sleep and s.query():
            late()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3 / iters)
    return statistics.median(times)


def time_graph(op, bufs, rank, iters):
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for i in range(iters):
                run_op(op, bufs, i, rank)
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    t = timed_events(graph.replay, iters)
    del graph
    return t


def back_to_back(op, bufs, rank, iters):
    """A function that launches `iters` calls, each on the next buffer."""
    def loop():
        for i in range(iters):
            run_op(op, bufs, i, rank)
    return loop


def time_eager(op, bufs, rank, iters):
    return timed_events(back_to_back(op, bufs, rank, iters), iters)


_CYCLES_PER_S = []


def cycles_per_second():
    """torch.cuda._sleep's clock, measured once: the cycles it spins for a second."""
    if not _CYCLES_PER_S:
        cycles = 20_000_000
        torch.cuda._sleep(cycles // 10)  # warm the clocks
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        torch.cuda._sleep(cycles)
        e.record()
        e.synchronize()
        _CYCLES_PER_S.append(cycles / (s.elapsed_time(e) * 1e-3))
    return _CYCLES_PER_S[0]


QUEUE_LATE = []  # (op, size) of every repetition whose calls were not all queued in time


def time_queued(op, bufs, rank, size, iters):
    """Eager calls queued behind a sleep: the median time per call between events recorded
    after the sleep and after the last call."""
    sleep = int(cycles_per_second() * SLEEP_PER_CALL_S * iters)
    return timed_events(back_to_back(op, bufs, rank, iters), iters, sleep=sleep,
                        late=lambda: QUEUE_LATE.append((op, size)))


def time_synced(op, bufs, rank, reps=15):
    times = []
    for i in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run_op(op, bufs, i, rank)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_size(op, size, rank, world, launches):
    """[(launch, in_place, seconds)] for one (op, size)."""
    iters = 10 if size >= (1 << 28) else 20 if size >= (1 << 24) else 50
    rows = []
    variants = (False, True) if op in GATHERED else (False,)
    for in_place in variants:
        bufs = Buffers(op, size, rank, world, in_place)
        for i in range(5):
            run_op(op, bufs, i, rank)
        torch.cuda.synchronize()
        for launch in launches:
            if in_place and launch != "eager":
                continue
            if launch == "graph":
                t = time_graph(op, bufs, rank, iters)
            elif launch == "eager":
                t = time_eager(op, bufs, rank, iters)
            elif launch == "queued":
                t = time_queued(op, bufs, rank, size, iters)
            else:
                t = time_synced(op, bufs, rank)
            rows.append((launch, int(in_place), slowest(t)))
        del bufs
    return rows


def sizes(lo, hi, world, op):
    s = lo
    while s <= hi:
        # a gathered size must leave every rank at least one element
        if op not in GATHERED or s >= 2 * world:
            yield s
        s *= 2


def write(path, a, world, measured):
    """The rows, with how many passes each is the median of, in the measured-CSV format
    with their provenance."""
    rows, npasses = measured
    with open(path, "w") as f:
        f.write("# NCCL collectives between %d %s of one host, measured with "
                "torch.distributed.\n" % (world, a.device))
        f.write(provenance())
        f.write("# script: torchrun --nproc-per-node %d bench/collectives.py %s\n"
                % (world, " ".join(sys.argv[1:])))
        f.write("# method: checked on random data first; buffers rotated; launch graph: 10-50 "
                "calls in a CUDA graph, median of 7 timed replays; eager: 10-50 calls back to "
                "back between CUDA events, median of 7 (nccl-tests); queued: the eager calls "
                "queued behind a sleep of %d us a call, events after the sleep, median of 7 (%d "
                "of rank 0's repetitions not queued in time); synced: one call between "
                "a barrier and a device synchronise, host clock, median of 15; slowest rank%s\n"
                % (SLEEP_PER_CALL_S * 1e6, len(QUEUE_LATE), "" if a.passes == 1 else "; the median of %d passes over the sizes, each "
                   "in its own shuffled order (every pass: %s)"
                   % (npasses, os.path.basename(passes_path(path)))))
        f.write("kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,launch,in_place,"
                "time_s,stat\n")
        for op, size, launch, in_place, t in rows:
            f.write("collective,%s,%s,nvswitch,%d,%d,%d,bf16,%s,%d,%.6g,median\n"
                    % (op, a.device, world, world, size, launch, in_place, t))


def median_rows(passes, ops):
    """Each row's median over `passes`, ordered by collective (as in --ops) and size."""
    times = {}
    for rows in passes:
        for op, size, launch, in_place, t in rows:
            times.setdefault((op, size, launch, in_place), []).append(t)
    rows = [(op, size, launch, in_place, statistics.median(times[(op, size, launch, in_place)]))
            for op, size, launch, in_place, _ in passes[0]]
    rows.sort(key=lambda r: (ops.index(r[0]), r[1]))
    return rows, len(passes)


def passes_path(path):
    root, ext = os.path.splitext(path)
    return root + "_passes" + ext


def write_passes(path, a, world, passes):
    """Every pass's time of every row, in the pass's order."""
    with open(passes_path(path), "w") as f:
        f.write("# every pass of bench/collectives.py --passes %d (%d %s), in the order run\n"
                % (a.passes, world, a.device))
        f.write("# script: torchrun --nproc-per-node %d bench/collectives.py %s\n"
                % (world, " ".join(sys.argv[1:])))
        f.write("pass,op,bytes,launch,in_place,time_s\n")
        for n, rows in enumerate(passes):
            for op, size, launch, in_place, t in rows:
                f.write("%d,%s,%d,%s,%d,%.6g\n" % (n, op, size, launch, in_place, t))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--min-size", type=int, default=8, help="smallest size in bytes")
    p.add_argument("--max-size", type=int, default=1 << 32, help="largest size in bytes")
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated collectives to measure")
    p.add_argument("--launch", default=",".join(LAUNCHES),
                   help="comma-separated launch styles: " + ", ".join(LAUNCHES))
    p.add_argument("--passes", type=int, default=1,
                   help="sweeps over every size, each in a shuffled order; rows keep the median")
    a = p.parse_args()
    if a.passes < 1:
        sys.exit("--passes must be at least 1")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    launches = [x for x in a.launch.split(",") if x]
    unknown = set(launches) - set(LAUNCHES)
    if unknown:
        sys.exit("unknown launch style %s; expected %s" % (",".join(sorted(unknown)),
                                                          ",".join(LAUNCHES)))
    ops = [op for op in a.ops.split(",") if op]
    for op in ops:
        check(op, rank, world)
    work = [(op, size) for op in ops for size in sizes(a.min_size, a.max_size, world, op)]
    passes = []
    for n in range(a.passes):
        order = list(work)
        if a.passes > 1:
            random.Random(n).shuffle(order)  # the same order on every rank
        start = time.perf_counter()
        rows = []
        for op, size in order:
            for launch, in_place, t in time_size(op, size, rank, world, launches):
                rows.append((op, size, launch, in_place, t))
        passes.append(rows)
        if rank == 0:
            # Written after every pass, so that a run stopped early keeps the passes it made.
            write(a.out, a, world, median_rows(passes, ops))
            if a.passes > 1:
                write_passes(a.out, a, world, passes)
            print("pass %d: %d rows in %.0f s, written to %s"
                  % (n, len(rows), time.perf_counter() - start, a.out), flush=True)
    if rank == 0 and QUEUE_LATE:
        print("queued: %d repetitions reached the GPU before all their calls were queued: %s"
              % (len(QUEUE_LATE), sorted(set(QUEUE_LATE))), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
