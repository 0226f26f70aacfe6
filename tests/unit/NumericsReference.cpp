// The numerics reference (NumericsReference.h). It never calls the production code.
#include "NumericsReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace pto::numtest::ref {

using namespace pto::isa;

enum class Kind { Ieee, FiniteNaN /* e4m3fn */, NoSpecials /* fp4 */, Hif8, E8M0, F32, Int };

struct Fmt {
  Kind kind;
  int width;
  int ebits = 0, mbits = 0, bias = 0; // minifloats
  bool isSigned = true;               // ints
};

Fmt fmt(DType t) {
  switch (t) {
  case DType::F16:
    return {Kind::Ieee, 16, 5, 10, 15};
  case DType::BF16:
    return {Kind::Ieee, 16, 8, 7, 127};
  case DType::F8E5M2:
    return {Kind::Ieee, 8, 5, 2, 15};
  case DType::F8E4M3:
    return {Kind::FiniteNaN, 8, 4, 3, 7};
  case DType::F4E2M1X2:
    return {Kind::NoSpecials, 4, 2, 1, 1};
  case DType::F4E1M2X2:
    return {Kind::NoSpecials, 4, 1, 2, 1};
  case DType::HIF8:
    return {Kind::Hif8, 8};
  case DType::E8M0:
    return {Kind::E8M0, 8};
  case DType::F32:
    return {Kind::F32, 32};
  case DType::I4:
    return {Kind::Int, 4, 0, 0, 0, true};
  case DType::I8:
    return {Kind::Int, 8, 0, 0, 0, true};
  case DType::I16:
    return {Kind::Int, 16, 0, 0, 0, true};
  case DType::I32:
    return {Kind::Int, 32, 0, 0, 0, true};
  case DType::I64:
    return {Kind::Int, 64, 0, 0, 0, true};
  case DType::U8:
    return {Kind::Int, 8, 0, 0, 0, false};
  case DType::U16:
    return {Kind::Int, 16, 0, 0, 0, false};
  case DType::U32:
    return {Kind::Int, 32, 0, 0, 0, false};
  case DType::U64:
    return {Kind::Int, 64, 0, 0, 0, false};
  default:
    ADD_FAILURE() << "no reference format";
    return {Kind::Int, 8};
  }
}

LD pow2(int e) {
  return std::ldexp(1.0L, e);
}
const LD kNaN = std::numeric_limits<LD>::quiet_NaN();
const LD kInf = std::numeric_limits<LD>::infinity();

LD decodeHif8(uint32_t code) {
  std::string b;
  for (int i = 7; i >= 0; --i)
    b += ((code >> i) & 1) ? '1' : '0';
  const bool neg = b[0] == '1';
  const std::string r = b.substr(1);
  int dotLen, d;
  if (r.rfind("11", 0) == 0)
    dotLen = 2, d = 4;
  else if (r.rfind("10", 0) == 0)
    dotLen = 2, d = 3;
  else if (r.rfind("01", 0) == 0)
    dotLen = 2, d = 2;
  else if (r.rfind("001", 0) == 0)
    dotLen = 3, d = 1;
  else if (r.rfind("0001", 0) == 0)
    dotLen = 4, d = 0;
  else
    dotLen = 4, d = -1; // "0000": denormal
  const std::string rest = r.substr(dotLen);
  LD v;
  if (d < 0) {
    const int m = std::stoi(rest, nullptr, 2);
    if (m == 0) return neg ? kNaN : 0.0L;
    v = pow2(m - 23);
  } else {
    const std::string es = rest.substr(0, d), ms = rest.substr(d);
    int e = 0;
    if (d > 0) {
      const int mag = std::stoi("1" + es.substr(1), nullptr, 2);
      e = es[0] == '1' ? -mag : mag;
    }
    const LD frac =
        ms.empty() ? 0.0L : std::stoi(ms, nullptr, 2) / pow2(static_cast<int>(ms.size()));
    if (d == 4 && e == 15 && ms == "1")
      v = kInf;
    else
      v = (1.0L + frac) * pow2(e);
  }
  return neg ? -v : v;
}

LD decode(DType t, uint64_t code) {
  const Fmt f = fmt(t);
  switch (f.kind) {
  case Kind::F32:
    return static_cast<LD>(std::bit_cast<float>(static_cast<uint32_t>(code)));
  case Kind::Hif8:
    return decodeHif8(static_cast<uint32_t>(code));
  case Kind::E8M0:
    return code == 0xFF ? kNaN : pow2(static_cast<int>(code) - 127);
  case Kind::Int: {
    const LD span = std::ldexp(1.0L, f.width);
    LD v = static_cast<LD>(code);
    if (f.isSigned && v >= span / 2) v -= span;
    return v;
  }
  default:
    break;
  }
  const bool neg = (code >> (f.width - 1)) & 1;
  const uint64_t e = (code >> f.mbits) & ((1u << f.ebits) - 1);
  const uint64_t m = code & ((1u << f.mbits) - 1);
  const uint64_t eAll = (1u << f.ebits) - 1;
  LD v;
  if (f.kind == Kind::Ieee && e == eAll)
    v = m ? kNaN : kInf;
  else if (f.kind == Kind::FiniteNaN && e == eAll && m == (1u << f.mbits) - 1)
    v = kNaN;
  else if (e == 0)
    v = static_cast<LD>(m) / pow2(f.mbits) * pow2(1 - f.bias);
  else
    v = (1.0L + static_cast<LD>(m) / pow2(f.mbits)) * pow2(static_cast<int>(e) - f.bias);
  return neg ? -v : v;
}

// ------------------------------------------------ float targets

uint64_t signBitOf(DType t) {
  return uint64_t{1} << (fmt(t).width - 1);
}

const Table& table(DType t) {
  static std::array<std::unique_ptr<Table>, kNumDTypes> cache;
  std::unique_ptr<Table>& slot = cache[static_cast<unsigned>(t)];
  if (slot) return *slot;
  Table tb;
  const Fmt f = fmt(t);
  const uint64_t n = uint64_t{1} << f.width;
  for (uint64_t c = 0; c < n; ++c) {
    const LD v = decode(t, c);
    if (std::isnan(v) || std::isinf(v) || v < 0 || std::signbit(v)) continue;
    tb.pos.push_back({v, c, (c & 1) != 0, false});
  }
  std::sort(tb.pos.begin(), tb.pos.end(), [](const Cand& a, const Cand& b) { return a.v < b.v; });
  tb.maxC = tb.pos.back();
  const LD prev = tb.pos[tb.pos.size() - 2].v;
  // The next value the format would have with a larger exponent range (docs/numerics.md):
  // hif8 keeps 1 mantissa bit in the top binade, e8m0 is the next power of two.
  tb.hypNext = t == DType::HIF8   ? 49152.0L
               : t == DType::E8M0 ? pow2(128)
                                  : tb.maxC.v + (tb.maxC.v - prev);
  tb.hypOdd = !tb.maxC.odd;
  slot = std::make_unique<Table>(std::move(tb));
  return *slot;
}

bool towardZero(RoundMode rm, bool neg) {
  return rm == RoundMode::CAST_TRUNC || rm == RoundMode::CAST_ODD ||
         (rm == RoundMode::CAST_FLOOR && !neg) || (rm == RoundMode::CAST_CEIL && neg);
}

const Cand& choose(RoundMode rm, bool neg, LD a, const Cand& lo, const Cand& hi) {
  const LD mid = (lo.v + hi.v) / 2;
  switch (rm) {
  case RoundMode::CAST_RINT:
    return a < mid ? lo : a > mid ? hi : (lo.odd ? hi : lo);
  case RoundMode::CAST_ROUND:
    return a < mid ? lo : hi;
  case RoundMode::CAST_FLOOR:
    return neg ? hi : lo;
  case RoundMode::CAST_CEIL:
    return neg ? lo : hi;
  case RoundMode::CAST_TRUNC:
    return lo;
  case RoundMode::CAST_ODD:
    return lo.odd ? lo : hi;
  default:
    ADD_FAILURE();
    return lo;
  }
}

RoundMode resolve(DType src, DType dst, RoundMode rm) {
  if (rm != RoundMode::CAST_NONE) return rm;
  const bool srcFloat = fmt(src).kind != Kind::Int, dstInt = fmt(dst).kind == Kind::Int;
  if (srcFloat && dstInt) return RoundMode::CAST_TRUNC;
  if (dst == DType::HIF8) return RoundMode::CAST_ROUND;
  return RoundMode::CAST_RINT;
}

uint64_t nanCode(DType t, bool neg) {
  switch (t) {
  case DType::F32:
    return neg ? 0xFFC00000u : 0x7FC00000u;
  case DType::F16:
    return neg ? 0xFE00 : 0x7E00;
  case DType::BF16:
    return neg ? 0xFFC0 : 0x7FC0;
  case DType::F8E5M2:
    return neg ? 0xFE : 0x7E;
  case DType::F8E4M3:
    return neg ? 0xFF : 0x7F;
  case DType::HIF8:
    return 0x80;
  case DType::E8M0:
    return 0xFF;
  default:
    return 0; // fp4: no NaN, gives +0
  }
}

bool hasInf(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F8E5M2 ||
         t == DType::HIF8;
}

uint64_t infCode(DType t) {
  switch (t) {
  case DType::F32:
    return 0x7F800000u;
  case DType::F16:
    return 0x7C00;
  case DType::BF16:
    return 0x7F80;
  case DType::F8E5M2:
    return 0x7C;
  case DType::HIF8:
    return 0x6F;
  default:
    return 0;
  }
}

LD maxOf(DType t);

uint64_t applySign(DType t, bool neg, uint64_t mag) {
  if (!neg) return mag;
  if (t == DType::HIF8) return mag == 0 ? 0 : mag | 0x80;
  return mag | signBitOf(t);
}

// f32 neighbours by long double ulp arithmetic (no table: 2^32 codes).
void f32Neighbours(LD a, Cand& lo, Cand& hi) {
  const int e = std::ilogb(a);
  const int q = std::max(e, -126) - 23;
  const LD ulp = pow2(q);
  const LD n = std::floor(a / ulp);
  auto mk = [&](LD k) {
    Cand c;
    c.v = k * ulp;
    c.odd = std::fmod(k, 2.0L) != 0;
    c.hyp = c.v >= pow2(128);
    c.code = c.hyp ? 0 : std::bit_cast<uint32_t>(static_cast<float>(c.v));
    return c;
  };
  lo = mk(n);
  hi = mk(n + 1);
}

// Expected bits of x rounded into float format t.
uint64_t encodeFloat(DType t, LD x, RoundMode rm, SatMode sat, bool infSaturates) {
  const bool neg = std::signbit(x);
  if (std::isnan(x)) return nanCode(t, neg);
  const bool isF32 = t == DType::F32;
  const uint64_t maxMag = isF32 ? 0x7F7FFFFFu : table(t).maxC.code;
  auto overflow = [&]() -> uint64_t {
    if (t == DType::E8M0) return (towardZero(rm, neg) || sat == SatMode::ON) ? 0xFE : 0xFF;
    if (towardZero(rm, neg) || sat == SatMode::ON) return applySign(t, neg, maxMag);
    if (hasInf(t)) return applySign(t, neg, infCode(t));
    if (t == DType::F8E4M3) return nanCode(t, neg);
    return applySign(t, neg, maxMag);
  };
  const LD a = std::fabs(x);
  if (t == DType::E8M0) {
    if (a == 0) return 0x00;
    if (neg) return 0xFF;
    if (std::isinf(a)) return sat == SatMode::ON ? 0xFE : 0xFF;
    if (a < pow2(-127)) return 0x00;
  }
  if (std::isinf(a)) {
    if (t == DType::HIF8) return applySign(t, neg, sat == SatMode::ON ? 0x6E : 0x6F);
    if (hasInf(t) && !(sat == SatMode::ON && infSaturates)) return applySign(t, neg, infCode(t));
    if (sat == SatMode::ON || t != DType::F8E4M3) return applySign(t, neg, maxMag);
    return nanCode(t, neg);
  }
  if (a == 0) return applySign(t, neg, 0);
  Cand lo, hi;
  if (isF32) {
    if (a >= pow2(128)) return overflow();
    f32Neighbours(a, lo, hi);
    if (lo.v == a) return applySign(t, neg, lo.code);
  } else {
    const Table& tb = table(t);
    if (a >= tb.hypNext) return overflow();
    auto it = std::upper_bound(tb.pos.begin(), tb.pos.end(), a,
                               [](LD v, const Cand& c) { return v < c.v; });
    lo = *(it - 1);
    if (lo.v == a) return applySign(t, neg, lo.code);
    hi = it == tb.pos.end() ? Cand{tb.hypNext, 0, tb.hypOdd, true} : *it;
  }
  const Cand& c = choose(rm, neg, a, lo, hi);
  if (c.hyp) return overflow();
  return applySign(t, neg, c.code);
}

// Expected integer for x converted into integer format t.
LD toInt(DType t, LD x, RoundMode rm, SatMode sat) {
  const Fmt f = fmt(t);
  const LD lo = f.isSigned ? -pow2(f.width - 1) : 0.0L;
  const LD hi = f.isSigned ? pow2(f.width - 1) - 1 : pow2(f.width) - 1;
  if (std::isnan(x)) return 0;
  LD r;
  if (std::isinf(x)) {
    r = x;
  } else {
    const LD fl = std::floor(x), frac = x - fl;
    const bool flEven = std::fmod(fl, 2.0L) == 0;
    switch (rm) {
    case RoundMode::CAST_RINT:
      r = frac > 0.5L ? fl + 1 : frac < 0.5L ? fl : (flEven ? fl : fl + 1);
      break;
    case RoundMode::CAST_ROUND:
      r = x >= 0 ? (frac >= 0.5L ? fl + 1 : fl) : (frac > 0.5L ? fl + 1 : fl);
      break;
    case RoundMode::CAST_FLOOR:
      r = fl;
      break;
    case RoundMode::CAST_CEIL:
      r = frac > 0 ? fl + 1 : fl;
      break;
    case RoundMode::CAST_TRUNC:
      r = (x < 0 && frac > 0) ? fl + 1 : fl;
      break;
    case RoundMode::CAST_ODD:
      r = frac == 0 ? fl : (flEven ? fl + 1 : fl);
      break;
    default:
      ADD_FAILURE();
      r = 0;
    }
  }
  if (sat == SatMode::ON || f.width >= 32) return std::clamp(r, lo, hi);
  // OFF, narrow target: saturate to int32, keep the low bits.
  r = std::clamp(r, -pow2(31), pow2(31) - 1);
  const LD span = pow2(f.width);
  LD w = std::fmod(r, span);
  if (w < 0) w += span;
  if (f.isSigned && w >= span / 2) w -= span;
  return w;
}

LD maxOf(DType t) {
  const Fmt f = fmt(t);
  if (f.kind == Kind::F32) return static_cast<LD>(std::numeric_limits<float>::max());
  if (f.kind == Kind::Int) return f.isSigned ? pow2(f.width - 1) - 1 : pow2(f.width) - 1;
  return table(t).maxC.v;
}

// x = decode(src, c), computed once by the caller.
Expect convert(DType src, DType dst, uint64_t c, LD x, RoundMode rm0, SatMode sat) {
  const RoundMode rm = resolve(src, dst, rm0);
  const Fmt fd = fmt(dst), fs = fmt(src);
  if (fd.kind == Kind::Int) {
    if (fs.kind == Kind::Int) { // int -> int: clamp (ON) or wrap (OFF)
      if (sat == SatMode::ON)
        return {true, 0, std::clamp(x, fd.isSigned ? -pow2(fd.width - 1) : 0.0L, maxOf(dst))};
      const LD span = pow2(fd.width);
      LD w = std::fmod(x, span);
      if (w < 0) w += span;
      if (fd.isSigned && w >= span / 2) w -= span;
      return {true, 0, w};
    }
    return {true, 0, toInt(dst, x, rm, sat)};
  }
  if (src == dst) { // round to integral
    if (std::isnan(x) || std::isinf(x)) return {false, c, 0};
    LD r = toInt(DType::I64, x, rm, SatMode::ON);
    if (std::fabs(x) >= pow2(62)) r = x;
    return {false, encodeFloat(dst, std::copysign(r, x), RoundMode::CAST_RINT, sat, false), 0};
  }
  const bool infSat = fs.kind != Kind::Int && maxOf(dst) < maxOf(src);
  return {false, encodeFloat(dst, x, rm, sat, infSat), 0};
}

} // namespace pto::numtest::ref
