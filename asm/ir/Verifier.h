// The verifier of the Kernel IR: every function against the chosen arch's rules (isa/ op table),
// and the placement-mode rules PTOAS applies. Every error is reported, located.
#pragma once

#include "asm/ir/IR.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <string_view>

namespace pto::as {

/// The arch to verify for: the --arch flag if given, else the module's pto.target_arch, else A2/A3.
isa::Arch resolveArch(const ir::Module& m, std::optional<isa::Arch> flag);

/// Checks every function against the arch's rules (isa/ op table). Reports all errors found.
/// Safe on a module the builder reported errors for: ops with unresolved operands are skipped.
void verifyModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags);

namespace verify {
/// The verifier's rule for the value of a tile op's attribute (a row of isa/OpAttrs.def): the
/// error after the op's name ("rounds must be 7 or 10, found 8"), or nullopt when the value is
/// valid, the attribute absent or without a rule. The Verifier reports it at the op.
std::optional<std::string> attributeValueError(const ir::Op& op, isa::OpAttrId id);
} // namespace verify

/// PTOAS's --pto-level=level3 (manual memory): every pto.alloc_tile names its address.
void verifyManualPlacement(const ir::Module& m, DiagEngine& diags);
/// pto.tassign as PTOAS accepts it: not with --enable-insert-sync, and with a run-time address
/// only at --pto-level=level3.
void verifyTAssignMode(const ir::Module& m, bool level3, bool insertSync, DiagEngine& diags);

} // namespace pto::as
