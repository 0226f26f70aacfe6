// Deterministic generator of large, valid MLIR-style .pto modules for the front-end benchmark.
// The text uses the syntax real frontends emit (func.func, arith, scf.for/if with iter_args,
// pto.section.vector, make_tensor_view/partition_view, keyed !pto.tile_buf types, DPS tile ops,
// set_flag/wait_flag) and only ops and dtypes that verify on arch a2a3.
#pragma once

#include <cstddef>
#include <string>

namespace pto::bench {

/// Returns the text of a module with `numFunctions` kernels, each holding `loopsPerFunction`
/// top-level tile loops (each with a nested scf.for and an scf.if). The same arguments always
/// give the same text. generateLargeModule(200, 10, 1) is over 100k lines.
std::string generateLargeModule(unsigned numFunctions, unsigned loopsPerFunction, unsigned seed);

/// Number of '\n'-terminated lines in text (a final unterminated line counts as one).
size_t countLines(const std::string& text);

} // namespace pto::bench
