#!/usr/bin/env python3
"""How much a collective running beside compute slows each of them, on the GPUs of one host:
the interference that overlapped data-parallel and ZeRO-3 traffic costs (issue 28).

    torchrun --nproc-per-node N bench/overlap.py --out overlap.csv [--reps 15]

For each collective (all-reduce bf16, averaging, in place; all-gather bf16; reduce-scatter fp32) of several sizes
and each kind of compute (`gemm`: bf16 8192 x 8192 x 8192 products; `stream`: copies of a
1 GiB bf16 buffer, memory-bound), every rank measures, with CUDA events, the median over
--reps repetitions of:

- compute alone: a loop of compute kernels on the default stream;
- collective alone: a loop of the collective on a second stream;
- compute beside the collective: the compute loop while a loop of collectives three times as
  long runs on the second stream (the collectives start first, so the compute is overlapped
  from its first kernel to its last);
- the collective beside compute: the collective loop while a compute loop three times as long
  runs.

Slowdowns are the ratios together / alone; each row is the median over ranks. Before timing,
a GEMM is checked against fp32 and each collective against the sum (or concatenation) of the
ranks' inputs gathered separately; inputs are random and two buffers alternate. Rows go to
--out (rank 0), with the device, software and command in '#' lines.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys

HEADER = ["device", "gpus", "collective", "dtype", "bytes", "compute", "compute_alone_s",
          "compute_beside_s", "compute_slowdown", "collective_alone_s", "collective_beside_s",
          "collective_slowdown", "reps"]


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="overlap.csv")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--sizes", default="16,64,256,1024", help="MiB per rank's collective buffer")
    a = p.parse_args(argv)
    import torch
    import torch.distributed as dist
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", local)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234 + rank)
    comm = torch.cuda.Stream()

    # Compute: bf16 products (checked against fp32) and 1 GiB copies.
    n = 8192
    mats = [torch.randn(n, n, device=dev, dtype=torch.bfloat16, generator=gen) for _ in range(3)]
    prod = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    torch.mm(mats[0], mats[1], out=prod)
    ref = mats[0][:256].float() @ mats[1].float()
    err = (prod[:256].float() - ref).norm() / ref.norm()
    assert err < 1e-2, f"GEMM error {err}"
    big = [torch.randn(512 * 2**20, device=dev, dtype=torch.bfloat16, generator=gen)
           for _ in range(2)]

    def gemm(k):
        for i in range(k):
            torch.mm(mats[i % 2], mats[2], out=prod)

    def stream(k):
        for i in range(k):
            big[(i + 1) % 2].copy_(big[i % 2])

    computes = {"gemm": gemm, "stream": stream}

    def timed(fn, k, s=None):
        s = s or torch.cuda.current_stream()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s):
            e0.record()
            fn(k)
            e1.record()
        return e0, e1

    def collective(kind, dtype, elems):
        bufs = [torch.randn(elems, device=dev, dtype=dtype, generator=gen) for _ in range(2)]
        if kind == "all_gather":
            outs = [torch.empty(elems * world, device=dev, dtype=dtype) for _ in range(2)]
            run = lambda i: dist.all_gather_into_tensor(outs[i % 2], bufs[i % 2])  # noqa: E731
        elif kind == "reduce_scatter":
            outs = [torch.empty(elems // world, device=dev, dtype=dtype) for _ in range(2)]
            run = lambda i: dist.reduce_scatter_tensor(outs[i % 2], bufs[i % 2])  # noqa: E731
        else:  # in place; averaged in the timed loops so that values stay finite
            outs = [b.clone() for b in bufs]
            run = lambda i: dist.all_reduce(outs[i % 2], op=dist.ReduceOp.AVG)  # noqa: E731
        # Check once against the inputs gathered separately.
        x = bufs[0].clone()
        inputs = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(inputs, x)
        if kind == "all_reduce":
            outs[0].copy_(bufs[0])
        run(0)
        torch.cuda.synchronize()
        if kind == "all_reduce":
            outs[0].mul_(world)  # the average back to the sum
        if kind == "all_gather":
            want = torch.cat(inputs)
        else:
            total = torch.stack([t.double() for t in inputs]).sum(0)
            want = total if kind == "all_reduce" else total.chunk(world)[rank]
        got = outs[0].double()
        e = ((got - want.double()).norm() / want.double().norm()).item()
        assert e < (2e-2 if dtype == torch.bfloat16 else 1e-5), f"{kind} error {e}"

        def loop(k):
            for i in range(k):
                run(i)
        return loop

    def median_time(setup):
        times = []
        for _ in range(a.reps):
            dist.barrier()
            torch.cuda.synchronize()
            e0, e1 = setup()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1) / 1e3)
        return statistics.median(times)

    def count_for(fn, s, target):
        """How many iterations of fn take about `target` seconds: rank 0's count, so that
        every rank runs as many collectives."""
        e0, e1 = timed(fn, 2, s)
        torch.cuda.synchronize()
        one = max(e0.elapsed_time(e1) / 2e3, 1e-6)
        k = torch.tensor([max(2, int(target / one))], device=dev)
        dist.broadcast(k, 0)
        return int(k.item())

    rows = []
    name = torch.cuda.get_device_name()
    for kind, dtype in (("all_reduce", torch.bfloat16), ("all_gather", torch.bfloat16),
                        ("reduce_scatter", torch.float32)):
        for mib in [int(x) for x in a.sizes.split(",")]:
            element = torch.tensor([], dtype=dtype).element_size()
            elems = mib * 2**20 // element
            elems -= elems % world
            loop = collective(kind, dtype, elems)
            for cname, cfn in computes.items():
                cfn(2)
                loop(2)
                torch.cuda.synchronize()
                kc = count_for(cfn, None, 0.03)
                kn = count_for(loop, comm, 0.03)
                c_alone = median_time(lambda: timed(cfn, kc))
                n_alone = median_time(lambda: timed(loop, kn, comm))

                def compute_beside():
                    timed(loop, 3 * kn, comm)
                    return timed(cfn, kc)

                def collective_beside():
                    timed(cfn, 3 * kc)
                    return timed(loop, kn, comm)

                c_with = median_time(compute_beside)
                n_with = median_time(collective_beside)
                vals = torch.tensor([c_alone, c_with, n_alone, n_with], dtype=torch.float64,
                                    device=dev)
                allv = [torch.empty_like(vals) for _ in range(world)]
                dist.all_gather(allv, vals)
                med = [statistics.median(v[i].item() for v in allv) for i in range(4)]
                size = elems * element
                rows.append([name, world, kind, str(dtype).split(".")[-1], size, cname,
                             med[0] / kc, med[1] / kc, med[1] / med[0], med[2] / kn,
                             med[3] / kn, med[3] / med[2], a.reps])
                if rank == 0:
                    print(f"{kind:15s} {size / 2**20:6.0f} MiB {cname:6s}: compute x{med[1] / med[0]:.3f}, "
                          f"collective x{med[3] / med[2]:.3f} ({med[2] / kn * 1e3:.3f} ms alone)",
                          flush=True)
    if rank == 0:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.split("\n")[0].strip()
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
        with open(a.out, "w") as f:
            f.write("# measured by bench/overlap.py: compute and collectives slowed by each other\n")
            f.write(f"# device: {name} x{world}; driver {drv}; CUDA {torch.version.cuda}; torch "
                    f"{torch.__version__}; NCCL {nccl}; host {socket.gethostname()}\n")
            f.write("# command: bench/overlap.py " + " ".join(argv) + "\n")
            f.write(",".join(HEADER) + "\n")
            for r in rows:
                f.write(",".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in r) + "\n")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
