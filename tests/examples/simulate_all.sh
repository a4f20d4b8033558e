#!/usr/bin/env bash
# `simulate` on every bundled cluster with every bundled task, its best plan replayed in
# SimGrid: it simulates (exit 0), or has no answer (exit 3, as the main form): no layout
# fits, or the task cannot fit the cluster at all (with the memory or precision message);
# never anything else. Every cluster must simulate at least one task.
set -u
plan=$1; data=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
declare -A seen
declare -A simulated
failed=0
for cluster in "$data"/clusters/*.yaml; do
  for task in "$data"/tasks/*.yaml; do
    "$plan" simulate "$cluster" "$task" --top 1 >/dev/null 2>"$err"
    code=$?
    case $code in
      0) seen[0]=$(( ${seen[0]:-0} + 1 )); simulated[$cluster]=1 ;;
      3) if grep -q "needs at least\|computes in" "$err"; then seen[2]=$(( ${seen[2]:-0} + 1 ));
         else seen[1]=$(( ${seen[1]:-0} + 1 )); fi ;;
      *) echo "FAIL (exit $code): simulate $cluster $task"; cat "$err"; failed=$((failed + 1)) ;;
    esac
  done
done
for c in "$data"/clusters/*.yaml; do
  [ -n "${simulated[$c]:-}" ] || { echo "FAIL: $c simulates no bundled task"; failed=$((failed + 1)); }
done
echo "simulate: ${seen[0]:-0} simulated, ${seen[1]:-0} with no fitting layout," \
     "${seen[2]:-0} refused as too large, $failed failures"
[ "$failed" -eq 0 ]
