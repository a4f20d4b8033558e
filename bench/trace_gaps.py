#!/usr/bin/env python3
"""Where a profiled training step's GPU idles, and why: reads the gzipped Chrome traces of
bench/run_megatron.py --trace and prints, for each step and each phase of it (the forward
passes, the loss, the backward passes, the optimizer, gradient zeroing, and the rest), the
kernels launched, the host's time, the GPU's busy time, and the GPU's idle time before that
phase's kernels, split into idle the host caused (the kernel was launched after the GPU ran
dry) and idle spent waiting with the kernel already launched (on another stream, an event
or a copy).

    bench/trace_gaps.py [--csv OUT.csv] TRACE.trace.json.gz...

The phases come from the runner's marks (yirage.forward, yirage.loss, yirage.optimizer,
yirage.zero_grad); a kernel launched outside every mark on a thread other than the marked
one is the backward's (PyTorch's autograd runs its CUDA work on a thread of its own).
Timestamps are the profiler's, which keeps host and GPU on one clock; the profiler's own
host cost (about a microsecond an operation) is inside every host figure.
"""
import argparse
import bisect
import csv
import gzip
import json
import os
import sys

PHASES = ["forward", "loss", "backward", "optimizer", "zero_grad", "other"]
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


class Marks:
    """The runner's marks on one thread, for finding which mark a host instant lies in."""

    def __init__(self, events):
        self.spans = sorted((e["ts"], e["ts"] + e["dur"], e["name"].split(".", 1)[1])
                            for e in events)
        self.starts = [s for s, _, _ in self.spans]

    def at(self, ts):
        """The mark around host instant `ts` (marks on one thread do not nest), or None."""
        i = bisect.bisect_right(self.starts, ts) - 1
        if i >= 0 and ts <= self.spans[i][1]:
            return self.spans[i][2]
        return None


def analyse(events):
    """Per phase: launches, host seconds (marked phases), GPU busy and idle seconds."""
    x = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    marks = [e for e in x if e.get("cat") == "user_annotation" and
             e.get("name", "").startswith("yirage.")]
    if not marks:
        raise ValueError("no yirage.* marks: was it written by bench/run_megatron.py --trace?")
    main_tid = marks[0]["tid"]
    by_tid = Marks([m for m in marks if m["tid"] == main_tid])
    launches = {}
    for e in x:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = (e["ts"], e["tid"])
    gpu = sorted((e for e in x if e.get("cat") in GPU_CATS), key=lambda e: e["ts"])
    if not gpu:
        raise ValueError("no GPU work in the trace")
    out = {p: {"launches": 0, "host_s": 0.0, "busy_s": 0.0, "idle_host_s": 0.0,
               "idle_wait_s": 0.0} for p in PHASES}
    for m in marks:
        if m["tid"] == main_tid:
            out[m["name"].split(".", 1)[1]]["host_s"] += m["dur"] / 1e6
    covered = gpu[0]["ts"]  # the GPU is busy up to here
    busy_total = 0.0
    for k in gpu:
        corr = k.get("args", {}).get("correlation")
        launch = launches.get(corr)
        if launch is None:
            phase = "other"
        elif launch[1] != main_tid:
            phase = "backward"
        else:
            phase = by_tid.at(launch[0]) or "other"
        row = out[phase]
        row["launches"] += 1
        start, end = k["ts"], k["ts"] + k["dur"]
        if start > covered:
            idle = (start - covered) / 1e6
            # Launched after the GPU ran dry: the host held it up.
            if launch is not None and launch[0] > covered:
                host_part = min(idle, (launch[0] - covered) / 1e6)
                row["idle_host_s"] += host_part
                row["idle_wait_s"] += idle - host_part
            else:
                row["idle_wait_s"] += idle
        busy = max(0.0, end - max(start, covered)) / 1e6
        row["busy_s"] += busy
        busy_total += busy
        covered = max(covered, end)
    span = (covered - gpu[0]["ts"]) / 1e6
    return out, span, busy_total


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+")
    p.add_argument("--csv", help="append one row per trace and phase to this CSV")
    a = p.parse_args(argv)
    rows = []
    for path in a.traces:
        name = os.path.basename(path).replace(".trace.json.gz", "")
        try:
            phases, span, busy = analyse(load(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
        print(f"{name}: GPU span {span * 1e3:.1f} ms, busy {busy * 1e3:.1f} ms "
              f"({100 * busy / span:.1f}%)")
        print(f"  {'phase':10} {'kernels':>8} {'host ms':>9} {'GPU ms':>9} "
              f"{'idle, host':>11} {'idle, wait':>11}")
        for ph in PHASES:
            r = phases[ph]
            if r["launches"] == 0 and r["host_s"] == 0:
                continue
            print(f"  {ph:10} {r['launches']:8d} {r['host_s'] * 1e3:9.2f} {r['busy_s'] * 1e3:9.2f} "
                  f"{r['idle_host_s'] * 1e3:11.2f} {r['idle_wait_s'] * 1e3:11.2f}")
            rows.append({"trace": name, "phase": ph, "kernels": r["launches"],
                         "host_s": r["host_s"], "gpu_busy_s": r["busy_s"],
                         "idle_host_s": r["idle_host_s"], "idle_wait_s": r["idle_wait_s"],
                         "gpu_span_s": span})
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
