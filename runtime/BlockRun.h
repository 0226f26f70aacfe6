// The blocks of one launch on simulated cores: the run behind rt::Launch::run
// (runtime/Runtime.cpp). Internal to the runtime library.
#pragma once

#include "runtime/Cluster.h"
#include "runtime/Program.h"
#include "runtime/Runtime.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace pto::rt {

/// Runs the blocks of one kernel launch: each worker thread takes the next block number, resets
/// its core (or, for a kernel with cross-core pipes, its cluster of the AIC and two AIVs) and runs
/// the kernel on the backend of `opts`. The first failure, by block number, is the run's error.
/// Multi-device runs: `world` (runtime/Comm.h) has already been joined by the caller; a failing
/// core aborts it and every core reports `coreDone` to it.
class BlockRun {
public:
  BlockRun(const Program& prog, const DecodedFunction& fn, const RunOptions& opts,
           std::vector<GmRegion>& regions, std::vector<uint64_t> argBits, World* world,
           uint32_t blocks);
  /// Runs every block on `threads` threads (the calling thread when 1) and fills `stats`.
  Status run(unsigned threads, RunStats* stats);

private:
  /// One simulated core: its buffers (reused from block to block) and its stack.
  void setupCore(Core& c) const;
  /// A core at the start of block b: registers, arguments, stack and used buffers cleared.
  void resetCore(Core& c, uint32_t b) const;
  /// Runs the kernel on one core; false with c.error set and `at` the failing word.
  bool runCore(Core& c, uint32_t& at, NpuBlock* report) const;
  void recordFailure(uint32_t b, uint32_t at, const std::string& error, const std::string& core);
  /// A kernel without cross-core pipes: one core per thread.
  void worker();
  /// A kernel with cross-core pipes: each block is a cluster of the AIC and two AIVs, each on a
  /// thread of its own (a core may wait for another in a pipe op). docs/pipes.md.
  void clusterWorker();
  /// Runs block b on the cluster `lanes`; false when it failed (recorded).
  bool runCluster(std::array<Core, kLanes>& lanes, uint32_t b);

  static constexpr size_t kCalleeStack = 64 * 1024;

  const Program& prog_;
  const DecodedFunction& fn_;
  const RunOptions& opts_;
  std::vector<GmRegion>& regions_;
  const std::vector<uint64_t> argBits_;
  World* const world_;
  const uint32_t blocks_;
  const size_t stackParams_;
  const bool npu_;

  std::atomic<uint32_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::string firstError_;
  uint32_t firstBlock_ = UINT32_MAX;
  std::atomic<uint64_t> tileOps_{0}, scalarOps_{0};
  std::vector<NpuBlock> npuBlocks_;
  std::vector<std::string> printed_; // TPRINT text, by block
};

} // namespace pto::rt
