// Memory planning (docs/linking.md): liveness of tiles over a function's real control flow,
// then per buffer a best-fit placement with hole reuse. Manual placements are kept and checked.
// Cost: O((B + E) + sum of live-range lengths + T log T) for B blocks, E edges and T tiles.
#pragma once

#include "link/Cfg.h"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pto::link {

/// A closed interval of block indices (in address order). Empty when start > end.
struct Interval {
  uint32_t start = 1, end = 0;
  bool empty() const { return start > end; }
  bool overlaps(const Interval& o) const {
    return !empty() && !o.empty() && start <= o.end && o.start <= end;
  }
};

/// One reference of a variable in a block (after merging all references in the block).
struct VarRef {
  uint32_t block = 0;
  bool use = false;  // the value before the block is needed (upward-exposed read)
  bool kill = false; // the block overwrites the whole value without reading it
};

/// Backward liveness by path exploration for `numVars` variables whose references are given
/// per variable (sorted by block). Returns, per variable, the hull of every block where it is
/// live or referenced; `liveAtEntry[v]` tells whether it is live into block 0.
std::vector<Interval> liveIntervals(const FunctionCfg& cfg,
                                    const std::vector<std::vector<VarRef>>& refs,
                                    std::vector<bool>* liveAtEntry = nullptr);
/// The same with each variable's references as a view (into one array for all of them).
std::vector<Interval> liveIntervals(const FunctionCfg& cfg,
                                    std::span<const std::span<const VarRef>> refs,
                                    std::vector<bool>* liveAtEntry = nullptr);

/// The planner's view of a tile descriptor.
struct PlanTile {
  std::string name;
  isa::Loc loc = isa::Loc::Vec;
  uint64_t bytes = 0;   // storage size
  int64_t manual = -1;  // fixed byte offset (obj::kUnplaced = -1: plan it)
  int32_t aliasOf = -1; // a view of this earlier tile
  uint64_t aliasOffset = 0;
  /// A rotation group (multi-buffering, link/MultiBuffer.h): the roots of one group are all
  /// live over the hull of their live ranges, so no two of them share bytes. -1: none.
  int32_t group = -1;
};

/// The byte size of a descriptor (rows * cols * element bits, rounded up to whole bytes).
uint64_t tileBytes(const obj::TileDesc& t);

struct PlanError {
  enum class Kind { Overflow, Misaligned, OutOfBounds, ViewOutOfParent } kind = Kind::Overflow;
  isa::Loc loc = isa::Loc::Vec;
  std::string message;         // without location
  std::vector<uint32_t> tiles; // the tiles concerned (first one locates the error)
  std::vector<uint32_t> peak;  // Overflow: the tiles live at the peak, by offset
  uint64_t needed = 0, available = 0;
};

/// A write through manually placed tile `writer` over bytes of tile `victim` (overlapping, both
/// placed by hand) whose earlier value `victim` reads again at `readBlock` (block indices).
struct Clobber {
  uint32_t writer = 0, victim = 0;
  uint32_t writeBlock = 0, readBlock = 0;
};

struct PlanResult {
  std::vector<int64_t>
      offset;                 // per tile: absolute byte offset in its buffer (views: root + offset)
  std::vector<Interval> live; // per tile: the live range of its storage (the root's)
  std::vector<int32_t> firstBlock; // per tile: the first block that names it (-1: never)
  std::vector<bool> manual;        // per tile: the storage was placed by hand
  std::array<uint64_t, 7> used{};  // per buffer: bytes needed (highest end)
  std::vector<PlanError> errors;
  std::vector<Clobber> clobbers; // warnings, not errors
  bool ok() const { return errors.empty(); }
};

/// Plans the tiles of one function for `arch`.
PlanResult plan(const FunctionCfg& cfg, std::span<const PlanTile> tiles, isa::Arch arch);

/// Independent check of a plan (for tests): every storage aligned and in bounds, no two
/// storages of one buffer whose live ranges overlap share a byte. Returns the first violation.
std::optional<std::string> checkPlan(std::span<const PlanTile> tiles, const PlanResult& r,
                                     isa::Arch arch);

} // namespace pto::link
