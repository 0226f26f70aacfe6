#!/usr/bin/env bash
# Builds everything with -Werror and runs every test: unit (GoogleTest), tool (lit + FileCheck)
# and a short libFuzzer smoke run. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
if [ -x scripts/fuzz-smoke.sh ] && [ "${SKIP_FUZZ:-0}" != 1 ]; then
  ./scripts/fuzz-smoke.sh
fi
echo "all tests passed"
