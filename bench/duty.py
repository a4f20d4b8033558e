#!/usr/bin/env python3
"""GEMMs interleaved with other work at set duty cycles, as a step interleaves them: the
rate a GEMM runs at, and the rate the work between GEMMs runs at, against the share of the
time the GPU spends in GEMMs, with the SM clock and power the GPU holds at each share.

A GPU at its power limit holds a lower clock the more of its time goes to GEMMs: back to
back (duty 1) an H200 holds about 1,480 MHz, idle it boosts to 1,980. A training step
interleaves its GEMMs with memory-bound kernels and, in an eager framework, with the host's
gaps, so its GEMMs run at a clock between the two. This script measures that directly.

Each point repeats one pattern for --seconds: one GEMM, then filler work sized so the GEMM
takes about the target share of the time. Fillers: `copy` (a 512 MiB bf16 copy, bound by
HBM), `rmsnorm` (RMSNorm over 32,768 rows of 4,096 bf16, a step's row-wise kernel) and
`idle` (the host waits, the GPU has nothing queued: an eager step's launch gaps). With
--attention, causal fused attention forwards are timed the same way (rows named
`attention:BxHxSxD`; `calibrate` does not fit them). Every
operation is checked against a float64 reference first; the burst time of each (median of
triton.testing.do_bench, L2 flushed) is recorded beside. Each pattern is timed with CUDA
events (short GEMMs repeat within a pattern, `gemm_reps` times, to about 1 ms); a point
reports the median GEMM (per product) and filler times after the first --settle seconds,
the duty achieved (GEMM time over wall time, from the events), and the mean SM clock and
power of nvidia-smi samples (every 100 ms) over the same interval.

    python3 bench/duty.py --out duty.csv
    python3 bench/duty.py --out duty_shapes.csv --gemms 4096x4096x4096,8192x1024x4096,2048x14336x4096 \
        --attention 1x32x8192x128 --no-alone
"""
import argparse
import datetime
import statistics
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F
import triton.testing

BF16 = torch.bfloat16
GEMMS = [(8192, 8192, 8192), (4096, 14336, 4096)]
DUTIES = [0.8, 0.6, 0.4, 0.2]
FILLERS = ["copy", "rmsnorm", "idle"]


class Sampler:
    """nvidia-smi's SM clock and power every 100 ms, with the host time of each sample."""

    def __init__(self):
        self.samples = []
        q = "clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"
        self.proc = subprocess.Popen(
            ["nvidia-smi", "-i", str(torch.cuda.current_device()), f"--query-gpu={q}",
             "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.time(), float(parts[0]), float(parts[1]),
                                     float(parts[2]), parts[3]))
            except (ValueError, IndexError):
                continue

    def between(self, t0, t1):
        s = [x for x in self.samples if t0 <= x[0] <= t1]
        if not s:
            return "", "", "", ""
        return (f"{statistics.mean(x[1] for x in s):.0f}", f"{statistics.mean(x[2] for x in s):.1f}",
                f"{max(x[3] for x in s):.0f}", s[-1][4])

    def stop(self):
        self.proc.terminate()


def check(name, out, ref, tol):
    err = ((out.double() - ref).norm() / ref.norm()).item()
    if not torch.isfinite(out).all() or err > tol:
        sys.exit(f"{name}: relative error {err:.3g} exceeds {tol}")


def gemm(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=BF16)
    b = torch.randn(k, n, device="cuda", dtype=BF16)
    if m <= 4096:
        check(f"gemm {m}x{n}x{k}", a @ b, a.double() @ b.double(), 1e-2)
    return lambda: a @ b


def attention(b, h, s, d):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=BF16) for _ in range(3))
    if s <= 2048:
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
        check(f"attention {b}x{h}x{s}x{d}", F.scaled_dot_product_attention(q, k, v, is_causal=True),
              ref, 1e-2)
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)


def filler(kind):
    if kind == "copy":
        x = torch.randn(256 << 20, device="cuda", dtype=BF16)
        y = torch.empty_like(x)
        y.copy_(x)
        if not torch.equal(x, y):
            sys.exit("copy: output differs")
        return lambda: y.copy_(x)
    if kind == "rmsnorm":
        x = torch.randn(32768, 4096, device="cuda", dtype=BF16)
        w = torch.randn(4096, device="cuda", dtype=BF16)
        xd = x.double()
        check("rmsnorm", F.rms_norm(x, (4096,), w, 1e-6),
              xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double(), 1e-2)
        return lambda: F.rms_norm(x, (4096,), w, 1e-6)
    if kind == "small":
        # Eager PyTorch's memory-bound kernels are many and small: a bf16 add over 8M
        # elements (48 MB of traffic, about 10 us), launched one by one.
        x = torch.randn(4096, 2048, device="cuda", dtype=BF16)
        y = torch.randn_like(x)
        z = torch.empty_like(x)
        check("small add", torch.add(x, y, out=z), x.double() + y.double(), 1e-2)
        return lambda: torch.add(x, y, out=z)
    return None


def burst(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e-3


def run_point(g, fill, count, gap_s, seconds, settle, sampler):
    """Repeats GEMM + `count` fillers (or a host wait of gap_s) for `seconds`; returns the
    median GEMM and per-filler times, the achieved duty and the sampler's means, over the
    patterns after `settle`."""
    marks = []  # (host time, start, after gemm, after fillers)
    t0 = time.time()
    window = []
    while time.time() - t0 < seconds:
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        ev[0].record()
        g()
        ev[1].record()
        for _ in range(count):
            fill()
        ev[2].record()
        window.append((time.time(), *ev))
        if gap_s > 0:
            ev[2].synchronize()
            time.sleep(gap_s)
        elif len(window) >= 8:
            window[-8][3].synchronize()
        if len(window) > 64:
            marks.extend(window[:-16])
            window = window[-16:]
    torch.cuda.synchronize()
    marks.extend(window)
    t_end = time.time()
    late = [m for m in marks if m[0] - t0 >= settle]
    gemm_t = [m[1].elapsed_time(m[2]) * 1e-3 for m in late]
    fill_t = [m[2].elapsed_time(m[3]) * 1e-3 / count for m in late] if count else []
    wall = late[0][1].elapsed_time(late[-1][3]) * 1e-3
    duty = sum(gemm_t) / wall
    mhz, watts, temp, reasons = sampler.between(late[0][0], t_end)
    return (statistics.median(gemm_t), statistics.median(fill_t) if fill_t else 0.0, duty,
            mhz, watts, temp, reasons)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=4)
    p.add_argument("--settle", type=float, default=1.5)
    p.add_argument("--cool", type=float, default=2, help="seconds idle before each point")
    p.add_argument("--gemms", default=",".join("x".join(map(str, g)) for g in GEMMS),
                   help="MxNxK of the GEMMs, comma-separated")
    p.add_argument("--attention", default="",
                   help="BxHxSxD of causal fused attention forwards (bf16) timed the same way, "
                        "named attention:BxHxSxD in the file, comma-separated")
    p.add_argument("--no-alone", action="store_true", help="skip the fillers timed alone")
    p.add_argument("--fillers", default=",".join(FILLERS),
                   help="filler kinds, comma-separated: copy, rmsnorm, idle, small (a 10 us "
                        "add launched one by one, as eager PyTorch's small kernels run)")
    a = p.parse_args(argv)
    kinds = [k for k in a.fillers.split(",") if k]
    torch.manual_seed(0)
    name = torch.cuda.get_device_name()
    sampler = Sampler()
    fills = {k: filler(k) for k in kinds}
    fill_burst = {k: burst(f) for k, f in fills.items() if f}
    rows = []

    def point(label, g, g_burst, kind, target, count, gap, reps):
        time.sleep(a.cool)
        r = run_point(g, fills[kind], count, gap, a.seconds, a.settle, sampler)
        rows.append([name, label, kind, f"{target:.2f}", count, f"{gap:.6f}",
                     f"{r[2]:.4f}", f"{g_burst / reps:.6e}", f"{r[0] / reps:.6e}",
                     f"{fill_burst.get(kind, 0):.6e}", f"{r[1]:.6e}", *r[3:], reps])
        print(",".join(str(c) for c in rows[-1]), flush=True)

    hot = [(spec, gemm(*map(int, spec.split("x")))) for spec in a.gemms.split(",") if spec]
    hot += [("attention:" + spec, attention(*map(int, spec.split("x"))))
            for spec in a.attention.split(",") if spec]
    for label, one in hot:
        # Short products repeat within a pattern (`gemm_reps`), so that the fillers between
        # them can be sized to the duty; times are per product.
        reps = max(1, round(1e-3 / burst(one)))
        g = (lambda f=one, n=reps: [f() for _ in range(n)]) if reps > 1 else one
        g_burst = burst(g)
        point(label, g, g_burst, "copy", 1.0, 0, 0.0, reps)
        for kind in kinds:
            for d in DUTIES:
                off = g_burst * (1 - d) / d
                if kind == "idle":
                    point(label, g, g_burst, kind, d, 0, off, reps)
                else:
                    point(label, g, g_burst, kind, d, max(1, round(off / fill_burst[kind])), 0.0,
                          reps)
    for kind, f in fills.items():  # fillers alone, back to back
        if f and not a.no_alone:
            time.sleep(a.cool)
            r = run_point(f, f, 1, 0.0, a.seconds, a.settle, sampler)
            rows.append([name, "none", kind, "0.00", 1, "0.000000", "0.0000", "0", "0",
                         f"{fill_burst[kind]:.6e}", f"{statistics.mean([r[0], r[1]]):.6e}", *r[3:],
                         0])
            print(",".join(str(c) for c in rows[-1]), flush=True)
    sampler.stop()
    drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit",
                          "--format=csv,noheader"], capture_output=True, text=True,
                         check=False).stdout.strip().split("\n")[0]
    with open(a.out, "w") as f:
        f.write(f"# measured by bench/duty.py on {datetime.date.today()}: {name}; driver and power "
                f"limit {drv}; torch {torch.__version__}; CUDA {torch.version.cuda}\n")
        f.write(f"# command: bench/duty.py {' '.join(argv)}\n")
        f.write("device,gemm,filler,target_duty,fillers,gap_s,duty,gemm_burst_s,gemm_s,"
                "filler_burst_s,filler_s,sm_mhz,power_w,temperature_c,throttle_reasons,gemm_reps\n")
        for r in rows:
            f.write(",".join(str(c) for c in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
