// MLIR debug locations: the text of every `loc(...)` the builder recorded, read and resolved once
// the whole file is parsed (aliases may be defined after the module that uses them).
#pragma once

#include "asm/ir/IR.h"
#include "support/Diagnostics.h"

namespace pto::as {

/// Reads every location and alias of the module and fills in what each resolves to
/// (ir::FrontendLoc::pos and its callers). A malformed location, an undefined, redefined or
/// cyclic alias is reported at its place in the .pto; that location then resolves to none.
/// Linear in the total text of the locations.
void resolveLocations(ir::Module& m, DiagEngine& diags);

/// Answers DiagEngine's questions about a module's .pto lines: the debug location of the op,
/// argument, function or module written on that line (the first one on it).
class ModuleLocator final : public FrontendLocator {
public:
  explicit ModuleLocator(const ir::Module& m);
  std::vector<std::string> placesAt(SrcLoc loc) const override;

private:
  const ir::Module& module_;
  std::vector<uint32_t> byLine_; // .pto line -> index into module_.frontLocs (0: none)
};

} // namespace pto::as
