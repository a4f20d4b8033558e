#!/usr/bin/env python3
"""Runs the generated CUDA kernel of every bundled program on one GPU, checked against the
program itself evaluated in float64 and timed against PyTorch running the same program.

Each DIR holds one kernel as scripts/generate_program_kernels.sh writes it: NAME.cu and
NAME.ugraph.json (its input shapes); the program's operations are read from
data/programs/NAME.yaml. Inputs are random fp16, each ~ N(0, 1) / sqrt(its last dim) so that
exponentials stay finite. PyTorch runs the program op by op in fp16 as written (matmul,
exp, sum, ...; no fusion), eager and captured in a CUDA graph. Timing as bench/kernels.py:
inputs rotated over sets larger than twice the L2, median of batches under CUDA events.

    scripts/generate_program_kernels.sh /tmp/progs
    python3 bench/check_programs.py /tmp/progs/* --out programs.csv

With --kernel-times FILE it also times each kernel of ours apart (torch.profiler's CUDA
activity, launched eagerly, inputs rotated as above): which of a program's launches costs
what, to check the cost model kernel by kernel.
"""
import argparse
import concurrent.futures
import hashlib
import json
import math
import os
import re
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

ROOT = os.path.dirname(kernels.HERE)


def load_program(name):
    """The program's inputs, ops and outputs from its YAML (PyYAML if present; the bundled
    files use one flow mapping a line, which the fallback reads)."""
    text = open(os.path.join(ROOT, "data", "programs", name + ".yaml")).read()
    try:
        import yaml
        return yaml.safe_load(text)
    except ImportError:
        pass
    prog = {"inputs": [], "ops": [], "outputs": []}
    section = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        head = re.match(r"^(\w+):\s*(.*)$", line)
        if head:
            section = head.group(1)
            if section == "outputs":
                prog["outputs"] = [s.strip() for s in head.group(2).strip("[]").split(",")]
            continue
        item = re.match(r"^\s*-\s*\{(.*)\}$", line)
        if item and section in ("inputs", "ops"):
            entry = {}
            for key, value in re.findall(r"(\w+):\s*(\[[^\]]*\]|[^,]+)", item.group(1)):
                value = value.strip()
                if value.startswith("["):
                    parts = [v.strip() for v in value.strip("[]").split(",")]
                    entry[key] = [int(v) if re.fullmatch(r"-?\d+", v) else v for v in parts]
                else:
                    entry[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
            prog[section].append(entry)
    return prog


def evaluate(prog, tensors):
    """Runs the program's ops on `tensors` (name -> tensor) in their dtype; returns outputs."""
    env = dict(tensors)
    for op in prog["ops"]:
        a = [env[n] for n in op["in"]]
        kind, dim = op["op"], op.get("dim", -1)
        if kind == "matmul":
            r = a[0] @ a[1]
        elif kind == "exp":
            r = torch.exp(a[0])
        elif kind == "square":
            r = a[0] * a[0]
        elif kind == "sqrt":
            r = torch.sqrt(a[0])
        elif kind == "silu":
            r = F.silu(a[0])
        elif kind in ("add", "sub", "mul", "div"):
            r = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[kind](*a)
        elif kind == "sum":
            r = a[0].sum(dim, keepdim=True)
        elif kind == "mean":
            r = a[0].mean(dim, keepdim=True)
        elif kind == "rms":
            r = torch.sqrt((a[0] * a[0]).mean(dim, keepdim=True))
        elif kind == "max":
            r = a[0].amax(dim, keepdim=True)
        else:
            raise ValueError("unknown op " + kind)
        env[op["name"]] = r
    return [env[n] for n in prog["outputs"]]


def make_sets(shapes, limit=64):
    """Input sets (lists of fp16 tensors) whose bytes together exceed twice the L2."""
    per_set = sum(math.prod(s) * 2 for s in shapes)
    count = min(limit, max(2, -(-2 * kernels.L2_BYTES // per_set) + 1))
    g = torch.Generator(device="cuda").manual_seed(1234)
    return [[(torch.randn(*s, device="cuda", generator=g) / math.sqrt(s[-1])).half()
             for s in shapes] for _ in range(count)]


def build(kdir):
    """The directory's kernel built as a shared library (nvcc, sm_90a, cuBLAS linked), in a
    build directory of its own: two directories may hold the same program at other shapes,
    and a library loaded from a path already loaded would be the first one again."""
    name = os.path.basename(source_of(kdir))[:-3]
    key = hashlib.sha1(os.path.abspath(kdir).encode()).hexdigest()[:12]
    return kernels.build_source(os.path.join(kdir, name + ".cu"),
                                os.path.join("/tmp/yirage_programs", key))


def source_of(kdir):
    return next(os.path.join(kdir, f) for f in sorted(os.listdir(kdir)) if f.endswith(".cu"))


def kernel_times(launch, count, calls=400):
    """Mean device time of each kernel that `launch` runs, by kernel name, over `calls` calls
    rotating over `count` input sets (torch.profiler, CUDA activity)."""
    from torch.profiler import ProfilerActivity, profile
    for i in range(count):
        launch(i)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for c in range(calls):
            launch(c % count)
        torch.cuda.synchronize()
    times = {}
    for e in prof.key_averages():
        total = getattr(e, "device_time_total", None)
        if total is None:
            total = e.cuda_time_total
        if total > 0 and e.count > 0:
            times[e.key] = (e.count // calls, total / e.count * 1e-6)
    return times


def check(kdir, lib, per_kernel):
    files = os.listdir(kdir)
    graph = json.load(open(os.path.join(kdir, next(f for f in files if f.endswith(".ugraph.json")))))
    name = graph["name"]
    prog = load_program(name)
    names = [i["name"] for i in graph["inputs"]]
    shapes = [i["shape"] for i in graph["inputs"]]
    sets = make_sets(shapes)
    refs = [evaluate(prog, {n: t.double() for n, t in zip(names, s)}) for s in sets[:2]]
    outs = [[torch.full(r.shape, float("nan"), device="cuda", dtype=torch.half) for r in refs[0]]
            for _ in sets]
    gen = kernels.Generated(lib, name)
    ours = lambda i: gen.launch(sets[i], outs[i])
    ours(0)
    ours(1)
    torch.cuda.synchronize()
    err = max(kernels.rel_err(o, r) for i in range(2) for o, r in zip(outs[i], refs[i]))
    theirs = lambda i: evaluate(prog, dict(zip(names, sets[i])))
    torch_err = max(kernels.rel_err(o, r) for o, r in zip(theirs(0), refs[0]))
    row = dict(program=name, shapes=" ".join("x".join(map(str, s)) for s in shapes),
               path=open(os.path.join(kdir, name + ".cu")).read().count("__global__"),
               err=err, torch_err=torch_err, sets=len(sets),
               dir=os.path.basename(os.path.normpath(kdir)))
    row["kernel"] = kernels.time_graph(ours, sets)
    row["eager"] = kernels.time_batches(theirs, sets)
    row["graph"] = kernels.time_graph(theirs, sets)
    if per_kernel:
        row["kernel_times"] = kernel_times(ours, len(sets))
    return row


def write_kernel_times(path, rows):
    with open(path, "w") as f:
        f.write(kernels.provenance("The kernels of each generated program timed apart "
                                   "(bench/check_programs.py --kernel-times).",
                                   "bench/check_programs.py"))
        f.write("# method: torch.profiler CUDA activity over 400 eager calls after one warm-up "
                "call a set, inputs rotated over the sets of programs.csv; time_s: mean device "
                "time of one launch of the kernel; per_call: its launches per call of the "
                "program\n")
        f.write("dir,program,kernel,per_call,time_s\n")
        for r in rows:
            for name, (per_call, t) in sorted(r["kernel_times"].items(), key=lambda kv: -kv[1][1]):
                f.write("%s,%s,\"%s\",%d,%.4e\n" % (r["dir"], r["program"], name.replace('"', "'"),
                                                  per_call, t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="kernel directories (NAME.cu, NAME.ugraph.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernel-times", help="also write each kernel's own time to this CSV")
    args = ap.parse_args()
    rows, failed = [], []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        builds = [pool.submit(build, d) for d in args.dirs]
    for d, built in zip(args.dirs, builds):
        try:
            r = check(d, built.result(), args.kernel_times is not None)
        except (RuntimeError, subprocess.CalledProcessError) as e:  # a build or launch error
            print("%-18s FAILED: %s" % (os.path.basename(os.path.normpath(d)), e), flush=True)
            failed.append(os.path.basename(os.path.normpath(d)))
            continue
        rows.append(r)
        print("%-18s %-34s kernels %d  %8.2f us  eager %8.2f us  graph %8.2f us  x%.2f eager  "
              "x%.2f graph  err %.1e (torch %.1e)%s" % (
                  r["program"], r["shapes"], r["path"], r["kernel"] * 1e6, r["eager"] * 1e6,
                  r["graph"] * 1e6, r["eager"] / r["kernel"], r["graph"] / r["kernel"], r["err"],
                  r["torch_err"], "" if r["err"] < kernels.TOLERANCE else "  WRONG"), flush=True)
    with open(args.out, "w") as f:
        f.write(kernels.provenance("Every bundled program's generated CUDA kernel against PyTorch "
                                   "(bench/check_programs.py).", "bench/check_programs.py"))
        f.write("# method: fp16 inputs ~ N(0, 1) / sqrt(last dim); err: max |y - ref| / max |ref| "
                "against the program in float64 (pass below %g); inputs rotated over sets > 2x "
                "L2 (at most 64); median of %d batches of %d calls; kernel_s: ours replayed in a "
                "CUDA graph; eager_s / graph_s: PyTorch op by op in fp16; kernels: the __global__ "
                "functions of the generated file; dir: the kernel directory\n" % (kernels.TOLERANCE, kernels.REPEATS,
                                                       kernels.CALLS))
        f.write("program,inputs,kernels,kernel_s,eager_s,graph_s,speedup_eager,speedup_graph,err,"
                "torch_err,correct,dir\n")
        for r in rows:
            f.write("%s,%s,%d,%.4e,%.4e,%.4e,%.3f,%.3f,%.2e,%.2e,%s,%s\n" % (
                r["program"], r["shapes"], r["path"], r["kernel"], r["eager"], r["graph"],
                r["eager"] / r["kernel"], r["graph"] / r["kernel"], r["err"], r["torch_err"],
                "yes" if r["err"] < kernels.TOLERANCE else "no", r["dir"]))
        for name in failed:
            f.write("%s,,,,,,,,,,failed to build or launch,%s\n" % (name, name))
    if args.kernel_times:
        write_kernel_times(args.kernel_times, rows)
    bad = failed + [r["program"] for r in rows if r["err"] >= kernels.TOLERANCE]
    if bad:
        print("INCORRECT: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
