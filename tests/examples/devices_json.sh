#!/usr/bin/env bash
# `yirage-plan devices --json` lists at least 30 devices, and every number has a source.
set -u
out=$("$1" devices --json) || { echo "FAIL: devices --json exited $?"; exit 1; }
devices=$(grep -c '^    "name": ' <<<"$out")
numbers=$(grep -c '"value": ' <<<"$out")
sourced=$(grep -c '"source": "[^"]' <<<"$out")
echo "devices --json: $devices devices, $numbers numbers, $sourced with a source"
[ "$devices" -ge 30 ] && [ "$numbers" -gt 0 ] && [ "$numbers" -eq "$sourced" ]
