#!/usr/bin/env bash
# `cmake --install` into a temporary prefix; the installed yirage-plan, run from another
# directory without YIRAGE_DATA_DIR, reads the data installed beside it (a device that only
# the installed copy holds is listed) and plans the main example from it.
# Usage: tests/install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
bin=$tmp/prefix/bin/yirage-plan
data=$tmp/prefix/share/yirage/data
[ -x "$bin" ] || { echo "not installed: $bin"; exit 1; }
[ -f "$tmp/prefix/share/doc/yirage/README.md" ] || { echo "README.md not installed"; exit 1; }
sed -e 's/^name: L4$/name: Installed-Probe/' -e '/^aliases:/d' "$data/devices/l4.yaml" \
  > "$data/devices/zz-installed-probe.yaml"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
unset YIRAGE_DATA_DIR
"$bin" devices | grep -q "Installed-Probe" || { echo "the installed binary did not read its own data"; exit 1; }
"$bin" "$data/clusters/h100-4x8-rail.yaml" "$data/tasks/llama3-70b-train.yaml" --top 1 > plan.txt
grep -q "^plan tp=" plan.txt || { cat plan.txt; echo "no plan"; exit 1; }
grep -q "operations calibrated for H100-SXM" plan.txt || { cat plan.txt; echo "calibration not found"; exit 1; }
echo "install: ok ($bin)"
