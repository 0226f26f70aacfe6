#include "link/Races.h"

#include "isa/Encoding.h"
#include "isa/Pipes.h"

#include <algorithm>
#include <array>
#include <map>
#include <queue>
#include <unordered_set>

namespace pto::link {

namespace enc = isa::enc;

std::vector<std::optional<isa::Pipe>>
blockPipes(const FunctionCfg& cfg, std::span<const obj::TileDesc> tiles, isa::Arch arch) {
  std::vector<std::optional<isa::Pipe>> out(cfg.blocks.size());
  for (size_t b = 0; b < cfg.blocks.size(); ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.kind != BlockKind::Tile) continue;
    if (!blk.op) {
      out[b] = isa::Pipe::V;
      continue;
    }
    std::optional<isa::Loc> src, dst;
    for (const TileUse& u : cfg.usesOf(blk)) {
      if (u.tile >= tiles.size()) continue;
      if (!u.write && !src) src = tiles[u.tile].loc;
      if (u.write && !u.scratch && !dst) dst = tiles[u.tile].loc;
    }
    out[b] = isa::pipeOf(*blk.op, src, dst, arch);
  }
  return out;
}

std::vector<GmUse> gmUses(const FunctionCfg& cfg, const obj::ObjectFile& ob, uint32_t function) {
  std::vector<GmUse> out;
  for (const obj::GmAccess& a : ob.gmAccesses) {
    if (a.function != function) continue;
    const int32_t b = cfg.blockAt(a.textOffset);
    if (b < 0) continue;
    const Block& blk = cfg.blocks[static_cast<size_t>(b)];
    if (blk.offset != a.textOffset || blk.kind != BlockKind::Tile) continue;
    out.push_back({static_cast<uint32_t>(b), a});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GmUse& x, const GmUse& y) { return x.block < y.block; });
  return out;
}

namespace {

/// Whether some d in [first, inf) has lo < s x d < hi (s != 0).
bool multipleInOpenInterval(__int128 lo, __int128 hi, __int128 s, __int128 first) {
  if (s < 0) return multipleInOpenInterval(-hi, -lo, -s, first);
  // The smallest d >= first with s x d > lo, then whether s x d < hi.
  __int128 d = lo >= 0 ? lo / s + 1 : -((-lo) / s) + ((-lo) % s == 0 ? 1 : 0);
  if (d < first) d = first;
  return s * d < hi;
}

} // namespace

bool gmMayOverlap(const obj::GmAccess& earlier, uint32_t from, const obj::GmAccess& later,
                  uint32_t to) {
  if (earlier.param >= 0 && later.param >= 0 && earlier.param != later.param) return false;
  if (earlier.param < 0 || later.param < 0 || !earlier.known || !later.known) return true;
  if (earlier.symbol != later.symbol) return true; // unrelated run-time terms
  // earlier's bytes [a + sA x i, + eA), later's [b + sB x j, + eB).
  const __int128 a = earlier.offset, b = later.offset;
  const __int128 eA = static_cast<__int128>(earlier.bytes), eB = static_cast<__int128>(later.bytes);
  auto hullsMeet = [&](__int128 shift) { return a + shift < b + eB && b < a + shift + eA; };
  if (earlier.loop == 0 && later.loop == 0) return hullsMeet(0);
  // One moves with a loop the other is not in (or two different loops): no relation known.
  if (earlier.loop != later.loop || earlier.stride != later.stride) return true;
  // Both move by s a iteration; later's iteration is earlier's + d: they meet where
  // a - b - eB < s x d < a - b + eA. d = 0 only when earlier's block comes first.
  const __int128 s = earlier.stride, lo = a - b - eB, hi = a - b + eA;
  if (from < to && lo < 0 && 0 < hi) return true;
  return multipleInOpenInterval(lo, hi, s, 1);
}

namespace {

unsigned pipeBit(isa::Pipe p) {
  return 1u << static_cast<unsigned>(p);
}

/// A set of signal codes, numbered densely per function (the codes its set_flags and wait_flags
/// use), held in place: a state is copied at every join, and a heap-allocated set per access made
/// those copies the analysis' main cost. Narrow: up to 64 codes (nearly every function); wide:
/// every code there is (8 * 8 pipe pairs * 9 ids).
struct NarrowSignals {
  uint64_t bits = 0;
  bool has(uint16_t c) const { return (bits >> c) & 1; }
  void add(uint16_t c) { bits |= uint64_t{1} << c; }
  void remove(uint16_t c) { bits &= ~(uint64_t{1} << c); }
  NarrowSignals operator&(const NarrowSignals& o) const { return {bits & o.bits}; }
  auto operator<=>(const NarrowSignals&) const = default;
};
struct WideSignals {
  std::array<uint64_t, 9> bits{};
  bool has(uint16_t c) const { return (bits[c >> 6] >> (c & 63)) & 1; }
  void add(uint16_t c) { bits[c >> 6] |= uint64_t{1} << (c & 63); }
  void remove(uint16_t c) { bits[c >> 6] &= ~(uint64_t{1} << (c & 63)); }
  WideSignals operator&(const WideSignals& o) const {
    WideSignals r;
    for (size_t i = 0; i < bits.size(); ++i)
      r.bits[i] = bits[i] & o.bits[i];
    return r;
  }
  auto operator<=>(const WideSignals&) const = default;
};
constexpr size_t kSignalCodes = 8 * 8 * 9;

/// One access that later accesses may still conflict with.
template <class Sig> struct Pending {
  uint32_t block = 0, tile = 0;
  uint32_t slot = 0; // the access's index among all blocks' accesses (UseTable)
  isa::Pipe pipe = isa::Pipe::S;
  bool write = false;
  uint8_t vis = 0; // pipes whose later ops are ordered after this access
  Sig sig;         // set_flags issued after it that no wait has consumed yet
  auto key() const { return std::tuple(block, tile, write); }
};
template <class Sig> using State = std::vector<Pending<Sig>>;

uint16_t signalCode(const Block& b) {
  unsigned id =
      b.dynamicEvent || b.eventId < 0 || b.eventId > 7 ? 8u : static_cast<unsigned>(b.eventId);
  return static_cast<uint16_t>(
      (static_cast<unsigned>(b.srcPipe) * 8 + static_cast<unsigned>(b.dstPipe)) * 9 + id);
}

/// Merges `src` into `dst` (a path join): an access pending on either path stays pending, with
/// only the orderings both paths give it. Returns whether `dst` changed.
template <class Sig> bool mergeInto(State<Sig>& dst, const State<Sig>& srcIn) {
  const State<Sig>* srcp = &srcIn;
  State<Sig> sorted;
  auto byKey = [](const Pending<Sig>& a, const Pending<Sig>& b) { return a.key() < b.key(); };
  if (!std::is_sorted(dst.begin(), dst.end(), byKey)) std::sort(dst.begin(), dst.end(), byKey);
  if (!std::is_sorted(srcIn.begin(), srcIn.end(), byKey)) {
    sorted = srcIn;
    std::sort(sorted.begin(), sorted.end(), byKey);
    srcp = &sorted;
  }
  const State<Sig>& src = *srcp;
  State<Sig> out;
  out.reserve(dst.size() + src.size());
  bool changed = false;
  size_t i = 0, j = 0;
  while (i < dst.size() || j < src.size()) {
    if (j == src.size() || (i < dst.size() && dst[i].key() < src[j].key())) {
      out.push_back(dst[i++]);
    } else if (i == dst.size() || src[j].key() < dst[i].key()) {
      out.push_back(src[j++]);
      changed = true;
    } else {
      Pending<Sig> p = dst[i++];
      const Pending<Sig>& q = src[j++];
      uint8_t vis = p.vis & q.vis;
      Sig sig = p.sig & q.sig;
      if (vis != p.vis || sig != p.sig) changed = true;
      p.vis = vis;
      p.sig = sig;
      out.push_back(p);
    }
  }
  dst = std::move(out);
  return changed;
}

bool overlaps(const TileSpan& a, const TileSpan& b) {
  if (a.loc != b.loc) return false;
  if (a.offset < 0 || b.offset < 0) return true;
  return static_cast<uint64_t>(a.offset) < static_cast<uint64_t>(b.offset) + b.bytes &&
         static_cast<uint64_t>(b.offset) < static_cast<uint64_t>(a.offset) + a.bytes;
}

/// Whether `outer` covers every byte of `inner`.
bool covers(const TileSpan& outer, uint32_t outerTile, const TileSpan& inner, uint32_t innerTile) {
  if (outerTile == innerTile) return true;
  if (outer.loc != inner.loc || outer.offset < 0 || inner.offset < 0) return false;
  return outer.offset <= inner.offset && static_cast<uint64_t>(inner.offset) + inner.bytes <=
                                             static_cast<uint64_t>(outer.offset) + outer.bytes;
}

/// Per tile: the pipes that read and the pipes that write bytes it shares with some tile of the
/// function (itself included). A pending access that every such pipe is ordered after can never
/// race again and leaves the analysis state; without this, accesses kept alive by zero-trip loop
/// paths pile up and the analysis grows quadratically with the number of loops.
struct ConflictMasks {
  std::vector<uint8_t> readers, writers;
};

ConflictMasks conflictMasks(const FunctionCfg& cfg, std::span<const std::optional<isa::Pipe>> pipes,
                            const std::vector<TileSpan>& spans) {
  const size_t nt = spans.size();
  ConflictMasks direct{std::vector<uint8_t>(nt, 0), std::vector<uint8_t>(nt, 0)};
  for (size_t b = 0; b < cfg.blocks.size(); ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.kind != BlockKind::Tile) continue;
    const uint8_t bit = static_cast<uint8_t>(pipeBit(pipes[b].value_or(isa::Pipe::V)));
    for (const TileUse& u : cfg.usesOf(blk)) {
      if (u.read) direct.readers[u.tile] |= bit;
      if (u.write) direct.writers[u.tile] |= bit;
    }
  }
  ConflictMasks out = direct;
  auto share = [&](uint32_t a, uint32_t b) {
    out.readers[a] |= direct.readers[b], out.writers[a] |= direct.writers[b];
    out.readers[b] |= direct.readers[a], out.writers[b] |= direct.writers[a];
  };
  // Tiles of unknown placement overlap every tile of their buffer; placed ones overlap by range
  // (a sweep over the tiles sorted by offset visits only the overlapping pairs).
  std::map<isa::Loc, std::vector<uint32_t>> placed, unplaced;
  for (uint32_t t = 0; t < nt; ++t)
    (spans[t].offset < 0 ? unplaced : placed)[spans[t].loc].push_back(t);
  for (auto& [loc, ts] : unplaced)
    for (uint32_t u : ts) {
      for (uint32_t v : ts)
        share(u, v);
      for (uint32_t v : placed[loc])
        share(u, v);
    }
  for (auto& [loc, ts] : placed) {
    std::sort(ts.begin(), ts.end(),
              [&](uint32_t a, uint32_t b) { return spans[a].offset < spans[b].offset; });
    for (size_t i = 0; i < ts.size(); ++i)
      for (size_t j = i + 1; j < ts.size(); ++j) {
        const TileSpan &a = spans[ts[i]], &b = spans[ts[j]];
        if (static_cast<uint64_t>(b.offset) >= static_cast<uint64_t>(a.offset) + a.bytes) break;
        if (overlaps(a, b)) share(ts[i], ts[j]);
      }
  }
  return out;
}

/// unorderedDependencies with signal sets of type Sig over the codes numbered by `dense`: a
/// forward dataflow over the blocks in address order (a worklist), whose state is the accesses
/// still pending at a point; each block's ops order, report or retire them.
template <class Sig> class Analysis {
public:
  Analysis(const FunctionCfg& cfg, std::span<const std::optional<isa::Pipe>> pipes,
           std::span<const TileSpan> spans, isa::Arch arch, RaceStats* stats,
           std::span<const uint16_t> dense, std::span<const GmUse> gm, DrainPoints drains)
      : cfg_(cfg), pipes_(pipes), stats_(stats), dense_(dense), nb_(cfg.blocks.size()), gm_(gm),
        drains_(drains) {
    // Every tile the function names gets a span (a missing one: unplaced, may alias its buffer).
    uint32_t numTiles = static_cast<uint32_t>(spans.size());
    for (const TileUse& u : cfg.uses)
      numTiles = std::max(numTiles, u.tile + 1);
    spanTable_.assign(spans.begin(), spans.end());
    spanTable_.resize(numTiles);
    conflicts_ = conflictMasks(cfg, pipes, spanTable_);
    // GM accesses are accesses numbered after the tiles (gmBase_ + their index in gm_).
    gmBase_ = numTiles;
    gmConflictMasks();
    // A drain point waits on the scalar pipe for whatever is pending, whatever bytes: every
    // access stays pending until the scalar pipe is ordered after it.
    if (hasDrain()) {
      const auto s = static_cast<uint8_t>(pipeBit(isa::Pipe::S));
      for (uint8_t& m : conflicts_.readers)
        m |= s;
      for (uint8_t& m : conflicts_.writers)
        m |= s;
    }
    numberUses();
    for (unsigned q = 0; q < 8; ++q)
      if (isa::needsIntraPipeBarrier(arch, static_cast<isa::Pipe>(q)))
        barrierPipes_ |= static_cast<uint8_t>(1u << q);
  }

  std::vector<Dependency> run() {
    if (nb_ == 0) return {};
    in_.resize(nb_);
    has_.assign(nb_, 0);
    queued_.assign(nb_, 0);
    barrierAt_.assign(nb_, 0);
    settledAt_.assign(nb_, UINT32_MAX);
    has_[0] = 1;
    work_.push(0);
    queued_[0] = 1;
    while (!work_.empty()) {
      uint32_t b = work_.top();
      work_.pop();
      queued_[b] = 0;
      visit(b);
    }
    std::sort(deps_.begin(), deps_.end(), [](const Dependency& a, const Dependency& b) {
      return std::pair(a.to, a.from) < std::pair(b.to, b.from);
    });
    return std::move(deps_);
  }

private:
  bool isGm(uint32_t t) const { return t >= gmBase_; }
  const obj::GmAccess& gmOf(uint32_t t) const { return gm_[t - gmBase_].access; }

  /// The pipes that read and write each GM access's parameter (an access of no known
  /// parameter: every one's), as conflictMasks gives them for tiles.
  void gmConflictMasks() {
    const size_t n = gmBase_ + gm_.size();
    conflicts_.readers.resize(n, 0);
    conflicts_.writers.resize(n, 0);
    std::map<int32_t, std::pair<uint8_t, uint8_t>> byParam; // readers, writers
    for (const GmUse& g : gm_) {
      const uint8_t bit = static_cast<uint8_t>(pipeBit(pipes_[g.block].value_or(isa::Pipe::V)));
      auto& [r, w] = byParam[g.access.param];
      (g.access.write ? w : r) |= bit;
    }
    const auto any = byParam.count(-1) ? byParam[-1] : std::pair<uint8_t, uint8_t>{0, 0};
    for (size_t k = 0; k < gm_.size(); ++k) {
      uint8_t r = any.first, w = any.second;
      if (gm_[k].access.param < 0) {
        for (auto& [p, rw] : byParam)
          r |= rw.first, w |= rw.second;
      } else {
        r |= byParam[gm_[k].access.param].first;
        w |= byParam[gm_[k].access.param].second;
      }
      conflicts_.readers[gmBase_ + k] = r;
      conflicts_.writers[gmBase_ + k] = w;
    }
  }

  /// One access of a block: a tile, read and/or written (its read and write merged).
  struct Use {
    uint32_t tile;
    bool read, write;
  };

  /// Each block's tile operands, one access per tile, numbered across the function: an
  /// access's number (its slot) keys what is known about it.
  void numberUses() {
    useStart_.assign(nb_ + 1, 0);
    useTable_.reserve(cfg_.uses.size() + gm_.size());
    size_t nextGm = 0;
    for (size_t b = 0; b < nb_; ++b) {
      useStart_[b] = static_cast<uint32_t>(useTable_.size());
      const Block& blk = cfg_.blocks[b];
      if (blk.kind == BlockKind::Tile)
        for (const TileUse& u : cfg_.usesOf(blk)) {
          if (!u.read && !u.write) continue; // TASSIGN: binds an address, touches no data
          auto first = useTable_.begin() + useStart_[b];
          auto it =
              std::find_if(first, useTable_.end(), [&](const Use& x) { return x.tile == u.tile; });
          if (it == useTable_.end())
            useTable_.push_back({u.tile, u.read, u.write});
          else
            it->read |= u.read, it->write |= u.write;
        }
      for (; nextGm < gm_.size() && gm_[nextGm].block <= b; ++nextGm)
        if (gm_[nextGm].block == b)
          useTable_.push_back({gmBase_ + static_cast<uint32_t>(nextGm), !gm_[nextGm].access.write,
                               gm_[nextGm].access.write});
    }
    useStart_[nb_] = static_cast<uint32_t>(useTable_.size());
    // Pipes each access is ordered before on every path from it: a reported cross-pipe
    // dependency gets a set after the access and a wait that every path leaving it passes
    // (planAutoSync: on its straight line, at the line's end, or at the loop top and exit), so
    // later accesses on that pipe need no sync of their own. By slot.
    willOrder_.assign(useTable_.size(), 0);
  }

  /// Whether pipe q's later ops are ordered after pending access p. A pipe moves GM in order
  /// (its DMA queue; the npu model's GM check likewise skips one pipe's own accesses): a GM
  /// access is ordered for its own pipe, barrier or not.
  bool orderedFor(const Pending<Sig>& p, isa::Pipe q) const {
    if (p.pipe == q && isGm(p.tile)) return true;
    const bool needBarrier = (barrierPipes_ & pipeBit(q)) != 0;
    return p.pipe != q ? (p.vis & pipeBit(q)) != 0 : (!needBarrier || (p.vis & pipeBit(q)));
  }

  /// The pipes that may still race with `p`: those touching its bytes in a conflicting way that
  /// nothing orders after it yet. None: `p` is retired from the state.
  uint8_t unorderedPipes(const Pending<Sig>& p) const {
    uint8_t candidates = conflicts_.writers[p.tile] | (p.write ? conflicts_.readers[p.tile] : 0);
    // orderedFor for every pipe at once: another pipe once p.vis has it, p's own pipe also when
    // it needs no barrier.
    const uint8_t ordered =
        p.vis | static_cast<uint8_t>(pipeBit(p.pipe) & (isGm(p.tile) ? 0xff : ~barrierPipes_));
    return static_cast<uint8_t>(candidates & ~ordered);
  }

  /// Accesses whose only open pipe is their own (waiting for a pipe_barrier) and that agree in
  /// everything but the block behave alike from here on: a later op of that pipe that conflicts
  /// with one conflicts with all, and the barrier put before it orders all of them. One stands
  /// for the group (the earliest, whose barrier dependency would be reported); without this,
  /// zero-trip loop paths keep one such access alive per preceding loop.
  void coalesce(State<Sig>& st) {
    idle_.clear();
    for (size_t i = 0; i < st.size(); ++i)
      if (unorderedPipes(st[i]) == pipeBit(st[i].pipe)) idle_.push_back(i);
    if (idle_.size() < 2) return;
    auto alike = [&](size_t a, size_t b) {
      return std::tie(st[a].tile, st[a].pipe, st[a].write, st[a].vis, st[a].sig) ==
             std::tie(st[b].tile, st[b].pipe, st[b].write, st[b].vis, st[b].sig);
    };
    std::sort(idle_.begin(), idle_.end(), [&](size_t a, size_t b) {
      return std::tie(st[a].tile, st[a].pipe, st[a].write, st[a].vis, st[a].sig, st[a].block) <
             std::tie(st[b].tile, st[b].pipe, st[b].write, st[b].vis, st[b].sig, st[b].block);
    });
    drop_.assign(st.size(), 0);
    for (size_t k = 1; k < idle_.size(); ++k)
      if (alike(idle_[k - 1], idle_[k])) drop_[idle_[k]] = 1;
    size_t w = 0;
    for (size_t i = 0; i < st.size(); ++i)
      if (!drop_[i]) {
        if (w != i) st[w] = st[i];
        ++w;
      }
    st.resize(w);
  }

  void settle(State<Sig>& st) {
    if (anyWillOrder_)
      for (Pending<Sig>& p : st)
        p.vis |= willOrder_[p.slot];
    std::erase_if(st, [&](const Pending<Sig>& p) { return unorderedPipes(p) == 0; });
    coalesce(st);
  }

  bool hasDrain() const {
    for (const Block& blk : cfg_.blocks)
      if (isDrain(blk)) return true;
    return false;
  }
  bool isDrain(const Block& blk) const {
    return (drains_.calls && blk.transfer == Transfer::Call) ||
           (drains_.returns && blk.transfer == Transfer::Ret);
  }

  /// A call or return that must wait for every pending access: one dependency per access not yet
  /// ordered for the scalar pipe (its set/wait pair is put before the block); then nothing is
  /// pending, as after pipe_barrier(PIPE_ALL).
  void drain(uint32_t b, State<Sig>& st) {
    for (const Pending<Sig>& p : st)
      if (!orderedFor(p, isa::Pipe::S)) report(p, Use{p.tile, true, true}, b, isa::Pipe::S);
    st.clear();
  }

  bool isJoin(uint32_t b) const { return b == 0 || cfg_.predsOf(b).size() != 1; }
  const TileSpan& spanOf(uint32_t t) const { return spanTable_[t]; }

  /// Block `b` on the state that reaches it; its state goes on to its successors.
  void visit(uint32_t b) {
    State<Sig> st = isJoin(b) ? in_[b] : std::move(in_[b]);
    const Block& blk = cfg_.blocks[b];
    // A state settled while the will-order marks were at generation g, and not merged since, is
    // unchanged by settling again at g: a block that touches no access (scalar code, a control
    // op other than sync) passes it on as it is. Most blocks are such.
    const bool passes = blk.kind == BlockKind::Scalar ||
                        (blk.kind == BlockKind::Control && !isFlag(blk) && !isBarrier(blk));
    const bool settled = passes && settledAt_[b] == willGen_;
    if (blk.kind == BlockKind::Control) syncOp(blk, st);
    if (blk.kind == BlockKind::Tile) tileOp(b, st);
    if (isDrain(blk)) drain(b, st);
    if (!settled) settle(st);
    if (stats_) {
      ++stats_->blockVisits;
      stats_->peakPending = std::max(stats_->peakPending, st.size());
    }
    propagate(blk, st);
  }

  /// The sync ops: a set signals the accesses its pipe has done, a wait orders the signalled
  /// ones before its pipe, a barrier orders its pipe's (all, for PIPE_ALL).
  void syncOp(const Block& blk, State<Sig>& st) const {
    switch (blk.control) {
    case ExtCtl::SET_FLAG: {
      const uint16_t code = dense_[signalCode(blk)];
      for (Pending<Sig>& p : st)
        if (p.pipe == blk.srcPipe || (p.vis & pipeBit(blk.srcPipe))) p.sig.add(code);
      break;
    }
    case ExtCtl::WAIT_FLAG: {
      // A wait on the scalar pipe stalls the unit that issues every pipe's ops: whatever is
      // issued after it starts after the signalled access.
      const uint16_t code = dense_[signalCode(blk)];
      const auto seen =
          static_cast<uint8_t>(blk.dstPipe == isa::Pipe::S ? 0xFF : pipeBit(blk.dstPipe));
      for (Pending<Sig>& p : st)
        if (p.sig.has(code)) {
          p.sig.remove(code);
          p.vis |= seen;
        }
      break;
    }
    case ExtCtl::PIPE_BARRIER:
      if (blk.srcPipe == isa::Pipe::All)
        st.clear();
      else
        for (Pending<Sig>& p : st)
          if (p.pipe == blk.srcPipe) p.vis |= static_cast<uint8_t>(pipeBit(blk.srcPipe));
      break;
    default:
      break;
    }
  }

  /// Whether pending `p` and access `u` of block `b` (on pipe q) touch common bytes with one
  /// writing them, and nothing orders q after p yet.
  bool conflicting(const Pending<Sig>& p, const Use& u, uint32_t b, isa::Pipe q) const {
    if (!(p.write || u.write) || isGm(p.tile) != isGm(u.tile)) return false;
    const bool meet = isGm(p.tile)
                          ? gmCrowded_ || gmMayOverlap(gmOf(p.tile), p.block, gmOf(u.tile), b)
                          : overlaps(spanOf(p.tile), spanOf(u.tile));
    return meet && !orderedFor(p, q); // p.block == b: the previous iteration
  }

  /// Whether `u`'s access supersedes pending access `t`: a tile covering its bytes; a GM
  /// access only its own op's earlier ones (whose iterations gmMayOverlap accounts for).
  bool supersedes(uint32_t u, uint32_t t) const {
    if (isGm(u) || isGm(t)) return u == t;
    return covers(spanOf(u), u, spanOf(t), t);
  }

  void report(const Pending<Sig>& p, const Use& u, uint32_t b, isa::Pipe q) {
    if (!seen_.insert((static_cast<uint64_t>(p.block) << 32) | b).second) return;
    Dependency d;
    d.from = p.block;
    d.to = b;
    d.fromTile = p.tile;
    d.toTile = u.tile;
    d.kind = p.write && u.write ? DepKind::WAW : p.write ? DepKind::RAW : DepKind::WAR;
    d.fromPipe = p.pipe;
    d.toPipe = q;
    d.barrier = p.pipe == q;
    if (isGm(p.tile)) {
      d.gm = true;
      d.param = gmOf(p.tile).param >= 0 ? gmOf(p.tile).param : gmOf(u.tile).param;
    }
    deps_.push_back(d);
  }

  /// A tile block of pipe q: its dependencies on the pending accesses (reported), then its own
  /// accesses pending in their place.
  void tileOp(uint32_t b, State<Sig>& st) {
    const isa::Pipe q = pipes_[b].value_or(isa::Pipe::V);
    const bool needBarrier = (barrierPipes_ & pipeBit(q)) != 0;
    const std::span<const Use> uses(useTable_.data() + useStart_[b],
                                    useStart_[b + 1] - useStart_[b]);
    // GM accesses at disjoint bytes that no pipe orders (rows loaded and stored in place, on and
    // on in straight-line code) would stay pending without end and make the analysis quadratic:
    // past kMaxPendingGm of them, a GM access of this block conflicts with each, which orders
    // and retires them (more sync than the bytes need, never less).
    size_t pendingGm = 0;
    for (const Pending<Sig>& p : st)
      pendingGm += isGm(p.tile);
    gmCrowded_ = pendingGm > kMaxPendingGm;
    // Same pipe: the pipe_barrier(q) that planAutoSync puts in front of this block for one such
    // dependency orders every earlier op of pipe q, so one dependency (the earliest op) is
    // reported per block and the barrier's effect applies on every later visit.
    auto applyBarrier = [&] {
      for (Pending<Sig>& p : st)
        if (p.pipe == q) p.vis |= static_cast<uint8_t>(pipeBit(q));
    };
    if (barrierAt_[b]) applyBarrier();
    if (needBarrier && !barrierAt_[b]) {
      const Pending<Sig>* first = nullptr;
      const Use* firstUse = nullptr;
      for (const Use& u : uses)
        for (const Pending<Sig>& p : st)
          if (p.pipe == q && conflicting(p, u, b, q) && (!first || p.block < first->block))
            first = &p, firstUse = &u;
      if (first) {
        report(*first, *firstUse, b, q);
        barrierAt_[b] = 1;
        applyBarrier();
      }
    }
    // Other pipes: the set/wait pair that will order the dependency orders every later op of
    // pipe q after p (a pipe runs in order) on every path from p, so later accesses on q need
    // no second one.
    for (const Use& u : uses)
      for (Pending<Sig>& p : st)
        if (conflicting(p, u, b, q)) {
          p.vis |= static_cast<uint8_t>(pipeBit(q));
          if (!(willOrder_[p.slot] & pipeBit(q))) {
            willOrder_[p.slot] |= static_cast<uint8_t>(pipeBit(q));
            ++willGen_;
          }
          anyWillOrder_ = true;
          report(p, u, b, q);
        }
    for (const Use& u : uses) {
      // Accesses this one supersedes: later conflicts with them are conflicts with this one,
      // and whatever orders this one after them (or will, once the race is fixed) carries over.
      // A read supersedes only an earlier read on its own pipe: a later reader on a third pipe
      // is not ordered after an earlier write by this read (read-read needs no sync).
      std::erase_if(st, [&](const Pending<Sig>& p) {
        if (!supersedes(u.tile, p.tile)) return false;
        return u.write || (!p.write && p.pipe == q);
      });
    }
    for (size_t k = 0; k < uses.size(); ++k)
      st.push_back({b,
                    uses[k].tile,
                    useStart_[b] + static_cast<uint32_t>(k),
                    q,
                    uses[k].write,
                    static_cast<uint8_t>(needBarrier && !isGm(uses[k].tile) ? 0 : pipeBit(q)),
                    {}});
  }

  /// The state after `blk` into its successors: kept as is where a successor has one
  /// predecessor, merged at a join (queued again when the merge changed it).
  void propagate(const Block& blk, State<Sig>& st) {
    int32_t succ[2] = {blk.succ[0], blk.succ[1]};
    int n = (succ[0] >= 0) + (succ[1] >= 0);
    for (int32_t sx : succ) {
      if (sx < 0) continue;
      uint32_t s = static_cast<uint32_t>(sx);
      bool last = --n == 0;
      bool push = false;
      if (isJoin(s)) {
        if (!has_[s]) {
          in_[s] = last ? std::move(st) : st;
          has_[s] = 1;
          settledAt_[s] = willGen_;
          push = true;
        } else {
          push = mergeInto(in_[s], st);
          if (push) settledAt_[s] = UINT32_MAX;
        }
      } else {
        in_[s] = last ? std::move(st) : st;
        settledAt_[s] = willGen_;
        push = true;
      }
      if (push && !queued_[s]) {
        queued_[s] = 1;
        work_.push(s);
      }
    }
  }

  const FunctionCfg& cfg_;
  std::span<const std::optional<isa::Pipe>> pipes_;
  RaceStats* stats_;
  std::span<const uint16_t> dense_;
  const size_t nb_;
  std::vector<Dependency> deps_;
  std::unordered_set<uint64_t> seen_; // (from, to) pairs reported
  std::vector<TileSpan> spanTable_;
  ConflictMasks conflicts_;
  std::vector<Use> useTable_;
  std::vector<uint32_t> useStart_;
  std::vector<uint8_t> willOrder_;
  bool anyWillOrder_ = false;
  uint32_t willGen_ = 0;      // bumped whenever a will-order mark grows
  uint8_t barrierPipes_ = 0;  // the pipes whose same-pipe dependencies need a pipe_barrier
  std::vector<size_t> idle_;  // coalesce's scratch, kept across block visits
  std::vector<uint8_t> drop_; // likewise
  std::vector<State<Sig>> in_;
  std::vector<uint8_t> has_, queued_;
  std::vector<uint8_t> barrierAt_; // a same-pipe dependency puts a barrier before block
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> work_;
  std::vector<uint32_t> settledAt_; // in_[b]'s generation, or none
  std::span<const GmUse> gm_;
  DrainPoints drains_;
  uint32_t gmBase_ = 0;
  static constexpr size_t kMaxPendingGm = 64;
  bool gmCrowded_ = false; // the block being visited sees more than kMaxPendingGm
};

} // namespace

std::vector<Dependency> unorderedDependencies(const FunctionCfg& cfg,
                                              std::span<const std::optional<isa::Pipe>> pipes,
                                              std::span<const TileSpan> spans, isa::Arch arch,
                                              RaceStats* stats, std::span<const GmUse> gm,
                                              DrainPoints drains) {
  // The signal codes the function uses, numbered in order of appearance.
  std::vector<uint16_t> dense(kSignalCodes, UINT16_MAX);
  uint16_t n = 0;
  for (const Block& b : cfg.blocks)
    if (isFlag(b) && dense[signalCode(b)] == UINT16_MAX) dense[signalCode(b)] = n++;
  if (n <= 64)
    return Analysis<NarrowSignals>(cfg, pipes, spans, arch, stats, dense, gm, drains).run();
  return Analysis<WideSignals>(cfg, pipes, spans, arch, stats, dense, gm, drains).run();
}

} // namespace pto::link
