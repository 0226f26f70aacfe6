#!/usr/bin/env bash
# The unit and lit tests under AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer):
# builds <repo>/build-asan with -DPTO_SANITIZE=address,undefined at -O1 without debug info (reports
# name functions; the build stays short enough for CI) and no benchmarks, and runs
# ctest there. Any sanitizer report fails the test that caused it. The long numeric sweeps (the
# differential smoke, the sampled exp check, the corpus-wide reference comparison) run in the
# normal build only, to keep CI within its time budget (SANITIZE_EXCLUDE overrides).
#   SANITIZE_BUILD_DIR=dir   build tree (default <repo>/build-asan)
#   PTO_SANITIZE=list        sanitizers (default address,undefined)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-asan}
jobs=$(nproc)
start=$(date +%s)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g0" \
  -DPTO_SANITIZE="${PTO_SANITIZE:-address,undefined}" -DPTO_WERROR=ON -DPTO_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$jobs"
built=$(date +%s)
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -E "${SANITIZE_EXCLUDE:-diff-smoke|VecMath|RefDiff}"
echo "sanitize-test: OK (build $((built - start)) s, tests $(($(date +%s) - built)) s)"
