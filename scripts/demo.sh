#!/usr/bin/env bash
# The main job: build the toolchain and run a sample kernel through it.
# (pto-as today: parse + verify + print the Kernel IR; linking and running follow.)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target pto-as
SAMPLE=${1:-samples/vadd/vadd.pto}
echo "== pto-as --verify-only $SAMPLE"
"$BUILD_DIR"/asm/pto-as --verify-only "$SAMPLE" && echo "verified for its target arch"
echo "== pto-as --emit=ir $SAMPLE"
"$BUILD_DIR"/asm/pto-as --emit=ir "$SAMPLE"
