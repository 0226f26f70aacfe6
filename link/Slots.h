// Run-time slots (docs/sync.md section 2a): a tile rebound in a loop by a TASSIGN whose address
// the loop computes, `base + (i mod n) * size`, and set_flag_dyn / wait_flag_dyn whose id is such
// an expression, read from the machine code. The loop's scalar words are evaluated symbolically
// (the induction variables from the back edge, the values entering the loop by constant
// propagation over the function): an address or id that repeats with the iterations becomes a
// table of its values over one period. The race analysis then reads the loop unrolled over that
// period (in its graph only), each copy's slot a tile of its own at a known address and its
// events constant: n disjoint slots are then as independent as n tiles placed by hand, and slots
// that overlap, or an event of another slot, are found as races.
#pragma once

#include "link/Cfg.h"
#include "link/Races.h"
#include "obj/Object.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace pto::link {

/// One loop whose run-time slots were read.
struct SlotLoop {
  uint32_t header = 0, latch = 0; // block indices: the loop is [header, latch]
  uint32_t period = 1;            // iterations after which every slot expression repeats
  uint32_t binds = 0;             // TASSIGN blocks whose address is known in every iteration
  uint32_t events = 0;            // dynamic set/wait blocks whose id is known in every iteration
};

/// The function's graph as the race analysis reads it once its run-time slots are known: each
/// such loop of period P > 1 unrolled P times (copy k runs the iterations k mod P), a tile bound
/// by a TASSIGN whose address is known renamed, from there to the end of the copy, to a
/// descriptor of its own at that address, and a dynamic event whose id is known made constant.
struct SlotView {
  FunctionCfg cfg;
  std::vector<uint32_t> origin;     // per block of cfg: the function's block it copies
  std::vector<obj::TileDesc> tiles; // the function's descriptors, then one per bound slot
  std::vector<TileSpan> spans;      // per descriptor of `tiles`
  std::vector<uint32_t> tileOrigin; // per descriptor of `tiles`: the function's descriptor
  std::vector<SlotLoop> loops;
};

/// The view of function `function` of `ob` (graph `cfg`, its descriptors' spans `spans`), or
/// nullopt when no TASSIGN address or dynamic event id of a loop is known (nothing changes).
std::optional<SlotView> resolveSlots(const FunctionCfg& cfg, const obj::ObjectFile& ob,
                                     uint32_t function, std::span<const TileSpan> spans,
                                     isa::Arch arch);

/// `deps` (found on `view.cfg`) in terms of the function's own blocks and descriptors, each
/// (from, to) pair once.
std::vector<Dependency> originalDependencies(const SlotView& view,
                                             const std::vector<Dependency>& deps);

/// The GM accesses `gm` of the function's blocks on the view's blocks (each copy of a block
/// gets its accesses).
std::vector<GmUse> gmUsesOfView(const SlotView& view, std::span<const GmUse> gm);

/// Per loop of `cfg` (by its latch, the block of its back edge): the period of its slot
/// expressions, for multi-buffering: unrolled that many times, each copy's slots are constant.
/// Loops without a known slot are absent.
std::map<uint32_t, uint32_t> slotPeriods(const FunctionCfg& cfg, const obj::ObjectFile& ob);

} // namespace pto::link
