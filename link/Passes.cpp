// The passes of the link (link/Passes.h, docs/linking.md "The passes"); the table that runs
// them, and link(), are link/Linker.cpp; the sync passes are link/AutoSync.cpp.
#include "link/Passes.h"
#include "isa/TileLayout.h"
#include "link/Slots.h"

#include "link/Patch.h"
#include "support/Text.h"

#include <algorithm>
#include <functional>
#include <set>

namespace pto::link {

namespace {

std::string archName(isa::Arch a) {
  return std::string(isa::profile(a).name);
}

std::string shapeOf(const obj::TileDesc& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.cols) + "x" +
         std::string(isa::spelling(t.dtype));
}

/// The bytes a view spans from its first element: (rows - 1) row pitches plus its valid columns
/// (a column subset such as the right half of a 1x128 tile ends where its parent does). A
/// dynamic valid width may reach the end of its row. A column-major or boxed view (which keeps its
/// parent's rows as its pitch) spans up to its last valid element when its valid shape is static.
uint64_t viewBytes(const obj::TileDesc& t) {
  const uint64_t bits = isa::bitWidth(t.dtype);
  const uint64_t pitch = (static_cast<uint64_t>(t.cols) * bits + 7) / 8;
  if (t.rows == 0 || pitch == 0) return tileBytes(t);
  if (t.blayout != isa::BLayout::RowMajor || t.slayout != isa::SLayout::NoneBox) {
    if (t.validRows <= 0 || t.validCols <= 0 || static_cast<uint32_t>(t.validRows) > t.rows ||
        static_cast<uint32_t>(t.validCols) > t.cols)
      return tileBytes(t);
    const uint64_t last = isa::elementOffset(
        t.blayout, t.slayout, isa::innerBox(t.dtype, t.slayout, t.fractal), t.rows, t.cols,
        static_cast<uint32_t>(t.validRows) - 1, static_cast<uint32_t>(t.validCols) - 1);
    return std::min(tileBytes(t), ((last + 1) * bits + 7) / 8);
  }
  const uint64_t last = t.validCols > 0 && static_cast<uint32_t>(t.validCols) <= t.cols
                            ? (static_cast<uint64_t>(t.validCols) * bits + 7) / 8
                            : pitch - t.aliasOffset % pitch;
  return (static_cast<uint64_t>(t.rows) - 1) * pitch + last;
}

/// Diagnostics of one function: located at its blocks, in its object.
struct FunctionDiags {
  LinkContext& ctx;
  FunctionWork& fw;
  const SourceLines& lines;
  std::string in; // "in @fn, 'obj.o'"

  FunctionDiags(LinkContext& c, FunctionWork& w) : ctx(c), fw(w), lines(c.lines(w.object)) {
    in = "in @" + fn().name + ", '" + c.inputs[w.object].path + "'";
  }
  const obj::ObjectFile& ob() const { return ctx.inputs[fw.object].obj; }
  const obj::Function& fn() const { return ob().functions[fw.function]; }
  uint64_t base() const { return ctx.base[fw.object]; }
  std::string blockLoc(int32_t b) const {
    const FunctionCfg& cfg = *fw.cfg();
    return b >= 0 && static_cast<size_t>(b) < cfg.blocks.size()
               ? lines.at(cfg.blocks[static_cast<size_t>(b)].offset)
               : "";
  }
  void add(bool note, bool warning, const std::string& loc, const std::string& msg) {
    fw.diags.push_back({note, warning, loc.empty() ? msg : loc + ": " + msg});
  }
  void error(const std::string& loc, const std::string& msg) { add(false, false, loc, msg); }
  void warn(const std::string& loc, const std::string& msg) { add(false, true, loc, msg); }
  void note(const std::string& loc, const std::string& msg) { add(true, false, loc, msg); }
};

} // namespace

bool placedAtRunTime(const obj::Function& fn, uint32_t t) {
  for (size_t guard = 0; guard <= fn.tiles.size() && t < fn.tiles.size(); ++guard) {
    const obj::TileDesc& d = fn.tiles[t];
    if (d.placement == obj::kRuntimePlaced) return true;
    if (d.aliasOf < 0 || static_cast<uint32_t>(d.aliasOf) >= t) return false;
    t = static_cast<uint32_t>(d.aliasOf);
  }
  return false;
}

/// A tile placed at run time (or a view of one) takes no room in the plan: its storage is the
/// author's (a run-time root, kept at 0 with no bytes) or its parent's (a run-time view).
std::vector<PlanTile> planTilesOf(const obj::Function& fn) {
  std::vector<PlanTile> pt;
  for (uint32_t i = 0; i < fn.tiles.size(); ++i) {
    const obj::TileDesc& t = fn.tiles[i];
    if (placedAtRunTime(fn, i)) {
      pt.push_back({t.name, t.loc, 0, t.aliasOf >= 0 ? obj::kUnplaced : 0, t.aliasOf, 0});
      continue;
    }
    pt.push_back({t.name, t.loc, t.aliasOf >= 0 ? viewBytes(t) : tileBytes(t),
                  t.aliasOf >= 0 ? obj::kUnplaced : t.placement, t.aliasOf, t.aliasOffset});
  }
  return pt;
}

/// The bytes each tile may touch, for the race and sync analysis. A tile placed at run time may
/// be anywhere in its buffer (a run-time root: the whole buffer) or anywhere in its static root
/// (a view bound at run time: the root's storage); docs/linking.md.
std::vector<TileSpan> tileSpans(const obj::Function& fn, const std::vector<PlanTile>& pt,
                                const PlanResult& pr, isa::Arch arch) {
  std::vector<TileSpan> spans;
  for (uint32_t t = 0; t < fn.tiles.size(); ++t) {
    const isa::Loc loc = fn.tiles[t].loc;
    if (!placedAtRunTime(fn, t)) {
      spans.push_back({loc, t < pr.offset.size() ? pr.offset[t] : -1, pt[t].bytes});
      continue;
    }
    uint32_t root = t; // views name earlier tiles (the object reader checks it)
    while (fn.tiles[root].aliasOf >= 0 && static_cast<uint32_t>(fn.tiles[root].aliasOf) < root)
      root = static_cast<uint32_t>(fn.tiles[root].aliasOf);
    if (fn.tiles[root].placement == obj::kRuntimePlaced)
      spans.push_back({loc, 0, isa::buffer(arch, loc).capacity});
    else
      spans.push_back({loc, root < pr.offset.size() ? pr.offset[root] : -1, pt[root].bytes});
  }
  return spans;
}

std::string opName(const FunctionCfg& cfg, uint32_t b) {
  const Block& blk = cfg.blocks[b];
  return blk.op ? std::string(isa::info(*blk.op).mnemonic) : "tile op";
}

// ---------------------------------------------------------------------------------------------
// The passes.

void checkInputs(LinkContext& ctx) {
  ctx.result.syncMode = ctx.opts.sync;
  if (ctx.inputs.empty()) {
    ctx.error("", "no input files");
    ctx.stop = true;
    return;
  }
  ctx.arch = ctx.opts.arch.value_or(ctx.inputs[0].obj.arch);
  ctx.image.arch = ctx.arch;
  for (const InputObject& in : ctx.inputs) {
    ctx.image.usesExtensions |= in.obj.usesExtensions;
    if (in.obj.arch == ctx.arch) continue;
    if (ctx.opts.arch)
      ctx.error("", "'" + in.path + "' is for " + archName(in.obj.arch) + ", but --arch " +
                        archName(ctx.arch) + " was given");
    else
      ctx.error("", "'" + in.path + "' is for " + archName(in.obj.arch) + " but '" +
                        ctx.inputs[0].path + "' is for " + archName(ctx.arch) +
                        ": objects for different arches cannot be linked");
  }
}

void resolveSymbols(LinkContext& ctx) {
  const auto& inputs = ctx.inputs;
  for (size_t o = 0; o < inputs.size(); ++o)
    for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
      const obj::Function& fn = inputs[o].obj.functions[f];
      if ((fn.flags & obj::kDeclaration) || (fn.flags & obj::kPrivate)) continue;
      auto [it, fresh] = ctx.globals.try_emplace(fn.name, Def{o, f});
      if (!fresh)
        ctx.error(ctx.lines(o).at(fn.textOffset),
                  "duplicate symbol '" + fn.name + "': defined in '" +
                      inputs[it->second.object].path + "' and in '" + inputs[o].path + "'");
    }
  for (size_t o = 0; o < inputs.size(); ++o) {
    const obj::ObjectFile& ob = inputs[o].obj;
    for (const obj::Function& fn : ob.functions)
      if ((fn.flags & obj::kDeclaration) && !ctx.resolve(o, fn.name))
        ctx.error("", "undefined symbol '" + fn.name + "' (declared in '" + inputs[o].path + "')");
    for (const obj::Reloc& r : ob.relocs)
      if (r.type == obj::RelocType::Call && !ctx.resolve(o, r.symbol)) {
        std::string caller;
        for (const obj::Function& fn : ob.functions)
          if (!(fn.flags & obj::kDeclaration) && r.offset >= fn.textOffset &&
              r.offset < fn.textOffset + fn.textSize)
            caller = " from @" + fn.name;
        ctx.error(ctx.lines(o).at(r.offset), "undefined symbol '" + r.symbol + "' (called" +
                                                 caller + " in '" + inputs[o].path + "')");
      }
  }
}

void layOutText(LinkContext& ctx) {
  obj::Image& img = ctx.image;
  ctx.base.assign(ctx.inputs.size(), 0);
  for (size_t o = 0; o < ctx.inputs.size(); ++o) {
    while (img.text.size() % 4)
      img.text.push_back(0);
    ctx.base[o] = img.text.size();
    const obj::ObjectFile& ob = ctx.inputs[o].obj;
    img.text.insert(img.text.end(), ob.text.begin(), ob.text.end());
    for (uint32_t f = 0; f < ob.functions.size(); ++f) {
      const obj::Function& fn = ob.functions[f];
      if (fn.flags & obj::kDeclaration) continue;
      obj::Function out = fn;
      out.textOffset += ctx.base[o];
      out.flags &= ~obj::kEntry;
      const auto imf = static_cast<uint32_t>(img.functions.size());
      ctx.imageFn[{o, f}] = imf;
      img.functions.push_back(std::move(out));
      ctx.result.functionOrigin.push_back(ctx.inputs[o].path);
      FunctionWork w;
      w.object = o;
      w.function = f;
      w.image = imf;
      ctx.functions.push_back(std::move(w));
    }
    for (const obj::LineEntry& l : ob.lines) {
      obj::LineEntry c = l;
      c.textOffset += ctx.base[o];
      img.lines.push_back(std::move(c));
    }
  }
}

/// "No entry kernel", naming the public functions that could be one (at most eight).
static std::string noEntryMessage(const std::vector<std::string>& candidates) {
  std::string m = "no entry kernel: mark one with the pto.entry attribute or pass --entry <name>";
  if (candidates.empty()) return m + " (the inputs define no public function)";
  m += " (public functions:";
  for (size_t i = 0; i < candidates.size() && i < 8; ++i)
    m += " @" + candidates[i];
  if (candidates.size() > 8) m += " and " + std::to_string(candidates.size() - 8) + " more";
  return m + ")";
}

void selectEntries(LinkContext& ctx) {
  std::vector<uint32_t> entries;
  if (!ctx.opts.entries.empty()) {
    for (const std::string& name : ctx.opts.entries) {
      auto it = ctx.globals.find(name);
      if (it == ctx.globals.end()) {
        ctx.error("", "--entry '" + name + "': no such kernel in the inputs");
        continue;
      }
      uint32_t f = ctx.imageFn[{it->second.object, it->second.function}];
      if (ctx.image.functions[f].flags & obj::kReturnsValues) {
        ctx.error("", "--entry '" + name + "': the function returns values, so it is not a kernel");
        continue;
      }
      if (std::find(entries.begin(), entries.end(), f) == entries.end()) entries.push_back(f);
    }
  } else {
    // PTOAS's rule per module (its test pto_entry_multifunc_no_entry emits no kernel for a
    // module of several functions without pto.entry): the pto.entry functions; a module with a
    // single function definition and no pto.entry exports that function, unless it returns values
    // (a library function, called from another object).
    std::vector<std::string> candidates; // public kernels, named when none is an entry
    for (size_t o = 0; o < ctx.inputs.size(); ++o) {
      std::vector<uint32_t> marked, defined;
      for (uint32_t f = 0; f < ctx.inputs[o].obj.functions.size(); ++f) {
        const obj::Function& fn = ctx.inputs[o].obj.functions[f];
        if (fn.flags & obj::kDeclaration) continue;
        defined.push_back(f);
        if (fn.flags & obj::kEntry) marked.push_back(f);
        if (!(fn.flags & (obj::kPrivate | obj::kReturnsValues))) candidates.push_back(fn.name);
      }
      if (marked.empty() && defined.size() == 1 &&
          !(ctx.inputs[o].obj.functions[defined[0]].flags & (obj::kPrivate | obj::kReturnsValues)))
        marked = defined;
      for (uint32_t f : marked)
        entries.push_back(ctx.imageFn[{o, f}]);
    }
    if (entries.empty()) ctx.error("", noEntryMessage(candidates));
  }
  for (uint32_t f : entries) {
    ctx.image.functions[f].flags |= obj::kEntry;
    ctx.image.entries.push_back({f, ctx.image.functions[f].name});
  }
}

void patchCalls(LinkContext& ctx) {
  for (size_t o = 0; o < ctx.inputs.size(); ++o)
    for (const obj::Reloc& r : ctx.inputs[o].obj.relocs) {
      if (r.type != obj::RelocType::Call) continue;
      auto def = ctx.resolve(o, r.symbol);
      if (!def) continue;
      const uint64_t at = ctx.base[o] + r.offset;
      const uint64_t target =
          ctx.image.functions[ctx.imageFn[{def->object, def->function}]].textOffset;
      PatchResult p = patchWord(ctx.image.text, at, PatchField::Label,
                                (static_cast<int64_t>(target) - static_cast<int64_t>(at)) / 2);
      if (p.status == PatchStatus::NotDecodable || p.status == PatchStatus::NoField)
        ctx.error(ctx.lines(o).at(r.offset),
                  "call relocation to '" + r.symbol + "' on a word without a branch offset");
      else if (!p.ok())
        ctx.error(ctx.lines(o).at(r.offset),
                  "call to '" + r.symbol + "' is out of range of the call word");
    }
}

void buildCfgs(LinkContext& ctx) {
  for (FunctionWork& fw : ctx.functions) {
    if (fw.object < ctx.knownCfgs.size() && fw.function < ctx.knownCfgs[fw.object].size())
      fw.built = ctx.knownCfgs[fw.object][fw.function];
    if (!fw.built) fw.built = buildFunctionCfg(ctx.inputs[fw.object].obj, fw.function);
    if (const auto* err = std::get_if<std::string>(&fw.built->cfg)) {
      FunctionDiags d(ctx, fw);
      d.error(d.lines.at(fw.built->badWord), "'" + ctx.inputs[fw.object].path + "': " + *err);
    }
  }
}

namespace {

/// A call between image functions: the caller, the callee and where the call is.
struct CallEdge {
  uint32_t callee = 0;
  size_t object = 0;
  uint64_t offset = 0; // the call word's .text offset in its object
};

/// The calls of every image function, from the Call relocations that resolve.
std::vector<std::vector<CallEdge>> callGraph(LinkContext& ctx) {
  std::vector<std::vector<CallEdge>> calls(ctx.image.functions.size());
  for (size_t o = 0; o < ctx.inputs.size(); ++o) {
    const obj::ObjectFile& ob = ctx.inputs[o].obj;
    for (const obj::Reloc& r : ob.relocs) {
      if (r.type != obj::RelocType::Call) continue;
      auto def = ctx.resolve(o, r.symbol);
      if (!def) continue; // undefined: reported by resolveSymbols
      for (uint32_t f = 0; f < ob.functions.size(); ++f) {
        const obj::Function& fn = ob.functions[f];
        if ((fn.flags & obj::kDeclaration) || r.offset < fn.textOffset ||
            r.offset >= fn.textOffset + fn.textSize)
          continue;
        calls[ctx.imageFn[{o, f}]].push_back(
            {ctx.imageFn[{def->object, def->function}], o, r.offset});
      }
    }
  }
  return calls;
}

} // namespace

void checkRecursion(LinkContext& ctx) {
  if (ctx.planningSync()) return; // the round that links the result reports it
  const std::vector<std::vector<CallEdge>> calls = callGraph(ctx);
  // Depth-first over the calls; a call to a function on the path closes a cycle. One report per
  // link, as pto-as gives one per module: a function's tiles have fixed addresses.
  const size_t n = calls.size();
  std::vector<uint8_t> state(n, 0);              // 0 unvisited, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, size_t>> path; // (function, next call to follow)
  std::vector<const CallEdge*> via;              // the call that entered path[i + 1]
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    path.assign(1, {root, 0});
    via.clear();
    state[root] = 1;
    while (!path.empty()) {
      auto& [f, next] = path.back();
      if (next == calls[f].size()) {
        state[f] = 2;
        path.pop_back();
        if (!via.empty()) via.pop_back();
        continue;
      }
      const CallEdge& e = calls[f][next++];
      if (state[e.callee] == 0) {
        state[e.callee] = 1;
        via.push_back(&e);
        path.push_back({e.callee, 0});
        continue;
      }
      if (state[e.callee] != 1) continue;
      // The cycle: from the callee's place on the path to here, and back to the callee.
      size_t first = 0;
      while (path[first].first != e.callee)
        ++first;
      std::string cycle;
      for (size_t k = first; k < path.size(); ++k)
        cycle += "@" + ctx.image.functions[path[k].first].name + " calls ";
      cycle += "@" + ctx.image.functions[e.callee].name;
      const std::string& callee = ctx.image.functions[e.callee].name;
      ctx.error(ctx.lines(e.object).at(e.offset),
                "recursive call to '@" + callee + "' is not supported: " + cycle +
                    " (a function's tiles have fixed addresses, so a recursive call would "
                    "overwrite the tiles of the calls still running) (in @" +
                    ctx.image.functions[f].name + ", '" + ctx.inputs[e.object].path + "')");
      for (size_t k = first; k + 1 < path.size(); ++k)
        ctx.note(ctx.lines(via[k]->object).at(via[k]->offset),
                 "@" + ctx.image.functions[path[k].first].name + " calls @" +
                     ctx.image.functions[path[k + 1].first].name + " here ('" +
                     ctx.inputs[via[k]->object].path + "')");
      return;
    }
  }
}

/// The arch a function is planned for: the link's, except in the round that plans auto-sync,
/// where each object's code is analysed for its own arch (a link of objects for different
/// arches fails, but its messages say what the sync of each would be).
isa::Arch archFor(const LinkContext& ctx, const FunctionWork& fw) {
  return ctx.planningSync() ? ctx.opts.arch.value_or(ctx.inputs[fw.object].obj.arch) : ctx.arch;
}

void placeTiles(LinkContext& ctx) {
  for (FunctionWork& fw : ctx.functions) {
    if (!ctx.analyses(fw)) continue;
    const FunctionCfg& cfg = *fw.cfg();
    const obj::Function& fn = ctx.inputs[fw.object].obj.functions[fw.function];
    fw.tiles = planTilesOf(fn);
    auto groups = ctx.multiBuffer.groups.find({fw.object, fw.function});
    if (groups != ctx.multiBuffer.groups.end())
      for (size_t t = 0; t < fw.tiles.size() && t < groups->second.size(); ++t)
        fw.tiles[t].group = groups->second[t];
    fw.plan = plan(cfg, fw.tiles, archFor(ctx, fw));
    if (ctx.planningSync()) continue; // the plan is the race pass's input; nothing to report
    FunctionDiags d(ctx, fw);
    const PlanResult& pr = fw.plan;
    // The first op naming a tile, or else a view of it, or else its parent (a view that only
    // its own views use has no op of its own).
    auto tileBlock = [&](uint32_t t) -> int32_t {
      const size_t n = fn.tiles.size();
      auto parentOf = [&](int32_t x) {
        return x >= 0 && static_cast<size_t>(x) < n ? fn.tiles[static_cast<size_t>(x)].aliasOf : -1;
      };
      int32_t up = static_cast<int32_t>(t);
      for (size_t level = 0; up >= 0 && level < n; ++level, up = parentOf(up)) {
        int32_t best = -1;
        for (uint32_t u = 0; u < n; ++u) {
          int32_t a = static_cast<int32_t>(u);
          for (size_t guard = 0; a >= 0 && a != up && guard < n; ++guard)
            a = parentOf(a);
          if (a == up && pr.firstBlock[u] >= 0 && (best < 0 || pr.firstBlock[u] < best))
            best = pr.firstBlock[u];
        }
        if (best >= 0) return best;
      }
      return -1;
    };
    for (const PlanError& e : pr.errors) {
      int32_t b = e.tiles.empty() ? -1 : tileBlock(e.tiles.front());
      d.error(d.blockLoc(b), e.message + " (" + d.in + ")");
      for (uint32_t t : e.peak) {
        const obj::TileDesc& td = fn.tiles[t];
        std::string range =
            pr.live[t].empty()
                ? "never used"
                : "live " + support::hex0x(d.base() + cfg.blocks[pr.live[t].start].offset) + ".." +
                      support::hex0x(d.base() + cfg.blocks[pr.live[t].end].end);
        d.note(d.blockLoc(pr.firstBlock[t]),
               "%" + td.name + " (" + shapeOf(td) + ", " + std::to_string(fw.tiles[t].bytes) +
                   " bytes) at " + support::hex0x(static_cast<uint64_t>(pr.offset[t])) + ", " +
                   range);
      }
    }
    for (const Clobber& c : pr.clobbers)
      d.warn(d.blockLoc(static_cast<int32_t>(c.writeBlock)),
             "this write to %" + fn.tiles[c.writer].name + " (placed by hand at " +
                 support::hex0x(static_cast<uint64_t>(pr.offset[c.writer])) +
                 ") overwrites bytes of %" + fn.tiles[c.victim].name + " (at " +
                 support::hex0x(static_cast<uint64_t>(pr.offset[c.victim])) +
                 "), whose earlier value is read again at " +
                 d.blockLoc(static_cast<int32_t>(c.readBlock)) + " (" + d.in + ")");
    obj::Function& out = ctx.image.functions[fw.image];
    for (uint32_t t = 0; t < fn.tiles.size(); ++t) {
      out.tiles[t].placement = placedAtRunTime(fn, t) ? obj::kRuntimePlaced : pr.offset[t];
      MapTile mt;
      mt.function = fw.image;
      mt.tile = t;
      mt.name = fn.tiles[t].name;
      mt.loc = fn.tiles[t].loc;
      mt.offset = pr.offset[t];
      mt.bytes = fw.tiles[t].bytes;
      mt.manual = pr.manual[t];
      mt.viewOf = fn.tiles[t].aliasOf;
      mt.used = !pr.live[t].empty();
      if (mt.used) {
        mt.liveFrom = d.base() + cfg.blocks[pr.live[t].start].offset;
        mt.liveTo = d.base() + cfg.blocks[pr.live[t].end].end;
      }
      mt.source = d.blockLoc(pr.firstBlock[t]);
      ctx.result.tiles.push_back(std::move(mt));
    }
    for (unsigned l = 0; l < 7; ++l) {
      bool any = false;
      for (const obj::TileDesc& t : fn.tiles)
        any |= static_cast<unsigned>(t.loc) == l;
      if (!any) continue;
      const isa::BufferSpec& spec = isa::buffer(ctx.arch, static_cast<isa::Loc>(l));
      ctx.image.layout.push_back(
          {fw.image, static_cast<isa::Loc>(l), spec.capacity, spec.alignment, pr.used[l]});
    }
  }
}

/// The races of one function: errors (warnings with --allow-races), the first ten shown.
void reportRaces(LinkContext& ctx, FunctionWork& fw) {
  const FunctionCfg& cfg = *fw.cfg();
  FunctionDiags d(ctx, fw);
  const obj::Function& fn = d.fn();
  size_t shown = 0, races = 0;
  for (const Dependency& dep : fw.deps) {
    if (dep.barrier) continue;
    if (++races > 10) continue;
    ++shown;
    std::string toVerb = dep.kind == DepKind::RAW ? "reads" : "writes";
    std::string fromVerb = dep.kind == DepKind::WAR ? "reads" : "writes";
    std::string what;
    if (dep.gm) {
      what = dep.param >= 0 && static_cast<size_t>(dep.param) < fn.params.size()
                 ? "GM bytes of %" + fn.params[static_cast<size_t>(dep.param)].name
                 : std::string("GM bytes");
      what += ", which ";
    } else {
      const std::string& fromTile = fn.tiles[dep.fromTile].name;
      const std::string& toTile = fn.tiles[dep.toTile].name;
      what = "%" + toTile +
             (fromTile == toTile ? ", which " : " and overlaps %" + fromTile + ", which ");
    }
    std::string msg = "race: " + opName(cfg, dep.to) + " on " +
                      std::string(isa::spelling(dep.toPipe)) + " " + toVerb + " " + what +
                      opName(cfg, dep.from) + " on " + std::string(isa::spelling(dep.fromPipe)) +
                      " at " + d.blockLoc(static_cast<int32_t>(dep.from)) + " " + fromVerb +
                      ", and no set_flag/wait_flag chain orders them (" +
                      (dep.kind == DepKind::RAW   ? "RAW"
                       : dep.kind == DepKind::WAR ? "WAR"
                                                  : "WAW") +
                      ") (" + d.in + ")";
    if (ctx.opts.allowRaces)
      d.warn(d.blockLoc(static_cast<int32_t>(dep.to)), msg);
    else
      d.error(d.blockLoc(static_cast<int32_t>(dep.to)), msg);
    d.note(d.blockLoc(static_cast<int32_t>(dep.from)), "the " + opName(cfg, dep.from) + " is here");
  }
  if (races > shown)
    d.note("", std::to_string(races - shown) + " more race(s) in @" + fn.name +
                   " not shown (link with --auto-sync to order them)");
}

void checkRaces(LinkContext& ctx) {
  // The functions some call names: their returns hand the tiles and GM back to a caller.
  std::set<std::string> called;
  for (const InputObject& in : ctx.inputs)
    for (const obj::Reloc& r : in.obj.relocs)
      if (r.type == obj::RelocType::Call) called.insert(r.symbol.str());
  for (FunctionWork& fw : ctx.functions) {
    if (!ctx.analyses(fw)) continue;
    const FunctionCfg& cfg = *fw.cfg();
    const obj::Function& fn = ctx.inputs[fw.object].obj.functions[fw.function];
    const isa::Arch arch = archFor(ctx, fw);
    const std::vector<TileSpan> spans = tileSpans(fn, fw.tiles, fw.plan, arch);
    // The tile ops' GM accesses (docs/sync.md 2b), ordered as tile accesses are.
    const std::vector<GmUse> gm = gmUses(cfg, ctx.inputs[fw.object].obj, fw.function);
    // With auto-sync, a call waits for the caller's pending accesses and a called function's
    // return for its own (the other side may touch any byte); explicit sync is the author's.
    const DrainPoints drains{ctx.planningSync(), ctx.planningSync() && called.count(fn.name) != 0};
    // Run-time slots (docs/sync.md 2a): the loops that rotate a tile over slots read unrolled.
    if (auto view = resolveSlots(cfg, ctx.inputs[fw.object].obj, fw.function, spans, arch)) {
      auto pipes = blockPipes(view->cfg, view->tiles, arch);
      const std::vector<GmUse> viewGm = gmUsesOfView(*view, gm);
      fw.deps = originalDependencies(*view, unorderedDependencies(view->cfg, pipes, view->spans,
                                                                  arch, nullptr, viewGm, drains));
    } else {
      auto pipes = blockPipes(cfg, fn.tiles, arch);
      fw.deps = unorderedDependencies(cfg, pipes, spans, arch, nullptr, gm, drains);
    }
    if (ctx.planningSync()) continue; // the auto-sync pass orders them
    reportRaces(ctx, fw);
  }
}

void collectEvents(LinkContext& ctx) {
  for (FunctionWork& fw : ctx.functions) {
    if (!fw.cfg()) continue;
    const FunctionCfg& cfg = *fw.cfg();
    FunctionDiags d(ctx, fw);
    const obj::ObjectFile& ob = d.ob();
    const obj::Function& fn = d.fn();
    for (uint32_t e = 0; e < ob.events.size(); ++e)
      if (ob.events[e].function == fw.function) {
        fw.eventIndex.push_back(e);
        fw.eventPipes.push_back({ob.events[e].srcPipe, ob.events[e].dstPipe});
        fw.eventNames.push_back(ob.events[e].name);
      }
    fw.blockEvent.assign(cfg.blocks.size(), -1);
    for (const obj::Reloc& r : ob.relocs) {
      if (r.type != obj::RelocType::Event || r.offset < fn.textOffset ||
          r.offset >= fn.textOffset + fn.textSize)
        continue;
      int32_t b = cfg.blockAt(r.offset);
      const int32_t local = fw.localEvent(r.index);
      if (b < 0 || local < 0 || cfg.blocks[static_cast<size_t>(b)].eventWord != r.offset) {
        d.error(d.lines.at(r.offset), "event relocation at " + support::hex0x(r.offset) +
                                          " is not on the event word of a set/wait (" + d.in + ")");
        continue;
      }
      fw.blockEvent[static_cast<size_t>(b)] = local;
      fw.eventRelocs.push_back(&r);
    }
  }
}

void allocateEventIds(LinkContext& ctx) {
  ctx.sync.exhausted.clear();
  for (FunctionWork& fw : ctx.functions) {
    if (!fw.cfg()) continue;
    const FunctionCfg& cfg = *fw.cfg();
    FunctionDiags d(ctx, fw);
    fw.events = allocateEvents(cfg, fw.blockEvent, fw.eventPipes, fw.eventNames, ctx.arch);
    const EventPlan& ep = fw.events;
    const auto& names = fw.eventNames;
    for (const EventError& e : ep.errors) {
      // An inserted event that ran out of ids: the next --auto-sync round orders it with a
      // PIPE_ALL barrier instead.
      if (ctx.sync.stage == AutoSyncState::Stage::Inserted && e.kind == EventErrorKind::Exhausted &&
          !e.events.empty() && e.events.back() < fw.eventIndex.size() &&
          fw.eventIndex[e.events.back()] >= ctx.sync.firstAutoEvent[fw.object]) {
        const std::string& nm = names[e.events.back()];
        if (nm.rfind(kAutoPrefix, 0) == 0) {
          ctx.sync.exhausted[{fw.object, fw.function}].insert(
              static_cast<uint32_t>(std::stoul(nm.substr(kAutoPrefix.size()))));
          continue;
        }
      }
      if (e.kind == EventErrorKind::Deadlock) {
        std::string msg = e.message;
        auto subst = [&](const std::string& key, const std::string& val) {
          for (size_t at = msg.find(key); at != std::string::npos;
               at = msg.find(key, at + val.size()))
            msg.replace(at, key.size(), val);
        };
        subst("{wait}", d.blockLoc(e.block));
        subst("{other}", e.related.empty() ? std::string("?") : d.blockLoc(e.related.front()));
        d.error(d.blockLoc(e.block), "deadlock: " + msg + " (" + d.in + ")");
        d.note(d.blockLoc(e.block), "the wait_flag is here");
        if (!e.related.empty()) d.note(d.blockLoc(e.related.front()), "the other end is here");
        continue;
      }
      d.error(d.blockLoc(e.block), e.message + " (" + d.in + ")");
      for (int32_t b : e.related)
        d.note(d.blockLoc(b), "the pending set is here");
      if (e.kind == EventErrorKind::Exhausted)
        for (uint32_t v : e.events)
          if (v < fw.eventIndex.size() && !ep.pending[v].empty())
            d.note(d.blockLoc(static_cast<int32_t>(ep.pending[v].start)),
                   "event @" + names[v] + " pending " +
                       support::hex0x(d.base() + cfg.blocks[ep.pending[v].start].offset) + ".." +
                       support::hex0x(d.base() + cfg.blocks[ep.pending[v].end].end));
    }
    for (size_t v = 0; v < fw.eventIndex.size(); ++v) {
      const auto& pipes = fw.eventPipes[v];
      ctx.image.events.push_back({fw.image, names[v], pipes.first, pipes.second,
                                  static_cast<uint8_t>(std::max(ep.id[v], 0))});
      MapEvent me{fw.image, names[v], pipes.first, pipes.second, ep.id[v], 0, 0};
      if (!ep.pending[v].empty()) {
        me.pendingFrom = d.base() + cfg.blocks[ep.pending[v].start].offset;
        me.pendingTo = d.base() + cfg.blocks[ep.pending[v].end].end;
      }
      ctx.result.events.push_back(me);
    }
  }
  // The feedback to auto-sync: the inserted pairs that ran out of ids are ordered by a PIPE_ALL
  // barrier instead, and the link runs again from the auto-sync pass.
  if (!ctx.sync.exhausted.empty()) {
    if (retryWithFewerCopies(ctx)) return;
    for (auto& [key, ks] : ctx.sync.exhausted)
      ctx.sync.asBarrier[key].insert(ks.begin(), ks.end());
    ctx.sync.stage = AutoSyncState::Stage::Plan;
    ctx.rerunFrom = "auto-sync";
  }
}

void patchEvents(LinkContext& ctx) {
  for (FunctionWork& fw : ctx.functions) {
    if (!fw.cfg()) continue;
    for (const obj::Reloc* r : fw.eventRelocs) {
      int32_t id = fw.events.id[static_cast<size_t>(fw.localEvent(r->index))];
      if (id < 0) continue;
      PatchResult p =
          patchWord(ctx.image.text, ctx.base[fw.object] + r->offset, PatchField::EventId, id);
      if (!p.ok()) {
        FunctionDiags d(ctx, fw);
        d.error(d.lines.at(r->offset), "cannot patch the event word: " + p.detail);
      }
    }
  }
}

void finishImage(LinkContext& ctx) {
  for (FunctionWork& fw : ctx.functions) {
    ctx.result.diags.insert(ctx.result.diags.end(), std::make_move_iterator(fw.diags.begin()),
                            std::make_move_iterator(fw.diags.end()));
    fw.diags.clear();
  }
  bool failed = std::any_of(ctx.result.diags.begin(), ctx.result.diags.end(),
                            [](const Diagnostic& d) { return !d.note && !d.warning; });
  if (!failed && !ctx.stop) ctx.result.image = std::move(ctx.image);
  recordSync(ctx);
}

} // namespace pto::link
