#!/usr/bin/env python3
"""The measurement campaign of issue 27: many yirage plans measured back to back on one host
of 4 GPUs with bench/run_plan.py and bench/run_infer.py.

    python3 bench/steps_campaign.py prepare            # here, on the CPU: clusters, tasks, plans
    python3 bench/steps_campaign.py run --out DIR [--gpus 1,2,4] [--budget 1:150,2:240,4:300]
                                        [--infer] [--loss]   # on the GPU machine
    python3 bench/steps_campaign.py check-loss CSV     # the loss-curve check

`prepare` writes, for each device variant (H100-SXM and H200; the GPU machine may be
either), data/benchmarks/<DEVICE>/steps/{clusters,tasks,plans}/: one-host clusters of 1, 2
and 4 GPUs, task files with the model inline (real Llama 3 widths and vocabulary, fewer
layers), and a plan file per measured layout, written by
`build/cli/yirage-plan CLUSTER TASK --layout L --save-plan FILE`; where yirage refuses a
layout (it does not fit, say), the plan file is written here in the same format with an
empty estimate and a comment saying so, and the layout is measured all the same.

`run` picks the variant by torch.cuda.get_device_name() and runs the plans phase by phase:
1-GPU jobs on the 4 GPUs at once (CUDA_VISIBLE_DEVICES), 2-GPU jobs two at a time, 4-GPU
jobs alone; several plans per torchrun process (one start for many layouts). A job that
kills its process (out of memory on one rank, a crash) is recorded by the runner, or here
as `error`, and the process is started again on the plans left; a job that makes no
progress for --job-timeout seconds is stopped and recorded as `error` (timeout). A phase
starts no new process after its budget; what its deadline cuts off is not recorded. Output
under --out: train_steps.csv, infer_steps.csv, loss_curves.csv, logs/.
"""
import argparse
import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402

VARIANTS = {"H100-SXM": "h100", "H200": "h200"}
WIDTHS = {"8b": "llama3-8b", "70b": "llama3-70b"}
LOSS_MODEL = {"name": "loss-check-L4", "layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 4,
              "head_dim": 64, "ffn": 4096, "ffn_kind": "gated", "vocab": 128256,
              "max_positions": 8192}


def L(tp=1, pp=1, dp=1, mb=1, rc="none", zero=0, vpp=1, sp=True):
    return sc.layout_str(tp, pp, dp, mb, rc, zero, vpp, sp)


def training_jobs():
    """(gpus, width, layers, seq, global_batch, layout), in the order they run: in each GPU
    count, first one job of every code path (so that a short run covers them all)."""
    j = []
    def add(gpus, width, layers, seq, gb, **k):
        # the global batch grows where the layout needs more sequences (dp*mb, pp micro-batches)
        need = k.get("dp", 1) * k.get("mb", 1) * k.get("pp", 1)
        j.append((gpus, width, layers, seq, max(gb, need), L(**k)))

    one = lambda *a, **k: add(1, *a, **k)  # noqa: E731
    two = lambda *a, **k: add(2, *a, **k)  # noqa: E731
    four = lambda *a, **k: add(4, *a, **k)  # noqa: E731
    # One GPU: an out-of-memory row, the recompute paths, then micro-batch, recompute,
    # layers and sequence over 8B widths.
    one("70b", 8, 2048, 1)
    one("8b", 4, 4096, 4, rc="selective")
    one("8b", 4, 4096, 4, rc="full")
    for mb, rc in ((1, "none"), (2, "none"), (1, "full"), (4, "none"), (1, "selective"),
                   (2, "full"), (4, "full"), (2, "selective")):
        for layers, seq, gb in ((2, 2048, 8), (4, 4096, 4), (8, 8192, 2), (4, 2048, 8),
                                (8, 4096, 4), (2, 8192, 2), (4, 8192, 4), (8, 2048, 8)):
            if mb <= gb and not (mb > 1 and rc == "selective" and layers != 4):
                one("8b", layers, seq, gb, mb=mb, rc=rc)
    # Two GPUs.
    two("8b", 4, 4096, 4, tp=2, rc="selective")
    two("8b", 4, 4096, 4, dp=2, zero=1)
    two("8b", 4, 4096, 4, dp=2, zero=3)
    two("8b", 4, 4096, 4, pp=2, vpp=2)
    two("8b", 4, 4096, 4, pp=2)
    two("8b", 4, 4096, 4, tp=2, sp=False)
    two("8b", 4, 4096, 4, dp=2, zero=2)
    two("70b", 4, 8192, 4, tp=2)
    for mb in (1, 2):
        two("8b", 4, 4096, 4, tp=2, mb=mb)
        two("8b", 4, 4096, 4, dp=2, mb=mb)
        two("8b", 4, 4096, 4, pp=2, mb=mb)
    for rc in ("selective", "full"):
        two("8b", 4, 4096, 4, tp=2, rc=rc)
        two("8b", 4, 4096, 4, dp=2, rc=rc)
        two("8b", 4, 4096, 4, pp=2, rc=rc)
    two("8b", 4, 4096, 4, dp=2, mb=2, rc="full", zero=3)
    for seq, gb in ((2048, 16), (8192, 4)):
        two("8b", 4, seq, gb, tp=2, mb=2 if seq == 2048 else 1)
        two("8b", 4, seq, gb, dp=2, mb=2 if seq == 2048 else 1)
        two("8b", 4, seq, gb, pp=2)
    two("8b", 8, 8192, 4, tp=2, rc="selective")
    two("8b", 8, 8192, 4, pp=2, rc="selective")
    two("8b", 8, 8192, 4, dp=2, rc="full", zero=3)
    two("8b", 8, 4096, 8, pp=2, vpp=2)
    two("8b", 8, 4096, 8, dp=2, zero=1)
    two("8b", 2, 2048, 16, dp=2, mb=4)
    two("8b", 2, 2048, 16, tp=2, mb=4)
    for rc in ("none", "full"):
        two("70b", 2, 4096, 4, tp=2, rc=rc)
    two("70b", 2, 4096, 4, pp=2)
    two("70b", 1, 4096, 4, tp=2, mb=2)
    two("70b", 2, 2048, 8, tp=2, mb=2, rc="selective")
    # Four GPUs.
    four("8b", 4, 4096, 8, tp=2, dp=2)
    four("8b", 4, 4096, 8, tp=2, dp=2, zero=3)
    four("8b", 4, 4096, 8, tp=2, pp=2)
    four("8b", 4, 4096, 8, pp=2, dp=2, zero=1)
    four("8b", 8, 8192, 8, pp=4, vpp=2)
    four("8b", 4, 4096, 8, tp=2, dp=2, zero=1)
    four("8b", 4, 4096, 8, pp=2, dp=2, vpp=2)
    four("70b", 4, 4096, 8, tp=4)
    for rc in ("none", "selective", "full"):
        four("8b", 4, 4096, 8, tp=4, rc=rc)
        four("8b", 4, 4096, 8, dp=4, rc=rc)
    four("8b", 4, 4096, 8, tp=4, mb=2)
    four("8b", 4, 4096, 8, tp=4, sp=False)
    for zero in (1, 2, 3):
        four("8b", 4, 4096, 8, dp=4, zero=zero)
    four("8b", 4, 4096, 8, dp=4, mb=2)
    four("8b", 4, 4096, 8, dp=4, mb=4, rc="full", zero=3)
    four("8b", 4, 4096, 8, pp=4)
    four("8b", 4, 4096, 8, pp=4, mb=2)
    four("8b", 4, 4096, 8, pp=2, dp=2)
    four("8b", 4, 4096, 8, tp=2, pp=2, rc="selective")
    four("8b", 8, 8192, 8, tp=4, rc="selective")
    four("8b", 8, 8192, 8, tp=2, pp=2)
    four("8b", 8, 8192, 8, dp=4, rc="full", zero=3)
    four("8b", 8, 8192, 8, pp=4, rc="full")
    four("8b", 2, 2048, 32, dp=4, mb=4)
    four("8b", 2, 2048, 32, tp=4, mb=4)
    four("8b", 2, 2048, 32, tp=2, dp=2, mb=4)
    four("70b", 4, 4096, 8, tp=4, rc="full")
    four("70b", 4, 4096, 8, tp=2, pp=2)
    four("70b", 4, 4096, 8, tp=2, dp=2, zero=3)
    four("70b", 4, 8192, 4, tp=4, rc="selective")
    four("70b", 4, 4096, 8, pp=4)
    four("70b", 2, 2048, 16, tp=4, mb=2)
    four("70b", 2, 2048, 16, tp=2, dp=2, zero=1)
    four("70b", 1, 4096, 8, tp=4)
    four("70b", 2, 4096, 8, tp=2, pp=2, rc="full")
    seen, out = set(), []
    for job in j:
        if job not in seen:
            seen.add(job)
            out.append(job)
    return out


def infer_jobs():
    """(tp, width, layers)."""
    return [(1, "8b", 8), (2, "8b", 8), (4, "8b", 8), (2, "70b", 2), (4, "70b", 2)]


LOSS_LAYOUTS = [(1, L(mb=4)), (2, L(tp=2, mb=4)), (2, L(dp=2, mb=4)), (2, L(pp=2, mb=4))]


def task_name(width, layers, seq, gb):
    return f"l{width}-L{layers}-s{seq}-gb{gb}"


def slug(layout):
    return layout.replace(",", "_").replace("=", "")


# ---------------------------------------------------------------------------------------
# prepare (CPU)

def write_cluster(folder, short, device, n):
    name = f"{short}x{n}"
    text = [f"# One host with {n} {device} as lent for bench/steps_campaign.py (issue 27).",
            f"name: {name}", "node_groups:", f"  - device: {device}", "    nodes: 1",
            f"    devices_per_node: {n}"]
    if n > 1:
        text += ["    fabric:", "      kind: nvswitch"]
    path = os.path.join(folder, "clusters", name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(text) + "\n")
    return name, path


def task_text(name, model, mode, seq, gb, comment):
    lines = [f"# {comment}", f"name: {name}", "model:"]
    lines += [f"  {k}: {v}" for k, v in model.items()]
    lines += [f"mode: {mode}", "precision: bf16", f"sequence_length: {seq}",
              f"global_batch: {gb}"]
    if mode == "train":
        lines.append("optimizer: adam")
        lines.append("framework: pytorch")  # run_plan.py: eager PyTorch, autocast over fp32
    lines.append("attention: flash")
    return "\n".join(lines) + "\n"


def inline_model(width, layers, max_positions=8192):
    base = sc.read_yaml(os.path.join(sc.ROOT, "data", "models", WIDTHS[width] + ".yaml"))
    m = {"name": f"{WIDTHS[width]}-L{layers}", "layers": layers}
    for k in ("hidden", "heads", "kv_heads", "head_dim", "ffn"):
        m[k] = base[k]
    m.update({"ffn_kind": "gated", "vocab": base["vocab"], "max_positions": max_positions})
    return m


def write_plan(yirage, cluster_path, task_path, layout, plan_path, cluster, task):
    r = subprocess.run([yirage, cluster_path, task_path, "--layout", layout, "--save-plan",
                        plan_path], capture_output=True, text=True)
    if r.returncode == 0 and os.path.exists(plan_path):
        return None
    reason = (r.stderr.strip() or r.stdout.strip()).replace("\n", " ")[:300]
    with open(plan_path, "w") as f:
        f.write("# A yirage plan: `yirage-plan CLUSTER TASK --plan FILE` evaluates it again.\n"
                f"# Written by bench/steps_campaign.py: yirage-plan refused this layout: {reason}\n"
                f"version: 1\ncluster: {cluster}\ntask: {task}\nmode: train\nlayout: {layout}\n"
                "estimate: ~\n")
    return reason


def prepare(args):
    yirage = os.path.join(sc.ROOT, "build", "cli", "yirage-plan")
    refused = []
    for device, short in VARIANTS.items():
        folder = os.path.join(sc.ROOT, "data", "benchmarks", device, "steps")
        for sub in ("clusters", "tasks", "plans"):
            shutil.rmtree(os.path.join(folder, sub), ignore_errors=True)
            os.makedirs(os.path.join(folder, sub))
        clusters = {n: write_cluster(folder, short, device, n) for n in (1, 2, 4)}
        tasks = {}
        for gpus, width, layers, seq, gb, layout in training_jobs():
            name = task_name(width, layers, seq, gb)
            if name not in tasks:
                tasks[name] = os.path.join(folder, "tasks", name + ".yaml")
                with open(tasks[name], "w") as f:
                    f.write(task_text(name, inline_model(width, layers), "train", seq, gb,
                                      f"Llama 3 {width.upper()} widths, {layers} layers "
                                      "(bench/steps_campaign.py, issue 27)"))
            cname, cpath = clusters[gpus]
            plan = os.path.join(folder, "plans", f"{cname}__{name}__{slug(layout)}.yaml")
            why = write_plan(yirage, cpath, tasks[name], layout, plan, cname, name)
            if why:
                refused.append((device, cname, name, layout, why))
        for tp, width, layers in infer_jobs():
            name = f"l{width}-L{layers}-decode"
            with open(os.path.join(folder, "tasks", name + ".yaml"), "w") as f:
                f.write(task_text(name, inline_model(width, layers, 131072), "decode", 8192, 1,
                                  f"Llama 3 {width.upper()} widths, {layers} layers; "
                                  "bench/run_infer.py rows set batch and context"))
        name = "loss-check"
        with open(os.path.join(folder, "tasks", name + ".yaml"), "w") as f:
            f.write(task_text(name, LOSS_MODEL, "train", 1024, 8,
                              "A small Llama for the loss-curve check of bench/run_plan.py"))
        for gpus, layout in LOSS_LAYOUTS:
            cname, cpath = clusters[gpus]
            plan = os.path.join(folder, "plans", f"{cname}__{name}__{slug(layout)}.yaml")
            why = write_plan(yirage, cpath, os.path.join(folder, "tasks", name + ".yaml"),
                             layout, plan, cname, name)
            if why:
                refused.append((device, cname, name, layout, why))
    for r in refused:
        print("refused by yirage (plan written here):", *r[:4], "--", r[4][:160])
    jobs = training_jobs()
    print(f"{len(jobs)} training jobs ({sum(1 for j in jobs if j[0] == 1)} on 1 GPU, "
          f"{sum(1 for j in jobs if j[0] == 2)} on 2, {sum(1 for j in jobs if j[0] == 4)} on 4), "
          f"{len({j[5] for j in jobs})} distinct layouts; {len(refused)} plans written here")


# ---------------------------------------------------------------------------------------
# run (GPU)

class Lane(threading.Thread):
    """Runs its items one after another on its GPUs."""

    def __init__(self, gpus, items, port, deadline, args):
        super().__init__()
        self.gpus, self.items, self.port, self.deadline, self.args = gpus, items, port, deadline, args

    def run(self):
        for item in self.items:
            if time.time() > self.deadline:
                print(f"[lane {self.gpus}] budget spent: {item['name']} not started", flush=True)
                continue
            if item["kind"] == "train":
                self.run_train(item)
            else:
                self.run_once(item)

    def torchrun(self, script, argv, log, nproc=None):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, self.gpus)),
                   NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
                   NVSHMEM_DISABLE_NVLS="1", PYTHONUNBUFFERED="1", OMP_NUM_THREADS="4")
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
               "--nproc-per-node", str(nproc or len(self.gpus)), "--master-port", str(self.port),
               os.path.join(sc.HERE, script)] + argv
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            return subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)

    def wait(self, proc, progress, hard_deadline):
        """Waits; stops the process when nothing progresses for the job timeout."""
        last, seen = time.time(), self.lines(progress)
        while proc.poll() is None:
            time.sleep(1)
            now_lines = self.lines(progress)
            if now_lines != seen:
                last, seen = time.time(), now_lines
            if time.time() - last > self.args.job_timeout or time.time() > hard_deadline:
                why = "timeout" if time.time() <= hard_deadline else "deadline"
                stop(proc, os.path.dirname(progress))
                return why
        return proc.returncode

    @staticmethod
    def lines(path):
        if not os.path.exists(path):
            return 0
        with open(path) as f:
            return sum(1 for _ in f)

    def run_train(self, item):
        from run_plan import HEADER
        logdir = os.path.join(self.args.out, "logs", item["name"])
        os.makedirs(logdir, exist_ok=True)
        progress = os.path.join(logdir, "progress")
        pairs = item["pairs"]
        while True:
            done = self.done(progress)
            if len(done) >= len(pairs) or time.time() > self.deadline:
                break
            argv = [item["cluster"]] + [p for pair in pairs for p in pair] + \
                   ["--out", os.path.join(self.args.out, "train_steps.csv"), "--markers", logdir,
                    "--steps", str(self.args.steps), "--warmup", str(self.args.warmup),
                    "--kernels", os.path.join(self.args.out, "train_kernels.csv")]
            before = self.lines(progress)
            proc = self.torchrun("run_plan.py", argv, logdir + ".log")
            rc = self.wait(proc, progress, self.deadline + self.args.grace)
            for pid in worker_pids(logdir):  # this process's workers are gone: forget them
                os.remove(os.path.join(logdir, f"pid.{pid}"))
            done = self.done(progress)
            if len(done) >= len(pairs) or rc == "deadline":
                break
            if self.lines(progress) > before and self.last_status(progress) != "ok":
                continue  # the runner recorded the job that ended the process (oom, error)
            culprit = min(i for i in range(len(pairs)) if i not in done)
            with open(progress, "a") as f:
                f.write(f"{culprit} error-driver\n")
            if rc == 2:
                print(f"[lane {self.gpus}] {item['name']}: refused (exit 2), see the log", flush=True)
                break
            cluster = sc.load_cluster(item["cluster"])
            task = sc.load_task(pairs[culprit][0])
            layout = sc.load_plan(pairs[culprit][1])["layout"]
            row = {"cluster": cluster["name"], "task": task["name"], "layout": layout,
                   "gpus": cluster["gpus"], "gpus_per_node": cluster["devices_per_node"],
                   "device": cluster["device"], "status": "error",
                   "layers": task["model"]["layers"], "sequence_length": task["sequence_length"],
                   "global_batch": task["global_batch"],
                   "plan": os.path.basename(pairs[culprit][1]),
                   "note": f"process ended ({rc}) without a row; see logs/{item['name']}.log"}
            sc.append_rows(os.path.join(self.args.out, "train_steps.csv"), HEADER, [row],
                           [f"rows written by bench/steps_campaign.py for processes that died; "
                            f"date {sc.utc_now()}"])
            print(f"[lane {self.gpus}] {item['name']}: job {culprit} ended the process ({rc})",
                  flush=True)

    @staticmethod
    def last_status(progress):
        with open(progress) as f:
            lines = [l.split() for l in f if l.strip()]
        return lines[-1][1] if lines else None

    @staticmethod
    def done(progress):
        if not os.path.exists(progress):
            return set()
        with open(progress) as f:
            return {int(l.split()[0]) for l in f if l.strip()}

    def run_once(self, item):
        log = os.path.join(self.args.out, "logs", item["name"] + ".log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        proc = self.torchrun(item["script"], item["argv"], log, item.get("nproc"))
        rc = self.wait_total(proc, self.deadline + self.args.grace)
        print(f"[lane {self.gpus}] {item['name']}: exit {rc}", flush=True)

    def wait_total(self, proc, hard_deadline):
        while proc.poll() is None:
            time.sleep(1)
            if time.time() > hard_deadline:
                stop(proc, None)
                return "deadline"
        return proc.returncode


def stop(proc, markers):
    """Stops a torchrun and its workers. torchrun starts each worker in a session of its
    own, so killing torchrun's process group alone leaves the workers running (it did, in
    the run of 2026-11-26: see data/benchmarks/README.md). SIGTERM lets torchrun stop its
    workers; what is left after 40 s is killed, the workers by the pids they wrote."""
    import signal
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=40)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    for pid in worker_pids(markers):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def worker_pids(markers):
    if not markers or not os.path.isdir(markers):
        return []
    return [int(f.split(".")[1]) for f in os.listdir(markers) if f.startswith("pid.")]


def chunks(seq, n):
    return [seq[i:i + n] for i in range(0, len(seq), n)]


def run(args):
    import torch
    device = sc.registry_device(torch.cuda.get_device_name(0))
    if device not in VARIANTS:
        sys.exit(f"no plans prepared for {device}")
    count = torch.cuda.device_count()
    short = VARIANTS[device]
    folder = os.path.join(sc.ROOT, "data", "benchmarks", device, "steps")
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    budgets = dict((int(k), float(v)) for k, v in (b.split(":") for b in args.budget.split(",")))
    print(f"device {device} x{count}; phases {args.gpus}; budgets {budgets}", flush=True)
    port = 29600
    for n in [int(g) for g in args.gpus.split(",")]:
        lanes_gpus = [list(range(i, i + n)) for i in range(0, count - n + 1, n)]
        cluster = os.path.join(folder, "clusters", f"{short}x{n}.yaml")
        items = []
        if args.loss and n == 2:
            items.append(loss_item(folder, short, 1, args))
        jobs = [j for j in training_jobs() if j[0] == n]
        jobs = jobs[args.skip:]
        if args.only:
            jobs = jobs[:args.only]
        pairs = []
        for _, width, layers, seq, gb, layout in jobs:
            name = task_name(width, layers, seq, gb)
            pairs.append((os.path.join(folder, "tasks", name + ".yaml"),
                          os.path.join(folder, "plans", f"{short}x{n}__{name}__{slug(layout)}.yaml")))
        if args.loss and n == 2:
            items.append(loss_item(folder, short, 2, args))
        if args.infer:
            for tp, width, layers in infer_jobs():
                if tp == n:
                    items.append({"kind": "infer", "name": f"infer_tp{tp}_{width}_L{layers}",
                                  "script": "run_infer.py",
                                  "argv": [cluster, os.path.join(folder, "tasks", f"l{width}-L{layers}-decode.yaml"),
                                           "--out", os.path.join(args.out, "infer_steps.csv"),
                                           "--batches", args.batches, "--contexts", args.contexts]})
        for k, group in enumerate(chunks(pairs, args.per_process)):
            items.append({"kind": "train", "name": f"train_x{n}_{k:02d}", "cluster": cluster,
                          "pairs": group})
        lanes = [[] for _ in lanes_gpus]
        # Lane loads by item count; the 1-GPU loss run and inference go first on their lanes.
        for i, item in enumerate(items):
            lanes[min(range(len(lanes)), key=lambda x: len(lanes[x]))].append(item)
        deadline = time.time() + budgets.get(n, 300)
        threads = []
        for g, its in zip(lanes_gpus, lanes):
            port += 1
            threads.append(Lane(g, its, port, deadline, args))
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(f"phase {n} GPUs: {time.time() - t0:.0f} s", flush=True)


def loss_item(folder, short, gpus, args):
    pairs = []
    for g, layout in LOSS_LAYOUTS:
        if g == gpus:
            pairs += [os.path.join(folder, "tasks", "loss-check.yaml"),
                      os.path.join(folder, "plans", f"{short}x{g}__loss-check__{slug(layout)}.yaml")]
    return {"kind": "loss", "name": f"loss_x{gpus}", "script": "run_plan.py", "nproc": gpus,
            "argv": [os.path.join(folder, "clusters", f"{short}x{gpus}.yaml")] + pairs +
                    ["--loss-curve", os.path.join(args.out, "loss_curves.csv"),
                     "--steps", str(args.loss_steps), "--lr", "1e-3",
                     "--out", os.path.join(args.out, "loss_runs.csv")]}


# ---------------------------------------------------------------------------------------
# check-loss

def check_loss(args):
    curves = {}
    with open(args.csv) as f:
        lines = [l for l in f if not l.startswith("#")]
    header = lines[0].strip().split(",")
    for l in lines[1:]:
        r = dict(zip(header, next(iter([_split_csv(l.strip())]))))
        curves.setdefault((r["gpus"], r["layout"]), []).append((int(r["step"]), float(r["loss"])))
    ref_key = [k for k in curves if k[0] == "1"][0]
    ref = [v for _, v in sorted(curves[ref_key])]
    ok = True
    print(f"reference {ref_key}: loss {ref[0]:.3f} -> {ref[-1]:.3f}")
    if not ref[-1] < ref[0] - 1.0:
        ok = False
        print("FAIL: the loss does not go down by 1 nat")
    for key, c in sorted(curves.items()):
        if key == ref_key:
            continue
        c = [v for _, v in sorted(c)]
        n = min(len(c), len(ref))
        diffs = [abs(a - b) / max(abs(b), 1e-9) for a, b in zip(c[:n], ref[:n])]
        mean_rel, max_rel = sum(diffs) / n, max(diffs)
        first = max(diffs[:20])
        good = first <= args.first_tol and mean_rel <= args.mean_tol and c[-1] < c[0] - 1.0
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {key}: loss {c[0]:.3f} -> {c[-1]:.3f}; relative "
              f"difference to the reference: first 20 steps max {first:.4f}, mean {mean_rel:.4f}, "
              f"max {max_rel:.4f}")
    return 0 if ok else 1


def _split_csv(line):
    out, cur, q = [], "", False
    for c in line:
        if c == '"':
            q = not q
        elif c == "," and not q:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("prepare")
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--gpus", default="1,2,4")
    r.add_argument("--budget", default="1:150,2:240,4:300")
    r.add_argument("--grace", type=float, default=45)
    r.add_argument("--job-timeout", type=float, default=150)
    r.add_argument("--per-process", type=int, default=10)
    r.add_argument("--steps", type=int, default=20)
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--skip", type=int, default=0, help="skip the first N training jobs of each phase")
    r.add_argument("--only", type=int, default=0, help="the first N training jobs of each phase")
    r.add_argument("--infer", action="store_true")
    r.add_argument("--batches", default="1,8,32,64")
    r.add_argument("--contexts", default="1024,4096,16384,32768")
    r.add_argument("--loss", action="store_true")
    r.add_argument("--loss-steps", type=int, default=300)
    c = sub.add_parser("check-loss")
    c.add_argument("csv")
    c.add_argument("--first-tol", type=float, default=0.01)
    c.add_argument("--mean-tol", type=float, default=0.03)
    a = p.parse_args(argv)
    if a.cmd == "prepare":
        return prepare(a)
    if a.cmd == "run":
        return run(a)
    return check_loss(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
