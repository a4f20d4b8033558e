#!/usr/bin/env bash
# `yirage-plan devices --json` lists at least 30 devices, and every number has a source.
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$1" devices --json >"$out" || { echo "FAIL: devices --json exited $?"; exit 1; }
python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
devices = doc["devices"]
numbers = sourced = 0
def walk(v):
    global numbers, sourced
    if isinstance(v, dict):
        if "value" in v:
            numbers += 1
            sourced += bool(v.get("source"))
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(devices)
print("devices --json: %d devices, %d numbers, %d with a source" % (len(devices), numbers, sourced))
sys.exit(0 if doc["kind"] == "devices" and len(devices) >= 30 and numbers > 0 and numbers == sourced else 1)
PY
