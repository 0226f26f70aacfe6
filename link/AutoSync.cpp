#include "link/AutoSync.h"

#include "link/Passes.h"

#include "isa/Encoding.h"

#include <array>
#include <map>
#include <optional>
#include <tuple>

namespace pto::link {

namespace enc = isa::enc;

namespace {
std::vector<uint8_t> encodeSyncBlock(bool set, isa::Pipe src, isa::Pipe dst, uint32_t id) {
  std::vector<uint8_t> out;
  for (const enc::Inst& in :
       {enc::extControl(set ? enc::ExtCtl::SET_FLAG : enc::ExtCtl::WAIT_FLAG, src, dst),
        enc::bDim(0, 0, id), enc::bstop()}) {
    auto e = enc::encode(in);
    for (unsigned k = 0; k < e->bits / 8; ++k)
      out.push_back(static_cast<uint8_t>(e->value >> (8 * k)));
  }
  return out;
}
} // namespace

std::vector<uint8_t> syncBlockBytes(bool set, isa::Pipe src, isa::Pipe dst, uint32_t id) {
  // Inserted sync is mostly id 0 (patched by the Event relocation): encoded once per pipe pair.
  constexpr size_t kPipes = 8;
  static const auto cache = [] {
    std::array<std::array<std::array<std::vector<uint8_t>, kPipes>, kPipes>, 2> m;
    for (bool s : {false, true})
      for (size_t a = 0; a < kPipes; ++a)
        for (size_t b = 0; b < kPipes; ++b)
          m[s][a][b] = encodeSyncBlock(s, static_cast<isa::Pipe>(a), static_cast<isa::Pipe>(b), 0);
    return m;
  }();
  const auto a = static_cast<size_t>(src), b = static_cast<size_t>(dst);
  if (id == 0 && a < kPipes && b < kPipes) return cache[set][a][b];
  return encodeSyncBlock(set, src, dst, id);
}

std::vector<uint8_t> barrierBlockBytes(isa::Pipe pipe) {
  auto encodeBarrier = [](isa::Pipe p) {
    std::vector<uint8_t> out;
    for (const enc::Inst& in : {enc::extControl(enc::ExtCtl::PIPE_BARRIER, p), enc::bstop()}) {
      auto e = enc::encode(in);
      for (unsigned k = 0; k < e->bits / 8; ++k)
        out.push_back(static_cast<uint8_t>(e->value >> (8 * k)));
    }
    return out;
  };
  constexpr size_t kPipes = 8; // encoded once per pipe
  static const auto cache = [&] {
    std::array<std::vector<uint8_t>, kPipes> m;
    for (size_t a = 0; a < kPipes; ++a)
      m[a] = encodeBarrier(static_cast<isa::Pipe>(a));
    return m;
  }();
  const auto a = static_cast<size_t>(pipe);
  return a < kPipes ? cache[a] : encodeBarrier(pipe);
}

namespace {

/// Where a sync block goes: in front of the block starting at `offset`, for every path into it
/// (`entry`) or only for the fall-through from the block before it.
struct Spot {
  uint64_t offset = 0;
  bool entry = false;
  auto operator<=>(const Spot&) const = default;
};

/// planAutoSync, step by step: where each dependency's sync goes (a pair on the straight line
/// after the earlier op, or carried across a loop; a barrier before the later op), the pairs and
/// barriers that cover others dropped, then the blocks placed.
class SyncPlanner {
public:
  SyncPlanner(const FunctionCfg& cfg, std::span<const Dependency> deps, uint32_t function,
              PatternInsertions& insertions)
      : cfg_(cfg), blocks_(cfg.blocks), deps_(deps), function_(function), insertions_(insertions) {}

  AutoSyncPlan run(uint32_t firstEvent, const std::string& prefix,
                   const std::set<uint32_t>& asBarrier) {
    gather();
    place(firstEvent, prefix, asBarrier);
    return std::move(plan_);
  }

private:
  bool single(int32_t s) const {
    return s >= 0 && cfg_.predsOf(static_cast<uint32_t>(s)).size() == 1;
  }
  static bool isBranch(const Block& b) {
    return b.transfer == Transfer::Direct || b.transfer == Transfer::Cond ||
           b.transfer == Transfer::Ret;
  }

  /// The straight line of blocks after `from`: where its wait goes, and whether `to` is on it.
  struct Line {
    Spot wait;
    uint32_t dist = 0;
    bool reachesTo = false;
    int32_t last = -1; // the last block of the line
  };
  Line lineAfter(uint32_t from, uint32_t to) const {
    Line l;
    uint32_t cur = from;
    for (;;) {
      const Block& cb = blocks_[cur];
      if (cur != from && isBranch(cb)) {
        l.wait = {cb.offset, true};
        l.last = static_cast<int32_t>(cur);
        return l;
      }
      int32_t s = cb.succ[0];
      if (s < 0 || cb.succ[1] >= 0 || !single(s) || static_cast<uint32_t>(s) == from) {
        l.wait = {cb.end, false};
        l.last = static_cast<int32_t>(cur);
        return l;
      }
      ++l.dist;
      if (static_cast<uint32_t>(s) == to) {
        l.wait = {blocks_[static_cast<size_t>(s)].offset, true};
        l.reachesTo = true;
        l.last = s;
        return l;
      }
      cur = static_cast<uint32_t>(s);
    }
  }

  /// The straight line at the top of the loop whose latch is `latch` (a DIRECT back edge):
  /// set when `to` is on it, with the loop's header and exit block.
  struct Loop {
    uint32_t header = 0;
    int32_t exit = -1;
  };
  std::optional<Loop> loopTop(uint32_t latch, uint32_t to) const {
    const Block& lb = blocks_[latch];
    if (lb.transfer != Transfer::Direct || lb.succ[0] < 0 ||
        static_cast<uint32_t>(lb.succ[0]) > latch)
      return std::nullopt;
    uint32_t h = static_cast<uint32_t>(lb.succ[0]);
    if (cfg_.predsOf(h).size() != 2 || to <= h || to >= latch) return std::nullopt;
    // The exit: the header line's conditional block leaves the loop.
    uint32_t cur = h;
    int32_t exit = -1;
    for (uint32_t steps = 0; steps < blocks_.size(); ++steps) {
      const Block& cb = blocks_[cur];
      if (cb.transfer == Transfer::Cond) {
        int32_t t = cb.succ[1];
        if (t < 0 || static_cast<uint32_t>(t) <= latch || !single(t)) return std::nullopt;
        exit = t;
        if (!single(cb.succ[0])) return std::nullopt;
        cur = static_cast<uint32_t>(cb.succ[0]);
        break;
      }
      if (cb.succ[0] < 0 || cb.succ[1] >= 0 || (cur != h && !single(static_cast<int32_t>(cur))))
        return std::nullopt;
      if (cur == to) return std::nullopt;
      cur = static_cast<uint32_t>(cb.succ[0]);
      if (!single(static_cast<int32_t>(cur))) return std::nullopt;
    }
    if (exit < 0) return std::nullopt;
    // From the body's first block, straight to `to`.
    for (;;) {
      if (cur == to) return Loop{h, exit};
      const Block& cb = blocks_[cur];
      if (isBranch(cb) || cb.succ[1] >= 0 || !single(cb.succ[0])) return std::nullopt;
      cur = static_cast<uint32_t>(cb.succ[0]);
    }
  }

  /// The loop around `to` ... `from` (in address order) when it has the multi-buffered shape
  /// (link/MultiBuffer.h): a straight body whose exit tests all branch to the block after its back
  /// edge, entered only at its header, with no exit test between `to` and `from`. An exit then
  /// leaves either before `to` (the last set is pending) or after `from` (this round's set is):
  /// one wait at the exit block balances every path.
  std::optional<Loop> unrolledLoop(uint32_t from, uint32_t to) const {
    if (to >= from) return std::nullopt;
    uint32_t latch = from;
    while (latch < blocks_.size() &&
           (blocks_[latch].transfer == Transfer::Fall || blocks_[latch].transfer == Transfer::Cond))
      ++latch;
    if (latch >= blocks_.size() || blocks_[latch].transfer != Transfer::Direct ||
        blocks_[latch].succ[0] < 0 || static_cast<uint32_t>(blocks_[latch].succ[0]) > to)
      return std::nullopt;
    const auto h = static_cast<uint32_t>(blocks_[latch].succ[0]);
    const int32_t exit = cfg_.blockAt(blocks_[latch].end);
    if (exit < 0 || cfg_.predsOf(h).size() != 2) return std::nullopt;
    bool exits = false;
    for (uint32_t b = h; b < latch; ++b) {
      const Block& cb = blocks_[b];
      if (b != h)
        for (uint32_t p : cfg_.predsOf(b))
          if (p < h || p > latch) return std::nullopt;
      if (cb.transfer == Transfer::Cond) {
        if (cb.target != static_cast<int64_t>(blocks_[latch].end) || (b > to && b < from))
          return std::nullopt;
        exits = true;
      } else if (cb.transfer != Transfer::Fall) {
        return std::nullopt;
      }
    }
    for (uint32_t p : cfg_.predsOf(static_cast<uint32_t>(exit)))
      if (p < h || p > latch || blocks_[p].transfer != Transfer::Cond) return std::nullopt;
    if (!exits) return std::nullopt;
    return Loop{h, exit};
  }

  struct PairPlan {
    isa::Pipe src, dst;
    uint32_t dep, dist;
    Spot set, wait;
    std::optional<Spot> preSet, postWait; // loop-carried compensation
    SyncItem::Kind kind;
  };

  /// The pair that orders dependency k (not a barrier one).
  PairPlan pairFor(uint32_t k) const {
    const Dependency& d = deps_[k];
    Line l = lineAfter(d.from, d.to);
    PairPlan p{d.fromPipe, d.toPipe, k,  l.dist,        Spot{blocks_[d.from].end, false},
               l.wait,     {},       {}, SyncItem::Pair};
    if (!l.reachesTo && l.last >= 0) {
      auto loop = loopTop(static_cast<uint32_t>(l.last), d.to);
      if (!loop) loop = unrolledLoop(d.from, d.to);
      if (loop) {
        // Carried to the next iteration: wait at the top, set at the end; a set before the loop
        // satisfies the first wait and a wait after it consumes the last set.
        p.kind = SyncItem::LoopPair;
        p.wait = {blocks_[d.to].offset, true};
        p.preSet = Spot{blocks_[loop->header].offset, false};
        p.postWait = Spot{blocks_[static_cast<size_t>(loop->exit)].offset, true};
      }
    }
    return p;
  }

  /// Pairs by (kind, src, dst, wait spot), barriers by (pipe, block offset): gathered, then
  /// sorted by key (stably: in dependency order within a key). Of the pairs of one key the one
  /// with the shortest line stands (the later op covers the earlier one; the first of equals),
  /// of the barriers the first.
  void gather() {
    using PairKey = std::tuple<int, int, int, Spot>;
    std::vector<std::pair<PairKey, PairPlan>> pairList;
    std::vector<std::pair<BarrierKey, uint32_t>> barrierList;
    for (uint32_t k = 0; k < deps_.size(); ++k) {
      const Dependency& d = deps_[k];
      if (d.barrier) {
        barrierList.push_back({{static_cast<int>(d.toPipe), blocks_[d.to].offset}, k});
        continue;
      }
      PairPlan p = pairFor(k);
      pairList.push_back({PairKey(static_cast<int>(p.kind), static_cast<int>(d.fromPipe),
                                  static_cast<int>(d.toPipe), p.wait),
                          p});
    }
    std::stable_sort(pairList.begin(), pairList.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < pairList.size(); ++i) {
      if (i == 0 || pairList[i - 1].first != pairList[i].first)
        pairs_.push_back(pairList[i].second);
      else if (pairList[i].second.dist < pairs_.back().dist)
        pairs_.back() = pairList[i].second;
    }
    dropCovered();
    std::stable_sort(barrierList.begin(), barrierList.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < barrierList.size(); ++i)
      if (i == 0 || barrierList[i - 1].first != barrierList[i].first)
        barriers_.push_back(barrierList[i]);
  }

  /// Pairs of one kind and pipe pair that set at the same spot (after the same op) order their
  /// later ops with the first of their waits: every path from the set passes it before the others
  /// (a straight line, or the top of the same loop body), and a wait holds every later op of its
  /// pipe. The others are dropped (a tadd that reads two loaded tiles needs one loop-carried
  /// pair, not one per tile). Kept in their order.
  void dropCovered() {
    auto key = [](const PairPlan& p) {
      return std::tuple(static_cast<int>(p.kind), static_cast<int>(p.src), static_cast<int>(p.dst),
                        p.set, p.preSet, p.postWait);
    };
    auto earlier = [](const PairPlan& a, const PairPlan& b) {
      return a.kind == SyncItem::LoopPair ? a.wait.offset < b.wait.offset : a.dist < b.dist;
    };
    std::map<decltype(key(pairs_[0])), size_t> first;
    std::vector<uint8_t> drop(pairs_.size(), 0);
    for (size_t i = 0; i < pairs_.size(); ++i) {
      auto [it, fresh] = first.try_emplace(key(pairs_[i]), i);
      if (fresh) continue;
      if (earlier(pairs_[i], pairs_[it->second])) {
        drop[it->second] = 1;
        it->second = i;
      } else {
        drop[i] = 1;
      }
    }
    size_t w = 0;
    for (size_t i = 0; i < pairs_.size(); ++i)
      if (!drop[i]) pairs_[w++] = pairs_[i];
    pairs_.resize(w);
  }

  /// Pair k ran out of event ids: merged into another pair j of its kind and pipes, the nearest,
  /// when the pair that sets after the later of their ops and waits before the earlier of their
  /// consumers orders both dependencies: in-line pairs whose sets and waits lie on one straight
  /// line, both sets before both waits; loop-carried pairs of the same loop whose ops lie on one
  /// straight line and whose consumers do. nullopt when there is none (then a PIPE_ALL barrier).
  std::optional<size_t> mergePartner(size_t k, const std::set<uint32_t>& asBarrier,
                                     const std::vector<uint8_t>& gone) const {
    const PairPlan& pk = pairs_[k];
    const Ends dk = ends_[k];
    std::optional<size_t> best;
    uint32_t bestGap = UINT32_MAX;
    auto on = [&](uint32_t x, uint32_t y) { return x == y || lineAfter(x, y).reachesTo; };
    for (size_t j = 0; j < pairs_.size(); ++j) {
      const PairPlan& pj = pairs_[j];
      if (j == k || gone[j] || asBarrier.count(static_cast<uint32_t>(j)) || pj.kind != pk.kind ||
          pj.src != pk.src || pj.dst != pk.dst || pj.preSet != pk.preSet ||
          pj.postWait != pk.postWait)
        continue;
      const Ends dj = ends_[j];
      const uint32_t a = std::min(dk.from, dj.from), b = std::max(dk.from, dj.from);
      const uint32_t to = std::min(dk.to, dj.to), late = std::max(dk.to, dj.to);
      if (!on(a, b)) continue;
      if (pk.kind == SyncItem::Pair) {
        if (!lineAfter(dk.from, dk.to).reachesTo || !lineAfter(dj.from, dj.to).reachesTo ||
            !lineAfter(b, to).reachesTo)
          continue;
      } else if (!on(to, late)) {
        continue;
      }
      if (b - a < bestGap) bestGap = b - a, best = j;
    }
    return best;
  }

  /// The pattern of each kind of block, found once.
  uint32_t syncPattern(bool set, isa::Pipe src, isa::Pipe dst) {
    auto& p = patterns_[set][static_cast<size_t>(src) & 7][static_cast<size_t>(dst) & 7];
    if (!p) p = insertions_.pattern(syncBlockBytes(set, src, dst, 0));
    return *p;
  }
  uint32_t barrierPattern(isa::Pipe pipe) {
    auto& p = barrierPatterns_[static_cast<size_t>(pipe) & 7];
    if (!p) p = insertions_.pattern(barrierBlockBytes(pipe));
    return *p;
  }
  void insert(Spot s, uint32_t pattern, std::optional<uint32_t> event) {
    insertions_.insertions.push_back(
        {s.offset, pattern, function_, event ? static_cast<int32_t>(*event) : -1, s.entry});
  }

  /// The blocks of the pairs (pair k named "<prefix>k"; a PIPE_ALL barrier for those in
  /// `asBarrier`) and of the barriers.
  void place(uint32_t firstEvent, const std::string& prefix, const std::set<uint32_t>& asBarrier) {
    insertions_.insertions.reserve(insertions_.insertions.size() + 4 * pairs_.size() +
                                   barriers_.size());
    plan_.items.reserve(pairs_.size() + barriers_.size());
    plan_.events.reserve(pairs_.size());
    // An event's Event relocation is on the B.DIM word after the 32-bit BSTART.EXT.
    insertions_.eventWord = 4;
    // Pairs out of ids merge into another before any falls back to a PIPE_ALL barrier.
    std::vector<uint8_t> gone(pairs_.size(), 0);
    std::vector<int32_t> mergedInto(pairs_.size(), -1);
    ends_.clear();
    for (const PairPlan& p : pairs_)
      ends_.push_back({deps_[p.dep].from, deps_[p.dep].to});
    for (uint32_t k : asBarrier) {
      if (k >= pairs_.size()) continue;
      auto j = mergePartner(k, asBarrier, gone);
      if (!j) continue;
      PairPlan& pj = pairs_[*j];
      Ends &ek = ends_[k], &ej = ends_[*j];
      if (ek.from > ej.from) pj.set = pairs_[k].set, ej.from = ek.from;
      if (ek.to < ej.to) pj.wait = pairs_[k].wait, ej.to = ek.to;
      gone[k] = 1;
      mergedInto[k] = static_cast<int32_t>(*j);
    }
    uint32_t n = 0;
    for (const PairPlan& p : pairs_) {
      uint32_t k = n++;
      std::string name = prefix + std::to_string(k);
      if (gone[k]) {
        plan_.items.push_back(
            {SyncItem::Merged, p.src, p.dst, p.dep, prefix + std::to_string(mergedInto[k])});
        continue;
      }
      if (asBarrier.count(k)) {
        insert(p.set, barrierPattern(isa::Pipe::All), std::nullopt);
        plan_.items.push_back({SyncItem::AllBarrier, p.src, p.dst, p.dep, name});
        continue;
      }
      uint32_t ev = firstEvent + static_cast<uint32_t>(plan_.events.size());
      plan_.events.push_back({function_, name, p.src, p.dst});
      if (p.preSet) insert(*p.preSet, syncPattern(true, p.src, p.dst), ev);
      insert(p.set, syncPattern(true, p.src, p.dst), ev);
      insert(p.wait, syncPattern(false, p.src, p.dst), ev);
      if (p.postWait) insert(*p.postWait, syncPattern(false, p.src, p.dst), ev);
      plan_.items.push_back({p.kind, p.src, p.dst, p.dep, name});
    }
    for (auto& [key, dep] : barriers_) {
      isa::Pipe pipe = static_cast<isa::Pipe>(key.first);
      insert(Spot{key.second, true}, barrierPattern(pipe), std::nullopt);
      plan_.items.push_back({SyncItem::Barrier, pipe, pipe, dep, ""});
    }
  }

  /// Per pair: the blocks its set follows and its wait precedes (a merged pair's: the later
  /// set's op and the earlier consumer).
  struct Ends {
    uint32_t from = 0, to = 0;
  };
  std::vector<Ends> ends_;
  using BarrierKey = std::pair<int, uint64_t>;
  const FunctionCfg& cfg_;
  const std::vector<Block>& blocks_;
  std::span<const Dependency> deps_;
  const uint32_t function_;
  PatternInsertions& insertions_;
  std::vector<PairPlan> pairs_;
  std::vector<std::pair<BarrierKey, uint32_t>> barriers_;
  std::optional<uint32_t> patterns_[2][8][8], barrierPatterns_[8];
  AutoSyncPlan plan_;
};

} // namespace

AutoSyncPlan planAutoSync(const FunctionCfg& cfg, std::span<const Dependency> deps,
                          uint32_t function, uint32_t firstEvent, const std::string& prefix,
                          const std::set<uint32_t>& asBarrier, PatternInsertions& insertions) {
  return SyncPlanner(cfg, deps, function, insertions).run(firstEvent, prefix, asBarrier);
}

// ---------------------------------------------------------------------------------------------
// The sync passes (link/Passes.h): the sync mode of every function, then the insertion.

void decideSync(LinkContext& ctx) {
  AutoSyncState& s = ctx.sync;
  if (s.stage != AutoSyncState::Stage::Undecided) return; // decided on the inputs as given
  s.fns.clear();
  for (const InputObject& in : ctx.inputs) {
    s.fns.emplace_back(in.obj.functions.size());
    s.firstAutoEvent.push_back(in.obj.events.size());
  }
  bool any = false;
  for (const FunctionWork& fw : ctx.functions) {
    SyncDecision& d = s.fns[fw.object][fw.function];
    d.built = fw.built;
    const FunctionCfg* cfg = fw.cfg();
    if (!cfg) continue; // does not decode: reported by buildCfgs
    for (const Block& b : cfg->blocks)
      d.explicitSync |= isFlag(b) || isBarrier(b);
    const SyncMode mode = ctx.opts.sync;
    d.insert = mode == SyncMode::Insert || (mode == SyncMode::Auto && !d.explicitSync);
    any |= d.insert;
  }
  s.stage = any ? AutoSyncState::Stage::Plan : AutoSyncState::Stage::None;
}

namespace {

/// "op (file:line:col)" of block `b`, appended in place: the log has a line per inserted pair,
/// and chains of operator+ temporaries made it a tenth of the link.
void appendAt(std::string& line, const FunctionCfg& cfg, const SourceLines& lines, uint32_t b) {
  const Block& blk = cfg.blocks[b];
  if (blk.op)
    line += isa::info(*blk.op).mnemonic;
  else
    line += "tile op";
  line += " (";
  lines.appendTo(line, blk.offset);
  line += ')';
}

/// One function's part of the insertion: the map's log lines, the warnings, the counts.
struct FunctionReport {
  const FunctionCfg& cfg;
  const SourceLines& lines;
  const std::string& function; // its name
  const std::string& path;     // its object's
  bool log = false;            // spell the log lines (a map is written)

  std::string at(uint32_t b) const {
    std::string line;
    appendAt(line, cfg, lines, b);
    return line;
  }

  void item(const SyncItem& it, const Dependency& d, AutoSyncState& s) const {
    if (!log && it.kind != SyncItem::AllBarrier) return; // only its warning has words
    const std::string pair =
        std::string(isa::spelling(it.src)) + " -> " + std::string(isa::spelling(it.dst));
    const std::string head = "@" + function + " ";
    switch (it.kind) {
    case SyncItem::Pair:
    case SyncItem::LoopPair: {
      const bool loop = it.kind == SyncItem::LoopPair;
      std::string line;
      line.reserve(160);
      line += head;
      line += '@';
      line += it.eventName;
      line += ' ';
      line += pair;
      line += loop ? ": loop-carried, set after " : ": set after ";
      appendAt(line, cfg, lines, d.from);
      line += loop ? ", wait before " : ", wait for ";
      appendAt(line, cfg, lines, d.to);
      if (loop) line += ", set before the loop, wait after it";
      s.log.push_back(std::move(line));
      break;
    }
    case SyncItem::Merged:
      s.log.push_back(head + "@" + it.eventName + " " + pair + " also orders " + at(d.from) +
                      " before " + at(d.to) +
                      " (event ids exhausted: the two pairs merged, its set after the later op, "
                      "its wait before the earlier consumer)");
      break;
    case SyncItem::Barrier:
      s.log.push_back(head + "pipe_barrier(" + std::string(isa::spelling(it.src)) + ") before " +
                      at(d.to) + ", after " + at(d.from));
      break;
    case SyncItem::AllBarrier:
      if (log)
        s.log.push_back(head + "pipe_barrier(PIPE_ALL) after " + at(d.from) + ", for " + at(d.to) +
                        " (event ids exhausted)");
      s.warnings.push_back(
          {false, true,
           lines.at(cfg.blocks[d.from].offset) + ": event ids exhausted for " + pair +
               ": the inserted sync orders " + opName(cfg, d.from) + " before " + at(d.to) +
               " with a pipe_barrier(PIPE_ALL) instead (in @" + function + ", '" + path + "')"});
      break;
    }
  }
};

/// The graphs of object `o` once its sync is inserted: the ones the rewrite derived, nullptr to
/// decode again; an object without insertions keeps the graphs of its inputs.
std::vector<std::shared_ptr<const BuiltCfg>> graphsAfter(const std::vector<SyncDecision>& fns,
                                                         Relaid& relaid,
                                                         const obj::ObjectFile& result,
                                                         bool inserted) {
  std::vector<std::shared_ptr<const BuiltCfg>> out;
  for (size_t f = 0; f < fns.size(); ++f) {
    std::shared_ptr<const BuiltCfg> built = fns[f].built;
    if (inserted && f < relaid.cfgs.size() && relaid.cfgs[f]) {
      auto b = std::make_shared<BuiltCfg>();
      b->badWord = result.functions[f].textOffset;
      b->cfg = std::move(*relaid.cfgs[f]);
      built = std::move(b);
    } else if (inserted) {
      built = nullptr; // decoded by the next round
    }
    out.push_back(std::move(built));
  }
  return out;
}

/// Plans and inserts the sync of object `o`'s inserting functions; the object, or an error.
std::optional<std::string> insertIntoObject(LinkContext& ctx, size_t o) {
  AutoSyncState& s = ctx.sync;
  const obj::ObjectFile& ob = ctx.given[o].obj;
  SourceLines lines(ob);
  std::vector<obj::Event> events; // the inserted pairs' events, after the object's own
  PatternInsertions all;          // every function's, in function order
  const std::set<uint32_t> none;
  for (uint32_t f = 0; f < ob.functions.size(); ++f) {
    const SyncDecision& d = s.fns[o][f];
    if (!d.insert) continue;
    const FunctionCfg& cfg = *d.built->get();
    auto bar = s.asBarrier.find({o, f});
    AutoSyncPlan sp =
        planAutoSync(cfg, d.deps, f, static_cast<uint32_t>(ob.events.size() + events.size()),
                     std::string(kAutoPrefix), bar == s.asBarrier.end() ? none : bar->second, all);
    events.insert(events.end(), sp.events.begin(), sp.events.end());
    FunctionSync& count = s.counts[{o, f}];
    const FunctionReport report{cfg, lines, ob.functions[f].name, ctx.given[o].path,
                                ctx.opts.syncLog};
    for (const SyncItem& it : sp.items) {
      if (it.kind == SyncItem::Barrier || it.kind == SyncItem::AllBarrier)
        ++count.barriers;
      else if (it.kind != SyncItem::Merged)
        ++count.pairs;
      report.item(it, d.deps[it.dep], s);
    }
  }
  const bool inserted = !all.insertions.empty();
  // The graphs built for the sync decision spare decoding the words again: their branches are
  // the ones to move, and the graphs of the result follow from them.
  std::vector<const FunctionCfg*> known;
  for (const SyncDecision& d : s.fns[o])
    known.push_back(d.built ? d.built->get() : nullptr);
  auto rewritten = insertWords(ob, all, known);
  if (auto* err = std::get_if<std::string>(&rewritten))
    return "'" + ctx.given[o].path + "': --auto-sync: " + *err;
  Relaid& relaid = std::get<Relaid>(rewritten);
  InputObject c{ctx.given[o].path, std::move(relaid.obj)};
  c.obj.events.insert(c.obj.events.end(), events.begin(), events.end());
  // Inserted set/wait/barrier words live in the extension space: the image must declare it.
  c.obj.usesExtensions |= inserted;
  ctx.knownCfgs.push_back(graphsAfter(s.fns[o], relaid, c.obj, inserted));
  s.objects.push_back(std::move(c));
  return std::nullopt;
}

} // namespace

void insertAutoSync(LinkContext& ctx) {
  AutoSyncState& s = ctx.sync;
  if (s.stage != AutoSyncState::Stage::Plan) return;
  // The race pass's result on the inputs as given is what the sync must order (kept for a later
  // placement when event ids run out).
  if (!s.analysed)
    for (FunctionWork& fw : ctx.functions)
      if (ctx.analyses(fw)) s.fns[fw.object][fw.function].deps = std::move(fw.deps);
  s.analysed = true;
  ctx.inputs = ctx.given; // the objects of the last insertion go
  s.objects.clear();
  s.log.clear();
  s.warnings.clear();
  s.counts.clear();
  ctx.knownCfgs.clear();
  for (size_t o = 0; o < ctx.given.size(); ++o)
    if (auto err = insertIntoObject(ctx, o)) {
      ctx.result = LinkResult{};
      ctx.result.diags.push_back({false, false, *err});
      ctx.stop = true;
      return;
    }
  s.stage = AutoSyncState::Stage::Inserted;
  ctx.inputs = s.objects;
  ctx.rerunFrom = "check inputs"; // link what the insertion made
}

void recordSync(LinkContext& ctx) {
  LinkResult& r = ctx.result;
  const AutoSyncState& s = ctx.sync;
  if (s.stage == AutoSyncState::Stage::Inserted) {
    r.diags.insert(r.diags.begin(), s.warnings.begin(), s.warnings.end());
    r.syncLog = std::move(ctx.sync.log);
  }
  r.multiBufferLog = ctx.multiBuffer.log;
  r.syncMode = ctx.opts.sync;
  for (size_t o = 0; o < ctx.given.size(); ++o)
    for (uint32_t f = 0; f < ctx.given[o].obj.functions.size(); ++f) {
      if (ctx.given[o].obj.functions[f].flags & obj::kDeclaration) continue;
      auto it = s.counts.find({o, f});
      FunctionSync fs = it == s.counts.end() ? FunctionSync{} : it->second;
      if (o < s.fns.size() && f < s.fns[o].size()) {
        fs.inserted = s.fns[o][f].insert;
        fs.explicitSync = s.fns[o][f].explicitSync;
      }
      r.functionSync.push_back(fs);
    }
}

} // namespace pto::link
