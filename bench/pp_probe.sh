#!/bin/bash
# Pipeline parallelism on 2 GPUs, 1F1B against torch's interleaved 1F1B (vpp 2 and 4), at
# three sequence lengths and two micro-batch counts: what interleaving gains in eager PyTorch
# (torch.distributed.pipelining), one process for every layout, then the interleaved ones
# again to see the drift. Writes $OUT/train_steps_pp.csv, the kernels of each profiled step
# and the logs.
set -u
S=data/benchmarks/H200/steps
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/logs/gpu.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
pairs=()
again=()
for t in l8b-L8-s2048-gb8 l8b-L8-s4096-gb8 l8b-L8-s8192-gb8 l8b-L8-s4096-gb4 l8b-L8-s8192-gb4; do
  for v in "" _vpp2 _vpp4; do
    p=$S/plans/h200x2__${t}__tp1_pp2_dp1_mb1_recomputenone_zero0$v.yaml
    pairs+=($S/tasks/$t.yaml $p)
    [ -n "$v" ] && again=($S/tasks/$t.yaml $p "${again[@]}")
  done
done
timeout 570 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --master-port 29650 \
  bench/run_plan.py $S/clusters/h200x2.yaml "${pairs[@]}" "${again[@]}" --steps 12 --warmup 3 \
  --out $OUT/train_steps_pp.csv --kernels $OUT/train_kernels_pp.csv --step-times $OUT/step_times_pp.jsonl \
  > $OUT/logs/pp_probe.log 2>&1
echo "rc $?"
grep "s/step\|== job" $OUT/logs/pp_probe.log
