#!/usr/bin/env bash
# Writes the CUDA kernel of every bundled program (data/programs/*.yaml) at its bundled shape,
# superoptimized for the H100, into OUT/NAME/ (the µGraph and NAME.cu), for
# bench/check_programs.py to run on a GPU. Usage: scripts/generate_program_kernels.sh OUT [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/generate_program_kernels.sh OUT [BUILD_DIR]}"
plan="${2:-build}/cli/yirage-plan"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for yaml in data/programs/*.yaml; do
  name="$(basename "$yaml" .yaml)"
  "$plan" superoptimize "$yaml" --device H100-SXM --out "$work/$name" > "$work/$name.log"
  "$plan" codegen "$work/$name/$name.ugraph.json" --backend cuda --out "$out/$name"
  cp "$work/$name/$name.ugraph.json" "$out/$name/"
done
