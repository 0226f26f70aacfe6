// cpu backend tile kernels. selectKernel() picks one instantiation per (op, dtypes) when the
// image is decoded; the kernels iterate the destination valid region (the B.DIM bounds) and
// never touch elements outside it. Plain row-major tiles take contiguous row loops; other
// layouts go through TileOperand::elemOffset (reference 4.3).
#include "isa/Encoding.h"
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/HalfTable.h"
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"
#include "runtime/cpu/VecMath.h"

#include <algorithm>
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
/// The operands swapped: TDIVS_SF runs the tile-scalar kernel with Flip<ODiv>, scalar / x.
template <typename Op> struct Flip {
  template <typename C> static C f(C a, C b) { return Op::f(b, a); }
};
/// TFMOD: the remainder of the truncated quotient, with the dividend's sign (C's fmod, %).
struct OFmod {
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
/// TREM: a - floor(a / b) * b, the remainder of the floored quotient, which takes the
/// divisor's sign (docs/isa/TREM.md: "corrected to match the sign of the divider"; unlike
/// TFMOD): fmod's result moved by one divisor when the signs differ.
struct ORem {
  template <typename C> static C f(C a, C b) {
    C r = OFmod::f(a, b);
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>)
        if (b != 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
    } else {
      if (r != 0 && std::signbit(r) != std::signbit(b)) r = r + b;
    }
    return r;
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
/// How an f16 kernel computes: F16C on 8 lanes, F16C on 16 lanes (AVX-512F), or natively in
/// f16 (AVX512-FP16). f32 and bf16 always take F16c8's 8-lane runs.
enum class F16Path { F16c8, F16c16, Native };

template <DType D, typename Op, typename VOp, F16Path H = F16Path::F16c8>
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
    if constexpr (H == F16Path::Native) return simd::binaryRunH<VOp>(d, a, b, n);
#endif
    if constexpr (H == F16Path::F16c16) return simd::binaryRunF16x16<Op, VOp>(d, a, b, n);
    simd::binaryRun<D, Op, VOp>(d, a, b, n);
  };
  if (vc == od.cols && vc == oa.cols && vc == ob.cols) return run(d, a, b, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, b + size_t{r} * ob.cols, vc);
}

template <DType D, typename Op, bool Row> void kExpandOp(Core& c, const TileInst& t);

/// TROWEXPAND{ADD,SUB,MUL,DIV,MAX,MIN} (Row) and the TCOLEXPAND forms on f32 / f16 / bf16:
/// row r is the tile-scalar op with src1[r, 0] (Simd.h scalarRun), or the tile-tile op with
/// src1's row 0 (binaryRun). src1 must share no byte with dst (it is read for every element,
/// so a dst written over it would change the operand the element loop reads); other cases take
/// the portable kernel.
template <DType D, typename Op, typename VOp, bool Row>
void kExpandSimd(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !ob.plainRowMajor() ||
      !sameOrDisjoint(c, od, oa) || !disjoint(c, od, ob))
    return kExpandOp<D, Op, Row>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) ||
      !fits(c, t, ob, Row ? vr : 1, Row ? 1 : vc))
    return;
  S* d = tptr<S>(c, od);
  const S *a = tptr<S>(c, oa), *b = tptr<S>(c, ob);
  for (uint32_t r = 0; r < vr; ++r) {
    S* dr = d + size_t{r} * od.cols;
    const S* ar = a + size_t{r} * oa.cols;
    if constexpr (Row)
      simd::scalarRun<D, Op, VOp>(dr, ar, Tr<D>::ld(b[size_t{r} * ob.cols]), vc);
    else
      simd::binaryRun<D, Op, VOp>(dr, ar, b, vc);
  }
}

template <DType D, typename Op, typename VOp, F16Path H = F16Path::F16c8>
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
    if constexpr (H == F16Path::Native)
      return simd::scalarRunH<VOp>(d, a, static_cast<uint16_t>(bits), n);
#endif
    if constexpr (H == F16Path::F16c16) return simd::scalarRunF16x16<Op, VOp>(d, a, s, n);
    simd::scalarRun<D, Op, VOp>(d, a, s, n);
  };
  if (vc == od.cols && vc == oa.cols) return run(d, a, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc);
}

template <DType D> struct UExp;
template <DType D> struct ULog;
template <DType D> struct USqrt;
template <DType D> struct URsqrt;
template <DType D> struct URecip;
/// An f32 unary op through its VecMath.h run (defined after kUnary).
template <void (*F)(float*, const float*, size_t, bool), typename U>
void kUnaryF32Simd(Core& c, const TileInst& t);
/// An f16 unary op of one IEEE f32 operation on 8 lanes (defined after kUnary).
template <typename U, typename VOp> void kUnaryF16Simd(Core& c, const TileInst& t);

template <typename Op, typename VOp> TileKernel simdFloatKernel(DType d, bool scalar) {
  switch (d) {
  case DType::F32:
    return scalar ? &kScalarSimd<DType::F32, Op, VOp> : &kBinarySimd<DType::F32, Op, VOp>;
  case DType::F16:
#ifdef PTO_X86_FP16
    if (simdLevel() >= SimdLevel::Avx512Fp16)
      return scalar ? &kScalarSimd<DType::F16, Op, VOp, F16Path::Native>
                    : &kBinarySimd<DType::F16, Op, VOp, F16Path::Native>;
#endif
    if (simdLevel() >= SimdLevel::Avx512)
      return scalar ? &kScalarSimd<DType::F16, Op, VOp, F16Path::F16c16>
                    : &kBinarySimd<DType::F16, Op, VOp, F16Path::F16c16>;
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
#define PTO_EXPAND_SIMD(ROWOP, COLOP, O, V)                                                        \
  case OpId::ROWOP:                                                                                \
  case OpId::COLOP: {                                                                              \
    const bool row = op == OpId::ROWOP;                                                            \
    switch (d) {                                                                                   \
    case DType::F32:                                                                               \
      return row ? &kExpandSimd<DType::F32, O, V, true> : &kExpandSimd<DType::F32, O, V, false>;   \
    case DType::F16:                                                                               \
      return row ? &kExpandSimd<DType::F16, O, V, true> : &kExpandSimd<DType::F16, O, V, false>;   \
    case DType::BF16:                                                                              \
      return row ? &kExpandSimd<DType::BF16, O, V, true> : &kExpandSimd<DType::BF16, O, V, false>; \
    default:                                                                                       \
      return nullptr;                                                                              \
    }                                                                                              \
  }
    PTO_EXPAND_SIMD(TROWEXPANDADD, TCOLEXPANDADD, OAdd, simd::VAdd)
    PTO_EXPAND_SIMD(TROWEXPANDSUB, TCOLEXPANDSUB, OSub, simd::VSub)
    PTO_EXPAND_SIMD(TROWEXPANDMUL, TCOLEXPANDMUL, OMul, simd::VMul)
    PTO_EXPAND_SIMD(TROWEXPANDDIV, TCOLEXPANDDIV, ODiv, simd::VDiv)
    PTO_EXPAND_SIMD(TROWEXPANDMAX, TCOLEXPANDMAX, OMax, simd::VMax)
    PTO_EXPAND_SIMD(TROWEXPANDMIN, TCOLEXPANDMIN, OMin, simd::VMin)
#undef PTO_EXPAND_SIMD
  case OpId::TEXP:
    return d == DType::F32 ? &kUnaryF32Simd<expF32, UExp<DType::F32>> : nullptr;
  case OpId::TLOG:
    return d == DType::F32 ? &kUnaryF32Simd<logF32, ULog<DType::F32>> : nullptr;
  case OpId::TSQRT:
    return d == DType::F32   ? &kUnaryF32Simd<sqrtF32, USqrt<DType::F32>>
           : d == DType::F16 ? &kUnaryF16Simd<USqrt<DType::F16>, simd::VSqrt>
                             : nullptr;
  case OpId::TRSQRT:
    return d == DType::F32 ? &kUnaryF32Simd<rsqrtF32, URsqrt<DType::F32>> : nullptr;
  case OpId::TRECIP:
    return d == DType::F32   ? &kUnaryF32Simd<recipF32, URecip<DType::F32>>
           : d == DType::F16 ? &kUnaryF16Simd<URecip<DType::F16>, simd::VRecip>
                             : nullptr;
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

/// One element of a unary op: its stored bits from the source's, per the op's definition.
template <DType D, typename Op> typename Tr<D>::S unaryElem(typename Tr<D>::S x) {
  return Tr<D>::st(Op::f(Tr<D>::ld(x)));
}

/// d[r, j] = f(a[r, j]) over the valid region, element by element in row order (so an in-place
/// or overlapping destination sees what the definition says).
template <typename S, typename F> void unaryLoops(Core& c, const TileInst& t, F f) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  Acc<S> d(c, od), a(c, oa);
  if (d.rm && a.rm) {
    for (uint32_t r = 0; r < vr; ++r) {
      S* dr = d.row(r);
      const S* ar = a.row(r);
      for (uint32_t j = 0; j < vc; ++j)
        dr[j] = f(ar[j]);
    }
    return;
  }
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = f(a.at(r, j));
}

template <DType D, typename Op> void kUnary(Core& c, const TileInst& t) {
  unaryLoops<typename Tr<D>::S>(c, t, unaryElem<D, Op>);
}

/// An f16 TEXP, TLOG, TSQRT, TRSQRT or TRECIP: computed directly until the op has done 65536
/// elements in this process, then by a lookup in the table of its results (HalfTable.h).
template <typename Op> void kUnaryF16Table(Core& c, const TileInst& t) {
  static HalfTable table;
  if (const uint16_t* lut = table.ready()) {
    const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
    if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa))
      return unaryLoops<uint16_t>(c, t, [lut](uint16_t x) { return lut[x]; });
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
    uint16_t* d = tptr<uint16_t>(c, od);
    const uint16_t* a = tptr<uint16_t>(c, oa);
    for (uint32_t r = 0; r < vr; ++r)
      HalfTable::lookupRun(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc, lut);
    return;
  }
  kUnary<DType::F16, Op>(c, t);
  if (table.countDirect(size_t{t.validRows(c)} * t.validCols(c)))
    table.build(unaryElem<DType::F16, Op>);
}

#ifdef PTO_X86_SIMD
/// TEXP, TLOG, TSQRT, TRSQRT, TRECIP on f32 row-major tiles through the vector runs
/// (runtime/cpu/VecMath.h: bit-identical to U<F32>); other layouts and overlaps take the
/// portable kernel.
template <void (*F)(float*, const float*, size_t, bool), typename U>
void kUnaryF32Simd(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa))
    return kUnary<DType::F32, U>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  float* d = tptr<float>(c, od);
  const float* a = tptr<float>(c, oa);
  if (vc == od.cols && vc == oa.cols) return F(d, a, size_t{vr} * vc, true);
  for (uint32_t r = 0; r < vr; ++r)
    F(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc, true);
}

/// TSQRT, TRECIP on f16 row-major tiles: widened to f32 (exact), one f32 IEEE operation, rounded
/// once to f16 (Simd.h); f32's 24 bits >= 2 * 11 + 2, so the double rounding of the definition
/// (to f32, then to f16) gives the correctly rounded f16 result, as the vector path does. Other
/// layouts and overlaps take the table kernel.
template <typename U, typename VOp> void kUnaryF16Simd(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!od.plainRowMajor() || !oa.plainRowMajor() || !sameOrDisjoint(c, od, oa))
    return kUnaryF16Table<U>(c, t);
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc)) return;
  uint16_t* d = tptr<uint16_t>(c, od);
  const uint16_t* a = tptr<uint16_t>(c, oa);
  if (vc == od.cols && vc == oa.cols)
    return simd::unaryRun<DType::F16, U, VOp>(d, a, size_t{vr} * vc);
  for (uint32_t r = 0; r < vr; ++r)
    simd::unaryRun<DType::F16, U, VOp>(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc);
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
template <DType D> struct LreluK {
  static void run(Core& c, const TileInst& t) { kLrelu<D>(c, t); }
};

} // namespace

std::optional<std::string> selectKernel(TileInst& t) {
  using isa::OpId;
  const DType d =
      t.dst >= 0 ? t.tiles[t.dst].dtype : (t.src0 >= 0 ? t.tiles[t.src0].dtype : t.startType);
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
  // A high-precision form computes what its base op does here: the correctly rounded result.
  const OpId op = isa::defaultPrecisionForm(t.op);
  switch (op) {
// Tile-tile ops and their tile-scalar twins: (op, scalar op, functor, ints, floats).
#define PTO_ARITH_OPS(X)                                                                           \
  X(TADD, TADDS, OAdd, true, true)                                                                 \
  X(TSUB, TSUBS, OSub, true, true)                                                                 \
  X(TMUL, TMULS, OMul, true, true)                                                                 \
  X(TDIV, TDIVS, ODiv, true, true)                                                                 \
  X(TMAX, TMAXS, OMax, true, true)                                                                 \
  X(TMIN, TMINS, OMin, true, true)                                                                 \
  X(TREM, TREMS, ORem, true, true)                                                                 \
  X(TFMOD, TFMODS, OFmod, false, true)                                                             \
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
  case OpId::TDIVS_SF:
    if (auto e = need({t.dst, t.src0})) return e;
    k = byType<ScalK<Flip<ODiv>>::template T>(d, true, true);
    break;
#undef PTO_ARITH_OPS
#define UN(OP, U, I, FL)                                                                           \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0})) return e;                                                  \
    k = byType<UnK<U>::template T>(d, I, FL);                                                      \
    break;
// The float ops of one input with f16 results by table (kUnaryF16Table).
#define UN_TABLE(OP, U)                                                                            \
  case OpId::OP:                                                                                   \
    if (auto e = need({t.dst, t.src0})) return e;                                                  \
    k = d == DType::F16 ? &kUnaryF16Table<U<DType::F16>>                                           \
                        : byType<UnK<U>::template T>(d, false, true);                              \
    break;
    UN_TABLE(TEXP, UExp)
    UN_TABLE(TLOG, ULog)
    UN_TABLE(TSQRT, USqrt)
    UN_TABLE(TRSQRT, URsqrt)
    UN_TABLE(TRECIP, URecip)
#undef UN_TABLE
    UN(TRELU, URelu, true, true)
    UN(TABS, UAbs, true, true)
    UN(TNEG, UNeg, true, true)
    UN(TNOT, UNot, true, false)
#undef UN
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
  case OpId::TLRELU:
    if (auto e = need({t.dst, t.src0})) return e;
    k = byType<LreluK>(d, false, true);
    break;
  case OpId::TEXPANDS:
    if (auto e = need({t.dst})) return e;
    k = &kExpands;
    break;
  default: {
    std::optional<std::string> err;
    if (selectReduceKernel(t, err) || selectMoveKernel(t, err) || selectConvertKernel(t, err) ||
        selectLayoutKernel(t, err) || selectMathKernel(t, err) || selectPipeKernel(t, err))
      return err;
    return std::string(t.name) + " is not supported by the cpu backend";
  }
  }
  if (!k) return unsupportedType(d);
#ifdef PTO_X86_SIMD
  if (simdLevel() >= SimdLevel::Avx2)
    if (TileKernel f = simdElementwiseKernel(op, d)) k = f;
#endif
  t.kernel = k;
  return std::nullopt;
}

} // namespace pto::rt
