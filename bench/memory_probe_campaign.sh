#!/usr/bin/env bash
# One rank of each multi-GPU plan given, on one GPU under the fake process group
# (bench/memory_probe.py): peaks and what is live at the allocated peak, per rank.
#   bench/memory_probe_campaign.sh OUTDIR PLAN.yaml [PLAN.yaml ...]
# A plan's cluster and task come from its file name (CLUSTER__TASK__LAYOUT.yaml) under
# data/benchmarks/H200/steps; pipelined plans run their first and last rank (the most
# micro-batches in flight, and the logits; rank 0 first: the later stages take their input's
# shape from it), others rank 0. With LAST_ONLY=1, a pipelined plan's rank 0 runs one step only,
# to hand its output's shape on, and records nothing.
set -euo pipefail
out=$1; shift
steps=data/benchmarks/H200/steps
mkdir -p "$out"
for plan in "$@"; do
  base=$(basename "$plan" .yaml)
  cluster=${base%%__*}
  rest=${base#*__}
  task=${rest%%__*}
  world=$(grep -o 'x[0-9]*$' <<< "$cluster" | tr -d x)
  ranks=0
  meta=()
  if grep -q '_pp[2-9]' <<< "$base"; then
    ranks="0 $((world - 1))"
    meta=(--pp-meta "$out/$base.ppmeta")
  fi
  for r in $ranks; do
    if [ "${LAST_ONLY:-0}" = 1 ] && [ "$r" = 0 ] && [ "$ranks" != 0 ]; then
      timeout 240 python3 bench/memory_probe.py --world "$world" --rank 0 "${meta[@]}" \
        "$steps/clusters/$cluster.yaml" "$steps/tasks/$task.yaml" "$plan" \
        --steps 1 --warmup 0 --no-profile --out "$out/scratch.csv" > /dev/null 2>&1 \
        || echo "   rank 0 failed: $?"
      continue
    fi
    echo "== $base rank $r of $world"
    timeout 240 python3 bench/memory_probe.py --world "$world" --rank "$r" "${meta[@]}" \
      "$steps/clusters/$cluster.yaml" "$steps/tasks/$task.yaml" "$plan" \
      --steps 2 --warmup 2 --no-profile --out "$out/rows.rank$r.csv" \
      --memory-history "$out/history.jsonl" 2>&1 | tail -n 20 || echo "   failed: $?"
  done
done
