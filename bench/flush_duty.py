#!/usr/bin/env python3
"""GEMMs timed as bench/ops.py times them, with the L2 flush between calls made longer or
shorter: the same GEMM at several duties, to check how the op model prices a row at the duty
its timing left it (costmodel::estimate_op_row).

triton.testing.do_bench zeroes a 256 MiB buffer before every timed call. A GPU at its power
limit gives a GEMM more clock the less of its time GEMMs take, so a short GEMM there runs at a
lower duty, and a higher clock, than a long one. This script times each GEMM the same way
with buffers of 0 (back to back, the inputs rotated through copies of 256 MiB and more so
that the L2 holds none of them), 256 MiB, 1 GiB and 4 GiB zeroed between calls: medians of
CUDA-event times over 100 ms after 25 ms of warm-up, as do_bench. Every shape and flush is
timed in --passes shuffled passes (the same order on no other pass); a row is the median of
its passes. Each GEMM is checked against float64 on random data first. The rows are op rows
with a `flush_bytes` column (`yirage-plan validate` prices each at its own duty); --raw keeps
every pass, with the memset's own time.

    python3 bench/flush_duty.py --device H200 --out ops_flush.csv --raw ops_flush_passes.csv
"""
import argparse
import datetime
import random
import statistics
import subprocess
import sys

import torch

from ops import check  # bench/ops.py: the float64 check

BF16 = torch.bfloat16
SHAPES = ["2048x2560x2560", "1024x4096x4096", "2048x4096x4096", "4096x4096x4096",
          "2048x14336x4096", "4096x14336x4096", "4096x28672x4096", "8192x8192x8192"]
FLUSHES = [0, 256 << 20, 1 << 30, 4 << 30]
ROTATE_BYTES = 256 << 20


def operands(m, n, k):
    """Copies of random A and B, enough of them that together they hold ROTATE_BYTES."""
    per = 2 * (m * k + k * n)
    copies = max(1, -(-ROTATE_BYTES // per))
    pairs = [(torch.randn(m, k, device="cuda", dtype=BF16),
              torch.randn(k, n, device="cuda", dtype=BF16)) for _ in range(copies)]
    a, b = pairs[0]
    if m <= 4096:
        check(f"gemm {m}x{n}x{k}", a @ b, a.double() @ b.double(), 1e-2)
    return pairs


def timed(pairs, flush, warmup_s=0.025, rep_s=0.1):
    """Median seconds of one GEMM between CUDA events, `flush` zeroed before each call (None:
    back to back, the operands rotated), and the median memset alone."""
    rot = [0]

    def call():
        a, b = pairs[rot[0] % len(pairs)]
        rot[0] += 1
        return a @ b

    def one():
        if flush is not None:
            flush.zero_()
        call()

    one()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(5):
        one()
    e.record()
    torch.cuda.synchronize()
    each = max(s.elapsed_time(e) / 5e3, 1e-6)
    for _ in range(max(1, int(warmup_s / each))):
        one()
    n = max(1, int(rep_s / each))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    memset = []
    for i in range(n):
        if flush is not None:
            if i % 10 == 0:
                ms, me = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                ms.record()
                flush.zero_()
                me.record()
                memset.append((ms, me))
            else:
                flush.zero_()
        starts[i].record()
        call()
        ends[i].record()
    torch.cuda.synchronize()
    t = statistics.median(st.elapsed_time(en) for st, en in zip(starts, ends)) * 1e-3
    m = statistics.median(a.elapsed_time(b) for a, b in memset) * 1e-3 if memset else 0.0
    return t, m


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", required=True, help="the device name the rows carry (H200)")
    p.add_argument("--out", required=True)
    p.add_argument("--raw", help="every pass, with the memset's time")
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--shapes", default=",".join(SHAPES))
    a = p.parse_args(argv)
    torch.manual_seed(0)
    shapes = [s for s in a.shapes.split(",") if s]
    ops = {s: operands(*map(int, s.split("x"))) for s in shapes}
    flushes = {f: (torch.empty(f // 4, dtype=torch.int, device="cuda") if f else None)
               for f in FLUSHES}
    raw = []
    rng = random.Random(0)
    for pass_no in range(a.passes):
        points = [(s, f) for s in shapes for f in FLUSHES]
        rng.shuffle(points)
        for s, f in points:
            t, m = timed(ops[s], flushes[f])
            raw.append((pass_no, s, f, t, m))
            print(f"pass {pass_no} {s} flush {f >> 20} MiB: {t * 1e6:.2f} us "
                  f"(memset {m * 1e6:.1f} us)", flush=True)
    name = torch.cuda.get_device_name()
    drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit",
                          "--format=csv,noheader"], capture_output=True, text=True,
                         check=False).stdout.strip().split("\n")[0]
    head = (f"# GEMMs timed as bench/ops.py times them, with 0 B (back to back, operands rotated), "
            f"256 MiB, 1 GiB or 4 GiB zeroed before each call (flush_bytes)\n"
            f"# device: {name}; driver and power limit {drv}\n"
            f"# software: torch {torch.__version__}, CUDA {torch.version.cuda}, cuBLAS via torch.matmul\n"
            f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
            f"# script: bench/flush_duty.py {' '.join(argv)}\n"
            f"# method: checked against float64 on random data first; median of CUDA-event times "
            f"over 100 ms after 25 ms of warm-up per point; {a.passes} shuffled passes, each row "
            f"the median of its passes\n")
    with open(a.out, "w") as f:
        f.write(head)
        f.write("kind,op,device,shape,dtype,time_s,stat,flush_bytes\n")
        for s in shapes:
            for fl in FLUSHES:
                t = statistics.median(r[3] for r in raw if r[1] == s and r[2] == fl)
                f.write(f"op,gemm,{a.device},{s},bf16,{t:.6e},median,{fl}\n")
    if a.raw:
        with open(a.raw, "w") as f:
            f.write(head)
            f.write("pass,shape,flush_bytes,time_s,memset_s\n")
            for r in raw:
                f.write(f"{r[0]},{r[1]},{r[2]},{r[3]:.6e},{r[4]:.6e}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
