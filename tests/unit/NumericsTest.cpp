// Numerics: exhaustive decode/encode/convert tests against a reference written differently
// from isa/Numerics.cpp (NumericsReference.h). The targeted cases are NumericsTargetedTest.cpp.
#include "NumericsReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace pto::isa;
using namespace pto::numtest;

namespace {

std::string name(RoundMode rm, SatMode s) {
  return std::string(spelling(rm)) + "/" + std::string(spelling(s));
}

// Compares production against the reference for one (src, dst) pair over the given codes.
// Returns the number of conversions checked.
size_t checkPair(DType src, DType dst, const std::vector<uint64_t>& codes) {
  size_t n = 0, failures = 0;
  const unsigned dw = bitWidth(dst);
  std::vector<LD> xs;
  for (uint64_t c : codes)
    xs.push_back(ref::decode(src, c));
  for (RoundMode rm : kModes) {
    for (SatMode sat : kSats) {
      const Converter conv(src, dst, rm, sat);
      for (size_t i = 0; i < codes.size(); ++i) {
        const uint64_t c = codes[i];
        const uint64_t got = conv(c);
        const ref::Expect e = ref::convert(src, dst, c, xs[i], rm, sat);
        bool ok;
        if (e.isInt)
          ok = ref::decode(dst, got) == e.value && (dw >= 64 || (got >> dw) == 0);
        else
          ok = got == e.bits;
        ++n;
        if (!ok && ++failures <= 8) {
          ADD_FAILURE() << spelling(src) << " -> " << spelling(dst) << " " << name(rm, sat)
                        << " src 0x" << std::hex << c << " (" << static_cast<double>(xs[i])
                        << ") got 0x" << got << " want "
                        << (e.isInt ? std::to_string(static_cast<double>(e.value)) : "0x" + [&] {
                             char b[32];
                             snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(e.bits));
                             return std::string(b);
                           }());
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u) << spelling(src) << " -> " << spelling(dst);
  return n;
}

std::vector<uint64_t> allCodes(unsigned bits) {
  std::vector<uint64_t> v(size_t{1} << bits);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

// f32 test inputs for target t: every value of t, every midpoint, their f32 neighbours, both
// signs, plus zeros, infinities, NaN and values past the top.
std::vector<uint64_t> f32InputsFor(DType t) {
  const ref::Table& tb = ref::table(t);
  std::vector<float> xs;
  auto addAround = [&](LD v) {
    const float f = static_cast<float>(v);
    if (static_cast<LD>(f) != v) return; // not an f32 (cannot happen for these formats)
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)})
      xs.push_back(g), xs.push_back(-g);
  };
  for (size_t i = 0; i < tb.pos.size(); ++i) {
    addAround(tb.pos[i].v);
    const LD next = i + 1 < tb.pos.size() ? tb.pos[i + 1].v : tb.hypNext;
    addAround((tb.pos[i].v + next) / 2);
  }
  addAround(tb.hypNext);
  addAround(tb.hypNext * 4);
  for (float f : {0.0f, INFINITY, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min()})
    xs.push_back(f), xs.push_back(-f);
  std::vector<uint64_t> codes;
  for (float f : xs)
    codes.push_back(f32Bits(f));
  codes.push_back(0x7FC00000u);
  codes.push_back(0xFFC00001u);
  codes.push_back(0x7F800001u);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  return codes;
}

// Structured + pseudo-random 32/64-bit source codes.
std::vector<uint64_t> sampleCodes(DType src, size_t count) {
  std::vector<uint64_t> v;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(src);
  auto rnd = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  const unsigned w = bitWidth(src);
  const uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  for (size_t i = 0; i < count; ++i) {
    uint64_t r = rnd();
    if (src != DType::F32) r >>= (rnd() % 64); // small and large magnitudes for integers
    if (src != DType::F32 && (rnd() & 1)) r = ~r;
    v.push_back(r & mask);
  }
  if (src == DType::F32) { // every exponent with edge mantissas, and halves
    for (uint32_t e = 0; e < 256; ++e)
      for (uint32_t m : {0u, 1u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFFu, 0x1000u, 0xFFFu})
        for (uint32_t sgn : {0u, 1u})
          v.push_back((sgn << 31) | (e << 23) | m);
    for (int k = -3000; k <= 3000; ++k) {
      v.push_back(f32Bits(static_cast<float>(k) / 2)); // integers and ties
      v.push_back(f32Bits(static_cast<float>(k) / 4));
    }
    for (double d :
         {2147483647.0, 2147483648.0, -2147483648.0, -2147483904.0, 3e9, -3e9, 9.3e18, -9.3e18,
          1e30, 32767.5, -32768.5, 127.5, -128.5, 255.5, -0.5, 0.5, 65504.0, 65519.99, 65520.0})
      v.push_back(f32Bits(static_cast<float>(d)));
  } else {
    for (int64_t k = -3000; k <= 3000; ++k)
      v.push_back(static_cast<uint64_t>(k) & mask);
    for (int sh = 0; sh < static_cast<int>(w); ++sh)
      for (int64_t d = -3; d <= 3; ++d)
        v.push_back(((uint64_t{1} << sh) + static_cast<uint64_t>(d)) & mask);
    for (uint64_t x : {uint64_t{0x7FFFFFFFFFFFFFFFull}, uint64_t{0x8000000000000000ull},
                       uint64_t{0xFFFFFFFFull}, uint64_t{0x80000000ull}, uint64_t{0x7FFFFFFFull}})
      v.push_back(x & mask);
  }
  return v;
}

// Every (src, dst) pair of the TCVT table on either arch.
std::vector<std::pair<DType, DType>> tcvtPairs() {
  std::vector<std::pair<DType, DType>> pairs;
  for (unsigned s = 0; s < kNumDTypes; ++s)
    for (unsigned d = 0; d < kNumDTypes; ++d) {
      const DType src = static_cast<DType>(s), dst = static_cast<DType>(d);
      if (cvtSupported(Arch::A2A3, src, dst) || cvtSupported(Arch::A5, src, dst))
        pairs.push_back({src, dst});
    }
  return pairs;
}

} // namespace

// ============================================================ decode
TEST(NumericsDecode, EveryCodeOfEvery4To16BitFormat) {
  const DType types[] = {DType::F16,  DType::BF16,     DType::F8E4M3,   DType::F8E5M2, DType::HIF8,
                         DType::E8M0, DType::F4E2M1X2, DType::F4E1M2X2, DType::I4,     DType::I8,
                         DType::U8,   DType::I16,      DType::U16};
  size_t checked = 0;
  for (DType t : types) {
    const unsigned w = bitWidth(t);
    size_t bad = 0;
    for (uint64_t c = 0; c < (uint64_t{1} << w); ++c) {
      const double got = decodeToDouble(t, c);
      const LD want = ref::decode(t, c);
      const bool ok = std::isnan(want) ? std::isnan(got)
                                       : (static_cast<LD>(got) == want &&
                                          std::signbit(got) == std::signbit(want));
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << spelling(t) << " code 0x" << std::hex << c << " got " << got << " want "
                      << static_cast<double>(want);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u * 65536 + 4 * 256 + 3 * 16 + 2 * 256 + 2 * 65536);
}

TEST(NumericsDecode, SpecialValues) {
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::F8E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::F8E4M3, 0xFF)));
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x80), 0.0);
  EXPECT_TRUE(std::signbit(decodeToDouble(DType::F8E4M3, 0x80)));
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decodeToDouble(DType::F8E5M2, 0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::F8E5M2, 0x7C)));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x6E), 32768.0);
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::HIF8, 0x6F)));
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::HIF8, 0xEF)) &&
              decodeToDouble(DType::HIF8, 0xEF) < 0);
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::HIF8, 0x80)));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x01), std::ldexp(1.0, -22));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x07), std::ldexp(1.0, -16));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x08), 1.0);
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x14), 3.0);
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x7E), std::ldexp(1.0, -15));
  EXPECT_EQ(decodeToDouble(DType::E8M0, 0x7F), 1.0);
  EXPECT_EQ(decodeToDouble(DType::E8M0, 0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::E8M0, 0xFF)));
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0x7), 6.0);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0x1), 0.5);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0xF), -6.0);
  EXPECT_EQ(decodeToDouble(DType::F4E1M2X2, 0x7), 1.75);
  EXPECT_EQ(decodeToDouble(DType::F4E1M2X2, 0x1), 0.25);
  EXPECT_EQ(decodeToDouble(DType::I4, 0x8), -8.0);
  EXPECT_EQ(decodeToDouble(DType::I4, 0x7), 7.0);
  EXPECT_EQ(maxFinite(DType::F16), 65504.0);
  EXPECT_EQ(maxFinite(DType::HIF8), 32768.0);
}

// ============================================================ encode (f32 -> 8/16-bit float
// formats)
TEST(NumericsEncode, EveryValueMidpointAndNeighbourEveryModeAndSaturation) {
  const DType types[] = {DType::F16,  DType::BF16, DType::F8E4M3,   DType::F8E5M2,
                         DType::HIF8, DType::E8M0, DType::F4E2M1X2, DType::F4E1M2X2};
  size_t total = 0;
  for (DType t : types)
    total += checkPair(DType::F32, t, f32InputsFor(t));
  EXPECT_GT(total, 10'000'000u);
  RecordProperty("conversions", static_cast<int>(total));
}

TEST(NumericsEncode, FromDoubleMatchesF32PathOnF32Values) {
  for (DType t : {DType::F16, DType::HIF8, DType::F8E4M3, DType::E8M0})
    for (uint64_t c : f32InputsFor(t))
      for (RoundMode rm : kModes)
        for (SatMode s : kSats) {
          const double d = static_cast<double>(f32FromBits(static_cast<uint32_t>(c)));
          ASSERT_EQ(encodeFromDouble(t, d, rm, s), convert(DType::F32, t, c, rm, s))
              << spelling(t) << " " << d << " " << name(rm, s);
        }
}

// ============================================================ convert: the TCVT table
TEST(NumericsConvert, Exhaustive4To16BitSourcesOfTheTcvtTable) {
  size_t total = 0, pairs = 0;
  for (auto [src, dst] : tcvtPairs()) {
    if (bitWidth(src) > 16 || src == dst) continue;
    total += checkPair(src, dst, allCodes(bitWidth(src)));
    ++pairs;
  }
  EXPECT_EQ(pairs, 28u); // f16: 7, bf16: 5, i16: 5, u8: 2, i8: 3, i4, e4m3, e5m2, hif8, e1m2, e2m1
  RecordProperty("conversions", static_cast<int>(total));
}

TEST(NumericsConvert, Sampled32And64BitSourcesOfTheTcvtTable) {
  size_t pairs = 0;
  for (auto [src, dst] : tcvtPairs()) {
    if (bitWidth(src) <= 16) continue;
    checkPair(src, dst, sampleCodes(src, 15000));
    ++pairs;
  }
  EXPECT_EQ(pairs, 20u); // f32: 9, i32: 6, i64: 2, u32: 3
}
