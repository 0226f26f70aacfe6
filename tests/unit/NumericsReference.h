// The reference of the numerics tests (NumericsTest.cpp, NumericsTargetedTest.cpp), written
// differently from isa/Numerics.cpp and never calling it: NumericsReference.cpp decodes from the
// format definitions in long double (hif8 by parsing the bit string), encodes by enumerating
// every representable value and searching for the neighbours (or, for f32, by long double ulp
// arithmetic), and rounds to integers with floorl.
#pragma once

#include "isa/Numerics.h"

#include <cstdint>
#include <vector>

namespace pto::numtest {

using LD = long double;
using isa::DType;
using isa::RoundMode;
using isa::SatMode;

inline constexpr RoundMode kModes[] = {
    RoundMode::CAST_NONE, RoundMode::CAST_RINT,  RoundMode::CAST_ROUND, RoundMode::CAST_FLOOR,
    RoundMode::CAST_CEIL, RoundMode::CAST_TRUNC, RoundMode::CAST_ODD};
inline constexpr SatMode kSats[] = {SatMode::ON, SatMode::OFF};

namespace ref {

/// The value of `code` in format t (NaN, infinities and signed zeros included).
LD decode(DType t, uint64_t code);

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

/// The finite values of a 4..16-bit float format, built once per format.
const Table& table(DType t);

// The expected result of TCVT src -> dst on src code c.
struct Expect {
  bool isInt;
  uint64_t bits; // float targets
  LD value;      // integer targets
};

/// x = decode(src, c), computed once by the caller.
Expect convert(DType src, DType dst, uint64_t c, LD x, RoundMode rm0, SatMode sat);

} // namespace ref
} // namespace pto::numtest
