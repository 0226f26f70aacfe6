// The fixpipe words of TMOV/TSTORE (docs/encoding.md 5.3) and the element computation
// (isa/Fixpipe.h, docs/language.md "Fixpipe attributes"). Expected words and values are worked
// by hand from the documented bit positions and definitions.
#include "isa/Fixpipe.h"
#include "isa/Encoding.h"
#include "isa/Numerics.h"

#include <gtest/gtest.h>

using namespace pto::isa;
using namespace pto::isa::enc;

namespace {

uint32_t word(const Inst& in) {
  auto e = encode(in);
  EXPECT_TRUE(e.ok()) << format(in);
  return e ? static_cast<uint32_t>(e->value) : 0;
}

} // namespace

TEST(Fixpipe, XatrBitPositions) {
  fix::Attrs a;
  // 0x44039181: bits 31:30 = 01, bit 26 = 1, low 20 bits 0x39181; Atomic 22, StPhase 24:23,
  // AccToVec 21:20.
  EXPECT_EQ(word(bXatr(a)), 0x44039181u);
  a.atomic = AtomicType::Add;
  EXPECT_EQ(word(bXatr(a)), 0x44039181u | (1u << 22));
  a.phase = StPhase::Final; // unit-flag code 3
  EXPECT_EQ(word(bXatr(a)), 0x45c39181u);
  a = {};
  a.phase = StPhase::Partial; // code 2
  EXPECT_EQ(word(bXatr(a)), 0x44039181u | (2u << 23));
  a = {};
  a.accToVec = AccToVecMode::DualSplitM;
  EXPECT_EQ(word(bXatr(a)), 0x44239181u);
  a.accToVec = AccToVecMode::DualSplitN;
  EXPECT_EQ(word(bXatr(a)), 0x44339181u);
  EXPECT_EQ(format(bXatr(a)), "B.XATR 0, 0, 3");
}

TEST(Fixpipe, FpatrCarriesQuantAndRelu) {
  fix::Attrs a;
  a.quant = fix::QuantPre::DeqF16; // 5
  a.relu = ReluPreMode::NormalRelu;
  // B.FPATR 0x00002023 | PreQuantMode 31:26 | ReluMode 25:23.
  EXPECT_EQ(word(bFpatr(a)), 0x00002023u | (5u << 26) | (1u << 23));
  a.quant = fix::QuantPre::VQS322BF16; // 36
  a.relu = ReluPreMode::NoRelu;
  EXPECT_EQ(word(bFpatr(a)), 0x00002023u | (36u << 26));
}

TEST(Fixpipe, WordsDecodeBackToTheAttributes) {
  for (auto q :
       {fix::QuantPre::None, fix::QuantPre::F322F16, fix::QuantPre::VReq8, fix::QuantPre::Req8,
        fix::QuantPre::VDeqF16, fix::QuantPre::DeqF16, fix::QuantPre::F322BF16,
        fix::QuantPre::VQF322B8, fix::QuantPre::QF322B8, fix::QuantPre::QF322F16,
        fix::QuantPre::QF322BF16, fix::QuantPre::QS322BF16, fix::QuantPre::VQS322BF16})
    for (auto relu : {ReluPreMode::NoRelu, ReluPreMode::NormalRelu})
      for (auto at : {AtomicType::None, AtomicType::Add})
        for (auto ph : {StPhase::Unspecified, StPhase::Partial, StPhase::Final})
          for (auto m : {AccToVecMode::SingleVec0, AccToVecMode::SingleVec1,
                         AccToVecMode::DualSplitM, AccToVecMode::DualSplitN}) {
            fix::Attrs a{q, relu, at, ph, m};
            fix::Attrs b;
            auto f = decode(word(bFpatr(a)), 32, {.extensions = true});
            auto x = decode(word(bXatr(a)), 32, {.extensions = true});
            ASSERT_TRUE(f && x);
            EXPECT_FALSE(readFpatr(*f, b));
            EXPECT_FALSE(readXatr(*x, b));
            EXPECT_EQ(a, b);
            // The text parses back to the same word.
            auto p = parse(format(*x), {.extensions = true});
            ASSERT_TRUE(p.ok()) << format(*x);
            EXPECT_EQ(word(*p), word(bXatr(a)));
          }
}

TEST(Fixpipe, StrictDecoderRejectsXatrAndBadFields) {
  EXPECT_FALSE(decode(0x45c39181u, 32, {.extensions = false}).ok());
  // StPhase code 1 is reserved.
  EXPECT_FALSE(decode(0x44039181u | (1u << 23), 32, {.extensions = true}).ok());
  // Bit 25 or bits 29:27 set: not B.XATR (nor any other form).
  EXPECT_FALSE(decode(0x44039181u | (1u << 25), 32, {.extensions = true}).ok());
  // A B.FPATR with a row-max field is not a TMOV/TSTORE word; ReluMode 2 is not a TMOV mode.
  fix::Attrs a;
  auto rowMax = decode(0x00002023u | (1u << 18), 32, {.extensions = true});
  ASSERT_TRUE(rowMax.ok());
  EXPECT_TRUE(readFpatr(*rowMax, a).has_value());
  auto leaky = decode(0x00002023u | (2u << 23), 32, {.extensions = true});
  ASSERT_TRUE(leaky.ok());
  EXPECT_TRUE(readFpatr(*leaky, a).has_value());
  // PreQuantMode 17 is in 0.58.3's domain but not a mode TMOV/TSTORE use.
  auto other = decode(0x00002023u | (17u << 26), 32, {.extensions = true});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(readFpatr(*other, a).has_value());
}

TEST(Fixpipe, QuantModesFollowPtoIsa) {
  using fix::QuantKind;
  using fix::QuantPre;
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::F16, QuantKind::None), QuantPre::F322F16);
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::F32, QuantKind::None), QuantPre::None);
  EXPECT_EQ(fix::quantPreFor(DType::I32, DType::I8, QuantKind::Scalar), QuantPre::Req8);
  EXPECT_EQ(fix::quantPreFor(DType::I32, DType::U8, QuantKind::Vector), QuantPre::VReq8);
  EXPECT_EQ(fix::quantPreFor(DType::I32, DType::F16, QuantKind::Scalar), QuantPre::DeqF16);
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::I8, QuantKind::Scalar), QuantPre::QF322B8);
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::BF16, QuantKind::Scalar), QuantPre::QF322BF16);
  // A5's vector f32 -> f16 (pto-isa's GetVectorPreQuantMode, code 33); bf16 has none here.
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::F16, QuantKind::Vector), QuantPre::VQF322F16);
  EXPECT_EQ(static_cast<unsigned>(QuantPre::VQF322F16), 33u);
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::BF16, QuantKind::Vector), std::nullopt);
  EXPECT_EQ(fix::quantPreFor(DType::F32, DType::F32, QuantKind::Scalar), std::nullopt);
}

TEST(Fixpipe, QuantWordFields) {
  // scale = word[31:13] then 13 zero bits: 0x3D800FFF reads as 0x3D800000 = 0.0625.
  const uint64_t w = 0x3D800FFFull | (uint64_t{5} << 37) | (uint64_t{1} << 46);
  const fix::QuantWord q = fix::decodeQuantWord(w);
  EXPECT_EQ(q.scale, 0.0625f);
  EXPECT_EQ(q.offset, 5u);
  EXPECT_TRUE(q.isSigned);
}

TEST(Fixpipe, ElementValues) {
  using fix::QuantPre;
  const uint64_t signedHalf = 0x3F000000ull | (uint64_t{1} << 46); // scale 0.5, signed range
  auto i32 = [](int32_t v) { return static_cast<uint64_t>(static_cast<uint32_t>(v)); };
  // REQ8: 301 * 0.5 = 150.5 -> 150 (ties to even) -> clamped to 127; -7 * 0.5 = -3.5 -> -4.
  EXPECT_EQ(fix::apply(QuantPre::Req8, DType::I32, DType::I8, i32(301), signedHalf, false), 0x7Fu);
  EXPECT_EQ(fix::apply(QuantPre::Req8, DType::I32, DType::I8, i32(-7), signedHalf, false), 0xFCu);
  // With the ReLU after the quantisation: -4 -> 0.
  EXPECT_EQ(fix::apply(QuantPre::Req8, DType::I32, DType::I8, i32(-7), signedHalf, true), 0u);
  // Unsigned range (bit 46 clear) with offset 10: -7 * 0.5 + 10 = 6.5 -> 6; -100*0.5+10 -> 0.
  const uint64_t unsignedOff = 0x3F000000ull | (uint64_t{10} << 37);
  EXPECT_EQ(fix::apply(QuantPre::Req8, DType::I32, DType::U8, i32(-7), unsignedOff, false), 6u);
  EXPECT_EQ(fix::apply(QuantPre::Req8, DType::I32, DType::U8, i32(-100), unsignedOff, false), 0u);
  // DEQF16: 200000 * 0.5 = 100000 clamps to 65504 = 0x7BFF; 3 * 0.5 = 1.5 = 0x3E00.
  EXPECT_EQ(fix::apply(QuantPre::DeqF16, DType::I32, DType::F16, i32(200000), signedHalf, false),
            0x7BFFu);
  EXPECT_EQ(fix::apply(QuantPre::DeqF16, DType::I32, DType::F16, i32(3), signedHalf, false),
            0x3E00u);
  // QF322F16 keeps infinity (0x7C00); a plain cast with relu maps -2.5 to +0.
  EXPECT_EQ(fix::apply(QuantPre::QF322F16, DType::F32, DType::F16, 0x7F800000u, signedHalf, false),
            0x7C00u);
  EXPECT_EQ(fix::apply(QuantPre::F322F16, DType::F32, DType::F16, f32Bits(-2.5f), 0, true), 0u);
  // No quantisation, relu on i32: -5 -> 0, 5 stays.
  EXPECT_EQ(fix::apply(QuantPre::None, DType::I32, DType::I32, i32(-5), 0, true), 0u);
  EXPECT_EQ(fix::apply(QuantPre::None, DType::I32, DType::I32, i32(5), 0, true), 5u);
}

TEST(Fixpipe, AtomicAdd) {
  // f16: 1024 (0x6400) + 0.5 (0x3800) = 1024.5 -> 1024 (spacing 1, ties to even);
  // 1025 (0x6401) + 0.5 -> 1026 (0x6402).
  EXPECT_EQ(fix::atomicAdd(DType::F16, 0x6400, 0x3800), 0x6400u);
  EXPECT_EQ(fix::atomicAdd(DType::F16, 0x6401, 0x3800), 0x6402u);
  // i8 wraps: 127 + 1 = -128; f32 1 + 2 = 3.
  EXPECT_EQ(fix::atomicAdd(DType::I8, 0x7F, 0x01), 0x80u);
  EXPECT_EQ(fix::atomicAdd(DType::F32, f32Bits(1.0f), f32Bits(2.0f)), f32Bits(3.0f));
  EXPECT_TRUE(fix::atomicAddType(DType::BF16));
  EXPECT_FALSE(fix::atomicAddType(DType::U32));
}
