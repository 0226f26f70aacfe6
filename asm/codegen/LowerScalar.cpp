// Instruction selection for scalar code: integer arithmetic, compares and casts, and floating
// point with the 0.58.3 FSU forms (docs/abi.md, "Floating point").
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

void FunctionLowering::lowerArith(const Op& op) {
  const ArithOp arith = op.arith;
  const Type& rt = fn_.type(op.results[0]);
  // Registers hold raw bits, so a bitcast is a copy whatever the types, then the result kept as
  // its type is (a narrow integer sign-extended, a narrow float zero-extended).
  if (arith == ArithOp::Bitcast) {
    VReg d = define(op.results[0]);
    copy(d, reg(op.operands[0]));
    if (rt.isFloatScalar())
      zeroExtend(d, rt);
    else
      normalize(d, rt);
    return;
  }
  // i1 is kept as 0/1: sign-extending it makes true -1.
  if (arith == ArithOp::ExtSI && fn_.type(op.operands[0]).kind == TypeKind::Scalar &&
      fn_.type(op.operands[0]).elem == isa::DType::I1) {
    scalar(FormId::S_SUB, {{"SrcL", kZero}},
           {{"SrcR", reg(op.operands[0]), false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  if (arith == ArithOp::Select) {
    VReg c = reg(op.operands[0]), a = reg(op.operands[1]), b = reg(op.operands[2]);
    scalar(FormId::S_CSEL, {},
           {{"SrcP", c, false},
            {"SrcL", a, false},
            {"SrcR", b, false},
            {"RegDst", define(op.results[0]), true}});
    return;
  }
  if (rt.isFloatScalar() || (!op.operands.empty() && fn_.type(op.operands[0]).isFloatScalar()))
    return lowerFloat(op, arith);
  if (foldConstant(op, arith)) return;
  static const std::map<ArithOp, FormId> kBinary = {
      {ArithOp::AddI, FormId::S_ADD},   {ArithOp::SubI, FormId::S_SUB},
      {ArithOp::MulI, FormId::S_MUL},   {ArithOp::DivSI, FormId::S_DIV},
      {ArithOp::DivUI, FormId::S_DIVU}, {ArithOp::RemSI, FormId::S_REM},
      {ArithOp::RemUI, FormId::S_REMU}, {ArithOp::MinSI, FormId::S_MIN},
      {ArithOp::MinUI, FormId::S_MINU}, {ArithOp::MaxSI, FormId::S_MAX},
      {ArithOp::MaxUI, FormId::S_MAXU}, {ArithOp::AndI, FormId::S_AND},
      {ArithOp::OrI, FormId::S_OR},     {ArithOp::XOrI, FormId::S_XOR},
      {ArithOp::ShLI, FormId::S_SLL},   {ArithOp::ShRSI, FormId::S_SRA},
      {ArithOp::ShRUI, FormId::S_SRL}};
  if (auto it = kBinary.find(arith); it != kBinary.end()) {
    VReg a = reg(op.operands[0]), b = reg(op.operands[1]);
    // Narrow integers are kept sign-extended: the unsigned ops read them zero-extended.
    if (arith == ArithOp::DivUI || arith == ArithOp::RemUI || arith == ArithOp::ShRUI) {
      a = zeroExtended(a, rt);
      if (arith != ArithOp::ShRUI) b = zeroExtended(b, rt);
    }
    VReg d = define(op.results[0]);
    scalar(it->second, {}, {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", d, true}});
    return normalize(d, rt);
  }
  if (arith == ArithOp::CeilDivSI || arith == ArithOp::FloorDivSI || arith == ArithOp::CeilDivUI)
    return lowerRoundingDiv(op, arith);
  if (arith == ArithOp::CmpI) return lowerCmp(op);
  if (arith == ArithOp::IndexCast || arith == ArithOp::IndexCastUI || arith == ArithOp::ExtSI ||
      arith == ArithOp::ExtUI || arith == ArithOp::TruncI || arith == ArithOp::Bitcast) {
    VReg s = reg(op.operands[0]);
    VReg d = define(op.results[0]);
    copy(d, s);
    const Type& st = fn_.type(op.operands[0]);
    // Widening: unsigned casts zero-extend the source (kept sign-extended); narrowing (index to
    // i32 included) truncates, and the result is kept as its type is.
    const auto width = [](const Type& t) {
      return t.kind == TypeKind::Index ? 64u : isa::bitWidth(t.elem);
    };
    if ((arith == ArithOp::ExtUI || arith == ArithOp::IndexCastUI) && width(st) < width(rt))
      return zeroExtend(d, st);
    return normalize(d, rt);
  }
  unsupported(op.loc, "'" + op.name + "'");
}

// The 0.58.3 FSU forms compute in FP32 (.fs) or FP64 (.fd). f16 and bf16 values live in the low
// 16 bits of a register (zero-extended); they are widened to FP32 exactly, computed there and
// rounded once back (for +, -, *, / and compares this equals the operation in the narrow type:
// FP32 carries more than twice their precision plus two bits). docs/abi.md "Floating point".

VReg FunctionLowering::constant(uint64_t bits) {
  VReg r = newVReg();
  materialize(r, bits);
  return r;
}

/// `r` (a value of type t) in the unit's compute type: FP64 for f64, else FP32.
VReg FunctionLowering::widen(VReg r, isa::DType t) {
  if (t == isa::DType::F32 || t == isa::DType::F64) return r;
  VReg w = newVReg();
  if (t == isa::DType::BF16) { // bf16 is the top half of an f32
    scalar(FormId::S_SLLI, {{"shamt", 16}}, {{"SrcL", r, false}, {"RegDst", w, true}});
    return w;
  }
  // f16: magnitude bits moved to f32 positions and scaled by 2^112 (exact, subnormals
  // included); an all-ones exponent becomes inf/NaN by setting the f32 exponent; then the sign.
  VReg mag = newVReg(), scaled = newVReg(), expo = newVReg(), special = newVReg(),
       infnan = newVReg(), sign = newVReg();
  scalar(FormId::S_AND, {},
         {{"SrcL", r, false}, {"SrcR", constant(0x7FFF), false}, {"RegDst", mag, true}});
  scalar(FormId::S_SLLI, {{"shamt", 13}}, {{"SrcL", mag, false}, {"RegDst", mag, true}});
  fpu(FormId::S_FMUL, isa::kFpSrcF32, {mag, constant(0x77800000)}, scaled); // 2^112
  scalar(FormId::S_AND, {},
         {{"SrcL", r, false}, {"SrcR", constant(0x7C00), false}, {"RegDst", expo, true}});
  scalar(FormId::S_CMP_EQ, {},
         {{"SrcL", expo, false}, {"SrcR", constant(0x7C00), false}, {"RegDst", special, true}});
  scalar(FormId::S_OR, {},
         {{"SrcL", mag, false}, {"SrcR", constant(0x7F800000), false}, {"RegDst", infnan, true}});
  scalar(FormId::S_CSEL, {},
         {{"SrcP", special, false},
          {"SrcL", infnan, false},
          {"SrcR", scaled, false},
          {"RegDst", w, true}});
  scalar(FormId::S_SRLI, {{"shamt", 15}}, {{"SrcL", r, false}, {"RegDst", sign, true}});
  scalar(FormId::S_SLLI, {{"shamt", 31}}, {{"SrcL", sign, false}, {"RegDst", sign, true}});
  scalar(FormId::S_OR, {}, {{"SrcL", w, false}, {"SrcR", sign, false}, {"RegDst", w, true}});
  return w;
}

/// A value of the compute type rounded (to nearest even) into `dst`'s format, into `d`.
void FunctionLowering::narrowInto(VReg d, VReg r, isa::DType from, isa::DType dst) {
  const unsigned src = computeType(from);
  if ((src == isa::kFpSrcF32 && dst == isa::DType::F32) ||
      (src == isa::kFpSrcF64 && dst == isa::DType::F64)) {
    copy(d, r);
    return;
  }
  scalar(FormId::S_FCVT, {{"SrcType", src}, {"DstType", *isa::fpDstCode(dst)}},
         {{"SrcL", r, false}, {"RegDst", d, true}});
}

void FunctionLowering::fpu(FormId f, unsigned type, std::initializer_list<VReg> srcs, VReg d) {
  std::vector<RegRef> refs;
  const enc::FieldName names[] = {"SrcL", "SrcR"};
  size_t i = 0;
  for (VReg s : srcs)
    refs.push_back({names[i++], s, false});
  refs.push_back({"RegDst", d, true});
  scalar(f, {{"SrcType", type}}, std::move(refs));
}

bool FunctionLowering::scalarFloat(isa::DType t) {
  return t == isa::DType::F16 || t == isa::DType::BF16 || t == isa::DType::F32 ||
         t == isa::DType::F64;
}

void FunctionLowering::lowerFloat(const Op& op, ArithOp arith) {
  const Type& rt = fn_.type(op.results[0]);
  const Type& st = fn_.type(op.operands[0]);
  for (const Type* t : {&rt, &st})
    if (t->isFloatScalar() && !scalarFloat(t->elem))
      return unsupported(op.loc, "scalar " + std::string(isa::spelling(t->elem)) +
                                     " arithmetic (f16, bf16, f32 and f64 are)");
  static const std::map<ArithOp, FormId> kBinary = {
      {ArithOp::AddF, FormId::S_FADD},     {ArithOp::SubF, FormId::S_FSUB},
      {ArithOp::MulF, FormId::S_FMUL},     {ArithOp::DivF, FormId::S_FDIV},
      {ArithOp::MaxNumF, FormId::S_FMAX},  {ArithOp::MinNumF, FormId::S_FMIN},
      {ArithOp::MaximumF, FormId::S_FMAX}, {ArithOp::MinimumF, FormId::S_FMIN}};
  if (auto it = kBinary.find(arith); it != kBinary.end()) {
    const unsigned ct = computeType(st.elem);
    VReg a = widen(reg(op.operands[0]), st.elem), b = widen(reg(op.operands[1]), st.elem);
    VReg r = newVReg();
    fpu(it->second, ct, {a, b}, r);
    // maximumf / minimumf propagate NaN: any NaN operand gives NaN.
    if (arith == ArithOp::MaximumF || arith == ArithOp::MinimumF) {
      VReg oa = newVReg(), ob = newVReg(),
           nan = constant(ct == isa::kFpSrcF32 ? 0x7FC00000 : 0x7FF8000000000000ull);
      fpu(FormId::S_FEQ, ct, {a, a}, oa);
      fpu(FormId::S_FEQ, ct, {b, b}, ob);
      scalar(FormId::S_AND, {}, {{"SrcL", oa, false}, {"SrcR", ob, false}, {"RegDst", oa, true}});
      scalar(FormId::S_CSEL, {},
             {{"SrcP", oa, false}, {"SrcL", r, false}, {"SrcR", nan, false}, {"RegDst", r, true}});
    }
    return narrowInto(define(op.results[0]), r, st.elem, rt.elem);
  }
  if (arith == ArithOp::NegF) { // a sign flip on the raw bits, NaN included
    const unsigned bits = isa::bitWidth(rt.elem);
    VReg d = define(op.results[0]);
    scalar(FormId::S_XOR, {},
           {{"SrcL", reg(op.operands[0]), false},
            {"SrcR", constant(uint64_t{1} << (bits - 1)), false},
            {"RegDst", d, true}});
    return;
  }
  if (arith == ArithOp::CmpF) return lowerCmpF(op);
  if (arith == ArithOp::ExtF || arith == ArithOp::TruncF) {
    VReg w = widen(reg(op.operands[0]), st.elem);
    VReg d = define(op.results[0]);
    if (rt.elem == isa::DType::F32) // f16/bf16 widened exactly; fmax x, x makes a NaN canonical,
      return fpu(FormId::S_FMAX, isa::kFpSrcF32, {w, w}, d); // as every conversion's NaN is
    if (computeType(st.elem) == isa::kFpSrcF32 && rt.elem == isa::DType::F64) {
      scalar(FormId::S_FCVT,
             {{"SrcType", isa::kFpSrcF32}, {"DstType", *isa::fpDstCode(isa::DType::F64)}},
             {{"SrcL", w, false}, {"RegDst", d, true}});
      return;
    }
    return narrowInto(d, w, st.elem, rt.elem);
  }
  if (arith == ArithOp::SIToFP || arith == ArithOp::UIToFP) {
    const bool wide = st.kind == TypeKind::Index || isa::bitWidth(st.elem) > 32;
    const bool sgn = arith == ArithOp::SIToFP;
    VReg src = reg(op.operands[0]);
    if (sgn && st.kind == TypeKind::Scalar && st.elem == isa::DType::I1) { // signed i1 true is -1
      VReg neg = newVReg();
      scalar(FormId::S_SUB, {{"SrcL", kZero}}, {{"SrcR", src, false}, {"RegDst", neg, true}});
      src = neg;
    }
    if (!sgn && !wide && st.kind == TypeKind::Scalar &&
        isa::bitWidth(st.elem) < 32) { // kept sign-extended
      src = newVReg();
      copy(src, reg(op.operands[0]));
      zeroExtend(src, st);
    }
    scalar(sgn ? FormId::S_SCVTF : FormId::S_UCVTF,
           {{"SrcType", wide ? 0u : 1u}, {"DstType", *isa::fpDstCode(rt.elem)}},
           {{"SrcL", src, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  if (arith == ArithOp::FPToSI || arith == ArithOp::FPToUI) {
    const bool sgn = arith == ArithOp::FPToSI;
    const unsigned bits = rt.kind == TypeKind::Index ? 64 : isa::bitWidth(rt.elem);
    isa::DType target = bits == 64   ? (sgn ? isa::DType::I64 : isa::DType::U64)
                        : bits == 32 ? (sgn ? isa::DType::I32 : isa::DType::U32)
                        : bits == 16 ? (sgn ? isa::DType::I16 : isa::DType::U16)
                                     : (sgn ? isa::DType::I8 : isa::DType::U8);
    if (bits != 64 && bits != 32 && bits != 16 && bits != 8)
      return unsupported(op.loc, "'" + op.name + "' to " + toString(rt));
    VReg w = widen(reg(op.operands[0]), st.elem);
    VReg d = define(op.results[0]);
    scalar(FormId::S_FCVTZ,
           {{"SrcType", computeType(st.elem)}, {"DstType", *isa::intDstCode(target)}},
           {{"SrcL", w, false}, {"RegDst", d, true}});
    return normalize(d, rt);
  }
  unsupported(op.loc, "'" + op.name + "' on floating-point values");
}

/// cmpf: the FSU compares are ordered (a NaN operand gives 0); the unordered predicates are
/// their complements, ord/uno test each operand against itself.
void FunctionLowering::lowerCmpF(const Op& op) {
  const CmpPredicate pred = op.predicate;
  const isa::DType t = fn_.type(op.operands[0]).elem;
  const unsigned ct = computeType(t);
  VReg d = define(op.results[0]);
  if (pred == CmpPredicate::FFalse || pred == CmpPredicate::FTrue) {
    copy(d, constant(pred == CmpPredicate::FTrue));
    return;
  }
  VReg a = widen(reg(op.operands[0]), t), b = widen(reg(op.operands[1]), t);
  if (pred == CmpPredicate::FOrd || pred == CmpPredicate::FUno) {
    VReg ob = newVReg();
    fpu(FormId::S_FEQ, ct, {a, a}, d);
    fpu(FormId::S_FEQ, ct, {b, b}, ob);
    scalar(FormId::S_AND, {}, {{"SrcL", d, false}, {"SrcR", ob, false}, {"RegDst", d, true}});
  } else {
    struct P {
      CmpPredicate pred;
      FormId form;
      bool swap;
    };
    // Ordered predicate, and for the unordered ones the ordered predicate they complement.
    static const P kPreds[] = {
        {CmpPredicate::FOeq, FormId::S_FEQ, false}, {CmpPredicate::FOne, FormId::S_FNE, false},
        {CmpPredicate::FOlt, FormId::S_FLT, false}, {CmpPredicate::FOgt, FormId::S_FLT, true},
        {CmpPredicate::FOge, FormId::S_FGE, false}, {CmpPredicate::FOle, FormId::S_FGE, true},
        {CmpPredicate::FUne, FormId::S_FEQ, false}, {CmpPredicate::FUeq, FormId::S_FNE, false},
        {CmpPredicate::FUge, FormId::S_FLT, false}, {CmpPredicate::FUle, FormId::S_FLT, true},
        {CmpPredicate::FUlt, FormId::S_FGE, false}, {CmpPredicate::FUgt, FormId::S_FGE, true}};
    const P* p = nullptr;
    for (const P& k : kPreds)
      if (k.pred == pred) p = &k;
    if (!p) return unsupported(op.loc, "'arith.cmpf " + std::string(ir::spelling(pred)) + "'");
    fpu(p->form, ct, {p->swap ? b : a, p->swap ? a : b}, d);
  }
  if (ir::spelling(pred)[0] == 'u') // the unordered predicates
    scalar(FormId::S_XORI, {{"simm12", 1}}, {{"SrcL", d, false}, {"RegDst", d, true}});
}

/// Keeps narrow integers sign-extended in their 64-bit registers (i1 as 0/1).
void FunctionLowering::normalize(VReg r, const Type& t) {
  if (t.kind != TypeKind::Scalar) return;
  unsigned bits = isa::bitWidth(t.elem);
  if (bits >= 64) return;
  if (t.elem == isa::DType::I1) {
    scalar(FormId::S_ANDI, {{"simm12", 1}}, {{"SrcL", r, false}, {"RegDst", r, true}});
    return;
  }
  bool isUnsigned = isa::info(t.elem).kind == isa::DTypeKind::UInt;
  scalar(FormId::S_SLLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
  scalar(isUnsigned ? FormId::S_SRLI : FormId::S_SRAI, {{"shamt", 64 - bits}},
         {{"SrcL", r, false}, {"RegDst", r, true}});
}

/// A zero-extended copy of a narrow integer (the register itself for 64-bit types).
VReg FunctionLowering::zeroExtended(VReg r, const Type& t) {
  if (t.kind != TypeKind::Scalar || isa::bitWidth(t.elem) >= 64) return r;
  VReg z = newVReg();
  copy(z, r);
  zeroExtend(z, t);
  return z;
}

void FunctionLowering::zeroExtend(VReg r, const Type& from) {
  if (from.kind != TypeKind::Scalar || isa::bitWidth(from.elem) >= 64) return;
  unsigned bits = isa::bitWidth(from.elem);
  scalar(FormId::S_SLLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
  scalar(FormId::S_SRLI, {{"shamt", 64 - bits}}, {{"SrcL", r, false}, {"RegDst", r, true}});
}

/// ceil/floor division from DIV and REM: q + (r != 0 && (r < 0) == (b < 0)) for ceil,
/// q - (r != 0 && (r < 0) != (b < 0)) for floor.
void FunctionLowering::lowerRoundingDiv(const Op& op, ArithOp arith) {
  const Type& rt = fn_.type(op.results[0]);
  bool isUnsigned = arith == ArithOp::CeilDivUI;
  VReg a = reg(op.operands[0]), b = reg(op.operands[1]);
  if (isUnsigned) {
    a = zeroExtended(a, rt);
    b = zeroExtended(b, rt);
  }
  VReg q = newVReg(), r = newVReg(), nz = newVReg(), rn = newVReg(), bn = newVReg(),
       diff = newVReg(), adj = newVReg();
  scalar(isUnsigned ? FormId::S_DIVU : FormId::S_DIV, {},
         {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", q, true}});
  scalar(isUnsigned ? FormId::S_REMU : FormId::S_REM, {},
         {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", r, true}});
  scalar(FormId::S_CMP_NE, {{"SrcR", kZero}}, {{"SrcL", r, false}, {"RegDst", nz, true}});
  VReg d = define(op.results[0]);
  // Division by zero gives all ones, as DIV does, whatever the rounding (docs/abi.md).
  auto byZero = [&] {
    VReg z = newVReg();
    scalar(FormId::S_CMP_EQ, {{"SrcR", kZero}}, {{"SrcL", b, false}, {"RegDst", z, true}});
    scalar(FormId::S_CSEL, {},
           {{"SrcP", z, false}, {"SrcL", q, false}, {"SrcR", d, false}, {"RegDst", d, true}});
    normalize(d, rt);
  };
  if (isUnsigned) {
    scalar(FormId::S_ADD, {}, {{"SrcL", q, false}, {"SrcR", nz, false}, {"RegDst", d, true}});
    return byZero();
  }
  scalar(FormId::S_CMP_LT, {{"SrcR", kZero}}, {{"SrcL", r, false}, {"RegDst", rn, true}});
  scalar(FormId::S_CMP_LT, {{"SrcR", kZero}}, {{"SrcL", b, false}, {"RegDst", bn, true}});
  scalar(FormId::S_XOR, {}, {{"SrcL", rn, false}, {"SrcR", bn, false}, {"RegDst", diff, true}});
  if (arith == ArithOp::CeilDivSI) {
    scalar(FormId::S_XORI, {{"simm12", 1}}, {{"SrcL", diff, false}, {"RegDst", diff, true}});
    scalar(FormId::S_AND, {}, {{"SrcL", nz, false}, {"SrcR", diff, false}, {"RegDst", adj, true}});
    scalar(FormId::S_ADD, {}, {{"SrcL", q, false}, {"SrcR", adj, false}, {"RegDst", d, true}});
  } else {
    scalar(FormId::S_AND, {}, {{"SrcL", nz, false}, {"SrcR", diff, false}, {"RegDst", adj, true}});
    scalar(FormId::S_SUB, {}, {{"SrcL", q, false}, {"SrcR", adj, false}, {"RegDst", d, true}});
  }
  byZero();
}

void FunctionLowering::lowerCmp(const Op& op) {
  const CmpPredicate pred = op.predicate;
  struct P {
    CmpPredicate pred;
    FormId form;
    bool swap;
  };
  static const P kPreds[] = {{CmpPredicate::IEq, FormId::S_CMP_EQ, false},
                             {CmpPredicate::INe, FormId::S_CMP_NE, false},
                             {CmpPredicate::ISlt, FormId::S_CMP_LT, false},
                             {CmpPredicate::ISge, FormId::S_CMP_GE, false},
                             {CmpPredicate::ISgt, FormId::S_CMP_LT, true},
                             {CmpPredicate::ISle, FormId::S_CMP_GE, true},
                             {CmpPredicate::IUlt, FormId::S_CMP_LTU, false},
                             {CmpPredicate::IUge, FormId::S_CMP_GEU, false},
                             {CmpPredicate::IUgt, FormId::S_CMP_LTU, true},
                             {CmpPredicate::IUle, FormId::S_CMP_GEU, true}};
  for (const P& p : kPreds) {
    if (p.pred != pred) continue;
    VReg a = reg(op.operands[p.swap ? 1 : 0]), b = reg(op.operands[p.swap ? 0 : 1]);
    scalar(p.form, {},
           {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  unsupported(op.loc, "'arith.cmpi " + std::string(ir::spelling(pred)) + "'");
}

/// Integer add, subtract and multiply of constants are constants (wrapping, then kept as the
/// result type is): addresses and subset offsets that a frontend computes from constants need
/// no code, and a `pto.subset` at such an offset has a static descriptor.
bool FunctionLowering::foldConstant(const Op& op, ArithOp arith) {
  if (arith != ArithOp::AddI && arith != ArithOp::SubI && arith != ArithOp::MulI) return false;
  if (op.operands.size() != 2 || op.results.size() != 1) return false;
  auto a = constantInt(op.operands[0]), b = constantInt(op.operands[1]);
  const Type& rt = fn_.type(op.results[0]);
  if (!a || !b || !rt.isIntLike()) return false;
  const uint64_t x = static_cast<uint64_t>(*a), y = static_cast<uint64_t>(*b);
  uint64_t v = arith == ArithOp::AddI ? x + y : arith == ArithOp::SubI ? x - y : x * y;
  const unsigned bits = rt.kind == TypeKind::Index ? 64 : isa::bitWidth(rt.elem);
  if (bits < 64) {
    const bool isUnsigned = isa::info(rt.elem).kind == isa::DTypeKind::UInt;
    v = bits == 1    ? (v & 1)
        : isUnsigned ? (v << (64 - bits)) >> (64 - bits)
                     : static_cast<uint64_t>(static_cast<int64_t>(v << (64 - bits)) >> (64 - bits));
  }
  constants_[op.results[0]] = v;
  pendingLoc_ = {};
  return true;
}

} // namespace pto::as::lower
