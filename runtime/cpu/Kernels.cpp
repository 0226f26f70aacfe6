// cpu backend tile kernels. selectKernel() picks one instantiation per (op, dtypes) when the
// image is decoded; the kernels iterate the destination valid region (the B.DIM bounds) and
// never touch elements outside it. Plain row-major tiles take contiguous row loops; other
// layouts go through TileOperand::elemOffset (reference 4.3).
#include "isa/Encoding.h"
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"
#include "runtime/cpu/VecMath.h"

#include <algorithm>
#include <atomic>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cmath>
#include <limits>

namespace pto::rt {
namespace {

using isa::DType;
using namespace cpu;
namespace enc = isa::enc;

// ------------------------------------------------------------------ binary tile-tile
struct OAdd {
  template <typename C> static C f(C a, C b) { return wrapAdd(a, b); }
};
struct OSub {
  template <typename C> static C f(C a, C b) { return wrapSub(a, b); }
};
struct OMul {
  template <typename C> static C f(C a, C b) { return wrapMul(a, b); }
};
struct ODiv {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>)
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
struct ORem {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>)
        if (a == std::numeric_limits<C>::min() && b == -1) return 0;
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct OMax {
  template <typename C> static C f(C a, C b) { return a < b ? b : a; }
};
struct OMin {
  template <typename C> static C f(C a, C b) { return b < a ? b : a; }
};
struct OAnd {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>)
      return a & b;
    else
      return a;
  }
};
struct OOr {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>)
      return a | b;
    else
      return a;
  }
};
struct OXor {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>)
      return a ^ b;
    else
      return a;
  }
};
struct OShl {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      const uint64_t s = static_cast<uint64_t>(b);
      return s >= sizeof(C) * 8 ? C{0} : static_cast<C>(static_cast<U>(a) << s);
    } else {
      return a;
    }
  }
};
struct OShr {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      const uint64_t s = static_cast<uint64_t>(b);
      if (s >= sizeof(C) * 8) return std::is_signed_v<C> && a < 0 ? C(-1) : C{0};
      return static_cast<C>(a >> s);
    } else {
      return a;
    }
  }
};
struct OExpDif {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_same_v<C, float>)
      return std::exp(a - b);
    else if constexpr (std::is_floating_point_v<C>)
      return std::exp(a - b);
    else
      return a;
  }
};

/// One row of a binary op in blocks of 8 through local copies: the fixed-size inner loop has no
/// aliasing between d, a and b and no trip-count epilogue, so the compiler vectorizes it at -O2
/// (GCC's cheap vectorizer model refuses the plain loop, which needs run-time alias checks).
template <DType D, typename Op, typename S>
inline void binaryRow(S* d, const S* a, const S* b, uint32_t n) {
  constexpr uint32_t W = 8;
  uint32_t j = 0;
  for (; j + W <= n; j += W) {
    S x[W], y[W], z[W];
    std::memcpy(x, a + j, sizeof x);
    std::memcpy(y, b + j, sizeof y);
    for (uint32_t k = 0; k < W; ++k)
      z[k] = Tr<D>::st(Op::f(Tr<D>::ld(x[k]), Tr<D>::ld(y[k])));
    std::memcpy(d + j, z, sizeof z);
  }
  for (; j < n; ++j)
    d[j] = Tr<D>::st(Op::f(Tr<D>::ld(a[j]), Tr<D>::ld(b[j])));
}

template <DType D, typename Op> void kBinary(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) || !fits(c, t, ob, vr, vc)) return;
  Acc<S> d(c, od), a(c, oa), b(c, ob);
  if (d.rm && a.rm && b.rm) {
    // Rows that follow each other in all three tiles form one run: no per-row overhead.
    if (vc == od.cols && vc == oa.cols && vc == ob.cols && sameOrDisjoint(c, od, oa) &&
        sameOrDisjoint(c, od, ob))
      return binaryRow<D, Op>(d.base, a.base, b.base, vr * vc);
    for (uint32_t r = 0; r < vr; ++r) {
      S* dr = d.row(r);
      const S *ar = a.row(r), *br = b.row(r);
      binaryRow<D, Op>(dr, ar, br, vc);
    }
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = Tr<D>::st(Op::f(Tr<D>::ld(a.at(r, j)), Tr<D>::ld(b.at(r, j))));
}

template <DType D, typename Op> void kScalar(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  const auto s = scalarOf<S, D>(t.scalar(c, 0));
  Acc<S> d(c, od), a(c, oa);
  if (d.rm && a.rm) {
    for (uint32_t r = 0; r < vr; ++r) {
      S* dr = d.row(r);
      const S* ar = a.row(r);
      for (uint32_t j = 0; j < vc; ++j)
        dr[j] = Tr<D>::st(Op::f(Tr<D>::ld(ar[j]), s));
    }
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = Tr<D>::st(Op::f(Tr<D>::ld(a.at(r, j)), s));
}

#ifdef PTO_X86_SIMD
// AVX2 versions of kBinary / kScalar for f32, f16 and bf16 (Simd.h): contiguous runs of plain
// row-major tiles, the whole tile as one run when its rows follow each other. Anything else
// (other layouts, partially overlapping tiles) goes to the portable kernel.
/// H: f16 on AVX512-FP16 (binaryRunH) instead of AVX2 + F16C.
template <DType D, typename Op, typename VOp, bool H = false>
void kBinarySimd(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !ob.plainRowMajor() ||
      !sameOrDisjoint(c, od, oa) || !sameOrDisjoint(c, od, ob))
    return kBinary<D, Op>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) || !fits(c, t, ob, vr, vc)) return;
  S* d = tptr<S>(c, od);
  const S *a = tptr<S>(c, oa), *b = tptr<S>(c, ob);
  auto run = [](S* d, const S* a, const S* b, size_t n) {
#ifdef PTO_X86_FP16
    if constexpr (H) return simd::binaryRunH<VOp>(d, a, b, n);
#endif
    simd::binaryRun<D, Op, VOp>(d, a, b, n);
  };
  if (vc == od.cols && vc == oa.cols && vc == ob.cols) return run(d, a, b, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, b + size_t{r} * ob.cols, vc);
}

template <DType D, typename Op, typename VOp, bool H = false>
void kScalarSimd(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa))
    return kScalar<D, Op>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  const uint64_t bits = t.scalar(c, 0);
  const float s = scalarOf<S, D>(bits);
  S* d = tptr<S>(c, od);
  const S* a = tptr<S>(c, oa);
  auto run = [&](S* d, const S* a, size_t n) {
#ifdef PTO_X86_FP16
    if constexpr (H) return simd::scalarRunH<VOp>(d, a, static_cast<uint16_t>(bits), n);
#endif
    simd::scalarRun<D, Op, VOp>(d, a, s, n);
  };
  if (vc == od.cols && vc == oa.cols) return run(d, a, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc);
}

void kExpF32Simd(Core& c, const TileInst& t); // after kUnary

template <typename Op, typename VOp> TileKernel simdFloatKernel(DType d, bool scalar) {
  switch (d) {
  case DType::F32:
    return scalar ? &kScalarSimd<DType::F32, Op, VOp> : &kBinarySimd<DType::F32, Op, VOp>;
  case DType::F16:
#ifdef PTO_X86_FP16
    if (simdLevel() >= SimdLevel::Avx512Fp16)
      return scalar ? &kScalarSimd<DType::F16, Op, VOp, true>
                    : &kBinarySimd<DType::F16, Op, VOp, true>;
#endif
    return scalar ? &kScalarSimd<DType::F16, Op, VOp> : &kBinarySimd<DType::F16, Op, VOp>;
  case DType::BF16:
    return scalar ? &kScalarSimd<DType::BF16, Op, VOp> : &kBinarySimd<DType::BF16, Op, VOp>;
  default:
    return nullptr;
  }
}

/// The AVX2 kernel replacing the portable one selectKernel picked for a binary or tile-scalar
/// op on f32/f16/bf16, or nullptr.
TileKernel simdElementwiseKernel(isa::OpId op, DType d) {
  using isa::OpId;
  switch (op) {
  case OpId::TADD:
    return simdFloatKernel<OAdd, simd::VAdd>(d, false);
  case OpId::TSUB:
    return simdFloatKernel<OSub, simd::VSub>(d, false);
  case OpId::TMUL:
    return simdFloatKernel<OMul, simd::VMul>(d, false);
  case OpId::TDIV:
    return simdFloatKernel<ODiv, simd::VDiv>(d, false);
  case OpId::TMAX:
    return simdFloatKernel<OMax, simd::VMax>(d, false);
  case OpId::TMIN:
    return simdFloatKernel<OMin, simd::VMin>(d, false);
  case OpId::TADDS:
    return simdFloatKernel<OAdd, simd::VAdd>(d, true);
  case OpId::TSUBS:
    return simdFloatKernel<OSub, simd::VSub>(d, true);
  case OpId::TMULS:
    return simdFloatKernel<OMul, simd::VMul>(d, true);
  case OpId::TDIVS:
    return simdFloatKernel<ODiv, simd::VDiv>(d, true);
  case OpId::TMAXS:
    return simdFloatKernel<OMax, simd::VMax>(d, true);
  case OpId::TMINS:
    return simdFloatKernel<OMin, simd::VMin>(d, true);
  case OpId::TEXP:
    return d == DType::F32 ? &kExpF32Simd : nullptr;
  default:
    return nullptr;
  }
}
#endif

// ------------------------------------------------------------------ unary
template <DType D> struct UExp {
  template <typename C> static C f(C x) {
    if constexpr (D == DType::F32)
      return static_cast<float>(std::exp(static_cast<double>(x)));
    else if constexpr (std::is_same_v<C, float>)
      return std::exp(x);
    else if constexpr (std::is_floating_point_v<C>)
      return std::exp(x);
    else
      return x;
  }
};
template <DType D> struct ULog {
  template <typename C> static C f(C x) {
    if constexpr (D == DType::F32)
      return static_cast<float>(std::log(static_cast<double>(x)));
    else if constexpr (std::is_floating_point_v<C>)
      return std::log(x);
    else
      return x;
  }
};
template <DType D> struct USqrt {
  template <typename C> static C f(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(std::sqrt(static_cast<double>(x)));
    else
      return x;
  }
};
template <DType D> struct URsqrt {
  template <typename C> static C f(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(1.0 / std::sqrt(static_cast<double>(x)));
    else
      return x;
  }
};
template <DType D> struct URecip {
  template <typename C> static C f(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return C(1) / x;
    else
      return x == 0 ? C(-1) : static_cast<C>(1 / x);
  }
};
template <DType D> struct URelu {
  template <typename C> static C f(C x) { return x < C(0) ? C(0) : x; }
};
template <DType D> struct UAbs {
  template <typename C> static C f(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrapSub(C(0), x) : x;
    else
      return x;
  }
};
template <DType D> struct UNeg {
  template <typename C> static C f(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return -x;
    else
      return wrapSub(C(0), x);
  }
};
template <DType D> struct UNot {
  template <typename C> static C f(C x) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(~x);
    else
      return x;
  }
};

template <DType D, typename Op> void kUnary(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<S> d(c, od), a(c, oa);
  if (d.rm && a.rm) {
    for (uint32_t r = 0; r < vr; ++r) {
      S* dr = d.row(r);
      const S* ar = a.row(r);
      for (uint32_t j = 0; j < vc; ++j)
        dr[j] = Tr<D>::st(Op::f(Tr<D>::ld(ar[j])));
    }
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = Tr<D>::st(Op::f(Tr<D>::ld(a.at(r, j))));
}

#ifdef PTO_X86_SIMD
/// TEXP on f32 row-major tiles through the vector exp (runtime/cpu/VecMath.h: bit-identical to
/// UExp<F32>); other layouts and overlaps take the portable kernel.
void kExpF32Simd(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa))
    return kUnary<DType::F32, UExp<DType::F32>>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  float* d = tptr<float>(c, od);
  const float* a = tptr<float>(c, oa);
  if (vc == od.cols && vc == oa.cols) return expF32(d, a, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    expF32(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc);
}

#endif

/// TLRELU: x > 0 ? x : x * slope (slope as the tile's element type).
template <DType D> void kLrelu(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  const auto s = scalarOf<S, D>(t.scalar(c, 0));
  Acc<S> d(c, od), a(c, oa);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      auto x = Tr<D>::ld(a.at(r, j));
      d.at(r, j) = Tr<D>::st(x > 0 ? x : x * s);
    }
}

// ------------------------------------------------------------------ TEXPANDS (raw bits)
void kExpands(Core& c, const TileInst& t) {
  const TileOperand& od = t.tiles[t.dst];
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc)) return;
  const unsigned bits = isa::bitWidth(od.dtype);
  const uint64_t v = t.scalar(c, 0);
  uint8_t* base = c.buf[od.loc] + od.offset;
  if (bits == 32 && od.plainRowMajor()) {
    const uint32_t v32 = static_cast<uint32_t>(v);
    for (uint32_t r = 0; r < vr; ++r) {
      uint32_t* row = reinterpret_cast<uint32_t*>(base) + size_t{r} * od.cols;
      std::fill(row, row + vc, v32);
    }
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(base, bits, od.elemOffset(r, j), v);
}

// ------------------------------------------------------------------ reductions and expands
enum class Red { Sum, Max, Min, Prod };
template <DType D, Red R> void kRowReduce(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  using C = typename Tr<D>::C;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c); // the source valid region
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, vr, 1)) return;
  Acc<S> d(c, od), a(c, oa);
  for (uint32_t r = 0; r < vr; ++r) {
    if (vc == 0) continue;
    C acc = Tr<D>::ld(a.at(r, 0));
    for (uint32_t j = 1; j < vc; ++j) {
      C x = Tr<D>::ld(a.at(r, j));
      if constexpr (R == Red::Sum)
        acc = wrapAdd(acc, x);
      else if constexpr (R == Red::Prod)
        acc = wrapMul(acc, x);
      else if constexpr (R == Red::Max)
        acc = acc < x ? x : acc;
      else
        acc = x < acc ? x : acc;
    }
    d.at(r, 0) = Tr<D>::st(acc);
  }
}
template <DType D, Red R> void kColReduce(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  using C = typename Tr<D>::C;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, 1, vc)) return;
  Acc<S> d(c, od), a(c, oa);
  for (uint32_t j = 0; j < vc; ++j) {
    if (vr == 0) continue;
    C acc = Tr<D>::ld(a.at(0, j));
    for (uint32_t r = 1; r < vr; ++r) {
      C x = Tr<D>::ld(a.at(r, j));
      if constexpr (R == Red::Sum)
        acc = wrapAdd(acc, x);
      else if constexpr (R == Red::Prod)
        acc = wrapMul(acc, x);
      else if constexpr (R == Red::Max)
        acc = acc < x ? x : acc;
      else
        acc = x < acc ? x : acc;
    }
    d.at(0, j) = Tr<D>::st(acc);
  }
}

/// dst[i,j] = src[i,0] (row) or src[0,j] (col), raw element copy.
template <DType D, bool Row> void kExpand(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, Row ? vr : 1, Row ? 1 : vc)) return;
  Acc<S> d(c, od), a(c, oa);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = Row ? a.at(r, 0) : a.at(0, j);
}

/// dst[i,j] = op(src0[i,j], src1[i,0]) (Row) or op(src0[i,j], src1[0,j]).
template <DType D, typename Op, bool Row> void kExpandOp(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) ||
      !fits(c, t, ob, Row ? vr : 1, Row ? 1 : vc))
    return;
  Acc<S> d(c, od), a(c, oa), b(c, ob);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) =
          Tr<D>::st(Op::f(Tr<D>::ld(a.at(r, j)), Tr<D>::ld(Row ? b.at(r, 0) : b.at(0, j))));
}

// ------------------------------------------------------------------ compare / select
template <DType D> void kCmp(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const bool scalar = t.op == isa::OpId::TCMPS;
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) ||
      (!scalar && !fits(c, t, t.tiles[t.src1], vr, vc)))
    return;
  Acc<S> a(c, oa);
  const auto s = scalarOf<S, D>(t.scalar(c, 0));
  uint8_t* base = c.buf[od.loc] + od.offset;
  const unsigned bits = isa::bitWidth(od.dtype);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      auto x = Tr<D>::ld(a.at(r, j));
      auto y = scalar ? s : Tr<D>::ld(Acc<S>(c, t.tiles[t.src1]).at(r, j));
      bool v = false;
      switch (t.cmode) {
      case 0:
        v = x == y;
        break;
      case 1:
        v = x != y;
        break;
      case 2:
        v = x < y;
        break;
      case 3:
        v = x > y;
        break;
      case 4:
        v = x <= y;
        break;
      default:
        v = x >= y;
        break;
      }
      setBits(base, bits, od.elemOffset(r, j), v ? 1 : 0);
    }
}

/// TSEL: dst = mask != 0 ? src0 : src1; TSELS: dst = mask != 0 ? src : scalar.
template <DType D> void kSel(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &om = t.tiles[t.src0], &oa = t.tiles[t.src1];
  const bool scalar = t.op == isa::OpId::TSELS;
  if (!fits(c, t, od, vr, vc) || !fits(c, t, om, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<S> d(c, od), a(c, oa);
  const uint8_t* mb = c.buf[om.loc] + om.offset;
  const unsigned mbits = isa::bitWidth(om.dtype);
  S sv{};
  uint64_t bits = t.scalar(c, 0);
  std::memcpy(&sv, &bits, sizeof(S));
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      bool m = getBits(mb, mbits, om.elemOffset(r, j)) != 0;
      d.at(r, j) = m ? a.at(r, j) : (scalar ? sv : Acc<S>(c, t.tiles[t.src2]).at(r, j));
    }
}

// ------------------------------------------------------------------ conversions
isa::RoundMode roundOf(unsigned rmode) {
  switch (rmode) {
  case 1:
    return isa::RoundMode::CAST_RINT;
  case 2:
    return isa::RoundMode::CAST_TRUNC;
  case 3:
    return isa::RoundMode::CAST_FLOOR;
  case 4:
    return isa::RoundMode::CAST_CEIL;
  case 5:
    return isa::RoundMode::CAST_ROUND;
  case 6:
    return isa::RoundMode::CAST_ODD;
  default:
    return isa::RoundMode::CAST_NONE;
  }
}

/// Generic conversion over the destination valid region through isa::convert (exact, every
/// mode and saturation). 8-bit-or-narrower sources use the Converter's table.
void kCvtGeneric(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  const isa::Converter cv(oa.dtype, od.dtype, t.round, t.satMode);
  const uint8_t* sb = c.buf[oa.loc] + oa.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const unsigned sbits = isa::bitWidth(oa.dtype), dbits = isa::bitWidth(od.dtype);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(db, dbits, od.elemOffset(r, j), cv(getBits(sb, sbits, oa.elemOffset(r, j))));
}

/// Exact widening to f32 (f16, bf16 and small integers): every rounding mode gives the same.
template <DType Src> void kCvtWiden(Core& c, const TileInst& t) {
  using S = typename Tr<Src>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<float> d(c, od);
  Acc<S> a(c, oa);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = static_cast<float>(Tr<Src>::ld(a.at(r, j)));
}

/// f32 -> f16 with round to nearest even (CAST_RINT / CAST_NONE) and the pair's saturation.
void kCvtF32F16Rint(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<uint16_t> d(c, od);
  Acc<float> a(c, oa);
  const bool sat = t.satMode == isa::SatMode::ON;
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      uint16_t h = f2h(a.at(r, j));
      if (sat && (h & 0x7fffu) == 0x7c00u) h = static_cast<uint16_t>((h & 0x8000u) | 0x7bffu);
      d.at(r, j) = h;
    }
}

#ifdef PTO_X86_SIMD
/// kCvtF32F16Rint with F16C on plain row-major, non-overlapping tiles (the same bits: Simd.h).
void kCvtF32F16Simd(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa) ||
      bptr(c, od) == bptr(c, oa))
    return kCvtF32F16Rint(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  uint16_t* d = tptr<uint16_t>(c, od);
  const float* a = tptr<float>(c, oa);
  const bool sat = t.satMode == isa::SatMode::ON;
  if (vc == od.cols && vc == oa.cols) return simd::cvtF32F16Run(d, a, size_t{vr} * vc, sat);
  for (uint32_t r = 0; r < vr; ++r)
    simd::cvtF32F16Run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc, sat);
}
#endif

// ------------------------------------------------------------------ TAXPY / TDEQUANT
template <DType Dd, DType Ds> void kAxpy(Core& c, const TileInst& t) {
  using SD = typename Tr<Dd>::S;
  using SS = typename Tr<Ds>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<SD> d(c, od);
  Acc<SS> a(c, oa);
  const float s = scalarOf<SS, Ds>(t.scalar(c, 0));
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      if constexpr (Dd == DType::F16) {
        // same-type half path: the product and the sum each round to half
        float p = h2f(f2h(h2f(a.at(r, j)) * s));
        d.at(r, j) = f2h(h2f(d.at(r, j)) + p);
      } else {
        // f32 destination: the source is widened to f32 first, product and sum round in f32
        float x = Tr<Ds>::ld(a.at(r, j));
        float p = x * s;
        d.at(r, j) = Tr<Dd>::st(Tr<Dd>::ld(d.at(r, j)) + p);
      }
    }
}

template <DType Src> void kDequant(Core& c, const TileInst& t) {
  using S = typename Tr<Src>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &osc = t.tiles[t.src1],
                    &oof = t.tiles[t.src2];
  const uint32_t paraCols = std::max<int32_t>(1, osc.validCols);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) ||
      !fits(c, t, osc, vr, std::min(paraCols, osc.cols)) ||
      !fits(c, t, oof, vr, std::min(paraCols, oof.cols)))
    return;
  Acc<float> d(c, od), sc(c, osc), of(c, oof);
  Acc<S> a(c, oa);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      const uint32_t pc = std::min(j, paraCols - 1);
      float x = static_cast<float>(a.at(r, j)) - of.at(r, pc);
      d.at(r, j) = x * sc.at(r, pc);
    }
}

// ------------------------------------------------------------------ data movement
/// Reads an element as float/double/int for conversions between tiles of any dtypes.
void kMov(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  const uint8_t* sb = c.buf[oa.loc] + oa.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const unsigned sbits = isa::bitWidth(oa.dtype), dbits = isa::bitWidth(od.dtype);
  if (oa.dtype == od.dtype) {
    if (od.plainRowMajor() && oa.plainRowMajor() && sbits >= 8) {
      for (uint32_t r = 0; r < vr; ++r)
        std::memmove(db + size_t{r} * od.cols * (dbits / 8), sb + size_t{r} * oa.cols * (sbits / 8),
                     size_t{vc} * (dbits / 8));
      return;
    }
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t j = 0; j < vc; ++j)
        setBits(db, dbits, od.elemOffset(r, j), getBits(sb, sbits, oa.elemOffset(r, j)));
    return;
  }
  const isa::Converter cv(oa.dtype, od.dtype, isa::RoundMode::CAST_RINT);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(db, dbits, od.elemOffset(r, j), cv(getBits(sb, sbits, oa.elemOffset(r, j))));
}

void kTrans(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vc, vr)) return;
  const uint8_t* sb = c.buf[oa.loc] + oa.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const unsigned bits = isa::bitWidth(od.dtype);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(db, bits, od.elemOffset(r, j), getBits(sb, bits, oa.elemOffset(j, r)));
}

/// TLOAD: B.IOR = (GM byte address, row stride in bytes). The destination valid region is
/// read; with a Zero/Max/Min pad, the rest of the tile is filled with the pad value first.
void kLoad(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand& od = t.tiles[t.dst];
  if (!fits(c, t, od, vr, vc)) return;
  const unsigned bits = isa::bitWidth(od.dtype), eb = bits / 8;
  const uint64_t addr = t.scalar(c, 0), stride = t.scalar(c, 1);
  uint8_t* db = c.buf[od.loc] + od.offset;
  fillOutsideWithPad(db, od, vr, vc);
  if (vr == 0 || vc == 0) return;
  const uint64_t span =
      (vr - 1) * stride + (uint64_t{vc} * bits + 7) / 8; // packed 4-bit rows round up
  const uint8_t* src = c.translate(addr, span, "TLOAD", false);
  if (!src) return;
  if (od.plainRowMajor() && bits >= 8) {
    for (uint32_t r = 0; r < vr; ++r)
      std::memcpy(db + size_t{r} * od.cols * eb, src + r * stride, size_t{vc} * eb);
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(db, bits, od.elemOffset(r, j), getBits(src + r * stride, bits, j));
}

/// TLOAD from a column-major (DN) view: partition element (r, j) is at addr + j*stride + r*size.
void kLoadDn(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand& od = t.tiles[t.dst];
  if (!fits(c, t, od, vr, vc)) return;
  const unsigned bits = isa::bitWidth(od.dtype), eb = bits / 8;
  const uint64_t addr = t.scalar(c, 0), stride = t.scalar(c, 1);
  uint8_t* db = c.buf[od.loc] + od.offset;
  fillOutsideWithPad(db, od, vr, vc);
  if (vr == 0 || vc == 0) return;
  const uint8_t* src = c.translate(addr, (vc - 1) * stride + uint64_t{vr} * eb, "TLOAD", false);
  if (!src) return;
  for (uint32_t j = 0; j < vc; ++j)
    for (uint32_t r = 0; r < vr; ++r)
      setBits(db, bits, od.elemOffset(r, j), getBits(src + j * stride, bits, r));
}

/// TSTORE to a column-major (DN) view, converting like kStore.
void kStoreDn(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand& os = t.tiles[t.src0];
  if (!fits(c, t, os, vr, vc) || vr == 0 || vc == 0) return;
  const uint64_t addr = t.scalar(c, 0), stride = t.scalar(c, 1);
  DType gmType = os.dtype;
  if (t.hasDatr && t.datrType != enc::kDataTypeNone && t.datrType != 0)
    if (auto d = enc::dtypeOfCode(t.datrType)) gmType = *d;
  const unsigned sbits = isa::bitWidth(os.dtype), gbits = isa::bitWidth(gmType);
  uint8_t* dst = c.translate(addr, (vc - 1) * stride + uint64_t{vr} * (gbits / 8), "TSTORE", true);
  if (!dst) return;
  const uint8_t* sb = c.buf[os.loc] + os.offset;
  const isa::Converter cv(os.dtype, gmType, isa::RoundMode::CAST_RINT);
  for (uint32_t j = 0; j < vc; ++j)
    for (uint32_t r = 0; r < vr; ++r) {
      const uint64_t v = getBits(sb, sbits, os.elemOffset(r, j));
      setBits(dst + j * stride, gbits, r, gmType == os.dtype ? v : cv(v));
    }
}

/// TSTORE: the source valid region to GM. When the argument's element type is narrower than
/// the tile's (acc f32 -> f16/bf16), elements are converted (round to nearest even).
void kStore(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand& os = t.tiles[t.src0];
  if (!fits(c, t, os, vr, vc)) return;
  if (vr == 0 || vc == 0) return;
  const uint64_t addr = t.scalar(c, 0), stride = t.scalar(c, 1);
  const GmRegion* g = c.regionOf(addr);
  DType gmType = g && isa::bitWidth(g->dtype) != isa::bitWidth(os.dtype) ? g->dtype : os.dtype;
  if (t.hasDatr && t.datrType != enc::kDataTypeNone && t.datrType != 0)
    if (auto d = enc::dtypeOfCode(t.datrType)) gmType = *d;
  const unsigned sbits = isa::bitWidth(os.dtype), gbits = isa::bitWidth(gmType), geb = gbits / 8;
  const uint64_t span =
      (vr - 1) * stride + (uint64_t{vc} * gbits + 7) / 8; // packed 4-bit rows round up
  uint8_t* dst = c.translate(addr, span, "TSTORE", true);
  if (!dst) return;
  const uint8_t* sb = c.buf[os.loc] + os.offset;
  if (gmType == os.dtype) {
    if (os.plainRowMajor() && gbits >= 8) {
      for (uint32_t r = 0; r < vr; ++r)
        std::memcpy(dst + r * stride, sb + size_t{r} * os.cols * geb, size_t{vc} * geb);
      return;
    }
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t j = 0; j < vc; ++j)
        setBits(dst + r * stride, gbits, j, getBits(sb, sbits, os.elemOffset(r, j)));
    return;
  }
  const isa::Converter cv(os.dtype, gmType, isa::RoundMode::CAST_RINT);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      setBits(dst + r * stride, gbits, j, cv(getBits(sb, sbits, os.elemOffset(r, j))));
}

/// TGATHER with an index tile: dst[i,j] = src element at storage index idx[i,j].
void kGather(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &oi = t.tiles[t.src1];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oi, vr, vc)) return;
  const unsigned bits = isa::bitWidth(od.dtype), ibits = isa::bitWidth(oi.dtype);
  const bool isSigned = isa::info(oi.dtype).kind == isa::DTypeKind::SInt;
  const uint8_t *sb = c.buf[oa.loc] + oa.offset, *ib = c.buf[oi.loc] + oi.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const int64_t n = int64_t{oa.rows} * oa.cols;
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      uint64_t raw = getBits(ib, ibits, oi.elemOffset(r, j));
      int64_t k = isSigned ? static_cast<int64_t>(raw << (64 - ibits)) >> (64 - ibits)
                           : static_cast<int64_t>(raw);
      if (k < 0 || k >= n) {
        c.error = "TGATHER index " + std::to_string(k) + " is outside the source tile %" + oa.name +
                  " (" + std::to_string(n) + " elements)";
        return;
      }
      setBits(db, bits, od.elemOffset(r, j), getBits(sb, bits, static_cast<size_t>(k)));
    }
}

/// TSCATTER: dst element at storage index idx[i,j] = src[i,j], over the index tile's valid
/// region (its descriptor; the block's bounds when it is dynamic).
void kScatter(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &oi = t.tiles[t.src1];
  const uint32_t vr = oi.validRows >= 0 ? static_cast<uint32_t>(oi.validRows) : t.validRows(c);
  const uint32_t vc = oi.validCols >= 0 ? static_cast<uint32_t>(oi.validCols) : t.validCols(c);
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, oi, vr, vc)) return;
  const unsigned bits = isa::bitWidth(od.dtype), ibits = isa::bitWidth(oi.dtype);
  const bool isSigned = isa::info(oi.dtype).kind == isa::DTypeKind::SInt;
  const uint8_t *sb = c.buf[oa.loc] + oa.offset, *ib = c.buf[oi.loc] + oi.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const int64_t n = int64_t{od.rows} * od.cols;
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      uint64_t raw = getBits(ib, ibits, oi.elemOffset(r, j));
      int64_t k = isSigned ? static_cast<int64_t>(raw << (64 - ibits)) >> (64 - ibits)
                           : static_cast<int64_t>(raw);
      if (k < 0 || k >= n) {
        c.error = "TSCATTER index " + std::to_string(k) + " is outside the destination tile %" +
                  od.name + " (" + std::to_string(n) + " elements)";
        return;
      }
      setBits(db, bits, static_cast<size_t>(k), getBits(sb, bits, oa.elemOffset(r, j)));
    }
}

// ------------------------------------------------------------------ matmul
inline double loadAsDouble(const uint8_t* base, DType d, size_t i) {
  return isa::decodeToDouble(d, getBits(base, isa::bitWidth(d), i));
}

/// C[i,j] = sum_k A[i,k] * B[k,j] (M = LB0, N = LB1, K = LB2); f32 accumulation with a fused
/// multiply-add per k (inputs converted to f32 first), i32 accumulation for integer inputs.
/// This is the reference formulation; kMatmulF32 computes the same for float accumulation.
template <bool IntAcc> void kMatmulRef(Core& c, const TileInst& t) {
  const uint32_t M = t.bound(c, 0, 0), N = t.bound(c, 1, 0), K = t.bound(c, 2, 0);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!fits(c, t, od, M, N) || !fits(c, t, oa, M, K) || !fits(c, t, ob, K, N)) return;
  const uint8_t *ab = c.buf[oa.loc] + oa.offset, *bb = c.buf[ob.loc] + ob.offset;
  std::vector<float> A(size_t{M} * K), B(size_t{K} * N);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t k = 0; k < K; ++k)
      A[size_t{i} * K + k] = static_cast<float>(loadAsDouble(ab, oa.dtype, oa.elemOffset(i, k)));
  for (uint32_t k = 0; k < K; ++k)
    for (uint32_t j = 0; j < N; ++j)
      B[size_t{k} * N + j] = static_cast<float>(loadAsDouble(bb, ob.dtype, ob.elemOffset(k, j)));
  uint8_t* db = c.buf[od.loc] + od.offset;
  const unsigned dbits = isa::bitWidth(od.dtype);
  const TileOperand* accIn = t.acc >= 0 ? &t.tiles[t.acc] : nullptr;
  const TileOperand* bias = t.bias >= 0 ? &t.tiles[t.bias] : nullptr;
  if (accIn && !fits(c, t, *accIn, M, N)) return;
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      if constexpr (IntAcc) {
        int32_t acc = 0;
        for (uint32_t k = 0; k < K; ++k)
          acc = wrapAdd(acc, wrapMul(static_cast<int32_t>(A[size_t{i} * K + k]),
                                     static_cast<int32_t>(B[size_t{k} * N + j])));
        if (accIn)
          acc = wrapAdd(acc, static_cast<int32_t>(getBits(c.buf[accIn->loc] + accIn->offset, 32,
                                                          accIn->elemOffset(i, j))));
        if (bias)
          acc = wrapAdd(acc, static_cast<int32_t>(getBits(c.buf[bias->loc] + bias->offset, 32,
                                                          bias->elemOffset(0, j))));
        setBits(db, dbits, od.elemOffset(i, j), static_cast<uint32_t>(acc));
      } else {
        float acc = 0;
        for (uint32_t k = 0; k < K; ++k)
          acc = std::fma(A[size_t{i} * K + k], B[size_t{k} * N + j], acc);
        if (accIn)
          acc = static_cast<float>(loadAsDouble(c.buf[accIn->loc] + accIn->offset, accIn->dtype,
                                                accIn->elemOffset(i, j))) +
                acc;
        if (bias)
          acc = acc + static_cast<float>(loadAsDouble(c.buf[bias->loc] + bias->offset, bias->dtype,
                                                      bias->elemOffset(0, j)));
        setBits(db, dbits, od.elemOffset(i, j), isa::f32Bits(acc));
      }
    }
}

/// Rows x cols of a tile as a dense row-major f32 array, each element
/// static_cast<float>(decodeToDouble(...)) as kMatmulRef reads it. f32, f16 and bf16 take
/// direct paths (exact, so the same values). Returns false at the first NaN: the NaN codes the
/// direct paths give may differ from decodeToDouble's, and which NaN an fma passes on depends on
/// operand order, so inputs with NaNs go to kMatmulRef.
bool decodeF32(const uint8_t* base, const TileOperand& o, uint32_t rows, uint32_t cols,
               float* out) {
  const bool rm = o.plainRowMajor();
  for (uint32_t i = 0; i < rows; ++i) {
    float* row = out + size_t{i} * cols;
    const size_t start = rm ? size_t{i} * o.cols : 0;
    switch (o.dtype) {
    case DType::F32:
      if (rm)
        std::memcpy(row, base + start * 4, size_t{cols} * 4);
      else
        for (uint32_t j = 0; j < cols; ++j)
          std::memcpy(row + j, base + o.elemOffset(i, j) * 4, 4);
      break;
    case DType::F16:
    case DType::BF16: {
      const bool h = o.dtype == DType::F16;
      for (uint32_t j = 0; j < cols; ++j) {
        uint16_t v;
        std::memcpy(&v, base + (rm ? start + j : o.elemOffset(i, j)) * 2, 2);
        row[j] = h ? h2f(v) : b2f(v);
      }
      break;
    }
    default:
      for (uint32_t j = 0; j < cols; ++j)
        row[j] = static_cast<float>(loadAsDouble(base, o.dtype, o.elemOffset(i, j)));
    }
    for (uint32_t j = 0; j < cols; ++j)
      if (std::isnan(row[j])) return false;
  }
  return true;
}

/// Float-accumulating TMATMUL / TGEMV: inputs decoded once into dense f32 arrays, then
/// C = A * B in i-k-j order (rows of B streamed, a row of C accumulated), the AVX2 + FMA
/// micro-kernel when Simd (picked at selection, like the other tiers). The order of operations
/// per C element is kMatmulRef's: start at +0, one fma per k in increasing k, then `acc + C` and
/// `C + bias` in f32, so the bits agree.
template <bool Simd> void kMatmulF32(Core& c, const TileInst& t) {
  const uint32_t M = t.bound(c, 0, 0), N = t.bound(c, 1, 0), K = t.bound(c, 2, 0);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!fits(c, t, od, M, N) || !fits(c, t, oa, M, K) || !fits(c, t, ob, K, N)) return;
  const TileOperand* accIn = t.acc >= 0 ? &t.tiles[t.acc] : nullptr;
  const TileOperand* bias = t.bias >= 0 ? &t.tiles[t.bias] : nullptr;
  if (accIn && !fits(c, t, *accIn, M, N)) return;
  // Scratch reused across calls on this thread (each worker thread runs one block at a time).
  thread_local std::vector<float> A, B, C;
  A.resize(size_t{M} * K);
  B.resize(size_t{K} * N);
  C.resize(size_t{M} * N);
  if (!decodeF32(bptr(c, oa), oa, M, K, A.data()) || !decodeF32(bptr(c, ob), ob, K, N, B.data()))
    return kMatmulRef<false>(c, t);
#ifdef PTO_X86_SIMD
  if constexpr (Simd)
    simd::matmul(A.data(), B.data(), C.data(), M, N, K);
  else
#endif
  {
    for (uint32_t i = 0; i < M; ++i) {
      float* ci = C.data() + size_t{i} * N;
      std::fill(ci, ci + N, 0.0f);
      for (uint32_t k = 0; k < K; ++k) {
        const float a = A[size_t{i} * K + k];
        const float* bk = B.data() + size_t{k} * N;
        for (uint32_t j = 0; j < N; ++j)
          ci[j] = std::fma(a, bk[j], ci[j]);
      }
    }
  }
  uint8_t* db = bptr(c, od);
  const uint8_t *accb = accIn ? bptr(c, *accIn) : nullptr, *biasb = bias ? bptr(c, *bias) : nullptr;
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      float acc = C[size_t{i} * N + j];
      if (accIn)
        acc = static_cast<float>(loadAsDouble(accb, accIn->dtype, accIn->elemOffset(i, j))) + acc;
      if (bias)
        acc = acc + static_cast<float>(loadAsDouble(biasb, bias->dtype, bias->elemOffset(0, j)));
      const uint32_t bits = isa::f32Bits(acc);
      std::memcpy(db + (od.plainRowMajor() ? size_t{i} * od.cols + j : od.elemOffset(i, j)) * 4,
                  &bits, 4);
    }
}

void kNop(Core&, const TileInst&) {}

// ------------------------------------------------------------------ dtype dispatch (byType:
// KernelUtil.h)

#define PTO_K(NAME, BODY)                                                                          \
  template <typename Op> struct NAME {                                                             \
    template <DType D> struct T {                                                                  \
      static void run(Core& c, const TileInst& t) { BODY; }                                        \
    };                                                                                             \
  };
PTO_K(BinK, (kBinary<D, Op>(c, t)))
PTO_K(ScalK, (kScalar<D, Op>(c, t)))
PTO_K(RowExpK, (kExpandOp<D, Op, true>(c, t)))
PTO_K(ColExpK, (kExpandOp<D, Op, false>(c, t)))
#undef PTO_K
template <template <DType> class U> struct UnK {
  template <DType D> struct T {
    static void run(Core& c, const TileInst& t) { kUnary<D, U<D>>(c, t); }
  };
};
template <Red R> struct RowRedK {
  template <DType D> struct T {
    static void run(Core& c, const TileInst& t) { kRowReduce<D, R>(c, t); }
  };
};
template <Red R> struct ColRedK {
  template <DType D> struct T {
    static void run(Core& c, const TileInst& t) { kColReduce<D, R>(c, t); }
  };
};
template <bool Row> struct ExpK {
  template <DType D> struct T {
    static void run(Core& c, const TileInst& t) { kExpand<D, Row>(c, t); }
  };
};
template <DType D> struct CmpK {
  static void run(Core& c, const TileInst& t) { kCmp<D>(c, t); }
};
template <DType D> struct SelK {
  static void run(Core& c, const TileInst& t) { kSel<D>(c, t); }
};
template <DType D> struct LreluK {
  static void run(Core& c, const TileInst& t) { kLrelu<D>(c, t); }
};

std::atomic<SimdLevel> gSimdLimit{SimdLevel::Avx512Fp16};

} // namespace

namespace cpu {
SimdLevel simdSupported() {
#ifdef PTO_X86_SIMD
  static const SimdLevel level = [] {
    // __builtin_cpu_supports("avx2") also says the OS saves the AVX state (avx512bw: the AVX-512
    // state). F16C (CPUID.1:ECX[29]) and AVX512-FP16 (CPUID.7.0:EDX[23]) are read directly:
    // clang 14's __builtin_cpu_supports knows neither name.
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1);
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !f16c)
      return SimdLevel::Portable;
#ifdef PTO_X86_FP16
    if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((d >> 23) & 1))
      return SimdLevel::Avx512Fp16;
#endif
    return SimdLevel::Avx2;
  }();
  return level;
#else
  return SimdLevel::Portable;
#endif
}
SimdLevel simdLevel() {
  return std::min(simdSupported(), gSimdLimit.load(std::memory_order_relaxed));
}
void setSimdLimit(SimdLevel limit) {
  gSimdLimit.store(limit, std::memory_order_relaxed);
}
} // namespace cpu

std::optional<std::string> selectKernel(TileInst& t) {
  using isa::OpId;
  const DType d =
      t.dst >= 0 ? t.tiles[t.dst].dtype : (t.src0 >= 0 ? t.tiles[t.src0].dtype : t.startType);
  const DType s = t.src0 >= 0 ? t.tiles[t.src0].dtype : d;
  auto need = [&](std::initializer_list<int> roles) -> std::optional<std::string> {
    for (int r : roles)
      if (r < 0) return std::string(t.name) + ": missing tile operand";
    return std::nullopt;
  };
  auto unsupportedType = [&](DType x) {
    return std::string(t.name) + " on " + std::string(isa::spelling(x)) +
           " tiles is not supported by the cpu backend";
  };
  TileKernel k = nullptr;
  switch (t.op) {
// Tile-tile ops and their tile-scalar twins: (op, scalar op, functor, ints, floats).
#define PTO_ARITH_OPS(X)                                                                           \
  X(TADD, TADDS, OAdd, true, true)                                                                 \
  X(TSUB, TSUBS, OSub, true, true)                                                                 \
  X(TMUL, TMULS, OMul, true, true)                                                                 \
  X(TDIV, TDIVS, ODiv, true, true)                                                                 \
  X(TMAX, TMAXS, OMax, true, true)                                                                 \
  X(TMIN, TMINS, OMin, true, true)                                                                 \
  X(TREM, TREMS, ORem, true, true)                                                                 \
  X(TFMOD, TFMODS, ORem, false, true)                                                              \
  X(TAND, TANDS, OAnd, true, false)                                                                \
  X(TOR, TORS, OOr, true, false)                                                                   \
  X(TXOR, TXORS, OXor, true, false)                                                                \
  X(TSHL, TSHLS, OShl, true, false)                                                                \
  X(TSHR, TSHRS, OShr, true, false)
#define BIN(OP, SOP, F, I, FL)                                                                     \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0, t.src1})) return e;                                          \
    k = byType<BinK<F>::template T>(d, I, FL);                                                     \
    break;                                                                                         \
  case OpId::SOP:                                                                                  \
    if (auto e = need({t.dst, t.src0})) return e;                                                  \
    k = byType<ScalK<F>::template T>(d, I, FL);                                                    \
    break;
    PTO_ARITH_OPS(BIN)
#undef BIN
#undef PTO_ARITH_OPS
#define UN(OP, U, I, FL)                                                                           \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0})) return e;                                                  \
    k = byType<UnK<U>::template T>(d, I, FL);                                                      \
    break;
    UN(TEXP, UExp, false, true)
    UN(TLOG, ULog, false, true)
    UN(TSQRT, USqrt, false, true)
    UN(TRSQRT, URsqrt, false, true)
    UN(TRECIP, URecip, false, true)
    UN(TRELU, URelu, true, true)
    UN(TABS, UAbs, true, true)
    UN(TNEG, UNeg, true, true)
    UN(TNOT, UNot, true, false)
#undef UN
#define RED(OP, R, ROW)                                                                            \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0})) return e;                                                  \
    k = ROW ? byType<RowRedK<R>::template T>(d, true, true)                                        \
            : byType<ColRedK<R>::template T>(d, true, true);                                       \
    if (s != d)                                                                                    \
      return std::string(t.name) + ": source and destination types differ (" +                     \
             std::string(isa::spelling(s)) + " -> " + std::string(isa::spelling(d)) + ")";         \
    break;
    RED(TROWSUM, Red::Sum, true)
    RED(TROWMAX, Red::Max, true)
    RED(TROWMIN, Red::Min, true)
    RED(TROWPROD, Red::Prod, true)
    RED(TCOLSUM, Red::Sum, false)
    RED(TCOLMAX, Red::Max, false)
    RED(TCOLMIN, Red::Min, false)
    RED(TCOLPROD, Red::Prod, false)
#undef RED
  case OpId::TROWEXPAND:
  case OpId::TCOLEXPAND:
    if (auto e = need({t.dst, t.src0})) return e;
    k = t.op == OpId::TROWEXPAND ? byType<ExpK<true>::template T>(d, true, true)
                                 : byType<ExpK<false>::template T>(d, true, true);
    break;
#define EXPOP(OP, F, ROW)                                                                          \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0, t.src1})) return e;                                          \
    k = ROW ? byType<RowExpK<F>::template T>(d, true, true)                                        \
            : byType<ColExpK<F>::template T>(d, true, true);                                       \
    break;
    EXPOP(TROWEXPANDADD, OAdd, true)
    EXPOP(TROWEXPANDSUB, OSub, true)
    EXPOP(TROWEXPANDMUL, OMul, true)
    EXPOP(TROWEXPANDDIV, ODiv, true)
    EXPOP(TROWEXPANDMAX, OMax, true)
    EXPOP(TROWEXPANDMIN, OMin, true)
    EXPOP(TROWEXPANDEXPDIF, OExpDif, true)
    EXPOP(TCOLEXPANDADD, OAdd, false)
    EXPOP(TCOLEXPANDSUB, OSub, false)
    EXPOP(TCOLEXPANDMUL, OMul, false)
    EXPOP(TCOLEXPANDDIV, ODiv, false)
    EXPOP(TCOLEXPANDMAX, OMax, false)
    EXPOP(TCOLEXPANDMIN, OMin, false)
    EXPOP(TCOLEXPANDEXPDIF, OExpDif, false)
#undef EXPOP
  case OpId::TCMP:
  case OpId::TCMPS:
    if (auto e = need({t.dst, t.src0})) return e;
    if (t.op == OpId::TCMP && t.src1 < 0) return std::string(t.name) + ": missing tile operand";
    k = byType<CmpK>(s, true, true);
    if (!k) return unsupportedType(s);
    break;
  case OpId::TSEL:
  case OpId::TSELS:
    if (auto e = need({t.dst, t.src0, t.src1})) return e;
    if (t.op == OpId::TSEL && t.src2 < 0) return std::string(t.name) + ": missing tile operand";
    k = byType<SelK>(d, true, true);
    break;
  case OpId::TLRELU:
    if (auto e = need({t.dst, t.src0})) return e;
    k = byType<LreluK>(d, false, true);
    break;
  case OpId::TEXPANDS:
    if (auto e = need({t.dst})) return e;
    k = &kExpands;
    break;
  case OpId::TCVT: {
    if (auto e = need({t.dst, t.src0})) return e;
    t.round = roundOf(t.rmode);
    t.satMode =
        t.sat ? isa::SatMode::ON : isa::SatMode::OFF; // the assembler writes the effective mode
    if (d == DType::F32 && s == DType::F16)
      k = &kCvtWiden<DType::F16>;
    else if (d == DType::F32 && s == DType::BF16)
      k = &kCvtWiden<DType::BF16>;
    else if (d == DType::F32 && s == DType::I16)
      k = &kCvtWiden<DType::I16>;
    else if (d == DType::F32 && s == DType::I8)
      k = &kCvtWiden<DType::I8>;
    else if (d == DType::F32 && s == DType::U8)
      k = &kCvtWiden<DType::U8>;
    else if (d == DType::F16 && s == DType::F32 &&
             isa::effectiveRoundMode(s, d, t.round) == isa::RoundMode::CAST_RINT) {
      k = &kCvtF32F16Rint;
#ifdef PTO_X86_SIMD
      if (simdLevel() >= SimdLevel::Avx2) k = &kCvtF32F16Simd;
#endif
    } else
      k = &kCvtGeneric;
    break;
  }
  case OpId::TAXPY:
    if (auto e = need({t.dst, t.src0})) return e;
    if (d == DType::F32 && s == DType::F32)
      k = &kAxpy<DType::F32, DType::F32>;
    else if (d == DType::F16 && s == DType::F16)
      k = &kAxpy<DType::F16, DType::F16>;
    else if (d == DType::F32 && s == DType::F16)
      k = &kAxpy<DType::F32, DType::F16>;
    else
      return std::string("TAXPY with ") + std::string(isa::spelling(d)) + " destination and " +
             std::string(isa::spelling(s)) +
             " source is not a supported pair (f16/f16, f32/f32, f32/f16)";
    break;
  case OpId::TDEQUANT:
    if (auto e = need({t.dst, t.src0, t.src1, t.src2})) return e;
    if (d != DType::F32 || t.tiles[t.src1].dtype != DType::F32 ||
        t.tiles[t.src2].dtype != DType::F32)
      return std::string("TDEQUANT needs f32 destination, scale and offset tiles");
    if (s == DType::I8)
      k = &kDequant<DType::I8>;
    else if (s == DType::I16)
      k = &kDequant<DType::I16>;
    else
      return std::string("TDEQUANT source must be i8 or i16, not ") + std::string(isa::spelling(s));
    break;
  case OpId::TLOAD:
  case OpId::TPREFETCH:
    if (auto e = need({t.dst})) return e;
    if (t.gmDn && isa::bitWidth(d) < 8) return unsupportedType(d);
    k = t.op == OpId::TPREFETCH ? &kNop : t.gmDn ? &kLoadDn : &kLoad;
    break;
  case OpId::TSTORE:
    if (auto e = need({t.src0})) return e;
    if (t.gmDn && isa::bitWidth(s) < 8) return unsupportedType(s);
    k = t.gmDn ? &kStoreDn : &kStore;
    break;
  case OpId::TMOV:
    if (auto e = need({t.dst, t.src0})) return e;
    k = &kMov;
    break;
  case OpId::TTRANS:
    if (auto e = need({t.dst, t.src0})) return e;
    k = &kTrans;
    break;
  case OpId::TGATHER:
    if (auto e = need({t.dst, t.src0})) return e;
    if (t.src1 < 0)
      return std::string(
          "TGATHER without an index tile (mask patterns) is not supported by the cpu backend");
    k = &kGather;
    break;
  case OpId::TSCATTER:
    if (auto e = need({t.dst, t.src0, t.src1})) return e;
    k = &kScatter;
    break;
  case OpId::TMATMUL:
  case OpId::TMATMUL_ACC:
  case OpId::TMATMUL_BIAS:
  case OpId::TGEMV:
  case OpId::TGEMV_ACC:
  case OpId::TGEMV_BIAS:
    if (auto e = need({t.dst, t.src0, t.src1})) return e;
    if (d == DType::I32)
      k = &kMatmulRef<true>;
    else if (d == DType::F32)
      k = simdLevel() >= SimdLevel::Avx2 ? &kMatmulF32<true> : &kMatmulF32<false>;
    else
      return unsupportedType(d);
    break;
  default: {
    std::optional<std::string> err;
    if (selectLayoutKernel(t, err) || selectMathKernel(t, err)) return err;
    return std::string(t.name) + " is not supported by the cpu backend";
  }
  }
  if (!k) return unsupportedType(d);
#ifdef PTO_X86_SIMD
  if (simdLevel() >= SimdLevel::Avx2)
    if (TileKernel f = simdElementwiseKernel(t.op, d)) k = f;
#endif
  t.kernel = k;
  return std::nullopt;
}

} // namespace pto::rt
