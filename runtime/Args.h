// The arguments of a launch that the host makes (pto-run --auto-args, --random, --list; the
// Python module's Image.run and Image.params): random and zero buffers, every parameter not
// given, and a kernel's parameters described with their extents. One definition, so that
// `pto-run --auto-args --seed S` and `Image.run(seed=S)` make the same values.
#pragma once

#include "runtime/Runtime.h"
#include "support/Numbers.h"

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pto::rt {

/// A random range: floats uniform in [lo, hi), integers uniform in [lo, hi) (hi exclusive).
struct Range {
  double lo, hi;
};

/// The default range: [-1, 1) for floats, [-8, 8) for signed and [0, 16) for unsigned integers.
Range defaultRange(isa::DType t);

/// The integers an integer type holds, [min, max] (i1: [0, 1]).
std::pair<obj::WideInt, obj::WideInt> integerRange(isa::DType t);

/// ceil(d) for a finite d of magnitude at most 2^64, exactly (every such double converts to a
/// 128-bit integer).
obj::WideInt ceilWide(double d);

/// Uniform values in `range` (floats rounded to the type; integers clamped to the type's range)
/// into `x`, a zero tensor of the type and shape.
Tensor randomTensor(Tensor x, std::mt19937_64& rng, std::optional<Range> range = {});

/// The parameters' values the caller gave: buffers by name, the scalars bound (their names, and
/// the integer ones' values, which pointer extents are computed from).
struct GivenArgs {
  std::map<std::string, Tensor> buffers;
  std::set<std::string> scalars;
  std::vector<std::pair<std::string, int64_t>> intScalars;
};

/// How parameters not given are made: not at all, random values (integer buffers whose values
/// are used as indices get zeros), or zeros. Scalars get 0 either way.
enum class AutoArgs { None, Random, Zeros };

/// A parameter that createMissingArgs could not make: a scalar (with AutoArgs::None) or a
/// pointer whose extent is unknown (`why` says so) or not asked for (`why` is its size).
struct MissingParam {
  const Module::ParamInfo* param;
  std::string why;
};

/// Makes the parameters of `kernel` that `given` lacks, as pto-run --auto-args does: scalars 0
/// (bound through `launch`), tensor views of their static shape, pointers a 1-D buffer of the
/// extent the linker recorded (docs/runtime.md, "Sizing buffers"). Buffers go into
/// `given.buffers` (not bound). Returns what could not be made; an error for a buffer too large.
Result<std::vector<MissingParam>> createMissingArgs(const Module& mod, Launch& launch,
                                                    std::string_view kernel, AutoArgs mode,
                                                    std::mt19937_64& rng, GivenArgs& given);

/// "error: kernel @K has no parameter %N (parameters: %a %b)".
Error noParameter(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                  const std::string& name);

/// A parameter's type as pto-run --list shows it: ptr<f32>, index, f32, tensor_view<4x8xf16>.
std::string paramTypeText(const Module::ParamInfo& p);

/// One parameter of an entry kernel with its extent, as pto-run --list shows it.
struct ParamDescription {
  const Module::ParamInfo* param;
  std::string type;         // paramTypeText
  std::string extent;       // "extent 256 elements", "extent unknown", "scalar", ...
  std::string extentExpr;   // pointers: the recorded extent ("" = unknown); views: the count
  bool indexValues = false; // pointers whose values are used as indices or offsets
};
std::vector<ParamDescription> describeParams(const Module& mod, std::string_view kernel);

} // namespace pto::rt
