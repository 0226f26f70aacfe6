// One block of a kernel with cross-core pipes runs as a cluster (docs/pipes.md): the cube core
// (AIC) and two vector cores (AIV0, AIV1), each a Core with its own local buffers and registers,
// sharing GM. Each core runs on its own thread; the pipe ops hand tiles over through rings of
// slots with the hardware's handshake: a push waits for a free slot, a pop for a written one,
// a free (A5) gives the slot back. When every core that has not finished waits, the cluster is
// deadlocked and each waiting core fails with what it waits for.
#pragma once

#include "isa/CrossCore.h"
#include "runtime/Program.h"

#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pto::rt {

enum class Lane : uint8_t { Cube = 0, Vec0 = 1, Vec1 = 2 };
inline constexpr unsigned kLanes = 3;
const char* laneName(unsigned lane); // "AIC", "AIV0", "AIV1"

/// Whether a lane runs a function, by the function's flags (obj::kKernelCube / kKernelVector /
/// kSubblockZeroOnly): cube functions run on the AIC, vector functions on the AIVs (AIV0 only
/// when kSubblockZeroOnly), others everywhere.
bool laneRuns(unsigned lane, uint32_t functionFlags);

class Cluster {
public:
  explicit Cluster(isa::Arch arch) : arch_(arch) {}

  // The pipe ops (runtime/cpu/PipeKernels.cpp calls these); false = error (core.error set).
  bool init(Core& c, const TileInst& t);
  bool push(Core& c, const TileInst& t);
  bool pop(Core& c, const TileInst& t);
  bool free(Core& c, const TileInst& t);
  // A pipe whose slots are GM tensor views (gm_slot_tensor): the producer allocates a slot and
  // commits it once written, the consumer takes it and frees it once read; each gives the slot's
  // GM address in the op's B.IOR RegDst.
  bool alloc(Core& c, const TileInst& t);
  bool commit(Core& c, const TileInst& t);
  bool take(Core& c, const TileInst& t);

  /// A lane stops (its function returned or failed): the others may be waiting for it.
  void finish(unsigned lane, bool failed);

private:
  struct TileRec {
    uint8_t split = 0;
    uint8_t producersDone = 0; // lanes (bit per lane) that have written this tile
    uint8_t producersNeeded = 0;
    uint8_t consumers = 0;   // lanes that read it
    uint8_t released = 0;    // consumer lanes done with its slot
    uint64_t readyAt = 0;    // npu model: when the last producer finished writing it
    uint64_t releasedAt = 0; // npu model: when the last consumer released its slot
  };
  struct Channel {
    unsigned flagBase = 0, dir = 1;
    bool configured = false;
    isa::xcore::InitConfig cfg;
    std::array<bool, kLanes> open{};
    std::array<uint64_t, kLanes> gm{};       // each side's GM ring base (virtual address)
    std::array<int64_t, kLanes> localSlot{}; // each consumer's local slot buffer (-1: none)
    std::array<uint64_t, kLanes> pushed{}, popped{}, freed{};
    std::array<uint64_t, kLanes> allocated{}; // GM-entry pipes: slots claimed by TPIPE_ALLOC
    std::deque<TileRec> tiles;                // index base..base+size-1
    uint64_t base = 0;
    std::array<std::deque<uint64_t>, kLanes> held{};  // A5: popped, not yet freed
    std::array<std::vector<uint8_t>, kLanes> slots{}; // local path: each consumer's ring
    std::vector<uint64_t> slotFreeAt;                 // npu model: when each slot was released
  };

  Channel& channel(unsigned flagBase, unsigned dir) { return channels_[{flagBase, dir}]; }
  TileRec* record(Channel& ch, uint64_t i);
  uint8_t consumerLanes(const Channel& ch, uint8_t split) const;
  /// The channel an op of `lane` addresses, as its producer (push, alloc, commit) or consumer
  /// (pop, take, free): nullptr with the core's error set when the lane cannot, the pipe is not
  /// open on this core, or the op does not fit the pipe's kind (tiles or GM entries).
  Channel* channelFor(Core& c, const char* name, const isa::xcore::OpConfig& op, bool producer,
                      bool gmEntries);
  uint8_t producerLanes(unsigned dir, uint8_t split) const;
  void written(Core& c, Channel& ch, TileRec& rec);
  /// Waits until the slot of tile i is free and returns its record (created as the first
  /// producer claims it); nullptr with the core's error set.
  TileRec* claimSlot(std::unique_lock<std::mutex>& lock, Core& c, const char* name, Channel& ch,
                     uint64_t i, uint8_t split);
  TileRec* awaitWritten(std::unique_lock<std::mutex>& lock, Core& c, const char* name, Channel& ch,
                        uint64_t j);
  /// A GM-entry slot's address for this lane: vector core 1 sees the second half of a split slot.
  uint64_t slotAddress(const Core& c, const TileInst& t, const Channel& ch, uint64_t i,
                       uint8_t split) const;
  /// Drops the oldest tiles every reader has released (their slots are free).
  static void dropReleased(Channel& ch);
  /// `lane` is done with tile j's slot (at npu time `at`); the slot is free once all are.
  static void release(Channel& ch, TileRec& rec, uint64_t j, unsigned lane, uint64_t at);
  bool writeSlot(Core& c, const TileInst& t, Channel& ch, uint64_t i, uint8_t split);
  bool readSlot(Core& c, const TileInst& t, Channel& ch, uint64_t j, uint8_t split);
  /// What a waiting lane waits for: `op` for tile `index` (or a free slot for it) of a channel.
  struct WaitInfo {
    const char* op = nullptr; // nullptr: not waiting
    const char* forWhat = "";
    unsigned flagBase = 0, dir = 1;
    uint64_t index = 0;
  };
  /// Blocks until ready() holds; false (core error set) on deadlock or when another lane failed.
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, Core& c, Ready ready, WaitInfo what);
  /// Wakes every waiting lane (the state changed): each checks again and counts itself as
  /// waiting again if it still cannot go on, so a lane woken but not yet running is never
  /// taken for a deadlocked one.
  void wakeAll();
  std::string describe(unsigned lane) const;
  std::string progress(const Channel& ch) const;
  static std::string dirName(unsigned dir) { return dir == isa::xcore::kC2V ? "C2V" : "V2C"; }

  isa::Arch arch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<unsigned, unsigned>, Channel> channels_;
  unsigned waiting_ = 0, finished_ = 0;
  bool deadlock_ = false, failed_ = false;
  std::string deadlockMessage_; // every core's wait when the deadlock was found
  std::array<WaitInfo, kLanes> waitingFor_{};
  std::array<bool, kLanes> counted_{}; // counted in waiting_ since the last wakeAll
  std::array<bool, kLanes> done_{};
};

} // namespace pto::rt
