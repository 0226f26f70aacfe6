#!/usr/bin/env bash
# The main job: build the toolchain and run a sample kernel through it
# (assemble, link; running arrives with pto-run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target pto-as pto-ld
SAMPLE=${1:-samples/vadd/vadd.pto}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "== pto-as $SAMPLE -o vadd.o"
"$BUILD_DIR"/asm/pto-as "$SAMPLE" -o "$OUT/vadd.o"
echo "== pto-ld --auto-sync vadd.o -o vadd.img -Map=vadd.map"
"$BUILD_DIR"/link/pto-ld --auto-sync "$OUT/vadd.o" -o "$OUT/vadd.img" -Map="$OUT/vadd.map"
cat "$OUT/vadd.map"
