// The one reader of a block's header (docs/abi.md "Blocks", docs/encoding.md sections 4-5): what
// each word between a block's start and its stop says (B.DATR, B.DIM, B.IOR, B.TBANK, B.IOT, the
// fixpipe words, hints). The linker (link/Cfg.cpp) and the image decoder (asm/mc/ImageCode.cpp)
// read headers through it, so that they agree on every word; each decides what a word means for
// the kind of block it is in.
#pragma once

#include "isa/Encoding.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace pto::obj::code {

/// A word of the header, as opposed to a block's start, its stop or scalar code: the B.* words
/// (group Cmd or Ext) that are neither. The code generator keeps scalar code out of the header.
inline bool isHeaderForm(const isa::enc::FormInfo& f) {
  return f.group != isa::enc::FormGroup::Scalar && !f.startsBlock() && !f.stopsBlock();
}

/// A loop bound or event id read by a block: (GPR + imm); reg 0 makes it a constant.
struct Bound {
  uint8_t reg = 0;
  uint32_t imm = 0;
  bool present = false;
  bool isConstant() const { return reg == 0; }
  bool operator==(const Bound&) const = default;
};

/// What one header word says.
struct HeaderWord {
  enum class Kind : uint8_t {
    Datr,     // B.DATR: `datr`
    Fpatr,    // B.FPATR (read with isa::enc::readFpatr)
    Xatr,     // B.XATR (read with isa::enc::readXatr)
    Dim,      // B.DIM ->LB`lb`: `bound`
    Ior,      // B.IOR: `iorSrc`, `iorDst`
    Bank,     // B.TBANK: the B.IOT operands after it name descriptors from `bank` on
    Operands, // source-form B.IOT: `numTiles` descriptor indices in `tiles` (the bank applied)
    /// Destination-form B.IOT (`->T<size>`, 0.58.3's hands): a tile this toolchain neither
    /// writes nor runs (its operands are descriptor indices, docs/abi.md); every reader refuses.
    DestinationHand,
    Hint,  // B.HINT, B.HINT TRACE, B.CATR: no effect on what the block does
    Other, // any other word: not a header word
  } kind = Kind::Other;
  unsigned lb = 0;
  Bound bound;
  std::array<uint8_t, 3> iorSrc{};
  uint8_t iorDst = 0;
  uint32_t bank = 0;
  uint32_t tiles[2] = {0, 0};
  uint8_t numTiles = 0;
  isa::enc::Datr datr;
};

/// TDEQUANT with a B.IOR multiplier/zero point or a destination hand: 0.58.3's scalar form
/// (docs/encoding.md 5.2), which no tool here runs.
std::string scalarDequantRefusal();
/// Why a destination-hand B.IOT in a block of op `op` is refused, as every reader words it.
std::string destinationHandRefusal(std::optional<isa::OpId> op);

/// Reads a block's header words in order: the bank of a B.TBANK applies to the B.IOT words after
/// it in the same block (docs/encoding.md 5.4); start() at each block's start.
class HeaderReader {
public:
  void start() { bank_ = 0; }
  HeaderWord read(const isa::enc::Inst& in);

private:
  uint32_t bank_ = 0; // the current block's first descriptor of its B.TBANK (bank * 64)
};

} // namespace pto::obj::code
