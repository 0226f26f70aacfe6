// Element numerics (see Numerics.h and docs/numerics.md).
//
// Every conversion goes through one exact intermediate: a sign, a 64-bit magnitude and a
// binary exponent (value = mag * 2^exp), or a class (NaN, infinity, zero). Float sources are
// decoded exactly (they all fit a double), integer sources are taken as they are, so no
// conversion rounds twice. Rounding works on the magnitude with integer arithmetic only.
#include "isa/Numerics.h"

#include <bit>
#include <cmath>
#include <limits>

namespace pto::isa {
namespace {

// ---------------------------------------------------------------- format descriptors
// Formats whose magnitude codes are ordered like their values (IEEE-like, OCP fp8/fp4).
// A magnitude code is (biased exponent << (p-1)) | fraction; the sign sits above it.
struct FloatFmt {
  int p;            // significand bits including the hidden one
  int emin;         // exponent of the smallest normal (value 2^emin)
  uint64_t maxCode; // magnitude code of the largest finite value
  uint64_t infCode; // magnitude code of infinity (valid if hasInf)
  uint64_t nanCode; // magnitude code of the canonical quiet NaN (valid if hasNaN)
  unsigned signBit; // bit index of the sign
  bool hasInf;
  bool hasNaN;
};

constexpr FloatFmt kF64{
    53, -1022, 0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0x7FF8000000000000ull, 63, true, true};
constexpr FloatFmt kF32{24, -126, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 31, true, true};
constexpr FloatFmt kF16{11, -14, 0x7BFF, 0x7C00, 0x7E00, 15, true, true};
constexpr FloatFmt kBF16{8, -126, 0x7F7F, 0x7F80, 0x7FC0, 15, true, true};
constexpr FloatFmt kE5M2{3, -14, 0x7B, 0x7C, 0x7E, 7, true, true};
constexpr FloatFmt kE4M3{4, -6, 0x7E, 0, 0x7F, 7, false, true}; // E4M3FN: S.1111.111 = NaN
constexpr FloatFmt kE2M1{2, 0, 0x7, 0, 0, 3, false, false};     // OCP MX fp4, bias 1, max 6
constexpr FloatFmt kE1M2{3, 0, 0x7, 0, 0, 3, false, false};     // bias 1, max 1.75 (CANN)

const FloatFmt* monotoneFmt(DType t) {
  switch (t) {
  case DType::F64:
    return &kF64;
  case DType::F32:
    return &kF32;
  case DType::F16:
    return &kF16;
  case DType::BF16:
    return &kBF16;
  case DType::F8E5M2:
    return &kE5M2;
  case DType::F8E4M3:
    return &kE4M3;
  case DType::F4E2M1X2:
    return &kE2M1;
  case DType::F4E1M2X2:
    return &kE1M2;
  default:
    return nullptr;
  }
}

constexpr uint64_t kHif8Max = 0x6E; // 2^15
constexpr uint64_t kHif8Inf = 0x6F;
constexpr uint64_t kHif8NaN = 0x80;
constexpr uint64_t kHif8Over = 0x100 | kHif8Inf; // "beyond 2^15" marker: odd, like the inf code

// ---------------------------------------------------------------- exact intermediate
enum class Cls : uint8_t { Zero, Finite, Inf, NaN };
struct Exact {
  Cls cls = Cls::Zero;
  bool neg = false;
  uint64_t mag = 0; // finite: value = mag * 2^exp, mag != 0
  int exp = 0;
};

Exact fromDouble(double d) {
  Exact x;
  const uint64_t b = f64Bits(d);
  x.neg = (b >> 63) != 0;
  const unsigned be = static_cast<unsigned>((b >> 52) & 0x7FF);
  const uint64_t frac = b & ((uint64_t{1} << 52) - 1);
  if (be == 0x7FF) {
    x.cls = frac ? Cls::NaN : Cls::Inf;
  } else if (be == 0) {
    if (frac == 0) {
      x.cls = Cls::Zero;
    } else {
      x.cls = Cls::Finite;
      x.mag = frac;
      x.exp = -1074;
    }
  } else {
    x.cls = Cls::Finite;
    x.mag = frac | (uint64_t{1} << 52);
    x.exp = static_cast<int>(be) - 1075;
  }
  return x;
}

Exact fromInt(bool neg, uint64_t mag) {
  Exact x;
  x.neg = neg;
  x.mag = mag;
  x.cls = mag ? Cls::Finite : Cls::Zero;
  return x;
}

unsigned bitsOf(DType t) {
  return bitWidth(t);
}
uint64_t maskOf(unsigned bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}
bool isSigned(DType t) {
  return info(t).kind == DTypeKind::SInt;
}
bool isIntLike(DType t) {
  const DTypeKind k = info(t).kind;
  return k == DTypeKind::SInt || k == DTypeKind::UInt || k == DTypeKind::Bool;
}

// Exponent of the leading bit of a nonzero magnitude.
int leadExp(uint64_t mag, int exp) {
  return exp + 63 - std::countl_zero(mag);
}

// Where the discarded part of a magnitude lies relative to half an ulp.
enum class Rem : uint8_t { Exact, Below, Half, Above };

// n = floor(mag * 2^exp / 2^q) and the class of the remainder. Requires n < 2^64.
uint64_t quantize(uint64_t mag, int exp, int q, Rem& rem) {
  const int shift = q - exp;
  if (shift <= 0) {
    rem = Rem::Exact;
    return mag << -shift;
  }
  if (shift > 64) {
    rem = Rem::Below;
    return 0;
  }
  if (shift == 64) {
    const uint64_t half = uint64_t{1} << 63;
    rem = mag < half ? Rem::Below : mag == half ? Rem::Half : Rem::Above;
    return 0;
  }
  const uint64_t low = mag & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  rem = low == 0 ? Rem::Exact : low < half ? Rem::Below : low == half ? Rem::Half : Rem::Above;
  return mag >> shift;
}

// Whether to step from the truncated magnitude to the next one away from zero.
// lowerIsOdd: the truncated candidate's encoding (or integer) is odd.
bool roundUp(RoundMode rm, bool neg, bool lowerIsOdd, Rem rem) {
  if (rem == Rem::Exact) return false;
  switch (rm) {
  case RoundMode::CAST_NONE: // resolved by callers; treated as RINT if it gets here
  case RoundMode::CAST_RINT:
    return rem == Rem::Above || (rem == Rem::Half && lowerIsOdd);
  case RoundMode::CAST_ROUND:
    return rem != Rem::Below;
  case RoundMode::CAST_FLOOR:
    return neg;
  case RoundMode::CAST_CEIL:
    return !neg;
  case RoundMode::CAST_TRUNC:
    return false;
  case RoundMode::CAST_ODD:
    return !lowerIsOdd;
  }
  return false;
}

// Modes whose result never grows in magnitude past the truncated value on overflow.
bool towardZero(RoundMode rm, bool neg) {
  return rm == RoundMode::CAST_TRUNC || rm == RoundMode::CAST_ODD ||
         (rm == RoundMode::CAST_FLOOR && !neg) || (rm == RoundMode::CAST_CEIL && neg);
}

// ---------------------------------------------------------------- monotone float formats
uint64_t withSign(const FloatFmt& f, bool neg, uint64_t magCode) {
  return neg ? (magCode | (uint64_t{1} << f.signBit)) : magCode;
}

uint64_t overflowCode(const FloatFmt& f, bool neg, RoundMode rm, SatMode sat) {
  if (towardZero(rm, neg) || sat == SatMode::ON || (!f.hasInf && !f.hasNaN))
    return withSign(f, neg, f.maxCode);
  return withSign(f, neg, f.hasInf ? f.infCode : f.nanCode);
}

uint64_t encodeMonotone(const FloatFmt& f, const Exact& x, RoundMode rm, SatMode sat,
                        bool infSaturates) {
  switch (x.cls) {
  case Cls::NaN:
    return f.hasNaN ? withSign(f, x.neg, f.nanCode) : 0;
  case Cls::Inf:
    if (f.hasInf && !(sat == SatMode::ON && infSaturates)) return withSign(f, x.neg, f.infCode);
    if (sat == SatMode::ON || !f.hasNaN) return withSign(f, x.neg, f.maxCode);
    return withSign(f, x.neg, f.nanCode);
  case Cls::Zero:
    return withSign(f, x.neg, 0);
  case Cls::Finite:
    break;
  }
  const int e = leadExp(x.mag, x.exp);
  const int qmin = f.emin - (f.p - 1);
  const int q = (e > f.emin ? e : f.emin) - (f.p - 1);
  Rem rem;
  uint64_t n = quantize(x.mag, x.exp, q, rem);
  if (roundUp(rm, x.neg, (n & 1) != 0, rem)) ++n;
  // Normal and subnormal codes share one formula; a carry into the next binade lands on the
  // right code because (2^p at q) == (2^(p-1) at q+1).
  const uint64_t code = (static_cast<uint64_t>(q - qmin) << (f.p - 1)) + n;
  if (code > f.maxCode) return overflowCode(f, x.neg, rm, sat);
  return withSign(f, x.neg, code);
}

double decodeMonotone(const FloatFmt& f, uint64_t bits) {
  const uint64_t sign = ((bits >> f.signBit) & 1) << 63;
  const uint64_t code = bits & maskOf(f.signBit);
  if (code > f.maxCode) {
    const bool inf = f.hasInf && code == f.infCode;
    return f64FromBits(sign | (inf ? 0x7FF0000000000000ull : 0x7FF8000000000000ull));
  }
  const unsigned fracBits = static_cast<unsigned>(f.p - 1);
  const int be = static_cast<int>(code >> fracBits);
  const uint64_t frac = code & maskOf(fracBits);
  if (be != 0) { // normal: rebias the exponent, widen the fraction (exact)
    const uint64_t e = static_cast<uint64_t>(be - 1 + f.emin + 1023);
    return f64FromBits(sign | (e << 52) | (frac << (52 - fracBits)));
  }
  // zero or subnormal: frac * 2^qmin, both factors exact, so is the product
  const double scale =
      f64FromBits(static_cast<uint64_t>(f.emin - static_cast<int>(fracBits) + 1023) << 52);
  return f64FromBits(sign | f64Bits(static_cast<double>(frac) * scale));
}

// ---------------------------------------------------------------- HiFloat8
// S | dot | exponent (sign-magnitude, hidden leading 1) | mantissa. Dot 11: 4 exponent bits,
// 1 mantissa bit (|E| 8..15); 10: 3/2 (|E| 4..7); 01: 2/3 (|E| 2..3); 001: 1/3 (|E| = 1);
// 0001: 0/3 (E = 0); 0000: denormal 2^(M-23), M = 1..7. 0x00 = 0, 0x80 = NaN, 0x6F/0xEF = ±inf.
int hif8MantBits(int e) {
  const int a = e < 0 ? -e : e;
  return a >= 8 ? 1 : a >= 4 ? 2 : 3;
}

// Exponent of the ulp in binade e (values in [2^e, 2^(e+1))).
int hif8Quantum(int e) {
  if (e > 15) return e - 1; // beyond the format: continue the last binade's precision
  if (e >= -15) return e - hif8MantBits(e);
  if (e >= -22) return e; // denormals: powers of two only
  return -22;
}

// Magnitude code of n * 2^q (n may be 0); anything above 2^15 gives kHif8Over, which callers
// treat as overflow (codes are not ordered by value, so overflow cannot be a code comparison).
uint64_t hif8MagCode(uint64_t n, int q) {
  if (n == 0) return 0;
  const int len = 64 - std::countl_zero(n);
  const int e = q + len - 1;
  const uint64_t frac = n - (uint64_t{1} << (len - 1));
  if (e > 15 || (e == 15 && frac != 0)) return kHif8Over;
  if (e < -15) return static_cast<uint64_t>(e + 23); // denormal (frac is 0 by construction)
  const int m = hif8MantBits(e);
  const uint64_t mant = (len - 1) <= m ? frac << (m - (len - 1)) : frac >> ((len - 1) - m);
  const unsigned a = static_cast<unsigned>(e < 0 ? -e : e);
  const uint64_t es = e < 0 ? 1 : 0;
  if (a >= 8) return (0x3u << 5) | (((es << 3) | (a - 8)) << 1) | mant;
  if (a >= 4) return (0x2u << 5) | (((es << 2) | (a - 4)) << 2) | mant;
  if (a >= 2) return (0x1u << 5) | (((es << 1) | (a - 2)) << 3) | mant;
  if (a == 1) return (0x1u << 4) | (es << 3) | mant;
  return (0x1u << 3) | mant;
}

uint64_t encodeHif8(const Exact& x, RoundMode rm, SatMode sat) {
  switch (x.cls) {
  case Cls::NaN:
    return kHif8NaN;
  case Cls::Inf:
    return (sat == SatMode::ON ? kHif8Max : kHif8Inf) | (x.neg ? 0x80 : 0);
  case Cls::Zero:
    return 0; // no negative zero: 0x80 is NaN
  case Cls::Finite:
    break;
  }
  const int e = leadExp(x.mag, x.exp);
  const int q = hif8Quantum(e);
  Rem rem;
  const uint64_t n = quantize(x.mag, x.exp, q, rem);
  const uint64_t lower = hif8MagCode(n, q);
  uint64_t code = lower;
  if (roundUp(rm, x.neg, (lower & 1) != 0, rem)) code = hif8MagCode(n + 1, q);
  if (code == kHif8Over) {
    code = (towardZero(rm, x.neg) || sat == SatMode::ON) ? kHif8Max : kHif8Inf;
  }
  if (code == 0) return 0;
  return code | (x.neg ? 0x80 : 0);
}

double decodeHif8(uint64_t bits) {
  const uint8_t b = static_cast<uint8_t>(bits);
  const bool neg = (b & 0x80) != 0;
  const unsigned pl = b & 0x7F;
  if (b == 0x80) return std::numeric_limits<double>::quiet_NaN();
  double v;
  if ((pl >> 3) == 0) {
    v = pl == 0 ? 0.0 : std::ldexp(1.0, static_cast<int>(pl) - 23);
  } else {
    unsigned ebits, mbits, rest;
    if ((pl >> 5) != 0) { // dot 11 / 10 / 01
      const unsigned dot = pl >> 5;
      ebits = dot + 1; // 11 -> 4, 10 -> 3, 01 -> 2
      rest = pl & 0x1F;
      mbits = 5 - ebits;
    } else if ((pl >> 4) == 1) { // 001
      ebits = 1;
      rest = pl & 0xF;
      mbits = 3;
    } else { // 0001
      ebits = 0;
      rest = pl & 0x7;
      mbits = 3;
    }
    const unsigned ef = rest >> mbits;
    const unsigned mant = rest & ((1u << mbits) - 1);
    int e = 0;
    if (ebits > 0) {
      const unsigned signBit = 1u << (ebits - 1);
      const int magnitude = static_cast<int>(signBit | (ef & (signBit - 1)));
      e = (ef & signBit) ? -magnitude : magnitude;
    }
    if (ebits == 4 && e == 15 && mant == 1) {
      v = std::numeric_limits<double>::infinity();
    } else {
      v = std::ldexp(static_cast<double>((1u << mbits) | mant), e - static_cast<int>(mbits));
    }
  }
  return neg ? -v : v;
}

// ---------------------------------------------------------------- E8M0 (scale format)
// Unsigned power of two 2^(E-127), E = 0..254; 0xFF = NaN; no zero, no sign.
uint64_t encodeE8M0(const Exact& x, RoundMode rm, SatMode sat) {
  if (x.cls == Cls::NaN) return 0xFF;
  if (x.cls == Cls::Zero) return 0x00;
  if (x.neg) return 0xFF;
  if (x.cls == Cls::Inf) return sat == SatMode::ON ? 0xFE : 0xFF;
  const int e = leadExp(x.mag, x.exp);
  if (e < -127) return 0x00; // below the smallest scale: clamp to 2^-127
  Rem rem;
  quantize(x.mag, x.exp, e, rem);
  uint64_t code = static_cast<uint64_t>(e + 127);
  if (roundUp(rm, false, (code & 1) != 0, rem)) ++code;
  if (code > 0xFE) return (towardZero(rm, false) || sat == SatMode::ON) ? 0xFE : 0xFF;
  return code;
}

// ---------------------------------------------------------------- integers
struct IntRange {
  __int128 lo, hi;
};
IntRange rangeOf(DType t) {
  const unsigned bits = bitsOf(t);
  if (isSigned(t)) {
    const __int128 hi = (static_cast<__int128>(1) << (bits - 1)) - 1;
    return {-hi - 1, hi};
  }
  return {0, (static_cast<__int128>(1) << bits) - 1};
}

// Clamps (sat ON) or applies the NPU's non-saturating narrowing (sat OFF): a saturating step
// to int32, then the low bits (pto-isa's A2/A3 "NonSatTorch" paths); 32/64-bit targets clamp.
uint64_t intResult(DType dst, __int128 v, SatMode sat, bool fromFloat) {
  const unsigned bits = bitsOf(dst);
  const IntRange r = rangeOf(dst);
  if (sat == SatMode::ON) {
    if (v < r.lo) v = r.lo;
    if (v > r.hi) v = r.hi;
  } else if (fromFloat) {
    if (bits >= 32) {
      if (v < r.lo) v = r.lo;
      if (v > r.hi) v = r.hi;
    } else {
      const __int128 i32lo = -(static_cast<__int128>(1) << 31),
                     i32hi = (static_cast<__int128>(1) << 31) - 1;
      if (v < i32lo) v = i32lo;
      if (v > i32hi) v = i32hi;
    }
  }
  return static_cast<uint64_t>(v) & maskOf(bits);
}

uint64_t floatToInt(DType dst, const Exact& x, RoundMode rm, SatMode sat) {
  const __int128 huge = static_cast<__int128>(1) << 80;
  __int128 v = 0;
  switch (x.cls) {
  case Cls::NaN:
    return 0;
  case Cls::Zero:
    return 0;
  case Cls::Inf:
    v = x.neg ? -huge : huge;
    break;
  case Cls::Finite: {
    if (leadExp(x.mag, x.exp) >= 64) {
      v = x.neg ? -huge : huge;
      break;
    }
    Rem rem;
    uint64_t n = quantize(x.mag, x.exp, 0, rem);
    const bool up = roundUp(rm, x.neg, (n & 1) != 0, rem);
    v = static_cast<__int128>(n) + (up ? 1 : 0);
    if (x.neg) v = -v;
    break;
  }
  }
  return intResult(dst, v, sat, true);
}

Exact decodeExact(DType t, uint64_t bits) {
  if (isIntLike(t)) {
    const unsigned w = bitsOf(t);
    bits &= maskOf(w);
    if (isSigned(t) && w < 64 && ((bits >> (w - 1)) & 1)) bits |= ~maskOf(w); // sign-extend
    if (isSigned(t) && static_cast<int64_t>(bits) < 0) return fromInt(true, ~bits + 1);
    return fromInt(false, bits);
  }
  return fromDouble(decodeToDouble(t, bits));
}

uint64_t encodeExact(DType t, const Exact& x, RoundMode rm, SatMode sat, bool infSaturates) {
  if (const FloatFmt* f = monotoneFmt(t)) return encodeMonotone(*f, x, rm, sat, infSaturates);
  switch (t) {
  case DType::HIF8:
    return encodeHif8(x, rm, sat);
  case DType::E8M0:
    return encodeE8M0(x, rm, sat);
  default:
    return floatToInt(t, x, rm, sat);
  }
}

} // namespace

// ---------------------------------------------------------------- public API
double decodeToDouble(DType t, uint64_t bits) {
  if (const FloatFmt* f = monotoneFmt(t)) {
    if (t == DType::F64) return f64FromBits(bits);
    if (t == DType::F32) return static_cast<double>(f32FromBits(static_cast<uint32_t>(bits)));
    return decodeMonotone(*f, bits & maskOf(f->signBit + 1));
  }
  switch (t) {
  case DType::HIF8:
    return decodeHif8(bits);
  case DType::E8M0:
    return (bits & 0xFF) == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                                 : std::ldexp(1.0, static_cast<int>(bits & 0xFF) - 127);
  default: {
    const Exact x = decodeExact(t, bits);
    const double m = static_cast<double>(x.mag);
    return x.neg ? -m : m;
  }
  }
}

double maxFinite(DType t) {
  switch (t) {
  case DType::F64:
    return std::numeric_limits<double>::max();
  case DType::F32:
    return std::numeric_limits<float>::max();
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return 0x1.FEp127;
  case DType::F8E5M2:
    return 57344.0;
  case DType::F8E4M3:
    return 448.0;
  case DType::F4E2M1X2:
    return 6.0;
  case DType::F4E1M2X2:
    return 1.75;
  case DType::HIF8:
    return 32768.0;
  case DType::E8M0:
    return 0x1p127;
  default:
    return static_cast<double>(rangeOf(t).hi);
  }
}

RoundMode effectiveRoundMode(DType src, DType dst, RoundMode rm) {
  if (rm != RoundMode::CAST_NONE) return rm;
  if (isFloat(src) && isIntLike(dst)) return RoundMode::CAST_TRUNC; // vconv_*2s*z
  if (dst == DType::HIF8) return RoundMode::CAST_ROUND; // HiF8 is defined with ties away
  return RoundMode::CAST_RINT;
}

bool cvtSaturatesByDefault(DType src, DType dst) {
  using enum DType;
  const bool narrowing = (src == F16 && (dst == U8 || dst == I8 || dst == I16)) ||
                         (src == F32 && dst == I16) || (src == I64 && dst == I32) ||
                         (src == I32 && dst == I16);
  return !narrowing;
}

uint64_t encodeFromDouble(DType t, double v, RoundMode rm, SatMode sat) {
  rm = effectiveRoundMode(DType::F64, t, rm);
  return encodeExact(t, fromDouble(v), rm, sat, t != DType::F64);
}

uint64_t convert(DType src, DType dst, uint64_t srcBits, RoundMode rm, SatMode sat) {
  rm = effectiveRoundMode(src, dst, rm);
  const bool srcInt = isIntLike(src), dstInt = isIntLike(dst);
  const Exact x = decodeExact(src, srcBits);

  if (srcInt && dstInt) { // int -> int: widening exact; narrowing clamps (ON) or wraps (OFF)
    const __int128 v = x.neg ? -static_cast<__int128>(x.mag) : static_cast<__int128>(x.mag);
    return intResult(dst, v, sat, false);
  }

  if (src == dst) { // float -> same float: round to an integral value (f32 -> f32 "round only")
    if (x.cls != Cls::Finite || leadExp(x.mag, x.exp) >= 63) return srcBits; // already integral
    const Exact r = [&] {
      Rem rem;
      uint64_t n = quantize(x.mag, x.exp, 0, rem);
      if (roundUp(rm, x.neg, (n & 1) != 0, rem)) ++n;
      Exact y = fromInt(x.neg, n);
      y.neg = x.neg; // keep the sign of a zero result (-0.3 -> -0.0)
      return y;
    }();
    return encodeExact(dst, r, RoundMode::CAST_RINT, sat, false);
  }

  // Infinity saturates (sat ON) only where the destination's range is narrower than the
  // source's; widening conversions (f16 -> f32) are exact and keep it.
  const bool infSaturates = !srcInt && maxFinite(dst) < maxFinite(src);
  return encodeExact(dst, x, rm, sat, infSaturates);
}

Converter::Converter(DType src, DType dst, RoundMode rm, SatMode sat)
    : src_(src), dst_(dst), rm_(rm), sat_(sat) {
  const unsigned bits = bitWidth(src);
  if (bits <= 8) {
    useTable_ = true;
    const uint64_t mask = maskOf(bits);
    for (unsigned i = 0; i < 256; ++i)
      table_[i] = convert(src, dst, i & mask, rm, sat);
  }
}

} // namespace pto::isa
