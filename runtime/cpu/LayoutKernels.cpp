// cpu kernels that generate, move or print raw elements: TCI, TTRI, TRANDOM, TSETVAL, TGETVAL,
// TPRINT, TFILLPAD*, TEXTRACT, TINSERT, TCONCAT, TPACK, TGATHERB, MGATHER and MSCATTER
// (docs/runtime.md). Kernels are instantiated per element width (4-bit packed, 8, 16, 32, 64) and
// chosen at load time.
#include "isa/Fixpipe.h"
#include "isa/Numerics.h"
#include "isa/OpAttrs.h"
#include "isa/PrintFormat.h"
#include "isa/Random.h"
#include "runtime/Runtime.h"
#include "runtime/cpu/KernelUtil.h"
#include "support/Escape.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace pto::rt::cpu {
namespace {

using isa::DType;
using isa::OpId;

/// Raw element access for one element width. Bits == 4 is the packed nibble storage.
template <unsigned Bits> struct Raw {
  using U = std::conditional_t<
      Bits == 64, uint64_t,
      std::conditional_t<Bits == 32, uint32_t, std::conditional_t<Bits == 16, uint16_t, uint8_t>>>;
  static uint64_t get(const uint8_t* base, size_t i) {
    if constexpr (Bits == 4)
      return getBits(base, 4, i);
    else {
      U v;
      std::memcpy(&v, base + i * sizeof(U), sizeof(U));
      return v;
    }
  }
  static void set(uint8_t* base, size_t i, uint64_t v) {
    if constexpr (Bits == 4)
      setBits(base, 4, i, v);
    else {
      const U u = static_cast<U>(v);
      std::memcpy(base + i * sizeof(U), &u, sizeof(U));
    }
  }
};

/// Picks K<Bits>::run for an element width.
template <template <unsigned> class K> TileKernel byWidth(unsigned bits) {
  switch (bits) {
  case 4:
    return &K<4>::run;
  case 8:
    return &K<8>::run;
  case 16:
    return &K<16>::run;
  case 32:
    return &K<32>::run;
  case 64:
    return &K<64>::run;
  default:
    return nullptr;
  }
}

/// Copies a rows x cols rectangle between two tiles of one element width; row-major tiles of
/// whole bytes move row by row with memmove (source and destination may be the same tile).
template <unsigned Bits>
void copyRect(Core& c, const TileOperand& od, uint32_t dr, uint32_t dc, const TileOperand& os,
              uint32_t sr, uint32_t sc, uint32_t rows, uint32_t cols) {
  uint8_t* db = bptr(c, od);
  const uint8_t* sb = bptr(c, os);
  if constexpr (Bits >= 8) {
    if (od.plainRowMajor() && os.plainRowMajor()) {
      constexpr size_t eb = Bits / 8;
      for (uint32_t r = 0; r < rows; ++r)
        std::memmove(db + ((size_t{dr} + r) * od.cols + dc) * eb,
                     sb + ((size_t{sr} + r) * os.cols + sc) * eb, size_t{cols} * eb);
      return;
    }
  }
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t j = 0; j < cols; ++j)
      Raw<Bits>::set(db, od.elemOffset(dr + r, dc + j),
                     Raw<Bits>::get(sb, os.elemOffset(sr + r, sc + j)));
}

// ------------------------------------------------------------------ generators
/// One Philox-4x32 block (pto-isa's TRANDOM round, the standard Philox round): `rounds` rounds
/// of two 32x32->64 multiplies, the key bumped by the Weyl constants after each.
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> x, uint32_t k0, uint32_t k1,
                               unsigned rounds) {
  for (unsigned i = 0; i < rounds; ++i) {
    const uint64_t m0 = uint64_t{x[0]} * 0xD2511F53u, m1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(m1 >> 32) ^ x[1] ^ k0, static_cast<uint32_t>(m1),
         static_cast<uint32_t>(m0 >> 32) ^ x[3] ^ k1, static_cast<uint32_t>(m0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return x;
}

/// TRANDOM (A5): Philox-4x32 random bits in the valid region, as the NPU's vector unit makes
/// them (pto-isa's npu/a5 TRandom, which the CPU simulator does not follow). 64 lanes run at
/// once, lane l with the 128-bit counter + l; a pass of the lanes fills 256 columns, lane l's
/// four words at columns 4l..4l+3 of the pass (the unit interleaves its four result
/// registers). After each pass every lane's counter advances by 64, after a row's last pass by
/// ((validCols - 1) % 64) + 1; the counter is not reset between rows. Key, counter and rounds
/// come from the block as isa/Random.h packs them.
struct Random {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand& od = t.tiles[t.dst];
    if (!fits(c, t, od, vr, vc)) return;
    const auto rounds = isa::trandom::roundsOf(t.datr ? t.datr->rmode : 0);
    if (!rounds) {
      c.error = "TRANDOM: B.DATR RMode " + std::to_string(t.datr->rmode) +
                " selects no round count (0 = 10 rounds, 1 = 7)";
      return;
    }
    const uint64_t key = t.scalar(c, 0);
    unsigned __int128 counter =
        static_cast<unsigned __int128>(t.scalar(c, 2)) << 64 | t.scalar(c, 1);
    constexpr uint32_t kLanes = 64, kPass = 4 * kLanes;
    const uint32_t passes = (vc + kPass - 1) / kPass;
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t p = 0; p < passes; ++p) {
        for (uint32_t lane = 0; lane < kLanes; ++lane) {
          const unsigned __int128 x = counter + lane;
          const auto w =
              philox({static_cast<uint32_t>(x), static_cast<uint32_t>(x >> 32),
                      static_cast<uint32_t>(x >> 64), static_cast<uint32_t>(x >> 96)},
                     static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), *rounds);
          for (uint32_t k = 0; k < 4; ++k)
            if (const uint32_t col = p * kPass + 4 * lane + k; col < vc)
              Raw<32>::set(db, od.elemOffset(r, col), w[k]);
        }
        counter += p + 1 < passes ? kLanes : (vc - 1) % kLanes + 1;
      }
  }
};

/// TCI: dst = start + k (ascending) or start - k (descending: B.IOR Direction = 1) over the
/// valid region, k the row-major linear index (a one-row tile in practice: pto-isa uses the valid
/// columns as the sequence length). Wraps in the element type.
template <unsigned Bits> struct Ci {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand& od = t.tiles[t.dst];
    if (!fits(c, t, od, vr, vc)) return;
    const uint64_t start = t.scalar(c, 0);
    const bool descending = t.scalar(c, 1) != 0;
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t j = 0; j < vc; ++j) {
        const uint64_t k = uint64_t{r} * vc + j;
        Raw<Bits>::set(db, od.elemOffset(r, j), descending ? start - k : start + k);
      }
  }
};

/// TTRI: B.IOR src0 is the diagonal d, src1 the orientation (0.58.3: "B.IOR Diagonal,
/// Orientation"; `zero`, lower, when left out). Lower: dst[i,j] = 1 when j <= i + d, else 0;
/// upper: 0 when j < i + d, else 1 (pto-isa's TTril / TTriu), as elements of the destination type.
template <unsigned Bits> struct Tri {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand& od = t.tiles[t.dst];
    if (!fits(c, t, od, vr, vc)) return;
    // pto-isa's diagonal is an int: the low 32 bits, signed, whatever the register's upper half.
    const int64_t diag = static_cast<int32_t>(static_cast<uint32_t>(t.scalar(c, 0)));
    const bool upper = t.scalar(c, 1) != 0;
    const uint64_t one =
        isa::encodeFromDouble(od.dtype, 1.0, isa::RoundMode::CAST_RINT, isa::SatMode::ON);
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t j = 0; j < vc; ++j) {
        const int64_t edge = int64_t{r} + diag;
        const bool set = upper ? int64_t{j} >= edge : int64_t{j} <= edge;
        Raw<Bits>::set(db, od.elemOffset(r, j), set ? one : 0);
      }
  }
};

/// TSETVAL: the element at storage index `offset` of dst = val (raw bits of the tile type).
/// The storage index B.IOR's first scalar gives an element of `o` (TSETVAL, TGETVAL), or nullopt
/// with the error recorded when it is outside the tile.
std::optional<uint64_t> storageIndex(Core& c, const TileInst& t, const TileOperand& o) {
  const uint64_t off = t.scalar(c, 0), n = uint64_t{o.rows} * o.cols;
  if (off < n) return off;
  fail(c, std::string(t.name) + " offset " + std::to_string(off) + " is outside tile %" + o.name +
              " (" + std::to_string(n) + " elements)");
  return std::nullopt;
}

void kSetval(Core& c, const TileInst& t) {
  const TileOperand& od = t.tiles[t.dst];
  const auto off = storageIndex(c, t, od);
  if (!off) return;
  setBits(bptr(c, od), isa::bitWidth(od.dtype), *off, t.scalar(c, 1));
}

/// TGETVAL: B.IOR RegDst = the element at storage index `offset` of src (raw bits of the tile
/// type, sign-extended for a signed integer type, as the scalar loads extend them).
void kGetval(Core& c, const TileInst& t) {
  const TileOperand& os = t.tiles[t.src0];
  const auto off = storageIndex(c, t, os);
  if (!off) return;
  const unsigned bits = isa::bitWidth(os.dtype);
  uint64_t v = getBits(bptr(c, os), bits, *off);
  if (isa::info(os.dtype).kind == isa::DTypeKind::SInt && bits < 64 && (v >> (bits - 1)) & 1)
    v |= ~uint64_t{0} << bits;
  if (t.iorDst != 0) c.r[t.iorDst] = v;
}

/// PRINT (pto.print): its one scalar through its format (isa/PrintFormat.h) on the core's
/// output, control characters escaped (the format comes from the image).
void kPrintScalar(Core& c, const TileInst& t) {
  c.output += support::visibleText(isa::print::formatted(t.text, t.startType, t.scalar(c, 0)),
                                   /*keepNewlines=*/true);
}

/// TPRINT: the source's valid region (the block's LB1 x LB0) as text on the core's output,
/// header then one line per row, elements as pto-run --print shows them (docs/runtime.md,
/// "TPRINT"). The tile is not changed.
void kPrint(Core& c, const TileInst& t) {
  const TileOperand& os = t.tiles[t.src0];
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!fits(c, t, os, vr, vc)) return;
  std::string& out = c.output;
  out += "tprint %" + os.name + ": " + std::string(isa::spelling(os.dtype)) + "[" +
         std::to_string(os.rows) + "x" + std::to_string(os.cols) + "] valid " + std::to_string(vr) +
         "x" + std::to_string(vc);
  if (c.blockNum > 1) out += " (block " + std::to_string(c.blockIdx) + ")";
  out += "\n";
  const unsigned bits = isa::bitWidth(os.dtype);
  const uint8_t* sb = bptr(c, os);
  for (uint32_t r = 0; r < vr; ++r) {
    out += " ";
    for (uint32_t j = 0; j < vc; ++j)
      out += " " + elementText(os.dtype, getBits(sb, bits, os.elemOffset(r, j)));
    out += "\n";
  }
}

// ------------------------------------------------------------------ pad, extract, insert, concat
/// TFILLPAD / _INPLACE / _EXPAND: every element of the destination tile becomes src[i,j]
/// inside the source valid region and the destination's pad value elsewhere.
template <unsigned Bits> struct FillPad {
  static void run(Core& c, const TileInst& t) {
    const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
    const Region s = sourceRegion(c, t, os);
    if (!fits(c, t, os, s.rows, s.cols) || !fits(c, t, od, s.rows, s.cols)) return;
    if (os.loc != od.loc || os.offset != od.offset)
      copyRect<Bits>(c, od, 0, 0, os, 0, 0, s.rows, s.cols);
    const uint64_t pad = padBits(od.pad, od.dtype);
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < od.rows; ++r)
      for (uint32_t j = r < s.rows ? s.cols : 0; j < od.cols; ++j)
        Raw<Bits>::set(db, od.elemOffset(r, j), pad);
  }
};

/// TEXTRACT: dst[i,j] = src[row + i, col + j] over the destination valid region.
template <unsigned Bits> struct Extract {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
    const uint64_t r0 = t.scalar(c, 0), c0 = t.scalar(c, 1);
    if (!fits(c, t, od, vr, vc)) return;
    if (r0 + vr > os.rows || c0 + vc > os.cols ||
        !os.holds(static_cast<uint32_t>(r0 + vr), static_cast<uint32_t>(c0 + vc)))
      return fail(c, "TEXTRACT window at (" + std::to_string(r0) + ", " + std::to_string(c0) +
                         ") of " + std::to_string(vr) + "x" + std::to_string(vc) +
                         " is outside tile %" + os.name + " (" + std::to_string(os.rows) + "x" +
                         std::to_string(os.cols) + ")");
    copyRect<Bits>(c, od, 0, 0, os, static_cast<uint32_t>(r0), static_cast<uint32_t>(c0), vr, vc);
  }
};

/// TINSERT: dst[row + i, col + j] = src[i,j] over the source valid region.
template <unsigned Bits> struct Insert {
  static void run(Core& c, const TileInst& t) {
    const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
    const Region s = sourceRegion(c, t, os);
    const uint64_t r0 = t.scalar(c, 0), c0 = t.scalar(c, 1);
    if (!fits(c, t, os, s.rows, s.cols)) return;
    if (r0 + s.rows > od.rows || c0 + s.cols > od.cols)
      return fail(c, "TINSERT window at (" + std::to_string(r0) + ", " + std::to_string(c0) +
                         ") of " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                         " is outside tile %" + od.name + " (" + std::to_string(od.rows) + "x" +
                         std::to_string(od.cols) + ")");
    copyRect<Bits>(c, od, static_cast<uint32_t>(r0), static_cast<uint32_t>(c0), os, 0, 0, s.rows,
                   s.cols);
  }
};

/// TINSERT out of acc into a narrower mat tile (f32 -> f16/bf16): the fixpipe rounds to nearest
/// even on the way, as TMOV from acc does.
void kInsertConvert(Core& c, const TileInst& t) {
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
  const Region s = sourceRegion(c, t, os);
  const uint64_t r0 = t.scalar(c, 0), c0 = t.scalar(c, 1);
  if (!fits(c, t, os, s.rows, s.cols)) return;
  if (r0 + s.rows > od.rows || c0 + s.cols > od.cols)
    return fail(c, "TINSERT window at (" + std::to_string(r0) + ", " + std::to_string(c0) +
                       ") of " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                       " is outside tile %" + od.name + " (" + std::to_string(od.rows) + "x" +
                       std::to_string(od.cols) + ")");
  const isa::Converter cv(os.dtype, od.dtype, isa::RoundMode::CAST_RINT);
  const unsigned sbits = isa::bitWidth(os.dtype), dbits = isa::bitWidth(od.dtype);
  const uint8_t* sb = bptr(c, os);
  uint8_t* db = bptr(c, od);
  for (uint32_t r = 0; r < s.rows; ++r)
    for (uint32_t j = 0; j < s.cols; ++j)
      setBits(db, dbits,
              od.elemOffset(static_cast<uint32_t>(r0) + r, static_cast<uint32_t>(c0) + j),
              cv(getBits(sb, sbits, os.elemOffset(r, j))));
}

/// TCONCAT: each destination row is src0's valid columns followed by src1's.
template <unsigned Bits> struct Concat {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c);
    const TileOperand &od = t.tiles[t.dst], &oa = t.tiles[t.src0], &ob = t.tiles[t.src1];
    const uint32_t ca = sourceRegion(c, t, oa).cols, cb = sourceRegion(c, t, ob).cols;
    if (!fits(c, t, oa, vr, ca) || !fits(c, t, ob, vr, cb) || !fits(c, t, od, vr, ca + cb)) return;
    copyRect<Bits>(c, od, 0, 0, oa, 0, 0, vr, ca);
    copyRect<Bits>(c, od, 0, ca, ob, 0, 0, vr, cb);
  }
};

/// TDEINTERLEAVE: each row's stream, src0's valid columns followed (two sources) by src1's, split
/// into its even elements (dst0) and its odd ones (dst1). With two sources each holds dst0's
/// valid columns and the destinations take that many; with one, half of src0's valid columns.
/// Elements of the destinations past those are left as they were.
template <unsigned Bits> struct DeInterleave {
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c);
    const TileOperand &d0 = t.tiles[t.dst], &d1 = t.tiles[t.src2], &s0 = t.tiles[t.src0];
    const bool two = t.src1 >= 0;
    const uint32_t width = two ? t.validCols(c) : sourceRegion(c, t, s0).cols;
    const uint32_t half = two ? width : width / 2;
    if (!fits(c, t, s0, vr, width) || !fits(c, t, d0, vr, half) || !fits(c, t, d1, vr, half))
      return;
    if (two && !fits(c, t, t.tiles[t.src1], vr, width)) return;
    uint8_t *b0 = bptr(c, d0), *b1 = bptr(c, d1);
    const uint8_t* sb[2] = {bptr(c, s0), two ? bptr(c, t.tiles[t.src1]) : nullptr};
    const TileOperand* so[2] = {&s0, two ? &t.tiles[t.src1] : nullptr};
    for (uint32_t r = 0; r < vr; ++r)
      for (uint32_t k = 0; k < half; ++k)
        for (uint32_t parity = 0; parity < 2; ++parity) {
          const uint32_t at = 2 * k + parity, which = at < width ? 0 : 1, col = at - which * width;
          const uint64_t v = getBits(sb[which], Bits, so[which]->elemOffset(r, col));
          setBits(parity ? b1 : b0, Bits, (parity ? d1 : d0).elemOffset(r, k), v);
        }
  }
};

/// TCONCATIDX: each row r of dst's valid rows takes src0's first n0 = min(idx0[r], vc) elements,
/// then src1's first min(idx1[r], vc - n0), vc being dst's valid columns; the rest of the row is
/// left as it was. A count is the first element of its row, read as pto-isa reads it (an
/// unsigned of 32 bits: a negative count is a large one, clamped like any other).
template <unsigned Bits> struct ConcatIdx {
  static uint32_t count(Core& c, const TileOperand& o, uint32_t r) {
    const unsigned bits = isa::bitWidth(o.dtype);
    uint64_t v = getBits(bptr(c, o), bits, o.elemOffset(r, 0));
    if (isa::info(o.dtype).kind == isa::DTypeKind::SInt && bits < 64 && (v >> (bits - 1) & 1))
      v |= ~uint64_t{0} << bits;
    return static_cast<uint32_t>(v);
  }
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand &od = t.tiles[t.dst], &s0 = t.tiles[t.src0], &s1 = t.tiles[t.src1];
    const TileOperand &i0 = t.tiles[t.src2], &i1 = t.tiles[t.src3];
    if (!fits(c, t, od, vr, vc) || !fits(c, t, i0, vr, 1) || !fits(c, t, i1, vr, 1)) return;
    std::vector<std::pair<uint32_t, uint32_t>> n(vr);
    uint32_t most0 = 0, most1 = 0;
    for (uint32_t r = 0; r < vr; ++r) {
      const uint32_t n0 = std::min(count(c, i0, r), vc);
      n[r] = {n0, std::min(count(c, i1, r), vc - n0)};
      most0 = std::max(most0, n[r].first);
      most1 = std::max(most1, n[r].second);
    }
    if ((most0 && !fits(c, t, s0, vr, most0)) || (most1 && !fits(c, t, s1, vr, most1))) return;
    uint8_t* db = bptr(c, od);
    const uint8_t *b0 = bptr(c, s0), *b1 = bptr(c, s1);
    for (uint32_t r = 0; r < vr; ++r) {
      for (uint32_t j = 0; j < n[r].first; ++j)
        setBits(db, Bits, od.elemOffset(r, j), getBits(b0, Bits, s0.elemOffset(r, j)));
      for (uint32_t j = 0; j < n[r].second; ++j)
        setBits(db, Bits, od.elemOffset(r, n[r].first + j), getBits(b1, Bits, s1.elemOffset(r, j)));
    }
  }
};

/// TPACK (A5): dst[i,j] = the low bits of src[i,j] (b32 -> b16/b8, b16 -> b8), as the NPU's
/// packing stores do.
template <typename SU, typename DU> void kPack(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
  if (!fits(c, t, od, vr, vc) || !fits(c, t, os, vr, vc)) return;
  Acc<DU> d(c, od);
  Acc<SU> s(c, os);
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j)
      d.at(r, j) = static_cast<DU>(s.at(r, j));
}

// ------------------------------------------------------------------ gathers
/// An index element as a signed value (negative indices are out of range).
inline int64_t indexAt(Core& c, const TileOperand& oi, uint32_t r, uint32_t j) {
  return intValue(oi.dtype, getBits(bptr(c, oi), isa::bitWidth(oi.dtype), oi.elemOffset(r, j)));
}

/// TGATHERB gathers 32-byte blocks, as the NPU's vgatherb does (pto-isa's A2/A3 and A5 kernels;
/// its CPU simulator gathers single elements instead): block k of destination row i is the 32
/// bytes at byte offset off[i,k] from the source tile's start, for the blocks that cover the
/// row's valid elements (the last one cut at the valid end). Offsets are read as uint32 and must
/// name whole 32-byte blocks inside the source tile.
template <unsigned Bits> struct GatherB {
  static constexpr uint32_t kBlock = 32;
  static void run(Core& c, const TileInst& t) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0], &oo = t.tiles[t.src1];
    const uint64_t rowBytes = uint64_t(vc) * Bits / 8;
    const uint32_t blocks = static_cast<uint32_t>((rowBytes + kBlock - 1) / kBlock);
    if (!fits(c, t, od, vr, vc) || !fits(c, t, oo, vr, blocks)) return;
    const uint64_t srcBytes = os.bytes();
    const uint8_t* sb = bptr(c, os);
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < vr; ++r) {
      uint8_t* row = db + od.elemOffset(r, 0) * (Bits / 8);
      for (uint32_t k = 0; k < blocks; ++k) {
        const uint64_t off = static_cast<uint32_t>(indexAt(c, oo, r, k));
        const uint64_t n = std::min<uint64_t>(kBlock, rowBytes - uint64_t(k) * kBlock);
        if (off % kBlock != 0 || off + n > srcBytes)
          return fail(c, "TGATHERB block offset " + std::to_string(off) + " (row " +
                             std::to_string(r) + ", block " + std::to_string(k) +
                             ") is not a 32-byte block inside the source tile %" + os.name + " (" +
                             std::to_string(srcBytes) + " bytes)");
        std::memcpy(row + uint64_t(k) * kBlock, sb + off, n);
      }
    }
  }
};

/// MGATHER / MSCATTER addressing (pto-isa's Coalesce, GatherOOB, ScatterOOB, ScatterAtomicOp):
/// the mode word is the block's third scalar (isa::gm). Row mode gathers table row idx[r] at
/// the view's row stride; element mode reads a flat table from the view's address. Without a
/// coalesce attribute the index tile's shape picks the mode: the data tile's valid shape is
/// element mode, one index per data row (1 x R or R x 1) is row mode.
struct GmIndexing {
  bool rowMode = false;
  uint32_t rows = 0, cols = 0;
  isa::gm::Modes modes;
};
inline GmIndexing gmIndexing(const Core& c, const TileInst& t, const TileOperand& data,
                             const TileOperand& idx) {
  const Region d = sourceRegion(c, t, data), i = sourceRegion(c, t, idx);
  GmIndexing g{false, d.rows, d.cols, isa::gm::modesOf(t.scalar(c, 2))};
  const unsigned coalesce = g.modes.coalesce != 0
                                ? g.modes.coalesce
                                : isa::gm::inferredCoalesce(d.rows, d.cols, i.rows, i.cols);
  g.rowMode = coalesce == isa::gm::kRow;
  return g;
}
inline int64_t rowIndex(Core& c, const TileOperand& oi, uint32_t r) {
  return oi.rows == 1 || oi.cols != 1 ? indexAt(c, oi, 0, r) : indexAt(c, oi, r, 0);
}

/// The table entry (row or element) index `k` names under the out-of-bounds policy, or
/// nothing when the access is dropped (a gather's zero, a scatter's skip). A policy reads the
/// index as pto-isa does, as a uint32; without one a negative index is an error (`bad`).
inline std::optional<uint64_t> entryOf(int64_t k, const GmIndexing& g, bool gather, bool& bad) {
  namespace gm = isa::gm;
  const unsigned oob = g.modes.oob;
  if (oob == 0) {
    bad = k < 0;
    return static_cast<uint64_t>(k);
  }
  const uint64_t u = static_cast<uint32_t>(k), cap = g.modes.capacity;
  const bool clamp = gather ? oob == gm::kGatherClamp : oob == gm::kScatterClamp;
  const bool wrap = gather ? oob == gm::kGatherWrap : oob == gm::kScatterWrap;
  if (clamp) return std::min(u, cap - 1);
  if (wrap) return u % cap;
  if (u >= cap) return std::nullopt; // zero (gather) or skip (scatter)
  return u;
}

/// GM element address of data element (r, j), or nothing when its access is dropped.
inline std::optional<uint64_t> gmAddress(Core& c, const TileInst& t, const GmIndexing& g,
                                         const TileOperand& oi, uint32_t r, uint32_t j,
                                         unsigned bits, bool gather, bool& bad) {
  const uint64_t base = t.scalar(c, 0), stride = t.scalar(c, 1);
  const auto k = entryOf(g.rowMode ? rowIndex(c, oi, r) : indexAt(c, oi, r, j), g, gather, bad);
  if (!k) return std::nullopt;
  return g.rowMode ? base + *k * stride + uint64_t{j} * bits / 8 : base + *k * bits / 8;
}

template <unsigned Bits> struct MGather {
  static void run(Core& c, const TileInst& t) {
    const TileOperand &od = t.tiles[t.dst], &oi = t.tiles[t.src1];
    const GmIndexing g = gmIndexing(c, t, od, oi);
    if (!fits(c, t, od, g.rows, g.cols)) return;
    uint8_t* db = bptr(c, od);
    for (uint32_t r = 0; r < g.rows; ++r)
      for (uint32_t j = 0; j < g.cols; ++j) {
        bool bad = false;
        const auto a = gmAddress(c, t, g, oi, r, j, Bits, true, bad);
        if (!a) { // out of the table under gatherOob = zero
          Raw<Bits>::set(db, od.elemOffset(r, j), 0);
          continue;
        }
        const uint8_t* p = bad ? nullptr : c.translate(*a, (Bits + 7) / 8, "MGATHER", false);
        if (!p) return fail(c, "MGATHER: negative index in tile %" + oi.name);
        Raw<Bits>::set(db, od.elemOffset(r, j), Raw<Bits>::get(p, 0));
      }
  }
};

/// `old` combined with `v` by MSCATTER's atomic op (isa::gm codes) on `dtype` elements: add as
/// the MTE3 atomic unit and TSTORE's atomic add do (isa::fix::atomicAdd), max and min by value
/// (i32 signed, ui32 unsigned, f32 by IEEE order: a NaN source never replaces).
uint64_t scatterCombine(unsigned atomic, isa::DType dtype, uint64_t old, uint64_t v) {
  namespace gm = isa::gm;
  if (atomic == gm::kAtomicAdd) return isa::fix::atomicAdd(dtype, old, v);
  const bool max = atomic == gm::kAtomicMax;
  bool greater = false; // v > old
  if (dtype == isa::DType::F32) {
    float a, b;
    const uint32_t ob = static_cast<uint32_t>(old), vb = static_cast<uint32_t>(v);
    std::memcpy(&a, &ob, 4);
    std::memcpy(&b, &vb, 4);
    if (b != b) return old;
    if (max ? b > a || a != a : b < a || a != a) return v;
    return old;
  }
  if (dtype == isa::DType::I32)
    greater = static_cast<int32_t>(v) > static_cast<int32_t>(old);
  else
    greater = static_cast<uint32_t>(v) > static_cast<uint32_t>(old);
  const bool less = !greater && static_cast<uint32_t>(v) != static_cast<uint32_t>(old);
  return (max ? greater : less) ? v : old;
}

/// MSCATTER: in row-major order, so the last writer of a GM element wins (pto-isa's
/// sequential semantics, A5 Conflict::Last; Conflict::Default may pick any writer, this one
/// included); an atomic op combines every writer instead.
template <unsigned Bits> struct MScatter {
  static void run(Core& c, const TileInst& t) {
    const TileOperand &os = t.tiles[t.src0], &oi = t.tiles[t.src1];
    const GmIndexing g = gmIndexing(c, t, os, oi);
    if (!fits(c, t, os, g.rows, g.cols)) return;
    const uint8_t* sb = bptr(c, os);
    for (uint32_t r = 0; r < g.rows; ++r)
      for (uint32_t j = 0; j < g.cols; ++j) {
        bool bad = false;
        const auto a = gmAddress(c, t, g, oi, r, j, Bits, false, bad);
        if (!a) continue; // out of the table under scatterOob = skip
        uint8_t* p = bad ? nullptr : c.translate(*a, (Bits + 7) / 8, "MSCATTER", true);
        if (!p) return fail(c, "MSCATTER: negative index in tile %" + oi.name);
        uint64_t v = Raw<Bits>::get(sb, os.elemOffset(r, j));
        if (g.modes.atomic != 0)
          v = scatterCombine(g.modes.atomic, os.dtype, Raw<Bits>::get(p, 0), v);
        Raw<Bits>::set(p, 0, v);
      }
  }
};

TileKernel packKernel(unsigned sbits, unsigned dbits) {
  if (sbits == 32 && dbits == 16) return &kPack<uint32_t, uint16_t>;
  if (sbits == 32 && dbits == 8) return &kPack<uint32_t, uint8_t>;
  if (sbits == 16 && dbits == 8) return &kPack<uint16_t, uint8_t>;
  return nullptr;
}

/// The kernel for ops whose data moves as raw elements of the destination's width.
std::optional<std::string> selectRaw(TileInst& t, std::initializer_list<int> roles, TileKernel k) {
  if (auto e = need(t, roles)) return e;
  if (!k)
    return std::string(t.name) + " on " +
           std::string(isa::spelling(t.tiles[t.dst >= 0 ? t.dst : t.src0].dtype)) +
           " tiles is not supported by the cpu backend";
  t.kernel = k;
  return std::nullopt;
}

} // namespace

bool selectLayoutKernel(TileInst& t, std::optional<std::string>& err) {
  const unsigned bits = t.dst >= 0    ? isa::bitWidth(t.tiles[t.dst].dtype)
                        : t.src0 >= 0 ? isa::bitWidth(t.tiles[t.src0].dtype)
                                      : 0;
  switch (t.op) {
  case OpId::TCI:
    if (t.dst >= 0 && !isa::isInteger(t.tiles[t.dst].dtype)) {
      err = "TCI needs an integer destination, not " +
            std::string(isa::spelling(t.tiles[t.dst].dtype));
      return true;
    }
    err = selectRaw(t, {t.dst}, byWidth<Ci>(bits));
    return true;
  case OpId::TTRI:
    err = selectRaw(t, {t.dst}, byWidth<Tri>(bits));
    return true;
  case OpId::TSETVAL:
    err = selectRaw(t, {t.dst}, &kSetval);
    return true;
  case OpId::TGETVAL:
    err = selectRaw(t, {t.src0}, &kGetval);
    return true;
  case OpId::TFILLPAD:
  case OpId::TFILLPAD_INPLACE:
  case OpId::TFILLPAD_EXPAND:
    if ((err = need(t, {t.dst, t.src0}))) return true;
    if (t.tiles[t.dst].pad == isa::PadValue::Null) {
      err = std::string(t.name) + ": the destination tile %" + t.tiles[t.dst].name +
            " has no pad value (pad must be zero, max or min)";
      return true;
    }
    if ((err = sourceRegionKnown(t, t.src0))) return true;
    err = selectRaw(t, {t.dst, t.src0}, byWidth<FillPad>(bits));
    return true;
  case OpId::TEXTRACT:
    err = selectRaw(t, {t.dst, t.src0}, byWidth<Extract>(bits));
    return true;
  case OpId::TINSERT:
    if ((err = need(t, {t.dst, t.src0})) || (err = sourceRegionKnown(t, t.src0))) return true;
    if (t.tiles[t.src0].dtype != t.tiles[t.dst].dtype)
      err = selectRaw(t, {t.dst, t.src0}, &kInsertConvert);
    else
      err = selectRaw(t, {t.dst, t.src0}, byWidth<Insert>(bits));
    return true;
  case OpId::TCONCAT:
    if (!(err = sourceRegionKnown(t, t.src0)) && !(err = sourceRegionKnown(t, t.src1)))
      err = selectRaw(t, {t.dst, t.src0, t.src1}, byWidth<Concat>(bits));
    return true;
  case OpId::TCONCATIDX:
    if (!(err = need(t, {t.dst, t.src0, t.src1, t.src2, t.src3})))
      err = selectRaw(t, {t.dst, t.src0, t.src1, t.src2, t.src3}, byWidth<ConcatIdx>(bits));
    return true;
  case OpId::TDEINTERLEAVE:
    if ((err = need(t, {t.dst, t.src0, t.src2})) || (err = sourceRegionKnown(t, t.src0)))
      return true;
    err = t.src1 >= 0 ? selectRaw(t, {t.dst, t.src0, t.src1, t.src2}, byWidth<DeInterleave>(bits))
                      : selectRaw(t, {t.dst, t.src0, t.src2}, byWidth<DeInterleave>(bits));
    return true;
  case OpId::TPACK:
    if ((err = need(t, {t.dst, t.src0}))) return true;
    err = selectRaw(t, {t.dst, t.src0}, packKernel(isa::bitWidth(t.tiles[t.src0].dtype), bits));
    if (err)
      err = "TPACK packs b32 -> b16/b8 or b16 -> b8, not " +
            std::string(isa::spelling(t.tiles[t.src0].dtype)) + " -> " +
            std::string(isa::spelling(t.tiles[t.dst].dtype));
    return true;
  case OpId::TGATHERB:
    err = selectRaw(t, {t.dst, t.src0, t.src1}, bits >= 8 ? byWidth<GatherB>(bits) : nullptr);
    return true;
  case OpId::MGATHER:
    if (!(err = need(t, {t.dst, t.src1})) && !(err = sourceRegionKnown(t, t.src1)))
      err = selectRaw(t, {t.dst, t.src1}, bits >= 8 ? byWidth<MGather>(bits) : nullptr);
    return true;
  case OpId::MSCATTER:
    err = selectRaw(t, {t.src0, t.src1}, bits >= 8 ? byWidth<MScatter>(bits) : nullptr);
    return true;
  case OpId::PRINT:
    t.kernel = &kPrintScalar;
    return true;
  case OpId::TPRINT:
    if (!(err = need(t, {t.src0})) && isa::bitWidth(t.tiles[t.src0].dtype) < 8)
      err = std::string("TPRINT of a 4-bit tile is not supported by the cpu backend");
    else if (!err)
      t.kernel = &kPrint;
    return true;
  case OpId::TRANDOM:
    if (!(err = need(t, {t.dst})) && !t.tiles[t.dst].plainRowMajor())
      err = std::string("TRANDOM needs a row-major destination (pto-isa's static_assert)");
    else if (!err && bits != 32)
      err = std::string("TRANDOM fills i32 or ui32 tiles, not ") +
            std::string(isa::spelling(t.tiles[t.dst].dtype));
    else if (!err)
      t.kernel = &Random::run;
    return true;
  case OpId::TASSIGN:
  case OpId::TGET_SCALE_ADDR:
    // The scalar interpreter runs TASSIGN itself (MKind::Bind, runtime/ScalarInterp.h) and never
    // hands it to a backend; the empty kernel only keeps a TileInst of it well-formed.
    t.kernel = [](Core&, const TileInst&) {};
    return true;
  case OpId::TMOV_FP:
    err = std::string("TMOV_FP is not supported by the cpu backend: the PTO documents leave the "
                      "scaling tile's quantization "
                      "format implementation-defined (pto-isa's CPU model ignores it)");
    return true;
  default:
    return false;
  }
}

} // namespace pto::rt::cpu
