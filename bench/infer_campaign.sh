#!/usr/bin/env bash
# Measures, on one host, what the fp8 and decode-attention models are fitted and checked on:
# - on GPU 0, single operations (bench/ops.py): decode attention in both ways a PyTorch step
#   calls it, and fp8 GEMMs with per-tensor and row-wise scales;
# - on the other GPUs and then on all of them, inference steps (bench/run_infer.py) at tensor
#   parallelism 1, 2 and 4 (as many as the host has) of every task in STEPS/tasks whose name
#   ends in -decode-fp8 or -decode-split.
#
#   bash bench/infer_campaign.sh DEVICE STEPS OUT
#
# DEVICE is the registry name (H200, H100-SXM); STEPS the folder with clusters/ and tasks/
# (data/benchmarks/DEVICE/steps); OUT gets ops_*.csv, infer_*.csv and logs/. Each job has a
# time limit; its workers are killed with it. Multicast stays off (shared hosts).
set -u
dev=$1 steps=$2 out=$3
gpus=$(nvidia-smi -L | wc -l)
mkdir -p "$out/logs"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ date -u; nvidia-smi; nvidia-smi topo -m; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())'; } > "$out/logs/host.txt" 2>&1

ops() {
  for only in decode_attention fp8_rowwise fp8; do
    CUDA_VISIBLE_DEVICES=0 timeout -k 5 200 python3 bench/ops.py --device "$dev" --only "$only" \
      --out "$out/ops_$only.csv" > "$out/logs/ops_$only.log" 2>&1
    echo "ops $only: exit $?" >> "$out/logs/jobs.txt"
  done
}

# infer TP VISIBLE_GPUS: every fp8 and split task at that degree, one after another.
infer() {
  local tp=$1 vis=$2 cluster task name
  cluster=$(ls "$steps"/clusters/*x"$tp".yaml | head -1)
  for task in "$steps"/tasks/*-decode-fp8.yaml "$steps"/tasks/*-decode-split.yaml; do
    name=$(basename "$task" .yaml)
    # A 70B layer's shards do not fit one GPU's budget here: tp 1 runs the 8B widths only.
    if [ "$tp" = 1 ] && [[ $name == l70b* ]]; then continue; fi
    CUDA_VISIBLE_DEVICES=$vis setsid timeout -k 5 240 torchrun --standalone --nproc-per-node "$tp" \
      bench/run_infer.py "$cluster" "$task" --out "$out/infer_tp${tp}_$name.csv" \
      > "$out/logs/infer_tp${tp}_$name.log" 2>&1
    echo "infer tp$tp $name: exit $?" >> "$out/logs/jobs.txt"
    pkill -9 -f "run_infer.py $cluster $task" 2>/dev/null
  done
}

if [ "$gpus" -ge 4 ]; then
  ops & infer 1 1 & infer 2 2,3 & wait
  infer 4 0,1,2,3
elif [ "$gpus" -ge 2 ]; then
  ops & infer 1 1 & wait
  infer 2 0,1
else
  ops
  infer 1 0
fi
date -u >> "$out/logs/host.txt"
