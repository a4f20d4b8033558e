#!/usr/bin/env python3
"""How far two sets of nccl-tests outputs agree: for each file name present in both
folders, the mean |B/A - 1| of the out-of-place time over sizes of 1 MiB and more, and over
the sizes below (bench/nccl_tests.sh writes such folders).

    python3 scripts/compare_nccl_tests.py data/benchmarks/H200x4/nccl_tests data/benchmarks/H200x4/nccl_tests_rerun
"""
import os
import sys

MIB = 1 << 20


def times(path):
    """{size: out-of-place time in us} of one nccl-tests output."""
    out = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if line.startswith("#") or len(t) < 13 or not t[0].isdigit() or int(t[0]) == 0:
                continue
            out[int(t[0])] = float(t[5])
    return out


def mean(v):
    return 100 * sum(v) / len(v) if v else float("nan")


def main(a_dir, b_dir):
    print("%-28s %10s %10s" % ("file", ">= 1 MiB", "< 1 MiB"))
    for name in sorted(os.listdir(a_dir)):
        b_path = os.path.join(b_dir, name)
        if not name.endswith(".txt") or not os.path.exists(b_path):
            continue
        a, b = times(os.path.join(a_dir, name)), times(b_path)
        both = [s for s in a if s in b]
        big = [abs(b[s] / a[s] - 1) for s in both if s >= MIB]
        small = [abs(b[s] / a[s] - 1) for s in both if s < MIB]
        print("%-28s %9.1f%% %9.1f%%" % (name, mean(big), mean(small)))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
