#include "tools/ToolArgs.h"

#include "isa/Numerics.h"
#include "runtime/Npy.h"
#include "support/Escape.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

namespace pto::rt {

/// "SHAPE:DTYPE"
std::optional<std::pair<std::vector<int64_t>, isa::DType>> shapeAndType(std::string_view s) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto shape = parseShape(s.substr(0, colon));
  auto t = isa::parseDType(s.substr(colon + 1));
  if (!shape || !t) return std::nullopt;
  return std::pair{*shape, *t};
}

/// "the finite range of f16 (-65504 to 65504)" / "the range of i32 (-2147483648 to 2147483647)".
static std::string rangeText(isa::DType t) {
  const std::string ty(isa::spelling(t));
  if (isa::isFloat(t)) {
    // The largest double saturates to the type's largest finite value.
    const uint64_t maxBits = isa::encodeFromDouble(t, std::numeric_limits<double>::max(),
                                                   isa::RoundMode::CAST_RINT, isa::SatMode::ON);
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", isa::decodeToDouble(t, maxBits));
    return "the finite range of " + ty + " (-" + b + " to " + b + ")";
  }
  auto [lo, hi] = integerRange(t);
  return "the range of " + ty + " (" + obj::wideText(lo) + " to " + obj::wideText(hi) + ")";
}

/// Whether a finite `v` stays finite once rounded to the float type `t`.
static bool finiteIn(isa::DType t, double v) {
  return std::isfinite(isa::decodeToDouble(
      t, isa::encodeFromDouble(t, v, isa::RoundMode::CAST_RINT, isa::SatMode::OFF)));
}

Result<RandomSpec> randomSpec(const std::string& s) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t c = s.find(':', start);
    parts.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  const Error syntax{"expected SHAPE:DTYPE or SHAPE:DTYPE:LO:HI with LO < HI, e.g. 64x64:f32 or "
                     "64:i32:0:64"};
  if (parts.size() != 2 && parts.size() != 4) return syntax;
  auto st = shapeAndType(parts[0] + ":" + parts[1]);
  if (!st) return syntax;
  RandomSpec r{st->first, st->second, std::nullopt};
  if (parts.size() == 2) return r;
  auto lo = obj::parseDouble(parts[2]), hi = obj::parseDouble(parts[3]);
  if (!lo || !hi || !(*lo < *hi)) return syntax;
  const isa::DType t = r.dtype;
  const std::string range = "[" + parts[2] + ", " + parts[3] + ")";
  if (!std::isfinite(*lo) || !std::isfinite(*hi))
    return Error{"the range " + range + " is not finite"};
  if (isa::isFloat(t)) {
    if (!finiteIn(t, *lo) || !finiteIn(t, *hi))
      return Error{"the range " + range + " is outside " + rangeText(t)};
    if (!std::isfinite(*hi - *lo))
      return Error{"the range " + range + " is wider than the largest double"};
  } else {
    auto [tmin, tmax] = integerRange(t);
    const double limit = 18446744073709551616.0; // 2^64: beyond every integer type
    if (std::fabs(*lo) > limit || std::fabs(*hi) > limit || ceilWide(*lo) < tmin ||
        ceilWide(*hi) - 1 > tmax)
      return Error{"the range " + range + " is outside " + rangeText(t)};
    if (ceilWide(*lo) > ceilWide(*hi) - 1) return Error{"the range " + range + " holds no integer"};
  }
  r.range = Range{*lo, *hi};
  return r;
}

Result<uint64_t> scalarArgBits(const Module::ParamInfo& p, const std::string& text) {
  using Kind = Module::ParamInfo::Kind;
  const isa::DType t = p.kind == Kind::Index ? isa::DType::I64 : p.dtype;
  const std::string what = "--arg " + p.name + "=" + text + ": ";
  if (p.kind == Kind::Scalar && isa::isFloat(t)) {
    auto d = obj::parseDouble(text);
    if (!d)
      return Error{what + "not a number (parameter %" + p.name + " is " +
                   std::string(isa::spelling(t)) + ")"};
    if (std::isfinite(*d) && !finiteIn(t, *d))
      return Error{what + "out of " + rangeText(t) + " (parameter %" + p.name + ")"};
    return isa::encodeFromDouble(t, *d, isa::RoundMode::CAST_RINT, isa::SatMode::OFF);
  }
  auto [lo, hi] = integerRange(t);
  auto v = obj::parseWideInteger(text);
  if (!v)
    return Error{what + "not an integer (parameter %" + p.name + " is " +
                 (p.kind == Kind::Index ? std::string("index") : std::string(isa::spelling(t))) +
                 ")"};
  if (*v < lo || *v > hi)
    return Error{what + "out of " + rangeText(t) + " (parameter %" + p.name + ")"};
  // Two's complement in 64 bits, as bindScalar(int64_t) passes a value.
  return static_cast<uint64_t>(*v);
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

namespace {

using Kind = Module::ParamInfo::Kind;

const Module::ParamInfo* paramOf(const std::vector<Module::ParamInfo>& params,
                                 const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

bool isBuffer(const Module::ParamInfo& p) {
  return p.kind == Kind::Pointer || p.kind == Kind::TensorView;
}

/// An --arg buffer: file.npy or file.bin:SHAPE:DTYPE.
Result<Tensor> bufferArg(const std::string& name, const std::string& spec) {
  if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0) return readNpy(spec);
  auto c2 = spec.rfind(':');
  auto c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : spec.rfind(':', c2 - 1);
  if (c1 == std::string::npos)
    return Error{"error: --arg " + name + "=" + spec +
                 ": expected file.npy or file.bin:SHAPE:DTYPE"};
  auto st = shapeAndType(spec.substr(c1 + 1));
  if (!st) return Error{"error: --arg " + name + "=" + spec + ": bad SHAPE:DTYPE"};
  return readRaw(spec.substr(0, c1), st->second, st->first);
}

} // namespace

Status readGivenArgs(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                     const NamedSpecs& args, const NamedSpecs& randoms, const NamedSpecs& zeros,
                     std::mt19937_64& rng,
                     const std::function<Status(const std::string&, uint64_t)>& bindBits,
                     GivenArgs& given) {
  for (auto& [name, spec] : randoms) {
    if (!paramOf(params, name)) return noParameter(kernel, params, name);
    auto rs = randomSpec(spec);
    if (!rs) return Error{"error: --random " + name + "=" + spec + ": " + rs.error().message};
    auto x = makeTensor(rs->dtype, rs->shape, "--random " + name);
    if (!x) return x.error();
    given.buffers[name] = randomTensor(std::move(x.value()), rng, rs->range);
  }
  for (auto& [name, spec] : zeros) {
    if (!paramOf(params, name)) return noParameter(kernel, params, name);
    auto st = shapeAndType(spec);
    if (!st)
      return Error{"error: --zeros " + name + "=" + spec +
                   ": expected SHAPE:DTYPE, e.g. 64x64:f32"};
    auto x = makeTensor(st->second, st->first, "--zeros " + name);
    if (!x) return x.error();
    given.buffers[name] = std::move(x.value());
  }
  for (auto& [name, spec] : args) {
    const auto* p = paramOf(params, name);
    if (!p) return noParameter(kernel, params, name);
    if (isBuffer(*p)) {
      auto t = bufferArg(name, spec);
      if (!t) return t.error();
      given.buffers[name] = std::move(t.value());
      continue;
    }
    auto bits = scalarArgBits(*p, spec);
    if (!bits) return Error{"error: " + bits.error().message};
    if (auto st = bindBits(name, *bits)) return st;
    given.scalars.insert(name);
    if (!(p->kind == Kind::Scalar && isa::isFloat(p->dtype)))
      given.intScalars.push_back({name, static_cast<int64_t>(*bits)});
  }
  return std::nullopt;
}

Status checkPrints(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                   const std::vector<std::string>& prints) {
  for (const std::string& name : prints) {
    const auto* p = paramOf(params, name);
    if (!p) return noParameter(kernel, params, name);
    if (!isBuffer(*p))
      return Error{"error: --print " + name + ": parameter %" + name + " is not a buffer"};
  }
  return std::nullopt;
}

Status planOutputs(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                   const NamedSpecs& outs, const std::optional<std::string>& outDir,
                   const std::optional<std::string>& trace, OutputPlan& plan) {
  std::vector<std::pair<std::string, std::string>> files; // what, path
  if (trace) {
    if (trace->empty()) return Error{"error: --trace needs a file name"};
    plan.trace = *trace;
    files.push_back({"--trace", *trace});
  }
  for (const auto& [name, path] : outs) {
    const auto* p = paramOf(params, name);
    if (!p) return noParameter(kernel, params, name);
    if (!isBuffer(*p))
      return Error{"error: --out " + name + ": parameter %" + name + " is not a buffer"};
    if (path.empty()) return Error{"error: --out " + name + "= needs a file name"};
    plan.npy.push_back({name, path});
    files.push_back({"--out " + name, path});
  }
  if (outDir) {
    if (outDir->empty()) return Error{"error: --out-dir needs a directory name"};
    std::error_code ec;
    std::filesystem::create_directories(*outDir, ec);
    if (ec) return Error{"error: --out-dir " + *outDir + ": " + ec.message()};
    for (const auto& p : params) {
      if (!isBuffer(p)) continue;
      std::string err;
      auto path = support::safePathIn(*outDir, p.name, ".npy",
                                      "--out-dir: parameter %" + support::visibleText(p.name), err);
      if (!path)
        return Error{"error: " + err + " (write it with --out " + support::visibleText(p.name) +
                     "=FILE)"};
      plan.npy.push_back({p.name, *path});
      files.push_back({"--out-dir (%" + p.name + ")", *path});
    }
  }
  // Two outputs on one file would leave only the last one written: refused before the run.
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (obj::sameFile(files[i].second, files[j].second) &&
          !(files[i].first == files[j].first && files[i].second == files[j].second))
        return Error{"error: " + files[i].first + " and " + files[j].first +
                     " write the same file '" + files[j].second + "'"};
  return std::nullopt;
}

} // namespace pto::rt
