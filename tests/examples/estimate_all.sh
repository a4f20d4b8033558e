#!/usr/bin/env bash
# `yirage-plan estimate --json` answers every collective on every example cluster, and every
# operation on every device of the registry, with a positive latency_s and an energy_j.
set -u
plan=$1; data=$2
failed=0; n=0
check() {  # check DESCRIPTION ARGS...
  local what=$1; shift
  out=$("$plan" --json estimate "$@" 2>&1)
  if [ $? -ne 0 ] || ! grep -q '"latency_s": [0-9]' <<<"$out" || ! grep -q '"energy_j": ' <<<"$out" \
     || grep -q '"latency_s": 0[,.]\?$' <<<"$out"; then
    echo "FAIL: $what"; echo "$out" | head -5; failed=$((failed + 1))
  fi
  n=$((n + 1))
}
for cluster in "$data"/clusters/*.yaml; do
  for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all send_recv; do
    check "$c on $cluster" --cluster "$cluster" --collective "$c" --size 64MiB
  done
done
devices=$("$plan" --json devices |
          python3 -c 'import json, sys; print(*(d["name"] for d in json.load(sys.stdin)["devices"]))')
for d in $devices; do
  for spec in "gemm 2048x4096x4096" "attention 4x32x8x2048x2048x128" "attention 32x32x8x1x8192x128" \
              "rmsnorm 4096x8192" "layernorm 4096x8192" "softmax 4096x8192" "elementwise 16777216" \
              "rmsnorm_linear 16x4096x6144" "gated_mlp 64x4096x14336" "gemm_softmax 256x256x128" \
              "gemm_layernorm 256x1024x256" "lora_linear 64x4096x4096x16"; do
    set -- $spec
    check "$1 on $d" --device "$d" --op "$1" --shape "$2" --unfused
  done
done
echo "estimate: $n estimates, $failed failed"
[ "$failed" -eq 0 ]
