// Scalar semantics of the reference interpreter (ref/Scalar.h). Written from the MLIR arith op
// definitions; the cases MLIR leaves undefined (division by zero, shifts by the width or more,
// float-to-integer overflow) are pinned in docs/runtime.md, "The reference interpreter".
#include "ref/Scalar.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace pto::ref {
namespace {

struct FloatFormat {
  unsigned expBits, mantBits;
};

std::optional<FloatFormat> formatOf(isa::DType t) {
  switch (t) {
  case isa::DType::F16:
    return FloatFormat{5, 10};
  case isa::DType::BF16:
    return FloatFormat{8, 7};
  case isa::DType::F32:
    return FloatFormat{8, 23};
  case isa::DType::F64:
    return FloatFormat{11, 52};
  default:
    return std::nullopt;
  }
}

/// m >> s rounded to nearest, ties to even (s may exceed 64).
unsigned __int128 shiftRightRne(unsigned __int128 m, unsigned s) {
  if (s == 0) return m;
  if (s > 127) return 0; // m < 2^127 < half of 2^s
  const unsigned __int128 q = m >> s, rem = m & ((static_cast<unsigned __int128>(1) << s) - 1);
  const unsigned __int128 half = static_cast<unsigned __int128>(1) << (s - 1);
  if (rem > half || (rem == half && (q & 1))) return q + 1;
  return q;
}

/// The bits of (-1)^neg * m * 2^e in format f, rounded once to nearest even.
uint64_t encode(FloatFormat f, bool neg, uint64_t m, int e) {
  const uint64_t sign = neg ? uint64_t{1} << (f.expBits + f.mantBits) : 0;
  if (m == 0) return sign;
  const int bias = (1 << (f.expBits - 1)) - 1, emin = 1 - bias;
  const int msb = 63 - std::countl_zero(m);
  const int exponent = msb + e; // value in [2^exponent, 2^(exponent+1))
  // The quantum (value of the last mantissa bit) of the result's binade; subnormals share emin's.
  int qexp = (exponent < emin ? emin : exponent) - static_cast<int>(f.mantBits);
  unsigned __int128 q;
  const int shift = e - qexp; // m * 2^e = (m << shift) quanta
  if (shift >= 0) {
    if (shift > 64)
      return sign | ((uint64_t{(1u << f.expBits) - 1}) << f.mantBits); // far above the range
    q = static_cast<unsigned __int128>(m) << shift;
  } else {
    q = shiftRightRne(m, static_cast<unsigned>(-shift));
  }
  const unsigned __int128 one = static_cast<unsigned __int128>(1) << f.mantBits;
  if (q >= (one << 1)) { // rounding carried into the next binade (exact: q == 2 * one)
    q >>= 1;
    ++qexp;
  }
  const uint64_t infBits = uint64_t{(1u << f.expBits) - 1} << f.mantBits;
  if (q < one) return sign | static_cast<uint64_t>(q); // subnormal (or zero)
  const int biased = qexp + static_cast<int>(f.mantBits) + bias;
  if (biased >= static_cast<int>((1u << f.expBits) - 1)) return sign | infBits;
  return sign | (static_cast<uint64_t>(biased) << f.mantBits) | static_cast<uint64_t>(q - one);
}

double makeNan(bool neg, uint64_t payloadTop52) {
  uint64_t b =
      (uint64_t{0x7FF} << 52) | (uint64_t{1} << 51) | (payloadTop52 & ((uint64_t{1} << 51) - 1));
  if (neg) b |= uint64_t{1} << 63;
  return std::bit_cast<double>(b);
}

/// The canonical quiet NaN of the type (positive, only the top fraction bit set): every NaN
/// an arithmetic op, a max/min or a conversion produces (docs/numerics.md "Scalar floating point").
uint64_t canonicalNan(isa::DType t) {
  const FloatFormat f = *formatOf(t);
  return (uint64_t{(1u << f.expBits) - 1} << f.mantBits) | (uint64_t{1} << (f.mantBits - 1));
}

} // namespace

unsigned intWidth(isa::DType t) {
  return isa::bitWidth(t);
}

uint64_t truncBits(uint64_t v, unsigned w) {
  return w >= 64 ? v : v & ((uint64_t{1} << w) - 1);
}

int64_t signedValue(uint64_t v, unsigned w) {
  if (w >= 64) return static_cast<int64_t>(v);
  const unsigned sh = 64 - w;
  return static_cast<int64_t>(v << sh) >> sh;
}

std::optional<uint64_t> intBinary(ir::ArithOp op, uint64_t a, uint64_t b, unsigned w) {
  using ir::ArithOp;
  a = truncBits(a, w);
  b = truncBits(b, w);
  const int64_t sa = signedValue(a, w), sb = signedValue(b, w);
  const int64_t smin = w >= 64 ? INT64_MIN : -(int64_t{1} << (w - 1));
  const uint64_t ones = truncBits(~uint64_t{0}, w);
  auto r = [&](uint64_t v) { return truncBits(v, w); };
  auto rs = [&](int64_t v) { return truncBits(static_cast<uint64_t>(v), w); };
  if (op == ArithOp::AddI) return r(a + b);
  if (op == ArithOp::SubI) return r(a - b);
  if (op == ArithOp::MulI) return r(a * b);
  if (op == ArithOp::AndI) return a & b;
  if (op == ArithOp::OrI) return a | b;
  if (op == ArithOp::XOrI) return a ^ b;
  if (op == ArithOp::MinSI) return sa < sb ? a : b;
  if (op == ArithOp::MaxSI) return sa > sb ? a : b;
  if (op == ArithOp::MinUI) return a < b ? a : b;
  if (op == ArithOp::MaxUI) return a > b ? a : b;
  // Division: by zero -> all ones (quotients) / the dividend (remainders); the one signed
  // overflow (INT_MIN / -1) -> INT_MIN, remainder 0.
  const bool overflow = sa == smin && sb == -1;
  if (op == ArithOp::DivUI) return b == 0 ? ones : a / b;
  if (op == ArithOp::RemUI) return b == 0 ? a : a % b;
  if (op == ArithOp::CeilDivUI) return b == 0 ? ones : a / b + (a % b != 0);
  if (op == ArithOp::DivSI) return b == 0 ? ones : overflow ? rs(smin) : rs(sa / sb);
  if (op == ArithOp::RemSI) return b == 0 ? a : overflow ? 0 : rs(sa % sb);
  if (op == ArithOp::CeilDivSI || op == ArithOp::FloorDivSI) {
    if (b == 0) return ones;
    if (overflow) return rs(smin);
    int64_t q = sa / sb;
    const int64_t rem = sa % sb;
    if (rem != 0) {
      const bool positive = (rem < 0) == (sb < 0); // the exact quotient is positive
      if (op == ArithOp::CeilDivSI && positive) ++q;
      if (op == ArithOp::FloorDivSI && !positive) --q;
    }
    return rs(q);
  }
  // Shifts: the amount is unsigned, taken modulo 64 (the register width of the ISA's shifts);
  // an amount of the width or more (up to 63) shifts every bit out: 0, or the sign for shrsi.
  if (op == ArithOp::ShLI || op == ArithOp::ShRUI || op == ArithOp::ShRSI) {
    const uint64_t s = b & 63;
    if (s >= w) return op == ArithOp::ShRSI ? (sa < 0 ? ones : 0) : 0;
    if (op == ArithOp::ShLI) return r(a << s);
    if (op == ArithOp::ShRUI) return a >> s;
    return rs(sa >> s);
  }
  return std::nullopt;
}

std::optional<bool> intCompare(ir::CmpPredicate p, uint64_t a, uint64_t b, unsigned w) {
  using ir::CmpPredicate;
  a = truncBits(a, w);
  b = truncBits(b, w);
  const int64_t sa = signedValue(a, w), sb = signedValue(b, w);
  if (p == CmpPredicate::IEq) return a == b;
  if (p == CmpPredicate::INe) return a != b;
  if (p == CmpPredicate::ISlt) return sa < sb;
  if (p == CmpPredicate::ISle) return sa <= sb;
  if (p == CmpPredicate::ISgt) return sa > sb;
  if (p == CmpPredicate::ISge) return sa >= sb;
  if (p == CmpPredicate::IUlt) return a < b;
  if (p == CmpPredicate::IUle) return a <= b;
  if (p == CmpPredicate::IUgt) return a > b;
  if (p == CmpPredicate::IUge) return a >= b;
  return std::nullopt;
}

bool isScalarFloat(isa::DType t) {
  return formatOf(t).has_value();
}

double floatToDouble(isa::DType t, uint64_t bits) {
  const FloatFormat f = *formatOf(t);
  if (t == isa::DType::F64) return std::bit_cast<double>(bits);
  const bool neg = (bits >> (f.expBits + f.mantBits)) & 1;
  const uint64_t exp = (bits >> f.mantBits) & ((uint64_t{1} << f.expBits) - 1);
  const uint64_t mant = bits & ((uint64_t{1} << f.mantBits) - 1);
  const int bias = (1 << (f.expBits - 1)) - 1;
  double v;
  if (exp == (uint64_t{1} << f.expBits) - 1) {
    if (mant == 0)
      v = INFINITY;
    else
      return makeNan(neg, mant << (51 - (f.mantBits - 1))); // payload kept in the top bits
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - static_cast<int>(f.mantBits));
  } else {
    v = std::ldexp(static_cast<double>(mant | (uint64_t{1} << f.mantBits)),
                   static_cast<int>(exp) - bias - static_cast<int>(f.mantBits));
  }
  return neg ? -v : v;
}

uint64_t doubleToFloat(isa::DType t, double d) {
  const FloatFormat f = *formatOf(t);
  const uint64_t db = std::bit_cast<uint64_t>(d);
  if (std::isnan(d)) return canonicalNan(t);
  if (t == isa::DType::F64) return db;
  const bool neg = db >> 63;
  const uint64_t sign = neg ? uint64_t{1} << (f.expBits + f.mantBits) : 0;
  const uint64_t infBits = uint64_t{(1u << f.expBits) - 1} << f.mantBits;
  if (std::isinf(d)) return sign | infBits;
  const uint64_t exp = (db >> 52) & 0x7FF, mant = db & ((uint64_t{1} << 52) - 1);
  if (exp == 0) return encode(f, neg, mant, -1074);
  return encode(f, neg, mant | (uint64_t{1} << 52), static_cast<int>(exp) - 1075);
}

uint64_t intToFloat(isa::DType t, uint64_t v, bool isSigned) {
  const bool neg = isSigned && static_cast<int64_t>(v) < 0;
  const uint64_t mag = neg ? ~v + 1 : v;
  return encode(*formatOf(t), neg, mag, 0);
}

uint64_t floatToInt(isa::DType from, uint64_t bits, unsigned w, bool isSigned) {
  const double d = std::trunc(floatToDouble(from, bits));
  if (std::isnan(d)) return 0;
  if (isSigned) {
    const double lo = -std::ldexp(1.0, static_cast<int>(w) - 1),
                 hi = std::ldexp(1.0, static_cast<int>(w) - 1);
    if (d <= lo)
      return truncBits(static_cast<uint64_t>(w >= 64 ? INT64_MIN : -(int64_t{1} << (w - 1))), w);
    if (d >= hi)
      return truncBits(w >= 64 ? static_cast<uint64_t>(INT64_MAX) : (uint64_t{1} << (w - 1)) - 1,
                       w);
    return truncBits(static_cast<uint64_t>(static_cast<int64_t>(d)), w);
  }
  if (d <= 0) return 0;
  if (d >= std::ldexp(1.0, static_cast<int>(w))) return truncBits(~uint64_t{0}, w);
  return static_cast<uint64_t>(d);
}

std::optional<uint64_t> floatBinary(ir::ArithOp op, isa::DType t, uint64_t a, uint64_t b) {
  using ir::ArithOp;
  const double x = floatToDouble(t, a), y = floatToDouble(t, b);
  // +, -, *, / of f16/bf16/f32 operands computed in double and rounded once are correctly
  // rounded: 53 >= 2p + 2 for p = 24 (double rounding is innocuous).
  if (op == ArithOp::AddF) return doubleToFloat(t, x + y);
  if (op == ArithOp::SubF) return doubleToFloat(t, x - y);
  if (op == ArithOp::MulF) return doubleToFloat(t, x * y);
  if (op == ArithOp::DivF) return doubleToFloat(t, x / y);
  const bool xn = std::isnan(x), yn = std::isnan(y);
  // -0 orders below +0 for all four.
  auto less = [](double p, double q) {
    return p < q || (p == 0 && q == 0 && std::signbit(p) && !std::signbit(q));
  };
  if (op == ArithOp::MaximumF || op == ArithOp::MinimumF) {
    if (xn || yn) return canonicalNan(t);
    const bool pickX = op == ArithOp::MaximumF ? !less(x, y) : !less(y, x);
    return pickX ? a : b;
  }
  if (op == ArithOp::MaxNumF || op == ArithOp::MinNumF) {
    if (xn && yn) return canonicalNan(t);
    if (xn) return b;
    if (yn) return a;
    const bool pickX = op == ArithOp::MaxNumF ? !less(x, y) : !less(y, x);
    return pickX ? a : b;
  }
  return std::nullopt;
}

std::optional<bool> floatCompare(ir::CmpPredicate p, isa::DType t, uint64_t a, uint64_t b) {
  using ir::CmpPredicate;
  const double x = floatToDouble(t, a), y = floatToDouble(t, b);
  const bool uno = std::isnan(x) || std::isnan(y);
  if (p == CmpPredicate::FFalse) return false;
  if (p == CmpPredicate::FTrue) return true;
  if (p == CmpPredicate::FOrd) return !uno;
  if (p == CmpPredicate::FUno) return uno;
  if (p == CmpPredicate::FOeq) return !uno && x == y;
  if (p == CmpPredicate::FOgt) return !uno && x > y;
  if (p == CmpPredicate::FOge) return !uno && x >= y;
  if (p == CmpPredicate::FOlt) return !uno && x < y;
  if (p == CmpPredicate::FOle) return !uno && x <= y;
  if (p == CmpPredicate::FOne) return !uno && x != y;
  if (p == CmpPredicate::FUeq) return uno || x == y;
  if (p == CmpPredicate::FUgt) return uno || x > y;
  if (p == CmpPredicate::FUge) return uno || x >= y;
  if (p == CmpPredicate::FUlt) return uno || x < y;
  if (p == CmpPredicate::FUle) return uno || x <= y;
  if (p == CmpPredicate::FUne) return uno || x != y;
  return std::nullopt;
}

} // namespace pto::ref
