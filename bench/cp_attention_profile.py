#!/usr/bin/env python3
"""Profiles one step (forward and backward) of PyTorch's ring attention
(torch.distributed.tensor.experimental.context_parallel, load-balanced) on two GPUs of one
host, Llama-3-8B-wide (32 heads of 128, 8,192 tokens over cp = 2), under both rotate methods,
and prints its CUDA kernels by total time (rank 0) beside the step's time per call:

    torchrun --nproc-per-node 2 bench/cp_attention_profile.py

What it answers: where the time of data/benchmarks/H200x2/cp_attention.csv's ring rows goes
(the tiles' cuDNN kernels, the keys' and values' gathers and exchanges, the merges).
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.experimental import context_parallel
import torch.distributed.tensor.experimental._attention as A
dist.init_process_group("nccl"); rank=dist.get_rank(); torch.cuda.set_device(rank)
mesh=init_device_mesh("cuda",(2,))
print("rotate default:", getattr(A._cp_options,'rotate_method',None), "load balance:", getattr(A._cp_options,'enable_load_balance',None), flush=True)
b,h,s,d=1,32,8192,128
for method in ("allgather","alltoall"):
    try:
        A.set_rotate_method(method)
    except Exception as e:
        print("set_rotate_method", method, e); continue
    q,k,v=[torch.randn(b,h,s,d,device="cuda",dtype=torch.bfloat16) for _ in range(3)]
    g=torch.randn(b,h,s//2,d,device="cuda",dtype=torch.bfloat16)
    with context_parallel(mesh,buffers=[q,k,v],buffer_seq_dims=[2,2,2]):
        for t in (q,k,v): t.requires_grad_(True)
        def step():
            F.scaled_dot_product_attention(q,k,v,is_causal=True).backward(g)
        for _ in range(3): step()
        torch.cuda.synchronize()
        st=torch.cuda.Event(enable_timing=True); en=torch.cuda.Event(enable_timing=True)
        st.record()
        for _ in range(20): step()
        en.record(); en.synchronize()
        print(method, "step ms", st.elapsed_time(en)/20, flush=True)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(5): step()
            torch.cuda.synchronize()
        if rank==0:
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=70))
        for t in (q,k,v): t.grad=None; t.requires_grad_(False)
dist.destroy_process_group()
