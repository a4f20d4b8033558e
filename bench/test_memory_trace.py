#!/usr/bin/env python3
"""CPU checks of bench/memory_trace.py on hand-made allocator traces."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import memory_trace  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def frame(line, name="step"):
    return [{"filename": os.path.join(HERE, "run_plan.py"), "line": line, "name": name}]


def snapshot(events):
    return {"device_traces": [events]}


class PeakSummary(unittest.TestCase):
    def test_the_peak_holds_what_was_live_then(self):
        s = snapshot([
            {"action": "alloc", "addr": 1, "size": 100, "frames": frame(10)},
            {"action": "alloc", "addr": 2, "size": 50, "frames": frame(20)},
            {"action": "free_requested", "addr": 1, "size": 100},
            {"action": "free_completed", "addr": 1, "size": 100},
            {"action": "alloc", "addr": 3, "size": 60, "frames": frame(30)},
        ])
        out = memory_trace.peak_summary(s, baseline=7)
        self.assertEqual(out["peak"], 157)
        self.assertEqual(out["peak_event"], 1)
        self.assertEqual(dict(out["sites"]), {"run_plan.py:10 step": 100, "run_plan.py:20 step": 50})


class SegmentGrowth(unittest.TestCase):
    def test_each_segment_names_the_request_that_needed_it(self):
        s = snapshot([
            {"action": "segment_alloc", "addr": 0, "size": 4096},
            {"action": "alloc", "addr": 0, "size": 4000, "frames": frame(10)},
            {"action": "free_completed", "addr": 0, "size": 4000},
            {"action": "alloc", "addr": 0, "size": 1000, "frames": frame(11)},  # reuses the cache
            {"action": "segment_alloc", "addr": 9000, "size": 8192},
            {"action": "alloc", "addr": 9000, "size": 8000, "frames": frame(12, "merge")},
        ])
        out = memory_trace.segment_growth(s, reserved_baseline=100)
        self.assertEqual(out["segments_taken"], 2)
        self.assertEqual(out["reserved_peak_in_trace"], 100 + 4096 + 8192)
        first = out["largest_segments"][0]
        self.assertEqual((first["size"], first["request"], first["order"]), (8192, 8000, 1))
        self.assertEqual(first["allocated_before"], 1000)
        self.assertEqual(first["site"], "run_plan.py:12 merge")

    def test_freed_segments_lower_the_reserve(self):
        s = snapshot([
            {"action": "segment_alloc", "addr": 0, "size": 10},
            {"action": "alloc", "addr": 0, "size": 10, "frames": []},
            {"action": "segment_free", "addr": 0, "size": 10},
            {"action": "segment_alloc", "addr": 0, "size": 4},
            {"action": "alloc", "addr": 0, "size": 4, "frames": []},
        ])
        out = memory_trace.segment_growth(s, reserved_baseline=0)
        self.assertEqual(out["reserved_peak_in_trace"], 10)
        self.assertEqual(out["largest_segments"][1]["reserved_after"], 4)


if __name__ == "__main__":
    unittest.main()
