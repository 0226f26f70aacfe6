#!/usr/bin/env bash
# The main job: build the toolchain and run a sample kernel through it: assemble, link (with
# automatic synchronisation) and run it on the cpu backend, printing the result, then on the
# npu model, printing its cycle summary.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target pto-as pto-ld pto-run
SAMPLE=${1:-samples/vadd/vadd.pto}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "== pto-as $SAMPLE -o vadd.o"
"$BUILD_DIR"/bin/pto-as "$SAMPLE" -o "$OUT/vadd.o"
echo "== pto-ld --auto-sync vadd.o -o vadd.img -Map=vadd.map"
"$BUILD_DIR"/bin/pto-ld --auto-sync "$OUT/vadd.o" -o "$OUT/vadd.img" -Map="$OUT/vadd.map"
cat "$OUT/vadd.map"
echo "== pto-run vadd.img --kernel vadd --random x=64x64:f32 --random y=64x64:f32 --seed 7"
# Shows the first four elements of x, y and the result z = x + y, then the run summary.
"$BUILD_DIR"/bin/pto-run "$OUT/vadd.img" --kernel vadd --random x=64x64:f32 --random y=64x64:f32 \
  --zeros z=64x64:f32 --seed 7 --print x --print y --print z |
  awk '/^%/ {name = $1; getline; printf "%-4s %s %s %s %s ...\n", name, $1, $2, $3, $4; next} /^pto-run/ {print}'
echo "== pto-run vadd.img ... --backend npu   (the same kernel on the model of the AI core)"
"$BUILD_DIR"/bin/pto-run "$OUT/vadd.img" --kernel vadd --random x=64x64:f32 --random y=64x64:f32 \
  --zeros z=64x64:f32 --seed 7 --backend npu --quiet
