#!/usr/bin/env bash
# Generates the CUDA kernels that bench/kernels.py measures: each bundled program at its
# benchmark shape is superoptimized for the H100 and its µGraph emitted by the CUDA backend
# into bench/generated/CASE/. Usage: scripts/generate_bench_kernels.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
plan="${1:-build}/cli/yirage-plan"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gen() {  # CASE PROGRAM SHAPE...
  local case="$1" program="$2"
  shift 2
  local shapes=()
  for s in "$@"; do shapes+=(--shape "$s"); done
  "$plan" superoptimize "data/programs/$program.yaml" --device H100-SXM "${shapes[@]}" \
    --out "$work/$case" > "$work/$case.log"
  "$plan" codegen "$work/$case/$program.ugraph.json" --backend cuda --out "bench/generated/$case"
  cp "$work/$case/$program.ugraph.json" "bench/generated/$case/"
}
gen rmsnorm_linear_m1 rmsnorm_linear X=1x4096
gen rmsnorm_linear_m8 rmsnorm_linear X=8x4096
gen rmsnorm_linear_m16 rmsnorm_linear X=16x4096
gen gated_mlp_m8 gated_mlp
