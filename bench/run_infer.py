#!/usr/bin/env python3
"""Measures inference steps of a task's model at a tensor-parallel degree on the GPUs of one
host: prefill (time to first token) and decode against a KV cache (time per output token,
the step captured in a CUDA graph), for a grid of batch sizes and context lengths (issue 27).

    torchrun --nproc-per-node TP bench/run_infer.py CLUSTER TASK \
        [--batches 1,8,32,64] [--contexts 1024,4096,16384,32768] [--out infer_steps.csv]

TP is the cluster's GPU count (one node group, nodes x devices_per_node); the task's model
(a preset or an inline mapping; a dense Llama-family model) runs with bf16 weights.

The model, per rank (Megatron-style TP, one NCCL all-reduce after the attention output and
after the MLP's down projection): token embedding (replicated), per layer RMSNorm, Q/K/V
projections (heads and KV heads split over ranks), RoPE, attention, output projection
(rows split), residual, RMSNorm, gate/up (columns split), SiLU, product, down (rows split),
residual; final RMSNorm and the LM head (vocabulary split, logits all-gathered).
- Prefill: `batch` sequences of `context` tokens through all layers, K and V written into
  the cache, F.scaled_dot_product_attention(is_causal=True) (flash), LM head on the last
  token only. ttft_s = median of 3 runs after one warm-up (CUDA events). Prefills of more
  than --max-prefill-tokens tokens are not run (ttft_s empty; the cache is filled with
  random values instead, which costs decode the same).
- Decode: one new token per sequence at position `context`, attending the `context` cached
  tokens and itself; the grouped query heads of one KV head go to SDPA as a query block of
  length heads/kv_heads against that KV head (no K/V expansion). The whole step (all
  layers, the all-reduces, the LM head and the logits all-gather) is captured in one CUDA
  graph; tpot_s = the median of 5 timings (CUDA events) of 20 back-to-back replays,
  divided by 20. Where capture fails, the step runs eagerly and decode_graph is 0.
- Peak memory: max_memory_allocated / max_memory_reserved over the whole configuration
  (weights, cache, prefill, decode), maximum over ranks. Out of memory gives status `oom`.
"""
import argparse
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402

HEADER = ["cluster", "task", "tp", "gpus", "gpus_per_node", "device", "framework", "status",
          "batch", "context", "layers", "ttft_s", "tpot_s", "decode_graph",
          "peak_allocated_bytes", "peak_reserved_bytes", "note"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cluster")
    p.add_argument("task")
    p.add_argument("--batches", default="1,8,32,64")
    p.add_argument("--contexts", default="1024,4096,16384,32768")
    p.add_argument("--max-prefill-tokens", type=int, default=131072)
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--out", default="infer_steps.csv")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args(argv)


def weights_precision(task):
    """The precision of the GEMMs' weights: `precision` or its `weights` key."""
    p = task.get("precision", "bf16")
    return p.get("weights", "bf16") if isinstance(p, dict) else p


_QUANT = None


def quant_rows_kernel():
    """A Triton kernel quantising each row of a bf16 matrix to float8_e4m3fn with one float32
    scale per row (amax / 448), one read and one write, as serving engines' dynamic
    per-token quantisation does."""
    global _QUANT
    if _QUANT is None:
        import triton
        import triton.language as tl

        @triton.jit
        def quant(x_ptr, q_ptr, s_ptr, n, stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
            scale = tl.maximum(tl.max(tl.abs(x), axis=0) / 448.0, 1e-12)
            tl.store(q_ptr + row * n + cols, (x / scale).to(tl.float8e4nv), mask=cols < n)
            tl.store(s_ptr + row, scale)

        _QUANT = (quant, triton.next_power_of_2)
    return _QUANT


def quant_rows(x):
    """x (rows, n) bf16 -> (float8_e4m3fn (rows, n), float32 scales (rows, 1))."""
    import torch
    kernel, p2 = quant_rows_kernel()
    rows, n = x.shape
    q = torch.empty((rows, n), device=x.device, dtype=torch.float8_e4m3fn)
    s = torch.empty((rows, 1), device=x.device, dtype=torch.float32)
    block = p2(n)
    kernel[(rows,)](x, q, s, n, x.stride(0), BLOCK=block, num_warps=min(16, max(4, block // 1024)))
    return q, s


class Model:
    def __init__(self, m, tp, rank, gqa_mode, fp8=False, decode_gqa=False):
        import torch
        self.m, self.tp, self.rank, self.gqa_mode = m, tp, rank, gqa_mode
        self.fp8, self.decode_gqa = fp8, decode_gqa
        h, hd = m["hidden"], m["head_dim"]
        self.hd = hd
        self.heads, self.kvh = m["heads"] // tp, m["kv_heads"] // tp
        self.ffn, self.vocab = m["ffn"] // tp, m["vocab"] // tp
        bf = dict(device="cuda", dtype=torch.bfloat16)

        def w(*shape):
            return torch.randn(*shape, **bf) * 0.02

        self.embed = w(m["vocab"], h)
        self.layers = []
        for _ in range(m["layers"]):
            self.layers.append({
                "n1": torch.ones(h, **bf), "n2": torch.ones(h, **bf),
                "qkv": w((self.heads + 2 * self.kvh) * hd, h), "o": w(h, self.heads * hd),
                "gu": w(2 * self.ffn, h), "down": w(h, self.ffn)})
        self.norm = torch.ones(h, **bf)
        self.head = w(self.vocab, h)
        if fp8:  # W8A8: e4m3 weights, one scale per output row; the LM head stays bf16
            for L in self.layers:
                for name in ("qkv", "o", "gu", "down"):
                    L[name + "_q"], L[name + "_s"] = quant_rows(L[name])
                    L[name] = None
            self.check_fp8()
        theta = float(m["rope_theta"])
        self.inv = 1.0 / (theta ** (torch.arange(0, hd, 2, device="cuda", dtype=torch.float32) / hd))

    def linear(self, x, L, name):
        """x @ W^T for one of a layer's weights; under fp8 the activation rows are quantised
        per token and the product runs in torch._scaled_mm with row-wise scales."""
        import torch
        import torch.nn.functional as F
        if not self.fp8:
            return F.linear(x, L[name])
        q, s = quant_rows(x.reshape(-1, x.shape[-1]))
        w, ws = L[name + "_q"], L[name + "_s"]
        out = torch._scaled_mm(q, w.t(), scale_a=s, scale_b=ws.t(), out_dtype=torch.bfloat16)
        return out.view(*x.shape[:-1], w.shape[0])

    def check_fp8(self):
        """The fp8 linear against float64 on its own dequantised operands (METHOD.md)."""
        import torch
        L = self.layers[0]
        x = torch.randn(64, L["qkv_q"].shape[1], device="cuda", dtype=torch.bfloat16)
        q, s = quant_rows(x)
        ref = (q.double() * s.double()) @ (L["qkv_q"].double() * L["qkv_s"].double()).t()
        out = self.linear(x, L, "qkv").double()
        err = ((out - ref).norm() / ref.norm()).item()
        qerr = ((q.double() * s.double() - x.double()).norm() / x.double().norm()).item()
        if not (err < 1e-2 and qerr < 0.05):
            raise SystemExit(f"fp8 linear check failed: error {err:.3g}, quantisation {qerr:.3g}")

    def rope(self, positions):
        import torch
        f = torch.outer(positions.float(), self.inv)
        f = torch.cat([f, f], dim=-1)
        return f.cos().bfloat16()[None, :, None, :], f.sin().bfloat16()[None, :, None, :]

    @staticmethod
    def rotate(x, cos, sin):
        import torch
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    def all_reduce(self, x):
        import torch.distributed as dist
        if self.tp > 1:
            dist.all_reduce(x)
        return x

    def forward(self, tokens, cache, start, cos, sin, decode):
        """tokens (b, t) at positions start..start+t-1; cache (layers, 2, b, kvh, len, hd)."""
        import torch
        import torch.nn.functional as F
        b, t = tokens.shape
        x = F.embedding(tokens, self.embed)
        eps = 1e-5
        for i, L in enumerate(self.layers):
            y = F.rms_norm(x, (x.shape[-1],), L["n1"], eps)
            qkv = self.linear(y, L, "qkv").view(b, t, self.heads + 2 * self.kvh, self.hd)
            q, k, v = qkv.split([self.heads, self.kvh, self.kvh], dim=2)
            q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
            cache[i, 0, :, :, start:start + t] = k.transpose(1, 2)
            cache[i, 1, :, :, start:start + t] = v.transpose(1, 2)
            if decode:
                kc, vc = cache[i, 0, :, :, :start + t], cache[i, 1, :, :, :start + t]
                if self.decode_gqa:
                    o = F.scaled_dot_product_attention(q.transpose(1, 2), kc, vc, enable_gqa=True)
                else:
                    qg = q.reshape(b, self.kvh, (self.heads // self.kvh) * t, self.hd)
                    o = F.scaled_dot_product_attention(qg, kc, vc)
                o = o.reshape(b, self.heads * t, self.hd)
            else:
                qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
                if self.gqa_mode == "enable_gqa":
                    o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, enable_gqa=True)
                else:
                    g = self.heads // self.kvh
                    o = F.scaled_dot_product_attention(qt, kt.repeat_interleave(g, 1),
                                                       vt.repeat_interleave(g, 1), is_causal=True)
                o = o.transpose(1, 2)
            x = x + self.all_reduce(self.linear(o.reshape(b, t, -1), L, "o"))
            y = F.rms_norm(x, (x.shape[-1],), L["n2"], eps)
            gate, up = self.linear(y, L, "gu").chunk(2, dim=-1)
            x = x + self.all_reduce(self.linear(F.silu(gate) * up, L, "down"))
        x = F.rms_norm(x[:, -1:], (x.shape[-1],), self.norm, eps)
        logits = F.linear(x, self.head)
        if self.tp > 1:
            import torch.distributed as dist
            full = torch.empty((self.tp,) + logits.shape, device="cuda", dtype=logits.dtype)
            dist.all_gather_into_tensor(full, logits.contiguous())
            logits = full
        return logits


def measure(model, b, ctx, args):
    import torch
    row = {}
    m = model.m
    cache = torch.empty((m["layers"], 2, b, model.kvh, ctx + 1, model.hd), device="cuda",
                        dtype=torch.bfloat16)
    g = torch.Generator(device="cuda")
    g.manual_seed(args.seed)
    if b * ctx <= args.max_prefill_tokens:
        tokens = torch.randint(0, m["vocab"], (b, ctx), device="cuda", generator=g)
        cos, sin = model.rope(torch.arange(ctx, device="cuda"))
        run = lambda: model.forward(tokens, cache, 0, cos, sin, decode=False)  # noqa: E731
        with torch.no_grad():
            run()
            row["ttft_s"] = sc.time_events(run, 3)
        del tokens
    else:
        cache.normal_(generator=g)
    new = torch.randint(0, m["vocab"], (b, 1), device="cuda", generator=g)
    cos, sin = model.rope(torch.tensor([ctx], device="cuda"))
    step = lambda: model.forward(new, cache, ctx, cos, sin, decode=True)  # noqa: E731
    with torch.no_grad():
        replay = None
        try:
            replay = sc.graphed(step, warmup=2)
        except torch.cuda.OutOfMemoryError:
            raise
        except Exception as e:  # noqa: BLE001 - eager decode, said in the row
            print(f"graph capture failed: {e!r}", file=sys.stderr)
            replay = None
            row["note"] = "decode eager: capture failed"
        if replay is not None:
            replay()
            row["tpot_s"] = sc.time_events(replay, 5, args.replays)
            row["decode_graph"] = 1
        else:
            step()
            row["tpot_s"] = sc.time_events(step, 5, args.replays)
            row["decode_graph"] = 0
    del replay, cache
    return row


def main(argv):
    args = parse_args(argv)
    import torch
    import torch.distributed as dist
    local, rank, world = sc.init_distributed()
    cluster = sc.load_cluster(args.cluster)
    task = sc.load_task(args.task)
    m = task["model"]
    if world != cluster["gpus"] or m["heads"] % world or m["kv_heads"] % world \
            or m["ffn"] % world or m["vocab"] % world:
        if rank == 0:
            print(f"run_infer.py: {world} ranks do not fit the cluster ({cluster['gpus']} GPUs) "
                  "or do not divide the heads, KV heads, FFN and vocabulary", file=sys.stderr)
        return 2
    from run_plan import probe_gqa_mode, provenance
    prov = provenance(argv)
    prov[0] = "measured by bench/run_infer.py (issue 27): prefill and decode steps, TP over one host"
    prov[-1] = "command: " + " ".join(["bench/run_infer.py"] + argv)
    torch.manual_seed(args.seed)
    model = Model(m, world, rank, probe_gqa_mode(), fp8=weights_precision(task) == "fp8",
                  decode_gqa=task.get("decode_attention", "split") == "split")
    base = {"cluster": cluster["name"], "task": task["name"], "tp": world, "gpus": world,
            "gpus_per_node": cluster["devices_per_node"], "device": cluster["device"],
            "framework": f"torch-{torch.__version__.split('+')[0]}", "layers": m["layers"]}
    for ctx in [int(c) for c in args.contexts.split(",")]:
        for b in [int(x) for x in args.batches.split(",")]:
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            row = dict(base, batch=b, context=ctx)
            try:
                row.update(measure(model, b, ctx, args))
                row["status"] = "ok"
            except torch.cuda.OutOfMemoryError:
                row["status"] = "oom"
            status = torch.tensor([1.0 if row["status"] == "oom" else 0.0], device="cuda")
            dist.all_reduce(status, op=dist.ReduceOp.MAX)
            if status.item() > 0:
                row = dict(base, batch=b, context=ctx, status="oom")
                for k in ("ttft_s", "tpot_s", "decode_graph"):
                    row.pop(k, None)
            t = torch.tensor([float(torch.cuda.max_memory_allocated()),
                              float(torch.cuda.max_memory_reserved())], device="cuda",
                             dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            row["peak_allocated_bytes"], row["peak_reserved_bytes"] = int(t[0]), int(t[1])
            if rank == 0:
                sc.append_rows(args.out, HEADER, [row], prov)
                print(f"tp={world} b={b} ctx={ctx}: {row['status']} ttft {row.get('ttft_s')} "
                      f"tpot {row.get('tpot_s')} peak {row['peak_reserved_bytes'] / 2**30:.1f} GiB",
                      flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
