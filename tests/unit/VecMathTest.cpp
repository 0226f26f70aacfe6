// The vector kernels of runtime/cpu/VecMath.h against their portable definitions, bit for bit.
// CI checks every 61st f32 bit pattern (70M inputs: every sign, binade and special value class)
// plus every pattern around each fast path's limits; division, a two-operand op, checks 70M
// pairs spread over all patterns of both operands plus every pair of special values. The
// exhaustive checks over all 2^32 patterns (division: every dividend against a set of divisors
// and every divisor against a set of dividends) are DISABLED_ and run by hand:
//   build/tests/pto-unit-tests --gtest_also_run_disabled_tests --gtest_filter='VecMath.*'
#include "runtime/cpu/VecMath.h"

#include "runtime/cpu/KernelUtil.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

namespace pto::rt::cpu {
namespace {

using Run = void (*)(float*, const float*, size_t, bool);
using Ref = float (*)(float);

struct Unary {
  const char* name;
  Run run;
  Ref ref;
};
const Unary kExp{"exp", expF32, expF32Ref}, kLog{"log", logF32, logF32Ref},
    kSqrt{"sqrt", sqrtF32, sqrtF32Ref}, kRsqrt{"rsqrt", rsqrtF32, rsqrtF32Ref},
    kRecip{"recip", recipF32, recipF32Ref};

/// Checks `count` patterns first, first+stride, ... (mod 2^32); returns the number checked.
uint64_t checkPatterns(const Unary& op, uint64_t first, uint64_t stride, uint64_t count) {
  constexpr size_t kBatch = 1 << 16;
  std::vector<float> in(kBatch), out(kBatch);
  uint64_t checked = 0;
  for (uint64_t done = 0; done < count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, count - done));
    for (size_t i = 0; i < n; ++i)
      in[i] = std::bit_cast<float>(static_cast<uint32_t>(first + (done + i) * stride));
    op.run(out.data(), in.data(), n, true);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(op.ref(in[i])),
                     got = std::bit_cast<uint32_t>(out[i]);
      if (want != got) {
        ADD_FAILURE() << op.name << "(" << std::hexfloat << in[i] << ") = " << std::hex << got
                      << " (vector), " << want << " (portable)";
        return checked;
      }
    }
    done += n;
    checked += n;
  }
  return checked;
}

/// The vector tiers this CPU runs (the kernels differ by tier), each selected in turn while
/// `check` runs; the name of the tier is passed to it.
template <class F> void forEachTier(F&& check) {
  static constexpr std::pair<SimdLevel, const char*> kTiers[] = {{SimdLevel::Avx2, "avx2"},
                                                                 {SimdLevel::Avx512, "avx512"}};
  for (const auto& [tier, name] : kTiers) {
    if (simdSupported() < tier) continue;
    setSimdLimit(tier);
    check(name);
  }
  setSimdLimit(SimdLevel::Avx512Fp16); // no cap
}

/// Every 61st pattern and every pattern within 20000 of each edge, on every vector tier.
void checkSampled(const Unary& op, std::initializer_list<float> edges) {
  forEachTier([&](const char* tier) {
    uint64_t checked = checkPatterns(op, 0, 61, (uint64_t{1} << 32) / 61);
    for (float edge : edges)
      checked += checkPatterns(op, std::bit_cast<uint32_t>(edge) - 20000, 1, 40000);
    EXPECT_GT(checked, 70'000'000u);
    printf("[vecmath] %s f32 (%s): %llu inputs bit-identical\n", op.name, tier,
           static_cast<unsigned long long>(checked));
  });
}

/// All 2^32 patterns on every vector tier, with the time taken.
void checkAll(const Unary& op) {
  forEachTier([&](const char* tier) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(checkPatterns(op, 0, 1, uint64_t{1} << 32), uint64_t{1} << 32);
    printf("[vecmath] %s f32 (%s): all 2^32 inputs checked in %.1f s\n", op.name, tier,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
}

TEST(VecMath, ExpF32MatchesThePortableKernelOnSampledPatterns) {
  checkSampled(kExp, {-87.0f, 88.0f, 0.0f, -0.0f, 1.0f, -1.0f});
}

TEST(VecMath, LogF32MatchesThePortableKernelOnSampledPatterns) {
  // The domain's edges (smallest normal, largest finite, +-0, infinity), 1 (the result's sign
  // changes) and the mantissa split at sqrt(1/2) and sqrt(2).
  checkSampled(kLog, {std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                      INFINITY, 0.0f, -0.0f, 1.0f, 0x1.6a09e6p-1f, 0x1.6a09e6p+0f});
}

TEST(VecMath, SqrtRsqrtRecipF32MatchThePortableKernelsOnSampledPatterns) {
  const std::initializer_list<float> edges = {0.0f, -0.0f,    std::numeric_limits<float>::min(),
                                              1.0f, INFINITY, -INFINITY};
  checkSampled(kSqrt, edges);
  checkSampled(kRsqrt, edges);
  checkSampled(kRecip, edges);
}

TEST(VecMath, UnaryF32InPlaceAndTails) {
  std::vector<float> x = {0.5f,  -3.25f, 88.5f, -90.0f, 1e-30f, 20.0f,
                          -0.0f, 3.0f,   7.5f,  2.0f,   -1.0f};
  // Lengths 0..40 around 16-lane blocks, with in-range, out-of-range and tiny values mixed.
  for (int k = 0; x.size() < 40; ++k)
    x.push_back(x[static_cast<size_t>(k)] * 1.5f);
  forEachTier([&](const char*) {
    for (const Unary* op : {&kExp, &kLog, &kSqrt, &kRsqrt, &kRecip})
      for (size_t n = 0; n <= x.size(); ++n) {
        std::vector<float> a(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n)), want(n);
        for (size_t i = 0; i < n; ++i)
          want[i] = op->ref(a[i]);
        op->run(a.data(), a.data(), n, true);
        for (size_t i = 0; i < n; ++i)
          EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(want[i]))
              << op->name << " " << n << " " << i;
      }
  });
}

/// Checks a[i] / b[i] for n pairs; returns false at the first difference.
bool checkDiv(const std::vector<float>& a, const std::vector<float>& b, size_t n) {
  std::vector<float> out(n);
  divF32(out.data(), a.data(), b.data(), n, true);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(divF32Ref(a[i], b[i])),
                   got = std::bit_cast<uint32_t>(out[i]);
    if (want != got) {
      ADD_FAILURE() << std::hexfloat << a[i] << " / " << b[i] << " = " << std::hex << got
                    << " (vector), " << want << " (portable)";
      return false;
    }
  }
  return true;
}

/// Special and boundary values of f32, both signs.
std::vector<float> specials() {
  std::vector<float> v;
  for (float x : {0.0f, std::numeric_limits<float>::denorm_min(), 0x1.fffffcp-127f,
                  std::numeric_limits<float>::min(), 1.0f, 0x1.fffffep+0f, 3.0f,
                  std::numeric_limits<float>::max(), INFINITY, NAN,
                  std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0x7fc12345u)})
    v.insert(v.end(), {x, -x});
  return v;
}

TEST(VecMath, DivF32MatchesThePortableKernelOnSampledPairs) {
  // Pair i: dividend pattern 61 i, divisor pattern 61 i * 40503 + 12345 (mod 2^32), so that
  // both operands run over all sign / binade / class combinations; then every pair of specials.
  constexpr size_t kBatch = 1 << 16;
  constexpr uint64_t kCount = (uint64_t{1} << 32) / 61;
  std::vector<float> a(kBatch), b(kBatch);
  uint64_t checked = 0;
  for (uint64_t done = 0; done < kCount;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, kCount - done));
    for (size_t i = 0; i < n; ++i) {
      const uint64_t p = (done + i) * 61;
      a[i] = std::bit_cast<float>(static_cast<uint32_t>(p));
      b[i] = std::bit_cast<float>(static_cast<uint32_t>(p * 40503 + 12345));
    }
    ASSERT_TRUE(checkDiv(a, b, n));
    done += n;
    checked += n;
  }
  const std::vector<float> s = specials();
  a.clear();
  b.clear();
  for (float x : s)
    for (float y : s)
      a.push_back(x), b.push_back(y);
  ASSERT_TRUE(checkDiv(a, b, a.size()));
  checked += a.size();
  printf("[vecmath] div f32: %llu pairs bit-identical\n", static_cast<unsigned long long>(checked));
}

TEST(VecMath, DISABLED_ExpF32MatchesThePortableKernelOnAllPatterns) {
  checkAll(kExp);
}
TEST(VecMath, DISABLED_LogF32MatchesThePortableKernelOnAllPatterns) {
  checkAll(kLog);
}
TEST(VecMath, DISABLED_SqrtF32MatchesThePortableKernelOnAllPatterns) {
  checkAll(kSqrt);
}
TEST(VecMath, DISABLED_RsqrtF32MatchesThePortableKernelOnAllPatterns) {
  checkAll(kRsqrt);
}
TEST(VecMath, DISABLED_RecipF32MatchesThePortableKernelOnAllPatterns) {
  checkAll(kRecip);
}

TEST(VecMath, DISABLED_DivF32MatchesThePortableKernelOnAllDividendsAndDivisors) {
  // Every pattern as the dividend against each special value as the divisor (and 0.1, 7 for
  // inexact quotients), then every pattern as the divisor under each special dividend.
  std::vector<float> fixed = specials();
  fixed.insert(fixed.end(), {0.1f, -7.0f});
  const auto t0 = std::chrono::steady_clock::now();
  constexpr size_t kBatch = 1 << 16;
  std::vector<float> a(kBatch), b(kBatch);
  uint64_t checked = 0;
  for (int side = 0; side < 2; ++side)
    for (float f : fixed)
      for (uint64_t done = 0; done < (uint64_t{1} << 32); done += kBatch) {
        for (size_t i = 0; i < kBatch; ++i) {
          const float x = std::bit_cast<float>(static_cast<uint32_t>(done + i));
          (side == 0 ? a : b)[i] = x;
          (side == 0 ? b : a)[i] = f;
        }
        ASSERT_TRUE(checkDiv(a, b, kBatch));
        checked += kBatch;
      }
  printf("[vecmath] div f32: %llu pairs (every pattern against %zu fixed operands on each side) "
         "checked in %.1f s\n",
         static_cast<unsigned long long>(checked), fixed.size(),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

} // namespace
} // namespace pto::rt::cpu
