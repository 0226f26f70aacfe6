// pto-bench-run: the cpu backend's tile kernels and whole kernels, each figure printed beside a
// reference measured in the same run, as a ratio (reference time / our time, so 1 = as fast):
//   - elementwise TADD (f32, f16) on 64x64 and 128x256 tiles and TCVT f32 -> f16 (RINT) vs a
//     memcpy touching the same bytes (below), TCVT also vs a plain vcvtps2ph loop, TADD f16
//     128x256 also vs this CPU's own limits for the op (a plain F16C loop; F16C on 16 lanes);
//   - TMATMUL 128x128x128 (f32, and f16 inputs) vs a naive f32 triple loop, f32 also vs the ikj
//     loop vectorised for AVX2 + FMA and as a fraction of one core's measured FMA peak;
//   - TEXP, TLOG, TSQRT, TRSQRT, TRECIP and TDIV f32 vs libmvec's expf / logf or plain vector
//     loops (vsqrtps, vdivps) on the same inputs; the f16 forms of the unary ones vs the same
//     f32 code between F16C conversions;
//   - TROWSUM, TROWMAX, TCOLSUM, TCOLMAX f32 and TROWSUM, TCOLSUM f16, and the broadcast ops
//     TROWEXPANDSUB, TCOLEXPANDMUL f32 and TROWEXPANDDIV f16 vs a memcpy of an f32 tile (what
//     an f32 reduction reads; an f32 expand op's reads and writes; f16 figures: cost per element);
//   - the tiled vector add over 64 MiB tensors with 1 and 2 blocks vs a plain C++ loop, and its
//     2-block scaling beside what 2 threads gain on this machine in the same run (the plain loop
//     split on 2 threads; pure compute on 2 threads).
// The tile kernels are called directly on tiles resident in one buffer (decoded TileInst,
// kernel picked by selectKernel as at load time), so the figures are the kernels' own cost.
//
// "The same bytes": the op reads its sources and writes its destination, so it touches the sum
// of its operand tiles' bytes (TADD: 3 tiles; TCVT f32 -> f16: 4 + 2 bytes per element). The
// reference memcpy copies half that many bytes, so its reads plus writes, and its working set,
// equal the op's: TADD's reference copies 1.5 tiles. The summary also gives the ratio against a
// memcpy of the destination tile only (2/3 of TADD's traffic, a stricter reference).
//
// --simd=portable|avx2|avx512 caps the x86 kernel tier (runtime/cpu/Simd.h) to measure the lower
// ones; the default is the best this CPU has (printed first).
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "bench/RunBench.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Program.h"
#include "runtime/Runtime.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace pto;
using namespace pto::bench;
using isa::DType;

// ------------------------------------------------------------------ single tile ops
/// Bytes of all operand tiles: what the op reads plus what it writes.
size_t operandBytes(const std::vector<DType>& types, uint32_t rows, uint32_t cols) {
  size_t n = 0;
  for (DType t : types)
    n += size_t{rows} * cols * isa::bitWidth(t) / 8;
  return n;
}

void BM_Tile(benchmark::State& state, isa::OpId op, std::vector<DType> types, uint32_t rows,
             uint32_t cols) {
  TileBench b(op, types, rows, cols);
  if (!b.ready()) return state.SkipWithError("no kernel");
  for (auto _ : state) {
    b.run();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(operandBytes(types, rows, cols)));
}

/// memcpy of `bytes` (reads + writes = 2 * bytes; bytes processed counts both, as BM_Tile's do).
void BM_Memcpy(benchmark::State& state, size_t bytes) {
  Aligned a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * bytes));
}

/// The op beside a memcpy of half its operand bytes (the same bytes touched), then beside a
/// memcpy of its destination tile.
void compareTile(const std::string& what, isa::OpId op, std::vector<DType> types, uint32_t rows,
                 uint32_t cols) {
  TileBench b(op, types, rows, cols);
  if (!b.ready()) return gSummary.push_back(what + ": no kernel");
  const size_t same = operandBytes(types, rows, cols) / 2,
               dst = size_t{rows} * cols * isa::bitWidth(types[0]) / 8;
  for (size_t bytes : {same, dst}) {
    Aligned x(bytes, 1), y(bytes);
    compare(
        what,
        std::string(bytes == same ? "memcpy touching the same bytes ("
                                  : "memcpy of the destination (") +
            std::to_string(bytes) + " bytes)",
        [&] { b.run(); },
        [&] {
          std::memcpy(y.data(), x.data(), bytes);
          benchmark::ClobberMemory();
        });
  }
}

#if defined(__x86_64__)
/// TADD f16's machine limits, over the same tiles: without AVX512-FP16 an f16 add is two
/// widening conversions, an f32 add and a narrowing one, and the conversions bound it.
///   - plainAddF16: the loop a C++ programmer writes with F16C intrinsics on 8 lanes (what -O2
///     -march=native makes of it: the narrowing conversion stored straight to memory);
///   - limitAddF16x16: the same on 16 lanes (AVX-512F), two steps per iteration, without the
///     NaN canonicalisation the kernel owes f2h: the fewest instructions this CPU can do it in.
__attribute__((target("avx2,f16c"))) void plainAddF16(uint16_t* d, const uint16_t* a,
                                                      const uint16_t* b, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  benchmark::ClobberMemory();
}
__attribute__((target("avx2,f16c,avx512f"))) __m512 ld16(const uint16_t* p) {
  return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
__attribute__((target("avx2,f16c,avx512f"))) void limitAddF16x16(uint16_t* d, const uint16_t* a,
                                                                 const uint16_t* b, size_t n) {
  for (size_t i = 0; i + 32 <= n; i += 32) {
    // The zero-masking forms with every lane (the same instructions; GCC 12 warns about the
    // plain forms' undefined pass-through operand).
    const __m256i h0 = _mm512_maskz_cvtps_ph(0xffff, _mm512_add_ps(ld16(a + i), ld16(b + i)), 0);
    const __m256i h1 =
        _mm512_maskz_cvtps_ph(0xffff, _mm512_add_ps(ld16(a + i + 16), ld16(b + i + 16)), 0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), h0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 16), h1);
  }
  benchmark::ClobberMemory();
}

/// TADD f16 128x256 beside its machine limits (above), on the kernel's own tiles.
void compareAddF16Limits() {
  TileBench b(isa::OpId::TADD, {DType::F16, DType::F16, DType::F16}, 128, 256);
  if (!b.ready()) return;
  auto tile = [&](int i) {
    return reinterpret_cast<uint16_t*>(b.vec.data() + b.inst.tiles[static_cast<size_t>(i)].offset);
  };
  const size_t n = size_t{128} * 256;
  compare(
      "TADD f16 128x256", "plain F16C loop, 8 lanes, same tiles", [&] { b.run(); },
      [&] { plainAddF16(tile(0), tile(1), tile(2), n); });
  if (__builtin_cpu_supports("avx512f"))
    compare(
        "TADD f16 128x256", "F16C on 16 lanes, no NaN fix-up (this CPU's limit), same tiles",
        [&] { b.run(); }, [&] { limitAddF16x16(tile(0), tile(1), tile(2), n); });
}

/// The plain conversion loop: F16C's vcvtps2ph, round to nearest even, eight lanes at a time.
__attribute__((target("avx2,f16c"))) void plainCvt(uint16_t* y, const float* x, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  benchmark::ClobberMemory();
}
#endif

// ------------------------------------------------------------------ matmul
constexpr uint32_t kMM = 128;

void naiveMatmul(const std::vector<float>& A, const std::vector<float>& B, std::vector<float>& C) {
  for (uint32_t i = 0; i < kMM; ++i)
    for (uint32_t j = 0; j < kMM; ++j) {
      float acc = 0;
      for (uint32_t k = 0; k < kMM; ++k)
        acc += A[i * kMM + k] * B[k * kMM + j];
      C[i * kMM + j] = acc;
    }
  benchmark::ClobberMemory();
}

#if defined(__x86_64__)
/// The ikj loop a C++ programmer writes, vectorised by the compiler for this CPU's AVX2 + FMA
/// (what -O2 -march=native gives: one fma per k per element, in increasing k).
__attribute__((target("avx2,fma"), optimize("O2", "tree-vectorize"))) void
ikjMatmul(const float* A, const float* B, float* C) {
  for (uint32_t i = 0; i < kMM; ++i) {
    float* ci = C + i * kMM;
    for (uint32_t j = 0; j < kMM; ++j)
      ci[j] = 0;
    for (uint32_t k = 0; k < kMM; ++k) {
      const float a = A[i * kMM + k];
      const float* bk = B + k * kMM;
      for (uint32_t j = 0; j < kMM; ++j)
        ci[j] = __builtin_fmaf(a, bk[j], ci[j]);
    }
  }
  benchmark::ClobberMemory();
}

/// One core's f32 FMA peak in flop/s on 8-lane vectors: twelve independent chains of fmas
/// (enough to cover the latency of both FMA pipes), no memory traffic. The core's peak is the
/// larger of this and fmaPeak512.
///
/// Each chain starts from a different value: chains that start equal compute equal values, and
/// the compiler merges them into one (GCC 12 did: the loop held a single fma, latency bound, and
/// the figure reported was twelve times the single chain's rate, three times the real peak).
__attribute__((target("avx2,fma"))) double fmaPeak() {
  constexpr long kSteps = 20'000'000;
  // Twelve named accumulators, so that they live in registers whatever the compiler unrolls.
  __m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2),
         c3 = _mm256_set1_ps(3), c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5),
         c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7), c8 = _mm256_set1_ps(8),
         c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = threadSeconds();
    for (long i = 0; i < kSteps; ++i) {
      c0 = _mm256_fmadd_ps(c0, a, b), c1 = _mm256_fmadd_ps(c1, a, b);
      c2 = _mm256_fmadd_ps(c2, a, b), c3 = _mm256_fmadd_ps(c3, a, b);
      c4 = _mm256_fmadd_ps(c4, a, b), c5 = _mm256_fmadd_ps(c5, a, b);
      c6 = _mm256_fmadd_ps(c6, a, b), c7 = _mm256_fmadd_ps(c7, a, b);
      c8 = _mm256_fmadd_ps(c8, a, b), c9 = _mm256_fmadd_ps(c9, a, b);
      c10 = _mm256_fmadd_ps(c10, a, b), c11 = _mm256_fmadd_ps(c11, a, b);
    }
    best = std::max(best, 2.0 * 8 * 12 * static_cast<double>(kSteps) / (threadSeconds() - t0));
  }
  const __m256 sum =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                    _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)),
                                  _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11))));
  benchmark::DoNotOptimize(_mm256_cvtss_f32(sum));
  return best;
}

/// The same on 16-lane vectors, for a CPU with AVX-512F (0 without it). A CPU that splits
/// 512-bit operations in two 256-bit halves (AMD Zen 4) has the same peak as on 8 lanes.
__attribute__((target("avx512f"))) double fmaPeak512() {
  if (!__builtin_cpu_supports("avx512f")) return 0;
  constexpr long kSteps = 20'000'000;
  __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2),
         c3 = _mm512_set1_ps(3), c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5),
         c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7), c8 = _mm512_set1_ps(8),
         c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = threadSeconds();
    for (long i = 0; i < kSteps; ++i) {
      c0 = _mm512_fmadd_ps(c0, a, b), c1 = _mm512_fmadd_ps(c1, a, b);
      c2 = _mm512_fmadd_ps(c2, a, b), c3 = _mm512_fmadd_ps(c3, a, b);
      c4 = _mm512_fmadd_ps(c4, a, b), c5 = _mm512_fmadd_ps(c5, a, b);
      c6 = _mm512_fmadd_ps(c6, a, b), c7 = _mm512_fmadd_ps(c7, a, b);
      c8 = _mm512_fmadd_ps(c8, a, b), c9 = _mm512_fmadd_ps(c9, a, b);
      c10 = _mm512_fmadd_ps(c10, a, b), c11 = _mm512_fmadd_ps(c11, a, b);
    }
    best = std::max(best, 2.0 * 16 * 12 * static_cast<double>(kSteps) / (threadSeconds() - t0));
  }
  const __m512 sum =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                    _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)),
                                  _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11))));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  benchmark::DoNotOptimize(lanes[0] + lanes[15]);
  return best;
}
#endif

TileBench matmulBench(DType in = DType::F32) {
  TileBench b(isa::OpId::TMATMUL, {DType::F32, in, in}, kMM, kMM);
  b.inst.dim[0] = {0, kMM, true}; // M
  b.inst.dim[1] = {0, kMM, true}; // N
  b.inst.dim[2] = {0, kMM, true}; // K
  return b;
}

void BM_Matmul(benchmark::State& state, DType in) {
  TileBench b = matmulBench(in);
  if (!b.ready()) return state.SkipWithError("no kernel");
  for (auto _ : state)
    b.run();
  state.counters["flop/s"] = benchmark::Counter(2.0 * kMM * kMM * kMM * double(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

void BM_NaiveMatmul(benchmark::State& state) {
  std::vector<float> A(kMM * kMM, 0.5f), B(kMM * kMM, 0.25f), C(kMM * kMM);
  for (auto _ : state)
    naiveMatmul(A, B, C);
  state.counters["flop/s"] = benchmark::Counter(2.0 * kMM * kMM * kMM * double(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

// ------------------------------------------------------------------ whole tiled vector add
constexpr int64_t kRows = 65536, kCols = 256; // 64 MiB per f32 tensor

std::optional<rt::Module> buildVadd() {
  std::string path = std::string(PTO_SOURCE_DIR) + "/samples/vadd-tiled/vadd_tiled.pto";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // The sample's 1024 rows become 65536: the same kernel over 64 MiB tensors.
  for (auto [from, to] : {std::pair<std::string, std::string>{"1024x256", "65536x256"},
                          {"1024 : index", "65536 : index"}})
    for (size_t p; (p = text.find(from)) != std::string::npos;)
      text.replace(p, from.size(), to);
  as::SourceFile src(path, text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  if (!m || diags.errors()) return std::nullopt;
  isa::Arch arch = as::resolveArch(*m, std::nullopt);
  as::verifyModule(*m, arch, diags);
  auto o = as::lowerModule(*m, arch, diags);
  if (!o) return std::nullopt;
  link::LinkOptions opts;
  opts.sync = link::SyncMode::Insert;
  link::LinkResult r = link::link({{"vadd_tiled.o", *o}}, opts);
  if (!r.ok()) return std::nullopt;
  auto bytes = obj::writeImage(*r.image);
  if (bytes.index() != 0) return std::nullopt;
  auto mod = rt::Module::load(std::get<0>(bytes), path);
  if (!mod) return std::nullopt;
  return mod.value();
}

struct Vadd {
  rt::Module module;
  rt::Tensor x, y, z;
};
Vadd* gVadd = nullptr;

bool runVadd(uint32_t blocks) {
  auto launch = gVadd->module.launch("vadd_tiled");
  if (!launch) return false;
  if (launch->bind("x", &gVadd->x) || launch->bind("y", &gVadd->y) || launch->bind("z", &gVadd->z))
    return false;
  rt::RunOptions opts;
  opts.blocks = blocks;
  return !launch->run(opts);
}

/// z = x + y over elements [i0, i1) of the 64 MiB tensors.
void plainAddRange(int64_t i0, int64_t i1) {
  const auto* x = reinterpret_cast<const float*>(gVadd->x.data.data());
  const auto* y = reinterpret_cast<const float*>(gVadd->y.data.data());
  auto* z = reinterpret_cast<float*>(gVadd->z.data.data());
  for (int64_t i = i0; i < i1; ++i)
    z[i] = x[i] + y[i];
  benchmark::ClobberMemory();
}
void plainAdd() {
  plainAddRange(0, kRows * kCols);
}

// ------------------------------------------------------------------ what 2 threads can gain
// The blocks runner's scaling (2 blocks vs 1) read against what this machine gives two threads
// in the same run: its 2 vCPUs are shared, and memory bandwidth is shared whatever the cores.
//   - the plain add loop split in two halves on 2 std::threads (each call starts its thread,
//     as each launch of the runner does) vs the whole loop on one;
//   - pure compute: a fixed number of multiply-add steps on one thread vs half on each of two.

/// The plain add in two halves, the second on a thread of its own.
void plainAdd2Threads() {
  const int64_t n = kRows * kCols;
  std::thread other([n] { plainAddRange(n / 2, n); });
  plainAddRange(0, n / 2);
  other.join();
}

/// `steps` steps of eight independent multiply-add chains (no memory traffic).
void computeWork(long steps) {
  float c[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (long i = 0; i < steps; ++i)
    for (float& x : c)
      x = x * 0.999999f + 1e-7f;
  float sum = 0;
  for (float x : c)
    sum += x;
  benchmark::DoNotOptimize(sum);
}
constexpr long kComputeSteps = 4'000'000;

/// 2 blocks vs 1 beside the same for the plain loop and for pure compute, all in wall time.
void compareScaling() {
  const double ours = compare(
      "vadd_tiled 64 MiB, 2 blocks", "1 block (scaling)", [] { runVadd(2); }, [] { runVadd(1); },
      true);
  const double loop = compare("machine: plain add loop 64 MiB, 2 threads", "1 thread (scaling)",
                              plainAdd2Threads, plainAdd, true);
  const double compute = compare(
      "machine: pure compute, 2 threads", "1 thread (scaling)",
      [] {
        std::thread other([] { computeWork(kComputeSteps / 2); });
        computeWork(kComputeSteps / 2);
        other.join();
      },
      [] { computeWork(kComputeSteps); }, true);
  std::ostringstream s;
  s.precision(3);
  s << "vadd_tiled 2 blocks vs 1 block: " << ours << "; the machine in the same run: plain loop "
    << loop << ", pure compute " << compute << "; ours / plain loop's: " << ours / loop;
  gSummary.push_back(s.str());
}

void BM_PlainAdd64MiB(benchmark::State& state) {
  for (auto _ : state)
    plainAdd();
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
}

void BM_VaddTiled64MiB(benchmark::State& state) {
  for (auto _ : state)
    if (!runVadd(static_cast<uint32_t>(state.range(0)))) state.SkipWithError("kernel failed");
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
}

void registerTileBenchmarks() {
  using isa::OpId;
  // Each memcpy touches the bytes of the op registered before it (half its operand bytes).
  for (auto [r, c] : {std::pair<uint32_t, uint32_t>{64, 64}, {128, 256}}) {
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    benchmark::RegisterBenchmark(("TADD_f32/" + shape).c_str(), BM_Tile, OpId::TADD,
                                 std::vector{DType::F32, DType::F32, DType::F32}, r, c);
    benchmark::RegisterBenchmark(("memcpy_f32x1.5/" + shape).c_str(), BM_Memcpy, size_t{r} * c * 6);
    benchmark::RegisterBenchmark(("TADD_f16/" + shape).c_str(), BM_Tile, OpId::TADD,
                                 std::vector{DType::F16, DType::F16, DType::F16}, r, c);
    benchmark::RegisterBenchmark(("memcpy_f16x1.5/" + shape).c_str(), BM_Memcpy, size_t{r} * c * 3);
  }
  benchmark::RegisterBenchmark("TEXP_f32/128x256", BM_Tile, OpId::TEXP,
                               std::vector{DType::F32, DType::F32}, 128u, 256u);
  benchmark::RegisterBenchmark("TCVT_f32_f16/128x256", BM_Tile, OpId::TCVT,
                               std::vector{DType::F16, DType::F32}, 128u, 256u);
  benchmark::RegisterBenchmark("memcpy_3B_per_elem/128x256", BM_Memcpy, size_t{128} * 256 * 3);
  benchmark::RegisterBenchmark("TMATMUL_f32/128x128x128", BM_Matmul, DType::F32);
  benchmark::RegisterBenchmark("TMATMUL_f16_in/128x128x128", BM_Matmul, DType::F16);
  benchmark::RegisterBenchmark("naive_matmul/128x128x128", BM_NaiveMatmul);
}

void summarizeTiles() {
  using isa::OpId;
  for (auto [r, c] : {std::pair<uint32_t, uint32_t>{64, 64}, {128, 256}}) {
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    compareTile("TADD f32 " + shape, OpId::TADD, {DType::F32, DType::F32, DType::F32}, r, c);
    compareTile("TADD f16 " + shape, OpId::TADD, {DType::F16, DType::F16, DType::F16}, r, c);
  }
  compareTile("TCVT f32->f16 128x256", OpId::TCVT, {DType::F16, DType::F32}, 128, 256);
#if defined(__x86_64__)
  compareAddF16Limits();
  {
    TileBench cvt(OpId::TCVT, {DType::F16, DType::F32}, 128, 256);
    if (cvt.ready()) {
      const float* x = reinterpret_cast<const float*>(cvt.vec.data() + cvt.inst.tiles[1].offset);
      std::vector<uint16_t> y(size_t{128} * 256);
      compare(
          "TCVT f32->f16 128x256", "plain vcvtps2ph loop, same inputs", [&] { cvt.run(); },
          [&] { plainCvt(y.data(), x, y.size()); });
    }
  }
#endif
  std::vector<float> A(kMM * kMM, 0.5f), B(kMM * kMM, 0.25f), C(kMM * kMM);
#if defined(__x86_64__)
  {
    TileBench mm = matmulBench(DType::F32);
    if (mm.ready()) {
      compare(
          "TMATMUL f32 128x128x128", "ikj loop vectorised for AVX2+FMA", [&] { mm.run(); },
          [&] { ikjMatmul(A.data(), B.data(), C.data()); });
      const double peak = std::max(fmaPeak(), fmaPeak512());
      const double ours = 2.0 * kMM * kMM * kMM /
                          std::min({secondsPer([&] { mm.run(); }), secondsPer([&] { mm.run(); }),
                                    secondsPer([&] { mm.run(); })});
      std::ostringstream s;
      s.precision(3);
      s << "TMATMUL f32 128x128x128: " << ours / 1e9
        << " GFLOP/s, one core's FMA peak (measured): " << peak / 1e9
        << " GFLOP/s, fraction of peak " << ours / peak << " (goal 0.5)";
      gSummary.push_back(s.str());
    }
  }
#endif
  {
    // TMATMUL.acc (the product plus an f32 accumulator tile, the K-loop form of real kernels)
    // beside the plain product: what the epilogue adds.
    TileBench acc(isa::OpId::TMATMUL_ACC, {DType::F32, DType::F32, DType::F32, DType::F32}, kMM,
                  kMM);
    acc.inst.acc = 3;
    acc.inst.dim[2] = {0, kMM, true};
    TileBench mm = matmulBench(DType::F32);
    if (acc.ready() && mm.ready())
      compare(
          "TMATMUL.acc f32 128x128x128", "TMATMUL f32 (no accumulator)", [&] { acc.run(); },
          [&] { mm.run(); });
  }
  for (DType in : {DType::F32, DType::F16}) {
    TileBench mm = matmulBench(in);
    if (mm.ready())
      compare(
          std::string("TMATMUL ") + (in == DType::F32 ? "f32" : "f16 -> f32") + " 128x128x128",
          "naive f32 triple loop", [&] { mm.run(); }, [&] { naiveMatmul(A, B, C); });
  }
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--simd=portable")
      rt::cpu::setSimdLimit(rt::cpu::SimdLevel::Portable);
    else if (a == "--simd=avx2")
      rt::cpu::setSimdLimit(rt::cpu::SimdLevel::Avx2);
    else if (a == "--simd=avx512")
      rt::cpu::setSimdLimit(rt::cpu::SimdLevel::Avx512);
    else if (a != "--simd=best") {
      std::cerr << "pto-bench-run: unknown argument " << a
                << " (--simd=portable|avx2|avx512|best, or Google Benchmark's)\n";
      return 1;
    }
  }
  static const char* const kTier[] = {"portable", "avx2+f16c+fma", "avx512f", "avx512-fp16"};
  std::cout << "cpu kernel tier: " << kTier[static_cast<int>(rt::cpu::simdLevel())] << "\n";
  auto module = buildVadd();
  if (!module) {
    std::cerr << "pto-bench-run: the 64 MiB vector-add kernel does not build\n";
    return 1;
  }
  Vadd v{*module, rt::Tensor::zeros(DType::F32, {kRows, kCols}),
         rt::Tensor::zeros(DType::F32, {kRows, kCols}),
         rt::Tensor::zeros(DType::F32, {kRows, kCols})};
  gVadd = &v;
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    reinterpret_cast<float*>(v.x.data.data())[i] = static_cast<float>(i % 97);
    reinterpret_cast<float*>(v.y.data.data())[i] = 2.0f;
  }
  if (!runVadd(1)) {
    std::cerr << "pto-bench-run: the vector-add kernel fails\n";
    return 1;
  }
  registerTileBenchmarks();
  benchmark::RegisterBenchmark("plain_add/64MiB", BM_PlainAdd64MiB)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("vadd_tiled/64MiB", BM_VaddTiled64MiB)
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();

  summarizeTiles();
  compareExp();
  compareMath();
  compareF16Math();
  compareReduce();
  compare(
      "vadd_tiled 64 MiB, 1 block", "plain C++ loop", [] { runVadd(1); }, plainAdd, true);
  compare(
      "vadd_tiled 64 MiB, 2 blocks", "plain C++ loop", [] { runVadd(2); }, plainAdd, true);
  compareScaling();
  std::cout << "\nside by side (best of 3, same run):\n";
  for (const std::string& s : gSummary)
    std::cout << "  " << s << "\n";
  benchmark::Shutdown();
  return 0;
}
