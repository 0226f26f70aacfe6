// The configuration words of the cross-core pipe ops (TPIPE_INIT / PUSH / POP / FREE, XOPs 22-25;
// docs/pipes.md), written once for the assembler that packs them into B.IOR and the runtime
// that unpacks them. An unpacked word is checked: reserved bits set or a value out of range is
// a corrupt word, never a silently different pipe.
#pragma once

#include <cstdint>
#include <optional>

namespace pto::isa::xcore {

inline constexpr unsigned kC2V = 1, kV2C = 2; // dir_mask bits (3 = both)

/// TPIPE_INIT's configuration: the pipe's shape and where this core's buffers are.
struct InitConfig {
  uint32_t slotSize = 0;    // bytes per slot, 1..2^20-1
  uint8_t slotNum = 8;      // 4 or 8
  uint8_t localSlotNum = 8; // A2/A3 GM path: the consumer's local copy ring, 1..slotNum
  uint8_t flagBase = 0;     // 0..12: the pipe's cross-core flags are flagBase..flagBase+3
  uint8_t dirMask = 1;      // kC2V, kV2C or both
  bool noSplit = false;
  bool gmPath = false;     // the ring is in GM (initialize_l2g2l_pipe), else local (l2l)
  bool bufIsV2C = false;   // the bound `buf` tile is the V2C consumer buffer (else C2V)
  bool localIsV2C = false; // the `local` register is the V2C consumer buffer (else C2V)
  bool gmEntries = false;  // slots are GM tensor views (gm_slot_tensor): no data moved by the pipe
};

inline uint64_t pack(const InitConfig& c) {
  return uint64_t{c.slotSize & 0xFFFFF} | uint64_t{c.slotNum & 0xFu} << 20 |
         uint64_t{c.localSlotNum & 0xFu} << 24 | uint64_t{c.flagBase & 0xFu} << 28 |
         uint64_t{c.dirMask & 3u} << 32 | uint64_t{c.noSplit} << 34 | uint64_t{c.gmPath} << 35 |
         uint64_t{c.bufIsV2C} << 36 | uint64_t{c.localIsV2C} << 37 | uint64_t{c.gmEntries} << 38;
}

inline std::optional<InitConfig> unpackInit(uint64_t w) {
  if (w >> 39) return std::nullopt;
  InitConfig c;
  c.slotSize = static_cast<uint32_t>(w & 0xFFFFF);
  c.slotNum = static_cast<uint8_t>(w >> 20 & 0xF);
  c.localSlotNum = static_cast<uint8_t>(w >> 24 & 0xF);
  c.flagBase = static_cast<uint8_t>(w >> 28 & 0xF);
  c.dirMask = static_cast<uint8_t>(w >> 32 & 3);
  c.noSplit = w >> 34 & 1;
  c.gmPath = w >> 35 & 1;
  c.bufIsV2C = w >> 36 & 1;
  c.localIsV2C = w >> 37 & 1;
  c.gmEntries = w >> 38 & 1;
  if (c.slotSize == 0 || (c.slotNum != 4 && c.slotNum != 8) || c.localSlotNum == 0 ||
      c.localSlotNum > c.slotNum || c.flagBase > 12 || c.dirMask == 0 || (c.gmEntries && !c.gmPath))
    return std::nullopt;
  return c;
}

/// TPIPE_PUSH / POP / FREE: which pipe (its flag base), which direction, how the tile is split
/// between the two vector cores (0 none, 1 rows, 2 columns).
struct OpConfig {
  uint8_t flagBase = 0;
  uint8_t dir = kC2V; // kC2V or kV2C
  uint8_t split = 0;
};

inline uint64_t pack(const OpConfig& c) {
  return uint64_t{c.flagBase & 0xFu} | uint64_t{c.dir & 3u} << 4 | uint64_t{c.split & 3u} << 6;
}

inline std::optional<OpConfig> unpackOp(uint64_t w) {
  if (w >> 8) return std::nullopt;
  OpConfig c;
  c.flagBase = static_cast<uint8_t>(w & 0xF);
  c.dir = static_cast<uint8_t>(w >> 4 & 3);
  c.split = static_cast<uint8_t>(w >> 6 & 3);
  if (c.flagBase > 12 || (c.dir != kC2V && c.dir != kV2C) || c.split > 2) return std::nullopt;
  return c;
}

} // namespace pto::isa::xcore
