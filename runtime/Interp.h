// The scalar interpreter, shared by the backends: it runs the scalar micro-ops of one block
// (one simulated core) and hands every tile op and sync op to the backend's executor:
//
//   struct Exec {
//     bool tile(Core&, const TileInst&, const MOp&);  // false = error (core.error set)
//     bool sync(Core&, const SyncInst&, const MOp&);  // false = error
//   };
//
// The cpu backend executes tile ops at once and skips sync ops (program order is its model);
// the npu model issues them to its pipes (runtime/npu/).
#pragma once

#include "runtime/Program.h"

#include <cstring>

namespace pto::rt {
namespace interp {

inline uint64_t xform(uint64_t v, uint8_t rtype) {
  switch (rtype) {
  case 1:
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))); // .sw
  case 2:
    return v & 0xFFFFFFFFu; // .uw
  case 3:
    return ~v + 1; // .neg
  default:
    return v;
  }
}
inline uint64_t xformLogic(uint64_t v, uint8_t rtype) {
  switch (rtype) {
  case 1:
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
  case 2:
    return v & 0xFFFFFFFFu;
  case 3:
    return ~v; // .not
  default:
    return v;
  }
}

inline uint64_t sext32(uint64_t v) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
}

inline uint64_t alu(AluOp op, uint64_t a, uint64_t b) {
  const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (op) {
  case AluOp::Add:
    return a + b;
  case AluOp::Sub:
    return a - b;
  case AluOp::And:
    return a & b;
  case AluOp::Or:
    return a | b;
  case AluOp::Xor:
    return a ^ b;
  case AluOp::AddW:
    return sext32(a + b);
  case AluOp::SubW:
    return sext32(a - b);
  case AluOp::Mul:
  case AluOp::MulU:
    return a * b;
  case AluOp::MulW:
    return sext32(a * b);
  case AluOp::Div:
    if (b == 0) return ~uint64_t{0};
    if (sa == INT64_MIN && sb == -1) return a;
    return static_cast<uint64_t>(sa / sb);
  case AluOp::DivU:
    return b == 0 ? ~uint64_t{0} : a / b;
  case AluOp::Rem:
    if (b == 0) return a;
    if (sa == INT64_MIN && sb == -1) return 0;
    return static_cast<uint64_t>(sa % sb);
  case AluOp::RemU:
    return b == 0 ? a : a % b;
  case AluOp::Min:
    return sa < sb ? a : b;
  case AluOp::Max:
    return sa > sb ? a : b;
  case AluOp::MinU:
    return a < b ? a : b;
  case AluOp::MaxU:
    return a > b ? a : b;
  case AluOp::Sll:
    return a << (b & 63);
  case AluOp::Srl:
    return a >> (b & 63);
  case AluOp::Sra:
    return static_cast<uint64_t>(sa >> (b & 63));
  case AluOp::CmpEq:
    return a == b;
  case AluOp::CmpNe:
    return a != b;
  case AluOp::CmpLt:
    return sa < sb;
  case AluOp::CmpGe:
    return sa >= sb;
  case AluOp::CmpLtU:
    return a < b;
  case AluOp::CmpGeU:
    return a >= b;
  case AluOp::CmpAnd:
    return (a & b) != 0;
  case AluOp::CmpOr:
    return (a | b) != 0;
  case AluOp::Li:
    return b;
  }
  return 0;
}

inline bool isLogic(AluOp op) {
  return obj::code::isLogical(op);
}

} // namespace interp

/// Runs `fn` on `c` until its RET. Returns false on error (c.error set, failedAt = text offset).
/// Calls run the callee on the same core with the same executor.
template <class Exec>
bool interpret(const DecodedFunction& fn, Core& c, uint32_t& failedAt, Exec& exec) {
  using namespace interp;
  const MOp* code = fn.code.data();
  const TileInst* tiles = fn.tiles.data();
  size_t pc = 0;
  uint64_t* r = c.r.data();
  uint64_t scalarOps = 0, tileOps = 0;
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
    return c.instructionLimit &&
           c.scalarOps + c.tileOps + scalarOps + tileOps + branches > c.instructionLimit;
  };
  auto budgetError = [&](const MOp& m) {
    c.error = "the kernel ran more than " + std::to_string(c.instructionLimit) +
              " instructions (an endless loop? raise the limit with --max-instructions)";
    return fail(m);
  };
  for (;;) {
    const MOp& m = code[pc++];
    switch (m.kind) {
    case MKind::Alu: {
      uint64_t b = m.useImm
                       ? static_cast<uint64_t>(m.imm)
                       : (isLogic(m.op) ? xformLogic(r[m.rs2], m.rtype) : xform(r[m.rs2], m.rtype))
                             << m.shamt;
      r[m.rd] = alu(m.op, r[m.rs1], b);
      ++scalarOps;
      break;
    }
    case MKind::Setc: {
      uint64_t b = m.useImm
                       ? static_cast<uint64_t>(m.imm)
                       : (isLogic(m.op) ? xformLogic(r[m.rs2], m.rtype) : xform(r[m.rs2], m.rtype));
      c.cond = alu(m.op, r[m.rs1], b) != 0;
      ++scalarOps;
      break;
    }
    case MKind::Fpu:
      r[m.rd] = isa::scalarFp(m.fp, m.fpSrc, m.fpDst, r[m.rs1], r[m.rs2]);
      ++scalarOps;
      break;
    case MKind::Csel:
      r[m.rd] = r[m.rs3] != 0 ? r[m.rs1] : xform(r[m.rs2], m.rtype);
      ++scalarOps;
      break;
    case MKind::Load: {
      uint64_t addr = r[m.rs1] + (m.useImm ? static_cast<uint64_t>(m.imm)
                                           : xform(r[m.rs2], m.rtype) << m.shamt);
      const uint8_t* p = c.translate(addr, m.size, "scalar load", false);
      if (!p) return fail(m);
      uint64_t v = 0;
      std::memcpy(&v, p, m.size);
      if (m.isSigned && m.size < 8) {
        const unsigned sh = 64 - 8 * m.size;
        v = static_cast<uint64_t>(static_cast<int64_t>(v << sh) >> sh);
      }
      r[m.rd] = v;
      ++scalarOps;
      break;
    }
    case MKind::Store: {
      uint64_t addr =
          r[m.rs1] + (m.useImm ? static_cast<uint64_t>(m.imm) : xform(r[m.rs2], m.rtype));
      uint8_t* p = c.translate(addr, m.size, "scalar store", true);
      if (!p) return fail(m);
      uint64_t v = r[m.rs3];
      std::memcpy(p, &v, m.size);
      ++scalarOps;
      break;
    }
    case MKind::Tile:
      ++tileOps;
      flush(); // the npu model reads the counts to charge the scalar unit's time
      if (!exec.tile(c, tiles[m.target], m)) return fail(m);
      break;
    case MKind::Sync:
      flush();
      if (!exec.sync(c, fn.syncs[m.target], m)) return fail(m);
      break;
    case MKind::BlockInfo:
      r[m.rd] = m.imm == 4 ? c.blockIdx : m.imm == 5 ? c.blockNum : m.imm == 6 ? 0 : 1;
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
      constexpr unsigned kMaxCallDepth = 256;
      if (!c.functions || m.target >= c.functions->size()) {
        c.error = "call to a function the program does not have";
        return fail(m);
      }
      if (c.callDepth >= kMaxCallDepth) {
        c.error = "call depth exceeds " + std::to_string(kMaxCallDepth);
        return fail(m);
      }
      r[10] = m.textOffset + 4u; // ra: the word after the call
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
    return c.error.empty();
  }
  bool sync(Core&, const SyncInst&, const MOp&) { return true; }
};

} // namespace pto::rt
