#!/usr/bin/env bash
# The main form on every bundled cluster with every bundled task: it plans (exit 0), says no
# layout fits (exit 1), refuses a task that cannot fit the cluster at all (exit 2, with the
# memory or precision message) or says what it cannot plan yet (exit 3); never anything else.
set -u
plan=$1; data=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
declare -A seen
failed=0
for cluster in "$data"/clusters/*.yaml; do
  for task in "$data"/tasks/*.yaml; do
    "$plan" "$cluster" "$task" --top 3 >/dev/null 2>"$err"
    code=$?
    case $code in
      0 | 1 | 3) seen[$code]=$(( ${seen[$code]:-0} + 1 )) ;;
      2) if grep -q "needs at least\|computes in" "$err"; then seen[2]=$(( ${seen[2]:-0} + 1 ));
         else echo "FAIL (exit 2): $cluster $task"; cat "$err"; failed=$((failed + 1)); fi ;;
      *) echo "FAIL (exit $code): $cluster $task"; cat "$err"; failed=$((failed + 1)) ;;
    esac
  done
done
echo "plan: ${seen[0]:-0} planned, ${seen[1]:-0} with no fitting layout, ${seen[2]:-0} refused" \
     "as too large, ${seen[3]:-0} not plannable yet, $failed failures"
[ "$failed" -eq 0 ] && [ "${seen[0]:-0}" -gt 0 ]
