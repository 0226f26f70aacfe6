// The one reader of a block's header (asm/mc/BlockHeader.h): every B.IOT form read alike by the
// linker's graphs (link/Cfg.cpp) and the image decoder (asm/mc/ImageCode.cpp). They used to
// disagree on the destination-hand forms (B.IOT ..., ->T<size>): the linker read the sources as
// operands and linked, the image decoder refused the image it made.
#include "asm/mc/BlockHeader.h"
#include "asm/mc/ImageCode.h"
#include "isa/Encoding.h"
#include "link/Cfg.h"

#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

using namespace pto;
namespace enc = isa::enc;
using Kind = obj::code::HeaderWord::Kind;

namespace {

obj::ObjectFile kernelObject() {
  return test::assembleText("kernel @k(%x: !pto.tensor_view<16x16xf32>) {\n"
                            "  tile %t0, %t1 : !pto.tile<f32, 16, 16>\n"
                            "  tload %t0, %x[0, 0]\n"
                            "  tadd %t1, %t0, %t0\n"
                            "  tstore %x[0, 0], %t1\n"
                            "}\n");
}

/// The offset of the first source-form B.IOT word with two operands in [begin, end) of `text`.
std::optional<uint64_t> firstIot2(const std::vector<uint8_t>& text, uint64_t begin, uint64_t end) {
  obj::code::BlockScanner scan(text, begin, end);
  while (const obj::code::Word* w = scan.next())
    if (w->inst.form == enc::FormId::B_IOT_S2) return w->offset;
  return std::nullopt;
}

/// Replaces the 32-bit word at `at` by `in`.
void put(std::vector<uint8_t>& text, uint64_t at, const enc::Inst& in) {
  auto e = enc::encode(in);
  ASSERT_TRUE(e) << e.error().message;
  for (unsigned k = 0; k < 4; ++k)
    text[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
}

} // namespace

TEST(BlockHeader, EveryIotFormIsReadOneWay) {
  obj::code::HeaderReader r;
  r.start();
  auto s2 = r.read(enc::bIot(3, 5, true));
  EXPECT_EQ(s2.kind, Kind::Operands);
  ASSERT_EQ(s2.numTiles, 2);
  EXPECT_EQ(s2.tiles[0], 3u);
  EXPECT_EQ(s2.tiles[1], 5u);
  EXPECT_EQ(r.read(enc::bTbank(2)).kind, Kind::Bank);
  auto s1 = r.read(enc::bIot(7, std::nullopt, true));
  ASSERT_EQ(s1.numTiles, 1);
  EXPECT_EQ(s1.tiles[0], 2 * enc::kTilesPerBank + 7); // the bank applies
  r.start();
  EXPECT_EQ(r.read(enc::bIot(7, std::nullopt, true)).tiles[0], 7u); // a new block: bank 0
  for (const enc::Inst& hand :
       {enc::bIotDst(1, 2, 0, 1, true), enc::bIotDst(1, std::nullopt, 0, 1, true),
        enc::bIotDst(std::nullopt, std::nullopt, 0, 1, true)})
    EXPECT_EQ(r.read(hand).kind, Kind::DestinationHand) << enc::format(hand);
  EXPECT_EQ(r.read(enc::bDim(0, 4, 9)).bound, (obj::code::Bound{4, 9, true}));
  EXPECT_EQ(r.read(enc::bstop()).kind, Kind::Other);
  EXPECT_TRUE(obj::code::isHeaderForm(enc::info(enc::FormId::B_IOT_S2D)));
  EXPECT_FALSE(obj::code::isHeaderForm(enc::info(enc::FormId::BSTOP)));
  EXPECT_FALSE(obj::code::isHeaderForm(enc::info(enc::FormId::BSTART_STD_FALL)));
  EXPECT_FALSE(obj::code::isHeaderForm(enc::info(enc::FormId::S_ADDI)));
}

TEST(BlockHeader, LinkerAndImageDecoderBothRefuseADestinationHand) {
  obj::ObjectFile o = kernelObject();
  ASSERT_EQ(o.functions.size(), 1u);
  const obj::Function& fn = o.functions[0];
  // The object as made links and its image decodes.
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(link::buildCfg(o, 0)));
  link::LinkOptions opts;
  link::LinkResult r = link::link({{"k.o", o}}, opts);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(
      std::holds_alternative<obj::code::FunctionCode>(obj::code::decodeFunction(*r.image, 0)));
  // The tadd's operands, one of them as a destination hand instead: both readers refuse it.
  auto at = firstIot2(o.text, fn.textOffset, fn.textOffset + fn.textSize);
  ASSERT_TRUE(at);
  put(o.text, *at, enc::bIotDst(0, 0, 0, 1, true));
  auto cfg = link::buildCfg(o, 0);
  ASSERT_TRUE(std::holds_alternative<std::string>(cfg));
  EXPECT_NE(std::get<std::string>(cfg).find(": B.IOT destination hands are not supported"),
            std::string::npos)
      << std::get<std::string>(cfg);
  obj::Image img = *r.image;
  auto imageAt = firstIot2(img.text, img.functions[0].textOffset,
                           img.functions[0].textOffset + img.functions[0].textSize);
  ASSERT_TRUE(imageAt);
  put(img.text, *imageAt, enc::bIotDst(0, 0, 0, 1, true));
  auto code = obj::code::decodeFunction(img, 0);
  ASSERT_TRUE(std::holds_alternative<obj::code::CodeError>(code));
  EXPECT_EQ(std::get<obj::code::CodeError>(code).message,
            "B.IOT destination hands are not supported");
  EXPECT_FALSE(link::link({{"k.o", o}}, opts).ok());
}
