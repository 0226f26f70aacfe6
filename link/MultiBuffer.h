// Automatic multi-buffering (docs/sync.md section 5a): in a function that gets its sync from the
// linker, an innermost loop whose body moves tiles through several pipes (load, compute, store)
// is unrolled N times with its per-iteration tiles renamed in each copy (modulo variable
// expansion), so that the next iteration's load can run while this one computes and stores.
// The unrolled loop keeps the exit test of every copy: it runs exactly the iterations of the
// original, whatever the trip count, and needs neither prologue nor remainder loop; the copies'
// tiles form a rotation group that the planner keeps on distinct bytes, and auto-sync then gives
// each copy its own events (one per slot).
#pragma once

#include "link/Cfg.h"
#include "link/Rewrite.h"
#include "obj/Object.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pto::link {

/// One loop considered for multi-buffering.
struct RotatedLoop {
  uint32_t header = 0, latch = 0;                   // block indices: the loop is [header, latch]
  uint32_t copies = 1;                              // N (1: left alone, `reason` says why)
  std::vector<uint32_t> tiles;                      // the rotated descriptors
  std::vector<std::pair<isa::Pipe, uint64_t>> work; // bytes each pipe moves per iteration
  std::string reason;                               // why not (copies == 1), or how N was chosen
};

/// The multi-buffering of one function: the loops, and what to change in its object.
struct FunctionMultiBuffer {
  std::vector<RotatedLoop> loops;
  std::vector<Insertion> insertions; // the copies, in front of each loop's header
  std::vector<obj::TileDesc> added;  // new descriptors, appended to the function's tiles
  std::vector<int32_t> groups;       // per descriptor after: its rotation group, or -1
  bool changed() const { return !insertions.empty(); }
};

/// Plans the multi-buffering of function `function` of `ob` (graph `cfg`) for `arch`: which
/// loops qualify (a single-entry innermost loop of straight-line tile and scalar blocks whose
/// only exits go to the block after its back edge, with no sync, call or event in it), which of
/// their tiles rotate (plain planned tiles named only in the loop and written before they are
/// read in each iteration), and N: the per-iteration bytes moved by each pipe, sum over maximum
/// rounded up (a pipeline of that many stages keeps every pipe busy), at least 2 and at most 4,
/// lowered until the copies fit the buffers and the 64 descriptors a B.IOT field can name; no
/// rotation when one pipe carries at least 80% of the work (compute-bound) or nothing fits.
/// `maxCopies` caps N (a cap below 2 leaves every loop alone).
FunctionMultiBuffer planMultiBuffer(const obj::ObjectFile& ob, uint32_t function,
                                    const FunctionCfg& cfg, isa::Arch arch, uint32_t maxCopies = 4);

/// The per-iteration cost estimate by pipe used to choose N (exposed for tests): the copies a
/// loop gets for these per-pipe byte counts, before the capacity limits (1: none).
uint32_t copiesForWork(const std::vector<std::pair<isa::Pipe, uint64_t>>& work);

} // namespace pto::link
