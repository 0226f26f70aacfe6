// Numerics: exhaustive decode/encode/convert tests against a reference written differently
// from isa/Numerics.cpp. The reference below never calls the production code: it decodes
// from the format definitions in long double (hif8 by parsing the bit string), encodes by
// enumerating every representable value and searching for the neighbours (or, for f32, by
// long double ulp arithmetic), and rounds to integers with floorl.
#include "isa/Numerics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace pto::isa;
using LD = long double;

namespace {

constexpr RoundMode kModes[] = {RoundMode::CAST_NONE,  RoundMode::CAST_RINT, RoundMode::CAST_ROUND,
                                RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL, RoundMode::CAST_TRUNC,
                                RoundMode::CAST_ODD};
constexpr SatMode kSats[] = {SatMode::ON, SatMode::OFF};

// ============================================================ reference
namespace ref {

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
struct Cand {
  LD v;
  uint64_t code; // magnitude code
  bool odd;
  bool hyp; // the value just past the largest finite one (overflow if chosen)
};

struct Table {
  std::vector<Cand> pos; // finite values >= 0, ascending
  Cand maxC;
  LD hypNext;
  bool hypOdd;
};

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

// The expected result of TCVT src -> dst on src code c.
struct Expect {
  bool isInt;
  uint64_t bits; // float targets
  LD value;      // integer targets
};

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

} // namespace ref

std::string name(RoundMode rm, SatMode s) {
  return std::string(spelling(rm)) + "/" + std::string(spelling(s));
}

// Compares production against the reference for one (src, dst) pair over the given codes.
// Returns the number of conversions checked.
size_t checkPair(DType src, DType dst, const std::vector<uint64_t>& codes) {
  size_t n = 0, failures = 0;
  const unsigned dw = bitWidth(dst);
  std::vector<LD> xs;
  for (uint64_t c : codes)
    xs.push_back(ref::decode(src, c));
  for (RoundMode rm : kModes) {
    for (SatMode sat : kSats) {
      const Converter conv(src, dst, rm, sat);
      for (size_t i = 0; i < codes.size(); ++i) {
        const uint64_t c = codes[i];
        const uint64_t got = conv(c);
        const ref::Expect e = ref::convert(src, dst, c, xs[i], rm, sat);
        bool ok;
        if (e.isInt)
          ok = ref::decode(dst, got) == e.value && (dw >= 64 || (got >> dw) == 0);
        else
          ok = got == e.bits;
        ++n;
        if (!ok && ++failures <= 8) {
          ADD_FAILURE() << spelling(src) << " -> " << spelling(dst) << " " << name(rm, sat)
                        << " src 0x" << std::hex << c << " (" << static_cast<double>(xs[i])
                        << ") got 0x" << got << " want "
                        << (e.isInt ? std::to_string(static_cast<double>(e.value)) : "0x" + [&] {
                             char b[32];
                             snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(e.bits));
                             return std::string(b);
                           }());
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u) << spelling(src) << " -> " << spelling(dst);
  return n;
}

std::vector<uint64_t> allCodes(unsigned bits) {
  std::vector<uint64_t> v(size_t{1} << bits);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

// f32 test inputs for target t: every value of t, every midpoint, their f32 neighbours, both
// signs, plus zeros, infinities, NaN and values past the top.
std::vector<uint64_t> f32InputsFor(DType t) {
  const ref::Table& tb = ref::table(t);
  std::vector<float> xs;
  auto addAround = [&](LD v) {
    const float f = static_cast<float>(v);
    if (static_cast<LD>(f) != v) return; // not an f32 (cannot happen for these formats)
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)})
      xs.push_back(g), xs.push_back(-g);
  };
  for (size_t i = 0; i < tb.pos.size(); ++i) {
    addAround(tb.pos[i].v);
    const LD next = i + 1 < tb.pos.size() ? tb.pos[i + 1].v : tb.hypNext;
    addAround((tb.pos[i].v + next) / 2);
  }
  addAround(tb.hypNext);
  addAround(tb.hypNext * 4);
  for (float f : {0.0f, INFINITY, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min()})
    xs.push_back(f), xs.push_back(-f);
  std::vector<uint64_t> codes;
  for (float f : xs)
    codes.push_back(f32Bits(f));
  codes.push_back(0x7FC00000u);
  codes.push_back(0xFFC00001u);
  codes.push_back(0x7F800001u);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  return codes;
}

// Structured + pseudo-random 32/64-bit source codes.
std::vector<uint64_t> sampleCodes(DType src, size_t count) {
  std::vector<uint64_t> v;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(src);
  auto rnd = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  const unsigned w = bitWidth(src);
  const uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  for (size_t i = 0; i < count; ++i) {
    uint64_t r = rnd();
    if (src != DType::F32) r >>= (rnd() % 64); // small and large magnitudes for integers
    if (src != DType::F32 && (rnd() & 1)) r = ~r;
    v.push_back(r & mask);
  }
  if (src == DType::F32) { // every exponent with edge mantissas, and halves
    for (uint32_t e = 0; e < 256; ++e)
      for (uint32_t m : {0u, 1u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFFu, 0x1000u, 0xFFFu})
        for (uint32_t sgn : {0u, 1u})
          v.push_back((sgn << 31) | (e << 23) | m);
    for (int k = -3000; k <= 3000; ++k) {
      v.push_back(f32Bits(static_cast<float>(k) / 2)); // integers and ties
      v.push_back(f32Bits(static_cast<float>(k) / 4));
    }
    for (double d :
         {2147483647.0, 2147483648.0, -2147483648.0, -2147483904.0, 3e9, -3e9, 9.3e18, -9.3e18,
          1e30, 32767.5, -32768.5, 127.5, -128.5, 255.5, -0.5, 0.5, 65504.0, 65519.99, 65520.0})
      v.push_back(f32Bits(static_cast<float>(d)));
  } else {
    for (int64_t k = -3000; k <= 3000; ++k)
      v.push_back(static_cast<uint64_t>(k) & mask);
    for (int sh = 0; sh < static_cast<int>(w); ++sh)
      for (int64_t d = -3; d <= 3; ++d)
        v.push_back(((uint64_t{1} << sh) + static_cast<uint64_t>(d)) & mask);
    for (uint64_t x : {uint64_t{0x7FFFFFFFFFFFFFFFull}, uint64_t{0x8000000000000000ull},
                       uint64_t{0xFFFFFFFFull}, uint64_t{0x80000000ull}, uint64_t{0x7FFFFFFFull}})
      v.push_back(x & mask);
  }
  return v;
}

// Every (src, dst) pair of the TCVT table on either arch.
std::vector<std::pair<DType, DType>> tcvtPairs() {
  std::vector<std::pair<DType, DType>> pairs;
  for (unsigned s = 0; s < kNumDTypes; ++s)
    for (unsigned d = 0; d < kNumDTypes; ++d) {
      const DType src = static_cast<DType>(s), dst = static_cast<DType>(d);
      if (cvtSupported(Arch::A2A3, src, dst) || cvtSupported(Arch::A5, src, dst))
        pairs.push_back({src, dst});
    }
  return pairs;
}

} // namespace

// ============================================================ decode
TEST(NumericsDecode, EveryCodeOfEvery4To16BitFormat) {
  const DType types[] = {DType::F16,  DType::BF16,     DType::F8E4M3,   DType::F8E5M2, DType::HIF8,
                         DType::E8M0, DType::F4E2M1X2, DType::F4E1M2X2, DType::I4,     DType::I8,
                         DType::U8,   DType::I16,      DType::U16};
  size_t checked = 0;
  for (DType t : types) {
    const unsigned w = bitWidth(t);
    size_t bad = 0;
    for (uint64_t c = 0; c < (uint64_t{1} << w); ++c) {
      const double got = decodeToDouble(t, c);
      const LD want = ref::decode(t, c);
      const bool ok = std::isnan(want) ? std::isnan(got)
                                       : (static_cast<LD>(got) == want &&
                                          std::signbit(got) == std::signbit(want));
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << spelling(t) << " code 0x" << std::hex << c << " got " << got << " want "
                      << static_cast<double>(want);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u * 65536 + 4 * 256 + 3 * 16 + 2 * 256 + 2 * 65536);
}

TEST(NumericsDecode, SpecialValues) {
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::F8E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::F8E4M3, 0xFF)));
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x80), 0.0);
  EXPECT_TRUE(std::signbit(decodeToDouble(DType::F8E4M3, 0x80)));
  EXPECT_EQ(decodeToDouble(DType::F8E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decodeToDouble(DType::F8E5M2, 0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::F8E5M2, 0x7C)));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x6E), 32768.0);
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::HIF8, 0x6F)));
  EXPECT_TRUE(std::isinf(decodeToDouble(DType::HIF8, 0xEF)) &&
              decodeToDouble(DType::HIF8, 0xEF) < 0);
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::HIF8, 0x80)));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x01), std::ldexp(1.0, -22));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x07), std::ldexp(1.0, -16));
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x08), 1.0);
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x14), 3.0);
  EXPECT_EQ(decodeToDouble(DType::HIF8, 0x7E), std::ldexp(1.0, -15));
  EXPECT_EQ(decodeToDouble(DType::E8M0, 0x7F), 1.0);
  EXPECT_EQ(decodeToDouble(DType::E8M0, 0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(decodeToDouble(DType::E8M0, 0xFF)));
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0x7), 6.0);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0x1), 0.5);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, 0xF), -6.0);
  EXPECT_EQ(decodeToDouble(DType::F4E1M2X2, 0x7), 1.75);
  EXPECT_EQ(decodeToDouble(DType::F4E1M2X2, 0x1), 0.25);
  EXPECT_EQ(decodeToDouble(DType::I4, 0x8), -8.0);
  EXPECT_EQ(decodeToDouble(DType::I4, 0x7), 7.0);
  EXPECT_EQ(maxFinite(DType::F16), 65504.0);
  EXPECT_EQ(maxFinite(DType::HIF8), 32768.0);
}

// ============================================================ encode (f32 -> 8/16-bit float
// formats)
TEST(NumericsEncode, EveryValueMidpointAndNeighbourEveryModeAndSaturation) {
  const DType types[] = {DType::F16,  DType::BF16, DType::F8E4M3,   DType::F8E5M2,
                         DType::HIF8, DType::E8M0, DType::F4E2M1X2, DType::F4E1M2X2};
  size_t total = 0;
  for (DType t : types)
    total += checkPair(DType::F32, t, f32InputsFor(t));
  EXPECT_GT(total, 10'000'000u);
  RecordProperty("conversions", static_cast<int>(total));
}

TEST(NumericsEncode, FromDoubleMatchesF32PathOnF32Values) {
  for (DType t : {DType::F16, DType::HIF8, DType::F8E4M3, DType::E8M0})
    for (uint64_t c : f32InputsFor(t))
      for (RoundMode rm : kModes)
        for (SatMode s : kSats) {
          const double d = static_cast<double>(f32FromBits(static_cast<uint32_t>(c)));
          ASSERT_EQ(encodeFromDouble(t, d, rm, s), convert(DType::F32, t, c, rm, s))
              << spelling(t) << " " << d << " " << name(rm, s);
        }
}

// ============================================================ convert: the TCVT table
TEST(NumericsConvert, Exhaustive4To16BitSourcesOfTheTcvtTable) {
  size_t total = 0, pairs = 0;
  for (auto [src, dst] : tcvtPairs()) {
    if (bitWidth(src) > 16 || src == dst) continue;
    total += checkPair(src, dst, allCodes(bitWidth(src)));
    ++pairs;
  }
  EXPECT_EQ(pairs, 28u); // f16: 7, bf16: 5, i16: 5, u8: 2, i8: 3, i4, e4m3, e5m2, hif8, e1m2, e2m1
  RecordProperty("conversions", static_cast<int>(total));
}

TEST(NumericsConvert, Sampled32And64BitSourcesOfTheTcvtTable) {
  size_t pairs = 0;
  for (auto [src, dst] : tcvtPairs()) {
    if (bitWidth(src) <= 16) continue;
    checkPair(src, dst, sampleCodes(src, 15000));
    ++pairs;
  }
  EXPECT_EQ(pairs, 20u); // f32: 9, i32: 6, i64: 2, u32: 3
}

// ============================================================ targeted
TEST(NumericsTargeted, F32ToIntSaturation) {
  auto cv = [](float f, DType d, SatMode s, RoundMode rm = RoundMode::CAST_RINT) {
    return static_cast<int64_t>(ref::decode(d, convert(DType::F32, d, f32Bits(f), rm, s)));
  };
  EXPECT_EQ(cv(300.0f, DType::I8, SatMode::ON), 127);
  EXPECT_EQ(cv(-300.0f, DType::I8, SatMode::ON), -128);
  EXPECT_EQ(cv(300.0f, DType::I8, SatMode::OFF), 44); // reference 3.6: bit masking
  EXPECT_EQ(cv(40000.0f, DType::I16, SatMode::ON), 32767);
  EXPECT_EQ(cv(40000.0f, DType::I16, SatMode::OFF), 40000 - 65536);
  EXPECT_EQ(cv(1e10f, DType::I16, SatMode::OFF),
            -1); // saturates to INT32_MAX first, then low 16 bits
  EXPECT_EQ(cv(3e9f, DType::I32, SatMode::ON), 2147483647); // pto-isa CPU sim gives INT_MIN here
  EXPECT_EQ(cv(3e9f, DType::I32, SatMode::OFF), 2147483647);
  EXPECT_EQ(cv(-3e9f, DType::I32, SatMode::ON), -2147483647 - 1);
  EXPECT_EQ(cv(INFINITY, DType::I32, SatMode::ON), 2147483647);
  EXPECT_EQ(cv(-INFINITY, DType::I16, SatMode::ON), -32768);
  EXPECT_EQ(cv(NAN, DType::I32, SatMode::ON), 0);
  EXPECT_EQ(cv(NAN, DType::I8, SatMode::OFF), 0);
  EXPECT_EQ(cv(2.5f, DType::I32, SatMode::ON, RoundMode::CAST_NONE),
            2); // NONE = truncation for float -> int
  EXPECT_EQ(cv(-2.5f, DType::I32, SatMode::ON, RoundMode::CAST_ROUND), -3);
  EXPECT_EQ(cv(2.5f, DType::I32, SatMode::ON, RoundMode::CAST_RINT), 2);
  EXPECT_EQ(cv(2.25f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), 3);
  EXPECT_EQ(cv(3.75f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), 3);
  EXPECT_EQ(cv(-0.5f, DType::I32, SatMode::ON, RoundMode::CAST_ODD), -1);
  // Default saturation per pair (reference 3.6).
  EXPECT_EQ(static_cast<int16_t>(
                convert(DType::F32, DType::I16, f32Bits(40000.0f), RoundMode::CAST_RINT)),
            -25536);
  EXPECT_EQ(
      static_cast<int32_t>(convert(DType::F32, DType::I32, f32Bits(3e9f), RoundMode::CAST_RINT)),
      2147483647);
  EXPECT_EQ(
      static_cast<int8_t>(convert(DType::F16, DType::I8, 0x5CB0 /* 300 */, RoundMode::CAST_RINT)),
      44);
  EXPECT_EQ(convert(DType::F16, DType::U8, 0xBC00 /* -1 */, RoundMode::CAST_RINT), 255u);
  EXPECT_EQ(convert(DType::F16, DType::U8, 0xBC00, RoundMode::CAST_RINT, SatMode::ON), 0u);
  EXPECT_EQ(
      static_cast<int32_t>(convert(DType::I64, DType::I32, 0x100000005ull, RoundMode::CAST_NONE)),
      5);
  EXPECT_EQ(static_cast<int16_t>(convert(DType::I32, DType::I16, 70000, RoundMode::CAST_NONE)),
            70000 - 65536);
  EXPECT_EQ(static_cast<int16_t>(
                convert(DType::I32, DType::I16, 70000, RoundMode::CAST_NONE, SatMode::ON)),
            32767);
}

TEST(NumericsTargeted, SaturationDefaults) {
  using enum DType;
  for (auto [s, d] :
       {std::pair{F16, U8}, {F16, I8}, {F32, I16}, {F16, I16}, {I64, I32}, {I32, I16}})
    EXPECT_FALSE(cvtSaturatesByDefault(s, d)) << spelling(s) << "->" << spelling(d);
  for (auto [s, d] : {std::pair{F32, I32},
                      {F32, F16},
                      {F32, BF16},
                      {F16, I4},
                      {F32, HIF8},
                      {I32, U8},
                      {U32, U16}})
    EXPECT_TRUE(cvtSaturatesByDefault(s, d)) << spelling(s) << "->" << spelling(d);
}

TEST(NumericsTargeted, NaNAndInfinity) {
  const uint64_t nan = 0x7FC00000u, inf = 0x7F800000u, ninf = 0xFF800000u;
  for (RoundMode rm : kModes)
    for (SatMode s : kSats) {
      EXPECT_EQ(convert(DType::F32, DType::F16, nan, rm, s), 0x7E00u);
      EXPECT_EQ(convert(DType::F32, DType::F8E4M3, nan, rm, s), 0x7Fu);
      EXPECT_EQ(convert(DType::F32, DType::HIF8, nan, rm, s), 0x80u);
      EXPECT_EQ(convert(DType::BF16, DType::F4E2M1X2, 0x7FC0, rm, s), 0x0u);
      EXPECT_EQ(convert(DType::F32, DType::F32, nan, rm, s), nan);
      EXPECT_EQ(convert(DType::F32, DType::F32, ninf, rm, s), ninf);
      EXPECT_EQ(convert(DType::F16, DType::F32, 0x7C00, rm, s), inf); // widening keeps inf
    }
  EXPECT_EQ(convert(DType::F32, DType::F16, inf, RoundMode::CAST_RINT, SatMode::OFF), 0x7C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, inf, RoundMode::CAST_RINT, SatMode::ON), 0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_RINT, SatMode::ON),
            0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(1e6f), RoundMode::CAST_TRUNC, SatMode::OFF),
            0x7BFFu);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-1e6f), RoundMode::CAST_FLOOR, SatMode::OFF),
            0xFC00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-1e6f), RoundMode::CAST_CEIL, SatMode::OFF),
            0xFBFFu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(500.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Fu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(500.0f), RoundMode::CAST_RINT, SatMode::ON),
            0x7Eu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(464.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Eu);
  EXPECT_EQ(convert(DType::F32, DType::F8E4M3, f32Bits(1.95f), RoundMode::CAST_RINT, SatMode::ON),
            0x40u); // 2.0
  EXPECT_EQ(convert(DType::F32, DType::F8E5M2, f32Bits(1e5f), RoundMode::CAST_RINT, SatMode::OFF),
            0x7Cu);
  EXPECT_EQ(convert(DType::F32, DType::HIF8, f32Bits(40960.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x6Eu);
  EXPECT_EQ(
      convert(DType::F32, DType::HIF8, f32Bits(40960.0f), RoundMode::CAST_ROUND, SatMode::OFF),
      0x6Fu);
  EXPECT_EQ(convert(DType::F32, DType::HIF8, f32Bits(-0.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, f32Bits(-0.0f), RoundMode::CAST_RINT, SatMode::OFF),
            0x8000u);
  EXPECT_EQ(
      convert(DType::BF16, DType::F4E2M1X2, 0x40E0 /* 7 */, RoundMode::CAST_RINT, SatMode::OFF),
      0x7u);
}

TEST(NumericsTargeted, F32ToF32RoundsToIntegral) {
  auto r = [](float f, RoundMode rm) {
    return f32FromBits(
        static_cast<uint32_t>(convert(DType::F32, DType::F32, f32Bits(f), rm, SatMode::ON)));
  };
  EXPECT_EQ(r(2.5f, RoundMode::CAST_FLOOR), 2.0f); // pto-isa CPU sim leaves 2.5
  EXPECT_EQ(r(2.5f, RoundMode::CAST_RINT), 2.0f);
  EXPECT_EQ(r(3.5f, RoundMode::CAST_RINT), 4.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_ROUND), 3.0f);
  EXPECT_EQ(r(-2.5f, RoundMode::CAST_ROUND), -3.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_CEIL), 3.0f);
  EXPECT_EQ(r(-2.7f, RoundMode::CAST_TRUNC), -2.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_NONE), 2.0f);
  EXPECT_EQ(r(2.5f, RoundMode::CAST_ODD), 3.0f);
  EXPECT_EQ(r(4.25f, RoundMode::CAST_ODD), 5.0f);
  EXPECT_EQ(r(8388609.0f, RoundMode::CAST_FLOOR), 8388609.0f);
  EXPECT_EQ(r(1e30f, RoundMode::CAST_CEIL), 1e30f);
  const float negZero = r(-0.3f, RoundMode::CAST_CEIL);
  EXPECT_EQ(negZero, 0.0f);
  EXPECT_TRUE(std::signbit(negZero));
}

TEST(NumericsTargeted, FloatToFloatHonoursTheRoundMode) {
  // 1 + 2^-11 + 2^-13 (reference 3.6 probe: the CPU sim gives 0x3c01 for every mode).
  const uint64_t x = f32Bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -13));
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_RINT, SatMode::ON), 0x3C01u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_TRUNC, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_FLOOR, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_CEIL, SatMode::ON), 0x3C01u);
  EXPECT_EQ(convert(DType::F32, DType::F16, x, RoundMode::CAST_ODD, SatMode::ON), 0x3C01u);
  const uint64_t tie = f32Bits(1.0f + std::ldexp(1.0f, -11)); // exactly between 0x3C00 and 0x3C01
  EXPECT_EQ(convert(DType::F32, DType::F16, tie, RoundMode::CAST_RINT, SatMode::ON), 0x3C00u);
  EXPECT_EQ(convert(DType::F32, DType::F16, tie, RoundMode::CAST_ROUND, SatMode::ON), 0x3C01u);
  EXPECT_EQ(
      convert(DType::F32, DType::BF16, f32Bits(1.00390625f), RoundMode::CAST_RINT, SatMode::ON),
      0x3F80u);
  EXPECT_EQ(
      convert(DType::F32, DType::BF16, f32Bits(1.01171875f), RoundMode::CAST_RINT, SatMode::ON),
      0x3F82u);
  // Integer -> float honours the mode too.
  EXPECT_EQ(convert(DType::I32, DType::F32, 16777217, RoundMode::CAST_RINT, SatMode::ON),
            f32Bits(16777216.0f));
  EXPECT_EQ(convert(DType::I32, DType::F32, 16777217, RoundMode::CAST_CEIL, SatMode::ON),
            f32Bits(16777218.0f));
  EXPECT_EQ(convert(DType::I32, DType::F16, 65520, RoundMode::CAST_RINT, SatMode::OFF), 0x7C00u);
  EXPECT_EQ(convert(DType::I32, DType::F16, 65520, RoundMode::CAST_RINT, SatMode::ON), 0x7BFFu);
  EXPECT_EQ(
      convert(DType::I64, DType::F32, 0x7FFFFFFFFFFFFFFFull, RoundMode::CAST_TRUNC, SatMode::ON),
      f32Bits(9223371487098961920.0f));
}

TEST(NumericsTargeted, PackedNibbleOrder) {
  uint8_t buf[2] = {0, 0};
  setNibble(buf, 0, 0x1);
  setNibble(buf, 1, 0x2);
  setNibble(buf, 2, 0xF);
  setNibble(buf, 3, 0x8);
  EXPECT_EQ(buf[0], 0x21); // low nibble = even index
  EXPECT_EQ(buf[1], 0x8F);
  EXPECT_EQ(getNibble(buf, 0), 0x1);
  EXPECT_EQ(getNibble(buf, 1), 0x2);
  EXPECT_EQ(getNibble(buf, 2), 0xF);
  EXPECT_EQ(getNibble(buf, 3), 0x8);
  setNibble(buf, 1, 0x7);
  EXPECT_EQ(buf[0], 0x71);
  EXPECT_EQ(decodeToDouble(DType::I4, getNibble(buf, 2)), -1.0);
  EXPECT_EQ(decodeToDouble(DType::F4E2M1X2, getNibble(buf, 3)), -0.0);
  // f16 -> int4 -> f16 round trip through packed storage.
  uint8_t packed[4] = {};
  const int vals[] = {-8, -3, 0, 1, 7, 5, -1, 2};
  for (size_t i = 0; i < 8; ++i) {
    const uint64_t h = encodeFromDouble(DType::F16, vals[i], RoundMode::CAST_RINT, SatMode::ON);
    setNibble(packed, i,
              static_cast<uint8_t>(convert(DType::F16, DType::I4, h, RoundMode::CAST_RINT)));
  }
  EXPECT_EQ(packed[0], 0xD8); // -3 (0xD) high, -8 (0x8) low
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(decodeToDouble(DType::F16, convert(DType::I4, DType::F16, getNibble(packed, i),
                                                 RoundMode::CAST_NONE)),
              vals[i]);
}

TEST(NumericsTargeted, ConverterTableMatchesConvert) {
  const Converter c(DType::F8E4M3, DType::F32, RoundMode::CAST_NONE);
  for (uint64_t i = 0; i < 256; ++i)
    EXPECT_EQ(c(i), convert(DType::F8E4M3, DType::F32, i, RoundMode::CAST_NONE));
  const Converter h(DType::F16, DType::I8, RoundMode::CAST_RINT);
  EXPECT_EQ(h(0x5CB0), 44u);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::F16, RoundMode::CAST_NONE), RoundMode::CAST_RINT);
  EXPECT_EQ(effectiveRoundMode(DType::F16, DType::I32, RoundMode::CAST_NONE),
            RoundMode::CAST_TRUNC);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::HIF8, RoundMode::CAST_NONE),
            RoundMode::CAST_ROUND);
  EXPECT_EQ(effectiveRoundMode(DType::F32, DType::HIF8, RoundMode::CAST_FLOOR),
            RoundMode::CAST_FLOOR);
}
