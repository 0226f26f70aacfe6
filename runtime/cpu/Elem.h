// Element traits for the cpu kernels: storage type, compute type, exact load/store.
// f16 and bf16 compute in float and round once per op to nearest even (a single +,-,*,/,sqrt
// in float followed by one rounding is correctly rounded for both formats).
#pragma once

#include "isa/Isa.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pto::rt::cpu {

inline float h2f(uint16_t h) {
  const uint32_t s = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu,
                 m = h & 0x3ffu;
  if (e == 0) {
    float f = static_cast<float>(m) * 0x1p-24f;
    return s ? -f : f;
  }
  if (e == 31) return std::bit_cast<float>(s | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(s | ((e + 112) << 23) | (m << 13));
}

/// float -> f16, round to nearest even, overflow to inf, NaN -> quiet NaN with the sign.
inline uint16_t f2h(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f), s = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(s | 0x7e00u);
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(s | 0x7c00u); // >= 65520 (and inf)
  if (ax < 0x38800000u) {                                           // below 2^-14: subnormal
    const float af = std::bit_cast<float>(ax) * 16777216.0f;        // exact
    return static_cast<uint16_t>(s | static_cast<uint32_t>(std::nearbyint(af)));
  }
  const uint32_t r = ax - 0x38000000u;
  uint32_t h = r >> 13;
  const uint32_t rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(s | h);
}

inline float b2f(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
inline uint16_t f2b(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

template <isa::DType D> struct Tr;
#define PTO_TR_SAME(D, T)                                                                          \
  template <> struct Tr<isa::DType::D> {                                                           \
    using S = T;                                                                                   \
    using C = T;                                                                                   \
    static C ld(S v) { return v; }                                                                 \
    static S st(C v) { return v; }                                                                 \
  };
PTO_TR_SAME(F32, float)
PTO_TR_SAME(F64, double)
PTO_TR_SAME(I8, int8_t)
PTO_TR_SAME(I16, int16_t)
PTO_TR_SAME(I32, int32_t)
PTO_TR_SAME(I64, int64_t)
PTO_TR_SAME(U8, uint8_t)
PTO_TR_SAME(U16, uint16_t)
PTO_TR_SAME(U32, uint32_t)
PTO_TR_SAME(U64, uint64_t)
#undef PTO_TR_SAME
template <> struct Tr<isa::DType::F16> {
  using S = uint16_t;
  using C = float;
  static C ld(S v) { return h2f(v); }
  static S st(C v) { return f2h(v); }
};
template <> struct Tr<isa::DType::BF16> {
  using S = uint16_t;
  using C = float;
  static C ld(S v) { return b2f(v); }
  static S st(C v) { return f2b(v); }
};

/// Wrapping integer arithmetic (no signed-overflow UB).
template <typename C> inline C wrapAdd(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) +
                          static_cast<std::make_unsigned_t<C>>(b));
  else
    return a + b;
}
template <typename C> inline C wrapSub(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) -
                          static_cast<std::make_unsigned_t<C>>(b));
  else
    return a - b;
}
template <typename C> inline C wrapMul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return static_cast<C>(static_cast<U>(static_cast<std::make_unsigned_t<C>>(a)) *
                          static_cast<U>(static_cast<std::make_unsigned_t<C>>(b)));
  } else {
    return a * b;
  }
}

/// Raw element bits at element index `i` of a buffer of `bits`-bit elements.
inline uint64_t getBits(const uint8_t* base, unsigned bits, size_t i) {
  if (bits < 8) return (base[i >> 1] >> ((i & 1) * 4)) & 0xF;
  uint64_t v = 0;
  std::memcpy(&v, base + i * (bits / 8), bits / 8);
  return v;
}
inline void setBits(uint8_t* base, unsigned bits, size_t i, uint64_t v) {
  if (bits < 8) {
    const unsigned sh = static_cast<unsigned>(i & 1) * 4;
    base[i >> 1] = static_cast<uint8_t>((base[i >> 1] & ~(0xF << sh)) | ((v & 0xF) << sh));
    return;
  }
  std::memcpy(base + i * (bits / 8), &v, bits / 8);
}

} // namespace pto::rt::cpu
