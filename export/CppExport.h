// Linked image -> pto-isa C++ (docs/cpp-export.md): one translation unit per image that calls
// the pto-isa intrinsics with the tile addresses and event ids the linker planned, for the CANN
// compiler (bisheng) or pto-isa's CPU simulator (-D__CPU_SIM); and a host-side ACL launcher.
// The output depends only on the image: exporting the same image twice gives the same text.
#pragma once

#include "isa/Isa.h"
#include "obj/Image.h"

#include <string>
#include <variant>

namespace pto::cppexport {

/// Why an image cannot be exported: names the function, the op and the source line.
struct ExportError {
  std::string message;
};

/// The kernel translation unit: tile declarations, TASSIGN, GlobalTensor views, the tile
/// intrinsics, set_flag/wait_flag/pipe_barrier, scalar code as plain C++, and one
/// `pto_launch_<kernel>` wrapper per exported kernel.
std::variant<std::string, ExportError> exportCpp(const obj::Image& img);

/// The host launcher (ACL runtime): reads .npy inputs and scalar values, allocates device
/// memory, copies in, launches a kernel of the image through its `pto_launch_<kernel>`, copies
/// the outputs back and writes them as .npy.
std::variant<std::string, ExportError> exportCppHost(const obj::Image& img);

/// The pto-isa intrinsic the export calls for `op` ("TADD", "TMATMUL_MX" for the MX accumulate
/// and bias forms, "SetValue" for the Tile member tsetval), or "" when the op has no C++ form.
std::string cppIntrinsic(isa::OpId op);

} // namespace pto::cppexport
