#!/usr/bin/env bash
# Rejects any #include that points up the library chain
#   devices <- costmodel <- planner <- codegen <- report <- {cli, gui}
# (a lower library including a higher one), and cli and gui including each other.
# Usage: scripts/check_layering.sh [ROOT]   (default: the repository root)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
rank() {
  case $1 in
    devices) echo 0 ;; costmodel) echo 1 ;; planner) echo 2 ;; codegen) echo 3 ;; report) echo 4 ;;
    cli | gui) echo 5 ;; *) echo -1 ;;
  esac
}
bad=0
for lib in devices costmodel planner codegen report cli gui; do
  [ -d "$root/$lib" ] || continue
  mine=$(rank "$lib")
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([a-z_]+)\/.*/\1/' <<<"$text")
    theirs=$(rank "$target")
    [ "$theirs" -ge 0 ] || continue
    if [ "$theirs" -gt "$mine" ] || { [ "$mine" -eq 5 ] && [ "$theirs" -eq 5 ] && [ "$target" != "$lib" ]; }; then
      echo "${file#"$root"/}:$line: error: $lib may not include $target (layers: devices <- costmodel <- planner <- codegen <- report <- cli, gui)"
      bad=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "$root/$lib" \
             --include='*.h' --include='*.cpp' --include='*.hpp' --include="*.cu" | sort -t: -k1,1 -k2,2n)
done
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "layering: ok"
