// TSORT32 and TMRGSORT on the cpu backend (docs/runtime.md). Both work on 8-byte value-index
// pairs: [f32 value, u32 index] or [f16 value, 2 zero bytes, u32 index], so a pair is 2 f32 or 4
// f16 tile elements. Order is descending by value; a NaN sorts above every number and values
// that compare equal (+0 and -0 included) keep their order: by position in TSORT32, by list
// then position in TMRGSORT (a merge that takes the lowest list's head on ties).
#include "runtime/cpu/KernelUtil.h"

#include <algorithm>
#include <array>
#include <vector>

namespace pto::rt::cpu {
namespace {

using isa::DType;

struct Pair {
  float key = 0;         // the value, widened
  uint8_t bytes[8] = {}; // the pair as stored
};

/// a sorts before b: greater value, NaN above all numbers.
inline bool before(float a, float b) {
  if (std::isnan(a)) return !std::isnan(b);
  return !std::isnan(b) && a > b;
}

template <DType D> float valueOf(const uint8_t* p) {
  typename Tr<D>::S s;
  std::memcpy(&s, p, sizeof s);
  return static_cast<float>(Tr<D>::ld(s));
}

template <DType D> Pair readPair(const uint8_t* p) {
  Pair q;
  std::memcpy(q.bytes, p, 8);
  q.key = valueOf<D>(p);
  return q;
}

/// TSORT32: each row's source valid columns in blocks of 32 (the last may be shorter); each
/// block's (value, idx) pairs are written sorted to the destination row at pair 32*b. idx is a
/// u32 tile of the source's shape, or one row broadcast to every row.
template <DType D> void kSort32(Core& c, const TileInst& t) {
  using S = typename Tr<D>::S;
  constexpr uint32_t coef = 8 / sizeof(S);
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0], &oi = t.tiles[t.src1];
  const uint32_t vr = t.validRows(c);
  const uint32_t C =
      os.validCols >= 0 ? static_cast<uint32_t>(os.validCols) : t.validCols(c) / coef;
  const bool bcast = oi.rows == 1;
  if (!fits(c, t, os, vr, C) || !fits(c, t, oi, bcast ? 1 : vr, C) || !fits(c, t, od, vr, C * coef))
    return;
  Acc<S> src(c, os);
  Acc<uint32_t> idx(c, oi);
  std::vector<Pair> block;
  for (uint32_t r = 0; r < vr; ++r) {
    uint8_t* out = bptr(c, od) + od.elemOffset(r, 0) * sizeof(S);
    for (uint32_t b0 = 0; b0 < C; b0 += 32) {
      block.clear();
      for (uint32_t j = b0; j < std::min(C, b0 + 32); ++j) {
        Pair p;
        const S v = src.at(r, j);
        const uint32_t ix = idx.at(bcast ? 0 : r, j);
        std::memcpy(p.bytes, &v, sizeof v); // an f16 value is followed by two zero bytes
        std::memcpy(p.bytes + 4, &ix, 4);
        p.key = static_cast<float>(Tr<D>::ld(v));
        block.push_back(p);
      }
      std::stable_sort(block.begin(), block.end(),
                       [](const Pair& a, const Pair& b) { return before(a.key, b.key); });
      for (size_t k = 0; k < block.size(); ++k)
        std::memcpy(out + (size_t{b0} + k) * 8, block[k].bytes, 8);
    }
  }
}

using Runs = std::array<std::pair<const uint8_t*, uint32_t>, 4>;

/// Merges up to four sorted runs of pairs into `out` (descending; ties take the lowest run) and
/// returns how many pairs it took from each. With `stopWhenOneEnds` (TMRGSORT's exhausted mode)
/// the merge stops after the pick that empties one of the `lists` in use, as the merge unit
/// suspends (pto-isa's ReachExhausted).
std::array<uint32_t, 4> merge(const Runs& runs, uint8_t* out, float (*key)(const uint8_t*),
                              unsigned lists = 4, bool stopWhenOneEnds = false) {
  std::array<uint32_t, 4> pos{};
  for (;;) {
    int best = -1;
    float bk = 0;
    for (int l = 0; l < 4; ++l) {
      if (pos[l] >= runs[l].second) continue;
      const float k = key(runs[l].first + size_t{pos[l]} * 8);
      if (best < 0 || before(k, bk)) best = l, bk = k;
    }
    if (best < 0) return pos;
    std::memcpy(out, runs[best].first + size_t{pos[best]} * 8, 8);
    out += 8;
    ++pos[best];
    if (stopWhenOneEnds)
      for (unsigned l = 0; l < lists; ++l)
        if (pos[l] == runs[l].second) return pos;
  }
}

/// TMRGSORT (dst, src, blockLen): in each row, every group of 4 consecutive blocks of blockLen
/// tile elements (pre-sorted runs) is merged into the same place of dst.
template <DType D> void kMrgSortBlocks(Core& c, const TileInst& t) {
  constexpr uint32_t coef = 8 / sizeof(typename Tr<D>::S), eb = 8 / coef;
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
  const uint32_t vr = t.validRows(c), vc = sourceRegion(c, t, os).cols;
  const uint64_t len = t.scalar(c, 0);
  if (len == 0 || len % coef != 0 || vc % (4 * len) != 0)
    return fail(c, "TMRGSORT block length " + std::to_string(len) +
                       " must be a positive multiple of " + std::to_string(coef) +
                       " dividing a quarter of the source's " + std::to_string(vc) +
                       " valid columns");
  if (!fits(c, t, os, vr, vc) || !fits(c, t, od, vr, vc)) return;
  const uint32_t pairs = static_cast<uint32_t>(len / coef);
  std::vector<uint8_t> tmp(size_t{vc} * eb);
  for (uint32_t r = 0; r < vr; ++r) {
    const uint8_t* in = bptr(c, os) + os.elemOffset(r, 0) * eb;
    for (uint32_t g = 0; g < vc / (4 * len); ++g) {
      const uint8_t* base = in + size_t{g} * 4 * pairs * 8;
      merge({{{base, pairs},
              {base + pairs * 8, pairs},
              {base + 2 * pairs * 8, pairs},
              {base + 3 * pairs * 8, pairs}}},
            tmp.data() + size_t{g} * 4 * pairs * 8, &valueOf<D>);
    }
    std::memcpy(bptr(c, od) + od.elemOffset(r, 0) * eb, tmp.data(),
                tmp.size()); // dst may alias src
  }
}

/// TMRGSORT (dst, tmp, src0..src3): the first row of 2-4 sorted lists (each its valid columns
/// of pairs) merged into the first row of dst. B.IOR src0 = 1 is the exhausted mode: the merge
/// unit writes into tmp, stops after the pick that empties a list, and the destination gets
/// tmp's first (dst valid columns) elements (pto-isa's a2a3/a5 TMrgSort: vmrgsort4 into tmp,
/// then a UB-to-UB copy), so the rest of dst is whatever tmp held; B.IOR RegDst then receives
/// the pairs taken from each list (16 bits each, list i in bits 16i+15..16i: VMS4_SR).
template <DType D> void kMrgSortLists(Core& c, const TileInst& t) {
  constexpr uint32_t coef = 8 / sizeof(typename Tr<D>::S), eb = 8 / coef;
  const TileOperand& od = t.tiles[t.dst];
  Runs runs{};
  uint32_t total = 0;
  const int lists[4] = {t.src0, t.src1, t.src2, t.src3};
  unsigned used = 0;
  for (int l = 0; l < 4; ++l) {
    if (lists[l] < 0) continue;
    used = static_cast<unsigned>(l) + 1;
    const TileOperand& o = t.tiles[lists[l]];
    const uint32_t vc = sourceRegion(c, t, o).cols;
    if (!fits(c, t, o, 1, vc)) return;
    runs[l] = {bptr(c, o) + o.elemOffset(0, 0) * eb, vc / coef};
    total += vc / coef;
  }
  std::vector<uint8_t> out(size_t{total} * 8);
  if (t.numIor == 0 || t.scalar(c, 0) == 0) {
    if (!fits(c, t, od, 1, total * coef)) return;
    merge(runs, out.data(), &valueOf<D>);
    std::memcpy(bptr(c, od) + od.elemOffset(0, 0) * eb, out.data(), out.size());
    return;
  }
  const TileOperand& ot = t.tiles[t.tmp];
  const std::array<uint32_t, 4> taken = merge(runs, out.data(), &valueOf<D>, used, true);
  const uint32_t merged = taken[0] + taken[1] + taken[2] + taken[3], dstCols = t.validCols(c);
  if (!fits(c, t, ot, 1, std::max(merged * coef, dstCols)) || !fits(c, t, od, 1, dstCols)) return;
  uint8_t* tmp = bptr(c, ot) + ot.elemOffset(0, 0) * eb;
  std::memcpy(tmp, out.data(), size_t{merged} * 8);
  std::memmove(bptr(c, od) + od.elemOffset(0, 0) * eb, tmp, size_t{dstCols} * eb);
  if (t.iorDst != 0)
    c.r[t.iorDst] = uint64_t{taken[0]} | uint64_t{taken[1]} << 16 | uint64_t{taken[2]} << 32 |
                    uint64_t{taken[3]} << 48;
}

} // namespace

std::optional<std::string> selectSortKernel(TileInst& t) {
  const bool sort32 = t.op == isa::OpId::TSORT32;
  for (int r : {t.dst, t.src0, sort32 ? t.src1 : t.src0})
    if (r < 0) return std::string(t.name) + ": missing tile operand";
  const DType d = t.tiles[t.dst].dtype;
  if (d != DType::F32 && d != DType::F16)
    return std::string(t.name) + " sorts f32 or f16 tiles, not " + std::string(isa::spelling(d));
  for (int r : {t.dst, t.src0, t.src1, t.src2, t.src3}) {
    if (r < 0) continue;
    if (!t.tiles[r].plainRowMajor())
      return std::string(t.name) + ": tile %" + t.tiles[r].name + " must be row-major (ND)";
    if (!sort32 && t.tiles[r].dtype != d)
      return std::string(t.name) + ": every list must have the destination's type";
  }
  if (sort32) {
    if (t.tiles[t.src0].dtype != d || t.tiles[t.src1].dtype != DType::U32)
      return std::string("TSORT32 needs a source of the destination's type and a u32 index tile");
    t.kernel = d == DType::F32 ? &kSort32<DType::F32> : &kSort32<DType::F16>;
  } else if (t.tmp < 0) {
    t.kernel = d == DType::F32 ? &kMrgSortBlocks<DType::F32> : &kMrgSortBlocks<DType::F16>;
  } else {
    for (int r : {t.src0, t.src1, t.src2, t.src3})
      if (r >= 0)
        if (auto e = sourceRegionKnown(t, r)) return e;
    t.kernel = d == DType::F32 ? &kMrgSortLists<DType::F32> : &kMrgSortLists<DType::F16>;
  }
  return std::nullopt;
}

} // namespace pto::rt::cpu
