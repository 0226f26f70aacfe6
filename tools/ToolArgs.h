// Command-line helpers the runtime's tools share (pto-run on images, and on sources through
// ref/RunSource): --random specs (the values: runtime/Args.h), SHAPE:DTYPE parsing, printing a
// tensor. One definition, so that `pto-run img` and `pto-run src.pto` give the same values for a
// seed.
#pragma once

#include "runtime/Args.h"
#include "runtime/Runtime.h"

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pto::rt {

/// "SHAPE:DTYPE"
std::optional<std::pair<std::vector<int64_t>, isa::DType>> shapeAndType(std::string_view s);

/// "SHAPE:DTYPE[:LO:HI]" (--random). LO < HI are finite numbers within the type's range: for a
/// float type its finite range, for an integer type [min, max + 1] with at least one integer in
/// [LO, HI). An error says which part is wrong.
struct RandomSpec {
  std::vector<int64_t> shape;
  isa::DType dtype;
  std::optional<Range> range;
};
Result<RandomSpec> randomSpec(const std::string& s);

/// The bits an --arg VALUE gives the scalar parameter `p` (what bindScalarBits takes): an
/// integer type or index takes an integer (support/Numbers.h parseIntegerIn) within its range, a
/// float type a number that stays finite in it ("inf" and "nan" spelled out). Anything else is an
/// error naming the parameter, its type and the range.
Result<uint64_t> scalarArgBits(const Module::ParamInfo& p, const std::string& text);

/// NAME=VALUE option values (--arg, --random, --zeros, --out), the name with or without the
/// parameter's '%'.
using NamedSpecs = std::vector<std::pair<std::string, std::string>>;
/// Appends each of `specs` to `out`; a spec without a name or '=' is an error naming `flag`.
Status splitNamedSpecs(const std::vector<std::string>& specs, const char* flag, NamedSpecs& out);

/// The files an output must never replace: the kernel's own file (image or source) and every
/// file an --arg reads (FILE.npy or FILE:SHAPE:DTYPE).
std::vector<std::string> inputFilesOf(const std::string& kernelFile, const NamedSpecs& args);

/// Reads --random, --zeros and --arg for the kernel `kernel` with `params`: buffers into
/// `given.buffers`, scalars through `bindBits`. The first error, naming the option and the
/// parameter, is returned (prefixed "error: ").
Status readGivenArgs(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                     const NamedSpecs& args, const NamedSpecs& randoms, const NamedSpecs& zeros,
                     std::mt19937_64& rng,
                     const std::function<Status(const std::string&, uint64_t)>& bindBits,
                     GivenArgs& given);

/// The files a run writes, checked before it starts: every path not empty, no two outputs on
/// the same file (the trace, each --out, each --out-dir file), each --out naming a buffer
/// parameter, and --out-dir names safe (support::safePathIn; the directory is created here).
struct OutputPlan {
  std::vector<std::pair<std::string, std::string>> npy; // parameter, file
  std::string trace;
};
Status planOutputs(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                   const NamedSpecs& outs, const std::optional<std::string>& outDir,
                   const std::optional<std::string>& trace, OutputPlan& plan);

/// Each --print NAME names a buffer parameter.
Status checkPrints(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                   const std::vector<std::string>& prints);

/// `%name: dtype[shape] =` and the values, a row per line (as --print shows them).
void printTensor(const std::string& name, const Tensor& x);

} // namespace pto::rt
