#!/bin/bash
# What is live at the allocated peak of loss-heavy one-GPU steps (8,192 tokens per micro-batch
# and more, a 128K vocabulary): the allocator's recorded history (run_plan.py --memory-history)
# for the layouts that ran out of memory on an H100 and their neighbours, on one H200.
set -u
S=data/benchmarks/H200/steps
T=$S/tasks/l8b-L4-s8192-gb4.yaml
P=$S/plans/h200x1__l8b-L4-s8192-gb4__tp1_pp1_dp1
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/logs/gpu.txt
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 1 --master-port 29660 \
  bench/run_plan.py $S/clusters/h200x1.yaml $T ${P}_mb1_recomputenone_zero0.yaml \
  $T ${P}_mb2_recomputenone_zero0.yaml $T ${P}_mb2_recomputefull_zero0.yaml \
  $T ${P}_mb4_recomputefull_zero0.yaml --steps 3 --warmup 2 --no-profile \
  --out $OUT/loss_memory.csv --memory-history $OUT/loss_memory.history.jsonl > $OUT/logs/loss_memory.log 2>&1
echo "rc $?"; grep "s/step\|== job" $OUT/logs/loss_memory.log
