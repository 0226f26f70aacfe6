#include "runtime/Args.h"

#include "isa/Numerics.h"
#include "runtime/Npy.h"

#include <algorithm>
#include <cmath>

namespace pto::rt {

Range defaultRange(isa::DType t) {
  if (isa::isFloat(t)) return {-1, 1};
  if (isa::info(t).kind == isa::DTypeKind::SInt) return {-8, 8};
  return {0, 16};
}

std::pair<obj::WideInt, obj::WideInt> integerRange(isa::DType t) {
  const unsigned w = isa::bitWidth(t);
  const isa::DTypeKind kind = isa::info(t).kind;
  if (kind == isa::DTypeKind::SInt)
    return {-(obj::WideInt{1} << (w - 1)), (obj::WideInt{1} << (w - 1)) - 1};
  if (kind == isa::DTypeKind::UInt) return {0, (obj::WideInt{1} << w) - 1};
  return {0, 1}; // i1
}

obj::WideInt ceilWide(double d) {
  return static_cast<obj::WideInt>(std::ceil(d));
}

/// Uniform values in `r` (floats rounded to the type; integers the integers of [lo, hi), which
/// the caller checked lie in the type's range). `x` is a zero tensor of the type and shape
/// (made by makeTensor: size-checked).
Tensor randomTensor(Tensor x, std::mt19937_64& rng, std::optional<Range> range) {
  const isa::DType t = x.dtype;
  const Range r = range.value_or(defaultRange(t));
  std::uniform_real_distribution<double> fd(r.lo, r.hi);
  obj::WideInt ilo = 0, ihi = 0;
  if (!isa::isFloat(t)) {
    auto [tmin, tmax] = integerRange(t);
    ilo = std::max(tmin, ceilWide(r.lo));
    ihi = std::min(tmax, std::max(ilo, ceilWide(r.hi) - 1));
  }
  // Offsets from ilo, drawn as unsigned 64-bit numbers: every integer type fits.
  std::uniform_int_distribution<uint64_t> id(0, static_cast<uint64_t>(ihi - ilo));
  const int64_t n = isa::bitWidth(t) == 4 ? static_cast<int64_t>(x.data.size()) * 2
                                          : x.numel(); // packed: every nibble
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits;
    if (isa::isFloat(t))
      bits = isa::encodeFromDouble(t, fd(rng), isa::RoundMode::CAST_RINT, isa::SatMode::ON);
    else
      bits = static_cast<uint64_t>(ilo + static_cast<obj::WideInt>(id(rng)));
    if (isa::bitWidth(t) < 64) bits &= (uint64_t{1} << isa::bitWidth(t)) - 1;
    x.setBits(i, bits);
  }
  return x;
}

namespace {

using Kind = Module::ParamInfo::Kind;

/// Scalars not given: 0 (bound now) unless `mode` is None; those are reported missing.
Status bindMissingScalars(Launch& launch, AutoArgs mode, GivenArgs& given,
                          std::vector<MissingParam>& missing) {
  for (const auto& p : launch.params()) {
    if (p.kind != Kind::Scalar && p.kind != Kind::Index) continue;
    if (given.scalars.count(p.name)) continue;
    if (mode == AutoArgs::None) {
      missing.push_back({&p, ""});
      continue;
    }
    if (auto st = launch.bindScalar(p.name, int64_t{0})) return st;
    given.scalars.insert(p.name);
    if (!isa::isFloat(p.dtype)) given.intScalars.push_back({p.name, 0});
  }
  return std::nullopt;
}

} // namespace

Result<std::vector<MissingParam>> createMissingArgs(const Module& mod, Launch& launch,
                                                    std::string_view kernel, AutoArgs mode,
                                                    std::mt19937_64& rng, GivenArgs& given) {
  std::vector<MissingParam> missing;
  if (auto st = bindMissingScalars(launch, mode, given, missing)) return *st;
  for (const auto& p : launch.params()) {
    const bool isBuffer = p.kind == Kind::Pointer || p.kind == Kind::TensorView;
    if (!isBuffer || given.buffers.count(p.name)) continue;
    if (p.kind == Kind::TensorView) {
      auto x = makeTensor(p.dtype, p.shape, "parameter %" + p.name);
      if (!x) return x.error();
      given.buffers[p.name] =
          mode == AutoArgs::Random ? randomTensor(std::move(x.value()), rng) : std::move(x.value());
      continue;
    }
    auto n = mod.pointerElements(kernel, p.name, given.intScalars);
    if (mode == AutoArgs::None || !n) {
      missing.push_back({&p, n ? std::to_string(n.value()) + " elements" : n.error().message});
      continue;
    }
    auto ext = mod.pointerExtent(kernel, p.name);
    const int64_t elems = std::max<int64_t>(n.value(), 1);
    auto x = makeTensor(p.dtype, {elems}, "parameter %" + p.name);
    if (!x) return x.error();
    if (mode == AutoArgs::Zeros || (ext && ext->indexValues))
      given.buffers[p.name] = std::move(x.value());
    else
      given.buffers[p.name] = randomTensor(std::move(x.value()), rng);
  }
  return missing;
}

Error noParameter(const std::string& kernel, const std::vector<Module::ParamInfo>& params,
                  const std::string& name) {
  std::string list;
  for (const auto& p : params)
    list += " %" + p.name;
  return Error{"error: kernel @" + kernel + " has no parameter %" + name + " (parameters:" + list +
               ")"};
}

std::string paramTypeText(const Module::ParamInfo& p) {
  std::string t(isa::spelling(p.dtype));
  switch (p.kind) {
  case Kind::Pointer:
    return "ptr<" + t + ">";
  case Kind::Index:
    return "index";
  case Kind::Scalar:
    return t;
  case Kind::TensorView: {
    std::string shape;
    for (int64_t d : p.shape)
      shape += std::to_string(d) + "x";
    return "tensor_view<" + shape + t + ">";
  }
  }
  return t;
}

std::vector<ParamDescription> describeParams(const Module& mod, std::string_view kernel) {
  std::vector<ParamDescription> out;
  const auto* params = mod.params(kernel);
  if (!params) return out;
  for (const auto& p : *params) {
    ParamDescription d{&p, paramTypeText(p), "scalar", "", false};
    if (p.kind == Kind::Pointer) {
      auto ext = mod.pointerExtent(kernel, p.name);
      if (ext) d.extentExpr = ext->expr;
      d.indexValues = ext && ext->indexValues;
      d.extent = !d.extentExpr.empty() ? "extent " + d.extentExpr + " elements" : "extent unknown";
      if (d.indexValues) d.extent += ", index values";
    } else if (p.kind == Kind::TensorView) {
      int64_t n = 1;
      for (int64_t v : p.shape)
        n *= v;
      d.extentExpr = std::to_string(n);
      d.extent = "extent " + d.extentExpr + " elements";
    }
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace pto::rt
