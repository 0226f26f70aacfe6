// Inserting command words into an object's .text (docs/sync.md, "Re-laying out a function").
// Every .text offset that the object records moves with the words: function ranges,
// relocations, line entries, GM access records, and the byte offsets of the intra-function
// branches (BSTART DIRECT/COND and their compact forms, measured from the BSTART word).
#pragma once

#include "link/Cfg.h"
#include "obj/Object.h"

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace pto::link {

struct Insertion {
  uint64_t offset = 0; // .text offset of the word the new words go in front of
  /// true: a branch to `offset` lands on the inserted words (they run on every path into the
  /// word at `offset`); false: such a branch skips them (they run only when control falls
  /// through from the preceding word). At one offset, fall-through-only insertions come first.
  bool entry = true;
  std::vector<uint8_t> bytes;
  std::vector<obj::Reloc> relocs;        // offsets relative to the start of `bytes`
  std::vector<obj::LineEntry> lines;     // offsets relative to the start of `bytes`
  std::vector<obj::GmAccess> gmAccesses; // offsets relative to the start of `bytes`
};

/// Where an old .text offset goes: `before` counts every insertion at a smaller offset, plus
/// (for `after`) every insertion at the offset itself.
class OffsetMap {
public:
  explicit OffsetMap(
      std::vector<std::pair<uint64_t, uint64_t>> sortedSizes); // (offset, bytes), sorted
  uint64_t before(uint64_t off) const;
  uint64_t after(uint64_t off) const;

private:
  std::vector<uint64_t> at_, prefix_; // prefix_[i]: bytes inserted at offsets < at_[i]
};

/// Returns `obj` with the insertions applied (in offset order; equal offsets keep their order
/// within the fall-through-only and the entry group). An insertion must be at a word boundary
/// inside a function, or at its start. Fails when a branch no longer reaches its target with
/// its encoding (a compact C.BSTART with a short offset).
std::variant<obj::ObjectFile, std::string> insertWords(const obj::ObjectFile& obj,
                                                       std::vector<Insertion> insertions);

/// insertWords with the graphs of the object's functions (`known[f]`: buildCfg's graph of
/// function f, or nullptr): their branches are read from the graph instead of decoding the words
/// again, and their graphs after the insertion are derived from it (`cfgs[f]`, equal to what
/// buildCfg finds in the result) when every insertion in the function is whole blocks in front of
/// one of its blocks. Otherwise `cfgs[f]` is empty: decode the result.
struct Relaid {
  obj::ObjectFile obj;
  std::vector<std::optional<FunctionCfg>> cfgs;
};
std::variant<Relaid, std::string> insertWords(const obj::ObjectFile& obj,
                                              std::vector<Insertion> insertions,
                                              std::span<const FunctionCfg* const> known);

/// Insertions of a few byte strings repeated many times (the blocks --auto-sync inserts), held
/// compactly: each names its bytes in `patterns` and has at most one relocation, an Event
/// relocation (of `function`, naming event `event`) on the word at byte `eventWord` of its bytes.
/// No lines: inserted words take the line of the word before them. No GM access records.
struct PatternInsertion {
  uint64_t offset = 0;
  uint32_t pattern = 0;  // index into PatternInsertions::patterns
  uint32_t function = 0; // the Event relocation's function
  int32_t event = -1;    // the Event relocation's event (-1: no relocation)
  bool entry = true;     // as Insertion::entry
};
struct PatternInsertions {
  std::vector<std::vector<uint8_t>> patterns;
  std::vector<PatternInsertion> insertions;
  uint64_t eventWord = 4; // the B.DIM word after the 32-bit BSTART.EXT of a sync block
  /// The index of `bytes` in `patterns`, added when new.
  uint32_t pattern(const std::vector<uint8_t>& bytes);
};

/// insertWords with the insertions held as patterns (the same result as with the equivalent
/// Insertion list, in the same order).
std::variant<Relaid, std::string> insertWords(const obj::ObjectFile& obj,
                                              const PatternInsertions& insertions,
                                              std::span<const FunctionCfg* const> known);

} // namespace pto::link
