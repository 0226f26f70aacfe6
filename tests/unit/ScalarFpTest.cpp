// The scalar floating-point unit (isa/ScalarFp) against values computed independently: the
// host compiler's _Float16 conversions (libgcc's soft-float), a bf16 rounding formula written here,
// and hand-picked edge values (NaN, -0, infinities, subnormals, saturation).
#include "isa/ScalarFp.h"
#include "isa/Numerics.h"
#include "isa/ScalarSemantics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace pto::isa {
namespace {

uint64_t fb(float f) {
  return std::bit_cast<uint32_t>(f);
}
uint64_t db(double d) {
  return std::bit_cast<uint64_t>(d);
}
constexpr unsigned kF32 = kFpSrcF32, kF64 = kFpSrcF64;
constexpr unsigned kToF16 = 4, kToBf16 = 5, kToF32 = 1, kToF64 = 0;
constexpr unsigned kToI32 = 9, kToU32 = 1, kToI8 = 11, kToI64 = 8;

TEST(ScalarFp, ArithmeticRoundsToNearestEvenAndCanonicalisesNaN) {
  EXPECT_EQ(scalarFp(FpOp::Add, kF32, 0, fb(1.0f), fb(0x1p-24f)), fb(1.0f)); // tie to even
  EXPECT_EQ(scalarFp(FpOp::Add, kF32, 0, fb(1.0f), fb(0x1.8p-24f)), fb(1.0f + 0x1p-23f));
  EXPECT_EQ(scalarFp(FpOp::Div, kF32, 0, fb(1.0f), fb(3.0f)), 0x3EAAAAABu);
  EXPECT_EQ(scalarFp(FpOp::Sub, kF32, 0, fb(INFINITY), fb(INFINITY)), 0x7FC00000u);
  EXPECT_EQ(scalarFp(FpOp::Mul, kF32, 0, 0xFFC12345u, fb(2.0f)), 0x7FC00000u); // payload not kept
  EXPECT_EQ(scalarFp(FpOp::Div, kF64, 0, db(0.0), db(0.0)), 0x7FF8000000000000ull);
  EXPECT_EQ(scalarFp(FpOp::Mul, kF32, 0, fb(0x1p-126f), fb(0.5f)), fb(0x1p-127f)); // no flush
  EXPECT_EQ(scalarFp(FpOp::Add, kF32, 0, 0xFFFFFFFF00000000ull | fb(1.0f), fb(1.0f)),
            fb(2.0f)); // low word only
}

TEST(ScalarFp, MaxMinAndCompares) {
  const uint64_t nan = 0x7FC00000u;
  EXPECT_EQ(scalarFp(FpOp::Max, kF32, 0, nan, fb(-3.0f)), fb(-3.0f));
  EXPECT_EQ(scalarFp(FpOp::Min, kF32, 0, fb(2.0f), nan), fb(2.0f));
  EXPECT_EQ(scalarFp(FpOp::Max, kF32, 0, nan, nan), nan);
  EXPECT_EQ(scalarFp(FpOp::Max, kF32, 0, fb(-0.0f), fb(0.0f)), fb(0.0f));
  EXPECT_EQ(scalarFp(FpOp::Max, kF32, 0, fb(0.0f), fb(-0.0f)), fb(0.0f));
  EXPECT_EQ(scalarFp(FpOp::Min, kF32, 0, fb(0.0f), fb(-0.0f)), fb(-0.0f));
  EXPECT_EQ(scalarFp(FpOp::Min, kF32, 0, fb(-0.0f), fb(-0.0f)), fb(-0.0f));
  EXPECT_EQ(scalarFp(FpOp::Eq, kF32, 0, fb(0.0f), fb(-0.0f)), 1u);
  EXPECT_EQ(scalarFp(FpOp::Ne, kF32, 0, nan, fb(1.0f)), 0u); // ordered: NaN gives 0, ne too
  EXPECT_EQ(scalarFp(FpOp::Lt, kF32, 0, fb(1.0f), nan), 0u);
  EXPECT_EQ(scalarFp(FpOp::Ge, kF32, 0, fb(1.0f), fb(1.0f)), 1u);
  EXPECT_EQ(scalarFp(FpOp::Lt, kF64, 0, db(-1.0), db(-0.5)), 1u);
  EXPECT_EQ(scalarFp(FpOp::Abs, kF32, 0, 0xFFC12345u, 0), 0x7FC12345u); // bit operation
}

TEST(ScalarFp, ToIntegerTruncatesAndSaturates) {
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToI32, fb(-2.9f), 0), static_cast<uint64_t>(int64_t{-2}));
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToI32, fb(3e9f), 0), 0x7FFFFFFFu);
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToI32, fb(-3e9f), 0),
            static_cast<uint64_t>(int64_t{INT32_MIN}));
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToI32, 0x7FC00000u, 0), 0u);
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToU32, fb(-5.0f), 0), 0u);
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToU32, fb(4e9f), 0), 4000000000u);
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF32, kToI8, fb(-200.0f), 0),
            static_cast<uint64_t>(int64_t{-128}));
  EXPECT_EQ(scalarFp(FpOp::CvtZ, kF64, kToI64, db(1e300), 0), 0x7FFFFFFFFFFFFFFFull);
}

TEST(ScalarFp, FromInteger) {
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 1, kToF32, 0xFFFFFFFFu, 0), fb(-1.0f)); // 32-bit source
  EXPECT_EQ(scalarFp(FpOp::UCvtF, 1, kToF32, 0xFFFFFFFFu, 0), fb(4294967296.0f));
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 0, kToF32, 16777217, 0), fb(16777216.0f)); // tie to even
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 0, kToF64, static_cast<uint64_t>(int64_t{-7}), 0), db(-7.0));
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 1, kToF16, 2049, 0), 0x6800u);  // 2048: tie to even
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 1, kToF16, 70000, 0), 0x7C00u); // overflow: +inf
  // -(0x3D20000000000080): 8 significant bits 11110100, then 10 and a 1 at bit 7: above the
  // half, so it rounds up (1 10111100 1110101). Rounding first to a double (53 bits) drops the
  // bit-7 one and makes it a tie, which the exported C++ used to round down to even.
  EXPECT_EQ(scalarFp(FpOp::SCvtF, 0, kToBf16, 0xC2DFFFFFFFFFFF80ull, 0), 0xDE75u);
  EXPECT_EQ(scalarFp(FpOp::UCvtF, 0, kToF16, (uint64_t{1} << 40) + (uint64_t{1} << 29) + 1, 0),
            0x7C00u); // 2^40 overflows f16 (max 65504)
  EXPECT_EQ(scalarFp(FpOp::UCvtF, 0, kToF16, (uint64_t{1} << 15) + (uint64_t{1} << 4) + 1, 0),
            0x7801u); // 2^15 + 16 + 1: above the tie at 2^15 + 16, rounds up to 2^15 + 32
}

/// bf16 from f32 by the rounding rule itself: add half an ulp minus one plus the lsb, truncate.
[[maybe_unused]] uint64_t bf16Of(uint32_t f) {
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return (f + 0x7FFF + ((f >> 16) & 1)) >> 16;
}

TEST(ScalarFp, FloatConversionsAgreeWithTheHostOnRandomInputs) {
#ifndef __FLT16_MANT_DIG__
  // clang before 15 has no _Float16 on x86; the gcc build (scripts/test.sh's main tree) runs this.
  GTEST_SKIP() << "the host compiler has no _Float16 to compare with";
#else
  std::mt19937_64 rng(2026);
  unsigned checked = 0;
  for (int i = 0; i < 400000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    const float f = std::bit_cast<float>(bits);
    const uint64_t h = scalarFp(FpOp::Cvt, kF32, kToF16, bits, 0);
    const uint64_t b = scalarFp(FpOp::Cvt, kF32, kToBf16, bits, 0);
    if (std::isnan(f)) {
      EXPECT_EQ(h, 0x7E00u);
      EXPECT_EQ(b, 0x7FC0u);
      continue;
    }
    const _Float16 want = static_cast<_Float16>(f);
    ASSERT_EQ(h, std::bit_cast<uint16_t>(want)) << std::hex << bits;
    ASSERT_EQ(b, bf16Of(bits)) << std::hex << bits;
    const double d = std::ldexp(static_cast<double>(static_cast<int64_t>(rng() >> 11)),
                                static_cast<int>(rng() % 80) - 60);
    ASSERT_EQ(scalarFp(FpOp::Cvt, kF64, kToF16, db(d), 0),
              std::bit_cast<uint16_t>(static_cast<_Float16>(d)))
        << d;
    ASSERT_EQ(scalarFp(FpOp::Cvt, kF64, kToF32, db(d), 0), fb(static_cast<float>(d))) << d;
    ASSERT_EQ(scalarFp(FpOp::Cvt, kF32, kToF64, bits, 0), db(static_cast<double>(f)));
    checked += 4;
  }
  EXPECT_GT(checked, 1500000u);
#endif
}

/// Random bits biased towards the interesting places of a float: small and large exponents,
/// integers near the limits of each width, NaNs, infinities and zeros.
uint64_t interestingBits(std::mt19937_64& rng, bool f32) {
  switch (rng() % 4) {
  case 0: // any bits
    return f32 ? rng() & 0xFFFFFFFFu : rng();
  case 1: { // an integer-valued float near a power of two (the fcvtz saturation edges)
    const double v = std::ldexp(1.0, static_cast<int>(rng() % 66)) +
                     static_cast<double>(static_cast<int>(rng() % 5) - 2);
    const double s = (rng() & 1) ? -v : v;
    return f32 ? std::bit_cast<uint32_t>(static_cast<float>(s)) : std::bit_cast<uint64_t>(s);
  }
  case 2: { // tiny and huge magnitudes (subnormal results, overflow)
    const double v = std::ldexp(static_cast<double>(rng() % 4096) / 4096.0 + 1.0,
                                static_cast<int>(rng() % 80) - 40 + ((rng() & 1) ? -100 : 0));
    return f32 ? std::bit_cast<uint32_t>(static_cast<float>(v)) : std::bit_cast<uint64_t>(v);
  }
  default: { // specials
    constexpr uint64_t k32[] = {0x7FC00000u, 0xFF800001u, 0x7F800000u, 0xFF800000u, 0, 0x80000000u};
    constexpr uint64_t k64[] = {0x7FF8000000000000ull,
                                0xFFF0000000000001ull,
                                0x7FF0000000000000ull,
                                0xFFF0000000000000ull,
                                0,
                                0x8000000000000000ull};
    return f32 ? k32[rng() % 6] : k64[rng() % 6];
  }
  }
}

// The FSU (isa/ScalarSemantics.inc, the text the C++ export embeds too) against the tile
// conversions of isa/Numerics, a separate implementation of the same rounding rules, on random
// inputs for every source width and every destination the scalar unit converts to.
TEST(ScalarFp, ConversionsAgreeWithTheTileNumerics) {
  std::mt19937_64 rng(20261202);
  unsigned checked = 0;
  const DType floatDst[] = {DType::F64, DType::F32, DType::F16, DType::BF16};
  const DType intDst[] = {DType::U64, DType::U32, DType::U16, DType::U8,
                          DType::I64, DType::I32, DType::I16, DType::I8};
  for (int i = 0; i < 200000; ++i) {
    for (unsigned t : {kF32, kF64}) {
      const uint64_t a = interestingBits(rng, t == kF32);
      const DType src = t == kF32 ? DType::F32 : DType::F64;
      const bool nan = t == kF32 ? std::isnan(std::bit_cast<float>(static_cast<uint32_t>(a)))
                                 : std::isnan(std::bit_cast<double>(a));
      for (DType dst : floatDst) {
        const unsigned code = *fpDstCode(dst);
        if (dst == src) { // fcvt to its own format only canonicalises NaNs
          const uint64_t self = t == kF32 ? a & 0xFFFFFFFFu : a;
          ASSERT_EQ(scalarFp(FpOp::Cvt, t, code, a, 0),
                    nan ? (t == kF32 ? 0x7FC00000u : 0x7FF8000000000000ull) : self);
        }
        const uint64_t want =
            nan ? encodeFromDouble(dst, std::nan(""), RoundMode::CAST_RINT, SatMode::OFF)
                : convert(src, dst, a, RoundMode::CAST_RINT, SatMode::OFF);
        if (dst != src) {
          ASSERT_EQ(scalarFp(FpOp::Cvt, t, code, a, 0), want) << std::hex << a << " " << code;
        }
        // Integers: the same bits read as a 32-bit (t 1) or 64-bit (t 0) integer.
        const DType si = t == kF32 ? DType::I32 : DType::I64;
        const DType ui = t == kF32 ? DType::U32 : DType::U64;
        ASSERT_EQ(scalarFp(FpOp::SCvtF, t, code, a, 0),
                  convert(si, dst, a, RoundMode::CAST_RINT, SatMode::OFF))
            << std::hex << a;
        ASSERT_EQ(scalarFp(FpOp::UCvtF, t, code, a, 0),
                  convert(ui, dst, a, RoundMode::CAST_RINT, SatMode::OFF))
            << std::hex << a;
        checked += 3;
      }
      for (DType dst : intDst) {
        const unsigned w = bitWidth(dst);
        uint64_t want = nan ? 0 : convert(src, dst, a, RoundMode::CAST_TRUNC, SatMode::ON);
        if (info(dst).kind == DTypeKind::SInt && w < 64) // registers hold it sign-extended
          want = static_cast<uint64_t>(static_cast<int64_t>(want << (64 - w)) >> (64 - w));
        ASSERT_EQ(scalarFp(FpOp::CvtZ, t, *intDstCode(dst), a, 0), want)
            << std::hex << a << " " << spelling(dst);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 5000000u);
}

// The integer ALU of isa/ScalarSemantics.inc (the runtime's and the exported C++'s), by hand from
// docs/encoding.md section 2: wrapping arithmetic, division by zero defined, the word forms
// sign-extend, shift counts modulo 64, compares write 0 or 1.
TEST(ScalarAlu, HandWorkedValues) {
  using isa::AluOp;
  using isa::scalar::alu;
  constexpr uint64_t kMin = 0x8000000000000000ull, kAll = ~uint64_t{0};
  const uint64_t m8 = static_cast<uint64_t>(int64_t{-8});
  EXPECT_EQ(alu(AluOp::Add, kAll, 2), 1u);
  EXPECT_EQ(alu(AluOp::Sub, 0, 1), kAll);
  EXPECT_EQ(alu(AluOp::AddW, 0x7FFFFFFF, 1), 0xFFFFFFFF80000000ull);
  EXPECT_EQ(alu(AluOp::SubW, 0, 1), kAll);
  EXPECT_EQ(alu(AluOp::MulW, 0x10000, 0x10000), 0u); // 2^32 wraps to 0 in 32 bits
  EXPECT_EQ(alu(AluOp::Div, m8, 3), static_cast<uint64_t>(int64_t{-2})); // toward zero
  EXPECT_EQ(alu(AluOp::Rem, m8, 3), static_cast<uint64_t>(int64_t{-2}));
  EXPECT_EQ(alu(AluOp::Div, 7, 0), kAll);
  EXPECT_EQ(alu(AluOp::Rem, 7, 0), 7u);
  EXPECT_EQ(alu(AluOp::Div, kMin, kAll), kMin); // INT64_MIN / -1
  EXPECT_EQ(alu(AluOp::Rem, kMin, kAll), 0u);
  EXPECT_EQ(alu(AluOp::DivU, m8, 2), 0x7FFFFFFFFFFFFFFCull);
  EXPECT_EQ(alu(AluOp::DivU, 5, 0), kAll);
  EXPECT_EQ(alu(AluOp::RemU, 5, 0), 5u);
  EXPECT_EQ(alu(AluOp::Min, m8, 3), m8);
  EXPECT_EQ(alu(AluOp::MinU, m8, 3), 3u);
  EXPECT_EQ(alu(AluOp::Max, m8, 3), 3u);
  EXPECT_EQ(alu(AluOp::MaxU, m8, 3), m8);
  EXPECT_EQ(alu(AluOp::Sll, 1, 65), 2u);
  EXPECT_EQ(alu(AluOp::Srl, m8, 60), 0xFu);
  EXPECT_EQ(alu(AluOp::Sra, m8, 1), static_cast<uint64_t>(int64_t{-4}));
  EXPECT_EQ(alu(AluOp::CmpLt, m8, 0), 1u);
  EXPECT_EQ(alu(AluOp::CmpLtU, m8, 0), 0u);
  EXPECT_EQ(alu(AluOp::CmpGe, 0, m8), 1u);
  EXPECT_EQ(alu(AluOp::CmpGeU, 0, m8), 0u);
  EXPECT_EQ(alu(AluOp::CmpAnd, 0xF0, 0x0F), 0u);
  EXPECT_EQ(alu(AluOp::CmpOr, 0xF0, 0x0F), 1u);
  EXPECT_EQ(alu(AluOp::Li, 123, 45), 45u);
  EXPECT_EQ(alu(AluOp::Xor, 0xFF, 0x0F), 0xF0u);
  EXPECT_TRUE(isa::isLogical(AluOp::And));
  EXPECT_FALSE(isa::isLogical(AluOp::Add));
  EXPECT_EQ(isa::aluFunction(AluOp::CmpGe), "cmp_ge"); // the exported C++ calls it by this name
}

TEST(ScalarFp, ConvertsOnlyToTheFormatsTheSharedSemanticsDefine) {
  // FP8 and the 32-bit compute formats are not FSU destinations (the runtime refuses the word).
  for (unsigned code : {2u, 3u, 6u, 7u, 8u, 13u})
    EXPECT_FALSE(fpDstType(code)) << code;
  EXPECT_EQ(fpDstType(4), DType::F16);
  EXPECT_EQ(fpDstType(5), DType::BF16);
  for (unsigned code : {4u, 5u, 6u, 7u, 12u})
    EXPECT_FALSE(intDstType(code)) << code;
}

} // namespace
} // namespace pto::isa
