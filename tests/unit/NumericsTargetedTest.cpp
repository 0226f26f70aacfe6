// Numerics: targeted cases of conversion (saturation, NaN and infinity, rounding to integral,
// round modes, packed nibbles, the converter table), checked against fixed values and the
// reference (NumericsReference.h).
#include "NumericsReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace pto::isa;
using namespace pto::numtest;

// ============================================================ targeted
TEST(NumericsTargeted, F32ToIntSaturation) {
  auto cv = [](float f, DType d, SatMode s, RoundMode rm = RoundMode::CAST_RINT) {
    return static_cast<int64_t>(ref::decode(d, convert(DType::F32, d, f32Bits(f), rm, s)));
  };
  EXPECT_EQ(cv(300.0f, DType::I8, SatMode::ON), 127);
  EXPECT_EQ(cv(-300.0f, DType::I8, SatMode::ON), -128);
  EXPECT_EQ(cv(300.0f, DType::I8, SatMode::OFF), 44); // reference 3.6: bit masking
  EXPECT_EQ(cv(40000.0f, DType::I16, SatMode::ON), 32767);
  EXPECT_EQ(cv(40000.0f, DType::I16, SatMode::OFF), 40000 - 65536);
  EXPECT_EQ(cv(1e10f, DType::I16, SatMode::OFF),
            -1); // saturates to INT32_MAX first, then low 16 bits
  EXPECT_EQ(cv(3e9f, DType::I32, SatMode::ON), 2147483647); // pto-isa CPU sim gives INT_MIN here
  EXPECT_EQ(cv(3e9f, DType::I32, SatMode::OFF), 2147483647);
  EXPECT_EQ(cv(-3e9f, DType::I32, SatMode::ON), -2147483647 - 1);
  EXPECT_EQ(cv(INFINITY, DType::I32, SatMode::ON), 2147483647);
  EXPECT_EQ(cv(-INFINITY, DType::I16, SatMode::ON), -32768);
  EXPECT_EQ(cv(NAN, DType::I32, SatMode::ON), 0);
  EXPECT_EQ(cv(NAN, DType::I8, SatMode::OFF), 0);
  EXPECT_EQ(cv(2.5f, DType::I32, SatMode::ON, RoundMode::CAST_NONE),
            2); // NONE = truncation for float -> int
  EXPECT_EQ(cv(-2.5f, DType::I32, SatMode::ON, RoundMode::CAST_ROUND), -3);
  EXPECT_EQ(cv(2.5f, DType::I32, SatMode::ON, RoundMode::CAST_RINT), 2);
  EXPECT_EQ(cv(2.25f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), 3);
  EXPECT_EQ(cv(3.75f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), 3);
  EXPECT_EQ(cv(-0.5f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), -1);
  // Default saturation per pair (reference 3.6).
  EXPECT_EQ(static_cast<int16_t>(
                convert(DType::F32, DType::I16, f32Bits(40000.0f), RoundMode::CAST_RINT)),
            -25536);
  EXPECT_EQ(
      static_cast<int32_t>(convert(DType::F32, DType::I32, f32Bits(3e9f), RoundMode::CAST_RINT)),
      2147483647);
  EXPECT_EQ(
      static_cast<int8_t>(convert(DType::F16, DType::I8, 0x5CB0 /* 300 */, RoundMode::CAST_RINT)),
      44);
  EXPECT_EQ(convert(DType::F16, DType::U8, 0xBC00 /* -1 */, RoundMode::CAST_RINT), 255u);
  EXPECT_EQ(convert(DType::F16, DType::U8, 0xBC00, RoundMode::CAST_RINT, SatMode::ON), 0u);
  EXPECT_EQ(
      static_cast<int32_t>(convert(DType::I64, DType::I32, 0x100000005ull, RoundMode::CAST_NONE)),
      5);
  EXPECT_EQ(static_cast<int16_t>(convert(DType::I32, DType::I16, 70000, RoundMode::CAST_NONE)),
            70000 - 65536);
  EXPECT_EQ(static_cast<int16_t>(
                convert(DType::I32, DType::I16, 70000, RoundMode::CAST_NONE, SatMode::ON)),
            32767);
}

TEST(NumericsTargeted, SaturationDefaults) {
  using enum DType;
  for (auto [s, d] :
       {std::pair{F16, U8}, {F16, I8}, {F32, I16}, {F16, I16}, {I64, I32}, {I32, I16}})
    EXPECT_FALSE(cvtSaturatesByDefault(s, d)) << spelling(s) << "->" << spelling(d);
  for (auto [s, d] : {std::pair{F32, I32},
                      {F32, F16},
                      {F32, BF16},
                      {F16, I4},
                      {F32, HIF8},
                      {I32, U8},
                      {U32, U16}})
    EXPECT_TRUE(cvtSaturatesByDefault(s, d)) << spelling(s) << "->" << spelling(d);
}

TEST(NumericsTargeted, NaNAndInfinity) {
  const uint64_t nan = 0x7FC00000u, inf = 0x7F800000u, ninf = 0xFF800000u;
  for (RoundMode rm : kModes)
    for (SatMode s : kSats) {
      EXPECT_EQ(convert(DType::F32, DType::F16, nan, rm, s), 0x7E00u);
      EXPECT_EQ(convert(DType::F32, DType::F8E4M3, nan, rm, s), 0x7Fu);
      EXPECT_EQ(convert(DType::F32, DType::HIF8, nan, rm, s), 0x80u);
      EXPECT_EQ(convert(DType::BF16, DType::F4E2M1X2, 0x7FC0, rm, s), 0x0u);
      EXPECT_EQ(convert(DType::F32, DType::F32, nan, rm, s), nan);
      EXPECT_EQ(convert(DType::F32, DType::F32, ninf, rm, s), ninf);
      EXPECT_EQ(convert(DType::F16, DType::F32, 0x7C00, rm, s), inf); // widening keeps inf
    }
  EXPECT_EQ(convert(DType::F32, DType::F16, inf, RoundMode::CAST_RINT, SatMode::OFF), 0x7C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, inf, RoundMode::CAST_RINT, SatMode::ON), 0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_RINT, SatMode::ON),
            0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_TRUNC, SatMode::OFF),
            0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-1e6f), RoundMode::CAST_FLOOR, SatMode::OFF),
            0xFC00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-1e6f), RoundMode::CAST_CEIL, SatMode::OFF),
            0xFBFFu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(500.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Fu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(500.0f), RoundMode::CAST_RINT, SatMode::ON),
            0x7Eu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(464.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Eu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(1.95f), RoundMode::CAST_RINT, SatMode::ON),
            0x40u); // 2.0
  EXPECT_EQ(convert(DType::F32, DType::F8E5M2, f32Bits(1e5f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Cu);
  EXPECT_EQ(convert(DType::F32, DType::HIF8, f32Bits(40960.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x6Eu);
  EXPECT_EQ(
      convert(DType::F32, DType::HIF8, f32Bits(40960.0f), RoundMode::CAST_ROUND, SatMode::OFF),
      0x6Fu);
  EXPECT_EQ(convert(DType::F32, DType::HIF8, f32Bits(-0.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-0.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x8000u);
  EXPECT_EQ(
      convert(DType::BF16, DType::F4E2M1X2, 0x40E0 /* 7 */, RoundMode::CAST_RINT, SatMode::OFF),
      0x7u);
}

TEST(NumericsTargeted, F32ToF32RoundsToIntegral) {
  auto r = [](float f, RoundMode rm) {
    return f32FromBits(
        static_cast<uint32_t>(convert(DType::F32, DType::F32, f32Bits(f), rm, SatMode::ON)));
  };
  EXPECT_EQ(r(2.5f, RoundMode::CAST_FLOOR), 2.0f); // pto-isa CPU sim leaves 2.5
  EXPECT_EQ(r(2.5f, RoundMode::CAST_RINT), 2.0f);
  EXPECT_EQ(r(3.5f, RoundMode::CAST_RINT), 4.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_ROUND), 3.0f);
  EXPECT_EQ(r(-2.5f, RoundMode::CAST_ROUND), -3.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_CEIL), 3.0f);
  EXPECT_EQ(r(-2.7f, RoundMode::CAST_TRUNC), -2.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_NONE), 2.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_ODD), 3.0f);
  EXPECT_EQ(r(4.25f, RoundMode::CAST_ODD), 5.0f);
  EXPECT_EQ(r(8388609.0f, RoundMode::CAST_FLOOR), 8388609.0f);
  EXPECT_EQ(r(1e30f, RoundMode::CAST_CEIL), 1e30f);
  const float negZero = r(-0.3f, RoundMode::CAST_CEIL);
  EXPECT_EQ(negZero, 0.0f);
  EXPECT_TRUE(std::signbit(negZero));
}

TEST(NumericsTargeted, FloatToFloatHonoursTheRoundMode) {
  // 1 + 2^-11 + 2^-13 (reference 3.6 probe: the CPU sim gives 0x3c01 for every mode).
  const uint64_t x = f32Bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -13));
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_RINT, SatMode::ON), 0x3C01u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_TRUNC, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_FLOOR, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_CEIL, SatMode::ON), 0x3C01u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_ODD, SatMode::ON), 0x3C01u);
  const uint64_t tie = f32Bits(1.0f + std::ldexp(1.0f, -11)); // exactly between 0x3C00 and 0x3C01
  EXPECT_EQ(convert(DType::F32, DType::F16, tie, RoundMode::CAST_RINT, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, tie, RoundMode::CAST_ROUND, SatMode::ON), 0x3C01u);
  EXPECT_EQ(
      convert(DType::F32, DType::BF16, f32Bits(1.00390625f), RoundMode::CAST_RINT, SatMode::ON),
      0x3F80u);
  EXPECT_EQ(
      convert(DType::F32, DType::BF16, f32Bits(1.01171875f), RoundMode::CAST_RINT, SatMode::ON),
      0x3F82u);
  // Integer -> float honours the mode too.
  EXPECT_EQ(convert(DType::I32, DType::F32, 16777217, RoundMode::CAST_RINT, SatMode::ON),
            f32Bits(16777216.0f));
  EXPECT_EQ(convert(DType::I32, DType::F32, 16777217, RoundMode::CAST_CEIL, SatMode::ON),
            f32Bits(16777218.0f));
  EXPECT_EQ(convert(DType::I32, DType::F16, 65520, RoundMode::CAST_RINT, SatMode::OFF), 0x7C00u);
  EXPECT_EQ(convert(DType::I32, DType::F16, 65520, RoundMode::CAST_RINT, SatMode::ON), 0x7BFFu);
  EXPECT_EQ(
      convert(DType::I64, DType::F32, 0x7FFFFFFFFFFFFFFFull, RoundMode::CAST_TRUNC, SatMode::ON),
      f32Bits(9223371487098961920.0f));
}

TEST(NumericsTargeted, PackedNibbleOrder) {
  uint8_t buf[2] = {0, 0};
  setNibble(buf, 0, 0x1);
  setNibble(buf, 1, 0x2);
  setNibble(buf, 2, 0xF);
  setNibble(buf, 3, 0x8);
  EXPECT_EQ(buf[0], 0x21); // low nibble = even index
  EXPECT_EQ(buf[1], 0x8F);
  EXPECT_EQ(getNibble(buf, 0), 0x1);
  EXPECT_EQ(getNibble(buf, 1), 0x2);
  EXPECT_EQ(getNibble(buf, 2), 0xF);
  EXPECT_EQ(getNibble(buf, 3), 0x8);
  setNibble(buf, 1, 0x7);
  EXPECT_EQ(buf[0], 0x71);
  EXPECT_EQ(decodeToDouble(DType::I4, getNibble(buf, 2)), -1.0);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, getNibble(buf, 3)), -0.0);
  // f16 -> int4 -> f16 round trip through packed storage.
  uint8_t packed[4] = {};
  const int vals[] = {-8, -3, 0, 1, 7, 5, -1, 2};
  for (size_t i = 0; i < 8; ++i) {
    const uint64_t h = encodeFromDouble(DType::F16, vals[i], RoundMode::CAST_RINT, SatMode::ON);
    setNibble(packed, i,
              static_cast<uint8_t>(convert(DType::F16, DType::I4, h, RoundMode::CAST_RINT)));
  }
  EXPECT_EQ(packed[0], 0xD8); // -3 (0xD) high, -8 (0x8) low
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(decodeToDouble(DType::F16, convert(DType::I4, DType::F16, getNibble(packed, i),
                                                 RoundMode::CAST_NONE)),
              vals[i]);
}

TEST(NumericsTargeted, ConverterTableMatchesConvert) {
  const Converter c(DType::F8E4M3, DType::F32, RoundMode::CAST_NONE);
  for (uint64_t i = 0; i < 256; ++i)
    EXPECT_EQ(c(i), convert(DType::F8E4M3, DType::F32, i, RoundMode::CAST_NONE));
  const Converter h(DType::F16, DType::I8, RoundMode::CAST_RINT);
  EXPECT_EQ(h(0x5CB0), 44u);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::F16, RoundMode::CAST_NONE), RoundMode::CAST_RINT);
  EXPECT_EQ(effectiveRoundMode(DType::F16, DType::I32, RoundMode::CAST_NONE),
            RoundMode::CAST_TRUNC);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::HIF8, RoundMode::CAST_NONE),
            RoundMode::CAST_ROUND);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::HIF8, RoundMode::CAST_FLOOR),
            RoundMode::CAST_FLOOR);
}
