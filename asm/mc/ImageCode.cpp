// Image code -> blocks (asm/mc/ImageCode.h). The block rules are docs/abi.md's: a block starts at a
// BSTART* word (or with scalar code after a BSTOP) and ends at its BSTOP or the next BSTART*.
#include "asm/mc/ImageCode.h"
#include "isa/PrintFormat.h"
#include "support/Text.h"

#include <algorithm>
#include <cstdio>

namespace pto::obj::code {
namespace {

namespace enc = isa::enc;
using enc::FormId;

using enc::Field;

int64_t field(const enc::Inst& in, enc::FieldName name) {
  return in.get(name).value_or(0);
}

/// The scalar forms and what they do; nullopt for a form that is not a scalar operation.
class ScalarDecoder {
public:
  explicit ScalarDecoder(const enc::Inst& in) : in_(in), fi_(enc::info(in.form)) {}

  std::variant<ScalarOp, std::string> run() {
    if (auto e = regs()) return *e;
    m_.rtype = static_cast<RType>(field(in_, "SrcRType"));
    m_.shamt = static_cast<uint8_t>(field(in_, "shamt"));
    for (Field n : {Field::uimm12, Field::simm12, Field::uimm24, Field::simm24, Field::simm22,
                    Field::simm32, Field::uimm32, Field::imm20, Field::imm})
      if (has(n)) {
        imm_ = field(in_, n);
        hasImm_ = true;
      }
    if (auto r = alu()) return *r;
    if (auto r = compare()) return *r;
    if (auto r = memory()) return *r;
    if (auto r = constant()) return *r;
    if (auto r = floating())
      return r->kind == ScalarKind::Fpu ? std::variant<ScalarOp, std::string>(*r)
                                        : "scalar instruction " + enc::format(in_) +
                                              " converts to a type the scalar unit does not have";
    if (in_.form == FormId::S_CSEL) {
      m_.kind = ScalarKind::Csel;
      return m_;
    }
    return "scalar instruction " + enc::format(in_) + " has no defined operation";
  }

private:
  bool has(Field n) const { return fi_.has(n); }

  std::optional<std::string> reg(Field name, uint8_t& out) {
    if (!has(name)) return std::nullopt;
    int64_t v = field(in_, name);
    if (v < 0 || v >= static_cast<int64_t>(enc::kNumGprs))
      return "scalar temporary queues (t#/u#) are not supported: " + enc::format(in_);
    out = static_cast<uint8_t>(v);
    return std::nullopt;
  }

  std::optional<std::string> regs() {
    for (auto [name, slot] : {std::pair<Field, uint8_t*>{Field::RegDst, &m_.rd},
                              {Field::SrcL, &m_.rs1},
                              {Field::SrcR, &m_.rs2},
                              {Field::SrcD, &m_.rs3},
                              {Field::SrcP, &m_.rs3}})
      if (auto e = reg(name, *slot)) return e;
    return std::nullopt;
  }

  ScalarOp make(ScalarKind k, AluOp op) {
    ScalarOp m = m_;
    m.kind = k;
    m.op = op;
    if (hasImm_) {
      m.useImm = true;
      // setc immediates carry a shift (setc.lti a0, 3<<4): fold it in.
      m.imm = k == ScalarKind::Setc ? static_cast<int64_t>(static_cast<uint64_t>(imm_) << m.shamt)
                                    : imm_;
    }
    return m;
  }

  std::optional<ScalarOp> alu() {
    using A = AluOp;
    auto a = [&](A op) { return std::optional<ScalarOp>(make(ScalarKind::Alu, op)); };
    auto shiftImm = [&](A op) {
      ScalarOp m = make(ScalarKind::Alu, op);
      m.useImm = true;
      m.imm = m.shamt;
      m.shamt = 0;
      return std::optional<ScalarOp>(m);
    };
    switch (in_.form) {
    case FormId::S_ADD:
    case FormId::S_ADDI:
    case FormId::S_HL_ADDI:
      return a(A::Add);
    case FormId::S_SUB:
    case FormId::S_SUBI:
    case FormId::S_HL_SUBI:
      return a(A::Sub);
    case FormId::S_ADDW:
    case FormId::S_ADDIW:
    case FormId::S_HL_ADDIW:
      return a(A::AddW);
    case FormId::S_SUBW:
    case FormId::S_SUBIW:
      return a(A::SubW);
    case FormId::S_AND:
    case FormId::S_ANDI:
    case FormId::S_HL_ANDI:
      return a(A::And);
    case FormId::S_OR:
    case FormId::S_ORI:
    case FormId::S_HL_ORI:
      return a(A::Or);
    case FormId::S_XOR:
    case FormId::S_XORI:
    case FormId::S_HL_XORI:
      return a(A::Xor);
    case FormId::S_MUL:
      return a(A::Mul);
    case FormId::S_MULU:
      return a(A::MulU);
    case FormId::S_MULW:
      return a(A::MulW);
    case FormId::S_DIV:
      return a(A::Div);
    case FormId::S_DIVU:
      return a(A::DivU);
    case FormId::S_REM:
      return a(A::Rem);
    case FormId::S_REMU:
      return a(A::RemU);
    case FormId::S_MIN:
      return a(A::Min);
    case FormId::S_MAX:
      return a(A::Max);
    case FormId::S_MINU:
      return a(A::MinU);
    case FormId::S_MAXU:
      return a(A::MaxU);
    case FormId::S_SLL:
      return a(A::Sll);
    case FormId::S_SRL:
      return a(A::Srl);
    case FormId::S_SRA:
      return a(A::Sra);
    case FormId::S_SLLI:
      return shiftImm(A::Sll);
    case FormId::S_SRLI:
      return shiftImm(A::Srl);
    case FormId::S_SRAI:
      return shiftImm(A::Sra);
    default:
      return std::nullopt;
    }
  }

  std::optional<ScalarOp> compare() {
    using A = AluOp;
    auto c = [&](A op) { return std::optional<ScalarOp>(make(ScalarKind::Alu, op)); };
    auto s = [&](A op) { return std::optional<ScalarOp>(make(ScalarKind::Setc, op)); };
    switch (in_.form) {
    case FormId::S_CMP_EQ:
    case FormId::S_CMP_EQI:
    case FormId::S_HL_CMP_EQI:
      return c(A::CmpEq);
    case FormId::S_CMP_NE:
    case FormId::S_CMP_NEI:
    case FormId::S_HL_CMP_NEI:
      return c(A::CmpNe);
    case FormId::S_CMP_LT:
    case FormId::S_CMP_LTI:
    case FormId::S_HL_CMP_LTI:
      return c(A::CmpLt);
    case FormId::S_CMP_GE:
    case FormId::S_CMP_GEI:
    case FormId::S_HL_CMP_GEI:
      return c(A::CmpGe);
    case FormId::S_CMP_LTU:
    case FormId::S_CMP_LTUI:
    case FormId::S_HL_CMP_LTUI:
      return c(A::CmpLtU);
    case FormId::S_CMP_GEU:
    case FormId::S_CMP_GEUI:
    case FormId::S_HL_CMP_GEUI:
      return c(A::CmpGeU);
    case FormId::S_CMP_AND:
    case FormId::S_CMP_ANDI:
    case FormId::S_HL_CMP_ANDI:
      return c(A::CmpAnd);
    case FormId::S_CMP_OR:
    case FormId::S_CMP_ORI:
    case FormId::S_HL_CMP_ORI:
      return c(A::CmpOr);
    case FormId::S_SETC_EQ:
    case FormId::S_SETC_EQI:
    case FormId::S_HL_SETC_EQI:
      return s(A::CmpEq);
    case FormId::S_SETC_NE:
    case FormId::S_SETC_NEI:
    case FormId::S_HL_SETC_NEI:
      return s(A::CmpNe);
    case FormId::S_SETC_LT:
    case FormId::S_SETC_LTI:
    case FormId::S_HL_SETC_LTI:
      return s(A::CmpLt);
    case FormId::S_SETC_GE:
    case FormId::S_SETC_GEI:
    case FormId::S_HL_SETC_GEI:
      return s(A::CmpGe);
    case FormId::S_SETC_LTU:
    case FormId::S_SETC_LTUI:
    case FormId::S_HL_SETC_LTUI:
      return s(A::CmpLtU);
    case FormId::S_SETC_GEU:
    case FormId::S_SETC_GEUI:
    case FormId::S_HL_SETC_GEUI:
      return s(A::CmpGeU);
    case FormId::S_SETC_AND:
    case FormId::S_SETC_ANDI:
    case FormId::S_HL_SETC_ANDI:
      return s(A::CmpAnd);
    case FormId::S_SETC_OR:
    case FormId::S_SETC_ORI:
    case FormId::S_HL_SETC_ORI:
      return s(A::CmpOr);
    default:
      return std::nullopt;
    }
  }

  /// The FSU forms (kind Alu marks a DstType code this runtime cannot convert to).
  std::optional<ScalarOp> floating() {
    using F = isa::FpOp;
    auto f = [&](F op) {
      ScalarOp m = make(ScalarKind::Fpu, AluOp::Add);
      m.fp = op;
      m.fpSrc = static_cast<uint8_t>(field(in_, "SrcType"));
      m.fpDst = static_cast<uint8_t>(field(in_, "DstType"));
      const bool toInt = op == F::CvtZ;
      const bool toFloat = op == F::Cvt || op == F::SCvtF || op == F::UCvtF;
      if ((toInt && !isa::intDstType(m.fpDst)) || (toFloat && !isa::fpDstType(m.fpDst)))
        m.kind = ScalarKind::Alu;
      return std::optional<ScalarOp>(m);
    };
    switch (in_.form) {
    case FormId::S_FADD:
      return f(F::Add);
    case FormId::S_FSUB:
      return f(F::Sub);
    case FormId::S_FMUL:
      return f(F::Mul);
    case FormId::S_FDIV:
      return f(F::Div);
    case FormId::S_FMAX:
      return f(F::Max);
    case FormId::S_FMIN:
      return f(F::Min);
    case FormId::S_FABS:
      return f(F::Abs);
    case FormId::S_FEQ:
      return f(F::Eq);
    case FormId::S_FNE:
      return f(F::Ne);
    case FormId::S_FLT:
      return f(F::Lt);
    case FormId::S_FGE:
      return f(F::Ge);
    case FormId::S_FCVT:
      return f(F::Cvt);
    case FormId::S_FCVTZ:
      return f(F::CvtZ);
    case FormId::S_SCVTF:
      return f(F::SCvtF);
    case FormId::S_UCVTF:
      return f(F::UCvtF);
    default:
      return std::nullopt;
    }
  }

  std::optional<ScalarOp> constant() {
    auto li = [&](int64_t v) {
      ScalarOp m = make(ScalarKind::Alu, AluOp::Li);
      m.useImm = true;
      m.imm = v;
      return std::optional<ScalarOp>(m);
    };
    switch (in_.form) {
    case FormId::S_LUI:
      return li(static_cast<int32_t>(static_cast<uint32_t>(imm_) << 12));
    case FormId::S_HL_LIS:
      return li(imm_);
    case FormId::S_HL_LIU:
      return li(static_cast<int64_t>(static_cast<uint32_t>(imm_)));
    case FormId::S_HL_LUI:
      return li(static_cast<int64_t>(static_cast<uint64_t>(imm_) << 32));
    default:
      return std::nullopt;
    }
  }

  std::optional<ScalarOp> load(unsigned size, bool sgn) {
    ScalarOp m = make(ScalarKind::Load, AluOp::Add);
    m.size = static_cast<uint8_t>(size);
    m.isSigned = sgn;
    return m;
  }

  /// Register stores name the value SrcD and the base SrcL; `sdi` names the value SrcL and the
  /// base SrcR; `hl.sdi` names the value SrcD and the base SrcR.
  std::optional<ScalarOp> store(unsigned size) {
    ScalarOp m = make(ScalarKind::Store, AluOp::Add);
    m.size = static_cast<uint8_t>(size);
    m.shamt = 0;
    if (!hasImm_) return m;
    if (in_.form == FormId::S_SDI || in_.form == FormId::S_SWI || in_.form == FormId::S_SHI ||
        in_.form == FormId::S_SBI)
      m.rs3 = m.rs1;
    m.rs1 = m.rs2;
    m.rs2 = 0;
    return m;
  }

  std::optional<ScalarOp> memory() {
    switch (in_.form) {
    case FormId::S_LD:
    case FormId::S_LDI:
    case FormId::S_HL_LDI:
      return load(8, true);
    case FormId::S_LW:
    case FormId::S_LWI:
    case FormId::S_HL_LWI:
      return load(4, true);
    case FormId::S_LWU:
    case FormId::S_LWUI:
    case FormId::S_HL_LWUI:
      return load(4, false);
    case FormId::S_LH:
    case FormId::S_LHI:
    case FormId::S_HL_LHI:
      return load(2, true);
    case FormId::S_LHU:
    case FormId::S_LHUI:
    case FormId::S_HL_LHUI:
      return load(2, false);
    case FormId::S_LB:
    case FormId::S_LBI:
    case FormId::S_HL_LBI:
      return load(1, true);
    case FormId::S_LBU:
    case FormId::S_LBUI:
    case FormId::S_HL_LBUI:
      return load(1, false);
    case FormId::S_SD:
    case FormId::S_SDI:
    case FormId::S_HL_SDI:
      return store(8);
    case FormId::S_SW:
    case FormId::S_SWI:
    case FormId::S_HL_SWI:
      return store(4);
    case FormId::S_SH:
    case FormId::S_SHI:
    case FormId::S_HL_SHI:
      return store(2);
    case FormId::S_SB:
    case FormId::S_SBI:
    case FormId::S_HL_SBI:
      return store(1);
    default:
      return std::nullopt;
    }
  }

  const enc::Inst& in_;
  const enc::FormInfo& fi_;
  ScalarOp m_;
  int64_t imm_ = 0;
  bool hasImm_ = false;
};

class Decoder {
public:
  Decoder(const Image& img, uint32_t index) : img_(img), fn_(img.functions[index]), index_(index) {}

  /// Each block as the block decoder found it: opened at its first word, its words read, closed
  /// where it ends (at its stop word, where the next block opens, or at the function's end).
  std::variant<FunctionCode, CodeError> run() {
    out_.function = index_;
    const uint64_t begin = fn_.textOffset, end = fn_.textOffset + fn_.textSize;
    const DecodedBlocks d = decodeBlocks(img_.text, begin, end);
    for (size_t k = 0; k < d.code.blocks.size(); ++k) {
      const BlockWords& b = d.code.blocks[k];
      std::span<const Word> words = d.code.wordsOf(b);
      word_ = b.offset;
      if (auto e = b.hasStart ? blockStart(b, words.front().inst) : implicitStart())
        return CodeError{index_, word_, *e};
      if (b.hasStart) words = words.subspan(1);
      for (const Word& w : words) {
        word_ = w.offset;
        if (auto e = word(w.inst)) return CodeError{index_, word_, *e};
      }
      if (k + 1 == d.code.blocks.size()) break; // the last one closes at the function's end
      word_ = b.end;
      if (auto e = finish()) return CodeError{index_, word_, *e};
    }
    if (d.error)
      return CodeError{index_, d.error->offset, "cannot decode word: " + d.error->message};
    if (auto e = finish()) return CodeError{index_, open_ ? open_->offset : end, *e};
    if (auto e = checkTargets(end)) return *e;
    return std::move(out_);
  }

private:
  std::optional<CodeError> checkTargets(uint64_t end) const {
    for (const Block& b : out_.blocks) {
      if (b.transfer == Transfer::Call) {
        if (!functionAt(img_, b.target))
          return CodeError{index_, b.offset,
                           "call target " + support::hex0x(b.target) +
                               " is not the start of a function"};
      } else if ((b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) &&
                 !out_.blockAt(b.target, end)) {
        return CodeError{index_, b.offset,
                         "branch target " + support::hex0x(b.target) +
                             " is not the start of a block of @" + fn_.name};
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> start(BlockKind k, Transfer t, uint64_t target = 0) {
    if (auto e = finish()) return e;
    open_ = Block{};
    open_->offset = word_;
    open_->kind = k;
    open_->transfer = t;
    open_->target = target;
    haveOp_ = false;
    header_.start();
    return std::nullopt;
  }

  std::optional<std::string> finish() {
    if (!open_) return std::nullopt;
    if (open_->kind == BlockKind::Tile && !haveOp_) return std::string("tile block without an op");
    if (open_->kind == BlockKind::Tile && open_->tile.op == isa::OpId::PRINT)
      if (auto e = finishPrint()) return e;
    if (open_->kind == BlockKind::Tile && open_->tile.encOp == enc::TileOp::TDEQUANT &&
        (open_->tile.ior || open_->tile.tiles.size() != 4))
      return scalarDequant();
    out_.blocks.push_back(std::move(*open_));
    open_.reset();
    return std::nullopt;
  }

  bool inside(BlockKind k) const { return open_ && open_->kind == k; }

  /// Two bytes of a PRINT block's format (docs/encoding.md 5.6), low byte first.
  std::optional<std::string> printText(const Bound& b) {
    if (!b.isConstant() || b.imm > 0xffff) return std::string("PRINT format word is not two bytes");
    if (open_->tile.text.size() >= isa::print::kMaxFormatBytes + 1)
      return std::string("PRINT format longer than its length");
    open_->tile.text += static_cast<char>(b.imm & 0xff);
    open_->tile.text += static_cast<char>(b.imm >> 8);
    return std::nullopt;
  }

  /// A PRINT block's format: as long as its B.DIM ->LB1 says, and one isa/PrintFormat.h prints
  /// its value's type with (an edited image is refused here, never formatted).
  std::optional<std::string> finishPrint() {
    TileBlock& t = open_->tile;
    const Bound len = t.dim[1];
    if (!len.isConstant() || len.imm > isa::print::kMaxFormatBytes ||
        t.text.size() != (len.imm + 1) / 2 * 2)
      return std::string("PRINT format words do not match its length");
    t.text.resize(len.imm);
    if (auto e = isa::print::formatError(t.text, t.startType)) return "PRINT with " + *e;
    if (!t.tiles.empty() || !t.ior) return std::string("PRINT takes one scalar and no tiles");
    return std::nullopt;
  }

  /// BSTART.SFU TDEQUANT carries two forms, told apart by their bindings: seed 000's per-row
  /// tile form (four B.IOT sources dst, src, scale, offset; no B.IOR), which is ours, and the
  /// 0.58.3 scalar form (B.IOT src, ->dst; B.IOR multiplier, zero point), which is not.
  static std::string scalarDequant() { return scalarDequantRefusal(); }

  /// A block with no start word (code after a BSTOP, or at the function's start): scalar code
  /// that falls through. Its words say whether they belong in one.
  std::optional<std::string> implicitStart() { return start(BlockKind::Scalar, Transfer::Fall); }

  /// The start word of block `b`: its transfer and target are the block decoder's.
  std::optional<std::string> blockStart(const BlockWords& b, const enc::Inst& in) {
    if (b.transfer == Transfer::Indirect)
      return std::string(in.formInfo().flow == enc::Flow::ByBrType
                             ? "indirect branches are not supported: "
                             : "indirect branches and calls are not supported: ") +
             enc::format(in);
    switch (b.kind) {
    case BlockKind::Tile:
      return tileStart(in, *enc::tileOpOf(in));
    case BlockKind::Control:
      return controlStart(b, in);
    case BlockKind::Scalar:
      break;
    }
    if (in.formInfo().flow == enc::Flow::Op) return header(in); // a tile start with no op here
    return start(BlockKind::Scalar, b.transfer, b.target.value_or(0));
  }

  std::optional<std::string> controlStart(const BlockWords& words, const enc::Inst& in) {
    if (auto e = start(BlockKind::Control, Transfer::Fall)) return e;
    ControlBlock& c = open_->control;
    c.ctl = words.control; // the block decoder's reading of CTL
    auto a = enc::pipeOfCode(field(in, Field::PipeA)), b = enc::pipeOfCode(field(in, Field::PipeB));
    if (!a || !b) return "bad pipe in " + enc::format(in);
    c.pipeA = *a;
    c.pipeB = *b;
    return std::nullopt;
  }

  std::optional<std::string> tileStart(const enc::Inst& in, enc::TileOp op) {
    if (auto e = start(BlockKind::Tile, Transfer::Fall)) return e;
    const enc::TileOpInfo& ti = enc::info(op);
    if (!ti.ours) return "tile op " + std::string(ti.name) + " has no op in the op table";
    auto dt =
        enc::dtypeOfCode(static_cast<unsigned>(enc::dataTypeOf(in).value_or(enc::kDataTypeNone)));
    if (!dt) return "tile op " + std::string(ti.name) + " has a DataType with no element type";
    open_->tile.encOp = op;
    open_->tile.op = *ti.ours;
    open_->tile.startType = *dt;
    haveOp_ = true;
    return std::nullopt;
  }

  /// A header word, read by the one reader (asm/mc/BlockHeader.h), in the block it is in.
  std::optional<std::string> header(const enc::Inst& in) {
    using Kind = HeaderWord::Kind;
    const HeaderWord h = header_.read(in);
    const bool tile = inside(BlockKind::Tile);
    switch (h.kind) {
    case Kind::Datr:
      if (!tile) return "B.DATR outside a tile block";
      open_->tile.datr = h.datr;
      return std::nullopt;
    case Kind::Fpatr:
      if (!tile) return "B.FPATR outside a tile block";
      if (!fixpipeBlock()) return std::nullopt; // a matrix block's: no post-processing here
      return enc::readFpatr(in, open_->tile.fix);
    case Kind::Xatr:
      if (!tile || !fixpipeBlock()) return "B.XATR outside a TMOV/TSTORE block";
      return enc::readXatr(in, open_->tile.fix);
    case Kind::Dim:
      if (tile && open_->tile.op == isa::OpId::PRINT && h.lb == 0) return printText(h.bound);
      if (tile)
        open_->tile.dim[h.lb] = h.bound;
      else if (inside(BlockKind::Control) && h.lb == 0)
        open_->control.event = h.bound;
      else
        return "B.DIM outside a tile block";
      return std::nullopt;
    case Kind::Ior:
      if (tile) {
        open_->tile.ior = h.iorSrc;
        open_->tile.iorDst = h.iorDst;
      } else if (inside(BlockKind::Control)) {
        open_->control.result = h.iorDst;
        open_->control.ior = h.iorSrc;
      } else {
        return "B.IOR outside a tile block";
      }
      return std::nullopt;
    case Kind::Bank: // the bank of the B.IOT operands after it (docs/encoding.md 5.4)
      if (!tile) return "B.TBANK outside a tile block";
      return std::nullopt;
    case Kind::Operands:
      if (!tile) return "B.IOT outside a tile block";
      for (uint8_t k = 0; k < h.numTiles; ++k) {
        if (h.tiles[k] >= fn_.tiles.size())
          return "B.IOT names tile " + std::to_string(h.tiles[k]) + " but @" + fn_.name + " has " +
                 std::to_string(fn_.tiles.size()) + " tiles";
        open_->tile.tiles.push_back(h.tiles[k]);
      }
      return std::nullopt;
    case Kind::DestinationHand:
      return destinationHandRefusal(tile && open_->tile.encOp == enc::TileOp::TDEQUANT
                                        ? std::optional(isa::OpId::TDEQUANT)
                                        : std::nullopt);
    case Kind::Hint: // no effect on what the block does
      return std::nullopt;
    case Kind::Other:
      break;
    }
    return std::string(enc::info(in.form).mnemonic()) +
           " is not supported here: " + enc::format(in);
  }

  /// TMOV/TSTORE blocks take the fixpipe words (docs/encoding.md 5.3).
  bool fixpipeBlock() const {
    return haveOp_ && (open_->tile.op == isa::OpId::TMOV || open_->tile.op == isa::OpId::TSTORE);
  }

  /// A word after its block's start word.
  std::optional<std::string> word(const enc::Inst& in) {
    if (in.formInfo().stopsBlock()) return finish();
    if (isHeaderForm(in.formInfo())) return header(in);
    if (open_ && open_->kind != BlockKind::Scalar)
      return "scalar instruction inside a tile block: " + enc::format(in);
    if (!open_) // scalar code after a stop word in the same block (cannot happen: it opens one)
      if (auto e = start(BlockKind::Scalar, Transfer::Fall)) return e;
    auto op = ScalarDecoder(in).run();
    if (auto* e = std::get_if<std::string>(&op)) return *e;
    open_->scalars.push_back({word_, in, std::get<ScalarOp>(op)});
    return std::nullopt;
  }

  const Image& img_;
  const Function& fn_;
  uint32_t index_;
  FunctionCode out_;
  std::optional<Block> open_;
  HeaderReader header_;
  uint64_t word_ = 0;
  bool haveOp_ = false;
};

} // namespace

std::optional<size_t> FunctionCode::blockAt(uint64_t offset, uint64_t functionEnd) const {
  if (offset == functionEnd) return blocks.size();
  auto it = std::lower_bound(blocks.begin(), blocks.end(), offset,
                             [](const Block& b, uint64_t o) { return b.offset < o; });
  if (it == blocks.end() || it->offset != offset) return std::nullopt;
  return static_cast<size_t>(it - blocks.begin());
}

std::variant<ScalarOp, std::string> decodeScalar(const isa::enc::Inst& in) {
  return ScalarDecoder(in).run();
}

std::variant<FunctionCode, CodeError> decodeFunction(const Image& img, uint32_t function) {
  if (function >= img.functions.size()) return CodeError{function, 0, "no such function"};
  return Decoder(img, function).run();
}

std::string sourceLocation(const Image& img, uint32_t function, uint64_t offset,
                           bool ptoPositions) {
  if (function >= img.functions.size()) return "";
  const Function& fn = img.functions[function];
  const LineEntry* best = nullptr;
  for (const LineEntry& l : img.lines)
    if (l.textOffset >= fn.textOffset && l.textOffset <= offset &&
        l.textOffset < fn.textOffset + fn.textSize && (!best || l.textOffset >= best->textOffset))
      best = &l;
  if (!best) return "";
  std::string pto = best->file + ":" + std::to_string(best->line) + ":" + std::to_string(best->col);
  if (ptoPositions || best->frontend.empty()) return pto;
  return best->frontend + " [" + pto + "]";
}

std::optional<uint32_t> functionAt(const Image& img, uint64_t offset) {
  for (uint32_t i = 0; i < img.functions.size(); ++i)
    if (!(img.functions[i].flags & kDeclaration) && img.functions[i].textOffset == offset) return i;
  return std::nullopt;
}

} // namespace pto::obj::code
