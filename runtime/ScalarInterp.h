// The scalar interpreter, shared by the backends: it runs the scalar micro-ops of one block
// (one simulated core) and hands every tile op and sync op to the backend's executor:
//
//   struct Exec {
//     bool tile(Core&, const TileInst&, const MOp&);  // false = error (core.error set)
//     bool sync(Core&, const SyncInst&, const MOp&);  // false = error
//     bool comm(Core&, const MOp&);                    // a COMM_* op (runtime/Comm.h)
//   };
//
// The cpu backend executes tile ops at once and skips sync ops (program order is its model);
// the npu model issues them to its pipes (runtime/npu/).
#pragma once

#include "runtime/Cluster.h"
#include "runtime/Program.h"

#include <cstring>

namespace pto::rt {
namespace interp {

/// The SrcR transforms (RType): none, .sw, .uw, and .neg (.not for logical ops).
using obj::code::RType;
inline uint64_t xform(uint64_t v, RType rtype) {
  switch (rtype) {
  case RType::SignWord:
    return isa::scalar::sext32(v);
  case RType::ZeroWord:
    return isa::scalar::zext32(v);
  case RType::NegOrNot:
    return isa::scalar::neg(v);
  case RType::None:
    break;
  }
  return v;
}
inline uint64_t xformLogic(uint64_t v, RType rtype) {
  return rtype == RType::NegOrNot ? isa::scalar::bnot(v) : xform(v, rtype);
}

using isa::scalar::alu;

/// `mulu` (an offset times a stride) or `add` (of such products) in exact arithmetic beside
/// the wrapped bits: the result's exact value is kept when it leaves int64 (Core::wideReg).
inline void wideStep(Core& c, const obj::code::ScalarOp& s, uint64_t b) {
  using obj::WideInt;
  const uint64_t bits = alu(s.op, c.r[s.rs1], b);
  WideInt exact;
  if (s.op == AluOp::MulU) {
    exact = static_cast<WideInt>(static_cast<int64_t>(c.r[s.rs1])) *
            static_cast<int64_t>(s.useImm ? b : xform(c.r[s.rs2], s.rtype));
  } else {
    // Sums of products stay far inside 128 bits: each operand is clamped to +-2^124.
    constexpr WideInt kMax = WideInt{1} << 124;
    auto clamp = [&](WideInt v) { return v > kMax ? kMax : v < -kMax ? -kMax : v; };
    exact = clamp(c.exactValue(s.rs1)) + clamp(c.exactValue(s.rs2));
  }
  c.r[s.rd] = bits;
  constexpr WideInt kMax = WideInt{1} << 125;
  exact = exact > kMax ? kMax : exact < -kMax ? -kMax : exact;
  if (exact != static_cast<WideInt>(static_cast<int64_t>(bits))) {
    c.wideReg = s.rd;
    c.wideExact = exact;
  } else if (s.rd == c.wideReg) {
    c.wideReg = Core::kNoWideReg;
  }
}

inline bool isLogic(AluOp op) {
  return isa::isLogical(op);
}

/// A register written by an op that is not exact arithmetic: its exact value is its bits.
inline void setReg(Core& c, uint8_t rd, uint64_t v) {
  c.r[rd] = v;
  if (rd == c.wideReg) [[unlikely]]
    c.wideReg = Core::kNoWideReg;
}

/// What a trap word reports (isa::trapword), as the reference interpreter words it.
inline std::string trapMessage(unsigned shift, bool fromZero, int64_t value) {
  namespace tw = isa::trapword;
  if (shift == tw::kTrapShift && fromZero) return "pto.trap executed";
  if (shift == tw::kBoxRowShift || shift == tw::kBoxColShift)
    return std::string("a view of a boxed tile at ") +
           (shift == tw::kBoxRowShift ? "row" : "column") + " offset " + std::to_string(value) +
           ": its offsets must lie on the tile's inner box grid";
  return "scf.for step " + std::to_string(value) + " is not positive";
}

/// The shifted add (m.s.shamt != 0): the trap word, or an address formed from a pointer and a
/// scaled index. False with c.error set on the trap.
inline bool scaledAdd(Core& c, const obj::code::ScalarOp& s) {
  uint64_t* r = c.r.data();
  if (s.rd == kSinkReg && s.rs1 == 0) {
    // A trap word (docs/abi.md, isa::trapword): pto.trap, an scf.for whose step is not positive
    // and that would run, or a view of a boxed tile off its box grid.
    c.error = trapMessage(s.shamt, s.rs2 == 0, static_cast<int64_t>(r[s.rs2]));
    return false;
  }
  // An address formed from a pointer and a scaled index (the code generator's only use
  // of a shifted add): checked in exact arithmetic (Core::offsetAddress), with the
  // index's exact value when an offset computation left int64 (Core::wideReg).
  obj::WideInt index =
      s.rtype == RType::None
          ? c.exactValue(s.rs2)
          : static_cast<obj::WideInt>(static_cast<int64_t>(xform(r[s.rs2], s.rtype)));
  // Scaled in 128 bits without overflow (a wide index is at most 2^125, a plain one 2^63).
  const obj::WideInt cap = obj::WideInt{1} << (126 - s.shamt);
  index = index > cap ? cap : index < -cap ? -cap : index;
  const uint8_t rd = s.rd;
  r[rd] = c.offsetAddress(r[s.rs1], index << s.shamt, uint64_t{1} << s.shamt);
  if (rd == c.wideReg) c.wideReg = Core::kNoWideReg;
  return true;
}

/// An ALU op; false with c.error set (the trap word).
inline bool aluStep(Core& c, const obj::code::ScalarOp& s) {
  uint64_t* r = c.r.data();
  uint64_t b = s.useImm ? static_cast<uint64_t>(s.imm)
                        : (isLogic(s.op) ? xformLogic(r[s.rs2], s.rtype) : xform(r[s.rs2], s.rtype))
                              << s.shamt;
  if (s.shamt && s.op == AluOp::Add && !s.useImm) [[unlikely]]
    return scaledAdd(c, s);
  if (s.op == AluOp::MulU || (c.wideReg != Core::kNoWideReg && !s.useImm && s.op == AluOp::Add &&
                              s.rtype == RType::None)) [[unlikely]] {
    wideStep(c, s, b);
    return true;
  }
  setReg(c, s.rd, alu(s.op, r[s.rs1], b));
  return true;
}

/// A compare into the condition bit.
inline void setcStep(Core& c, const obj::code::ScalarOp& s) {
  const uint64_t* r = c.r.data();
  uint64_t b = s.useImm
                   ? static_cast<uint64_t>(s.imm)
                   : (isLogic(s.op) ? xformLogic(r[s.rs2], s.rtype) : xform(r[s.rs2], s.rtype));
  c.cond = alu(s.op, r[s.rs1], b) != 0;
}

/// A scalar load; false with c.error set (an access out of bounds).
inline bool loadStep(Core& c, const obj::code::ScalarOp& s) {
  // The scaled index in exact arithmetic: index 2^62 + 2 of a 4-element buffer is not a[2].
  const obj::WideInt offset =
      s.useImm
          ? static_cast<obj::WideInt>(s.imm)
          : static_cast<obj::WideInt>(static_cast<int64_t>(xform(c.r[s.rs2], s.rtype))) << s.shamt;
  const uint8_t* p = c.access(c.r[s.rs1], offset, s.size, "scalar load", false);
  if (!p) return false;
  uint64_t v = 0;
  std::memcpy(&v, p, s.size);
  if (!c.finishRemote()) return false;
  if (s.isSigned && s.size < 8) {
    const unsigned sh = 64 - 8 * s.size;
    v = static_cast<uint64_t>(static_cast<int64_t>(v << sh) >> sh);
  }
  setReg(c, s.rd, v);
  return true;
}

/// A scalar store; false with c.error set (an access out of bounds).
inline bool storeStep(Core& c, const obj::code::ScalarOp& s) {
  const obj::WideInt offset =
      s.useImm ? static_cast<obj::WideInt>(s.imm)
               : static_cast<obj::WideInt>(static_cast<int64_t>(xform(c.r[s.rs2], s.rtype)));
  uint8_t* p = c.access(c.r[s.rs1], offset, s.size, "scalar store", true);
  if (!p) return false;
  uint64_t v = c.r[s.rs3];
  std::memcpy(p, &v, s.size);
  return c.finishRemote();
}

/// get_block_idx (4), get_block_num (5), get_subblockid (6), get_subblockdim.
inline uint64_t blockInfo(const Core& c, int64_t which) {
  return which == 4   ? c.blockIdx
         : which == 5 ? c.blockNum
         : which == 6 ? c.subblockIdx
                      : c.subblockNum;
}

/// A tile op handed to the executor, its operands placed at run time bound first; false with
/// c.error set.
template <class Exec>
bool tileStep(const DecodedFunction& fn, Core& c, const TileBindings& bindings, const MOp& m,
              Exec& exec) {
  const TileInst& t = fn.tiles[m.target];
  if (!t.runtimeTiles) return exec.tile(c, t, m);
  TileInst placed = t; // operands placed at run time take their bound offsets now
  if (auto e = resolveTiles(fn, bindings, placed)) {
    c.error = *e;
    return false;
  }
  return exec.tile(c, placed, m);
}

/// TASSIGN of a tile (Bind) or of a scale tile (BindScale); false with c.error set.
inline bool bindStep(const DecodedFunction& fn, Core& c, TileBindings& bindings, const MOp& m) {
  auto e = m.kind == MKind::Bind
               ? bindTile(fn, bindings, m.target, c.r[m.s.rs1])
               : bindScaleTile(fn, bindings, m.target, static_cast<uint32_t>(m.s.imm));
  if (!e) return true;
  c.error = *e;
  return false;
}

/// A sync op: the core-to-core ones step the core's cross-core state, then the executor has it;
/// false with c.error set.
template <class Exec> bool syncStep(const DecodedFunction& fn, Core& c, const MOp& m, Exec& exec) {
  if (isCoreSync(fn.syncs[m.target].kind))
    if (auto e = coreSyncStep(c, fn.syncs[m.target])) {
      c.error = *e;
      return false;
    }
  return exec.sync(c, fn.syncs[m.target], m);
}

/// Why a call cannot run (c.error set): no such function, or too deep.
inline bool callRefused(Core& c, const MOp& m) {
  constexpr unsigned kMaxCallDepth = 256;
  if (!c.functions || m.target >= c.functions->size()) {
    c.error = "call to a function the program does not have";
    return true;
  }
  if (c.callDepth >= kMaxCallDepth) {
    c.error = "call depth exceeds " + std::to_string(kMaxCallDepth);
    return true;
  }
  return false;
}

} // namespace interp

/// Runs `fn` on `c` until its RET. Returns false on error (c.error set, failedAt = text offset).
/// Calls run the callee on the same core with the same executor.
/// A COMM_* micro-op (runtime/Comm.h) on the core's world; false with c.error set.
bool commStep(Core& c, const MOp& m);

template <class Exec>
bool interpret(const DecodedFunction& fn, Core& c, uint32_t& failedAt, Exec& exec) {
  using namespace interp;
  const MOp* code = fn.code.data();
  size_t pc = 0;
  uint64_t* r = c.r.data();
  uint64_t scalarOps = 0, tileOps = 0;
  TileBindings bindings; // this call's TASSIGNs (descriptors are per function)
  auto flush = [&] {
    c.scalarOps += scalarOps;
    c.tileOps += tileOps;
    scalarOps = tileOps = 0;
  };
  auto fail = [&](const MOp& m) {
    failedAt = m.textOffset;
    flush();
    return false;
  };
  // Branches check the instruction budget, so an endless loop ends with an error, not a hang.
  // Taken branches count too: a block that branches to itself executes no other instruction.
  uint64_t branches = 0;
  auto overBudget = [&] {
    ++branches;
    return (c.instructionLimit &&
            c.scalarOps + c.tileOps + scalarOps + tileOps + branches > c.instructionLimit) ||
           (c.cancel && c.cancel->load(std::memory_order_relaxed));
  };
  auto budgetError = [&](const MOp& m) {
    if (c.cancel && c.cancel->load(std::memory_order_relaxed))
      c.error = "the run was cancelled";
    else
      c.error = "the kernel ran more than " + std::to_string(c.instructionLimit) +
                " instructions (an endless loop? raise the limit with --max-instructions)";
    return fail(m);
  };
  for (;;) {
    const MOp& m = code[pc++];
    switch (m.kind) {
    case MKind::Alu:
      if (!aluStep(c, m.s)) return fail(m);
      ++scalarOps;
      break;
    case MKind::Setc:
      setcStep(c, m.s);
      ++scalarOps;
      break;
    case MKind::Fpu:
      setReg(c, m.s.rd, isa::scalarFp(m.s.fp, m.s.fpSrc, m.s.fpDst, r[m.s.rs1], r[m.s.rs2]));
      ++scalarOps;
      break;
    case MKind::Csel:
      setReg(c, m.s.rd, r[m.s.rs3] != 0 ? r[m.s.rs1] : xform(r[m.s.rs2], m.s.rtype));
      ++scalarOps;
      break;
    case MKind::Load:
      if (!loadStep(c, m.s)) return fail(m);
      ++scalarOps;
      break;
    case MKind::Store:
      if (!storeStep(c, m.s)) return fail(m);
      ++scalarOps;
      break;
    case MKind::Tile:
      ++tileOps;
      flush(); // the npu model reads the counts to charge the scalar unit's time
      if (!tileStep(fn, c, bindings, m, exec)) return fail(m);
      break;
    case MKind::Bind:
    case MKind::BindScale:
      ++scalarOps;
      if (!bindStep(fn, c, bindings, m)) return fail(m);
      break;
    case MKind::Sync:
      flush();
      if (!syncStep(fn, c, m, exec)) return fail(m);
      break;
    case MKind::BlockInfo:
      setReg(c, m.s.rd, blockInfo(c, m.s.imm));
      break;
    case MKind::Comm:
      flush();
      ++scalarOps;
      if (!exec.comm(c, m)) return fail(m);
      break;
    case MKind::Jump:
      if (overBudget()) return budgetError(m);
      pc = m.target;
      break;
    case MKind::JumpIf:
      if (c.cond) {
        if (overBudget()) return budgetError(m);
        pc = m.target;
      }
      break;
    case MKind::ClearCond:
      c.cond = false;
      break;
    case MKind::Ret:
      flush();
      return true;
    case MKind::Call: {
      // The callee runs on the same core (registers, stack); it returns with its own RET.
      if (callRefused(c, m)) return fail(m);
      r[10] = m.textOffset + 4u; // ra: the word after the call
      c.wideReg = Core::kNoWideReg;
      // In a cluster a cube function runs on the AIC only and a vector function on the AIVs
      // (the `#if defined(__DAV_CUBE__)` of the C++ PTOAS emits): elsewhere the call is empty.
      if (c.cluster && !laneRuns(c.lane, (*c.functions)[m.target].flags)) break;
      flush();
      ++c.callDepth;
      bool ok = interpret((*c.functions)[m.target], c, failedAt, exec);
      --c.callDepth;
      if (!ok) return false;
      break;
    }
    }
  }
}

/// The cpu backend's executor: tile ops run at once, in program order; sync ops are no-ops.
struct CpuExec {
  bool tile(Core& c, const TileInst& t, const MOp&) {
    t.kernel(c, t);
    return c.finishRemote() && c.error.empty();
  }
  bool sync(Core&, const SyncInst&, const MOp&) { return true; }
  bool comm(Core& c, const MOp& m) { return commStep(c, m); }
};

} // namespace pto::rt
