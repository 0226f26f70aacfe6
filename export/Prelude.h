// The fixed C++ text of the export, kept as real files in export/prelude/ and embedded at build
// time, byte for byte (export/EmbedText.cmake, export/CMakeLists.txt). The export prints them
// verbatim; they are not clang-formatted, since every byte is part of the exported text.
#pragma once

#include <string>
#include <string_view>

namespace pto::cppexport::detail {

/// namespace pto_export: the scalar semantics of the core for the device code, the very text of
/// isa/ScalarSemantics.inc (integer ALU, scalar floating point), then the stack and GM loads and
/// stores (prelude/device-helpers.hpp.in).
std::string deviceHelpers();
/// namespace pto_export_host: what the launch wrappers need in the host pass, where the device
/// helpers are absent (prelude/host-helpers.hpp.in).
std::string_view hostHelpers();
/// The host launcher's argument record, defined before the kernel table that uses it
/// (prelude/host-arg.cpp.in).
std::string_view hostArg();
/// The host launcher's fixed code after the kernel table: .npy and scalar parsing, the ACL
/// calls, main (prelude/host-main.cpp.in).
std::string_view hostMain();

} // namespace pto::cppexport::detail
