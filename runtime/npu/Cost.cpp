// Costs of the npu model (docs/npu-model.md, "Cost").
#include "runtime/npu/Cost.h"

#include "isa/Pipes.h"

#include <algorithm>
#include <cmath>

namespace pto::rt::npu {
namespace {

using isa::Loc;
using isa::OpId;

// Transfers (reference 7.2, kA2A3ArchConfig bandwidths at 1.85 GHz). GM->UB is calibrated to
// the whole-instruction anchors: 64 KiB contiguous = 776 cycles and the same bytes as 256 rows
// of 256 B = 2624 cycles give 88 B/cycle, 24 fixed and 7.2 per extra burst.
CostTable makeA2A3() {
  CostTable t;
  t.arch = isa::Arch::A2A3;
  t.gmToVec = {88.0, 24, 7.2};
  t.gmToMat = {78.4, 24, 7.2};
  t.vecToGm = {109.4, 24, 7.2};
  t.matToGm = {18.6, 24, 7.2};
  t.accToGm = {40.6, 24, 7.2};
  t.accToMat = {74.3, 24, 0};
  t.matToLeft = {256, 12, 0};
  t.matToRight = {128, 12, 0};
  t.matToOther = {18.6, 12, 0};
  t.vecToVec = {594, 12, 0};
  return t;
}

// A5: the reference gives no A5 transfer calibration, so transfers keep the A2/A3 numbers.
CostTable makeA5() {
  CostTable t = makeA2A3();
  t.arch = isa::Arch::A5;
  return t;
}

VecCost a2a3Vec(OpId op) {
  switch (op) {
#define NPU_VEC(Op, Slope, Fixed)                                                                  \
  case OpId::Op:                                                                                   \
    return {Slope, Fixed};
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

// The one A5 vector fit of the reference (TADD 1D: 1.247·x + 55.07 against 2.11·x + 24 on
// A2/A3) scales every A2/A3 line: slope x 0.59, fixed + 31.
VecCost a5Vec(OpId op) {
  VecCost c = a2a3Vec(op);
  return {c.slope * (1.247 / 2.11), c.fixed + 31};
}

uint32_t dimOr(int32_t descriptor, uint32_t dynamicValue) {
  return descriptor >= 0 ? static_cast<uint32_t>(descriptor) : dynamicValue;
}

/// Repeats of the op: the largest operand's valid region in 256-byte repeats, row by row.
uint64_t repeatsOf(const TileInst& t, const Core& c) {
  uint64_t best = 1;
  const uint32_t lbRows = t.validRows(c), lbCols = t.validCols(c);
  for (const TileOperand& o : t.tiles) {
    const uint64_t rows = std::min(dimOr(o.validRows, lbRows), o.rows);
    const uint64_t cols = std::min(dimOr(o.validCols, lbCols), o.cols);
    const uint64_t rowBytes = (cols * isa::bitWidth(o.dtype) + 7) / 8;
    best = std::max(best, rows * ((rowBytes + 255) / 256));
  }
  return best;
}

uint64_t move(const MoveCost& m, uint64_t bytes, uint64_t bursts) {
  const double cycles = m.fixed + static_cast<double>(bytes) / m.bytesPerCycle +
                        static_cast<double>(bursts > 0 ? bursts - 1 : 0) * m.perBurst;
  return static_cast<uint64_t>(std::llround(cycles));
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
    return gmTransfer(t, c, t.tiles[t.dst],
                      static_cast<Loc>(t.tiles[t.dst].loc) == Loc::Mat ? k.gmToMat : k.gmToVec);
  case OpId::TSTORE: {
    if (t.src0 < 0) break;
    const Loc from = static_cast<Loc>(t.tiles[t.src0].loc);
    return gmTransfer(t, c, t.tiles[t.src0],
                      from == Loc::Acc   ? k.accToGm
                      : from == Loc::Mat ? k.matToGm
                                         : k.vecToGm);
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
  const VecCost v = arch == isa::Arch::A5 ? a5Vec(t.op) : a2a3Vec(t.op);
  return static_cast<uint64_t>(
      std::llround(v.slope * static_cast<double>(repeatsOf(t, c)) + v.fixed));
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
