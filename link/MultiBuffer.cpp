#include "link/MultiBuffer.h"

#include "link/Passes.h"
#include "link/Patch.h"
#include "link/Planner.h"
#include "link/Races.h"
#include "link/Slots.h"

#include "isa/Encoding.h"

#include <algorithm>
#include <map>
#include <optional>

namespace pto::link {

namespace enc = isa::enc;

uint32_t copiesForWork(const std::vector<std::pair<isa::Pipe, uint64_t>>& work) {
  uint64_t sum = 0, most = 0;
  for (const auto& [pipe, bytes] : work) {
    sum += bytes;
    most = std::max(most, bytes);
  }
  // One pipe with 80% of the work or more: the others hide behind it already.
  if (work.size() < 2 || most == 0 || most * 5 >= sum * 4) return 1;
  const uint64_t stages = (sum + most - 1) / most;
  return static_cast<uint32_t>(std::clamp<uint64_t>(stages, 2, 4));
}

namespace {

/// The words of a loop that the copies change: the B.IOT words naming tiles, the exits'
/// and the back edge's branch words.
struct LoopWords {
  std::vector<uint64_t> tileWords; // .text offsets of B.IOT words (source forms, bank 0)
  std::vector<uint32_t> exits;     // the Cond blocks
};

/// The loop whose back edge is block `latch`, when it has the shape the copies need; otherwise
/// why not.
std::variant<RotatedLoop, std::string> loopShape(const FunctionCfg& cfg, uint32_t latch) {
  const std::vector<Block>& blocks = cfg.blocks;
  const Block& lb = blocks[latch];
  const auto h = static_cast<uint32_t>(lb.succ[0]);
  if (cfg.predsOf(h).size() != 2) return std::string("the loop has more than one entry");
  if (latch + 1 >= blocks.size() || blocks[latch + 1].offset != lb.end)
    return std::string("no block follows the loop");
  bool exits = false;
  for (uint32_t b = h; b <= latch; ++b) {
    const Block& blk = blocks[b];
    if (b != h)
      for (uint32_t p : cfg.predsOf(b))
        if (p < h || p > latch) return std::string("a branch enters the loop's body");
    if (blk.kind == BlockKind::Control) return std::string("the loop has sync or control ops");
    if (blk.kind == BlockKind::Tile && !blk.op) return std::string("a tile op is not known");
    if (b == latch) break;
    if (blk.transfer == Transfer::Cond) {
      if (blk.target != static_cast<int64_t>(lb.end))
        return std::string("the loop has a branch inside it (not an innermost straight body)");
      exits = true;
    } else if (blk.transfer != Transfer::Fall) {
      return std::string("the loop has a branch, call or return inside it");
    }
  }
  if (!exits) return std::string("the loop has no exit test");
  RotatedLoop l;
  l.header = h;
  l.latch = latch;
  return l;
}

/// The B.IOT words of the loop's tile blocks; an error when a block names its tiles in a form
/// the copies cannot rename (a bank word, a destination hand).
std::variant<LoopWords, std::string> loopWords(const obj::ObjectFile& ob, const FunctionCfg& cfg,
                                               const RotatedLoop& l) {
  LoopWords w;
  for (uint32_t b = l.header; b <= l.latch; ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.transfer == Transfer::Cond) w.exits.push_back(b);
    if (blk.kind != BlockKind::Tile) continue;
    for (uint64_t at = blk.offset; at < blk.end;) {
      size_t used = 0;
      auto in = enc::decodeBytes(std::span<const uint8_t>(ob.text).subspan(at, blk.end - at), used,
                                 enc::DecodeOptions{.extensions = true});
      if (!in || used == 0) return std::string("a word of the loop does not decode");
      switch (in->form) {
      case enc::FormId::B_IOT_S1:
      case enc::FormId::B_IOT_S2:
        w.tileWords.push_back(at);
        break;
      case enc::FormId::B_TBANK:
      case enc::FormId::B_IOT_S1D:
      case enc::FormId::B_IOT_S2D:
      case enc::FormId::B_IOT_D:
        return std::string("a tile op names its tiles through a bank or a destination hand");
      default:
        break;
      }
      at += used;
    }
  }
  return w;
}

/// What the loops of one function are judged on, gathered in one walk over its blocks (a
/// walk per loop made linking quadratic in the number of loops: 2,000 loops took 0.75 s).
struct FunctionFacts {
  std::vector<std::optional<isa::Pipe>> pipes; // per block: its pipe
  // Per tile: the first and last tile block naming it (-1: none), and whether that first block
  // writes it without reading it.
  std::vector<int64_t> firstBlock, lastBlock;
  std::vector<bool> killedFirst;
  std::vector<bool> plainRoot;            // a planned tile that is no view and has none
  std::vector<uint64_t> otherRelocations; // offsets of relocations other than tile ones, sorted
};

FunctionFacts functionFacts(const obj::ObjectFile& ob, const obj::Function& fn,
                            const FunctionCfg& cfg, isa::Arch arch) {
  FunctionFacts f;
  const size_t n = fn.tiles.size();
  f.pipes = blockPipes(cfg, fn.tiles, arch);
  f.firstBlock.assign(n, -1);
  f.lastBlock.assign(n, -1);
  f.killedFirst.assign(n, false);
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    const Block& blk = cfg.blocks[b];
    if (blk.kind != BlockKind::Tile) continue;
    std::map<uint32_t, std::pair<bool, bool>> here; // tile -> (read, written) in this block
    for (const TileUse& u : cfg.usesOf(blk)) {
      if (u.tile >= n) continue;
      here[u.tile].first |= u.read;
      here[u.tile].second |= u.write;
    }
    for (const auto& [t, rw] : here) {
      if (f.firstBlock[t] < 0) {
        f.firstBlock[t] = b;
        f.killedFirst[t] = rw.second && !rw.first;
      }
      f.lastBlock[t] = b;
    }
  }
  f.plainRoot.assign(n, true);
  for (uint32_t t = 0; t < n; ++t) {
    const obj::TileDesc& d = fn.tiles[t];
    if (d.aliasOf >= 0 || d.placement != obj::kUnplaced) f.plainRoot[t] = false;
    if (d.aliasOf >= 0 && static_cast<size_t>(d.aliasOf) < n) f.plainRoot[d.aliasOf] = false;
  }
  for (const obj::Reloc& r : ob.relocs)
    if (r.type != obj::RelocType::Tile) f.otherRelocations.push_back(r.offset);
  std::sort(f.otherRelocations.begin(), f.otherRelocations.end());
  return f;
}

/// The tiles that start afresh every iteration: planned roots without views, named only inside
/// the loop, whose first reference in each iteration writes them without reading them.
std::vector<uint32_t> rotatableTiles(const FunctionFacts& f, const RotatedLoop& l) {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < f.firstBlock.size(); ++t)
    if (f.firstBlock[t] >= static_cast<int64_t>(l.header) &&
        f.lastBlock[t] <= static_cast<int64_t>(l.latch) && f.killedFirst[t] && f.plainRoot[t])
      out.push_back(t);
  return out;
}

/// Bytes each pipe moves per iteration: per tile op, its largest operand.
std::vector<std::pair<isa::Pipe, uint64_t>> pipeWork(const obj::Function& fn,
                                                     const FunctionCfg& cfg, const FunctionFacts& f,
                                                     const RotatedLoop& l) {
  std::map<isa::Pipe, uint64_t> work;
  for (uint32_t b = l.header; b <= l.latch; ++b) {
    if (!f.pipes[b]) continue;
    uint64_t bytes = 0;
    for (const TileUse& u : cfg.usesOf(cfg.blocks[b]))
      if (u.tile < fn.tiles.size()) bytes = std::max(bytes, tileBytes(fn.tiles[u.tile]));
    work[*f.pipes[b]] += bytes;
  }
  return {work.begin(), work.end()};
}

/// N lowered until the copies fit: every buffer holding all the function's roots at once plus
/// N - 1 more of each rotated tile (an upper bound: the planner reuses bytes), and at most 64
/// descriptors (a B.IOT field names 0..63).
uint32_t fittingCopies(const obj::Function& fn, const std::vector<uint32_t>& rotated,
                       size_t alreadyAdded, uint32_t n, isa::Arch arch) {
  std::array<uint64_t, 7> held{}, extra{};
  for (uint32_t t = 0; t < fn.tiles.size(); ++t)
    if (fn.tiles[t].aliasOf < 0 && fn.tiles[t].placement != obj::kRuntimePlaced)
      held[static_cast<size_t>(fn.tiles[t].loc) % 7] += tileBytes(fn.tiles[t]);
  for (uint32_t t : rotated)
    extra[static_cast<size_t>(fn.tiles[t].loc) % 7] += tileBytes(fn.tiles[t]);
  for (; n >= 2; --n) {
    bool fits = fn.tiles.size() + alreadyAdded + (n - 1) * rotated.size() <= enc::kTilesPerBank;
    for (size_t loc = 0; loc < 7 && fits; ++loc)
      fits = held[loc] + (n - 1) * extra[loc] <=
             isa::buffer(arch, static_cast<isa::Loc>(loc)).capacity;
    if (fits) return n;
  }
  return 1;
}

/// Renames the tiles of the B.IOT word at `at` in `bytes` by `rename`; false when it does not
/// encode again in the same size.
bool renameTiles(std::vector<uint8_t>& bytes, uint64_t at,
                 const std::map<uint32_t, uint32_t>& rename) {
  size_t used = 0;
  auto in = enc::decodeBytes(std::span<const uint8_t>(bytes).subspan(at), used,
                             enc::DecodeOptions{.extensions = true});
  if (!in) return false;
  enc::Inst inst = *in;
  for (enc::Field f : {enc::Field::SrcTile0, enc::Field::SrcTile1}) {
    auto v = inst.get(f);
    if (!v) continue;
    auto it = rename.find(static_cast<uint32_t>(*v));
    if (it != rename.end() && !inst.set(f, it->second)) return false;
  }
  auto e = enc::encode(inst);
  if (!e || e->bits != used * 8) return false;
  for (size_t k = 0; k < used; ++k)
    bytes[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
  return true;
}

/// Turns the back edge's BSTART DIRECT at `at` into a BSTART.STD FALL of the same size: the copy
/// runs on into the next one. False when the sizes differ (a compact branch).
bool fallThrough(std::vector<uint8_t>& bytes, uint64_t at) {
  size_t used = 0;
  auto in = enc::decodeBytes(std::span<const uint8_t>(bytes).subspan(at), used,
                             enc::DecodeOptions{.extensions = true});
  auto fall = enc::make(enc::FormId::BSTART_STD_FALL, {});
  if (!in || in->flow() != enc::Flow::Direct || !fall) return false;
  auto e = enc::encode(*fall);
  if (!e || e->bits != used * 8) return false;
  for (size_t k = 0; k < used; ++k)
    bytes[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
  return true;
}

/// Access `g` of a loop's body as copy k of N runs it in the unrolled loop (the original body
/// is copy N - 1): the iteration it stands for is N x (the unrolled loop's iteration) + k.
obj::GmAccess unrolledAccess(obj::GmAccess g, uint64_t k, uint64_t n) {
  if (g.loop == 0) return g;
  int64_t shift = 0, stride = 0;
  if (__builtin_mul_overflow(g.stride, static_cast<int64_t>(k), &shift) ||
      __builtin_add_overflow(g.offset, shift, &g.offset) ||
      __builtin_mul_overflow(g.stride, static_cast<int64_t>(n), &stride)) {
    // Past int64: the record says only which parameter it touches.
    const obj::GmAccess unknown{g.textOffset, g.function, g.param, g.write};
    return unknown;
  }
  g.stride = stride;
  return g;
}

/// The N - 1 copies in front of the loop (the original stays as the last copy): copy k's tiles
/// renamed to its own descriptors, its exits aimed at the block after the loop (past the copies
/// after it and the original), its back edge turned into a fall-through into the next copy. Empty
/// when a word does not patch.
std::optional<Insertion> copiesOf(const obj::ObjectFile& ob, uint32_t function,
                                  const FunctionCfg& cfg, const RotatedLoop& l,
                                  const LoopWords& words,
                                  const std::vector<std::map<uint32_t, uint32_t>>& renames) {
  const uint64_t head = cfg.blocks[l.header].offset, end = cfg.blocks[l.latch].end;
  const uint64_t len = end - head, latchAt = cfg.blocks[l.latch].offset - head;
  const std::vector<uint8_t> body(ob.text.begin() + static_cast<std::ptrdiff_t>(head),
                                  ob.text.begin() + static_cast<std::ptrdiff_t>(end));
  Insertion ins;
  ins.offset = head;
  ins.entry = true; // the back edge lands on the first copy
  const uint64_t last = renames.size();
  for (uint64_t k = 0; k < last; ++k) {
    std::vector<uint8_t> copy = body;
    for (uint64_t w : words.tileWords)
      if (!renameTiles(copy, w - head, renames[k])) return std::nullopt;
    for (uint32_t b : words.exits) {
      const uint64_t at = cfg.blocks[b].offset - head;
      const auto rel = static_cast<int64_t>(len - at + (last - k) * len);
      if (!patchWord(copy, at, PatchField::Label, rel / 2).ok()) return std::nullopt;
    }
    if (!fallThrough(copy, latchAt)) return std::nullopt;
    const uint64_t base = k * len;
    ins.bytes.insert(ins.bytes.end(), copy.begin(), copy.end());
    for (const obj::Reloc& r : ob.relocs) {
      if (r.offset < head || r.offset >= end || r.type != obj::RelocType::Tile) continue;
      obj::Reloc c = r;
      c.offset = base + r.offset - head;
      if (r.function == function) {
        auto it = renames[k].find(r.index);
        if (it != renames[k].end()) c.index = it->second;
      }
      ins.relocs.push_back(std::move(c));
    }
    for (const obj::LineEntry& e : ob.lines) {
      if (e.textOffset < head || e.textOffset >= end) continue;
      obj::LineEntry c = e;
      c.textOffset = base + e.textOffset - head;
      ins.lines.push_back(std::move(c));
    }
    // The copies run the body's accesses at successive iterations: an iteration of the
    // unrolled loop is N of the original, copy k the k-th of them (docs/sync.md 2b), so an
    // address that moves with the loop moves N strides an iteration, from k strides on.
    for (const obj::GmAccess& g : ob.gmAccesses) {
      if (g.textOffset < head || g.textOffset >= end) continue;
      obj::GmAccess c = unrolledAccess(g, k, last + 1);
      c.textOffset = base + g.textOffset - head;
      ins.gmAccesses.push_back(c);
    }
  }
  return ins;
}

/// A loop whose tassign addresses or dynamic event ids repeat every `period` iterations: that
/// many copies (each copy's slots then constant), its own planned tiles rotated too when they fit.
void slotCopies(const obj::Function& fn, RotatedLoop& l, uint32_t period, size_t alreadyAdded,
                isa::Arch arch) {
  l.copies = period;
  if (!l.tiles.empty() && fittingCopies(fn, l.tiles, alreadyAdded, period, arch) < period)
    l.tiles.clear();
}

bool onlyTileRelocs(const FunctionFacts& f, uint64_t head, uint64_t end) {
  auto it = std::lower_bound(f.otherRelocations.begin(), f.otherRelocations.end(), head);
  return it == f.otherRelocations.end() || *it >= end;
}

std::string pipeWorkText(const std::vector<std::pair<isa::Pipe, uint64_t>>& work) {
  std::string s;
  for (const auto& [pipe, bytes] : work)
    s += (s.empty() ? "" : ", ") + std::string(isa::spelling(pipe)) + " " + std::to_string(bytes) +
         " B";
  return s;
}

} // namespace

FunctionMultiBuffer planMultiBuffer(const obj::ObjectFile& ob, uint32_t function,
                                    const FunctionCfg& cfg, isa::Arch arch, uint32_t maxCopies) {
  FunctionMultiBuffer out;
  const obj::Function& fn = ob.functions[function];
  out.groups.assign(fn.tiles.size(), -1);
  const std::map<uint32_t, uint32_t> periods = slotPeriods(cfg, ob);
  const FunctionFacts facts = functionFacts(ob, fn, cfg, arch);
  for (uint32_t latch = 0; latch < cfg.blocks.size(); ++latch) {
    const Block& lb = cfg.blocks[latch];
    if (lb.transfer != Transfer::Direct || lb.succ[0] < 0 ||
        static_cast<uint32_t>(lb.succ[0]) > latch)
      continue;
    bool tiles = false;
    for (uint32_t b = static_cast<uint32_t>(lb.succ[0]); b <= latch; ++b)
      tiles |= cfg.blocks[b].kind == BlockKind::Tile;
    if (!tiles) continue; // scalar loops are not reported
    auto shape = loopShape(cfg, latch);
    if (auto* why = std::get_if<std::string>(&shape)) {
      RotatedLoop l;
      l.header = static_cast<uint32_t>(lb.succ[0]);
      l.latch = latch;
      l.reason = *why;
      out.loops.push_back(std::move(l));
      continue;
    }
    RotatedLoop l = std::get<RotatedLoop>(shape);
    auto words = loopWords(ob, cfg, l);
    const uint64_t head = cfg.blocks[l.header].offset, end = lb.end;
    l.work = pipeWork(fn, cfg, facts, l);
    l.tiles = rotatableTiles(facts, l);
    const uint32_t wanted = std::min(copiesForWork(l.work), std::max(maxCopies, 1u));
    // Run-time slots (docs/sync.md 2a): as many copies as the slot expressions' period makes
    // each copy's slots constant, whatever the pipes' work.
    const auto known = periods.find(l.latch);
    const uint32_t period = known == periods.end() ? 1 : known->second;
    if (auto* why = std::get_if<std::string>(&words))
      l.reason = *why;
    else if (!onlyTileRelocs(facts, head, end))
      l.reason = "the loop has a call or a symbolic event";
    else if (maxCopies < 2)
      l.reason = "the copies' events ran out of hardware event ids";
    else if (period >= 2 && period > maxCopies)
      l.reason = "its " + std::to_string(period) +
                 " run-time slots need more copies than the hardware event ids allow";
    else if (period >= 2)
      slotCopies(fn, l, period, out.added.size(), arch);
    else if (wanted < 2)
      l.reason = "one pipe does most of the work (" + pipeWorkText(l.work) + ")";
    else if (l.tiles.empty())
      l.reason = "no tile of the loop is written afresh in each iteration";
    else if ((l.copies = fittingCopies(fn, l.tiles, out.added.size(), wanted, arch)) < 2)
      l.reason = "the copies do not fit the buffers or the 64 tile descriptors";
    if (!l.reason.empty()) {
      l.copies = 1;
      out.loops.push_back(std::move(l));
      continue;
    }
    // Copy k < N - 1 gets its own descriptors; the original loop is the last copy.
    std::vector<std::map<uint32_t, uint32_t>> renames(l.copies - 1);
    std::vector<obj::TileDesc> added;
    for (uint32_t k = 0; k + 1 < l.copies; ++k)
      for (uint32_t t : l.tiles) {
        renames[k][t] = static_cast<uint32_t>(fn.tiles.size() + out.added.size() + added.size());
        obj::TileDesc d = fn.tiles[t];
        d.name += ".mb" + std::to_string(k);
        added.push_back(std::move(d));
      }
    auto ins = copiesOf(ob, function, cfg, l, std::get<LoopWords>(words), renames);
    if (!ins) {
      l.copies = 1;
      l.reason = "a branch or tile word of the copies does not encode";
      out.loops.push_back(std::move(l));
      continue;
    }
    // The group of a rotated tile is named by its own index; its copies join it.
    for (uint32_t t : l.tiles)
      out.groups[t] = static_cast<int32_t>(t);
    for (uint32_t k = 0; k + 1 < l.copies; ++k)
      for (uint32_t t : l.tiles)
        out.groups.push_back(static_cast<int32_t>(t));
    out.added.insert(out.added.end(), added.begin(), added.end());
    out.insertions.push_back(std::move(*ins));
    if (period >= 2) {
      l.reason = "its run-time slots repeat every " + std::to_string(period) +
                 " iterations: each copy's slots are constant";
      out.loops.push_back(std::move(l));
      continue;
    }
    l.reason = "per iteration " + pipeWorkText(l.work) + ": " +
               std::to_string(copiesForWork(l.work)) + " stages keep the pipes busy";
    if (l.copies < copiesForWork(l.work))
      l.reason +=
          "; " + std::to_string(l.copies) +
          (maxCopies < copiesForWork(l.work) ? " for the hardware event ids" : " fit the buffers");
    out.loops.push_back(std::move(l));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The pass.

namespace {

std::string loopLine(const SourceLines& lines, const obj::Function& fn, const FunctionCfg& cfg,
                     const RotatedLoop& l) {
  std::string s = "@" + fn.name + ": loop at " + lines.at(cfg.blocks[l.header].offset);
  if (l.copies < 2) return s + ": not multi-buffered: " + l.reason;
  s += ": " + std::to_string(l.copies) + " copies";
  if (!l.tiles.empty()) s += " of";
  for (uint32_t t : l.tiles)
    s += " %" + fn.tiles[t].name;
  return s + " (" + l.reason + ")";
}

} // namespace

void multiBuffer(LinkContext& ctx) {
  MultiBufferState& mb = ctx.multiBuffer;
  AutoSyncState& s = ctx.sync;
  if (mb.done || !ctx.opts.multiBuffer || s.stage != AutoSyncState::Stage::Plan) return;
  mb.done = true;
  if (mb.original.empty()) mb.original = ctx.given;
  mb.log.clear();
  mb.groups.clear();
  mb.copies.clear();
  std::vector<InputObject> objects(ctx.given.begin(), ctx.given.end());
  bool any = false;
  for (size_t o = 0; o < objects.size(); ++o) {
    const obj::ObjectFile& ob = ctx.given[o].obj;
    const SourceLines lines(ob); // one per object: making it per loop was quadratic
    std::vector<Insertion> all;
    std::map<uint32_t, FunctionMultiBuffer> planned;
    // Per unrolled loop: its words [head, end) before the rewrite and its copies.
    std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> bodies;
    for (uint32_t f = 0; f < ob.functions.size() && o < s.fns.size(); ++f) {
      const SyncDecision& d = s.fns[o][f];
      if (!d.insert || !d.built || !d.built->get()) continue;
      const FunctionCfg& cfg = *d.built->get();
      auto cap = mb.cap.find({o, f});
      FunctionMultiBuffer fm =
          planMultiBuffer(ob, f, cfg, ctx.arch, cap == mb.cap.end() ? 16 : cap->second);
      for (const RotatedLoop& l : fm.loops) {
        mb.log.push_back(loopLine(lines, ob.functions[f], cfg, l));
        mb.copies[{o, f}] = std::max(mb.copies[{o, f}], l.copies);
        if (l.copies > 1)
          bodies.emplace_back(cfg.blocks[l.header].offset, cfg.blocks[l.latch].end, l.copies);
      }
      if (!fm.changed()) continue;
      all.insert(all.end(), fm.insertions.begin(), fm.insertions.end());
      planned.emplace(f, std::move(fm));
    }
    if (all.empty()) continue;
    std::vector<std::pair<uint64_t, uint64_t>> sizes;
    for (const Insertion& i : all)
      sizes.emplace_back(i.offset, i.bytes.size());
    std::sort(sizes.begin(), sizes.end());
    const OffsetMap moved(std::move(sizes));
    auto rewritten = insertWords(ob, std::move(all));
    if (auto* err = std::get_if<std::string>(&rewritten)) {
      mb.log.push_back("'" + ctx.given[o].path + "': not multi-buffered: " + *err);
      continue;
    }
    objects[o].obj = std::move(std::get<obj::ObjectFile>(rewritten));
    // The original body is the last copy (unrolledAccess); the copies sit in front of it.
    for (auto [head, end, n] : bodies) {
      const uint64_t from = moved.after(head), to = from + (end - head);
      for (obj::GmAccess& g : objects[o].obj.gmAccesses)
        if (g.textOffset >= from && g.textOffset < to) g = unrolledAccess(g, n - 1, n);
    }
    for (auto& [f, fm] : planned) {
      auto& tiles = objects[o].obj.functions[f].tiles;
      tiles.insert(tiles.end(), fm.added.begin(), fm.added.end());
      mb.groups[{o, f}] = std::move(fm.groups);
    }
    any = true;
  }
  if (!any) return;
  mb.objects = std::move(objects);
  ctx.given = mb.objects;
  ctx.inputs = ctx.given;
  ctx.sync = AutoSyncState{};
  ctx.knownCfgs.clear();
  ctx.rerunFrom = "check inputs"; // link the unrolled code
}

bool retryWithFewerCopies(LinkContext& ctx) {
  MultiBufferState& mb = ctx.multiBuffer;
  bool lowered = false;
  for (const auto& [key, pairs] : ctx.sync.exhausted) {
    auto it = mb.copies.find(key);
    if (it == mb.copies.end() || it->second < 2) continue;
    mb.cap[key] = it->second - 1; // 1: no multi-buffering for this function
    lowered = true;
  }
  if (!lowered) return false;
  ctx.given = mb.original;
  ctx.inputs = ctx.given;
  ctx.sync = AutoSyncState{};
  ctx.knownCfgs.clear();
  mb.done = false;
  ctx.rerunFrom = "check inputs";
  return true;
}

} // namespace pto::link
