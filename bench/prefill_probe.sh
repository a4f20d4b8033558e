#!/usr/bin/env bash
# Where a prefill's time goes, on one GPU of DEVICE (H200, H100-SXM): bench/infer_profile.py
# on the 8B-width runner task at 16 and 8 bits (kernels summed by name, host issue time),
# then GEMMs back to back at fp8 and bf16 (bench/sustained.py). Writes $OUT/probe_DEVICE.tgz.
#
#   OUT=/some/dir bash bench/prefill_probe.sh DEVICE
set -u
dev=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/probe; mkdir -p $o/logs
S=data/benchmarks/$dev/steps; C=$(ls $S/clusters/*x1.yaml | head -1)
{ date -u; nvidia-smi; python3 -c 'import torch,triton; print(torch.__version__, torch.version.cuda, triton.__version__)'; } > $o/logs/host.txt 2>&1
for t in l8b-L8-decode l8b-L8-decode-fp8; do
  timeout -k 5 180 python3 bench/infer_profile.py $C $S/tasks/$t.yaml --configs 1x1024,8x1024,64x1024,32x4096,1x16384 --out $o/profile_$t.csv > $o/logs/profile_$t.log 2>&1
  echo "profile $t: $?" >> $o/logs/jobs.txt
done
timeout -k 5 150 python3 bench/sustained.py --fp8 --out $o/sustained_fp8.csv --seconds 8 --settle 3 > $o/logs/sustained_fp8.log 2>&1; echo "sustained fp8: $?" >> $o/logs/jobs.txt
timeout -k 5 200 python3 bench/sustained.py --out $o/sustained_bf16.csv --seconds 8 --settle 3 > $o/logs/sustained_bf16.log 2>&1; echo "sustained bf16: $?" >> $o/logs/jobs.txt
date -u >> $o/logs/host.txt
cd $OUT && tar czf probe_$dev.tgz probe && rm -rf probe
