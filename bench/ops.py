#!/usr/bin/env python3
"""Measures single operations on one GPU with PyTorch and writes yirage's measured-CSV
format (data/benchmarks/README.md): GEMMs over decode and prefill shapes of common model
widths, attention prefill (causal and not) and decode with GQA, RMSNorm, LayerNorm, softmax
and an elementwise add; elementwise kernels over non-contiguous views (--only strided);
the row-wise kernels and the add over a grid of row counts and lengths in bf16 and fp32
(--only rows), and at lengths and counts the grid does not have (--only rows_unseen);
RMSNorm's and LayerNorm's backward over the grid, replayed from a CUDA graph (--only
norm_backward), and at the other lengths (--only norm_backward_unseen); softmax at
vocabulary widths in fp32, with the log-softmax and the casts a
step runs printed beside (--only loss); the bf16-to-fp32 cast of weight gradients (--only
casts); causal attention forward and backward as a step runs it (--only attention_backward),
also at head dimensions 64-96 (--only attention_head_dims);
GEMMs at tensor-parallel shard widths and attention at other shapes (--only unseen); the
row-wise kernels and add of the default set timed five times over (--only rows_repeat);
compound operations as PyTorch eager runs them (unfused).

Method (the device tool's METHOD.md): every op is first checked against a float64 reference
on fresh random data; then timed with triton.testing.do_bench (CUDA events, L2 flushed
between runs by writing a 256 MB buffer, warm-up 25 ms, 100 ms of repetitions), and the
median is recorded.

    python3 bench/ops.py --device H100-SXM --out data/benchmarks/H100-SXM/ops.csv
"""
import argparse
import datetime
import subprocess
import sys

import torch
import torch.nn.functional as F
import triton
import triton.testing

import steps_common as sc

BF16 = torch.bfloat16
FP8 = torch.float8_e4m3fn


def rel_err(out, ref):
    out = out.double()
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def check(name, out, ref, tol):
    if not torch.isfinite(out).all():
        sys.exit("%s: non-finite output" % name)
    e = rel_err(out, ref)
    if e > tol:
        sys.exit("%s: relative error %.3g exceeds %.3g" % (name, e, tol))
    return e


def write_provenance(f, title, script, extra_software=""):
    """The '#' lines every measured file opens with: what it holds, the device (nvidia-smi's
    name, driver and maximum SM clock), the software, the date and the command that wrote it."""
    smi = subprocess.run(["nvidia-smi", "-i", str(torch.cuda.current_device()),
                          "--query-gpu=name,driver_version,clocks.max.sm",
                          "--format=csv,noheader"], capture_output=True, text=True,
                         check=False).stdout.strip().split("\n")[0]
    f.write("# %s\n" % title)
    f.write("# device: %s (nvidia-smi: name, driver, max SM clock: %s)\n"
            % (torch.cuda.get_device_name(), smi))
    f.write("# software: torch %s, CUDA %s, triton %s%s\n"
            % (torch.__version__, torch.version.cuda, triton.__version__, extra_software))
    f.write("# date: %s\n"
            % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    f.write("# script: %s\n" % script)


def write_measured(path, title, script, method, columns, rows):
    """A measured file: the provenance lines, the method, the columns, one row of strings a
    line."""
    with open(path, "w") as f:
        write_provenance(f, title, script)
        f.write("# method: %s\n" % method)
        f.write(columns + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e-3


def gemm_cases():
    widths = [(4096, 4096), (6144, 4096), (14336, 4096), (4096, 14336), (8192, 8192),
              (10240, 8192), (28672, 8192), (8192, 28672), (128256, 4096)]
    for m in [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
        for n, k in widths:
            if m * n > 16384 * 28672:
                continue
            yield m, n, k


def run_gemm(rows, device):
    for m, n, k in gemm_cases():
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        b = torch.randn(k, n, device="cuda", dtype=BF16)
        if m <= 2048:  # a float64 product of the largest shapes is slow and adds nothing
            check("gemm", a @ b, a.double() @ b.double(), 1e-2)
        t = bench(lambda: a @ b)
        rows.append(["op", "gemm", device, "%dx%dx%d" % (m, n, k), "bf16", t])


def run_unseen(rows, device):
    """GEMMs and attention at shapes the default grid never times, for checking a calibration
    on rows it was not fitted on: the tensor-parallel shards of Llama 3 8B/70B/405B and Qwen2.5
    7B's projections (N x K per shard) at row counts between the grid's, and attention at
    other lengths, head counts and batches."""
    widths = [(3072, 4096), (4096, 2048), (7168, 4096), (4096, 7168),       # 8B, tp=2
              (2560, 8192), (8192, 2048), (7168, 8192), (8192, 7168),       # 70B, tp=4
              (1280, 8192), (3584, 8192), (8192, 3584),                     # 70B, tp=8
              (2304, 16384), (6656, 16384), (16384, 6656),                  # 405B, tp=8
              (18944, 3584), (3584, 18944)]                                 # Qwen2.5 7B
    for m in [1, 4, 24, 96, 384, 1536, 3072, 6144, 12288]:
        for n, k in widths:
            a = torch.randn(m, k, device="cuda", dtype=BF16)
            b = torch.randn(k, n, device="cuda", dtype=BF16)
            if m <= 2048:
                check("gemm", a @ b, a.double() @ b.double(), 1e-2)
            rows.append(["op", "gemm", device, "%dx%dx%d" % (m, n, k), "bf16", bench(lambda: a @ b)])
            del a, b
    cases = [(b, h, kv, l, l, causal) for b, l in [(2, 1024), (8, 1024), (1, 3072), (1, 16384)]
             for h, kv in [(16, 8), (40, 8), (8, 1)] for causal in [True, False]]
    cases += [(b, h, kv, 1, l, False) for b in [4, 16, 48] for l in [2048, 8192, 32768]
              for h, kv in [(40, 8), (16, 2)] if b * l * kv * 128 * 4 <= 8e9]
    time_attention(rows, device, cases)


def to_fp8(x, rowwise):
    """x quantised to float8_e4m3fn with one scale for the tensor or one per row (dim 0)."""
    amax = x.abs().amax(dim=-1, keepdim=True) if rowwise else x.abs().amax()
    scale = (amax.float() / torch.finfo(FP8).max).clamp_min(1e-12)
    return (x.float() / scale).to(FP8), scale


def run_gemm_fp8(rows, device, rowwise):
    """FP8 GEMMs as torch._scaled_mm runs them (cuBLASLt, bf16 out): A (m x k) row-major and
    B (k x n) column-major in e4m3, with per-tensor scales or, with `rowwise`, one scale per
    row of A and per column of B (what serving engines use for dynamic activation scaling).
    A shape cuBLASLt refuses is reported and left out."""
    for m, n, k in gemm_cases():
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        w = torch.randn(n, k, device="cuda", dtype=BF16)
        qa, sa = to_fp8(a, rowwise)
        qw, sw = to_fp8(w, rowwise)
        sb = sw.t() if rowwise else sw
        f = lambda: torch._scaled_mm(qa, qw.t(), scale_a=sa, scale_b=sb, out_dtype=BF16)
        try:
            out = f()
        except RuntimeError as e:
            print("gemm fp8 %dx%dx%d left out: %s" % (m, n, k, str(e).splitlines()[0]))
            continue
        if m <= 2048:
            ref = (qa.double() * sa.double()) @ (qw.double() * sw.double()).t()
            check("gemm fp8", out, ref, 1e-2)
        rows.append(["op", "gemm", device, "%dx%dx%d" % (m, n, k), "fp8", bench(f)])
        del a, w, qa, qw


def rms_norm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)


def run_rows(rows, device):
    for r in [1, 16, 256, 1024, 4096, 16384]:
        for c in [4096, 8192]:
            x = torch.randn(r, c, device="cuda", dtype=BF16)
            w = torch.randn(c, device="cuda", dtype=BF16)
            bias = torch.randn(c, device="cuda", dtype=BF16)
            y = torch.randn(r, c, device="cuda", dtype=BF16)
            xd = x.double()
            ref_rms = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
            check("rmsnorm", rms_norm(x, w), ref_rms, 1e-2)
            check("layernorm", F.layer_norm(x, (c,), w, bias),
                  F.layer_norm(xd, (c,), w.double(), bias.double()), 1e-2)
            check("softmax", torch.softmax(x, -1), torch.softmax(xd, -1), 1e-2)
            check("elementwise", x + y, xd + y.double(), 1e-2)
            shape = "%dx%d" % (r, c)
            rows.append(["op", "rmsnorm", device, shape, "bf16", bench(lambda: rms_norm(x, w))])
            rows.append(["op", "layernorm", device, shape, "bf16",
                         bench(lambda: F.layer_norm(x, (c,), w, bias))])
            rows.append(["op", "softmax", device, shape, "bf16",
                         bench(lambda: torch.softmax(x, -1))])
            rows.append(["op", "elementwise", device, str(r * c), "bf16", bench(lambda: x + y)])


GRID_LENGTHS = [1024, 2048, 4096, 5120, 8192, 12288, 16384]
GRID_ROWS = [1, 8, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
UNSEEN_LENGTHS = [1536, 2560, 3072, 3584, 6144, 7168, 10240, 14336]
UNSEEN_ROWS = [1, 16, 128, 512, 1536, 3072, 6144, 12288, 24576, 49152]


def run_rows_grid(rows, device, lengths=GRID_LENGTHS, counts=GRID_ROWS):
    """Row-wise kernels (RMSNorm, LayerNorm, softmax) and the contiguous add over a grid of
    row counts and row lengths in bf16 and fp32, the widths of models from 1K to 16K hidden
    and the row counts of a decode batch up to a long prefill: enough row lengths that a fit
    on half of them is checked on row lengths it has not seen. The kernels PyTorch picks are
    printed for three row lengths."""
    seen = set()
    for dtype, name in [(BF16, "bf16"), (torch.float32, "fp32")]:
        for c in lengths:
            for r in counts:
                if r * c > 2 ** 29:
                    continue
                x = torch.randn(r, c, device="cuda", dtype=dtype)
                w = torch.randn(c, device="cuda", dtype=dtype)
                bias = torch.randn(c, device="cuda", dtype=dtype)
                y = torch.randn(r, c, device="cuda", dtype=dtype)
                rms = lambda: rms_norm(x, w)
                ln = lambda: F.layer_norm(x, (c,), w, bias)
                sm = lambda: torch.softmax(x, -1)
                add = lambda: x + y
                if r * c <= 2 ** 25:  # the float64 copies of the largest rows add nothing
                    xd = x.double()
                    ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
                    check("rmsnorm", rms(), ref, 1e-2)
                    check("layernorm", ln(), F.layer_norm(xd, (c,), w.double(), bias.double()), 1e-2)
                    check("softmax", sm(), torch.softmax(xd, -1), 1e-2)
                    check("elementwise", add(), xd + y.double(), 1e-2)
                    del xd, ref
                if r == 4096 and c in (1024, 4096, 16384):
                    for op, fn in [("rmsnorm", rms), ("layernorm", ln), ("softmax", sm)]:
                        print("%s %s %dx%d kernels: %s" % (op, name, r, c, "; ".join(kernel_names(fn))))
                shape = "%dx%d" % (r, c)
                rows.append(["op", "rmsnorm", device, shape, name, bench(rms)])
                rows.append(["op", "layernorm", device, shape, name, bench(ln)])
                rows.append(["op", "softmax", device, shape, name, bench(sm)])
                if (name, r * c) not in seen:
                    seen.add((name, r * c))
                    rows.append(["op", "elementwise", device, str(r * c), name, bench(add)])
                del x, w, bias, y
            torch.cuda.empty_cache()


def run_softmax_kernels(rows, device):
    """Softmax over row lengths that take each of PyTorch's four softmax kernels (SoftMax.cu's
    host_softmax: one warp a row up to 2,048 elements and 8 KiB; registers up to nine
    elements a thread of 1,024; the row in 48 KiB of shared memory; the row read three
    times), in bf16 and fp32, at lengths the row grid (run_rows_grid) does not time, so that
    a fit on these rows is checked on the grid's. The kernel each length launches is printed."""
    for dtype, name in [(BF16, "bf16"), (torch.float32, "fp32")]:
        for c in [768, 1536, 3072, 6144, 10240, 20480, 24576, 40960]:
            for r in [16, 256, 2048, 16384]:
                if r * c > 2 ** 29:
                    continue
                x = torch.randn(r, c, device="cuda", dtype=dtype)
                sm = lambda: torch.softmax(x, -1)
                if r * c <= 2 ** 25:
                    check("softmax", sm(), torch.softmax(x.double(), -1), 1e-2)
                if r == 2048:
                    print("softmax %s %dx%d kernels: %s" % (name, r, c, "; ".join(kernel_names(sm))))
                rows.append(["op", "softmax", device, "%dx%d" % (r, c), name, bench(sm)])
                del x
            torch.cuda.empty_cache()


def run_loss_rows(rows, device):
    """The loss's row-wise kernels at vocabulary widths: softmax over fp32 rows of 32K to 152K
    elements (a training step's log-softmax runs the same cunn_SoftMaxForward kernel; its
    forward and backward are printed beside, with the casts a step runs around its GEMMs:
    bf16 to fp32, PyTorch's unrolled copy, and fp32 to bf16)."""
    for c in [32000, 50304, 65536, 128256, 151936]:
        for r in [256, 1024, 2048, 4096, 8192]:
            x = torch.randn(r, c, device="cuda", dtype=torch.float32)
            sm = lambda: torch.softmax(x, -1)
            if r <= 1024:
                check("softmax", sm(), torch.softmax(x.double(), -1), 1e-2)
            if r == 4096 and c == 128256:
                print("softmax fp32 %dx%d kernels: %s" % (r, c, "; ".join(kernel_names(sm))))
            rows.append(["op", "softmax", device, "%dx%d" % (r, c), "fp32", bench(sm)])
            xg = x.detach().requires_grad_(True)
            out = torch.log_softmax(xg, -1)
            grad = torch.randn_like(out)
            fwd = bench(lambda: torch.log_softmax(x, -1))
            bwd = bench(lambda: torch.autograd.grad(out, xg, grad, retain_graph=True))
            print("log_softmax fp32 %dx%d: forward %.4g s, backward %.4g s" % (r, c, fwd, bwd))
            del x, xg, out, grad
        torch.cuda.empty_cache()
    for n in [2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28]:
        h = torch.randn(n, device="cuda", dtype=BF16)
        w = torch.randn(n, device="cuda", dtype=torch.float32)
        check("cast to fp32", h.float(), h.double(), 1e-6)
        widen = bench(lambda: h.float())
        narrow = bench(lambda: w.to(BF16))
        print("cast %d elements: bf16 to fp32 %.4g s (%.3g TB/s), fp32 to bf16 %.4g s (%.3g TB/s)"
              % (n, widen, 6 * n / widen / 1e12, narrow, 6 * n / narrow / 1e12))
        if n == 2 ** 26:
            print("cast kernels: %s | %s" % ("; ".join(kernel_names(lambda: h.float())),
                                             "; ".join(kernel_names(lambda: w.to(BF16)))))
        del h, w
    torch.cuda.empty_cache()


def run_casts(rows, device):
    """The widening cast a training step runs on every weight gradient, per micro-batch: N
    bf16 elements copied to fp32 (`widen N`), which PyTorch runs in its unrolled loop with a
    cast on every load (unrolled_elementwise_kernel, direct_copy), not its vectorised one."""
    for e in range(12, 29):
        n = 2 ** e if e % 2 == 0 else 3 * 2 ** (e - 1)
        h = torch.randn(n, device="cuda", dtype=BF16)
        check("widen", h.float(), h.double(), 1e-6)
        if e == 26:
            print("widen %d kernels: %s" % (n, "; ".join(kernel_names(lambda: h.float()))))
        rows.append(["op", "widen", device, str(n), "bf16", bench(lambda: h.float())])
        del h
    torch.cuda.empty_cache()


def run_accumulate(rows, device):
    """Megatron-LM's gradient accumulation without its fused kernel: every micro-batch adds
    each bf16 weight gradient into the parameter's fp32 main gradient (`main_grad.add_(grad)`),
    N elements (`accumulate N`), which PyTorch runs in its unrolled loop with a cast on both
    loads (unrolled_elementwise_kernel, CUDAFunctor_add<float>, LoadWithCast)."""
    for e in range(12, 29):
        n = 2 ** e if e % 2 == 0 else 3 * 2 ** (e - 1)
        main = torch.randn(n, device="cuda", dtype=torch.float32)
        grad = torch.randn(n, device="cuda", dtype=BF16)
        want = main.double() + grad.double()
        check("accumulate", main.clone().add_(grad), want, 1e-6)
        del want
        if e == 26:
            print("accumulate %d kernels: %s" % (n, "; ".join(kernel_names(lambda: main.add_(grad)))))
        rows.append(["op", "accumulate", device, str(n), "bf16", bench(lambda: main.add_(grad))])
        del main, grad
    torch.cuda.empty_cache()


def run_column_sum(rows, device):
    """A bias's gradient: the sum over the tokens of its output's gradient, R rows of C bf16
    elements summed into C (`column_sum RxC`), as Megatron-LM's linear layers and bias-GeLU
    compute it (grad_output.sum(dim=0): PyTorch's reduce_kernel over the outer dimension)."""
    for c in [1024, 2560, 4096, 7680, 10240, 16384, 30720]:
        for r in [1024, 4096, 8192, 16384, 32768]:
            if r * c > 2 ** 29:
                continue
            g = torch.randn(r, c, device="cuda", dtype=BF16)
            cs = lambda: g.sum(dim=0)
            if r * c <= 2 ** 25:
                check("column_sum", cs(), g.double().sum(dim=0), 1e-2)
            if r == 4096 and c == 10240:
                print("column_sum %dx%d kernels: %s" % (r, c, "; ".join(kernel_names(cs))))
            rows.append(["op", "column_sum", device, "%dx%d" % (r, c), "bf16", bench(cs)])
            del g
        torch.cuda.empty_cache()


def run_strided(rows, device):
    """Elementwise kernels over non-contiguous views, as an eager Llama layer runs them: PyTorch
    takes its unvectorised TensorIterator loop for these, well below a contiguous op's rate.
    - strided N: a unary op on a view, or a product with a broadcast operand (SiLU of the
      gate half of a fused gate/up output; the negated half of each head in RoPE; a query
      view of the fused QKV output times the broadcast cosines);
    - strided_binary N: the SiLU output times the up half of the gate/up output;
    - cat N: RoPE's cat(-x2, x1) of a contiguous half and a strided half, N output elements."""
    for r in [16, 256, 1024, 4096, 16384, 65536]:
        for c in [4096, 14336]:
            base = torch.randn(r, 2 * c, device="cuda", dtype=BF16)
            gate, up = base.chunk(2, dim=-1)
            act = F.silu(gate)
            if r <= 4096:  # float64 copies of the largest views add nothing but memory
                check("strided silu", act, F.silu(gate.double()), 1e-2)
                check("strided_binary", act * up, act.double() * up.double(), 1e-2)
            rows.append(["op", "strided", device, str(r * c), "bf16", bench(lambda: F.silu(gate))])
            rows.append(["op", "strided_binary", device, str(r * c), "bf16",
                         bench(lambda: act * up)])
            del base, gate, up, act
        for heads in [32, 8]:
            qkv = torch.randn(r, heads + 2 * max(1, heads // 4), 128, device="cuda", dtype=BF16)
            x = qkv[:, :heads]
            cos = torch.randn(r, 1, 128, device="cuda", dtype=BF16)
            x1, x2 = x.chunk(2, dim=-1)
            neg = -x2
            n = r * heads * 128
            check("strided broadcast", x * cos, x.double() * cos.double(), 1e-2)
            check("cat", torch.cat([neg, x1], dim=-1),
                  torch.cat([neg.double(), x1.double()], dim=-1), 1e-6)
            rows.append(["op", "strided", device, str(n), "bf16", bench(lambda: x * cos)])
            rows.append(["op", "strided", device, str(n // 2), "bf16", bench(lambda: -x2)])
            rows.append(["op", "cat", device, str(n), "bf16",
                         bench(lambda: torch.cat([neg, x1], dim=-1))])
            del qkv, x, cos, x1, x2, neg
        torch.cuda.empty_cache()


def run_compound(rows, device):
    """Compound operations as PyTorch eager runs them, one kernel per step (the unfused form
    of costmodel/gpu_op.cpp): RMSNorm+Linear, gated MLP (one GEMM for gate and up, SiLU,
    product, down), GEMM+softmax, GEMM+LayerNorm, LoRA+Linear."""
    def w(k, n):
        return torch.randn(k, n, device="cuda", dtype=BF16) / k ** 0.5

    for m in [1, 16, 128, 1024, 4096, 16384]:
        for h, f in [(4096, 14336), (8192, 28672)]:
            if m * f > 16384 * 14336:
                continue
            x = torch.randn(m, h, device="cuda", dtype=BF16)
            g = torch.randn(h, device="cuda", dtype=BF16)
            wq = w(h, h + h // 2)
            wgu = w(h, 2 * f)
            wd = w(f, h)
            la = w(h, 16)
            lb = w(16, h)
            wo = w(h, h)

            def rms_lin():
                return rms_norm(x, g) @ wq

            def mlp():
                gate, up = (x @ wgu).chunk(2, -1)
                return (F.silu(gate) * up) @ wd

            def lora():
                return x @ wo + (x @ la) @ lb

            if m <= 1024:
                xd = x.double()
                nd = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * g.double()
                check("rmsnorm_linear", rms_lin(), nd @ wq.double(), 2e-2)
                gd, ud = (xd @ wgu.double()).chunk(2, -1)
                check("gated_mlp", mlp(), (F.silu(gd) * ud) @ wd.double(), 2e-2)
                check("lora_linear", lora(), xd @ wo.double() + (xd @ la.double()) @ lb.double(),
                      2e-2)
            rows.append(["op", "rmsnorm_linear", device, "%dx%dx%d" % (m, h, wq.shape[1]), "bf16",
                         bench(rms_lin)])
            rows.append(["op", "gated_mlp", device, "%dx%dx%d" % (m, h, f), "bf16", bench(mlp)])
            rows.append(["op", "lora_linear", device, "%dx%dx%dx16" % (m, h, h), "bf16",
                         bench(lora)])
            del x, wq, wgu, wd, wo
    for m, n, k in [(1024, 1024, 128), (4096, 4096, 128), (8192, 8192, 128), (2048, 32000, 4096),
                    (16384, 4096, 4096), (4096, 8192, 8192), (256, 128256, 4096)]:
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        b = w(k, n)
        gam = torch.randn(n, device="cuda", dtype=BF16)
        bet = torch.randn(n, device="cuda", dtype=BF16)
        sm = lambda: torch.softmax(a @ b, -1)
        ln = lambda: F.layer_norm(a @ b, (n,), gam, bet)
        if m * n <= 2 ** 25:
            p = a.double() @ b.double()
            check("gemm_softmax", sm(), torch.softmax(p, -1), 2e-2)
            check("gemm_layernorm", ln(), F.layer_norm(p, (n,), gam.double(), bet.double()), 2e-2)
        shape = "%dx%dx%d" % (m, n, k)
        rows.append(["op", "gemm_softmax", device, shape, "bf16", bench(sm)])
        rows.append(["op", "gemm_layernorm", device, shape, "bf16", bench(ln)])
        del a, b


def attention_ref(q, k, v, causal):
    rep = q.shape[1] // k.shape[1]
    k = k.double().repeat_interleave(rep, 1)
    v = v.double().repeat_interleave(rep, 1)
    s = q.double() @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        lq, lk = s.shape[-2], s.shape[-1]
        mask = torch.ones(lq, lk, device=s.device, dtype=torch.bool).tril(lk - lq)
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def time_attention(rows, device, cases):
    """F.scaled_dot_product_attention with GQA, head dimension 128, for each case
    (batch, heads, kv heads, query length, key length, causal): checked, then timed."""
    for b, h, kv, lq, lk, causal in cases:
        q = torch.randn(b, h, lq, 128, device="cuda", dtype=BF16)
        k = torch.randn(b, kv, lk, 128, device="cuda", dtype=BF16)
        v = torch.randn(b, kv, lk, 128, device="cuda", dtype=BF16)
        f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        if b * h * lq * lk <= 2 ** 28 and b * h * lk * 128 <= 2 ** 28:
            check("attention", f(), attention_ref(q, k, v, causal), 2e-2)
        shape = "%dx%dx%dx%dx%dx128" % (b, h, kv, lq, lk)
        rows.append(["op", "attention_causal" if causal else "attention", device, shape, "bf16",
                     bench(f)])
        del q, k, v
        torch.cuda.empty_cache()


def run_attention(rows, device):
    cases = []
    for b, l in [(1, 2048), (4, 2048), (1, 8192), (2, 4096)]:
        for h, kv in [(32, 8), (64, 8), (32, 32)]:
            for causal in [True, False]:
                cases.append((b, h, kv, l, l, causal))
    for b in [1, 8, 32, 64]:
        for l in [1024, 4096, 16384, 65536]:
            for h, kv in [(32, 8), (64, 8)]:
                if b * l * kv * 128 * 2 * 2 > 8e9:
                    continue
                cases.append((b, h, kv, 1, l, False))
    time_attention(rows, device, cases)


def time_attention_step(rows, device, b, h, kv, l, d, show_kernels=False):
    """Causal attention over a prompt of l tokens as a training step runs it (head dimension d):
    checked against float64 where small enough, then its forward (`attention_causal`) and its
    backward alone (`attention_backward`, the gradients of q, k and v given the output's)."""
    q = torch.randn(b, h, l, d, device="cuda", dtype=BF16, requires_grad=True)
    k = torch.randn(b, kv, l, d, device="cuda", dtype=BF16, requires_grad=True)
    v = torch.randn(b, kv, l, d, device="cuda", dtype=BF16, requires_grad=True)
    f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    out = f()
    grad = torch.randn_like(out)
    if b * h * l * l <= 2 ** 28:
        check("attention", out.detach(), attention_ref(q.detach(), k.detach(), v.detach(), True),
              2e-2)
        ref = [x.detach().double().requires_grad_(True) for x in (q, k, v)]
        ref_out = attention_ref(*ref, True)
        want = torch.autograd.grad(ref_out, ref, grad.double())
        got = torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        for name, g, w in zip("qkv", got, want):
            check("attention backward d" + name, g, w, 3e-2)
    if show_kernels:
        bwd_fn = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        print("attention kernels: %s; backward %s" % ("; ".join(kernel_names(f)),
                                                      "; ".join(kernel_names(bwd_fn))))
    shape = "%dx%dx%dx%dx%dx%d" % (b, h, kv, l, l, d)
    with torch.no_grad():
        fwd = bench(f)
    bwd = bench(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True))
    rows.append(["op", "attention_causal", device, shape, "bf16", fwd])
    rows.append(["op", "attention_backward", device, shape, "bf16", bwd])
    print("attention %s: forward %.4g s, backward %.4g s, ratio %.2f" % (shape, fwd, bwd, bwd / fwd))
    del q, k, v, out, grad
    torch.cuda.empty_cache()


def run_attention_backward(rows, device):
    """Causal attention forward and backward as a training step runs it
    (F.scaled_dot_product_attention with GQA, cuDNN's flash kernels), head dimension 128."""
    for h, kv in [(32, 8), (64, 8), (16, 4), (8, 2), (32, 32)]:
        for b, l in [(1, 1024), (4, 1024), (1, 2048), (2, 2048), (1, 4096), (2, 4096),
                     (1, 8192), (1, 16384)]:
            time_attention_step(rows, device, b, h, kv, l, 128,
                                show_kernels=(h, kv, b, l) == (32, 8, 1, 4096))


def run_attention_head_dims(rows, device):
    """The same at the head dimensions models other than Llama 3 use (64: Llama 3.2 1B; 80:
    GPT-3 2.7B; 96) beside 128, at the same heads and lengths."""
    for d in [64, 80, 96, 128]:
        for h, kv in [(32, 8), (16, 8)]:
            for b, l in [(1, 2048), (4, 2048), (1, 4096), (1, 8192)]:
                time_attention_step(rows, device, b, h, kv, l, d,
                                    show_kernels=(h, kv, b, l) == (32, 8, 1, 4096))


def kernel_names(fn):
    """The CUDA kernels one call of fn launches, as the profiler names them."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})


def run_decode_attention(rows, device):
    """Decode attention (one new token per sequence against a KV cache) in the two ways a
    PyTorch decode step calls F.scaled_dot_product_attention:
    - one query per head, K/V shared by GQA (enable_gqa): shape b x heads x kv x 1 x ctx;
    - the group's query heads as one block of queries against their KV head (no GQA
      expansion, what bench/run_infer.py does): shape b x kv x kv x group x ctx.
    Batch 1-256, contexts 1K-128K, GQA groups 1-16, 8, 4 and 2 KV heads (one, two and four
    tensor-parallel ranks of an 8-KV-head model); caches above 8 GB are left out."""
    shown = set()
    for h, kv in [(8, 8), (32, 8), (64, 8), (128, 8), (16, 4), (8, 2)]:
        g = h // kv
        for b in [1, 4, 16, 64, 256]:
            for ctx in [1024, 4096, 16384, 65536, 131072]:
                if b * ctx * kv * 128 * 2 * 2 > 8e9:
                    continue
                k = torch.randn(b, kv, ctx, 128, device="cuda", dtype=BF16)
                v = torch.randn(b, kv, ctx, 128, device="cuda", dtype=BF16)
                q = torch.randn(b, h, 1, 128, device="cuda", dtype=BF16)
                styles = [("gqa", q, "%dx%dx%dx1x%dx128" % (b, h, kv, ctx), True)]
                if g > 1:
                    styles.append(("grouped", q.view(b, kv, g, 128),
                                   "%dx%dx%dx%dx%dx128" % (b, kv, kv, g, ctx), False))
                for style, qq, shape, gqa in styles:
                    f = lambda: F.scaled_dot_product_attention(qq, k, v, enable_gqa=gqa)
                    if b * h * ctx <= 2 ** 21:  # the float64 reference holds K and V per head
                        ref = attention_ref(q, k, v, False).view(qq.shape)
                        check("decode attention " + style, f(), ref, 2e-2)
                    if style not in shown or (b, ctx) in [(1, 131072), (256, 1024)]:
                        shown.add(style)
                        print("decode attention %s %s kernels: %s"
                              % (style, shape, "; ".join(kernel_names(f))))
                    rows.append(["op", "attention", device, shape, "bf16", bench(f)])
                del q, k, v
                torch.cuda.empty_cache()


def run_rows_unseen(rows, device):
    """The same kernels at row lengths and counts the grid (run_rows_grid) does not have: the
    hidden widths of other models (Qwen2.5's 1,536, 3,584; Mistral's and Llama 1's 5,120 is the
    grid's; 3,072, 6,144, 7,168, 10,240 and the 14,336 of Llama 3 8B's MLP) and row counts
    between the grid's. Nothing is fitted on them: they check a fit on the grid."""
    run_rows_grid(rows, device, UNSEEN_LENGTHS, UNSEEN_ROWS)


GRAPHED_METHOD = ("# method, backward rows: each call replayed from a CUDA graph "
                  "(bench/steps_common.py graphed), without the host's dispatch\n")


def run_norm_backward(rows, device, lengths=GRID_LENGTHS, counts=GRID_ROWS):
    """RMSNorm's and LayerNorm's backward (the input's gradient and the weights', ATen's
    _fused_rms_norm_backward and native_layer_norm_backward, which autograd runs for F.rms_norm
    and F.layer_norm with weights of the input's dtype) over the grid of run_rows_grid, in bf16
    and fp32, replayed from a CUDA graph: PyTorch's two backward kernels (the input's gradient,
    then the weights' summed over rows) without the host's dispatch, which autograd called from
    Python spends 100-200 us on. Checked against autograd in float64 first."""
    aten = torch.ops.aten
    for dtype, name in [(BF16, "bf16"), (torch.float32, "fp32")]:
        for c in lengths:
            for r in counts:
                if r * c > 2 ** 29:
                    continue
                for op in ["rmsnorm", "layernorm"]:
                    x = torch.randn(r, c, device="cuda", dtype=dtype)
                    w = torch.randn(c, device="cuda", dtype=dtype)
                    b = torch.randn(c, device="cuda", dtype=dtype)
                    dy = torch.randn_like(x)
                    if op == "rmsnorm":
                        _, rstd = aten._fused_rms_norm(x, [c], w, 1e-6)
                        grad = lambda: aten._fused_rms_norm_backward(dy, x, [c], rstd, w,
                                                                     [True, True])
                    else:
                        _, mean, rstd = aten.native_layer_norm(x, [c], w, b, 1e-5)
                        grad = lambda: aten.native_layer_norm_backward(dy, x, [c], mean, rstd, w,
                                                                       b, [True, True, True])
                    if r * c <= 2 ** 22:
                        xd = x.double().requires_grad_(True)
                        pd = [t.double().requires_grad_(True) for t in (w, b)]
                        yd = (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * pd[0]
                              if op == "rmsnorm" else F.layer_norm(xd, (c,), pd[0], pd[1]))
                        want = torch.autograd.grad(yd, [xd, pd[0]], dy.double())
                        got = grad()
                        check(op + " backward input", got[0], want[0], 2e-2)
                        check(op + " backward weight", got[1], want[1], 2e-2)
                        del xd, pd, yd, want, got
                    rows.append(["op", op + "_backward", device, "%dx%d" % (r, c), name,
                                 bench(sc.graphed(grad))])
                    del x, w, b, dy
            torch.cuda.empty_cache()


def run_norm_backward_unseen(rows, device):
    """The norms' backward at the lengths and row counts of run_rows_unseen, which nothing is
    fitted on."""
    run_norm_backward(rows, device, UNSEEN_LENGTHS, UNSEEN_ROWS)


def run_rows_repeat(rows, device):
    """ops.csv's row-wise kernels and add (run_rows) timed five times over, fresh data each
    time: how far one median moves between runs (docs/validation.md)."""
    for _ in range(5):
        run_rows(rows, device)


# The groups measured only when asked for (--only NAME).
ONLY = {"decode_attention": run_decode_attention, "strided": run_strided, "rows": run_rows_grid,
        "rows_unseen": run_rows_unseen, "norm_backward": run_norm_backward,
        "norm_backward_unseen": run_norm_backward_unseen,
        "loss": run_loss_rows, "casts": run_casts, "attention_backward": run_attention_backward,
        "unseen": run_unseen, "rows_repeat": run_rows_repeat, "softmax": run_softmax_kernels,
        "accumulate": run_accumulate, "column_sum": run_column_sum,
        "attention_head_dims": run_attention_head_dims}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", required=True, help="yirage registry name of the GPU")
    p.add_argument("--out", required=True)
    p.add_argument("--only", choices=["compound", "fp8", "fp8_rowwise"] + sorted(ONLY),
                   help="measure only this group")
    a = p.parse_args()
    torch.manual_seed(0)
    rows = []
    if a.only is None:
        run_gemm(rows, a.device)
        run_rows(rows, a.device)
        run_attention(rows, a.device)
    if a.only in (None, "compound"):
        run_compound(rows, a.device)
    if a.only in ("fp8", "fp8_rowwise"):
        run_gemm_fp8(rows, a.device, a.only == "fp8_rowwise")
    if a.only in ONLY:
        ONLY[a.only](rows, a.device)
    with open(a.out, "w") as f:
        write_provenance(f, "Single operations on one %s, measured with PyTorch." % a.device,
                         "bench/ops.py %s" % " ".join(sys.argv[1:]),
                         ", cuBLAS via torch.matmul (fp8: torch._scaled_mm), "
                         "F.scaled_dot_product_attention")
        f.write("# method: checked against float64 on random data first; median of "
                "triton.testing.do_bench (CUDA events, L2 flushed, 25 ms warm-up, 100 ms)\n")
        if a.only in ("norm_backward", "norm_backward_unseen"):
            f.write(GRAPHED_METHOD)
        f.write("kind,op,device,shape,dtype,time_s,stat\n")
        for r in rows:
            f.write("%s,%s,%s,%s,%s,%.6g,median\n" % tuple(r))
    print("wrote %d rows to %s" % (len(rows), a.out))


if __name__ == "__main__":
    main()
