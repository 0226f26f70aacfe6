// The scalar floating-point unit: what the 0.58.3 FSU forms (fadd.fs, fcmp, fcvt, scvtf, ...)
// compute on the raw bits of 64-bit registers (docs/encoding.md "Scalar floating point",
// docs/numerics.md "Scalar floating point"). The arithmetic is isa/ScalarSemantics.inc, the one
// definition the runtime and the exported C++ share; this is its typed interface.
#pragma once

#include "isa/Isa.h"

#include <cstdint>
#include <optional>

namespace pto::isa {

enum class FpOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Abs,
  Eq,
  Ne,
  Lt,
  Ge,
  Cvt,
  CvtZ,
  SCvtF,
  UCvtF
};

/// SrcType of the FSU forms: 0 FP64 (all 64 bits), 1 FP32 (the low 32 bits). For scvtf/ucvtf
/// it is the integer source width instead: 0 64-bit, 1 32-bit (sign- or zero-extended).
inline constexpr unsigned kFpSrcF64 = 0, kFpSrcF32 = 1;

/// The element type a DstType code names: a float format (fcvt, scvtf, ucvtf; the DataType
/// order) or an integer type (fcvtz: ud uw uh ub u4 u2 u1 b1 sd sw sh sb s4 s2 s1). nullopt for a
/// code the scalar unit does not convert to here (tf32, hf32, fp4, ...).
std::optional<DType> fpDstType(unsigned code);
std::optional<DType> intDstType(unsigned code);
/// The codes of `t` (nullopt when it has none).
std::optional<unsigned> fpDstCode(DType t);
std::optional<unsigned> intDstCode(DType t);

/// The result of one FSU instruction. Arithmetic rounds to nearest even (the reset rounding
/// mode), never flushes subnormals, and returns the canonical quiet NaN (positive, top fraction
/// bit) for every NaN result; max/min return the non-NaN operand when only one is NaN and order
/// -0 below +0; compares are ordered (any NaN gives 0, ne included) and write 0 or 1; abs clears
/// the sign bit only. fcvtz rounds toward zero and saturates, NaN giving 0. Float results are
/// zero-extended to 64 bits, signed integer results sign-extended.
uint64_t scalarFp(FpOp op, unsigned srcType, unsigned dstType, uint64_t a, uint64_t b);

} // namespace pto::isa
