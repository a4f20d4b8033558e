#!/usr/bin/env bash
# `--emit-kernels` on the mixed example cluster (H100, MI300X, Ascend 910B) decoding Llama 3 8B:
# a CUDA kernel per fused operation for the H100s, a HIP kernel for the MI300Xs, a plain
# "no code generator" for the Ascends, all in the manifest; the kernels compile with nvcc
# (sm_80, sm_90a) and hipcc (gfx90a) where those are installed (SKIP said otherwise); an
# unwritable directory is exit 2.
set -u
plan=$1 data=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$plan" "$data/clusters/mixed-h100-mi300x-910b.yaml" "$data/tasks/llama3-8b-decode.yaml" \
  --emit-kernels "$out/k" >"$out/log" 2>&1 || { cat "$out/log"; fail "exit $?"; }
grep -q "Ascend-910B: no code generator" "$out/log" || fail "no word on the Ascend devices"
python3 - "$out/k" <<'PY' || fail "manifest"
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
types = {d["device"]: d["backend"] for d in m["device_types"]}
assert types == {"Ascend-910B": None, "H100-SXM": "cuda", "MI300X": "hip"}, types
ks = m["kernels"]
for dev, ext in (("H100-SXM", ".cu"), ("MI300X", ".hip")):
    mine = [k for k in ks if k["device"] == dev]
    assert {k["operation"] for k in mine} == {"rmsnorm_linear", "gated_mlp"}, mine
    for k in mine:
        assert k["file"].endswith(ext) and os.path.isfile(os.path.join(root, k["file"])), k
        assert k["expected_fused_s"] > 0 and k["ugraph_priced_s"] > 0, k
print(f"manifest: {len(ks)} kernels for {len(types)} device types")
PY
nvcc=/usr/local/cuda/bin/nvcc
if [ -x "$nvcc" ]; then
  for f in "$out"/k/H100-SXM/*.cu; do
    "$nvcc" -std=c++17 -O2 -gencode arch=compute_80,code=sm_80 \
      -gencode arch=compute_90a,code=sm_90a -c -o "$out/k.o" "$f" || fail "nvcc $f"
  done
  echo "nvcc: the H100 kernels compile for sm_80 and sm_90a"
else
  echo "SKIP: $nvcc is absent; the H100 kernels were not compiled"
fi
if command -v hipcc >/dev/null; then
  for f in "$out"/k/MI300X/*.hip; do
    hipcc -std=c++20 -O2 --offload-arch=gfx90a -c -o "$out/k.o" "$f" || fail "hipcc $f"
  done
  echo "hipcc: the MI300X kernels compile for gfx90a"
else
  echo "SKIP: hipcc is absent; the MI300X kernels were not compiled"
fi
"$plan" "$data/clusters/mixed-h100-mi300x-910b.yaml" "$data/tasks/llama3-8b-decode.yaml" \
  --emit-kernels /proc/yirage-no >"$out/log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$out/log"; fail "an unwritable directory exits $rc, not 2"; }
grep -q "error: --emit-kernels" "$out/log" || fail "no message for an unwritable directory"
echo "emit_kernels: ok"
