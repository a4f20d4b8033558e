#!/usr/bin/env python3
"""The per-rank peaks of bench/memory_probe.py's runs as one table, and the measured rows of
the same layouts beside them.

    scripts/memory_probe_table.py DIR [--compare 'data/benchmarks/H200/train_steps*.csv']

DIR holds what bench/memory_probe_campaign.sh left: history_*.jsonl.gz (run_plan.py
--memory-history: the allocated peak of each rank), rows_*.csv (run_plan.py's rows: both
peaks) and call_*.log (the console: '== PLAN rank R of W' then 'peak X GiB', the reserved
peak, to 0.1 GiB). Writes DIR/rank_peaks.csv: per (cluster, task, layout, rank) the allocated
and reserved peaks the probe measured (empty where that run did not record it)."""

import argparse
import csv
import glob
import gzip
import json
import os
import re
import sys

GIB = 2**30


def plan_key(base):
    """(cluster, task) from a plan file's base name CLUSTER__TASK__LAYOUT."""
    cluster, task = base.split("__")[:2]
    return cluster, task


def read_logs(d, peaks):
    for path in sorted(glob.glob(os.path.join(d, "call_*.log"))):
        current = None
        for line in open(path):
            m = re.match(r"== (\S+) rank (\d+) of (\d+)", line)
            if m:
                cluster, task = plan_key(m.group(1))
                current = [cluster, task, None, int(m.group(2)), int(m.group(3))]
                continue
            m = re.match(r"== job \d+: (\S+) (\S+)", line)
            if m and current:
                current[2] = m.group(2)
                peaks.setdefault(tuple(current[:4]), {"world": current[4]})
                continue
            m = re.search(r"s/step, .*peak ([\d.]+) GiB", line)
            if m and current and current[2]:
                key = tuple(current[:4])
                peaks.setdefault(key, {"world": current[4]})["reserved"] = float(m.group(1)) * GIB
                peaks[key].setdefault("source", os.path.basename(path))


def read_rows(d, peaks):
    for path in sorted(glob.glob(os.path.join(d, "rows_*.csv"))):
        rows = [l for l in open(path) if not l.startswith("#")]
        for r in csv.DictReader(rows):
            if r["status"] != "ok":
                continue
            m = re.search(r"rank (\d+) of (\d+)", r["note"])
            key = (r["cluster"], r["task"], r["layout"], int(m.group(1)))
            p = peaks.setdefault(key, {"world": int(m.group(2))})
            p["allocated"] = float(r["peak_allocated_bytes"])
            p["reserved"] = float(r["peak_reserved_bytes"])
            p["source"] = os.path.basename(path)


def read_histories(d, peaks):
    for path in sorted(glob.glob(os.path.join(d, "history_*.jsonl.gz"))):
        for line in gzip.open(path, "rt"):
            h = json.loads(line)
            matches = [k for k in peaks if k[1:] == (h["task"], h["layout"], h["rank"])]
            key = matches[0] if matches else None
            if key is None:
                continue
            peaks[key].setdefault("allocated", float(h["max_allocated"]))
            peaks[key].setdefault("source", os.path.basename(path))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--compare", default=None, help="glob of measured step files to set beside")
    a = p.parse_args(argv)
    peaks = {}
    read_logs(a.dir, peaks)
    read_rows(a.dir, peaks)
    read_histories(a.dir, peaks)
    out = os.path.join(a.dir, "rank_peaks.csv")
    with open(out, "w", newline="") as f:
        f.write("# per-rank peaks of multi-GPU plans measured on one H200 under PyTorch's fake process group\n"
                "# (bench/memory_probe.py, run by bench/memory_probe_campaign.sh; calls a to f, 2026-12-01;\n"
                "# written by scripts/memory_probe_table.py from this folder's logs, rows and histories;\n"
                "# empty: that run did not record it)\n")
        w = csv.writer(f)
        w.writerow(["cluster", "task", "layout", "rank", "world", "status", "peak_allocated_bytes",
                     "peak_reserved_bytes", "source"])
        for k in sorted(peaks):
            v = peaks[k]
            if "allocated" not in v and "reserved" not in v:
                continue
            w.writerow(list(k) + [v["world"], "ok", int(v["allocated"]) if "allocated" in v else "",
                                  int(v["reserved"]) if "reserved" in v else "", v.get("source", "")])
    print(f"{out}: {len(peaks)} ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
