#include "link/Rewrite.h"

#include "asm/mc/Blocks.h"
#include "link/Patch.h"
#include "support/Text.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace pto::link {

OffsetMap::OffsetMap(std::vector<std::pair<uint64_t, uint64_t>> sizes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < sizes.size();) {
    uint64_t off = sizes[i].first, here = 0;
    for (; i < sizes.size() && sizes[i].first == off; ++i)
      here += sizes[i].second;
    at_.push_back(off);
    prefix_.push_back(sum);
    sum += here;
  }
  at_.push_back(UINT64_MAX);
  prefix_.push_back(sum);
}

uint64_t OffsetMap::before(uint64_t off) const {
  size_t i = static_cast<size_t>(std::lower_bound(at_.begin(), at_.end(), off) - at_.begin());
  return off + prefix_[i];
}

uint64_t OffsetMap::after(uint64_t off) const {
  size_t i = static_cast<size_t>(std::upper_bound(at_.begin(), at_.end(), off) - at_.begin());
  return off + prefix_[i];
}

namespace {} // namespace

namespace {

/// The blocks of inserted words, decoded once per distinct byte string (inserted sync is a few
/// patterns repeated): the graph a decoder finds in them, placed at offset 0.
class InsertedBlocks {
public:
  /// nullptr when the bytes are not whole blocks that fall through (the caller then decodes the
  /// rewritten function instead).
  const FunctionCfg* of(std::span<const uint8_t> bytes) {
    auto [it, fresh] = cache_.try_emplace(std::string(bytes.begin(), bytes.end()));
    if (fresh) it->second = decode(bytes);
    return it->second ? &*it->second : nullptr;
  }

private:
  static std::optional<FunctionCfg> decode(std::span<const uint8_t> bytes) {
    if (bytes.empty()) return std::nullopt;
    // Whole blocks: the first word starts one and the last stops it, so the blocks around the
    // insertion open and close as they did without it.
    obj::code::BlockScanner scan(bytes, 0, bytes.size());
    bool first = true, stopped = false;
    while (const obj::code::Word* w = scan.next()) {
      if (first && !w->inst.formInfo().startsBlock()) return std::nullopt;
      first = false;
      stopped = w->inst.formInfo().stopsBlock();
    }
    if (scan.error() || !stopped) return std::nullopt;
    auto cfg = decodeCfg(bytes, 0, bytes.size(), "", 0);
    auto* g = std::get_if<FunctionCfg>(&cfg);
    if (!g || !g->uses.empty()) return std::nullopt;
    for (const Block& b : g->blocks)
      if (b.transfer != Transfer::Fall) return std::nullopt;
    return std::move(*g);
  }

  std::unordered_map<std::string, std::optional<FunctionCfg>> cache_; // by the bytes
};

/// Whether the first word at `offset` is a Stop word (one that opens a block only because it is
/// the first word of its function: after inserted blocks it joins the last of them).
bool stopWordAt(const std::vector<uint8_t>& text, uint64_t offset, uint64_t end) {
  obj::code::BlockScanner scan(text, offset, end); // the one decoder, its first word only
  const obj::code::Word* w = scan.next();
  return !w || w->inst.formInfo().stopsBlock();
}

} // namespace

namespace {

/// One insertion as the rewrite reads it, from either representation: its bytes, and its
/// relocations, lines and GM accesses (an Insertion's, or a pattern insertion's one Event
/// relocation).
struct Item {
  uint64_t offset = 0;
  std::span<const uint8_t> bytes;
  const Insertion* full = nullptr; // relocations, lines and GM accesses from here, else:
  uint32_t function = 0;
  int32_t event = -1;
  bool entry = true;
};

std::variant<Relaid, std::string> rewrite(const obj::ObjectFile& in, const std::vector<Item>& items,
                                          uint64_t eventWord,
                                          std::span<const FunctionCfg* const> known);

} // namespace

std::variant<obj::ObjectFile, std::string> insertWords(const obj::ObjectFile& in,
                                                       std::vector<Insertion> ins) {
  auto r = insertWords(in, std::move(ins), {});
  if (auto* e = std::get_if<std::string>(&r)) return std::move(*e);
  return std::move(std::get<Relaid>(r).obj);
}

std::variant<Relaid, std::string> insertWords(const obj::ObjectFile& in,
                                              std::vector<Insertion> unsorted,
                                              std::span<const FunctionCfg* const> known) {
  std::vector<Item> items;
  items.reserve(unsorted.size());
  for (const Insertion& i : unsorted)
    items.push_back({i.offset, i.bytes, &i, 0, -1, i.entry});
  return rewrite(in, items, 0, known);
}

uint32_t PatternInsertions::pattern(const std::vector<uint8_t>& bytes) {
  for (size_t k = 0; k < patterns.size(); ++k) // a few: set, wait and barrier blocks
    if (patterns[k] == bytes) return static_cast<uint32_t>(k);
  patterns.push_back(bytes);
  return static_cast<uint32_t>(patterns.size() - 1);
}

std::variant<Relaid, std::string> insertWords(const obj::ObjectFile& in,
                                              const PatternInsertions& pi,
                                              std::span<const FunctionCfg* const> known) {
  std::vector<Item> items;
  items.reserve(pi.insertions.size());
  for (const PatternInsertion& i : pi.insertions)
    items.push_back({i.offset, pi.patterns[i.pattern], nullptr, i.function, i.event, i.entry});
  return rewrite(in, items, pi.eventWord, known);
}

namespace {

/// The insertions sorted by offset (fall-through-only ones first at one offset).
std::vector<const Item*> sortedItems(const std::vector<Item>& items) {
  // Sorted by reference: moving pointers costs less than moving items.
  std::vector<const Item*> ins;
  ins.reserve(items.size());
  for (const Item& i : items)
    ins.push_back(&i);
  std::stable_sort(ins.begin(), ins.end(), [](const Item* a, const Item* b) {
    return a->offset != b->offset ? a->offset < b->offset : (!a->entry && b->entry);
  });
  return ins;
}

std::vector<std::pair<uint64_t, uint64_t>> sizesOf(const std::vector<const Item*>& ins) {
  std::vector<std::pair<uint64_t, uint64_t>> sizes;
  sizes.reserve(ins.size());
  for (const Item* i : ins)
    sizes.push_back({i->offset, i->bytes.size()});
  return sizes;
}

/// One rewrite of an object: the words, relocations, lines and GM accesses moved and the inserted
/// ones added (copy), then each function's branches re-aimed and, where it can, its graph derived
/// (relay).
class Rewriter {
public:
  Rewriter(const obj::ObjectFile& in, const std::vector<Item>& items, uint64_t eventWord,
           std::span<const FunctionCfg* const> known)
      : in_(in), eventWord_(eventWord), known_(known), ins_(sortedItems(items)),
        sizes_(sizesOf(ins_)), map_(sizes_) {}

  std::variant<Relaid, std::string> run() {
    for (const Item* i : ins_)
      if (i->offset > in_.text.size())
        return "insertion at " + support::hex0x(i->offset) + " is past the end of .text";
    copy();
    // Functions and their branches.
    result_.cfgs.resize(in_.functions.size());
    for (size_t f = 0; f < in_.functions.size(); ++f)
      if (!(in_.functions[f].flags & obj::kDeclaration))
        if (auto e = relay(f)) return *e;
    return std::move(result_);
  }

private:
  size_t firstAt(uint64_t off) const {
    return static_cast<size_t>(
        std::lower_bound(ins_.begin(), ins_.end(), off,
                         [](const Item* a, uint64_t o) { return a->offset < o; }) -
        ins_.begin());
  }
  /// Where a branch to an old offset lands: after the fall-through-only insertions there.
  uint64_t target(uint64_t off) const {
    uint64_t t = map_.before(off);
    for (size_t k = firstAt(off); k < ins_.size() && ins_[k]->offset == off && !ins_[k]->entry; ++k)
      t += ins_[k]->bytes.size();
    return t;
  }

  /// The words with the insertions, the relocations, lines and GM accesses moved, the inserted ones
  /// added.
  void copy() {
    obj::ObjectFile& out = result_.obj;
    out = in_;
    size_t newRelocs = 0;
    for (const Item* i : ins_)
      newRelocs += i->full ? i->full->relocs.size() : i->event >= 0;
    out.relocs.reserve(in_.relocs.size() + newRelocs);
    out.text.clear();
    out.text.reserve(in_.text.size() +
                     (sizes_.empty() ? 0 : map_.after(in_.text.size()) - in_.text.size()));
    uint64_t copied = 0; // in.text bytes copied so far
    for (const Item* i : ins_) {
      out.text.insert(out.text.end(), in_.text.begin() + static_cast<ptrdiff_t>(copied),
                      in_.text.begin() + static_cast<ptrdiff_t>(i->offset));
      copied = i->offset;
      uint64_t at = out.text.size();
      out.text.insert(out.text.end(), i->bytes.begin(), i->bytes.end());
      if (!i->full) {
        if (i->event >= 0) {
          obj::Reloc r;
          r.offset = at + eventWord_;
          r.type = obj::RelocType::Event;
          r.function = i->function;
          r.index = static_cast<uint32_t>(i->event);
          out.relocs.push_back(std::move(r));
        }
        continue;
      }
      for (obj::Reloc r : i->full->relocs) {
        r.offset += at;
        out.relocs.push_back(std::move(r));
      }
      for (obj::LineEntry l : i->full->lines) {
        l.textOffset += at;
        out.lines.push_back(std::move(l));
      }
      for (obj::GmAccess g : i->full->gmAccesses) {
        g.textOffset += at;
        out.gmAccesses.push_back(g);
      }
    }
    out.text.insert(out.text.end(), in_.text.begin() + static_cast<ptrdiff_t>(copied),
                    in_.text.end());
    for (size_t k = 0; k < in_.relocs.size(); ++k)
      out.relocs[k].offset = map_.after(in_.relocs[k].offset);
    moveByOffset(in_.lines, result_.obj.lines);
    moveByOffset(in_.gmAccesses, result_.obj.gmAccesses);
  }

  /// A table keyed by text offset (line entries, GM access records): `out` is `old` followed by
  /// the inserted records (already at their new offsets); the old ones move after the insertions
  /// at their offset (with the word they name), then the table is sorted.
  template <class Record>
  void moveByOffset(const std::vector<Record>& old, std::vector<Record>& out) const {
    for (size_t k = 0; k < old.size(); ++k)
      out[k].textOffset = map_.after(old[k].textOffset);
    // Stably by offset. The moved records keep their order (the map is monotonic), so when they
    // were sorted, merging the inserted ones in gives the same order as sorting the whole table.
    auto byOffset = [](const Record& a, const Record& b) { return a.textOffset < b.textOffset; };
    const auto mid = out.begin() + static_cast<ptrdiff_t>(old.size());
    if (std::is_sorted(out.begin(), mid, byOffset)) {
      std::stable_sort(mid, out.end(), byOffset);
      std::inplace_merge(out.begin(), mid, out.end(), byOffset);
    } else {
      std::stable_sort(out.begin(), out.end(), byOffset);
    }
  }

  /// Function f moved, its branches re-aimed, its graph derived from the known one.
  std::optional<std::string> relay(size_t f) {
    const obj::Function& fn = in_.functions[f];
    obj::ObjectFile& out = result_.obj;
    const uint64_t start = fn.textOffset, end = fn.textOffset + fn.textSize;
    out.functions[f].textOffset = map_.before(start);
    out.functions[f].textSize = map_.before(end) - map_.before(start);
    auto patch = [&](uint64_t offset, uint64_t oldTarget) -> std::optional<std::string> {
      if (oldTarget < start || oldTarget >= end) return std::nullopt;
      uint64_t newPos = map_.after(offset), newTarget = target(oldTarget);
      PatchResult p =
          patchWord(out.text, newPos, PatchField::Label,
                    (static_cast<int64_t>(newTarget) - static_cast<int64_t>(newPos)) / 2);
      if (p.ok()) return std::nullopt;
      return "@" + fn.name + ": the branch at " + support::hex0x(offset) +
             " cannot reach its target after inserting words" +
             (p.status == PatchStatus::DoesNotEncode ? ": " + p.detail : std::string());
    };
    const FunctionCfg* cfg = f < known_.size() ? known_[f] : nullptr;
    if (!cfg) {
      obj::code::BlockScanner scan(in_.text, start, end);
      while (scan.next()) {
      }
      for (const obj::code::BlockWords& b : scan.blocks()) {
        if (b.transfer != obj::code::Transfer::Direct && b.transfer != obj::code::Transfer::Cond)
          continue;
        if (auto e = patch(b.offset, *b.target)) return *e;
      }
      if (const auto& e = scan.error())
        return "@" + fn.name + ": cannot decode the word at " + support::hex0x(e->offset) + ": " +
               e->message;
      return std::nullopt;
    }
    for (const Block& b : cfg->blocks)
      if ((b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) && b.target >= 0)
        if (auto e = patch(b.offset, static_cast<uint64_t>(b.target))) return *e;
    result_.cfgs[f] = graphAfter(fn, *cfg);
    return std::nullopt;
  }

  /// The graph after the insertion: each old block moved, preceded by the blocks inserted in
  /// front of it (fall-through-only ones first, as in the words); nullopt to decode instead.
  std::optional<FunctionCfg> graphAfter(const obj::Function& fn, const FunctionCfg& cfg) {
    const uint64_t start = fn.textOffset, end = fn.textOffset + fn.textSize;
    if (cfg.blocks.empty()) return std::nullopt;
    size_t k = firstAt(start);
    if (k < ins_.size() && ins_[k]->offset == start && stopWordAt(in_.text, start, end))
      return std::nullopt;
    FunctionCfg g;
    g.blocks.reserve(cfg.blocks.size() + (firstAt(end) - k)); // sync blocks: one each
    g.uses.reserve(cfg.uses.size());
    for (const Block& b : cfg.blocks) {
      if (k < ins_.size() && ins_[k]->offset < b.offset) // inside a block: decode instead
        return std::nullopt;
      uint64_t pos = map_.before(b.offset);
      for (; k < ins_.size() && ins_[k]->offset == b.offset; ++k) {
        const FunctionCfg* t = inserted_.of(ins_[k]->bytes);
        if (!t) return std::nullopt;
        for (Block nb : t->blocks) {
          nb.offset += pos, nb.end += pos;
          if (nb.eventWord != UINT64_MAX) nb.eventWord += pos;
          g.blocks.push_back(nb);
        }
        pos += ins_[k]->bytes.size();
      }
      g.blocks.push_back(moved(b, pos, start, end));
      if (b.kind == BlockKind::Tile) { // as buildCfg numbers them
        g.blocks.back().firstUse = static_cast<uint32_t>(g.uses.size());
        for (const TileUse& u : cfg.usesOf(b))
          g.uses.push_back(u);
      }
    }
    if (k < ins_.size() && ins_[k]->offset < end) return std::nullopt;
    if (connectBlocks(g, "@" + fn.name)) return std::nullopt;
    return g;
  }

  /// Block `b` of a function [start, end) at its new place `pos`.
  Block moved(const Block& b, uint64_t pos, uint64_t start, uint64_t end) const {
    Block nb = b;
    nb.offset = pos;
    nb.end = pos + (b.end - b.offset);
    if (nb.eventWord != UINT64_MAX) nb.eventWord = nb.eventWord - b.offset + pos;
    if (b.target >= 0) {
      const auto t = static_cast<uint64_t>(b.target);
      const bool branch = b.transfer == Transfer::Direct || b.transfer == Transfer::Cond;
      // A patched branch lands on the target's new place; other labels (calls) keep their
      // distance, as the unpatched word does.
      nb.target = branch && t >= start && t < end
                      ? static_cast<int64_t>(target(t))
                      : static_cast<int64_t>(pos) + (b.target - static_cast<int64_t>(b.offset));
    }
    return nb;
  }

  const obj::ObjectFile& in_;
  const uint64_t eventWord_;
  std::span<const FunctionCfg* const> known_;
  const std::vector<const Item*> ins_;
  const std::vector<std::pair<uint64_t, uint64_t>> sizes_;
  const OffsetMap map_;
  InsertedBlocks inserted_;
  Relaid result_;
};

std::variant<Relaid, std::string> rewrite(const obj::ObjectFile& in, const std::vector<Item>& items,
                                          uint64_t eventWord,
                                          std::span<const FunctionCfg* const> known) {
  return Rewriter(in, items, eventWord, known).run();
}

} // namespace

} // namespace pto::link
