// The cluster of one block: the cross-core pipe protocol and its data movement (docs/pipes.md).
//
// A pipe direction (C2V or V2C, keyed by its flag base) is a ring of slot_num slots of slot_size
// bytes. Tile i goes to slot i % slot_num. A push of tile i waits until tile i - slot_num has
// been released by every core that reads it; a pop waits until every core that writes tile i
// has written it. On A2/A3 the ring is in GM (initialize_l2g2l_pipe): a push stores the tile in
// row-major order at its slot, a pop loads it into its tile and releases the slot at once
// (TFREE does nothing there). On A5 the ring is in the consumer's local memory
// (initialize_l2l_pipe): a pop takes the slot's bytes as its tile (the hardware binds the tile
// to the slot; the model copies the bytes into the tile's own storage, and into the consumer's
// reserved buffer) and the slot is released by TFREE.
//
// Who takes part (pto-isa's TPUSH/TPOP): C2V is written by the AIC and read by both AIVs, each
// its half for split 1 (rows) or 2 (columns), each the whole tile for split 0 on A2/A3, AIV0 alone
// for split 0 on A5. V2C is written by both AIVs (one each half, or both the whole tile on
// A2/A3; AIV0 alone for split 0 on A5) and read by the AIC.
#include "runtime/Cluster.h"

#include "obj/Object.h"

#include <algorithm>
#include <cstring>

namespace pto::rt {

using isa::xcore::kC2V;
using isa::xcore::kV2C;

namespace {
constexpr uint8_t bit(unsigned lane) {
  return static_cast<uint8_t>(1u << lane);
}
bool fail(Core& c, std::string msg) {
  if (c.error.empty()) c.error = std::move(msg);
  return false;
}
} // namespace

const char* laneName(unsigned lane) {
  static const char* const kNames[] = {"AIC", "AIV0", "AIV1"};
  return lane < kLanes ? kNames[lane] : "?";
}

bool laneRuns(unsigned lane, uint32_t flags) {
  if (flags & obj::kKernelCube) return lane == 0;
  if (flags & obj::kKernelVector)
    return lane != 0 && !((flags & obj::kSubblockZeroOnly) && lane == 2);
  return true;
}

uint8_t Cluster::consumerLanes(const Channel& ch, uint8_t split) const {
  if (ch.dir == kV2C) return bit(0);
  if (arch_ == isa::Arch::A5 && split == 0) return bit(1);
  return bit(1) | bit(2);
}

Cluster::TileRec* Cluster::record(Channel& ch, uint64_t i) {
  if (i < ch.base || i >= ch.base + ch.tiles.size()) return nullptr;
  return &ch.tiles[i - ch.base];
}

std::string Cluster::progress(const Channel& ch) const {
  std::string s = dirName(ch.dir) + " pipe (flag " + std::to_string(ch.flagBase) + "):";
  for (unsigned l = 0; l < kLanes; ++l) {
    const bool producer = (ch.dir == kC2V) == (l == 0);
    s += std::string(" ") + laneName(l) +
         (producer ? (ch.cfg.gmEntries ? " allocated " + std::to_string(ch.allocated[l]) : "") +
                         " pushed " + std::to_string(ch.pushed[l])
                   : " popped " + std::to_string(ch.popped[l]));
    if (!producer && (!ch.cfg.gmPath || ch.cfg.gmEntries) && ch.configured)
      s += " freed " + std::to_string(ch.freed[l]);
    s += l + 1 < kLanes ? "," : "";
  }
  return s;
}

void Cluster::wakeAll() {
  counted_.fill(false);
  waiting_ = 0;
  cv_.notify_all();
}

std::string Cluster::describe(unsigned lane) const {
  const WaitInfo& w = waitingFor_[lane];
  if (done_[lane]) return std::string(laneName(lane)) + " finished";
  if (!w.op) return std::string(laneName(lane)) + " runs";
  auto ch = channels_.find({w.flagBase, w.dir});
  return std::string(laneName(lane)) + " waits in " + w.op + " for " + w.forWhat + "tile " +
         std::to_string(w.index) + " of the " +
         (ch == channels_.end() ? dirName(w.dir) + " pipe" : progress(ch->second));
}

template <class Ready>
bool Cluster::wait(std::unique_lock<std::mutex>& lock, Core& c, Ready ready, WaitInfo what) {
  const unsigned lane = c.lane;
  while (!ready()) {
    if (failed_) return fail(c, "stopped: another core of the block failed");
    waitingFor_[lane] = what;
    if (deadlock_) { // every waiting core reports the deadlock as it was found
      waitingFor_[lane] = {};
      return fail(c, deadlockMessage_);
    }
    counted_[lane] = true;
    if (++waiting_ + finished_ == kLanes) {
      // Nobody can move: this core's wait and what each of the others is doing.
      deadlock_ = true;
      std::string msg = "deadlock: " + describe(lane);
      for (unsigned l = 0; l < kLanes; ++l)
        if (l != lane) msg += "; " + describe(l);
      waitingFor_[lane] = {};
      deadlockMessage_ = msg;
      wakeAll();
      return fail(c, msg);
    }
    cv_.wait(lock);
    if (counted_[lane]) { // woken without a change (spurious)
      counted_[lane] = false;
      --waiting_;
    }
    waitingFor_[lane] = {};
  }
  return true;
}

void Cluster::finish(unsigned lane, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_;
  done_[lane] = true;
  waitingFor_[lane] = {};
  if (failed) failed_ = true;
  wakeAll();
}

bool Cluster::init(Core& c, const TileInst& t) {
  auto cfg = isa::xcore::unpackInit(t.scalar(c, 2));
  if (!cfg)
    return fail(c, "TPIPE_INIT: corrupt configuration word " + std::to_string(t.scalar(c, 2)));
  std::lock_guard<std::mutex> lock(mu_);
  for (unsigned dir : {kC2V, kV2C}) {
    if (!(cfg->dirMask & dir)) continue;
    Channel& ch = channel(cfg->flagBase, dir);
    ch.flagBase = cfg->flagBase;
    ch.dir = dir;
    if (ch.configured && (ch.cfg.slotSize != cfg->slotSize || ch.cfg.slotNum != cfg->slotNum ||
                          ch.cfg.gmPath != cfg->gmPath || ch.cfg.gmEntries != cfg->gmEntries))
      return fail(c, "TPIPE_INIT: the two ends of the " + dirName(dir) + " pipe (flag " +
                         std::to_string(cfg->flagBase) +
                         ") disagree: " + std::to_string(ch.cfg.slotNum) + " slots of " +
                         std::to_string(ch.cfg.slotSize) + " bytes against " +
                         std::to_string(cfg->slotNum) + " of " + std::to_string(cfg->slotSize));
    if (!ch.configured) {
      ch.cfg = *cfg;
      ch.configured = true;
      ch.localSlot.fill(-1);
    }
    ch.open[c.lane] = true;
    // A two-way GM ring keeps V2C's slots after C2V's (pto-isa's entry offset).
    ch.gm[c.lane] = cfg->gmPath ? t.scalar(c, 0) + (cfg->dirMask == 3 && dir == kV2C
                                                        ? uint64_t{cfg->slotNum} * cfg->slotSize
                                                        : 0)
                                : 0;
    const bool consumer = (dir == kC2V) != (c.lane == 0);
    if (consumer) {
      const bool wantV2C = dir == kV2C;
      if (t.src1 >= 0 && cfg->bufIsV2C == wantV2C)
        ch.localSlot[c.lane] = t.tiles[t.src1].offset;
      else if (t.scalar(c, 1) != 0 && cfg->localIsV2C == wantV2C)
        ch.localSlot[c.lane] = static_cast<int64_t>(t.scalar(c, 1) & 0xFFFFFFFF);
    }
  }
  return true;
}

uint8_t Cluster::producerLanes(unsigned dir, uint8_t split) const {
  if (dir == kC2V) return bit(0);
  return arch_ == isa::Arch::A5 && split == 0 ? bit(1) : bit(1) | bit(2);
}

Cluster::Channel* Cluster::channelFor(Core& c, const char* name, const isa::xcore::OpConfig& op,
                                      bool producer, bool gmEntries) {
  const unsigned lane = c.lane;
  if (((op.dir == kC2V) == (lane == 0)) != producer) {
    fail(c, std::string(name) + ": " + laneName(lane) + " cannot " +
                (producer ? "push into a " : "pop from a ") + dirName(op.dir) + " pipe");
    return nullptr;
  }
  Channel& ch = channel(op.flagBase, op.dir);
  if (!ch.open[lane]) {
    fail(c, std::string(name) + " before this core opened the " + dirName(op.dir) + " pipe (flag " +
                std::to_string(op.flagBase) + ") with its initialize_pipe");
    return nullptr;
  }
  if (ch.cfg.gmEntries != gmEntries) {
    fail(c, std::string(name) + ": the " + dirName(op.dir) + " pipe (flag " +
                std::to_string(op.flagBase) + ") " +
                (ch.cfg.gmEntries ? "hands over GM tensor views (gm_slot_tensor), not tiles"
                                  : "hands over tiles, not GM tensor views"));
    return nullptr;
  }
  if (producer && !(producerLanes(op.dir, op.split) & bit(lane))) {
    fail(c, std::string(name) + ": " + laneName(lane) +
                " pushes a tile with split = 0 into a V2C pipe; on A5 only AIV0 takes part");
    return nullptr;
  }
  return &ch;
}

Cluster::TileRec* Cluster::claimSlot(std::unique_lock<std::mutex>& lock, Core& c, const char* name,
                                     Channel& ch, uint64_t i, uint8_t split) {
  const isa::xcore::InitConfig& cfg = ch.cfg;
  const WaitInfo what{name, "a free slot for ", ch.flagBase, ch.dir, i};
  auto slotFree = [&] {
    if (i < cfg.slotNum) return true;
    const TileRec* old = record(ch, i - cfg.slotNum);
    return !old || (old->released == old->consumers && old->producersDone == old->producersNeeded);
  };
  if (!wait(lock, c, slotFree, what)) return nullptr;
  TileRec* rec = record(ch, i);
  if (!rec) {
    while (ch.base + ch.tiles.size() <= i)
      ch.tiles.push_back({});
    rec = record(ch, i);
    rec->split = split;
    rec->producersNeeded = producerLanes(ch.dir, split);
    rec->consumers = consumerLanes(ch, split);
  } else if (rec->split != split) {
    fail(c, std::string(name) + ": the vector cores push tile " + std::to_string(i) +
                " with different splits");
    return nullptr;
  }
  // The npu model's time: the op starts once its slot is free.
  ch.slotFreeAt.resize(cfg.slotNum);
  c.simNotBefore = std::max(c.simNotBefore, ch.slotFreeAt[i % cfg.slotNum]);
  return rec;
}

/// This core has written its part of the slot it last claimed (a push, a commit): the consumers
/// may go on once every producer has (npu model: from the end of this op).
void Cluster::written(Core& c, Channel& ch, TileRec& rec) {
  rec.readyAt = std::max(rec.readyAt, std::max(c.simStart, c.simNotBefore) + c.simCost);
  rec.producersDone |= bit(c.lane);
  ++ch.pushed[c.lane];
  wakeAll();
}

uint64_t Cluster::slotAddress(const Core& c, const TileInst& t, const Channel& ch, uint64_t i,
                              uint8_t split) const {
  const uint64_t half = split != 0 && c.lane == 2 ? t.scalar(c, 1) : 0;
  return ch.gm[c.lane] + i % ch.cfg.slotNum * ch.cfg.slotSize + half;
}

bool Cluster::push(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_PUSH: corrupt configuration word");
  std::unique_lock<std::mutex> lock(mu_);
  Channel* ch = channelFor(c, "TPIPE_PUSH", *op, true, false);
  if (!ch) return false;
  const unsigned lane = c.lane;
  const uint64_t i = ch->pushed[lane];
  TileRec* rec = claimSlot(lock, c, "TPIPE_PUSH", *ch, i, op->split);
  if (!rec || !writeSlot(c, t, *ch, i, op->split)) return false;
  written(c, *ch, *rec);
  return true;
}

bool Cluster::alloc(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_ALLOC: corrupt configuration word");
  std::unique_lock<std::mutex> lock(mu_);
  Channel* ch = channelFor(c, "TPIPE_ALLOC", *op, true, true);
  if (!ch) return false;
  const uint64_t i = ch->allocated[c.lane];
  if (!claimSlot(lock, c, "TPIPE_ALLOC", *ch, i, op->split)) return false;
  if (t.iorDst != 0) c.r[t.iorDst] = slotAddress(c, t, *ch, i, op->split);
  ++ch->allocated[c.lane];
  return true;
}

bool Cluster::commit(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_COMMIT: corrupt configuration word");
  std::unique_lock<std::mutex> lock(mu_);
  Channel* ch = channelFor(c, "TPIPE_COMMIT", *op, true, true);
  if (!ch) return false;
  const unsigned lane = c.lane;
  const uint64_t i = ch->pushed[lane];
  TileRec* rec = record(*ch, i);
  if (i >= ch->allocated[lane] || !rec)
    return fail(c, "TPIPE_COMMIT: " + std::string(laneName(lane)) + " pushes slot " +
                       std::to_string(i) + " of the " + dirName(op->dir) + " pipe (flag " +
                       std::to_string(op->flagBase) + "), which it has not allocated (talloc)");
  written(c, *ch, *rec);
  return true;
}

/// The consumer's next tile j of a channel, once every producer has written it: its record, or
/// nullptr with the core's error set.
Cluster::TileRec* Cluster::awaitWritten(std::unique_lock<std::mutex>& lock, Core& c,
                                        const char* name, Channel& ch, uint64_t j) {
  const WaitInfo what{name, "", ch.flagBase, ch.dir, j};
  auto written = [&] {
    const TileRec* rec = record(ch, j);
    return rec && rec->producersDone == rec->producersNeeded;
  };
  if (!wait(lock, c, written, what)) return nullptr;
  TileRec* rec = record(ch, j);
  if (!(rec->consumers & bit(c.lane))) {
    fail(c, std::string(name) + ": " + laneName(c.lane) + " pops tile " + std::to_string(j) +
                " of the " + dirName(ch.dir) +
                " pipe, which was pushed with split = 0: on A5 only AIV0 receives it");
    return nullptr;
  }
  c.simNotBefore = std::max(c.simNotBefore, rec->readyAt); // the data is there from then on
  return rec;
}

bool Cluster::pop(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_POP: corrupt configuration word");
  const unsigned lane = c.lane;
  if (arch_ == isa::Arch::A5 && op->dir == kC2V && op->split == 0 && lane == 2)
    return fail(c, "TPIPE_POP: AIV1 pops with split = 0, but on A5 only AIV0 receives an unsplit "
                   "tile (PTOAS runs such a vector function on AIV0 alone unless it reads its "
                   "sub-block index)");
  std::unique_lock<std::mutex> lock(mu_);
  Channel* ch = channelFor(c, "TPIPE_POP", *op, false, false);
  if (!ch) return false;
  const uint64_t j = ch->popped[lane];
  TileRec* rec = awaitWritten(lock, c, "TPIPE_POP", *ch, j);
  if (!rec || !readSlot(c, t, *ch, j, rec->split)) return false;
  if (ch->cfg.gmPath)
    release(*ch, *rec, j, lane, std::max(c.simStart, c.simNotBefore) + c.simCost); // copied out
  else
    ch->held[lane].push_back(j); // A5: the tile is the slot until TFREE
  ++ch->popped[lane];
  dropReleased(*ch);
  wakeAll();
  return true;
}

bool Cluster::take(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_TAKE: corrupt configuration word");
  std::unique_lock<std::mutex> lock(mu_);
  Channel* ch = channelFor(c, "TPIPE_TAKE", *op, false, true);
  if (!ch) return false;
  const uint64_t j = ch->popped[c.lane];
  TileRec* rec = awaitWritten(lock, c, "TPIPE_TAKE", *ch, j);
  if (!rec) return false;
  if (t.iorDst != 0) c.r[t.iorDst] = slotAddress(c, t, *ch, j, rec->split);
  ch->held[c.lane].push_back(j); // the slot is the consumer's until TFREE
  ++ch->popped[c.lane];
  return true;
}

bool Cluster::free(Core& c, const TileInst& t) {
  auto op = isa::xcore::unpackOp(t.scalar(c, 0));
  if (!op) return fail(c, "TPIPE_FREE: corrupt configuration word");
  const unsigned lane = c.lane;
  std::lock_guard<std::mutex> lock(mu_);
  Channel& ch = channel(op->flagBase, op->dir);
  if (!ch.open[lane])
    return fail(c, "TPIPE_FREE before this core opened the " + dirName(op->dir) + " pipe (flag " +
                       std::to_string(op->flagBase) + ") with its initialize_pipe");
  // A2/A3 tile pipes: TFREE is a no-op (the pop released the slot); a GM entry is the
  // consumer's until it is freed.
  if (ch.cfg.gmPath && !ch.cfg.gmEntries) return true;
  if (ch.held[lane].empty())
    return fail(c, "TPIPE_FREE: no popped tile of the " + dirName(op->dir) + " pipe (flag " +
                       std::to_string(op->flagBase) + ") to free");
  const uint64_t j = ch.held[lane].front();
  ch.held[lane].pop_front();
  if (TileRec* rec = record(ch, j)) release(ch, *rec, j, lane, c.simStart + c.simCost);
  ++ch.freed[lane];
  dropReleased(ch);
  wakeAll();
  return true;
}

void Cluster::release(Channel& ch, TileRec& rec, uint64_t j, unsigned lane, uint64_t at) {
  rec.released |= bit(lane);
  rec.releasedAt = std::max(rec.releasedAt, at);
  if (rec.released == rec.consumers) {
    ch.slotFreeAt.resize(ch.cfg.slotNum);
    ch.slotFreeAt[j % ch.cfg.slotNum] = rec.releasedAt;
  }
}

void Cluster::dropReleased(Channel& ch) {
  while (!ch.tiles.empty() && ch.tiles.front().released == ch.tiles.front().consumers &&
         ch.tiles.front().producersDone == ch.tiles.front().producersNeeded) {
    ch.tiles.pop_front();
    ++ch.base;
  }
}

// ------------------------------------------------------------------ data movement

namespace {

/// The NZ tile the cube's L1 slot holds (A5 V2C): rows x cols of dtype in 16 x (32 / bytes)
/// boxes, as pto-isa's TINSERT into L1 lays it out.
TileOperand nzSlot(isa::DType d, uint32_t rows, uint32_t cols) {
  TileOperand s;
  s.dtype = d;
  s.blayout = isa::BLayout::ColMajor;
  s.slayout = isa::SLayout::RowMajor;
  s.rows = rows;
  s.cols = cols;
  s.innerRows = 16;
  s.innerCols = 32 / std::max(1u, isa::bitWidth(d) / 8);
  return s;
}

} // namespace

bool Cluster::writeSlot(Core& c, const TileInst& t, Channel& ch, uint64_t i, uint8_t split) {
  const TileOperand& src = t.tiles[t.src0];
  const unsigned bits = isa::bitWidth(src.dtype);
  if (bits < 8) return fail(c, "TPIPE_PUSH of sub-byte elements is not supported");
  const size_t sz = bits / 8;
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  if (!src.holds(vr, vc))
    return fail(c, "TPIPE_PUSH: valid shape " + std::to_string(vr) + "x" + std::to_string(vc) +
                       " exceeds tile %" + src.name);
  const isa::xcore::InitConfig& cfg = ch.cfg;
  const uint64_t S = cfg.slotSize, s = i % cfg.slotNum;
  const uint8_t* from = c.buf[src.loc] + src.offset;
  const unsigned k = c.lane == 0 ? 0 : c.lane - 1; // the vector core's sub-block
  auto tooBig = [&](uint64_t need) {
    return fail(c, "TPIPE_PUSH: the tile needs " + std::to_string(need) + " bytes of a " +
                       std::to_string(S) + "-byte slot of the " + dirName(ch.dir) + " pipe (flag " +
                       std::to_string(ch.flagBase) + ")");
  };
  if (cfg.gmPath) {
    // The GM ring: the tile's valid region row-major; a vector core writes its half (split 1: the
    // rows after the other core's, split 2: every other half row).
    uint64_t sub = 0, stride = vc;
    if (ch.dir == kV2C && split == 1) sub = uint64_t{k} * vr * vc * sz;
    if (ch.dir == kV2C && split == 2) sub = uint64_t{k} * vc * sz, stride = 2 * uint64_t{vc};
    const uint64_t need = sub + (vr ? (uint64_t{vr} - 1) * stride * sz + uint64_t{vc} * sz : 0);
    if (need > S) return tooBig(need);
    const uint64_t at = ch.gm[c.lane] + s * S + sub;
    for (uint32_t r = 0; r < vr; ++r) {
      uint8_t* row = c.translate(at + r * stride * sz, vc * sz, "TPIPE_PUSH", true);
      if (!row) return false;
      for (uint32_t col = 0; col < vc; ++col)
        std::memcpy(row + col * sz, from + src.elemOffset(r, col) * sz, sz);
    }
    return true;
  }
  if (ch.dir == kC2V) {
    // A5: each receiving vector core gets its part as a row-major tile in its slot (rows of
    // ConsN elements): the whole tile, the top or bottom half of the rows, or the left or right
    // half of the columns.
    const uint8_t consumers = consumerLanes(ch, split);
    if (split == 1 && vr % 2) return fail(c, "TPIPE_PUSH with split = 1 needs an even row count");
    if (split == 2 && (vc % 2 || src.cols % 2))
      return fail(c, "TPIPE_PUSH with split = 2 needs an even column count");
    const uint32_t consN = split == 2 ? src.cols / 2 : src.cols;
    const uint32_t rows = split == 1 ? vr / 2 : vr, cols = split == 2 ? vc / 2 : vc;
    const uint64_t need = rows ? ((uint64_t{rows} - 1) * consN + cols) * sz : 0;
    if (need > S) return tooBig(need);
    for (unsigned lane = 1; lane < kLanes; ++lane) {
      if (!(consumers & bit(lane))) continue;
      std::vector<uint8_t>& ring = ch.slots[lane];
      ring.resize(cfg.slotNum * S);
      const uint32_t r0 = split == 1 ? (lane - 1) * rows : 0,
                     c0 = split == 2 ? (lane - 1) * cols : 0;
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t col = 0; col < cols; ++col)
          std::memcpy(ring.data() + s * S + (size_t{r} * consN + col) * sz,
                      from + src.elemOffset(r0 + r, c0 + col) * sz, sz);
    }
    return true;
  }
  // A5 V2C: each vector core inserts its NZ tile into the cube's NZ slot, below (split 1) or
  // beside (split 2) the other core's part; the copy keeps the layout, so the tile must be NZ.
  if (src.blayout != isa::BLayout::ColMajor || src.slayout != isa::SLayout::RowMajor)
    return fail(c, "TPIPE_PUSH into an A5 V2C pipe needs an NZ vec tile (blayout=col_major, "
                   "slayout=row_major), as the cube's L1 slot holds NZ data; tile %" +
                       src.name + " is not");
  const uint32_t consM = split == 1 ? 2 * src.rows : src.rows;
  const uint32_t consN = split == 2 ? 2 * src.cols : src.cols;
  const TileOperand slot = nzSlot(src.dtype, consM, consN);
  if (slot.bytes() > S) return tooBig(slot.bytes());
  std::vector<uint8_t>& ring = ch.slots[0];
  ring.resize(cfg.slotNum * S);
  const uint32_t r0 = split == 1 ? k * vr : 0, c0 = split == 2 ? k * vc : 0;
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t col = 0; col < vc; ++col)
      std::memcpy(ring.data() + s * S + slot.elemOffset(r0 + r, c0 + col) * sz,
                  from + src.elemOffset(r, col) * sz, sz);
  return true;
}

bool Cluster::readSlot(Core& c, const TileInst& t, Channel& ch, uint64_t j, uint8_t split) {
  const TileOperand& dst = t.tiles[t.dst];
  const unsigned bits = isa::bitWidth(dst.dtype);
  if (bits < 8) return fail(c, "TPIPE_POP of sub-byte elements is not supported");
  const size_t sz = bits / 8;
  const isa::xcore::InitConfig& cfg = ch.cfg;
  const uint64_t S = cfg.slotSize, s = j % cfg.slotNum;
  uint8_t* to = c.buf[dst.loc] + dst.offset;
  if (cfg.gmPath) {
    const uint32_t vr = t.validRows(c), vc = t.validCols(c);
    if (!dst.holds(vr, vc))
      return fail(c, "TPIPE_POP: valid shape " + std::to_string(vr) + "x" + std::to_string(vc) +
                         " exceeds tile %" + dst.name);
    const unsigned k = c.lane == 0 ? 0 : c.lane - 1;
    uint64_t sub = 0, stride = vc;
    if (ch.dir == kC2V && split == 1) sub = uint64_t{k} * vr * vc * sz;
    if (ch.dir == kC2V && split == 2) sub = uint64_t{k} * vc * sz, stride = 2 * uint64_t{vc};
    const uint64_t need = sub + (vr ? (uint64_t{vr} - 1) * stride * sz + uint64_t{vc} * sz : 0);
    if (need > S)
      return fail(c, "TPIPE_POP: the tile needs " + std::to_string(need) + " bytes of a " +
                         std::to_string(S) + "-byte slot");
    const uint64_t at = ch.gm[c.lane] + s * S + sub;
    for (uint32_t r = 0; r < vr; ++r) {
      const uint8_t* row = c.translate(at + r * stride * sz, vc * sz, "TPIPE_POP", false);
      if (!row) return false;
      for (uint32_t col = 0; col < vc; ++col)
        std::memcpy(to + dst.elemOffset(r, col) * sz, row + col * sz, sz);
    }
    return true;
  }
  // A5: the tile is the slot's bytes (pto-isa binds it there).
  if (dst.bytes() > S)
    return fail(c, "TPIPE_POP: tile %" + dst.name + " (" + std::to_string(dst.bytes()) +
                       " bytes) is larger than the " + std::to_string(S) + "-byte slot of the " +
                       dirName(ch.dir) + " pipe (flag " + std::to_string(ch.flagBase) + ")");
  std::vector<uint8_t>& ring = ch.slots[c.lane];
  ring.resize(cfg.slotNum * S);
  std::memcpy(to, ring.data() + s * S, dst.bytes());
  // The consumer's reserved buffer holds the slot, as on the hardware.
  const int64_t local = ch.localSlot[c.lane];
  const unsigned loc = static_cast<unsigned>(ch.dir == kC2V ? isa::Loc::Vec : isa::Loc::Mat);
  if (local >= 0 && static_cast<uint64_t>(local) + (s + 1) * S <= c.bufSize[loc])
    std::memcpy(c.buf[loc] + local + s * S, ring.data() + s * S, S);
  return true;
}

} // namespace pto::rt
