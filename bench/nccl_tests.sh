#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests against the NCCL that PyTorch ships and runs every collective
# of it on 2 and 4 GPUs of this host, 8 B to 4 GiB, as users run it: out of place and in
# place, launched eagerly (the default) and replayed from CUDA graphs (-G 1). The outputs are
# nccl-tests' own text, which `yirage-plan validate` reads directly.
#
#   bash bench/nccl_tests.sh SRC OUT   # SRC: a checkout of github.com/NVIDIA/nccl-tests
#
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as on the lent machines.
set -euo pipefail
src=$1
out=$2
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null ||
  python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "nccl"))')
home=/tmp/nccl-home
mkdir -p "$home/lib"
ln -sfn "$nccl/include" "$home/include"
ln -sf "$(ls "$nccl"/lib/libnccl.so* | head -1)" "$home/lib/libnccl.so"
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
make -C "$src" -j16 NCCL_HOME="$home" CUDA_HOME="$cuda" BUILDDIR=/tmp/nccl-tests \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > "$out/build.log" 2>&1
export LD_LIBRARY_PATH="$nccl/lib:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L | wc -l)
for n in 2 4; do
  [ "$n" -le "$gpus" ] || continue
  for t in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
    for g in 0 1; do
      name="${t}_perf"
      [ "$g" = 1 ] && name="${t}_perf_graph"
      timeout 120 /tmp/nccl-tests/${t}_perf -b 8 -e 4G -f 2 -g "$n" -d bfloat16 -G "$g" \
        > "$out/x${n}_${name}.txt" 2>&1 || echo "x$n $t graph=$g: rc $?" >> "$out/failures.txt"
    done
  done
done
