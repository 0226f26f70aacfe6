// libFuzzer target: arbitrary bytes as an object file, as `pto-objdump -d -h -t -r --tiles --raw
// --gm-access` reads it. obj::readObject must never crash, hang or leak; when it accepts the
// bytes, every listing must be safe, and the -d listing must assemble again. When the listing
// carries no warning (the object is in canonical form), the reassembled object must equal the one
// read, GM access records (.gmaccess directives) included.
#include "asm/mc/BlockAsm.h"
#include "asm/mc/Disasm.h"
#include "obj/GmAccess.h"
#include "obj/Image.h"
#include "obj/Object.h"

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::ostream nullOut(nullptr);  // badbit set: diagnostics are formatted, then dropped
  (void)pto::obj::readImage(data, size); // the same bytes as a linked image (pto-run, pto-objdump)
  auto r = pto::obj::readObject(data, size);
  auto* obj = std::get_if<pto::obj::ObjectFile>(&r);
  if (!obj) return 0;
  pto::as::DisasmOptions all;
  all.disassemble = all.source = all.headers = all.symbols = all.relocs = all.tiles = all.raw =
      true;
  all.fileName = "fuzz.o";
  all.readSource = [](const std::string&) -> std::optional<std::string> {
    return std::string("line one\nline two\n");
  };
  (void)pto::as::disassemble(*obj, all, std::span<const uint8_t>(data, size));
  (void)pto::obj::gmAccessListing(*obj); // --gm-access
  pto::as::DisasmOptions d;
  d.disassemble = true;
  std::string listing = pto::as::blockListing(*obj, d);
  pto::as::SourceFile src("fuzz.s", listing);
  pto::as::DiagEngine diags(src, nullOut);
  auto back = pto::as::assembleBlockText(src, diags);
  if (listing.find("; warning:") == std::string::npos && (!back || !(*back == *obj)))
    __builtin_trap();
  return 0;
}
