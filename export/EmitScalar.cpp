// FunctionEmitter (export/Emitter.h): scalar instructions as C++ statements over the uint64_t
// registers (docs/encoding.md semantics through the pto_export helpers of
// export/prelude/device-helpers.hpp.in), the constants they build, and the extension control
// blocks (set_flag/wait_flag, pipe_barrier, block and sub-block queries).
#include "export/Emitter.h"
#include "export/Spelling.h"

#include "isa/Encoding.h"
#include "isa/ScalarSemantics.h"

namespace pto::cppexport::detail {

namespace enc = isa::enc;

namespace {

bool isCompare(AluOp op) {
  return op >= AluOp::CmpEq && op <= AluOp::CmpOr;
}

/// op(a, b) as a call of its function in isa/ScalarSemantics.inc (embedded in the prelude).
std::string aluExpr(AluOp op, const std::string& a, const std::string& b) {
  return "pto_export::" + std::string(isa::aluFunction(op)) + "(" + a + ", " + b + ")";
}

/// The ops constants are built from (docs/encoding.md materialize64, address arithmetic).
std::optional<uint64_t> evaluate(AluOp op, uint64_t a, uint64_t b) {
  switch (op) {
  case AluOp::Add:
  case AluOp::Sub:
  case AluOp::And:
  case AluOp::Or:
  case AluOp::Xor:
  case AluOp::Mul:
  case AluOp::MulU:
  case AluOp::Sll:
  case AluOp::Srl:
  case AluOp::Li:
    return isa::scalar::alu(op, a, b);
  default:
    return std::nullopt;
  }
}

std::string memType(const ScalarOp& m) {
  if (m.kind == ScalarKind::Store || !m.isSigned)
    return m.size == 8   ? "uint64_t"
           : m.size == 4 ? "uint32_t"
           : m.size == 2 ? "uint16_t"
                         : "uint8_t";
  return m.size == 8 ? "int64_t" : m.size == 4 ? "int32_t" : m.size == 2 ? "int16_t" : "int8_t";
}

/// A trap word (docs/abi.md, isa::trapword): `add zero, s<<k, ->zero`, which the code generator
/// emits only for pto.trap and where an scf.for whose step is not positive would run.
bool isTrapWord(const ScalarOp& m) {
  return m.op == AluOp::Add && !m.useImm && m.shamt != 0 && m.rd == kZeroReg && m.rs1 == kZeroReg;
}

} // namespace

std::string FunctionEmitter::xform(const ScalarOp& m) {
  std::string r = reg(m.rs2);
  switch (m.rtype) {
  case RType::None:
    return r;
  case RType::SignWord:
    return "pto_export::sext32(" + r + ")";
  case RType::ZeroWord:
    return "pto_export::zext32(" + r + ")";
  case RType::NegOrNot:
    return isLogical(m.op) && m.kind != ScalarKind::Load && m.kind != ScalarKind::Store
               ? "pto_export::bnot(" + r + ")"
               : "pto_export::neg(" + r + ")";
  }
  return r;
}

std::string FunctionEmitter::operandB(const ScalarOp& m, bool shifted) {
  if (m.useImm) return lit(m.imm);
  std::string b = xform(m);
  if (shifted && m.shamt) b = "pto_export::sll(" + b + ", " + std::to_string(m.shamt) + ")";
  return b;
}

void FunctionEmitter::track(const ScalarOp& m) {
  if (m.kind == ScalarKind::Setc || m.kind == ScalarKind::Store || m.rd == kZeroReg) return;
  std::optional<uint64_t> v;
  if (m.kind == ScalarKind::Alu && known_[m.rs1] &&
      (m.useImm || (known_[m.rs2] && m.rtype == RType::None && m.shamt == 0)))
    v = evaluate(m.op, *known_[m.rs1], m.useImm ? static_cast<uint64_t>(m.imm) : *known_[m.rs2]);
  known_[m.rd] = v;
}

std::string FunctionEmitter::fpuExpr(const ScalarOp& m) {
  using F = isa::FpOp;
  const std::string t = std::to_string(m.fpSrc), code = std::to_string(m.fpDst), a = reg(m.rs1),
                    b = reg(m.rs2);
  switch (m.fp) {
  case F::Cvt:
    return "pto_export::fcvt(" + t + ", " + code + ", " + a + ")";
  case F::CvtZ:
    return "pto_export::fcvtz(" + t + ", " + code + ", " + a + ")";
  case F::SCvtF:
    return "pto_export::cvtf(true, " + t + ", " + code + ", " + a + ")";
  case F::UCvtF:
    return "pto_export::cvtf(false, " + t + ", " + code + ", " + a + ")";
  default:
    return "pto_export::fpu(" + std::to_string(static_cast<int>(m.fp)) + ", " + t + ", " + a +
           ", " + b + ")";
  }
}

std::optional<ExportError> FunctionEmitter::scalar(const ScalarInst& s) {
  const ScalarOp& m = s.op;
  std::string text = enc::format(s.inst);
  std::string stmt;
  switch (m.kind) {
  case ScalarKind::Alu:
    if (isTrapWord(m)) {
      // Without it a step of 0 would loop forever and a negative one wrap for 2^64 trips.
      if (m.shamt == isa::trapword::kTrapShift && m.rs2 == kZeroReg)
        stmt = "__builtin_trap(); /* pto.trap */";
      else if (m.shamt == isa::trapword::kBoxRowShift || m.shamt == isa::trapword::kBoxColShift)
        stmt = "__builtin_trap(); /* a view's " +
               std::string(m.shamt == isa::trapword::kBoxRowShift ? "row" : "column") + " offset " +
               reg(m.rs2) + " is off its boxed tile's grid */";
      else
        stmt = "__builtin_trap(); /* scf.for step " + reg(m.rs2) + " is not positive */";
      break;
    }
    if (m.rd == kZeroReg) break;
    // addi zero, k is how constants are made: print the constant.
    if ((m.op == AluOp::Add || m.op == AluOp::Or) && m.rs1 == kZeroReg)
      stmt = dst(m.rd) + " = " + operandB(m, true) + ";";
    else
      stmt = dst(m.rd) + " = " + aluExpr(m.op, reg(m.rs1), operandB(m, true)) + ";";
    break;
  case ScalarKind::Setc: {
    usesCond_ = true;
    std::string e = aluExpr(m.op, reg(m.rs1), operandB(m, false));
    stmt = "cond = " + (isCompare(m.op) ? e : "(" + e + ") != 0") + ";";
    break;
  }
  case ScalarKind::Csel:
    if (m.rd != kZeroReg)
      stmt = dst(m.rd) + " = " + reg(m.rs3) + " != 0 ? " + reg(m.rs1) + " : " + xform(m) + ";";
    break;
  case ScalarKind::Fpu:
    if (m.rd != kZeroReg) stmt = dst(m.rd) + " = " + fpuExpr(m) + ";";
    break;
  case ScalarKind::Load:
  case ScalarKind::Store: {
    auto where = memory(m);
    if (!where)
      return error(s.offset,
                   "cannot tell whether '" + text + "' addresses the stack or GM on every path");
    std::string addr = reg(m.rs1) + " + " + operandB(m, m.kind == ScalarKind::Load);
    std::string type = memType(m);
    if (m.kind == ScalarKind::Load) {
      if (m.rd != kZeroReg)
        stmt = dst(m.rd) + " = pto_export::" + (*where ? "load" : "load_gm") + "<" + type + ">(" +
               addr + ");";
    } else {
      stmt = std::string("pto_export::") + (*where ? "store" : "store_gm") + "<" + type + ">(" +
             addr + ", " + reg(m.rs3) + ");";
    }
    break;
  }
  }
  track(m);
  stackMust_ = stackStep(stackMust_, m);
  stackMay_ = stackStep(stackMay_, m);
  body_ << "  " << (stmt.empty() ? "/* discarded */" : stmt) << " // " << text << "\n";
  return std::nullopt;
}

std::optional<bool> FunctionEmitter::memory(const ScalarOp& m) const {
  auto has = [](uint32_t mask, uint8_t r) { return (mask >> r) & 1u; };
  bool must = has(stackMust_, m.rs1) || (!m.useImm && has(stackMust_, m.rs2));
  bool may = has(stackMay_, m.rs1) || (!m.useImm && has(stackMay_, m.rs2));
  if (must) return true;
  if (!may) return false;
  return std::nullopt;
}

std::string FunctionEmitter::bound(const Bound& b, uint32_t dflt) {
  if (!b.present) return std::to_string(dflt);
  if (b.isConstant()) return std::to_string(b.imm & 0xFFFF);
  return "static_cast<unsigned>((" + reg(b.reg) + " + " + std::to_string(b.imm) + ") & 0xFFFF)";
}

std::optional<ExportError> FunctionEmitter::control(const Block& b) {
  const ControlBlock& c = b.control;
  switch (c.ctl) {
  case enc::ExtCtl::SET_FLAG:
  case enc::ExtCtl::WAIT_FLAG: {
    std::string id = !c.event.present       ? "EVENT_ID0"
                     : c.event.isConstant() ? "EVENT_ID" + std::to_string(c.event.imm)
                                            : "static_cast<event_t>(" + reg(c.event.reg) + " + " +
                                                  std::to_string(c.event.imm) + ")";
    if (c.event.present && c.event.isConstant() && c.event.imm > 7)
      return error(b.offset, "event id " + std::to_string(c.event.imm) + " has no EVENT_ID name");
    body_ << "  " << (c.ctl == enc::ExtCtl::SET_FLAG ? "set_flag(" : "wait_flag(")
          << pipeName(c.pipeA) << ", " << pipeName(c.pipeB) << ", " << id << ");\n";
    return std::nullopt;
  }
  case enc::ExtCtl::PIPE_BARRIER:
    body_ << "  pipe_barrier(" << pipeName(c.pipeA) << ");\n";
    return std::nullopt;
  case enc::ExtCtl::GET_BLOCK_IDX:
  case enc::ExtCtl::GET_BLOCK_NUM:
  case enc::ExtCtl::GET_SUBBLOCK_IDX:
  case enc::ExtCtl::GET_SUBBLOCK_NUM: {
    const char* fnName = c.ctl == enc::ExtCtl::GET_BLOCK_IDX      ? "get_block_idx"
                         : c.ctl == enc::ExtCtl::GET_BLOCK_NUM    ? "get_block_num"
                         : c.ctl == enc::ExtCtl::GET_SUBBLOCK_IDX ? "get_subblockid"
                                                                  : "get_subblockdim";
    if (c.result != kZeroReg) {
      body_ << "  " << dst(c.result) << " = static_cast<uint64_t>(" << fnName << "());\n";
      known_[c.result] = std::nullopt;
      stackMust_ &= ~(1u << c.result);
      stackMay_ &= ~(1u << c.result);
    }
    return std::nullopt;
  }
  case enc::ExtCtl::SYNC_SET:
  case enc::ExtCtl::SYNC_WAIT:
  case enc::ExtCtl::GET_BUF:
  case enc::ExtCtl::RLS_BUF:
    return error(b.offset, std::string(enc::name(c.ctl)) +
                               " cannot be exported: pto-isa's CPU simulator has no cross-core "
                               "flags or buffer tokens");
  case enc::ExtCtl::COMM_NOTIFY:
  case enc::ExtCtl::COMM_WAIT:
  case enc::ExtCtl::COMM_TEST:
    return signal(c);
  case enc::ExtCtl::COMM_SYNCALL:
    return error(b.offset, "COMM_SYNCALL (pto.syncall) cannot be exported: pto-isa has no "
                           "all-rank barrier intrinsic of that name");
  case enc::ExtCtl::None:
    break;
  }
  return error(b.offset, "unknown extension control block");
}

/// A signal op as pto-isa's pto::comm::TNOTIFY / TWAIT / TTEST on a one-element i32
/// GlobalTensor at the signal's address (docs/multi-device.md). pto-isa's WaitCmp orders its
/// compares eq, ne, gt, ge, lt, le; the encoding's mode is isa::CmpMode (eq, ne, lt, le, gt, ge).
std::optional<ExportError> FunctionEmitter::signal(const ControlBlock& c) {
  static constexpr const char* kCmp[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const uint32_t mode = c.event.present ? c.event.imm : 0;
  const std::string sig = "SignalGT(reinterpret_cast<__gm__ int32_t*>(" + reg(c.ior[0]) + "))";
  const std::string value = "static_cast<int32_t>(" + reg(c.ior[1]) + ")";
  body_ << "  {\n    using SignalGT = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, "
           "Stride<1, 1, 1, 1, 1>>;\n    SignalGT sig = "
        << sig << ";\n";
  if (c.ctl == enc::ExtCtl::COMM_NOTIFY) {
    body_ << "    pto::comm::TNOTIFY(sig, " << value
          << ", pto::comm::NotifyOp::" << (mode == 1 ? "AtomicAdd" : "Set") << ");\n  }\n";
    return std::nullopt;
  }
  const std::string cmp = std::string("pto::comm::WaitCmp::") + kCmp[mode < 6 ? mode : 0];
  if (c.ctl == enc::ExtCtl::COMM_WAIT) {
    body_ << "    pto::comm::TWAIT(sig, " << value << ", " << cmp << ");\n  }\n";
    return std::nullopt;
  }
  if (c.result != kZeroReg) {
    body_ << "    " << dst(c.result) << " = pto::comm::TTEST(sig, " << value << ", " << cmp
          << ") ? 1 : 0;\n";
    known_[c.result] = std::nullopt;
    stackMust_ &= ~(1u << c.result);
    stackMay_ &= ~(1u << c.result);
  }
  body_ << "  }\n";
  return std::nullopt;
}

} // namespace pto::cppexport::detail
