// libFuzzer target: arbitrary bytes as pto-as input, as `pto-as --arch X` reads it, for both
// arches: block assembly goes to the block assembler; everything else through parseModule,
// verifyModule and, when they accept it, the code generator. Nothing may crash, hang or leak.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/mc/BlockAsm.h"
#include "asm/parse/Parser.h"

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::ostream nullOut(nullptr); // badbit set: diagnostics are formatted, then dropped
  pto::as::SourceFile src("fuzz.pto", std::string(reinterpret_cast<const char*>(data), size));
  if (pto::as::looksLikeBlockAssembly(src.text())) {
    pto::as::DiagEngine diags(src, nullOut);
    (void)pto::as::assembleBlockText(src, diags);
    return 0;
  }
  for (pto::isa::Arch arch : {pto::isa::Arch::A2A3, pto::isa::Arch::A5}) {
    pto::as::DiagEngine diags(src, nullOut);
    std::unique_ptr<pto::ir::Module> m = pto::as::parseModule(src, diags, arch);
    if (!m || diags.errors() != 0) continue;
    pto::as::verifyModule(*m, pto::as::resolveArch(*m, arch), diags);
    if (diags.errors() == 0) (void)pto::as::lowerModule(*m, arch, diags);
  }
  return 0;
}
