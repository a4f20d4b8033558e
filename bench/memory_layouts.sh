#!/usr/bin/env bash
# Where the caching allocator's reserve goes: runs bench/run_plan.py --memory-layout on a
# few layouts of the l8b tasks on 1, 2 and 4 GPUs (default allocator, then expandable
# segments for 2 GPUs) and packs the rows and the per-rank JSON lines into OUT/memory.tgz.
# Usage: bash bench/memory_layouts.sh OUT
set -uo pipefail
out=${1:?usage: memory_layouts.sh OUT}
cd "$(dirname "$0")/.."
d=data/benchmarks/H200/steps
work=$out/memory
mkdir -p "$work"
pairs() {  # CLUSTER TASK LAYOUT... -> TASK PLAN pairs
  local c=$1 t=$2; shift 2
  for l in "$@"; do printf '%s %s ' "$d/tasks/$t.yaml" "$d/plans/${c}__${t}__$l.yaml"; done
}
run() {  # NAME GPUS CLUSTER TASK LAYOUT...
  local name=$1 n=$2 c=$3 t=$4; shift 4
  # shellcheck disable=SC2046
  timeout 240 torchrun --standalone --nproc-per-node "$n" bench/run_plan.py "$d/clusters/$c.yaml" \
    $(pairs "$c" "$t" "$@") --steps 6 --warmup 3 --no-profile \
    --out "$work/$name.csv" --memory-layout "$work/$name.jsonl" >"$work/$name.log" 2>&1
  echo "$name: exit $? ($(grep -c '^==' "$work/$name.log") jobs)"
}
x1=(tp1_pp1_dp1_mb1_recomputenone_zero0 tp1_pp1_dp1_mb1_recomputefull_zero0 tp1_pp1_dp1_mb2_recomputenone_zero0)
x2=(tp1_pp1_dp2_mb1_recomputenone_zero0 tp1_pp1_dp2_mb1_recomputenone_zero1
    tp1_pp1_dp2_mb1_recomputenone_zero2 tp1_pp1_dp2_mb1_recomputenone_zero3
    tp2_pp1_dp1_mb1_recomputenone_zero0 tp2_pp1_dp1_mb1_recomputenone_zero0_spoff
    tp1_pp2_dp1_mb1_recomputenone_zero0 tp1_pp2_dp1_mb2_recomputenone_zero0)
x4=(tp1_pp1_dp4_mb1_recomputenone_zero0 tp1_pp1_dp4_mb1_recomputenone_zero3
    tp4_pp1_dp1_mb1_recomputenone_zero0 tp2_pp2_dp1_mb1_recomputenone_zero0
    tp1_pp4_dp1_mb1_recomputenone_zero0 tp2_pp1_dp2_mb1_recomputenone_zero3)
run x1 1 h200x1 l8b-L4-s4096-gb4 "${x1[@]}"
run x2 2 h200x2 l8b-L4-s4096-gb4 "${x2[@]}"
if [ "$(nvidia-smi -L | wc -l)" -ge 4 ]; then run x4 4 h200x4 l8b-L4-s4096-gb8 "${x4[@]}"; fi
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True run x2_expandable 2 h200x2 l8b-L4-s4096-gb4 "${x2[@]}"
nvidia-smi -L >"$work/gpus.txt"
tar -C "$out" -czf "$out/memory.tgz" memory && rm -rf "$work"
