// cpu backend kernels for reductions (TROW*/TCOL* sum, max, min, prod), broadcasts (TROWEXPAND,
// TCOLEXPAND), compare (TCMP, TCMPS) and select (TSEL, TSELS); selectKernel() (Kernels.cpp) falls
// through to selectReduceKernel() for them. The kernels iterate the destination valid region.
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
      acc = combine<R>(acc, Tr<D>::ld(a.at(r, j)));
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
      acc = combine<R>(acc, Tr<D>::ld(a.at(r, j)));
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
#define RED(OP, R, ROW)                                                                            \
  case OpId::OP:                                                                                   \
    if (sel.missing({t.dst, t.src0})) return true;                                                 \
    k = ROW ? byType<RowRedK<R>::template T>(sel.d, true, true)                                    \
            : byType<ColRedK<R>::template T>(sel.d, true, true);                                   \
    if (sel.s != sel.d)                                                                            \
      return sel.fail(std::string(t.name) + ": source and destination types differ (" +            \
                      std::string(isa::spelling(sel.s)) + " -> " +                                 \
                      std::string(isa::spelling(sel.d)) + ")");                                    \
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
    if (sel.missing({t.dst, t.src0})) return true;
    k = t.op == OpId::TROWEXPAND ? byType<ExpK<true>::template T>(sel.d, true, true)
                                 : byType<ExpK<false>::template T>(sel.d, true, true);
    break;
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
