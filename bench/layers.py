#!/usr/bin/env python3
"""Measures whole transformer layers with PyTorch and writes yirage's measured-CSV format
(data/benchmarks/README.md, kind `layer`): the forward pass (training, prefill, and decode
against a KV cache) and forward+backward, on one GPU, or tensor-parallel over the GPUs of
one host when started with torchrun.

The layer is a Llama layer (pre-norm, GQA attention with RoPE, gated SiLU MLP) with the
kernels a training or serving framework runs: RMSNorm (F.rms_norm), one GEMM for Q, K and V,
RoPE on Q and K in one Triton kernel, F.scaled_dot_product_attention (flash; causal in
prefill, over the cache in decode, whose new K and V are written into it first), the output
GEMM, the residual add, RMSNorm, one GEMM for gate and up, SiLU, the product, the down GEMM
and the residual add. Tensor parallelism is Megatron's: Q/K/V and gate/up split by columns,
output and down by rows; forward-only layers all-reduce after the output and down GEMMs;
forward+backward layers use sequence parallelism (all-gather before the QKV and gate/up
GEMMs, reduce-scatter after the output and down GEMMs, and the converse in backward).

Method (the device tool's METHOD.md): every configuration is first checked on random data
against the same layer in float64 (the whole layer, unsplit, on each rank); then forward
passes are captured in a CUDA graph (10-50 calls) and the graph's replays timed under CUDA
events (median of 7; slowest rank), so that host overhead stays out, as a serving framework's
graphs do; forward+backward steps run eagerly, timed by triton.testing.do_bench (median).
One layer's weights (0.2-1.7 GB) exceed the 50 MB L2, so no flush is needed between calls.

    python3 bench/layers.py --device H200 --out data/benchmarks/H200/layers.csv
    torchrun --nproc-per-node 4 bench/layers.py --device H200 --out data/benchmarks/H200x4/layers.csv
"""
import argparse
import datetime
import faulthandler
import os
import statistics
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
import triton
import triton.language as tl
import triton.testing

BF16 = torch.bfloat16
HERE = os.path.dirname(os.path.abspath(__file__))


def driver_version():
    out = subprocess.run(["nvidia-smi", "-i", str(torch.cuda.current_device()),
                          "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return out or "unknown"


def load_model(name):
    """hidden, heads, kv_heads, head_dim, ffn from data/models/NAME.yaml (top-level keys)."""
    cfg = {}
    with open(os.path.join(HERE, "..", "data", "models", name + ".yaml")) as f:
        for line in f:
            if line[:1].isalpha() and ":" in line:
                k, v = line.split(":", 1)
                cfg[k.strip()] = v.split("#")[0].strip()
    h, heads = int(cfg["hidden"]), int(cfg["heads"])
    return dict(name=name, hidden=h, heads=heads, kv=int(cfg.get("kv_heads", heads)),
                head_dim=int(cfg.get("head_dim", h // heads)), ffn=int(cfg["ffn"]))


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, seq, pos0, heads, tok_stride, sign,
                HALF: tl.constexpr):
    # x: the first `heads` heads of [tokens, *, 2 * HALF], rotated in place
    row = tl.program_id(0)
    tok = row // heads
    pos = pos0 + tok % seq
    d = tl.arange(0, HALF)
    base = x_ptr + tok * tok_stride + (row % heads) * 2 * HALF
    x1 = tl.load(base + d).to(tl.float32)
    x2 = tl.load(base + HALF + d).to(tl.float32)
    c = tl.load(cos_ptr + pos * HALF + d)
    s = tl.load(sin_ptr + pos * HALF + d) * sign
    tl.store(base + d, (x1 * c - x2 * s).to(x_ptr.dtype.element_ty))
    tl.store(base + HALF + d, (x2 * c + x1 * s).to(x_ptr.dtype.element_ty))


def rope_tables(positions, head_dim):
    inv = 1.0 / (500000.0 ** (torch.arange(0, head_dim, 2, device="cuda").double() / head_dim))
    ang = torch.arange(positions, device="cuda").double()[:, None] * inv[None, :]
    return ang.cos().float().contiguous(), ang.sin().float().contiguous()


def rope_inplace(x, heads, cos, sin, seq, pos0, sign=1.0):
    """Rotates heads [0, heads) of x [tokens, all heads, dim] (last two dims contiguous)."""
    tokens, _, dim = x.shape
    assert x.stride(2) == 1 and x.stride(1) == dim
    rope_kernel[(tokens * heads,)](x, cos, sin, seq, pos0, heads, x.stride(0), sign,
                                   HALF=dim // 2)


class Rope(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cos, sin, seq):
        ctx.tables = (cos, sin)
        ctx.seq = seq
        y = x.clone(memory_format=torch.contiguous_format)
        rope_inplace(y, y.shape[1], cos, sin, seq, 0)
        return y

    @staticmethod
    def backward(ctx, g):
        cos, sin = ctx.tables
        g = g.clone(memory_format=torch.contiguous_format)
        rope_inplace(g, g.shape[1], cos, sin, ctx.seq, 0, -1.0)  # the inverse rotation
        return g, None, None, None


def rope_ref(x, cos, sin, pos0):
    # x: [B, S, heads, dim] float64
    half = x.shape[-1] // 2
    c = cos[pos0:pos0 + x.shape[1]].double()[None, :, None, :]
    s = sin[pos0:pos0 + x.shape[1]].double()[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)


class Gather(torch.autograd.Function):
    """Sequence-parallel all-gather along tokens; reduce-scatter in backward."""
    @staticmethod
    def forward(ctx, x):
        w = dist.get_world_size()
        out = torch.empty((w * x.shape[0],) + x.shape[1:], device=x.device, dtype=x.dtype)
        dist.all_gather_into_tensor(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, g):
        w = dist.get_world_size()
        out = torch.empty((g.shape[0] // w,) + g.shape[1:], device=g.device, dtype=g.dtype)
        dist.reduce_scatter_tensor(out, g.contiguous())
        return out


class Scatter(torch.autograd.Function):
    """Sequence-parallel reduce-scatter along tokens; all-gather in backward."""
    @staticmethod
    def forward(ctx, x):
        return Gather.backward(ctx, x)

    @staticmethod
    def backward(ctx, g):
        return Gather.forward(ctx, g)


class Layer:
    """One Llama layer's shard for rank `rank` of `world`, cut from the full layer's weights
    (drawn from a seed, so that every rank holds the same full layer)."""

    def __init__(self, m, rank, world, max_pos):
        self.m, self.rank, self.world = m, rank, world
        h, hd, f = m["hidden"], m["head_dim"], m["ffn"]
        g = torch.Generator(device="cuda").manual_seed(7)

        def w(k, n):
            return torch.randn(k, n, device="cuda", generator=g, dtype=torch.float32) / k ** 0.5

        self.full = dict(n1=1 + 0.1 * torch.randn(h, device="cuda", generator=g),
                         q=w(h, m["heads"] * hd), k=w(h, m["kv"] * hd), v=w(h, m["kv"] * hd),
                         o=w(m["heads"] * hd, h), n2=1 + 0.1 * torch.randn(h, device="cuda",
                                                                            generator=g),
                         gate=w(h, f), up=w(h, f), down=w(f, h))
        self.heads, self.kv = m["heads"] // world, max(1, m["kv"] // world)
        qs, ks, fs = self.heads * hd, self.kv * hd, f // world
        fw = self.full

        def cols(t, n):
            return t[:, rank * n:(rank + 1) * n]

        self.wqkv = torch.cat([cols(fw["q"], qs), cols(fw["k"], ks), cols(fw["v"], ks)], 1)
        self.wo = fw["o"][rank * qs:(rank + 1) * qs]
        self.wgu = torch.cat([cols(fw["gate"], fs), cols(fw["up"], fs)], 1)
        self.wd = fw["down"][rank * fs:(rank + 1) * fs]
        self.n1, self.n2 = fw["n1"], fw["n2"]
        self.params = [self.n1, self.wqkv, self.wo, self.n2, self.wgu, self.wd]
        self.params = [p.to(BF16).contiguous().requires_grad_(True) for p in self.params]
        self.cos, self.sin = rope_tables(max_pos, hd)

    def drop_full(self):
        del self.full

    def forward(self, x, cache=None, pos0=0, sp_batch=0):
        """x: [B, S, H]; sequence-parallel (sp_batch = B > 0): [B*S/world, H], this rank's
        rows. cache: (K, V) [B, kv, >= pos0 + S, hd], the new tokens written at pos0."""
        n1, wqkv, wo, n2, wgu, wd = self.params
        m, hd = self.m, self.m["head_dim"]
        tp = self.world > 1
        seq_parallel = sp_batch > 0
        hdn = F.rms_norm(x, (m["hidden"],), n1, eps=1e-5)
        if seq_parallel:
            hdn = Gather.apply(hdn)
        if seq_parallel:
            b, s = sp_batch, hdn.shape[0] // sp_batch
        else:
            b, s = x.shape[0], x.shape[1]
        qkv = (hdn @ wqkv).view(b * s, self.heads + 2 * self.kv, hd)
        if cache is None:
            if torch.is_grad_enabled():
                qk = Rope.apply(qkv[:, :self.heads + self.kv], self.cos, self.sin, s)
            else:  # serving: in place, one kernel
                rope_inplace(qkv, self.heads + self.kv, self.cos, self.sin, s, 0)
                qk = qkv
            q = qk[:, :self.heads].view(b, s, self.heads, hd).transpose(1, 2)
            k = qk[:, self.heads:self.heads + self.kv].view(b, s, self.kv, hd).transpose(1, 2)
            v = qkv[:, self.heads + self.kv:].view(b, s, self.kv, hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            rope_inplace(qkv, self.heads + self.kv, self.cos, self.sin, s, pos0)
            qkv = qkv.view(b, s, self.heads + 2 * self.kv, hd)
            kc, vc = cache
            kc[:, :, pos0:pos0 + s] = qkv[:, :, self.heads:self.heads + self.kv].transpose(1, 2)
            vc[:, :, pos0:pos0 + s] = qkv[:, :, self.heads + self.kv:].transpose(1, 2)
            q = qkv[:, :, :self.heads].transpose(1, 2)
            a = F.scaled_dot_product_attention(q, kc, vc, is_causal=False, enable_gqa=True)
        a = a.transpose(1, 2).reshape(hdn.shape[:-1] + (self.heads * hd,)) @ wo
        if seq_parallel:
            a = Scatter.apply(a)
        elif tp:
            dist.all_reduce(a)
        x = x + a
        hdn = F.rms_norm(x, (m["hidden"],), n2, eps=1e-5)
        if seq_parallel:
            hdn = Gather.apply(hdn)
        gate, up = (hdn @ wgu).chunk(2, -1)
        d = (F.silu(gate) * up) @ wd
        if seq_parallel:
            d = Scatter.apply(d)
        elif tp:
            dist.all_reduce(d)
        return x + d

    def reference(self, x, cache=None, pos0=0):
        """The whole (unsplit) layer in float64; x [B, S, H]."""
        fw, m, hd = self.full, self.m, self.m["head_dim"]
        x = x.double()

        def rms(t, w):
            return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-5) * w.double()

        b, s, _ = x.shape
        hdn = rms(x, fw["n1"])
        q = rope_ref((hdn @ fw["q"].double()).view(b, s, m["heads"], hd), self.cos, self.sin, pos0)
        k = rope_ref((hdn @ fw["k"].double()).view(b, s, m["kv"], hd), self.cos, self.sin, pos0)
        v = (hdn @ fw["v"].double()).view(b, s, m["kv"], hd)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            k = torch.cat([cache[0].double(), k], 2)
            v = torch.cat([cache[1].double(), v], 2)
        rep = m["heads"] // m["kv"]
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        sc = q @ k.transpose(-1, -2) / hd ** 0.5
        mask = torch.ones(s, k.shape[2], device="cuda", dtype=torch.bool).tril(k.shape[2] - s)
        a = torch.softmax(sc.masked_fill(~mask, float("-inf")), -1) @ v
        x = x + a.transpose(1, 2).reshape(b, s, -1) @ fw["o"].double()
        hdn = rms(x, fw["n2"])
        return x + (F.silu(hdn @ fw["gate"].double()) * (hdn @ fw["up"].double())) @ \
            fw["down"].double()


def rel_err(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def fail(msg):
    sys.exit("rank %d: %s" % (dist.get_rank() if dist.is_initialized() else 0, msg))


def check_layer(layer, world):
    """Forward (prefill and decode) and, on one GPU or sequence-parallel, input gradients
    against float64 autograd, on small random inputs."""
    m = layer.m
    torch.manual_seed(11)  # the same inputs on every rank
    x = torch.randn(2, 64, m["hidden"], device="cuda", dtype=BF16)
    with torch.no_grad():
        out = layer.forward(x)
        ref = layer.reference(x)
    e = rel_err(out, ref)
    if e > 2e-2:
        fail("%s prefill layer: relative error %.3g" % (m["name"], e))
    ctx = 96
    kc = torch.randn(2, m["kv"], ctx + 1, m["head_dim"], device="cuda", dtype=BF16)
    vc = torch.randn_like(kc)
    xs = torch.randn(2, 1, m["hidden"], device="cuda", dtype=BF16)
    r = layer.rank
    sh = (kc[:, r * layer.kv:(r + 1) * layer.kv].clone(), vc[:, r * layer.kv:(r + 1) * layer.kv]
          .clone())
    with torch.no_grad():
        out = layer.forward(xs, sh, ctx)
        ref = layer.reference(xs, (kc[:, :, :ctx], vc[:, :, :ctx]), ctx)
    e = rel_err(out, ref)
    if e > 2e-2:
        fail("%s decode layer: relative error %.3g" % (m["name"], e))
    # gradients with respect to the input
    xg = x.detach().clone().requires_grad_(True)
    gy = torch.randn_like(x)
    if world > 1:
        rows = x.shape[0] * x.shape[1] // world
        xl = xg.view(-1, m["hidden"])[r * rows:(r + 1) * rows].detach().clone()
        xl.requires_grad_(True)
        y = layer.forward(xl, sp_batch=x.shape[0])
        y.backward(gy.view(-1, m["hidden"])[r * rows:(r + 1) * rows])
        got = xl.grad
    else:
        layer.forward(xg).backward(gy)
        got = xg.grad
    xd = x.double().requires_grad_(True)
    layer.reference(xd).backward(gy.double())
    ref = xd.grad.view(-1, m["hidden"])
    if world > 1:
        ref = ref[r * rows:(r + 1) * rows]
    e = rel_err(got.view(-1, m["hidden"]), ref)
    if e > 3e-2:
        fail("%s layer input gradient: relative error %.3g" % (m["name"], e))


def time_graph(fn, world):
    """Median seconds per call of fn() captured in a CUDA graph; slowest rank."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    t0.record()
    fn()
    t1.record()
    t1.synchronize()
    once = slowest(t0.elapsed_time(t1) * 1e-3, world)  # every rank captures as many calls
    iters = max(10, min(50, int(0.05 / max(once, 1e-6))))
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(iters):
                fn()
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(7):
        if world > 1:
            dist.barrier()
        torch.cuda.synchronize()
        t0.record()
        graph.replay()
        t1.record()
        t1.synchronize()
        times.append(t0.elapsed_time(t1) * 1e-3 / iters)
    del graph
    return slowest(statistics.median(times), world)


def slowest(t, world):
    if world == 1:
        return t
    v = torch.tensor([t], device="cuda")
    dist.all_reduce(v, op=dist.ReduceOp.MAX)
    return v.item()


def time_train(layer, b, s, world):
    m = layer.m
    shape = (b * s // world, m["hidden"]) if world > 1 else (b, s, m["hidden"])
    x = torch.randn(*shape, device="cuda", dtype=BF16, requires_grad=True)
    gy = torch.randn_like(x)

    def step():
        x.grad = None
        for p in layer.params:
            p.grad = None
        layer.forward(x, sp_batch=b if world > 1 else 0).backward(gy)

    if world > 1:  # every rank runs the same number of steps: a fixed count, timed by events
        for _ in range(3):
            step()
        times = []
        for _ in range(7):
            dist.barrier()
            torch.cuda.synchronize()
            t0 = torch.cuda.Event(enable_timing=True)
            t1 = torch.cuda.Event(enable_timing=True)
            t0.record()
            for _ in range(5):
                step()
            t1.record()
            t1.synchronize()
            times.append(t0.elapsed_time(t1) * 1e-3 / 5)
        return slowest(statistics.median(times), world)
    return triton.testing.do_bench(step, warmup=25, rep=200, return_mode="median") * 1e-3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", required=True, help="yirage registry name of the GPU")
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="llama3-8b,llama2-7b,llama3-70b")
    p.add_argument("--quick", action="store_true", help="a few configurations only")
    p.add_argument("--watchdog", type=int, default=0,
                   help="print every thread's stack and exit after this many seconds")
    a = p.parse_args()
    if a.watchdog:
        faulthandler.dump_traceback_later(a.watchdog, exit=True)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        torch.cuda.set_device(rank)
    rows = []
    fabric = "nvswitch" if world > 1 else ""
    for name in a.models.split(","):
        m = load_model(name)
        layer = Layer(m, rank, world, 32768)
        check_layer(layer, world)
        layer.drop_full()
        torch.cuda.empty_cache()
        big = m["hidden"] >= 8192
        if world == 1:
            train = [(1, 1024), (1, 2048), (1, 4096), (2, 4096)] if big else \
                [(1, 1024), (1, 2048), (1, 4096), (2, 4096), (4, 2048), (1, 8192), (8, 1024)]
            prefill = train
            decode = [(bt, k) for bt in [1, 8, 32, 128] for k in [1024, 4096, 16384]]
        else:
            train = [(1, 2048), (1, 4096), (2, 4096)] if big else []
            prefill = [(1, 512), (1, 2048), (1, 8192), (4, 2048)]
            decode = [(bt, k) for bt in [1, 8, 32, 128] for k in [2048, 8192]]
        if a.quick:
            train, prefill, decode = train[:1], prefill[:1], decode[:2]
        for b, s in prefill:
            torch.manual_seed(b * s)
            x = torch.randn(b, s, m["hidden"], device="cuda", dtype=BF16)
            with torch.no_grad():
                t = time_graph(lambda: layer.forward(x), world)
            rows.append(("forward", "%s:%dx%dx%d" % (name, b, s, s), t))
            del x
        for bt, k in decode:
            if bt * k * layer.kv * m["head_dim"] * 4 > 20e9:
                continue
            kc = torch.randn(bt, layer.kv, k, m["head_dim"], device="cuda", dtype=BF16)
            vc = torch.randn_like(kc)
            x = torch.randn(bt, 1, m["hidden"], device="cuda", dtype=BF16)
            with torch.no_grad():
                t = time_graph(lambda: layer.forward(x, (kc, vc), k - 1), world)
            rows.append(("forward", "%s:%dx1x%d" % (name, bt, k), t))
            del kc, vc, x
        for b, s in train:
            t = time_train(layer, b, s, world)
            rows.append(("forward_backward", "%s:%dx%dx%d" % (name, b, s, s), t))
        del layer
        torch.cuda.empty_cache()
        if rank == 0:
            print("%s: %d rows so far" % (name, len(rows)), flush=True)
    if rank == 0:
        with open(a.out, "w") as f:
            f.write("# Whole transformer layers on %d %s, measured with PyTorch%s.\n"
                    % (world, a.device, " (tensor parallel, one host)" if world > 1 else ""))
            f.write("# device: %s; NCCL %s; NCCL_NVLS_ENABLE=%s\n" % (
                torch.cuda.get_device_name(), ".".join(map(str, torch.cuda.nccl.version())),
                os.environ.get("NCCL_NVLS_ENABLE", "")))
            f.write("# software: torch %s, CUDA %s, triton %s\n"
                    % (torch.__version__, torch.version.cuda, triton.__version__))
            f.write("# driver: %s (nvidia-smi)\n" % driver_version())
            f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC"))
            launcher = "torchrun --nproc-per-node %d " % world if world > 1 else "python3 "
            f.write("# script: %sbench/layers.py %s\n" % (launcher, " ".join(sys.argv[1:])))
            f.write("# method: checked against a float64 layer (output and input gradient) on "
                    "random data; forward: CUDA-graph replays, median of 7, slowest rank; "
                    "forward+backward: median of eager steps\n")
            f.write("# shape: MODEL:BxSxK (batch, new tokens per sequence, keys attended: "
                    "S in prefill and training, the cache length in decode)\n")
            f.write("kind,op,device,fabric,ranks,shape,dtype,time_s,stat\n")
            for op, shape, t in rows:
                f.write("layer,%s,%s,%s,%d,%s,bf16,%.6g,median\n"
                        % (op, a.device, fabric, world, shape, t))
        print("wrote %d rows to %s" % (len(rows), a.out))
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
