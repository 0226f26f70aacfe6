// cpu backend kernels for reductions (TROW*/TCOL* sum, max, min, prod), broadcasts (TROWEXPAND,
// TCOLEXPAND), compare (TCMP, TCMPS) and select (TSEL, TSELS); selectKernel() (Kernels.cpp) falls
// through to selectReduceKernel() for them. The kernels iterate the destination valid region.
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pto::rt::cpu {
namespace {

using isa::DType;

// ------------------------------------------------------------------ reductions and expands
enum class Red { Sum, Max, Min, Prod };
/// One step of a row or column reduction: the accumulator with the next element folded in.
template <Red R, class C> C combine(C acc, C x) {
  if constexpr (R == Red::Sum)
    return wrapAdd(acc, x);
  else if constexpr (R == Red::Prod)
    return wrapMul(acc, x);
  else if constexpr (R == Red::Max)
    return acc < x ? x : acc;
  else
    return x < acc ? x : acc;
}

/// True when a reduction may read several source elements before writing any result: both
/// tiles plain row-major and sharing no byte (a destination placed over its source keeps the
/// element-by-element order).
inline bool groupedReduction(Core& c, const TileOperand& od, const TileOperand& oa) {
  return od.plainRowMajor() && oa.plainRowMajor() && disjoint(c, od, oa);
}

#ifdef PTO_X86_SIMD
/// The vector form of combine<R> on f32 lanes (Simd.h: each keeps the accumulator as the first
/// operand, as combine does).
template <Red R> struct VecStep;
template <> struct VecStep<Red::Sum> : simd::VAdd {};
template <> struct VecStep<Red::Prod> : simd::VMul {};
template <> struct VecStep<Red::Max> : simd::VMax {};
template <> struct VecStep<Red::Min> : simd::VMin {};
template <Red R> struct ScalarStep {
  static float f(float acc, float x) { return combine<R>(acc, x); }
};
#endif

/// Row reductions in the documented order (each row from column 0 up). One row is a chain of
/// dependent steps, so rows are taken eight at a time, as eight independent chains each in its
/// own row's order: the same results, eight steps in flight.
template <DType D, Red R> void kRowReduce(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  using C = typename Tr<D>::C;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c); // the source valid region
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, vr, 1)) return;
  if (vc == 0) return;
  Acc<S> d(c, od), a(c, oa);
  constexpr uint32_t kChains = 8;
  uint32_t r = 0;
  if (groupedReduction(c, od, oa))
    for (; r + kChains <= vr; r += kChains) {
      const S* rows[kChains];
      C acc[kChains];
      // Unrolled completely, so that the chains live in registers (GCC does not at -O2).
#pragma GCC unroll 8
      for (uint32_t k = 0; k < kChains; ++k) {
        rows[k] = a.row(r + k);
        acc[k] = Tr<D>::ld(rows[k][0]);
      }
      for (uint32_t j = 1; j < vc; ++j)
#pragma GCC unroll 8
        for (uint32_t k = 0; k < kChains; ++k)
          acc[k] = combine<R>(acc[k], Tr<D>::ld(rows[k][j]));
#pragma GCC unroll 8
      for (uint32_t k = 0; k < kChains; ++k)
        d.at(r + k, 0) = Tr<D>::st(acc[k]);
    }
  for (; r < vr; ++r) {
    C acc = Tr<D>::ld(a.at(r, 0));
    for (uint32_t j = 1; j < vc; ++j)
      acc = combine<R>(acc, Tr<D>::ld(a.at(r, j)));
    d.at(r, 0) = Tr<D>::st(acc);
  }
}

/// Column reductions in the documented order (each column from row 0 down). Walking down one
/// column at a time reads the tile across its rows, so a block of columns is reduced together,
/// row after row: each column still in its own order, the rows read contiguously.
template <DType D, Red R> void kColReduce(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  using C = typename Tr<D>::C;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, 1, vc)) return;
  if (vr == 0) return;
  Acc<S> d(c, od), a(c, oa);
  if (groupedReduction(c, od, oa)) {
    constexpr uint32_t kBlock = 256;
    for (uint32_t j0 = 0; j0 < vc; j0 += kBlock) {
      const uint32_t n = std::min(kBlock, vc - j0);
      C acc[kBlock];
      const S* first = a.row(0) + j0;
      for (uint32_t j = 0; j < n; ++j)
        acc[j] = Tr<D>::ld(first[j]);
      for (uint32_t r = 1; r < vr; ++r) {
        const S* row = a.row(r) + j0;
        for (uint32_t j = 0; j < n; ++j)
          acc[j] = combine<R>(acc[j], Tr<D>::ld(row[j]));
      }
      S* out = d.row(0) + j0;
      for (uint32_t j = 0; j < n; ++j)
        out[j] = Tr<D>::st(acc[j]);
    }
    return;
  }
  for (uint32_t j = 0; j < vc; ++j) {
    C acc = Tr<D>::ld(a.at(0, j));
    for (uint32_t r = 1; r < vr; ++r)
      acc = combine<R>(acc, Tr<D>::ld(a.at(r, j)));
    d.at(0, j) = Tr<D>::st(acc);
  }
}

#ifdef PTO_X86_SIMD
/// The reductions of a vr x vc f32 block (row r at a + r * pitch): rows eight at a time (each
/// row in its own order, transposed into lanes), or all columns down the rows. put(i, v) stores
/// result i (row i, or column i).
template <Red R, bool Row, typename Put>
void reduceF32Block(const float* a, size_t pitch, uint32_t vr, uint32_t vc, Put put) {
  if constexpr (!Row) {
    float out[64];
    for (uint32_t j0 = 0; j0 < vc; j0 += 64) {
      const uint32_t n = std::min<uint32_t>(64, vc - j0);
      simd::colReduce<VecStep<R>, ScalarStep<R>>(out, a + j0, pitch, vr, n);
      for (uint32_t j = 0; j < n; ++j)
        put(j0 + j, out[j]);
    }
  } else {
    uint32_t r = 0;
    float out[16];
    for (; r + 16 <= vr; r += 16) {
      simd::rowReduce8<VecStep<R>, 2>(out, a + size_t{r} * pitch, pitch, vc);
      for (uint32_t k = 0; k < 16; ++k)
        put(r + k, out[k]);
    }
    for (; r + 8 <= vr; r += 8) {
      simd::rowReduce8<VecStep<R>, 1>(out, a + size_t{r} * pitch, pitch, vc);
      for (uint32_t k = 0; k < 8; ++k)
        put(r + k, out[k]);
    }
    for (; r < vr; ++r) {
      const float* row = a + size_t{r} * pitch;
      float acc = row[0];
      for (uint32_t j = 1; j < vc; ++j)
        acc = combine<R>(acc, row[j]);
      put(r, acc);
    }
  }
}

/// f32 and f16 reductions on AVX2 when the tiles allow grouping (reduceF32Block; f16 sources
/// widened to f32 first, exactly, as the portable kernel reads them, and each result rounded
/// once); otherwise the portable kernels.
template <DType D, Red R, bool Row> void kReduceSimd(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  if (vr == 0 || vc == 0 || !groupedReduction(c, od, oa))
    return Row ? kRowReduce<D, R>(c, t) : kColReduce<D, R>(c, t);
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, Row ? vr : 1, Row ? 1 : vc)) return;
  const S* a = tptr<S>(c, oa);
  S* d = tptr<S>(c, od);
  auto put = [&](uint32_t i, float v) { d[Row ? size_t{i} * od.cols : i] = Tr<D>::st(v); };
  if constexpr (D == DType::F32) {
    reduceF32Block<R, Row>(a, oa.cols, vr, vc, put);
  } else {
    thread_local std::vector<float> wide;
    wide.resize(size_t{vr} * vc);
    for (uint32_t r = 0; r < vr; ++r)
      simd::widenF16(wide.data() + size_t{r} * vc, a + size_t{r} * oa.cols, vc);
    reduceF32Block<R, Row>(wide.data(), vc, vr, vc, put);
  }
}
#endif

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
  const unsigned cmode = t.datr ? t.datr->cmode : 0; // EQ without a B.DATR
  uint8_t* base = c.buf[od.loc] + od.offset;
  const unsigned bits = isa::bitWidth(od.dtype);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      auto x = Tr<D>::ld(a.at(r, j));
      auto y = scalar ? s : Tr<D>::ld(Acc<S>(c, t.tiles[t.src1]).at(r, j));
      bool v = false;
      switch (cmode) {
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

} // namespace

bool selectReduceKernel(TileInst& t, std::optional<std::string>& err) {
  using isa::OpId;
  Selection sel(t, err);
  TileKernel k = nullptr;
  DType kernelType = sel.d; // the type a missing kernel is reported for
  switch (t.op) {
#ifdef PTO_X86_SIMD
#define RED_SIMD(R, ROW)                                                                           \
  if (simdLevel() >= SimdLevel::Avx2 && sel.d == DType::F32) k = &kReduceSimd<DType::F32, R, ROW>; \
  if (simdLevel() >= SimdLevel::Avx2 && sel.d == DType::F16) k = &kReduceSimd<DType::F16, R, ROW>;
#else
#define RED_SIMD(R, ROW)
#endif
#define RED(OP, R, ROW)                                                                            \
  case OpId::OP:                                                                                   \
    if (sel.missing({t.dst, t.src0})) return true;                                                 \
    k = ROW ? byType<RowRedK<R>::template T>(sel.d, true, true)                                    \
            : byType<ColRedK<R>::template T>(sel.d, true, true);                                   \
    if (sel.s != sel.d)                                                                            \
      return sel.fail(std::string(t.name) + ": source and destination types differ (" +            \
                      std::string(isa::spelling(sel.s)) + " -> " +                                 \
                      std::string(isa::spelling(sel.d)) + ")");                                    \
    RED_SIMD(R, ROW)                                                                               \
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
#undef RED_SIMD
  case OpId::TROWEXPAND:
  case OpId::TCOLEXPAND: {
    if (sel.missing({t.dst, t.src0})) return true;
    // A broadcast copies bits: the 8-bit float formats (legal for it in isa/Ops.def) take the
    // u8 kernel.
    DType bits = sel.d;
    if (bits == DType::F8E4M3 || bits == DType::F8E5M2 || bits == DType::HIF8 ||
        bits == DType::E8M0)
      bits = DType::U8;
    k = t.op == OpId::TROWEXPAND ? byType<ExpK<true>::template T>(bits, true, true)
                                 : byType<ExpK<false>::template T>(bits, true, true);
    break;
  }
  case OpId::TCMP:
  case OpId::TCMPS:
    if (sel.missing({t.dst, t.src0})) return true;
    if (t.op == OpId::TCMP && t.src1 < 0)
      return sel.fail(std::string(t.name) + ": missing tile operand");
    k = byType<CmpK>(sel.s, true, true);
    kernelType = sel.s; // a compare's kernel is chosen by its source type
    break;
  case OpId::TSEL:
  case OpId::TSELS:
    if (sel.missing({t.dst, t.src0, t.src1})) return true;
    if (t.op == OpId::TSEL && t.src2 < 0)
      return sel.fail(std::string(t.name) + ": missing tile operand");
    k = byType<SelK>(sel.d, true, true);
    break;
  default:
    return false;
  }
  if (!k) return sel.unsupportedType(kernelType);
  t.kernel = k;
  return true;
}

} // namespace pto::rt::cpu
