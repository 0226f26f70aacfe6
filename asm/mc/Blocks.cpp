// Words -> blocks (asm/mc/Blocks.h), and the one reader of their header words
// (asm/mc/BlockHeader.h). The rules are docs/abi.md's; the per-form facts are the Flow and Label
// columns of isa/Encoding.def.
#include "asm/mc/Blocks.h"

#include "asm/mc/BlockHeader.h"

#include <algorithm>
#include <vector>

namespace pto::obj::code {
namespace {

namespace enc = isa::enc;

Transfer transferOf(enc::Flow f) {
  switch (f) {
  case enc::Flow::Direct:
    return Transfer::Direct;
  case enc::Flow::Cond:
    return Transfer::Cond;
  case enc::Flow::Ret:
    return Transfer::Ret;
  case enc::Flow::Call:
    return Transfer::Call;
  case enc::Flow::Indirect:
    return Transfer::Indirect;
  default: // Fall, Op (ByBrType is resolved by Inst::flow)
    return Transfer::Fall;
  }
}

/// A start word names a tile op (the op tables), or an extension control op by its CTL field
/// (sync, block index), or neither.
BlockKind kindOf(const enc::Inst& start) {
  if (enc::tileOpOf(start)) return BlockKind::Tile;
  if (start.formInfo().has(enc::Field::CTL)) return BlockKind::Control;
  return BlockKind::Scalar;
}

/// A block that opens at word `w` (index `index` in the function's words).
BlockWords open(const Word& w, uint32_t index) {
  BlockWords b;
  b.offset = w.offset;
  b.firstWord = index;
  if (!w.inst.formInfo().startsBlock()) return b;
  b.hasStart = true;
  b.kind = kindOf(w.inst);
  if (b.kind == BlockKind::Control)
    b.control = static_cast<enc::ExtCtl>(w.inst.get(enc::Field::CTL).value_or(0));
  b.transfer = transferOf(w.inst.flow());
  if (auto off = w.inst.labelOffset())
    if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond ||
        b.transfer == Transfer::Call)
      b.target = static_cast<uint64_t>(static_cast<int64_t>(w.offset) + *off);
  return b;
}

/// Decoded words by their bytes, per thread: the words of a function repeat (the same headers and
/// tile ops in every loop), and decoding one is a walk over the form table. Decoding is a function
/// of the bytes alone, so a hit is the decoder's own answer. Direct-mapped: a clash replaces.
struct DecodeCache {
  static constexpr size_t kSize = 1024;
  struct Entry {
    uint64_t value = 0;
    uint32_t size = 0; // bytes; 0: empty
    enc::Inst inst;
  };
  std::vector<Entry> entries;
  static size_t slot(uint64_t value, size_t size) {
    return static_cast<size_t>(
               ((value ^ (static_cast<uint64_t>(size) << 61)) * 0x9E3779B97F4A7C15ull) >> 54) %
           kSize;
  }
};
thread_local DecodeCache cache;

/// The little-endian value of a word's bytes (at most 8).
uint64_t valueOf(std::span<const uint8_t> bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return v;
}

} // namespace

const enc::Inst* BlockScanner::cachedDecode(std::span<const uint8_t> bytes, size_t& consumed) {
  // The word's size as decodeBytes finds it (a truncated word is left to decodeBytes).
  if (bytes.size() < 2 || cache.entries.empty()) return nullptr;
  auto half = [&](size_t i) { return static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8); };
  std::optional<uint16_t> second;
  if (bytes.size() >= 4) second = half(1);
  const size_t size = enc::lengthOf(half(0), second) / 8;
  if (size == 0 || size > 8 || bytes.size() < size) return nullptr;
  const uint64_t v = valueOf(bytes.first(size));
  const DecodeCache::Entry& e = cache.entries[DecodeCache::slot(v, size)];
  if (e.size != size || e.value != v) return nullptr;
  consumed = size;
  return &e.inst;
}

void BlockScanner::remember(std::span<const uint8_t> bytes, const enc::Inst& inst) {
  if (bytes.empty() || bytes.size() > 8) return;
  if (cache.entries.empty()) cache.entries.resize(DecodeCache::kSize);
  const uint64_t v = valueOf(bytes);
  DecodeCache::Entry& e = cache.entries[DecodeCache::slot(v, bytes.size())];
  e.value = v;
  e.size = static_cast<uint32_t>(bytes.size());
  e.inst = inst;
}

std::optional<size_t> FunctionWords::blockStartingAt(uint64_t offset) const {
  auto it = std::lower_bound(blocks.begin(), blocks.end(), offset,
                             [](const BlockWords& b, uint64_t o) { return b.offset < o; });
  if (it == blocks.end() || it->offset != offset) return std::nullopt;
  return static_cast<size_t>(it - blocks.begin());
}

const Word* BlockScanner::next() {
  opened_ = false;
  if (pos_ >= end_ || error_) {
    if (!blocks_.empty()) blocks_.back().end = end_;
    return nullptr;
  }
  size_t consumed = 0;
  const enc::Inst* inst = cachedDecode(text_.subspan(pos_, end_ - pos_), consumed);
  if (!inst) {
    auto r = enc::decodeBytes(text_.subspan(pos_, end_ - pos_), consumed, {.extensions = true});
    if (!r) {
      error_ = WordError{pos_, r.error().message};
      end_ = pos_; // the blocks so far end here
      if (!blocks_.empty()) blocks_.back().end = end_;
      return nullptr;
    }
    remember(text_.subspan(pos_, consumed), *r);
    word_ = Word{pos_, static_cast<uint32_t>(consumed), *r};
  } else {
    word_ = Word{pos_, static_cast<uint32_t>(consumed), *inst};
  }
  const enc::FormInfo& fi = word_.inst.formInfo();
  if (fi.startsBlock() || (!isOpen_ && !fi.stopsBlock()) || blocks_.empty()) {
    if (!blocks_.empty()) blocks_.back().end = pos_;
    uint32_t index = blocks_.empty() ? 0 : blocks_.back().firstWord + blocks_.back().numWords;
    blocks_.push_back(open(word_, index));
    isOpen_ = true;
    opened_ = true;
  }
  if (fi.stopsBlock()) isOpen_ = false;
  ++blocks_.back().numWords;
  pos_ += consumed;
  return &word_;
}

DecodedBlocks decodeBlocks(std::span<const uint8_t> text, uint64_t begin, uint64_t end) {
  DecodedBlocks out;
  BlockScanner scan(text, begin, end);
  while (const Word* w = scan.next())
    out.code.words.push_back(*w);
  out.code.blocks = std::move(scan.blocks());
  out.error = scan.error();
  return out;
}

} // namespace pto::obj::code

// ---------------------------------------------------------------------------------------------
// Header words -> what they say (asm/mc/BlockHeader.h).

namespace pto::obj::code {

namespace {

namespace enc = isa::enc;

int64_t field(const enc::Inst& in, enc::Field f) {
  return in.get(f).value_or(0);
}

} // namespace

std::string scalarDequantRefusal() {
  return "TDEQUANT with a B.IOR multiplier/zero point or a destination hand is the 0.58.3 "
         "scalar form, which does not execute here (the per-row tile form has four B.IOT "
         "bindings dst, src, scale, offset and no B.IOR)";
}

std::string destinationHandRefusal(std::optional<isa::OpId> op) {
  if (op == isa::OpId::TDEQUANT) return scalarDequantRefusal();
  return "B.IOT destination hands are not supported";
}

HeaderWord HeaderReader::read(const isa::enc::Inst& in) {
  using isa::enc::Field;
  using isa::enc::FormId;
  using Kind = HeaderWord::Kind;
  HeaderWord h;
  switch (in.form) {
  case FormId::B_DATR:
    h.kind = Kind::Datr;
    h.datr = enc::Datr{static_cast<unsigned>(field(in, Field::Layout)),
                       static_cast<unsigned>(field(in, Field::DataType)),
                       static_cast<unsigned>(field(in, Field::PadValueOrByteId)),
                       static_cast<unsigned>(field(in, Field::CMode)),
                       static_cast<unsigned>(field(in, Field::RMode)),
                       field(in, Field::Sat) != 0,
                       field(in, Field::Canonicalize) != 0};
    break;
  case FormId::B_FPATR:
    h.kind = Kind::Fpatr;
    break;
  case FormId::B_XATR:
    h.kind = Kind::Xatr;
    break;
  case FormId::B_DIM_LB0:
  case FormId::B_DIM_LB1:
  case FormId::B_DIM_LB2:
    h.kind = Kind::Dim;
    h.lb = in.form == FormId::B_DIM_LB0 ? 0 : in.form == FormId::B_DIM_LB1 ? 1 : 2;
    h.bound = Bound{static_cast<uint8_t>(field(in, Field::RegSrc)),
                    static_cast<uint32_t>(field(in, Field::uimm17)), true};
    break;
  case FormId::B_IOR:
    h.kind = Kind::Ior;
    h.iorSrc = {static_cast<uint8_t>(field(in, Field::RegSrc0)),
                static_cast<uint8_t>(field(in, Field::RegSrc1)),
                static_cast<uint8_t>(field(in, Field::RegSrc2))};
    h.iorDst = static_cast<uint8_t>(field(in, Field::RegDst));
    break;
  case FormId::B_TBANK:
    h.kind = Kind::Bank;
    bank_ = static_cast<uint32_t>(field(in, Field::Bank)) * enc::kTilesPerBank;
    h.bank = bank_;
    break;
  case FormId::B_IOT_S1:
  case FormId::B_IOT_S2:
    h.kind = Kind::Operands;
    for (Field f : {Field::SrcTile0, Field::SrcTile1})
      if (auto v = in.get(f)) h.tiles[h.numTiles++] = bank_ + static_cast<uint32_t>(*v);
    break;
  case FormId::B_IOT_S1D:
  case FormId::B_IOT_S2D:
  case FormId::B_IOT_D:
    h.kind = Kind::DestinationHand;
    break;
  case FormId::B_HINT:
  case FormId::B_HINT_TRACE:
  case FormId::B_CATR:
    h.kind = Kind::Hint;
    break;
  default:
    break;
  }
  return h;
}

} // namespace pto::obj::code
