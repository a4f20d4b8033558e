#!/usr/bin/env bash
# Inference steps (bench/run_infer.py) at tensor-parallel degrees TPS of TASKS, one job at a time
# on a host of this machine's GPUs (no job beside another: host-bound prefills stay clean).
#
#   bash bench/infer_serial.sh OUT "2 4" "l8b-L8-decode l8b-L8-decode-fp8 l70b-L2-decode-fp8"
#
# The device directory (data/benchmarks/H100-SXM or H200) follows nvidia-smi's GPU name; OUT
# gets infer_tp<TP>_<task>.csv and logs/. Each job has a time limit (JOB_S, default 95 s).
set -u
out=$1 tps=$2 tasks=$3 limit=${JOB_S:-95}
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) dev=H200 ;;
  *H100*) dev=H100-SXM ;;
  *) echo "unknown GPU" >&2; exit 2 ;;
esac
steps=data/benchmarks/$dev/steps
mkdir -p "$out/logs"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ date -u; nvidia-smi; nvidia-smi topo -m; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())'; } > "$out/logs/host.txt" 2>&1
for tp in $tps; do
  cluster=$(ls "$steps"/clusters/*x"$tp".yaml | head -1)
  for name in $tasks; do
    setsid timeout -k 5 "$limit" torchrun --standalone --nproc-per-node "$tp" bench/run_infer.py \
      "$cluster" "$steps/tasks/$name.yaml" --out "$out/infer_tp${tp}_$name.csv" \
      > "$out/logs/infer_tp${tp}_$name.log" 2>&1
    echo "infer tp$tp $name: exit $?" >> "$out/logs/jobs.txt"
    pkill -9 -f "run_infer.py $cluster" 2>/dev/null
  done
done
date -u >> "$out/logs/host.txt"
echo "$dev" > "$out/device.txt"
