// Element numerics: exact decode of every PTO element format, and TCVT conversion with every
// RoundMode and SatMode (docs/numerics.md describes the rules; reference 3.6 and 5).
//
// Bits convention: an element is passed as the low bitWidth(t) bits of a uint64_t (a 4-bit
// element is one nibble, value 0..15; packed storage is handled by getNibble/setNibble).
// Nothing here allocates; a Converter holds everything it needs inline.
#pragma once

#include "isa/Isa.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace pto::isa {

// ---------------------------------------------------------------- decode
/// The element's value as a double. Exact for every float format (f64 included) and every
/// integer of magnitude <= 2^53; i64/u64 beyond that are rounded to nearest (use convert() for
/// exact integer conversions). NaN codes give a quiet NaN with the element's sign.
double decodeToDouble(DType t, uint64_t bits);

/// Largest finite value of a float format (e.g. 448 for f8E4M3, 32768 for hif8).
double maxFinite(DType t);

// ---------------------------------------------------------------- encode / convert
/// CAST_NONE resolved to the mode the NPU uses for the pair (docs/numerics.md, "CAST_NONE").
RoundMode effectiveRoundMode(DType src, DType dst, RoundMode rm);

/// Saturation used by TCVT when the instruction gives none (reference 3.6, A2/A3 and A5 agree):
/// OFF for f16->u8, f16->i8, f32->i16, f16->i16, i64->i32, i32->i16; ON for every other pair.
bool cvtSaturatesByDefault(DType src, DType dst);

/// Rounds the double v into format t with the given mode and saturation. CAST_NONE behaves as
/// the mode effectiveRoundMode(F64, t, CAST_NONE) gives. Integer targets round v to an
/// integral value first (see convert).
uint64_t encodeFromDouble(DType t, double v, RoundMode rm, SatMode sat);

/// TCVT on one element: src bits -> dst bits. Same float type on both sides (f32->f32) rounds
/// to an integral value; every other float pair rounds to the destination precision.
uint64_t convert(DType src, DType dst, uint64_t srcBits, RoundMode rm, SatMode sat);
inline uint64_t convert(DType src, DType dst, uint64_t srcBits, RoundMode rm) {
  return convert(src, dst, srcBits, rm,
                 cvtSaturatesByDefault(src, dst) ? SatMode::ON : SatMode::OFF);
}

/// A conversion fixed once (pair, mode, saturation) and applied per element. Sources of at most
/// 8 bits go through a 256-entry table built at construction; others use the exact path.
class Converter {
public:
  Converter(DType src, DType dst, RoundMode rm, SatMode sat);
  Converter(DType src, DType dst, RoundMode rm)
      : Converter(src, dst, rm, cvtSaturatesByDefault(src, dst) ? SatMode::ON : SatMode::OFF) {}
  uint64_t operator()(uint64_t srcBits) const {
    return useTable_ ? table_[srcBits & 0xFF] : convert(src_, dst_, srcBits, rm_, sat_);
  }
  DType src() const { return src_; }
  DType dst() const { return dst_; }

private:
  DType src_, dst_;
  RoundMode rm_;
  SatMode sat_;
  bool useTable_ = false;
  std::array<uint64_t, 256> table_{};
};

// ---------------------------------------------------------------- packed 4-bit storage
/// Packed fp4/int4: element 2k is the low nibble of byte k, element 2k+1 the high nibble.
inline uint8_t getNibble(const uint8_t* base, size_t index) {
  return static_cast<uint8_t>((base[index >> 1] >> ((index & 1) * 4)) & 0xF);
}
inline void setNibble(uint8_t* base, size_t index, uint8_t v) {
  const unsigned shift = static_cast<unsigned>(index & 1) * 4;
  base[index >> 1] =
      static_cast<uint8_t>((base[index >> 1] & ~(0xF << shift)) | ((v & 0xF) << shift));
}

// ---------------------------------------------------------------- small helpers
inline uint32_t f32Bits(float f) {
  return __builtin_bit_cast(uint32_t, f);
}
inline float f32FromBits(uint32_t b) {
  return __builtin_bit_cast(float, b);
}
inline uint64_t f64Bits(double d) {
  return __builtin_bit_cast(uint64_t, d);
}
inline double f64FromBits(uint64_t b) {
  return __builtin_bit_cast(double, b);
}

} // namespace pto::isa
