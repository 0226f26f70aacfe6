// The npu model's cost of one tile op: which pipe runs it and for how many cycles
// (docs/npu-model.md, "Cost"). The numbers come from the anchors of
// ../shared/reference/pto-isa-semantics.md 7.2 (A2/A3 = 910B3 calibrations) and live in one table
// per arch (runtime/npu/CostTable.def).
#pragma once

#include "runtime/Program.h"

#include <cstdint>

namespace pto::rt::npu {

/// How the repeats of a vector line are counted over its largest operand (docs/npu-model.md).
enum class RepeatCount : uint8_t {
  Flat,      // rows back to back (valid cols = tile cols, or one row) are one run of bytes
  Rows,      // row by row, each row charged
  ColReduce, // a column reduction: the first row copied (one 32-byte block a cycle), then one
             // instruction a further row folding it in: repeats and rows counted over rows - 1
  Chunks,    // as pto-isa's A2/A3 tile-scalar ops issue them (TBinSOp.hpp): one run when the
             // valid columns are statically the tile's, else an instruction per 256-byte column
             // chunk repeating over the rows (or per row, for wide short tiles); `perRow` is then
             // charged per vector instruction, not per row
};

/// A vector op's line: `fixed + perRepeat * repeats + perRow * rows` cycles, one repeat =
/// `unitBytes` (a 256-byte vector repeat, or a 32-byte block for copies through UB's MTE) of the
/// largest operand at the element width of the widest operand (16-bit data counted as 32-bit when
/// `wide16`); `rows` are charged when the count goes row by row. A row-by-row (2-D) run whose rows
/// are longer than `wideAbove` units (0: never) takes `widePerRepeat` and `widePerRow` instead
/// (A5's narrowing TCVTs to 8- and 4-bit types store a row piece by piece beyond two repeats).
/// Whole-instruction costs of an isolated op on the NPU: head and tail are in `fixed`.
struct VecLine {
  double fixed = 6;
  double perRepeat = 2;
  double perRow = 0;
  RepeatCount count = RepeatCount::Rows;
  bool wide16 = false;
  unsigned unitBytes = 256;
  unsigned wideAbove = 0;
  double widePerRepeat = 0, widePerRow = 0;
};

/// The op's largest tile operand (valid bytes at the widest operand's element width): its valid
/// rows and columns, tile rows and columns, and that width in bits.
struct VecShape {
  uint64_t rows = 1, cols = 1, tileRows = 1, tileCols = 1;
  unsigned bits = 8;
  /// Every operand's valid columns are statically its tile's (or it is one row): pto-isa's
  /// compile-time test for running the op over the bytes as one run.
  bool staticRun = true;
};

/// The vector instructions pto-isa's A2/A3 TBinSInstr issues for a tile-scalar op (TBinSOp.hpp):
/// one run (a count-mode instruction, or a head and a masked tail) when the valid columns are
/// statically the tile's; otherwise, by the tile's static shape, one instruction a row (few rows
/// of many repeats), one a 256-byte column chunk repeating over the rows (at most 255 rows and
/// row strides of at most 255 blocks), or row heads and a tail over rows in 255-row steps.
uint64_t scalarOpInstructions(const VecShape& s);

/// A transfer: `fixed + bytes / bytesPerCycle + (bursts - 1) * perBurst`. A burst is one
/// contiguous run of GM bytes (a row, or the whole tile when the rows are back to back); `fixed`
/// is paid once per transfer (pto-isa's TLOAD pays it per slice of a 3-D to 5-D partition).
struct MoveCost {
  double bytesPerCycle = 64;
  double fixed = 24;
  double perBurst = 7;
};

struct CostTable {
  isa::Arch arch;
  double scalarCycles = 1; // one scalar instruction, and the issue of a tile or sync op
  double syncCycles = 1;   // a set_flag or pipe_barrier on its pipe
  double waitLatency = 2;  // from a set_flag to the release of its wait_flag
  double cubeFixed = 6;    // TMATMUL: fixed + c * ceil(M/16) * ceil(K/(32/sizeof A)) * ceil(N/16)
  MoveCost gmToVec, gmToMat, vecToGm, matToGm, accToGm, accToMat, matToLeft, matToRight, matToOther,
      vecToVec;
  // The chip: blocks up to `cores` run at the same time and share `chipGmBytesPerCycle` of GM (L2)
  // bandwidth; a GM transfer streams at the smaller of its own rate and its block's share
  // (docs/npu-model.md, "Cores that share the chip").
  uint32_t cores = 24;
  double chipGmBytesPerCycle = 2300;
  // A launch's start-up, outside the kernel's own cycles (docs/npu-model.md, "Start-up"): what a
  // device-side measurement of a whole kernel adds to them, and the clock that turns cycles into
  // time. The summary reports both; the simulated cycles, the trace and --profile exclude it.
  double startupCycles = 19600;
  double clockGHz = 1.85;
};

const CostTable& costTable(isa::Arch arch);

/// The pipe of a decoded tile op on `arch` (isa::pipeOf with its operand locations).
isa::Pipe pipeOf(const TileInst& t, isa::Arch arch);

/// Cycles of one execution of `t` with the registers of `c` (dynamic valid shapes, strides).
uint64_t cyclesOf(const TileInst& t, const Core& c, isa::Arch arch);

/// True when the op has a cost of its own: a CostTable.def row (NPU_VEC or NPU_DEFAULT), or the
/// transfer / cube model of cyclesOf. tests/unit/OpRecordTest.cpp requires it of every op.
bool hasCostEntry(isa::OpId op);

} // namespace pto::rt::npu
