#include "isa/ScalarFp.h"

#include "isa/Encoding.h"
#include "isa/ScalarSemantics.h"

#include <iterator>

namespace pto::isa {
namespace {

// fcvtz's IntDst codes 0..11; u4, u2, u1 and b1 (4..7) are not destinations of the scalar unit.
constexpr DType kIntDst[] = {DType::U64,       DType::U32,       DType::U16,       DType::U8,
                             DType::I1 /*u4*/, DType::I1 /*u2*/, DType::I1 /*u1*/, DType::I1 /*b1*/,
                             DType::I64,       DType::I32,       DType::I16,       DType::I8};

// scalar::fpu numbers the operations in FpOp's order.
static_assert(static_cast<int>(FpOp::Add) == 0 && static_cast<int>(FpOp::Min) == 5 &&
              static_cast<int>(FpOp::Abs) == 6 && static_cast<int>(FpOp::Ge) == 10);

} // namespace

std::optional<DType> fpDstType(unsigned code) {
  if (!scalar::is_float_dst(code)) return std::nullopt;
  return enc::dtypeOfCode(code);
}
std::optional<DType> intDstType(unsigned code) {
  if (!scalar::is_int_dst(code)) return std::nullopt;
  return kIntDst[code];
}
std::optional<unsigned> fpDstCode(DType t) {
  auto c = enc::dataTypeCode(t);
  if (!c || !fpDstType(*c)) return std::nullopt;
  return c;
}
std::optional<unsigned> intDstCode(DType t) {
  for (unsigned c = 0; c < std::size(kIntDst); ++c)
    if (scalar::is_int_dst(c) && kIntDst[c] == t) return c;
  return std::nullopt;
}

uint64_t scalarFp(FpOp op, unsigned srcType, unsigned dstType, uint64_t a, uint64_t b) {
  const unsigned t = srcType == kFpSrcF32 ? 1 : 0;
  switch (op) {
  case FpOp::Cvt:
    return fpDstType(dstType) ? scalar::fcvt(t, dstType, a) : 0;
  case FpOp::CvtZ:
    return intDstType(dstType) ? scalar::fcvtz(t, dstType, a) : 0;
  case FpOp::SCvtF:
  case FpOp::UCvtF:
    return fpDstType(dstType) ? scalar::cvtf(op == FpOp::SCvtF, t, dstType, a) : 0;
  default:
    return scalar::fpu(static_cast<int>(op), t, a, b);
  }
}

} // namespace pto::isa
