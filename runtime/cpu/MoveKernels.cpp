// cpu kernels that move tiles and multiply them: GM loads and stores (ND and DN), TMOV,
// TTRANS, TGATHER/TSCATTER and the cube ops (TMATMUL*, TGEMV*). selectMoveKernel() picks one
// for an instruction; Kernels.cpp asks it first (docs/runtime.md).
#include "isa/Encoding.h"
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
namespace enc = isa::enc;

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

/// GM buffers at least this large take non-temporal TSTOREs (kStore): twice a server core's
/// share of last-level cache (32 MiB per AMD Zen 4 CCD). A fixed size: the C library's figure
/// (sysconf) is the whole host's L3 in a VM (320 MiB here), far more than one core reaches.
constexpr uint64_t kStreamBytes = uint64_t{64} << 20;

/// Where a TLOAD of whole rows (a contiguous chunk) from a GM buffer larger than the caches reads
/// next when it walks down the tensor: the chunk after it, or nullptr when that is not in the
/// buffer or the rows are not contiguous. kLoad prefetches it while copying: a tile's copy is a
/// burst of cache misses the hardware prefetchers do not run ahead of, and a tiled kernel leaves
/// memory idle while it computes on the tile (the tiled vector add over 64 MiB: 5-10% less time
/// on 1 and 2 blocks, docs/runtime.md).
[[maybe_unused]] const uint8_t* nextChunkToPrefetch(Core& c, uint64_t addr, const uint8_t* src,
                                                    uint64_t span, uint64_t stride,
                                                    uint64_t rowBytes) {
  if (stride != rowBytes) return nullptr;
  const GmRegion* g = c.regionOf(addr);
  if (!g || !g->data || g->size < kStreamBytes || src + 2 * span > g->data + g->size)
    return nullptr;
  return src + span;
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
  const GmRows rows{vr, (uint64_t{vc} * bits + 7) / 8, stride};
  const uint8_t* src = c.translate(addr, span, "TLOAD", false, &rows);
  if (!src) return;
  if (od.plainRowMajor() && bits >= 8) {
#ifdef PTO_X86_SIMD
    const uint8_t* next = nextChunkToPrefetch(c, addr, src, span, stride, uint64_t{vc} * eb);
#endif
    for (uint32_t r = 0; r < vr; ++r) {
      std::memcpy(db + size_t{r} * od.cols * eb, src + r * stride, size_t{vc} * eb);
#ifdef PTO_X86_SIMD
      if (next)
        for (uint64_t k = 0; k < stride; k += 64)
          _mm_prefetch(reinterpret_cast<const char*>(next + r * stride + k), _MM_HINT_T0);
#endif
    }
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
  const GmRows rows{vc, uint64_t{vr} * eb, stride};
  const uint8_t* src = c.translate(addr, (vc - 1) * stride + rows.rowBytes, "TLOAD", false, &rows);
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
  if (t.datr && t.datr->dataType != enc::kDataTypeNone && t.datr->dataType != 0)
    if (auto d = enc::dtypeOfCode(t.datr->dataType)) gmType = *d;
  const unsigned sbits = isa::bitWidth(os.dtype), gbits = isa::bitWidth(gmType);
  const GmRows rows{vc, uint64_t{vr} * (gbits / 8), stride};
  uint8_t* dst = c.translate(addr, (vc - 1) * stride + rows.rowBytes, "TSTORE", true, &rows);
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
  if (t.datr && t.datr->dataType != enc::kDataTypeNone && t.datr->dataType != 0)
    if (auto d = enc::dtypeOfCode(t.datr->dataType)) gmType = *d;
  const unsigned sbits = isa::bitWidth(os.dtype), gbits = isa::bitWidth(gmType), geb = gbits / 8;
  const uint64_t span =
      (vr - 1) * stride + (uint64_t{vc} * gbits + 7) / 8; // packed 4-bit rows round up
  const GmRows rows{vr, (uint64_t{vc} * gbits + 7) / 8, stride};
  uint8_t* dst = c.translate(addr, span, "TSTORE", true, &rows);
  if (!dst) return;
  const uint8_t* sb = c.buf[os.loc] + os.offset;
  if (gmType == os.dtype) {
    if (os.plainRowMajor() && gbits >= 8) {
#ifdef PTO_X86_SIMD
      // A GM buffer larger than the caches is streamed: what a store writes there is evicted
      // before it is read again, so the lines are written without being read first (a third
      // less memory traffic). Smaller buffers keep ordinary stores, which leave the data cached
      // for the loads that follow.
      if (g && g->size >= kStreamBytes && simdLevel() >= SimdLevel::Avx2) {
        for (uint32_t r = 0; r < vr; ++r)
          simd::streamCopy(dst + r * stride, sb + size_t{r} * os.cols * geb, size_t{vc} * geb);
        _mm_sfence();
        return;
      }
#endif
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

/// TGATHER with a mask pattern (1..7, isa::kMaskPatterns): the selected columns of every row of
/// the source's valid region, as one packed stream from dst's first element in storage order
/// (pto-isa's GATHER_ROW: dst's row pitch does not break the stream); the rest of dst is kept.
void kGatherMask(Core& c, const TileInst& t) {
  const uint64_t pattern = t.scalar(c, 0);
  if (pattern < 1 || pattern > 7) {
    c.error = "TGATHER: mask pattern " + std::to_string(pattern) + " is not one of 1..7";
    return;
  }
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0];
  const uint32_t vr = oa.validRows >= 0 ? static_cast<uint32_t>(oa.validRows) : t.validRows(c);
  const uint32_t vc = oa.validCols >= 0 ? static_cast<uint32_t>(oa.validCols) : t.validCols(c);
  if (!fits(c, t, oa, vr, vc)) return;
  auto selected = [&](uint32_t col) {
    switch (pattern) {
    case 1:
      return col % 2 == 0;
    case 2:
      return col % 2 == 1;
    case 7:
      return true;
    default:
      return col % 4 == pattern - 3; // 3..6: P0001, P0010, P0100, P1000
    }
  };
  const unsigned bits = isa::bitWidth(od.dtype);
  const uint8_t* sb = c.buf[oa.loc] + oa.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const size_t capacity = size_t{od.rows} * od.cols;
  size_t out = 0;
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t col = 0; col < vc; ++col) {
      if (!selected(col)) continue;
      if (out >= capacity) {
        c.error = "TGATHER: the selected elements overflow tile %" + od.name;
        return;
      }
      setBits(db, bits, out++, getBits(sb, bits, oa.elemOffset(r, col)));
    }
}

/// TGATHER's compare form (pto-isa's TGather_cmp, A2/A3 NPU code): for each row r of the source's
/// valid region, the indices `offset + r * cols + j` of the elements src[r,j] that compare true
/// against the scalar (GT or EQ, in src's type) are packed from dst[r,0], and cdst's storage
/// element r receives how many there were; the rest of dst is kept. The index runs through the
/// source's storage rows (cols = its physical row length), as the NPU's index tile does.
void kGatherCompare(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &oc = t.tiles[t.src2];
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, oa, vr, vc) || !fits(c, t, od, vr, vc)) return;
  if (size_t{oc.rows} * oc.cols < vr)
    return fail(c, std::string(t.name) + ": count tile %" + oc.name + " holds fewer than " +
                       std::to_string(vr) + " elements");
  const unsigned cmode = t.datr ? t.datr->cmode : enc::cmodeCode(isa::CmpMode::EQ);
  const bool greater = cmode == enc::cmodeCode(isa::CmpMode::GT);
  if (!greater && cmode != enc::cmodeCode(isa::CmpMode::EQ))
    return fail(c, std::string(t.name) + ": compare mode code " + std::to_string(cmode) +
                       " is not EQ or GT");
  const unsigned bits = isa::bitWidth(oa.dtype);
  const double k = isa::decodeToDouble(
      oa.dtype, bits >= 64 ? t.scalar(c, 0) : t.scalar(c, 0) & ((uint64_t{1} << bits) - 1));
  const uint64_t offset = t.scalar(c, 1);
  const uint8_t* sb = c.buf[oa.loc] + oa.offset;
  uint8_t *db = c.buf[od.loc] + od.offset, *cb = c.buf[oc.loc] + oc.offset;
  for (uint32_t r = 0; r < vr; ++r) {
    uint32_t n = 0;
    for (uint32_t j = 0; j < vc; ++j) {
      const double a = isa::decodeToDouble(oa.dtype, getBits(sb, bits, oa.elemOffset(r, j)));
      if (greater ? a > k : a == k)
        setBits(db, 32, od.elemOffset(r, n++), (offset + uint64_t{r} * oa.cols + j) & 0xFFFFFFFF);
    }
    setBits(cb, 32, r, n);
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

/// Whether any of `n` floats is a NaN: a vector pass on the x86 tiers, else integer compares.
bool anyNan(const float* v, uint32_t n) {
#ifdef PTO_X86_SIMD
  if (simdLevel() >= SimdLevel::Avx2) return simd::anyNanRows(v, n, 1, n);
#endif
  uint32_t nan = 0;
  for (uint32_t j = 0; j < n; ++j) {
    uint32_t bits;
    std::memcpy(&bits, v + j, 4);
    nan |= (bits & 0x7fffffffu) > 0x7f800000u;
  }
  return nan != 0;
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
#ifdef PTO_X86_SIMD
      if (rm && simdLevel() >= SimdLevel::Avx2) {
        simd::widenF16(row, reinterpret_cast<const uint16_t*>(base) + start, cols);
        break;
      }
#endif
      [[fallthrough]];
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
    if (anyNan(row, cols)) return false;
  }
  return true;
}

/// C + acc and + bias after the product, in f32 as kMatmulRef adds them; C is dense (M x N).
void matmulEpilogue(Core& c, const TileInst& t, const float* C, uint32_t M, uint32_t N) {
  const TileOperand& od = t.tiles[t.dst];
  const TileOperand* accIn = t.acc >= 0 ? &t.tiles[t.acc] : nullptr;
  const TileOperand* bias = t.bias >= 0 ? &t.tiles[t.bias] : nullptr;
  uint8_t* db = bptr(c, od);
  if (!accIn && !bias && od.plainRowMajor()) { // the bits of C as they are: a copy per row
    for (uint32_t i = 0; i < M; ++i)
      std::memcpy(db + size_t{i} * od.cols * 4, C + size_t{i} * N, size_t{N} * 4);
    return;
  }
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

/// Whether two operands share no byte.
bool disjoint(Core& c, const TileOperand& x, const TileOperand& y) {
  const auto px = reinterpret_cast<uintptr_t>(bptr(c, x)),
             py = reinterpret_cast<uintptr_t>(bptr(c, y));
  return px + x.bytes() <= py || py + y.bytes() <= px;
}

#ifdef PTO_X86_SIMD
/// kMatmulF32 on the AVX2 (Mk8) or AVX-512F (Mk16) micro-kernels (Simd.h), touching each
/// operand as little as it can: an f32 row-major A is read in place (checked for NaNs in one
/// vector pass), B is packed straight from the tile (the packing checks it), and C is written
/// straight into a row-major destination when nothing is added after the product. Copies
/// remain only where the layout or element type needs them, or where A shares bytes with the
/// destination (B is packed whole before C is written, so its overlap is harmless).
template <class Mk>
void matmulSimd(Core& c, const TileInst& t, uint32_t M, uint32_t N, uint32_t K) {
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  thread_local std::vector<float> Ad, Bd, Bp, Cd; // scratch kept across calls on this thread
  const float* A;
  size_t lda;
  if (oa.dtype == DType::F32 && oa.plainRowMajor() && disjoint(c, oa, od)) {
    A = tptr<float>(c, oa);
    lda = oa.cols;
    if (simd::anyNanRows(A, lda, M, K)) return kMatmulRef<false>(c, t);
  } else {
    Ad.resize(size_t{M} * K);
    if (!decodeF32(bptr(c, oa), oa, M, K, Ad.data())) return kMatmulRef<false>(c, t);
    A = Ad.data();
    lda = K;
  }
  const float* B;
  size_t ldb;
  if (ob.dtype == DType::F32 && ob.plainRowMajor()) {
    B = tptr<float>(c, ob);
    ldb = ob.cols;
  } else {
    Bd.resize(size_t{K} * N);
    if (!decodeF32(bptr(c, ob), ob, K, N, Bd.data())) return kMatmulRef<false>(c, t);
    B = Bd.data();
    ldb = N;
  }
  Bp.resize(simd::packedBSize(K, N, Mk::kLanes));
  if (!simd::packB(B, ldb, K, N, Mk::kLanes, Bp.data())) return kMatmulRef<false>(c, t);
  if (t.acc < 0 && t.bias < 0 && od.plainRowMajor())
    return simd::matmulPacked<Mk>(A, lda, Bp.data(), tptr<float>(c, od), od.cols, M, N, K);
  Cd.resize(size_t{M} * N);
  simd::matmulPacked<Mk>(A, lda, Bp.data(), Cd.data(), N, M, N, K);
  // f32 row-major accumulator and bias: the additions on vectors, the accumulator read where it
  // lies (it may be the destination itself: each element is read before it is written).
  const TileOperand* accIn = t.acc >= 0 ? &t.tiles[t.acc] : nullptr;
  const TileOperand* bias = t.bias >= 0 ? &t.tiles[t.bias] : nullptr;
  const bool vecAcc = !accIn || (accIn->dtype == DType::F32 && accIn->plainRowMajor() &&
                                 sameOrDisjoint(c, od, *accIn));
  const bool vecBias = !bias || (bias->dtype == DType::F32 && bias->plainRowMajor() &&
                                 bias->cols >= N && disjoint(c, od, *bias));
  if (!od.plainRowMajor() || !vecAcc || !vecBias) return matmulEpilogue(c, t, Cd.data(), M, N);
  float* d = tptr<float>(c, od);
  const float* accp = accIn ? tptr<float>(c, *accIn) : nullptr;
  const float* biasp = bias ? tptr<float>(c, *bias) : nullptr;
  for (uint32_t i = 0; i < M; ++i)
    simd::matmulAddRow(d + size_t{i} * od.cols, accp ? accp + size_t{i} * accIn->cols : nullptr,
                       Cd.data() + size_t{i} * N, biasp, N);
}
#endif

/// Float-accumulating TMATMUL / TGEMV: inputs decoded once into dense f32 arrays, then
/// C = A * B in i-k-j order (rows of B streamed, a row of C accumulated), or the register-blocked
/// AVX2 + FMA or AVX-512F micro-kernels of the tier picked at selection (matmulSimd). The order
/// of operations per C element is kMatmulRef's: start at +0, one fma per k in increasing k, then
/// `acc + C` and `C + bias` in f32, so the bits agree.
template <SimdLevel Tier> void kMatmulF32(Core& c, const TileInst& t) {
  const uint32_t M = t.bound(c, 0, 0), N = t.bound(c, 1, 0), K = t.bound(c, 2, 0);
  const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
  if (!fits(c, t, od, M, N) || !fits(c, t, oa, M, K) || !fits(c, t, ob, K, N)) return;
  if (t.acc >= 0 && !fits(c, t, t.tiles[t.acc], M, N)) return;
#ifdef PTO_X86_SIMD
  if constexpr (Tier >= SimdLevel::Avx512)
    return matmulSimd<simd::Mk16>(c, t, M, N, K);
  else if constexpr (Tier == SimdLevel::Avx2)
    return matmulSimd<simd::Mk8>(c, t, M, N, K);
#endif
  // Scratch reused across calls on this thread (each worker thread runs one block at a time).
  thread_local std::vector<float> A, B, C;
  A.resize(size_t{M} * K);
  B.resize(size_t{K} * N);
  C.resize(size_t{M} * N);
  if (!decodeF32(bptr(c, oa), oa, M, K, A.data()) || !decodeF32(bptr(c, ob), ob, K, N, B.data()))
    return kMatmulRef<false>(c, t);
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
  matmulEpilogue(c, t, C.data(), M, N);
}

void kNop(Core&, const TileInst&) {}

} // namespace

bool selectMoveKernel(TileInst& t, std::optional<std::string>& err) {
  using isa::OpId;
  Selection sel(t, err);
  const DType d = sel.d, s = sel.s;
  auto missing = [&](std::initializer_list<int> roles) { return sel.missing(roles); };
  auto unsupportedType = [&](DType x) { return sel.unsupportedType(x); };
  switch (t.op) {
  case OpId::TLOAD:
  case OpId::TPREFETCH:
    if (missing({t.dst})) return true;
    if (t.gmDn && isa::bitWidth(d) < 8) return unsupportedType(d);
    t.kernel = t.op == OpId::TPREFETCH ? &kNop : t.gmDn ? &kLoadDn : &kLoad;
    return true;
  case OpId::TSTORE:
    if (t.fix != isa::fix::Attrs{}) return selectFixpipeKernel(t, err);
    if (missing({t.src0})) return true;
    if (t.gmDn && isa::bitWidth(s) < 8) return unsupportedType(s);
    t.kernel = t.gmDn ? &kStoreDn : &kStore;
    return true;
  case OpId::TMOV:
    // A scaling tile or fixpipe attributes go through the fixpipe; a quant word without its
    // B.FPATR mode would be ignored by the plain move, so that is refused.
    if (t.fix != isa::fix::Attrs{} || t.src1 >= 0) return selectFixpipeKernel(t, err);
    if (t.numIor > 0)
      err = "TMOV with a B.IOR quant word but no B.FPATR pre-quant mode";
    else if (!missing({t.dst, t.src0}))
      t.kernel = &kMov;
    return true;
  case OpId::TTRANS:
    if (!missing({t.dst, t.src0})) t.kernel = &kTrans;
    return true;
  case OpId::TGATHER:
    if (missing({t.dst, t.src0})) return true;
    if (t.src1 < 0 && t.numIor == 0) {
      err = "TGATHER needs an index tile or a mask pattern (B.IOR)";
      return true;
    }
    t.kernel = t.src1 < 0 ? &kGatherMask : &kGather;
    return true;
  case OpId::TGATHER_CMP:
    if (!missing({t.dst, t.src0, t.src2})) t.kernel = &kGatherCompare;
    return true;
  case OpId::TSCATTER:
    if (!missing({t.dst, t.src0, t.src1})) t.kernel = &kScatter;
    return true;
  case OpId::TMATMUL:
  case OpId::TMATMUL_ACC:
  case OpId::TMATMUL_BIAS:
  case OpId::TGEMV:
  case OpId::TGEMV_ACC:
  case OpId::TGEMV_BIAS:
    if (missing({t.dst, t.src0, t.src1})) return true;
    if (d == DType::I32)
      t.kernel = &kMatmulRef<true>;
    else if (d == DType::F32)
      t.kernel = simdLevel() >= SimdLevel::Avx512 ? &kMatmulF32<SimdLevel::Avx512>
                 : simdLevel() >= SimdLevel::Avx2 ? &kMatmulF32<SimdLevel::Avx2>
                                                  : &kMatmulF32<SimdLevel::Portable>;
    else
      return unsupportedType(d);
    return true;
  default:
    return false;
  }
}

} // namespace pto::rt::cpu
