// --auto-sync (docs/sync.md): the set_flag/wait_flag pairs and barriers that order the
// dependencies the race analysis (link/Races.h) found, and the encoded sync blocks.
#pragma once

#include "link/Races.h"
#include "link/Rewrite.h"

#include <set>
#include <span>
#include <string>
#include <vector>

namespace pto::link {

/// What --auto-sync puts into one function.
struct SyncItem {
  /// Merged: a pair that ran out of event ids, ordered by the pair `eventName` instead.
  enum Kind : uint8_t { Pair, LoopPair, Barrier, AllBarrier, Merged } kind = Pair;
  isa::Pipe src = isa::Pipe::S, dst = isa::Pipe::S;
  uint32_t dep = 0;      // the dependency that needed it (index into the input)
  std::string eventName; // Pair / LoopPair: the symbolic event
};

struct AutoSyncPlan {
  std::vector<obj::Event> events; // new symbolic events (Event relocations in the insertions)
  std::vector<SyncItem> items;
};

/// Plans the sync that orders `deps` in function `function` of an object whose next free
/// event index is `firstEvent`. Pair k is named "<prefix>k"; the pairs listed in `asBarrier`
/// (by k) become a PIPE_ALL barrier after the earlier op instead (event-id exhaustion).
/// Placement (docs/sync.md): the set right after the earlier op, the wait right before the
/// later op when it follows in the same straight line of blocks, otherwise at the end of that
/// line (before the branch or the join), so that every path that leaves the earlier op waits
/// once. Dependencies from the end of a loop body to its top (carried to the next iteration)
/// wait at the top and set at the end, with a set before the loop and a wait after it.
/// The blocks to insert are added to `insertions` (one list for all the object's functions).
AutoSyncPlan planAutoSync(const FunctionCfg& cfg, std::span<const Dependency> deps,
                          uint32_t function, uint32_t firstEvent, const std::string& prefix,
                          const std::set<uint32_t>& asBarrier, PatternInsertions& insertions);

/// The encoded sync blocks (BSTART.EXT ... BSTOP).
std::vector<uint8_t> syncBlockBytes(bool set, isa::Pipe src, isa::Pipe dst, uint32_t id);
std::vector<uint8_t> barrierBlockBytes(isa::Pipe pipe);

} // namespace pto::link
