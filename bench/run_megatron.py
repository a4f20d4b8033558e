#!/usr/bin/env python3
"""Runs yirage training plans under Megatron-Core and records whole steps (the format of
bench/run_plan.py's train_steps*.csv, framework `megatron-core-<commit>`), so that the default
framework's step model (`framework: megatron`) is measured on the GPUs it plans for.

    PYTHONPATH=MEGATRON torchrun --nproc-per-node N bench/run_megatron.py --out FILE PLAN...

MEGATRON is a checkout of NVIDIA/Megatron-LM (its `megatron/core`); `--megatron-commit` names
the commit in every row. The model is Megatron-Core's GPTModel with the local layer spec
(`get_gpt_layer_local_spec`: Megatron-Core's own modules, as the measuring machine has neither
Transformer Engine nor Apex), wrapped as Megatron-LM wraps 16-bit runs (Float16Module), under
its DDP (fp32 gradient buffers, `overlap_grad_reduce` unless the layout says dp_overlap=off)
and its mixed-precision optimizer (torch's AdamW underneath; the distributed optimizer for
zero=1), gradient clipping at 1.0, dropout off, no gradient-accumulation fusion (it needs Apex
or Transformer Engine) and no fused softmax kernel (Megatron-LM's compiled one is absent: its
PyTorch path runs). The task's `attention` picks the core attention: `unfused` is Megatron's
own (batched matmuls and the softmax between), `flash` PyTorch's fused SDPA (causal) in its
place, as Transformer Engine's fused attention would be. Pipelines exchange activations as
Megatron-LM's arguments set it up: batched and followed by a device synchronisation, or
overlapped with the chunks' compute when interleaved (vpp > 1), each rank building its vpp
model chunks as Megatron-LM's get_model does. Each plan's task must say
`framework: megatron`. The data are random tokens. Timing: after --warmup steps, --steps
steps each between a device synchronisation and a barrier; a row keeps the median, p10 and
p90, and the peak memory of the fullest rank. Run one plan per process where a plan may run
out of memory: what an out-of-memory plan leaves allocated spoils the next.
"""
import argparse
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402

HEADER = ["cluster", "task", "layout", "gpus", "gpus_per_node", "device", "framework",
          "status", "steps", "step_s", "step_s_p10", "step_s_p90", "tokens_per_s",
          "peak_allocated_bytes", "peak_reserved_bytes", "layers", "sequence_length",
          "global_batch", "micro_batches", "plan", "note"] + \
         ["kernel_" + k + "_s" for k in sc.KERNEL_CATEGORIES] + \
         ["gpu_busy_s", "profiled_step_s", "host_forward_s", "host_backward_s"]
KERNEL_HEADER = ["task", "layout", "gpus", "category", "count", "seconds", "kernel"]


class Refused(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("plans", nargs="+", help="plan files (yirage-plan --save-plan)")
    p.add_argument("--out", required=True, help="CSV to append rows to")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--megatron-commit", default="unknown")
    p.add_argument("--kernels", help="CSV to append rank 0's kernels of the profiled step to")
    p.add_argument("--trace", help="folder for rank 0's profiled step as a gzipped Chrome trace "
                   "(<plan>.trace.json.gz), its forward passes, loss and optimizer step marked "
                   "(bench/trace_gaps.py reads it)")
    return p.parse_args(argv)


def ran_layout(plan):
    """The plan's layout as it ran: Megatron-Core's own modules (no Transformer Engine or
    Apex on the GPU machine), so without gradient-accumulation fusion, which needs one of
    them."""
    layout = plan["layout"]
    for item in ("grad_fusion=off", "te=off"):
        if item not in layout.split(","):
            layout += "," + item
    return layout


def load_spec(plan_path):
    """A plan file and the cluster and task it names (in ../clusters and ../tasks beside it)."""
    root = os.path.dirname(os.path.abspath(plan_path))
    plan = sc.load_plan(plan_path)
    cluster = sc.load_cluster(os.path.join(root, "..", "clusters", plan["cluster"] + ".yaml"))
    task = sc.load_task(os.path.join(root, "..", "tasks", plan["task"] + ".yaml"))
    return plan, cluster, task


def check(cluster, task, lay, world):
    m = task["model"]
    if task.get("framework", "megatron") != "megatron":
        raise Refused("the task's framework is not megatron")
    if task["attention"] not in ("unfused", "flash"):
        raise Refused("attention must be unfused (Megatron-Core's own) or flash (PyTorch's SDPA)")
    if lay["tp"] > 1 and lay["sp"] == "on":
        raise Refused("sequence parallelism needs Apex's or Transformer Engine's norms: sp=off")
    if lay["cp"] > 1 or lay["ep"] > 1 or lay["zero"] > 1 or lay["offload"] == "on":
        raise Refused("cp, ep, zero 2-3 and offload are not run here")
    if lay["vpp"] > 1 and (lay["pp"] < 2 or m["layers"] % (lay["pp"] * lay["vpp"]) != 0):
        raise Refused("interleaving needs pp > 1 and layers a multiple of pp x vpp")
    if lay["tp"] * lay["pp"] * lay["dp"] != world or cluster["gpus"] != world:
        raise Refused(f"the layout needs {lay['tp'] * lay['pp'] * lay['dp']} ranks, "
                      f"the cluster {cluster['gpus']}, this job has {world}")
    if task["global_batch"] % (lay["dp"] * lay["mb"]) != 0:
        raise Refused("the global batch is not a multiple of dp x mb")
    if m.get("moe"):
        raise Refused("mixture-of-experts models are not run here")


def sdpa_attention(torch):
    """Megatron-Core's core-attention interface over PyTorch's fused attention (SDPA, causal):
    what Transformer Engine's fused attention gives a Megatron-LM run, without Transformer
    Engine."""
    class SdpaAttention(torch.nn.Module):
        def __init__(self, config, layer_number, attn_mask_type, attention_type,
                     attention_dropout=None, softmax_scale=None, **_):
            super().__init__()
            self.scale = softmax_scale

        def forward(self, query, key, value, attention_mask, attn_mask_type=None,
                    attention_bias=None, packed_seq_params=None):
            q, k, v = (t.permute(1, 2, 0, 3) for t in (query, key, value))  # [b, n, s, d]
            out = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True, scale=self.scale, enable_gqa=k.size(1) != q.size(1))
            return out.permute(2, 0, 1, 3).reshape(out.size(2), out.size(0), -1)

    return SdpaAttention


def build(task, lay, torch):
    from megatron.core import parallel_state as ps
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.distributed.finalize_model_grads import finalize_model_grads
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.transformer.module import Float16Module
    from megatron.core.transformer.transformer_config import TransformerConfig

    m = task["model"]
    vpp = lay["vpp"] if lay["vpp"] > 1 else None
    ps.initialize_model_parallel(lay["tp"], lay["pp"], virtual_pipeline_model_parallel_size=vpp)
    model_parallel_cuda_manual_seed(1234)
    dtype = torch.float16 if task["precision"] == "fp16" else torch.bfloat16
    gated = m["ffn_kind"] == "gated"
    rms = m["norm"] == "rmsnorm"
    recompute = {"none": {}, "selective": {"recompute_granularity": "selective"},
                 "full": {"recompute_granularity": "full", "recompute_method": "uniform",
                          "recompute_num_layers": 1}}[lay["recompute"]]
    config = TransformerConfig(
        num_layers=m["layers"], hidden_size=m["hidden"], num_attention_heads=m["heads"],
        num_query_groups=m["kv_heads"], kv_channels=m["head_dim"], ffn_hidden_size=m["ffn"],
        gated_linear_unit=gated,
        activation_func=torch.nn.functional.silu if gated else torch.nn.functional.gelu,
        normalization="RMSNorm" if rms else "LayerNorm", add_bias_linear=m["bias"] == "all",
        tensor_model_parallel_size=lay["tp"], pipeline_model_parallel_size=lay["pp"],
        virtual_pipeline_model_parallel_size=vpp, sequence_parallel=lay["tp"] > 1 and lay["sp"] == "on",
        fp16=dtype == torch.float16, bf16=dtype == torch.bfloat16, params_dtype=dtype,
        pipeline_dtype=dtype, gradient_accumulation_fusion=False, bias_activation_fusion=not gated,
        masked_softmax_fusion=False, persist_layer_norm=False, apply_rope_fusion=False,
        attention_dropout=0.0, hidden_dropout=0.0, deallocate_pipeline_outputs=True,
        # As Megatron-LM's arguments set them: interleaved schedules overlap their sends and
        # receives with the chunks' compute; the others batch them, each batch followed by a
        # device synchronisation (batch_p2p_sync).
        overlap_p2p_comm=vpp is not None, batch_p2p_comm=vpp is None, **recompute)
    spec = get_gpt_layer_local_spec(normalization=config.normalization)
    if task["attention"] == "flash":
        spec.submodules.self_attention.submodules.core_attention = sdpa_attention(torch)
    overlap = lay["dp"] > 1 and lay["dp_overlap"] == "on"
    ddp = DistributedDataParallelConfig(grad_reduce_in_fp32=True, overlap_grad_reduce=overlap,
                                        use_distributed_optimizer=lay["zero"] >= 1)
    # Interleaved (vpp > 1), a rank holds vpp chunks of the model, built and wrapped as
    # Megatron-LM's get_model does: each chunk its own GPTModel, Float16Module and DDP, the
    # chunks after the first without bucketing.
    chunks = []
    for stage in range(vpp or 1):
        vp = stage if vpp else None
        model = GPTModel(
            config=config,
            transformer_layer_spec=spec,
            vocab_size=m["vocab"], max_sequence_length=max(task["sequence_length"],
                                                           m.get("max_positions", 0) or 0),
            pre_process=ps.is_pipeline_first_stage(ignore_virtual=not vpp, vp_stage=vp),
            post_process=ps.is_pipeline_last_stage(ignore_virtual=not vpp, vp_stage=vp),
            share_embeddings_and_output_weights=m["tied_embeddings"],
            position_embedding_type="rope" if m["position"] == "rope" else "learned_absolute",
            rotary_base=int(m.get("rope_theta", 10000)), vp_stage=vp)
        model.cuda(torch.cuda.current_device())
        model = Float16Module(config, model)  # as Megatron-LM's get_model wraps 16-bit runs
        chunks.append(DistributedDataParallel(config=config, ddp_config=ddp, module=model,
                                              disable_bucketing=stage > 0))
    config.no_sync_func = [c.no_sync for c in chunks] if vpp else chunks[0].no_sync
    config.finalize_model_grads_func = finalize_model_grads
    if overlap:
        config.grad_sync_func = ([c.start_grad_sync for c in chunks] if vpp
                                 else chunks[0].start_grad_sync)
    opt = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=1e-5, weight_decay=0.0, clip_grad=1.0,
                        fp16=dtype == torch.float16, bf16=dtype == torch.bfloat16,
                        params_dtype=dtype, use_distributed_optimizer=lay["zero"] >= 1),
        chunks)
    return chunks, opt


def profile(step, torch, args, task, plan, path, cluster, rank):
    """One more step under torch.profiler: its kernels' seconds by category
    (steps_common.KERNEL_CATEGORIES), the GPU's busy time and the kernels' span; rank 0's
    kernels by name to --kernels, and its whole trace to --trace."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity
    with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(True)
        torch.cuda.synchronize()
    if args.trace and rank == 0:
        write_trace(prof, args.trace, path)
    events = prof.events()
    annotations = {e.name for e in events if e.device_type != DeviceType.CUDA}
    kernels = [(e.name, e.time_range.start, e.time_range.end) for e in events
               if e.device_type == DeviceType.CUDA and e.name not in annotations]
    cats, busy, span = sc.kernel_breakdown(kernels)
    if args.kernels and rank == 0:
        by_name = {}
        for name, start, end in kernels:
            n, t = by_name.get(name, (0, 0.0))
            by_name[name] = (n + 1, t + (end - start) / 1e6)
        sc.append_rows(args.kernels, KERNEL_HEADER, [
            {"task": task["name"], "layout": ran_layout(plan), "gpus": cluster["gpus"],
             "category": sc.kernel_category(name), "count": n, "seconds": t,
             "kernel": name.replace(",", ";").replace("\n", " ")[:240]}
            for name, (n, t) in sorted(by_name.items(), key=lambda kv: -kv[1][1])],
            ["kernels of one profiled step (bench/run_megatron.py), rank 0"])
    out = {"kernel_" + k + "_s": cats[k] for k in sc.KERNEL_CATEGORIES}
    out.update(gpu_busy_s=busy, profiled_step_s=span)
    return out


def write_trace(prof, folder, plan_path):
    import gzip
    import shutil
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, os.path.splitext(os.path.basename(plan_path))[0])
    prof.export_chrome_trace(base + ".trace.json")
    with open(base + ".trace.json", "rb") as src, gzip.open(base + ".trace.json.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(base + ".trace.json")


def marker(torch, name, on):
    """A profiler range named `name` where `on`, else nothing."""
    import contextlib
    return torch.profiler.record_function(name) if on else contextlib.nullcontext()


def timed_backward(host):
    """Times Megatron-Core's backward passes on the host into host["backward"]: its schedules
    call `backward_step` by name, so the module's function is wrapped (once). The call
    returns once autograd has issued the pass's kernels, not when they finish."""
    from megatron.core.pipeline_parallel import schedules
    inner = getattr(schedules.backward_step, "yirage_inner", schedules.backward_step)

    def backward_step(*a, **k):
        t0 = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            host["backward"] += time.perf_counter() - t0
    backward_step.yirage_inner = inner
    schedules.backward_step = backward_step


def run(plan_path, args, rank, world, torch, dist):
    from megatron.core import parallel_state as ps
    from megatron.core.pipeline_parallel.schedules import get_forward_backward_func

    plan, cluster, task = load_spec(plan_path)
    lay = sc.parse_layout(plan["layout"])
    check(cluster, task, lay, world)
    m = task["model"]
    seq, mb = task["sequence_length"], lay["mb"]
    micro_batches = task["global_batch"] // (lay["dp"] * mb)
    chunks, opt = build(task, lay, torch)
    gen = torch.Generator(device="cuda").manual_seed(rank)
    batches = [{"tokens": torch.randint(0, m["vocab"], (mb, seq), device="cuda", generator=gen),
                "labels": torch.randint(0, m["vocab"], (mb, seq), device="cuda", generator=gen)}
               for _ in range(4)]
    position = torch.arange(seq, device="cuda").unsqueeze(0).expand(mb, seq)
    mask = torch.ones(seq, seq, device="cuda", dtype=torch.bool).triu(1).view(1, 1, seq, seq)

    marked = [False]  # the profiled step marks its phases for --trace
    host = {"forward": 0.0, "backward": 0.0}  # the host's seconds in this step's passes

    def forward_step(data_iterator, model):
        t0 = time.perf_counter()
        with marker(torch, "yirage.forward", marked[0]):
            b = next(data_iterator)
            out = model(b["tokens"], position, mask, labels=b["labels"])
        host["forward"] += time.perf_counter() - t0

        def loss_func(output):
            with marker(torch, "yirage.loss", marked[0]):
                loss = output.float().mean()
            return loss, {"loss": loss.detach()}
        return out, loss_func

    def cycle():
        while True:
            yield from batches

    fb = get_forward_backward_func()
    timed_backward(host)
    # Interleaved, each chunk reads its own iterator (only the first and last chunks use it).
    data = [cycle() for _ in chunks] if len(chunks) > 1 else cycle()
    model = chunks if len(chunks) > 1 else chunks[0]

    def step(marked_step=False):
        marked[0] = marked_step
        host["forward"] = host["backward"] = 0.0
        with marker(torch, "yirage.zero_grad", marked_step):
            for c in chunks:
                c.zero_grad_buffer()
            opt.zero_grad()
        fb(forward_step_func=forward_step, data_iterator=data, model=model,
           num_microbatches=micro_batches, seq_length=seq, micro_batch_size=mb,
           decoder_seq_length=seq, forward_only=False)
        with marker(torch, "yirage.optimizer", marked_step):
            ok, _, _ = opt.step()
        return ok

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times, host_forward, host_backward = [], [], []
    for _ in range(args.steps):
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        dist.barrier()
        times.append(time.perf_counter() - t0)
        host_forward.append(host["forward"])
        host_backward.append(host["backward"])
    row_kernels = profile(step, torch, args, task, plan, plan_path, cluster, rank)
    peaks = torch.tensor([torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()],
                         device="cuda", dtype=torch.float64)
    dist.all_reduce(peaks, op=dist.ReduceOp.MAX)
    times.sort()
    median = statistics.median(times)
    row = {"status": "ok", "steps": args.steps, "step_s": median,
           "step_s_p10": times[len(times) // 10], "step_s_p90": times[(9 * len(times)) // 10],
           "tokens_per_s": task["global_batch"] * seq / median,
           "peak_allocated_bytes": int(peaks[0].item()), "peak_reserved_bytes": int(peaks[1].item()),
           "host_forward_s": statistics.median(host_forward),
           "host_backward_s": statistics.median(host_backward)}
    row.update(row_kernels)
    del model, chunks, opt, batches
    ps.destroy_model_parallel()
    return cluster, task, plan, micro_batches, row


def main(argv):
    args = parse_args(argv)
    local, rank, world = sc.init_distributed()
    import torch
    import torch.distributed as dist
    name = torch.cuda.get_device_name()
    prov = [f"measured by bench/run_megatron.py: whole training steps of yirage plans under "
            f"Megatron-Core {args.megatron_commit} (local layer spec, no Transformer Engine or Apex)",
            f"device: {name} x{torch.cuda.device_count()} visible; CUDA {torch.version.cuda}; "
            f"torch {torch.__version__}; NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}",
            f"date: {sc.utc_now()}",
            "command: " + " ".join(["bench/run_megatron.py"] + argv)]
    framework = "megatron-core-" + args.megatron_commit
    for path in args.plans:
        status, row, note = "error", {}, ""
        try:
            cluster, task, plan, mbs, row = run(path, args, rank, world, torch, dist)
            status = "ok"
        except Refused as e:
            note = str(e)
        except torch.OutOfMemoryError:
            status, note = "oom", "out of memory"
        except Exception as e:  # noqa: BLE001
            note = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            if rank == 0:
                traceback.print_exc()
        if status != "ok":
            try:
                from megatron.core import parallel_state as ps
                ps.destroy_model_parallel()
            except Exception:  # noqa: BLE001
                pass
            plan, cluster, task = load_spec(path)
            mbs = None
        torch.cuda.empty_cache()
        if rank == 0:
            out = {"cluster": cluster["name"], "task": task["name"], "layout": ran_layout(plan),
                   "gpus": cluster["gpus"], "gpus_per_node": cluster["devices_per_node"],
                   "device": cluster["device"], "framework": framework, "status": status,
                   "layers": task["model"]["layers"], "sequence_length": task["sequence_length"],
                   "global_batch": task["global_batch"], "micro_batches": mbs,
                   "plan": os.path.basename(path), "note": note}
            out.update(row)
            sc.append_rows(args.out, HEADER, [out], prov)
            print(f"{os.path.basename(path)}: {status} {row.get('step_s', '')} {note}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
