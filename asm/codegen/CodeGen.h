// Lowering of verified Kernel IR to a PTO object: per function a tile descriptor table, one
// block of command words per tile op, scalar code in scalar blocks with a linear-scan register
// allocator over the 24 GPRs (spilling to a stack frame), structured control flow as
// BSTART COND/DIRECT blocks, sync ops in the extension space, relocations and a line table.
// The ABI and block conventions are in docs/abi.md.
#pragma once

#include "asm/ir/IR.h"
#include "obj/Object.h"
#include "support/Diagnostics.h"

#include <optional>

namespace pto::as {

/// Lowers every function of the module. Constructs the code generator does not support are
/// reported with their source location; the result is then empty.
std::optional<obj::ObjectFile> lowerModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags);

/// lowerModule that frees each function's ops as they are lowered (pto-as: the IR and the
/// machine code built from it were both whole at its peak, #34 item 5). The functions keep
/// their signatures and values but their bodies are empty afterwards: what needs the bodies
/// (collectExtents, RecordExtents.h) is computed first.
std::optional<obj::ObjectFile> lowerModuleReleasing(ir::Module& m, isa::Arch arch,
                                                    DiagEngine& diags);

} // namespace pto::as
