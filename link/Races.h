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

/// A GM access of a tile block: the object's record (obj::GmAccess, docs/sync.md section 2b)
/// placed on the block whose start word it names.
struct GmUse {
  uint32_t block = 0;
  obj::GmAccess access;
};

/// The GM uses of `cfg`'s blocks for function `function` of `ob`, in block order: each record
/// whose offset starts a tile block of the function.
std::vector<GmUse> gmUses(const FunctionCfg& cfg, const obj::ObjectFile& ob, uint32_t function);

/// Whether two GM accesses may touch a common byte: `earlier` (of block `from`) still pending
/// when `later` (of block `to`) runs. Different parameters never do (docs/sync.md 2b); an
/// unknown address may touch any byte of its parameter. Two accesses that move with the same
/// loop compare at each iteration distance the block order allows: 0 or more when `from` comes
/// before `to`, 1 or more otherwise (the earlier one is then of a previous iteration).
bool gmMayOverlap(const obj::GmAccess& earlier, uint32_t from, const obj::GmAccess& later,
                  uint32_t to);

enum class DepKind : uint8_t { RAW, WAR, WAW };

/// Tile block `from` must complete before tile block `to` starts: they touch overlapping
/// bytes and at least one writes them.
struct Dependency {
  uint32_t from = 0, to = 0;
  uint32_t fromTile = 0, toTile = 0; // the descriptors through which they touch the bytes
  DepKind kind = DepKind::RAW;
  isa::Pipe fromPipe = isa::Pipe::S, toPipe = isa::Pipe::S;
  bool barrier = false; // same pipe, on an arch that needs a pipe_barrier between the two
  // Through GM (GmUse) instead of tiles: fromTile/toTile are then not descriptors, and `param`
  // is the parameter both access (-1: not known).
  bool gm = false;
  int32_t param = -1;
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
/// `gm`: the blocks' GM accesses (gmUses), ordered as tile accesses are.
/// `drains`: the function's calls (and, with `returns`, its returns) are points where the
/// scalar unit must wait for every pending access first (a dependency on PIPE_S): the callee, or
/// the caller after the return, may touch any byte (the auto-sync of functions that call or are
/// called, docs/sync.md).
struct DrainPoints {
  bool calls = false, returns = false;
};
std::vector<Dependency>
unorderedDependencies(const FunctionCfg& cfg, std::span<const std::optional<isa::Pipe>> pipes,
                      std::span<const TileSpan> spans, isa::Arch arch, RaceStats* stats = nullptr,
                      std::span<const GmUse> gm = {}, DrainPoints drains = {});

} // namespace pto::link
