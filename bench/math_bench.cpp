// pto-bench-run's math comparisons: TEXP, TLOG, TSQRT, TRSQRT, TRECIP, TDIV f32 and the f16
// unary ops vs libmvec or plain vector loops on the same inputs; the row and column reductions
// and broadcasts vs memcpy (the header comment of run_bench.cpp says what each reference is).
#include "bench/RunBench.h"

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>
#include <tuple>

namespace pto::bench {

// ------------------------------------------------------------------ transcendental: TEXP f32
// The reference is glibc's libmvec expf on eight AVX2 lanes (_ZGVdN8v_expf), the vectorised expf
// the compiler calls for `#pragma omp simd` loops: what a hand-written C++ kernel gets.
#if defined(__x86_64__)
extern "C" __m256 _ZGVdN8v_expf(__m256);
__attribute__((target("avx2,fma"))) void libmvecExp(float* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _ZGVdN8v_expf(_mm256_loadu_ps(x + i)));
  benchmark::ClobberMemory();
}

void compareExp() {
  constexpr uint32_t kR = 128, kC = 256;
  TileBench e(isa::OpId::TEXP, {DType::F32, DType::F32}, kR, kC);
  if (!e.ready()) return gSummary.push_back("TEXP f32: no kernel");
  const float* x =
      reinterpret_cast<const float*>(e.vec.data() + e.inst.tiles[1].offset); // the same inputs
  std::vector<float> y(size_t{kR} * kC);
  compare(
      "TEXP f32 128x256", "libmvec expf, 8 AVX2 lanes, same inputs", [&] { e.run(); },
      [&] { libmvecExp(y.data(), x, y.size()); });
}

// ------------------------------------------------------------------ log, sqrt, 1/sqrt, 1/x, x/y
// Each vectorised f32 op (runtime/cpu/VecMath.h) beside the strongest plain code for the same
// job on the same inputs: libmvec's logf on eight AVX2 lanes for TLOG; a vsqrtps loop for TSQRT;
// vsqrtps then vdivps (1.0f / sqrtf(x), the f32 code a C++ programmer writes; the kernel keeps
// the portable double computation, so it does more) for TRSQRT; a vdivps loop for TRECIP and TDIV.
extern "C" __m256 _ZGVdN8v_logf(__m256);
__attribute__((target("avx2,fma"))) void libmvecLog(float* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _ZGVdN8v_logf(_mm256_loadu_ps(x + i)));
  benchmark::ClobberMemory();
}
__attribute__((target("avx2"))) void plainSqrt(float* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
  benchmark::ClobberMemory();
}
__attribute__((target("avx2"))) void plainRsqrt(float* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i,
                     _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(_mm256_loadu_ps(x + i))));
  benchmark::ClobberMemory();
}
__attribute__((target("avx2"))) void plainRecip(float* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(x + i)));
  benchmark::ClobberMemory();
}
__attribute__((target("avx2"))) void plainDiv(float* z, const float* x, const float* y, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(z + i, _mm256_div_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  benchmark::ClobberMemory();
}

void compareMath() {
  constexpr uint32_t kR = 128, kC = 256;
  constexpr size_t kN = size_t{kR} * kC;
  std::vector<float> y(kN);
  // Positive inputs over several binades (the benchmark's default fill has negatives, which
  // log, sqrt and 1/sqrt send to their slow NaN paths).
  auto positive = [](TileBench& b, int tile) {
    auto* x =
        reinterpret_cast<float*>(b.vec.data() + b.inst.tiles[static_cast<size_t>(tile)].offset);
    for (size_t i = 0; i < kN; ++i)
      x[i] = 0.01f + 0.37f * static_cast<float>(i % 997);
    return x;
  };
  const std::pair<isa::OpId, const char*> unary[] = {
      {isa::OpId::TLOG, "libmvec logf, 8 AVX2 lanes, same inputs"},
      {isa::OpId::TSQRT, "plain vsqrtps loop, same inputs"},
      {isa::OpId::TRSQRT, "plain 1.0f / sqrtf loop (vsqrtps, vdivps), same inputs"},
      {isa::OpId::TRECIP, "plain vdivps loop, same inputs"}};
  for (auto [op, refName] : unary) {
    TileBench b(op, {DType::F32, DType::F32}, kR, kC);
    const std::string what = std::string(isa::info(op).mnemonic) + " f32 128x256";
    if (!b.ready()) {
      gSummary.push_back(what + ": no kernel");
      continue;
    }
    const float* x = positive(b, 1);
    void (*ref)(float*, const float*, size_t) = op == isa::OpId::TLOG     ? libmvecLog
                                                : op == isa::OpId::TSQRT  ? plainSqrt
                                                : op == isa::OpId::TRSQRT ? plainRsqrt
                                                                          : plainRecip;
    compare(
        what, refName, [&] { b.run(); }, [&] { ref(y.data(), x, kN); });
  }
  TileBench d(isa::OpId::TDIV, {DType::F32, DType::F32, DType::F32}, kR, kC);
  if (!d.ready()) return gSummary.push_back("TDIV f32: no kernel");
  const float *x0 = positive(d, 1), *x1 = positive(d, 2);
  compare(
      "tdiv f32 128x256", "plain vdivps loop, same inputs", [&] { d.run(); },
      [&] { plainDiv(y.data(), x0, x1, kN); });
}

// ------------------------------------------------------------------ f16 exp, log, sqrt, 1/sqrt,
// 1/x The f16 ops beside what a C++ programmer writes for them with F16C and the f32 code above:
// eight halves widened (vcvtph2ps), the f32 function (libmvec's expf / logf, vsqrtps, 1.0f / sqrtf,
// vdivps), narrowed (vcvtps2ph, round to nearest even).
template <__m256 (*F)(__m256)>
__attribute__((target("avx2,fma,f16c"))) void plainF16(uint16_t* y, const uint16_t* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(F(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  benchmark::ClobberMemory();
}
__attribute__((target("avx2"))) __m256 vSqrt(__m256 v) {
  return _mm256_sqrt_ps(v);
}
__attribute__((target("avx2"))) __m256 vRsqrt(__m256 v) {
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(v));
}
__attribute__((target("avx2"))) __m256 vRecip(__m256 v) {
  return _mm256_div_ps(_mm256_set1_ps(1.0f), v);
}

void compareF16Math() {
  constexpr uint32_t kR = 128, kC = 256;
  constexpr size_t kN = size_t{kR} * kC;
  std::vector<uint16_t> y(kN);
  const std::tuple<isa::OpId, const char*, void (*)(uint16_t*, const uint16_t*, size_t)> ops[] = {
      {isa::OpId::TEXP, "F16C + libmvec expf, 8 lanes, same inputs", plainF16<_ZGVdN8v_expf>},
      {isa::OpId::TLOG, "F16C + libmvec logf, 8 lanes, same inputs", plainF16<_ZGVdN8v_logf>},
      {isa::OpId::TSQRT, "F16C + vsqrtps loop, same inputs", plainF16<vSqrt>},
      {isa::OpId::TRSQRT, "F16C + 1.0f / sqrtf loop, same inputs", plainF16<vRsqrt>},
      {isa::OpId::TRECIP, "F16C + vdivps loop, same inputs", plainF16<vRecip>}};
  for (auto [op, refName, ref] : ops) {
    TileBench b(op, {DType::F16, DType::F16}, kR, kC);
    const std::string what = std::string(isa::info(op).mnemonic) + " f16 128x256";
    if (!b.ready()) {
      gSummary.push_back(what + ": no kernel");
      continue;
    }
    // Positive finite halves of every binade (0x0001..0x7bff), as the f32 inputs above; for exp
    // halves in [-10, 10], where neither exp overflows f16 nor libmvec takes its special path.
    auto* x = reinterpret_cast<uint16_t*>(b.vec.data() + b.inst.tiles[1].offset);
    for (size_t i = 0; i < kN; ++i)
      x[i] = op == isa::OpId::TEXP
                 ? rt::cpu::f2h(-10.0f + 20.0f * static_cast<float>((i * 40503u) % 65536) / 65536)
                 : static_cast<uint16_t>(1 + (i * 40503u) % 0x7bff);
    compare(
        what, refName, [&] { b.run(); }, [&] { ref(y.data(), x, kN); });
  }
}
// ------------------------------------------------------------------ row and column reductions
// A reduction reads its source once and writes a row or a column: its floor is reading the
// source, so the reference is a memcpy of the source tile's bytes (reads + writes = twice them).
// A row or column expand op reads a tile and writes one (its second operand is one column or
// row): the same memcpy touches the same bytes.
void compareReduce() {
  constexpr uint32_t kR = 128, kC = 256;
  Aligned x(size_t{kR} * kC * 4), y(size_t{kR} * kC * 4);
  const std::pair<isa::OpId, DType> ops[] = {
      {isa::OpId::TROWSUM, DType::F32},       {isa::OpId::TROWMAX, DType::F32},
      {isa::OpId::TCOLSUM, DType::F32},       {isa::OpId::TCOLMAX, DType::F32},
      {isa::OpId::TROWSUM, DType::F16},       {isa::OpId::TCOLSUM, DType::F16},
      {isa::OpId::TROWEXPANDSUB, DType::F32}, {isa::OpId::TCOLEXPANDMUL, DType::F32},
      {isa::OpId::TROWEXPANDDIV, DType::F16}};
  for (auto [op, dt] : ops) {
    // The expand ops read a second operand too (one column or row of it counts).
    const bool expand = std::string(isa::info(op).mnemonic).find("expand") != std::string::npos;
    TileBench b(op, expand ? std::vector<DType>{dt, dt, dt} : std::vector<DType>{dt, dt}, kR, kC);
    const std::string what =
        std::string(isa::info(op).mnemonic) + " " + std::string(isa::spelling(dt)) + " 128x256";
    if (!b.ready()) {
      gSummary.push_back(what + ": no kernel");
      continue;
    }
    compare(
        what, "memcpy of the source tile (128 KiB)", [&] { b.run(); },
        [&] {
          std::memcpy(y.data(), x.data(), size_t{kR} * kC * 4);
          benchmark::ClobberMemory();
        });
  }
}

#else
void compareExp() {}
void compareMath() {}
void compareF16Math() {}
void compareReduce() {}
#endif

} // namespace pto::bench
