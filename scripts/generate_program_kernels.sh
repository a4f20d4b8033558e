#!/usr/bin/env bash
# Writes the CUDA kernel of every bundled program (data/programs/*.yaml) at its bundled shape,
# superoptimized for the H100, into OUT/NAME/ (the µGraph and NAME.cu), for
# bench/check_programs.py to run on a GPU. With YAML files after BUILD_DIR, those programs
# instead, each into OUT/<its directory's name>/ (bench/program_shapes/: bundled programs at
# other shapes). Usage: scripts/generate_program_kernels.sh OUT [BUILD_DIR [YAML...]]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/generate_program_kernels.sh OUT [BUILD_DIR [YAML...]]}"
plan="${2:-build}/cli/yirage-plan"
shift $(($# < 2 ? $# : 2))
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ "$#" -eq 0 ]; then
  set -- data/programs/*.yaml
  named=1
else
  named=0
fi
for yaml in "$@"; do
  name="$(basename "$yaml" .yaml)"
  dir="$name"
  [ "$named" -eq 1 ] || dir="$(basename "$(dirname "$yaml")")"
  "$plan" superoptimize "$yaml" --device H100-SXM --out "$work/$dir" > "$work/$dir.log"
  grep "best µGraph" "$work/$dir.log" | sed "s|^|$dir: |"
  "$plan" codegen "$work/$dir/$name.ugraph.json" --backend cuda --out "$out/$dir"
  cp "$work/$dir/$name.ugraph.json" "$out/$dir/"
done
