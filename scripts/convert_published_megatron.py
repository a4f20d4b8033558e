#!/usr/bin/env python3
"""Converts the published Megatron-LM training results kept in
../shared/validation/published/megatron_korthikanti.csv (Narayanan et al. SC'21 Tables 1-2,
Korthikanti et al. MLSys'23 Table 5) into yirage's measured-steps format
(data/benchmarks/README.md, "Training and inference steps"): one row per published run with
the cluster and task files beside it, so `yirage-plan validate-training` prices exactly the
published layout. Run from the repository root:

    python3 scripts/convert_published_megatron.py \
        ../shared/validation/published/megatron_korthikanti.csv data/benchmarks/A100-80GB

What the papers do not state is chosen as follows (and said in each row's note):
- Table 1 lists no micro-batch: `mb=best`, which validate-training prices at the fastest
  power of two that fits (the authors tuned each run; assuming 1 for all of them priced the
  four runs without pipelining 8-20% slow and the rest 3-9% fast);
- Table 1 and 2 rows: no interleaving; Table 5: the interleave Calculon encodes;
- the iteration time of a Table 1-2 row is the paper's TFLOP/s turned back into seconds with
  its own 96BslH^2 formula (the `derived_iter_time_s` of the source's notes);
- attention is unfused (Megatron-LM of 2021-22: baddbmm, fused softmax, dropout, bmm);
- Table 1 and 2 rows ran without gradient-accumulation fusion (`grad_fusion=off`): Megatron-LM
  gained it in February 2022 (its commit "gradient accumulation fusion"), after SC'21 and
  before Korthikanti et al.;
- Selene: 8 A100-80GB per node on NVSwitch, one 200 Gb/s HDR InfiniBand NIC per GPU.
Table 4 (time per layer) and Figure 1 (memory) are not whole steps and are not converted.
"""
import csv
import os
import re
import sys

from published_steps import write_steps


def cluster_yaml(nodes, per_node):
    return f"""# Selene (NVIDIA): {nodes} node(s) of {per_node} A100-SXM4-80GB on NVSwitch, 8 x 200 Gb/s HDR
# InfiniBand per node (one NIC per GPU), as Narayanan et al. SC'21 and Korthikanti et al.
# MLSys'23 describe it.
name: selene-{nodes * per_node}
node_groups:
  - name: a100
    device: A100-80GB
    nodes: {nodes}
    devices_per_node: {per_node}
    fabric:
      kind: nvswitch
      bandwidth: 300 GB/s
      latency: 1 us
network:
  topology: fat-tree
  nic_bandwidth: 200 Gb/s
  latency: 5 us
  oversubscription: 1
"""


def task_yaml(name, r):
    h, a = int(r["hidden"]), int(r["heads"])
    return f"""# {r['model']}: {r['source']}
name: {name}
model:
  name: {name}-model
  layers: {r['layers']}
  hidden: {h}
  heads: {a}
  head_dim: {h // a}
  ffn: {4 * h}
  ffn_kind: plain
  vocab: 51200
  tied_embeddings: true
  norm: layernorm
  bias: all
  position: learned
  max_positions: {r['seq_len']}
mode: train
framework: megatron
precision: fp16
attention: unfused
sequence_length: {r['seq_len']}
global_batch: {r['global_batch']}
"""


def convert(src, dst):
    steps = os.path.join(dst, "steps")
    os.makedirs(os.path.join(steps, "clusters"), exist_ok=True)
    os.makedirs(os.path.join(steps, "tasks"), exist_ok=True)
    rows = []
    with open(src) as f:
        for r in csv.DictReader(f):
            metric = r["measured_metric"]
            if r["kind"] != "train" or metric not in ("iteration_time", "achieved_tflops_per_gpu"):
                continue
            notes = r["notes"]
            if metric == "iteration_time":
                step = float(r["measured_value"])
                note = "published iteration time"
            else:
                step = float(re.search(r"derived_iter_time_s=([\d.]+)", notes).group(1))
                note = "iteration time from the published %s TFLOP/s per GPU" % r["measured_value"]
            gpus = int(r["gpus"])
            per_node = min(8, gpus)
            nodes = gpus // per_node
            cluster = "selene-%d" % gpus
            with open(os.path.join(steps, "clusters", cluster + ".yaml"), "w") as c:
                c.write(cluster_yaml(nodes, per_node))
            task = r["case_id"].lower()
            with open(os.path.join(steps, "tasks", task + ".yaml"), "w") as t:
                t.write(task_yaml(task, r))
            mb = r["micro_batch"] or "best"
            if not r["micro_batch"]:
                note += "; micro-batch not published: the fastest that fits"
            m = re.search(r"interleave=(\d+)", notes)
            vpp = int(m.group(1)) if m else 1
            recompute = r["recompute"]
            layout = "tp=%s,pp=%s,dp=%s,mb=%s,recompute=%s,zero=0,sp=%s" % (
                r["tp"], r["pp"], r["dp"], mb, "full" if recompute == "full" else "selective",
                "on" if "sequence-parallel" in recompute else "off")
            if vpp > 1:
                layout += ",vpp=%d" % vpp
            if r["case_id"].startswith("MEG21"):
                layout += ",grad_fusion=off"
            if "CONFIDENCE=medium" in notes or "verify" in notes:
                note += "; the source marks the value as recalled, to verify"
            rows.append([cluster, task, layout, gpus, per_node, "A100-80GB", "megatron-published",
                         "ok", "%.6g" % step, "", "", r["case_id"] + ": " + note])
    write_steps(os.path.join(dst, "train_steps_published.csv"), [
        "published Megatron-LM training runs on Selene (A100-SXM4-80GB), one row each:",
        "Narayanan et al., SC'21 (arXiv 2104.04473) Tables 1-2; Korthikanti et al.,",
        "MLSys'23 (arXiv 2205.05198) Table 5; transcribed in",
        "../shared/validation/published/megatron_korthikanti.csv and converted by",
        "scripts/convert_published_megatron.py (its docstring says what was assumed)."], rows)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    convert(sys.argv[1], sys.argv[2])
