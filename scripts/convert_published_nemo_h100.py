#!/usr/bin/env python3
"""Writes NVIDIA's published NeMo 24.09 training step times on DGX H100 clusters (the DGX
Cloud Benchmarking recipes, github.com/NVIDIA/dgxc-benchmarking at commit
143b90dd91f9be958fed4773ae95d941a3356a82: llama3.1/README_8b.md, README_70b.md and
README_405b.md, "Expected Performance") into yirage's measured-steps format
(data/benchmarks/README.md, "Training and inference steps"), with the cluster and task files
beside them, so that `yirage-plan validate-training` prices exactly the published layouts.
Run from the repository root:

    python3 scripts/convert_published_nemo_h100.py data/benchmarks/H100-SXM

The tables below are transcribed from those READMEs (seconds per step, the last step of a
100-step run). What they do not state is chosen as follows (and said in each row's note):
- the framework is Megatron-Core under NeMo with Transformer Engine, sequence parallelism,
  the distributed optimizer (`zero=1`) and overlapped gradient reduction: yirage's `megatron`
  defaults; under tensor parallelism Transformer Engine's userbuffers overlap its
  collectives (`tp_overlap=on`: NeMo-Framework-Launcher's llama3_1 configurations set
  `ub_tp_comm_overlap: true`);
- no activation recomputation (those configurations set none);
- DGX H100 nodes: 8 H100 SXM on NVSwitch, one 400 Gb/s NDR InfiniBand NIC per GPU, a
  non-blocking fat tree;
- Llama 3.1 405B runs on synthetic data with the GPT-2 tokenizer as a proxy (its README):
  50,257 tokens padded by Megatron to a multiple of 128 x tp, 51,200; the 8B and 70B use
  Llama 3's 128,256. The 405B rows on 32, 96 and 192 GPUs are the recipes' proxy models of
  7, 21 and 42 layers.
Only the BF16 tables are converted: the FP8 ones scale activations per tensor (Transformer
Engine's delayed scaling), which yirage's step model does not price.
"""
import os
import sys

from published_steps import write_steps
SOURCE = ("NVIDIA/dgxc-benchmarking@143b90dd91f9be958fed4773ae95d941a3356a82 "
          "llama3.1/README_%s.md, NeMo 24.09 BF16")

# name: (layers, hidden, heads, kv_heads, ffn, vocab)
MODELS = {"8b": (32, 4096, 32, 8, 14336, 128256),
          "70b": (80, 8192, 64, 8, 28672, 128256),
          "405b": (126, 16384, 128, 8, 53248, 51200)}

# (model, gpus, layers, global batch, tp, pp, cp, vpp, seconds per step)
ROWS = [("8b", g, 32, 16 * g, 1, 1, 2, 1, s)
        for g, s in ((8, 12.91), (16, 13.00), (32, 13.05), (64, 13.08), (128, 13.10))] + \
       [("70b", g, 80, 2 * g, 4, 4, 2, 5, s)
        for g, s in ((64, 14.72), (128, 14.73), (256, 14.8), (512, 14.89), (1024, 14.92),
                     (2048, 14.98))] + \
       [("405b", 32, 7, 126, 8, 1, 2, 1, 8.85), ("405b", 96, 21, 126, 8, 3, 2, 7, 8.75),
        ("405b", 192, 42, 252, 8, 3, 2, 7, 16.93), ("405b", 576, 126, 252, 8, 9, 2, 7, 17.20),
        ("405b", 1152, 126, 504, 8, 9, 2, 7, 17.52), ("405b", 2304, 126, 1008, 8, 9, 2, 7, 17.62)]


def cluster_yaml(nodes):
    return f"""# DGX H100 cluster (NVIDIA DGX Cloud Benchmarking): {nodes} node(s) of 8 H100 SXM on NVSwitch,
# one 400 Gb/s NDR InfiniBand NIC per GPU (scripts/convert_published_nemo_h100.py).
name: dgxh100-{nodes * 8}
node_groups:
  - name: dgx
    device: H100-SXM
    nodes: {nodes}
    devices_per_node: 8
    fabric:
      kind: nvswitch
      bandwidth: 450 GB/s
      latency: 1 us
network:
  topology: fat-tree
  nic_bandwidth: 400 Gb/s
  latency: 5 us
  oversubscription: 1
"""


def task_yaml(name, size, layers, batch):
    _, hidden, heads, kv, ffn, vocab = MODELS[size]
    return f"""# Llama 3.1 {size.upper()}{' proxy of %d layers' % layers if layers != MODELS[size][0] else ''}: {SOURCE % size}
name: {name}
model:
  name: {name}-model
  layers: {layers}
  hidden: {hidden}
  heads: {heads}
  kv_heads: {kv}
  head_dim: 128
  ffn: {ffn}
  ffn_kind: gated
  vocab: {vocab}
  max_positions: 8192
mode: train
framework: megatron
precision: bf16
sequence_length: 8192
global_batch: {batch}
"""


def convert(dst):
    steps = os.path.join(dst, "steps")
    os.makedirs(os.path.join(steps, "clusters"), exist_ok=True)
    os.makedirs(os.path.join(steps, "tasks"), exist_ok=True)
    rows = []
    for size, gpus, layers, batch, tp, pp, cp, vpp, seconds in ROWS:
        cluster = "dgxh100-%d" % gpus
        with open(os.path.join(steps, "clusters", cluster + ".yaml"), "w") as c:
            c.write(cluster_yaml(gpus // 8))
        task = "nemo-l31-%s-L%d-gb%d" % (size, layers, batch)
        with open(os.path.join(steps, "tasks", task + ".yaml"), "w") as t:
            t.write(task_yaml(task, size, layers, batch))
        dp = gpus // (tp * pp * cp)
        layout = "tp=%d,pp=%d,dp=%d,mb=1,recompute=none,zero=1,cp=%d" % (tp, pp, dp, cp)
        if vpp > 1:
            layout += ",vpp=%d" % vpp
        if tp > 1:
            layout += ",tp_overlap=on"
        note = "%s: published seconds per step; recomputation not stated: none" % (SOURCE % size)
        rows.append([cluster, task, layout, gpus, 8, "H100-SXM", "megatron-published", "ok",
                     "%.6g" % seconds, "", "", note])
    write_steps(os.path.join(dst, "train_steps_published.csv"), [
        "published NeMo 24.09 (Megatron-Core) training steps of Llama 3.1 8B, 70B and 405B",
        "on DGX H100 clusters of 8 to 2,304 GPUs, BF16: NVIDIA's DGX Cloud Benchmarking",
        "recipes (github.com/NVIDIA/dgxc-benchmarking), converted by",
        "scripts/convert_published_nemo_h100.py (its docstring says what was assumed)."], rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    convert(sys.argv[1])
