// Host API: Module (load + decode), Launch (bind + run on the cpu backend), Tensor.
#include "runtime/Runtime.h"

#include "isa/Numerics.h"
#include "obj/Extent.h"
#include "obj/Image.h"
#include "runtime/BlockRun.h"
#include "runtime/Comm.h"
#include "runtime/Program.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

namespace pto::rt {

// ------------------------------------------------------------------ Tensor
int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
namespace {
/// Bits an element takes in a host buffer: its width, except i1, which takes a byte (as numpy's
/// bool does); 4-bit types are packed two to a byte.
unsigned storageBits(isa::DType t) {
  return t == isa::DType::I1 ? 8 : isa::bitWidth(t);
}
} // namespace

size_t Tensor::bytesFor(isa::DType t, int64_t numel) {
  return static_cast<size_t>((static_cast<uint64_t>(numel) * storageBits(t) + 7) / 8);
}
Tensor Tensor::zeros(isa::DType t, std::vector<int64_t> shape) {
  Tensor x;
  x.dtype = t;
  x.shape = std::move(shape);
  x.data.assign(bytesFor(t, x.numel()), 0);
  return x;
}
uint64_t Tensor::bitsAt(int64_t i) const {
  unsigned bits = storageBits(dtype);
  if (bits < 8) return isa::getNibble(data.data(), static_cast<size_t>(i));
  uint64_t v = 0;
  std::memcpy(&v, data.data() + static_cast<size_t>(i) * (bits / 8), bits / 8);
  return v;
}
void Tensor::setBits(int64_t i, uint64_t v) {
  unsigned bits = storageBits(dtype);
  if (bits < 8) return isa::setNibble(data.data(), static_cast<size_t>(i), static_cast<uint8_t>(v));
  std::memcpy(data.data() + static_cast<size_t>(i) * (bits / 8), &v, bits / 8);
}
double Tensor::at(int64_t i) const {
  return isa::decodeToDouble(dtype, bitsAt(i));
}

std::string elementText(isa::DType t, uint64_t bits) {
  char text[40];
  const unsigned w = isa::bitWidth(t);
  if (isa::isInteger(t) || t == isa::DType::I1) {
    if (isa::info(t).kind == isa::DTypeKind::SInt && w < 64)
      snprintf(text, sizeof text, "%lld",
               static_cast<long long>(static_cast<int64_t>(bits << (64 - w)) >> (64 - w)));
    else if (isa::info(t).kind == isa::DTypeKind::SInt)
      snprintf(text, sizeof text, "%lld", static_cast<long long>(bits));
    else
      snprintf(text, sizeof text, "%llu",
               static_cast<unsigned long long>(w < 64 ? bits & ((uint64_t{1} << w) - 1) : bits));
  } else {
    snprintf(text, sizeof text, "%.9g", isa::decodeToDouble(t, bits));
  }
  return text;
}

// ------------------------------------------------------------------ Module
Result<Module> Module::open(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (auto e = obj::readInputFile(path, bytes)) return Error{"error: " + *e};
  return load(bytes, path);
}

Result<Module> Module::load(const std::vector<uint8_t>& bytes, std::string name) {
  auto img = obj::readImage(bytes.data(), bytes.size());
  if (img.index() == 1) return Error{name + ": error: " + std::get<1>(img)};
  auto prog = decodeImage(std::move(std::get<0>(img)), name);
  if (!prog) return prog.error();
  Module m;
  m.prog_ = prog.value();
  return m;
}

const obj::Image& Module::image() const {
  return prog_->image;
}
isa::Arch Module::arch() const {
  return prog_->image.arch;
}

std::string Module::location(uint64_t textOffset) const {
  return prog_->locationAt(textOffset);
}

std::vector<std::string> Module::kernelNames() const {
  std::vector<std::string> out;
  for (const obj::ImageEntry& e : prog_->image.entries)
    out.push_back(e.name);
  return out;
}

const std::vector<Module::ParamInfo>* Module::params(std::string_view kernel) const {
  const obj::ImageEntry* e = prog_->entry(kernel);
  return e ? &prog_->functions[e->function].params : nullptr;
}

std::optional<Module::PointerExtent> Module::pointerExtent(std::string_view kernel,
                                                           std::string_view param) const {
  if (!param.empty() && param[0] == '%') param.remove_prefix(1);
  if (const obj::ImageEntry* e = prog_->entry(kernel))
    for (const obj::Param& p : prog_->image.functions[e->function].params)
      if (p.name == param && p.kind == obj::ParamKind::Pointer)
        return PointerExtent{p.extent, p.indexValues};
  return std::nullopt;
}

Result<int64_t>
Module::pointerElements(std::string_view kernel, std::string_view param,
                        const std::vector<std::pair<std::string, int64_t>>& scalars) const {
  auto ext = pointerExtent(kernel, param);
  if (!ext)
    return Error{"@" + std::string(kernel) + " has no pointer parameter %" + std::string(param)};
  if (ext->expr.empty())
    return Error{"the extent of %" + std::string(param) +
                 " is not known (an access the linker cannot bound)"};
  auto v = obj::evalExtent(ext->expr, [&](const std::string& n) -> std::optional<int64_t> {
    for (const auto& [name, value] : scalars)
      if (name == n) return value;
    return std::nullopt;
  });
  if (auto* err = std::get_if<std::string>(&v)) return Error{*err};
  return std::max<int64_t>(std::get<int64_t>(v), 0);
}

Result<Launch> Module::launch(std::string_view kernel) const {
  for (const obj::ImageEntry& e : prog_->image.entries)
    if (e.name == kernel) {
      Launch l;
      l.prog_ = prog_;
      l.function_ = e.function;
      l.bindings_.resize(prog_->functions[e.function].params.size());
      return l;
    }
  std::string names;
  for (const obj::ImageEntry& e : prog_->image.entries)
    names += (names.empty() ? "" : ", ") + e.name;
  return Error{prog_->fileName + ": error: no entry kernel '" + std::string(kernel) +
               "' (entries: " + names + ")"};
}

// ------------------------------------------------------------------ Launch
const std::vector<Module::ParamInfo>& Launch::params() const {
  return prog_->functions[function_].params;
}
std::string_view Launch::kernel() const {
  return prog_->functions[function_].name;
}

std::optional<size_t> Launch::find(std::string_view param, Status& err) const {
  if (!param.empty() && param[0] == '%') param.remove_prefix(1);
  const auto& ps = params();
  if (!param.empty() && param[0] == '#') {
    auto i = obj::parseUnsigned(param.substr(1));
    if (i && *i < ps.size()) return static_cast<size_t>(*i);
  }
  for (size_t i = 0; i < ps.size(); ++i)
    if (ps[i].name == param) return i;
  std::string names;
  for (const auto& p : ps)
    names += (names.empty() ? "%" : ", %") + p.name;
  err = Error{"error: kernel @" + std::string(kernel()) + " has no parameter '%" +
              std::string(param) + "' (parameters: " + names + ")"};
  return std::nullopt;
}

Status Launch::bind(std::string_view param, Tensor* buffer) {
  Status err;
  auto i = find(param, err);
  if (!i) return err;
  const auto& p = params()[*i];
  if (p.kind != Module::ParamInfo::Kind::Pointer && p.kind != Module::ParamInfo::Kind::TensorView)
    return Error{"error: parameter %" + p.name + " of @" + std::string(kernel()) +
                 " is a scalar, not a buffer"};
  // The element types must agree exactly: an i32 buffer for an f32 parameter would be read bit for
  // bit as floats (convert the data instead).
  if (buffer->dtype != p.dtype)
    return Error{"error: parameter %" + p.name + " has element type " +
                 std::string(isa::spelling(p.dtype)) + " but the buffer holds " +
                 std::string(isa::spelling(buffer->dtype))};
  if (p.kind == Module::ParamInfo::Kind::TensorView) {
    int64_t need = 1;
    for (int64_t d : p.shape)
      need = obj::checkedMul(need, d).value_or(INT64_MAX); // the loader bounds the shape
    if (buffer->numel() < need)
      return Error{"error: parameter %" + p.name + " is a tensor_view of " + std::to_string(need) +
                   " elements but the buffer has " + std::to_string(buffer->numel())};
  }
  bindings_[*i].buffer = buffer;
  return std::nullopt;
}

Status Launch::bindScalarBits(std::string_view param, uint64_t bits) {
  Status err;
  auto i = find(param, err);
  if (!i) return err;
  const auto& p = params()[*i];
  if (p.kind == Module::ParamInfo::Kind::Pointer || p.kind == Module::ParamInfo::Kind::TensorView)
    return Error{"error: parameter %" + p.name + " of @" + std::string(kernel()) +
                 " is a buffer, not a scalar"};
  bindings_[*i].bits = bits;
  return std::nullopt;
}

Status Launch::bindScalar(std::string_view param, int64_t value) {
  Status err;
  auto i = find(param, err);
  if (!i) return err;
  const auto& p = params()[*i];
  if (p.kind == Module::ParamInfo::Kind::Scalar && isa::isFloat(p.dtype))
    return bindScalar(param, static_cast<double>(value));
  return bindScalarBits(param, static_cast<uint64_t>(value));
}

Status Launch::bindScalar(std::string_view param, double value) {
  Status err;
  auto i = find(param, err);
  if (!i) return err;
  const auto& p = params()[*i];
  if (p.kind == Module::ParamInfo::Kind::Scalar && isa::isFloat(p.dtype))
    return bindScalarBits(
        param, isa::encodeFromDouble(p.dtype, value, isa::RoundMode::CAST_RINT, isa::SatMode::OFF));
  return bindScalarBits(param, static_cast<uint64_t>(static_cast<int64_t>(value)));
}

Status Launch::run(const RunOptions& opts, RunStats* stats) {
  Status s = runIn(opts, stats);
  if (s && opts.world) opts.world->abort(opts.rank, s->message); // its peers stop waiting
  return s;
}

Status Launch::runIn(const RunOptions& opts, RunStats* stats) {
  const DecodedFunction& fn = prog_->functions[function_];
  const auto& ps = fn.params;
  std::vector<GmRegion> regions(ps.size());
  std::vector<uint64_t> argBits(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    regions[i].name = ps[i].name;
    regions[i].dtype = ps[i].dtype;
    if (ps[i].kind == Module::ParamInfo::Kind::Pointer ||
        ps[i].kind == Module::ParamInfo::Kind::TensorView) {
      if (!bindings_[i].buffer)
        return Error{"error: parameter %" + ps[i].name + " of @" + fn.name + " is not bound"};
      regions[i].data = bindings_[i].buffer->data.data();
      regions[i].size = bindings_[i].buffer->data.size();
      argBits[i] = (static_cast<uint64_t>(i) + 1) << kRegionShift;
    } else {
      if (!bindings_[i].bits)
        return Error{"error: parameter %" + ps[i].name + " of @" + fn.name + " is not bound"};
      argBits[i] = *bindings_[i].bits;
    }
  }
  const uint32_t blocks = std::max<uint32_t>(1, opts.blocks);
  unsigned threads =
      opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, blocks);
  // Signals and syncall (runtime/Comm.h): every block runs at once (a wait may need any other
  // block), in the run's world or, on one device, in a world of its own.
  const bool comm = std::any_of(prog_->functions.begin(), prog_->functions.end(),
                                [](const DecodedFunction& f) { return f.usesComm; });
  std::optional<LocalWorld> ownWorld;
  World* world = opts.world;
  if (comm && !world) world = &ownWorld.emplace(1);
  if (world) {
    if (prog_->crossCore)
      return Error{"error: @" + fn.name +
                   " uses cross-core pipes: a multi-device run of it is not supported"};
    threads = blocks;
    if (auto e = world->join(opts.rank, regions, prog_.get(), blocks)) return Error{*e};
  }
  // The blocks on their cores (runtime/BlockRun.cpp).
  BlockRun blockRun(*prog_, fn, opts, regions, std::move(argBits), world, blocks);
  return blockRun.run(threads, stats);
}

} // namespace pto::rt
