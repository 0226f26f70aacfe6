// The scalar interpreter: runs one block (one simulated core) of a decoded function.
#include "runtime/Program.h"

#include <cstring>

namespace pto::rt {

const GmRegion* Core::regionOf(uint64_t addr) const {
  uint64_t region = addr >> kRegionShift;
  if (region == 0 || region > gm->size()) return nullptr;
  return &(*gm)[region - 1];
}

uint8_t* Core::translate(uint64_t addr, uint64_t bytes, const char* what, bool write) {
  const uint64_t region = addr >> kRegionShift, off = addr & kRegionMask;
  if (region == kStackRegion) {
    if (off + bytes <= stack.size() && off + bytes >= off) return stack.data() + off;
    if (error.empty()) error = std::string(what) + (write ? " writes" : " reads") + " outside the stack frame";
    return nullptr;
  }
  if (region == 0 || region > gm->size()) {
    if (error.empty()) {
      char b[64];
      snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(addr));
      error = std::string(what) + (write ? " writes" : " reads") + " address " + b + ", which is not in any argument";
    }
    return nullptr;
  }
  const GmRegion& g = (*gm)[region - 1];
  if (off > g.size || bytes > g.size - off) {
    if (error.empty())
      error = std::string(what) + (write ? " writes" : " reads") + " past the end of argument %" + g.name + " (bytes " +
              std::to_string(off) + ".." + std::to_string(off + bytes) + " of " + std::to_string(g.size) + ")";
    return nullptr;
  }
  return g.data + off;
}

namespace {

inline uint64_t xform(uint64_t v, uint8_t rtype) {
  switch (rtype) {
  case 1: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))); // .sw
  case 2: return v & 0xFFFFFFFFu;                                                       // .uw
  case 3: return ~v + 1;                                                                 // .neg
  default: return v;
  }
}
inline uint64_t xformLogic(uint64_t v, uint8_t rtype) {
  switch (rtype) {
  case 1: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
  case 2: return v & 0xFFFFFFFFu;
  case 3: return ~v; // .not
  default: return v;
  }
}

inline uint64_t sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))); }

inline uint64_t alu(AluOp op, uint64_t a, uint64_t b) {
  const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (op) {
  case AluOp::Add: return a + b;
  case AluOp::Sub: return a - b;
  case AluOp::And: return a & b;
  case AluOp::Or: return a | b;
  case AluOp::Xor: return a ^ b;
  case AluOp::AddW: return sext32(a + b);
  case AluOp::SubW: return sext32(a - b);
  case AluOp::Mul:
  case AluOp::MulU: return a * b;
  case AluOp::MulW: return sext32(a * b);
  case AluOp::Div:
    if (b == 0) return ~uint64_t{0};
    if (sa == INT64_MIN && sb == -1) return a;
    return static_cast<uint64_t>(sa / sb);
  case AluOp::DivU: return b == 0 ? ~uint64_t{0} : a / b;
  case AluOp::Rem:
    if (b == 0) return a;
    if (sa == INT64_MIN && sb == -1) return 0;
    return static_cast<uint64_t>(sa % sb);
  case AluOp::RemU: return b == 0 ? a : a % b;
  case AluOp::Min: return sa < sb ? a : b;
  case AluOp::Max: return sa > sb ? a : b;
  case AluOp::MinU: return a < b ? a : b;
  case AluOp::MaxU: return a > b ? a : b;
  case AluOp::Sll: return a << (b & 63);
  case AluOp::Srl: return a >> (b & 63);
  case AluOp::Sra: return static_cast<uint64_t>(sa >> (b & 63));
  case AluOp::CmpEq: return a == b;
  case AluOp::CmpNe: return a != b;
  case AluOp::CmpLt: return sa < sb;
  case AluOp::CmpGe: return sa >= sb;
  case AluOp::CmpLtU: return a < b;
  case AluOp::CmpGeU: return a >= b;
  case AluOp::CmpAnd: return (a & b) != 0;
  case AluOp::CmpOr: return (a | b) != 0;
  case AluOp::Li: return b;
  }
  return 0;
}

inline bool isLogic(AluOp op) { return op == AluOp::And || op == AluOp::Or || op == AluOp::Xor || op == AluOp::CmpAnd || op == AluOp::CmpOr; }

} // namespace

bool runBlock(const DecodedFunction& fn, Core& c, uint32_t& failedAt) {
  const MOp* code = fn.code.data();
  const TileInst* tiles = fn.tiles.data();
  size_t pc = 0;
  uint64_t* r = c.r.data();
  uint64_t scalarOps = 0, tileOps = 0;
  for (;;) {
    const MOp& m = code[pc++];
    switch (m.kind) {
    case MKind::Alu: {
      uint64_t b = m.useImm ? static_cast<uint64_t>(m.imm)
                            : (isLogic(m.op) ? xformLogic(r[m.rs2], m.rtype) : xform(r[m.rs2], m.rtype)) << m.shamt;
      r[m.rd] = alu(m.op, r[m.rs1], b);
      ++scalarOps;
      break;
    }
    case MKind::Setc: {
      uint64_t b = m.useImm ? static_cast<uint64_t>(m.imm) : (isLogic(m.op) ? xformLogic(r[m.rs2], m.rtype) : xform(r[m.rs2], m.rtype));
      c.cond = alu(m.op, r[m.rs1], b) != 0;
      ++scalarOps;
      break;
    }
    case MKind::Csel:
      r[m.rd] = r[m.rs3] != 0 ? r[m.rs1] : xform(r[m.rs2], m.rtype);
      ++scalarOps;
      break;
    case MKind::Load: {
      uint64_t addr = r[m.rs1] + (m.useImm ? static_cast<uint64_t>(m.imm) : xform(r[m.rs2], m.rtype) << m.shamt);
      const uint8_t* p = c.translate(addr, m.size, "scalar load", false);
      if (!p) {
        failedAt = m.textOffset;
        return false;
      }
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
      uint64_t addr = r[m.rs1] + (m.useImm ? static_cast<uint64_t>(m.imm) : xform(r[m.rs2], m.rtype));
      uint8_t* p = c.translate(addr, m.size, "scalar store", true);
      if (!p) {
        failedAt = m.textOffset;
        return false;
      }
      uint64_t v = r[m.rs3];
      std::memcpy(p, &v, m.size);
      ++scalarOps;
      break;
    }
    case MKind::Tile: {
      const TileInst& t = tiles[m.target];
      t.kernel(c, t);
      ++tileOps;
      if (!c.error.empty()) {
        failedAt = m.textOffset;
        c.scalarOps += scalarOps;
        c.tileOps += tileOps;
        return false;
      }
      break;
    }
    case MKind::BlockInfo:
      r[m.rd] = m.imm == 4 ? c.blockIdx : m.imm == 5 ? c.blockNum : m.imm == 6 ? 0 : 1;
      break;
    case MKind::Jump: pc = m.target; break;
    case MKind::JumpIf:
      if (c.cond) pc = m.target;
      break;
    case MKind::ClearCond: c.cond = false; break;
    case MKind::Ret:
      c.scalarOps += scalarOps;
      c.tileOps += tileOps;
      return true;
    case MKind::Call: {
      // The callee runs on the same core (registers, stack); it returns with its own RET.
      constexpr unsigned kMaxCallDepth = 256;
      if (c.callDepth >= kMaxCallDepth || !c.functions || m.target >= c.functions->size()) {
        c.error = "call depth exceeds " + std::to_string(kMaxCallDepth);
        failedAt = m.textOffset;
        return false;
      }
      r[10] = m.textOffset + 4u; // ra: the word after the call
      ++c.callDepth;
      bool ok = runBlock((*c.functions)[m.target], c, failedAt);
      --c.callDepth;
      if (!ok) {
        c.scalarOps += scalarOps;
        c.tileOps += tileOps;
        return false;
      }
      break;
    }
    }
  }
}

} // namespace pto::rt
