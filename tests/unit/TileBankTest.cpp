// B.TBANK, the bank of a block's B.IOT operands (docs/encoding.md 5.4): its bit positions, the
// strict decoder's refusal, and every bank through encode -> decode -> text -> parse. Expected
// words are worked by hand from the documented bit positions.
#include "isa/Encoding.h"

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

TEST(TileBank, BitPositions) {
  // 0xc4039181: bits 31:30 = 11, bit 26 = 1, low 20 bits 0x39181; Bank 5:0 in 25:20, 8:6 in 29:27.
  EXPECT_EQ(word(bTbank(0)), 0xc4039181u);
  EXPECT_EQ(word(bTbank(1)), 0xc4139181u);
  EXPECT_EQ(word(bTbank(63)), 0xc7f39181u);
  EXPECT_EQ(word(bTbank(64)), 0xcc039181u);
  EXPECT_EQ(word(bTbank(511)), 0xfff39181u);
  EXPECT_EQ(format(bTbank(3)), "B.TBANK 3");
  EXPECT_EQ(kTilesPerBank * kTileBanks, 32768u);
}

TEST(TileBank, EveryBankRoundTrips) {
  for (unsigned bank = 0; bank < kTileBanks; ++bank) {
    const uint32_t w = word(bTbank(bank));
    auto d = decode(w, 32, {.extensions = true});
    ASSERT_TRUE(d.ok()) << bank;
    EXPECT_EQ(d->form, FormId::B_TBANK);
    EXPECT_EQ(d->get("Bank").value_or(-1), static_cast<int64_t>(bank));
    auto p = parse(format(*d), {.extensions = true});
    ASSERT_TRUE(p.ok()) << format(*d);
    EXPECT_EQ(word(*p), w);
    // A strict 0.58.3 decoder refuses the word: it is in the extension space.
    EXPECT_FALSE(decode(w, 32, {.extensions = false}).ok()) << bank;
  }
}

TEST(TileBank, NeighboursAreOtherForms) {
  // Bit 30 clear: the CTL form's space (CTL 8 with bit 31); bits 31:30 = 01: B.XATR's.
  auto ctl = decode(0x84039181u, 32, {.extensions = true});
  EXPECT_TRUE(!ctl.ok() || ctl->form != FormId::B_TBANK);
  auto xatr = decode(0x44039181u, 32, {.extensions = true});
  ASSERT_TRUE(xatr.ok());
  EXPECT_EQ(xatr->form, FormId::B_XATR);
}
