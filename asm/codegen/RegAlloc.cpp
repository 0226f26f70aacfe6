// Register allocation: a linear scan over live intervals of the selected machine instructions,
// spilling to stack slots through the scratch registers x1..x3 (docs/abi.md, "Registers").
#include "asm/codegen/FunctionLowering.h"
#include "asm/mc/BlockHeader.h"

#include "isa/Numerics.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace pto::as::lower {

namespace {

/// Puts register `reg` into the field a register operand names. FunctionLowering.h keeps the name
/// as text (each one a literal of the lowering): a name that is no field of the word is a bug in
/// the lowering, reported and fatal, never a register silently left out.
void setRegister(enc::Inst& in, enc::FieldName field, int64_t reg) {
  in.put(field.id, reg);
}

/// A register no interval holds over code positions [lo, hi]: extra scratch for a block or an
/// instruction with more spilled operands than x1..x3 (found only then, so rarely searched).
template <class Intervals> // std::map<VReg, FunctionLowering::Interval>
int freeOver(const Intervals& iv, size_t lo, size_t hi, const std::map<VReg, unsigned>& taken) {
  for (unsigned cand = kA0; cand <= kX0; ++cand) {
    if (cand == kRa) continue;
    bool busy = false;
    for (auto& [v, t] : taken)
      busy |= t == cand;
    for (auto it = iv.begin(); !busy && it != iv.end(); ++it)
      busy = it->second.reg == static_cast<int>(cand) && it->second.start <= hi &&
             it->second.end >= lo;
    if (!busy) return static_cast<int>(cand);
  }
  return -1;
}
} // namespace

void FunctionLowering::allocateRegisters() {
  // Live intervals over the linear code; values live into a loop stay live through it.
  std::map<VReg, Interval> iv;
  for (size_t i = 0; i < code_.size(); ++i)
    for (const RegRef& r : regsOf(code_[i])) {
      auto [it, inserted] = iv.try_emplace(r.v, Interval{r.v, i, i});
      if (!inserted) {
        it->second.start = std::min(it->second.start, i);
        it->second.end = std::max(it->second.end, i);
      }
      if (code_[i].kind == MInst::ParamDef)
        it->second.fixedReg = static_cast<int>(extraOf(code_[i])->paramReg);
    }
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto& [v, in] : iv)
      for (auto [lo, hi] : loops_)
        if (in.start < lo && in.end >= lo && in.end < hi) {
          in.end = hi;
          changed = true;
        }
  }
  // The callee may use every register: values live across a call stay in the frame.
  std::vector<size_t> clobbers;
  for (size_t i = 0; i < code_.size(); ++i)
    if (code_[i].clobbersRegs) clobbers.push_back(i);
  std::set<VReg> acrossCalls;
  for (auto& [v, in] : iv) {
    auto it = std::upper_bound(clobbers.begin(), clobbers.end(), in.start);
    if (it != clobbers.end() && *it < in.end) acrossCalls.insert(v);
  }
  std::vector<Interval*> order;
  for (auto& [v, in] : iv)
    order.push_back(&in);
  std::sort(order.begin(), order.end(), [](const Interval* a, const Interval* b) {
    return a->start != b->start ? a->start < b->start : a->fixedReg > b->fixedReg;
  });
  std::vector<unsigned> pool;
  for (unsigned r = kA0; r < kA0 + 8; ++r)
    pool.push_back(r);
  for (unsigned r = kRa + 1; r <= kX0; ++r)
    pool.push_back(r); // s0..s8, x0
  std::set<unsigned> freeRegs(pool.begin(), pool.end());
  std::vector<Interval*> active;
  int slots = 0;
  auto expire = [&](size_t pos) {
    for (auto it = active.begin(); it != active.end();) {
      if ((*it)->end < pos) {
        freeRegs.insert(static_cast<unsigned>((*it)->reg));
        it = active.erase(it);
      } else {
        ++it;
      }
    }
  };
  for (Interval* in : order) {
    expire(in->start);
    if (acrossCalls.count(in->v)) {
      in->slot = slots++;
      continue;
    }
    if (in->fixedReg >= 0 && freeRegs.count(static_cast<unsigned>(in->fixedReg))) {
      in->reg = in->fixedReg;
      freeRegs.erase(static_cast<unsigned>(in->fixedReg));
      active.push_back(in);
      continue;
    }
    if (!freeRegs.empty()) {
      in->reg = static_cast<int>(*freeRegs.begin());
      freeRegs.erase(freeRegs.begin());
      active.push_back(in);
      continue;
    }
    // Spill whichever of the current and active intervals ends last.
    auto victim = std::max_element(active.begin(), active.end(),
                                   [](auto* a, auto* b) { return a->end < b->end; });
    if (victim != active.end() && (*victim)->end > in->end) {
      in->reg = (*victim)->reg;
      (*victim)->reg = -1;
      (*victim)->slot = slots++;
      *victim = in;
    } else {
      in->slot = slots++;
    }
  }
  spillSlots_ = slots;
  rewrite(iv);
}

/// A word that belongs to a block's header (B.DIM, B.IOR, B.IOT, B.DATR, ...): scalar code for
/// it cannot go next to it, only before the block starts or after it ends.
bool FunctionLowering::isHeaderWord(const MInst& m) const {
  return m.kind == MInst::Word && obj::code::isHeaderForm(enc::info(instOf(m).form));
}

bool FunctionLowering::startsBlock(const MInst& m) const {
  if (m.kind == MInst::Jump || m.kind == MInst::CondJump) return true;
  return m.kind == MInst::Word && enc::info(instOf(m).form).startsBlock();
}

/// Nothing spilled: no code goes in, so the registers are set in place (and the parameter
/// markers dropped).
void FunctionLowering::assignInPlace(std::map<VReg, Interval>& iv) {
  size_t kept = 0;
  for (MInst& m : code_) {
    if (m.kind == MInst::ParamDef) continue;
    if (const MInstExtra* x = extraOf(m); x && !x->regs.empty()) {
      enc::Inst inst = instOf(m);
      for (const RegRef& r : x->regs)
        setRegister(inst, r.field, iv[r.v].reg);
      setInst(m, inst);
    }
    code_[kept++] = m;
  }
  code_.resize(kept);
}

/// Replaces virtual registers by physical ones; spilled values go through the scratch
/// registers x1..x3: loaded before the instruction and stored after it. For the header words
/// of a block the loads go before the block (in a scalar block of their own) and the stores
/// after its BSTOP, since scalar instructions inside a tile block would end it.
void FunctionLowering::rewrite(std::map<VReg, Interval>& iv) {
  if (spillSlots_ == 0) return assignInPlace(iv);
  MCode out;
  auto spillOffset = [](int slot) { return static_cast<int64_t>(slot) * 8; };
  auto load = [&](unsigned reg, int slot) {
    return word(
        make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", spillOffset(slot)}, {"RegDst", reg}}));
  };
  auto store = [&](unsigned reg, int slot) {
    return word(make(FormId::S_SDI, {{"SrcL", reg}, {"SrcR", kSp}, {"simm12", spillOffset(slot)}}));
  };
  auto scalarBlockStart = [&] { return word(make(FormId::BSTART_STD_FALL, {})); };
  size_t blockStart = 0;                 // index in `out` of the current block's BSTART
  std::map<VReg, unsigned> blockScratch; // spilled header operands of the current block
  std::vector<MInst> blockLoads, blockStores;
  bool blockIsTile = false;
  auto flushBlock = [&] {
    if (!blockLoads.empty()) {
      blockLoads.insert(blockLoads.begin(), scalarBlockStart());
      if (out[blockStart].loc.valid()) {
        blockLoads.front().loc = out[blockStart].loc;
        out[blockStart].loc = {};
      }
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(blockStart),
                 std::make_move_iterator(blockLoads.begin()),
                 std::make_move_iterator(blockLoads.end()));
    }
    if (!blockStores.empty()) {
      out.push_back(scalarBlockStart());
      for (MInst& st : blockStores)
        out.push_back(std::move(st));
    }
    blockLoads.clear();
    blockStores.clear();
    blockScratch.clear();
  };
  size_t blockFirst = 0, blockLast = 0; // code_ positions of the current tile block
  for (size_t pos = 0; pos < code_.size(); ++pos) {
    MInst& m = code_[pos];
    if (m.kind == MInst::ParamDef) {
      const MInstExtra& x = *extraOf(m);
      const Interval& in = iv[x.regs[0].v];
      if (in.slot >= 0) out.push_back(store(x.paramReg, in.slot));
      continue;
    }
    if (startsBlock(m)) {
      blockStart = out.size();
      blockIsTile = m.kind == MInst::Word && instOf(m).form != FormId::BSTART_STD_FALL;
      blockFirst = blockLast = pos;
      while (blockIsTile && blockLast + 1 < code_.size() &&
             !(code_[blockLast].kind == MInst::Word &&
               enc::info(instOf(code_[blockLast]).form).stopsBlock()))
        ++blockLast;
    }
    bool header = isHeaderWord(m) && blockIsTile;
    std::vector<MInst> before, after;
    std::map<VReg, unsigned> scratchOf;
    unsigned nextScratch = 0;
    const std::vector<RegRef>& regs = regsOf(m);
    enc::Inst inst = instOf(m);
    for (const RegRef& r : regs) {
      const Interval& in = iv[r.v];
      if (in.reg >= 0) {
        setRegister(inst, r.field, in.reg);
        continue;
      }
      std::map<VReg, unsigned>& scratch = header ? blockScratch : scratchOf;
      auto s = scratch.find(r.v);
      if (s == scratch.end()) {
        unsigned next = header ? static_cast<unsigned>(blockScratch.size()) : nextScratch++;
        int reg = next < 3
                      ? static_cast<int>(kScratch[next])
                      : freeOver(iv, header ? blockFirst : pos, header ? blockLast : pos, scratch);
        if (reg < 0) {
          diags_.error(m.loc.valid() ? m.loc : currentLoc_,
                       "internal error: too many spilled operands in one block");
          ok_ = false;
          return;
        }
        s = scratch.emplace(r.v, static_cast<unsigned>(reg)).first;
        bool used = false, defined = false;
        for (const RegRef& o : regs)
          if (o.v == r.v) (o.def ? defined : used) = true;
        if (used) (header ? blockLoads : before).push_back(load(s->second, in.slot));
        if (defined) (header ? blockStores : after).push_back(store(s->second, in.slot));
      }
      setRegister(inst, r.field, s->second);
    }
    if (!regs.empty()) setInst(m, inst);
    if (!before.empty() && m.loc.valid()) {
      before.front().loc = m.loc;
      m.loc = {};
    }
    bool ends = m.kind == MInst::Word && enc::info(inst.form).stopsBlock();
    for (MInst& b : before)
      out.push_back(std::move(b));
    out.push_back(std::move(m));
    for (MInst& a : after)
      out.push_back(std::move(a));
    if (ends) {
      flushBlock();
      blockIsTile = false;
    }
  }
  code_ = std::move(out);
}

} // namespace pto::as::lower
