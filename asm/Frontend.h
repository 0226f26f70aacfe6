// The front end of pto-as: text (any accepted form) -> Kernel IR -> verified IR.
#pragma once

#include "asm/Diagnostics.h"
#include "asm/IR.h"

#include <memory>
#include <optional>

namespace pto::as {

/// Parses source text into a Kernel IR module. Syntax errors and semantic errors found while
/// building the IR (undefined values, malformed types, unknown ops...) are reported to diags;
/// on any error the result may be incomplete and must not be lowered further.
/// `arch` is the --arch flag when given: a few op pipes depend on it (see ir::pipeOf).
std::unique_ptr<ir::Module> parseModule(const SourceFile& src, DiagEngine& diags,
                                        std::optional<isa::Arch> arch = std::nullopt);

/// For a process that parses on one thread only (pto-as): parsing then skips the locks that keep
/// ANTLR's shared prediction cache safe for parsers on several threads. Call before the first
/// parse; a process that parses on several threads must never call it.
void assumeOneParserThread();

/// The arch to verify for: the --arch flag if given, else the module's pto.target_arch, else A2/A3.
isa::Arch resolveArch(const ir::Module& m, std::optional<isa::Arch> flag);

/// Checks every function against the arch's rules (isa/ op table). Reports all errors found.
/// Safe on a module the builder reported errors for: ops with unresolved operands are skipped.
void verifyModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags);

/// PTOAS's --pto-level=level3 (manual memory): every pto.alloc_tile names its address.
void verifyManualPlacement(const ir::Module& m, DiagEngine& diags);
/// pto.tassign as PTOAS accepts it: not with --enable-insert-sync, and with a run-time address
/// only at --pto-level=level3.
void verifyTAssignMode(const ir::Module& m, bool level3, bool insertSync, DiagEngine& diags);

} // namespace pto::as
