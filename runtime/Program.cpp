// Image -> decoded program (docs/runtime.md, "Decoding"). Every word of every function is
// decoded once with isa::enc (extensions on); blocks become micro-ops, tile blocks become
// TileInsts with resolved operands and a cpu kernel chosen for their dtypes.
#include "runtime/Program.h"

#include "isa/Encoding.h"

#include <algorithm>
#include <fstream>
#include <map>

namespace pto::rt {
namespace {

namespace enc = isa::enc;
using enc::FormId;

std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void innerBox(TileOperand& t, uint16_t fractal) {
  if (t.slayout == isa::SLayout::NoneBox) return;
  unsigned bytes = std::max(1u, isa::bitWidth(t.dtype) / 8);
  if (fractal == 1024) {
    t.innerRows = t.innerCols = 16;
  } else if (fractal == 32) {
    t.innerRows = t.slayout == isa::SLayout::RowMajor ? 16 : 2;
    t.innerCols = t.slayout == isa::SLayout::RowMajor ? 2 : 16;
  } else {
    t.innerRows = t.slayout == isa::SLayout::RowMajor ? 16 : 32 / bytes;
    t.innerCols = t.slayout == isa::SLayout::RowMajor ? 32 / bytes : 16;
  }
}

class FunctionDecoder {
public:
  FunctionDecoder(const obj::Image& img, uint32_t index, DecodedFunction& out) : img_(img), fn_(img.functions[index]), out_(out) {}

  std::optional<std::string> run() {
    out_.index = index();
    out_.name = fn_.name;
    out_.frameSize = fn_.frameSize;
    for (const obj::Param& p : fn_.params) {
      Module::ParamInfo pi;
      pi.name = p.name;
      pi.kind = static_cast<Module::ParamInfo::Kind>(p.kind);
      pi.dtype = p.dtype;
      pi.shape = p.shape;
      out_.params.push_back(pi);
    }
    for (const obj::BufferUse& u : img_.layout)
      if (u.function == out_.index) out_.bufferUsed[static_cast<unsigned>(u.loc)] = u.used;
    const uint64_t begin = fn_.textOffset, end = fn_.textOffset + fn_.textSize;
    uint64_t pc = begin;
    while (pc < end) {
      size_t consumed = 0;
      auto r = enc::decodeBytes(std::span<const uint8_t>(img_.text.data() + pc, end - pc), consumed, {.extensions = true});
      if (!r) return at(pc, "cannot decode word: " + r.error());
      word_ = static_cast<uint32_t>(pc);
      if (auto e = word(*r)) return at(pc, *e);
      pc += consumed;
    }
    if (auto e = finishBlock()) return at(blockStart_, *e);
    MOp ret;
    ret.kind = MKind::Ret;
    ret.textOffset = static_cast<uint32_t>(end);
    out_.code.push_back(ret);
    const uint32_t endIndex = static_cast<uint32_t>(out_.code.size() - 1);
    for (auto [mi, target] : branches_) {
      if (target == end) {
        out_.code[mi].target = endIndex;
        continue;
      }
      auto it = starts_.find(target);
      if (target < begin || target > end || it == starts_.end())
        return at(out_.code[mi].textOffset, "branch target " + hex(target) + " is not the start of a block of @" + fn_.name);
      out_.code[mi].target = it->second;
    }
    return std::nullopt;
  }

private:
  uint32_t index() const { return static_cast<uint32_t>(&fn_ - img_.functions.data()); }
  std::string at(uint64_t off, const std::string& msg) const {
    return "@" + fn_.name + "+" + hex(off - fn_.textOffset) + ": " + msg;
  }

  enum class BlockKind { None, Scalar, Tile, Ctl };
  enum class Transfer { Fall, Direct, Cond, Ret, Call };

  std::optional<std::string> startBlock(BlockKind k, Transfer t, int64_t target = 0) {
    if (auto e = finishBlock()) return e;
    kind_ = k;
    transfer_ = t;
    target_ = target;
    blockStart_ = word_;
    starts_[word_] = static_cast<uint32_t>(out_.code.size());
    if (t == Transfer::Cond) push(MOp{.kind = MKind::ClearCond});
    tile_ = TileInst{};
    haveOp_ = false;
    ctl_ = 0;
    return std::nullopt;
  }

  void push(MOp m) {
    m.textOffset = word_;
    out_.code.push_back(m);
  }

  std::optional<std::string> finishBlock() {
    if (kind_ == BlockKind::Tile) {
      if (auto e = buildTile()) return e;
      MOp m{.kind = MKind::Tile};
      m.target = static_cast<uint32_t>(out_.tiles.size());
      m.textOffset = blockStart_;
      out_.tiles.push_back(std::move(tile_));
      out_.code.push_back(m);
    } else if (kind_ == BlockKind::Ctl) {
      if (ctl_ >= 1 && ctl_ <= 3) {
        SyncInst s;
        s.kind = static_cast<enc::ExtCtl>(ctl_);
        s.src = pipeA_;
        s.dst = ctl_ == 3 ? pipeA_ : pipeB_;
        s.event = tile_.dim[0];
        MOp m{.kind = MKind::Sync};
        m.target = static_cast<uint32_t>(out_.syncs.size());
        m.textOffset = blockStart_;
        out_.syncs.push_back(s);
        out_.code.push_back(m);
      } else if (ctl_ >= 4 && ctl_ <= 7) {
        MOp m{.kind = MKind::BlockInfo};
        m.rd = tile_.iorDst == 0 ? kSinkReg : tile_.iorDst;
        m.imm = ctl_;
        m.textOffset = blockStart_;
        out_.code.push_back(m);
      }
    }
    if (kind_ != BlockKind::None) {
      MOp m;
      m.textOffset = blockStart_;
      switch (transfer_) {
      case Transfer::Fall: break;
      case Transfer::Direct:
      case Transfer::Cond:
        m.kind = transfer_ == Transfer::Direct ? MKind::Jump : MKind::JumpIf;
        branches_.push_back({static_cast<uint32_t>(out_.code.size()), static_cast<uint64_t>(target_)});
        out_.code.push_back(m);
        break;
      case Transfer::Ret:
        m.kind = MKind::Ret;
        out_.code.push_back(m);
        break;
      case Transfer::Call: // resolved to a function index once every function is decoded
        m.kind = MKind::Call;
        m.imm = target_;
        out_.code.push_back(m);
        break;
      }
    }
    kind_ = BlockKind::None;
    return std::nullopt;
  }

  static int64_t f(const enc::Inst& in, std::string_view name) { return in.get(name).value_or(0); }

  std::optional<std::string> word(const enc::Inst& in) {
    const int64_t P = word_;
    switch (in.form) {
    case FormId::BSTART_DIRECT: return startBlock(BlockKind::Scalar, Transfer::Direct, P + 2 * f(in, "simm25"));
    case FormId::BSTART_COND: return startBlock(BlockKind::Scalar, Transfer::Cond, P + 2 * f(in, "simm25"));
    case FormId::BSTART_STD_DIRECT:
    case FormId::BSTART_FP_DIRECT: return startBlock(BlockKind::Scalar, Transfer::Direct, P + 2 * f(in, "simm17"));
    case FormId::BSTART_STD_COND:
    case FormId::BSTART_FP_COND: return startBlock(BlockKind::Scalar, Transfer::Cond, P + 2 * f(in, "simm17"));
    case FormId::C_BSTART_DIRECT: return startBlock(BlockKind::Scalar, Transfer::Direct, P + 2 * f(in, "simm12"));
    case FormId::C_BSTART_COND: return startBlock(BlockKind::Scalar, Transfer::Cond, P + 2 * f(in, "simm12"));
    case FormId::BSTART_STD_FALL:
    case FormId::BSTART_FP_FALL:
    case FormId::BSTART_SYS_FALL:
    case FormId::C_BSTART_SYS: return startBlock(BlockKind::Scalar, Transfer::Fall);
    case FormId::BSTART_STD_RET:
    case FormId::BSTART_FP_RET: return startBlock(BlockKind::Scalar, Transfer::Ret);
    case FormId::C_BSTART_STD:
    case FormId::C_BSTART_FP: {
      int64_t br = f(in, "BrType");
      if (br == 1) return startBlock(BlockKind::Scalar, Transfer::Fall);
      if (br == 7) return startBlock(BlockKind::Scalar, Transfer::Ret);
      return std::string("indirect branches are not supported by the runtime");
    }
    case FormId::BSTART_STD_IND:
    case FormId::BSTART_FP_IND:
    case FormId::BSTART_CALL: return startBlock(BlockKind::Scalar, Transfer::Call, P + 2 * f(in, "simm12"));
    case FormId::BSTART_ICALL: return "indirect calls are not supported by the runtime (" + enc::format(in) + ")";
    case FormId::BSTART_EXTC: {
      if (auto e = startBlock(BlockKind::Ctl, Transfer::Fall)) return e;
      ctl_ = static_cast<unsigned>(f(in, "CTL"));
      if (ctl_ >= 1 && ctl_ <= 3) {
        auto a = enc::pipeOfCode(f(in, "PipeA")), b = enc::pipeOfCode(ctl_ == 3 ? f(in, "PipeA") : f(in, "PipeB"));
        if (!a || !b) return "bad pipe in " + enc::format(in);
        pipeA_ = *a;
        pipeB_ = *b;
      }
      return std::nullopt;
    }
    case FormId::BSTOP:
    case FormId::C_BSTOP:
    case FormId::L_BSTOP: {
      auto e = finishBlock();
      return e;
    }
    case FormId::B_HINT:
    case FormId::B_HINT_TRACE:
    case FormId::B_CATR: return std::nullopt;
    default: break;
    }
    if (auto op = enc::tileOpOf(in)) {
      if (auto e = startBlock(BlockKind::Tile, Transfer::Fall)) return e;
      const enc::TileOpInfo& ti = enc::info(*op);
      if (!ti.ours) return "tile op " + std::string(ti.name) + " is not supported by the runtime";
      auto dt = enc::dtypeOfCode(static_cast<unsigned>(*enc::dataTypeOf(in)));
      if (!dt) return "tile op " + std::string(ti.name) + " has a DataType the runtime does not model";
      tile_.op = *ti.ours;
      tile_.name = ti.name.data();
      tile_.startType = *dt;
      haveOp_ = true;
      return std::nullopt;
    }
    // Block header words.
    switch (in.form) {
    case FormId::B_DATR:
      if (kind_ != BlockKind::Tile) return std::string("B.DATR outside a tile block");
      tile_.hasDatr = true;
      tile_.datrType = static_cast<unsigned>(f(in, "DataType"));
      tile_.rmode = static_cast<unsigned>(f(in, "RMode"));
      tile_.cmode = static_cast<unsigned>(f(in, "CMode"));
      tile_.pad = static_cast<unsigned>(f(in, "PadValueOrByteId"));
      tile_.sat = f(in, "Sat") != 0;
      return std::nullopt;
    case FormId::B_FPATR: return std::nullopt;
    case FormId::B_DIM_LB0:
    case FormId::B_DIM_LB1:
    case FormId::B_DIM_LB2: {
      if (kind_ != BlockKind::Tile && kind_ != BlockKind::Ctl) return std::string("B.DIM outside a tile block");
      unsigned lb = in.form == FormId::B_DIM_LB0 ? 0 : in.form == FormId::B_DIM_LB1 ? 1 : 2;
      tile_.dim[lb] = {static_cast<uint8_t>(f(in, "RegSrc")), static_cast<uint32_t>(f(in, "uimm17")), true};
      return std::nullopt;
    }
    case FormId::B_IOR:
      if (kind_ != BlockKind::Tile && kind_ != BlockKind::Ctl) return std::string("B.IOR outside a tile block");
      tile_.ior[0] = static_cast<uint8_t>(f(in, "RegSrc0"));
      tile_.ior[1] = static_cast<uint8_t>(f(in, "RegSrc1"));
      tile_.ior[2] = static_cast<uint8_t>(f(in, "RegSrc2"));
      tile_.iorDst = static_cast<uint8_t>(f(in, "RegDst"));
      tile_.numIor = 3;
      return std::nullopt;
    case FormId::B_IOT_S1:
    case FormId::B_IOT_S2:
    case FormId::B_IOT_S1D:
    case FormId::B_IOT_S2D:
    case FormId::B_IOT_D: {
      if (kind_ != BlockKind::Tile) return std::string("B.IOT outside a tile block");
      if (in.form == FormId::B_IOT_D || in.form == FormId::B_IOT_S1D || in.form == FormId::B_IOT_S2D)
        return std::string("B.IOT destination hands are not supported by the runtime");
      for (const char* name : {"SrcTile0", "SrcTile1"}) {
        auto v = in.get(name);
        if (!v) continue;
        if (*v >= static_cast<int64_t>(fn_.tiles.size()))
          return "B.IOT names tile " + std::to_string(*v) + " but @" + fn_.name + " has " + std::to_string(fn_.tiles.size()) + " tiles";
        tile_.tiles.push_back(operand(static_cast<uint32_t>(*v)));
      }
      return std::nullopt;
    }
    default: break;
    }
    if (enc::info(in.form).group == enc::FormGroup::Scalar) {
      if (kind_ == BlockKind::Tile || kind_ == BlockKind::Ctl) return "scalar instruction inside a tile block: " + enc::format(in);
      if (kind_ == BlockKind::None) { // scalar code after a BSTOP: an implicit fall-through block
        if (auto e = startBlock(BlockKind::Scalar, Transfer::Fall)) return e;
      }
      return scalar(in);
    }
    return "instruction not supported by the runtime: " + enc::format(in);
  }

  TileOperand operand(uint32_t idx) {
    const obj::TileDesc& d = fn_.tiles[idx];
    TileOperand t;
    t.loc = static_cast<uint8_t>(d.loc);
    t.dtype = d.dtype;
    t.blayout = d.blayout;
    t.slayout = d.slayout;
    t.offset = static_cast<uint32_t>(d.placement);
    t.rows = d.rows;
    t.cols = d.cols;
    t.validRows = d.validRows;
    t.validCols = d.validCols;
    t.pad = d.pad;
    t.name = d.name;
    innerBox(t, d.fractal);
    return t;
  }

  std::optional<std::string> buildTile() {
    if (!haveOp_) return std::string("tile block without an op");
    const isa::OpInfo& oi = isa::info(tile_.op);
    // Tile roles: outputs first, then inputs; optional roles filled in order while operands
    // remain beyond the required ones; a variadic role takes the rest (docs/linking.md 2).
    std::vector<const isa::Role*> order;
    for (const isa::Role& r : oi.roles)
      if (r.kind == isa::RoleKind::Tile && r.isOutput) order.push_back(&r);
    for (const isa::Role& r : oi.roles)
      if (r.kind == isa::RoleKind::Tile && !r.isOutput) order.push_back(&r);
    size_t required = 0;
    for (const isa::Role* r : order) required += !r->optional && !r->variadic;
    const size_t n = tile_.tiles.size();
    if (n < required)
      return std::string(tile_.name) + " has " + std::to_string(n) + " tile operands, needs " + std::to_string(required);
    size_t extra = n - required, k = 0;
    roleNames_.assign(n, "");
    for (const isa::Role* r : order) {
      if (k >= n) break;
      if (r->variadic) {
        while (k < n) roleNames_[k++] = r->name;
        break;
      }
      if (r->optional) {
        if (extra == 0) continue;
        --extra;
      }
      roleNames_[k++] = r->name;
    }
    auto role = [&](std::initializer_list<std::string_view> names) {
      for (std::string_view nm : names)
        for (size_t i = 0; i < n; ++i)
          if (roleNames_[i] == nm) return static_cast<int>(i);
      return -1;
    };
    tile_.dst = role({"dst", "dsts"});
    tile_.src0 = role({"src0", "src", "lhs", "mask"});
    tile_.src1 = role({"src1", "rhs", "indices", "indexes", "scale", "idx", "offsets", "fp"});
    tile_.src2 = role({"src2", "offset"});
    tile_.acc = role({"acc"});
    tile_.bias = role({"bias"});
    tile_.tmp = role({"tmp"});
    tile_.lscale = role({"lscale"});
    tile_.rscale = role({"rscale"});
    if (tile_.op == isa::OpId::TSEL || tile_.op == isa::OpId::TSELS) {
      tile_.src0 = role({"mask"});
      tile_.src1 = role({"src0", "src"});
      tile_.src2 = role({"src1"});
    }
    if (tile_.op == isa::OpId::TMRGSORT)
      if (auto e = mergeSortRoles()) return e;
    if (auto e = selectKernel(tile_)) return *e;
    return std::nullopt;
  }

  /// TMRGSORT's two variadic roles cannot be split by the role table; the B.IOT count decides
  /// between pto-isa's two forms: (dst, src) with a block length, and (dst, tmp, src0..src3)
  /// merging 2-4 lists.
  std::optional<std::string> mergeSortRoles() {
    const int n = static_cast<int>(tile_.tiles.size());
    tile_.dst = 0;
    tile_.src0 = 1;
    tile_.src1 = tile_.src2 = tile_.src3 = tile_.tmp = -1;
    if (n == 2) return std::nullopt;
    if (n < 4 || n > 6)
      return "TMRGSORT has " + std::to_string(n) + " tile operands; it takes (dst, src) or (dst, tmp, 2 to 4 sources)";
    tile_.tmp = 1;
    tile_.src0 = 2;
    tile_.src1 = 3;
    tile_.src2 = n > 4 ? 4 : -1;
    tile_.src3 = n > 5 ? 5 : -1;
    return std::nullopt;
  }

  std::optional<std::string> reg(int64_t v, uint8_t& out, bool dst) {
    if (v < 0 || v >= static_cast<int64_t>(enc::kNumGprs))
      return std::string("scalar temporary queues (t#/u#) are not supported by the runtime");
    out = static_cast<uint8_t>(v);
    if (dst && v == 0) out = kSinkReg;
    return std::nullopt;
  }

  std::optional<std::string> scalar(const enc::Inst& in) {
    MOp m;
    const enc::FormInfo& fi = enc::info(in.form);
    auto has = [&](std::string_view n) { return fi.fieldIndex(n) >= 0; };
    if (has("RegDst"))
      if (auto e = reg(f(in, "RegDst"), m.rd, true)) return e;
    if (has("SrcL"))
      if (auto e = reg(f(in, "SrcL"), m.rs1, false)) return e;
    if (has("SrcR"))
      if (auto e = reg(f(in, "SrcR"), m.rs2, false)) return e;
    if (has("SrcD"))
      if (auto e = reg(f(in, "SrcD"), m.rs3, false)) return e;
    if (has("SrcP"))
      if (auto e = reg(f(in, "SrcP"), m.rs3, false)) return e;
    m.rtype = static_cast<uint8_t>(f(in, "SrcRType"));
    m.shamt = static_cast<uint8_t>(f(in, "shamt"));
    int64_t imm = 0;
    bool hasImm = false;
    for (const char* n : {"uimm12", "simm12", "uimm24", "simm24", "simm22", "simm32", "uimm32", "imm20", "imm"})
      if (has(n)) {
        imm = f(in, n);
        hasImm = true;
      }
    using A = AluOp;
    auto alu = [&](A op) {
      m.kind = MKind::Alu;
      m.op = op;
      if (hasImm) {
        m.useImm = true;
        m.imm = imm;
      }
      push(m);
      return std::nullopt;
    };
    auto setc = [&](A op) {
      m.kind = MKind::Setc;
      m.op = op;
      if (hasImm) {
        m.useImm = true;
        m.imm = static_cast<int64_t>(static_cast<uint64_t>(imm) << m.shamt);
      }
      push(m);
      return std::nullopt;
    };
    auto shiftImm = [&](A op) {
      m.kind = MKind::Alu;
      m.op = op;
      m.useImm = true;
      m.imm = m.shamt;
      m.shamt = 0;
      push(m);
      return std::nullopt;
    };
    auto li = [&](int64_t v) {
      m.kind = MKind::Alu;
      m.op = A::Li;
      m.useImm = true;
      m.imm = v;
      push(m);
      return std::nullopt;
    };
    auto load = [&](unsigned size, bool sgn) {
      m.kind = MKind::Load;
      m.size = static_cast<uint8_t>(size);
      m.isSigned = sgn;
      if (hasImm) {
        m.useImm = true;
        m.imm = imm;
      }
      push(m);
      return std::nullopt;
    };
    auto store = [&](unsigned size, bool immForm) {
      m.kind = MKind::Store;
      m.size = static_cast<uint8_t>(size);
      if (immForm) {
        // sdi value, [base, imm] / hl.sdi value, [base, imm]
        if (in.form == FormId::S_SDI || in.form == FormId::S_SWI || in.form == FormId::S_SHI || in.form == FormId::S_SBI) {
          m.rs3 = m.rs1;
          m.rs1 = m.rs2;
        } else {
          m.rs1 = m.rs2;
        }
        m.useImm = true;
        m.imm = imm;
      }
      push(m);
      return std::nullopt;
    };
    switch (in.form) {
    case FormId::S_ADD: return alu(A::Add);
    case FormId::S_SUB: return alu(A::Sub);
    case FormId::S_ADDW: return alu(A::AddW);
    case FormId::S_SUBW: return alu(A::SubW);
    case FormId::S_AND: return alu(A::And);
    case FormId::S_OR: return alu(A::Or);
    case FormId::S_XOR: return alu(A::Xor);
    case FormId::S_ADDI: case FormId::S_HL_ADDI: return alu(A::Add);
    case FormId::S_SUBI: case FormId::S_HL_SUBI: return alu(A::Sub);
    case FormId::S_ANDI: case FormId::S_HL_ANDI: return alu(A::And);
    case FormId::S_ORI: case FormId::S_HL_ORI: return alu(A::Or);
    case FormId::S_XORI: case FormId::S_HL_XORI: return alu(A::Xor);
    case FormId::S_ADDIW: case FormId::S_HL_ADDIW: return alu(A::AddW);
    case FormId::S_SUBIW: return alu(A::SubW);
    case FormId::S_MUL: return alu(A::Mul);
    case FormId::S_MULU: return alu(A::MulU);
    case FormId::S_MULW: return alu(A::MulW);
    case FormId::S_DIV: return alu(A::Div);
    case FormId::S_DIVU: return alu(A::DivU);
    case FormId::S_REM: return alu(A::Rem);
    case FormId::S_REMU: return alu(A::RemU);
    case FormId::S_MIN: return alu(A::Min);
    case FormId::S_MAX: return alu(A::Max);
    case FormId::S_MINU: return alu(A::MinU);
    case FormId::S_MAXU: return alu(A::MaxU);
    case FormId::S_SLL: return alu(A::Sll);
    case FormId::S_SRL: return alu(A::Srl);
    case FormId::S_SRA: return alu(A::Sra);
    case FormId::S_SLLI: return shiftImm(A::Sll);
    case FormId::S_SRLI: return shiftImm(A::Srl);
    case FormId::S_SRAI: return shiftImm(A::Sra);
    case FormId::S_CMP_EQ: case FormId::S_CMP_EQI: case FormId::S_HL_CMP_EQI: return alu(A::CmpEq);
    case FormId::S_CMP_NE: case FormId::S_CMP_NEI: case FormId::S_HL_CMP_NEI: return alu(A::CmpNe);
    case FormId::S_CMP_LT: case FormId::S_CMP_LTI: case FormId::S_HL_CMP_LTI: return alu(A::CmpLt);
    case FormId::S_CMP_GE: case FormId::S_CMP_GEI: case FormId::S_HL_CMP_GEI: return alu(A::CmpGe);
    case FormId::S_CMP_LTU: case FormId::S_CMP_LTUI: case FormId::S_HL_CMP_LTUI: return alu(A::CmpLtU);
    case FormId::S_CMP_GEU: case FormId::S_CMP_GEUI: case FormId::S_HL_CMP_GEUI: return alu(A::CmpGeU);
    case FormId::S_CMP_AND: case FormId::S_CMP_ANDI: case FormId::S_HL_CMP_ANDI: return alu(A::CmpAnd);
    case FormId::S_CMP_OR: case FormId::S_CMP_ORI: case FormId::S_HL_CMP_ORI: return alu(A::CmpOr);
    case FormId::S_SETC_EQ: case FormId::S_SETC_EQI: case FormId::S_HL_SETC_EQI: return setc(A::CmpEq);
    case FormId::S_SETC_NE: case FormId::S_SETC_NEI: case FormId::S_HL_SETC_NEI: return setc(A::CmpNe);
    case FormId::S_SETC_LT: case FormId::S_SETC_LTI: case FormId::S_HL_SETC_LTI: return setc(A::CmpLt);
    case FormId::S_SETC_GE: case FormId::S_SETC_GEI: case FormId::S_HL_SETC_GEI: return setc(A::CmpGe);
    case FormId::S_SETC_LTU: case FormId::S_SETC_LTUI: case FormId::S_HL_SETC_LTUI: return setc(A::CmpLtU);
    case FormId::S_SETC_GEU: case FormId::S_SETC_GEUI: case FormId::S_HL_SETC_GEUI: return setc(A::CmpGeU);
    case FormId::S_SETC_AND: case FormId::S_SETC_ANDI: case FormId::S_HL_SETC_ANDI: return setc(A::CmpAnd);
    case FormId::S_SETC_OR: case FormId::S_SETC_ORI: case FormId::S_HL_SETC_ORI: return setc(A::CmpOr);
    case FormId::S_LUI: return li(static_cast<int32_t>(static_cast<uint32_t>(imm) << 12));
    case FormId::S_HL_LIS: return li(imm);
    case FormId::S_HL_LIU: return li(static_cast<int64_t>(static_cast<uint32_t>(imm)));
    case FormId::S_HL_LUI: return li(static_cast<int64_t>(static_cast<uint64_t>(imm) << 32));
    case FormId::S_CSEL:
      m.kind = MKind::Csel;
      push(m);
      return std::nullopt;
    case FormId::S_LD: case FormId::S_LDI: case FormId::S_HL_LDI: return load(8, true);
    case FormId::S_LW: case FormId::S_LWI: case FormId::S_HL_LWI: return load(4, true);
    case FormId::S_LWU: case FormId::S_LWUI: case FormId::S_HL_LWUI: return load(4, false);
    case FormId::S_LH: case FormId::S_LHI: case FormId::S_HL_LHI: return load(2, true);
    case FormId::S_LHU: case FormId::S_LHUI: case FormId::S_HL_LHUI: return load(2, false);
    case FormId::S_LB: case FormId::S_LBI: case FormId::S_HL_LBI: return load(1, true);
    case FormId::S_LBU: case FormId::S_LBUI: case FormId::S_HL_LBUI: return load(1, false);
    case FormId::S_SD: return store(8, false);
    case FormId::S_SW: return store(4, false);
    case FormId::S_SH: return store(2, false);
    case FormId::S_SB: return store(1, false);
    case FormId::S_SDI: case FormId::S_HL_SDI: return store(8, true);
    case FormId::S_SWI: case FormId::S_HL_SWI: return store(4, true);
    case FormId::S_SHI: case FormId::S_HL_SHI: return store(2, true);
    case FormId::S_SBI: case FormId::S_HL_SBI: return store(1, true);
    default: return "scalar instruction not supported by the runtime: " + enc::format(in);
    }
  }

  const obj::Image& img_;
  const obj::Function& fn_;
  DecodedFunction& out_;
  uint32_t word_ = 0, blockStart_ = 0;
  BlockKind kind_ = BlockKind::None;
  Transfer transfer_ = Transfer::Fall;
  int64_t target_ = 0;
  TileInst tile_;
  bool haveOp_ = false;
  unsigned ctl_ = 0;
  isa::Pipe pipeA_ = isa::Pipe::S, pipeB_ = isa::Pipe::S;
  std::vector<std::string_view> roleNames_;
  std::map<uint64_t, uint32_t> starts_;
  std::vector<std::pair<uint32_t, uint64_t>> branches_;
};

} // namespace

std::string Program::locationOf(uint32_t function, uint64_t textOffset) const {
  const obj::Function& fn = image.functions.at(function);
  const obj::LineEntry* best = nullptr;
  for (const obj::LineEntry& l : image.lines)
    if (l.textOffset >= fn.textOffset && l.textOffset <= textOffset && l.textOffset < fn.textOffset + fn.textSize &&
        (!best || l.textOffset >= best->textOffset))
      best = &l;
  if (!best) return "";
  return best->file + ":" + std::to_string(best->line) + ":" + std::to_string(best->col);
}

std::string Program::locationAt(uint64_t textOffset) const {
  for (uint32_t i = 0; i < image.functions.size(); ++i) {
    const obj::Function& f = image.functions[i];
    if (textOffset < f.textOffset || textOffset >= f.textOffset + f.textSize) continue;
    std::string loc = locationOf(i, textOffset);
    return loc.empty() ? "@" + f.name + "+" + hex(textOffset - f.textOffset) : loc;
  }
  return hex(textOffset);
}

Result<std::shared_ptr<Program>> decodeImage(obj::Image image, std::string fileName) {
  auto p = std::make_shared<Program>();
  p->image = std::move(image);
  p->fileName = std::move(fileName);
  p->functions.resize(p->image.functions.size());
  for (uint32_t i = 0; i < p->image.functions.size(); ++i) {
    FunctionDecoder d(p->image, i, p->functions[i]);
    if (auto e = d.run()) return Error{p->fileName + ": error: " + *e};
  }
  // Calls name their callee by text offset: map it to the function starting there.
  for (DecodedFunction& fn : p->functions)
    for (MOp& m : fn.code) {
      if (m.kind != MKind::Call) continue;
      auto callee = std::find_if(p->image.functions.begin(), p->image.functions.end(), [&](const obj::Function& f) {
        return !(f.flags & obj::kDeclaration) && static_cast<int64_t>(f.textOffset) == m.imm;
      });
      if (callee == p->image.functions.end())
        return Error{p->fileName + ": error: @" + fn.name + ": call target 0x" + std::to_string(m.imm) +
                     " is not the start of a function"};
      m.target = static_cast<uint32_t>(callee - p->image.functions.begin());
    }
  for (const obj::ImageEntry& e : p->image.entries) p->entries.push_back(e.function);
  return p;
}

} // namespace pto::rt
