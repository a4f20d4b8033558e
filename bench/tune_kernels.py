#!/usr/bin/env python3
"""Tuning sweep for the generated GEMV kernels (bench/kernels.py's cases) on one GPU: each
case's kernel is built with every combination of its tuning macros (YR_KSPLIT, YR_UNROLL for
the CUDA-core path, YR_STAGES for the tensor-core path), checked against float64, and timed
as bench/kernels.py times it (CUDA-graph replay over weights rotated past the L2; median of
batches). Also measures the device's read-bandwidth ceiling with bench/stream_probe.cu on the
same rotation, so that each kernel's bandwidth can be read against what the memory gives.

Several kernel directories (--kernels A B) compare code paths; with --rounds R every variant
of a case is timed once a round, in turn, and the median over the rounds is kept, so that a
drift of the device's clocks between variants (0.6 us from one run to the next on H100)
does not pass for a difference between them.

    python3 bench/tune_kernels.py --out /tmp/tune.csv
    python3 bench/tune_kernels.py --kernels old new --rounds 9 --cases rmsnorm_linear_m16 \
        --sweep rmsnorm_linear_m16=YR_DEPTH:1 --out /tmp/ab.csv
"""
import argparse
import concurrent.futures
import ctypes
import itertools
import os
import statistics
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

SWEEP = {
    "rmsnorm_linear_m1": {"YR_KSPLIT": [4, 8, 16, 32], "YR_UNROLL": [2, 4, 8]},
    "rmsnorm_linear_m8": {"YR_KSPLIT": [2, 4, 8, 16], "YR_STAGES": [3, 4, 6, 8]},
    "rmsnorm_linear_m16": {"YR_KSPLIT": [2, 4, 8, 16], "YR_STAGES": [3, 4, 6, 8]},
    "gated_mlp_m8": {"YR_KSPLIT": [1, 2, 4, 8], "YR_STAGES": [3, 4, 6]},
}


def variants(case):
    keys = sorted(SWEEP[case])
    for values in itertools.product(*(SWEEP[case][k] for k in keys)):
        yield ["%s=%d" % kv for kv in zip(keys, values)]


def try_build(case, src, build, defines):
    try:
        return kernels.build(case, src, build, defines)
    except subprocess.CalledProcessError:
        return None  # a tiling the kernel's static_asserts refuse


def probe(build, sizes):
    lib = os.path.join(build, "stream_probe.so")
    src = os.path.join(kernels.HERE, "stream_probe.cu")
    subprocess.run([kernels.NVCC, "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "-shared",
                    "-Xcompiler", "-fPIC", "-o", lib, src], check=True)
    fn = ctypes.CDLL(lib).stream_probe_launch
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.zeros(sms * 4, dtype=torch.int32, device="cuda")
    rows = []
    for size in sizes:
        count = max(2, -(-2 * kernels.L2_BYTES // size) + 1)
        bufs = [torch.randint(0, 1 << 30, (size // 4,), dtype=torch.int32, device="cuda")
                for _ in range(count)]
        step = lambda i: fn(bufs[i].data_ptr(), size, out.data_ptr(), sms,
                            torch.cuda.current_stream().cuda_stream)
        t = kernels.time_graph(step, bufs)
        rows.append((size, t, size / t / 1e9))
        print("probe %6.1f MB: %7.2f us  %5.0f GB/s" % (size / 1e6, t * 1e6, size / t / 1e9),
              flush=True)
    return rows


def timed_case(case, variants_of_case, rounds, lines):
    """Times every (label, lib) variant of a case, interleaved over the rounds."""
    name, program, m, k, n, nw = kernels.CASES_BY_NAME[case]
    sets = kernels.make_sets(m, k, n, nw)
    outs = [torch.empty(m, n, device="cuda", dtype=torch.half) for _ in sets]
    live = []
    for label, lib in variants_of_case:
        if lib is None:
            print("%-20s %-40s refused by the kernel's tiling" % (case, label))
            continue
        kern = kernels.Generated(lib, program)
        step = lambda i, kern=kern: kern.launch([sets[i][0]] + sets[i][1], [outs[i]])
        for out in outs:  # NaN, so that a variant that writes nothing cannot pass
            out.fill_(float("nan"))
        try:
            for i in range(len(sets)):
                step(i)
            torch.cuda.synchronize()
        except RuntimeError as e:  # a tiling the device cannot launch (shared memory)
            print("%-20s %-40s %s" % (case, label, e))
            continue
        err = max(kernels.rel_err(outs[i], kernels.reference(program, x, ws))
                  for i, (x, ws) in enumerate(sets))
        live.append((label, step, [], err))
    for _ in range(rounds):
        for _, step, times, _ in live:
            times.append(kernels.time_graph(step, sets))
    for label, step, times, err in live:
        t = statistics.median(times)
        gbps = nw * k * n * 2 / t / 1e9
        ok = err < kernels.TOLERANCE
        spread = (max(times) - min(times)) * 1e6
        print("%-20s %-40s %7.2f us (spread %.2f) %5.0f GB/s err %.1e%s" % (
            case, label, t * 1e6, spread, gbps, err, "" if ok else " WRONG"), flush=True)
        lines.append("kernel,%s,%s,%.4e,%.0f,%.2e,%s" % (case, label, t, gbps, err,
                                                       "yes" if ok else "no"))
    del sets, outs, live
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", nargs="+", default=[os.path.join(kernels.HERE, "generated")])
    ap.add_argument("--build", default="/tmp/yirage_tune")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", nargs="*", default=list(SWEEP))
    ap.add_argument("--rounds", type=int, default=1,
                    help="times each variant is timed, interleaved with the others")
    ap.add_argument("--sweep", action="append", default=[],
                    help="CASE=KEY:V,V/KEY:V,V replaces a case's sweep (another code path)")
    args = ap.parse_args()
    for spec in args.sweep:
        case, rest = spec.split("=", 1)
        SWEEP[case] = {kv.split(":")[0]: [int(v) for v in kv.split(":")[1].split(",")]
                       for kv in rest.split("/")}
    jobs = []
    for d, kdir in enumerate(args.kernels):
        build = os.path.join(args.build, str(d))
        os.makedirs(build, exist_ok=True)
        tag = os.path.basename(os.path.normpath(kdir)) + ": " if len(args.kernels) > 1 else ""
        jobs += [(c, kdir, build, tag, v) for c in args.cases for v in variants(c)]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        libs = list(pool.map(lambda j: try_build(j[0], j[1], j[2], j[4]), jobs))
    lines = ["kind,case,defines,kernel_s,weight_gbps,err,correct"]
    for size, t, gbps in probe(os.path.join(args.build, "0"),
                               [4096 * 6144 * 2, 2 * 4096 * 14336 * 2]):
        lines.append("probe,read_%d_bytes,,%.4e,%.0f,," % (size, t, gbps))
    for case in args.cases:
        timed_case(case, [(j[3] + " ".join(j[4]), lib) for j, lib in zip(jobs, libs)
                          if j[0] == case], args.rounds, lines)
    with open(args.out, "w") as f:
        f.write(kernels.provenance(
            "Tuning sweep of yirage's generated GEMV kernels and the read-bandwidth ceiling "
            "(bench/tune_kernels.py, bench/stream_probe.cu).", "bench/tune_kernels.py"))
        f.write("# method: as bench/kernels.py (CUDA-graph replay, weights or probe buffers "
                "rotated over sets > 2x L2, median of %d batches of %d calls); %d round(s), "
                "variants interleaved, median over the rounds; probe rows: one 16-byte "
                "non-allocating read of every byte\n" % (kernels.REPEATS, kernels.CALLS,
                                                           args.rounds))
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
