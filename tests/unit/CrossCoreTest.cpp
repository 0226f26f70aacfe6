// The configuration words of the cross-core pipe ops (isa/CrossCore.h): every valid
// configuration survives pack and unpack, the bit positions are the ones docs/pipes.md states
// (worked by hand), and a word with a reserved bit or a value out of range is refused.
#include "isa/CrossCore.h"

#include <gtest/gtest.h>

#include <random>

using namespace pto::isa::xcore;

TEST(CrossCore, InitWordBitsAsDocumented) {
  InitConfig c;
  c.slotSize = 1024;  // bits 0-19
  c.slotNum = 8;      // 20-23
  c.localSlotNum = 4; // 24-27
  c.flagBase = 2;     // 28-31
  c.dirMask = 3;      // 32-33
  c.noSplit = true;   // 34
  c.gmPath = true;    // 35
  c.bufIsV2C = true;  // 36
  // 0x400 | 8 << 20 | 4 << 24 | 2 << 28 | 3 << 32 | 1 << 34 | 1 << 35 | 1 << 36, by hand:
  EXPECT_EQ(pack(c), 0x1F24800400ull);
  OpConfig o{.flagBase = 5, .dir = kV2C, .split = 2};
  EXPECT_EQ(pack(o), 0x5u | 2u << 4 | 2u << 6); // 0xA5
}

TEST(CrossCore, RandomConfigurationsRoundTrip) {
  std::mt19937_64 rng(7);
  unsigned checked = 0;
  for (int n = 0; n < 100000; ++n) {
    InitConfig c;
    c.slotSize = 1 + static_cast<uint32_t>(rng() % 0xFFFFF);
    c.slotNum = rng() % 2 ? 4 : 8;
    c.localSlotNum = static_cast<uint8_t>(1 + rng() % c.slotNum);
    c.flagBase = static_cast<uint8_t>(rng() % 13);
    c.dirMask = static_cast<uint8_t>(1 + rng() % 3);
    c.noSplit = rng() % 2;
    c.gmPath = rng() % 2;
    c.bufIsV2C = rng() % 2;
    c.localIsV2C = rng() % 2;
    c.gmEntries = c.gmPath && rng() % 2;
    auto u = unpackInit(pack(c));
    ASSERT_TRUE(u);
    EXPECT_EQ(u->slotSize, c.slotSize);
    EXPECT_EQ(u->slotNum, c.slotNum);
    EXPECT_EQ(u->localSlotNum, c.localSlotNum);
    EXPECT_EQ(u->flagBase, c.flagBase);
    EXPECT_EQ(u->dirMask, c.dirMask);
    EXPECT_EQ(u->noSplit, c.noSplit);
    EXPECT_EQ(u->gmPath, c.gmPath);
    EXPECT_EQ(u->bufIsV2C, c.bufIsV2C);
    EXPECT_EQ(u->localIsV2C, c.localIsV2C);
    EXPECT_EQ(u->gmEntries, c.gmEntries);
    OpConfig o{static_cast<uint8_t>(rng() % 13), static_cast<uint8_t>(1 + rng() % 2),
               static_cast<uint8_t>(rng() % 3)};
    auto v = unpackOp(pack(o));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->flagBase, o.flagBase);
    EXPECT_EQ(v->dir, o.dir);
    EXPECT_EQ(v->split, o.split);
    ++checked;
  }
  EXPECT_EQ(checked, 100000u);
}

TEST(CrossCore, CorruptWordsAreRefused) {
  InitConfig c;
  c.slotSize = 512;
  const uint64_t good = pack(c);
  ASSERT_TRUE(unpackInit(good));
  EXPECT_FALSE(unpackInit(good | 1ull << 39));                     // a reserved bit
  EXPECT_FALSE(unpackInit(good | 1ull << 38));                     // GM entries, no GM ring
  EXPECT_FALSE(unpackInit(good & ~0xFFFFFull));                    // slot size 0
  EXPECT_FALSE(unpackInit((good & ~(0xFull << 20)) | 6ull << 20)); // 6 slots
  EXPECT_FALSE(unpackInit((good & ~(0xFull << 24)) | 0ull << 24)); // no local slot
  EXPECT_FALSE(unpackInit(good | 13ull << 28));   // flag base 13 (uses flags 13..16)
  EXPECT_FALSE(unpackInit(good & ~(3ull << 32))); // no direction
  EXPECT_FALSE(unpackOp(1u << 8));                // a reserved bit
  EXPECT_FALSE(unpackOp(0u << 4));                // no direction
  EXPECT_FALSE(unpackOp(1u << 4 | 3u << 6));      // split 3
  EXPECT_FALSE(unpackOp(13u | 1u << 4));          // flag base 13
}
