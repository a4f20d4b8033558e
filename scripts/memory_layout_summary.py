#!/usr/bin/env python3
"""Where the caching allocator's reserve lies, from bench/run_plan.py --memory-layout files
(data/benchmarks/H200x2/memory/*.jsonl.rankN): per job and rank, the allocated and reserved
peaks and, per CUDA stream, the bytes reserved and the largest segments (GB).

Usage: scripts/memory_layout_summary.py FILE.jsonl.rank0 [FILE.jsonl.rank1 ...]"""
import json
import sys

GB = 1e9


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    for path in paths:
        for line in open(path):
            j = json.loads(line)
            st = j["stats"]
            print(f"{path.split('/')[-1]:<26} {j['task']:<18} {j['layout']:<52} "
                  f"allocated {st['allocated_bytes.all.peak'] / GB:6.2f} "
                  f"reserved {st['reserved_bytes.all.peak'] / GB:6.2f}")
            for name, s in sorted(j["streams"].items(), key=lambda kv: -kv[1]["reserved"]):
                kind = "compute" if name == "0" else "side"
                largest = ", ".join(f"{seg[0] / GB:.2f}" for seg in s["large"][:6])
                print(f"    {kind:<7} stream: {s['reserved'] / GB:6.2f} reserved in "
                      f"{s['segments']:3d} segments (largest {largest})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
