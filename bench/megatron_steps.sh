#!/usr/bin/env bash
# Measures yirage plans under Megatron-Core, one process per plan (bench/run_megatron.py):
#   bench/megatron_steps.sh MEGATRON COMMIT GPUS OUT.csv PLAN...
# MEGATRON: a checkout of NVIDIA/Megatron-LM (its megatron/core); COMMIT: that checkout's
# commit, written into every row; GPUS: processes per plan (each plan's cluster must match).
# TRACE=DIR in the environment: each plan's profiled step as a Chrome trace there (--trace).
set -u
megatron=$1 commit=$2 gpus=$3 out=$4
shift 4
export PYTHONPATH=$megatron${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 \
       TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
for plan in "$@"; do
  timeout 300 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node "$gpus" \
    bench/run_megatron.py --out "$out" --kernels "${out%.csv}_kernels.csv" ${TRACE:+--trace "$TRACE"} \
    --megatron-commit "$commit" "$plan" 2>&1 |
    grep -v -e '^\[rank' -e 'Warning' -e 'warn(' | tail -3
done
