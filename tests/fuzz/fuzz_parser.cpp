// libFuzzer target: arbitrary bytes as .pto source text through the whole front end, as
// `pto-as --arch X` runs it, for both arches. parseModule must never crash, hang or leak on any
// input; when it reports no error the IR is complete, so verifyModule must be safe on it too.
#include "asm/Frontend.h"

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::ostream nullOut(nullptr); // badbit set: diagnostics are formatted, then dropped
  pto::as::SourceFile src("fuzz.pto", std::string(reinterpret_cast<const char*>(data), size));
  for (pto::isa::Arch arch : {pto::isa::Arch::A2A3, pto::isa::Arch::A5}) {
    pto::as::DiagEngine diags(src, nullOut);
    std::unique_ptr<pto::ir::Module> m = pto::as::parseModule(src, diags, arch);
    if (!m || diags.errors() != 0) continue;
    pto::as::verifyModule(*m, pto::as::resolveArch(*m, arch), diags);
  }
  return 0;
}
