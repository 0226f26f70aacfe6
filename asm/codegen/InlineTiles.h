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

/// Inlines every call to a function that takes or returns tiles; a call to a declaration that
/// takes tiles is a located error (its body is needed), and so is a callee that returns from
/// inside a region.
InlinedModule inlineTileCalls(const ir::Module& m, DiagEngine& diags);

} // namespace pto::as::lower
