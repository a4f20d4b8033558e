"""What is live at the allocated peak, from the CUDA caching allocator's recorded history
(torch.cuda.memory._record_memory_history / _snapshot): bench/run_plan.py --memory-history.

The trace is replayed: an `alloc` adds a block, a `free_completed` removes it (the allocator
counts a block allocated until the stream uses recorded on it have completed, so a block whose
`free_requested` came earlier but whose free has not completed is still allocated: `pending`).
At the largest total the live blocks are grouped by where they were allocated: the innermost
frame in bench/ code and the innermost frame in torch's code below it."""

import os

BENCH = os.path.dirname(os.path.abspath(__file__))


def site(frames):
    """'run_plan.py:512 step <- torch/nn/functional.py:3462 cross_entropy'-style label."""
    ours = theirs = None
    for f in frames:  # innermost first
        name = f.get("filename", "")
        if theirs is None and "/torch/" in name:
            theirs = f"{name.split('/torch/')[-1]}:{f.get('line')} {f.get('name')}"
        if name.startswith(BENCH):
            ours = f"{os.path.basename(name)}:{f.get('line')} {f.get('name')}"
            break
    return " <- ".join(x for x in (ours, theirs) if x) or "(no Python frame)"


def peak_summary(snapshot, baseline, device=0, top=12):
    """The allocated peak of the recorded trace on top of `baseline` (bytes allocated when
    recording began) and the live blocks at that moment, largest sites first."""
    trace = snapshot["device_traces"][device]
    live = {}      # addr -> (size, frames)
    pending = {}   # addr -> size, free requested but not completed
    total = best = baseline
    best_at = -1
    best_live = best_pending = None
    for i, e in enumerate(trace):
        a = e["action"]
        if a == "alloc":
            live[e["addr"]] = (e["size"], e.get("frames", []), e.get("stream", 0))
            total += e["size"]
            if total > best:
                best, best_at = total, i
                best_live, best_pending = dict(live), dict(pending)
        elif a == "free_requested":
            pending[e["addr"]] = e["size"]
        elif a == "free_completed":
            if e["addr"] in live:
                total -= live.pop(e["addr"])[0]
            else:  # allocated before recording began: part of the baseline
                total -= e["size"]
            pending.pop(e["addr"], None)
    out = {"events": len(trace), "baseline": baseline, "peak": best, "peak_event": best_at,
           "sites": [], "pending_bytes": 0, "pending_sites": []}
    if best_live is None:
        return out
    by_site, by_pending = {}, {}
    for addr, (size, frames, stream) in best_live.items():
        key = site(frames) + ("" if not stream else " [side stream]")
        by_site[key] = by_site.get(key, 0) + size
        if addr in best_pending:
            by_pending[key] = by_pending.get(key, 0) + size
    out["sites"] = sorted(by_site.items(), key=lambda kv: -kv[1])[:top]
    out["pending_bytes"] = sum(by_pending.values())
    out["pending_sites"] = sorted(by_pending.items(), key=lambda kv: -kv[1])[:top]
    return out


def segment_growth(snapshot, reserved_baseline, allocated_baseline=0, device=0, top=24):
    """Every segment the allocator took from the device while the trace ran (`segment_alloc`
    or `segment_map`), with the request that needed it: its size, the reserve after it, what
    was allocated before it (on top of `allocated_baseline`, what was allocated when recording
    began), and the request's site. The largest first (`top` of them),
    with the count of each site's segments; the reserve's peak is the last one's total."""
    trace = snapshot["device_traces"][device]
    reserved = reserved_baseline
    allocated = allocated_baseline
    grown = []
    waiting = None  # a segment taken, its request's alloc event comes next
    for e in trace:
        a = e["action"]
        if a in ("segment_alloc", "segment_map"):
            reserved += e["size"]
            waiting = {"size": e["size"], "reserved_after": reserved,
                       "allocated_before": allocated}
        elif a in ("segment_free", "segment_unmap"):
            reserved -= e["size"]
        elif a == "alloc":
            allocated += e["size"]
            if waiting is not None:
                waiting["request"] = e["size"]
                waiting["site"] = site(e.get("frames", []))
                grown.append(waiting)
                waiting = None
        elif a == "free_completed":
            allocated -= e["size"]
    peak = max((g["reserved_after"] for g in grown), default=reserved_baseline)
    for i, g in enumerate(grown):
        g["order"] = i
    largest = sorted(grown, key=lambda g: -g["size"])[:top]
    return {"reserved_baseline": reserved_baseline, "reserved_peak_in_trace": peak,
            "segments_taken": len(grown), "largest_segments": largest}
