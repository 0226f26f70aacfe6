// Multi-device runs (docs/multi-device.md): N ranks, each a launch of the same kernel with its
// own GM, as threads of one process (LocalWorld) or as processes under mpirun (MpiWorld,
// runtime/MpiWorld.h). Every rank's arguments form its symmetric window: argument i of rank r
// is at the same offset in every rank's window, and the address of rank r's copy is the
// kernel's own pointer with the rank tag r + 1 in bits 56..62 (tag 0 is the rank's own GM).
// The World is what a rank sees of the others: their windows, remote reads, writes and atomic
// adds, the signals' waits (a wait that can never end, because every core of every rank waits,
// is a deadlock naming every wait), syncall.
#pragma once

#include "runtime/Program.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace pto::rt {

inline constexpr unsigned kRankShift = 56;
inline constexpr uint64_t kRankTagMask = uint64_t{0x7F} << kRankShift;
inline constexpr uint32_t kMaxRanks = 126; // tags 1..126; 127 is the poison region's top byte
/// The byte distance between two ranks' copies of an address (the `rank_stride` parameter).
inline constexpr uint64_t kRankStride = uint64_t{1} << kRankShift;

/// The rank an address names: nullopt for the core's own GM (tag 0), else the tag minus one.
inline std::optional<uint32_t> rankTagOf(uint64_t addr) {
  const uint64_t tag = (addr & kRankTagMask) >> kRankShift;
  if (tag == 0 || (addr >> kRegionShift) == kPoisonRegion) return std::nullopt;
  return static_cast<uint32_t>(tag - 1);
}

/// The signal compare modes on i32 values, by isa::CmpMode (eq, ne, lt, le, gt, ge).
bool signalHolds(int32_t signal, unsigned cmp, int32_t value);
const char* signalCmpName(unsigned cmp);

/// npu model: the cycles a TLOAD or TSTORE spends on the link when its GM side is another rank's
/// window (0 otherwise): the link's latency plus the bytes at its bandwidth.
uint64_t linkCycles(const TileInst& t, const Core& c);

/// What a rank sees of the others: their windows, the signal ops, syncall, and (when another
/// process holds a rank's memory) remote GM reads, writes and atomic adds. Two worlds: the
/// in-process one (LocalWorld, every rank a thread of this process) and one over MPI
/// (runtime/MpiWorld.h, every rank a process; built when CMake finds MPI).
class World {
public:
  explicit World(uint32_t ranks) : ranks_(ranks) {}
  virtual ~World() = default;
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  uint32_t ranks() const { return ranks_; }

  /// A rank's launch: its arguments' regions, its program (for source locations) and how many
  /// cores it runs. Blocks until every rank has joined; an error when one failed first. A world
  /// may move the arguments into memory other ranks reach (the regions' data then point there).
  virtual std::optional<std::string> join(uint32_t rank, std::vector<GmRegion>& regions,
                                          const Program* prog, uint32_t cores) = 0;
  /// A rank failed before joining, or one of its cores failed: the others stop waiting.
  virtual void abort(uint32_t rank, const std::string& why) = 0;
  /// A core ended (its block returned or failed).
  virtual void coreDone() = 0;

  /// The regions of rank `r`'s window (valid once every rank has joined), or null. A region of
  /// a rank whose memory is in another process has no data (reach it through remote()).
  virtual const std::vector<GmRegion>* regionsOf(uint32_t r) const = 0;

  // The signal ops of a core (COMM_NOTIFY / COMM_WAIT / COMM_TEST / COMM_SYNCALL); false with
  // c.error set. `at` is the op's .text offset (for the deadlock report).
  virtual bool notify(Core& c, uint64_t addr, int32_t value, unsigned mode) = 0;
  virtual bool wait(Core& c, uint64_t addr, int32_t value, unsigned cmp, uint32_t at) = 0;
  virtual bool test(Core& c, uint64_t addr, int32_t value, unsigned cmp, bool& holds) = 0;
  virtual bool syncall(Core& c, uint32_t at) = 0;

  /// Bytes [off, off + bytes) of argument `region` of rank `rank`, checked to be inside it, when
  /// the core cannot reach them directly (a rank of another process, or an atomic add that
  /// must be atomic across processes): a staging copy the op reads or writes (c.remote), sent
  /// when the op ends (finishRemote). `rows`, when given, are the rows the op touches.
  virtual uint8_t* remote(Core& c, uint32_t rank, size_t region, uint64_t off, uint64_t bytes,
                          bool write, const GmRows* rows);
  /// The end of an op that staged remote bytes: its writes and atomic adds are done at their
  /// ranks (and complete there) before the core goes on; false with c.error set.
  virtual bool finishRemote(Core& c);
  /// Whether an atomic add to this process's own GM goes through remote() (other processes add
  /// to the same memory with their own atomics).
  virtual bool atomicsThroughWorld() const { return false; }

  /// npu model: the link between two ranks (docs/npu-model.md, "Link model").
  static constexpr double kLinkBytesPerCycle = 56.0 * 1e9 / 1.85e9; // 56 GB/s at 1.85 GHz
  static constexpr uint64_t kLinkLatencyCycles = 3700;              // 2 us at 1.85 GHz

private:
  uint32_t ranks_;
};

/// The ranks as threads of one process: one lock over every signal, waits on a condition
/// variable, syncall and the deadlock check counting the cores of every rank.
class LocalWorld final : public World {
public:
  explicit LocalWorld(uint32_t ranks);

  std::optional<std::string> join(uint32_t rank, std::vector<GmRegion>& regions,
                                  const Program* prog, uint32_t cores) override;
  void abort(uint32_t rank, const std::string& why) override;
  void coreDone() override;
  const std::vector<GmRegion>* regionsOf(uint32_t r) const override {
    return r < ranks() ? &regions_[r] : nullptr;
  }
  bool notify(Core& c, uint64_t addr, int32_t value, unsigned mode) override;
  bool wait(Core& c, uint64_t addr, int32_t value, unsigned cmp, uint32_t at) override;
  bool test(Core& c, uint64_t addr, int32_t value, unsigned cmp, bool& holds) override;
  bool syncall(Core& c, uint32_t at) override;

private:
  struct Waiter {
    bool waiting = false;
    bool syncall = false;
    uint32_t rank = 0, block = 0, at = 0;
    const int32_t* signal = nullptr;
    uint64_t addr = 0;
    int32_t value = 0;
    unsigned cmp = 0;
    uint64_t generation = 0; // syncall: the round it waits for
  };
  int32_t* signalPtr(Core& c, uint64_t addr, bool write);
  bool blockUntil(std::unique_lock<std::mutex>& lock, Core& c, Waiter& w);
  bool satisfied(const Waiter& w) const;
  std::string describe(const Waiter& w) const;
  std::string deadlockReport() const;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<GmRegion>> regions_;
  std::vector<const Program*> programs_;
  uint32_t joined_ = 0;
  uint64_t live_ = 0;    // cores that have not ended
  uint64_t waiting_ = 0; // cores blocked in wait or syncall
  std::vector<Waiter*> waiters_;
  bool failed_ = false, deadlock_ = false;
  std::string failure_;
  // syncall: cores arrived in this round, the round, and the npu time the last arrived at
  uint64_t arrived_ = 0, generation_ = 0, syncallTime_ = 0, roundTime_ = 0;
  std::vector<std::pair<const int32_t*, uint64_t>> notifyTimes_; // npu model: signal -> time
};

/// "%sig[0] of rank 1": the argument and element a signal address names in `regions` (the
/// window of `rank`, or of the rank the address's tag names), or the address in hex.
std::string signalName(const World& w, uint64_t addr, uint32_t rank);

/// "  rank 1 block 0 at k.pto:45:5: twait on %sig[0] of rank 1 ge 3 (it is 2)": one line of a
/// deadlock report.
std::string waitLine(const World& w, const Program* prog, uint32_t rank, uint32_t block,
                     uint32_t at, uint64_t addr, int32_t value, unsigned cmp, int32_t seen);

} // namespace pto::rt
