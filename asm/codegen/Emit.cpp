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
  // Word sizes, label addresses.
  std::map<int, uint64_t> labelAt;
  std::vector<uint64_t> addr(code_.size());
  uint64_t pc = 0;
  for (size_t i = 0; i < code_.size(); ++i) {
    addr[i] = pc;
    const MInst& m = code_[i];
    if (m.kind == MInst::Label)
      labelAt[m.label] = pc;
    else
      pc += wordBytes(m);
  }
  for (size_t i = 0; i < code_.size() && ok_; ++i) {
    MInst& m = code_[i];
    if (m.kind == MInst::Label) continue;
    if (m.kind == MInst::Jump || m.kind == MInst::CondJump) {
      int64_t delta = static_cast<int64_t>(labelAt[m.label]) - static_cast<int64_t>(addr[i]);
      m.inst = m.kind == MInst::Jump ? enc::bstartDirect(delta) : enc::bstartCond(delta);
    }
    auto e = enc::encode(m.inst);
    if (!e) {
      diags_.error(m.loc.valid() ? m.loc : currentLoc_,
                   "internal encoding error: " + e.error().message + " (" + enc::format(m.inst) +
                       ")");
      ok_ = false;
      return;
    }
    if (m.loc.valid()) lines_.push_back({addr[i], obj_source_, m.loc.line, m.loc.col, {}});
    if (!m.callee.empty()) {
      obj::Reloc r;
      r.offset = addr[i];
      r.type = obj::RelocType::Call;
      r.function = index_;
      r.symbol = m.callee;
      relocs_.push_back(r);
    }
    for (auto& [type, index] : m.relocs) {
      obj::Reloc r;
      r.offset = addr[i];
      r.type = type;
      r.function = index_;
      r.index = index;
      relocs_.push_back(r);
    }
    for (unsigned b = 0; b < e->bits / 8; ++b)
      text_.push_back(static_cast<uint8_t>(e->value >> (8 * b)));
  }
}

/// Stack parameters sit just above the frame; event-id arrays follow the spill slots; call
/// arguments use the call-argument area.
void FunctionLowering::patchFrameOffsets(uint32_t frame) {
  for (MInst& m : code_) {
    if (m.stackParam >= 0)
      m.inst.put(enc::Field::simm12, frame + 8 * static_cast<int64_t>(m.stackParam));
    if (m.arrayBase >= 0)
      m.inst.put(enc::Field::uimm12, static_cast<int64_t>(spillSlots_) * 8 + m.arrayBase);
    if (m.outArg >= 0)
      m.inst.put(enc::Field::simm12, callArea_ + 8 * static_cast<int64_t>(m.outArg));
  }
}

/// With a frame, the function starts by reserving it (and saving ra when it calls) and every
/// return releases it; without one, the placeholders emitted at returns are dropped.
void FunctionLowering::placeFrameCode(uint32_t frame) {
  uint32_t raSlot = callArea_ + 8 * kMaxRegParams;
  std::vector<MInst> out;
  // Sized once: growing it by doubling kept the old and the new buffer alive beside code_ (3.6 KB
  // per tile op at pto-as's peak on a module of 1e5 tile ops).
  out.reserve(code_.size() + 3);
  if (frame > 0) {
    MInst start, adjust;
    start.inst = make(FormId::BSTART_STD_FALL, {});
    adjust.inst = make(FormId::S_SUBI, {{"SrcL", kSp}, {"uimm12", frame}, {"RegDst", kSp}});
    out.push_back(std::move(start));
    out.push_back(std::move(adjust));
    if (hasCalls_) {
      MInst save;
      save.inst = make(FormId::S_SDI, {{"SrcL", kRa}, {"SrcR", kSp}, {"simm12", raSlot}});
      out.push_back(std::move(save));
    }
  }
  for (MInst& m : code_) {
    switch (m.frame) {
    case MInst::BlockStart:
    case MInst::SpAdjust:
      if (frame == 0) continue;
      if (m.frame == MInst::SpAdjust) m.inst.put(enc::Field::uimm12, frame);
      break;
    case MInst::RaRestore:
      if (!hasCalls_) continue;
      m.inst.put(enc::Field::simm12, raSlot);
      break;
    default:
      break;
    }
    out.push_back(std::move(m));
  }
  code_ = std::move(out);
}

unsigned FunctionLowering::wordBytes(const MInst& m) {
  if (m.kind == MInst::Jump || m.kind == MInst::CondJump) return 4;
  return enc::info(m.inst.form).bits / 8;
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
      if (reloc[k]) w.relocs.push_back({obj::RelocType::Tile, idx[k]});
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
