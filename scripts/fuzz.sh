#!/usr/bin/env bash
# The fuzz bench: builds the libFuzzer targets of tests/fuzz/ with clang (AddressSanitizer and
# UndefinedBehaviorSanitizer on) in build-fuzz/, seeds each target's corpus from the files of
# data/ and tests/ into a temporary folder, runs each target for N seconds, one after the
# other, and prints one row per target: executions, executions per second, corpus size and
# findings. A finding (crash, sanitizer report, uncaught exception other than InputError,
# timeout, out of memory) is kept under build-fuzz/findings/<target>/; reproduce it with
#   build-fuzz/tests/fuzz/<target>_fuzz build-fuzz/findings/<target>/<file>
# Exit status: 0 when no target found anything, 1 otherwise.
#
#   scripts/fuzz.sh [--seconds N] [--build-only] [target...]   (targets: units device cluster
#                                                              task measured program cli; all by
#                                                              default)
# `cli` is end to end: a cluster, a task and a plan or program file through the main form,
# simulate, capacity, --plan and superoptimize (tests/fuzz/cli_fuzz.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
build_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(units device cluster task measured program cli)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${all[*]})" >&2; exit 2; }
done

build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DYIRAGE_FUZZ=ON \
    -DYIRAGE_WERROR=OFF -DYIRAGE_BUILD_GUI=OFF -DYIRAGE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "${FUZZ_BUILD_JOBS:-$(nproc)}" --target "${targets[@]/%/_fuzz}"
[ "$build_only" -eq 0 ] || exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Seeds: every file of the kind from data/ and tests/ (large CSV files cut to their first
# 80 lines, so that inputs stay small and fast).
seed() {  # seed TARGET FILE...
  local dir="$work/$1" i=0 f
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    head -n 80 "$f" > "$dir/seed_$i"
    i=$((i + 1))
  done
}
count_findings() {  # the artifacts libFuzzer wrote under DIR
  find "$1" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) |
    wc -l
}
seed_target() {
  case "$1" in
    units)
      mkdir -p "$work/units"
      grep -rhoE '[0-9][0-9.eE+-]* ?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P|E|m|u|µ|n|p)?(B/s|b/s|bps|B|b|FLOPS|FLOP/s|FLOP|OPS|TOPS|s|ms|us|ns|min|h|Hz|W|J|USD/h|req/s|tok/s)\b' \
        data/devices data/clusters data/tasks tests/golden 2>/dev/null | sort -u | head -n 400 |
        split -l 1 - "$work/units/seed_" ;;
    device) seed device data/devices/*.yaml ;;
    cluster) seed cluster data/clusters/*.yaml $(find tests -name '*cluster*.yaml' | sort) ;;
    task) seed task data/tasks/*.yaml $(find tests -name '*task*.yaml' | sort) ;;
    measured) seed measured $(find data/benchmarks tests -name '*.csv' | sort) ;;
    program) seed program data/programs/*.yaml $(find tests -name 'program*.yaml' | sort) ;;
    cli)  # a selector byte, then cluster %% task %% plan-or-program, from the bundled files
      mkdir -p "$work/cli"
      local i=0 c t third
      # (not the 1,024-GPU example: simulating it instrumented takes half a minute)
      for c in $(ls data/clusters/*.yaml | grep -v h100-128x8); do
        for t in data/tasks/*.yaml; do
          third=$(ls data/programs/*.yaml | sed -n "$((i % 7 + 1))p")
          [ $((i % 5)) -eq 3 ] && third=tests/golden/plan/plan_file/plan.yaml
          # programs at small shapes (every dimension of 1024 or more cut to 64), so that an
          # execution verifies in milliseconds rather than seconds
          { printf "\\$(printf '%03o' $((i % 5)))"; cat "$c"; echo "%%"; cat "$t"; echo "%%";
            sed -E 's/\b[0-9]{4,}\b/64/g' "$third"; } > "$work/cli/seed_$i"
          i=$((i + 1))
        done
      done ;;
  esac
}

stat_of() {  # stat_of NAME LOG: a value of -print_final_stats
  grep -oE "stat::$1: *[0-9]+" "$2" | tail -n 1 | grep -oE '[0-9]+$' || echo 0
}

rows=()
total=0
for t in "${targets[@]}"; do
  seed_target "$t"
  findings="$build/findings/$t"
  mkdir -p "$findings"
  before=$(count_findings "$findings")
  seeds=$(find "$work/$t" -type f | wc -l)
  echo "fuzz.sh: $t: $seeds seeds, ${seconds}s" >&2
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GiB is a memory blow-up.
  # End to end, 60 s and 8 GiB: a whole search, or a superoptimization at its 2 s limit
  # and its verification (refused above 8 GiB), instrumented.
  timeout=10; max_len=16384; rss=2048
  [ "$t" = cli ] && { timeout=60; max_len=65536; rss=8192; }
  ASAN_OPTIONS=detect_leaks=1 nice -n 19 "$build/tests/fuzz/${t}_fuzz" \
    -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss" -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$findings/" "$work/$t" > "$work/$t.log" 2>&1 || true
  execs=$(stat_of number_of_executed_units "$work/$t.log")
  rate=$(stat_of average_exec_per_sec "$work/$t.log")
  corpus=$(find "$work/$t" -type f | wc -l)
  found=$(( $(count_findings "$findings") - before ))
  if [ "$found" -gt 0 ]; then
    cp "$work/$t.log" "$findings/log-$(date +%s).txt"
    grep -E 'ERROR|runtime error|terminate|==[0-9]+==' "$work/$t.log" | head -n 5 >&2 || true
  fi
  total=$((total + found))
  rows+=("$(printf '%-10s %8s %12s %8s %8s %9s' "$t" "$seconds" "$execs" "$rate" "$corpus" "$found")")
done

printf '%-10s %8s %12s %8s %8s %9s\n' target seconds executions exec/s corpus findings
printf '%s\n' "${rows[@]}"
[ "$total" -eq 0 ]
