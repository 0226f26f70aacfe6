// Scalar semantics of the Kernel IR's arith ops, written from the MLIR arith definitions (not
// from the ISA interpreter): integers are two's complement of their width, floats IEEE-754
// binary16 / bfloat16 / binary32 / binary64 rounded to nearest even. Values are raw bits,
// zero-extended to 64 (docs/runtime.md, "The reference interpreter").
#pragma once

#include "asm/ir/IR.h"
#include "isa/Isa.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pto::ref {

/// The width of an integer-like scalar type (index = 64, i1 = 1).
unsigned intWidth(isa::DType t);
/// The low `w` bits of v.
uint64_t truncBits(uint64_t v, unsigned w);
/// v's low `w` bits as a signed number.
int64_t signedValue(uint64_t v, unsigned w);

/// Integer binary ops (addi ... shrui) at width w; nullopt for another op.
std::optional<uint64_t> intBinary(ir::ArithOp op, uint64_t a, uint64_t b, unsigned w);
/// cmpi predicates (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge); nullopt for a cmpf one.
std::optional<bool> intCompare(ir::CmpPredicate pred, uint64_t a, uint64_t b, unsigned w);

/// Floats: f16, bf16, f32, f64 only.
bool isScalarFloat(isa::DType t);
double floatToDouble(isa::DType t, uint64_t bits);
/// Rounds `d` to the type, nearest even; overflow gives inf, a NaN gives the canonical quiet NaN.
uint64_t doubleToFloat(isa::DType t, double d);
/// Integer (signed or unsigned 64-bit) to the float type, rounded once to nearest even.
uint64_t intToFloat(isa::DType t, uint64_t v, bool isSigned);
/// Float to an integer of width w, toward zero, saturating; NaN gives 0.
uint64_t floatToInt(isa::DType from, uint64_t bits, unsigned w, bool isSigned);

/// Float binary ops (addf subf mulf divf maximumf minimumf maxnumf minnumf); nullopt for another.
std::optional<uint64_t> floatBinary(ir::ArithOp op, isa::DType t, uint64_t a, uint64_t b);
/// cmpf predicates (false oeq ogt oge olt ole one ord ueq ugt uge ult ule une uno true); nullopt
/// for a cmpi one.
std::optional<bool> floatCompare(ir::CmpPredicate pred, isa::DType t, uint64_t a, uint64_t b);

} // namespace pto::ref
