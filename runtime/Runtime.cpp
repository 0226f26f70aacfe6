// Host API: Module (load + decode), Launch (bind + run on the cpu backend), Tensor.
#include "runtime/Runtime.h"

#include "isa/Numerics.h"
#include "obj/Extent.h"
#include "obj/Image.h"
#include "runtime/Comm.h"
#include "runtime/Program.h"
#include "runtime/ScalarInterp.h"
#include "runtime/npu/Model.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
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
  std::atomic<uint32_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string firstError;
  uint32_t firstBlock = UINT32_MAX;
  std::atomic<uint64_t> tileOps{0}, scalarOps{0};
  std::vector<NpuBlock> npuBlocks(opts.backend == Backend::Npu ? blocks : 0);
  std::vector<std::string> printed(blocks); // TPRINT text, by block

  const isa::Arch arch = prog_->image.arch;
  const size_t stackParams = ps.size() > 8 ? ps.size() - 8 : 0;
  constexpr size_t kCalleeStack = 64 * 1024;

  // One simulated core: its buffers (reused from block to block) and its stack.
  auto setupCore = [&](Core& c) {
    c.gm = &regions;
    c.world = world;
    c.rank = opts.rank;
    c.functions = &prog_->functions;
    c.blockNum = blocks;
    c.instructionLimit = opts.maxInstructions;
    c.cancel = opts.cancel;
    c.storage.resize(7);
    for (unsigned l = 0; l < 7; ++l) {
      // 64-byte aligned, like the NPU's buffers: vector kernels never split a cache line.
      const size_t capacity =
          std::max<uint32_t>(isa::buffer(arch, static_cast<isa::Loc>(l)).capacity, 32);
      c.storage[l].assign(capacity + 64, 0);
      const auto base = reinterpret_cast<uintptr_t>(c.storage[l].data());
      c.buf[l] = c.storage[l].data() + ((64 - base % 64) % 64);
      c.bufSize[l] = capacity;
    }
    // The stack grows down (docs/abi.md): the kernel's prologue reserves its frame below the
    // initial sp, callees reserve theirs below that; stack parameters sit above the initial sp.
    c.stack.assign(kCalleeStack + fn.frameSize + 8 * stackParams, 0);
  };
  // A core at the start of block b: registers, arguments, stack and used buffers cleared.
  auto resetCore = [&](Core& c, uint32_t b) {
    c.r.fill(0);
    c.cond = false;
    c.wideReg = Core::kNoWideReg;
    c.scalarOps = c.tileOps = 0;
    c.crossFlags.fill(0);
    c.bufTokens.fill(0);
    c.blockIdx = b;
    const size_t top = kCalleeStack + fn.frameSize; // sp on entry
    c.r[1] = (kStackRegion << kRegionShift) + top;
    for (size_t i = 0; i < ps.size() && i < 8; ++i)
      c.r[2 + i] = argBits[i];
    std::fill(c.stack.begin(), c.stack.end(), 0);
    for (size_t i = 8; i < ps.size(); ++i)
      std::memcpy(c.stack.data() + top + 8 * (i - 8), &argBits[i], 8);
    for (unsigned l = 0; l < 7; ++l)
      if (fn.bufferUsed[l])
        std::memset(c.buf[l], 0, std::min<size_t>(fn.bufferUsed[l], c.bufSize[l]));
  };
  // Runs the kernel on one core; false with c.error set and `at` the failing word.
  auto runCore = [&](Core& c, uint32_t b, uint32_t& at, NpuBlock* report) {
    bool ok;
    if (opts.backend == Backend::Npu) {
      // Op records for the trace and profile: 4M in all, at least 100k per block.
      npu::Simulator sim(*prog_, opts.recordOps, std::max<size_t>(100'000, 4'000'000 / blocks));
      ok = interpret(fn, c, at, sim) && sim.finish(c);
      if (!ok && sim.errorAt) at = *sim.errorAt;
      if (report) *report = std::move(sim.report);
    } else {
      ok = runBlock(fn, c, at);
    }
    (void)b;
    return ok;
  };
  auto recordFailure = [&](uint32_t b, uint32_t at, const std::string& error,
                           const std::string& core) {
    failed = true;
    std::lock_guard<std::mutex> lock(mu);
    if (b < firstBlock) {
      firstBlock = b;
      firstError = prog_->locationAt(at) + ": runtime error: " + error;
      if (blocks > 1 || !core.empty())
        firstError += " (" + (blocks > 1 ? "block " + std::to_string(b) : std::string()) +
                      (blocks > 1 && !core.empty() ? ", " : "") + core + ")";
    }
  };

  auto worker = [&] {
    Core c;
    setupCore(c);
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) break;
      uint32_t b = next.fetch_add(1);
      if (b >= blocks) break;
      resetCore(c, b);
      uint32_t at = 0;
      NpuBlock report;
      bool ok = runCore(c, b, at, opts.backend == Backend::Npu ? &report : nullptr);
      if (opts.backend == Backend::Npu) {
        std::lock_guard<std::mutex> lock(mu);
        npuBlocks[b] = std::move(report);
      }
      tileOps += c.tileOps;
      scalarOps += c.scalarOps;
      printed[b] = std::move(c.output);
      c.output.clear();
      if (world) {
        if (!ok) world->abort(opts.rank, c.error);
        world->coreDone();
      }
      if (!ok) {
        recordFailure(b, at, c.error, "");
        c.error.clear();
        break;
      }
    }
  };

  // A kernel with cross-core pipes: each block is a cluster of the AIC and two AIVs, each on a
  // thread of its own (a core may wait for another in a pipe op). docs/pipes.md.
  auto clusterWorker = [&] {
    std::array<Core, kLanes> lanes;
    for (unsigned l = 0; l < kLanes; ++l)
      setupCore(lanes[l]);
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) break;
      uint32_t b = next.fetch_add(1);
      if (b >= blocks) break;
      Cluster cluster(arch);
      std::array<uint32_t, kLanes> at{};
      std::array<bool, kLanes> ok{};
      std::array<NpuBlock, kLanes> reports;
      auto runLane = [&](unsigned l) {
        Core& c = lanes[l];
        resetCore(c, b);
        c.cluster = &cluster;
        c.lane = static_cast<uint8_t>(l);
        c.subblockIdx = l == 0 ? 0 : l - 1;
        c.subblockNum = l == 0 ? 1 : 2;
        ok[l] = !laneRuns(l, fn.flags) ||
                runCore(c, b, at[l], opts.backend == Backend::Npu ? &reports[l] : nullptr);
        cluster.finish(l, !ok[l]);
      };
      std::thread v0(runLane, 1u), v1(runLane, 2u);
      runLane(0);
      v0.join();
      v1.join();
      std::string out;
      for (unsigned l = 0; l < kLanes; ++l) {
        tileOps += lanes[l].tileOps;
        scalarOps += lanes[l].scalarOps;
        out += lanes[l].output;
        lanes[l].output.clear();
      }
      printed[b] = std::move(out);
      if (opts.backend == Backend::Npu) {
        // The block takes as long as its slowest core; pipe busy time and ops add up.
        NpuBlock merged = std::move(reports[0]);
        for (unsigned l = 1; l < kLanes; ++l) {
          merged.cycles = std::max(merged.cycles, reports[l].cycles);
          for (size_t p = 0; p < merged.busy.size(); ++p) {
            merged.busy[p] += reports[l].busy[p];
            merged.ops[p] += reports[l].ops[p];
          }
          merged.records.insert(merged.records.end(), reports[l].records.begin(),
                                reports[l].records.end());
          merged.recordsTruncated = merged.recordsTruncated || reports[l].recordsTruncated;
          merged.warnings.insert(merged.warnings.end(), reports[l].warnings.begin(),
                                 reports[l].warnings.end());
        }
        std::lock_guard<std::mutex> lock(mu);
        npuBlocks[b] = std::move(merged);
      }
      // The error to report: a core's own failure before a consequence of it ("stopped: ...").
      int culprit = -1;
      for (unsigned l = 0; l < kLanes; ++l)
        if (!ok[l] && (culprit < 0 || (lanes[culprit].error.starts_with("stopped:") &&
                                       !lanes[l].error.starts_with("stopped:"))))
          culprit = static_cast<int>(l);
      for (Core& c : lanes) {
        c.cluster = nullptr;
        if (culprit < 0) c.error.clear();
      }
      if (culprit >= 0) {
        recordFailure(b, at[culprit], lanes[culprit].error,
                      laneName(static_cast<unsigned>(culprit)));
        for (Core& c : lanes)
          c.error.clear();
        break;
      }
    }
  };

  auto t0 = std::chrono::steady_clock::now();
  if (threads <= 1) {
    prog_->crossCore ? clusterWorker() : worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(prog_->crossCore ? std::function<void()>(clusterWorker)
                                         : std::function<void()>(worker));
    for (auto& t : pool)
      t.join();
  }
  auto t1 = std::chrono::steady_clock::now();
  if (stats) {
    stats->seconds = std::chrono::duration<double>(t1 - t0).count();
    stats->tileOps = tileOps;
    stats->scalarOps = scalarOps;
    stats->npu = std::move(npuBlocks);
    stats->output.clear();
    for (const std::string& p : printed)
      stats->output += p;
  }
  if (failed) return Error{firstError};
  return std::nullopt;
}

} // namespace pto::rt
