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
  std::string_view name = op.name;
  name.remove_prefix(6); // "arith."
  const Type& rt = fn_.type(op.results[0]);
  // Registers hold raw bits, so a bitcast is a copy whatever the types, then the result kept as
  // its type is (a narrow integer sign-extended, a narrow float zero-extended).
  if (name == "bitcast") {
    VReg d = define(op.results[0]);
    copy(d, reg(op.operands[0]));
    if (rt.isFloatScalar())
      zeroExtend(d, rt);
    else
      normalize(d, rt);
    return;
  }
  // i1 is kept as 0/1: sign-extending it makes true -1.
  if (name == "extsi" && fn_.type(op.operands[0]).kind == TypeKind::Scalar &&
      fn_.type(op.operands[0]).elem == isa::DType::I1) {
    scalar(FormId::S_SUB, {{"SrcL", kZero}},
           {{"SrcR", reg(op.operands[0]), false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  if (name == "select") {
    VReg c = reg(op.operands[0]), a = reg(op.operands[1]), b = reg(op.operands[2]);
    scalar(FormId::S_CSEL, {},
           {{"SrcP", c, false},
            {"SrcL", a, false},
            {"SrcR", b, false},
            {"RegDst", define(op.results[0]), true}});
    return;
  }
  if (rt.isFloatScalar() || (!op.operands.empty() && fn_.type(op.operands[0]).isFloatScalar()))
    return lowerFloat(op, name);
  if (foldConstant(op, name)) return;
  static const std::map<std::string_view, FormId> kBinary = {
      {"addi", FormId::S_ADD},   {"subi", FormId::S_SUB},   {"muli", FormId::S_MUL},
      {"divsi", FormId::S_DIV},  {"divui", FormId::S_DIVU}, {"remsi", FormId::S_REM},
      {"remui", FormId::S_REMU}, {"minsi", FormId::S_MIN},  {"minui", FormId::S_MINU},
      {"maxsi", FormId::S_MAX},  {"maxui", FormId::S_MAXU}, {"andi", FormId::S_AND},
      {"ori", FormId::S_OR},     {"xori", FormId::S_XOR},   {"shli", FormId::S_SLL},
      {"shrsi", FormId::S_SRA},  {"shrui", FormId::S_SRL}};
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
  if (name == "ceildivsi" || name == "floordivsi" || name == "ceildivui")
    return lowerRoundingDiv(op, name);
  if (name == "cmpi") return lowerCmp(op);
  if (name == "index_cast" || name == "index_castui" || name == "extsi" || name == "extui" ||
      name == "trunci" || name == "bitcast") {
    VReg s = reg(op.operands[0]);
    VReg d = define(op.results[0]);
    copy(d, s);
    const Type& st = fn_.type(op.operands[0]);
    // Widening: unsigned casts zero-extend the source (kept sign-extended); narrowing (index to
    // i32 included) truncates, and the result is kept as its type is.
    const auto width = [](const Type& t) {
      return t.kind == TypeKind::Index ? 64u : isa::bitWidth(t.elem);
    };
    if ((name == "extui" || name == "index_castui") && width(st) < width(rt))
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
  const char* names[] = {"SrcL", "SrcR"};
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

void FunctionLowering::lowerFloat(const Op& op, std::string_view name) {
  const Type& rt = fn_.type(op.results[0]);
  const Type& st = fn_.type(op.operands[0]);
  for (const Type* t : {&rt, &st})
    if (t->isFloatScalar() && !scalarFloat(t->elem))
      return unsupported(op.loc, "scalar " + std::string(isa::spelling(t->elem)) +
                                     " arithmetic (f16, bf16, f32 and f64 are)");
  static const std::map<std::string_view, FormId> kBinary = {
      {"addf", FormId::S_FADD},     {"subf", FormId::S_FSUB},    {"mulf", FormId::S_FMUL},
      {"divf", FormId::S_FDIV},     {"maxnumf", FormId::S_FMAX}, {"minnumf", FormId::S_FMIN},
      {"maximumf", FormId::S_FMAX}, {"minimumf", FormId::S_FMIN}};
  if (auto it = kBinary.find(name); it != kBinary.end()) {
    const unsigned ct = computeType(st.elem);
    VReg a = widen(reg(op.operands[0]), st.elem), b = widen(reg(op.operands[1]), st.elem);
    VReg r = newVReg();
    fpu(it->second, ct, {a, b}, r);
    if (name == "maximumf" || name == "minimumf") { // NaN-propagating: any NaN operand gives NaN
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
  if (name == "negf") { // a sign flip on the raw bits, NaN included
    const unsigned bits = isa::bitWidth(rt.elem);
    VReg d = define(op.results[0]);
    scalar(FormId::S_XOR, {},
           {{"SrcL", reg(op.operands[0]), false},
            {"SrcR", constant(uint64_t{1} << (bits - 1)), false},
            {"RegDst", d, true}});
    return;
  }
  if (name == "cmpf") return lowerCmpF(op);
  if (name == "extf" || name == "truncf") {
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
  if (name == "sitofp" || name == "uitofp") {
    const bool wide = st.kind == TypeKind::Index || isa::bitWidth(st.elem) > 32;
    const bool sgn = name == "sitofp";
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
  if (name == "fptosi" || name == "fptoui") {
    const bool sgn = name == "fptosi";
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
    static const P kPreds[] = {
        {"oeq", FormId::S_FEQ, false}, {"one", FormId::S_FNE, false}, {"olt", FormId::S_FLT, false},
        {"ogt", FormId::S_FLT, true},  {"oge", FormId::S_FGE, false}, {"ole", FormId::S_FGE, true},
        {"une", FormId::S_FEQ, false}, {"ueq", FormId::S_FNE, false}, {"uge", FormId::S_FLT, false},
        {"ule", FormId::S_FLT, true},  {"ult", FormId::S_FGE, false}, {"ugt", FormId::S_FGE, true}};
    const P* p = nullptr;
    for (const P& k : kPreds)
      if (k.name == pred) p = &k;
    if (!p) return unsupported(op.loc, "'arith.cmpf " + pred + "'");
    fpu(p->form, ct, {p->swap ? b : a, p->swap ? a : b}, d);
  }
  if (pred[0] == 'u')
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
void FunctionLowering::lowerRoundingDiv(const Op& op, std::string_view name) {
  const Type& rt = fn_.type(op.results[0]);
  bool isUnsigned = name == "ceildivui";
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

void FunctionLowering::lowerCmp(const Op& op) {
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
    scalar(p.form, {},
           {{"SrcL", a, false}, {"SrcR", b, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  unsupported(op.loc, "'arith.cmpi " + pred + "'");
}

/// Integer add, subtract and multiply of constants are constants (wrapping, then kept as the
/// result type is): addresses and subset offsets that a frontend computes from constants need
/// no code, and a `pto.subset` at such an offset has a static descriptor.
bool FunctionLowering::foldConstant(const Op& op, std::string_view name) {
  if (name != "addi" && name != "subi" && name != "muli") return false;
  if (op.operands.size() != 2 || op.results.size() != 1) return false;
  auto a = constantInt(op.operands[0]), b = constantInt(op.operands[1]);
  const Type& rt = fn_.type(op.results[0]);
  if (!a || !b || !rt.isIntLike()) return false;
  const uint64_t x = static_cast<uint64_t>(*a), y = static_cast<uint64_t>(*b);
  uint64_t v = name == "addi" ? x + y : name == "subi" ? x - y : x * y;
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
