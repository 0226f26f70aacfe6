// The blocks of one launch on simulated cores (runtime/BlockRun.h).
#include "runtime/BlockRun.h"

#include "runtime/Comm.h"
#include "runtime/ScalarInterp.h"
#include "runtime/npu/Model.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <thread>

namespace pto::rt {

BlockRun::BlockRun(const Program& prog, const DecodedFunction& fn, const RunOptions& opts,
                   std::vector<GmRegion>& regions, std::vector<uint64_t> argBits, World* world,
                   uint32_t blocks)
    : prog_(prog), fn_(fn), opts_(opts), regions_(regions), argBits_(std::move(argBits)),
      world_(world), blocks_(blocks), stackParams_(fn.params.size() > 8 ? fn.params.size() - 8 : 0),
      npu_(opts.backend == Backend::Npu), npuBlocks_(npu_ ? blocks : 0), printed_(blocks) {}

void BlockRun::setupCore(Core& c) const {
  c.gm = &regions_;
  c.world = world_;
  c.rank = opts_.rank;
  c.functions = &prog_.functions;
  c.blockNum = blocks_;
  c.instructionLimit = opts_.maxInstructions;
  c.cancel = opts_.cancel;
  c.arch = prog_.image.arch;
  for (unsigned l = 0; l < 7; ++l)
    c.allocateBuffer(l, std::max<uint32_t>(
                            isa::buffer(prog_.image.arch, static_cast<isa::Loc>(l)).capacity, 32));
  // The stack grows down (docs/abi.md): the kernel's prologue reserves its frame below the
  // initial sp, callees reserve theirs below that; stack parameters sit above the initial sp.
  c.stack.assign(kCalleeStack + fn_.frameSize + 8 * stackParams_, 0);
}

void BlockRun::resetCore(Core& c, uint32_t b) const {
  const size_t params = fn_.params.size();
  c.r.fill(0);
  c.cond = false;
  c.wideReg = Core::kNoWideReg;
  c.scalarOps = c.tileOps = 0;
  c.crossFlags.fill(0);
  c.bufTokens.fill(0);
  c.blockIdx = b;
  const size_t top = kCalleeStack + fn_.frameSize; // sp on entry
  c.r[1] = (kStackRegion << kRegionShift) + top;
  for (size_t i = 0; i < params && i < 8; ++i)
    c.r[2 + i] = argBits_[i];
  std::fill(c.stack.begin(), c.stack.end(), 0);
  for (size_t i = 8; i < params; ++i)
    std::memcpy(c.stack.data() + top + 8 * (i - 8), &argBits_[i], 8);
  for (unsigned l = 0; l < 7; ++l)
    if (fn_.bufferUsed[l])
      std::memset(c.buf[l], 0, std::min<size_t>(fn_.bufferUsed[l], c.bufSize[l]));
}

bool BlockRun::runCore(Core& c, uint32_t& at, NpuBlock* report) const {
  if (!npu_) return runBlock(fn_, c, at);
  // Op records for the trace and profile: 4M in all, at least 100k per block.
  npu::Simulator sim(prog_, opts_.recordOps, std::max<size_t>(100'000, 4'000'000 / blocks_));
  const bool ok = interpret(fn_, c, at, sim) && sim.finish(c);
  if (!ok && sim.errorAt) at = *sim.errorAt;
  if (report) *report = std::move(sim.report);
  return ok;
}

void BlockRun::recordFailure(uint32_t b, uint32_t at, const std::string& error,
                             const std::string& core) {
  failed_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (b < firstBlock_) {
    firstBlock_ = b;
    firstError_ = prog_.locationAt(at) + ": runtime error: " + error;
    if (blocks_ > 1 || !core.empty())
      firstError_ += " (" + (blocks_ > 1 ? "block " + std::to_string(b) : std::string()) +
                     (blocks_ > 1 && !core.empty() ? ", " : "") + core + ")";
  }
}

void BlockRun::worker() {
  Core c;
  setupCore(c);
  for (;;) {
    if (failed_.load(std::memory_order_relaxed)) break;
    uint32_t b = next_.fetch_add(1);
    if (b >= blocks_) break;
    resetCore(c, b);
    uint32_t at = 0;
    NpuBlock report;
    bool ok = runCore(c, at, npu_ ? &report : nullptr);
    if (npu_) {
      std::lock_guard<std::mutex> lock(mu_);
      npuBlocks_[b] = std::move(report);
    }
    tileOps_ += c.tileOps;
    scalarOps_ += c.scalarOps;
    printed_[b] = std::move(c.output);
    c.output.clear();
    // The comm hooks: a failing core stops its peers; every core reports its end to the world.
    if (world_) {
      if (!ok) world_->abort(opts_.rank, c.error);
      world_->coreDone();
    }
    if (!ok) {
      recordFailure(b, at, c.error, "");
      c.error.clear();
      break;
    }
  }
}

namespace {
/// One block's report from its cluster's: as long as its slowest core; pipe busy time and ops
/// add up.
NpuBlock mergeLaneReports(std::array<NpuBlock, kLanes>& reports) {
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
  return merged;
}

/// The failing lane to report (-1: none): a core's own failure before a consequence of it
/// ("stopped: ...").
int culpritLane(const std::array<Core, kLanes>& lanes, const std::array<bool, kLanes>& ok) {
  int culprit = -1;
  for (unsigned l = 0; l < kLanes; ++l)
    if (!ok[l] && (culprit < 0 || (lanes[culprit].error.starts_with("stopped:") &&
                                   !lanes[l].error.starts_with("stopped:"))))
      culprit = static_cast<int>(l);
  return culprit;
}
} // namespace

bool BlockRun::runCluster(std::array<Core, kLanes>& lanes, uint32_t b) {
  Cluster cluster(prog_.image.arch);
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
    ok[l] = !laneRuns(l, fn_.flags) || runCore(c, at[l], npu_ ? &reports[l] : nullptr);
    cluster.finish(l, !ok[l]);
  };
  std::thread v0(runLane, 1u), v1(runLane, 2u);
  runLane(0);
  v0.join();
  v1.join();
  std::string out;
  for (unsigned l = 0; l < kLanes; ++l) {
    tileOps_ += lanes[l].tileOps;
    scalarOps_ += lanes[l].scalarOps;
    out += lanes[l].output;
    lanes[l].output.clear();
  }
  printed_[b] = std::move(out);
  if (npu_) {
    NpuBlock merged = mergeLaneReports(reports);
    std::lock_guard<std::mutex> lock(mu_);
    npuBlocks_[b] = std::move(merged);
  }
  const int culprit = culpritLane(lanes, ok);
  for (Core& c : lanes) {
    c.cluster = nullptr;
    if (culprit < 0) c.error.clear();
  }
  if (culprit < 0) return true;
  recordFailure(b, at[culprit], lanes[culprit].error, laneName(static_cast<unsigned>(culprit)));
  for (Core& c : lanes)
    c.error.clear();
  return false;
}

void BlockRun::clusterWorker() {
  std::array<Core, kLanes> lanes;
  for (unsigned l = 0; l < kLanes; ++l)
    setupCore(lanes[l]);
  for (;;) {
    if (failed_.load(std::memory_order_relaxed)) break;
    uint32_t b = next_.fetch_add(1);
    if (b >= blocks_) break;
    if (!runCluster(lanes, b)) break;
  }
}

Status BlockRun::run(unsigned threads, RunStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  const std::function<void()> work = [this] { prog_.crossCore ? clusterWorker() : worker(); };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(work);
    for (auto& t : pool)
      t.join();
  }
  auto t1 = std::chrono::steady_clock::now();
  if (stats) {
    stats->seconds = std::chrono::duration<double>(t1 - t0).count();
    stats->tileOps = tileOps_;
    stats->scalarOps = scalarOps_;
    stats->npu = std::move(npuBlocks_);
    stats->output.clear();
    for (const std::string& p : printed_)
      stats->output += p;
  }
  if (failed_) return Error{firstError_};
  return std::nullopt;
}

} // namespace pto::rt
