#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the library and tool sources (not
# the tests), with the compile commands of a build folder, and compares each file's findings
# with tests/data/clang_tidy_baseline.txt: fails when a file has more findings than the
# baseline allows (new code comes in clean; the baseline only shrinks), and says which.
# By default only the sources changed since the baseline's commit are checked, with those
# that include a changed header (every source takes 20 CPU minutes on 2 cores); --all checks
# every one, as does a clone without that commit. Skipped, with a visible message, where
# clang-tidy is not installed.
#
#   scripts/tidy.sh [BUILD_DIR] [--all] [--update] [--refresh]
#     BUILD_DIR  default build
#     --update   checks every source and rewrites the baseline (20 CPU minutes)
#     --refresh  checks the changed sources as the test does and, when none exceeds its count,
#                moves the baseline to HEAD with their counts (lowered where they fell), so
#                the test checks only what changes after it
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
update=0
refresh=0
all=0
for a in "$@"; do
  case "$a" in
    --update) update=1; all=1 ;;
    --all) all=1 ;;
    --refresh) refresh=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) build="$a" ;;
  esac
done
if ! command -v clang-tidy >/dev/null; then
  echo "tidy: clang-tidy not installed; check skipped"
  exit 0
fi
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json" >&2; exit 2; }
baseline=tests/data/clang_tidy_baseline.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git ls-files '*.cpp' | grep -v '^tests/' > "$work/all"
base=$(sed -n 's/^# at \([0-9a-f]*\).*/\1/p' "$baseline" 2>/dev/null | head -1)
if [ "$all" -eq 1 ] || [ -z "$base" ] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  cp "$work/all" "$work/files"
else
  # Changed since the baseline (committed or not), and the sources including a changed header.
  { git diff --name-only "$base" -- '*.cpp' '*.h'; git ls-files --others --exclude-standard -- '*.cpp' '*.h'; } |
    sort -u > "$work/changed"
  { grep '\.cpp$' "$work/changed" || true
    grep '\.h$' "$work/changed" | while read -r h; do
      [ -n "$h" ] && git grep -l "#include \"$h\"" -- '*.cpp' || true
    done; } | sort -u | grep -v '^tests/' | grep -Fxf "$work/all" > "$work/files" || true
fi
if [ ! -s "$work/files" ]; then
  echo "tidy: no source changed since the baseline's commit $base"
  exit 0
fi
if [ "$refresh" -eq 1 ] && [ -n "$(git status --porcelain -- '*.cpp' '*.h')" ]; then
  echo "tidy: --refresh needs the sources committed (the baseline names HEAD)" >&2
  exit 2
fi
# The compile commands without GCC's precompiled headers (cli/ precompiles CLI11), which clang
# cannot read: with them every such file fails to parse and shows no finding at all.
python3 - "$build/compile_commands.json" "$work/compile_commands.json" <<'PY'
import json, re, sys
commands = json.load(open(sys.argv[1]))
for c in commands:
    if "command" in c:
        c["command"] = re.sub(r" -include \S*cmake_pch\.hxx| -Winvalid-pch", "", c["command"])
json.dump(commands, open(sys.argv[2], "w"))
PY
# One clang-tidy per file, in parallel; each file's distinct findings counted.
xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy -p "$1" --quiet --extra-arg=-Wno-unknown-warning-option "$2" 2>/dev/null |
     grep -E "^[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[a-z.,-]+\]$" | sort -u | wc -l |
     sed "s|^|$2 |" > "$3/$(echo "$2" | tr / _).count"' _ "$work" {} "$work" < "$work/files"
cat "$work"/*.count | awk '{print $1, $2}' | sort > "$work/now"
if [ "$update" -eq 1 ]; then
  { echo "# at $(git rev-parse HEAD): clang-tidy findings per source file (scripts/tidy.sh --update); a file may not exceed its count"
    awk '$2 > 0' "$work/now"; } > "$baseline"
  echo "tidy: baseline written: $(awk '$2 > 0' "$work/now" | wc -l) files with findings, $(awk '{s += $2} END {print s + 0}' "$work/now") findings"
  exit 0
fi
status=0
while read -r file count; do
  allowed=$(awk -v f="$file" '$1 == f {print $2}' "$baseline")
  allowed=${allowed:-0}
  if [ "$count" -gt "$allowed" ]; then
    echo "tidy: $file has $count findings, the baseline allows $allowed; run clang-tidy -p $build $file"
    status=1
  fi
done < "$work/now"
total=$(awk '{s += $2} END {print s + 0}' "$work/now")
echo "tidy: $(wc -l < "$work/files") of $(wc -l < "$work/all") sources checked, $total findings in them"
if [ "$refresh" -eq 1 ] && [ "$status" -eq 0 ]; then
  # The checked files at their counts now, every other file at its old count.
  { echo "# at $(git rev-parse HEAD): clang-tidy findings per source file (scripts/tidy.sh --update, moved by --refresh); a file may not exceed its count"
    { awk '$2 > 0' "$work/now"
      grep -v '^#' "$baseline" | awk 'NR == FNR {checked[$1] = 1; next} !($1 in checked)' "$work/now" -
    } | sort; } > "$work/baseline"
  mv "$work/baseline" "$baseline"
  echo "tidy: baseline moved to $(git rev-parse --short HEAD)"
fi
exit $status
