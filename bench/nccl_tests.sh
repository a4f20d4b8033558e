#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests against the NCCL that PyTorch ships and runs every collective
# of it on 2 and 4 GPUs of this host, 8 B to 4 GiB, as users run it: out of place and in
# place, launched eagerly (the default) and replayed from CUDA graphs (-G 1). With an MPI
# on the machine (mpicc and mpirun on PATH, or MPI_HOME), it runs one process per GPU as
# training does (mpirun -np N ... -g 1; files *_mpi*.txt); without, one process driving the
# N GPUs (-g N). The outputs are nccl-tests' own text, which `yirage-plan validate` reads.
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
export LD_LIBRARY_PATH="$nccl/lib:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L | wc -l)
gencode="-gencode=arch=compute_90,code=sm_90"

mpi_home=${MPI_HOME:-}
if [ -z "$mpi_home" ] && command -v mpicc > /dev/null && command -v mpirun > /dev/null; then
  # Open MPI names its own include directory (Debian: /usr/lib/x86_64-linux-gnu/openmpi)
  inc=$(mpicc --showme:incdirs 2> /dev/null | awk '{print $1}' || true)
  [ -n "$inc" ] && [ -e "$inc/mpi.h" ] && mpi_home=$(dirname "$inc")
  [ -z "$mpi_home" ] && mpi_home=$(dirname "$(dirname "$(command -v mpicc)")")
fi
# Every collective on 2 and 4 GPUs, eager and from CUDA graphs: run_all BINDIR SUFFIX MODE
# (MODE mpi: one process a GPU through mpirun; else one process driving the N GPUs).
run_all() {
  for n in 2 4; do
    [ "$n" -le "$gpus" ] || continue
    for t in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
      for g in 0 1; do
        name="${t}_perf$2"
        [ "$g" = 1 ] && name="${name}_graph"
        if [ "$3" = mpi ]; then
          cmd=(mpirun --allow-run-as-root --oversubscribe -np "$n" -x NCCL_NVLS_ENABLE
            -x LD_LIBRARY_PATH "$1/${t}_perf" -g 1)
        else
          cmd=("$1/${t}_perf" -g "$n")
        fi
        timeout 120 "${cmd[@]}" -b 8 -e 4G -f 2 -d bfloat16 -G "$g" > "$out/x${n}_${name}.txt" \
          2>&1 || echo "x$n $t$2 graph=$g: rc $?" >> "$out/failures.txt"
      done
    done
  done
}

if [ -n "$mpi_home" ] && [ -e "$mpi_home/include/mpi.h" ]; then
  echo "MPI: $mpi_home ($(mpirun --version 2>&1 | head -1))" > "$out/mpi.txt"
  make -C "$src" -j16 MPI=1 MPI_HOME="$mpi_home" NCCL_HOME="$home" CUDA_HOME="$cuda" \
    BUILDDIR=/tmp/nccl-tests-mpi NVCC_GENCODE="$gencode" > "$out/build_mpi.log" 2>&1
  run_all /tmp/nccl-tests-mpi _mpi mpi
else
  echo "no MPI (mpicc, mpirun and mpi.h): one process drives the GPUs" > "$out/mpi.txt"
  make -C "$src" -j16 NCCL_HOME="$home" CUDA_HOME="$cuda" BUILDDIR=/tmp/nccl-tests \
    NVCC_GENCODE="$gencode" > "$out/build.log" 2>&1
  run_all /tmp/nccl-tests "" single
fi
