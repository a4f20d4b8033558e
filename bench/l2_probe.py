#!/usr/bin/env python3
"""Measures a GPU's L2 read bandwidth (for the devices' l2_bandwidth, which the fused-kernel
cost model uses for tiles that many blocks load) with bench/l2_probe.cu: buffers from 8 MiB
(well inside L2) to 256 MiB (HBM, for contrast), each read `reps` times in one launch; the
blocks' sums are checked against the buffer's before timing. Median of 21 launches after 3
warm-up launches, under CUDA events.

    python3 bench/l2_probe.py --out l2_probe.csv
"""
import argparse
import ctypes
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

MIB = 1 << 20
SIZES = [8, 12, 16, 20, 24, 32, 40, 256]  # MiB
RUNS = 21


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    lib = kernels.build_source(os.path.join(kernels.HERE, "l2_probe.cu"), "/tmp/yirage_l2_probe")
    launch = ctypes.CDLL(lib).l2_probe_launch
    launch.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_void_p,
                       ctypes.c_int, ctypes.c_void_p]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks = 2 * sms
    out = torch.zeros(blocks, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    rows = []
    for mib in SIZES:
        words = mib * MIB // 4
        buf = torch.randint(-2**31, 2**31 - 1, (words,), dtype=torch.int32, device="cuda")
        reps = max(1, (1 << 30) // (mib * MIB))  # about 1 GiB read a launch
        run = lambda: launch(buf.data_ptr(), mib * MIB, reps, out.data_ptr(), blocks, stream)
        assert run() == 0
        torch.cuda.synchronize()
        got = int(out.to(torch.int64).sum().item()) % 2**32
        want = int(buf.to(torch.int64).sum().item()) * reps % 2**32
        if got != want:
            sys.exit("l2_probe: %d MiB: the blocks' sum %d is not the buffer's %d" % (mib, got, want))
        for _ in range(3):
            run()
        times = []
        for _ in range(RUNS):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
        t = statistics.median(times)
        gbps = reps * mib * MIB / t / 1e9
        rows.append((mib, reps, t, gbps))
        print("%4d MiB x %4d reads  %9.3f ms  %7.0f GB/s" % (mib, reps, t * 1e3, gbps), flush=True)
    with open(args.out, "w") as f:
        f.write(kernels.provenance("L2 read bandwidth (bench/l2_probe.py, bench/l2_probe.cu).",
                                   "bench/l2_probe.py"))
        f.write("# method: random int32 buffer read reps times in one launch with ld.global.cg "
                "(16 bytes, L1 skipped), %d blocks of 256 threads, 8 loads in flight a thread; the "
                "blocks' sums checked first; median of %d launches after 3 warm-up launches (CUDA "
                "events); gbps = reps x bytes / time (1e9 bytes)\n" % (blocks, RUNS))
        f.write("buffer_mib,reps,time_s,gbps\n")
        for r in rows:
            f.write("%d,%d,%.4e,%.0f\n" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
