#!/usr/bin/env bash
# Fuzz smoke test: builds the libFuzzer targets with clang-14 in build-fuzz/ (or reuses a tree
# already configured with -DPTO_BUILD_FUZZ=ON, such as scripts/sanitize-test.sh's) and runs them
# for ${FUZZ_SECONDS:-30} seconds over a scratch copy of tests/fuzz/corpus (the committed seeds
# are never modified). Fails on any crash, timeout, leak or out-of-memory; the reproducer is left
# in build-fuzz/fuzz-artifacts/. Skips (exit 0) when clang++-14 is not installed.
#   FUZZ_SECONDS=N      run time (default 30)
#   FUZZ_BUILD_DIR=dir  build tree (default <repo>/build-fuzz)
#   FUZZ_CXX_FLAGS=...  extra compiler flags for that configuration (CMAKE_CXX_FLAGS)
#   FUZZ_SEED=N         libFuzzer's random seed (default 1). With a fixed seed every run walks the
#                       same sequence of inputs, so a slower machine runs a prefix of what a faster
#                       one passed: CI is reproducible. Long campaigns use other seeds (docs/development.md).
#   FUZZ_RUNS_PARSER/LEXER/OBJECT/IMAGE/NPY=N
#                       at most N inputs per target (defaults: a little under what a local run of
#                       the time budget passed with seed 1), so a faster machine does not walk past
#                       the verified prefix either.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! command -v clang++-14 >/dev/null 2>&1 || ! command -v clang-14 >/dev/null 2>&1; then
  echo "fuzz-smoke: clang-14/clang++-14 not found, skipping"
  exit 0
fi

build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-30}
seed=${FUZZ_SEED:-1}

if ! grep -qs '^PTO_BUILD_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" || [ -n "${FUZZ_CXX_FLAGS:-}" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPTO_BUILD_FUZZ=ON -DPTO_BUILD_TESTS=OFF -DPTO_BUILD_BENCH=OFF \
    ${FUZZ_CXX_FLAGS:+"-DCMAKE_CXX_FLAGS=$FUZZ_CXX_FLAGS"}
fi
cmake --build "$build" --target fuzz-parser fuzz-lexer fuzz-object fuzz-npy fuzz-image pto-as pto-ld -j2

artifacts=$build/fuzz-artifacts
work=$(mktemp -d "${TMPDIR:-/tmp}/pto-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"

# Each target runs on its own input folder and writes only its own artifacts, so the targets run in
# two lanes side by side (one per core): parser, lexer and npy in one, object and image in the
# other. The run caps and time budgets are per target, as before, so a lane sees the same inputs
# it would alone; the wall time halves on two cores.
run_target() { # name corpus-dir runs seconds max-len timeout [extra libFuzzer args...]
  local name=$1 corpus=$2 runs=$3 secs=$4 maxlen=$5 timeout=$6
  shift 6
  echo "fuzz-smoke: running $name for ${secs}s"
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
    "$build/tests/fuzz/$name" "$corpus" "$@" \
    -seed="$seed" -runs="$runs" -max_total_time="$secs" -max_len="$maxlen" -timeout="$timeout" -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$name-" -print_final_stats=1
}

lane_text() {
  run_target fuzz-parser "$work/corpus" "${FUZZ_RUNS_PARSER:-5000}" "$seconds" 4096 10 \
    -dict="$root/tests/fuzz/pto.dict" || { echo fuzz-parser >"$work/failed-text"; return 1; }
  # The hand-written lexer against ANTLR's, from the parser's seeds (asm/parse/Lexer.h).
  mkdir -p "$work/corpus-lexer"
  cp "$root"/tests/fuzz/corpus/* "$work/corpus-lexer/"
  run_target fuzz-lexer "$work/corpus-lexer" "${FUZZ_RUNS_LEXER:-20000}" "$((seconds / 2))" 4096 10 \
    -dict="$root/tests/fuzz/pto.dict" || { echo fuzz-lexer >"$work/failed-text"; return 1; }
  mkdir -p "$work/corpus-npy"
  # A seed .npy written by hand: magic, version 1.0, header length, dict, then 4 f32 values.
  printf "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }%*s\n" 52 "" \
    >"$work/corpus-npy/seed.npy"
  printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >>"$work/corpus-npy/seed.npy"
  run_target fuzz-npy "$work/corpus-npy" "${FUZZ_RUNS_NPY:-800000}" "$((seconds / 2))" 4096 10 ||
    { echo fuzz-npy >"$work/failed-text"; return 1; }
}

lane_binary() {
  # Object seeds are made fresh by this build's pto-as, so they always match the format.
  mkdir -p "$work/corpus-object"
  ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-as" "$root/samples/vadd/vadd.pto" -o "$work/corpus-object/vadd.o"
  for k in "$root"/tests/lit/forms/seed_*.pto; do
    ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-as" "$k" -o "$work/corpus-object/$(basename "$k" .pto).o" || true
  done
  run_target fuzz-object "$work/corpus-object" "${FUZZ_RUNS_OBJECT:-130000}" "$seconds" 4096 10 ||
    { echo fuzz-object >"$work/failed-binary"; return 1; }
  # Image seeds: the samples assembled and linked by this build's tools.
  mkdir -p "$work/corpus-image" "$work/objects"
  for k in "$root"/samples/*/*.pto; do
    n=$(basename "$k" .pto)
    ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-as" "$k" -o "$work/objects/$n.o" &&
      ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-ld" --auto-sync "$work/objects/$n.o" -o "$work/corpus-image/$n.img" || true
  done
  run_target fuzz-image "$work/corpus-image" "${FUZZ_RUNS_IMAGE:-160000}" "$seconds" 16384 20 ||
    { echo fuzz-image >"$work/failed-binary"; return 1; }
}

lane_text >"$work/lane-text.log" 2>&1 &
text_pid=$!
lane_binary >"$work/lane-binary.log" 2>&1 &
binary_pid=$!
status=0
wait "$text_pid" || status=$?
wait "$binary_pid" || status=$((status == 0 ? $? : status))
cat "$work/lane-text.log" "$work/lane-binary.log"

if [ "$status" -ne 0 ]; then
  echo "fuzz-smoke: FAILED (exit $status); reproducer(s) in $artifacts:" >&2
  ls -l "$artifacts" >&2 || true
  for lane in text binary; do
    [ -f "$work/failed-$lane" ] || continue
    failed=$(cat "$work/failed-$lane")
    echo "fuzz-smoke: reproduce with: $build/tests/fuzz/$failed <file>" >&2
  done
  exit 1
fi
echo "fuzz-smoke: OK"
