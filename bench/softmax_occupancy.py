#!/usr/bin/env python3
"""How many blocks of each of PyTorch's softmax forward kernels one SM holds, by row length:
the registers a thread of each instantiation takes decide it (PyTorch dispatches rows of
2,049 to 9,216 elements to cunn_SoftMaxForwardReg<n>, n = ceil(length / 1,024), one template
instantiation per n).

    ncu --metrics launch__registers_per_thread,launch__block_size,launch__grid_size,\\
launch__occupancy_limit_registers,launch__occupancy_limit_warps,\\
sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes.sum \\
        -k 'regex:[Ss]oft[Mm]ax' --csv python3 bench/softmax_occupancy.py --run > ncu.csv
    python3 bench/softmax_occupancy.py --convert ncu.csv --device H200 \\
        --software "$(python3 bench/softmax_occupancy.py --versions)" --out softmax_occupancy.csv

--run times one softmax over 65,536 rows at each length n x 1,024 and n x 1,024 - 64 for
n = 1 to 9 and at 12,288 to 32,768, in bf16 then fp32 (random data); --convert turns ncu's CSV into one row per
launch, in that order. Times under ncu run at its locked clocks: they compare lengths with
each other, not with do_bench's rows.
"""
import argparse
import csv
import datetime
import re
import sys

ROWS = 65536
# Lengths past the register kernel's: the shared-memory kernel's, then the plain one's.
LONGER = [12288, 16384, 24576, 32768]


def shapes():
    out = []
    for dtype in ["bf16", "fp32"]:
        for n in range(1, 10):
            for cols in sorted({n * 1024, n * 1024 - 64}):
                out.append((cols, dtype))
        out += [(cols, dtype) for cols in LONGER]
    return out


def run():
    import torch
    types = {"bf16": torch.bfloat16, "fp32": torch.float32}
    for cols, dtype in shapes():
        x = torch.randn(ROWS, cols, device="cuda", dtype=types[dtype])
        y = torch.softmax(x, -1)
        ref = torch.softmax(x.double(), -1)
        assert torch.allclose(y.double(), ref, atol=1e-2 if dtype == "bf16" else 1e-6)
        torch.cuda.synchronize()
        del x, y, ref


def versions():
    import subprocess
    import torch
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()[0]
    ncu = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip()
    driver = smi.split(",")[-1].strip()
    ncu_version = ncu.splitlines()[-1].replace("Version ", "")
    return (f"driver {driver}; torch {torch.__version__}, CUDA {torch.version.cuda}; "
            f"Nsight Compute {ncu_version}")


def kernel_name(signature):
    """'cunn_SoftMaxForwardReg<3>' from ncu's demangled signature (the last template argument
    is the register kernel's count of elements a thread holds), 'softmax_warp_forward'."""
    m = re.search(r"::(\w+)<(.*)>\(", signature)
    if not m:
        return signature.split("(")[0]
    if m.group(1) == "cunn_SoftMaxForwardReg":
        return f"{m.group(1)}<{m.group(2).split(',')[-1].strip()}>"
    return m.group(1)


def convert(path, device, software, out):
    lines = [line for line in open(path) if not line.startswith("==")]
    rows = list(csv.DictReader(lines))
    launches = {}
    for r in rows:
        launch = launches.setdefault(r["ID"], {"kernel": r["Kernel Name"]})
        launch[r["Metric Name"]] = r["Metric Value"].replace(",", "")
    # The float64 reference each shape is checked against launches a softmax too.
    kernels = [k for k in launches.values()
               if "softmax" in k["kernel"].lower() and "double, double, double" not in k["kernel"]]
    if len(kernels) != len(shapes()):
        sys.exit(f"{path}: {len(kernels)} softmax launches, expected {len(shapes())}")
    with open(out, "w") as f:
        f.write("# PyTorch's softmax forward kernels: registers a thread, blocks an SM holds, "
                "achieved occupancy, by row length\n")
        f.write(f"# device: {device}\n# software: {software}\n")
        f.write(f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
        f.write("# script: bench/softmax_occupancy.py (its docstring: ncu over --run, then "
                "--convert)\n")
        f.write("# method: one launch each under Nsight Compute (its locked clocks); rows of "
                f"{ROWS}; checked against float64 first\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["shape", "dtype", "kernel", "registers_per_thread", "block_size",
                    "blocks_per_sm_by_registers", "blocks_per_sm_by_warps",
                    "achieved_occupancy_pct", "ncu_time_s", "dram_bytes"])
        for (cols, dtype), k in zip(shapes(), kernels):
            name = kernel_name(k["kernel"])
            w.writerow([f"{ROWS}x{cols}", dtype, name, k["launch__registers_per_thread"],
                        k["launch__block_size"], k["launch__occupancy_limit_registers"],
                        k["launch__occupancy_limit_warps"],
                        k["sm__warps_active.avg.pct_of_peak_sustained_active"],
                        float(k["gpu__time_duration.sum"]) * 1e-9, k["dram__bytes.sum"]])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", action="store_true")
    p.add_argument("--versions", action="store_true")
    p.add_argument("--convert")
    p.add_argument("--device", default="")
    p.add_argument("--software", default="")
    p.add_argument("--out", default="softmax_occupancy.csv")
    args = p.parse_args(argv)
    if args.run:
        run()
    elif args.versions:
        print(versions())
    elif args.convert:
        convert(args.convert, args.device, args.software, args.out)
    else:
        p.error("one of --run, --versions, --convert")


if __name__ == "__main__":
    main(sys.argv[1:])
