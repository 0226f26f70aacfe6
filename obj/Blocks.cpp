// Words -> blocks (obj/Blocks.h). The rules are docs/abi.md's; the per-form facts are the Flow
// and Label columns of isa/Encoding.def.
#include "obj/Blocks.h"

#include <algorithm>

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

BlockKind kindOf(const enc::Inst& start) {
  if (enc::tileOpOf(start)) return BlockKind::Tile;
  if (start.form == enc::FormId::BSTART_EXTC) return BlockKind::Control;
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
    b.control = static_cast<enc::ExtCtl>(w.inst.get("CTL").value_or(0));
  b.transfer = transferOf(w.inst.flow());
  if (auto off = w.inst.labelOffset())
    if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond ||
        b.transfer == Transfer::Call)
      b.target = static_cast<uint64_t>(static_cast<int64_t>(w.offset) + *off);
  return b;
}

} // namespace

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
  auto r = enc::decodeBytes(text_.subspan(pos_, end_ - pos_), consumed, {.extensions = true});
  if (!r) {
    error_ = WordError{pos_, r.error().message};
    end_ = pos_; // the blocks so far end here
    if (!blocks_.empty()) blocks_.back().end = end_;
    return nullptr;
  }
  word_ = Word{pos_, static_cast<uint32_t>(consumed), *r};
  const enc::FormInfo& fi = r->formInfo();
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
