#include "link/Events.h"

#include <algorithm>
#include <map>
#include <span>
#include <tuple>

namespace pto::link {

unsigned hardwareEventIds(isa::Arch arch) {
  return isa::profile(arch).eventIdsPerPipePair;
}

unsigned usableEventIds(isa::Arch arch, isa::Pipe src, isa::Pipe dst) {
  using isa::Pipe;
  unsigned n = hardwareEventIds(arch);
  bool reserved = (src == Pipe::V && dst == Pipe::S) || (src == Pipe::S && dst == Pipe::V) ||
                  (src == Pipe::MTE2 && dst == Pipe::V);
  return reserved && n > 0 ? n - 1 : n;
}

namespace {
std::string pairName(isa::Pipe s, isa::Pipe d) {
  return std::string(isa::spelling(s)) + " -> " + std::string(isa::spelling(d));
}
} // namespace

EventPlan allocateEvents(const FunctionCfg& cfg, const std::vector<int32_t>& blockEvent,
                         const std::vector<std::pair<isa::Pipe, isa::Pipe>>& pipes,
                         const std::vector<std::string>& names, isa::Arch arch) {
  const size_t m = pipes.size(), nb = cfg.blocks.size();
  EventPlan out;
  out.id.assign(m, -1);
  out.pending.assign(m, Interval{});
  // Variables: the symbolic events, then one per explicit (pair, id).
  std::vector<std::pair<isa::Pipe, isa::Pipe>> varPipes(pipes);
  std::vector<int64_t> fixedId(m, -1);
  // What the messages call a variable (spelled only for a message: thousands of inserted events
  // need none).
  auto varName = [&](size_t v) {
    if (v < m) return "event @" + (v < names.size() ? names[v] : std::to_string(v));
    return "event id " + std::to_string(fixedId[v]) + " for " +
           pairName(varPipes[v].first, varPipes[v].second);
  };
  std::map<std::tuple<int, int, int64_t>, uint32_t> explicitVar;
  std::vector<int32_t> blockVar(nb, -1);
  const unsigned hw = hardwareEventIds(arch);
  for (uint32_t b = 0; b < nb; ++b) {
    const Block& blk = cfg.blocks[b];
    if (!isFlag(blk)) continue;
    int32_t v = b < blockEvent.size() ? blockEvent[b] : -1;
    if (v >= 0) {
      if (pipes[static_cast<size_t>(v)] != std::pair(blk.srcPipe, blk.dstPipe)) {
        out.errors.push_back({varName(static_cast<size_t>(v)) + " is declared for " +
                                  pairName(pipes[static_cast<size_t>(v)].first,
                                           pipes[static_cast<size_t>(v)].second) +
                                  " but used by a sync of " + pairName(blk.srcPipe, blk.dstPipe),
                              static_cast<int32_t>(b),
                              {},
                              {static_cast<uint32_t>(v)},
                              EventErrorKind::PairMismatch});
        continue;
      }
    } else if (blk.dynamicEvent) {
      continue; // a run-time id: nothing to check statically
    } else {
      if (blk.eventId < 0 || static_cast<uint64_t>(blk.eventId) >= hw) {
        out.errors.push_back({"event id " + std::to_string(blk.eventId) + " for " +
                                  pairName(blk.srcPipe, blk.dstPipe) +
                                  " is out of range (the hardware has " + std::to_string(hw) +
                                  " per pipe pair)",
                              static_cast<int32_t>(b),
                              {},
                              {},
                              EventErrorKind::IdOutOfRange});
        continue;
      }
      auto key =
          std::tuple(static_cast<int>(blk.srcPipe), static_cast<int>(blk.dstPipe), blk.eventId);
      auto [it, fresh] = explicitVar.try_emplace(key, static_cast<uint32_t>(varPipes.size()));
      if (fresh) {
        varPipes.push_back({blk.srcPipe, blk.dstPipe});
        fixedId.push_back(blk.eventId);
      }
      v = static_cast<int32_t>(it->second);
    }
    blockVar[b] = v;
  }
  const size_t nv = varPipes.size();
  // Each variable's set and wait blocks in address order, in one array each (a vector per event
  // was an allocation per event).
  struct ByVar {
    std::vector<uint32_t> start, blocks;
    std::span<const uint32_t> operator[](size_t v) const {
      return {blocks.data() + start[v], start[v + 1] - start[v]};
    }
  };
  auto byVar = [&](bool set) {
    ByVar r;
    r.start.assign(nv + 1, 0);
    for (uint32_t b = 0; b < nb; ++b)
      if (blockVar[b] >= 0 && isSetFlag(cfg.blocks[b]) == set)
        ++r.start[static_cast<size_t>(blockVar[b]) + 1];
    for (size_t v = 0; v < nv; ++v)
      r.start[v + 1] += r.start[v];
    r.blocks.resize(r.start[nv]);
    std::vector<uint32_t> fill(r.start.begin(), r.start.end() - 1);
    for (uint32_t b = 0; b < nb; ++b)
      if (blockVar[b] >= 0 && isSetFlag(cfg.blocks[b]) == set)
        r.blocks[fill[static_cast<size_t>(blockVar[b])]++] = b;
    return r;
  };
  const ByVar sets = byVar(true), waits = byVar(false);
  // Backward: from each wait to the sets that reach it (a wait reachable from the entry with no
  // set on the way can block forever).
  // Each variable's references in block order, in one array.
  std::vector<uint32_t> refStart(nv + 1, 0);
  for (uint32_t b = 0; b < nb; ++b)
    if (blockVar[b] >= 0) ++refStart[static_cast<size_t>(blockVar[b]) + 1];
  for (size_t v = 0; v < nv; ++v)
    refStart[v + 1] += refStart[v];
  std::vector<VarRef> refList(refStart[nv]);
  {
    std::vector<uint32_t> fill(refStart.begin(), refStart.end() - 1);
    for (uint32_t b = 0; b < nb; ++b)
      if (blockVar[b] >= 0)
        refList[fill[static_cast<size_t>(blockVar[b])]++] = {b, isWaitFlag(cfg.blocks[b]),
                                                             isSetFlag(cfg.blocks[b])};
  }
  std::vector<std::span<const VarRef>> refs(nv);
  for (size_t v = 0; v < nv; ++v)
    refs[v] = {refList.data() + refStart[v], refStart[v + 1] - refStart[v]};
  std::vector<Interval> live = liveIntervals(cfg, refs);
  // Forward: from each set until the waits; another set on the way is a reuse while pending.
  std::vector<uint32_t> stamp(nb, 0), stack, seenAt(nb, 0);
  uint32_t epoch = 0;
  std::vector<uint8_t> role(nb, 0); // per current variable: 1 set, 2 wait
  for (size_t v = 0; v < nv; ++v) {
    Interval& iv = live[v];
    auto include = [&](uint32_t b) {
      if (iv.empty()) iv = {b, b};
      iv.start = std::min(iv.start, b);
      iv.end = std::max(iv.end, b);
    };
    for (uint32_t s : sets[v])
      role[s] = 1;
    for (uint32_t w : waits[v])
      role[w] = 2;
    uint32_t st = static_cast<uint32_t>(v + 1);
    bool reported = false;
    for (uint32_t s : sets[v]) {
      include(s);
      stack.assign(1, s);
      while (!stack.empty()) {
        uint32_t b = stack.back();
        stack.pop_back();
        for (int32_t x : cfg.blocks[b].succ) {
          if (x < 0) continue;
          uint32_t u = static_cast<uint32_t>(x);
          if (role[u] == 2) {
            include(u);
            continue;
          }
          if (role[u] == 1) {
            if (!reported) {
              reported = true;
              EventError e{varName(v) + " is set again while still pending (no wait since the set)",
                           static_cast<int32_t>(u),
                           {static_cast<int32_t>(s)},
                           {},
                           EventErrorKind::SetWhilePending};
              if (v < m) e.events = {static_cast<uint32_t>(v)};
              out.errors.push_back(std::move(e));
            }
            continue;
          }
          if (stamp[u] == st) continue;
          stamp[u] = st;
          include(u);
          stack.push_back(u);
        }
      }
    }
    // Deadlocks: backward from each wait, stopping at the sets. Reaching the entry means a
    // path with no set before the wait; reaching a wait means its set was consumed there.
    for (uint32_t w : waits[v]) {
      ++epoch;
      int32_t other = -1;
      bool fromEntry = w == 0;
      stack.assign(cfg.predsOf(w).begin(), cfg.predsOf(w).end());
      while (!stack.empty() && other < 0 && !fromEntry) {
        uint32_t b = stack.back();
        stack.pop_back();
        if (seenAt[b] == epoch) continue;
        seenAt[b] = epoch;
        if (role[b] == 1) continue;
        if (role[b] == 2) {
          other = static_cast<int32_t>(b);
          break;
        }
        if (b == 0) {
          fromEntry = true;
          break;
        }
        for (uint32_t p : cfg.predsOf(b))
          if (seenAt[p] != epoch) stack.push_back(p);
      }
      if (other < 0 && !fromEntry) continue;
      std::string what = "the wait_flag on " + varName(v) + " at {wait}";
      EventError e;
      e.kind = EventErrorKind::Deadlock;
      e.block = static_cast<int32_t>(w);
      if (fromEntry) {
        if (sets[v].empty()) {
          e.message = what + " has no set_flag at all (it would wait forever)";
        } else {
          e.message =
              what +
              " can be reached with no set_flag before it: the set_flag at {other} is not on every "
              "path to it (a branch that skips it, or a loop that runs zero times)";
          e.related = {static_cast<int32_t>(sets[v].front())};
        }
      } else if (static_cast<uint32_t>(other) == w) {
        e.message =
            what +
            " runs again on the next loop iteration with no set_flag since it consumed the one "
            "at {other}";
        e.related = {static_cast<int32_t>(sets[v].empty() ? w : sets[v].front())};
      } else {
        e.message =
            what +
            " can be reached after the wait_flag at {other} with no set_flag in between: the set "
            "it needs was consumed there";
        e.related = {other};
      }
      if (v < m) e.events = {static_cast<uint32_t>(v)};
      out.errors.push_back(std::move(e));
      break; // one per event
    }
    for (uint32_t s : sets[v])
      role[s] = 0;
    for (uint32_t w : waits[v])
      role[w] = 0;
  }
  // Interval colouring per pipe pair.
  std::map<std::pair<isa::Pipe, isa::Pipe>, std::vector<uint32_t>> byPair;
  for (size_t v = 0; v < nv; ++v)
    if (!live[v].empty()) byPair[varPipes[v]].push_back(static_cast<uint32_t>(v));
  for (auto& [pair, vars] : byPair) {
    const unsigned usable = usableEventIds(arch, pair.first, pair.second);
    std::vector<std::vector<uint32_t>> fixed(hw); // explicit variables per id
    std::vector<uint32_t> symbolic;
    for (uint32_t v : vars)
      (v < m ? symbolic : fixed[static_cast<size_t>(fixedId[v])]).push_back(v);
    std::sort(symbolic.begin(), symbolic.end(), [&](uint32_t a, uint32_t b) {
      return std::pair(live[a].start, a) < std::pair(live[b].start, b);
    });
    std::vector<int64_t> busyUntil(hw, -1); // last block of the symbolic event holding each id
    std::vector<int32_t> holder(hw, -1);
    for (uint32_t v : symbolic) {
      const Interval iv = live[v];
      int32_t chosen = -1;
      for (unsigned id = 0; id < usable && chosen < 0; ++id) {
        if (busyUntil[id] >= static_cast<int64_t>(iv.start)) continue;
        bool clash = false;
        for (uint32_t f : fixed[id])
          clash |= live[f].overlaps(iv);
        if (!clash) chosen = static_cast<int32_t>(id);
      }
      if (chosen < 0) {
        std::vector<uint32_t> pendingNow;
        std::string list;
        for (unsigned id = 0; id < usable; ++id) {
          if (busyUntil[id] >= static_cast<int64_t>(iv.start) && holder[id] >= 0) {
            pendingNow.push_back(static_cast<uint32_t>(holder[id]));
            list += (list.empty() ? "" : ", ") + varName(static_cast<size_t>(holder[id]));
          }
          for (uint32_t f : fixed[id])
            if (live[f].overlaps(iv)) list += (list.empty() ? "" : ", ") + varName(f);
        }
        pendingNow.push_back(v);
        EventError e{
            "event ids exhausted for " + pairName(pair.first, pair.second) + ": " + varName(v) +
                " needs an id while all " + std::to_string(usable) + " usable ids (of " +
                std::to_string(hw) + ") are held by pending events: " + list,
            static_cast<int32_t>(sets[v].empty() ? (waits[v].empty() ? 0 : waits[v].front())
                                                 : sets[v].front()),
            {},
            pendingNow,
            EventErrorKind::Exhausted};
        out.errors.push_back(std::move(e));
        continue;
      }
      busyUntil[static_cast<size_t>(chosen)] = iv.end;
      holder[static_cast<size_t>(chosen)] = static_cast<int32_t>(v);
      out.id[v] = chosen;
    }
  }
  for (size_t e = 0; e < m; ++e)
    out.pending[e] = live[e];
  return out;
}

} // namespace pto::link
