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

namespace {

/// allocateEvents, step by step: the variables (symbolic events, then one per explicit constant
/// id of a pipe pair), their live ranges along the control flow, the checks of each (a set again
/// while pending, a wait no set satisfies), then interval colouring per pipe pair.
class Allocator {
public:
  Allocator(const FunctionCfg& cfg, const std::vector<int32_t>& blockEvent,
            const std::vector<std::pair<isa::Pipe, isa::Pipe>>& pipes,
            const std::vector<std::string>& names, isa::Arch arch)
      : cfg_(cfg), blockEvent_(blockEvent), names_(names), arch_(arch), m_(pipes.size()),
        nb_(cfg.blocks.size()), hw_(hardwareEventIds(arch)), varPipes_(pipes), fixedId_(m_, -1) {
    out_.id.assign(m_, -1);
    out_.pending.assign(m_, Interval{});
  }

  EventPlan run() {
    numberVariables();
    nv_ = varPipes_.size();
    sets_ = byVar(true);
    waits_ = byVar(false);
    live_ = liveRanges();
    stamp_.assign(nb_, 0);
    seenAt_.assign(nb_, 0);
    role_.assign(nb_, 0);
    for (size_t v = 0; v < nv_; ++v)
      check(v);
    colour();
    for (size_t e = 0; e < m_; ++e)
      out_.pending[e] = live_[e];
    return std::move(out_);
  }

private:
  /// Each variable's set and wait blocks in address order, in one array each (a vector per
  /// event was an allocation per event).
  struct ByVar {
    std::vector<uint32_t> start, blocks;
    std::span<const uint32_t> operator[](size_t v) const {
      return {blocks.data() + start[v], start[v + 1] - start[v]};
    }
  };

  /// What the messages call a variable (spelled only for a message: thousands of inserted
  /// events need none).
  std::string varName(size_t v) const {
    if (v < m_) return "event @" + (v < names_.size() ? names_[v] : std::to_string(v));
    return "event id " + std::to_string(fixedId_[v]) + " for " +
           pairName(varPipes_[v].first, varPipes_[v].second);
  }

  /// The variable of every set/wait block (blockVar_), checking each against its pipe pair and
  /// the hardware's ids.
  void numberVariables() {
    std::map<std::tuple<int, int, int64_t>, uint32_t> explicitVar;
    blockVar_.assign(nb_, -1);
    for (uint32_t b = 0; b < nb_; ++b) {
      const Block& blk = cfg_.blocks[b];
      if (!isFlag(blk)) continue;
      int32_t v = b < blockEvent_.size() ? blockEvent_[b] : -1;
      if (v >= 0) {
        const auto& declared = varPipes_[static_cast<size_t>(v)];
        if (declared != std::pair(blk.srcPipe, blk.dstPipe)) {
          out_.errors.push_back({varName(static_cast<size_t>(v)) + " is declared for " +
                                     pairName(declared.first, declared.second) +
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
        if (blk.eventId < 0 || static_cast<uint64_t>(blk.eventId) >= hw_) {
          out_.errors.push_back({"event id " + std::to_string(blk.eventId) + " for " +
                                     pairName(blk.srcPipe, blk.dstPipe) +
                                     " is out of range (the hardware has " + std::to_string(hw_) +
                                     " per pipe pair)",
                                 static_cast<int32_t>(b),
                                 {},
                                 {},
                                 EventErrorKind::IdOutOfRange});
          continue;
        }
        auto key =
            std::tuple(static_cast<int>(blk.srcPipe), static_cast<int>(blk.dstPipe), blk.eventId);
        auto [it, fresh] = explicitVar.try_emplace(key, static_cast<uint32_t>(varPipes_.size()));
        if (fresh) {
          varPipes_.push_back({blk.srcPipe, blk.dstPipe});
          fixedId_.push_back(blk.eventId);
        }
        v = static_cast<int32_t>(it->second);
      }
      blockVar_[b] = v;
    }
  }

  ByVar byVar(bool set) const {
    ByVar r;
    r.start.assign(nv_ + 1, 0);
    for (uint32_t b = 0; b < nb_; ++b)
      if (blockVar_[b] >= 0 && isSetFlag(cfg_.blocks[b]) == set)
        ++r.start[static_cast<size_t>(blockVar_[b]) + 1];
    for (size_t v = 0; v < nv_; ++v)
      r.start[v + 1] += r.start[v];
    r.blocks.resize(r.start[nv_]);
    std::vector<uint32_t> fill(r.start.begin(), r.start.end() - 1);
    for (uint32_t b = 0; b < nb_; ++b)
      if (blockVar_[b] >= 0 && isSetFlag(cfg_.blocks[b]) == set)
        r.blocks[fill[static_cast<size_t>(blockVar_[b])]++] = b;
    return r;
  }

  /// Backward: from each wait to the sets that reach it (a wait reachable from the entry with
  /// no set on the way can block forever). Each variable's references in block order, in one
  /// array.
  std::vector<Interval> liveRanges() const {
    std::vector<uint32_t> refStart(nv_ + 1, 0);
    for (uint32_t b = 0; b < nb_; ++b)
      if (blockVar_[b] >= 0) ++refStart[static_cast<size_t>(blockVar_[b]) + 1];
    for (size_t v = 0; v < nv_; ++v)
      refStart[v + 1] += refStart[v];
    std::vector<VarRef> refList(refStart[nv_]);
    std::vector<uint32_t> fill(refStart.begin(), refStart.end() - 1);
    for (uint32_t b = 0; b < nb_; ++b)
      if (blockVar_[b] >= 0)
        refList[fill[static_cast<size_t>(blockVar_[b])]++] = {b, isWaitFlag(cfg_.blocks[b]),
                                                              isSetFlag(cfg_.blocks[b])};
    std::vector<std::span<const VarRef>> refs(nv_);
    for (size_t v = 0; v < nv_; ++v)
      refs[v] = {refList.data() + refStart[v], refStart[v + 1] - refStart[v]};
    return liveIntervals(cfg_, refs);
  }

  /// Variable `v`: forward from each set to its waits (another set on the way is a reuse while
  /// pending), then backward from each wait for a deadlock.
  void check(size_t v) {
    for (uint32_t s : sets_[v])
      role_[s] = 1;
    for (uint32_t w : waits_[v])
      role_[w] = 2;
    forwardFromSets(v);
    findDeadlock(v);
    for (uint32_t s : sets_[v])
      role_[s] = 0;
    for (uint32_t w : waits_[v])
      role_[w] = 0;
  }

  void forwardFromSets(size_t v) {
    Interval& iv = live_[v];
    auto include = [&](uint32_t b) {
      if (iv.empty()) iv = {b, b};
      iv.start = std::min(iv.start, b);
      iv.end = std::max(iv.end, b);
    };
    const uint32_t st = static_cast<uint32_t>(v + 1);
    bool reported = false;
    for (uint32_t s : sets_[v]) {
      include(s);
      stack_.assign(1, s);
      while (!stack_.empty()) {
        uint32_t b = stack_.back();
        stack_.pop_back();
        for (int32_t x : cfg_.blocks[b].succ) {
          if (x < 0) continue;
          uint32_t u = static_cast<uint32_t>(x);
          if (role_[u] == 2) {
            include(u);
            continue;
          }
          if (role_[u] == 1) {
            if (!reported) {
              reported = true;
              EventError e{varName(v) + " is set again while still pending (no wait since the set)",
                           static_cast<int32_t>(u),
                           {static_cast<int32_t>(s)},
                           {},
                           EventErrorKind::SetWhilePending};
              if (v < m_) e.events = {static_cast<uint32_t>(v)};
              out_.errors.push_back(std::move(e));
            }
            continue;
          }
          if (stamp_[u] == st) continue;
          stamp_[u] = st;
          include(u);
          stack_.push_back(u);
        }
      }
    }
  }

  /// Deadlocks: backward from each wait, stopping at the sets. Reaching the entry means a path
  /// with no set before the wait; reaching a wait means its set was consumed there.
  void findDeadlock(size_t v) {
    for (uint32_t w : waits_[v]) {
      ++epoch_;
      int32_t other = -1;
      bool fromEntry = w == 0;
      stack_.assign(cfg_.predsOf(w).begin(), cfg_.predsOf(w).end());
      while (!stack_.empty() && other < 0 && !fromEntry) {
        uint32_t b = stack_.back();
        stack_.pop_back();
        if (seenAt_[b] == epoch_) continue;
        seenAt_[b] = epoch_;
        if (role_[b] == 1) continue;
        if (role_[b] == 2) {
          other = static_cast<int32_t>(b);
          break;
        }
        if (b == 0) {
          fromEntry = true;
          break;
        }
        for (uint32_t p : cfg_.predsOf(b))
          if (seenAt_[p] != epoch_) stack_.push_back(p);
      }
      if (other < 0 && !fromEntry) continue;
      out_.errors.push_back(deadlock(v, w, other, fromEntry));
      break; // one per event
    }
  }

  EventError deadlock(size_t v, uint32_t w, int32_t other, bool fromEntry) const {
    std::string what = "the wait_flag on " + varName(v) + " at {wait}";
    EventError e;
    e.kind = EventErrorKind::Deadlock;
    e.block = static_cast<int32_t>(w);
    if (fromEntry) {
      if (sets_[v].empty()) {
        e.message = what + " has no set_flag at all (it would wait forever)";
      } else {
        e.message =
            what +
            " can be reached with no set_flag before it: the set_flag at {other} is not on every "
            "path to it (a branch that skips it, or a loop that runs zero times)";
        e.related = {static_cast<int32_t>(sets_[v].front())};
      }
    } else if (static_cast<uint32_t>(other) == w) {
      e.message =
          what +
          " runs again on the next loop iteration with no set_flag since it consumed the one "
          "at {other}";
      e.related = {static_cast<int32_t>(sets_[v].empty() ? w : sets_[v].front())};
    } else {
      e.message =
          what +
          " can be reached after the wait_flag at {other} with no set_flag in between: the set "
          "it needs was consumed there";
      e.related = {other};
    }
    if (v < m_) e.events = {static_cast<uint32_t>(v)};
    return e;
  }

  /// Interval colouring per pipe pair.
  void colour() {
    std::map<std::pair<isa::Pipe, isa::Pipe>, std::vector<uint32_t>> byPair;
    for (size_t v = 0; v < nv_; ++v)
      if (!live_[v].empty()) byPair[varPipes_[v]].push_back(static_cast<uint32_t>(v));
    for (auto& [pair, vars] : byPair)
      colourPair(pair, vars);
  }

  void colourPair(std::pair<isa::Pipe, isa::Pipe> pair, const std::vector<uint32_t>& vars) {
    const unsigned usable = usableEventIds(arch_, pair.first, pair.second);
    std::vector<std::vector<uint32_t>> fixed(hw_); // explicit variables per id
    std::vector<uint32_t> symbolic;
    for (uint32_t v : vars)
      (v < m_ ? symbolic : fixed[static_cast<size_t>(fixedId_[v])]).push_back(v);
    std::sort(symbolic.begin(), symbolic.end(), [&](uint32_t a, uint32_t b) {
      return std::pair(live_[a].start, a) < std::pair(live_[b].start, b);
    });
    std::vector<int64_t> busyUntil(hw_, -1); // last block of the symbolic event holding each id
    std::vector<int32_t> holder(hw_, -1);
    for (uint32_t v : symbolic) {
      const Interval iv = live_[v];
      int32_t chosen = -1;
      for (unsigned id = 0; id < usable && chosen < 0; ++id) {
        if (busyUntil[id] >= static_cast<int64_t>(iv.start)) continue;
        bool clash = false;
        for (uint32_t f : fixed[id])
          clash |= live_[f].overlaps(iv);
        if (!clash) chosen = static_cast<int32_t>(id);
      }
      if (chosen < 0) {
        out_.errors.push_back(exhausted(pair, v, usable, fixed, busyUntil, holder));
        continue;
      }
      busyUntil[static_cast<size_t>(chosen)] = iv.end;
      holder[static_cast<size_t>(chosen)] = static_cast<int32_t>(v);
      out_.id[v] = chosen;
    }
  }

  EventError exhausted(std::pair<isa::Pipe, isa::Pipe> pair, uint32_t v, unsigned usable,
                       const std::vector<std::vector<uint32_t>>& fixed,
                       const std::vector<int64_t>& busyUntil,
                       const std::vector<int32_t>& holder) const {
    const Interval iv = live_[v];
    std::vector<uint32_t> pendingNow;
    std::string list;
    for (unsigned id = 0; id < usable; ++id) {
      if (busyUntil[id] >= static_cast<int64_t>(iv.start) && holder[id] >= 0) {
        pendingNow.push_back(static_cast<uint32_t>(holder[id]));
        list += (list.empty() ? "" : ", ") + varName(static_cast<size_t>(holder[id]));
      }
      for (uint32_t f : fixed[id])
        if (live_[f].overlaps(iv)) list += (list.empty() ? "" : ", ") + varName(f);
    }
    pendingNow.push_back(v);
    return EventError{
        "event ids exhausted for " + pairName(pair.first, pair.second) + ": " + varName(v) +
            " needs an id while all " + std::to_string(usable) + " usable ids (of " +
            std::to_string(hw_) + ") are held by pending events: " + list,
        static_cast<int32_t>(sets_[v].empty() ? (waits_[v].empty() ? 0 : waits_[v].front())
                                              : sets_[v].front()),
        {},
        pendingNow,
        EventErrorKind::Exhausted};
  }

  const FunctionCfg& cfg_;
  const std::vector<int32_t>& blockEvent_;
  const std::vector<std::string>& names_;
  const isa::Arch arch_;
  const size_t m_, nb_; // symbolic events, blocks
  const unsigned hw_;   // hardware ids per pipe pair
  // Variables: the symbolic events, then one per explicit (pair, id).
  std::vector<std::pair<isa::Pipe, isa::Pipe>> varPipes_;
  std::vector<int64_t> fixedId_;
  size_t nv_ = 0;
  std::vector<int32_t> blockVar_;
  ByVar sets_, waits_;
  std::vector<Interval> live_;
  // The checks' scratch, kept across variables.
  std::vector<uint32_t> stamp_, stack_, seenAt_;
  uint32_t epoch_ = 0;
  std::vector<uint8_t> role_; // per current variable: 1 set, 2 wait
  EventPlan out_;
};

} // namespace

EventPlan allocateEvents(const FunctionCfg& cfg, const std::vector<int32_t>& blockEvent,
                         const std::vector<std::pair<isa::Pipe, isa::Pipe>>& pipes,
                         const std::vector<std::string>& names, isa::Arch arch) {
  return Allocator(cfg, blockEvent, pipes, names, arch).run();
}

} // namespace pto::link
