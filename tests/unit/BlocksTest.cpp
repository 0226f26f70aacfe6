// The one block decoder (asm/mc/Blocks.h) and the Flow column of the command-form table it reads.
// The words are written out by hand from isa/Encoding.def's match/mask/field columns, and the
// block boundaries and targets below are worked out by hand, not computed by the decoder.
#include "asm/mc/Blocks.h"
#include "isa/Encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace {

namespace enc = pto::isa::enc;
namespace code = pto::obj::code;
using code::BlockKind;
using code::Transfer;

void word32(std::vector<uint8_t>& t, uint32_t w) {
  for (int i = 0; i < 4; ++i)
    t.push_back(static_cast<uint8_t>(w >> (8 * i)));
}

void word16(std::vector<uint8_t>& t, uint16_t w) {
  t.push_back(static_cast<uint8_t>(w));
  t.push_back(static_cast<uint8_t>(w >> 8));
}

/// Every kind of block start and stop, with the offsets in the comments.
std::vector<uint8_t> sample() {
  std::vector<uint8_t> t;
  word32(t, 0x00001001); // 0x00 BSTART.STD FALL                 block 0
  word32(t, 0x00000005); // 0x04 add zero, zero, ->zero
  word32(t, 0x000003a1); // 0x08 BSTART COND, simm25 = 7 -> 0x16  block 1
  word32(t, 0x00000005); // 0x0c add
  word32(t, 0x00000001); // 0x10 BSTOP
  word16(t, 0x0000);     // 0x14 C.BSTOP, no block open: stays in block 1's range
  word32(t, 0x00000005); // 0x16 add: opens an implicit block     block 2
  word16(t, 0x3800);     // 0x1a C.BSTART.STD RET (BrType 7)      block 3
  word32(t, 0x50160102); // 0x1c BSTART.CALL simm12 = 16 -> 0x3c  block 4
  word32(t, 0x24939181); // 0x20 BSTART.EXT SET_FLAG PIPE_V -> PIPE_MTE2   block 5
  word32(t, 0x00000001); // 0x24 BSTOP
  word32(t, 0x08019181); // 0x28 BSTART.VEC TADD, FP32            block 6
  word32(t, 0x00000001); // 0x2c BSTOP
  word32(t, 0xfffff411); // 0x30 BSTART DIRECT, simm25 = -24 -> 0x00   block 7
  return t;
}

struct Expect {
  uint64_t offset, end;
  bool hasStart;
  BlockKind kind;
  Transfer transfer;
  int64_t target; // -1: none
  uint32_t numWords;
};

TEST(Blocks, HandWrittenFunction) {
  const std::vector<uint8_t> t = sample();
  const code::DecodedBlocks d = code::decodeBlocks(t, 0, t.size());
  ASSERT_FALSE(d.error) << d.error->message;
  const Expect want[] = {
      {0x00, 0x08, true, BlockKind::Scalar, Transfer::Fall, -1, 2},
      {0x08, 0x16, true, BlockKind::Scalar, Transfer::Cond, 0x16, 4},
      {0x16, 0x1a, false, BlockKind::Scalar, Transfer::Fall, -1, 1},
      {0x1a, 0x1c, true, BlockKind::Scalar, Transfer::Ret, -1, 1},
      {0x1c, 0x20, true, BlockKind::Scalar, Transfer::Call, 0x3c, 1},
      {0x20, 0x28, true, BlockKind::Control, Transfer::Fall, -1, 2},
      {0x28, 0x30, true, BlockKind::Tile, Transfer::Fall, -1, 2},
      {0x30, 0x34, true, BlockKind::Scalar, Transfer::Direct, 0x00, 1},
  };
  ASSERT_EQ(d.code.blocks.size(), std::size(want));
  EXPECT_EQ(d.code.words.size(), 14u);
  uint32_t word = 0;
  for (size_t i = 0; i < std::size(want); ++i) {
    const code::BlockWords& b = d.code.blocks[i];
    const Expect& w = want[i];
    SCOPED_TRACE("block " + std::to_string(i));
    EXPECT_EQ(b.offset, w.offset);
    EXPECT_EQ(b.end, w.end);
    EXPECT_EQ(b.hasStart, w.hasStart);
    EXPECT_EQ(b.kind, w.kind);
    EXPECT_EQ(b.transfer, w.transfer);
    EXPECT_EQ(b.target ? static_cast<int64_t>(*b.target) : -1, w.target);
    EXPECT_EQ(b.firstWord, word);
    EXPECT_EQ(b.numWords, w.numWords);
    EXPECT_EQ(d.code.wordsOf(b).front().offset, w.offset);
    EXPECT_EQ(d.code.startOf(b) != nullptr, w.hasStart);
    EXPECT_EQ(d.code.blockStartingAt(w.offset), i);
    word += w.numWords;
  }
  EXPECT_FALSE(d.code.blockStartingAt(0x04));
  EXPECT_FALSE(d.code.blockStartingAt(0x14)); // the stray C.BSTOP opens no block
  // The control block carries its op (the CTL field); the others carry none.
  for (size_t i = 0; i < d.code.blocks.size(); ++i)
    EXPECT_EQ(d.code.blocks[i].control, i == 5 ? enc::ExtCtl::SET_FLAG : enc::ExtCtl::None) << i;
}

TEST(Blocks, CompactStartsByBrType) {
  std::vector<uint8_t> t;
  word16(t, 0x0800); // 0x0 C.BSTART.STD FALL (BrType 1)
  word16(t, 0x2800); // 0x2 C.BSTART.STD IND (BrType 5)
  word16(t, 0x0004); // 0x4 C.BSTART COND, simm12 = 0 -> 0x4
  const code::DecodedBlocks d = code::decodeBlocks(t, 0, t.size());
  ASSERT_FALSE(d.error) << d.error->message;
  ASSERT_EQ(d.code.blocks.size(), 3u);
  EXPECT_EQ(d.code.blocks[0].transfer, Transfer::Fall);
  EXPECT_EQ(d.code.blocks[1].transfer, Transfer::Indirect);
  EXPECT_EQ(d.code.blocks[2].transfer, Transfer::Cond);
  EXPECT_EQ(d.code.blocks[2].target, 0x4u);
}

TEST(Blocks, StopsAtAWordThatDoesNotDecodeAndKeepsWhatCameBefore) {
  std::vector<uint8_t> t;
  word32(t, 0x00001001); // 0x0 BSTART.STD FALL
  word32(t, 0x00000005); // 0x4 add
  word32(t, 0x000003a1); // 0x8 BSTART COND
  t.push_back(0x05);     // 0xc one byte: not an instruction
  const code::DecodedBlocks d = code::decodeBlocks(t, 0, t.size());
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.error->offset, 0xcu);
  ASSERT_EQ(d.code.blocks.size(), 2u);
  EXPECT_EQ(d.code.words.size(), 3u);
  EXPECT_EQ(d.code.blocks[1].offset, 0x8u);
  EXPECT_EQ(d.code.blocks[1].end, 0xcu);
}

TEST(Blocks, DecodesOnlyTheRangeAsked) {
  const std::vector<uint8_t> t = sample();
  const code::DecodedBlocks d = code::decodeBlocks(t, 0x16, 0x20);
  ASSERT_FALSE(d.error);
  ASSERT_EQ(d.code.blocks.size(), 3u);
  EXPECT_EQ(d.code.blocks[0].offset, 0x16u);
  EXPECT_FALSE(d.code.blocks[0].hasStart);
  EXPECT_EQ(d.code.blocks[2].end, 0x20u);
}

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool has(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

/// The flow a form's canonical syntax spells (docs/abi.md), read from the text alone.
enc::Flow flowOfSyntax(std::string_view syn) {
  using F = enc::Flow;
  if (syn == "BSTOP" || syn == "C.BSTOP" || syn == "L.BSTOP") return F::Stop;
  const bool start = startsWith(syn, "BSTART") || startsWith(syn, "C.BSTART") || syn == "@TEPL" ||
                     syn == "@EXT" || syn == "@EXTC";
  if (!start) return F::None;
  if (has(syn, "$BrType")) return F::ByBrType;
  if (has(syn, " IND") || has(syn, "ICALL")) return F::Indirect;
  if (startsWith(syn, "BSTART.CALL")) return F::Call;
  if (has(syn, "DIRECT, $")) return F::Direct;
  if (has(syn, "COND, $")) return F::Cond;
  if (has(syn, " RET")) return F::Ret;
  if (has(syn, " FALL")) return F::Fall;
  return F::Op; // a tile op's or an extension control op's start
}

TEST(Blocks, FlowColumnAgreesWithEverySyntax) {
  for (const enc::FormInfo& f : enc::allForms()) {
    SCOPED_TRACE(std::string(f.idName) + ": " + std::string(f.syntax));
    EXPECT_EQ(f.flow, flowOfSyntax(f.syntax));
    const bool branches =
        f.flow == enc::Flow::Direct || f.flow == enc::Flow::Cond || f.flow == enc::Flow::Call;
    EXPECT_EQ(f.labelField >= 0, branches);
    if (f.labelField >= 0) {
      EXPECT_EQ(f.fields[static_cast<size_t>(f.labelField)].kind, enc::FieldKind::Label);
    }
    EXPECT_EQ(f.startsBlock(), f.flow != enc::Flow::None && f.flow != enc::Flow::Stop);
  }
}

} // namespace
