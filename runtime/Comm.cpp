// The ranks of a multi-device run in one process (runtime/Comm.h, docs/multi-device.md).
#include "runtime/Comm.h"

#include "runtime/ScalarInterp.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace pto::rt {

bool signalHolds(int32_t signal, unsigned cmp, int32_t value) {
  switch (static_cast<isa::CmpMode>(cmp)) {
  case isa::CmpMode::EQ:
    return signal == value;
  case isa::CmpMode::NE:
    return signal != value;
  case isa::CmpMode::LT:
    return signal < value;
  case isa::CmpMode::LE:
    return signal <= value;
  case isa::CmpMode::GT:
    return signal > value;
  default:
    return signal >= value;
  }
}

const char* signalCmpName(unsigned cmp) {
  static constexpr const char* kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return cmp < 6 ? kNames[cmp] : "?";
}

uint8_t* World::remote(Core& c, uint32_t rank, size_t, uint64_t, uint64_t, bool, const GmRows*) {
  if (c.error.empty())
    c.error = "the memory of rank " + std::to_string(rank) + " is not reachable in this run";
  return nullptr;
}

bool World::finishRemote(Core& c) {
  c.remote.clear();
  return true;
}

LocalWorld::LocalWorld(uint32_t ranks) : World(ranks), regions_(ranks), programs_(ranks, nullptr) {}

std::optional<std::string> LocalWorld::join(uint32_t rank, std::vector<GmRegion>& regions,
                                            const Program* prog, uint32_t cores) {
  std::unique_lock<std::mutex> lock(mu_);
  regions_[rank] = regions;
  programs_[rank] = prog;
  live_ += cores;
  ++joined_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return joined_ == ranks() || failed_; });
  if (failed_) return "stopped: " + failure_;
  return std::nullopt;
}

void LocalWorld::abort(uint32_t rank, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_) {
    failed_ = true;
    failure_ = "rank " + std::to_string(rank) + " failed: " + why;
  }
  cv_.notify_all();
}

void LocalWorld::coreDone() {
  std::lock_guard<std::mutex> lock(mu_);
  if (live_ > 0) --live_;
  if (arrived_ > 0 && arrived_ >= live_) { // the cores left at a syncall are all there
    arrived_ = 0;
    syncallTime_ = roundTime_;
    roundTime_ = 0;
    ++generation_;
  }
  cv_.notify_all();
}

int32_t* LocalWorld::signalPtr(Core& c, uint64_t addr, bool write) {
  uint8_t* p = c.translate(addr, 4, "signal", write);
  return reinterpret_cast<int32_t*>(p);
}

bool LocalWorld::notify(Core& c, uint64_t addr, int32_t value, unsigned mode) {
  int32_t* p = signalPtr(c, addr, true);
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  int32_t v = value;
  if (mode == 1) { // atomic add, two's complement wrap-around as the hardware's i32 add
    int32_t old = 0;
    std::memcpy(&old, p, 4);
    v = static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(value));
  }
  std::memcpy(p, &v, 4);
  // npu model: the notify reaches a peer's signal after the link's latency
  const uint64_t arrives = c.simStart + c.simCost + (rankTagOf(addr) ? kLinkLatencyCycles : 0);
  bool found = false;
  for (auto& [sig, t] : notifyTimes_)
    if (sig == p) {
      t = std::max(t, arrives);
      found = true;
    }
  if (!found) notifyTimes_.emplace_back(p, arrives);
  cv_.notify_all();
  return true;
}

bool LocalWorld::test(Core& c, uint64_t addr, int32_t value, unsigned cmp, bool& holds) {
  int32_t* p = signalPtr(c, addr, false);
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  int32_t s = 0;
  std::memcpy(&s, p, 4);
  holds = signalHolds(s, cmp, value);
  return true;
}

bool LocalWorld::satisfied(const Waiter& w) const {
  if (w.syncall) return generation_ > w.generation;
  int32_t s = 0;
  std::memcpy(&s, w.signal, 4);
  return signalHolds(s, w.cmp, w.value);
}

std::string waitLine(const World& world, const Program* prog, uint32_t rank, uint32_t block,
                     uint32_t at, uint64_t addr, int32_t value, unsigned cmp, int32_t seen) {
  std::string where = prog ? prog->locationAt(at) : std::string();
  return "  rank " + std::to_string(rank) + " block " + std::to_string(block) +
         (where.empty() ? "" : " at " + where) + ": twait on " + signalName(world, addr, rank) +
         " " + signalCmpName(cmp) + " " + std::to_string(value) + " (it is " +
         std::to_string(seen) + ")";
}

std::string LocalWorld::describe(const Waiter& w) const {
  if (w.syncall) {
    const Program* prog = programs_[w.rank];
    std::string where = prog ? prog->locationAt(w.at) : std::string();
    return "  rank " + std::to_string(w.rank) + " block " + std::to_string(w.block) +
           (where.empty() ? "" : " at " + where) + ": syncall (" + std::to_string(arrived_) +
           " of " + std::to_string(live_) + " cores arrived)";
  }
  int32_t s = 0;
  std::memcpy(&s, w.signal, 4);
  return waitLine(*this, programs_[w.rank], w.rank, w.block, w.at, w.addr, w.value, w.cmp, s);
}

/// "%sig[0] of rank 1": the argument and element a signal address names (or its address).
std::string signalName(const World& world, uint64_t addr, uint32_t rank) {
  if (auto r = rankTagOf(addr)) rank = *r;
  const uint64_t local = addr & ~kRankTagMask, region = local >> kRegionShift;
  const std::vector<GmRegion>* regions = world.regionsOf(rank);
  if (regions && region >= 1 && region <= regions->size())
    return "%" + (*regions)[region - 1].name + "[" + std::to_string((local & kRegionMask) / 4) +
           "] of rank " + std::to_string(rank);
  char text[32];
  snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(addr));
  return std::string("signal ") + text;
}

std::string LocalWorld::deadlockReport() const {
  std::string text = "deadlock: every core of every rank waits, and nothing will change:";
  std::vector<const Waiter*> byRank(waiters_.begin(), waiters_.end());
  std::sort(byRank.begin(), byRank.end(), [](const Waiter* a, const Waiter* b) {
    return std::pair(a->rank, a->block) < std::pair(b->rank, b->block);
  });
  for (const Waiter* w : byRank)
    text += "\n" + describe(*w);
  return text;
}

/// Waits until w is satisfied; false on a deadlock (every live core waits, none of them can go
/// on) or when another rank failed. Re-checks every few milliseconds: a plain store (TSTORE, a
/// scalar store) to a signal does not wake the waiters.
bool LocalWorld::blockUntil(std::unique_lock<std::mutex>& lock, Core& c, Waiter& w) {
  w.waiting = true;
  waiters_.push_back(&w);
  ++waiting_;
  bool ok = true;
  for (;;) {
    if (failed_) {
      c.error = deadlock_ ? failure_ : "stopped: " + failure_; // each waiter names the deadlock
      ok = false;
      break;
    }
    if (satisfied(w)) break;
    bool anyCanGo = false;
    for (const Waiter* o : waiters_)
      anyCanGo = anyCanGo || satisfied(*o);
    if (waiting_ == live_ && !anyCanGo) {
      failed_ = deadlock_ = true;
      failure_ = deadlockReport();
      c.error = failure_;
      cv_.notify_all();
      ok = false;
      break;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(2));
  }
  --waiting_;
  std::erase(waiters_, &w);
  w.waiting = false;
  return ok;
}

bool LocalWorld::wait(Core& c, uint64_t addr, int32_t value, unsigned cmp, uint32_t at) {
  int32_t* p = signalPtr(c, addr, false);
  if (!p) return false;
  std::unique_lock<std::mutex> lock(mu_);
  Waiter w{.rank = c.rank,
           .block = c.blockIdx,
           .at = at,
           .signal = p,
           .addr = addr,
           .value = value,
           .cmp = cmp};
  if (!blockUntil(lock, c, w)) return false;
  for (const auto& [sig, t] : notifyTimes_)
    if (sig == p) c.simNotBefore = std::max(c.simNotBefore, t);
  return true;
}

bool LocalWorld::syncall(Core& c, uint32_t at) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t now = c.simStart + c.simCost + kLinkLatencyCycles;
  roundTime_ = std::max(roundTime_, now);
  Waiter w{
      .syncall = true, .rank = c.rank, .block = c.blockIdx, .at = at, .generation = generation_};
  if (++arrived_ == live_) { // the last core to arrive releases the round
    arrived_ = 0;
    syncallTime_ = roundTime_;
    roundTime_ = 0;
    ++generation_;
    cv_.notify_all();
  } else if (!blockUntil(lock, c, w)) {
    return false;
  }
  c.simNotBefore = std::max(c.simNotBefore, syncallTime_);
  return true;
}

uint64_t linkCycles(const TileInst& t, const Core& c) {
  if ((t.op != isa::OpId::TLOAD && t.op != isa::OpId::TSTORE) || t.tiles.empty()) return 0;
  const auto peer = rankTagOf(t.scalar(c, 0));
  if (!peer || *peer == c.rank) return 0; // the rank's own window: no link
  const uint64_t bytes =
      uint64_t{t.validRows(c)} * t.validCols(c) * std::max(1u, isa::bitWidth(t.tiles[0].dtype) / 8);
  return World::kLinkLatencyCycles +
         static_cast<uint64_t>(static_cast<double>(bytes) / World::kLinkBytesPerCycle + 0.999);
}

bool commStep(Core& c, const MOp& m) {
  using enum isa::enc::ExtCtl;
  const auto ctl = static_cast<isa::enc::ExtCtl>(m.target);
  if (!c.world) {
    c.error = std::string(isa::enc::name(ctl)) + " outside a run (no world to signal in)";
    return false;
  }
  const uint64_t addr = c.r[m.s.rs1];
  const auto value = static_cast<int32_t>(c.r[m.s.rs2]);
  const auto mode = static_cast<unsigned>(m.s.imm);
  switch (ctl) {
  case COMM_NOTIFY:
    return c.world->notify(c, addr, value, mode);
  case COMM_WAIT:
    return c.world->wait(c, addr, value, mode, m.textOffset);
  case COMM_TEST: {
    bool holds = false;
    if (!c.world->test(c, addr, value, mode, holds)) return false;
    c.r[m.s.rd] = holds ? 1 : 0;
    if (m.s.rd == c.wideReg) c.wideReg = Core::kNoWideReg;
    return true;
  }
  default:
    return c.world->syncall(c, m.textOffset);
  }
}

} // namespace pto::rt
