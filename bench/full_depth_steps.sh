#!/usr/bin/env bash
# Models at full depth under their plans: Llama 3 8B (32 layers, 8,192 tokens) on 2 H200s,
# Megatron-Core plans (bench/run_megatron.py, `megatron`) and eager PyTorch plans
# (bench/run_plan.py, `eager`); GPT-3 2.7B (32 layers, 2,048 tokens) and Llama 3.2 1B (16
# layers, 8,192 tokens) on 1 H200 under Megatron-Core (`megatron1`).
#   OUT=DIR bash bench/full_depth_steps.sh megatron|eager|megatron1 [SECONDS]
# MEGATRON: a checkout of NVIDIA/Megatron-LM at .megatron/megatron (commit d98e8a64dd).
set -u
what=$1 budget=${2:-540}
P=data/benchmarks/H200/steps/plans
C=data/benchmarks/H200/steps/clusters/h200x2.yaml
T=data/benchmarks/H200/steps/tasks
export PYTHONPATH=$PWD/.megatron${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 \
       TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
{ nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep -E "Model name|^CPU\(s\)"; date -u; } > $OUT/machine_$what.txt 2>&1
start=$(date +%s)
if [ "$what" = megatron ] || [ "$what" = megatron1 ]; then
  gpus=2 plans=$P/h200x2__mgf-l8b-L32-s8192-gb4__*.yaml out=train_steps_megatron_full_depth
  if [ "$what" = megatron1 ]; then
    gpus=1 out=train_steps_megatron_full_depth_1gpu
    plans="$P/h200x1__mgf-gpt2p7b-L32-s2048-gb16__*.yaml $P/h200x1__mgf-l1b-L16-s8192-gb8__*.yaml"
  fi
  for p in $plans; do
    [ $(( $(date +%s) - start )) -gt $budget ] && { echo "out of time before $p"; break; }
    timeout 240 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node $gpus \
      bench/run_megatron.py --out $OUT/$out.csv \
      --kernels $OUT/${out/steps/kernels}.csv --steps 8 --warmup 3 \
      --megatron-commit d98e8a64dd "$p" 2>&1 | grep -v -e '^\[rank' -e 'Warning' -e 'warn(' | tail -3
  done
else
  pairs=()
  for p in $P/h200x2__l8b-L32-s8192-gb4__*.yaml; do pairs+=("$T/l8b-L32-s8192-gb4.yaml" "$p"); done
  timeout $budget python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 2 \
    bench/run_plan.py $C "${pairs[@]}" --steps 8 --warmup 3 --out $OUT/train_steps_full_depth.csv \
    2>&1 | grep -v -e '^\[rank' -e 'Warning' -e 'warn(' | tail -15
fi
echo "$what: $(( $(date +%s) - start )) s"
date -u >> $OUT/machine_$what.txt
