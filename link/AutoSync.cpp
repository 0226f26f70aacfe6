// The link driver (docs/linking.md, "The passes"): link() decides the sync mode of every
// function, plans the sync to insert (once per function; a retry after event-id exhaustion only
// re-places it), and runs the passes of Passes.h (link/Linker.cpp) over the resulting objects.
#include "link/Linker.h"

#include "link/Passes.h"
#include "link/Patch.h"
#include "link/Rewrite.h"
#include "support/Text.h"

#include <algorithm>
#include <map>
#include <set>

namespace pto::link {

// ---------------------------------------------------------------------------------------------
// The driver: sync mode per function, then --auto-sync rounds.

namespace {

/// One input function as the --auto-sync driver sees it: its graph (built once, shared with the
/// link when its object gets no insertion) and, for functions that get sync inserted, the
/// dependencies to order (computed once, reused by every round).
struct SyncFunction {
  std::shared_ptr<const BuiltCfg> built;
  bool explicitSync = false, insert = false;
  std::vector<Dependency> deps;
};

struct SyncAnalysis {
  std::vector<std::vector<SyncFunction>> fns; // per object, per function
  bool any = false;
  std::vector<std::vector<std::shared_ptr<const BuiltCfg>>> cfgs() const {
    std::vector<std::vector<std::shared_ptr<const BuiltCfg>>> out;
    for (const auto& o : fns) {
      out.emplace_back();
      for (const SyncFunction& s : o)
        out.back().push_back(s.built);
    }
    return out;
  }
};

/// Per function: whether the source has explicit sync and whether the linker inserts sync
/// (docs/sync.md section 5). Declarations and functions whose words do not decode get neither
/// (the link reports them).
SyncAnalysis decideSync(const std::vector<InputObject>& inputs, SyncMode mode) {
  SyncAnalysis a;
  for (const InputObject& in : inputs) {
    a.fns.emplace_back(in.obj.functions.size());
    for (uint32_t f = 0; f < in.obj.functions.size(); ++f) {
      if (in.obj.functions[f].flags & obj::kDeclaration) continue;
      SyncFunction& s = a.fns.back()[f];
      s.built = buildFunctionCfg(in.obj, f);
      const FunctionCfg* cfg = s.built->get();
      if (!cfg) continue;
      for (const Block& b : cfg->blocks)
        s.explicitSync |= isFlag(b) || isBarrier(b);
      s.insert = mode == SyncMode::Insert || (mode == SyncMode::Auto && !s.explicitSync);
      a.any |= s.insert;
    }
  }
  return a;
}

/// The dependencies each inserting function must order (plan + analysis of the original code).
void findDependencies(SyncAnalysis& a, const std::vector<InputObject>& inputs,
                      const LinkOptions& opts) {
  for (size_t o = 0; o < inputs.size(); ++o) {
    const obj::ObjectFile& ob = inputs[o].obj;
    const isa::Arch arch = opts.arch.value_or(ob.arch);
    for (uint32_t f = 0; f < ob.functions.size(); ++f) {
      SyncFunction& s = a.fns[o][f];
      if (!s.insert) continue;
      const FunctionCfg& cfg = *s.built->get();
      const obj::Function& fn = ob.functions[f];
      std::vector<PlanTile> pt = planTilesOf(fn);
      PlanResult pr = plan(cfg, pt, arch);
      auto pipes = blockPipes(cfg, fn.tiles, arch);
      s.deps = unorderedDependencies(cfg, pipes, tileSpans(fn, pt, pr, arch), arch);
    }
  }
}

/// Fills r.functionSync in image function order (objects in input order, declarations skipped).
void recordSync(LinkResult& r, const std::vector<InputObject>& inputs, const SyncAnalysis& a,
                SyncMode mode, const std::map<std::pair<size_t, uint32_t>, FunctionSync>& counts) {
  r.syncMode = mode;
  for (size_t o = 0; o < inputs.size(); ++o)
    for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
      if (inputs[o].obj.functions[f].flags & obj::kDeclaration) continue;
      auto it = counts.find({o, f});
      FunctionSync s = it == counts.end() ? FunctionSync{} : it->second;
      s.inserted = a.fns[o][f].insert;
      s.explicitSync = a.fns[o][f].explicitSync;
      r.functionSync.push_back(s);
    }
}

/// One --auto-sync round: the objects with the sync inserted, the map's log and the warnings.
struct InsertedSync {
  std::vector<InputObject> objects;
  std::vector<std::vector<std::shared_ptr<const BuiltCfg>>>
      cfgs; // reusable graphs (objects without insertions)
  std::vector<std::string> log;
  std::vector<Diagnostic> warnings;
  std::map<std::pair<size_t, uint32_t>, FunctionSync> counts;
  std::optional<Diagnostic> error;
};

InsertedSync insertSync(const std::vector<InputObject>& inputs, const SyncAnalysis& a,
                        const std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>>& asBarrier,
                        bool log) {
  InsertedSync out;
  const std::set<uint32_t> none;
  for (size_t o = 0; o < inputs.size(); ++o) {
    const obj::ObjectFile& ob = inputs[o].obj;
    SourceLines lines(ob);
    std::vector<obj::Event> events; // the inserted pairs' events, after the object's own
    PatternInsertions all;          // every function's, in function order
    for (uint32_t f = 0; f < ob.functions.size(); ++f) {
      const SyncFunction& s = a.fns[o][f];
      if (!s.insert) continue;
      const obj::Function& fn = ob.functions[f];
      const FunctionCfg& cfg = *s.built->get();
      const std::vector<Dependency>& deps = s.deps;
      auto bar = asBarrier.find({o, f});
      AutoSyncPlan sp =
          planAutoSync(cfg, deps, f, static_cast<uint32_t>(ob.events.size() + events.size()),
                       std::string(kAutoPrefix), bar == asBarrier.end() ? none : bar->second, all);
      events.insert(events.end(), sp.events.begin(), sp.events.end());
      // "op (file:line:col)", appended in place: the log has a line per inserted pair, and
      // chains of operator+ temporaries made it a tenth of the link.
      auto addAt = [&](std::string& line, uint32_t b) {
        const Block& blk = cfg.blocks[b];
        if (blk.op)
          line += isa::info(*blk.op).mnemonic;
        else
          line += "tile op";
        line += " (";
        lines.appendTo(line, blk.offset);
        line += ')';
      };
      auto at = [&](uint32_t b) {
        std::string line;
        addAt(line, b);
        return line;
      };
      FunctionSync& count = out.counts[{o, f}];
      for (const SyncItem& it : sp.items) {
        const Dependency& d = deps[it.dep];
        if (it.kind == SyncItem::Barrier || it.kind == SyncItem::AllBarrier)
          ++count.barriers;
        else
          ++count.pairs;
        if (!log && it.kind != SyncItem::AllBarrier) continue; // only its warning has words
        std::string pair =
            std::string(isa::spelling(it.src)) + " -> " + std::string(isa::spelling(it.dst));
        std::string head = "@" + fn.name + " ";
        switch (it.kind) {
        case SyncItem::Pair:
        case SyncItem::LoopPair: {
          const bool loop = it.kind == SyncItem::LoopPair;
          std::string line;
          line.reserve(160);
          line += head;
          line += '@';
          line += it.eventName;
          line += ' ';
          line += pair;
          line += loop ? ": loop-carried, set after " : ": set after ";
          addAt(line, d.from);
          line += loop ? ", wait before " : ", wait for ";
          addAt(line, d.to);
          if (loop) line += ", set before the loop, wait after it";
          if (log) out.log.push_back(std::move(line));
          break;
        }
        case SyncItem::Barrier:
          if (log)
            out.log.push_back(head + "pipe_barrier(" + std::string(isa::spelling(it.src)) +
                              ") before " + at(d.to) + ", after " + at(d.from));
          break;
        case SyncItem::AllBarrier:
          if (log)
            out.log.push_back(head + "pipe_barrier(PIPE_ALL) after " + at(d.from) + ", for " +
                              at(d.to) + " (event ids exhausted)");
          out.warnings.push_back(
              {false, true,
               lines.at(cfg.blocks[d.from].offset) + ": event ids exhausted for " + pair +
                   ": the inserted sync orders " + opName(cfg, d.from) + " before " + at(d.to) +
                   " with a pipe_barrier(PIPE_ALL) instead (in @" + fn.name + ", '" +
                   inputs[o].path + "')"});
          break;
        }
      }
    }
    const bool inserted = !all.insertions.empty();
    // The graphs built for the sync decision spare decoding the words again: their branches are
    // the ones to move, and the graphs of the result follow from them.
    std::vector<const FunctionCfg*> known;
    for (const SyncFunction& s : a.fns[o])
      known.push_back(s.built ? s.built->get() : nullptr);
    auto rewritten = insertWords(ob, all, known);
    if (auto* err = std::get_if<std::string>(&rewritten)) {
      out.error = Diagnostic{false, false, "'" + inputs[o].path + "': --auto-sync: " + *err};
      return out;
    }
    Relaid& relaid = std::get<Relaid>(rewritten);
    InputObject c{inputs[o].path, std::move(relaid.obj)};
    c.obj.events.insert(c.obj.events.end(), events.begin(), events.end());
    // Inserted set/wait/barrier words live in the extension space: the image must declare it.
    c.obj.usesExtensions |= inserted;
    // Without insertions the words are the same: the graphs built for the sync decision stand.
    out.cfgs.emplace_back();
    for (size_t f = 0; f < a.fns[o].size(); ++f) {
      std::shared_ptr<const BuiltCfg> built = a.fns[o][f].built;
      if (inserted && f < relaid.cfgs.size() && relaid.cfgs[f]) {
        auto b = std::make_shared<BuiltCfg>();
        b->badWord = c.obj.functions[f].textOffset;
        b->cfg = std::move(*relaid.cfgs[f]);
        built = std::move(b);
      } else if (inserted) {
        built = nullptr; // decoded by the link
      }
      out.cfgs.back().push_back(std::move(built));
    }
    out.objects.push_back(std::move(c));
  }
  return out;
}

} // namespace

LinkResult link(const std::vector<InputObject>& inputs, const LinkOptions& opts) {
  SyncAnalysis analysis = decideSync(inputs, opts.sync);
  if (!analysis.any || inputs.empty()) {
    LinkContext ctx(inputs, opts);
    ctx.knownCfgs = analysis.cfgs();
    runPasses(ctx);
    recordSync(ctx.result, inputs, analysis, opts.sync, {});
    return std::move(ctx.result);
  }
  findDependencies(analysis, inputs, opts);
  AutoSyncRound round;
  for (const InputObject& in : inputs)
    round.firstAutoEvent.push_back(in.obj.events.size());
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>> asBarrier;
  for (;;) {
    InsertedSync ins = insertSync(inputs, analysis, asBarrier, opts.syncLog);
    if (ins.error) {
      LinkResult r;
      r.diags.push_back(*ins.error);
      return r;
    }
    round.exhausted.clear();
    LinkContext ctx(ins.objects, opts);
    ctx.knownCfgs = std::move(ins.cfgs);
    ctx.autoSync = &round;
    runPasses(ctx);
    if (round.exhausted.empty()) {
      LinkResult r = std::move(ctx.result);
      r.diags.insert(r.diags.begin(), ins.warnings.begin(), ins.warnings.end());
      r.syncLog = std::move(ins.log);
      recordSync(r, inputs, analysis, opts.sync, ins.counts);
      return r;
    }
    for (auto& [key, ks] : round.exhausted)
      asBarrier[key].insert(ks.begin(), ks.end());
  }
}

} // namespace pto::link
