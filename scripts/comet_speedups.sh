#!/usr/bin/env bash
# Fused-versus-unfused speed-ups of the three compound ops of the COMET paper (GEMM-Softmax,
# GEMM-LayerNorm, self-attention) on the edge and cloud architectures of data/comet/.
# For each (op, arch) it runs `yirage-plan comet ... --search CONSTRAINTS --baseline UNFUSED`:
# the fused mapping and the unfused baseline searched over the same mapping space (the
# authors' sweep constraints), best latency against best latency and best energy against
# best energy (corrected model). GEMM-LayerNorm and self-attention files are built by analogy
# (scripts/comet_compound_gen.py), not released by the authors. Runs the six cases in
# parallel ($JOBS at a time, default nproc); about 4 minutes on 2 cores.
#
#   scripts/comet_speedups.sh [PATH/TO/yirage-plan]   (default build/cli/yirage-plan)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
plan="$(realpath "${1:-${YIRAGE_PLAN:-$root/build/cli/yirage-plan}}")"
jobs="${JOBS:-$(nproc)}"
d="$root/data/comet"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# op label | problem | fused mapping | unfused baseline
ops=("GEMM-Softmax|problem.yaml|mapping_rowsum_allreduce.yaml|mapping_unfused.yaml"
     "GEMM-LayerNorm*|problem_layernorm.yaml|mapping_layernorm.yaml|mapping_layernorm_unfused.yaml"
     "self-attention*|problem_attention.yaml|mapping_attention.yaml|mapping_attention_unfused.yaml")
# arch label | arch | constants (problem size) | constraints
archs=("edge|arch.yaml|constants_worked_example.yaml|constraints.yaml"
       "cloud|arch_cloud.yaml|constants_cloud.yaml|constraints_cloud.yaml")

cases=()
for o in "${ops[@]}"; do
  for a in "${archs[@]}"; do
    cases+=("$o|$a")
  done
done

run_case() {
  local i="$1"
  IFS='|' read -r _ problem fused unfused _ arch constants constraints <<<"${cases[$i]}"
  (cd "$d" && "$plan" comet "$arch" "$problem" "$fused" --constants "$constants" \
     --search "$constraints" --baseline "$unfused") >"$tmp/$i.out" 2>&1 || echo "failed" >>"$tmp/$i.out"
}

running=0
for i in "${!cases[@]}"; do
  run_case "$i" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

printf '%-16s %-6s %12s %12s %9s %9s %14s %14s\n' op arch fused_cyc unfused_cyc speedup \
  e_saving fused_pJ unfused_pJ
status=0
for i in "${!cases[@]}"; do
  IFS='|' read -r op _ _ _ arch _ <<<"${cases[$i]}"
  if grep -q '^failed' "$tmp/$i.out" || ! grep -q '^speed-up' "$tmp/$i.out"; then
    echo "$op $arch: failed" >&2
    cat "$tmp/$i.out" >&2
    status=1
    continue
  fi
  awk -v op="$op" -v arch="$arch" '
    /^best latency:/ { lat[nl++] = $3 }
    /^best energy:/  { en[ne++] = $5 }
    END {
      printf "%-16s %-6s %12d %12d %8.2fx %8.2fx %14.4e %14.4e\n", op, arch, lat[0], lat[1],
             lat[1] / lat[0], en[1] / en[0], en[0], en[1]
    }' "$tmp/$i.out"
done
echo "* built by analogy (comet-model.md 4.2, 8 #20), not released by the COMET authors."
echo "speed-up: best unfused latency / best fused latency; e_saving: best unfused energy / best fused energy."
exit "$status"
