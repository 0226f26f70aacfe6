#include "asm/Lower.h"

#include "isa/Encoding.h"
#include "isa/Numerics.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <cctype>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace pto::as {
namespace {

using namespace pto::ir;
namespace enc = isa::enc;
using enc::FormId;

using VReg = uint32_t;
constexpr VReg kNoVReg = ~0u;

// GPR selectors (docs/encoding.md "GPR naming"): zero, sp, a0..a7, ra, s0..s8, x0..x3.
constexpr unsigned kZero = 0, kSp = 1, kA0 = 2, kRa = 10, kX0 = 20;
// x1..x3 are reserved as scratch for spill code and 64-bit constants.
constexpr unsigned kScratch[] = {21, 22, 23};
constexpr unsigned kMaxRegParams = 8;

/// A register operand of a machine instruction: which field holds it, the virtual register,
/// and whether the instruction writes it.
struct RegRef {
  std::string_view field;
  VReg v;
  bool def;
};

struct MInst {
  enum Kind : uint8_t { Word, Label, Jump, CondJump, ParamDef } kind = Word;
  enc::Inst inst;
  std::vector<RegRef> regs;
  int label = -1;       // Label: its id; Jump/CondJump: the target
  SrcLoc loc;           // first word of a source op carries it (line table)
  std::vector<std::pair<obj::RelocType, uint32_t>> relocs;
  unsigned paramReg = 0; // ParamDef: the ABI register holding the parameter on entry
  // Frame offsets known only after allocation: a stack parameter's index, or the byte offset
  // of an event-id array in the array area (which follows the spill slots).
  int stackParam = -1;
  int arrayBase = -1;
  int outArg = -1;            // a call's outgoing argument slot (the call-argument area)
  bool clobbersRegs = false;  // a call, or the argument loads right before it
  enum Frame : uint8_t { None, BlockStart, SpAdjust, RaSave, RaRestore } frame = None; // prologue/epilogue
  std::string callee;         // Call relocation target
};

/// A GM view in registers: base address, and per dimension the stride in elements.
struct ViewRegs {
  VReg base = kNoVReg;
  std::vector<ValueId> strides; // values (constants are rematerialized at use)
  std::vector<int64_t> constStrides; // for tensor-view parameters (static row-major strides)
  isa::DType elem = isa::DType::F32;
  bool dn = false; // column-major (layout DN): the elements of a column are adjacent
};

/// A partition in registers: the byte address of its first element and the stride in bytes
/// between its rows (ND) or its columns (DN). Dimensions before the last two that span more than
/// one element (`outer`) make the partition a stack of 2-D slices, moved one TLOAD/TSTORE each.
struct PartRegs {
  VReg addr = kNoVReg;
  VReg rowStride = kNoVReg;
  bool dn = false;
  struct Outer {
    int64_t size;
    VReg strideBytes;
  };
  std::vector<Outer> outer;
  int64_t sliceRows = 0, sliceCols = 0; // the last two dimensions (static) when `outer` is set
};

/// The valid shape of a tile as the code generator knows it: a constant or a value.
struct Dim {
  int64_t constant = 0;
  ValueId value = kNoValue;
};

class FunctionLowering {
public:
  FunctionLowering(const Function& fn, uint32_t index, isa::Arch arch, DiagEngine& diags, obj::ObjectFile& obj)
      : fn_(fn), index_(index), diags_(diags), obj_(obj) {
    obj_.arch = arch;
  }

  bool run() {
    out_.name = fn_.name;
    if (fn_.hasAttr("pto.entry") || fn_.isFragment) out_.flags |= obj::kEntry;
    if (fn_.isPrivate) out_.flags |= obj::kPrivate;
    if (fn_.isDeclaration) out_.flags |= obj::kDeclaration;
    for (const NamedAttr& a : fn_.attrs)
      if (a.key == "pto.kernel_kind")
        out_.flags |= a.value.find("cube") != std::string::npos ? obj::kKernelCube : obj::kKernelVector;
    if (!fn_.isDeclaration) {
      lowerParams();
      lowerRegion(fn_.body);
      bool returns = !fn_.body.ops.empty() && fn_.body.ops.back()->kind == OpKind::Return;
      if (ok_ && !returns) emitReturn(fn_.loc);
      if (ok_) allocateRegisters();
      if (ok_) layout();
    } else {
      for (ValueId a : fn_.body.args) addParam(a);
    }
    return ok_;
  }

  obj::Function& result() { return out_; }
  std::vector<uint8_t>& text() { return text_; }
  std::vector<obj::Reloc>& relocs() { return relocs_; }
  std::vector<obj::LineEntry>& lines() { return lines_; }

private:
  // ------------------------------------------------------------ errors
  void unsupported(SrcLoc loc, const std::string& what) {
    diags_.error(loc, what + " is not supported by the code generator");
    ok_ = false;
  }
  /// A value the code generator has no home for. After an error this is the error's echo (the
  /// refused op defined nothing), so only the first refusal is reported, not its consequences.
  void missing(SrcLoc loc, const std::string& what) {
    if (ok_) unsupported(loc, what);
  }

  // ------------------------------------------------------------ emission helpers
  VReg newVReg() { return nextVReg_++; }

  MInst& emit(enc::Inst inst, std::vector<RegRef> regs = {}) {
    MInst m;
    m.inst = inst;
    m.regs = std::move(regs);
    if (pendingLoc_.valid()) {
      m.loc = pendingLoc_;
      pendingLoc_ = {};
    }
    code_.push_back(std::move(m));
    return code_.back();
  }

  enc::Inst make(FormId f, std::initializer_list<std::pair<std::string_view, int64_t>> fields) {
    auto r = enc::make(f, fields);
    if (!r) {
      diags_.error(currentLoc_, "internal encoding error: " + r.error());
      ok_ = false;
      return enc::bstop();
    }
    return *r;
  }

  /// Scalar instructions execute inside a scalar block; open one after a tile block.
  void needScalarBlock() {
    if (inScalarBlock_) return;
    emit(make(FormId::BSTART_STD_FALL, {}));
    inScalarBlock_ = true;
  }

  /// A scalar instruction with register fields (vregs, or physical registers via physical()).
  void scalar(FormId f, std::initializer_list<std::pair<std::string_view, int64_t>> fields, std::vector<RegRef> regs) {
    needScalarBlock();
    emit(make(f, fields), std::move(regs));
  }

  void copy(VReg dst, VReg src) {
    scalar(FormId::S_ADDI, {{"uimm12", 0}}, {{"SrcL", src, false}, {"RegDst", dst, true}});
  }

  int newLabel() { return nextLabel_++; }
  void placeLabel(int label) {
    MInst m;
    m.kind = MInst::Label;
    m.label = label;
    code_.push_back(std::move(m));
  }
  /// Starts a block whose end jumps to `label` (unconditionally or when the commit condition
  /// set by a SETC in the block is true).
  void startBranchBlock(int label, bool conditional) {
    MInst m;
    m.kind = conditional ? MInst::CondJump : MInst::Jump;
    m.label = label;
    m.loc = pendingLoc_;
    pendingLoc_ = {};
    code_.push_back(std::move(m));
    inScalarBlock_ = true;
  }

  /// A conditional exit: a COND block of its own that computes the commit condition and leaves
  /// for `label` when it holds. A COND block transfers at its end, so the guarded code must not
  /// share it: the block is closed right after the condition (docs/abi.md, "Control flow").
  template <class EmitCondition> void conditionalExit(int label, SrcLoc loc, EmitCondition emitCondition) {
    pendingLoc_ = loc; // the test belongs to the structured op's line
    startBranchBlock(label, true);
    emitCondition();
    inScalarBlock_ = false;
  }

  // ------------------------------------------------------------ values
  /// The register holding a scalar value. Constants are rematerialized at every use (they cost
  /// one or two instructions and never occupy a register across the program).
  VReg reg(ValueId v) {
    if (auto c = constants_.find(v); c != constants_.end()) {
      VReg r = newVReg();
      materialize(r, c->second);
      return r;
    }
    if (auto it = vregs_.find(v); it != vregs_.end()) return it->second;
    if (ok_) diags_.error(fn_.value(v).loc, "internal error: value '%" + fn_.value(v).name + "' has no register");
    ok_ = false;
    return newVReg();
  }

  VReg define(ValueId v) {
    VReg r = newVReg();
    vregs_[v] = r;
    return r;
  }

  void materialize(VReg r, uint64_t bits) {
    needScalarBlock();
    for (const enc::Inst& i : enc::materialize64(0, bits, kScratch[2])) {
      std::vector<RegRef> refs;
      const enc::FormInfo& fi = i.formInfo();
      if (fi.fieldIndex("RegDst") >= 0) refs.push_back({"RegDst", r, true});
      // The OR of a full 64-bit constant reads and writes the destination.
      if (i.form == FormId::S_OR) refs.push_back({"SrcL", r, false});
      emit(i, refs);
    }
  }

  std::optional<int64_t> constantInt(ValueId v) const {
    auto c = constants_.find(v);
    if (c == constants_.end() || !fn_.type(v).isIntLike()) return std::nullopt;
    return static_cast<int64_t>(c->second);
  }

  /// Raw bits of a constant: integers sign-extended, floats as their IEEE (or bf16) pattern,
  /// hex literals as written.
  std::optional<uint64_t> constantBits(const Op& op) {
    const std::string& text = op.attr("value")->value;
    const Type& t = fn_.type(op.results[0]);
    if (text == "true") return 1;
    if (text == "false") return 0;
    bool hex = text.find("0x") != std::string::npos || text.find("0X") != std::string::npos;
    if (t.isIntLike() || hex) {
      try {
        size_t pos = 0;
        if (hex) return std::stoull(text, &pos, 16);
        return static_cast<uint64_t>(std::stoll(text, &pos, 10));
      } catch (...) {
        return std::nullopt;
      }
    }
    double d = std::strtod(text.c_str(), nullptr);
    switch (t.elem) {
    case isa::DType::F32: return std::bit_cast<uint32_t>(std::strtof(text.c_str(), nullptr)); // rounded once
    case isa::DType::F64: return std::bit_cast<uint64_t>(d);
    case isa::DType::F16:
    case isa::DType::BF16: return isa::encodeFromDouble(t.elem, d, isa::RoundMode::CAST_RINT, isa::SatMode::OFF);
    default: return std::nullopt;
    }
  }



  // ------------------------------------------------------------ parameters (docs/abi.md)
  void addParam(ValueId a) {
    const Type& t = fn_.type(a);
    obj::Param p;
    p.name = fn_.value(a).name;
    p.dtype = t.elem;
    switch (t.kind) {
    case TypeKind::Ptr: p.kind = obj::ParamKind::Pointer; break;
    case TypeKind::TensorView:
      p.kind = obj::ParamKind::TensorView;
      p.shape = t.shape;
      break;
    case TypeKind::Index:
      p.kind = obj::ParamKind::Index;
      p.dtype = isa::DType::I64;
      break;
    default: p.kind = obj::ParamKind::Scalar; break;
    }
    out_.params.push_back(std::move(p));
  }

  void lowerParams() {
    const auto& args = fn_.body.args;
    for (size_t i = 0; i < args.size(); ++i) {
      ValueId a = args[i];
      const Type& t = fn_.type(a);
      addParam(a);
      if (t.kind == TypeKind::Tile || t.kind == TypeKind::PartView || t.kind == TypeKind::EventIdArray) {
        unsupported(fn_.value(a).loc, "a parameter of type " + toString(t));
        continue;
      }
      if (t.kind == TypeKind::TensorView) {
        for (int64_t d : t.shape)
          if (d == kDynamic) unsupported(fn_.value(a).loc, "a tensor_view parameter with a dynamic shape");
      }
      VReg r = define(a);
      if (i < kMaxRegParams) {
        MInst m;
        m.kind = MInst::ParamDef;
        m.paramReg = kA0 + static_cast<unsigned>(i);
        m.regs.push_back({"", r, true});
        code_.push_back(std::move(m));
      } else {
        // Parameters beyond a0..a7 are passed in the caller's frame: [sp + frame + 8*(i-8)],
        // loaded once here (the offset is patched when the frame size is known).
        needScalarBlock();
        emit(make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}}), {{"RegDst", r, true}}).stackParam =
            static_cast<int>(i - kMaxRegParams);
      }
      if (t.kind == TypeKind::TensorView) {
        ViewRegs vr;
        vr.base = r;
        vr.elem = t.elem;
        vr.constStrides.assign(t.shape.size(), 1);
        for (size_t d = t.shape.size(); d-- > 1;) vr.constStrides[d - 1] = vr.constStrides[d] * t.shape[d];
        views_[a] = vr;
      }
    }
  }

  // ------------------------------------------------------------ regions and ops
  void lowerRegion(const Region& r) {
    // Lowering goes on after a refusal so that every refusal is reported in one run; nothing is
    // emitted once ok_ is false.
    for (const auto& op : r.ops) {
      currentLoc_ = op->loc;
      pendingLoc_ = op->loc;
      lowerOp(*op);
    }
  }

  void lowerOp(const Op& op) {
    switch (op.kind) {
    case OpKind::Constant: {
      auto bits = constantBits(op);
      if (!bits) return unsupported(op.loc, "the constant '" + op.attr("value")->value + "'");
      constants_[op.results[0]] = *bits;
      pendingLoc_ = {};
      return;
    }
    case OpKind::Arith: return lowerArith(op);
    case OpKind::For: return lowerFor(op);
    case OpKind::If: return lowerIf(op);
    case OpKind::While: return lowerWhile(op);
    case OpKind::Condition:
    case OpKind::Yield: return; // handled by the enclosing structured op
    case OpKind::Return:
      if (!op.operands.empty()) {
        VReg v = reg(op.operands[0]);
        scalar(FormId::S_ADDI, {{"uimm12", 0}, {"RegDst", kA0}}, {{"SrcL", v, false}});
      }
      return emitReturn(op.loc);
    case OpKind::Section:
      out_.flags |= op.name.ends_with("cube") ? obj::kKernelCube : obj::kKernelVector;
      return lowerRegion(op.regions[0]);
    case OpKind::MakeTensorView: return lowerMakeView(op);
    case OpKind::PartitionView: return lowerPartition(op);
    case OpKind::GetTensorViewDim: return lowerGetDim(op);
    case OpKind::AllocTile: return lowerAlloc(op);
    case OpKind::Subset:
    case OpKind::Reshape:
    case OpKind::Bitcast: return lowerView(op);
    case OpKind::SetValidShape:
      valid_[op.operands[0]] = {Dim{0, op.operands[1]}, Dim{0, op.operands[2]}};
      pendingLoc_ = {};
      return;
    case OpKind::TAssign: return lowerAssign(op);
    case OpKind::LoadScalar:
    case OpKind::StoreScalar: return lowerScalarMemory(op);
    case OpKind::AddPtr: {
      VReg p = reg(op.operands[0]), o = reg(op.operands[1]);
      unsigned shift = static_cast<unsigned>(std::countr_zero(std::max(1u, isa::bitWidth(fn_.type(op.operands[0]).elem) / 8)));
      scalar(FormId::S_ADD, {{"shamt", shift}}, {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", define(op.results[0]), true}});
      return;
    }
    case OpKind::BlockInfo: return lowerBlockInfo(op);
    case OpKind::TileOp: return lowerTileOp(op);
    case OpKind::SetFlag:
    case OpKind::WaitFlag:
    case OpKind::Barrier: return lowerSync(op);
    case OpKind::DeclareEventIdArray:
    case OpKind::EventIdArrayGet:
    case OpKind::EventIdArraySet: return lowerEventArray(op);
    case OpKind::Call: return lowerCall(op);
    case OpKind::TGetVal: return unsupported(op.loc, "'pto.tgetval'");
    case OpKind::Print: return unsupported(op.loc, "'" + op.name + "'");
    }
  }

  // ------------------------------------------------------------ scalar arithmetic
  void lowerArith(const Op& op) {
    std::string_view name = op.name;
    name.remove_prefix(6); // "arith."
    const Type& rt = fn_.type(op.results[0]);
    // Registers hold raw bits, so a bitcast is a copy whatever the types.
    if (name == "bitcast") {
      copy(define(op.results[0]), reg(op.operands[0]));
      return;
    }
    if (name == "select") {
      VReg c = reg(op.operands[0]), a = reg(op.operands[1]), b = reg(op.operands[2]);
      scalar(FormId::S_CSEL, {}, {{"SrcP", c, false}, {"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", define(op.results[0]), true}});
      return;
    }
    if (rt.isFloatScalar() || (!op.operands.empty() && fn_.type(op.operands[0]).isFloatScalar()))
      return lowerFloat(op, name);
    static const std::map<std::string_view, FormId> kBinary = {
        {"addi", FormId::S_ADD},   {"subi", FormId::S_SUB},   {"muli", FormId::S_MUL},  {"divsi", FormId::S_DIV},
        {"divui", FormId::S_DIVU}, {"remsi", FormId::S_REM},  {"remui", FormId::S_REMU}, {"minsi", FormId::S_MIN},
        {"minui", FormId::S_MINU}, {"maxsi", FormId::S_MAX},  {"maxui", FormId::S_MAXU}, {"andi", FormId::S_AND},
        {"ori", FormId::S_OR},     {"xori", FormId::S_XOR},   {"shli", FormId::S_SLL},  {"shrsi", FormId::S_SRA},
        {"shrui", FormId::S_SRL}};
    if (auto it = kBinary.find(name); it != kBinary.end()) {
      VReg a = reg(op.operands[0]), b = reg(op.operands[1]);
      // Narrow integers are kept sign-extended: the unsigned ops read them zero-extended.
      if (name == "divui" || name == "remui" || name == "shrui") {
        a = zeroExtended(a, rt);
        if (name != "shrui") b = zeroExtended(b, rt);
      }
      VReg d = define(op.results[0]);
      scalar(it->second, {}, {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", d, true}});
      return normalize(d, rt);
    }
    if (name == "ceildivsi" || name == "floordivsi" || name == "ceildivui") return lowerRoundingDiv(op, name);
    if (name == "cmpi") return lowerCmp(op);
    if (name == "index_cast" || name == "index_castui" || name == "extsi" || name == "extui" || name == "trunci" ||
        name == "bitcast") {
      VReg s = reg(op.operands[0]);
      VReg d = define(op.results[0]);
      copy(d, s);
      const Type& st = fn_.type(op.operands[0]);
      if (name == "extui" || name == "index_castui") return zeroExtend(d, st);
      return normalize(d, rt);
    }
    unsupported(op.loc, "'" + op.name + "'");
  }

  // ------------------------------------------------------------ scalar floating point
  // The 0.58.3 FSU forms compute in FP32 (.fs) or FP64 (.fd). f16 and bf16 values live in the low
  // 16 bits of a register (zero-extended); they are widened to FP32 exactly, computed there and
  // rounded once back (for +, -, *, / and compares this equals the operation in the narrow type:
  // FP32 carries more than twice their precision plus two bits). docs/abi.md "Floating point".

  VReg constant(uint64_t bits) {
    VReg r = newVReg();
    materialize(r, bits);
    return r;
  }

  /// `r` (a value of type t) in the unit's compute type: FP64 for f64, else FP32.
  VReg widen(VReg r, isa::DType t) {
    if (t == isa::DType::F32 || t == isa::DType::F64) return r;
    VReg w = newVReg();
    if (t == isa::DType::BF16) { // bf16 is the top half of an f32
      scalar(FormId::S_SLLI, {{"shamt", 16}}, {{"SrcL", r, false}, {"RegDst", w, true}});
      return w;
    }
    // f16: magnitude bits moved to f32 positions and scaled by 2^112 (exact, subnormals
    // included); an all-ones exponent becomes inf/NaN by setting the f32 exponent; then the sign.
    VReg mag = newVReg(), scaled = newVReg(), expo = newVReg(), special = newVReg(), infnan = newVReg(), sign = newVReg();
    scalar(FormId::S_AND, {}, {{"SrcL", r, false}, {"SrcR", constant(0x7FFF), false}, {"RegDst", mag, true}});
    scalar(FormId::S_SLLI, {{"shamt", 13}}, {{"SrcL", mag, false}, {"RegDst", mag, true}});
    fpu(FormId::S_FMUL, isa::kFpSrcF32, {mag, constant(0x77800000)}, scaled); // 2^112
    scalar(FormId::S_AND, {}, {{"SrcL", r, false}, {"SrcR", constant(0x7C00), false}, {"RegDst", expo, true}});
    scalar(FormId::S_CMP_EQ, {}, {{"SrcL", expo, false}, {"SrcR", constant(0x7C00), false}, {"RegDst", special, true}});
    scalar(FormId::S_OR, {}, {{"SrcL", mag, false}, {"SrcR", constant(0x7F800000), false}, {"RegDst", infnan, true}});
    scalar(FormId::S_CSEL, {}, {{"SrcP", special, false}, {"SrcL", infnan, false}, {"SrcR", scaled, false}, {"RegDst", w, true}});
    scalar(FormId::S_SRLI, {{"shamt", 15}}, {{"SrcL", r, false}, {"RegDst", sign, true}});
    scalar(FormId::S_SLLI, {{"shamt", 31}}, {{"SrcL", sign, false}, {"RegDst", sign, true}});
    scalar(FormId::S_OR, {}, {{"SrcL", w, false}, {"SrcR", sign, false}, {"RegDst", w, true}});
    return w;
  }

  static unsigned computeType(isa::DType t) { return t == isa::DType::F64 ? isa::kFpSrcF64 : isa::kFpSrcF32; }

  /// A value of the compute type rounded (to nearest even) into `dst`'s format, into `d`.
  void narrowInto(VReg d, VReg r, isa::DType from, isa::DType dst) {
    const unsigned src = computeType(from);
    if ((src == isa::kFpSrcF32 && dst == isa::DType::F32) || (src == isa::kFpSrcF64 && dst == isa::DType::F64)) {
      copy(d, r);
      return;
    }
    scalar(FormId::S_FCVT, {{"SrcType", src}, {"DstType", *isa::fpDstCode(dst)}}, {{"SrcL", r, false}, {"RegDst", d, true}});
  }

  void fpu(FormId f, unsigned type, std::initializer_list<VReg> srcs, VReg d) {
    std::vector<RegRef> refs;
    const char* names[] = {"SrcL", "SrcR"};
    size_t i = 0;
    for (VReg s : srcs) refs.push_back({names[i++], s, false});
    refs.push_back({"RegDst", d, true});
    scalar(f, {{"SrcType", type}}, std::move(refs));
  }

  static bool scalarFloat(isa::DType t) {
    return t == isa::DType::F16 || t == isa::DType::BF16 || t == isa::DType::F32 || t == isa::DType::F64;
  }

  void lowerFloat(const Op& op, std::string_view name) {
    const Type& rt = fn_.type(op.results[0]);
    const Type& st = fn_.type(op.operands[0]);
    for (const Type* t : {&rt, &st})
      if (t->isFloatScalar() && !scalarFloat(t->elem))
        return unsupported(op.loc, "scalar " + std::string(isa::spelling(t->elem)) + " arithmetic (f16, bf16, f32 and f64 are)");
    static const std::map<std::string_view, FormId> kBinary = {
        {"addf", FormId::S_FADD}, {"subf", FormId::S_FSUB},    {"mulf", FormId::S_FMUL},    {"divf", FormId::S_FDIV},
        {"maxnumf", FormId::S_FMAX}, {"minnumf", FormId::S_FMIN}, {"maximumf", FormId::S_FMAX}, {"minimumf", FormId::S_FMIN}};
    if (auto it = kBinary.find(name); it != kBinary.end()) {
      const unsigned ct = computeType(st.elem);
      VReg a = widen(reg(op.operands[0]), st.elem), b = widen(reg(op.operands[1]), st.elem);
      VReg r = newVReg();
      fpu(it->second, ct, {a, b}, r);
      if (name == "maximumf" || name == "minimumf") { // NaN-propagating: any NaN operand gives NaN
        VReg oa = newVReg(), ob = newVReg(), nan = constant(ct == isa::kFpSrcF32 ? 0x7FC00000 : 0x7FF8000000000000ull);
        fpu(FormId::S_FEQ, ct, {a, a}, oa);
        fpu(FormId::S_FEQ, ct, {b, b}, ob);
        scalar(FormId::S_AND, {}, {{"SrcL", oa, false}, {"SrcR", ob, false}, {"RegDst", oa, true}});
        scalar(FormId::S_CSEL, {}, {{"SrcP", oa, false}, {"SrcL", r, false}, {"SrcR", nan, false}, {"RegDst", r, true}});
      }
      return narrowInto(define(op.results[0]), r, st.elem, rt.elem);
    }
    if (name == "negf") { // a sign flip on the raw bits, NaN included
      const unsigned bits = isa::bitWidth(rt.elem);
      VReg d = define(op.results[0]);
      scalar(FormId::S_XOR, {}, {{"SrcL", reg(op.operands[0]), false}, {"SrcR", constant(uint64_t{1} << (bits - 1)), false}, {"RegDst", d, true}});
      return;
    }
    if (name == "cmpf") return lowerCmpF(op);
    if (name == "extf" || name == "truncf") {
      VReg w = widen(reg(op.operands[0]), st.elem);
      VReg d = define(op.results[0]);
      if (rt.elem == isa::DType::F32) // f16/bf16 widened exactly; fmax x, x makes a NaN canonical,
        return fpu(FormId::S_FMAX, isa::kFpSrcF32, {w, w}, d); // as every conversion's NaN is
      if (computeType(st.elem) == isa::kFpSrcF32 && rt.elem == isa::DType::F64) {
        scalar(FormId::S_FCVT, {{"SrcType", isa::kFpSrcF32}, {"DstType", *isa::fpDstCode(isa::DType::F64)}}, {{"SrcL", w, false}, {"RegDst", d, true}});
        return;
      }
      return narrowInto(d, w, st.elem, rt.elem);
    }
    if (name == "sitofp" || name == "uitofp") {
      const bool wide = st.kind == TypeKind::Index || isa::bitWidth(st.elem) > 32;
      const bool sgn = name == "sitofp";
      VReg src = reg(op.operands[0]);
      if (!sgn && !wide && st.kind == TypeKind::Scalar && isa::bitWidth(st.elem) < 32) { // kept sign-extended
        src = newVReg();
        copy(src, reg(op.operands[0]));
        zeroExtend(src, st);
      }
      scalar(sgn ? FormId::S_SCVTF : FormId::S_UCVTF, {{"SrcType", wide ? 0u : 1u}, {"DstType", *isa::fpDstCode(rt.elem)}},
             {{"SrcL", src, false}, {"RegDst", define(op.results[0]), true}});
      return;
    }
    if (name == "fptosi" || name == "fptoui") {
      const bool sgn = name == "fptosi";
      const unsigned bits = rt.kind == TypeKind::Index ? 64 : isa::bitWidth(rt.elem);
      isa::DType target = bits == 64 ? (sgn ? isa::DType::I64 : isa::DType::U64)
                        : bits == 32 ? (sgn ? isa::DType::I32 : isa::DType::U32)
                        : bits == 16 ? (sgn ? isa::DType::I16 : isa::DType::U16)
                                     : (sgn ? isa::DType::I8 : isa::DType::U8);
      if (bits != 64 && bits != 32 && bits != 16 && bits != 8)
        return unsupported(op.loc, "'" + op.name + "' to " + toString(rt));
      VReg w = widen(reg(op.operands[0]), st.elem);
      VReg d = define(op.results[0]);
      scalar(FormId::S_FCVTZ, {{"SrcType", computeType(st.elem)}, {"DstType", *isa::intDstCode(target)}}, {{"SrcL", w, false}, {"RegDst", d, true}});
      return normalize(d, rt);
    }
    unsupported(op.loc, "'" + op.name + "' on floating-point values");
  }

  /// cmpf: the FSU compares are ordered (a NaN operand gives 0); the unordered predicates are
  /// their complements, ord/uno test each operand against itself.
  void lowerCmpF(const Op& op) {
    const std::string pred = op.attr("predicate")->value;
    const isa::DType t = fn_.type(op.operands[0]).elem;
    const unsigned ct = computeType(t);
    VReg d = define(op.results[0]);
    if (pred == "false" || pred == "true") {
      copy(d, constant(pred == "true"));
      return;
    }
    VReg a = widen(reg(op.operands[0]), t), b = widen(reg(op.operands[1]), t);
    if (pred == "ord" || pred == "uno") {
      VReg ob = newVReg();
      fpu(FormId::S_FEQ, ct, {a, a}, d);
      fpu(FormId::S_FEQ, ct, {b, b}, ob);
      scalar(FormId::S_AND, {}, {{"SrcL", d, false}, {"SrcR", ob, false}, {"RegDst", d, true}});
    } else {
      struct P {
        std::string_view name;
        FormId form;
        bool swap;
      };
      // Ordered predicate, and for the unordered ones the ordered predicate they complement.
      static const P kPreds[] = {{"oeq", FormId::S_FEQ, false}, {"one", FormId::S_FNE, false}, {"olt", FormId::S_FLT, false},
                                 {"ogt", FormId::S_FLT, true},  {"oge", FormId::S_FGE, false}, {"ole", FormId::S_FGE, true},
                                 {"une", FormId::S_FEQ, false}, {"ueq", FormId::S_FNE, false}, {"uge", FormId::S_FLT, false},
                                 {"ule", FormId::S_FLT, true},  {"ult", FormId::S_FGE, false}, {"ugt", FormId::S_FGE, true}};
      const P* p = nullptr;
      for (const P& k : kPreds)
        if (k.name == pred) p = &k;
      if (!p) return unsupported(op.loc, "'arith.cmpf " + pred + "'");
      fpu(p->form, ct, {p->swap ? b : a, p->swap ? a : b}, d);
    }
    if (pred[0] == 'u') scalar(FormId::S_XORI, {{"simm12", 1}}, {{"SrcL", d, false}, {"RegDst", d, true}});
  }

  /// Keeps narrow integers sign-extended in their 64-bit registers (i1 as 0/1).
  void normalize(VReg r, const Type& t) {
    if (t.kind != TypeKind::Scalar) return;
    unsigned bits = isa::bitWidth(t.elem);
    if (bits >= 64) return;
    if (t.elem == isa::DType::I1) {
      scalar(FormId::S_ANDI, {{"simm12", 1}}, {{"SrcL", r, false}, {"RegDst", r, true}});
      return;
    }
    bool isUnsigned = isa::info(t.elem).kind == isa::DTypeKind::UInt;
    scalar(FormId::S_SLLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
    scalar(isUnsigned ? FormId::S_SRLI : FormId::S_SRAI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
  }
  /// A zero-extended copy of a narrow integer (the register itself for 64-bit types).
  VReg zeroExtended(VReg r, const Type& t) {
    if (t.kind != TypeKind::Scalar || isa::bitWidth(t.elem) >= 64) return r;
    VReg z = newVReg();
    copy(z, r);
    zeroExtend(z, t);
    return z;
  }
  void zeroExtend(VReg r, const Type& from) {
    if (from.kind != TypeKind::Scalar || isa::bitWidth(from.elem) >= 64) return;
    unsigned bits = isa::bitWidth(from.elem);
    scalar(FormId::S_SLLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
    scalar(FormId::S_SRLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
  }

  /// ceil/floor division from DIV and REM: q + (r != 0 && (r < 0) == (b < 0)) for ceil,
  /// q - (r != 0 && (r < 0) != (b < 0)) for floor.
  void lowerRoundingDiv(const Op& op, std::string_view name) {
    const Type& rt = fn_.type(op.results[0]);
    bool isUnsigned = name == "ceildivui";
    VReg a = reg(op.operands[0]), b = reg(op.operands[1]);
    if (isUnsigned) {
      a = zeroExtended(a, rt);
      b = zeroExtended(b, rt);
    }
    VReg q = newVReg(), r = newVReg(), nz = newVReg(), rn = newVReg(), bn = newVReg(), diff = newVReg(), adj = newVReg();
    scalar(isUnsigned ? FormId::S_DIVU : FormId::S_DIV, {}, {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", q, true}});
    scalar(isUnsigned ? FormId::S_REMU : FormId::S_REM, {}, {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", r, true}});
    scalar(FormId::S_CMP_NE, {{"SrcR", kZero}}, {{"SrcL", r, false}, {"RegDst", nz, true}});
    VReg d = define(op.results[0]);
    // Division by zero gives all ones, as DIV does, whatever the rounding (docs/abi.md).
    auto byZero = [&] {
      VReg z = newVReg();
      scalar(FormId::S_CMP_EQ, {{"SrcR", kZero}}, {{"SrcL", b, false}, {"RegDst", z, true}});
      scalar(FormId::S_CSEL, {}, {{"SrcP", z, false}, {"SrcL", q, false}, {"SrcR", d, false}, {"RegDst", d, true}});
      normalize(d, rt);
    };
    if (isUnsigned) {
      scalar(FormId::S_ADD, {}, {{"SrcL", q, false}, {"SrcR", nz, false}, {"RegDst", d, true}});
      return byZero();
    }
    scalar(FormId::S_CMP_LT, {{"SrcR", kZero}}, {{"SrcL", r, false}, {"RegDst", rn, true}});
    scalar(FormId::S_CMP_LT, {{"SrcR", kZero}}, {{"SrcL", b, false}, {"RegDst", bn, true}});
    scalar(FormId::S_XOR, {}, {{"SrcL", rn, false}, {"SrcR", bn, false}, {"RegDst", diff, true}});
    if (name == "ceildivsi") {
      scalar(FormId::S_XORI, {{"simm12", 1}}, {{"SrcL", diff, false}, {"RegDst", diff, true}});
      scalar(FormId::S_AND, {}, {{"SrcL", nz, false}, {"SrcR", diff, false}, {"RegDst", adj, true}});
      scalar(FormId::S_ADD, {}, {{"SrcL", q, false}, {"SrcR", adj, false}, {"RegDst", d, true}});
    } else {
      scalar(FormId::S_AND, {}, {{"SrcL", nz, false}, {"SrcR", diff, false}, {"RegDst", adj, true}});
      scalar(FormId::S_SUB, {}, {{"SrcL", q, false}, {"SrcR", adj, false}, {"RegDst", d, true}});
    }
    byZero();
  }

  void lowerCmp(const Op& op) {
    std::string pred = op.attr("predicate")->value;
    struct P {
      std::string_view name;
      FormId form;
      bool swap;
    };
    static const P kPreds[] = {{"eq", FormId::S_CMP_EQ, false},   {"ne", FormId::S_CMP_NE, false},
                               {"slt", FormId::S_CMP_LT, false},  {"sge", FormId::S_CMP_GE, false},
                               {"sgt", FormId::S_CMP_LT, true},   {"sle", FormId::S_CMP_GE, true},
                               {"ult", FormId::S_CMP_LTU, false}, {"uge", FormId::S_CMP_GEU, false},
                               {"ugt", FormId::S_CMP_LTU, true},  {"ule", FormId::S_CMP_GEU, true}};
    for (const P& p : kPreds) {
      if (p.name != pred) continue;
      VReg a = reg(op.operands[p.swap ? 1 : 0]), b = reg(op.operands[p.swap ? 0 : 1]);
      scalar(p.form, {}, {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", define(op.results[0]), true}});
      return;
    }
    unsupported(op.loc, "'arith.cmpi " + pred + "'");
  }

  // ------------------------------------------------------------ control flow
  void lowerFor(const Op& op) {
    const Region& body = op.regions[0];
    VReg iv = define(body.args[0]);
    copy(iv, reg(op.operands[0]));
    std::vector<ValueId> carried; // the body's iter_args: each one's home holds the value
    for (size_t i = 3; i < op.operands.size(); ++i) {
      if (!bindHome(body.args[i - 2], op.operands[i], op.operandLocs[i])) return;
      carried.push_back(body.args[i - 2]);
    }
    int head = newLabel(), exit = newLabel();
    placeLabel(head);
    size_t loopStart = code_.size();
    // Head block: leave when iv >= ub (signed, as index arithmetic is).
    conditionalExit(exit, op.loc, [&] { scalar(FormId::S_SETC_GE, {}, {{"SrcL", iv, false}, {"SrcR", reg(op.operands[1]), false}}); });
    lowerRegion(body);
    // Latch block: step, carry the yielded values, jump back.
    startBranchBlock(head, false);
    const Op* yield = terminator(body, OpKind::Yield);
    if (yield) yieldTo(carried, yield->operands, yield->loc);
    scalar(FormId::S_ADD, {}, {{"SrcL", iv, false}, {"SrcR", reg(op.operands[2]), false}, {"RegDst", iv, true}});
    loops_.push_back({loopStart, code_.size() - 1});
    placeLabel(exit);
    inScalarBlock_ = false;
    for (size_t i = 0; i < op.results.size() && i < carried.size(); ++i) shareHome(op.results[i], carried[i]);
  }

  static const Op* terminator(const Region& r, OpKind kind) {
    if (r.ops.empty() || r.ops.back()->kind != kind) return nullptr;
    return r.ops.back().get();
  }

  void lowerIf(const Op& op) {
    int elseLabel = newLabel(), end = newLabel();
    VReg c = reg(op.operands[0]);
    conditionalExit(elseLabel, op.loc, [&] { scalar(FormId::S_SETC_EQ, {{"SrcR", kZero}}, {{"SrcL", c, false}}); });
    lowerRegion(op.regions[0]);
    // The results' homes are made on the then edge, from the values it yields.
    const Op* thenYield = terminator(op.regions[0], OpKind::Yield);
    if (!op.results.empty() && !thenYield) return unsupported(op.loc, "'scf.if' with results and no 'scf.yield'");
    for (size_t i = 0; i < op.results.size(); ++i)
      if (!bindHome(op.results[i], thenYield->operands[i], thenYield->operandLocs[i])) return;
    bool hasElse = !op.regions[1].ops.empty();
    if (hasElse) startBranchBlock(end, false);
    placeLabel(elseLabel);
    inScalarBlock_ = false;
    if (hasElse) {
      lowerRegion(op.regions[1]);
      if (const Op* y = terminator(op.regions[1], OpKind::Yield)) yieldTo(op.results, y->operands, y->loc);
      placeLabel(end);
      inScalarBlock_ = false;
    }
  }

  void lowerWhile(const Op& op) {
    const Region& before = op.regions[0];
    const Region& after = op.regions[1];
    for (size_t i = 0; i < before.args.size(); ++i)
      if (!bindHome(before.args[i], op.operands[i], op.operandLocs[i])) return;
    int head = newLabel(), exit = newLabel();
    placeLabel(head);
    size_t loopStart = code_.size();
    inScalarBlock_ = false;
    lowerRegion(before);
    const Op* cond = terminator(before, OpKind::Condition);
    if (!cond) return unsupported(op.loc, "'scf.while' without 'scf.condition'");
    // The values scf.condition passes become the results (on exit) and the after region's
    // arguments (otherwise); both homes are written before the decision, which reads neither.
    for (size_t i = 0; i + 1 < cond->operands.size(); ++i) {
      if (i < op.results.size() && !bindHome(op.results[i], cond->operands[i + 1], cond->operandLocs[i + 1])) return;
      if (i < after.args.size() && !bindHome(after.args[i], cond->operands[i + 1], cond->operandLocs[i + 1])) return;
    }
    VReg c = reg(cond->operands[0]);
    conditionalExit(exit, cond->loc, [&] { scalar(FormId::S_SETC_EQ, {{"SrcR", kZero}}, {{"SrcL", c, false}}); });
    lowerRegion(after);
    startBranchBlock(head, false);
    if (const Op* y = terminator(after, OpKind::Yield)) yieldTo(before.args, y->operands, y->loc);
    loops_.push_back({loopStart, code_.size() - 1});
    placeLabel(exit);
    inScalarBlock_ = false;
  }

  // ------------------------------------------------------------ values carried across regions
  // A value that crosses a region boundary (iter_args, scf.if and scf.while results) has one
  // home that every incoming edge writes: a scalar its register; a tensor view its base register
  // (strides must agree on every edge); a partition its address and stride registers (its static
  // shape must agree); a tile one descriptor, the first incoming tile's, into which a different
  // tile arriving on another edge is copied with TMOV (tiles are buffers: docs/abi.md).

  /// Gives `home` a fresh home initialised from `from` (the first incoming edge).
  bool bindHome(ValueId home, ValueId from, SrcLoc loc) {
    const Type& t = fn_.type(home);
    switch (t.kind) {
    case TypeKind::Tile: {
      auto d = tiles_.find(from);
      if (d == tiles_.end()) {
        missing(loc, "this tile operand");
        return false;
      }
      tiles_[home] = d->second;
      if (auto v = valid_.find(from); v != valid_.end()) valid_[home] = v->second;
      return true;
    }
    case TypeKind::TensorView: {
      auto v = views_.find(from);
      if (v == views_.end()) {
        missing(loc, "this tensor view");
        return false;
      }
      ViewRegs h = v->second;
      h.base = newVReg();
      copy(h.base, v->second.base);
      views_[home] = h;
      if (auto s = dynamicShapes_.find(from); s != dynamicShapes_.end()) dynamicShapes_[home] = s->second;
      return true;
    }
    case TypeKind::PartView: {
      auto p = parts_.find(from);
      if (p == parts_.end()) {
        missing(loc, "this partition view");
        return false;
      }
      PartRegs h = p->second;
      for (VReg* r : partRegs(h)) {
        VReg src = *r;
        *r = newVReg();
        copy(*r, src);
      }
      parts_[home] = h;
      return true;
    }
    case TypeKind::EventIdArray:
    case TypeKind::None:
      unsupported(loc, "carrying " + toString(t) + " across a region");
      return false;
    default: {
      VReg src = reg(from);
      copy(define(home), src);
      return true;
    }
    }
  }

  /// The result of a loop shares the home of its iter_arg.
  void shareHome(ValueId result, ValueId home) {
    if (auto it = vregs_.find(home); it != vregs_.end()) vregs_[result] = it->second;
    if (auto it = tiles_.find(home); it != tiles_.end()) tiles_[result] = it->second;
    if (auto it = valid_.find(home); it != valid_.end()) valid_[result] = it->second;
    if (auto it = views_.find(home); it != views_.end()) views_[result] = it->second;
    if (auto it = dynamicShapes_.find(home); it != dynamicShapes_.end()) dynamicShapes_[result] = it->second;
    if (auto it = parts_.find(home); it != parts_.end()) parts_[result] = it->second;
  }

  static std::vector<VReg*> partRegs(PartRegs& p) {
    std::vector<VReg*> regs{&p.addr, &p.rowStride};
    for (PartRegs::Outer& o : p.outer) regs.push_back(&o.strideBytes);
    return regs;
  }

  /// An edge into the homes: homes[i] = srcs[i] for all i at once (a value may feed another
  /// position, as in a swap).
  void yieldTo(const std::vector<ValueId>& homes, const std::vector<ValueId>& srcs, SrcLoc loc) {
    std::vector<VReg> dstRegs, srcRegs;
    std::vector<std::pair<uint32_t, ValueId>> tileCopies; // (home descriptor, source tile)
    for (size_t i = 0; i < homes.size() && i < srcs.size(); ++i) {
      const Type& t = fn_.type(homes[i]);
      switch (t.kind) {
      case TypeKind::Tile: {
        auto h = tiles_.find(homes[i]);
        auto s = tiles_.find(srcs[i]);
        if (h == tiles_.end() || s == tiles_.end()) return missing(loc, "this tile operand");
        if (h->second != s->second) tileCopies.push_back({h->second, srcs[i]});
        break;
      }
      case TypeKind::TensorView: {
        auto h = views_.find(homes[i]);
        auto s = views_.find(srcs[i]);
        if (h == views_.end() || s == views_.end()) return missing(loc, "this tensor view");
        if (!sameStrides(h->second, s->second))
          return unsupported(loc, "yielding tensor views with different strides");
        dstRegs.push_back(h->second.base);
        srcRegs.push_back(s->second.base);
        break;
      }
      case TypeKind::PartView: {
        auto h = parts_.find(homes[i]);
        auto s = parts_.find(srcs[i]);
        if (h == parts_.end() || s == parts_.end()) return missing(loc, "this partition view");
        if (!sameShape(h->second, s->second))
          return unsupported(loc, "yielding partition views of different layouts or slice shapes");
        for (VReg* r : partRegs(h->second)) dstRegs.push_back(*r);
        for (VReg* r : partRegs(s->second)) srcRegs.push_back(*r);
        break;
      }
      default:
        dstRegs.push_back(vregs_.count(homes[i]) ? vregs_[homes[i]] : reg(homes[i]));
        srcRegs.push_back(reg(srcs[i]));
        break;
      }
    }
    // Tiles: a home that another copy reads must not be overwritten first.
    for (auto& [home, src] : tileCopies)
      for (auto& [otherHome, otherSrc] : tileCopies)
        if (tiles_[otherSrc] == home && otherHome != home)
          return unsupported(loc, "tiles exchanged between the values a region yields");
    std::vector<VReg> tmp;
    for (VReg s : srcRegs) {
      VReg t = newVReg();
      copy(t, s);
      tmp.push_back(t);
    }
    for (size_t i = 0; i < tmp.size(); ++i) copy(dstRegs[i], tmp[i]);
    for (auto& [home, src] : tileCopies) copyTile(home, src, loc);
  }

  bool sameStrides(const ViewRegs& a, const ViewRegs& b) const {
    if (a.strides.size() != b.strides.size() || a.dn != b.dn || a.constStrides != b.constStrides) return false;
    for (size_t i = 0; i < a.strides.size(); ++i) {
      if (a.strides[i] == b.strides[i]) continue;
      auto x = constantInt(a.strides[i]), y = constantInt(b.strides[i]);
      if (!x || !y || *x != *y) return false;
    }
    return true;
  }
  static bool sameShape(const PartRegs& a, const PartRegs& b) {
    if (a.dn != b.dn || a.outer.size() != b.outer.size() || a.sliceRows != b.sliceRows || a.sliceCols != b.sliceCols)
      return false;
    for (size_t i = 0; i < a.outer.size(); ++i)
      if (a.outer[i].size != b.outer[i].size) return false;
    return true;
  }

  /// home <- src as a TMOV block (both have the yielded value's type, so the same shape).
  void copyTile(uint32_t home, ValueId src, SrcLoc loc) {
    auto code = enc::dataTypeCode(fn_.type(src).tile.dtype);
    auto eop = enc::tileOpFor(isa::OpId::TMOV);
    auto s = tiles_.find(src);
    if (!code || !eop || s == tiles_.end()) return unsupported(loc, "copying a yielded tile of this type");
    const TileType& t = fn_.type(src).tile;
    std::pair<Dim, Dim> valid = validOf(src);
    VReg rowsReg = dimReg(valid.first), colsReg = dimReg(valid.second);
    inScalarBlock_ = false;
    pendingLoc_ = loc;
    emit(enc::tileStart(eop->op, *code));
    dim(0, valid.second, colsReg);
    if (valid.first.value != kNoValue || valid.first.constant != 1) dim(1, valid.first, rowsReg);
    if (valid.second.value != kNoValue || valid.second.constant != t.cols) emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
    MInst& w = emit(enc::bIot(home, s->second, true));
    for (uint32_t idx : {home, s->second})
      if (out_.tiles[idx].placement == obj::kUnplaced && rootPlacement(idx) == obj::kUnplaced)
        w.relocs.push_back({obj::RelocType::Tile, idx});
    emit(enc::bstop());
  }

  /// The return block, preceded by the epilogue (frame release, ra restore). Whether a frame
  /// is needed is known only after register allocation: layout() drops what is not needed.
  void emitReturn(SrcLoc) {
    if (!inScalarBlock_) emit(make(FormId::BSTART_STD_FALL, {})).frame = MInst::BlockStart;
    // ra is reloaded from the frame before the frame is released.
    emit(make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}, {"RegDst", kRa}})).frame = MInst::RaRestore;
    emit(make(FormId::S_ADDI, {{"SrcL", kSp}, {"uimm12", 0}, {"RegDst", kSp}})).frame = MInst::SpAdjust;
    emit(make(FormId::BSTART_STD_RET, {}));
    inScalarBlock_ = true;
  }

  /// A call: arguments go through the call-argument area of the frame into a0..a7 (so that no
  /// argument overwrites another), values live across the call are kept in the frame (the
  /// callee may use every register), and the result comes back in a0 (docs/abi.md).
  void lowerCall(const Op& op) {
    if (op.operands.size() > kMaxRegParams) return unsupported(op.loc, "a call with more than 8 arguments");
    if (op.results.size() > 1) return unsupported(op.loc, "a call with more than one result");
    for (ValueId v : op.operands)
      if (!fn_.type(v).isScalarLike() && fn_.type(v).kind != TypeKind::Ptr)
        return unsupported(op.operandLocs[0], "passing " + toString(fn_.type(v)) + " to a call");
    hasCalls_ = true;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      VReg v = reg(op.operands[i]);
      scalar(FormId::S_SDI, {{"SrcR", kSp}, {"simm12", 0}}, {{"SrcL", v, false}});
      code_.back().outArg = static_cast<int>(i);
    }
    for (size_t i = 0; i < op.operands.size(); ++i) {
      scalar(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}, {"RegDst", kA0 + static_cast<int64_t>(i)}}, {});
      code_.back().outArg = static_cast<int>(i);
      code_.back().clobbersRegs = true;
    }
    MInst& call = emit(make(FormId::BSTART_CALL, {{"simm12", 0}, {"uimm5", 1}}));
    call.clobbersRegs = true;
    call.callee = op.name;
    inScalarBlock_ = false; // the callee returns to the next word, which starts a block
    if (!op.results.empty())
      scalar(FormId::S_ADDI, {{"SrcL", kA0}, {"uimm12", 0}}, {{"RegDst", define(op.results[0]), true}});
  }

  // ------------------------------------------------------------ views
  void lowerMakeView(const Op& op) {
    ViewRegs v;
    size_t rank = static_cast<size_t>(op.ints[0]);
    bool explicitLayout = false;
    for (const NamedAttr& a : op.attrs) {
      if (a.key != "layout") continue;
      explicitLayout = true;
      // Any spelling (#pto.layout<dn>, #pto<layout dn>, ...): its last word is the layout.
      std::string word;
      for (char ch : a.value)
        if (std::isalnum(static_cast<unsigned char>(ch))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        else if (!word.empty() && word != "pto" && word != "layout") break;
        else word.clear();
      if (word == "dn") v.dn = true;
      else if (word != "nd") return unsupported(op.loc, "a tensor view with layout " + a.value + " (ND and DN are)");
    }
    // Without the attribute, constant strides decide as PTOAS infers: column-major is DN.
    if (!explicitLayout && rank >= 2) {
      auto inner = constantInt(op.operands[1 + rank + rank - 1]), outer = constantInt(op.operands[1 + rank + rank - 2]);
      v.dn = inner && outer && *outer == 1 && *inner != 1;
    }
    if (v.dn && rank < 2) return unsupported(op.loc, "a DN tensor view of rank 1");
    v.base = reg(op.operands[0]);
    v.elem = fn_.type(op.results[0]).elem;
    for (size_t i = 0; i < rank; ++i) v.strides.push_back(op.operands[1 + rank + i]);
    views_[op.results[0]] = v;
    dynamicShapes_[op.results[0]] = std::vector<ValueId>(op.operands.begin() + 1, op.operands.begin() + 1 + rank);
    pendingLoc_ = {};
  }

  void lowerGetDim(const Op& op) {
    auto dim = constantInt(op.operands[1]);
    if (!dim) return unsupported(op.loc, "'pto.get_tensor_view_dim' with a non-constant dimension");
    const Type& t = fn_.type(op.operands[0]);
    if (*dim < 0 || static_cast<size_t>(*dim) >= t.shape.size()) {
      diags_.error(op.operandLocs[1], "dimension " + std::to_string(*dim) + " is out of range for " + toString(t));
      ok_ = false;
      return;
    }
    // A static extent is a constant; a dynamic one is the shape operand of make_tensor_view.
    if (t.shape[*dim] != kDynamic) {
      constants_[op.results[0]] = static_cast<uint64_t>(t.shape[*dim]);
      return;
    }
    auto shapes = dynamicShapes_.find(op.operands[0]);
    if (shapes == dynamicShapes_.end()) return unsupported(op.loc, "'pto.get_tensor_view_dim' of this view");
    copy(define(op.results[0]), reg(shapes->second[*dim]));
  }

  void lowerPartition(const Op& op) {
    auto vit = views_.find(op.operands[0]);
    if (vit == views_.end()) return missing(op.loc, "a partition of this view");
    const ViewRegs& v = vit->second;
    size_t rank = static_cast<size_t>(op.ints[0]);
    const Type& pt = fn_.type(op.results[0]);
    unsigned elemBits = isa::bitWidth(v.elem);
    PartRegs p;
    p.dn = v.dn;
    // Dimensions before the last two that span more than one element: a stack of 2-D slices.
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (pt.shape[i] == 1) continue;
      if (v.dn) return unsupported(op.loc, "a DN partition with more than two non-unit dimensions");
      if (pt.shape[i] == kDynamic || pt.shape[rank - 1] == kDynamic || pt.shape[rank - 2] == kDynamic)
        return unsupported(op.loc, "a partition of more than two dimensions with a dynamic size");
      VReg stride = newVReg();
      scaleToBytes(stride, strideReg(v, i), elemBits);
      p.outer.push_back({pt.shape[i], stride});
    }
    if (!p.outer.empty()) {
      p.sliceRows = rank >= 2 ? pt.shape[rank - 2] : 1;
      p.sliceCols = pt.shape[rank - 1];
    }
    VReg acc = kNoVReg;
    for (size_t i = 0; i < rank; ++i) {
      ValueId off = op.operands[1 + i];
      auto c = constantInt(off);
      if (c && *c == 0) continue;
      VReg term = newVReg();
      VReg o = reg(off);
      VReg s = strideReg(v, i);
      scalar(FormId::S_MUL, {}, {{"SrcL", o, false}, {"SrcR", s, false}, {"RegDst", term, true}});
      if (acc == kNoVReg) acc = term;
      else {
        VReg sum = newVReg();
        scalar(FormId::S_ADD, {}, {{"SrcL", acc, false}, {"SrcR", term, false}, {"RegDst", sum, true}});
        acc = sum;
      }
    }
    p.addr = newVReg();
    if (acc == kNoVReg) copy(p.addr, v.base);
    else addScaled(p.addr, v.base, acc, elemBits);
    p.rowStride = newVReg();
    // ND: the stride between rows; DN: between columns (the rows of a column are adjacent).
    if (rank >= 2) scaleToBytes(p.rowStride, strideReg(v, v.dn ? rank - 1 : rank - 2), elemBits);
    else materialize(p.rowStride, 0);
    parts_[op.results[0]] = p;
  }

  VReg strideReg(const ViewRegs& v, size_t i) {
    if (!v.constStrides.empty()) {
      VReg r = newVReg();
      materialize(r, static_cast<uint64_t>(v.constStrides[i]));
      return r;
    }
    return reg(v.strides[i]);
  }

  /// dst = base + elems * bits / 8.
  void addScaled(VReg dst, VReg base, VReg elems, unsigned bits) {
    if (bits >= 8) {
      unsigned shift = static_cast<unsigned>(std::countr_zero(bits / 8));
      scalar(FormId::S_ADD, {{"shamt", shift}}, {{"SrcL", base, false}, {"SrcR", elems, false}, {"RegDst", dst, true}});
      return;
    }
    VReg half = newVReg();
    scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", half, true}});
    scalar(FormId::S_ADD, {}, {{"SrcL", base, false}, {"SrcR", half, false}, {"RegDst", dst, true}});
  }
  void scaleToBytes(VReg dst, VReg elems, unsigned bits) {
    if (bits >= 8)
      scalar(FormId::S_SLLI, {{"shamt", std::countr_zero(bits / 8)}}, {{"SrcL", elems, false}, {"RegDst", dst, true}});
    else
      scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", dst, true}});
  }

  // ------------------------------------------------------------ tiles
  uint32_t addTile(ValueId v, obj::TileDesc d) {
    d.name = fn_.value(v).name;
    if (out_.tiles.size() >= 64) {
      diags_.error(fn_.value(v).loc, "function '@" + fn_.name + "' uses more than 64 tile descriptors (B.IOT indexes 64)");
      ok_ = false;
    }
    out_.tiles.push_back(std::move(d));
    uint32_t idx = static_cast<uint32_t>(out_.tiles.size() - 1);
    tiles_[v] = idx;
    return idx;
  }

  static obj::TileDesc descOf(const TileType& t) {
    obj::TileDesc d;
    d.loc = t.loc;
    d.dtype = t.dtype;
    d.blayout = t.blayout;
    d.slayout = t.slayout;
    d.pad = t.pad;
    d.compact = t.compact;
    d.fractal = static_cast<uint16_t>(t.fractal);
    d.rows = static_cast<uint32_t>(t.rows);
    d.cols = static_cast<uint32_t>(t.cols);
    d.validRows = static_cast<int32_t>(t.validRows);
    d.validCols = static_cast<int32_t>(t.validCols);
    return d;
  }

  void lowerAlloc(const Op& op) {
    const TileType& t = fn_.type(op.results[0]).tile;
    obj::TileDesc d = descOf(t);
    size_t k = 0;
    Dim rows{t.validRows, kNoValue}, cols{t.validCols, kNoValue};
    if (op.ints[0]) {
      auto a = constantInt(op.operands[k]);
      if (!a) return unsupported(op.operandLocs[k], "a tile address computed at run time");
      d.placement = *a;
      ++k;
    }
    if (op.ints[1]) rows = {0, op.operands[k++]};
    if (op.ints[2]) cols = {0, op.operands[k++]};
    addTile(op.results[0], d);
    valid_[op.results[0]] = {rows, cols};
    pendingLoc_ = {};
  }

  void lowerView(const Op& op) {
    auto parent = tiles_.find(op.operands[0]);
    if (parent == tiles_.end()) return missing(op.loc, "a view of this tile");
    const TileType& src = fn_.type(op.operands[0]).tile;
    const TileType& t = fn_.type(op.results[0]).tile;
    obj::TileDesc d = descOf(t);
    d.aliasOf = static_cast<int32_t>(parent->second);
    if (op.kind == OpKind::Subset) {
      auto r = constantInt(op.operands[1]), c = constantInt(op.operands[2]);
      if (!r || !c) return unsupported(op.loc, "'pto.subset' with run-time offsets");
      if (src.blayout != isa::BLayout::RowMajor || src.slayout != isa::SLayout::NoneBox)
        return unsupported(op.loc, "'pto.subset' of a boxed or column-major tile");
      d.aliasOffset = static_cast<uint32_t>((*r * src.cols + *c) * isa::bitWidth(src.dtype) / 8);
      // A subset keeps its parent's row pitch: its physical cols are the parent's.
      d.cols = static_cast<uint32_t>(src.cols);
    }
    addTile(op.results[0], d);
    valid_[op.results[0]] = {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
    pendingLoc_ = {};
  }

  void lowerAssign(const Op& op) {
    auto a = constantInt(op.operands[1]);
    if (!a) return unsupported(op.loc, "'pto.tassign' with a run-time address");
    auto it = tiles_.find(op.operands[0]);
    if (it == tiles_.end()) return unsupported(op.loc, "'pto.tassign' of this tile");
    // Rebinding: a new descriptor at the new address; later uses of the tile name it.
    obj::TileDesc d = out_.tiles[it->second];
    d.placement = *a;
    ValueId target = op.results.empty() ? op.operands[0] : op.results[0];
    auto validIt = valid_.find(op.operands[0]);
    auto valid = validIt != valid_.end() ? validIt->second : std::pair<Dim, Dim>{};
    if (d.placement == out_.tiles[it->second].placement && op.results.empty()) return;
    addTile(target, d);
    valid_[target] = valid;
    pendingLoc_ = {};
  }

  std::optional<uint32_t> tileIndex(ValueId v, SrcLoc loc) {
    auto it = tiles_.find(v);
    if (it != tiles_.end()) return it->second;
    missing(loc, "this tile operand");
    return std::nullopt;
  }

  // ------------------------------------------------------------ tile blocks
  /// The register of a dynamic bound, resolved before the tile block starts (a constant is
  /// rematerialized by scalar code, which must not land inside the block).
  VReg dimReg(const Dim& d) { return d.value == kNoValue ? kNoVReg : reg(d.value); }

  /// B.DIM for one loop bound: an immediate, or a GPR (dynamic valid shapes).
  void dim(unsigned lb, const Dim& d, VReg r) {
    if (d.value == kNoValue) {
      emit(enc::bDim(lb, kZero, static_cast<uint32_t>(d.constant)));
      return;
    }
    emit(enc::bDim(lb, kZero, 0), {{"RegSrc", r, false}});
  }

  std::pair<Dim, Dim> validOf(ValueId tile) {
    auto it = valid_.find(tile);
    if (it != valid_.end()) return it->second;
    const TileType& t = fn_.type(tile).tile;
    return {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
  }

  /// Op attributes the tile block has no field for: any value but the one the runtime and the
  /// NPU default to is refused here, at its source line, rather than dropped.
  bool attributesEncodable(const Op& op, const isa::OpInfo& info) {
    struct Unencoded {
      isa::OpId op;
      std::string_view key;
      std::string_view defaultValue; // "" = no value is encodable
    };
    static constexpr Unencoded kUnencoded[] = {
        {isa::OpId::TCI, "descending", "false"},       {isa::OpId::TTRI, "upperOrLower", "0"},
        {isa::OpId::THISTOGRAM, "isMSB", "true"},      {isa::OpId::TMRGSORT, "exhausted", "false"},
        {isa::OpId::MGATHER, "gatherOob", ""},         {isa::OpId::MSCATTER, "scatterOob", ""},
        {isa::OpId::MSCATTER, "scatterAtomicOp", ""},  {isa::OpId::TGATHER, "maskPattern", ""},
    };
    for (const Unencoded& u : kUnencoded) {
      if (u.op != info.id) continue;
      const NamedAttr* a = op.attr(u.key);
      if (!a || (!u.defaultValue.empty() && a->value == u.defaultValue)) continue;
      unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "' with " + std::string(u.key) + " = " + a->value +
                              " (the tile block has no field for it)");
      return false;
    }
    return true;
  }

  void lowerTileOp(const Op& op) {
    const isa::OpInfo& info = isa::info(op.tileOp);
    if (!attributesEncodable(op, info)) return;
    const enc::TileOpInfo* eop = enc::tileOpFor(op.tileOp);
    if (!eop) return unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "'");
    if (eop->family == enc::TileFamily::EXT) obj_.usesExtensions = true;
    // Operands by role.
    std::vector<ValueId> tilesOut, tilesIn, scalars;
    ValueId view = kNoValue, dst = kNoValue, src = kNoValue;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const isa::Role& role = info.roles[op.operandRoles[i]];
      ValueId v = op.operands[i];
      if (role.kind == isa::RoleKind::Tile) {
        (role.isOutput ? tilesOut : tilesIn).push_back(v);
        if (role.isOutput && dst == kNoValue) dst = v;
        if (!role.isOutput && src == kNoValue) src = v;
      } else if (role.kind == isa::RoleKind::View) {
        view = v;
      } else {
        scalars.push_back(v);
      }
    }
    // Registers for the scalar and GM operands are computed before the block starts: a tile
    // block holds only header words.
    std::vector<VReg> iorRegs;
    if (view != kNoValue) {
      auto p = parts_.find(view);
      if (p == parts_.end()) return unsupported(op.loc, "a GM operand that is not a partition_view");
      if (!p->second.outer.empty()) return lowerSlicedTransfer(op, info, *eop, p->second, dst != kNoValue ? dst : src);
      iorRegs = {p->second.addr, p->second.rowStride};
    }
    for (ValueId s : scalars) iorRegs.push_back(reg(s));
    if (iorRegs.size() > 3)
      return unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "' with more than three scalar operands");
    bool reduce = info.flags & (isa::kRowReduce | isa::kColReduce);
    ValueId shapeTile = dst;
    if (reduce || (view != kNoValue && dst == kNoValue) || info.id == isa::OpId::TCMP || info.id == isa::OpId::TCMPS)
      shapeTile = src != kNoValue ? src : dst;
    if (view != kNoValue && info.id == isa::OpId::TSTORE) shapeTile = src;
    std::pair<Dim, Dim> valid = shapeTile != kNoValue ? validOf(shapeTile) : std::pair<Dim, Dim>{};
    // Start word: the dtype of the data the op reads (source for conversions and stores).
    isa::DType startType = fn_.type(shapeTile != kNoValue ? shapeTile : src).tile.dtype;
    if (info.id == isa::OpId::TCVT || info.id == isa::OpId::TDEQUANT || info.rule == isa::TypeRule::Matmul)
      startType = fn_.type(src).tile.dtype;
    if (info.rule == isa::TypeRule::Matmul) {
      ValueId lhs = roleValue(op, "lhs");
      if (lhs != kNoValue) startType = fn_.type(lhs).tile.dtype;
    }
    auto code = enc::dataTypeCode(startType);
    if (!code) return unsupported(op.loc, "element type " + std::string(isa::spelling(startType)) + " in a tile block");
    VReg rowsReg = dimReg(valid.first), colsReg = dimReg(valid.second);
    inScalarBlock_ = false;
    MInst& start = emit(enc::tileStart(eop->op, *code));
    (void)start;
    // B.DATR: destination type, rounding, saturation, compare mode.
    if (auto datr = datrFor(op, info, dst)) emit(enc::bDatr(*datr));
    if (info.rule == isa::TypeRule::Matmul) {
      emit(make(FormId::B_FPATR, {}));
      const TileType& L = fn_.type(roleValue(op, "lhs")).tile;
      const TileType& R = fn_.type(roleValue(op, "rhs")).tile;
      auto v = [](int64_t valid, int64_t phys) { return valid == kDynamic ? phys : valid; };
      emit(enc::bDim(0, kZero, static_cast<uint32_t>(v(L.validRows, L.rows))));
      emit(enc::bDim(1, kZero, static_cast<uint32_t>(v(R.validCols, R.cols))));
      emit(enc::bDim(2, kZero, static_cast<uint32_t>(v(L.validCols, L.cols))));
    } else if (shapeTile != kNoValue) {
      const TileType& t = fn_.type(shapeTile).tile;
      dim(0, valid.second, colsReg);
      if (valid.first.value != kNoValue || valid.first.constant != 1) dim(1, valid.first, rowsReg);
      if (valid.second.value != kNoValue || valid.second.constant != t.cols)
        emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
    }
    if (!iorRegs.empty()) {
      std::vector<RegRef> refs;
      const char* fields[] = {"RegSrc0", "RegSrc1", "RegSrc2"};
      for (size_t i = 0; i < iorRegs.size(); ++i) refs.push_back({fields[i], iorRegs[i], false});
      emit(enc::bIor(0, 0, 0, 0), refs);
    }
    // B.IOT: tile operands, destination first, two per word, `last` on the final word.
    std::vector<ValueId> order = tilesOut;
    order.insert(order.end(), tilesIn.begin(), tilesIn.end());
    std::vector<uint32_t> idx;
    for (ValueId t : order) {
      auto i = tileIndex(t, op.loc);
      if (!i) return;
      idx.push_back(*i);
    }
    for (size_t i = 0; i < idx.size(); i += 2) {
      bool last = i + 2 >= idx.size();
      std::optional<unsigned> second;
      if (i + 1 < idx.size()) second = idx[i + 1];
      MInst& w = emit(enc::bIot(idx[i], second, last));
      for (size_t k = i; k < std::min(i + 2, idx.size()); ++k)
        if (out_.tiles[idx[k]].placement == obj::kUnplaced && rootPlacement(idx[k]) == obj::kUnplaced)
          w.relocs.push_back({obj::RelocType::Tile, idx[k]});
    }
    emit(enc::bstop());
  }

  bool isDn(ValueId view) const {
    auto p = parts_.find(view);
    return p != parts_.end() && p->second.dn;
  }

  /// A TLOAD/TSTORE whose partition has more than two non-unit dimensions: one block per 2-D
  /// slice (the last two dimensions), each into its rows of the tile through an alias
  /// descriptor. The tile must be row-major without boxes, so a slice's rows are contiguous.
  void lowerSlicedTransfer(const Op& op, const isa::OpInfo& info, const enc::TileOpInfo& eop, const PartRegs& p, ValueId tile) {
    const TileType& tt = fn_.type(tile).tile;
    if (tt.blayout != isa::BLayout::RowMajor || tt.slayout != isa::SLayout::NoneBox)
      return unsupported(op.loc, "a partition with more than two non-unit dimensions and a boxed or column-major tile");
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const isa::RoleKind k = info.roles[op.operandRoles[i]].kind;
      if (k != isa::RoleKind::Tile && k != isa::RoleKind::View)
        return unsupported(op.operandLocs[i], "a scalar operand with a partition of more than two non-unit dimensions");
    }
    int64_t slices = 1;
    for (const PartRegs::Outer& o : p.outer) slices *= o.size;
    if (slices * p.sliceRows > tt.rows || p.sliceCols > tt.cols) {
      diags_.error(op.loc, "the partition's " + std::to_string(slices) + " slices of " + std::to_string(p.sliceRows) + "x" +
                               std::to_string(p.sliceCols) + " do not fit the " + std::to_string(tt.rows) + "x" +
                               std::to_string(tt.cols) + " tile");
      ok_ = false;
      return;
    }
    auto parent = tileIndex(tile, op.loc);
    if (!parent) return;
    auto code = enc::dataTypeCode(tt.dtype);
    if (!code) return unsupported(op.loc, "element type " + std::string(isa::spelling(tt.dtype)) + " in a tile block");
    const auto datr = datrFor(op, info, roleValue(op, "dst"));
    const uint32_t sliceBytes = static_cast<uint32_t>(p.sliceRows * tt.cols * isa::bitWidth(tt.dtype) / 8);
    for (int64_t s = 0; s < slices; ++s) {
      // The slice's GM address: the partition's plus sum(index_k * stride_k), row-major indices.
      VReg addr = p.addr;
      int64_t rest = s;
      for (size_t k = p.outer.size(); k-- > 0;) {
        const int64_t idx = rest % p.outer[k].size;
        rest /= p.outer[k].size;
        if (idx == 0) continue;
        VReg n = newVReg(), term = newVReg(), sum = newVReg();
        materialize(n, static_cast<uint64_t>(idx));
        scalar(FormId::S_MUL, {}, {{"SrcL", n, false}, {"SrcR", p.outer[k].strideBytes, false}, {"RegDst", term, true}});
        scalar(FormId::S_ADD, {}, {{"SrcL", addr, false}, {"SrcR", term, false}, {"RegDst", sum, true}});
        addr = sum;
      }
      obj::TileDesc d = out_.tiles[*parent];
      d.name = out_.tiles[*parent].name + "." + std::to_string(s);
      d.aliasOf = static_cast<int32_t>(*parent);
      d.aliasOffset = static_cast<uint32_t>(s) * sliceBytes;
      d.placement = obj::kUnplaced;
      d.rows = static_cast<uint32_t>(p.sliceRows);
      d.validRows = static_cast<int32_t>(p.sliceRows);
      d.validCols = static_cast<int32_t>(p.sliceCols);
      if (out_.tiles.size() >= 64) {
        diags_.error(op.loc, "function '@" + fn_.name + "' uses more than 64 tile descriptors (B.IOT indexes 64)");
        ok_ = false;
        return;
      }
      out_.tiles.push_back(d);
      const uint32_t idx = static_cast<uint32_t>(out_.tiles.size() - 1);
      inScalarBlock_ = false;
      emit(enc::tileStart(eop.op, *code));
      if (datr) emit(enc::bDatr(*datr));
      emit(enc::bDim(0, kZero, static_cast<uint32_t>(p.sliceCols)));
      if (p.sliceRows != 1) emit(enc::bDim(1, kZero, static_cast<uint32_t>(p.sliceRows)));
      emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", addr, false}, {"RegSrc1", p.rowStride, false}});
      MInst& w = emit(enc::bIot(idx, std::nullopt, true));
      if (rootPlacement(idx) == obj::kUnplaced) w.relocs.push_back({obj::RelocType::Tile, idx});
      emit(enc::bstop());
    }
  }

  int64_t rootPlacement(uint32_t idx) const {
    while (out_.tiles[idx].aliasOf >= 0) idx = static_cast<uint32_t>(out_.tiles[idx].aliasOf);
    return out_.tiles[idx].placement;
  }

  std::optional<enc::Datr> datrFor(const Op& op, const isa::OpInfo& info, ValueId dst) {
    enc::Datr d;
    auto attrWord = [&](std::string_view key) -> std::string {
      const NamedAttr* a = op.attr(key);
      if (!a) return "";
      std::string v = a->value; // "#pto<round_mode CAST_RINT>"
      auto sp = v.find(' '), gt = v.rfind('>');
      return sp == std::string::npos ? v : v.substr(sp + 1, gt - sp - 1);
    };
    switch (info.id) {
    case isa::OpId::TCVT: {
      d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
      d.rmode = enc::rmodeCode(isa::parseRoundMode(attrWord("rmode")).value_or(isa::RoundMode::CAST_RINT));
      // The block always carries the effective saturation: the attribute, else the pair's
      // default (docs/numerics.md), so an explicit OFF on a pair that saturates by default stays OFF.
      if (std::string sat = attrWord("sat_mode"); !sat.empty()) d.sat = sat == "ON";
      else d.sat = isa::cvtSaturatesByDefault(fn_.type(roleValue(op, "src")).tile.dtype, fn_.type(dst).tile.dtype);
      return d;
    }
    case isa::OpId::TCMP:
    case isa::OpId::TCMPS:
      d.dataType = enc::dataTypeCode(fn_.type(roleValue(op, "src0") != kNoValue ? roleValue(op, "src0") : roleValue(op, "src"))
                                         .tile.dtype)
                       .value_or(0);
      d.cmode = enc::cmodeCode(isa::parseCmpMode(attrWord("cmpMode")).value_or(isa::CmpMode::EQ));
      return d;
    case isa::OpId::TDEQUANT:
    case isa::OpId::TQUANT:
      d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
      return d;
    case isa::OpId::TLOAD:
    case isa::OpId::TPREFETCH: {
      // GM in DN layout: B.DATR.Layout DN2ND (the runtime reads the GM side of the code).
      ValueId view = roleValue(op, "src");
      if (view == kNoValue || !isDn(view)) return std::nullopt;
      d.layout = *enc::layoutCode("DN2ND");
      d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
      return d;
    }
    case isa::OpId::TSTORE: {
      // A store that converts (acc f32 -> f16 GM through the fixpipe) names the GM type; a
      // store to a DN view says so in the layout (ND2DN).
      ValueId view = roleValue(op, "dst"), src = roleValue(op, "src");
      if (view == kNoValue || src == kNoValue) return std::nullopt;
      const bool converts = fn_.type(view).elem != fn_.type(src).tile.dtype;
      if (!converts && !isDn(view)) return std::nullopt;
      d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
      if (isDn(view)) d.layout = *enc::layoutCode("ND2DN");
      return d;
    }
    default: return std::nullopt;
    }
  }

  // ------------------------------------------------------------ sync and runtime ids
  uint32_t eventIndex(const Op& op) {
    std::string name = op.event.symbol.empty()
                           ? "anon." + std::string(isa::spelling(op.srcPipe)) + "." + std::string(isa::spelling(op.dstPipe))
                           : op.event.symbol;
    auto key = std::pair(index_, name);
    if (auto it = eventIds_.find(key); it != eventIds_.end()) return it->second;
    obj_.events.push_back({index_, name, op.srcPipe, op.dstPipe});
    uint32_t id = static_cast<uint32_t>(obj_.events.size() - 1);
    eventIds_[key] = id;
    return id;
  }

  void lowerSync(const Op& op) {
    obj_.usesExtensions = true;
    if (op.kind == OpKind::Barrier) {
      inScalarBlock_ = false;
      emit(enc::extControl(enc::ExtCtl::PIPE_BARRIER, op.srcPipe));
      emit(enc::bstop());
      return;
    }
    VReg dynamic = op.event.kind == EventRef::Kind::Dynamic ? reg(op.operands[0]) : kNoVReg;
    inScalarBlock_ = false;
    emit(enc::extControl(op.kind == OpKind::SetFlag ? enc::ExtCtl::SET_FLAG : enc::ExtCtl::WAIT_FLAG, op.srcPipe, op.dstPipe));
    switch (op.event.kind) {
    case EventRef::Kind::Const: emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.event.id))); break;
    case EventRef::Kind::Dynamic: emit(enc::bDim(0, kZero, 0), {{"RegSrc", dynamic, false}}); break;
    case EventRef::Kind::Symbolic: {
      MInst& w = emit(enc::bDim(0, kZero, 0));
      w.relocs.push_back({obj::RelocType::Event, eventIndex(op)});
      break;
    }
    }
    emit(enc::bstop());
  }

  void lowerBlockInfo(const Op& op) {
    obj_.usesExtensions = true;
    enc::ExtCtl c = op.name == "pto.get_block_idx"      ? enc::ExtCtl::GET_BLOCK_IDX
                    : op.name == "pto.get_block_num"    ? enc::ExtCtl::GET_BLOCK_NUM
                    : op.name == "pto.get_subblock_idx" ? enc::ExtCtl::GET_SUBBLOCK_IDX
                                                        : enc::ExtCtl::GET_SUBBLOCK_NUM;
    inScalarBlock_ = false;
    emit(enc::extControl(c));
    emit(enc::bIor(0, 0, 0, 0), {{"RegDst", define(op.results[0]), true}});
    emit(enc::bstop());
  }

  void lowerScalarMemory(const Op& op) {
    bool load = op.kind == OpKind::LoadScalar;
    ValueId ptr = op.operands[load ? 0 : 1], off = op.operands[load ? 1 : 2];
    isa::DType elem = fn_.type(ptr).elem;
    unsigned bytes = std::max(1u, isa::bitWidth(elem) / 8);
    unsigned shift = static_cast<unsigned>(std::countr_zero(bytes));
    VReg p = reg(ptr), o = reg(off);
    bool isSigned = isa::info(elem).kind == isa::DTypeKind::SInt;
    if (load) {
      FormId f = bytes == 8 ? FormId::S_LD : bytes == 4 ? (isSigned ? FormId::S_LW : FormId::S_LWU)
               : bytes == 2 ? (isSigned ? FormId::S_LH : FormId::S_LHU) : (isSigned ? FormId::S_LB : FormId::S_LBU);
      scalar(f, {{"shamt", shift}}, {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", define(op.results[0]), true}});
      return;
    }
    // Stores have no scaled index: form the address first.
    VReg addr = newVReg();
    scalar(FormId::S_ADD, {{"shamt", shift}}, {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", addr, true}});
    FormId f = bytes == 8 ? FormId::S_SD : bytes == 4 ? FormId::S_SW : bytes == 2 ? FormId::S_SH : FormId::S_SB;
    scalar(f, {{"SrcR", kZero}}, {{"SrcD", reg(op.operands[0]), false}, {"SrcL", addr, false}});
  }

  /// Event-id arrays live in the stack frame, 8 bytes per entry.
  void lowerEventArray(const Op& op) {
    if (op.kind == OpKind::DeclareEventIdArray) {
      int64_t n = fn_.type(op.results[0]).shape.at(0);
      arrays_[op.results[0]] = arrayBytes_;
      arrayBytes_ += static_cast<uint32_t>(n * 8);
      pendingLoc_ = {};
      return;
    }
    auto base = arrays_.find(op.operands[0]);
    if (base == arrays_.end()) return missing(op.loc, "this event-id array");
    VReg idx = reg(op.operands[1]);
    VReg addr = newVReg();
    // addr = sp + arrayBase + 8*idx; the array area follows the spill slots (patched later).
    scalar(FormId::S_ADD, {{"shamt", 3}, {"SrcL", kSp}}, {{"SrcR", idx, false}, {"RegDst", addr, true}});
    scalar(FormId::S_ADDI, {{"uimm12", 0}}, {{"SrcL", addr, false}, {"RegDst", addr, true}});
    code_.back().arrayBase = static_cast<int>(base->second);
    if (op.kind == OpKind::EventIdArraySet)
      scalar(FormId::S_SD, {{"SrcR", kZero}}, {{"SrcD", reg(op.operands[2]), false}, {"SrcL", addr, false}});
    else
      scalar(FormId::S_LD, {{"SrcR", kZero}}, {{"SrcL", addr, false}, {"RegDst", define(op.results[0]), true}});
  }

  // ------------------------------------------------------------ register allocation
  struct Interval {
    VReg v;
    size_t start, end;
    int reg = -1;
    int slot = -1;
    int fixedReg = -1;
  };

  void allocateRegisters() {
    // Live intervals over the linear code; values live into a loop stay live through it.
    std::map<VReg, Interval> iv;
    for (size_t i = 0; i < code_.size(); ++i)
      for (const RegRef& r : code_[i].regs) {
        auto [it, inserted] = iv.try_emplace(r.v, Interval{r.v, i, i});
        if (!inserted) {
          it->second.start = std::min(it->second.start, i);
          it->second.end = std::max(it->second.end, i);
        }
        if (code_[i].kind == MInst::ParamDef) it->second.fixedReg = static_cast<int>(code_[i].paramReg);
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
    for (auto& [v, in] : iv) order.push_back(&in);
    std::sort(order.begin(), order.end(), [](const Interval* a, const Interval* b) {
      return a->start != b->start ? a->start < b->start : a->fixedReg > b->fixedReg;
    });
    std::vector<unsigned> pool;
    for (unsigned r = kA0; r < kA0 + 8; ++r) pool.push_back(r);
    for (unsigned r = kRa + 1; r <= kX0; ++r) pool.push_back(r); // s0..s8, x0
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
      auto victim = std::max_element(active.begin(), active.end(), [](auto* a, auto* b) { return a->end < b->end; });
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

  /// Replaces virtual registers by physical ones; spilled values go through scratch registers
  /// with loads before and stores after the instruction.
  /// A word that belongs to a block's header (B.DIM, B.IOR, B.IOT, B.DATR, ...): scalar code for
  /// it cannot go next to it, only before the block starts or after it ends.
  static bool isHeaderWord(const MInst& m) {
    if (m.kind != MInst::Word) return false;
    const enc::FormInfo& fi = enc::info(m.inst.form);
    return fi.group != enc::FormGroup::Scalar && !fi.mnemonic().starts_with("BSTART") && m.inst.form != FormId::BSTOP;
  }
  static bool startsBlock(const MInst& m) {
    if (m.kind == MInst::Jump || m.kind == MInst::CondJump) return true;
    return m.kind == MInst::Word && enc::info(m.inst.form).mnemonic().starts_with("BSTART");
  }

  /// Replaces virtual registers by physical ones; spilled values go through the scratch
  /// registers x1..x3: loaded before the instruction and stored after it. For the header words
  /// of a block the loads go before the block (in a scalar block of their own) and the stores
  /// after its BSTOP, since scalar instructions inside a tile block would end it.
  void rewrite(std::map<VReg, Interval>& iv) {
    std::vector<MInst> out;
    out.reserve(code_.size());
    auto spillOffset = [](int slot) { return static_cast<int64_t>(slot) * 8; };
    auto load = [&](unsigned reg, int slot) {
      MInst ld;
      ld.inst = make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", spillOffset(slot)}, {"RegDst", reg}});
      return ld;
    };
    auto store = [&](unsigned reg, int slot) {
      MInst st;
      st.inst = make(FormId::S_SDI, {{"SrcL", reg}, {"SrcR", kSp}, {"simm12", spillOffset(slot)}});
      return st;
    };
    auto scalarBlockStart = [&] {
      MInst b;
      b.inst = make(FormId::BSTART_STD_FALL, {});
      return b;
    };
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
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(blockStart), std::make_move_iterator(blockLoads.begin()),
                   std::make_move_iterator(blockLoads.end()));
      }
      if (!blockStores.empty()) {
        out.push_back(scalarBlockStart());
        for (MInst& st : blockStores) out.push_back(std::move(st));
      }
      blockLoads.clear();
      blockStores.clear();
      blockScratch.clear();
    };
    for (MInst& m : code_) {
      if (m.kind == MInst::ParamDef) {
        const Interval& in = iv[m.regs[0].v];
        if (in.slot >= 0) out.push_back(store(m.paramReg, in.slot));
        continue;
      }
      if (startsBlock(m)) {
        blockStart = out.size();
        blockIsTile = m.kind == MInst::Word && m.inst.form != FormId::BSTART_STD_FALL;
      }
      bool header = isHeaderWord(m) && blockIsTile;
      std::vector<MInst> before, after;
      std::map<VReg, unsigned> scratchOf;
      unsigned nextScratch = 0;
      for (const RegRef& r : m.regs) {
        const Interval& in = iv[r.v];
        if (in.reg >= 0) {
          m.inst.set(r.field, static_cast<unsigned>(in.reg));
          continue;
        }
        std::map<VReg, unsigned>& scratch = header ? blockScratch : scratchOf;
        auto s = scratch.find(r.v);
        if (s == scratch.end()) {
          unsigned next = header ? static_cast<unsigned>(blockScratch.size()) : nextScratch++;
          if (next >= (header ? 3u : 2u)) {
            diags_.error(m.loc.valid() ? m.loc : currentLoc_, "internal error: too many spilled operands in one block");
            ok_ = false;
            return;
          }
          s = scratch.emplace(r.v, kScratch[next]).first;
          bool used = false, defined = false;
          for (const RegRef& o : m.regs)
            if (o.v == r.v) (o.def ? defined : used) = true;
          if (used) (header ? blockLoads : before).push_back(load(s->second, in.slot));
          if (defined) (header ? blockStores : after).push_back(store(s->second, in.slot));
        }
        m.inst.set(r.field, s->second);
      }
      if (!before.empty() && m.loc.valid()) {
        before.front().loc = m.loc;
        m.loc = {};
      }
      bool ends = m.kind == MInst::Word && m.inst.form == FormId::BSTOP;
      for (MInst& b : before) out.push_back(std::move(b));
      out.push_back(std::move(m));
      for (MInst& a : after) out.push_back(std::move(a));
      if (ends) {
        flushBlock();
        blockIsTile = false;
      }
    }
    code_ = std::move(out);
  }

  // ------------------------------------------------------------ layout and encoding
  void layout() {
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
      if (m.kind == MInst::Label) labelAt[m.label] = pc;
      else pc += wordBytes(m);
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
        diags_.error(m.loc.valid() ? m.loc : currentLoc_, "internal encoding error: " + e.error() + " (" + enc::format(m.inst) + ")");
        ok_ = false;
        return;
      }
      if (m.loc.valid()) lines_.push_back({addr[i], obj_source_, m.loc.line, m.loc.col});
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
      for (unsigned b = 0; b < e->bits / 8; ++b) text_.push_back(static_cast<uint8_t>(e->value >> (8 * b)));
    }
  }

  /// Stack parameters sit just above the frame; event-id arrays follow the spill slots; call
  /// arguments use the call-argument area.
  void patchFrameOffsets(uint32_t frame) {
    for (MInst& m : code_) {
      if (m.stackParam >= 0) m.inst.set("simm12", frame + 8 * static_cast<int64_t>(m.stackParam));
      if (m.arrayBase >= 0) m.inst.set("uimm12", static_cast<int64_t>(spillSlots_) * 8 + m.arrayBase);
      if (m.outArg >= 0) m.inst.set("simm12", callArea_ + 8 * static_cast<int64_t>(m.outArg));
    }
  }

  /// With a frame, the function starts by reserving it (and saving ra when it calls) and every
  /// return releases it; without one, the placeholders emitted at returns are dropped.
  void placeFrameCode(uint32_t frame) {
    uint32_t raSlot = callArea_ + 8 * kMaxRegParams;
    std::vector<MInst> out;
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
        if (m.frame == MInst::SpAdjust) m.inst.set("uimm12", frame);
        break;
      case MInst::RaRestore:
        if (!hasCalls_) continue;
        m.inst.set("simm12", raSlot);
        break;
      default: break;
      }
      out.push_back(std::move(m));
    }
    code_ = std::move(out);
  }

  static unsigned wordBytes(const MInst& m) {
    if (m.kind == MInst::Jump || m.kind == MInst::CondJump) return 4;
    return enc::info(m.inst.form).bits / 8;
  }

  const Function& fn_;
  uint32_t index_;
  DiagEngine& diags_;
  obj::ObjectFile& obj_;
  obj::Function out_;
  std::vector<uint8_t> text_;
  std::vector<obj::Reloc> relocs_;
  std::vector<obj::LineEntry> lines_;
  std::string obj_source_;
  bool ok_ = true;
  std::vector<MInst> code_;
  VReg nextVReg_ = 0;
  int nextLabel_ = 0;
  bool inScalarBlock_ = false;
  SrcLoc currentLoc_, pendingLoc_;
  std::map<ValueId, VReg> vregs_;
  std::map<ValueId, uint64_t> constants_;
  std::map<ValueId, ViewRegs> views_;
  std::map<ValueId, std::vector<ValueId>> dynamicShapes_; // make_tensor_view shape operands
  std::map<ValueId, PartRegs> parts_;
  std::map<ValueId, uint32_t> tiles_;
  std::map<ValueId, std::pair<Dim, Dim>> valid_;
  std::map<ValueId, uint32_t> arrays_;
  uint32_t arrayBytes_ = 0;
  std::vector<std::pair<size_t, size_t>> loops_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> eventIds_;
  int spillSlots_ = 0;
  bool hasCalls_ = false;
  uint32_t callArea_ = 0;

public:
  void setSourceName(std::string name) { obj_source_ = std::move(name); }
};

} // namespace

std::optional<obj::ObjectFile> lowerModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags) {
  obj::ObjectFile obj;
  obj.arch = arch;
  bool ok = true;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    FunctionLowering fl(*m.functions[i], static_cast<uint32_t>(i), arch, diags, obj);
    fl.setSourceName(m.fileName);
    if (!fl.run()) {
      ok = false;
      continue;
    }
    obj::Function f = std::move(fl.result());
    // Functions are laid out one after the other; offsets in relocs and lines are shifted.
    uint64_t base = obj.text.size();
    f.textOffset = base;
    f.textSize = fl.text().size();
    obj.text.insert(obj.text.end(), fl.text().begin(), fl.text().end());
    for (obj::Reloc r : fl.relocs()) {
      r.offset += base;
      obj.relocs.push_back(r);
    }
    for (obj::LineEntry l : fl.lines()) {
      l.textOffset += base;
      obj.lines.push_back(l);
    }
    obj.functions.push_back(std::move(f));
  }
  if (!ok) return std::nullopt;
  return obj;
}

} // namespace pto::as
