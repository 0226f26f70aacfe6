// cpu kernels that compute: TPART*, TADDC/TSUBC/TADDSC/TSUBSC, TPRELU, the arg reductions,
// TQUANT, THISTOGRAM and the MX matmuls (docs/runtime.md). Per-dtype instantiations are
// chosen at load time. The sorts live in SortKernels.cpp.
#include "isa/Numerics.h"
#include "runtime/cpu/KernelUtil.h"

#include <algorithm>
#include <vector>

namespace pto::rt::cpu {
namespace {

using isa::DType;
using isa::OpId;

/// Picks K<D>::run for an arithmetic element type (nullptr for the others, f64 included).
template <template <DType> class K>
TileKernel arith(DType d, bool floats = true, bool ints = true) {
  return d == DType::F64 ? nullptr : byType<K>(d, ints, floats);
}

enum class Bin { Add, Sub, Mul, Max, Min };
template <Bin B, typename C> inline C apply(C a, C b) {
  if constexpr (B == Bin::Add)
    return wrapAdd(a, b);
  else if constexpr (B == Bin::Sub)
    return wrapSub(a, b);
  else if constexpr (B == Bin::Mul)
    return wrapMul(a, b);
  else if constexpr (B == Bin::Max)
    return a < b ? b : a;
  else
    return b < a ? b : a;
}

// ------------------------------------------------------------------ TPART*
/// dst[i,j] = op(src0, src1) where both sources are valid at (i, j), the valid one where only
/// one is, and untouched where neither is; over the destination valid region.
template <Bin B> struct Part {
  template <DType D> struct K {
    static void run(Core& c, const TileInst& t) {
      using S = typename Tr<D>::S;
      const uint32_t vr = t.validRows(c), vc = t.validCols(c);
      const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
      const Region ra = sourceRegion(c, t, oa), rb = sourceRegion(c, t, ob);
      if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, ra.rows, ra.cols) ||
          !fits(c, t, ob, rb.rows, rb.cols))
        return;
      Acc<S> d(c, od), a(c, oa), b(c, ob);
      for (uint32_t r = 0; r < vr; ++r)
        for (uint32_t j = 0; j < vc; ++j) {
          const bool ia = r < ra.rows && j < ra.cols, ib = r < rb.rows && j < rb.cols;
          if (ia && ib)
            d.at(r, j) = Tr<D>::st(apply<B>(Tr<D>::ld(a.at(r, j)), Tr<D>::ld(b.at(r, j))));
          else if (ia)
            d.at(r, j) = a.at(r, j);
          else if (ib)
            d.at(r, j) = b.at(r, j);
        }
    }
  };
};

/// TPARTARGMAX / TPARTARGMIN as pto-isa's NPU kernels run them: over dst's valid region, where
/// both sources are valid the greater (smaller) value with its index, src0's on a tie (A2/A3
/// selects src0 where vcmp_ge(src0, src1) / vcmp_le holds, so a NaN takes src1; A5 selects src1
/// where vcmp_gt(src1, src0) / vcmp_lt holds, so a NaN takes src0; pto-isa's CPU simulator and
/// docs give ties to src1, the NPU does not); where one is valid its value and index; nothing
/// where neither is. An index tile has its value tile's region.
template <bool Max> struct PartArg {
  template <DType D> struct K {
    static void run(Core& c, const TileInst& t) {
      using S = typename Tr<D>::S;
      const uint32_t vr = t.validRows(c), vc = t.validCols(c);
      const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
      const TileOperand &xd = t.tiles[t.dst1], &xa = t.tiles[t.src2], &xb = t.tiles[t.src3];
      const Region ra = sourceRegion(c, t, oa), rb = sourceRegion(c, t, ob);
      if (!fits(c, t, od, vr, vc) || !fits(c, t, xd, vr, vc) || !fits(c, t, oa, ra.rows, ra.cols) ||
          !fits(c, t, xa, ra.rows, ra.cols) || !fits(c, t, ob, rb.rows, rb.cols) ||
          !fits(c, t, xb, rb.rows, rb.cols))
        return;
      Acc<S> d(c, od), a(c, oa), b(c, ob);
      const unsigned bits = isa::bitWidth(xd.dtype);
      uint8_t* xdb = bptr(c, xd);
      const uint8_t *xab = bptr(c, xa), *xbb = bptr(c, xb);
      for (uint32_t r = 0; r < vr; ++r)
        for (uint32_t j = 0; j < vc; ++j) {
          const bool ia = r < ra.rows && j < ra.cols, ib = r < rb.rows && j < rb.cols;
          if (!ia && !ib) continue;
          bool takeA = ia;
          if (ia && ib) {
            const auto x = Tr<D>::ld(a.at(r, j)), y = Tr<D>::ld(b.at(r, j));
            if (c.arch == isa::Arch::A5)
              takeA = !(Max ? y > x : y < x);
            else
              takeA = Max ? x >= y : x <= y;
          }
          d.at(r, j) = takeA ? a.at(r, j) : b.at(r, j);
          const uint64_t index = takeA ? getBits(xab, bits, xa.elemOffset(r, j))
                                       : getBits(xbb, bits, xb.elemOffset(r, j));
          setBits(xdb, bits, xd.elemOffset(r, j), index);
        }
    }
  };
};

// ------------------------------------------------------------------ ternary
/// TADDC / TSUBC: (src0 op src1) + src2; TADDSC / TSUBSC: (src0 op scalar) + src1. Each of
/// the two operations rounds to the element type, as the NPU runs two vector instructions.
template <Bin B, bool Scalar> struct Ternary {
  template <DType D> struct K {
    static void run(Core& c, const TileInst& t) {
      using S = typename Tr<D>::S;
      const uint32_t vr = t.validRows(c), vc = t.validCols(c);
      const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
      const TileOperand& oc = Scalar ? ob : t.tiles[t.src2];
      if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) || !fits(c, t, ob, vr, vc) ||
          !fits(c, t, oc, vr, vc))
        return;
      const auto s = scalarOf<S, D>(t.scalar(c, 0));
      Acc<S> d(c, od), a(c, oa), b(c, ob), e(c, oc);
      for (uint32_t r = 0; r < vr; ++r)
        for (uint32_t j = 0; j < vc; ++j) {
          const auto x = Tr<D>::ld(a.at(r, j));
          const S first = Tr<D>::st(apply<B>(x, Scalar ? s : Tr<D>::ld(b.at(r, j))));
          d.at(r, j) = Tr<D>::st(wrapAdd(Tr<D>::ld(first), Tr<D>::ld(e.at(r, j))));
        }
    }
  };
};

/// TPRELU: x > 0 ? x : x * slope[i,j].
template <DType D> struct Prelu {
  static void run(Core& c, const TileInst& t) {
    using S = typename Tr<D>::S;
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
    if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) || !fits(c, t, ob, vr, vc)) return;
    Acc<S> d(c, od), a(c, oa), b(c, ob);
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t j = 0; j < vc; ++j) {
        const auto x = Tr<D>::ld(a.at(r, j));
        d.at(r, j) = x > 0 ? a.at(r, j) : Tr<D>::st(x * Tr<D>::ld(b.at(r, j)));
      }
  }
};

// ------------------------------------------------------------------ arg reductions
/// Index of the first maximum (Max) or minimum of a row/column of the source valid region:
/// a later element replaces the best only when strictly greater (smaller), so ties keep the
/// lowest index and a NaN is chosen only at index 0. The index is written as an element of
/// the destination's integer type at dst[i,0] (rows) or dst[0,j] (columns).
template <bool Max, bool Row> struct Arg {
  template <DType D> struct K {
    static void run(Core& c, const TileInst& t) {
      using S = typename Tr<D>::S;
      const uint32_t vr = t.validRows(c), vc = t.validCols(c);
      const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
      if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, Row ? vr : 1, Row ? 1 : vc)) return;
      Acc<S> a(c, oa);
      uint8_t* db = bptr(c, od);
      const unsigned dbits = isa::bitWidth(od.dtype);
      const uint32_t outer = Row ? vr : vc, inner = Row ? vc : vr;
      for (uint32_t o = 0; o < outer && inner > 0; ++o) {
        auto best = Tr<D>::ld(Row ? a.at(o, 0) : a.at(0, o));
        uint32_t at = 0;
        for (uint32_t k = 1; k < inner; ++k) {
          const auto x = Tr<D>::ld(Row ? a.at(o, k) : a.at(k, o));
          if (Max ? best < x : x < best) best = x, at = k;
        }
        setBits(db, dbits, Row ? od.elemOffset(o, 0) : od.elemOffset(0, o), at);
      }
    }
  };
};

// ------------------------------------------------------------------ TQUANT
/// INT8 quantization as the A5 NPU does it: p = x * scale[i,0] (+ offset[i,0]) in f32, then a
/// saturating round-to-nearest-even conversion: i8 destination = INT8_SYM (no offset), u8 =
/// INT8_ASYM. NaN gives 0. (The quant_type attribute is implied by the destination type.)
template <bool Asym> void kQuant(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &os = t.tiles[t.src1];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, oa, vr, vc) || !fits(c, t, os, vr, 1)) return;
  if (Asym && !fits(c, t, t.tiles[t.src2], vr, 1)) return;
  Acc<float> a(c, oa), sc(c, os);
  constexpr float lo = Asym ? 0.0f : -128.0f, hi = Asym ? 255.0f : 127.0f;
  uint8_t* db = bptr(c, od);
  for (uint32_t r = 0; r < vr; ++r) {
    const float s = sc.at(r, 0), off = Asym ? Acc<float>(c, t.tiles[t.src2]).at(r, 0) : 0.0f;
    for (uint32_t j = 0; j < vc; ++j) {
      float p = a.at(r, j) * s;
      if constexpr (Asym) p = p + off;
      const float q = std::isnan(p) ? 0.0f : std::clamp(std::nearbyint(p), lo, hi);
      db[od.elemOffset(r, j)] = static_cast<uint8_t>(static_cast<int32_t>(q));
    }
  }
}

// ------------------------------------------------------------------ THISTOGRAM
/// dst[r, b] = how many of row r's valid source elements have most significant byte b (the
/// first radix pass: isMSB = true, the attribute's default; the block does not carry it).
template <typename U> void kHistogram(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
  const Region s = sourceRegion(c, t, os);
  if (!fits(c, t, os, s.rows, s.cols) || !fits(c, t, od, s.rows, 256)) return;
  Acc<U> a(c, os);
  Acc<uint32_t> d(c, od);
  constexpr unsigned shift = sizeof(U) * 8 - 8;
  for (uint32_t r = 0; r < s.rows; ++r) {
    uint32_t bins[256] = {};
    for (uint32_t j = 0; j < s.cols; ++j)
      ++bins[a.at(r, j) >> shift];
    for (uint32_t b = 0; b < 256; ++b)
      d.at(r, b) = bins[b];
  }
}

// ------------------------------------------------------------------ MX matmul
/// C = sum_k (A[i,k] * 2^(lscale[i,k/32]-127)) * (B[k,j] * 2^(rscale[k/32,j]-127)): the E8M0
/// scales apply to groups of 32 along K. Scaled inputs are exact in f32 (a power of two times
/// an fp8/fp4 value); accumulation is one f32 fma per k in order, as TMATMUL.
void kMatmulMx(Core& c, const TileInst& t) {
  const uint32_t M = t.bound(c, 0, 0), N = t.bound(c, 1, 0), K = t.bound(c, 2, 0),
                 G = (K + 31) / 32;
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1],
                    &sa = t.tiles[t.lscale], &sb = t.tiles[t.rscale];
  if (!fits(c, t, od, M, N) || !fits(c, t, oa, M, K) || !fits(c, t, ob, K, N) ||
      !fits(c, t, sa, M, G) || !fits(c, t, sb, G, N))
    return;
  auto load = [&](const TileOperand& o, uint32_t r, uint32_t j) {
    return isa::decodeToDouble(o.dtype,
                               getBits(bptr(c, o), isa::bitWidth(o.dtype), o.elemOffset(r, j)));
  };
  std::vector<float> A(size_t{M} * K), B(size_t{K} * N);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t k = 0; k < K; ++k)
      A[size_t{i} * K + k] = static_cast<float>(load(oa, i, k) * load(sa, i, k / 32));
  for (uint32_t k = 0; k < K; ++k)
    for (uint32_t j = 0; j < N; ++j)
      B[size_t{k} * N + j] = static_cast<float>(load(ob, k, j) * load(sb, k / 32, j));
  const TileOperand* accIn = t.acc >= 0 ? &t.tiles[t.acc] : nullptr;
  const TileOperand* bias = t.bias >= 0 ? &t.tiles[t.bias] : nullptr;
  if (accIn && !fits(c, t, *accIn, M, N)) return;
  Acc<float> d(c, od);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      float acc = 0;
      for (uint32_t k = 0; k < K; ++k)
        acc = std::fma(A[size_t{i} * K + k], B[size_t{k} * N + j], acc);
      if (accIn) acc = static_cast<float>(load(*accIn, i, j)) + acc;
      if (bias) acc = acc + static_cast<float>(load(*bias, 0, j));
      d.at(i, j) = acc;
    }
}

// ------------------------------------------------------------------ selection
std::string unsupported(const TileInst& t, DType d) {
  return std::string(t.name) + " on " + std::string(isa::spelling(d)) +
         " tiles is not supported by the cpu backend";
}

/// Sets the kernel or returns the error for an op whose dtype picked no kernel.
std::optional<std::string> use(TileInst& t, TileKernel k, DType d) {
  if (!k) return unsupported(t, d);
  t.kernel = k;
  return std::nullopt;
}

std::optional<std::string> selectArg(TileInst& t, TileKernel k) {
  if (auto e = need(t, {t.dst, t.src0})) return e;
  const DType di = t.tiles[t.dst].dtype;
  if (!isa::isInteger(di) || isa::bitWidth(di) < 16)
    return std::string(t.name) +
           " writes indices: its destination must be a 16- or 32-bit integer tile, not " +
           std::string(isa::spelling(di));
  return use(t, k, t.tiles[t.src0].dtype);
}

std::optional<std::string> selectQuant(TileInst& t) {
  if (auto e = need(t, {t.dst, t.src0, t.src1})) return e;
  const DType d = t.tiles[t.dst].dtype;
  if (t.tiles[t.src0].dtype != DType::F32 || t.tiles[t.src1].dtype != DType::F32 ||
      (t.src2 >= 0 && t.tiles[t.src2].dtype != DType::F32))
    return std::string("TQUANT (INT8) needs f32 source, scale and offset tiles");
  if (d == DType::I8) {
    if (t.src2 >= 0)
      return std::string("TQUANT to i8 is INT8_SYM, which takes no offset tile (u8 is INT8_ASYM)");
    t.kernel = &kQuant<false>;
  } else if (d == DType::U8) {
    if (t.src2 < 0) return std::string("TQUANT to u8 is INT8_ASYM, which needs an offset tile");
    t.kernel = &kQuant<true>;
  } else {
    return "TQUANT to " + std::string(isa::spelling(d)) +
           " (an MX format) is not supported by the cpu backend: the block carries no exponent, "
           "max and scaling tiles";
  }
  return std::nullopt;
}

std::optional<std::string> selectHistogram(TileInst& t) {
  if (auto e = need(t, {t.dst, t.src0})) return e;
  if (auto e = sourceRegionKnown(t, t.src0)) return e;
  if (t.tiles[t.dst].dtype != DType::U32) return std::string("THISTOGRAM needs a u32 destination");
  const DType s = t.tiles[t.src0].dtype;
  if (s == DType::U16)
    t.kernel = &kHistogram<uint16_t>;
  else if (s == DType::U32)
    t.kernel = &kHistogram<uint32_t>;
  else
    return "THISTOGRAM needs a u16 or u32 source, not " + std::string(isa::spelling(s));
  return std::nullopt;
}

std::optional<std::string> selectMx(TileInst& t) {
  if (auto e = need(t, {t.dst, t.src0, t.src1, t.lscale, t.rscale})) return e;
  if (t.tiles[t.dst].dtype != DType::F32) return unsupported(t, t.tiles[t.dst].dtype);
  if (t.tiles[t.lscale].dtype != DType::E8M0 || t.tiles[t.rscale].dtype != DType::E8M0)
    return std::string(t.name) + ": the scale tiles must be f8E8M0";
  t.kernel = &kMatmulMx;
  return std::nullopt;
}

} // namespace

std::optional<std::string> selectSortKernel(TileInst& t); // SortKernels.cpp

bool selectMathKernel(TileInst& t, std::optional<std::string>& err) {
  const DType d = t.dst >= 0 ? t.tiles[t.dst].dtype : t.startType;
  const DType s = t.src0 >= 0 ? t.tiles[t.src0].dtype : d;
  switch (t.op) {
#define PART(OP, B)                                                                                \
  case OpId::OP:                                                                                   \
    if (!(err = need(t, {t.dst, t.src0, t.src1})) && !(err = sourceRegionKnown(t, t.src0)) &&      \
        !(err = sourceRegionKnown(t, t.src1)))                                                     \
      err = use(t, arith<Part<B>::template K>(d), d);                                              \
    return true;
    PART(TPARTADD, Bin::Add)
    PART(TPARTMAX, Bin::Max)
    PART(TPARTMIN, Bin::Min)
    PART(TPARTMUL, Bin::Mul)
#undef PART
  case OpId::TPARTARGMAX:
  case OpId::TPARTARGMIN:
    if (!(err = need(t, {t.dst, t.src0, t.src1, t.dst1, t.src2, t.src3})) &&
        !(err = sourceRegionKnown(t, t.src0)) && !(err = sourceRegionKnown(t, t.src1)))
      err = use(t,
                t.op == OpId::TPARTARGMAX ? arith<PartArg<true>::template K>(d)
                                          : arith<PartArg<false>::template K>(d),
                d);
    return true;
  case OpId::TADDC:
    if (!(err = need(t, {t.dst, t.src0, t.src1, t.src2})))
      err = use(t, arith<Ternary<Bin::Add, false>::template K>(d), d);
    return true;
  case OpId::TSUBC:
    if (!(err = need(t, {t.dst, t.src0, t.src1, t.src2})))
      err = use(t, arith<Ternary<Bin::Sub, false>::template K>(d), d);
    return true;
  case OpId::TADDSC:
    if (!(err = need(t, {t.dst, t.src0, t.src1})))
      err = use(t, arith<Ternary<Bin::Add, true>::template K>(d), d);
    return true;
  case OpId::TSUBSC:
    if (!(err = need(t, {t.dst, t.src0, t.src1})))
      err = use(t, arith<Ternary<Bin::Sub, true>::template K>(d), d);
    return true;
  case OpId::TPRELU:
    if (!(err = need(t, {t.dst, t.src0, t.src1}))) err = use(t, arith<Prelu>(d, true, false), d);
    return true;
  case OpId::TROWARGMAX:
    err = selectArg(t, arith<Arg<true, true>::template K>(s));
    return true;
  case OpId::TROWARGMIN:
    err = selectArg(t, arith<Arg<false, true>::template K>(s));
    return true;
  case OpId::TCOLARGMAX:
    err = selectArg(t, arith<Arg<true, false>::template K>(s));
    return true;
  case OpId::TCOLARGMIN:
    err = selectArg(t, arith<Arg<false, false>::template K>(s));
    return true;
  case OpId::TQUANT:
    err = selectQuant(t);
    return true;
  case OpId::THISTOGRAM:
    err = selectHistogram(t);
    return true;
  case OpId::TMATMUL_MX:
  case OpId::TMATMUL_MX_ACC:
  case OpId::TMATMUL_MX_BIAS:
  case OpId::TGEMV_MX:
  case OpId::TGEMV_MX_ACC:
  case OpId::TGEMV_MX_BIAS:
    err = selectMx(t);
    return true;
  case OpId::TSORT32:
  case OpId::TMRGSORT:
    err = selectSortKernel(t);
    return true;
  default:
    return false;
  }
}

} // namespace pto::rt::cpu
