// The parser of pto-as: text (any accepted form) -> Kernel IR. Verification is asm/ir/Verifier.h.
#pragma once

#include "asm/ir/IR.h"
#include "support/Diagnostics.h"

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

} // namespace pto::as
