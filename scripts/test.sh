#!/usr/bin/env bash
# Checks the C++ formatting (scripts/check-format.sh), builds everything with -Werror and runs every test: unit (GoogleTest), tool (lit + FileCheck) and Python (pytest, through ctest),
# then both again under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize-test.sh;
# SKIP_SANITIZE=1 skips it), then a short libFuzzer smoke run in that same tree when clang built it. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/check-format.sh
BUILD_DIR=${BUILD_DIR:-build}
# In CI (CI set, as .ci/run does) the tree has no debug info: the same -O2 code (-g never changes
# it), built about 30% faster, which keeps CI inside its 30 minutes. Locally: RelWithDebInfo.
flags=()
# CI also draws fewer op-model examples (50 per op and dtype, shared between its arches, instead
# of 100), which keeps the whole run inside CI's 30 minutes.
[ -z "${CI:-}" ] || flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DPTO_MODEL_EXAMPLES=50)
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO_WERROR=ON "${flags[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
# The Python module's tests (tests/python, samples/python) run inside ctest; setup-deps installed
# what they need, so a tree without them is an error here, not a silent skip.
if ! ctest --test-dir "$BUILD_DIR" -N -R '^python-(tests|sample)$' | grep -q 'Total Tests: 2'; then
  echo "test.sh: the Python tests are not registered (is the pto module built? see docs/python.md)" >&2
  exit 1
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
# Differential smoke: random kernels (integer, f32/f16/bf16 scalar code, calls, tiles) against
# their own evaluation on both backends and the reference interpreter (docs/development.md). A
# failure prints the seed and a reduced reproducer.
DIFF_FLAGS=${DIFF_FLAGS:---f16 --tiles}
# shellcheck disable=SC2086
"$BUILD_DIR"/tests/diff/pto-diff --seconds "${DIFF_SECONDS:-30}" --seeds 0 --start "${DIFF_START:-2000000}" \
  -j"$(nproc)" $DIFF_FLAGS
if [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  ./scripts/sanitize-test.sh
fi
if [ -x scripts/fuzz-smoke.sh ] && [ "${SKIP_FUZZ:-0}" != 1 ]; then
  # The sanitizer tree holds the fuzz targets when it was built with clang: no third build.
  san=${SANITIZE_BUILD_DIR:-build-san}
  if [ "${SKIP_SANITIZE:-0}" != 1 ] && grep -qs '^PTO_BUILD_FUZZ:BOOL=ON$' "$san/CMakeCache.txt"; then
    FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-$san} ./scripts/fuzz-smoke.sh
  else
    ./scripts/fuzz-smoke.sh
  fi
fi
echo "all tests passed"
