// The pipe that executes each tile op: the op table's default pipe (isa/Ops.def) refined by the
// locations of the op's operands (reference 4.1, 4.5), and which pipes need a pipe_barrier
// between two dependent ops of their own. One place for these facts: the Kernel IR (asm/ir/IR.cpp)
// and the linker's synchronisation analysis (link/Sync.cpp) both ask here.
#pragma once

#include "isa/Isa.h"

#include <optional>
#include <string>

namespace pto::isa {

/// The pipe of `op` whose main source tile is in `src` and whose destination tile is in `dst`
/// (either unknown: std::nullopt). TSTORE from acc runs on FIX, otherwise MTE3; TMOV/TEXTRACT
/// from mat to left/right/bias/scaling on MTE1, from acc (or vec to mat) on FIX, otherwise V;
/// TINSERT on FIX (A2/A3), MTE3 into mat or V otherwise (A5); TSCATTER on S (A2/A3) or V (A5).
/// Every other op runs on its table pipe.
Pipe pipeOf(OpId op, std::optional<Loc> src, std::optional<Loc> dst, Arch arch);

/// Whether TEXTRACT or TINSERT moves a window from `src` to `dst` on `arch` (pto-isa's
/// TExtract/TInsert per arch; PTOAS's verifier agrees). TEXTRACT: mat->left/right (A5 also
/// mat->scaling, vec->mat, vec->vec); TINSERT: acc->mat (A5 also vec->mat, vec->vec).
bool windowPairSupported(OpId op, Loc src, Loc dst, Arch arch);
/// Those pairs as text for diagnostics ("mat->left or mat->right").
std::string windowPairs(OpId op, Arch arch);

/// Whether two dependent ops on pipe `p` need a pipe_barrier(p) between them on `arch`: the
/// scalar pipe is in order, and A5 orders PIPE_V in hardware (PTOAS erases those barriers).
bool needsIntraPipeBarrier(Arch arch, Pipe p);

} // namespace pto::isa
