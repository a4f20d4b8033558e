#!/usr/bin/env bash
# Every --json document yirage-plan prints validates against docs/schema/output.schema.json:
# the main form on training, inference, mixed and no-answer cases and every subcommand. A
# subcommand in `yirage-plan --help` that is not run here fails the test.
#
#   tests/json_schema_test.sh YIRAGE_PLAN SOURCE_DIR
set -u
plan=$1
src=$2
data=$src/data
work=${JSON_SCHEMA_WORK:-$(mktemp -d)}
[ -n "${JSON_SCHEMA_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
validator=""
for py in python3 /usr/bin/python3; do
  if "$py" -c "import jsonschema" 2>/dev/null; then validator=$py; break; fi
done
if [ -z "$validator" ]; then
  echo "FAIL: no Python with jsonschema (scripts/setup.sh installs python3-jsonschema)"
  exit 1
fi
C=$data/clusters
T=$data/tasks
n=0
run() {  # run NAME EXPECTED_EXIT ARGS...: writes $work/NAME.json
  local name=$1 want=$2
  shift 2
  "$plan" --json "$@" >"$work/$name.json" 2>"$work/$name.err"
  local code=$?
  if [ "$code" -ne "$want" ]; then
    echo "FAIL: $name exited $code, not $want: yirage-plan --json $*"
    cat "$work/$name.err"
    exit 1
  fi
  n=$((n + 1))
}
run training 0 "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" --top 3
run training_layout 0 "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" \
  --layout tp=8,pp=4,dp=1,mb=1,recompute=full,zero=1
run training_simulated 0 "$C/h100-4x8-rail.yaml" "$T/llama3-8b-train.yaml" --top 2 --simulate-top 1
run decode 0 "$C/h100-4x8-rail.yaml" "$T/llama3-70b-decode.yaml" --top 3
run prefill 0 "$C/h100-4x8-rail.yaml" "$T/llama3-70b-prefill.yaml" --top 3
run serve 0 "$C/dgx-h100.yaml" "$T/llama3-8b-serve.yaml" --top 3
run decode_layout 0 "$C/h100-4x8-rail.yaml" "$T/llama3-70b-decode.yaml" \
  --layout tp=8,pp=1,replicas=4,batch=16
run decode_no_answer 3 "$C/one-h100.yaml" "$T/llama3-70b-decode.yaml"
run mixed_training 0 "$C/mixed-h100-mi300x-910b.yaml" "$T/llama3-70b-train.yaml"
run mixed_decode 0 "$C/mixed-h100-mi300x-910b.yaml" "$T/llama3-70b-decode.yaml"
run simulate 0 simulate "$C/h100-4x8-rail.yaml" "$T/llama3-8b-train.yaml" --top 2
run simulate_decode 0 simulate "$C/h100-4x8-rail.yaml" "$T/llama3-8b-decode.yaml" --top 1
run capacity 0 capacity "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" --days 90
run capacity_types 0 capacity "$C/mixed-h100-mi300x-910b.yaml" "$T/llama3-8b-serve.yaml" --slo
run capacity_unreachable 3 capacity "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" --days 1 \
  --max-nodes 8
run step_validation 0 validate-training "$data/benchmarks/A100-80GB/train_steps_published.csv"
run step_validation_gate 1 validate-training --max-mape 1 \
  "$data/benchmarks/A100-80GB/train_steps_published.csv"
run iteration_validation 0 validate-training "$data/benchmarks/training/vtrain_a100.csv"
run devices 0 devices
run device 0 devices show H100-SXM
run collective 0 estimate --cluster "$C/h100-4x8-rail.yaml" --collective all_reduce --size 64MiB
run collective_sweep 0 estimate --cluster "$C/h100-4x8-rail.yaml" --collective all_gather \
  --sizes 1KiB:1MiB --launch graph
run operation 0 estimate --device H100-SXM --op rmsnorm_linear --shape 16x4096x6144
run comet 0 comet "$data/comet/arch.yaml" "$data/comet/problem.yaml" "$data/comet/mapping.yaml" \
  --constants "$data/comet/constants_worked_example.yaml"
run superoptimize 0 superoptimize "$data/programs/gemm_softmax.yaml" --device H100-SXM \
  --out "$work/ugraphs"

run check 0 check "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml"
run validation 0 validate --held-out "$data/benchmarks/H200x2/collectives_launch_passes.csv" \
  "$data/benchmarks/H100-SXM/ops.csv" "$data/benchmarks/H200/layers.csv" --per-kind \
  --max-mape 20 --max-small-mape 30
run validation_infer 0 validate "$data/benchmarks/H200/infer_steps.csv"
run validation_gate 1 validate --max-mape 1 "$data/benchmarks/H200/ops_casts.csv"
run calibration 0 calibrate "$data/benchmarks/H200x2/collectives.csv" "$data/benchmarks/H200/ops.csv"
run bench_plan 0 bench-plan "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" --repeat 1
run bench_simulate 0 bench-simulate "$C/h100-4x8-rail.yaml" "$T/llama3-8b-train.yaml"
run bench_superoptimize 0 bench-superoptimize "$data/programs/gemm_softmax.yaml" --threads 2
run codegen 0 codegen "$work/ugraphs/gemm_softmax.ugraph.json" --out "$work/kernels"
run sweep 0 sweep "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" --nodes 1:4
run sweep_decode 0 sweep "$C/h100-4x8-rail.yaml" "$T/llama3-70b-decode.yaml" --nodes 1,2 \
  --batch 8,64 --price-per-hour 3

# Refusals: two output forms at once, and --csv of an answer that is not a table.
"$plan" --json --yaml devices >/dev/null 2>"$work/refused.err"
if [ $? -ne 2 ] || ! grep -q "give one of --json, --yaml and --csv" "$work/refused.err"; then
  echo "FAIL: --json --yaml is not refused"; cat "$work/refused.err"; exit 1
fi
"$plan" --csv - check "$C/h100-4x8-rail.yaml" "$T/llama3-70b-train.yaml" >/dev/null \
  2>"$work/refused.err"
if [ $? -ne 2 ] || ! grep -q "is not a table" "$work/refused.err"; then
  echo "FAIL: --csv of check's summary is not refused"; cat "$work/refused.err"; exit 1
fi
# Every subcommand prints a document checked here.
covered=" devices estimate simulate comet superoptimize capacity validate-training check "
covered+=" validate calibrate bench-plan bench-simulate bench-superoptimize codegen sweep "
for sub in $("$plan" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF {print $1}'); do
  case "$covered" in
    *" $sub "*) ;;
    *) echo "FAIL: subcommand $sub is not covered by tests/json_schema_test.sh"; exit 1 ;;
  esac
done

"$validator" - "$src/docs/schema/output.schema.json" "$work"/*.json <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failed = 0
kinds = set()
for path in sys.argv[2:]:
    doc = json.load(open(path))
    kinds.add(doc.get("kind"))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        print("FAIL: %s: %s at %s" % (path.rsplit("/", 1)[-1], e.message[:200],
                                     "/".join(map(str, e.absolute_path))))
    failed += bool(errors)
missing = set(schema["properties"]["kind"]["enum"]) - kinds
if missing:
    print("FAIL: no document of kind %s was checked" % ", ".join(sorted(missing)))
    failed += 1
print("json schema: %d documents of %d kinds checked, %d invalid" % (len(sys.argv) - 2, len(kinds), failed))
sys.exit(1 if failed else 0)
PY
