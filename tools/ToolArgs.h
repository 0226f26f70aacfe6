// Command-line helpers the runtime's tools share (pto-run on images, and on sources through
// ref/RunSource): --random value ranges and specs, SHAPE:DTYPE parsing, printing a tensor. One
// definition, so that `pto-run img` and `pto-run src.pto` give the same values for a seed.
#pragma once

#include "runtime/Runtime.h"

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pto::rt {

/// A --random range: floats uniform in [lo, hi), integers uniform in [lo, hi) (hi exclusive).
struct Range {
  double lo, hi;
};

/// The default range: [-1, 1) for floats, [-8, 8) for signed and [0, 16) for unsigned integers.
Range defaultRange(isa::DType t);

/// Uniform values in `range` (floats rounded to the type; integers clamped to the type's range)
/// into `x`, a zero tensor of the type and shape.
Tensor randomTensor(Tensor x, std::mt19937_64& rng, std::optional<Range> range = {});

/// "SHAPE:DTYPE"
std::optional<std::pair<std::vector<int64_t>, isa::DType>> shapeAndType(std::string_view s);

/// "SHAPE:DTYPE[:LO:HI]" (--random)
struct RandomSpec {
  std::vector<int64_t> shape;
  isa::DType dtype;
  std::optional<Range> range;
};
std::optional<RandomSpec> randomSpec(const std::string& s);

/// NAME=VALUE option values (--arg, --random, --zeros, --out), the name with or without the
/// parameter's '%'.
using NamedSpecs = std::vector<std::pair<std::string, std::string>>;
/// Appends each of `specs` to `out`; a spec without a name or '=' is an error naming `flag`.
Status splitNamedSpecs(const std::vector<std::string>& specs, const char* flag, NamedSpecs& out);

/// The files an output must never replace: the kernel's own file (image or source) and every
/// file an --arg reads (FILE.npy or FILE:SHAPE:DTYPE).
std::vector<std::string> inputFilesOf(const std::string& kernelFile, const NamedSpecs& args);

/// `%name: dtype[shape] =` and the values, a row per line (as --print shows them).
void printTensor(const std::string& name, const Tensor& x);

} // namespace pto::rt
