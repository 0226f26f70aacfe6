#include "isa/ScalarFp.h"

#include "isa/Encoding.h"
#include "isa/Numerics.h"

#include <cmath>

namespace pto::isa {
namespace {

constexpr DType kIntDst[] = {DType::U64,       DType::U32,       DType::U16,       DType::U8,
                             DType::I1 /*u4*/, DType::I1 /*u2*/, DType::I1 /*u1*/, DType::I1 /*b1*/,
                             DType::I64,       DType::I32,       DType::I16,       DType::I8};
constexpr bool kIntDstSupported[] = {true,  true,  true, true, false, false,
                                     false, false, true, true, true,  true};

template <class F> uint64_t canonical(F v) {
  if constexpr (sizeof(F) == 4)
    return std::isnan(v) ? 0x7FC00000u : f32Bits(v);
  else
    return std::isnan(v) ? 0x7FF8000000000000ull : f64Bits(v);
}

template <class F> uint64_t binary(FpOp op, F x, F y) {
  switch (op) {
  case FpOp::Add:
    return canonical<F>(x + y);
  case FpOp::Sub:
    return canonical<F>(x - y);
  case FpOp::Mul:
    return canonical<F>(x * y);
  case FpOp::Div:
    return canonical<F>(x / y);
  case FpOp::Max:
  case FpOp::Min: {
    if (std::isnan(x) && std::isnan(y)) return canonical<F>(x);
    if (std::isnan(x)) return canonical<F>(y);
    if (std::isnan(y)) return canonical<F>(x);
    if (x == y) // equal values: only the sign of zero can differ; min takes -0, max takes +0
      return canonical<F>(op == FpOp::Min ? (std::signbit(x) ? x : y) : (std::signbit(x) ? y : x));
    return canonical<F>(op == FpOp::Max ? (x > y ? x : y) : (x < y ? x : y));
  }
  case FpOp::Eq:
    return x == y;
  case FpOp::Ne:
    return !std::isnan(x) && !std::isnan(y) && x != y;
  case FpOp::Lt:
    return x < y;
  case FpOp::Ge:
    return x >= y;
  default:
    return 0;
  }
}

} // namespace

std::optional<DType> fpDstType(unsigned code) {
  if (code > 14) return std::nullopt;
  auto t = enc::dtypeOfCode(code);
  if (!t || !isFloat(*t) || bitWidth(*t) < 8) return std::nullopt;
  return t;
}
std::optional<DType> intDstType(unsigned code) {
  if (code >= std::size(kIntDst) || !kIntDstSupported[code]) return std::nullopt;
  return kIntDst[code];
}
std::optional<unsigned> fpDstCode(DType t) {
  auto c = enc::dataTypeCode(t);
  if (!c || !fpDstType(*c)) return std::nullopt;
  return c;
}
std::optional<unsigned> intDstCode(DType t) {
  for (unsigned c = 0; c < std::size(kIntDst); ++c)
    if (kIntDstSupported[c] && kIntDst[c] == t) return c;
  return std::nullopt;
}

uint64_t scalarFp(FpOp op, unsigned srcType, unsigned dstType, uint64_t a, uint64_t b) {
  const bool f32 = srcType == kFpSrcF32;
  const DType src = f32 ? DType::F32 : DType::F64;
  const uint64_t srcBits = f32 ? (a & 0xFFFFFFFFu) : a;
  switch (op) {
  case FpOp::Abs:
    return f32 ? (a & 0x7FFFFFFFu) : (a & ~(uint64_t{1} << 63));
  case FpOp::Cvt: {
    auto dst = fpDstType(dstType);
    if (!dst) return 0;
    if (*dst == src)
      return f32 ? canonical<float>(f32FromBits(static_cast<uint32_t>(a)))
                 : canonical<double>(f64FromBits(a));
    const double v = f32 ? double(f32FromBits(static_cast<uint32_t>(a))) : f64FromBits(a);
    if (std::isnan(v))
      return encodeFromDouble(*dst, std::nan(""), RoundMode::CAST_RINT, SatMode::OFF);
    return convert(src, *dst, srcBits, RoundMode::CAST_RINT, SatMode::OFF);
  }
  case FpOp::CvtZ: {
    auto dst = intDstType(dstType);
    if (!dst) return 0;
    uint64_t r = convert(src, *dst, srcBits, RoundMode::CAST_TRUNC, SatMode::ON);
    const unsigned w = bitWidth(*dst);
    if (info(*dst).kind == DTypeKind::SInt && w < 64)
      r = static_cast<uint64_t>(static_cast<int64_t>(r << (64 - w)) >> (64 - w));
    return r;
  }
  case FpOp::SCvtF:
  case FpOp::UCvtF: {
    auto dst = fpDstType(dstType);
    if (!dst) return 0;
    const bool sgn = op == FpOp::SCvtF;
    const DType from = f32 ? (sgn ? DType::I32 : DType::U32) : (sgn ? DType::I64 : DType::U64);
    return convert(from, *dst, f32 ? (a & 0xFFFFFFFFu) : a, RoundMode::CAST_RINT, SatMode::OFF);
  }
  default:
    if (f32)
      return binary<float>(op, f32FromBits(static_cast<uint32_t>(a)),
                           f32FromBits(static_cast<uint32_t>(b)));
    return binary<double>(op, f64FromBits(a), f64FromBits(b));
  }
}

} // namespace pto::isa
