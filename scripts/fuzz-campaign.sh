#!/usr/bin/env bash
# A long fuzzing campaign (docs/development.md, "Fuzzing"): every libFuzzer target side by side at
# nice 19, each stopped (SIGINT, so libFuzzer prints its final statistics) once it has used
# CPU_SECONDS of CPU time. CPU time, not wall time, is what the campaign measures: on a shared
# machine a target at nice 19 may get a small share of a core, and an hour on the clock would
# not be an hour of fuzzing. For the same reason the per-input timeout is wall-clock generous
# (libFuzzer's -timeout is wall time): a starved process must not look like a hang; slow units
# are still reported (-report_slow_units) and can be replayed alone.
#
# Usage: scripts/fuzz-campaign.sh [OUT_DIR]     (default /tmp/pto-fuzz-campaign)
#   CPU_SECONDS=3600   CPU time per target
#   FUZZ_SEED=N        libFuzzer's -seed (default: today's date as YYYYMMDD)
#   TARGETS="parser lexer object image npy"
# OUT_DIR keeps each target's corpus (reused by the next campaign), log and artifacts. Exits 1 if
# any target stopped on a crash, leak, out-of-memory or timeout (its reproducer is in
# OUT_DIR/artifacts), and prints a table of the figures. Builds build-fuzz/ through
# scripts/fuzz-smoke.sh (which also checks every target once).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-/tmp/pto-fuzz-campaign}
cpu_limit=${CPU_SECONDS:-3600}
seed=${FUZZ_SEED:-$(date +%Y%m%d)}
targets=${TARGETS:-parser lexer object image npy}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}

FUZZ_SECONDS=${FUZZ_SMOKE_SECONDS:-5} FUZZ_BUILD_DIR=$build "$root/scripts/fuzz-smoke.sh"
mkdir -p "$out/artifacts"

# Seeds: the repository's kernels as text, objects and images made by this build's tools.
seed_corpora() {
  local i=0 f
  mkdir -p "$out/parser" "$out/lexer" "$out/object" "$out/image" "$out/npy"
  cp "$root"/tests/fuzz/corpus/* "$out/parser/"
  cp "$root"/tests/fuzz/corpus/* "$out/lexer/"
  for f in "$root"/samples/*/*.pto "$root"/tests/lit/*/*.pto "$root"/../shared/corpus/*/*.pto; do
    [ -f "$f" ] || continue
    i=$((i + 1))
    [ "$(stat -c %s "$f")" -le 16384 ] && cp "$f" "$out/parser/k$i.pto"
    ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-as" "$f" -o "$out/object/k$i.o" 2>/dev/null &&
      ASAN_OPTIONS=detect_leaks=0 "$build/bin/pto-ld" --auto-sync "$out/object/k$i.o" \
        -o "$out/image/k$i.img" 2>/dev/null || true
  done
  printf "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }%*s\n" 52 "" \
    > "$out/npy/seed.npy"
  printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >> "$out/npy/seed.npy"
}
[ -d "$out/parser" ] || seed_corpora
# A campaign directory from before the lexer target: its seeds are the parser's.
[ -d "$out/lexer" ] || { mkdir -p "$out/lexer" && cp "$root"/tests/fuzz/corpus/* "$out/lexer/"; }

max_len() {
  case $1 in
  parser | lexer) echo 8192 ;;
  npy) echo 4096 ;;
  *) echo 16384 ;;
  esac
}

# One target until it has used $cpu_limit CPU seconds; its CPU time is kept in $out/<t>.cpu.
run_target() {
  local t=$1 extra=() pid tck cpu fields
  case $t in parser | lexer) extra=(-dict="$root/tests/fuzz/pto.dict") ;; esac
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 nice -n 19 "$build/tests/fuzz/fuzz-$t" "$out/$t" \
    "${extra[@]}" -seed="$seed" -max_len="$(max_len "$t")" -max_total_time=1000000 -timeout=600 \
    -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 \
    >"$out/$t.log" 2>&1 &
  pid=$!
  tck=$(getconf CLK_TCK)
  while kill -0 "$pid" 2>/dev/null; do
    read -r -a fields <"/proc/$pid/stat" || break
    cpu=$(((fields[13] + fields[14]) / tck))
    echo "$cpu" >"$out/$t.cpu"
    if [ "$cpu" -ge "$cpu_limit" ]; then
      kill -INT "$pid"
      break
    fi
    sleep 10
  done
  wait "$pid" || true
}

echo "fuzz-campaign: $targets, $cpu_limit CPU seconds each, seed $seed, in $out"
for t in $targets; do
  run_target "$t" &
done
wait

failed=0
printf '%-8s %8s %12s %10s %9s %8s  %s\n' target cpu-s inputs new-units coverage peak-MB result
for t in $targets; do
  final() { grep -o "stat::$1: *[0-9]*" "$out/$t.log" | grep -o '[0-9]*$' | tail -1; }
  cov=$(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1 | grep -o '[0-9]*$')
  result=clean
  if grep -q -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:' "$out/$t.log"; then
    result="FAILED (see $t.log)"
    failed=1
  fi
  printf '%-8s %8s %12s %10s %9s %8s  %s\n' "$t" "$(cat "$out/$t.cpu")" \
    "$(final number_of_executed_units)" "$(final new_units_added)" "${cov:-?}" \
    "$(final peak_rss_mb)" "$result"
done
exit "$failed"
