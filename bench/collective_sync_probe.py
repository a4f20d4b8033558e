#!/usr/bin/env python3
"""Splits one `synced` NCCL collective call into its parts, to find why its cost above a
CUDA-graph replay grows with the size of the message.

bench/collectives.py times a `synced` call as a user's timing loop does: the ranks lined up
by a barrier, then the host clock around the launch and torch.cuda.synchronize(). The cost
model prices that as the eager kernel time plus one fixed cost, but on two H200 the synced
time exceeds a graph replay by about 55 us below 1 MiB, 30-45 us from 4 to 128 MiB and
65-155 us from 1 to 4 GiB. A fixed cost does not grow with size, so some part of the call
does. This script measures the parts separately, on every rank, for all-reduce, all-gather,
reduce-scatter and broadcast in bf16 at 64 KiB, 1 MiB, 16 MiB, 128 MiB, 1 GiB and 4 GiB
(sizes as in collectives.py: the buffer per rank, except all-gather and reduce-scatter,
whose size is the gathered buffer), in four variants:

- `eager`: N calls back to back between two CUDA events (collectives.py's eager method and
  N); time per call. The host times of launching the N calls and of waiting for them are
  also recorded, per call.
- `synced`: collectives.py's synced method (barrier, device synchronise, then the host clock
  around the launch and torch.cuda.synchronize()), with CUDA events recorded on the current
  stream just before and just after the collective, and time.monotonic_ns() read just before
  the launch (t0), when the launch call returns (t1) and when synchronize returns (t2). This
  gives the host wall time (t2 - t0), the launch call (t1 - t0), the span of the collective
  on this rank's GPU (the events) and, from both ranks' t0 (a system-wide clock), how much
  later this rank started the call than the first rank in the same repetition. A collective
  cannot finish before its last rank has launched it, so the first rank's event span
  includes waiting for the others.
- `synced_spin`: as `synced`, but the host waits by polling the end event (event.query() in
  a tight loop) instead of calling torch.cuda.synchronize(): whether the synchronise call's
  wake-up costs time that grows with the wait.
- `synced_busy`: as `synced`, but after the barrier the stream first runs
  torch.cuda._sleep() for about --sleep-us (200 us; cycles calibrated against CUDA events at
  the start), so that the collective is launched behind GPU work and does not start on an
  idle GPU; the events time the collective alone (not the sleep), the host wall still runs
  from the launch to the end of the synchronise (so it includes what is left of the sleep).

Each (collective, size, variant) runs 3 untimed repetitions and then --reps (21) timed ones.
Every collective is checked once on random data first (collectives.py's check); buffers
rotate as in collectives.py (its Buffers class and run_op); the (collective, size) order is
shuffled with a fixed seed, the same on every rank. The t0s of all ranks are gathered after
each variant's timed loop, never inside it. Rank 0 writes one row per (collective, size,
variant, rank) with the medians over the repetitions:

    op,size_bytes,variant,rank,host_wall_s,launch_s,event_s,start_skew_s,reps

(start_skew_s: this rank's t0 minus the earliest t0 of all ranks in the same repetition;
0 for eager, whose three times are per call). The host wall of the synced variants includes
recording the end event (a microsecond or two) beside what collectives.py's synced times.
--raw PATH also writes every repetition (with t0 in ns and, for synced_busy, the sleep's own
GPU time, to check that it outlasted the launch). NVLink SHARP stays off
(NCCL_NVLS_ENABLE=0 unless set). On two H200 the timing takes well under a minute, most of
it at 1 and 4 GiB; the start (NCCL, buffers of up to 12 GiB a rank) adds some seconds more.

    torchrun --nproc-per-node 2 bench/collective_sync_probe.py --out OUT.csv [--raw OUT_raw.csv]
"""
import argparse
import os
import random
import shlex
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# bench/collectives.py: the rotating buffers, one call of a collective, the check on random
# data, the sizes a collective takes and the driver's version
from collectives import Buffers, check, provenance, run_op, sizes  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
SIZES = (64 << 10, 1 << 20, 16 << 20, 128 << 20, 1 << 30, 4 << 30)
VARIANTS = ("eager", "synced", "synced_spin", "synced_busy")
COLUMNS = "op,size_bytes,variant,rank,host_wall_s,launch_s,event_s,start_skew_s,reps"
RAW_COLUMNS = ("op,size_bytes,variant,rank,rep,t0_ns,host_wall_s,launch_s,event_s,"
               "start_skew_s,sleep_s")


def eager_iters(size):
    """Calls per eager repetition, as collectives.py's time_size takes them."""
    return 10 if size >= (1 << 28) else 20 if size >= (1 << 24) else 50


def timing_event():
    """A CUDA event with timing, recorded once so that its first use in a timed interval does
    not pay for creating it (torch creates the CUDA event at its first record)."""
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    return e


def sleep_cycles(seconds):
    """The torch.cuda._sleep argument that keeps this GPU busy for about `seconds`: the SM
    clock measured by timing a spin of a million cycles between CUDA events, median of 5."""
    n = 1_000_000
    s, e = timing_event(), timing_event()
    torch.cuda._sleep(n)  # loads the kernel
    torch.cuda.synchronize()
    rates = []
    for _ in range(5):
        s.record()
        torch.cuda._sleep(n)
        e.record()
        e.synchronize()
        rates.append(n / (s.elapsed_time(e) * 1e-3))
    return max(1, int(seconds * statistics.median(rates)))


def eager_rep(op, bufs, rank, iters, first, events):
    """One repetition of collectives.py's eager method: (t0_ns, host wall, launch, event
    span, 0), the times per call."""
    s, e, _ = events
    dist.barrier()
    torch.cuda.synchronize()
    s.record()
    t0 = time.monotonic_ns()
    for k in range(iters):
        run_op(op, bufs, first + k, rank)
    t1 = time.monotonic_ns()
    e.record()
    e.synchronize()
    t2 = time.monotonic_ns()
    return (t0, (t2 - t0) * 1e-9 / iters, (t1 - t0) * 1e-9 / iters,
            s.elapsed_time(e) * 1e-3 / iters, 0.0)


def synced_rep(op, bufs, rank, i, events, spin, cycles):
    """One synced call: (t0_ns, host wall t2 - t0, launch t1 - t0, event span of the
    collective, GPU time of the sleep before it or 0). With `spin` the host polls the end
    event instead of synchronising; with `cycles` the stream sleeps that long first."""
    s, e, z = events
    dist.barrier()
    torch.cuda.synchronize()
    if cycles:
        z.record()
        torch.cuda._sleep(cycles)
    s.record()
    t0 = time.monotonic_ns()
    run_op(op, bufs, i, rank)
    t1 = time.monotonic_ns()
    e.record()
    if spin:
        while not e.query():
            pass
    else:
        torch.cuda.synchronize()
    t2 = time.monotonic_ns()
    if spin:
        torch.cuda.synchronize()  # nothing is left to run; the next repetition starts alike
    sleep = z.elapsed_time(s) * 1e-3 if cycles else 0.0
    return (t0, (t2 - t0) * 1e-9, (t1 - t0) * 1e-9, s.elapsed_time(e) * 1e-3, sleep)


def measure(variant, op, size, bufs, rank, a, cycles):
    """This rank's timed repetitions of one variant, after a.warmup untimed ones; the
    buffers rotate over every call."""
    events = (timing_event(), timing_event(), timing_event())
    torch.cuda.synchronize()
    iters = eager_iters(size)

    def rep(i):
        if variant == "eager":
            return eager_rep(op, bufs, rank, iters, i * iters, events)
        return synced_rep(op, bufs, rank, i, events, variant == "synced_spin",
                          cycles if variant == "synced_busy" else 0)

    for i in range(a.warmup):
        rep(i)
    return [rep(a.warmup + i) for i in range(a.reps)]


def summarise(op, size, variant, gathered):
    """Rows (one per rank, medians over the repetitions) and raw rows (every repetition)
    from every rank's samples."""
    reps = len(gathered[0])
    first = [min(g[j][0] for g in gathered) for j in range(reps)]
    rows, raw = [], []
    for r, g in enumerate(gathered):
        skew = [0.0 if variant == "eager" else (g[j][0] - first[j]) * 1e-9 for j in range(reps)]
        med = [statistics.median(x[k] for x in g) for k in (1, 2, 3)]
        rows.append((op, size, variant, r, med[0], med[1], med[2], statistics.median(skew),
                     reps))
        raw.extend((op, size, variant, r, j, g[j][0], g[j][1], g[j][2], g[j][3], skew[j],
                    g[j][4]) for j in range(reps))
    return rows, raw


def row_line(r):
    return "%s,%d,%s,%d,%.6g,%.6g,%.6g,%.6g,%d" % r


def raw_line(r):
    return "%s,%d,%s,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g" % r


def header(f, a, world, cycles, sleep_s):
    f.write("# One synced NCCL call split into its parts, between %d GPUs of one host, "
            "measured with torch.distributed (bench/collective_sync_probe.py).\n" % world)
    f.write(provenance())
    f.write("# script: torchrun --nproc-per-node %d bench/collective_sync_probe.py %s\n"
            % (world, shlex.join(sys.argv[1:])))
    f.write("# method: checked on random data first; buffers rotated (collectives.py); "
            "(collective, size) in an order shuffled with seed %d; per variant %d untimed and "
            "%d timed repetitions, medians per rank; eager: %s calls back to back between "
            "CUDA events, times per call; synced: barrier, device synchronise, then "
            "monotonic_ns t0, launch, t1, torch.cuda.synchronize(), t2, with CUDA events "
            "on the current stream around the collective; synced_spin: the end event polled "
            "instead of synchronize; synced_busy: torch.cuda._sleep(%d) (%.0f us measured on "
            "rank 0) queued before the collective, events around the collective only; "
            "start_skew_s: t0 minus the earliest rank's t0 in the same repetition\n"
            % (a.seed, a.warmup, a.reps, "50 (below 16 MiB), 20 (below 256 MiB) or 10",
               cycles, sleep_s * 1e6))
    f.write("# columns: host_wall_s = t2 - t0, launch_s = t1 - t0, event_s = the CUDA-event "
            "span of the collective on that rank (eager: all three per call)\n")


def write(path, a, world, cycles, sleep_s, lines, columns):
    with open(path, "w") as f:
        header(f, a, world, cycles, sleep_s)
        f.write(columns + "\n")
        for line in lines:
            f.write(line + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--raw", help="also write every repetition to this CSV")
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated collectives")
    p.add_argument("--sizes", default=",".join(map(str, SIZES)),
                   help="comma-separated sizes in bytes (collectives.py's convention)")
    p.add_argument("--reps", type=int, default=21, help="timed repetitions per variant")
    p.add_argument("--warmup", type=int, default=3, help="untimed repetitions per variant")
    p.add_argument("--sleep-us", type=float, default=200.0,
                   help="GPU work queued before each synced_busy call, in microseconds")
    p.add_argument("--seed", type=int, default=0, help="seed of the (collective, size) order")
    a = p.parse_args()
    a.sizes = [int(s) for s in a.sizes.split(",") if s]
    ops = [op for op in a.ops.split(",") if op]
    unknown = set(ops) - set(OPS)
    if unknown:
        sys.exit("unknown collective %s; expected %s" % (",".join(sorted(unknown)),
                                                        ",".join(OPS)))
    if a.reps < 1 or a.warmup < 0 or a.sleep_us <= 0 or not a.sizes or min(a.sizes) < 1:
        sys.exit("--reps must be at least 1, --warmup at least 0, --sleep-us positive and "
                 "--sizes positive and not empty")

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    for op in ops:
        check(op, rank, world)
    cycles = sleep_cycles(a.sleep_us * 1e-6)
    z, s = timing_event(), timing_event()
    torch.cuda.synchronize()
    z.record()
    torch.cuda._sleep(cycles)
    s.record()
    s.synchronize()
    sleep_s = z.elapsed_time(s) * 1e-3
    if rank == 0:
        print("synced_busy sleeps %d cycles, %.1f us on rank 0" % (cycles, sleep_s * 1e6),
              flush=True)
        print(COLUMNS, flush=True)

    work = [(op, t) for op in ops for size in a.sizes for t in sizes(size, size, world, op)]
    random.Random(a.seed).shuffle(work)  # the same order on every rank
    rows, raw = [], []
    start = time.perf_counter()
    for op, size in work:
        bufs = Buffers(op, size, rank, world, False)
        torch.cuda.synchronize()
        for variant in VARIANTS:
            samples = measure(variant, op, size, bufs, rank, a, cycles)
            gathered = [None] * world
            dist.all_gather_object(gathered, samples)  # every rank, after the timed loop
            if rank == 0:
                new_rows, new_raw = summarise(op, size, variant, gathered)
                for r in new_rows:
                    print(row_line(r), flush=True)
                rows.extend(new_rows)
                raw.extend(new_raw)
        del bufs
        torch.cuda.empty_cache()
        if rank == 0:
            # Written after every (collective, size), so that a run stopped early keeps what
            # it measured.
            order = lambda r: (ops.index(r[0]), r[1], VARIANTS.index(r[2]), r[3])  # noqa: E731
            write(a.out, a, world, cycles, sleep_s,
                  [row_line(r) for r in sorted(rows, key=order)], COLUMNS)
            if a.raw:
                write(a.raw, a, world, cycles, sleep_s,
                      [raw_line(r) for r in sorted(raw, key=lambda r: order(r) + (r[4],))],
                      RAW_COLUMNS)
            print("# %s %d B done, %.0f s so far" % (op, size, time.perf_counter() - start),
                  flush=True)
    if rank == 0:
        print("wrote %s%s in %.0f s" % (a.out, " and " + a.raw if a.raw else "",
                                        time.perf_counter() - start), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
