#!/bin/bash
# Eager DTensor TP steps on 2 GPUs with Python's default GC against torchtitan's manual GC,
# interleaved, three rounds: is the run-to-run spread of tensor-parallel rows the collector's?
set -u
S=data/benchmarks/H200/steps
P=$S/plans/h200x2__l8b-L4-s4096-gb4__tp2_pp1_dp1_mb1
T=$S/tasks/l8b-L4-s4096-gb4.yaml
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/logs/gpu.txt
lscpu > $OUT/logs/lscpu.txt
python3 -c "import torch;print(torch.__version__, torch.cuda.nccl.version())" > $OUT/logs/versions.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
port=29600
for round in 1 2 3; do
  for gc in 0 50; do
    port=$((port+1))
    timeout 200 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --master-port $port bench/run_plan.py $S/clusters/h200x2.yaml \
      $T ${P}_recomputenone_zero0.yaml $T ${P}_recomputeselective_zero0.yaml $T ${P}_recomputenone_zero0_spoff.yaml \
      --steps 30 --warmup 3 --no-profile --gc-freq $gc \
      --out $OUT/train_steps_gc.csv --step-times $OUT/step_times.jsonl \
      > $OUT/logs/round${round}_gc${gc}.log 2>&1
    echo "round $round gc $gc rc $? $(date +%T)"; grep "s/step" $OUT/logs/round${round}_gc${gc}.log
  done
done
