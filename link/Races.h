// Races between pipes (docs/sync.md): the pipe of every tile block and the tile dependencies
// that no event chain or barrier orders. The race pass (link/Passes.h) reports them; the auto-sync
// pass (link/AutoSync.h) orders the ones of the functions whose sync the linker inserts.
#pragma once

#include "link/Cfg.h"

#include <optional>
#include <span>
#include <vector>

namespace pto::link {

/// The bytes of a tile descriptor: its buffer and [offset, offset + bytes). offset < 0: the
/// placement is unknown, and the tile may alias any tile of its buffer.
struct TileSpan {
  isa::Loc loc = isa::Loc::Vec;
  int64_t offset = -1;
  uint64_t bytes = 0;
};

/// Per block: the pipe that runs a tile block (isa::pipeOf with the locations of its first
/// source and its destination), std::nullopt for every other block.
std::vector<std::optional<isa::Pipe>>
blockPipes(const FunctionCfg& cfg, std::span<const obj::TileDesc> tiles, isa::Arch arch);

enum class DepKind : uint8_t { RAW, WAR, WAW };

/// Tile block `from` must complete before tile block `to` starts: they touch overlapping
/// bytes and at least one writes them.
struct Dependency {
  uint32_t from = 0, to = 0;
  uint32_t fromTile = 0, toTile = 0; // the descriptors through which they touch the bytes
  DepKind kind = DepKind::RAW;
  isa::Pipe fromPipe = isa::Pipe::S, toPipe = isa::Pipe::S;
  bool barrier = false; // same pipe, on an arch that needs a pipe_barrier between the two
};

/// What the race analysis did: for tests and benchmarks that check its cost stays linear.
struct RaceStats {
  size_t blockVisits = 0; // blocks processed (a loop body is processed until nothing changes)
  size_t peakPending = 0; // the most accesses pending at one point
};

/// Every dependency that nothing orders on some path (also from one loop iteration to the
/// next): cross-pipe ones with no set/wait chain, and same-pipe ones with no barrier where
/// the arch needs one. Each access is reported once per pipe it races with: the sync that
/// orders the first such dependency (placed by planAutoSync) orders it before every later op
/// of that pipe; a same-pipe dependency is reported once per block (its barrier orders every
/// earlier op of the pipe). An access leaves the analysis once every pipe that touches its
/// bytes is ordered after it. Cost: O(B * P) for B block visits and P accesses pending at a
/// time, P bounded by the tiles and pipes, not by the length of the function.
std::vector<Dependency> unorderedDependencies(const FunctionCfg& cfg,
                                              std::span<const std::optional<isa::Pipe>> pipes,
                                              std::span<const TileSpan> spans, isa::Arch arch,
                                              RaceStats* stats = nullptr);

} // namespace pto::link
