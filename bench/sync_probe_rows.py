#!/usr/bin/env python3
"""bench/collective_sync_probe.py's rows in the measured format of data/benchmarks/README.md,
so that `yirage-plan validate` prices them: per (collective, size), the eager rows' time per
call and the synced rows' host wall time, each the slowest rank's median, as
bench/collectives.py records them. Torch-free.

    bench/sync_probe_rows.py --device H200 collective_sync.csv > collective_sync_rows.csv
"""
import argparse
import collections
import csv


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("probe", help="the CSV bench/collective_sync_probe.py wrote")
    p.add_argument("--device", required=True, help="yirage registry name of the GPU")
    p.add_argument("--fabric", default="nvswitch")
    a = p.parse_args()
    with open(a.probe) as f:
        lines = f.read().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    slowest = collections.defaultdict(float)
    ranks = collections.defaultdict(set)
    for r in rows:
        if r["variant"] not in ("eager", "synced"):
            continue
        key = (r["op"], int(r["size_bytes"]), r["variant"])
        column = "event_s" if r["variant"] == "eager" else "host_wall_s"
        slowest[key] = max(slowest[key], float(r[column]))
        ranks[key].add(r["rank"])
    for c in comments:
        print(c)
    print("# rows: bench/sync_probe_rows.py --device %s (eager: time per call between CUDA "
          "events; synced: host wall time; the slowest rank's median)" % a.device)
    print("kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,launch,in_place,time_s,stat")
    for (op, size, variant), t in sorted(slowest.items()):
        n = len(ranks[(op, size, variant)])
        print("collective,%s,%s,%s,%d,%d,%d,bf16,%s,0,%.6g,median"
              % (op, a.device, a.fabric, n, n, size, variant, t))


if __name__ == "__main__":
    main()
