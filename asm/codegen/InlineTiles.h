// Calls that pass or return tiles, inlined before lowering (docs/abi.md, "Tiles across calls").
#pragma once

#include "asm/ir/IR.h"
#include "support/Diagnostics.h"

#include <memory>
#include <optional>
#include <vector>

namespace pto::as::lower {

/// True when a function takes or returns a tile.
bool takesTiles(const ir::Function& f);

/// A tile crossing a call that stays a call (a public function's parameter or result, a
/// declaration's): its byte address in its buffer, then each valid dimension its type leaves
/// dynamic (`v_row=?`, then `v_col=?`), each an index (docs/abi.md). The number of valid
/// dimensions passed for type t, and the registers a value of type t takes.
unsigned tileAbiDims(const ir::Type& t);
unsigned abiSlots(const ir::Type& t);

/// The module's functions in order, each with its calls to functions that take or return tiles
/// replaced by the callee's body; private functions that take tiles are left out (every call to
/// them is inlined), public ones take each tile as its address (and its dynamic valid
/// dimensions) in parameters. Functions without such calls are the module's own; the others are
/// copies kept in `owned`.
struct InlinedModule {
  std::vector<const ir::Function*> functions;
  std::vector<std::unique_ptr<ir::Function>> owned;
  bool ok = true; // false after a reported error (the functions are still there to lower)
};

/// Inlines every call to a function of the module that takes or returns tiles (a call to a
/// declaration stays a call); a callee that returns from inside a region is a located error.
InlinedModule inlineTileCalls(const ir::Module& m, DiagEngine& diags);

} // namespace pto::as::lower
