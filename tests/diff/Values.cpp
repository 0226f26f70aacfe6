// Scalar semantics of the generated programs, written from the MLIR arith definitions:
// integers wrap modulo 2^width; divisions truncate (divsi/divui/remsi/remui), round up
// (ceildiv*) or down (floordivsi), and are undefined for a zero divisor and for the signed
// overflow INT_MIN / -1; shifts are undefined for an amount >= the width. Floats are IEEE-754:
// each op is the exact result rounded once to nearest even to the type (computed in double and
// rounded by hand: double has >= 2p+2 bits for f32, f16 and bf16, so the double rounding is
// innocuous); fptosi/fptoui truncate toward zero and saturate, NaN -> 0.
#include "tests/diff/Kernel.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace pto::diff {

const char* tyName(Ty t) {
  switch (t) {
  case Ty::I1:
    return "i1";
  case Ty::I32:
    return "i32";
  case Ty::I64:
    return "i64";
  case Ty::Index:
    return "index";
  case Ty::F16:
    return "f16";
  case Ty::BF16:
    return "bf16";
  case Ty::F32:
    return "f32";
  }
  return "?";
}

unsigned bitWidth(Ty t) {
  switch (t) {
  case Ty::I1:
    return 1;
  case Ty::I32:
    return 32;
  case Ty::I64:
    return 64;
  case Ty::Index:
    return 64;
  case Ty::F16:
    return 16;
  case Ty::BF16:
    return 16;
  case Ty::F32:
    return 32;
  }
  return 64;
}

bool isFloat(Ty t) {
  return t == Ty::F16 || t == Ty::BF16 || t == Ty::F32;
}
bool isInt(Ty t) {
  return t == Ty::I32 || t == Ty::I64 || t == Ty::Index;
}

namespace sem {

uint64_t mask(Ty t, uint64_t v) {
  const unsigned w = bitWidth(t);
  return w == 64 ? v : (v & ((uint64_t{1} << w) - 1));
}

int64_t sext(Ty t, uint64_t v) {
  const unsigned w = bitWidth(t);
  if (w == 64) return int64_t(v);
  const uint64_t m = uint64_t{1} << (w - 1);
  v = mask(t, v);
  return int64_t((v ^ m) - m);
}

namespace {

int64_t minSigned(unsigned w) {
  return w == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1));
}
int64_t maxSigned(unsigned w) {
  return w == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (w - 1)) - 1;
}
uint64_t maxUnsigned(unsigned w) {
  return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// The format of a float type: significand bits after the point, exponent bits.
struct Fmt {
  int mant, exp;
};
Fmt fmtOf(Ty t) {
  switch (t) {
  case Ty::F16:
    return {10, 5};
  case Ty::BF16:
    return {7, 8};
  default:
    return {23, 8};
  }
}

} // namespace

bool intBinary(const std::string& op, Ty t, uint64_t a, uint64_t b, uint64_t& out) {
  const unsigned w = bitWidth(t);
  a = mask(t, a);
  b = mask(t, b);
  const int64_t sa = sext(t, a), sb = sext(t, b);
  const bool sdivOverflow = sa == minSigned(w) && sb == -1;
  uint64_t r = 0;
  if (op == "addi")
    r = a + b;
  else if (op == "subi")
    r = a - b;
  else if (op == "muli")
    r = a * b;
  else if (op == "andi")
    r = a & b;
  else if (op == "ori")
    r = a | b;
  else if (op == "xori")
    r = a ^ b;
  else if (op == "minsi")
    r = uint64_t(sa < sb ? sa : sb);
  else if (op == "maxsi")
    r = uint64_t(sa > sb ? sa : sb);
  else if (op == "minui")
    r = a < b ? a : b;
  else if (op == "maxui")
    r = a > b ? a : b;
  else if (op == "shli" || op == "shrsi" || op == "shrui") {
    if (b >= w) return false;
    if (op == "shli")
      r = a << b;
    else if (op == "shrui")
      r = a >> b;
    else
      r = uint64_t(sa >> b);
  } else if (op == "divui" || op == "remui" || op == "ceildivui") {
    if (b == 0) return false;
    if (op == "divui")
      r = a / b;
    else if (op == "remui")
      r = a % b;
    else
      r = a / b + (a % b != 0 ? 1 : 0);
  } else if (op == "divsi" || op == "remsi" || op == "ceildivsi" || op == "floordivsi") {
    if (b == 0 || sdivOverflow) return false;
    const int64_t q = sa / sb, rem = sa % sb;
    if (op == "divsi")
      r = uint64_t(q);
    else if (op == "remsi")
      r = uint64_t(rem);
    else if (op == "ceildivsi")
      r = uint64_t(q + ((rem != 0 && ((rem > 0) == (sb > 0))) ? 1 : 0));
    else
      r = uint64_t(q - ((rem != 0 && ((rem < 0) != (sb < 0))) ? 1 : 0));
  } else {
    return false;
  }
  out = mask(t, r);
  return true;
}

bool intCmp(const std::string& p, Ty t, uint64_t a, uint64_t b) {
  a = mask(t, a);
  b = mask(t, b);
  const int64_t sa = sext(t, a), sb = sext(t, b);
  if (p == "eq") return a == b;
  if (p == "ne") return a != b;
  if (p == "slt") return sa < sb;
  if (p == "sle") return sa <= sb;
  if (p == "sgt") return sa > sb;
  if (p == "sge") return sa >= sb;
  if (p == "ult") return a < b;
  if (p == "ule") return a <= b;
  if (p == "ugt") return a > b;
  return a >= b; // uge
}

bool isNaN(Ty t, uint64_t bits) {
  const Fmt f = fmtOf(t);
  const uint64_t expMask = ((uint64_t{1} << f.exp) - 1) << f.mant;
  const uint64_t mantMask = (uint64_t{1} << f.mant) - 1;
  return (bits & expMask) == expMask && (bits & mantMask) != 0;
}

double toDouble(Ty t, uint64_t bits) {
  const Fmt f = fmtOf(t);
  const bool neg = (bits >> (f.mant + f.exp)) & 1;
  const int e = int((bits >> f.mant) & ((uint64_t{1} << f.exp) - 1));
  const uint64_t m = bits & ((uint64_t{1} << f.mant) - 1);
  const int bias = (1 << (f.exp - 1)) - 1;
  double v;
  if (e == (1 << f.exp) - 1)
    v = m ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (e == 0)
    v = std::ldexp(double(m), 1 - bias - f.mant);
  else
    v = std::ldexp(double(m | (uint64_t{1} << f.mant)), e - bias - f.mant);
  return neg ? -v : v;
}

uint64_t fromDouble(Ty t, double v) {
  const Fmt f = fmtOf(t);
  const uint64_t sign = uint64_t(std::signbit(v) ? 1 : 0) << (f.mant + f.exp);
  const uint64_t expAll = (uint64_t{1} << f.exp) - 1;
  if (std::isnan(v)) return (expAll << f.mant) | (uint64_t{1} << (f.mant - 1)); // quiet NaN
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | (expAll << f.mant);
  if (a == 0) return sign;
  const int bias = (1 << (f.exp - 1)) - 1;
  const int emin = 1 - bias, emax = bias;
  int e2 = 0;
  (void)std::frexp(a, &e2); // a = m * 2^e2, m in [0.5, 1)
  int E = e2 - 1;           // a = 1.x * 2^E
  const bool sub = E < emin;
  const int qexp = (sub ? emin : E) - f.mant; // the value of one unit in the last place
  const double q = std::ldexp(a, -qexp);      // exact (a power-of-two scaling in range)
  double r = std::nearbyint(q);               // round half to even (default rounding mode)
  const double one = std::ldexp(1.0, f.mant);
  if (sub) return sign | uint64_t(r); // r == 2^mant is the smallest normal, encoded alike
  if (r >= 2 * one) {
    r = one;
    ++E;
  }
  if (E > emax) return sign | (expAll << f.mant);
  return sign | (uint64_t(E + bias) << f.mant) | (uint64_t(r) - uint64_t(one));
}

uint64_t floatNeg(Ty t, uint64_t a) {
  return a ^ (uint64_t{1} << (bitWidth(t) - 1));
}

uint64_t floatBinary(const std::string& op, Ty t, uint64_t a, uint64_t b) {
  const double x = toDouble(t, a), y = toDouble(t, b);
  const bool nx = std::isnan(x), ny = std::isnan(y);
  const auto nan = [&] { return fromDouble(t, std::numeric_limits<double>::quiet_NaN()); };
  if (op == "addf") return fromDouble(t, x + y);
  if (op == "subf") return fromDouble(t, x - y);
  if (op == "mulf") return fromDouble(t, x * y);
  if (op == "divf") return fromDouble(t, x / y);
  // maximumf/minimumf: NaN if either is NaN, -0 < +0. maxnumf/minnumf: the other operand if
  // one is NaN; zeros ordered -0 < +0 as IEEE 754-2019 maximumNumber/minimumNumber.
  const bool isMax = op == "maximumf" || op == "maxnumf";
  if (op == "maximumf" || op == "minimumf") {
    if (nx || ny) return nan();
  } else {
    if (nx && ny) return nan();
    if (nx) return b;
    if (ny) return a;
  }
  if (x == y) {
    if (x == 0) {
      const bool negA = std::signbit(x);
      if (isMax) return negA ? b : a;
      return negA ? a : b;
    }
    return a;
  }
  return (isMax ? x > y : x < y) ? a : b;
}

bool floatCmp(const std::string& p, Ty t, uint64_t a, uint64_t b) {
  const double x = toDouble(t, a), y = toDouble(t, b);
  const bool uno = std::isnan(x) || std::isnan(y);
  if (p == "false") return false;
  if (p == "true") return true;
  if (p == "ord") return !uno;
  if (p == "uno") return uno;
  const bool unordered = p[0] == 'u';
  if (uno) return unordered;
  const std::string rel = p.substr(1);
  if (rel == "eq") return x == y;
  if (rel == "ne") return x != y;
  if (rel == "lt") return x < y;
  if (rel == "le") return x <= y;
  if (rel == "gt") return x > y;
  return x >= y; // ge
}

namespace {

// An integer (given as sign and 64-bit magnitude) rounded once to nearest even to `t`.
uint64_t intToFloat(Ty t, bool neg, uint64_t mag) {
  if (mag == 0) return 0;
  const int p = fmtOf(t).mant + 1; // significand bits
  const int msb = 63 - std::countl_zero(mag);
  if (msb >= p) {
    const int drop = msb + 1 - p;
    const uint64_t kept = mag >> drop, rest = mag & ((uint64_t{1} << drop) - 1);
    const uint64_t half = uint64_t{1} << (drop - 1);
    uint64_t k = kept;
    if (rest > half || (rest == half && (kept & 1))) ++k;
    const double v = std::ldexp(double(k), drop); // exact: k has at most p+1 bits
    return fromDouble(t, neg ? -v : v);
  }
  const double v = double(mag);
  return fromDouble(t, neg ? -v : v);
}

} // namespace

bool cast(const std::string& op, Ty from, Ty to, uint64_t a, uint64_t& out) {
  const unsigned wf = bitWidth(from), wt = bitWidth(to);
  a = mask(from, a);
  if (op == "index_cast" || op == "extsi" || op == "trunci") {
    out = mask(to, uint64_t(sext(from, a)));
  } else if (op == "index_castui" || op == "extui") {
    out = mask(to, a);
  } else if (op == "bitcast") {
    if (wf != wt) return false;
    out = a;
  } else if (op == "sitofp") {
    const int64_t s = sext(from, a);
    out = intToFloat(to, s < 0, s < 0 ? uint64_t(0) - uint64_t(s) : uint64_t(s));
  } else if (op == "uitofp") {
    out = intToFloat(to, false, a);
  } else if (op == "fptosi" || op == "fptoui") {
    const double v = std::trunc(toDouble(from, a));
    if (std::isnan(v))
      out = 0;
    else if (op == "fptosi") {
      const double lim = std::ldexp(1.0, int(wt) - 1);
      if (v >= lim)
        out = mask(to, uint64_t(maxSigned(wt)));
      else if (v < -lim)
        out = mask(to, uint64_t(minSigned(wt)));
      else
        out = mask(to, uint64_t(int64_t(v)));
    } else {
      if (v <= 0)
        out = 0;
      else if (v >= std::ldexp(1.0, int(wt)))
        out = maxUnsigned(wt);
      else
        out = uint64_t(v);
    }
  } else if (op == "extf" || op == "truncf") {
    out = fromDouble(to, toDouble(from, a));
  } else {
    return false;
  }
  return true;
}

} // namespace sem
} // namespace pto::diff
