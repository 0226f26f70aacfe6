#include "python/Run.h"

#include "isa/Numerics.h"
#include "ref/Interp.h"
#include "runtime/Npy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace pto::python {
namespace {

using Kind = rt::Module::ParamInfo::Kind;
using Params = std::vector<rt::Module::ParamInfo>;

[[noreturn]] void fail(const std::string& msg) {
  throw ToolError{toolMessage("pto-run", msg)};
}

void check(const rt::Status& st) {
  if (st) fail(st->message);
}

const rt::Module::ParamInfo* paramOf(const Params& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

bool isBuffer(const rt::Module::ParamInfo& p) {
  return p.kind == Kind::Pointer || p.kind == Kind::TensorView;
}

/// The raw bits of a scalar argument for `p`, range-checked as pto-run --arg checks its text.
uint64_t scalarBits(const std::string& kernel, const rt::Module::ParamInfo& p, const ScalarArg& a) {
  const isa::DType t = p.kind == Kind::Index ? isa::DType::I64 : p.dtype;
  const std::string what = "error: parameter %" + p.name + " of @" + kernel + " is " +
                           (p.kind == Kind::Index ? "index" : std::string(isa::spelling(t)));
  if (p.kind == Kind::Scalar && isa::isFloat(t)) {
    const double v = a.isFloat ? a.real : static_cast<double>(a.integer);
    const uint64_t bits = isa::encodeFromDouble(t, v, isa::RoundMode::CAST_RINT, isa::SatMode::OFF);
    if (std::isfinite(v) && !std::isfinite(isa::decodeToDouble(t, bits)))
      fail(what + ": " + std::to_string(v) + " is outside its finite range");
    return bits;
  }
  if (a.isFloat) fail(what + ": give an integer, not " + std::to_string(a.real));
  auto [lo, hi] = rt::integerRange(t);
  if (a.integer < lo || a.integer > hi)
    fail(what + ": " + obj::wideText(a.integer) + " is outside its range (" + obj::wideText(lo) +
         " to " + obj::wideText(hi) + ")");
  return static_cast<uint64_t>(a.integer);
}

/// The element types must agree exactly; the message says what the array should be.
void checkBufferType(const std::string& kernel, const rt::Module::ParamInfo& p,
                     const rt::Tensor& t) {
  if (t.dtype == p.dtype) return;
  fail("error: parameter %" + p.name + " of @" + kernel + " has element type " +
       std::string(isa::spelling(p.dtype)) + ", but the array holds " +
       std::string(isa::spelling(t.dtype)) + " (convert it, e.g. with .astype(), or declare " +
       "raw bits with dtypes={'" + p.name + "': '" + std::string(isa::spelling(p.dtype)) + "'})");
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

/// A tensor view's array has the view's shape, or is flat with its element count: a transposed
/// or otherwise reshaped array would be read in the wrong order.
void checkViewShape(const std::string& kernel, const rt::Module::ParamInfo& p,
                    const rt::Tensor& t) {
  if (p.kind != Kind::TensorView || t.shape == p.shape) return;
  int64_t need = 1;
  for (int64_t d : p.shape)
    need *= d;
  if (t.shape.size() == 1 && t.numel() == need) return;
  fail("error: parameter %" + p.name + " of @" + kernel + " is a " + rt::paramTypeText(p) +
       ": the array's shape " + shapeText(t.shape) + " is neither " + shapeText(p.shape) +
       " nor flat with " + std::to_string(need) + " elements");
}

/// Runs `work` on a thread of its own while this one polls `interrupted`; a true answer sets
/// `cancel`, which stops the run at its next branch.
rt::Status runInterruptibly(const std::function<rt::Status()>& work, std::atomic<bool>& cancel,
                            const InterruptPoll& interrupted) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  rt::Status result;
  std::thread worker([&] {
    rt::Status st = work();
    std::lock_guard lock(m);
    result = std::move(st);
    done = true;
    cv.notify_one();
  });
  std::unique_lock lock(m);
  while (!done) {
    if (cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return done; })) break;
    lock.unlock();
    if (!cancel.load() && interrupted && interrupted()) cancel.store(true);
    lock.lock();
  }
  lock.unlock();
  worker.join();
  return result;
}

/// The kernel to run: the one asked for, or the only entry.
std::string chooseKernel(const std::string& asked, const std::vector<std::string>& names,
                         const std::string& file) {
  if (!asked.empty()) return asked[0] == '@' ? asked.substr(1) : asked;
  if (names.size() == 1) return names[0];
  std::string list;
  for (const auto& n : names)
    list += " @" + n;
  fail("error: " + file + " has " + (names.empty() ? "no entry kernel" : "several kernels") +
       "; choose one with kernel=..." + list);
}

/// Scalars bound through `bindBits` (recorded in `given`); every name checked against `params`.
void bindScalars(const std::string& kernel, const Params& params, const RunRequest& req,
                 const std::function<rt::Status(const std::string&, uint64_t)>& bindBits,
                 rt::GivenArgs& given) {
  for (const auto& [name, arg] : req.scalars) {
    const auto* p = paramOf(params, name);
    if (!p) fail(rt::noParameter(kernel, params, name).message);
    if (isBuffer(*p))
      fail("error: parameter %" + name + " of @" + kernel + " is a buffer (" +
           rt::paramTypeText(*p) + "): give a numpy array");
    const uint64_t bits = scalarBits(kernel, *p, arg);
    check(bindBits(name, bits));
    given.scalars.insert(name);
    if (!(p->kind == Kind::Scalar && isa::isFloat(p->dtype)))
      given.intScalars.push_back({name, static_cast<int64_t>(bits)});
  }
}

/// The given buffers checked by name and element type, moved into `given`.
void takeBuffers(const std::string& kernel, const Params& params, RunRequest& req,
                 rt::GivenArgs& given) {
  for (auto& [name, t] : req.buffers) {
    const auto* p = paramOf(params, name);
    if (!p) fail(rt::noParameter(kernel, params, name).message);
    if (!isBuffer(*p))
      fail("error: parameter %" + name + " of @" + kernel + " is a scalar (" +
           rt::paramTypeText(*p) + "), not a buffer");
    checkBufferType(kernel, *p, t);
    checkViewShape(kernel, *p, t);
    given.buffers[name] = std::move(t);
  }
}

/// A given pointer buffer smaller than the extent the linker recorded fails before the run.
void checkExtents(const rt::Module& mod, const std::string& kernel, const Params& params,
                  const std::set<std::string>& givenNames, const rt::GivenArgs& args) {
  for (const auto& p : params) {
    if (p.kind != Kind::Pointer || !givenNames.count(p.name)) continue;
    auto it = args.buffers.find(p.name);
    auto n = mod.pointerElements(kernel, p.name, args.intScalars);
    if (!n || it->second.numel() >= n.value()) continue;
    const auto ext = mod.pointerExtent(kernel, p.name);
    fail("error: parameter %" + p.name + " of @" + kernel + " (" + rt::paramTypeText(p) +
         ") is too small: the array has " + std::to_string(it->second.numel()) +
         " elements, the kernel reaches " + std::to_string(n.value()) +
         (ext ? " (extent " + ext->expr + ")" : ""));
  }
}

} // namespace

RunOutcome runImage(const rt::Module& mod, RunRequest req, const InterruptPoll& interrupted) {
  RunOutcome out;
  out.kernel = chooseKernel(req.kernel, mod.kernelNames(), "the image");
  auto launch = mod.launch(out.kernel);
  if (!launch) fail(launch.error().message);
  rt::Launch& L = launch.value();
  const Params& params = L.params();
  rt::GivenArgs given;
  std::set<std::string> givenNames;
  for (const auto& [name, t] : req.buffers)
    givenNames.insert(name);
  takeBuffers(out.kernel, params, req, given);
  bindScalars(
      out.kernel, params, req,
      [&](const std::string& n, uint64_t bits) { return L.bindScalarBits(n, bits); }, given);
  std::mt19937_64 rng(req.seed);
  auto missing = rt::createMissingArgs(mod, L, out.kernel, req.autoArgs, rng, given);
  if (!missing) fail(missing.error().message);
  if (!missing->empty()) {
    std::string msg = "error: @" + out.kernel + " needs these parameters given:";
    for (const rt::MissingParam& m : *missing)
      msg += "\n  %" + m.param->name + " (" + rt::paramTypeText(*m.param) +
             (m.why.empty() ? "" : ", " + m.why) + ")";
    fail(msg);
  }
  checkExtents(mod, out.kernel, params, givenNames, given);
  for (auto& [name, t] : given.buffers)
    check(L.bind(name, &t));
  std::atomic<bool> cancel{false};
  rt::RunOptions opts;
  opts.blocks = req.blocks;
  opts.threads = req.threads;
  opts.maxInstructions = req.maxInstructions;
  opts.backend = req.backend;
  opts.recordOps = req.backend == rt::Backend::Npu;
  opts.cancel = &cancel;
  const rt::Status st =
      runInterruptibly([&] { return L.run(opts, &out.stats); }, cancel, interrupted);
  if (cancel.load()) {
    out.cancelled = true;
    return out;
  }
  check(st);
  out.output = out.stats.output;
  for (const rt::NpuBlock& b : out.stats.npu)
    for (const std::string& w : b.warnings)
      if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end())
        out.warnings.push_back(w);
  out.buffers = std::move(given.buffers);
  return out;
}

RunOutcome runSource(const ParsedSource& src, RunRequest req, const InterruptPoll& interrupted) {
  RunOutcome out;
  out.kernel = chooseKernel(req.kernel, ref::kernelNames(*src.module), src.file->name());
  auto found = ref::Kernel::find(*src.module, src.arch, out.kernel);
  if (!found) fail(found.error().message);
  ref::Kernel& K = found.value();
  const Params& params = K.params();
  rt::GivenArgs given;
  takeBuffers(out.kernel, params, req, given);
  bindScalars(
      out.kernel, params, req,
      [&](const std::string& n, uint64_t bits) { return K.bindScalarBits(n, bits); }, given);
  for (const auto& p : params) {
    if (!isBuffer(p) || given.buffers.count(p.name)) continue;
    if (p.kind == Kind::Pointer)
      fail("error: pointer parameter %" + p.name + " of @" + out.kernel +
           " needs an array (the reference interpreter has no extents to size it by)");
    auto x = rt::makeTensor(p.dtype, p.shape, "parameter %" + p.name);
    if (!x) fail(x.error().message);
    given.buffers[p.name] = std::move(x.value());
  }
  for (auto& [name, t] : given.buffers)
    check(K.bind(name, &t));
  std::atomic<bool> cancel{false};
  ref::Options opts;
  opts.blocks = req.blocks;
  opts.maxOps = req.maxInstructions;
  opts.cancel = &cancel;
  ref::Stats stats;
  const rt::Status st = runInterruptibly([&] { return K.run(opts, &stats); }, cancel, interrupted);
  if (cancel.load()) {
    out.cancelled = true;
    return out;
  }
  check(st);
  out.output = stats.output;
  out.stats.tileOps = stats.tileOps;
  out.stats.scalarOps = stats.scalarOps;
  out.buffers = std::move(given.buffers);
  return out;
}

} // namespace pto::python
