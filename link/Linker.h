// pto-ld's core (docs/linking.md): symbol resolution across objects, entry selection, arch and
// identity checks, memory planning and event-id allocation per function, and the image.
#pragma once

#include "obj/Image.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pto::link {

struct InputObject {
  std::string path;
  obj::ObjectFile obj;
};

/// How the linker treats the sync of each function (docs/sync.md, section 5).
enum class SyncMode : uint8_t {
  Auto,   // default: a function with no explicit sync gets it inserted; one with explicit sync is
          // checked
  Insert, // --auto-sync: insert what is missing in every function, then check
  Check,  // --no-auto-sync: insert nothing; every race is an error
};

struct LinkOptions {
  std::vector<std::string> entries; // --entry: the exported kernels (default: pto.entry functions)
  std::optional<isa::Arch> arch;    // --arch: every object must be for this arch
  SyncMode sync = SyncMode::Auto;   // --auto-sync / --no-auto-sync (docs/sync.md)
  bool allowRaces = false;          // --allow-races: a race is a warning, not an error
  bool ptoPositions = false;        // --pto-positions: report .pto positions only, no frontend's
  /// Keep --auto-sync's log of what it inserted where (LinkResult::syncLog, the map's "Auto-sync"
  /// section): a line per inserted pair, which pto-ld spells only when it writes a map.
  bool syncLog = true;
  /// Automatic multi-buffering (docs/sync.md section 5a): in functions that get sync inserted,
  /// a loop that moves tiles through several pipes gets its per-iteration tiles rotated over N
  /// copies. --no-multibuf turns it off.
  bool multiBuffer = true;
};

struct Diagnostic {
  bool note = false;
  bool warning = false; // neither: an error
  std::string text;     // "file:line:col: message (in @fn, obj.o)" or "message"
};

/// One line of the map: where a tile lives and when.
struct MapTile {
  uint32_t function = 0, tile = 0; // image function, descriptor index
  std::string name;
  isa::Loc loc = isa::Loc::Vec;
  int64_t offset = 0;
  uint64_t bytes = 0;
  bool manual = false, used = false;
  int32_t viewOf = -1;
  uint64_t liveFrom = 0, liveTo = 0; // image .text byte range [from, to) where the storage is live
  std::string source;                // file:line:col of the first op naming it
};

struct MapEvent {
  uint32_t function = 0;
  std::string name;
  isa::Pipe src = isa::Pipe::S, dst = isa::Pipe::S;
  int32_t id = -1;
  uint64_t pendingFrom = 0, pendingTo = 0;
};

/// The sync mode one function got, and why (the map's "Sync" section, pto-ld -v).
struct FunctionSync {
  bool inserted = false;          // the linker placed sync (auto mode); otherwise it only checked
  bool explicitSync = false;      // the source has set_flag / wait_flag / barrier blocks
  size_t pairs = 0, barriers = 0; // what was inserted
  /// "auto: sync inserted (no explicit sync in the source), 3 pair(s), 1 barrier(s)" and the like.
  std::string describe(SyncMode mode) const;
};

/// The wall time of one pass of the link (summed over its runs), for --time-passes.
struct PassTime {
  std::string_view name;
  double seconds = 0;
  unsigned runs = 0;
};

struct LinkResult {
  std::optional<obj::Image> image; // set when there was no error
  std::vector<Diagnostic> diags;
  std::vector<std::string> functionOrigin; // per image function: the object path
  std::vector<MapTile> tiles;
  std::vector<MapEvent> events;
  std::vector<std::string> syncLog; // --auto-sync: what was inserted where (the map's "Auto-sync")
  std::vector<FunctionSync> functionSync; // per image function
  /// Multi-buffering: a line per loop considered, what was done and why (the map's
  /// "Multi-buffer" section, pto-ld -v).
  std::vector<std::string> multiBufferLog;
  SyncMode syncMode = SyncMode::Auto; // the option the link ran with
  std::vector<PassTime> passTimes;    // per pass of the table (link/Passes.h), in its order
  bool ok() const { return image.has_value(); }
};

LinkResult link(const std::vector<InputObject>& inputs, const LinkOptions& opts);

/// The diagnostic's prefix as pto-ld prints it: "error: ", "warning: " or "note: ".
inline const char* severity(const Diagnostic& d) {
  return d.note ? "note: " : d.warning ? "warning: " : "error: ";
}

/// LLVM's -time-passes report of `times`: wall time, share of the total and name, per pass.
std::string formatPassTimes(std::span<const PassTime> times);

/// The -Map text (docs/linking.md, "The map file").
std::string formatMap(const LinkResult& r);

} // namespace pto::link
