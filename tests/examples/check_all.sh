#!/usr/bin/env bash
# `yirage-plan check` on every bundled cluster paired with every bundled task: a pair either
# validates (exit 0) or has no answer because the task cannot fit (exit 3 with the memory
# or precision message); anything else fails. Every cluster and every task must validate in at
# least one pair.
set -u
plan=$1; data=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
failed=0; ok=0; refused=0
declare -A good
for cluster in "$data"/clusters/*.yaml; do
  for task in "$data"/tasks/*.yaml; do
    "$plan" check "$cluster" "$task" >/dev/null 2>"$err"
    code=$?
    if [ "$code" -eq 0 ]; then
      ok=$((ok + 1)); good[$cluster]=1; good[$task]=1
    elif [ "$code" -eq 3 ] && grep -q "needs at least\|computes in" "$err"; then
      refused=$((refused + 1))
    else
      echo "FAIL (exit $code): check $cluster $task"; cat "$err"; failed=$((failed + 1))
    fi
  done
done
for f in "$data"/clusters/*.yaml "$data"/tasks/*.yaml; do
  [ -n "${good[$f]:-}" ] || { echo "FAIL: $f validates with no bundled partner"; failed=$((failed + 1)); }
done
echo "check: $ok pairs valid, $refused refused as not fitting, $failed failures"
[ "$failed" -eq 0 ]
