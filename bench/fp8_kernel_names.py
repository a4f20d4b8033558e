#!/usr/bin/env python3
"""Prints the CUDA kernels torch._scaled_mm launches for fp8 GEMMs (row-wise and per-tensor
scales) and bf16 torch.matmul at decode-to-prefill M, with each call's median time: which
kernel family and tile each path takes (docs/validation.md, "FP8").

    python3 bench/fp8_kernel_names.py
"""
import torch

from ops import BF16, bench, kernel_names, to_fp8

for n, k in [(4096, 14336), (8192, 28672), (128256, 4096)]:
    for m in [1, 16, 64, 256, 1024, 4096]:
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        w = torch.randn(n, k, device="cuda", dtype=BF16)
        for rowwise in (True, False):
            qa, sa = to_fp8(a, rowwise)
            qw, sw = to_fp8(w, rowwise)
            sb = sw.t() if rowwise else sw
            f = lambda: torch._scaled_mm(qa, qw.t(), scale_a=sa, scale_b=sb, out_dtype=BF16)
            print("%dx%dx%d %s %.2f us: %s" % (m, n, k, "rowwise" if rowwise else "tensor",
                                              bench(f) * 1e6, "; ".join(kernel_names(f))))
        g = lambda: a @ w.t()
        print("%dx%dx%d bf16 %.2f us: %s" % (m, n, k, bench(g) * 1e6, "; ".join(kernel_names(g))))
        del a, w
