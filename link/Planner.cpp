#include "link/Planner.h"
#include "support/Text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <queue>
#include <set>

namespace pto::link {

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

constexpr uint64_t kInfinity = uint64_t{1} << 62;

/// Free byte ranges of one buffer, by address (to coalesce) and by size (best fit).
class FreeList {
public:
  FreeList() { add(0, kInfinity); }
  void release(uint64_t off, uint64_t size) {
    auto next = byAddr_.lower_bound(off);
    if (next != byAddr_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first;
        size += prev->second;
        remove(prev);
      }
    }
    next = byAddr_.lower_bound(off);
    if (next != byAddr_.end() && off + size == next->first) {
      size += next->second;
      remove(next);
    }
    add(off, size);
  }
  /// Best fit: the smallest hole where an aligned range of `size` bytes fits and `clash`
  /// (returns the first byte past a conflicting fixed range, or 0) allows it.
  template <typename Clash> uint64_t allocate(uint64_t size, uint64_t align, Clash&& clash) {
    for (auto it = bySize_.lower_bound({size, 0}); it != bySize_.end(); ++it) {
      uint64_t off = it->second, hsize = it->first, a = alignUp(off, align);
      bool fits = false;
      while (a + size <= off + hsize) {
        uint64_t past = clash(a, size);
        if (!past) {
          fits = true;
          break;
        }
        a = alignUp(std::max(past, a + 1), align);
      }
      if (!fits) continue;
      auto hole = byAddr_.find(off);
      remove(hole);
      if (a > off) add(off, a - off);
      if (a + size < off + hsize) add(a + size, off + hsize - a - size);
      return a;
    }
    return kInfinity; // unreachable: the last hole is unbounded
  }

private:
  void add(uint64_t off, uint64_t size) {
    byAddr_[off] = size;
    bySize_.insert({size, off});
  }
  void remove(std::map<uint64_t, uint64_t>::iterator it) {
    bySize_.erase({it->second, it->first});
    byAddr_.erase(it);
  }
  std::map<uint64_t, uint64_t> byAddr_;
  std::set<std::pair<uint64_t, uint64_t>> bySize_;
};

} // namespace

std::vector<Interval> liveIntervals(const FunctionCfg& cfg,
                                    const std::vector<std::vector<VarRef>>& refs,
                                    std::vector<bool>* liveAtEntry) {
  std::vector<std::span<const VarRef>> views(refs.begin(), refs.end());
  return liveIntervals(cfg, views, liveAtEntry);
}

std::vector<Interval> liveIntervals(const FunctionCfg& cfg,
                                    std::span<const std::span<const VarRef>> refs,
                                    std::vector<bool>* liveAtEntry) {
  size_t nb = cfg.blocks.size();
  std::vector<uint32_t> killStamp(nb, 0), inStamp(nb, 0), outStamp(nb, 0), stack;
  std::vector<Interval> out(refs.size());
  if (liveAtEntry) liveAtEntry->assign(refs.size(), false);
  for (size_t v = 0; v < refs.size(); ++v) {
    if (refs[v].empty()) continue;
    uint32_t stamp = static_cast<uint32_t>(v + 1);
    uint32_t lo = UINT32_MAX, hi = 0;
    auto include = [&](uint32_t b) {
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    };
    for (const VarRef& r : refs[v]) {
      include(r.block);
      if (r.kill && !r.use) killStamp[r.block] = stamp;
    }
    for (const VarRef& r : refs[v])
      if (r.use && inStamp[r.block] != stamp) {
        inStamp[r.block] = stamp;
        stack.push_back(r.block);
      }
    while (!stack.empty()) {
      uint32_t b = stack.back();
      stack.pop_back();
      for (uint32_t p : cfg.predsOf(b)) {
        if (outStamp[p] == stamp) continue;
        outStamp[p] = stamp;
        include(p);
        if (killStamp[p] != stamp && inStamp[p] != stamp) {
          inStamp[p] = stamp;
          stack.push_back(p);
        }
      }
    }
    if (nb && inStamp[0] == stamp) {
      include(0);
      if (liveAtEntry) (*liveAtEntry)[v] = true;
    }
    out[v] = {lo, hi};
  }
  return out;
}

namespace {
/// The roots of each rotation group live over the hull of their ranges (never sharing bytes).
void holdGroupsTogether(std::span<const PlanTile> tiles, const std::vector<uint32_t>& root,
                        std::vector<Interval>& live) {
  std::map<int32_t, Interval> hull;
  for (uint32_t i = 0; i < tiles.size(); ++i) {
    if (tiles[i].group < 0 || root[i] != i || live[i].empty()) continue;
    auto [it, fresh] = hull.try_emplace(tiles[i].group, live[i]);
    if (fresh) continue;
    it->second.start = std::min(it->second.start, live[i].start);
    it->second.end = std::max(it->second.end, live[i].end);
  }
  for (uint32_t i = 0; i < tiles.size(); ++i)
    if (tiles[i].group >= 0 && root[i] == i && !live[i].empty()) live[i] = hull[tiles[i].group];
}
} // namespace

uint64_t tileBytes(const obj::TileDesc& t) {
  return (static_cast<uint64_t>(t.rows) * t.cols * isa::bitWidth(t.dtype) + 7) / 8;
}

namespace {

/// One access of a tile's storage in a block (views folded into their root).
struct Access {
  uint32_t block = 0;
  bool read = false, write = false;
};

/// The accesses of each storage root in `wanted` (one pass over the blocks).
std::map<uint32_t, std::vector<Access>> accessesOf(const FunctionCfg& cfg,
                                                   const std::vector<uint32_t>& root,
                                                   const std::set<uint32_t>& wanted) {
  std::map<uint32_t, std::vector<Access>> out;
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.kind != BlockKind::Tile) continue;
    for (const TileUse& u : cfg.usesOf(blk)) {
      if (u.tile >= root.size() || !wanted.count(root[u.tile])) continue;
      std::vector<Access>& list = out[root[u.tile]];
      if (list.empty() || list.back().block != b) list.push_back({b, false, false});
      list.back().read |= u.read;
      list.back().write |= u.write;
    }
  }
  return out;
}

/// Whether a write through `writer` lands on the bytes of `victim` after `victim` was written and
/// before `victim` is read again without being written first (block order; an op that reads the
/// victim and writes the writer reads before it writes): the first such write and read.
std::optional<Clobber> firstClobber(const std::vector<Access>& writer,
                                    const std::vector<Access>& victim, uint32_t w, uint32_t v) {
  size_t i = 0, j = 0;
  bool victimHasValue = false;
  uint32_t pendingWrite = UINT32_MAX; // the block of a write over the victim's value, if any
  while (i < writer.size() || j < victim.size()) {
    const uint32_t b = std::min(i < writer.size() ? writer[i].block : UINT32_MAX,
                                j < victim.size() ? victim[j].block : UINT32_MAX);
    const bool vRead = j < victim.size() && victim[j].block == b && victim[j].read;
    const bool vWrite = j < victim.size() && victim[j].block == b && victim[j].write;
    const bool wWrite = i < writer.size() && writer[i].block == b && writer[i].write;
    if (vRead && pendingWrite != UINT32_MAX) return Clobber{w, v, pendingWrite, b};
    if (vWrite) {
      victimHasValue = true;
      pendingWrite = UINT32_MAX;
    } else if (wWrite && victimHasValue && pendingWrite == UINT32_MAX) {
      pendingWrite = b;
    }
    if (i < writer.size() && writer[i].block == b) ++i;
    if (j < victim.size() && victim[j].block == b) ++j;
  }
  return std::nullopt;
}

/// Manual placements of one buffer whose bytes overlap while both are live are views of the same
/// storage, not an error: the races and the auto-sync order them by the bytes they touch. A write
/// through one over a value the other still has to read is reported (res.clobbers).
void findClobbers(const FunctionCfg& cfg, std::span<const PlanTile> tiles,
                  const std::vector<uint32_t>& root, const std::vector<uint32_t>& manual,
                  const std::vector<uint64_t>& storage, const std::vector<Interval>& live,
                  PlanResult& res) {
  std::vector<uint32_t> order;
  for (uint32_t m : manual)
    if (!live[m].empty()) order.push_back(m);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(live[a].start, a) < std::pair(live[b].start, b);
  });
  // The pairs whose bytes overlap while both are live (a sweep in order of live-range start),
  // then the accesses of their tiles in one pass over the blocks.
  std::vector<uint32_t> active;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::set<uint32_t> paired;
  for (uint32_t m : order) {
    std::erase_if(active, [&](uint32_t a) { return live[a].end < live[m].start; });
    const uint64_t mo = static_cast<uint64_t>(tiles[m].manual);
    for (uint32_t a : active) {
      const uint64_t ao = static_cast<uint64_t>(tiles[a].manual);
      if (!(mo < ao + storage[a] && ao < mo + storage[m])) continue;
      pairs.push_back({m, a});
      paired.insert({m, a});
    }
    active.push_back(m);
  }
  if (pairs.empty()) return;
  const std::map<uint32_t, std::vector<Access>> accesses = accessesOf(cfg, root, paired);
  const std::vector<Access> none;
  auto of = [&](uint32_t r) -> const std::vector<Access>& {
    auto it = accesses.find(r);
    return it == accesses.end() ? none : it->second;
  };
  for (auto [m, a] : pairs)
    for (auto [w, v] : {std::pair(m, a), std::pair(a, m)})
      if (auto c = firstClobber(of(w), of(v), w, v)) res.clobbers.push_back(*c);
}

/// Manual placements of one buffer: kept, and checked for alignment and bounds. Returns the
/// highest byte they use.
uint64_t keepManual(std::span<const PlanTile> tiles, const std::vector<uint32_t>& manual,
                    const std::vector<uint64_t>& storage, isa::Loc loc, uint64_t align,
                    uint64_t cap, PlanResult& res) {
  const std::string bufName(isa::spelling(loc));
  uint64_t high = 0;
  for (uint32_t m : manual) {
    uint64_t off = static_cast<uint64_t>(tiles[m].manual);
    res.offset[m] = tiles[m].manual;
    res.manual[m] = true;
    high = std::max(high, off + storage[m]);
    if (off % align) {
      PlanError e;
      e.kind = PlanError::Kind::Misaligned;
      e.loc = loc;
      e.tiles = {m};
      e.message = "tile %" + tiles[m].name + " is placed at " + support::hex0x(off) + " in " +
                  bufName + ", which is not " + std::to_string(align) + "-byte aligned";
      res.errors.push_back(std::move(e));
    }
    if (off + storage[m] > cap) {
      PlanError e;
      e.kind = PlanError::Kind::OutOfBounds;
      e.loc = loc;
      e.tiles = {m};
      e.needed = off + storage[m];
      e.available = cap;
      e.message = "tile %" + tiles[m].name + " at " + support::hex0x(off) + " (" +
                  std::to_string(storage[m]) + " bytes) ends at " +
                  support::hex0x(off + storage[m]) + ", past the end of " + bufName + " (" +
                  std::to_string(cap) + " bytes)";
      res.errors.push_back(std::move(e));
    }
  }
  return high;
}

/// The overflow error of one buffer, naming the tiles live at the block where the most bytes are.
void reportOverflow(const std::vector<uint32_t>& planned, const std::vector<uint32_t>& manual,
                    const std::vector<uint64_t>& storage, const std::vector<Interval>& live,
                    isa::Loc loc, uint64_t high, uint64_t cap, PlanResult& res) {
  const std::string bufName(isa::spelling(loc));
  // The peak: the block where the most bytes are live.
  std::vector<std::pair<uint32_t, int64_t>> ev;
  std::vector<uint32_t> all = planned;
  all.insert(all.end(), manual.begin(), manual.end());
  for (uint32_t t : all)
    if (!live[t].empty()) {
      ev.push_back({live[t].start, static_cast<int64_t>(storage[t])});
      ev.push_back({live[t].end + 1, -static_cast<int64_t>(storage[t])});
    }
  std::sort(ev.begin(), ev.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  int64_t cur = 0, best = -1;
  uint32_t at = 0;
  for (size_t k = 0; k < ev.size(); ++k) {
    cur += ev[k].second;
    if ((k + 1 == ev.size() || ev[k + 1].first != ev[k].first) && cur > best)
      best = cur, at = ev[k].first;
  }
  PlanError e;
  e.kind = PlanError::Kind::Overflow;
  e.loc = loc;
  e.needed = high;
  e.available = cap;
  for (uint32_t t : all)
    if (!live[t].empty() && live[t].start <= at && at <= live[t].end) e.peak.push_back(t);
  std::sort(e.peak.begin(), e.peak.end(),
            [&](uint32_t a, uint32_t b) { return res.offset[a] < res.offset[b]; });
  e.tiles = e.peak;
  e.message = "buffer " + bufName + " overflows: needs " + std::to_string(high) + " bytes, " +
              std::to_string(cap) + " available (" + std::to_string(e.peak.size()) + " tiles, " +
              std::to_string(best) + " bytes live at the peak)";
  res.errors.push_back(std::move(e));
}

} // namespace

PlanResult plan(const FunctionCfg& cfg, std::span<const PlanTile> tiles, isa::Arch arch) {
  const size_t n = tiles.size();
  PlanResult res;
  res.offset.assign(n, 0);
  res.live.assign(n, Interval{});
  res.firstBlock.assign(n, -1);
  res.manual.assign(n, false);
  // Storage roots and offsets of views inside them.
  std::vector<uint32_t> root(n);
  std::vector<uint64_t> rootOffset(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t a = tiles[i].aliasOf;
    if (a >= 0 && static_cast<uint32_t>(a) < i) {
      root[i] = root[static_cast<uint32_t>(a)];
      rootOffset[i] = rootOffset[static_cast<uint32_t>(a)] + tiles[i].aliasOffset;
      const PlanTile& parent = tiles[static_cast<uint32_t>(a)];
      if (tiles[i].aliasOffset + tiles[i].bytes > parent.bytes) {
        PlanError e;
        e.kind = PlanError::Kind::ViewOutOfParent;
        e.loc = tiles[root[i]].loc;
        e.message = "view %" + tiles[i].name + " (" + std::to_string(tiles[i].bytes) +
                    " bytes at +" + std::to_string(tiles[i].aliasOffset) +
                    ") extends past its parent %" + parent.name + " (" +
                    std::to_string(parent.bytes) + " bytes)";
        e.tiles = {i};
        res.errors.push_back(std::move(e));
      }
    } else {
      root[i] = i;
    }
  }
  std::vector<uint64_t> storage(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    storage[root[i]] = std::max(storage[root[i]], rootOffset[i] + tiles[i].bytes);
  // References per storage root, merged per block.
  std::vector<std::vector<VarRef>> refs(n);
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.kind != BlockKind::Tile) continue;
    for (const TileUse& u : cfg.usesOf(blk)) {
      if (u.tile >= n) continue;
      if (res.firstBlock[u.tile] < 0) res.firstBlock[u.tile] = static_cast<int32_t>(b);
      uint32_t r = root[u.tile];
      bool read = u.read || (u.tile != r && u.write); // a write through a view keeps the rest
      bool kill = u.write && !read && u.tile == r;
      auto& list = refs[r];
      if (!list.empty() && list.back().block == b) {
        VarRef& last = list.back();
        last.use |= read;
        last.kill = (last.kill || kill) && !last.use;
      } else {
        list.push_back({b, read, kill});
      }
    }
  }
  std::vector<Interval> live = liveIntervals(cfg, refs);
  holdGroupsTogether(tiles, root, live);
  for (uint32_t i = 0; i < n; ++i)
    res.live[i] = live[root[i]];
  // Per buffer.
  for (unsigned l = 0; l < 7; ++l) {
    const isa::Loc loc = static_cast<isa::Loc>(l);
    const isa::BufferSpec& spec = isa::buffer(arch, loc);
    const uint64_t align = std::max<uint64_t>(1, spec.alignment), cap = spec.capacity;
    std::vector<uint32_t> manual, planned;
    for (uint32_t i = 0; i < n; ++i)
      if (root[i] == i && tiles[i].loc == loc)
        (tiles[i].manual >= 0 ? manual : planned).push_back(i);
    if (manual.empty() && planned.empty()) continue;
    // Manual placements: kept, checked for alignment and bounds.
    uint64_t high = keepManual(tiles, manual, storage, loc, align, cap, res);
    // Manual placements that overlap are views of the same bytes (docs/linking.md).
    findClobbers(cfg, tiles, root, manual, storage, live, res);
    // Planned tiles: linear sweep in order of live-range start, best fit in the free holes.
    std::sort(planned.begin(), planned.end(), [&](uint32_t a, uint32_t b) {
      const Interval &x = live[a], &y = live[b];
      if (x.empty() != y.empty()) return y.empty();
      if (x.start != y.start) return x.start < y.start;
      if (storage[a] != storage[b]) return storage[a] > storage[b];
      return a < b;
    });
    FreeList holes;
    using Active = std::pair<uint32_t, uint32_t>; // (end, tile)
    std::priority_queue<Active, std::vector<Active>, std::greater<>> active;
    for (uint32_t t : planned) {
      const Interval iv = live[t];
      if (iv.empty()) { // never referenced: no storage
        res.offset[t] = 0;
        continue;
      }
      while (!active.empty() && active.top().first < iv.start) {
        uint32_t done = active.top().second;
        active.pop();
        holes.release(static_cast<uint64_t>(res.offset[done]),
                      alignUp(std::max<uint64_t>(storage[done], 1), align));
      }
      uint64_t size = alignUp(std::max<uint64_t>(storage[t], 1), align);
      uint64_t off = holes.allocate(size, align, [&](uint64_t a, uint64_t sz) -> uint64_t {
        for (uint32_t m : manual) {
          uint64_t mo = static_cast<uint64_t>(tiles[m].manual);
          if (live[m].overlaps(iv) && a < mo + storage[m] && mo < a + sz) return mo + storage[m];
        }
        return 0;
      });
      res.offset[t] = static_cast<int64_t>(off);
      high = std::max(high, off + storage[t]);
      active.push({iv.end, t});
    }
    res.used[l] = high;
    if (high > cap) reportOverflow(planned, manual, storage, live, loc, high, cap, res);
  }
  // Views: the root's placement plus their offset.
  for (uint32_t i = 0; i < n; ++i)
    if (root[i] != i) {
      res.offset[i] = res.offset[root[i]] + static_cast<int64_t>(rootOffset[i]);
      res.manual[i] = res.manual[root[i]];
    }
  return res;
}

std::optional<std::string> checkPlan(std::span<const PlanTile> tiles, const PlanResult& r,
                                     isa::Arch arch) {
  const size_t n = tiles.size();
  std::vector<uint32_t> roots;
  std::vector<uint64_t> storage(n, 0);
  std::vector<uint32_t> root(n);
  std::vector<uint64_t> rel(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t a = tiles[i].aliasOf;
    root[i] = a >= 0 && static_cast<uint32_t>(a) < i ? root[static_cast<uint32_t>(a)] : i;
    rel[i] = root[i] == i ? 0 : rel[static_cast<uint32_t>(a)] + tiles[i].aliasOffset;
    storage[root[i]] = std::max(storage[root[i]], rel[i] + tiles[i].bytes);
    if (root[i] == i) roots.push_back(i);
    if (r.offset[i] != r.offset[root[i]] + static_cast<int64_t>(rel[i]))
      return "view %" + tiles[i].name + " is not at its parent's offset";
  }
  for (uint32_t i : roots) {
    if (r.live[i].empty()) continue;
    const isa::BufferSpec& s = isa::buffer(arch, tiles[i].loc);
    if (r.offset[i] < 0 || static_cast<uint64_t>(r.offset[i]) % s.alignment)
      return "%" + tiles[i].name + " is misaligned at " + std::to_string(r.offset[i]);
    if (static_cast<uint64_t>(r.offset[i]) + storage[i] > s.capacity)
      return "%" + tiles[i].name + " is out of bounds";
    if (tiles[i].manual >= 0 && r.offset[i] != tiles[i].manual)
      return "%" + tiles[i].name + " moved from its manual address";
  }
  for (size_t x = 0; x < roots.size(); ++x)
    for (size_t y = x + 1; y < roots.size(); ++y) {
      uint32_t a = roots[x], b = roots[y];
      if (tiles[a].loc != tiles[b].loc || !r.live[a].overlaps(r.live[b])) continue;
      if (tiles[a].manual >= 0 && tiles[b].manual >= 0)
        continue; // the user's choice, reported separately
      uint64_t ao = static_cast<uint64_t>(r.offset[a]), bo = static_cast<uint64_t>(r.offset[b]);
      if (ao < bo + storage[b] && bo < ao + storage[a])
        return "%" + tiles[a].name + " and %" + tiles[b].name + " are live together and overlap";
    }
  return std::nullopt;
}

} // namespace pto::link
