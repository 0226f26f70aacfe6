// The npu backend: a model of one AI core (docs/npu-model.md). The scalar unit interprets the
// scalar code in program order and issues tile and sync ops into one in-order queue per pipe
// (V, M, MTE1, MTE2, MTE3, FIX); the pipes run their queues in simulated time, costed by
// runtime/npu/Cost.h. set_flag / wait_flag / pipe_barrier block and release as on the NPU.
// Ops execute (with the cpu kernels, so results are the same where ordering is correct) when
// their pipe reaches them, in simulated-time order. Vector clocks give happens-before; two pipes
// touching overlapping bytes without it is a race, and a state where nothing can move is a
// deadlock. Both are errors naming the source lines involved.
#pragma once

#include "runtime/Program.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace pto::rt::npu {

inline constexpr unsigned kPipes = 8; // indexed by isa::Pipe (PIPE_ALL unused)

using OpRecord = NpuOp;
using BlockReport = NpuBlock;

class Simulator {
public:
  /// `maxRecords`: op records kept for the trace and profile (the summary is always complete).
  Simulator(const Program& prog, bool record, size_t maxRecords);

  // The executor interface of interpret() (runtime/ScalarInterp.h).
  bool tile(Core& c, const TileInst& t, const MOp& m);
  bool sync(Core& c, const SyncInst& s, const MOp& m);
  bool comm(Core& c, const MOp& m);

  /// Drains every pipe after the kernel's RET (a deadlock is found here too).
  bool finish(Core& c);

  /// The op an error belongs to, when it is not the scalar unit's current instruction.
  std::optional<uint32_t> errorAt;
  BlockReport report;

private:
  using Clock = std::array<uint32_t, kPipes>;
  enum class Kind : uint8_t { Tile, Set, Wait, Barrier };
  struct Entry {
    Kind kind = Kind::Tile;
    const TileInst* tile = nullptr;
    std::shared_ptr<const TileInst> resolved; // owns `tile` when its operands were placed at issue
    const SyncInst* sync = nullptr;
    uint32_t eventId = 0;
    uint32_t textOffset = 0;
    uint64_t issueAt = 0, seq = 0;
    Clock hb{}; // the scalar unit's clock when it issued the op
    std::array<uint64_t, kNumRegs> regs{};
  };
  struct PendingSet {
    uint64_t time = 0;
    Clock clock{};
    uint32_t textOffset = 0;
    int64_t flow = -1;
  };
  struct Range {        // a byte range of a buffer, or a strided GM rectangle (rows x rowBytes)
    uint32_t space = 0; // 0..6 = isa::Loc, 8 + region = GM argument
    uint64_t base = 0, rows = 1, rowBytes = 0, stride = 0;
  };
  struct Access {
    Range range;
    bool write = false;
    uint8_t pipe = 0;
    uint32_t stamp = 0;
    uint32_t textOffset = 0;
    const char* name = "";
  };
  using EventKey = std::tuple<uint8_t, uint8_t, uint32_t>;

  const Program& prog_;
  isa::Arch arch_;
  bool record_;
  size_t maxRecords_;
  std::array<bool, kPipes> memoryPipes_{}; // pipes some tile op of the program runs on
  std::optional<std::tuple<uint8_t, uint8_t, uint32_t>>
      scalarWaitsFor_; // the scalar unit's wait_flag
  std::array<std::deque<Entry>, kPipes> queues_;
  std::array<uint64_t, kPipes> freeAt_{};
  std::array<Clock, kPipes> clock_{};
  std::array<uint64_t, kPipes> lastStart_{};
  uint64_t scalarTime_ = 0, seq_ = 0, scalarSeen_ = 0;
  int64_t nextFlow_ = 0;
  std::map<EventKey, std::deque<PendingSet>> pending_;
  std::map<EventKey, uint32_t> everSet_; // text offset of the last set_flag issued per event
  static constexpr uint32_t kCoreSyncIds = 32;
  std::array<std::deque<uint64_t>, kCoreSyncIds> flagTimes_; // SYNC_SETs not yet waited on
  std::array<uint64_t, kCoreSyncIds> bufFreeAt_{};           // last RLS_BUF per buffer id
  std::vector<Access> accesses_;
  size_t pruneAt_ = 256;
  std::set<std::pair<uint32_t, uint32_t>> warned_; // GM hazards reported (by the two ops)

  bool coreSync(Core& c, const SyncInst& s, const MOp& m);
  bool issue(Core& c, uint8_t pipe, Entry e, const MOp& m);
  int step(Core& c);           // runs the earliest head op: 1 ran, 0 nothing can run, -1 error
  void catchUp(const Core& c); // charges the scalar instructions run since the last call
  bool runUntil(Core& c, const std::function<bool()>& done, std::optional<uint32_t> blockedAt);
  bool drained() const;
  std::optional<uint64_t> startOf(uint8_t pipe) const;
  bool execute(Core& c, uint8_t pipe, Entry& e, uint64_t start);
  bool executeTile(Core& c, uint8_t pipe, Entry& e);
  bool checkRaces(Core& c, uint8_t pipe, const std::vector<std::pair<Range, bool>>& touched,
                  const Entry& e);
  void prune();
  void addRecord(const OpRecord& r);
  std::string deadlockMessage(std::optional<uint32_t>& at) const;
  std::string where(uint32_t textOffset) const { return prog_.locationAt(textOffset); }
  std::vector<std::pair<Range, bool>> footprint(const TileInst& t, const Core& c) const;
};

} // namespace pto::rt::npu
