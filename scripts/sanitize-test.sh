#!/usr/bin/env bash
# The unit and lit tests under AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer):
# builds <repo>/build-san with -DPTO_SANITIZE=address,undefined at -O1 without debug info (reports
# name functions; the build stays short enough for CI) and no benchmarks, and runs ctest there.
# Any sanitizer report fails the test that caused it. With clang-14 installed the tree is a clang
# one that also holds the libFuzzer targets (-DPTO_BUILD_FUZZ=ON), so scripts/fuzz-smoke.sh can
# run in it without a third build (scripts/test.sh does that); otherwise it is a gcc tree.
# The long numeric sweeps (the differential smoke, the sampled exp check, the corpus-wide reference
# comparison) run in the normal build only, to keep CI within its time budget (SANITIZE_EXCLUDE
# overrides).
#   SANITIZE_BUILD_DIR=dir   build tree (default <repo>/build-san)
#   PTO_SANITIZE=list        sanitizers (default address,undefined)
#   SANITIZE_GCC=1           build with the default compiler and without the fuzz targets
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-san}
jobs=$(nproc)
start=$(date +%s)
fuzz=()
if [ "${SANITIZE_GCC:-0}" != 1 ] && command -v clang++-14 >/dev/null 2>&1 && command -v clang-14 >/dev/null 2>&1; then
  export CC=clang-14 CXX=clang++-14
  fuzz=(-DPTO_BUILD_FUZZ=ON)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g0" \
  -DPTO_SANITIZE="${PTO_SANITIZE:-address,undefined}" -DPTO_WERROR=ON -DPTO_BUILD_BENCH=OFF "${fuzz[@]}" >/dev/null
cmake --build "$build" -j"$jobs"
built=$(date +%s)
# The lit tests' syntax-only compiles of exported C++ run in the normal tree only (tests/lit/lit.cfg.py).
PTO_LIT_SKIP_CXX_SYNTAX=${PTO_LIT_SKIP_CXX_SYNTAX:-1} \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -E "${SANITIZE_EXCLUDE:-diff-smoke|VecMath|RefDiff}"
echo "sanitize-test: OK (build $((built - start)) s, tests $(($(date +%s) - built)) s)"
