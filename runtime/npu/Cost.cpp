// Costs of the npu model (docs/npu-model.md, "Cost").
#include "runtime/npu/Cost.h"

#include "isa/Pipes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

namespace pto::rt::npu {
namespace {

using isa::Loc;
using isa::OpId;

constexpr uint64_t kRepeatMax = 255; // repeats one vector instruction takes (REPEAT_MAX)

uint64_t ceilDiv(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

// Transfers (reference 7.2, kA2A3ArchConfig bandwidths at 1.85 GHz). GM->UB and GM->L1 (MTE2)
// follow pto-isa's hardware-profiled TLOADs (tests/costmodel/st/testcase/tload): every transfer
// pays 264 cycles and then streams 128 B/cycle -- `slices x (264 + bytes/128)` fits 8 of its 9
// points within 4% (64 KiB in one slice = 776, the same bytes in 8 slices = 2624, 16 KiB in 32
// slices = 8576). A row that is not back to back with the previous one adds no measured cost
// (no profiled point is a strided 2-D load), so perBurst is 0.
// The chip: A3 runs 24 cube cores at once (pto-isa kernels/manual/a2a3/gemm_performance launches
// 24 blocks); their GM/L2 share comes from that kernel's published table. Each block loads 192 KiB
// per group of four k-blocks (A 128x256 and B 256x256, f16, in two TLOADs); TLOAD busy 72.2% of
// 0.0388 ms at 1536^3 (18 groups a block) and 95.2% of 1.506 ms at 6144^3 (1152 groups) leave,
// after 2 x 264 fixed cycles, 84 and 111 B/cycle a block while all 24 stream: 2300 B/cycle for
// the chip (96 a block) sits between them.
// The same table times L0C->GM and L1->L0A/L0B (the reference's 40.6, 256 and 128 B/cycle are
// pto-isa's model, not measurements): TSTORE's busy share is one 128 KiB f32 C tile every 1840
// cycles at all four sizes (7.7%, 5.8%, 3.1%, 2.4% of 0.0388 / 0.2067 / 1.506 / 3.168 ms over
// 3 / 12 / 48 / 75 tiles a block), 72 B/cycle; TEXTRACT's (42.2%, 68.1% at 1536^3, 6144^3) is
// 415 cycles per k-step (16 KiB to L0A, 32 KiB to L0B): 205 and 105 B/cycle after 12 fixed each.
// Start-up: pto-isa's gemm_performance times whole launches on the device. At 1536^3 the
// overlapped loop the model simulates takes 52164 cycles of the 71780 measured (0.0388 ms at
// 1.85 GHz): the launch, the blocks' start and their first GM touches from HBM (its TLOAD group
// takes 2879 cycles there, 2302 at 6144^3) cost about 19600 cycles that no loop hides. One figure
// for every launch; with it the other three sizes stay within 9% and every busy share within 8
// points (samples/gemm-performance/README.md), so it is not a per-size fit.
CostTable makeA2A3() {
  CostTable t;
  t.arch = isa::Arch::A2A3;
  t.gmToVec = {128, 264, 0};
  t.gmToMat = {128, 264, 0};
  t.vecToGm = {109.4, 24, 7.2};
  t.matToGm = {18.6, 24, 7.2};
  t.accToGm = {72, 24, 0};
  t.accToMat = {74.3, 24, 0};
  t.matToLeft = {205, 12, 0};
  t.matToRight = {105, 12, 0};
  t.matToOther = {18.6, 12, 0};
  t.vecToVec = {594, 12, 0};
  return t;
}

// A5: the reference gives no A5 transfer or launch calibration, so both keep the A2/A3 numbers.
CostTable makeA5() {
  CostTable t = makeA2A3();
  t.arch = isa::Arch::A5;
  return t;
}

/// One-source elementwise ops: pto-isa runs them over the valid bytes as one run when the rows
/// are back to back (TEXP f16 64x64 = 95 = 31 + 2 x 32 repeats, not 64 rows of one repeat).
bool unaryElementwise(OpId op) {
  const isa::OpInfo& i = isa::info(op);
  const std::string_view sig = i.signature;
  return i.rule == isa::TypeRule::SameAll && sig.starts_with("src:T") &&
         sig.find("src1") == std::string_view::npos && sig.find("scalar") == std::string_view::npos;
}

/// The hand-set A2/A3 line of an op (NPU_VEC / NPU_DEFAULT): repeats row by row, as the
/// reference's intrinsic lines count them, except one-source elementwise ops.
VecLine handSetA2A3(OpId op) {
  const RepeatCount count = unaryElementwise(op) ? RepeatCount::Flat : RepeatCount::Rows;
  switch (op) {
#define NPU_VEC(Op, Slope, Fixed)                                                                  \
  case OpId::Op:                                                                                   \
    return {Fixed, Slope, 0, count, false};
#include "runtime/npu/CostTable.def"
  default:
    return {};
  }
}

/// Ops costed by cyclesOf's transfer and cube models rather than a CostTable.def row.
bool transferOrCube(OpId op) {
  return isa::info(op).rule == isa::TypeRule::Matmul || op == OpId::TLOAD ||
         op == OpId::TPREFETCH || op == OpId::TSTORE || op == OpId::TMOV || op == OpId::TEXTRACT ||
         op == OpId::TINSERT;
}

// An op without a fitted A5 line: the reference's one A5 vector fit (TADD 1D: 1.247·x + 55.07
// against 2.11·x + 24 on A2/A3) scales its A2/A3 line: slope x 0.59, fixed + 31.
VecLine derivedA5(const VecLine& a2a3) {
  VecLine v = a2a3;
  v.perRepeat *= 1.247 / 2.11;
  v.perRow *= 1.247 / 2.11;
  v.fixed += 31;
  return v;
}

constexpr unsigned kOpCount = 0
#define PTO_OP(Id, mnemonic, pipe, engine, signature, rule, a2a3, a5, flags) +1
#include "isa/Ops.def"
    ;

/// Every op's vector line on one arch: the fitted rows of CostTable.def where the hardware points
/// give one, else the hand-set (A2/A3) or derived (A5) line.
struct VecLines {
  std::array<VecLine, kOpCount> byOp{};
  struct Cvt {
    isa::DType from, to;
    VecLine line;
  };
  std::vector<Cvt> cvt; // TCVT per (source, destination) dtype pair
  struct WithTmp {
    OpId op;
    VecLine line;
  };
  std::vector<WithTmp> tmp; // an op run through a scratch tile (TCOLSUM's binary tree)
  struct Typed {
    OpId op;
    isa::DType dtype;
    VecLine line;
  };
  std::vector<Typed> typed; // an op on one element type (high-precision forms, A2/A3 f32 TBinSOp)
};

VecLines makeLines(isa::Arch arch) {
  VecLines l;
  for (unsigned i = 0; i < kOpCount; ++i) {
    const VecLine a2a3 = handSetA2A3(static_cast<OpId>(i));
    l.byOp[i] = arch == isa::Arch::A5 ? derivedA5(a2a3) : a2a3;
  }
  const RepeatCount Flat = RepeatCount::Flat, Rows = RepeatCount::Rows,
                    ColReduce = RepeatCount::ColReduce, Chunks = RepeatCount::Chunks;
  const isa::Arch A2A3 = isa::Arch::A2A3, A5 = isa::Arch::A5;
  using D = isa::DType;
#define NPU_LINE(Count, Unit, Wide16, Fixed, PerRepeat, PerRow, WideAbove, WidePerRepeat,          \
                 WidePerRow)                                                                       \
  VecLine{Fixed, PerRepeat, PerRow, Count, Wide16, Unit, WideAbove, WidePerRepeat, WidePerRow}
#define NPU_FIT(Arch, Op, ...)                                                                     \
  if (Arch == arch) l.byOp[static_cast<unsigned>(OpId::Op)] = NPU_LINE(__VA_ARGS__);
#define NPU_FIT_TMP(Arch, Op, ...)                                                                 \
  if (Arch == arch) l.tmp.push_back({OpId::Op, NPU_LINE(__VA_ARGS__)});
#define NPU_FIT_CVT(Arch, From, To, ...)                                                           \
  if (Arch == arch) l.cvt.push_back({D::From, D::To, NPU_LINE(__VA_ARGS__)});
#define NPU_FIT_DT(Arch, Op, DType, ...)                                                           \
  if (Arch == arch) l.typed.push_back({OpId::Op, D::DType, NPU_LINE(__VA_ARGS__)});
#define NPU_VEC(Op, Slope, Fixed)
#include "runtime/npu/CostTable.def"
#undef NPU_LINE
  (void)Flat, (void)Rows, (void)ColReduce, (void)Chunks, (void)A2A3, (void)A5;
  return l;
}

const VecLines& linesOf(isa::Arch arch) {
  static const VecLines a2a3 = makeLines(isa::Arch::A2A3), a5 = makeLines(isa::Arch::A5);
  return arch == isa::Arch::A5 ? a5 : a2a3;
}

uint32_t dimOr(int32_t descriptor, uint32_t dynamicValue) {
  return descriptor >= 0 ? static_cast<uint32_t>(descriptor) : dynamicValue;
}

VecShape vecShape(const TileInst& t, const Core& c) {
  VecShape best;
  unsigned widest = 1;
  uint64_t bestElems = 0;
  const uint32_t lbRows = t.validRows(c), lbCols = t.validCols(c);
  for (const TileOperand& o : t.tiles) {
    const uint64_t rows = std::min<uint64_t>(dimOr(o.validRows, lbRows), o.rows);
    const uint64_t cols = std::min<uint64_t>(dimOr(o.validCols, lbCols), o.cols);
    widest = std::max(widest, isa::bitWidth(o.dtype));
    if (rows * cols * isa::bitWidth(o.dtype) > bestElems) {
      bestElems = rows * cols * isa::bitWidth(o.dtype);
      best.rows = rows, best.cols = cols, best.tileRows = o.rows, best.tileCols = o.cols;
    }
  }
  // pto-isa's compile-time test: every operand's valid columns are its tile's, or every operand
  // is one row.
  bool allColsStatic = true, allOneRow = true;
  for (const TileOperand& o : t.tiles) {
    allColsStatic &= o.validCols >= 0 && static_cast<uint32_t>(o.validCols) == o.cols;
    allOneRow &= o.rows == 1;
  }
  best.staticRun = allColsStatic || allOneRow;
  best.bits = widest;
  return best;
}

/// `fixed + perRepeat * repeats + perRow * rows` of the line over the op's largest operand.
double vecCycles(const VecLine& v, const VecShape& s) {
  const unsigned bits = v.wide16 && s.bits == 16 ? 32 : s.bits;
  const uint64_t rowBytes = (s.cols * bits + 7) / 8, unit = std::max(1u, v.unitBytes);
  const uint64_t perRow = (rowBytes + unit - 1) / unit;
  const double rows = static_cast<double>(s.rows);
  if (v.count == RepeatCount::ColReduce) {
    const double further = static_cast<double>(s.rows > 0 ? s.rows - 1 : 0);
    return v.fixed + static_cast<double>((rowBytes + 31) / 32) +
           v.perRepeat * further * static_cast<double>(perRow) + v.perRow * further;
  }
  if (v.count == RepeatCount::Chunks) {
    const double repeats = s.staticRun ? static_cast<double>(ceilDiv(s.rows * rowBytes, unit))
                                       : rows * static_cast<double>(perRow);
    return v.fixed + v.perRepeat * repeats +
           v.perRow * static_cast<double>(scalarOpInstructions(s));
  }
  const bool flat = v.count == RepeatCount::Flat && (s.cols == s.tileCols || s.rows <= 1);
  if (flat)
    return v.fixed + v.perRepeat * static_cast<double>((s.rows * rowBytes + unit - 1) / unit);
  const double repeats = rows * static_cast<double>(perRow);
  if (v.wideAbove > 0 && perRow > v.wideAbove)
    return v.fixed + v.widePerRepeat * repeats + v.widePerRow * rows;
  return v.fixed + v.perRepeat * repeats + v.perRow * rows;
}

const VecLine& lineOf(const TileInst& t, isa::Arch arch) {
  const VecLines& l = linesOf(arch);
  if (t.op == OpId::TCVT && t.dst >= 0 && t.src0 >= 0)
    for (const VecLines::Cvt& cv : l.cvt)
      if (cv.from == t.tiles[t.src0].dtype && cv.to == t.tiles[t.dst].dtype) return cv.line;
  if (t.tmp >= 0)
    for (const VecLines::WithTmp& w : l.tmp)
      if (w.op == t.op) return w.line;
  if (t.dst >= 0)
    for (const VecLines::Typed& y : l.typed)
      if (y.op == t.op && y.dtype == t.tiles[t.dst].dtype) return y.line;
  return l.byOp[static_cast<unsigned>(t.op)];
}

uint64_t move(const MoveCost& m, uint64_t bytes, uint64_t bursts) {
  const double cycles = m.fixed + static_cast<double>(bytes) / m.bytesPerCycle +
                        static_cast<double>(bursts > 0 ? bursts - 1 : 0) * m.perBurst;
  return static_cast<uint64_t>(std::llround(cycles));
}

/// A GM transfer's rate when `c.blockNum` blocks run together: the blocks that fit on the chip at
/// once share its GM (L2) bandwidth, and no block streams faster than its own MTE.
MoveCost sharedGm(const MoveCost& m, const Core& c, const CostTable& k) {
  const uint32_t together = std::clamp<uint32_t>(c.blockNum, 1, k.cores);
  MoveCost out = m;
  out.bytesPerCycle = std::min(m.bytesPerCycle, k.chipGmBytesPerCycle / together);
  return out;
}

/// TLOAD / TSTORE: rows of valid columns (columns of valid rows for a DN view), one burst when
/// they are back to back in GM.
uint64_t gmTransfer(const TileInst& t, const Core& c, const TileOperand& tile, const MoveCost& m) {
  const uint64_t rows = t.gmDn ? t.validCols(c) : t.validRows(c),
                 cols = t.gmDn ? t.validRows(c) : t.validCols(c);
  const uint64_t rowBytes = (cols * isa::bitWidth(tile.dtype) + 7) / 8, stride = t.scalar(c, 1);
  const uint64_t bursts = rows <= 1 || stride == rowBytes ? 1 : rows;
  return move(m, rows * rowBytes, bursts);
}

uint64_t localMove(const TileInst& t, const Core& c, const CostTable& k) {
  const TileOperand &d = t.tiles[t.dst], &s = t.tiles[t.src0];
  const uint64_t rows = std::min<uint64_t>(t.validRows(c), s.rows),
                 cols = std::min<uint64_t>(t.validCols(c), s.cols);
  const uint64_t bytes = (rows * cols * isa::bitWidth(s.dtype) + 7) / 8;
  const Loc from = static_cast<Loc>(s.loc), to = static_cast<Loc>(d.loc);
  if (from == Loc::Mat && to == Loc::Left) return move(k.matToLeft, bytes, 1);
  if (from == Loc::Mat && to == Loc::Right) return move(k.matToRight, bytes, 1);
  if (from == Loc::Mat) return move(k.matToOther, bytes, 1);
  if (from == Loc::Acc && to == Loc::Mat) return move(k.accToMat, bytes, 1);
  if (from == Loc::Acc) return move(k.accToGm, bytes, 1);
  return move(k.vecToVec, bytes, 1);
}

uint64_t cube(const TileInst& t, const Core& c, const CostTable& k) {
  // LB0/LB1/LB2 carry M, N, K for the matmul family (docs/abi.md).
  const uint64_t m = t.bound(c, 0, t.tiles[t.dst].rows), n = t.bound(c, 1, t.tiles[t.dst].cols);
  const TileOperand& lhs = t.tiles[t.src0];
  const uint64_t kk = t.bound(c, 2, lhs.cols);
  const unsigned aBytes = std::max(1u, isa::bitWidth(lhs.dtype) / 8);
  const uint64_t factor = lhs.dtype == isa::DType::F32 ? 2 : 1;
  const uint64_t kBlock = std::max<uint64_t>(1, 32 / aBytes);
  return static_cast<uint64_t>(k.cubeFixed) +
         factor * ((m + 15) / 16) * ((kk + kBlock - 1) / kBlock) * ((n + 15) / 16);
}

} // namespace

uint64_t scalarOpInstructions(const VecShape& s) {
  const uint64_t perRepeat = std::max<uint64_t>(1, 256 * 8 / s.bits);
  if (s.staticRun) {
    // Count mode is chosen from the tile's static Rows x Cols, the norm-mode tail from the valid
    // elements.
    const uint64_t tileRepeats = ceilDiv(s.tileRows * s.tileCols, perRepeat);
    const bool countMode =
        (s.tileCols % perRepeat != 0 && s.tileCols > perRepeat) || tileRepeats > kRepeatMax;
    return countMode ? 1 : 1 + ((s.rows * s.cols) % perRepeat != 0 ? 1 : 0);
  }
  const uint64_t tileColRepeats = s.tileCols / perRepeat;
  if ((tileColRepeats > 1 && s.tileRows * tileColRepeats < 4) || s.tileRows < tileColRepeats + 1)
    return s.rows;
  const uint64_t strideBlocks = s.tileCols * s.bits / 8 / 32;
  const uint64_t headRepeats = s.cols / perRepeat, tail = s.cols % perRepeat;
  if (s.tileRows <= kRepeatMax && strideBlocks <= kRepeatMax)
    return headRepeats + (tail != 0 ? 1 : 0);
  const bool heads = s.tileRows > perRepeat;
  const uint64_t headInstructions =
      heads && headRepeats > 0 ? s.rows * ceilDiv(headRepeats, kRepeatMax) : 0;
  const uint64_t remain = heads ? tail : s.cols;
  if (remain == 0) return headInstructions;
  return headInstructions + (strideBlocks > kRepeatMax ? s.rows : ceilDiv(s.rows, kRepeatMax));
}

const CostTable& costTable(isa::Arch arch) {
  static const CostTable a2a3 = makeA2A3(), a5 = makeA5();
  return arch == isa::Arch::A5 ? a5 : a2a3;
}

isa::Pipe pipeOf(const TileInst& t, isa::Arch arch) {
  std::optional<Loc> src, dst;
  if (t.src0 >= 0) src = static_cast<Loc>(t.tiles[t.src0].loc);
  if (t.dst >= 0) dst = static_cast<Loc>(t.tiles[t.dst].loc);
  return isa::pipeOf(t.op, src, dst, arch);
}

uint64_t cyclesOf(const TileInst& t, const Core& c, isa::Arch arch) {
  const CostTable& k = costTable(arch);
  if (isa::info(t.op).rule == isa::TypeRule::Matmul && t.dst >= 0 && t.src0 >= 0)
    return cube(t, c, k);
  switch (t.op) {
  case OpId::TLOAD:
  case OpId::TPREFETCH:
    if (t.dst < 0) break;
    return gmTransfer(
        t, c, t.tiles[t.dst],
        sharedGm(static_cast<Loc>(t.tiles[t.dst].loc) == Loc::Mat ? k.gmToMat : k.gmToVec, c, k));
  case OpId::TSTORE: {
    if (t.src0 < 0) break;
    const Loc from = static_cast<Loc>(t.tiles[t.src0].loc);
    return gmTransfer(t, c, t.tiles[t.src0],
                      sharedGm(from == Loc::Acc   ? k.accToGm
                               : from == Loc::Mat ? k.matToGm
                                                  : k.vecToGm,
                               c, k));
  }
  case OpId::TMOV:
  case OpId::TEXTRACT:
  case OpId::TINSERT:
    if (t.dst < 0 || t.src0 < 0) break;
    if (static_cast<Loc>(t.tiles[t.src0].loc) == Loc::Vec &&
        static_cast<Loc>(t.tiles[t.dst].loc) == Loc::Vec)
      break;
    return localMove(t, c, k);
  default:
    break;
  }
  return static_cast<uint64_t>(std::llround(vecCycles(lineOf(t, arch), vecShape(t, c))));
}

bool hasCostEntry(OpId op) {
  if (transferOrCube(op)) return true;
  switch (op) {
#define NPU_VEC(Op, Slope, Fixed)                                                                  \
  case OpId::Op:                                                                                   \
    return true;
#include "runtime/npu/CostTable.def"
  default:
    return false;
  }
}

} // namespace pto::rt::npu
