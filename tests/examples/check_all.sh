#!/usr/bin/env bash
# `yirage-plan check` must succeed on every bundled cluster paired with every bundled task
# that fits it, and must fail with exit code 2 (never crash) on the pairs that do not fit.
set -u
plan=$1; data=$2
ok=0; refused=0; failed=0
for cluster in "$data"/clusters/*.yaml; do
  for task in "$data"/tasks/*.yaml; do
    "$plan" check "$cluster" "$task" >/dev/null 2>/tmp/yirage_check_err.$$
    code=$?
    case $code in
      0) ok=$((ok + 1)) ;;
      2) grep -q "needs at least\|computes in" /tmp/yirage_check_err.$$ && refused=$((refused + 1)) \
           || { echo "FAIL $cluster $task:"; cat /tmp/yirage_check_err.$$; failed=$((failed + 1)); } ;;
      *) echo "FAIL (exit $code) $cluster $task"; cat /tmp/yirage_check_err.$$; failed=$((failed + 1)) ;;
    esac
  done
done
rm -f /tmp/yirage_check_err.$$
echo "check: $ok pairs valid, $refused refused as not fitting, $failed failed"
[ "$failed" -eq 0 ] && [ "$ok" -gt 0 ]
