// The embedded prelude files (export/Prelude.h). The headers included here are generated in the
// build tree from export/prelude/ by export/EmbedText.cmake.
#include "export/Prelude.h"

namespace pto::cppexport::detail {

namespace {

#include "embedded/device-helpers.inc"
#include "embedded/host-arg.inc"
#include "embedded/host-helpers.inc"
#include "embedded/host-main.inc"
#include "embedded/scalar-semantics.inc"

std::string_view text(const unsigned char* bytes, size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

} // namespace

std::string deviceHelpers() {
  std::string out = "namespace pto_export {\n#define PTO_SCALAR_FN AICORE inline\n";
  out += text(kScalarSemantics, sizeof kScalarSemantics);
  out += "#undef PTO_SCALAR_FN\n} // namespace pto_export\n";
  out += text(kDeviceHelpers, sizeof kDeviceHelpers);
  return out;
}
std::string_view hostHelpers() {
  return text(kHostHelpers, sizeof kHostHelpers);
}
std::string_view hostArg() {
  return text(kHostArg, sizeof kHostArg);
}
std::string_view hostMain() {
  return text(kHostMain, sizeof kHostMain);
}

} // namespace pto::cppexport::detail
