// The npu model (docs/npu-model.md): pipes, events, simulated time, races and deadlocks.
#include "runtime/npu/Model.h"

#include "runtime/Comm.h"
#include "runtime/ScalarInterp.h"
#include "runtime/npu/Cost.h"

#include <algorithm>
#include <functional>

namespace pto::rt::npu {
namespace {

using isa::Pipe;
using isa::enc::ExtCtl;

constexpr size_t kQueueDepth = 32;    // issued ops a pipe queue holds before the scalar unit stalls
constexpr size_t kMaxAccesses = 8192; // accesses kept for race checks, all buffers together

constexpr uint8_t pipeIndex(Pipe p) {
  return static_cast<uint8_t>(p);
}
constexpr uint8_t kS = pipeIndex(Pipe::S);

std::string pipeName(uint8_t p) {
  return std::string(isa::spelling(static_cast<Pipe>(p)));
}

std::string eventText(uint8_t src, uint8_t dst, uint32_t id) {
  return "(" + pipeName(src) + ", " + pipeName(dst) + ", EVENT_ID" + std::to_string(id) + ")";
}

bool intervalsOverlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  return a0 < b1 && b0 < a1;
}

} // namespace

Simulator::Simulator(const Program& prog, bool record, size_t maxRecords)
    : prog_(prog), arch_(prog.image.arch), record_(record), maxRecords_(maxRecords) {
  for (const DecodedFunction& fn : prog.functions)
    for (const TileInst& t : fn.tiles)
      memoryPipes_[pipeIndex(npu::pipeOf(t, arch_))] = true;
}

void Simulator::addRecord(const OpRecord& r) {
  if (!record_) return;
  if (report.records.size() >= maxRecords_) {
    report.recordsTruncated = true;
    return;
  }
  report.records.push_back(r);
}

// ---------------------------------------------------------------- issue (the scalar unit)

void Simulator::catchUp(const Core& c) {
  const auto cycles = static_cast<uint64_t>(static_cast<double>(c.scalarOps - scalarSeen_) *
                                            costTable(arch_).scalarCycles);
  scalarTime_ += cycles;
  report.busy[kS] += cycles;
  report.ops[kS] += c.scalarOps - scalarSeen_;
  scalarSeen_ = c.scalarOps;
}

bool Simulator::tile(Core& c, const TileInst& t, const MOp& m) {
  catchUp(c);
  // A cross-core pipe op may wait for another core, which may wait for an op this core issued
  // earlier: those run first, as far as they can (they are on other pipes of the hardware).
  if (t.op == isa::OpId::TPIPE_INIT || t.op == isa::OpId::TPIPE_PUSH ||
      t.op == isa::OpId::TPIPE_POP || t.op == isa::OpId::TPIPE_FREE ||
      t.op == isa::OpId::TPIPE_ALLOC || t.op == isa::OpId::TPIPE_COMMIT ||
      t.op == isa::OpId::TPIPE_TAKE)
    while (!drained()) {
      const int r = step(c);
      if (r < 0) return false;
      if (r == 0) break;
    }
  const Pipe p = npu::pipeOf(t, arch_);
  Entry e;
  e.kind = Kind::Tile;
  e.tile = &t;
  if (t.runtimeTiles) { // resolved at issue (runtime/ScalarInterp.h): the queued op keeps its copy
    e.resolved = std::make_shared<const TileInst>(t);
    e.tile = e.resolved.get();
  }
  if (p == Pipe::S) { // runs on the scalar unit itself
    e.textOffset = m.textOffset;
    e.issueAt = scalarTime_;
    e.regs = c.r;
    e.hb = clock_[kS];
    const uint64_t start = scalarTime_;
    if (!execute(c, kS, e, start)) return false;
    scalarTime_ = freeAt_[kS];
    return true;
  }
  return issue(c, pipeIndex(p), e, m);
}

/// Cross-core flags and buffer tokens in time: a set (a release) happens when its pipe's earlier
/// ops are done; a wait (an acquire) holds its pipe until then (plus the wait latency for a
/// flag). The interpreter has already applied their logic (rt::coreSyncStep).
bool Simulator::coreSync(Core& c, const SyncInst& s, const MOp& m) {
  const uint8_t p = pipeIndex(s.src);
  const uint32_t id = s.eventId(c) % kCoreSyncIds;
  const bool flag = s.kind == ExtCtl::SYNC_SET || s.kind == ExtCtl::SYNC_WAIT;
  if (s.kind == ExtCtl::SYNC_SET || s.kind == ExtCtl::RLS_BUF) {
    if (!runUntil(
            c, [&] { return queues_[p].empty(); }, m.textOffset))
      return false;
    const uint64_t t = std::max(scalarTime_, freeAt_[p]);
    if (flag)
      flagTimes_[id].push_back(t);
    else
      bufFreeAt_[id] = t;
    return true;
  }
  uint64_t t = bufFreeAt_[id];
  if (flag) {
    t = flagTimes_[id].empty() ? scalarTime_ : flagTimes_[id].front();
    if (!flagTimes_[id].empty()) flagTimes_[id].pop_front();
    t += static_cast<uint64_t>(costTable(arch_).waitLatency);
  }
  freeAt_[p] = std::max(freeAt_[p], t);
  return true;
}

bool Simulator::sync(Core& c, const SyncInst& s, const MOp& m) {
  catchUp(c);
  if (isCoreSync(s.kind)) return coreSync(c, s, m);
  const uint8_t src = pipeIndex(s.src), dst = pipeIndex(s.dst);
  Entry e;
  e.sync = &s;
  e.eventId = s.eventId(c);
  if (s.kind == ExtCtl::PIPE_BARRIER) {
    if (s.src == Pipe::All) {
      if (!runUntil(
              c, [&] { return drained(); }, m.textOffset))
        return false;
      uint64_t t = scalarTime_;
      Clock all{};
      for (unsigned p = 0; p < kPipes; ++p) {
        t = std::max(t, freeAt_[p]);
        for (unsigned q = 0; q < kPipes; ++q)
          all[q] = std::max(all[q], clock_[p][q]);
      }
      t += static_cast<uint64_t>(costTable(arch_).syncCycles);
      scalarTime_ = t;
      freeAt_.fill(t);
      clock_.fill(all);
      addRecord({m.textOffset, "pipe_barrier(PIPE_ALL)", kS, t - 1, t});
      return true;
    }
    if (src == kS) return true; // the scalar unit is in order
    e.kind = Kind::Barrier;
    return issue(c, src, e, m);
  }
  const EventKey key{src, dst, e.eventId};
  if (s.kind == ExtCtl::SET_FLAG) {
    everSet_[key] = m.textOffset;
    e.kind = Kind::Set;
    if (src == kS) {
      e.textOffset = m.textOffset;
      e.issueAt = scalarTime_;
      e.hb = clock_[kS];
      if (!execute(c, kS, e, scalarTime_)) return false;
      scalarTime_ = freeAt_[kS];
      return true;
    }
    return issue(c, src, e, m);
  }
  e.kind = Kind::Wait;
  if (dst == kS) { // the scalar unit itself waits
    scalarWaitsFor_ = key;
    if (!runUntil(
            c,
            [&] {
              auto it = pending_.find(key);
              return it != pending_.end() && !it->second.empty();
            },
            m.textOffset))
      return false;
    scalarWaitsFor_.reset();
    e.textOffset = m.textOffset;
    e.issueAt = scalarTime_;
    e.hb = clock_[kS];
    const PendingSet& ps = pending_[key].front();
    const uint64_t start =
        std::max(scalarTime_, ps.time + static_cast<uint64_t>(costTable(arch_).waitLatency));
    if (!execute(c, kS, e, start)) return false;
    scalarTime_ = freeAt_[kS];
    return true;
  }
  return issue(c, dst, e, m);
}

/// A signal op or syncall (runtime/Comm.h) orders every earlier op of the core, as pto-isa's
/// TNOTIFY and TWAIT do with the pipe_barrier before them: the pipes drain, the op runs on the
/// scalar unit, and a wait resumes no earlier than the notify that released it reached this
/// rank (the link's latency after it was sent).
bool Simulator::comm(Core& c, const MOp& m) {
  catchUp(c);
  if (!runUntil(
          c, [&] { return drained(); }, m.textOffset))
    return false;
  uint64_t t = scalarTime_;
  for (unsigned p = 0; p < kPipes; ++p)
    t = std::max(t, freeAt_[p]);
  const auto cost = static_cast<uint64_t>(costTable(arch_).syncCycles);
  c.simStart = t;
  c.simCost = cost;
  c.simNotBefore = 0;
  if (!commStep(c, m)) return false;
  const uint64_t end = std::max(t + cost, c.simNotBefore);
  addRecord({m.textOffset, isa::enc::name(static_cast<ExtCtl>(m.target)).data(), kS, t, end});
  report.busy[kS] += cost;
  ++report.ops[kS];
  scalarTime_ = end;
  freeAt_.fill(end);
  return true;
}

bool Simulator::issue(Core& c, uint8_t pipe, Entry e, const MOp& m) {
  e.textOffset = m.textOffset;
  if (queues_[pipe].size() >= kQueueDepth) {
    // The queue is full: the scalar unit stalls until the pipe starts its oldest op.
    if (!runUntil(
            c, [&] { return queues_[pipe].size() < kQueueDepth; }, m.textOffset))
      return false;
    scalarTime_ = std::max(scalarTime_, lastStart_[pipe]);
  }
  e.issueAt = scalarTime_;
  e.seq = seq_++;
  e.hb = clock_[kS];
  e.regs = c.r;
  queues_[pipe].push_back(std::move(e));
  const auto issueCost = static_cast<uint64_t>(costTable(arch_).scalarCycles);
  scalarTime_ += issueCost;
  report.busy[kS] += issueCost;
  return true;
}

bool Simulator::finish(Core& c) {
  catchUp(c);
  if (!runUntil(
          c, [&] { return drained(); }, std::nullopt))
    return false;
  uint64_t end = scalarTime_;
  for (uint64_t t : freeAt_)
    end = std::max(end, t);
  report.cycles = end;
  return true;
}

// ---------------------------------------------------------------- the pipes

std::optional<uint64_t> Simulator::startOf(uint8_t pipe) const {
  const std::deque<Entry>& q = queues_[pipe];
  if (q.empty()) return std::nullopt;
  const Entry& head = q.front();
  const uint64_t base = std::max(freeAt_[pipe], head.issueAt);
  if (head.kind != Kind::Wait) return base;
  auto it = pending_.find({static_cast<uint8_t>(pipeIndex(head.sync->src)), pipe, head.eventId});
  if (it == pending_.end() || it->second.empty()) return std::nullopt;
  return std::max(base,
                  it->second.front().time + static_cast<uint64_t>(costTable(arch_).waitLatency));
}

int Simulator::step(Core& c) {
  int best = -1;
  uint64_t bestStart = 0, bestSeq = 0;
  for (uint8_t p = 0; p < kPipes; ++p) {
    auto s = startOf(p);
    if (!s) continue;
    const uint64_t seq = queues_[p].front().seq;
    if (best < 0 || *s < bestStart || (*s == bestStart && seq < bestSeq)) {
      best = p;
      bestStart = *s;
      bestSeq = seq;
    }
  }
  if (best < 0) return 0;
  const uint8_t p = static_cast<uint8_t>(best);
  Entry e = std::move(queues_[p].front());
  queues_[p].pop_front();
  lastStart_[p] = bestStart;
  return execute(c, p, e, bestStart) ? 1 : -1;
}

bool Simulator::drained() const {
  return std::all_of(queues_.begin(), queues_.end(),
                     [](const std::deque<Entry>& q) { return q.empty(); });
}

bool Simulator::runUntil(Core& c, const std::function<bool()>& done,
                         std::optional<uint32_t> blockedAt) {
  while (!done()) {
    const int r = step(c);
    if (r < 0) return false;
    if (r == 0) {
      std::optional<uint32_t> at = blockedAt;
      c.error = deadlockMessage(at);
      if (at) errorAt = *at;
      return false;
    }
  }
  return true;
}

bool Simulator::execute(Core& c, uint8_t pipe, Entry& e, uint64_t start) {
  const CostTable& k = costTable(arch_);
  Clock& clk = clock_[pipe];
  for (unsigned q = 0; q < kPipes; ++q)
    clk[q] = std::max(clk[q], e.hb[q]);
  ++clk[pipe];
  OpRecord rec;
  rec.textOffset = e.textOffset;
  rec.pipe = pipe;
  uint64_t cost = static_cast<uint64_t>(k.syncCycles);
  switch (e.kind) {
  case Kind::Tile: {
    std::swap(c.r, e.regs); // the registers of the issue, for shapes and strides
    cost = cyclesOf(*e.tile, c, arch_) + linkCycles(*e.tile, c); // a peer's GM: the link
    std::swap(c.r, e.regs);
    // A cross-core pipe op may find its tile or slot only later (another core's time).
    c.simStart = start;
    c.simCost = cost;
    c.simNotBefore = 0;
    if (!executeTile(c, pipe, e)) return false;
    start = std::max(start, c.simNotBefore);
    rec.name = e.tile->name;
    break;
  }
  case Kind::Set: {
    PendingSet ps;
    ps.time = start + cost;
    ps.clock = clk;
    ps.textOffset = e.textOffset;
    ps.flow = nextFlow_++;
    rec.flowOut = ps.flow;
    rec.name = "set_flag";
    pending_[{pipeIndex(e.sync->src), pipeIndex(e.sync->dst), e.eventId}].push_back(ps);
    break;
  }
  case Kind::Wait: {
    auto& dq = pending_[{pipeIndex(e.sync->src), pipeIndex(e.sync->dst), e.eventId}];
    const PendingSet ps = dq.front();
    dq.pop_front();
    for (unsigned q = 0; q < kPipes; ++q)
      clk[q] = std::max(clk[q], ps.clock[q]);
    rec.flowIn = ps.flow;
    rec.name = "wait_flag";
    // The slice shows the stall: from when the pipe reached the wait to its release.
    const uint64_t reached = pipe == kS ? e.issueAt : std::max(freeAt_[pipe], e.issueAt);
    rec.start = std::min(reached, start);
    break;
  }
  case Kind::Barrier:
    rec.name = "pipe_barrier";
    break;
  }
  if (e.kind != Kind::Wait) rec.start = start;
  rec.end = start + cost;
  freeAt_[pipe] = start + cost;
  report.busy[pipe] += cost;
  ++report.ops[pipe];
  addRecord(rec);
  return true;
}

// ---------------------------------------------------------------- tile ops and races

std::vector<std::pair<Simulator::Range, bool>> Simulator::footprint(const TileInst& t,
                                                                    const Core& c) const {
  std::vector<std::pair<Range, bool>> out;
  const isa::OpInfo& oi = isa::info(t.op);
  const std::vector<int> roles = isa::tileOperandRoles(oi, t.tiles.size());
  for (size_t i = 0; i < t.tiles.size(); ++i) {
    const TileOperand& o = t.tiles[i];
    Range r;
    r.space = o.loc;
    r.base = o.offset;
    r.rowBytes = o.bytes();
    // A tile whose valid columns do not fill its rows (a column subset such as the right half
    // of a 1x128 tile): those columns of each row, one row pitch apart, as the linker counts
    // them (docs/linking.md section 3). A padded tile may be written outside its valid region.
    if (o.plainRowMajor() && o.pad == isa::PadValue::Null && o.rows > 0 && o.validCols > 0 &&
        static_cast<uint32_t>(o.validCols) < o.cols) {
      const uint64_t bits = isa::bitWidth(o.dtype);
      r.rows = o.rows;
      r.stride = (uint64_t{o.cols} * bits + 7) / 8;
      r.rowBytes = (uint64_t{static_cast<uint32_t>(o.validCols)} * bits + 7) / 8;
    }
    // Outputs and the scratch tile are written (the linker's rule, link/Cfg.cpp).
    const bool write =
        roles[i] >= 0 && (oi.roles[static_cast<size_t>(roles[i])].isOutput ||
                          oi.roles[static_cast<size_t>(roles[i])].id == isa::RoleId::Tmp);
    out.push_back({r, write});
  }
  // GM: TLOAD reads and TSTORE writes `rows` runs of valid columns, `stride` bytes apart.
  const bool load = t.op == isa::OpId::TLOAD || t.op == isa::OpId::TPREFETCH,
             store = t.op == isa::OpId::TSTORE;
  const int tileIdx = load ? t.dst : store ? t.src0 : -1;
  if (tileIdx >= 0 && t.numIor) {
    const uint64_t addr = t.scalar(c, 0), region = addr >> kRegionShift;
    if (region != 0 && region != kStackRegion) {
      const TileOperand& o = t.tiles[tileIdx];
      unsigned bits = isa::bitWidth(o.dtype);
      if (const GmRegion* g = c.regionOf(addr)) bits = std::min(bits, isa::bitWidth(g->dtype));
      Range r;
      r.space = static_cast<uint32_t>(8 + region);
      r.base = addr & kRegionMask;
      // ND: a run per row; DN (column-major GM): a run per column.
      r.rows = t.gmDn ? t.validCols(c) : t.validRows(c);
      r.rowBytes = (uint64_t{t.gmDn ? t.validRows(c) : t.validCols(c)} * bits + 7) / 8;
      r.stride = t.scalar(c, 1);
      if (r.rows > 0 && r.rowBytes > 0) out.push_back({r, store});
    }
  }
  return out;
}

namespace {
/// The end of a strided rectangle, saturated (strides come from registers: never trust them).
uint64_t rectEnd(uint64_t base, uint64_t rows, uint64_t len, uint64_t stride) {
  const unsigned __int128 end = static_cast<unsigned __int128>(base) +
                                static_cast<unsigned __int128>(rows - 1) * stride + len;
  return end > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(end);
}

/// Whether two strided rectangles of the same space share a byte.
bool rangesOverlap(uint64_t aBase, uint64_t aRows, uint64_t aLen, uint64_t aStride, uint64_t bBase,
                   uint64_t bRows, uint64_t bLen, uint64_t bStride) {
  const uint64_t aEnd = rectEnd(aBase, aRows, aLen, aStride),
                 bEnd = rectEnd(bBase, bRows, bLen, bStride);
  if (!intervalsOverlap(aBase, aEnd, bBase, bEnd)) return false;
  const bool aSolid = aRows == 1 || aStride <= aLen, bSolid = bRows == 1 || bStride <= bLen;
  if (aSolid && bSolid) return true;
  if (aRows > bRows) // walk the rows of the one with fewer (the loop handles a strided b)
    return rangesOverlap(bBase, bRows, bLen, bStride, aBase, aRows, aLen, aStride);
  for (uint64_t r = 0; r < aRows; ++r) {
    const uint64_t s = aBase + r * aStride, e = s + aLen;
    if (bSolid) {
      if (intervalsOverlap(s, e, bBase, bEnd)) return true;
      continue;
    }
    // rows j of b with bBase + j*bStride < e and bBase + j*bStride + bLen > s
    const uint64_t lo = s + 1 > bBase + bLen ? (s + 1 - bBase - bLen + bStride - 1) / bStride : 0;
    if (lo < bRows && bBase + lo * bStride < e) return true;
  }
  return false;
}
} // namespace

bool Simulator::checkRaces(Core& c, uint8_t pipe,
                           const std::vector<std::pair<Range, bool>>& touched, const Entry& e) {
  const Clock& clk = clock_[pipe];
  for (const auto& [r, write] : touched) {
    for (const Access& a : accesses_) {
      if (a.pipe == pipe || a.range.space != r.space || !(a.write || write)) continue;
      if (a.stamp <= clk[a.pipe]) continue; // happens before
      if (!rangesOverlap(a.range.base, a.range.rows, a.range.rowBytes, a.range.stride, r.base,
                         r.rows, r.rowBytes, r.stride))
        continue;
      std::string object;
      if (r.space >= 8) {
        const auto* g = r.space - 8 <= c.gm->size() ? &(*c.gm)[r.space - 9] : nullptr;
        object = g ? "argument %" + g->name : "GM";
      } else {
        for (const TileOperand& o : e.tile->tiles)
          if (o.loc == r.space && o.offset == r.base) object = "tile %" + o.name;
        object += " (" + std::string(isa::spelling(static_cast<isa::Loc>(r.space))) + " bytes " +
                  std::to_string(r.base) + ".." + std::to_string(r.base + r.rowBytes) + ")";
      }
      const char* kind = a.write && write ? "WAW" : a.write ? "RAW" : "WAR";
      std::string msg = "race: " + std::string(e.tile->name) + " on " + pipeName(pipe) +
                        (write ? " writes " : " reads ") + object + ", which " + a.name + " on " +
                        pipeName(a.pipe) + " at " + where(a.textOffset) +
                        (a.write ? " writes" : " reads") +
                        ", and no set_flag/wait_flag chain orders them (" + kind + ")";
      if (r.space >= 8) {
        // GM: a warning. The linker does not analyse GM dependencies, and kernels hand GM data
        // between the cube and vector cores, which this one-core model runs on one timeline.
        if (warned_.insert({a.textOffset, e.textOffset}).second && report.warnings.size() < 20)
          report.warnings.push_back(where(e.textOffset) + ": warning: " + msg);
        continue;
      }
      c.error = msg;
      errorAt = e.textOffset;
      return false;
    }
  }
  for (const auto& [r, write] : touched)
    accesses_.push_back({r, write, pipe, clk[pipe], e.textOffset, e.tile->name});
  if (accesses_.size() > pruneAt_) prune();
  return true;
}

void Simulator::prune() {
  // An access can be forgotten once every pipe the program's tile ops run on has seen it happen:
  // no later op can race with it. Beyond kMaxAccesses the oldest are dropped (the only loss).
  std::erase_if(accesses_, [&](const Access& a) {
    for (unsigned q = 0; q < kPipes; ++q)
      if (memoryPipes_[q] && q != a.pipe && clock_[q][a.pipe] < a.stamp) return false;
    return true;
  });
  if (accesses_.size() > kMaxAccesses)
    accesses_.erase(accesses_.begin(), accesses_.begin() + static_cast<std::ptrdiff_t>(
                                                               accesses_.size() - kMaxAccesses));
  pruneAt_ = std::max<size_t>(256, accesses_.size() * 2);
}

bool Simulator::executeTile(Core& c, uint8_t pipe, Entry& e) {
  std::swap(c.r, e.regs);
  const auto touched = footprint(*e.tile, c);
  bool ok = checkRaces(c, pipe, touched, e);
  if (ok) {
    e.tile->kernel(c, *e.tile);
    ok = c.finishRemote() && c.error.empty();
    if (!ok) errorAt = e.textOffset;
  }
  std::swap(c.r, e.regs);
  // An op of the scalar pipe runs on the scalar unit itself, in order: the register it writes
  // (TGETVAL's B.IOR RegDst) is the scalar unit's from then on.
  if (ok && pipe == kS && e.tile->iorDst != 0) c.r[e.tile->iorDst] = e.regs[e.tile->iorDst];
  return ok;
}

// ---------------------------------------------------------------- deadlocks

std::string Simulator::deadlockMessage(std::optional<uint32_t>& at) const {
  // The blocked wait_flag issued first is the one reported; the others are listed.
  const Entry* first = nullptr;
  uint8_t firstPipe = 0;
  for (uint8_t p = 0; p < kPipes; ++p) {
    if (queues_[p].empty()) continue;
    const Entry& h = queues_[p].front();
    if (h.kind == Kind::Wait && (!first || h.seq < first->seq)) {
      first = &h;
      firstPipe = p;
    }
  }
  auto explain = [&](uint8_t src, uint8_t dst, uint32_t id) -> std::string {
    const EventKey key{src, dst, id};
    for (uint8_t p = 0; p < kPipes; ++p)
      for (const Entry& e : queues_[p])
        if (e.kind == Kind::Set && pipeIndex(e.sync->src) == src && pipeIndex(e.sync->dst) == dst &&
            e.eventId == id)
          return "its set_flag at " + where(e.textOffset) + " is queued on " + pipeName(p) +
                 " behind an op that cannot run";
    auto it = everSet_.find(key);
    if (it == everSet_.end()) return "no set_flag" + eventText(src, dst, id) + " was ever issued";
    return "every set_flag" + eventText(src, dst, id) + " (the last at " + where(it->second) +
           ") was consumed by an earlier wait_flag";
  };
  std::string msg;
  if (!first) {
    // Only the scalar unit waits: for an event (a wait_flag to PIPE_S), or for pipes to drain
    // (a full queue, pipe_barrier(PIPE_ALL), the end of the kernel) that never do.
    if (scalarWaitsFor_) {
      const auto [src, dst, id] = *scalarWaitsFor_;
      return "deadlock: wait_flag" + eventText(src, dst, id) +
             " on the scalar unit waits forever: " + explain(src, dst, id);
    }
    return "deadlock: the scalar unit waits at " +
           (at ? where(*at) : std::string("the end of the kernel")) +
           " for the pipes, and none can make progress";
  }
  const uint8_t src = pipeIndex(first->sync->src);
  at = first->textOffset;
  msg = "deadlock: wait_flag" + eventText(src, firstPipe, first->eventId) + " on " +
        pipeName(firstPipe) + " waits forever: " + explain(src, firstPipe, first->eventId);
  for (uint8_t p = 0; p < kPipes; ++p) {
    if (queues_[p].empty() || &queues_[p].front() == first) continue;
    const Entry& h = queues_[p].front();
    if (h.kind == Kind::Wait)
      msg += "; " + pipeName(p) + " is blocked too, at the wait_flag at " + where(h.textOffset);
  }
  return msg;
}

} // namespace pto::rt::npu
