// The ranks of a multi-device run as processes over MPI (runtime/MpiWorld.h,
// docs/multi-device.md "Under mpirun").
#include "runtime/MpiWorld.h"

#include "isa/Fixpipe.h"
#include "runtime/Program.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

namespace pto::rt {

// The control window: the same layout on every rank, in int64 words. The header and the wait
// slots are used on rank 0 only (the run's shared state), the region table and the notify
// times on every rank (its own).
namespace {
constexpr int kHeaderWords = 16;
constexpr int kSlotWords = 8;
constexpr int64_t kTimeSlots = 1024;
enum SlotWord { kKind, kBlockAt, kAddr, kValue, kCmp, kSeen, kGen };
enum SlotKind : int64_t { kFree = 0, kSignalWait = 1, kSyncallWait = 2 };

/// Sleeps between polls: 20 us at first, up to 1 ms (the ranks may share few cores).
void backoff(unsigned& polls) {
  const unsigned us = std::min(1000u, 20u << std::min(polls, 6u));
  ++polls;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}
} // namespace

/// The run's shared state (rank 0's header words 1..14): every change under the control lock
/// (words 0 and 15).
struct MpiWorld::Header {
  int64_t ticket, live, waiting, epoch, arrived, generation, roundTime, syncallTime, confirmEpoch,
      confirmCount, failed, joined, deadlock, spare[2], serving;

  /// Every live core is at the syncall: release the round (its time is the latest arrival's).
  void releaseRound() {
    arrived = 0;
    syncallTime = roundTime;
    roundTime = 0;
    ++generation;
  }
};

/// What a waiting core publishes in its slot (for the deadlock report).
struct MpiWorld::WaitSlot {
  int64_t kind = kFree, blockAt = 0, addr = 0, value = 0, cmp = 0, seen = 0, gen = 0, spare = 0;
};

std::unique_ptr<MpiWorld> MpiWorld::start(int* argc, char*** argv, std::string& error) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    error = "MPI_Init_thread failed";
    return nullptr;
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    error = "this MPI library does not let threads call it (MPI_THREAD_SERIALIZED)";
    MPI_Finalize();
    return nullptr;
  }
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n > static_cast<int>(kMaxRanks)) {
    error = "mpirun started " + std::to_string(n) + " processes; a run has at most " +
            std::to_string(kMaxRanks) + " ranks";
    MPI_Finalize();
    return nullptr;
  }
  return std::unique_ptr<MpiWorld>(
      new MpiWorld(static_cast<uint32_t>(me), static_cast<uint32_t>(n)));
}

MpiWorld::~MpiWorld() {
  if (ctl_ != MPI_WIN_NULL) {
    MPI_Barrier(MPI_COMM_WORLD); // no rank reaches into a window any more
    if (data_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(data_);
      MPI_Win_free(&data_);
    }
    MPI_Win_unlock_all(ctl_);
    MPI_Win_free(&ctl_);
  }
  MPI_Finalize();
}

uint32_t MpiWorld::firstFailing(bool failed) {
  int mine = failed ? static_cast<int>(me_) : static_cast<int>(ranks()), first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return static_cast<uint32_t>(first);
}

void MpiWorld::open(size_t params, uint32_t blocks) {
  params_ = params;
  blocks_ = std::max(1u, blocks);
  regionTable_ = kHeaderWords + int64_t{ranks()} * blocks_ * kSlotWords;
  timeTable_ = regionTable_ + 2 * static_cast<int64_t>(params);
  const int64_t words = timeTable_ + 2 * kTimeSlots;
  MPI_Win_allocate(static_cast<MPI_Aint>(words * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &ctlBase_,
                   &ctl_);
  std::memset(ctlBase_, 0, static_cast<size_t>(words * 8));
  MPI_Barrier(MPI_COMM_WORLD); // every control window is zero before anyone writes to it
  MPI_Win_lock_all(0, ctl_);
}

/// The control lock: a ticket lock on rank 0 (word 0 the next ticket, word 15 the ticket being
/// served), taken and released with MPI_Fetch_and_op.
void MpiWorld::lockCtl() {
  int64_t one = 1, none = 0, ticket = 0, serving = -1;
  MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, 0, 0, MPI_SUM, ctl_);
  MPI_Win_flush(0, ctl_);
  for (unsigned polls = 0;; ++polls) {
    MPI_Fetch_and_op(&none, &serving, MPI_INT64_T, 0, kHeaderWords - 1, MPI_NO_OP, ctl_);
    MPI_Win_flush(0, ctl_);
    if (serving == ticket) return;
    if (polls > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void MpiWorld::unlockCtl() {
  int64_t one = 1;
  MPI_Accumulate(&one, 1, MPI_INT64_T, 0, kHeaderWords - 1, 1, MPI_INT64_T, MPI_SUM, ctl_);
  MPI_Win_flush(0, ctl_);
}

MpiWorld::Header MpiWorld::readHeader() {
  Header h{};
  MPI_Get(&h.live, kHeaderWords - 2, MPI_INT64_T, 0, 1, kHeaderWords - 2, MPI_INT64_T, ctl_);
  MPI_Win_flush(0, ctl_);
  return h;
}

void MpiWorld::writeHeader(const Header& h) {
  MPI_Put(&h.live, kHeaderWords - 2, MPI_INT64_T, 0, 1, kHeaderWords - 2, MPI_INT64_T, ctl_);
  MPI_Win_flush(0, ctl_);
}

int64_t MpiWorld::slotDisp(uint32_t rank, uint32_t block) const {
  return kHeaderWords + (int64_t{rank} * blocks_ + std::min(block, blocks_ - 1)) * kSlotWords;
}

std::optional<std::string> MpiWorld::join(uint32_t rank, std::vector<GmRegion>& regions,
                                          const Program* prog, uint32_t cores) {
  std::lock_guard<std::mutex> lock(mu_);
  prog_ = prog;
  // The arguments move into this rank's part of the data window, 64-byte aligned.
  std::vector<int64_t> table(2 * params_, 0);
  uint64_t total = 0;
  for (size_t i = 0; i < regions.size() && i < params_; ++i) {
    table[2 * i] = static_cast<int64_t>((total + 63) / 64 * 64);
    table[2 * i + 1] = static_cast<int64_t>(regions[i].data ? regions[i].size : 0);
    total = static_cast<uint64_t>(table[2 * i] + table[2 * i + 1]);
  }
  uint8_t* base = nullptr;
  MPI_Win_allocate(static_cast<MPI_Aint>(std::max<uint64_t>(total, 1)), 1, MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &data_);
  for (size_t i = 0; i < regions.size() && i < params_; ++i)
    if (regions[i].data && regions[i].size > 0) {
      uint8_t* to = base + table[2 * i];
      std::memcpy(to, regions[i].data, regions[i].size);
      moved_.push_back({regions[i].data, to, regions[i].size});
      regions[i].data = to;
    }
  regions_[rank] = regions;
  MPI_Win_lock_all(0, data_);
  if (!table.empty()) {
    MPI_Put(table.data(), static_cast<int>(table.size()), MPI_INT64_T, static_cast<int>(me_),
            regionTable_, static_cast<int>(table.size()), MPI_INT64_T, ctl_);
    MPI_Win_flush(static_cast<int>(me_), ctl_);
  }
  lockCtl();
  Header h = readHeader();
  h.live += cores;
  ++h.joined;
  writeHeader(h);
  unlockCtl();
  MPI_Barrier(MPI_COMM_WORLD); // every rank's cores and arguments are known
  // Every rank's arguments: the names and types are the kernel's, the sizes and places in the
  // window each rank's own.
  bases_.assign(ranks(), std::vector<MPI_Aint>(params_, 0));
  for (uint32_t r = 0; r < ranks(); ++r) {
    std::vector<int64_t> theirs(2 * params_, 0);
    if (!theirs.empty()) {
      MPI_Get(theirs.data(), static_cast<int>(theirs.size()), MPI_INT64_T, static_cast<int>(r),
              regionTable_, static_cast<int>(theirs.size()), MPI_INT64_T, ctl_);
      MPI_Win_flush(static_cast<int>(r), ctl_);
    }
    if (r != me_) {
      regions_[r] = regions;
      for (size_t i = 0; i < regions_[r].size(); ++i) {
        regions_[r][i].data = nullptr;
        regions_[r][i].size = i < params_ ? static_cast<uint64_t>(theirs[2 * i + 1]) : 0;
      }
    }
    for (size_t i = 0; i < params_; ++i)
      bases_[r][i] = static_cast<MPI_Aint>(theirs[2 * i]);
  }
  joined_ = true;
  return std::nullopt;
}

void MpiWorld::abort(uint32_t rank, const std::string&) {
  if (ctl_ == MPI_WIN_NULL) return;
  std::lock_guard<std::mutex> lock(mu_);
  lockCtl();
  Header h = readHeader();
  if (!h.failed) {
    h.failed = rank + 1;
    ++h.epoch;
    writeHeader(h);
  }
  unlockCtl();
}

void MpiWorld::coreDone() {
  std::lock_guard<std::mutex> lock(mu_);
  lockCtl();
  Header h = readHeader();
  if (h.live > 0) --h.live;
  if (h.arrived > 0 && h.arrived >= h.live) // the cores left at a syncall are all there
    h.releaseRound();
  ++h.epoch;
  writeHeader(h);
  unlockCtl();
}

std::optional<uint32_t> MpiWorld::finish() {
  // A launch that failed before it joined (after abort()) still takes part in the others'
  // join, with no arguments and no cores: the collectives match and nothing hangs.
  if (!joined_) {
    std::vector<GmRegion> none;
    join(me_, none, nullptr, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::lock_guard<std::mutex> lock(mu_);
  lockCtl();
  const Header h = readHeader();
  unlockCtl();
  for (const Moved& m : moved_)
    std::memcpy(m.buffer, m.window, m.size);
  if (!h.failed) return std::nullopt;
  return static_cast<uint32_t>(h.failed - 1);
}

void MpiWorld::printInRankOrder(const std::string& text) {
  const int n = static_cast<int>(ranks());
  int size = static_cast<int>(std::min<size_t>(text.size(), INT_MAX / kMaxRanks));
  std::vector<int> sizes(static_cast<size_t>(n)), at(static_cast<size_t>(n));
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (me_ == 0) {
    for (int r = 0, total = 0; r < n; total += sizes[static_cast<size_t>(r)], ++r)
      at[static_cast<size_t>(r)] = total;
    all.resize(static_cast<size_t>(at.back() + sizes.back()));
  }
  MPI_Gatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), at.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (me_ == 0) fwrite(all.data(), 1, all.size(), stdout);
}

// ------------------------------------------------------------------ signals

int32_t MpiWorld::readSignal(const GmPlace& p) {
  uint32_t none = 0, value = 0;
  MPI_Fetch_and_op(&none, &value, MPI_UINT32_T, static_cast<int>(p.rank), dispOf(p), MPI_NO_OP,
                   data_);
  MPI_Win_flush(static_cast<int>(p.rank), data_);
  return static_cast<int32_t>(value);
}

namespace {
/// The notify-time table's key of a signal: its argument and offset (never 0).
int64_t timeKey(const GmPlace& p) {
  return static_cast<int64_t>(((p.region + 1) << kRegionShift) | p.offset);
}
} // namespace

/// npu model: the latest time a notify reached the signal at `p`, kept in its rank's table
/// (open addressing on the key; under the control lock).
void MpiWorld::noteNotifyTime(const GmPlace& p, uint64_t time) {
  const int64_t key = timeKey(p);
  const int target = static_cast<int>(p.rank);
  for (int64_t i = 0; i < kTimeSlots; ++i) {
    const int64_t disp = timeTable_ + 2 * ((key * 31 + i) % kTimeSlots);
    int64_t entry[2] = {0, 0};
    MPI_Get(entry, 2, MPI_INT64_T, target, disp, 2, MPI_INT64_T, ctl_);
    MPI_Win_flush(target, ctl_);
    if (entry[0] != 0 && entry[0] != key) continue;
    entry[0] = key;
    entry[1] = std::max(entry[1], static_cast<int64_t>(time));
    MPI_Put(entry, 2, MPI_INT64_T, target, disp, 2, MPI_INT64_T, ctl_);
    MPI_Win_flush(target, ctl_);
    return;
  }
}

uint64_t MpiWorld::notifyTime(const GmPlace& p) {
  const int64_t key = timeKey(p);
  const int target = static_cast<int>(p.rank);
  for (int64_t i = 0; i < kTimeSlots; ++i) {
    int64_t entry[2] = {0, 0};
    MPI_Get(entry, 2, MPI_INT64_T, target, timeTable_ + 2 * ((key * 31 + i) % kTimeSlots), 2,
            MPI_INT64_T, ctl_);
    MPI_Win_flush(target, ctl_);
    if (entry[0] == key) return static_cast<uint64_t>(entry[1]);
    if (entry[0] == 0) break;
  }
  return 0;
}

bool MpiWorld::notify(Core& c, uint64_t addr, int32_t value, unsigned mode) {
  auto p = c.locate(addr, 4, "signal", true);
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (c.simCost > 0) { // npu model: the notify reaches a peer's signal after the link's latency
    lockCtl();
    noteNotifyTime(*p, c.simStart + c.simCost + (rankTagOf(addr) ? kLinkLatencyCycles : 0));
    unlockCtl();
  }
  // The add wraps around as the hardware's i32 add: unsigned words.
  const auto bits = static_cast<uint32_t>(value);
  MPI_Accumulate(&bits, 1, MPI_UINT32_T, static_cast<int>(p->rank), dispOf(*p), 1, MPI_UINT32_T,
                 mode == 1 ? MPI_SUM : MPI_REPLACE, data_);
  MPI_Win_flush(static_cast<int>(p->rank), data_);
  return true;
}

bool MpiWorld::test(Core& c, uint64_t addr, int32_t value, unsigned cmp, bool& holds) {
  auto p = c.locate(addr, 4, "signal", false);
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  holds = signalHolds(readSignal(*p), cmp, value);
  MPI_Win_sync(data_); // what the notifier stored before it is seen here
  return true;
}

std::string MpiWorld::deadlockReport(const Header& h) {
  std::string text = "deadlock: every core of every rank waits, and nothing will change:";
  const int count = static_cast<int>(int64_t{ranks()} * blocks_ * kSlotWords);
  std::vector<int64_t> slots(static_cast<size_t>(count));
  MPI_Get(slots.data(), count, MPI_INT64_T, 0, kHeaderWords, count, MPI_INT64_T, ctl_);
  MPI_Win_flush(0, ctl_);
  for (uint32_t r = 0; r < ranks(); ++r)
    for (uint32_t b = 0; b < blocks_; ++b) {
      const int64_t* s = &slots[(size_t{r} * blocks_ + b) * kSlotWords];
      const auto at = static_cast<uint32_t>(s[kBlockAt] & 0xFFFFFFFF);
      if (s[kKind] == kSignalWait) {
        text += "\n" + waitLine(*this, prog_, r, b, at, static_cast<uint64_t>(s[kAddr]),
                                static_cast<int32_t>(s[kValue]), static_cast<unsigned>(s[kCmp]),
                                static_cast<int32_t>(s[kSeen]));
      } else if (s[kKind] == kSyncallWait) {
        const std::string where = prog_ ? prog_->locationAt(at) : std::string();
        text += "\n  rank " + std::to_string(r) + " block " + std::to_string(b) +
                (where.empty() ? "" : " at " + where) + ": syncall (" + std::to_string(h.arrived) +
                " of " + std::to_string(h.live) + " cores arrived)";
      }
    }
  return text;
}

/// In a state where every live core of every rank waits (waiting == live), a core whose wait
/// does not hold confirms it once for that state (its epoch); the core whose confirmation
/// completes the count declares the deadlock. No core runs in such a state, so no signal
/// changes in it: every waiter having seen its own wait fail in it is a deadlock.
bool MpiWorld::confirmDeadlock(Core& c, Header& h, uint64_t& confirmed, int32_t seen) {
  if (h.waiting != h.live || confirmed == static_cast<uint64_t>(h.epoch)) return false;
  confirmed = static_cast<uint64_t>(h.epoch);
  const int64_t wide = seen;
  MPI_Put(&wide, 1, MPI_INT64_T, 0, slotDisp(c.rank, c.blockIdx) + kSeen, 1, MPI_INT64_T, ctl_);
  MPI_Win_flush(0, ctl_);
  h.confirmCount = h.confirmEpoch == h.epoch ? h.confirmCount + 1 : 1;
  h.confirmEpoch = h.epoch;
  if (h.confirmCount < h.waiting) return false;
  h.failed = c.rank + 1;
  h.deadlock = 1;
  c.error = deadlockReport(h);
  return true;
}

/// Blocks the core until `holds` (evaluated with the header under the control lock), the run
/// failed elsewhere (false, "stopped: ..."), or every core waits and none can go on (false,
/// the deadlock report). The slot tells the others what the core waits for.
bool MpiWorld::waitLoop(Core& c, const WaitSlot& slot,
                        const std::function<bool(const Header&)>& holds) {
  const int64_t disp = slotDisp(c.rank, c.blockIdx);
  {
    std::lock_guard<std::mutex> lock(mu_);
    lockCtl();
    Header h = readHeader();
    ++h.waiting;
    ++h.epoch;
    MPI_Put(&slot, kSlotWords, MPI_INT64_T, 0, disp, kSlotWords, MPI_INT64_T, ctl_);
    writeHeader(h);
    unlockCtl();
  }
  uint64_t confirmed = UINT64_MAX;
  bool ok = true;
  for (unsigned polls = 0;; backoff(polls)) {
    std::lock_guard<std::mutex> lock(mu_);
    lockCtl();
    Header h = readHeader();
    bool done = false;
    if (h.failed) {
      if (c.error.empty()) c.error = "stopped: rank " + std::to_string(h.failed - 1) + " failed";
      ok = false;
      done = true;
    } else if (holds(h)) {
      done = true;
    } else if (confirmDeadlock(c, h, confirmed, static_cast<int32_t>(slot.seen))) {
      ok = false;
      done = true;
    }
    if (done) {
      --h.waiting;
      ++h.epoch;
      const WaitSlot free{};
      MPI_Put(&free, kSlotWords, MPI_INT64_T, 0, disp, kSlotWords, MPI_INT64_T, ctl_);
    }
    writeHeader(h);
    unlockCtl();
    if (done) break;
  }
  return ok;
}

bool MpiWorld::wait(Core& c, uint64_t addr, int32_t value, unsigned cmp, uint32_t at) {
  auto p = c.locate(addr, 4, "signal", false);
  if (!p) return false;
  WaitSlot slot;
  slot.kind = kSignalWait;
  slot.blockAt = at;
  slot.addr = static_cast<int64_t>(addr);
  slot.value = value;
  slot.cmp = cmp;
  int32_t seen = 0;
  auto holds = [&](const Header&) {
    seen = readSignal(*p);
    slot.seen = seen;
    return signalHolds(seen, cmp, value);
  };
  if (!waitLoop(c, slot, holds)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  MPI_Win_sync(data_); // what the notifier stored before it is seen here
  if (c.simCost > 0) {
    lockCtl();
    c.simNotBefore = std::max(c.simNotBefore, notifyTime(*p));
    unlockCtl();
  }
  return true;
}

bool MpiWorld::syncall(Core& c, uint32_t at) {
  WaitSlot slot;
  slot.kind = kSyncallWait;
  slot.blockAt = at;
  {
    std::lock_guard<std::mutex> lock(mu_);
    lockCtl();
    Header h = readHeader();
    const auto now = static_cast<int64_t>(c.simStart + c.simCost + kLinkLatencyCycles);
    h.roundTime = std::max(h.roundTime, now);
    slot.gen = h.generation;
    const bool last = ++h.arrived == h.live; // the last core to arrive releases the round
    if (last) {
      h.releaseRound();
      ++h.epoch;
    }
    writeHeader(h);
    unlockCtl();
    if (last) {
      c.simNotBefore = std::max(c.simNotBefore, static_cast<uint64_t>(h.syncallTime));
      MPI_Win_sync(data_);
      return true;
    }
  }
  uint64_t released = 0;
  auto holds = [&](const Header& h) {
    released = static_cast<uint64_t>(h.syncallTime);
    return h.generation > slot.gen;
  };
  if (!waitLoop(c, slot, holds)) return false;
  c.simNotBefore = std::max(c.simNotBefore, released);
  std::lock_guard<std::mutex> lock(mu_);
  MPI_Win_sync(data_);
  return true;
}

// ------------------------------------------------------------------ remote GM

uint8_t* MpiWorld::remote(Core& c, uint32_t rank, size_t region, uint64_t off, uint64_t bytes,
                          bool write, const GmRows* rows) {
  if (bytes > INT_MAX) {
    c.error = "an access of " + std::to_string(bytes) +
              " bytes to another rank's window (at most 2 GiB under mpirun)";
    return nullptr;
  }
  RemoteStage s;
  s.place = {rank, region, off};
  s.write = write;
  if (rows && rows->rows > 0 && rows->rowBytes > 0)
    s.rows = *rows;
  else
    s.rows = GmRows{1, bytes, bytes};
  s.data.assign(std::max<uint64_t>(bytes, 1), 0);
  if (rows && rows->atomicAdd && write) {
    // The op writes its addends; finishRemote adds them at the rank. Both the op's rows and
    // the stage's own copy say so: the copy alone decides, at the end, between an add and a
    // plain put (a put there would overwrite the other ranks' adds).
    rows->staged = true;
    s.rows.atomicAdd = true;
    s.rows.dtype = rows->dtype;
    s.rows.staged = true;
  } else if (bytes > 0) {
    // A write reads the rows first: a row whose last byte is half written (4-bit elements)
    // keeps the other half.
    std::lock_guard<std::mutex> lock(mu_);
    const int target = static_cast<int>(rank);
    for (uint64_t r = 0; r < s.rows.rows; ++r)
      MPI_Get(s.data.data() + r * s.rows.stride, static_cast<int>(s.rows.rowBytes), MPI_BYTE,
              target, dispOf(s.place) + static_cast<MPI_Aint>(r * s.rows.stride),
              static_cast<int>(s.rows.rowBytes), MPI_BYTE, data_);
    MPI_Win_flush(target, data_);
  }
  c.remote.push_back(std::move(s));
  return c.remote.back().data.data();
}

/// The staged addends of an atomic add, added at the rank row by row under the control lock
/// (every atomic add of the run takes it, as the in-process ones take one mutex): read, add in
/// the element type (isa/Fixpipe.h, as on one rank), write back, flushed.
void MpiWorld::atomicAddRows(const RemoteStage& s) {
  const unsigned eb = std::max(1u, isa::bitWidth(s.rows.dtype) / 8);
  const int target = static_cast<int>(s.place.rank);
  std::vector<uint8_t> row(s.rows.rowBytes);
  lockCtl();
  for (uint64_t r = 0; r < s.rows.rows; ++r) {
    const MPI_Aint disp = dispOf(s.place) + static_cast<MPI_Aint>(r * s.rows.stride);
    const int n = static_cast<int>(s.rows.rowBytes);
    MPI_Get(row.data(), n, MPI_BYTE, target, disp, n, MPI_BYTE, data_);
    MPI_Win_flush(target, data_);
    for (uint64_t j = 0; j + eb <= s.rows.rowBytes; j += eb) {
      uint64_t old = 0, addend = 0;
      std::memcpy(&old, row.data() + j, eb);
      std::memcpy(&addend, s.data.data() + r * s.rows.stride + j, eb);
      const uint64_t sum = isa::fix::atomicAdd(s.rows.dtype, old, addend);
      std::memcpy(row.data() + j, &sum, eb);
    }
    MPI_Put(row.data(), n, MPI_BYTE, target, disp, n, MPI_BYTE, data_);
    MPI_Win_flush(target, data_);
  }
  unlockCtl();
}

bool MpiWorld::finishRemote(Core& c) {
  if (c.error.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const RemoteStage& s : c.remote) {
      if (!s.write) continue;
      if (s.rows.atomicAdd && s.rows.staged) {
        atomicAddRows(s);
        continue;
      }
      const int target = static_cast<int>(s.place.rank);
      for (uint64_t r = 0; r < s.rows.rows; ++r)
        MPI_Put(s.data.data() + r * s.rows.stride, static_cast<int>(s.rows.rowBytes), MPI_BYTE,
                target, dispOf(s.place) + static_cast<MPI_Aint>(r * s.rows.stride),
                static_cast<int>(s.rows.rowBytes), MPI_BYTE, data_);
      MPI_Win_flush(target, data_); // done at the rank before the core goes on
    }
  }
  c.remote.clear();
  return true;
}

} // namespace pto::rt
