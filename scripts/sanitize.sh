#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer: configures
# build-asan/ (GCC, -O1, YIRAGE_SANITIZE=ON), builds it and runs ctest there. Any sanitizer
# report fails the test that caused it (undefined behaviour aborts, it is never only logged).
# Warnings are not errors here: GCC warns differently at -O1 with instrumentation, and the
# Release build of scripts/test.sh already holds the code to -Werror.
#
#   scripts/sanitize.sh [ctest arguments...]     e.g. scripts/sanitize.sh -R golden/
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-asan
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DYIRAGE_SANITIZE=ON -DYIRAGE_WERROR=OFF
fi
cmake --build "$build" -j "${SANITIZE_BUILD_JOBS:-$(nproc)}"

# No detect_stack_use_after_return: SimGrid switches between its actors' stacks, which ASan's
# fake stacks cannot follow (false reports in SimGrid's ActorImpl::init).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export QT_QPA_PLATFORM=offscreen
# Left out: the three backend tests that superoptimize every bundled program again before
# compiling its kernels with g++, nvcc and hipcc (one to two minutes each in Release; still
# running after eight minutes each instrumented). The same search runs here in superoptimizer_test and the
# KnownUgraph tests, and the emitters in the other backend tests.
slow='^(CpuBackend|CudaBackend|HipBackend)\.EveryBundledProgram'
# examples/simulate_all (150-210 s in Release) ran past 900 s instrumented on a 2-core machine.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 1800 -E "$slow" "$@"
