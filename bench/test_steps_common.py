#!/usr/bin/env python3
"""CPU checks of the torch-free parts of the step runners (no GPU, no torch):
`python3 bench/test_steps_common.py`."""
import csv
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps_common as sc  # noqa: E402
from run_plan import exposed_time  # noqa: E402
import run_megatron  # noqa: E402
import trace_gaps  # noqa: E402


class KernelKinds(unittest.TestCase):
    def test_names_of_a_profiled_step(self):
        cases = {
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "nccl",
            "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT": "gemm",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1": "gemm",
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>": "attention",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>": "optimizer",
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>": "norm",
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>": "loss",
            "void at::native::indexing_backward_kernel<float>": "embedding",
            "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>": "copy",
            "void at::native::reduce_kernel<512, 1, ReduceOp<float, MeanOps<float>>>": "reduce",
            "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel>": "elementwise",
            "Memset (Device)": "elementwise",
            "some_custom_kernel": "other",
        }
        for name, kind in cases.items():
            self.assertEqual(sc.kernel_category(name), kind, name)

    def test_busy_time_is_the_union(self):
        cats, busy, span = sc.kernel_breakdown(
            [("nvjet_a", 0, 10), ("flash_fwd", 5, 15), ("silu elementwise", 20, 30)])
        self.assertAlmostEqual(cats["gemm"], 10e-6)
        self.assertAlmostEqual(cats["attention"], 10e-6)
        self.assertAlmostEqual(busy, 25e-6)
        self.assertAlmostEqual(span, 30e-6)


class YamlReader(unittest.TestCase):
    def test_reads_every_bundled_spec(self):
        for folder in ("clusters", "tasks", "models", "devices"):
            for path in glob.glob(os.path.join(sc.ROOT, "data", folder, "*.yaml")):
                self.assertIsInstance(sc.read_yaml(path), dict, path)

    def test_block_flow_and_sequences(self):
        doc = sc.parse_yaml("a: 1  # c\nb: {x: 2, y: [3, 'q, r']}\nc:\n- k: v\n  w: 1.5\n- z\n"
                            "d:\n  e: ~\n  f: \"#not a comment\"\n")
        self.assertEqual(doc, {"a": 1, "b": {"x": 2, "y": [3, "q, r"]},
                               "c": [{"k": "v", "w": 1.5}, "z"],
                               "d": {"e": None, "f": "#not a comment"}})
        # yaml-cpp writes an empty sequence under its key on a line of its own.
        self.assertEqual(sc.parse_yaml("fusions:\n  []\nnext: 2\n"), {"fusions": [], "next": 2})

    def test_inline_and_preset_models(self):
        preset = sc.load_model("llama3-8b")
        self.assertEqual(preset["kv_heads"], 8)
        inline = sc.load_model({"name": "x", "layers": 2, "hidden": 64, "heads": 4, "ffn": 128,
                                "vocab": 100})
        self.assertEqual((inline["kv_heads"], inline["head_dim"]), (4, 16))


class Layout(unittest.TestCase):
    def test_round_trip(self):
        for text in ("tp=2,pp=2,dp=1,mb=1,recompute=selective,zero=1,vpp=2",
                     "tp=4,pp=1,dp=1,mb=2,recompute=none,zero=0,sp=off"):
            lay = sc.parse_layout(text)
            self.assertEqual(sc.layout_str(lay["tp"], lay["pp"], lay["dp"], lay["mb"],
                                           lay["recompute"], lay["zero"], lay["vpp"],
                                           lay["sp"] == "on"), text)

    def test_rejects_unknown_keys(self):
        with self.assertRaises(ValueError):
            sc.parse_layout("tp=1,pp=1,dp=1,mb=1,recompute=none,zero=0,foo=1")


class Flops(unittest.TestCase):
    def test_published_parameter_count(self):
        self.assertAlmostEqual(sc.parameter_counts(sc.load_model("llama3-8b"))["total"] / 1e9,
                               8.03, places=2)

    def test_matches_yirage_mfu(self):
        """training_flops_per_token agrees with the MFU yirage wrote into a plan file."""
        plans = sorted(glob.glob(os.path.join(sc.ROOT, "data", "benchmarks", "H200", "steps",
                                              "plans", "h200x1__l8b-*.yaml")))
        self.assertTrue(plans)
        plan = sc.read_yaml(plans[0])
        task = sc.load_task(os.path.join(os.path.dirname(plans[0]), "..", "tasks",
                                         plan["task"] + ".yaml"))
        est = plan["estimate"]
        flops = est["mfu"] * sc.peak_flops("H200") / est["tokens_per_s"]
        mine = sc.training_flops_per_token(task["model"], task["sequence_length"])
        self.assertAlmostEqual(mine / flops, 1.0, places=6)


class Exposed(unittest.TestCase):
    def test_communication_not_under_compute(self):
        self.assertEqual(exposed_time([(0, 10), (20, 30)], [(2, 5), (4, 8), (25, 40)]), 9)
        self.assertEqual(exposed_time([(0, 10)], []), 10)
        self.assertEqual(exposed_time([(3, 4)], [(0, 10)]), 0)


class MegatronRunner(unittest.TestCase):
    STEPS = os.path.join(sc.ROOT, "data", "benchmarks", "H200", "steps")

    def spec(self, plan_name):
        return run_megatron.load_spec(os.path.join(self.STEPS, "plans", plan_name))

    def test_rows_say_what_ran(self):
        plan, _, _ = self.spec(
            "h200x1__mgf-l8b-L4-s4096-gb8__tp1_pp1_dp1_mb1_recomputenone_zero0.yaml")
        self.assertEqual(run_megatron.ran_layout(plan),
                         "tp=1,pp=1,dp=1,mb=1,recompute=none,zero=0,grad_fusion=off,te=off")
        plan["layout"] += ",grad_fusion=off,te=off"
        ran = run_megatron.ran_layout(plan)
        self.assertEqual((ran.count("grad_fusion"), ran.count(",te=")), (1, 1))

    def test_refuses_what_it_cannot_run(self):
        plan, cluster, task = self.spec(
            "h200x2__mgf-l8b-L4-s4096-gb8__tp1_pp2_dp1_mb1_recomputeselective_zero0.yaml")
        lay = sc.parse_layout(plan["layout"])
        run_megatron.check(cluster, task, lay, 2)
        with self.assertRaisesRegex(run_megatron.Refused, "needs 2 ranks"):
            run_megatron.check(cluster, task, lay, 1)
        with self.assertRaisesRegex(run_megatron.Refused, "sequence parallelism"):
            run_megatron.check(cluster, task, dict(lay, pp=1, tp=2), 2)
        run_megatron.check(cluster, task, dict(lay, pp=1, tp=2, sp="off"), 2)
        with self.assertRaisesRegex(run_megatron.Refused, "zero 2-3"):
            run_megatron.check(cluster, task, dict(lay, zero=3), 2)
        with self.assertRaisesRegex(run_megatron.Refused, "framework"):
            run_megatron.check(cluster, dict(task, framework="pytorch"), lay, 2)
        with self.assertRaisesRegex(run_megatron.Refused, "attention"):
            run_megatron.check(cluster, dict(task, attention="paged"), lay, 2)

    def test_every_measured_row_has_its_plan(self):
        for path in glob.glob(os.path.join(sc.ROOT, "data", "benchmarks", "H200",
                                           "train_steps_megatron*.csv")):
            with open(path) as f:
                for row in csv.DictReader(line for line in f if not line.startswith("#")):
                    plan = row["plan"]
                    self.assertTrue(os.path.exists(os.path.join(self.STEPS, "plans", plan)), plan)


class TraceGaps(unittest.TestCase):
    """bench/trace_gaps.py on a hand-made trace: the main thread marks a forward pass (two
    launches) and an optimizer step (one); a second thread launches the backward's kernel."""

    @staticmethod
    def events():
        ev = [{"ph": "X", "cat": "user_annotation", "name": "yirage.forward", "ts": 0,
               "dur": 100, "tid": 1},
              {"ph": "X", "cat": "user_annotation", "name": "yirage.optimizer", "ts": 300,
               "dur": 100, "tid": 1}]
        for ts, corr, tid in [(10, 1, 1), (60, 2, 1), (150, 3, 2), (310, 4, 1)]:
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts,
                       "dur": 5, "tid": tid, "args": {"correlation": corr}})
        for ts, dur, corr in [(20, 20, 1), (65, 30, 2), (155, 100, 3), (315, 10, 4)]:
            ev.append({"ph": "X", "cat": "kernel", "name": "k", "ts": ts, "dur": dur, "tid": 7,
                       "args": {"correlation": corr}})
        return ev

    def test_idle_split_by_phase_and_cause(self):
        phases, span, busy = trace_gaps.analyse(self.events())
        self.assertAlmostEqual(span, 305e-6)
        self.assertAlmostEqual(busy, 160e-6)
        f, b, o = phases["forward"], phases["backward"], phases["optimizer"]
        self.assertEqual((f["launches"], b["launches"], o["launches"]), (2, 1, 1))
        # The second forward kernel: the GPU ran dry at 40 us, the host launched it at 60,
        # and it started at 65 (5 us of launch latency counted as waiting).
        self.assertAlmostEqual(f["idle_host_s"], 20e-6)
        self.assertAlmostEqual(f["idle_wait_s"], 5e-6)
        self.assertAlmostEqual(b["idle_host_s"], 55e-6)
        self.assertAlmostEqual(o["idle_host_s"], 55e-6)
        self.assertAlmostEqual(o["idle_wait_s"], 5e-6)
        self.assertAlmostEqual(f["host_s"], 100e-6)

    def test_refuses_an_unmarked_trace(self):
        with self.assertRaises(ValueError):
            trace_gaps.analyse([e for e in self.events() if e["cat"] != "user_annotation"])


if __name__ == "__main__":
    unittest.main()
