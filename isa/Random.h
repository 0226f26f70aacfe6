// TRANDOM's block (BSTART.EXT TRANDOM, XOP 18; docs/binary-profile.md): written once for the
// assembler that packs it, the reference interpreter and the runtime that read it back.
//
// PTOAS's `pto.trandom ins(k0, k1, c0, c1, c2, c3)` has six 32-bit scalars (pto-isa's
// TRandomKey and TRandomCounter) and a tile block carries three B.IOR registers, so two 32-bit
// scalars share one 64-bit register, the first in the low half:
//   RegSrc0 = key      (k1 << 32 | k0)
//   RegSrc1 = counter  (c1 << 32 | c0), the low 64 bits of the 128-bit Philox counter
//   RegSrc2 = counter  (c3 << 32 | c2), its high 64 bits
// The round count (pto-isa's `Rounds` template argument, 7 or 10) is B.DATR's RMode field:
// 0 (the default, B.DATR left out) = 10 rounds, 1 = 7 rounds.
#pragma once

#include <cstdint>
#include <optional>

namespace pto::isa::trandom {

inline constexpr uint64_t kDefaultRounds = 10;

/// Two 32-bit scalars in one register, `lo` in bits 31:0 (whatever the registers' upper halves).
inline uint64_t pack(uint64_t lo, uint64_t hi) {
  return (lo & 0xFFFFFFFFu) | (hi & 0xFFFFFFFFu) << 32;
}

/// B.DATR RMode for a round count; nullopt when pto-isa has no such variant.
inline std::optional<unsigned> roundsCode(uint64_t rounds) {
  if (rounds == 10) return 0u;
  if (rounds == 7) return 1u;
  return std::nullopt;
}

/// The round count of a B.DATR RMode code; nullopt for a code no variant has (a corrupt block).
inline std::optional<unsigned> roundsOf(unsigned code) {
  if (code == 0) return 10u;
  if (code == 1) return 7u;
  return std::nullopt;
}

} // namespace pto::isa::trandom
