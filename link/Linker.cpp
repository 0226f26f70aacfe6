// The link driver (docs/linking.md, "The passes"): the pass table, run over one link context
// (again from a pass when auto-sync changed the code), each pass timed; link().
#include "link/Linker.h"

#include "link/Passes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>

namespace pto::link {

std::string FunctionSync::describe(SyncMode mode) const {
  std::string why = mode == SyncMode::Insert  ? "forced by --auto-sync"
                    : mode == SyncMode::Check ? "forced by --no-auto-sync"
                    : explicitSync            ? "explicit sync in the source"
                                              : "no explicit sync in the source";
  if (!inserted) return "checked (" + why + ")";
  return "auto, sync inserted (" + why + "): " + std::to_string(pairs) + " set/wait pair(s), " +
         std::to_string(barriers) + " barrier(s)";
}

std::shared_ptr<const BuiltCfg> buildFunctionCfg(const obj::ObjectFile& ob, uint32_t f) {
  auto b = std::make_shared<BuiltCfg>();
  b->badWord = ob.functions[f].textOffset;
  b->cfg = buildCfg(ob, f, &b->badWord);
  return b;
}

SourceLines::SourceLines(const obj::ObjectFile& o, bool ptoPositions)
    : lines_(o.lines), ptoPositions_(ptoPositions) {
  auto byOffset = [](const obj::LineEntry& a, const obj::LineEntry& b) {
    return a.textOffset < b.textOffset;
  };
  if (std::is_sorted(o.lines.begin(), o.lines.end(), byOffset)) return;
  sortedCopy_ = o.lines;
  std::stable_sort(sortedCopy_.begin(), sortedCopy_.end(), byOffset);
  lines_ = sortedCopy_;
}

std::string SourceLines::at(uint64_t off) const {
  std::string s;
  appendTo(s, off);
  return s;
}

void SourceLines::appendTo(std::string& s, uint64_t off) const {
  auto it = std::upper_bound(lines_.begin(), lines_.end(), off,
                             [](uint64_t o, const obj::LineEntry& l) { return o < l.textOffset; });
  if (it == lines_.begin()) return;
  --it;
  const bool frontend = !ptoPositions_ && !it->frontend.empty();
  if (frontend) s += it->frontend + " [";
  char num[16];
  s += it->file;
  for (uint32_t v : {it->line, it->col}) {
    s += ':';
    s.append(num, std::to_chars(num, num + sizeof num, v).ptr);
  }
  if (frontend) s += ']';
}

const SourceLines& LinkContext::lines(size_t o) {
  if (lines_.size() < inputs.size()) lines_.resize(inputs.size());
  if (!lines_[o]) lines_[o] = std::make_unique<SourceLines>(inputs[o].obj, opts.ptoPositions);
  return *lines_[o];
}

void LinkContext::error(const std::string& loc, const std::string& msg) {
  result.diags.push_back({false, false, loc.empty() ? msg : loc + ": " + msg});
}

void LinkContext::note(const std::string& loc, const std::string& msg) {
  result.diags.push_back({true, false, loc.empty() ? msg : loc + ": " + msg});
}

std::optional<Def> LinkContext::resolve(size_t o, const std::string& name) const {
  for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
    const obj::Function& fn = inputs[o].obj.functions[f];
    if (fn.name == name && (fn.flags & obj::kPrivate) && !(fn.flags & obj::kDeclaration))
      return Def{o, f};
  }
  auto it = globals.find(name);
  if (it == globals.end()) return std::nullopt;
  return it->second;
}

bool LinkContext::analyses(const FunctionWork& fw) const {
  if (!fw.cfg()) return false;
  if (!planningSync()) return true;
  return fw.object < sync.fns.size() && fw.function < sync.fns[fw.object].size() &&
         sync.fns[fw.object][fw.function].insert;
}

void LinkContext::newRound() {
  arch = isa::Arch::A2A3;
  stop = false;
  globals.clear();
  image = obj::Image{};
  base.clear();
  imageFn.clear();
  functions.clear();
  result = LinkResult{};
  lines_.clear();
}

// ---------------------------------------------------------------------------------------------
// The pass table and its driver.

namespace {

constexpr Pass kPasses[] = {
    {"check inputs", checkInputs},
    {"resolve symbols", resolveSymbols},
    {"lay out text", layOutText},
    {"select entries", selectEntries},
    {"patch calls", patchCalls},
    {"build CFGs", buildCfgs},
    {"check recursion", checkRecursion},
    {"sync modes", decideSync},
    {"multi-buffer", multiBuffer},
    {"plan tiles", placeTiles},
    {"races", checkRaces},
    {"auto-sync", insertAutoSync},
    {"collect events", collectEvents},
    {"allocate event ids", allocateEventIds},
    {"patch events", patchEvents},
    {"finish image", finishImage},
};

} // namespace

std::span<const Pass> linkPasses() {
  return kPasses;
}

void runPasses(LinkContext& ctx) {
  const std::span<const Pass> passes = linkPasses();
  if (ctx.timing.size() != passes.size()) {
    ctx.timing.assign(passes.size(), PassTime{});
    for (size_t i = 0; i < passes.size(); ++i)
      ctx.timing[i].name = passes[i].name;
  }
  size_t i = 0;
  // A round ends at the last pass, at a stop, or where a pass asks for a rerun. Each rerun
  // follows new code (inserted sync) or fewer event pairs (barriers instead): it terminates.
  while (i < passes.size()) {
    const auto start = std::chrono::steady_clock::now();
    passes[i].run(ctx);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    ctx.timing[i].seconds += took.count();
    ++ctx.timing[i].runs;
    if (ctx.stop) return;
    if (!ctx.rerunFrom) {
      ++i;
      continue;
    }
    const std::string_view from = *ctx.rerunFrom;
    ctx.rerunFrom.reset();
    i = static_cast<size_t>(
        std::find_if(passes.begin(), passes.end(), [&](const Pass& p) { return p.name == from; }) -
        passes.begin());
    if (i == 0) ctx.newRound();
  }
}

LinkResult link(const std::vector<InputObject>& inputs, const LinkOptions& opts) {
  LinkContext ctx(inputs, opts);
  runPasses(ctx);
  LinkResult r = std::move(ctx.result);
  r.passTimes = std::move(ctx.timing);
  return r;
}

std::string formatPassTimes(std::span<const PassTime> times) {
  double total = 0;
  for (const PassTime& t : times)
    total += t.seconds;
  const std::string rule(75, '-');
  std::string s = "===" + rule + "===\n";
  s += "                      ... Pass execution timing report ...\n";
  s += "===" + rule + "===\n";
  char line[160];
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n",
                total, total);
  s += line;
  s += "   ---Wall Time---  --- Name ---\n";
  for (const PassTime& t : times) {
    const double pct = total > 0 ? 100.0 * t.seconds / total : 0.0;
    std::snprintf(line, sizeof line, "   %.4f (%5.1f%%)  %.*s", t.seconds, pct,
                  static_cast<int>(t.name.size()), t.name.data());
    s += line;
    if (t.runs > 1) s += " (" + std::to_string(t.runs) + " runs)";
    s += '\n';
  }
  std::snprintf(line, sizeof line, "   %.4f (100.0%%)  Total\n", total);
  s += line;
  return s;
}

} // namespace pto::link
