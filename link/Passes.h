// The passes of pto-ld (docs/linking.md, "The passes"): one link context that every pass reads
// and extends, one function per pass, and the table `link()` (Linker.cpp) runs them from, each
// timed. A pass can also run alone on a context that the passes before it have filled
// (tests/unit/LinkPassesTest.cpp).
#pragma once

#include "link/AutoSync.h"
#include "link/Cfg.h"
#include "link/Events.h"
#include "link/Linker.h"
#include "link/Planner.h"
#include "link/Races.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
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
  std::vector<Dependency> deps; // the race pass's result: dependencies that nothing orders
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

/// The sync of one input function (docs/sync.md section 5), decided once on the inputs as given.
struct SyncDecision {
  bool explicitSync = false;             // the source has set_flag / wait_flag / barrier blocks
  bool insert = false;                   // the linker inserts its sync (auto-sync)
  std::shared_ptr<const BuiltCfg> built; // its graph as given (shared with later rounds)
  std::vector<Dependency> deps;          // insert: the race pass's result on the code as given
};

/// What auto-sync keeps across the rounds of one link. A round runs the passes over one set of
/// objects: the inputs as given, then (when a function gets sync inserted) the objects with the
/// sync inserted. The events pass feeds back the inserted pairs that ran out of hardware ids;
/// the auto-sync pass then places those as PIPE_ALL barriers and the link runs again.
struct AutoSyncState {
  enum class Stage : uint8_t {
    Undecided, // the sync-mode pass has not run
    None,      // no function gets sync inserted: one round
    Plan,      // this round analyses the inputs as given; the auto-sync pass inserts the sync
    Inserted,  // this round links the objects with the sync inserted
  } stage = Stage::Undecided;
  std::vector<std::vector<SyncDecision>> fns; // per input object, per function
  /// The race pass's dependencies are in `fns` (taken by auto-sync in the first round; a later
  /// placement after event ids ran out reuses them, never analysing the code again).
  bool analysed = false;
  std::vector<size_t> firstAutoEvent; // per object: its events from this index on are inserted
  /// (object, function) -> the pairs (by k, "auto.k") that get a PIPE_ALL barrier instead.
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>> asBarrier;
  /// The events pass's feedback in this round: the inserted pairs that ran out of ids.
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>> exhausted;
  // What the insertion made: the objects, the map's log, the warnings, the counts per function.
  std::vector<InputObject> objects;
  std::vector<std::string> log;
  std::vector<Diagnostic> warnings;
  std::map<std::pair<size_t, uint32_t>, FunctionSync> counts;
};

/// What multi-buffering (link/MultiBuffer.h) did, kept across the rounds of one link: it runs
/// once, on the inputs as given, and the link then runs over the unrolled objects.
struct MultiBufferState {
  bool done = false;
  std::vector<InputObject> objects; // the inputs with their loops unrolled (`given` from then on)
  /// (object, function) -> per descriptor: its rotation group (the planner keeps a group's
  /// tiles on distinct bytes), or -1.
  std::map<std::pair<size_t, uint32_t>, std::vector<int32_t>> groups;
  std::vector<std::string> log;          // the map's "Multi-buffer" lines
  std::span<const InputObject> original; // the link's inputs, before any unrolling
  /// (object, function) -> the most copies its loops got in the last try; and the cap for the
  /// next one, lowered when the copies' events ran out of hardware ids (the link then starts
  /// over from the original inputs rather than fall back to PIPE_ALL barriers).
  std::map<std::pair<size_t, uint32_t>, uint32_t> copies, cap;
};

/// Everything one link works on. The passes fill it in order.
struct LinkContext {
  LinkContext(const std::vector<InputObject>& in, const LinkOptions& o)
      : given(in), inputs(in), opts(o) {}

  std::span<const InputObject> given;  // the inputs of the link
  std::span<const InputObject> inputs; // this round's objects: `given`, or auto-sync's result
  const LinkOptions& opts;
  /// Optional, per object and function: graphs already built for these very objects (reused
  /// instead of decoding again); empty entries are built by buildCfgs.
  std::vector<std::vector<std::shared_ptr<const BuiltCfg>>> knownCfgs;
  AutoSyncState sync;           // kept across rounds
  MultiBufferState multiBuffer; // kept across rounds
  std::vector<PassTime> timing; // per pass of the table, across rounds

  isa::Arch arch = isa::Arch::A2A3;
  bool stop = false; // a pass found that nothing after it can run (no inputs)
  /// Set by a pass: run the table again from this pass (auto-sync after inserting the sync: the
  /// first pass, over the new objects; the events pass when inserted pairs ran out of ids:
  /// auto-sync). Running from the first pass starts a new round (newRound).
  std::optional<std::string_view> rerunFrom;
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
  void note(const std::string& loc, const std::string& msg);
  /// The source locations of object `o` (sorted once, on first use).
  const SourceLines& lines(size_t o);
  /// A private definition in object `o`, else a global one.
  std::optional<Def> resolve(size_t o, const std::string& name) const;
  /// This round analyses the inputs as given for auto-sync only: the passes before auto-sync
  /// look at the functions that get sync inserted and report nothing (the round is discarded).
  bool planningSync() const { return sync.stage == AutoSyncState::Stage::Plan; }
  /// Whether the passes of this round look at `fw` (planningSync: only the inserting ones).
  bool analyses(const FunctionWork& fw) const;
  /// Forgets what the last round found (before running the table again over new objects).
  void newRound();
};

// The passes, in the order of the table.
void checkInputs(LinkContext& ctx);    // inputs present, one arch, the extension space
void resolveSymbols(LinkContext& ctx); // globals, duplicates, undefined symbols
void layOutText(
    LinkContext& ctx); // image .text, functions and lines; one FunctionWork per definition
void selectEntries(LinkContext& ctx);  // --entry or pto.entry
void patchCalls(LinkContext& ctx);     // Call relocations
void buildCfgs(LinkContext& ctx);      // control flow of every function (or the known one)
void checkRecursion(LinkContext& ctx); // calls that come back to their caller
void decideSync(LinkContext& ctx);     // per function: inserted or checked sync (AutoSync.cpp)
void multiBuffer(LinkContext& ctx); // rotates pipelined loops' tiles over copies (MultiBuffer.cpp)
/// The events pass's feedback when inserted pairs ran out of ids in a multi-buffered function:
/// fewer copies for it, and the link starts over from the original inputs (true), rather than
/// PIPE_ALL barriers in their place.
bool retryWithFewerCopies(LinkContext& ctx);
void placeTiles(LinkContext& ctx);       // memory planning; map tiles and the buffer layout
void checkRaces(LinkContext& ctx);       // dependencies between pipes that nothing orders
void insertAutoSync(LinkContext& ctx);   // orders the inserting functions' races (AutoSync.cpp)
void collectEvents(LinkContext& ctx);    // symbolic events and the words that name them
void allocateEventIds(LinkContext& ctx); // hardware ids, deadlocks; image and map events
void patchEvents(LinkContext& ctx);      // Event relocations
void finishImage(LinkContext& ctx); // the diagnostics in order; the image when there is no error

/// finishImage's last step: the sync each function got (LinkResult::functionSync) and, after
/// auto-sync, its log and its warnings (AutoSync.cpp).
void recordSync(LinkContext& ctx);

/// One entry of the pass table: its name (as --time-passes prints it) and its function.
struct Pass {
  std::string_view name;
  void (*run)(LinkContext&);
};
/// The table, in the order link() runs it.
std::span<const Pass> linkPasses();

/// Runs the table on `ctx` (again from a pass when one asks for it), timing each pass.
void runPasses(LinkContext& ctx);

} // namespace pto::link
