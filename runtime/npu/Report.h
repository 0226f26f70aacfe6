// Reports of the npu backend (docs/npu-model.md, "Output"): the cycle summary, the profile of
// the costliest ops with their source lines, and a Chrome trace-event file for Perfetto.
#pragma once

#include "runtime/Runtime.h"

#include <string>

namespace pto::rt::npu {

/// Total cycles and, per pipe, busy cycles, utilisation and op count.
std::string summary(const Module& mod, const RunStats& stats);

/// The `top` source ops with the most cycles (all blocks together).
std::string profile(const Module& mod, const RunStats& stats, size_t top);

/// Chrome trace-event JSON: one process per block, one track per pipe, one slice per op with its
/// source line, flow arrows from each set_flag to the wait_flag it released. 1 us = 1 cycle.
std::string chromeTrace(const Module& mod, const RunStats& stats);

} // namespace pto::rt::npu
