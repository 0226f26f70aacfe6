// The passes of pto-ld (docs/linking.md, "The passes"): one link context that every pass reads
// and extends, and one function per pass. `link()` (Linker.cpp) runs them in order; each can also
// run alone on a context that the passes before it have filled (tests/unit/LinkPassesTest.cpp).
#pragma once

#include "link/Cfg.h"
#include "link/Events.h"
#include "link/Linker.h"
#include "link/Planner.h"
#include "link/Sync.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace pto::link {

/// A function definition: object index and function index in that object.
struct Def {
  size_t object = 0;
  uint32_t function = 0;
};

/// A function's control flow, built once per object version and shared between the sync
/// decision, the --auto-sync analysis and the link that checks the result.
struct BuiltCfg {
  std::variant<FunctionCfg, std::string> cfg; // the graph, or why the words do not decode
  uint64_t badWord = 0;                       // on error: the .text offset of the offending word
  const FunctionCfg* get() const { return std::get_if<FunctionCfg>(&cfg); }
};

/// Builds function `f` of `ob` (never fails: errors are kept in the result).
std::shared_ptr<const BuiltCfg> buildFunctionCfg(const obj::ObjectFile& ob, uint32_t f);

/// A function's tiles as the planner takes them (views sized by the bytes they reach).
std::vector<PlanTile> planTilesOf(const obj::Function& fn);
/// Where each tile lies once planned (for the race analysis); tiles placed at run time span
/// their whole buffer or their static root.
std::vector<TileSpan> tileSpans(const obj::Function& fn, const std::vector<PlanTile>& pt,
                                const PlanResult& pr, isa::Arch arch);
/// The tile, or a tile it is a view of, is placed at run time (obj::kRuntimePlaced).
bool placedAtRunTime(const obj::Function& fn, uint32_t tile);
/// The op of block `b`, for messages.
std::string opName(const FunctionCfg& cfg, uint32_t b);
/// The name prefix of the events --auto-sync inserts.
inline constexpr std::string_view kAutoPrefix = "auto.";

/// Source locations of one object's words (.pto.lines): "file:line:col", or "" before the first;
/// a word with a frontend location (MLIR debug info) reads "rope.py:23:8 [file:line:col]" unless
/// ptoPositions. Reads the object's own table when it is in address order (as written), which
/// `o` must outlive; only an unsorted one is copied.
class SourceLines {
public:
  explicit SourceLines(const obj::ObjectFile& o, bool ptoPositions = false);
  std::string at(uint64_t off) const;
  void appendTo(std::string& s, uint64_t off) const; // at(off), appended to `s`

private:
  std::vector<obj::LineEntry> sortedCopy_;
  std::span<const obj::LineEntry> lines_;
  bool ptoPositions_ = false;
};

/// One defined function of the inputs, in image order, with what the passes found about it.
struct FunctionWork {
  size_t object = 0;
  uint32_t function = 0; // index in its object
  uint32_t image = 0;    // index in the image
  std::shared_ptr<const BuiltCfg> built;
  std::vector<PlanTile> tiles;
  PlanResult plan;
  // Events: the object's symbolic events of this function, and the words that name them.
  std::vector<uint32_t> eventIndex; // local event -> object event index (ascending)
  std::vector<int32_t> blockEvent;  // per block: local event of a set/wait, or -1
  std::vector<std::pair<isa::Pipe, isa::Pipe>> eventPipes;
  std::vector<std::string> eventNames;
  std::vector<const obj::Reloc*> eventRelocs; // into the object's relocations
  EventPlan events;
  std::vector<Diagnostic> diags; // this function's, in pass order (printed after the global ones)

  const FunctionCfg* cfg() const { return built ? built->get() : nullptr; }
  /// The local event of object event `e`, or -1 when it is not this function's.
  int32_t localEvent(uint32_t e) const {
    auto it = std::lower_bound(eventIndex.begin(), eventIndex.end(), e);
    return it != eventIndex.end() && *it == e ? static_cast<int32_t>(it - eventIndex.begin()) : -1;
  }
};

/// --auto-sync bookkeeping across rounds: the inserted events and those that ran out of ids.
struct AutoSyncRound {
  std::vector<size_t> firstAutoEvent; // per object: its events from this index on are auto-sync's
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>>
      exhausted; // (object, function) -> pair k
};

/// Everything one link works on. The passes fill it in order.
struct LinkContext {
  LinkContext(const std::vector<InputObject>& in, const LinkOptions& o) : inputs(in), opts(o) {}

  const std::vector<InputObject>& inputs;
  const LinkOptions& opts;
  /// Optional, per object and function: graphs already built for these very objects (reused
  /// instead of decoding again); empty entries are built by buildCfgs.
  std::vector<std::vector<std::shared_ptr<const BuiltCfg>>> knownCfgs;
  AutoSyncRound* autoSync = nullptr; // set on a link that checks inserted sync

  isa::Arch arch = isa::Arch::A2A3;
  bool stop = false; // a pass found that nothing after it can run (no inputs)
  std::map<std::string, Def> globals;
  obj::Image image;
  std::vector<uint64_t> base; // per object: its .text offset in the image
  std::map<std::pair<size_t, uint32_t>, uint32_t> imageFn; // (object, function) -> image function
  std::vector<FunctionWork> functions;                     // image order
  LinkResult result; // the global diagnostics, origins, map lines; the image once finished

private:
  std::vector<std::unique_ptr<SourceLines>> lines_;

public:
  void error(const std::string& loc, const std::string& msg);
  /// The source locations of object `o` (sorted once, on first use).
  const SourceLines& lines(size_t o);
  /// A private definition in object `o`, else a global one.
  std::optional<Def> resolve(size_t o, const std::string& name) const;
};

// The passes, in the order link() runs them.
void checkInputs(LinkContext& ctx);    // inputs present, one arch, the extension space
void resolveSymbols(LinkContext& ctx); // globals, duplicates, undefined symbols
void layOutText(
    LinkContext& ctx); // image .text, functions and lines; one FunctionWork per definition
void selectEntries(LinkContext& ctx);    // --entry or pto.entry
void patchCalls(LinkContext& ctx);       // Call relocations
void buildCfgs(LinkContext& ctx);        // control flow of every function (or the known one)
void placeTiles(LinkContext& ctx);       // memory planning; map tiles and the buffer layout
void checkRaces(LinkContext& ctx);       // dependencies between pipes that nothing orders
void collectEvents(LinkContext& ctx);    // symbolic events and the words that name them
void allocateEventIds(LinkContext& ctx); // hardware ids, deadlocks; image and map events
void patchEvents(LinkContext& ctx);      // Event relocations
void finishImage(LinkContext& ctx); // the diagnostics in order; the image when there is no error

/// Runs every pass above on `ctx`.
void runPasses(LinkContext& ctx);

} // namespace pto::link
