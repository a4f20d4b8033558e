#!/usr/bin/env python3
"""Measures yirage's generated CUDA kernels (codegen/backend) on one GPU against PyTorch and
writes a CSV with provenance lines (the style of data/benchmarks/README.md; kind `kernel`).

Cases (the bundled programs at full size, fp16 tensors as the programs declare):
  rmsnorm_linear  Y = (X / rms(X)) W,   X[M, 4096], W[4096, 6144], M = 1, 8, 16
  gated_mlp       Y = silu(X W1) * (X W3), X[8, 4096], W1, W3 [4096, 14336]
Each case's kernel is generated beforehand from the superoptimizer's µGraph:
  yirage-plan superoptimize data/programs/rmsnorm_linear.yaml --device H100-SXM \
      --shape X=16x4096 --out DIR
  yirage-plan codegen DIR/rmsnorm_linear.ugraph.json --backend cuda --out bench/generated/rmsnorm_linear_m16
(bench/generated/ holds the files measured here; scripts/generate_bench_kernels.sh remakes them.)

Method (the device tool's METHOD.md): every kernel is built with nvcc for sm_90a, run on
random data (X ~ N(0, 1), W ~ N(0, 1/K), fp16) and checked against the same program in
float64 (error: the largest absolute difference over the largest |reference|), next to
PyTorch's own error. PyTorch runs the program as written: F.rms_norm (eps 0: the program has
none) then X @ W; silu(X @ W1) * (X @ W3). Timing: weights rotate across sets totalling more
than twice the 50 MB L2, so every call streams its weights from HBM; each measurement is a
batch of 20 calls under CUDA events after 30 warm-up calls, repeated 50 times, and the median
per-call time is kept. "eager" launches PyTorch's ops from Python; "graph" replays the same
20 calls captured in a CUDA graph; the generated kernel is timed both ways too (graph:
kernel time without launch overhead; direct: a ctypes launch per call).

    python3 bench/kernels.py --out data/benchmarks/H100-SXM/kernels.csv
"""
import argparse
import ctypes
import datetime
import os
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
L2_BYTES = 50 << 20
CALLS, REPEATS, WARMUP = 20, 50, 30
TOLERANCE = 5e-3

CASES = [
    # name, program, M, K, N, weights
    ("rmsnorm_linear_m1", "rmsnorm_linear", 1, 4096, 6144, 1),
    ("rmsnorm_linear_m8", "rmsnorm_linear", 8, 4096, 6144, 1),
    ("rmsnorm_linear_m16", "rmsnorm_linear", 16, 4096, 6144, 1),
    ("gated_mlp_m8", "gated_mlp", 8, 4096, 14336, 2),
]


def driver_version():
    out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return out.splitlines()[0] if out else "unknown"


def build(case, src_dir, build_dir, defines):
    src = os.path.join(src_dir, case, CASES_BY_NAME[case][1] + ".cu")
    lib = os.path.join(build_dir, case + "".join("_" + d for d in defines) + ".so")
    cmd = [NVCC, "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-shared",
           "-Xcompiler", "-fPIC", "-o", lib, src] + ["-D" + d for d in defines]
    subprocess.run(cmd, check=True)
    return lib


CASES_BY_NAME = {c[0]: c for c in CASES}


def build_source(src, build_dir):
    """A generated .cu file built for sm_90a as a shared library in build_dir."""
    lib = os.path.join(build_dir, os.path.basename(src) + ".so")
    os.makedirs(build_dir, exist_ok=True)
    subprocess.run([NVCC, "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a",
                    "-shared", "-Xcompiler", "-fPIC", "-o", lib, src, "-lcublas"], check=True)
    return lib


def provenance(title, script):
    """The header lines of a measured CSV: what, device, software, date, command."""
    props = torch.cuda.get_device_properties(0)
    nvcc = subprocess.run([NVCC, "--version"], capture_output=True, text=True)
    return "".join([
        "# %s\n" % title,
        "# device: %s, %d SMs; driver %s\n" % (props.name, props.multi_processor_count,
                                               driver_version()),
        "# software: torch %s, CUDA %s, nvcc %s\n" % (
            torch.__version__, torch.version.cuda, nvcc.stdout.strip().splitlines()[-1]),
        "# date: %s\n" % datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "# script: python3 %s %s\n" % (script, " ".join(sys.argv[1:]))])


class Generated:
    """A generated kernel loaded with ctypes: launch(inputs, outputs) on the current stream."""

    def __init__(self, lib_path, entry):
        self.lib = ctypes.CDLL(lib_path)
        self.fn = getattr(self.lib, entry + "_launch")
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        ws = getattr(self.lib, entry + "_workspace_bytes")
        ws.restype = ctypes.c_long
        self.workspace = torch.zeros(max(ws(), 16), dtype=torch.uint8, device="cuda")
        self.args = {}

    def launch(self, inputs, outputs):
        key = tuple(t.data_ptr() for t in inputs + outputs)
        if key not in self.args:
            ins = (ctypes.c_void_p * len(inputs))(*[t.data_ptr() for t in inputs])
            outs = (ctypes.c_void_p * len(outputs))(*[t.data_ptr() for t in outputs])
            self.args[key] = (ins, outs)
        ins, outs = self.args[key]
        rc = self.fn(ins, outs, ctypes.c_void_p(self.workspace.data_ptr()),
                     ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc != 0:
            raise RuntimeError("launch failed: CUDA error %d" % rc)


def make_sets(m, k, n, nw):
    """Input sets whose weights together exceed twice the L2."""
    per_set = nw * k * n * 2
    count = max(2, -(-2 * L2_BYTES // per_set) + 1)
    g = torch.Generator(device="cuda").manual_seed(1234)
    sets = []
    for _ in range(count):
        x = torch.randn(m, k, device="cuda", generator=g).half()
        ws = [(torch.randn(k, n, device="cuda", generator=g) / k ** 0.5).half() for _ in range(nw)]
        sets.append((x, ws))
    return sets


def torch_program(program, x, ws):
    if program == "rmsnorm_linear":
        return F.rms_norm(x, (x.shape[-1],), eps=0.0) @ ws[0]
    return F.silu(x @ ws[0]) * (x @ ws[1])


def reference(program, x, ws):
    xd = x.double()
    if program == "rmsnorm_linear":
        return (xd / xd.pow(2).mean(-1, keepdim=True).sqrt()) @ ws[0].double()
    g = xd @ ws[0].double()
    return g / (1 + torch.exp(-g)) * (xd @ ws[1].double())


def rel_err(y, ref):
    return ((y.double() - ref).abs().max() / ref.abs().max()).item()


def time_batches(step, sets):
    """Median per-call time (s) of batches of CALLS calls rotating over the sets."""
    for i in range(WARMUP):
        step(i % len(sets))
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for i in range(CALLS):
            step(i % len(sets))
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3 / CALLS)
    return statistics.median(times)


def time_graph(step, sets):
    """The same batch captured in a CUDA graph; median per-call time of its replays."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            step(i % len(sets))
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(CALLS):
            step(i % len(sets))
    return time_batches(lambda i: graph.replay(), [None]) / CALLS * 1.0


def measure(case, lib_path):
    name, program, m, k, n, nw = case
    sets = make_sets(m, k, n, nw)
    outs = [torch.empty(m, n, device="cuda", dtype=torch.half) for _ in sets]
    kernel = Generated(lib_path, program)
    x0, w0 = sets[0]
    kernel.launch([x0] + w0, [outs[0]])
    torch.cuda.synchronize()
    ref = reference(program, x0, w0)
    err = rel_err(outs[0], ref)
    torch_err = rel_err(torch_program(program, x0, w0), ref)
    ours = lambda i: kernel.launch([sets[i][0]] + sets[i][1], [outs[i]])
    theirs = lambda i: torch_program(program, sets[i][0], sets[i][1])
    row = dict(case=name, program=program, m=m, k=k, n=n, err=err, torch_err=torch_err,
               sets=len(sets), set_bytes=nw * k * n * 2)
    row["kernel_direct"] = time_batches(ours, sets)
    row["kernel"] = time_graph(ours, sets)
    row["eager"] = time_batches(theirs, sets)
    row["graph"] = time_graph(theirs, sets)
    # The output of the timed runs is checked again (the last batch wrote every set's output).
    for i, (x, ws) in enumerate(sets):
        row["err"] = max(row["err"], rel_err(outs[i], reference(program, x, ws)))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=os.path.join(HERE, "generated"))
    ap.add_argument("--build", default="/tmp/yirage_kernels")
    ap.add_argument("--out", required=True)
    ap.add_argument("--define", action="append", default=[],
                    help="extra -D for nvcc, e.g. YR_KSPLIT=8 (tuning runs; not for the CSV)")
    args = ap.parse_args()
    os.makedirs(args.build, exist_ok=True)
    rows = []
    for case in CASES:
        lib = build(case[0], args.kernels, args.build, args.define)
        r = measure(case, lib)
        r["gbps"] = r["set_bytes"] / r["kernel"] / 1e9
        rows.append(r)
        print("%-20s kernel %7.2f us (direct %7.2f)  eager %7.2f us  graph %7.2f us  "
              "x%.2f eager  x%.2f graph  %5.0f GB/s  err %.2e (torch %.2e)" % (
                  r["case"], r["kernel"] * 1e6, r["kernel_direct"] * 1e6, r["eager"] * 1e6,
                  r["graph"] * 1e6, r["eager"] / r["kernel"], r["graph"] / r["kernel"],
                  r["gbps"], r["err"], r["torch_err"]), flush=True)
    props = torch.cuda.get_device_properties(0)
    with open(args.out, "w") as f:
        f.write(provenance("yirage's generated CUDA kernels against PyTorch on one GPU "
                           "(bench/kernels.py).", "bench/kernels.py"))
        f.write("# method: fp16; checked against float64 (err: max |y - ref| / max |ref|, pass "
                "below %g); weights rotated over sets > 2x L2; median of %d batches of %d calls "
                "after %d warm-up calls; kernel_s = generated kernel replayed in a CUDA graph, "
                "kernel_direct_s = launched from Python; eager_s / graph_s = PyTorch\n"
                % (TOLERANCE, REPEATS, CALLS, WARMUP))
        f.write("kind,op,device,shape,dtype,kernel_s,kernel_direct_s,eager_s,graph_s,"
                "speedup_eager,speedup_graph,weight_gbps,err,torch_err,correct,stat\n")
        for r in rows:
            # Dims joined by 'x', so that the field holds no comma.
            shape = "X[%dx%d]xW[%dx%d]%s" % (r["m"], r["k"], r["k"], r["n"],
                                             "x2" if r["program"] == "gated_mlp" else "")
            f.write("kernel,%s,%s,%s,fp16,%.4e,%.4e,%.4e,%.4e,%.3f,%.3f,%.0f,%.2e,%.2e,%s,median\n" % (
                r["program"], props.name.replace(",", " "), shape, r["kernel"],
                r["kernel_direct"], r["eager"], r["graph"], r["eager"] / r["kernel"],
                r["graph"] / r["kernel"], r["gbps"], r["err"], r["torch_err"],
                "yes" if r["err"] < TOLERANCE else "no"))
    bad = [r["case"] for r in rows if r["err"] >= TOLERANCE]
    if bad:
        print("INCORRECT: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
