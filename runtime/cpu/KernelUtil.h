// Helpers shared by the cpu kernel files: operand pointers, bound checks, element accessors and
// the per-family kernel selectors that Kernels.cpp's selectKernel() falls through to.
#pragma once

#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>

namespace pto::rt::cpu {

template <typename S> inline S* tptr(Core& c, const TileOperand& o) {
  return reinterpret_cast<S*>(c.buf[o.loc] + o.offset);
}
inline uint8_t* bptr(Core& c, const TileOperand& o) {
  return c.buf[o.loc] + o.offset;
}

/// True when a vr x vc region fits the operand's physical shape; otherwise records the error.
inline bool fits(Core& c, const TileInst& t, const TileOperand& o, uint32_t vr, uint32_t vc) {
  if (o.holds(vr, vc)) return true;
  if (c.error.empty())
    c.error = std::string(t.name) + ": valid shape " + std::to_string(vr) + "x" +
              std::to_string(vc) + " exceeds tile %" + o.name + " (" + std::to_string(o.rows) +
              "x" + std::to_string(o.cols) +
              (!o.lastLine ? ""
               : o.blayout == isa::BLayout::ColMajor
                   ? ", its last column " + std::to_string(o.lastLine) + " rows"
                   : ", its last row " + std::to_string(o.lastLine) + " columns") +
              ")";
  return false;
}

/// Records the first runtime error of a kernel.
inline void fail(Core& c, std::string msg) {
  if (c.error.empty()) c.error = std::move(msg);
}

/// True when a kernel may process src and dst several elements at a time: src is dst itself
/// (same storage, element width and row length, so every element is read at the index it is
/// written) or shares no byte with it. Partially overlapping tiles (possible with manual
/// placement) keep the element-by-element loops.
/// True when tiles d and s share no byte.
inline bool disjoint(Core& c, const TileOperand& d, const TileOperand& s) {
  const auto pd = reinterpret_cast<uintptr_t>(bptr(c, d)),
             ps = reinterpret_cast<uintptr_t>(bptr(c, s));
  return ps + s.bytes() <= pd || pd + d.bytes() <= ps;
}
inline bool sameOrDisjoint(Core& c, const TileOperand& d, const TileOperand& s) {
  if (bptr(c, d) == bptr(c, s))
    return d.cols == s.cols && isa::bitWidth(d.dtype) == isa::bitWidth(s.dtype);
  return disjoint(c, d, s);
}

/// Tiers of x86 kernels (runtime/cpu/Simd.h), each including the one before: AVX2 + F16C + FMA
/// (f32 / f16 / bf16 elementwise, TCVT f32 -> f16, TMATMUL), AVX-512F (TMATMUL and the f16
/// elementwise conversions on 16-lane vectors), then AVX512-FP16 (f16 elementwise natively).
enum class SimdLevel : uint8_t { Portable, Avx2, Avx512, Avx512Fp16 };
/// The best tier the running CPU has (checked once).
SimdLevel simdSupported();
/// The tier selectKernel uses: the supported one, capped by setSimdLimit (default: no cap).
/// selectKernel reads it, so a cap applies to modules decoded afterwards; tests lower it to run
/// every tier's kernels on the same data and compare bits.
SimdLevel simdLevel();
void setSimdLimit(SimdLevel limit);

/// Element accessor for one operand (fast row-major addressing or the generic layout).
template <typename S> struct Acc {
  S* base;
  const TileOperand* o;
  bool rm;
  Acc(Core& c, const TileOperand& op) : base(tptr<S>(c, op)), o(&op), rm(op.plainRowMajor()) {}
  S& at(uint32_t r, uint32_t col) const {
    return rm ? base[size_t{r} * o->cols + col] : base[o->elemOffset(r, col)];
  }
  S* row(uint32_t r) const { return base + size_t{r} * o->cols; }
};

/// The B.IOR scalar (raw bits, low bits of the register) as the compute type of D.
template <typename S, isa::DType D> inline typename Tr<D>::C scalarOf(uint64_t bits) {
  S s;
  std::memcpy(&s, &bits, sizeof(S));
  return Tr<D>::ld(s);
}

/// Sign- or zero-extends the low `bits` of `raw` as an element of integer type d.
inline int64_t intValue(isa::DType d, uint64_t raw) {
  const unsigned bits = isa::bitWidth(d);
  if (bits >= 64) return static_cast<int64_t>(raw);
  if (isa::info(d).kind == isa::DTypeKind::SInt)
    return static_cast<int64_t>(raw << (64 - bits)) >> (64 - bits);
  return static_cast<int64_t>(raw & ((uint64_t{1} << bits) - 1));
}

/// A source's valid region: its descriptor's when static; the block bounds when both the
/// source and the destination are dynamic (a tile block carries one valid shape, the
/// destination's, so a dynamic source is taken to share it).
struct Region {
  uint32_t rows = 0, cols = 0;
};
/// The error of a kernel selection whose op lacks one of the tile operands (a negative role).
inline std::optional<std::string> need(const TileInst& t, std::initializer_list<int> roles) {
  for (int r : roles)
    if (r < 0) return std::string(t.name) + ": missing tile operand";
  return std::nullopt;
}

inline Region sourceRegion(const Core& c, const TileInst& t, const TileOperand& o) {
  Region r{o.validRows >= 0 ? static_cast<uint32_t>(o.validRows) : t.validRows(c),
           o.validCols >= 0 ? static_cast<uint32_t>(o.validCols) : t.validCols(c)};
  return r;
}
/// Load-time check for sourceRegion(): a dynamic source next to a static destination has a
/// valid shape the block does not carry.
inline std::optional<std::string> sourceRegionKnown(const TileInst& t, int src) {
  if (src < 0 || t.dst < 0) return std::nullopt;
  const TileOperand &s = t.tiles[src], &d = t.tiles[t.dst];
  if ((s.validRows < 0 && d.validRows >= 0) || (s.validCols < 0 && d.validCols >= 0))
    return std::string(t.name) + ": tile %" + s.name +
           " has a dynamic valid shape but the destination's is static; a tile block carries only "
           "the destination's "
           "valid shape, so the source's cannot be known";
  return std::nullopt;
}

/// Element bits of a pad value (TLOAD, TFILLPAD): 0, +inf (max where the type has no inf), -inf
/// (min). Infinity is encoded without saturation, which would turn it into the largest finite
/// value.
inline uint64_t padBits(isa::PadValue p, isa::DType d) {
  const bool hasInf = d == isa::DType::F32 || d == isa::DType::F16 || d == isa::DType::BF16 ||
                      d == isa::DType::F64 || d == isa::DType::F8E5M2 || d == isa::DType::HIF8;
  switch (p) {
  case isa::PadValue::Max:
    if (isa::isFloat(d))
      return isa::encodeFromDouble(d, hasInf ? INFINITY : isa::maxFinite(d),
                                   isa::RoundMode::CAST_RINT,
                                   hasInf ? isa::SatMode::OFF : isa::SatMode::ON);
    return isa::info(d).kind == isa::DTypeKind::UInt ? ~uint64_t{0}
                                                     : (uint64_t{1} << (isa::bitWidth(d) - 1)) - 1;
  case isa::PadValue::Min:
    if (isa::isFloat(d))
      return isa::encodeFromDouble(d, hasInf ? -INFINITY : -isa::maxFinite(d),
                                   isa::RoundMode::CAST_RINT,
                                   hasInf ? isa::SatMode::OFF : isa::SatMode::ON);
    return isa::info(d).kind == isa::DTypeKind::UInt ? 0 : uint64_t{1} << (isa::bitWidth(d) - 1);
  default:
    return 0;
  }
}

/// Fills every element of `o` outside the rows x cols region with its pad value (TLOAD with a
/// Zero/Max/Min pad; a Null pad leaves them untouched).
inline void fillOutsideWithPad(uint8_t* base, const TileOperand& o, uint32_t rows, uint32_t cols) {
  if (o.pad == isa::PadValue::Null) return;
  const unsigned bits = isa::bitWidth(o.dtype);
  const uint64_t pv = padBits(o.pad, o.dtype);
  for (uint32_t r = 0; r < o.rows; ++r)
    for (uint32_t j = r < rows ? cols : 0; j < o.cols; ++j)
      setBits(base, bits, o.elemOffset(r, j), pv);
}

/// K<D>::run for an element type: floats (f32, f16, bf16, f64) when `floats`, the integer types
/// when `ints`; nullptr for the others.
template <template <isa::DType> class K> TileKernel byType(isa::DType d, bool ints, bool floats) {
  using isa::DType;
  switch (d) {
  case DType::F32:
    return floats ? &K<DType::F32>::run : nullptr;
  case DType::F16:
    return floats ? &K<DType::F16>::run : nullptr;
  case DType::BF16:
    return floats ? &K<DType::BF16>::run : nullptr;
  case DType::F64:
    return floats ? &K<DType::F64>::run : nullptr;
  case DType::I8:
    return ints ? &K<DType::I8>::run : nullptr;
  case DType::I16:
    return ints ? &K<DType::I16>::run : nullptr;
  case DType::I32:
    return ints ? &K<DType::I32>::run : nullptr;
  case DType::I64:
    return ints ? &K<DType::I64>::run : nullptr;
  case DType::U8:
    return ints ? &K<DType::U8>::run : nullptr;
  case DType::U16:
    return ints ? &K<DType::U16>::run : nullptr;
  case DType::U32:
    return ints ? &K<DType::U32>::run : nullptr;
  case DType::U64:
    return ints ? &K<DType::U64>::run : nullptr;
  default:
    return nullptr;
  }
}

/// What a family selector reads of an instruction (its destination and main source dtypes) and
/// how it reports a refusal into `err`.
struct Selection {
  TileInst& t;
  std::optional<std::string>& err;
  isa::DType d, s;
  Selection(TileInst& inst, std::optional<std::string>& e)
      : t(inst), err(e),
        d(inst.dst >= 0 ? inst.tiles[inst.dst].dtype
                        : (inst.src0 >= 0 ? inst.tiles[inst.src0].dtype : inst.startType)),
        s(inst.src0 >= 0 ? inst.tiles[inst.src0].dtype : d) {}
  /// Sets the error when a role the kernel needs has no tile; true when it did.
  bool missing(std::initializer_list<int> roles) {
    for (int r : roles)
      if (r < 0) return fail(std::string(t.name) + ": missing tile operand");
    return false;
  }
  bool fail(std::string why) {
    err = std::move(why);
    return true;
  }
  bool unsupportedType(isa::DType x) {
    return fail(std::string(t.name) + " on " + std::string(isa::spelling(x)) +
                " tiles is not supported by the cpu backend");
  }
};

// Family selectors: each returns true when it handles t.op (then `err` or t.kernel is set).
bool selectMoveKernel(TileInst& t, std::optional<std::string>& err);
/// TMOV/TSTORE with fixpipe attributes (FixpipeKernels.cpp); selectMoveKernel asks it.
bool selectFixpipeKernel(TileInst& t, std::optional<std::string>& err);
bool selectConvertKernel(TileInst& t, std::optional<std::string>& err);
bool selectLayoutKernel(TileInst& t, std::optional<std::string>& err);
bool selectMathKernel(TileInst& t, std::optional<std::string>& err);
bool selectPipeKernel(TileInst& t, std::optional<std::string>& err);
/// Reductions, row/column broadcasts, compare and select (ReduceKernels.cpp).
bool selectReduceKernel(TileInst& t, std::optional<std::string>& err);

} // namespace pto::rt::cpu
