#!/usr/bin/env bash
# The layering check must fail on a tree where devices includes planner, naming the line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$("$here/../../scripts/check_layering.sh" "$here/upward" 2>&1)
code=$?
expected="devices/spec.h:3: error: devices may not include planner (layers: devices <- costmodel <- planner <- codegen <- report <- cli, gui)"
if [ "$code" -ne 1 ] || [ "$out" != "$expected" ]; then
  echo "expected exit 1 and: $expected"; echo "got exit $code and: $out"; exit 1
fi
echo "layering check rejects the upward include: ok"
