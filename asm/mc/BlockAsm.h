// The block assembler: canonical block assembly (what `pto-objdump -d` prints, with or without
// its address and hex columns, or written by hand) back to an object. The directive format is
// docs/object-format.md, section "Block assembly listing".
#pragma once

#include "obj/Object.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string_view>

namespace pto::as {

/// True when the first significant line (blank lines and `;` / `//` comment lines skipped) is
/// the pto-objdump header, a directive (`.function`, `.arch`, ...), an address line (`0:`), a
/// `<name>:` label, or a block/scalar instruction (BSTART..., B.DIM ..., BSTOP, addi ...).
bool looksLikeBlockAssembly(std::string_view text);

/// Assembles a listing into an object. Errors (with line, column and caret) go to `diags`;
/// the result is empty when there was any error. Never crashes on bad input.
std::optional<obj::ObjectFile> assembleBlockText(const SourceFile& src, DiagEngine& diags);

} // namespace pto::as
