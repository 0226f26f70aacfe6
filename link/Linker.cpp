#include "link/Linker.h"

#include "isa/Encoding.h"
#include "link/Cfg.h"
#include "link/Events.h"
#include "link/Planner.h"
#include "link/Rewrite.h"
#include "link/Sync.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace pto::link {

namespace enc = isa::enc;

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string archName(isa::Arch a) { return std::string(isa::profile(a).name); }

/// Source locations of one object's words (.pto.lines).
class Lines {
public:
  explicit Lines(const obj::ObjectFile& o) : lines_(o.lines) {
    std::stable_sort(lines_.begin(), lines_.end(), [](auto& a, auto& b) { return a.textOffset < b.textOffset; });
  }
  std::string at(uint64_t off) const {
    auto it = std::upper_bound(lines_.begin(), lines_.end(), off, [](uint64_t o, const obj::LineEntry& l) { return o < l.textOffset; });
    if (it == lines_.begin()) return "";
    --it;
    return it->file + ":" + std::to_string(it->line) + ":" + std::to_string(it->col);
  }

private:
  std::vector<obj::LineEntry> lines_;
};

std::string shapeOf(const obj::TileDesc& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.cols) + "x" + std::string(isa::spelling(t.dtype));
}

/// The bytes a view spans from its first element: (rows - 1) row pitches plus its valid columns
/// (a column subset such as the right half of a 1x128 tile ends where its parent does). A
/// dynamic valid width may reach the end of its row.
uint64_t viewBytes(const obj::TileDesc& t) {
  const uint64_t bits = isa::bitWidth(t.dtype);
  const uint64_t pitch = (static_cast<uint64_t>(t.cols) * bits + 7) / 8;
  if (t.rows == 0 || pitch == 0 || t.blayout != isa::BLayout::RowMajor || t.slayout != isa::SLayout::NoneBox)
    return tileBytes(t);
  const uint64_t last = t.validCols > 0 && static_cast<uint32_t>(t.validCols) <= t.cols
                            ? (static_cast<uint64_t>(t.validCols) * bits + 7) / 8
                            : pitch - t.aliasOffset % pitch;
  return (static_cast<uint64_t>(t.rows) - 1) * pitch + last;
}

std::vector<PlanTile> planTiles(const obj::Function& fn) {
  std::vector<PlanTile> pt;
  for (const obj::TileDesc& t : fn.tiles)
    pt.push_back({t.name, t.loc, t.aliasOf >= 0 ? viewBytes(t) : tileBytes(t), t.aliasOf >= 0 ? obj::kUnplaced : t.placement,
                  t.aliasOf, t.aliasOffset});
  return pt;
}

std::vector<TileSpan> tileSpans(const obj::Function& fn, const std::vector<PlanTile>& pt, const PlanResult& pr) {
  std::vector<TileSpan> spans;
  for (size_t t = 0; t < fn.tiles.size(); ++t)
    spans.push_back({fn.tiles[t].loc, t < pr.offset.size() ? pr.offset[t] : -1, pt[t].bytes});
  return spans;
}

std::string opName(const FunctionCfg& cfg, uint32_t b) {
  const Block& blk = cfg.blocks[b];
  return blk.op ? std::string(isa::info(*blk.op).mnemonic) : "tile op";
}

constexpr std::string_view kAutoPrefix = "auto.";

/// --auto-sync bookkeeping shared between rounds: which inserted events ran out of ids.
struct AutoState {
  std::vector<size_t> firstAutoEvent; // per object: its events from this index on are auto-sync's
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>> exhausted;
};

LinkResult linkObjects(const std::vector<InputObject>& inputs, const LinkOptions& opts, AutoState* autoState);

} // namespace

std::string FunctionSync::describe(SyncMode mode) const {
  std::string why = mode == SyncMode::Insert   ? "forced by --auto-sync"
                    : mode == SyncMode::Check  ? "forced by --no-auto-sync"
                    : explicitSync             ? "explicit sync in the source"
                                               : "no explicit sync in the source";
  if (!inserted) return "checked (" + why + ")";
  return "auto, sync inserted (" + why + "): " + std::to_string(pairs) + " set/wait pair(s), " + std::to_string(barriers) +
         " barrier(s)";
}

namespace {

/// Per object, per function: whether the linker inserts sync (docs/sync.md section 5), and
/// whether the source has explicit sync. Declarations and functions whose words do not decode
/// get false (the link reports them).
struct SyncDecision {
  std::vector<std::vector<char>> insert, explicitSync;
  bool any = false;
};

SyncDecision decideSync(const std::vector<InputObject>& inputs, SyncMode mode) {
  SyncDecision d;
  for (const InputObject& in : inputs) {
    d.insert.emplace_back(in.obj.functions.size(), 0);
    d.explicitSync.emplace_back(in.obj.functions.size(), 0);
    for (uint32_t f = 0; f < in.obj.functions.size(); ++f) {
      if (in.obj.functions[f].flags & obj::kDeclaration) continue;
      auto built = buildCfg(in.obj, f);
      if (!std::holds_alternative<FunctionCfg>(built)) continue;
      bool has = false;
      for (const Block& b : std::get<FunctionCfg>(built).blocks)
        has |= b.kind == BlockKind::SetFlag || b.kind == BlockKind::WaitFlag || b.kind == BlockKind::Barrier;
      d.explicitSync.back()[f] = has;
      const bool ins = mode == SyncMode::Insert || (mode == SyncMode::Auto && !has);
      d.insert.back()[f] = ins;
      d.any |= ins;
    }
  }
  return d;
}

/// Fills r.functionSync in image function order (objects in input order, declarations skipped).
void recordSync(LinkResult& r, const std::vector<InputObject>& inputs, const SyncDecision& d, SyncMode mode,
                const std::map<std::pair<size_t, uint32_t>, FunctionSync>& counts) {
  r.syncMode = mode;
  for (size_t o = 0; o < inputs.size(); ++o)
    for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
      if (inputs[o].obj.functions[f].flags & obj::kDeclaration) continue;
      auto it = counts.find({o, f});
      FunctionSync s = it == counts.end() ? FunctionSync{} : it->second;
      s.inserted = d.insert[o][f];
      s.explicitSync = d.explicitSync[o][f];
      r.functionSync.push_back(s);
    }
}

} // namespace

LinkResult link(const std::vector<InputObject>& inputs, const LinkOptions& opts) {
  const SyncDecision decision = decideSync(inputs, opts.sync);
  if (!decision.any || inputs.empty()) {
    LinkResult r = linkObjects(inputs, opts, nullptr);
    recordSync(r, inputs, decision, opts.sync, {});
    return r;
  }
  AutoState st;
  for (const InputObject& in : inputs) st.firstAutoEvent.push_back(in.obj.events.size());
  std::map<std::pair<size_t, uint32_t>, std::set<uint32_t>> asBarrier;
  for (;;) {
    std::vector<InputObject> copy;
    std::vector<std::string> log;
    std::vector<Diagnostic> warnings;
    std::map<std::pair<size_t, uint32_t>, FunctionSync> counts;
    for (size_t o = 0; o < inputs.size(); ++o) {
      const obj::ObjectFile& ob = inputs[o].obj;
      Lines lines(ob);
      InputObject c{inputs[o].path, ob};
      std::vector<Insertion> all;
      for (uint32_t f = 0; f < ob.functions.size(); ++f) {
        const obj::Function& fn = ob.functions[f];
        if ((fn.flags & obj::kDeclaration) || !decision.insert[o][f]) continue;
        auto built = buildCfg(ob, f);
        if (!std::holds_alternative<FunctionCfg>(built)) continue; // reported by the link itself
        const FunctionCfg& cfg = std::get<FunctionCfg>(built);
        std::vector<PlanTile> pt = planTiles(fn);
        PlanResult pr = plan(cfg, pt, opts.arch.value_or(ob.arch));
        std::vector<TileSpan> spans = tileSpans(fn, pt, pr);
        auto pipes = blockPipes(cfg, fn.tiles, opts.arch.value_or(ob.arch));
        std::vector<Dependency> deps = unorderedDependencies(cfg, pipes, spans, opts.arch.value_or(ob.arch));
        AutoSyncPlan sp = planAutoSync(cfg, deps, f, static_cast<uint32_t>(c.obj.events.size()), std::string(kAutoPrefix),
                                       asBarrier[{o, f}]);
        c.obj.events.insert(c.obj.events.end(), sp.events.begin(), sp.events.end());
        all.insert(all.end(), std::make_move_iterator(sp.insertions.begin()), std::make_move_iterator(sp.insertions.end()));
        auto at = [&](uint32_t b) { return opName(cfg, b) + " (" + lines.at(cfg.blocks[b].offset) + ")"; };
        FunctionSync& count = counts[{o, f}];
        for (const SyncItem& it : sp.items) {
          const Dependency& d = deps[it.dep];
          if (it.kind == SyncItem::Barrier || it.kind == SyncItem::AllBarrier) ++count.barriers;
          else ++count.pairs;
          std::string pair = std::string(isa::spelling(it.src)) + " -> " + std::string(isa::spelling(it.dst));
          std::string head = "@" + fn.name + " ";
          switch (it.kind) {
          case SyncItem::Pair:
            log.push_back(head + "@" + it.eventName + " " + pair + ": set after " + at(d.from) + ", wait for " + at(d.to));
            break;
          case SyncItem::LoopPair:
            log.push_back(head + "@" + it.eventName + " " + pair + ": loop-carried, set after " + at(d.from) +
                          ", wait before " + at(d.to) + ", set before the loop, wait after it");
            break;
          case SyncItem::Barrier:
            log.push_back(head + "pipe_barrier(" + std::string(isa::spelling(it.src)) + ") before " + at(d.to) + ", after " +
                          at(d.from));
            break;
          case SyncItem::AllBarrier:
            log.push_back(head + "pipe_barrier(PIPE_ALL) after " + at(d.from) + ", for " + at(d.to) + " (event ids exhausted)");
            warnings.push_back({false, true,
                                lines.at(cfg.blocks[d.from].offset) + ": event ids exhausted for " + pair + ": the inserted sync orders " +
                                    opName(cfg, d.from) + " before " + at(d.to) +
                                    " with a pipe_barrier(PIPE_ALL) instead (in @" + fn.name + ", '" + inputs[o].path + "')"});
            break;
          }
        }
      }
      const bool inserted = !all.empty();
      auto rewritten = insertWords(c.obj, std::move(all));
      if (auto* err = std::get_if<std::string>(&rewritten)) {
        LinkResult r;
        r.diags.push_back({false, false, "'" + inputs[o].path + "': --auto-sync: " + *err});
        return r;
      }
      c.obj = std::move(std::get<obj::ObjectFile>(rewritten));
      // Inserted set/wait/barrier words live in the extension space: the image must declare it.
      c.obj.usesExtensions |= inserted;
      copy.push_back(std::move(c));
    }
    st.exhausted.clear();
    LinkResult r = linkObjects(copy, opts, &st);
    if (st.exhausted.empty()) {
      r.diags.insert(r.diags.begin(), warnings.begin(), warnings.end());
      r.syncLog = std::move(log);
      recordSync(r, inputs, decision, opts.sync, counts);
      return r;
    }
    for (auto& [key, ks] : st.exhausted) asBarrier[key].insert(ks.begin(), ks.end());
  }
}

namespace {

LinkResult linkObjects(const std::vector<InputObject>& inputs, const LinkOptions& opts, AutoState* autoState) {
  LinkResult res;
  auto error = [&](const std::string& loc, const std::string& msg) {
    res.diags.push_back({false, false, loc.empty() ? msg : loc + ": " + msg});
  };
  auto note = [&](const std::string& loc, const std::string& msg) {
    res.diags.push_back({true, false, loc.empty() ? msg : loc + ": " + msg});
  };
  auto warn = [&](const std::string& loc, const std::string& msg) {
    res.diags.push_back({false, true, loc.empty() ? msg : loc + ": " + msg});
  };
  if (inputs.empty()) {
    error("", "no input files");
    return res;
  }
  // Arch and identity.
  isa::Arch arch = opts.arch.value_or(inputs[0].obj.arch);
  bool extensions = false;
  for (const InputObject& in : inputs) {
    extensions |= in.obj.usesExtensions;
    if (in.obj.arch == arch) continue;
    if (opts.arch)
      error("", "'" + in.path + "' is for " + archName(in.obj.arch) + ", but --arch " + archName(arch) + " was given");
    else
      error("", "'" + in.path + "' is for " + archName(in.obj.arch) + " but '" + inputs[0].path + "' is for " +
                    archName(arch) + ": objects for different arches cannot be linked");
  }
  // Symbols.
  struct Def {
    size_t object;
    uint32_t function;
  };
  std::map<std::string, Def> globals;
  for (size_t o = 0; o < inputs.size(); ++o)
    for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
      const obj::Function& fn = inputs[o].obj.functions[f];
      if ((fn.flags & obj::kDeclaration) || (fn.flags & obj::kPrivate)) continue;
      auto [it, fresh] = globals.try_emplace(fn.name, Def{o, f});
      if (!fresh)
        error(Lines(inputs[o].obj).at(fn.textOffset),
              "duplicate symbol '" + fn.name + "': defined in '" + inputs[it->second.object].path + "' and in '" +
                  inputs[o].path + "'");
    }
  auto resolve = [&](size_t o, const std::string& name) -> std::optional<Def> {
    for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
      const obj::Function& fn = inputs[o].obj.functions[f];
      if (fn.name == name && (fn.flags & obj::kPrivate) && !(fn.flags & obj::kDeclaration)) return Def{o, f};
    }
    auto it = globals.find(name);
    if (it == globals.end()) return std::nullopt;
    return it->second;
  };
  for (size_t o = 0; o < inputs.size(); ++o) {
    const obj::ObjectFile& ob = inputs[o].obj;
    for (const obj::Function& fn : ob.functions)
      if ((fn.flags & obj::kDeclaration) && !resolve(o, fn.name))
        error("", "undefined symbol '" + fn.name + "' (declared in '" + inputs[o].path + "')");
    for (const obj::Reloc& r : ob.relocs)
      if (r.type == obj::RelocType::Call && !resolve(o, r.symbol)) {
        std::string caller;
        for (const obj::Function& fn : ob.functions)
          if (!(fn.flags & obj::kDeclaration) && r.offset >= fn.textOffset && r.offset < fn.textOffset + fn.textSize)
            caller = " from @" + fn.name;
        error(Lines(ob).at(r.offset), "undefined symbol '" + r.symbol + "' (called" + caller + " in '" + inputs[o].path + "')");
      }
  }
  // Image text and functions: each object's .text, 4-byte aligned, in input order.
  obj::Image img;
  img.arch = arch;
  img.usesExtensions = extensions;
  std::vector<uint64_t> base(inputs.size());
  std::map<std::pair<size_t, uint32_t>, uint32_t> imageFn;
  for (size_t o = 0; o < inputs.size(); ++o) {
    while (img.text.size() % 4) img.text.push_back(0);
    base[o] = img.text.size();
    const obj::ObjectFile& ob = inputs[o].obj;
    img.text.insert(img.text.end(), ob.text.begin(), ob.text.end());
    for (uint32_t f = 0; f < ob.functions.size(); ++f) {
      const obj::Function& fn = ob.functions[f];
      if (fn.flags & obj::kDeclaration) continue;
      obj::Function out = fn;
      out.textOffset += base[o];
      out.flags &= ~obj::kEntry;
      imageFn[{o, f}] = static_cast<uint32_t>(img.functions.size());
      img.functions.push_back(std::move(out));
      res.functionOrigin.push_back(inputs[o].path);
    }
    for (const obj::LineEntry& l : ob.lines) {
      obj::LineEntry c = l;
      c.textOffset += base[o];
      img.lines.push_back(std::move(c));
    }
  }
  // Entries.
  std::vector<uint32_t> entries;
  if (!opts.entries.empty()) {
    for (const std::string& name : opts.entries) {
      auto it = globals.find(name);
      if (it == globals.end()) {
        error("", "--entry '" + name + "': no such kernel in the inputs");
        continue;
      }
      uint32_t f = imageFn[{it->second.object, it->second.function}];
      if (std::find(entries.begin(), entries.end(), f) == entries.end()) entries.push_back(f);
    }
  } else {
    // PTOAS's rule per module: the pto.entry functions; a module with a single function
    // definition and no pto.entry exports that function.
    for (size_t o = 0; o < inputs.size(); ++o) {
      std::vector<uint32_t> marked, defined;
      for (uint32_t f = 0; f < inputs[o].obj.functions.size(); ++f) {
        const obj::Function& fn = inputs[o].obj.functions[f];
        if (fn.flags & obj::kDeclaration) continue;
        defined.push_back(f);
        if (fn.flags & obj::kEntry) marked.push_back(f);
      }
      if (marked.empty() && defined.size() == 1 && !(inputs[o].obj.functions[defined[0]].flags & obj::kPrivate))
        marked = defined;
      for (uint32_t f : marked) entries.push_back(imageFn[{o, f}]);
    }
    if (entries.empty()) error("", "no entry kernel: mark one with the pto.entry attribute or pass --entry <name>");
  }
  for (uint32_t f : entries) {
    img.functions[f].flags |= obj::kEntry;
    img.entries.push_back({f, img.functions[f].name});
  }
  // Calls.
  for (size_t o = 0; o < inputs.size(); ++o)
    for (const obj::Reloc& r : inputs[o].obj.relocs) {
      if (r.type != obj::RelocType::Call) continue;
      auto def = resolve(o, r.symbol);
      if (!def) continue;
      uint64_t at = base[o] + r.offset;
      uint64_t target = img.functions[imageFn[{def->object, def->function}]].textOffset;
      size_t used = 0;
      auto w = enc::decodeBytes(std::span<const uint8_t>(img.text.data() + at, img.text.size() - at), used,
                                enc::DecodeOptions{.extensions = true});
      int label = -1;
      if (w)
        for (size_t k = 0; k < w->formInfo().fields.size(); ++k)
          if (w->formInfo().fields[k].kind == enc::FieldKind::Label) label = static_cast<int>(k);
      if (label < 0) {
        error(Lines(inputs[o].obj).at(r.offset), "call relocation to '" + r.symbol + "' on a word without a branch offset");
        continue;
      }
      enc::Inst inst = *w;
      inst.field[static_cast<size_t>(label)] = (static_cast<int64_t>(target) - static_cast<int64_t>(at)) / 2;
      auto e = enc::encode(inst);
      if (!e || e->bits != used * 8) {
        error(Lines(inputs[o].obj).at(r.offset), "call to '" + r.symbol + "' is out of range of the call word");
        continue;
      }
      for (size_t k = 0; k < used; ++k) img.text[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
    }
  // Per function: control flow, planning, events.
  for (size_t o = 0; o < inputs.size(); ++o) {
    const obj::ObjectFile& ob = inputs[o].obj;
    Lines lines(ob);
    for (uint32_t f = 0; f < ob.functions.size(); ++f) {
      const obj::Function& fn = ob.functions[f];
      if (fn.flags & obj::kDeclaration) continue;
      const uint32_t imf = imageFn[{o, f}];
      const std::string in = "in @" + fn.name + ", '" + inputs[o].path + "'";
      uint64_t badWord = fn.textOffset;
      auto built = buildCfg(ob, f, &badWord);
      if (auto* err = std::get_if<std::string>(&built)) {
        error(lines.at(badWord), "'" + inputs[o].path + "': " + *err);
        continue;
      }
      const FunctionCfg& cfg = std::get<FunctionCfg>(built);
      auto blockLoc = [&](int32_t b) -> std::string {
        return b >= 0 && static_cast<size_t>(b) < cfg.blocks.size() ? lines.at(cfg.blocks[static_cast<size_t>(b)].offset) : "";
      };
      // Tiles.
      std::vector<PlanTile> pt = planTiles(fn);
      PlanResult pr = plan(cfg, pt, arch);
      // The first op naming a tile, or else a view of it, or else its parent (a view that only
      // its own views use has no op of its own).
      auto tileBlock = [&](uint32_t t) -> int32_t {
        const size_t n = fn.tiles.size();
        auto parentOf = [&](int32_t x) { return x >= 0 && static_cast<size_t>(x) < n ? fn.tiles[static_cast<size_t>(x)].aliasOf : -1; };
        int32_t up = static_cast<int32_t>(t);
        for (size_t level = 0; up >= 0 && level < n; ++level, up = parentOf(up)) {
          int32_t best = -1;
          for (uint32_t u = 0; u < n; ++u) {
            int32_t a = static_cast<int32_t>(u);
            for (size_t guard = 0; a >= 0 && a != up && guard < n; ++guard) a = parentOf(a);
            if (a == up && pr.firstBlock[u] >= 0 && (best < 0 || pr.firstBlock[u] < best)) best = pr.firstBlock[u];
          }
          if (best >= 0) return best;
        }
        return -1;
      };
      for (const PlanError& e : pr.errors) {
        int32_t b = e.tiles.empty() ? -1 : tileBlock(e.tiles.front());
        error(blockLoc(b), e.message + " (" + in + ")");
        for (uint32_t t : e.peak) {
          const obj::TileDesc& d = fn.tiles[t];
          std::string range = pr.live[t].empty() ? "never used"
                                                 : "live " + hex(base[o] + cfg.blocks[pr.live[t].start].offset) + ".." +
                                                       hex(base[o] + cfg.blocks[pr.live[t].end].end);
          note(blockLoc(pr.firstBlock[t]), "%" + d.name + " (" + shapeOf(d) + ", " + std::to_string(pt[t].bytes) +
                                               " bytes) at " + hex(static_cast<uint64_t>(pr.offset[t])) + ", " + range);
        }
      }
      obj::Function& out = img.functions[imf];
      for (uint32_t t = 0; t < fn.tiles.size(); ++t) {
        out.tiles[t].placement = pr.offset[t];
        MapTile mt;
        mt.function = imf;
        mt.tile = t;
        mt.name = fn.tiles[t].name;
        mt.loc = fn.tiles[t].loc;
        mt.offset = pr.offset[t];
        mt.bytes = pt[t].bytes;
        mt.manual = pr.manual[t];
        mt.viewOf = fn.tiles[t].aliasOf;
        mt.used = !pr.live[t].empty();
        if (mt.used) {
          mt.liveFrom = base[o] + cfg.blocks[pr.live[t].start].offset;
          mt.liveTo = base[o] + cfg.blocks[pr.live[t].end].end;
        }
        mt.source = blockLoc(pr.firstBlock[t]);
        res.tiles.push_back(std::move(mt));
      }
      for (unsigned l = 0; l < 7; ++l) {
        bool any = false;
        for (const obj::TileDesc& t : fn.tiles) any |= static_cast<unsigned>(t.loc) == l;
        if (!any) continue;
        const isa::BufferSpec& spec = isa::buffer(arch, static_cast<isa::Loc>(l));
        img.layout.push_back({imf, static_cast<isa::Loc>(l), spec.capacity, spec.alignment, pr.used[l]});
      }
      // Races: dependencies between pipes that no event chain orders.
      {
        auto pipes = blockPipes(cfg, fn.tiles, arch);
        std::vector<Dependency> deps = unorderedDependencies(cfg, pipes, tileSpans(fn, pt, pr), arch);
        size_t shown = 0, races = 0;
        for (const Dependency& d : deps) {
          if (d.barrier) continue;
          if (++races > 10) continue;
          ++shown;
          const std::string& fromTile = fn.tiles[d.fromTile].name;
          const std::string& toTile = fn.tiles[d.toTile].name;
          std::string toVerb = d.kind == DepKind::RAW ? "reads" : "writes";
          std::string fromVerb = d.kind == DepKind::WAR ? "reads" : "writes";
          std::string msg = "race: " + opName(cfg, d.to) + " on " + std::string(isa::spelling(d.toPipe)) + " " + toVerb + " %" +
                            toTile + (fromTile == toTile ? ", which " : " and overlaps %" + fromTile + ", which ") +
                            opName(cfg, d.from) + " on " + std::string(isa::spelling(d.fromPipe)) + " at " +
                            blockLoc(static_cast<int32_t>(d.from)) + " " + fromVerb +
                            ", and no set_flag/wait_flag chain orders them (" +
                            (d.kind == DepKind::RAW ? "RAW" : d.kind == DepKind::WAR ? "WAR" : "WAW") + ") (" + in + ")";
          if (opts.allowRaces) warn(blockLoc(static_cast<int32_t>(d.to)), msg);
          else error(blockLoc(static_cast<int32_t>(d.to)), msg);
          note(blockLoc(static_cast<int32_t>(d.from)), "the " + opName(cfg, d.from) + " is here");
        }
        if (races > shown)
          note("", std::to_string(races - shown) + " more race(s) in @" + fn.name +
                       " not shown (link with --auto-sync to order them)");
      }
      // Events: symbolic events of this function, by their relocations.
      std::vector<uint32_t> evIndex; // local -> object event index
      std::map<uint32_t, int32_t> local;
      for (uint32_t e = 0; e < ob.events.size(); ++e)
        if (ob.events[e].function == f) {
          local[e] = static_cast<int32_t>(evIndex.size());
          evIndex.push_back(e);
        }
      std::vector<int32_t> blockEvent(cfg.blocks.size(), -1);
      std::vector<std::pair<isa::Pipe, isa::Pipe>> pipes;
      std::vector<std::string> names;
      for (uint32_t e : evIndex) {
        pipes.push_back({ob.events[e].srcPipe, ob.events[e].dstPipe});
        names.push_back(ob.events[e].name);
      }
      std::vector<const obj::Reloc*> eventRelocs;
      for (const obj::Reloc& r : ob.relocs) {
        if (r.type != obj::RelocType::Event || r.offset < fn.textOffset || r.offset >= fn.textOffset + fn.textSize) continue;
        int32_t b = cfg.blockAt(r.offset);
        auto it = local.find(r.index);
        if (b < 0 || it == local.end() || cfg.blocks[static_cast<size_t>(b)].eventWord != r.offset) {
          error(lines.at(r.offset), "event relocation at " + hex(r.offset) + " is not on the event word of a set/wait (" + in + ")");
          continue;
        }
        blockEvent[static_cast<size_t>(b)] = it->second;
        eventRelocs.push_back(&r);
      }
      EventPlan ep = allocateEvents(cfg, blockEvent, pipes, names, arch);
      for (const EventError& e : ep.errors) {
        if (autoState && e.message.find("exhausted") != std::string::npos && !e.events.empty() &&
            e.events.back() < evIndex.size() && evIndex[e.events.back()] >= autoState->firstAutoEvent[o]) {
          const std::string& nm = names[e.events.back()];
          if (nm.rfind(kAutoPrefix, 0) == 0) {
            autoState->exhausted[{o, f}].insert(static_cast<uint32_t>(std::stoul(nm.substr(kAutoPrefix.size()))));
            continue;
          }
        }
        if (e.deadlock) {
          std::string msg = e.message;
          auto subst = [&](const std::string& key, const std::string& val) {
            for (size_t at = msg.find(key); at != std::string::npos; at = msg.find(key, at + val.size()))
              msg.replace(at, key.size(), val);
          };
          subst("{wait}", blockLoc(e.block));
          subst("{other}", e.related.empty() ? std::string("?") : blockLoc(e.related.front()));
          error(blockLoc(e.block), "deadlock: " + msg + " (" + in + ")");
          note(blockLoc(e.block), "the wait_flag is here");
          if (!e.related.empty()) note(blockLoc(e.related.front()), "the other end is here");
          continue;
        }
        error(blockLoc(e.block), e.message + " (" + in + ")");
        for (int32_t b : e.related) note(blockLoc(b), "the pending set is here");
        if (e.message.find("exhausted") != std::string::npos)
          for (uint32_t v : e.events)
            if (v < evIndex.size() && !ep.pending[v].empty())
              note(blockLoc(static_cast<int32_t>(ep.pending[v].start)),
                   "event @" + names[v] + " pending " + hex(base[o] + cfg.blocks[ep.pending[v].start].offset) + ".." +
                       hex(base[o] + cfg.blocks[ep.pending[v].end].end));
      }
      for (size_t v = 0; v < evIndex.size(); ++v) {
        obj::ImageEvent ie{imf, names[v], pipes[v].first, pipes[v].second, static_cast<uint8_t>(std::max(ep.id[v], 0))};
        img.events.push_back(ie);
        MapEvent me{imf, names[v], pipes[v].first, pipes[v].second, ep.id[v], 0, 0};
        if (!ep.pending[v].empty()) {
          me.pendingFrom = base[o] + cfg.blocks[ep.pending[v].start].offset;
          me.pendingTo = base[o] + cfg.blocks[ep.pending[v].end].end;
        }
        res.events.push_back(me);
      }
      // Patch the B.DIM uimm17 of every event word.
      for (const obj::Reloc* r : eventRelocs) {
        int32_t id = ep.id[static_cast<size_t>(local[r->index])];
        if (id < 0) continue;
        uint64_t at = base[o] + r->offset;
        size_t used = 0;
        auto w = enc::decodeBytes(std::span<const uint8_t>(img.text.data() + at, img.text.size() - at), used,
                                  enc::DecodeOptions{.extensions = true});
        enc::Inst inst = *w; // decoded by buildCfg already
        inst.set("uimm17", id);
        auto e = enc::encode(inst);
        if (!e) {
          error(lines.at(r->offset), "cannot patch the event word: " + e.error());
          continue;
        }
        for (size_t k = 0; k < used; ++k) img.text[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
      }
    }
  }
  bool failed = std::any_of(res.diags.begin(), res.diags.end(), [](const Diagnostic& d) { return !d.note && !d.warning; });
  if (!failed) res.image = std::move(img);
  return res;
}

} // namespace

} // namespace pto::link
