// Prints docs/ops.md from the op table, so the documentation cannot drift from isa/Ops.def.
// A test compares its output with the committed file.
#include "isa/Describe.h"
#include "isa/Isa.h"

#include <iostream>

using namespace pto::isa;

namespace {

std::string operands(const OpInfo& op, bool outputs) {
  std::string s;
  for (const Role& r : op.roles) {
    if (r.isOutput != outputs) continue;
    if (!s.empty()) s += ", ";
    s += std::string(r.name) + std::string(roleKindSuffix(r.kind));
    if (r.optional) s += "?";
    if (r.variadic) s += "...";
  }
  return s;
}

std::string flags(uint32_t f) {
  std::string s;
  for (std::string_view text : flagTexts(f))
    s += (s.empty() ? "" : ", ") + std::string(text);
  return s;
}

} // namespace

int main() {
  std::cout
      << "# PTO tile operations\n\n"
         "Generated from `isa/Ops.def` by `pto-isa-tables` (a test keeps this file in sync).\n"
         "Operands are listed in DPS order: `pto.OP ins(inputs) outs(outputs)`; in the PTO-AS\n"
         "assembly form the outputs come first. `?` marks an optional operand.\n\n"
         "| op | pipe | engine | ins | outs | dtypes A2/A3 | dtypes A5 | type rule | constraints "
         "|\n"
         "|---|---|---|---|---|---|---|---|---|\n";
  for (const OpInfo& op : allOps()) {
    std::cout << "| `pto." << op.mnemonic << "` | " << spelling(op.pipe) << " | "
              << engineName(op.engine) << " | " << operands(op, false) << " | "
              << operands(op, true) << " | " << op.a2a3Types.describe() << " | "
              << op.a5Types.describe() << " | " << ruleText(op.rule) << " | " << flags(op.flags)
              << " |\n";
  }
  std::cout
      << "\n## TCVT conversions\n\n| src | A2/A3 destinations | A5 destinations |\n|---|---|---|\n";
  for (unsigned s = 0; s < kNumDTypes; ++s) {
    std::string a, b;
    for (unsigned d = 0; d < kNumDTypes; ++d) {
      DType src = static_cast<DType>(s), dst = static_cast<DType>(d);
      if (cvtSupported(Arch::A2A3, src, dst))
        a += (a.empty() ? "" : ", ") + std::string(spelling(dst));
      if (cvtSupported(Arch::A5, src, dst))
        b += (b.empty() ? "" : ", ") + std::string(spelling(dst));
    }
    if (a.empty() && b.empty()) continue;
    std::cout << "| " << spelling(static_cast<DType>(s)) << " | " << (a.empty() ? "—" : a) << " | "
              << (b.empty() ? "—" : b) << " |\n";
  }
  std::cout << "\n## Buffers\n\n| loc | A2/A3 bytes | A5 bytes | address alignment "
               "|\n|---|---|---|---|\n";
  for (auto name : spellingsLoc()) {
    Loc l = *parseLoc(name);
    std::cout << "| " << name << " | " << buffer(Arch::A2A3, l).capacity << " | "
              << buffer(Arch::A5, l).capacity << " | " << buffer(Arch::A2A3, l).alignment << " |\n";
  }
  return 0;
}
