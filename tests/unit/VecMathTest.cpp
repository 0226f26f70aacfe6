// The vector exp (runtime/cpu/VecMath.h) against the portable definition (float)exp((double)x),
// bit for bit. CI checks every 61st f32 bit pattern (70M inputs: every sign, binade and
// special value class) plus the neighbourhoods of the range limits; the exhaustive check over
// all 2^32 patterns is DISABLED_ and run by hand:
//   build/tests/pto-unit-tests --gtest_also_run_disabled_tests --gtest_filter='VecMath.*'
#include "runtime/cpu/VecMath.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

namespace pto::rt::cpu {
namespace {

/// Checks `count` patterns first, first+stride, ...; returns the number checked.
uint64_t checkPatterns(uint64_t first, uint64_t stride, uint64_t count) {
  constexpr size_t kBatch = 1 << 16;
  std::vector<float> in(kBatch), out(kBatch);
  uint64_t checked = 0;
  for (uint64_t done = 0; done < count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, count - done));
    for (size_t i = 0; i < n; ++i)
      in[i] = std::bit_cast<float>(static_cast<uint32_t>(first + (done + i) * stride));
    expF32(out.data(), in.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(expF32Ref(in[i])),
                     got = std::bit_cast<uint32_t>(out[i]);
      if (want != got) {
        ADD_FAILURE() << "exp(" << std::hexfloat << in[i] << ") = " << got << " (vector), " << want
                      << " (portable)";
        return checked;
      }
    }
    done += n;
    checked += n;
  }
  return checked;
}

TEST(VecMath, ExpF32MatchesThePortableKernelOnSampledPatterns) {
  uint64_t checked = checkPatterns(0, 61, (uint64_t{1} << 32) / 61);
  // Around the fast path's limits and zero, every pattern.
  for (float edge : {-87.0f, 88.0f, 0.0f, -0.0f, 1.0f, -1.0f})
    checked += checkPatterns(std::bit_cast<uint32_t>(edge) - 20000, 1, 40000);
  EXPECT_GT(checked, 70'000'000u);
  printf("[vecmath] exp f32: %llu inputs bit-identical\n",
         static_cast<unsigned long long>(checked));
}

TEST(VecMath, ExpF32InPlaceAndTails) {
  std::vector<float> x = {0.5f,  -3.25f, 88.5f, -90.0f, 1e-30f, 20.0f,
                          -0.0f, 3.0f,   7.5f,  2.0f,   -1.0f};
  for (size_t n = 0; n <= x.size(); ++n) {
    std::vector<float> a(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n)), want(n);
    for (size_t i = 0; i < n; ++i)
      want[i] = expF32Ref(a[i]);
    expF32(a.data(), a.data(), n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(want[i])) << n << " " << i;
  }
}

TEST(VecMath, DISABLED_ExpF32MatchesThePortableKernelOnAllPatterns) {
  EXPECT_EQ(checkPatterns(0, 1, uint64_t{1} << 32), uint64_t{1} << 32);
}

} // namespace
} // namespace pto::rt::cpu
