// Emission: the frame (spill slots, event-id arrays, call area, saved ra), label addresses,
// encoding of every machine instruction (and the B.IOT words naming a block's tiles), relocations
// and the line table.
#include "asm/codegen/FunctionLowering.h"

#include "isa/Numerics.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

namespace pto::as::lower {

void FunctionLowering::layout() {
  // Frame: spill slots, event-id arrays, then (when the function calls) the call-argument
  // area and the saved ra.
  callArea_ = static_cast<uint32_t>(spillSlots_ * 8) + arrayBytes_;
  uint32_t frame = callArea_ + (hasCalls_ ? 8 * kMaxRegParams + 8 : 0);
  out_.frameSize = frame;
  if (frame > 2047) {
    diags_.error(fn_.loc, "function '@" + fn_.name + "' needs a " + std::to_string(frame) +
                              "-byte frame; spill offsets are limited to 2047 bytes");
    ok_ = false;
    return;
  }
  patchFrameOffsets(frame);
  placeFrameCode(frame);
  // Label addresses; the words' addresses are counted again as they are encoded (a table of
  // them would cost 8 bytes a word).
  // The text, relocations and line entries are sized exactly: growing them by doubling would
  // leave room for as many again at pto-as's peak.
  std::map<int, uint64_t> labelAt;
  uint64_t pc = 0;
  size_t nrelocs = 0, nlines = 0;
  for (const MInst& m : code_) {
    if (m.kind == MInst::Label) {
      labelAt[m.label] = pc;
      continue;
    }
    pc += wordBytes(m);
    nrelocs += m.relocCount;
    if (const MInstExtra* x = extraOf(m); x && !x->callee.empty()) ++nrelocs;
    if (m.loc.valid()) ++nlines;
  }
  text_.reserve(pc);
  relocs_.reserve(nrelocs);
  lines_.reserve(nlines);
  pc = 0;
  for (size_t i = 0; i < code_.size() && ok_; ++i) {
    MInst& m = code_[i];
    if (m.kind == MInst::Label) continue;
    const uint64_t at = pc;
    pc += wordBytes(m);
    enc::Inst inst = instOf(m);
    if (m.kind == MInst::Jump || m.kind == MInst::CondJump) {
      int64_t delta = static_cast<int64_t>(labelAt[m.label]) - static_cast<int64_t>(at);
      inst = m.kind == MInst::Jump ? enc::bstartDirect(delta) : enc::bstartCond(delta);
    }
    auto e = enc::encode(inst);
    if (!e) {
      diags_.error(m.loc.valid() ? m.loc : currentLoc_,
                   "internal encoding error: " + e.error().message + " (" + enc::format(inst) +
                       ")");
      ok_ = false;
      return;
    }
    if (m.loc.valid()) lines_.push_back({at, obj_source_, {}, m.loc.line, m.loc.col});
    if (const MInstExtra* x = extraOf(m); x && x->gmAccess >= 0) {
      obj::GmAccess g = gmPlanned_[static_cast<size_t>(x->gmAccess)];
      g.textOffset = at;
      g.function = index_;
      gmAccesses_.push_back(g);
    }
    if (const MInstExtra* x = extraOf(m); x && !x->callee.empty()) {
      obj::Reloc r;
      r.offset = at;
      r.type = obj::RelocType::Call;
      r.function = index_;
      r.symbol = x->callee;
      relocs_.push_back(std::move(r));
    }
    for (uint32_t k = m.relocAt; k < m.relocAt + m.relocCount; ++k) {
      obj::Reloc r;
      r.offset = at;
      r.type = mrelocs_[k].first;
      r.function = index_;
      r.index = mrelocs_[k].second;
      relocs_.push_back(std::move(r));
    }
    for (unsigned b = 0; b < e->bits / 8; ++b)
      text_.push_back(static_cast<uint8_t>(e->value >> (8 * b)));
  }
  releaseCode();
}

/// Stack parameters sit just above the frame; event-id arrays follow the spill slots; call
/// arguments use the call-argument area.
void FunctionLowering::patchFrameOffsets(uint32_t frame) {
  for (MInst& m : code_) {
    const MInstExtra* x = extraOf(m);
    if (!x) continue;
    enc::Inst inst = instOf(m);
    if (x->stackParam >= 0)
      inst.put(enc::Field::simm12, frame + 8 * static_cast<int64_t>(x->stackParam));
    if (x->arrayBase >= 0) {
      const int64_t at = static_cast<int64_t>(spillSlots_) * 8 + x->arrayBase;
      if (at > 4095)
        unsupported(m.loc, "an array slot " + std::to_string(at) +
                               " bytes above sp (spill slots and arrays past the 12-bit offset)");
      inst.put(enc::Field::uimm12, at & 4095);
    }
    if (x->outArg >= 0)
      inst.put(enc::Field::simm12, callArea_ + 8 * static_cast<int64_t>(x->outArg));
    setInst(m, inst);
  }
}

/// The machine code is encoded: its memory goes before the object is built from the function.
void FunctionLowering::releaseCode() {
  MCode().swap(code_);
  std::vector<MInstExtra>().swap(extras_);
  std::deque<MReloc>().swap(mrelocs_);
}

/// With a frame, the function starts by reserving it (and saving ra when it calls) and every
/// return releases it; without one, the placeholders emitted at returns are dropped. In place:
/// a copy of code_ cost 28 bytes a word at pto-as's peak.
void FunctionLowering::placeFrameCode(uint32_t frame) {
  uint32_t raSlot = callArea_ + 8 * kMaxRegParams;
  size_t kept = 0;
  for (MInst& m : code_) {
    switch (m.frame) {
    case MInst::BlockStart:
    case MInst::SpAdjust:
      if (frame == 0) continue;
      if (m.frame == MInst::SpAdjust) {
        enc::Inst inst = instOf(m);
        inst.put(enc::Field::uimm12, frame);
        setInst(m, inst);
      }
      break;
    case MInst::RaRestore:
      if (!hasCalls_) continue;
      {
        enc::Inst inst = instOf(m);
        inst.put(enc::Field::simm12, raSlot);
        setInst(m, inst);
      }
      break;
    default:
      break;
    }
    code_[kept++] = m;
  }
  code_.resize(kept);
  if (frame > 0) {
    std::vector<MInst> prologue;
    prologue.push_back(word(make(FormId::BSTART_STD_FALL, {})));
    prologue.push_back(
        word(make(FormId::S_SUBI, {{"SrcL", kSp}, {"uimm12", frame}, {"RegDst", kSp}})));
    if (hasCalls_)
      prologue.push_back(
          word(make(FormId::S_SDI, {{"SrcL", kRa}, {"SrcR", kSp}, {"simm12", raSlot}})));
    code_.insert(code_.begin(), prologue.begin(), prologue.end());
  }
}

unsigned FunctionLowering::wordBytes(const MInst& m) const {
  if (m.kind == MInst::Jump || m.kind == MInst::CondJump) return 4;
  return enc::info(instOf(m).form).bits / 8;
}

/// B.IOT words naming `idx` in order, two per word, `last` on the final one. B.IOT's fields hold
/// 6 bits: a word whose operands lie in another bank of 64 descriptors than the word before it
/// is preceded by a B.TBANK (a block starts in bank 0, docs/encoding.md 5.4), and the two
/// operands of one word share a bank. Tile idx[k] gets a relocation for the linker on the word
/// naming it when reloc[k] holds.
void FunctionLowering::bindTiles(const std::vector<uint32_t>& idx, const std::vector<bool>& reloc) {
  unsigned bank = 0;
  for (size_t i = 0; i < idx.size();) {
    const unsigned wordBank = idx[i] / enc::kTilesPerBank;
    const bool pair = i + 1 < idx.size() && idx[i + 1] / enc::kTilesPerBank == wordBank;
    const size_t count = pair ? 2 : 1;
    if (wordBank != bank) {
      obj_.usesExtensions = true;
      emit(enc::bTbank(wordBank));
      bank = wordBank;
    }
    std::optional<unsigned> second;
    if (pair) second = idx[i + 1] % enc::kTilesPerBank;
    MInst& w = emit(enc::bIot(idx[i] % enc::kTilesPerBank, second, i + count >= idx.size()));
    for (size_t k = i; k < i + count; ++k)
      if (reloc[k]) addReloc(w, obj::RelocType::Tile, idx[k]);
    i += count;
  }
}

/// The same; unplaced tiles (and views of unplaced tiles) get the relocations.
void FunctionLowering::bindTiles(const std::vector<uint32_t>& idx) {
  std::vector<bool> reloc;
  for (uint32_t i : idx)
    reloc.push_back(out_.tiles[i].placement == obj::kUnplaced &&
                    rootPlacement(i) == obj::kUnplaced);
  bindTiles(idx, reloc);
}

} // namespace pto::as::lower
