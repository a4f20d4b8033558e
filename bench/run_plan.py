#!/usr/bin/env python3
"""Trains a task's model with exactly a yirage plan's layout on the GPUs of one host and
measures the step: the ground truth for yirage's training-step model (issue 27).

    torchrun --nproc-per-node N bench/run_plan.py CLUSTER TASK PLAN [TASK PLAN ...] \
        [--steps 20] [--warmup 5] [--out train_steps.csv] [--markers DIR]
    torchrun --nproc-per-node N bench/run_plan.py CLUSTER TASK PLAN --loss-curve CSV --steps 300

PLAN is a file written by `yirage-plan CLUSTER TASK --layout L --save-plan PLAN`; several
TASK PLAN pairs run one after another in one process (one start for many layouts). Each
pair writes one row; a plan this runner cannot run (cp>1, ep>1, offload, a mode other than
train, a precision other than bf16, a world size other than the cluster's) is refused with a
message and exit status 2 before anything runs.

What runs (PyTorch's own building blocks, no Megatron or DeepSpeed):
- The model: Llama (token embedding; per layer RMSNorm, Q/K/V projections with GQA, RoPE,
  F.scaled_dot_product_attention(is_causal=True) on the flash backend, output projection,
  residual, RMSNorm, gated SiLU MLP gate/up/down, residual; final RMSNorm; LM head, untied
  unless tied_embeddings; cross-entropy in fp32). Weights are initialised per layer from
  (seed, layer index), so every layout starts from the same model.
- Precision: fp32 parameters are the master weights and the optimizer's state; compute is
  bf16 through torch.autocast (with ZeRO 0/1), or through FSDP2's MixedPrecisionPolicy
  (bf16 parameters gathered, fp32 gradient reduction) with ZeRO 2/3. The embedding output
  is cast to bf16, so the residual stream is bf16 as in Megatron. Gradients are fp32 and
  DDP reduces them in fp32. Optimizer: torch.optim.AdamW(fused=True), lr 3e-4, betas
  (0.9, 0.95), weight decay 0.1; gradient clipping at norm 1.0.
- TP with sequence parallelism: DTensor parallelize_module after torchtitan's Llama plan
  (embedding row-wise with a sequence-sharded output, norms SequenceParallel, Q/K/V and
  gate/up ColwiseParallel, output and down RowwiseParallel back to sequence shards, LM head
  ColwiseParallel gathered to full logits; no loss parallelism). `sp=off` keeps activations
  replicated (Megatron TP without SP).
- PP: torch.distributed.pipelining, Schedule1F1B, or ScheduleInterleaved1F1B for vpp > 1
  (stage i of rank r is r + i*pp); layers split evenly, the embedding on the first stage,
  norm, head and loss on the last.
- DP: DDP (25 MB buckets, overlapped with backward; no_sync across micro-batches) for
  ZeRO 0; ZeRO 1 is DDP plus torch's ZeroRedundancyOptimizer (optimizer state sharded over
  the data-parallel group; gradients all-reduced, parameters broadcast after the step);
  FSDP2 fully_shard per layer and on the root for ZeRO 2 (reshard_after_forward=False) and
  ZeRO 3 (True), reduce-scattering every micro-batch. With dp = 1 no data-parallel wrapper
  is applied. DDP with TP goes through torch's _pre_dp_module_transform; then the clipping
  norm sums the squares of the local shards over the TP group, which counts the (tiny)
  replicated norm weights tp times.
- Recompute: none; selective = torch.utils.checkpoint of the attention core (SDPA) only;
  full = checkpoint of the whole layer (use_reentrant=False).
- Micro-batches per step = global_batch / (dp * mb).

What it measures (CUDA events on every rank; per step the slowest rank):
- step_s: median over --steps steps after --warmup steps (p10, p90 too); tokens_per_s =
  global_batch * sequence_length / step_s; mfu = training_flops_per_token * tokens_per_s /
  (gpus * bf16 peak of the cluster's device in data/devices/), where
  training_flops_per_token is yirage's (planner/workload/model_size.cpp, reimplemented in
  bench/steps_common.py: 3 x forward, causal attention, recomputation not counted).
- Peak memory: torch.cuda.max_memory_allocated / max_memory_reserved from just before the
  first warm-up step (after the model is built and sharded, and the cache emptied) to the
  end of the measured steps; the maximum over ranks.
- Breakdown, from one extra step: forward_s, backward_s (sum over micro-batches of CUDA
  event intervals; without PP only, since 1F1B interleaves them; backward includes the DDP
  all-reduce it waits for), optimizer_s (clipping plus the optimizer step, ZeRO-1's
  broadcast included); then one more step under torch.profiler: comm_exposed_s, the time
  during which an NCCL kernel runs on the GPU and no other kernel does (for PP this
  includes waiting in receive kernels, i.e. part of the bubble), the maximum over ranks.
- Out of memory: a row with status `oom` (the rank that ran out writes it, then the job
  ends); other failures: status `error`, the traceback in the log.
"""
import argparse
import contextlib
import gc
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402

HEADER = ["cluster", "task", "layout", "gpus", "gpus_per_node", "device", "framework",
          "status", "steps", "step_s", "step_s_p10", "step_s_p90", "tokens_per_s", "mfu",
          "peak_allocated_bytes", "peak_reserved_bytes", "forward_s", "backward_s",
          "optimizer_s", "comm_exposed_s", "layers", "sequence_length", "global_batch",
          "micro_batches", "plan", "note"] + \
         ["kernel_" + k + "_s" for k in sc.KERNEL_CATEGORIES] + ["gpu_busy_s", "profiled_step_s",
                                                                 "leftover_bytes"]
KERNEL_HEADER = ["task", "layout", "gpus", "category", "count", "seconds", "kernel"]


class Refused(Exception):
    """A plan this runner cannot run as written (exit status 2)."""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cluster")
    p.add_argument("pairs", nargs="+", help="TASK PLAN [TASK PLAN ...]")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out", default="train_steps.csv")
    p.add_argument("--markers", default=None, help="folder for per-job markers and the progress file")
    p.add_argument("--loss-curve", default=None, help="CSV: record the loss of every step")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--gc-freq", type=int, default=0,
                   help="torchtitan's and Megatron's manual garbage collection: Python's automatic "
                        "collector off for the warm-up and measured steps, a generation-1 "
                        "collection every N steps at the step's start (0: Python's default)")
    p.add_argument("--step-times", default=None,
                   help="JSON lines: each job's measured step times (the slowest rank's)")
    p.add_argument("--kernels", default=None,
                   help="CSV: rank 0's GPU kernels of the profiled step, by name")
    p.add_argument("--memory-layout", default=None,
                   help="JSON lines (one file per rank, .rankN appended): after the measured "
                        "steps, the caching allocator's segments by stream and its peak counters")
    p.add_argument("--force-ddp", action="store_true",
                   help="wrap each stage in DDP even without data parallelism (a one-rank group): "
                        "DDP's memory on one GPU")
    p.add_argument("--memory-history", default=None,
                   help="JSON lines (one file per rank, .rankN appended): the allocator's history "
                        "over the warm-up and measured steps, and what is live at its peak")
    a = p.parse_args(argv)
    if len(a.pairs) % 2:
        p.error("TASK and PLAN come in pairs")
    return a


def check_job(cluster, task, plan, world):
    """The layout, or Refused with the reason."""
    lay = sc.parse_layout(plan["layout"])
    if plan["cluster"] != cluster["name"]:
        raise Refused(f"the plan is for cluster '{plan['cluster']}', not '{cluster['name']}'")
    if plan["task"] != task["name"]:
        raise Refused(f"the plan is for task '{plan['task']}', not '{task['name']}'")
    if task["mode"] != "train" or plan["mode"] != "train":
        raise Refused("only training plans run here (bench/run_infer.py measures inference)")
    if task["precision"] != "bf16":
        raise Refused(f"precision {task['precision']}: only bf16 runs here")
    for key, off in (("cp", 1), ("ep", 1)):
        if lay[key] != off:
            raise Refused(f"{key}={lay[key]}: context/expert parallelism is not implemented")
    if lay["offload"] != "off":
        raise Refused("optimizer offload is not implemented")
    m = task["model"]
    if m.get("moe") or m.get("mla") or m["norm"] != "rmsnorm" or m["position"] != "rope" \
            or m["bias"] != "none" or m["ffn_kind"] != "gated":
        raise Refused("only dense Llama-family models (rmsnorm, rope, no bias, gated MLP) run here")
    if lay["tp"] * lay["pp"] * lay["dp"] != cluster["gpus"]:
        raise Refused(f"tp*pp*dp = {lay['tp'] * lay['pp'] * lay['dp']} != the cluster's "
                      f"{cluster['gpus']} GPUs")
    if world != cluster["gpus"]:
        raise Refused(f"started with {world} processes, the cluster has {cluster['gpus']} GPUs")
    if cluster["nodes"] != 1:
        raise Refused("one host only")
    if task["global_batch"] % (lay["dp"] * lay["mb"]):
        raise Refused("global_batch is not a multiple of dp * mb")
    n_micro = task["global_batch"] // (lay["dp"] * lay["mb"])
    stages = lay["pp"] * lay["vpp"]
    if m["layers"] % stages:
        raise Refused(f"{m['layers']} layers do not split evenly over {stages} stages")
    if lay["pp"] > 1 and n_micro % lay["pp"]:
        raise Refused(f"{n_micro} micro-batches is not a multiple of pp={lay['pp']}")
    if lay["tp"] > 1 and (m["heads"] % lay["tp"] or m["kv_heads"] % lay["tp"]):
        raise Refused("heads and kv_heads must divide by tp")
    if m["tied_embeddings"] and (lay["pp"] > 1 or lay["tp"] > 1):
        raise Refused("tied embeddings run only with tp = pp = 1")
    if lay["zero"] > 3:
        raise Refused(f"zero={lay['zero']}")
    return lay, n_micro


# ---------------------------------------------------------------------------------------
# The model.

def build_model_classes():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    rope_cache = {}

    def rope_tables(t, hd, theta, device, dtype):
        key = (t, hd, theta, str(device), dtype)
        if key not in rope_cache:
            inv = 1.0 / (theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
            f = torch.outer(torch.arange(t, device=device, dtype=torch.float32), inv)
            f = torch.cat([f, f], dim=-1)
            rope_cache[key] = (f.cos().to(dtype)[None, :, None, :], f.sin().to(dtype)[None, :, None, :])
        return rope_cache[key]

    def rotate(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    class Attention(nn.Module):
        def __init__(self, m, selective, gqa_mode):
            super().__init__()
            h, hd = m["hidden"], m["head_dim"]
            self.hd, self.theta = hd, float(m["rope_theta"])
            self.group = m["heads"] // m["kv_heads"]
            self.wq = nn.Linear(h, m["heads"] * hd, bias=False)
            self.wk = nn.Linear(h, m["kv_heads"] * hd, bias=False)
            self.wv = nn.Linear(h, m["kv_heads"] * hd, bias=False)
            self.wo = nn.Linear(m["heads"] * hd, h, bias=False)
            self.selective, self.gqa_mode = selective, gqa_mode

        def core(self, q, k, v):
            if self.gqa_mode == "enable_gqa":
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            if self.group > 1:
                k = k.repeat_interleave(self.group, dim=1)
                v = v.repeat_interleave(self.group, dim=1)
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        def forward(self, x):
            b, t = x.shape[0], x.shape[1]
            q = self.wq(x).view(b, t, -1, self.hd)
            k = self.wk(x).view(b, t, -1, self.hd)
            v = self.wv(x).view(b, t, -1, self.hd)
            cos, sin = rope_tables(t, self.hd, self.theta, q.device, q.dtype)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            if self.selective:
                o = checkpoint(self.core, q, k, v, use_reentrant=False)
            else:
                o = self.core(q, k, v)
            return self.wo(o.transpose(1, 2).reshape(b, t, -1))

    class FeedForward(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.w1 = nn.Linear(m["hidden"], m["ffn"], bias=False)
            self.w3 = nn.Linear(m["hidden"], m["ffn"], bias=False)
            self.w2 = nn.Linear(m["ffn"], m["hidden"], bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self, m, recompute, gqa_mode):
            super().__init__()
            self.attention_norm = nn.RMSNorm(m["hidden"], eps=1e-5)
            self.attention = Attention(m, recompute == "selective", gqa_mode)
            self.ffn_norm = nn.RMSNorm(m["hidden"], eps=1e-5)
            self.feed_forward = FeedForward(m)
            self.full = recompute == "full"

        def body(self, x):
            h = x + self.attention(self.attention_norm(x))
            return h + self.feed_forward(self.ffn_norm(h))

        def forward(self, x):
            if self.full:
                return checkpoint(self.body, x, use_reentrant=False)
            return self.body(x)

    class Stage(nn.Module):
        """Layers [first, last) of the model, with the embedding if first == 0 and the final
        norm and head if last == layers."""

        def __init__(self, m, first, last, recompute, gqa_mode, seed, autocast):
            super().__init__()
            self.autocast = autocast

            def made(mod, salt):  # every piece from its own seed: the same under any layout
                torch.manual_seed(seed * 1009 + salt)
                mod = mod()
                for p in mod.parameters():
                    if p.dim() == 2:
                        nn.init.normal_(p, std=0.02)
                return mod

            self.tok_embeddings = None
            if first == 0:
                self.tok_embeddings = made(lambda: nn.Embedding(m["vocab"], m["hidden"]), 0)
            self.layers = nn.ModuleDict()
            for i in range(first, last):
                self.layers[str(i)] = made(lambda: Block(m, recompute, gqa_mode), i + 1)
            last_stage = last == m["layers"]
            self.norm = nn.RMSNorm(m["hidden"], eps=1e-5) if last_stage else None
            self.output = None
            if last_stage:
                self.output = made(lambda: nn.Linear(m["hidden"], m["vocab"], bias=False), 100003)
            if last_stage and first == 0 and m["tied_embeddings"]:
                self.output.weight = self.tok_embeddings.weight

        def forward(self, x):
            ctx = torch.autocast("cuda", dtype=torch.bfloat16) if self.autocast else contextlib.nullcontext()
            with ctx:
                if self.tok_embeddings is not None:
                    x = self.tok_embeddings(x).to(torch.bfloat16)
                for layer in self.layers.values():
                    x = layer(x)
                if self.norm is not None:
                    x = self.output(self.norm(x))
            return x

    return Stage


def probe_gqa_mode():
    """'enable_gqa' where the flash backend takes GQA directly, else 'repeat' (K/V expanded)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(1, 8, 128, 128, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(1, 2, 128, 128, device="cuda", dtype=torch.bfloat16)
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True)
        return "enable_gqa"
    except Exception:  # noqa: BLE001 - any refusal means: expand K and V
        return "repeat"


# ---------------------------------------------------------------------------------------
# Parallelisation.

def apply_tp(stage, tp_mesh, sp):
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel,
                                                   parallelize_module)
    top = {}
    if stage.tok_embeddings is not None:
        top["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(),
                                                output_layouts=Shard(1) if sp else Replicate())
    if stage.norm is not None:
        if sp:
            top["norm"] = SequenceParallel()
        top["output"] = ColwiseParallel(input_layouts=Shard(1) if sp else Replicate(),
                                        output_layouts=Replicate())
    if top:
        parallelize_module(stage, tp_mesh, top)
    for block in stage.layers.values():
        plan = {"attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(),
                "attention.wv": ColwiseParallel(), "feed_forward.w1": ColwiseParallel(),
                "feed_forward.w3": ColwiseParallel()}
        if sp:
            plan.update({
                "attention_norm": SequenceParallel(),
                "attention": PrepareModuleInput(input_layouts=(Shard(1),),
                                                desired_input_layouts=(Replicate(),)),
                "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
                "ffn_norm": SequenceParallel(),
                "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),),
                                                   desired_input_layouts=(Replicate(),)),
                "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
            })
        else:
            plan.update({"attention.wo": RowwiseParallel(), "feed_forward.w2": RowwiseParallel()})
        parallelize_module(block, tp_mesh, plan)


def apply_fsdp(stage, dp_mesh, zero):
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    reshard = zero == 3
    for block in stage.layers.values():
        fully_shard(block, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=reshard)
    fully_shard(stage, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=reshard)
    return stage


def apply_ddp(stage, dp_group, tp):
    from torch.nn.parallel import DistributedDataParallel as DDP
    if tp > 1:
        from torch.distributed.tensor.parallel.ddp import _pre_dp_module_transform
        _pre_dp_module_transform(stage)
    return DDP(stage, process_group=dp_group, bucket_cap_mb=25, gradient_as_bucket_view=True)


def make_optimizer(params, zero, dp, dp_group, lr):
    """Fused AdamW; DTensor and plain parameters (TP without SP keeps the norms plain) go in
    separate parameter groups, since one fused call takes one kind."""
    import torch
    from torch.distributed.tensor import DTensor
    kw = dict(lr=lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    dt = [p for p in params if isinstance(p, DTensor)]
    plain = [p for p in params if not isinstance(p, DTensor)]
    if dt and plain:
        params = [{"params": dt}, {"params": plain}]
    if zero == 1 and dp > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW,
                                       process_group=dp_group, **kw)
    return torch.optim.AdamW(params, **kw)


def clip_gradients(params, max_norm, tp_local_group, pp_group):
    """Clips to a global norm; DTensor gradients are reduced by their placements, local TP
    shards (DDP + TP) over tp_local_group, and stages over pp_group."""
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import DTensor
    grads = [p.grad for p in params if p.grad is not None]
    by_mesh, plain = {}, []
    for g in grads:
        if isinstance(g, DTensor):
            by_mesh.setdefault(id(g.device_mesh), []).append(g)
        else:
            plain.append(g)
    total = torch.zeros((), device="cuda", dtype=torch.float32)
    for group in by_mesh.values():
        n = torch.nn.utils.get_total_norm(group, 2.0, foreach=True)
        total += n.full_tensor().float() ** 2
    if plain:
        sq = torch.nn.utils.get_total_norm(plain, 2.0, foreach=True).float() ** 2
        if tp_local_group is not None:
            dist.all_reduce(sq, group=tp_local_group)
        total += sq
    if pp_group is not None:
        dist.all_reduce(total, group=pp_group)
    norm = total.sqrt()
    coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    from torch.distributed.tensor.experimental import implicit_replication
    with implicit_replication():
        for group in list(by_mesh.values()) + [plain]:
            if group:
                torch._foreach_mul_(group, coef)
    return norm


# ---------------------------------------------------------------------------------------
# One job.

MESHES = {}


class Job:
    def __init__(self, args, cluster, task, plan, plan_path, lay, n_micro, ctx):
        import torch
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
        self.a, self.cluster, self.task, self.plan, self.lay = args, cluster, task, plan, lay
        self.plan_path, self.n_micro, self.ctx = plan_path, n_micro, ctx
        # What earlier jobs of this process left allocated (DDP's buckets, held from C++): in
        # both peaks below, and taken off them by validate-training (leftover_bytes).
        self.leftover = torch.cuda.memory_allocated()
        self.m = task["model"]
        self.seq, self.gb = task["sequence_length"], task["global_batch"]
        tp, pp, dp = lay["tp"], lay["pp"], lay["dp"]
        self.dist, self.torch = dist, torch
        key = (pp, dp, tp)
        if key not in MESHES:  # one mesh (and its NCCL communicators) per shape per process
            MESHES[key] = init_device_mesh("cuda", key, mesh_dim_names=("pp", "dp", "tp"))
        self.world = MESHES[key]
        self.pp_rank = self.world["pp"].get_local_rank()
        self.dp_rank = self.world["dp"].get_local_rank()
        self.tp_rank = self.world["tp"].get_local_rank()
        self.pp_group = self.world["pp"].get_group() if pp > 1 else None
        forced = self.a.force_ddp and lay["zero"] <= 1
        self.dp_group = self.world["dp"].get_group() if dp > 1 or forced else None
        self.tp_group = self.world["tp"].get_group() if tp > 1 else None
        self.fsdp = lay["zero"] >= 2 and dp > 1
        self.ddp = lay["zero"] <= 1 and (dp > 1 or forced)
        self.build()

    def build(self):
        import torch
        lay, m = self.lay, self.m
        Stage = self.ctx["Stage"]
        stages = lay["pp"] * lay["vpp"]
        per = m["layers"] // stages
        ids = [self.pp_rank + k * lay["pp"] for k in range(lay["vpp"])] if lay["pp"] > 1 else [0]
        self.stage_ids, self.modules = ids, []
        with torch.device("cuda"):
            for s in ids:
                mod = Stage(m, s * per, (s + 1) * per, lay["recompute"], self.ctx["gqa"],
                            self.a.seed, autocast=not self.fsdp)
                if lay["tp"] > 1:
                    apply_tp(mod, self.world["tp"], lay["sp"] == "on")
                if self.fsdp:
                    mod = apply_fsdp(mod, self.world["dp"], lay["zero"])
                elif self.ddp:
                    mod = apply_ddp(mod, self.dp_group, lay["tp"])
                self.modules.append(mod)
        self.params = [p for mod in self.modules for p in mod.parameters()]
        self.opt = make_optimizer(self.params, lay["zero"], lay["dp"], self.dp_group, self.a.lr)
        if lay["pp"] > 1:
            self.build_schedule()

    def build_schedule(self):
        from torch.distributed.pipelining import (PipelineStage, Schedule1F1B,
                                                  ScheduleInterleaved1F1B)
        lay = self.lay
        n = lay["pp"] * lay["vpp"]
        self.pstages = [PipelineStage(mod, s, n, self.torch_device(), group=self.pp_group)
                        for mod, s in zip(self.modules, self.stage_ids)]
        if lay["vpp"] > 1:
            self.schedule = ScheduleInterleaved1F1B(self.pstages, self.n_micro, loss_fn=self.loss_fn)
        else:
            self.schedule = Schedule1F1B(self.pstages[0], self.n_micro, loss_fn=self.loss_fn)
        self.has_first = 0 in self.stage_ids
        self.has_last = (n - 1) in self.stage_ids

    @staticmethod
    def torch_device():
        import torch
        return torch.device("cuda", torch.cuda.current_device())

    @staticmethod
    def loss_fn(logits, labels):
        import torch.nn.functional as F
        return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))

    def make_data(self, step=0):
        """The data-parallel rank's share of a global batch: tokens from a 512-token subset,
        each sequence a random 16-token phrase repeated, so that the loss can fall (unigram
        first, then copying); the same global batch under every layout."""
        import torch
        g = torch.Generator(device="cuda")
        g.manual_seed(self.a.seed * 7919 + step)
        local = self.gb // self.lay["dp"]
        phrase = torch.randint(0, min(512, self.m["vocab"]), (self.gb, 16), device="cuda", generator=g)
        reps = (self.seq + 1 + 15) // 16
        seqs = phrase.repeat(1, reps)[:, : self.seq + 1]
        mine = seqs[self.dp_rank * local:(self.dp_rank + 1) * local]
        return mine[:, :-1].contiguous(), mine[:, 1:].contiguous()

    def step(self, data, phases=None):
        """One optimizer step; phases (a dict of event lists) times its parts."""
        torch = self.torch
        x, y = data
        for p in self.params:
            p.grad = None
        loss_value = torch.zeros((), device="cuda")
        if self.lay["pp"] > 1:
            loss_value = self.pp_step(x, y, phases)
        else:
            mb = self.lay["mb"]
            mod = self.modules[0]
            for i in range(self.n_micro):
                last = i == self.n_micro - 1
                sync = mod.no_sync() if (self.ddp and not last) else contextlib.nullcontext()
                with sync:
                    ev = self.event(phases, "forward")
                    logits = mod(x[i * mb:(i + 1) * mb])
                    loss = self.loss_fn(logits, y[i * mb:(i + 1) * mb]) / self.n_micro
                    self.close(ev, phases, "forward")
                    ev = self.event(phases, "backward")
                    loss.backward()
                    self.close(ev, phases, "backward")
                loss_value += loss.detach()
        ev = self.event(phases, "optimizer")
        clip_gradients(self.params, 1.0, self.tp_group if self.ddp else None, self.pp_group)
        self.opt.step()
        self.close(ev, phases, "optimizer")
        return loss_value

    def pp_step(self, x, y, phases):
        torch = self.torch
        losses = []
        ev = self.event(phases, "pipeline")
        kwargs = {}
        if self.has_last:
            kwargs = {"target": y, "losses": losses}
        if self.has_first:
            self.schedule.step(x, **kwargs)
        else:
            self.schedule.step(**kwargs)
        self.close(ev, phases, "pipeline")
        if losses:
            return torch.stack([l.detach().float() for l in losses]).mean()
        return torch.zeros((), device="cuda")

    @staticmethod
    def event(phases, name):
        if phases is None:
            return None
        import torch
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    @staticmethod
    def close(start, phases, name):
        if phases is None:
            return
        import torch
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        phases.setdefault(name, []).append((start, e))

    def global_loss(self, loss):
        """The step's mean loss over data-parallel ranks, from the last stage's TP rank 0."""
        dist = self.dist
        owner = (self.lay["pp"] == 1 or self.has_last) and self.tp_rank == 0
        t = loss.detach().float().reshape(1) if owner else self.torch.zeros(1, device="cuda")
        dist.all_reduce(t)
        return t.item() / self.lay["dp"]

    def max_over_ranks(self, values):
        t = self.torch.tensor(values, dtype=self.torch.float64, device="cuda")
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return t.tolist()

    def collect_garbage(self, step):
        """With --gc-freq N, a generation-1 collection before every N-th step (torchtitan's
        GarbageCollection; Megatron's --manual-gc): every rank collects at the same point, so
        no rank's pause holds the others at a collective."""
        if self.a.gc_freq > 0 and step > 0 and step % self.a.gc_freq == 0:
            gc.collect(1)

    def run_timed(self):
        torch = self.torch
        pool = [self.make_data(i) for i in range(2)]
        torch.cuda.synchronize()
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        if self.a.memory_history:
            baseline = torch.cuda.memory_allocated()
            self.reserved_baseline = torch.cuda.memory_reserved()
            torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.a.steps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.a.steps)]
        last_loss = None
        if self.a.gc_freq > 0:
            gc.disable()
        try:  # the collector comes back on even when a step runs out of memory
            for i in range(self.a.warmup):
                self.collect_garbage(i)
                self.step(pool[i % 2])
            for i in range(self.a.steps):
                self.collect_garbage(self.a.warmup + i)
                starts[i].record()
                last_loss = self.step(pool[i % 2])
                ends[i].record()
            torch.cuda.synchronize()
        finally:
            gc.enable()
        times = [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)]
        if self.a.memory_history:
            self.write_memory_history(baseline)
        peak = [float(torch.cuda.max_memory_allocated()), float(torch.cuda.max_memory_reserved()),
                float(self.leftover)]
        times = self.max_over_ranks(times)
        peak = self.max_over_ranks(peak)
        if self.a.step_times and self.dist.get_rank() == 0:
            with open(self.a.step_times, "a") as f:
                f.write(json.dumps({"task": self.task["name"], "layout": self.plan["layout"],
                                    "gc_freq": self.a.gc_freq, "step_s": times}) + "\n")
        row = {"status": "ok", "steps": self.a.steps}
        # quantiles needs two points: with one measured step, its percentiles are that step
        q = statistics.quantiles(times, n=10, method="inclusive") if len(times) > 1 else times
        row["step_s"] = statistics.median(times)
        row["step_s_p10"], row["step_s_p90"] = q[0], q[-1]
        tokens = self.gb * self.seq
        row["tokens_per_s"] = tokens / row["step_s"]
        flops = sc.training_flops_per_token(self.m, self.seq)
        row["mfu"] = flops * row["tokens_per_s"] / (self.cluster["gpus"] * sc.peak_flops(self.cluster["device"]))
        row["peak_allocated_bytes"], row["peak_reserved_bytes"] = int(peak[0]), int(peak[1])
        row["leftover_bytes"] = int(peak[2])
        loss = self.global_loss(last_loss)
        row.update(self.breakdown(pool[0]))
        row["note"] = f"loss {loss:.3f}; attention {self.ctx['gqa']}"
        if self.a.memory_layout:
            self.write_memory_layout()
        return row

    def write_memory_history(self, baseline):
        import memory_trace
        torch = self.torch
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        rank = self.dist.get_rank() if self.dist.is_initialized() else 0
        rec = {"task": self.task["name"], "layout": self.plan["layout"], "rank": rank,
               "max_allocated": torch.cuda.max_memory_allocated(),
               **memory_trace.peak_summary(snap, baseline, torch.cuda.current_device(),
                                           top=int(os.environ.get("MEMORY_TRACE_TOP", "12"))),
               "segments": memory_trace.segment_growth(snap, self.reserved_baseline, baseline,
                                                       torch.cuda.current_device())}
        with open(f"{self.a.memory_history}.rank{rank}", "a") as f:
            f.write(json.dumps(rec) + "\n")

    def write_memory_layout(self):
        """Where the allocator's reserve lies after the measured steps (nothing is released
        between steps, so the cached segments are the reserve's peak layout): per CUDA stream,
        the segments' sizes and the bytes allocated in them, with the allocator's peaks."""
        torch = self.torch
        streams = {}
        for seg in torch.cuda.memory_snapshot():
            s = streams.setdefault(str(seg["stream"]), {"segments": 0, "reserved": 0, "allocated": 0,
                                                         "large": [], "small_pool": 0})
            s["segments"] += 1
            s["reserved"] += seg["total_size"]
            s["allocated"] += seg["allocated_size"]
            if seg["segment_type"] == "small":
                s["small_pool"] += seg["total_size"]
            else:
                free = [b["size"] for b in seg["blocks"] if b["state"] == "inactive"]
                s["large"].append([seg["total_size"], seg["allocated_size"], max(free, default=0)])
        for s in streams.values():
            s["large"].sort(reverse=True)
        st = torch.cuda.memory_stats()
        keys = ["allocated_bytes.all.peak", "reserved_bytes.all.peak", "active_bytes.all.peak",
                "inactive_split_bytes.all.peak", "requested_bytes.all.peak",
                "reserved_bytes.large_pool.peak", "reserved_bytes.small_pool.peak",
                "segment.all.peak", "num_alloc_retries", "num_ooms"]
        rank = self.dist.get_rank() if self.dist.is_initialized() else 0
        rec = {"task": self.task["name"], "layout": self.plan["layout"], "rank": rank,
               "stats": {k: st.get(k, 0) for k in keys}, "streams": streams}
        with open(f"{self.a.memory_layout}.rank{rank}", "a") as f:
            f.write(json.dumps(rec) + "\n")

    def breakdown(self, data):
        torch = self.torch
        out = {}
        sums = {}
        phases = {}
        self.step(data, phases)
        torch.cuda.synchronize()
        for k, evs in phases.items():
            sums[k] = sums.get(k, 0.0) + sum(s.elapsed_time(e) for s, e in evs) / 1e3
        keys = ["optimizer"] if self.lay["pp"] > 1 else ["forward", "backward", "optimizer"]
        vals = self.max_over_ranks([sums.get(k, 0.0) for k in keys])
        for k, v in zip(keys, vals):
            out[k + "_s"] = v
        if not self.a.no_profile:
            names = ["comm_exposed_s"] + ["kernel_" + k + "_s" for k in sc.KERNEL_CATEGORIES] + \
                    ["gpu_busy_s", "profiled_step_s"]
            try:
                values = self.profile_step(data)
            except Exception as e:  # noqa: BLE001 - the columns stay empty, the reason logged
                print(f"[rank {self.dist.get_rank()}] profiler breakdown failed: {e!r}",
                      file=sys.stderr)
                values = [float("nan")] * len(names)
            values = self.max_over_ranks(values)  # NaN anywhere leaves them empty
            if all(v == v for v in values):
                out.update(zip(names, values))
        return out

    def profile_step(self, data):
        """From one step under the profiler: seconds when an NCCL kernel runs and no other
        kernel does; seconds of kernels by category; the GPU's busy time and the span of the
        step's kernels (span minus busy: the GPU waiting for the host). Rank 0 also writes its
        kernels by name to --kernels."""
        torch = self.torch
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            self.step(data)
            torch.cuda.synchronize()
        comm, comp, kernels = [], [], []
        events = prof.events()
        # GPU-side ranges of record_function annotations (DistributedDataParallel.forward,
        # Optimizer.step#AdamW.step, the pipeline's PP:0F2) carry the name of a CPU range;
        # kernels never do.
        annotations = {e.name for e in events if e.device_type != DeviceType.CUDA}
        for e in events:
            if e.device_type != DeviceType.CUDA or e.name in annotations:
                continue
            iv = (e.time_range.start, e.time_range.end)
            (comm if "nccl" in e.name.lower() else comp).append(iv)
            kernels.append((e.name, iv[0], iv[1]))
        cats, busy, span = sc.kernel_breakdown(kernels)
        if self.a.kernels and self.dist.get_rank() == 0:
            self.write_kernels(kernels)
        return [exposed_time(comm, comp) / 1e6] + [cats[k] for k in sc.KERNEL_CATEGORIES] + \
            [busy, span]

    def write_kernels(self, kernels):
        by_name = {}
        for name, start, end in kernels:
            n, t = by_name.get(name, (0, 0.0))
            by_name[name] = (n + 1, t + (end - start) / 1e6)
        rows = [{"task": self.task["name"], "layout": self.plan["layout"],
                 "gpus": self.cluster["gpus"], "category": sc.kernel_category(name), "count": n,
                 "seconds": t, "kernel": name.replace(",", ";").replace("\n", " ")[:240]}
                for name, (n, t) in sorted(by_name.items(), key=lambda kv: -kv[1][1])]
        sc.append_rows(self.a.kernels, KERNEL_HEADER, rows, self.ctx["provenance"])

    def run_loss_curve(self, path):
        rows = []
        for i in range(self.a.steps):
            loss = self.global_loss(self.step(self.make_data(i)))
            rows.append({"task": self.task["name"], "layout": self.plan["layout"],
                         "gpus": self.cluster["gpus"], "step": i, "loss": loss})
        if self.dist.get_rank() == 0:
            sc.append_rows(path, ["task", "layout", "gpus", "step", "loss"], rows,
                           self.ctx["provenance"])
        return {"status": "ok", "steps": self.a.steps, "note": f"loss {rows[0]['loss']:.4f} -> {rows[-1]['loss']:.4f}"}


def merge(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def exposed_time(comm, comp):
    """Length of the union of `comm` intervals not covered by the union of `comp`."""
    comp = merge(comp)
    total, j = 0.0, 0
    for s, e in merge(comm):
        total += e - s
        while j < len(comp) and comp[j][1] <= s:
            j += 1
        k = j
        while k < len(comp) and comp[k][0] < e:
            total -= min(e, comp[k][1]) - max(s, comp[k][0])
            k += 1
    return total


# ---------------------------------------------------------------------------------------
# Driver.

def host_cpu():
    """The host's CPU model and logical CPU count: eager tensor parallelism's steps wait for
    the host's Python dispatch, so the same layout runs at the pace of the CPU."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = " ".join(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    return f"{model} x{os.cpu_count()}"


def provenance(argv):
    import torch
    name = torch.cuda.get_device_name()
    drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.split("\n")[0].strip()
    nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    cpu = host_cpu()
    return [f"measured by bench/run_plan.py (issue 27): whole training steps of yirage plans",
            f"device: {name} x{torch.cuda.device_count()} visible; driver {drv}; CUDA {torch.version.cuda}; "
            f"torch {torch.__version__}; NCCL {nccl}; host {socket.gethostname()} ({cpu}); "
            f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '') or '(default)'}",
            f"date: {sc.utc_now()}",
            "command: " + " ".join(["bench/run_plan.py"] + argv)]


def write_row(args, cluster, task, plan_path, layout, extra, ctx):
    m = task["model"]
    row = {"cluster": cluster["name"], "task": task["name"], "layout": layout,
           "gpus": cluster["gpus"], "gpus_per_node": cluster["devices_per_node"],
           "device": cluster["device"], "framework": ctx["framework"],
           "layers": m["layers"], "sequence_length": task["sequence_length"],
           "global_batch": task["global_batch"], "plan": os.path.basename(plan_path)}
    try:
        lay = sc.parse_layout(layout)
        row["micro_batches"] = task["global_batch"] // (lay["dp"] * lay["mb"])
    except Exception:  # noqa: BLE001
        pass
    row.update(extra)
    sc.append_rows(args.out, HEADER, [row], ctx["provenance"])


def mark(args, index, status):
    if not args.markers:
        return True
    os.makedirs(args.markers, exist_ok=True)
    try:
        fd = os.open(os.path.join(args.markers, f"job{index}.{status}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
    except FileExistsError:
        return False
    with open(os.path.join(args.markers, "progress"), "a") as f:
        f.write(f"{index} {status}\n")
    return True


def report_leftover(rank, index):
    """Tensors an earlier job left allocated inflate every later job's peak: say which."""
    import torch
    left = torch.cuda.memory_allocated()
    if left < 2**28:
        return
    sizes = {}
    for o in gc.get_objects():
        try:
            if torch.is_tensor(o) and o.is_cuda:
                key = (tuple(o.shape), str(o.dtype), type(o).__name__)
                sizes[key] = sizes.get(key, 0) + o.untyped_storage().nbytes()
        except Exception:  # noqa: BLE001 - objects that cannot be inspected are skipped
            pass
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    print(f"[rank {rank}] job {index} left {left / 2**30:.2f} GiB allocated; reachable CUDA tensors: "
          + "; ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in top), file=sys.stderr, flush=True)


def main(argv):
    args = parse_args(argv)
    import torch
    import torch.distributed as dist
    local, rank, world = sc.init_distributed()
    if args.markers:  # the campaign driver kills these if torchrun cannot
        os.makedirs(args.markers, exist_ok=True)
        open(os.path.join(args.markers, f"pid.{os.getpid()}"), "w").close()
    cluster = sc.load_cluster(args.cluster)
    ctx = {"Stage": build_model_classes(), "gqa": probe_gqa_mode(),
           "framework": f"torch-{torch.__version__.split('+')[0]}", "provenance": provenance(argv)}
    jobs = []
    for i in range(0, len(args.pairs), 2):
        task = sc.load_task(args.pairs[i])
        plan = sc.load_plan(args.pairs[i + 1])
        try:
            lay, n_micro = check_job(cluster, task, plan, world)
        except Refused as e:
            if rank == 0:
                print(f"run_plan.py: {args.pairs[i + 1]}: refused: {e}", file=sys.stderr)
            dist.destroy_process_group()
            return 2
        jobs.append((task, plan, args.pairs[i + 1], lay, n_micro))
    done = set()
    if args.markers and os.path.exists(os.path.join(args.markers, "progress")):
        done = {int(l.split()[0]) for l in open(os.path.join(args.markers, "progress")) if l.strip()}
    for index, (task, plan, plan_path, lay, n_micro) in enumerate(jobs):
        if index in done:
            continue
        t0 = time.time()
        if rank == 0:
            print(f"== job {index}: {task['name']} {plan['layout']}", flush=True)
        job = None
        try:
            job = Job(args, cluster, task, plan, plan_path, lay, n_micro, ctx)
            if args.loss_curve:
                extra = job.run_loss_curve(args.loss_curve)
            else:
                extra = job.run_timed()
            if rank == 0 and mark(args, index, "ok"):
                write_row(args, cluster, task, plan_path, plan["layout"], extra, ctx)
                print(f"   {extra.get('step_s', 0):.4f} s/step, mfu {extra.get('mfu', 0):.3f}, "
                      f"peak {extra.get('peak_reserved_bytes', 0) / 2**30:.1f} GiB, "
                      f"{extra.get('note', '')} ({time.time() - t0:.0f} s)", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            print(f"[rank {rank}] out of memory: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
            if mark(args, index, "oom"):
                write_row(args, cluster, task, plan_path, plan["layout"],
                          {"status": "oom", "note": f"rank {rank}: {str(e).splitlines()[0][:120]}"}, ctx)
            if world > 1:
                os._exit(3)
        except Exception as e:  # noqa: BLE001 - the row says error, the log has the reason
            traceback.print_exc()
            if mark(args, index, "error"):
                write_row(args, cluster, task, plan_path, plan["layout"],
                          {"status": "error", "note": f"rank {rank}: {type(e).__name__}"}, ctx)
            if world > 1:
                sys.stderr.flush()
                os._exit(4)
        del job
        gc.collect()
        torch.cuda.empty_cache()
        report_leftover(rank, index)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
