// The npu model's cost of one tile op: which pipe runs it and for how many cycles
// (docs/npu-model.md, "Cost"). The numbers come from the anchors of
// ../shared/reference/pto-isa-semantics.md 7.2 (A2/A3 = 910B3 calibrations) and live in one table
// per arch (runtime/npu/CostTable.def).
#pragma once

#include "runtime/Program.h"

#include <cstdint>

namespace pto::rt::npu {

/// How a vector op is charged: `head + slope * repeats + tail` cycles, one repeat = 256 bytes of
/// the widest operand. Whole-instruction costs of an isolated op on the NPU include head and tail.
struct VecCost {
  double slope = 2;
  double fixed = 6; // head + tail
};

/// A transfer: `fixed + bytes / bytesPerCycle + (bursts - 1) * perBurst`. A burst is one
/// contiguous run of GM bytes (a row, or the whole tile when the rows are back to back).
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
