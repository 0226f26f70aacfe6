// cpu kernels that convert element types: TCVT (every rounding and saturation mode, with fast
// paths for widening and f32 -> f16 RINT), TAXPY and TDEQUANT. selectConvertKernel() picks one
// for an instruction (docs/runtime.md).
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pto::rt::cpu {
namespace {

using isa::DType;

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
/// kCvtF32F16Rint with F16C on plain row-major, non-overlapping tiles (the same bits: Simd.h),
/// on 8 lanes (Run = cvtF32F16Run) or 16 (cvtF32F16Run512).
template <void (*Run)(uint16_t*, const float*, size_t, bool)>
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
  if (vc == od.cols && vc == oa.cols) return Run(d, a, size_t{vr} * vc, sat);
  for (uint32_t r = 0; r < vr; ++r)
    Run(d + size_t{r} * od.cols, a + size_t{r} * oa.cols, vc, sat);
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

} // namespace

bool selectConvertKernel(TileInst& t, std::optional<std::string>& err) {
  using isa::OpId;
  Selection sel(t, err);
  const DType d = sel.d, s = sel.s;
  auto missing = [&](std::initializer_list<int> roles) { return sel.missing(roles); };
  auto fail = [&](std::string why) { return sel.fail(std::move(why)); };
  switch (t.op) {
  case OpId::TCVT: {
    if (missing({t.dst, t.src0})) return true;
    t.round = roundOf(t.datr ? t.datr->rmode : 0);
    // The assembler writes the effective mode.
    t.satMode = t.datr && t.datr->sat ? isa::SatMode::ON : isa::SatMode::OFF;
    if (d == DType::F32 && s == DType::F16)
      t.kernel = &kCvtWiden<DType::F16>;
    else if (d == DType::F32 && s == DType::BF16)
      t.kernel = &kCvtWiden<DType::BF16>;
    else if (d == DType::F32 && s == DType::I16)
      t.kernel = &kCvtWiden<DType::I16>;
    else if (d == DType::F32 && s == DType::I8)
      t.kernel = &kCvtWiden<DType::I8>;
    else if (d == DType::F32 && s == DType::U8)
      t.kernel = &kCvtWiden<DType::U8>;
    else if (d == DType::F16 && s == DType::F32 &&
             isa::effectiveRoundMode(s, d, t.round) == isa::RoundMode::CAST_RINT) {
      t.kernel = &kCvtF32F16Rint;
#ifdef PTO_X86_SIMD
      if (simdLevel() >= SimdLevel::Avx2) t.kernel = &kCvtF32F16Simd<simd::cvtF32F16Run>;
      if (simdLevel() >= SimdLevel::Avx512) t.kernel = &kCvtF32F16Simd<simd::cvtF32F16Run512>;
#endif
    } else
      t.kernel = &kCvtGeneric;
    return true;
  }
  case OpId::TAXPY:
    if (missing({t.dst, t.src0})) return true;
    if (!isa::axpyPairSupported(d, s))
      return fail(std::string("TAXPY with ") + std::string(isa::spelling(d)) + " destination and " +
                  std::string(isa::spelling(s)) +
                  " source is not a supported pair (f16/f16, f32/f32, f32/f16)");
    // One instantiation per supported pair (RuntimeOpsTest runs every pair isa allows).
    if (d == DType::F32)
      t.kernel = s == DType::F32 ? &kAxpy<DType::F32, DType::F32> : &kAxpy<DType::F32, DType::F16>;
    else
      t.kernel = &kAxpy<DType::F16, DType::F16>;
    return true;
  case OpId::TDEQUANT:
    if (missing({t.dst, t.src0, t.src1, t.src2})) return true;
    if (d != DType::F32 || t.tiles[t.src1].dtype != DType::F32 ||
        t.tiles[t.src2].dtype != DType::F32)
      return fail(std::string("TDEQUANT needs f32 destination, scale and offset tiles"));
    if (s == DType::I8)
      t.kernel = &kDequant<DType::I8>;
    else if (s == DType::I16)
      t.kernel = &kDequant<DType::I16>;
    else
      return fail(std::string("TDEQUANT source must be i8 or i16, not ") +
                  std::string(isa::spelling(s)));
    return true;
  default:
    return false;
  }
}

} // namespace pto::rt::cpu
