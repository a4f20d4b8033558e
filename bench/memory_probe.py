"""One rank's memory of a multi-GPU plan, on one GPU.

bench/run_plan.py's jobs run unchanged under PyTorch's fake process group
(torch.testing._internal.distributed.fake_pg): every collective returns at once, and its
output is allocated as the real one's would be, so the rank builds the same modules, shards,
gradient buckets and optimizer state and allocates the same activations. What it cannot show:
memory held back while a collective's stream still uses it (NCCL's buffers are outside the
caching allocator either way). The step times mean nothing; the peaks and the live blocks at
the allocated peak (run_plan.py --memory-history, replayed by memory_trace.py) are the rank's.

Two pieces of the real run need the other ranks, and are stood in for:
- DDP's all-reduce of a bucket: a communication hook that hands the bucket back as it is (the
  real hook reduces it in place: the same buffer).
- A pipeline stage learns the shape of its input from the stage before it
  (PipelineStage._shape_inference, send_object_list / recv_object_list). Every stage after the
  first receives the residual stream the first stage sends, so rank 0 writes what it sends to
  --pp-meta and the other ranks, run after it, read it from there.

    python3 bench/memory_probe.py --world 4 --rank 0 [--pp-meta FILE] CLUSTER TASK PLAN \\
        --out rows.csv --memory-history history.jsonl

Every option after these is run_plan.py's. Rows are marked in their note.
"""

import argparse
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run_plan  # noqa: E402
import steps_common as sc  # noqa: E402


def fake_init(world, rank):
    """Replaces sc.init_distributed: the fake process group of `world` ranks, as `rank`."""
    def init():
        import torch
        import torch.distributed as dist
        from torch.testing._internal.distributed.fake_pg import FakeStore
        torch.cuda.set_device(0)
        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
        return 0, 0, world  # run_plan.main writes its rows as rank 0 does
    return init


def ddp_without_allreduce(apply_ddp):
    """run_plan.apply_ddp, with a communication hook that returns each bucket unreduced."""
    def apply(stage, dp_group, tp):
        import torch
        ddp = apply_ddp(stage, dp_group, tp)

        def hook(state, bucket):
            fut = torch.futures.Future()
            fut.set_result(bucket.buffer())
            return fut

        ddp.register_comm_hook(None, hook)
        return ddp
    return apply


def relay_pipeline_meta(path):
    """send_object_list / recv_object_list through `path`: (shape, dtype) of each tensor."""
    import torch
    import torch.distributed as dist
    from torch.utils._pytree import tree_map_only

    def send_object_list(objects, dst=None, group=None, device=None, **kw):
        if not os.path.exists(path):
            plain = tree_map_only(torch.Tensor, lambda t: ("tensor", tuple(t.shape), str(t.dtype)),
                                  list(objects))
            with open(path, "wb") as f:
                pickle.dump(plain, f)

    def recv_object_list(objects, src=None, group=None, device=None, **kw):
        if not os.path.exists(path):
            raise RuntimeError(f"{path}: run rank 0 of this plan first (it writes the stage meta)")
        with open(path, "rb") as f:
            plain = pickle.load(f)

        def tensor(x):
            if isinstance(x, tuple) and len(x) == 3 and x[0] == "tensor":
                return torch.empty(x[1], dtype=getattr(torch, x[2].split(".")[-1]), device="meta")
            return x

        from torch.utils._pytree import tree_map
        rebuilt = tree_map(tensor, plain, is_leaf=lambda x: isinstance(x, tuple) and len(x) == 3
                           and x[0] == "tensor")
        for i in range(len(objects)):
            objects[i] = rebuilt[i]

    dist.send_object_list = send_object_list
    dist.recv_object_list = recv_object_list


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--pp-meta", default=None,
                   help="where rank 0 leaves, and later ranks find, the first stage's output shape")
    a, rest = p.parse_known_args(argv)
    if not 0 <= a.rank < a.world:
        p.error(f"--rank {a.rank} is not one of the {a.world} ranks")
    sc.init_distributed = fake_init(a.world, a.rank)
    run_plan.apply_ddp = ddp_without_allreduce(run_plan.apply_ddp)
    if a.pp_meta:
        relay_pipeline_meta(a.pp_meta)
    written = run_plan.write_row

    def write_row(args, cluster, task, plan_path, layout, extra, ctx):
        extra = dict(extra)
        extra["note"] = (f"fake process group, rank {a.rank} of {a.world}: memory only; "
                         + extra.get("note", ""))
        written(args, cluster, task, plan_path, layout, extra, ctx)

    run_plan.write_row = write_row
    return run_plan.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
