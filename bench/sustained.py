#!/usr/bin/env python3
"""GEMMs timed as bench/ops.py times them (short bursts: 25 ms warm-up, 100 ms of
repetitions, L2 flushed) and as a training step runs them (back to back for many seconds),
with the SM clock and power the GPU holds in each case, and the operand layouts a step's
backward uses (A.T @ B for weight gradients, A @ B.T for input gradients).

Method (the device tool's METHOD.md): each product is checked against a float64 reference
on random data first; a burst is the median of triton.testing.do_bench; a sustained run
repeats the product for --seconds, timed with CUDA events in windows of --window products,
and reports the median window after the first --settle seconds, with nvidia-smi's SM clock,
power draw and throttle reasons sampled at its end.

    python3 bench/sustained.py --out sustained.csv --seconds 12
    python3 bench/sustained.py --fp8 --out sustained_fp8.csv --seconds 12

With --fp8 the products are e4m3 through torch._scaled_mm with one scale per row of each
operand (as bench/ops.py --only fp8_rowwise and a W8A8 serving step run them), layout
`fp8_rowwise` (a @ b.T, the only layout _scaled_mm takes), bf16 output.
"""
import argparse
import datetime
import statistics
import subprocess
import sys
import time

import torch
import triton.testing

BF16 = torch.bfloat16
# (m, n, k): tokens x output x input of a step's GEMMs (8B width, 4,096 or 8,192 tokens), and
# the square product the vendor's peak is usually quoted on.
SHAPES = [(8192, 8192, 8192), (4096, 14336, 4096), (4096, 4096, 14336), (4096, 6144, 4096),
          (8192, 14336, 4096)]
LAYOUTS = ["nn", "tn", "nt"]  # a @ b, a.T @ b (a stored k x m), a @ b.T (b stored n x k)


def smi():
    q = "clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active"
    r = subprocess.run(["nvidia-smi", "-i", str(torch.cuda.current_device()),
                        f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True, check=False)
    parts = [p.strip() for p in r.stdout.strip().split(",")]
    return parts if len(parts) == 6 else ["", "", "", "", "", ""]


def operands(m, n, k, layout):
    a = torch.randn((k, m) if layout == "tn" else (m, k), device="cuda", dtype=BF16)
    b = torch.randn((n, k) if layout == "nt" else (k, n), device="cuda", dtype=BF16)
    if layout == "tn":
        return a, b, lambda: a.t() @ b, lambda: a.t().double() @ b.double()
    if layout == "nt":
        return a, b, lambda: a @ b.t(), lambda: a.double() @ b.t().double()
    return a, b, lambda: a @ b, lambda: a.double() @ b.double()


def fp8_operands(m, n, k):
    """e4m3 operands with row-wise float32 scales, checked against float64 on their own
    dequantised values."""
    a = (torch.randn((m, k), device="cuda") * 4).to(torch.float8_e4m3fn)
    b = (torch.randn((n, k), device="cuda") * 4).to(torch.float8_e4m3fn)
    sa = torch.rand((m, 1), device="cuda") + 0.5
    sb = torch.rand((1, n), device="cuda") + 0.5

    def fn():
        return torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=BF16)

    def ref():
        return (a.double() * sa.double()) @ (b.double() * sb.t().double()).t()
    return a, b, fn, ref


def sustained(fn, seconds, settle, window):
    times = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(window):
            fn()
        e.record()
        e.synchronize()
        times.append((time.time() - t0, s.elapsed_time(e) * 1e-3 / window))
    state = smi()
    late = [t for at, t in times if at >= settle] or [times[-1][1]]
    return statistics.median(late), times[0][1], state


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=12)
    p.add_argument("--settle", type=float, default=4)
    p.add_argument("--window", type=int, default=20)
    p.add_argument("--square-only-sustained", action="store_true",
                   help="time only the first shape's layouts back to back (shorter run)")
    p.add_argument("--fp8", action="store_true",
                   help="e4m3 products with row-wise scales (torch._scaled_mm), layout fp8_rowwise")
    a = p.parse_args(argv)
    torch.manual_seed(0)
    name = torch.cuda.get_device_name()
    rows = []
    for i, (m, n, k) in enumerate(SHAPES):
        for layout in (["fp8_rowwise"] if a.fp8 else LAYOUTS):
            x, y, fn, ref = fp8_operands(m, n, k) if a.fp8 else operands(m, n, k, layout)
            if m <= 4096:
                out = fn().double()
                want = ref()
                err = ((out - want).norm() / want.norm()).item()
                if err > 1e-2:
                    sys.exit(f"gemm {m}x{n}x{k} {layout}: relative error {err:.3g}")
            time.sleep(2)  # a cool start, as between bench/ops.py's cases
            idle = smi()
            burst = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e-3
            if a.square_only_sustained and i > 0:
                long_s, first_s, state = float("nan"), float("nan"), ["", "", "", "", "", ""]
            else:
                long_s, first_s, state = sustained(fn, a.seconds, a.settle, a.window)
            flops = 2.0 * m * n * k
            rows.append([name, m, n, k, layout, f"{burst:.6e}", f"{first_s:.6e}", f"{long_s:.6e}",
                         f"{flops / burst / 1e12:.1f}", f"{flops / long_s / 1e12:.1f}",
                         idle[0], *state])
            print(" ".join(str(c) for c in rows[-1]), flush=True)
            del x, y
    with open(a.out, "w") as f:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.strip().split("\n")[0]
        f.write(f"# measured by bench/sustained.py on {datetime.date.today()}: {name}; driver {drv}; "
                f"torch {torch.__version__}; CUDA {torch.version.cuda}\n")
        f.write(f"# command: bench/sustained.py {' '.join(argv)}\n")
        f.write("device,m,n,k,layout,burst_s,sustained_first_s,sustained_s,burst_tflops,"
                "sustained_tflops,idle_sm_mhz,sm_mhz,max_sm_mhz,power_w,power_limit_w,"
                "temperature_c,throttle_reasons\n")
        for r in rows:
            f.write(",".join(str(c) for c in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
