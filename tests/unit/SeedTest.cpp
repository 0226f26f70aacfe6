// What the four seed documents (../shared/seeds: TDEQUANT, TAXPY, TCVT, TSQRT) state, checked
// against the encoder, the decoder, the block decoder of linked images and the C++ export: the
// expected values are the seeds' words, not this project's tables.
#include "asm/mc/BlockAsm.h"
#include "asm/mc/ImageCode.h"
#include "export/CppExport.h"
#include "isa/Encoding.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>

using namespace pto;
using namespace pto::isa::enc;
namespace code = pto::obj::code;

namespace {

std::string noSpace(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }),
          s.end());
  return s;
}

uint32_t wordAt(const obj::Image& img, uint64_t offset) {
  uint32_t w = 0;
  std::memcpy(&w, img.text.data() + offset, 4);
  return w;
}

// Seed 000: "TDEQUANT is a TEPL (Tile Elementwise Pipeline) complex-transform instruction:
// BSTART.TEPL TDEQUANT, DataType ... Mode 3 (complex transform), Function 11, TileOp 0x6B".
TEST(Seed, TdequantStartWordIsTheSeeds) {
  const TileOpInfo* op = findTileOp("TDEQUANT");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->family, TileFamily::TEPL);
  EXPECT_EQ(op->mode, 3u);
  EXPECT_EQ(op->function, 11u);
  EXPECT_EQ(op->mode << 5 | op->function, 0x6Bu); // TileOp selector
  // The start word is (DataType << 27) | (Mode << 25) | (Function << 20) | 0x19181.
  // S8 (code 19) and S16 (code 18) are the seed's two source types.
  auto s8 = encode(tileStart(op->op, 19));
  ASSERT_TRUE(s8) << s8.error().message;
  EXPECT_EQ(s8->word32(), 0x9EB19181u);
  auto s16 = encode(tileStart(op->op, 18));
  ASSERT_TRUE(s16) << s16.error().message;
  EXPECT_EQ(s16->word32(), (18u << 27) | (3u << 25) | (11u << 20) | 0x19181u);
  // The seed's spelling parses to the same word; it prints with the SFU engine name.
  auto p = parse("BSTART.TEPL TDEQUANT, S8");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(encode(*p)->word32(), 0x9EB19181u);
  EXPECT_EQ(disassemble(0x9EB19181u, 32), "BSTART.SFU TDEQUANT, S8");
  // Our tdequant (per-row scale/offset tiles) is this selector, not an extension op.
  EXPECT_EQ(tileOpFor(isa::OpId::TDEQUANT), op);
  EXPECT_EQ(findTileOp("TDEQUANT_ROW"), nullptr);
}

// Seed 000: "Operands (B.IOT): dst, src, scale, offset". The sample lowers to that block, which is
// plain 0.58.3 (no extension space), and decodes back to TDEQUANT with the four tiles.
TEST(Seed, TdequantBlockHasFourTileBindings) {
  obj::ObjectFile o = test::assembleFile(test::sourcePath("samples/tdequant/tdequant.pto"));
  EXPECT_FALSE(o.usesExtensions);
  obj::Image img = test::linkOne(o);
  ASSERT_FALSE(img.functions.empty());
  auto fc = code::decodeFunction(img, 0);
  ASSERT_TRUE(std::holds_alternative<code::FunctionCode>(fc))
      << std::get<code::CodeError>(fc).message;
  int found = 0;
  for (const code::Block& b : std::get<code::FunctionCode>(fc).blocks) {
    if (b.kind != code::BlockKind::Tile || b.tile.op != isa::OpId::TDEQUANT) continue;
    ++found;
    EXPECT_EQ(wordAt(img, b.offset), 0x9EB19181u);
    EXPECT_EQ(b.tile.encOp, TileOp::TDEQUANT);
    EXPECT_FALSE(b.tile.ior); // no multiplier / zero point
    ASSERT_EQ(b.tile.tiles.size(), 4u);
    const char* names[] = {"d", "src", "sc", "of"}; // dst, src, scale, offset (the sample's names)
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(img.functions[0].tiles[b.tile.tiles[i]].name, names[i]) << i;
  }
  EXPECT_EQ(found, 1);
}

obj::Image blockImage(const std::string& body) {
  as::SourceFile src(
      "k.s", ".arch a2a3\n.function @k entry kernel=vector\n"
             ".tile T#1 %d vec 16x32xf32 addr=0x0\n.tile T#2 %q vec 16x32xi8 addr=0x800\n"
             ".tile T#3 %sc vec 16x8xf32 addr=0xa00\n.tile T#4 %of vec 16x8xf32 addr=0xc00\n" +
                 body);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto o = as::assembleBlockText(src, diags);
  EXPECT_TRUE(o) << err.str();
  return test::linkOne(o ? *o : obj::ObjectFile{});
}

/// The first error of linking a block-assembly function made of `body`.
std::string linkError(const std::string& body) {
  as::SourceFile src(
      "k.s", ".arch a2a3\n.function @k entry kernel=vector\n"
             ".tile T#1 %d vec 16x32xf32 addr=0x0\n.tile T#2 %q vec 16x32xi8 addr=0x800\n"
             ".tile T#3 %sc vec 16x8xf32 addr=0xa00\n.tile T#4 %of vec 16x8xf32 addr=0xc00\n" +
                 body);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto o = as::assembleBlockText(src, diags);
  EXPECT_TRUE(o) << err.str();
  link::LinkResult r = link::link({{"k.o", o ? *o : obj::ObjectFile{}}}, link::LinkOptions{});
  EXPECT_FALSE(r.ok());
  for (const link::Diagnostic& d : r.diags)
    if (!d.note && !d.warning) return d.text;
  return "";
}

// The decoder tells the two forms of BSTART.SFU TDEQUANT apart by their bindings.
TEST(Seed, TdequantFormsAreToldApartByTheirBindings) {
  const std::string head =
      "BSTART.TEPL TDEQUANT, S8\nB.DATR {NORM, FP32, Zero, EQ, RNE, 0, 0}\nB.DIM zero, 32, ->LB0\n"
      "B.DIM zero, 16, ->LB1\n";
  obj::Image tile =
      blockImage(head + "B.IOT T#1, T#2, mask=1111\nB.IOT T#3, T#4, mask=1111, last\nBSTOP\n");
  auto fc = code::decodeFunction(tile, 0);
  ASSERT_TRUE(std::holds_alternative<code::FunctionCode>(fc))
      << std::get<code::CodeError>(fc).message;
  const code::TileBlock& tb = std::get<code::FunctionCode>(fc).blocks.at(0).tile;
  EXPECT_EQ(tb.op, isa::OpId::TDEQUANT);
  EXPECT_EQ(tb.tiles, (std::vector<uint32_t>{0, 1, 2, 3}));
  // 0.58.3's scalar form: B.IOR multiplier, zero point; B.IOT src, ->dst. Its destination hand
  // is refused by the one header reader, so already by the linker, in the same words.
  const std::string bad =
      linkError(head + "B.IOR a0, a1, zero, ->zero\nB.IOT T#2, mask=1111, last, ->T<1>\nBSTOP\n");
  EXPECT_NE(bad.find("0.58.3 scalar form"), std::string::npos) << bad;
  // Four tiles and a B.IOR is neither form.
  obj::Image mixed = blockImage(head + "B.IOR a0, a1, zero, ->zero\nB.IOT T#1, T#2, mask=1111\n"
                                       "B.IOT T#3, T#4, mask=1111, last\nBSTOP\n");
  EXPECT_TRUE(std::holds_alternative<code::CodeError>(code::decodeFunction(mixed, 0)));
}

// The C intrinsics of the four seeds, in the seeds' words (pto_instr.hpp), are what the
// declarations-only test header declares and what the export calls.
TEST(Seed, IntrinsicSignaturesAreTheSeeds) {
  const std::string header =
      noSpace(test::readText(test::sourcePath("tests/export/include/pto/pto-inst.hpp")));
  const char* seeds[] = {
      // 000 TDEQUANT
      "template <typename TileDataDst, typename TileDataSrc, typename TileDataPara, typename... "
      "WaitEvents> "
      "PTO_INST RecordEvent TDEQUANT(TileDataDst& dst, TileDataSrc& src, TileDataPara& scale, "
      "TileDataPara& offset, "
      "WaitEvents&... events);",
      // 002 TAXPY
      "template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents> PTO_INST "
      "RecordEvent "
      "TAXPY(TileDataDst& dst, TileDataSrc& src0, typename TileDataSrc::DType scalar, "
      "WaitEvents&... events);",
      // 003 TCVT (the two forms without a tmp tile; the export passes the saturation mode)
      "template <bool NeedSetCtrl = true, typename TileDataD, typename TileDataS, typename... "
      "WaitEvents> "
      "PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, RoundMode mode, SaturationMode "
      "satMode, "
      "WaitEvents&... events);",
      // 004 TSQRT
      "template <auto PrecisionType = SqrtAlgorithm::DEFAULT, typename TileDataDst, typename "
      "TileDataSrc, "
      "typename... WaitEvents> PTO_INST RecordEvent TSQRT(TileDataDst& dst, TileDataSrc& src, "
      "WaitEvents&... events);",
  };
  for (const char* s : seeds)
    EXPECT_NE(header.find(noSpace(s)), std::string::npos) << s;
  const std::pair<isa::OpId, const char*> calls[] = {{isa::OpId::TDEQUANT, "TDEQUANT"},
                                                     {isa::OpId::TAXPY, "TAXPY"},
                                                     {isa::OpId::TCVT, "TCVT"},
                                                     {isa::OpId::TSQRT, "TSQRT"}};
  for (const auto& [op, name] : calls)
    EXPECT_EQ(cppexport::cppIntrinsic(op), name);
}

// Every op the export can call is declared in the declarations-only header (by name, as a
// function, a shape macro's argument, or the Tile member SetValue).
TEST(Seed, EveryExportedIntrinsicIsDeclared) {
  const std::string header =
      test::readText(test::sourcePath("tests/export/include/pto/pto-inst.hpp"));
  unsigned n = 0;
  for (const isa::OpInfo& oi : isa::allOps()) {
    const std::string name = cppexport::cppIntrinsic(oi.id);
    if (name.empty()) continue;
    ++n;
    const bool declared = header.find("RecordEvent " + name + "(") != std::string::npos ||
                          header.find("PTO_INST void " + name + "(") != std::string::npos ||
                          header.find("> void " + name + "(") != std::string::npos || // TASSIGN
                          header.find("(" + name + ")") != std::string::npos ||
                          header.find("(" + name + ", ") != std::string::npos ||
                          (name == "SetValue" && header.find(" SetValue(") != std::string::npos);
    EXPECT_TRUE(declared) << oi.mnemonic << " -> " << name;
  }
  EXPECT_GT(n, 100u);
}

} // namespace
