#include "tools/ToolArgs.h"

#include "isa/Numerics.h"
#include "runtime/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pto::rt {

/// The default range: [-1, 1) for floats, [-8, 8) for signed and [0, 16) for unsigned integers.
Range defaultRange(isa::DType t) {
  if (isa::isFloat(t)) return {-1, 1};
  if (isa::info(t).kind == isa::DTypeKind::SInt) return {-8, 8};
  return {0, 16};
}

/// Uniform values in `r` (floats rounded to the type; integers clamped to the type's range).
/// `x` is a zero tensor of the type and shape (made by makeTensor: size-checked).
Tensor randomTensor(Tensor x, std::mt19937_64& rng, std::optional<Range> range) {
  const isa::DType t = x.dtype;
  const Range r = range.value_or(defaultRange(t));
  std::uniform_real_distribution<double> fd(r.lo, r.hi);
  const int64_t ilo = static_cast<int64_t>(std::ceil(r.lo)),
                ihi = std::max(ilo, static_cast<int64_t>(std::ceil(r.hi)) - 1);
  std::uniform_int_distribution<int64_t> sd(ilo, ihi),
      ud(std::max<int64_t>(ilo, 0), std::max<int64_t>(ihi, 0));
  const int64_t n = isa::bitWidth(t) == 4 ? static_cast<int64_t>(x.data.size()) * 2
                                          : x.numel(); // packed: every nibble
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits;
    if (isa::isFloat(t))
      bits = isa::encodeFromDouble(t, fd(rng), isa::RoundMode::CAST_RINT, isa::SatMode::ON);
    else if (isa::info(t).kind == isa::DTypeKind::SInt)
      bits = static_cast<uint64_t>(sd(rng));
    else if (t == isa::DType::I1)
      bits = static_cast<uint64_t>(ud(rng) & 1);
    else
      bits = static_cast<uint64_t>(ud(rng));
    if (isa::bitWidth(t) < 64) bits &= (uint64_t{1} << isa::bitWidth(t)) - 1;
    x.setBits(i, bits);
  }
  return x;
}

/// "SHAPE:DTYPE"
std::optional<std::pair<std::vector<int64_t>, isa::DType>> shapeAndType(std::string_view s) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto shape = parseShape(s.substr(0, colon));
  auto t = isa::parseDType(s.substr(colon + 1));
  if (!shape || !t) return std::nullopt;
  return std::pair{*shape, *t};
}

std::optional<RandomSpec> randomSpec(const std::string& s) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t c = s.find(':', start);
    parts.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() != 2 && parts.size() != 4) return std::nullopt;
  auto st = shapeAndType(parts[0] + ":" + parts[1]);
  if (!st) return std::nullopt;
  RandomSpec r{st->first, st->second, std::nullopt};
  if (parts.size() == 4) {
    char *e1 = nullptr, *e2 = nullptr;
    double lo = strtod(parts[2].c_str(), &e1), hi = strtod(parts[3].c_str(), &e2);
    if (parts[2].empty() || parts[3].empty() || *e1 || *e2 || !(lo < hi)) return std::nullopt;
    r.range = Range{lo, hi};
  }
  return r;
}

void printTensor(const std::string& name, const Tensor& x) {
  printf("%%%s: %s[", name.c_str(), std::string(isa::spelling(x.dtype)).c_str());
  for (size_t i = 0; i < x.shape.size(); ++i)
    printf("%s%lld", i ? "x" : "", static_cast<long long>(x.shape[i]));
  printf("] =");
  const int64_t n = x.numel();
  const int64_t perRow = x.shape.empty() ? 1 : x.shape.back();
  for (int64_t i = 0; i < n; ++i) {
    if (perRow > 0 && i % perRow == 0) printf("\n ");
    printf(" %s", elementText(x.dtype, x.bitsAt(i)).c_str());
  }
  printf("\n");
}

Status splitNamedSpecs(const std::vector<std::string>& specs, const char* flag, NamedSpecs& out) {
  for (const std::string& spec : specs) {
    const size_t skip = spec.starts_with('%') ? 1 : 0;
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq <= skip)
      return Error{"error: " + std::string(flag) + " needs NAME=VALUE, not '" + spec + "'"};
    out.push_back({spec.substr(skip, eq - skip), spec.substr(eq + 1)});
  }
  return std::nullopt;
}

std::vector<std::string> inputFilesOf(const std::string& kernelFile, const NamedSpecs& args) {
  std::vector<std::string> files = {kernelFile};
  for (const auto& [name, spec] : args)
    if (spec.ends_with(".npy") || spec.find(':') != std::string::npos)
      files.push_back(spec.substr(0, spec.find(':')));
  return files;
}

} // namespace pto::rt
