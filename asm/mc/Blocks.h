// The one decoder of a function's block structure (docs/abi.md, "Blocks"): the words of a .text
// range decoded once (isa::enc, with the extension space) and grouped into blocks, each with what
// happens at its end. Which words start and stop blocks, where they branch and what they call is
// the Flow column of the command-form table (isa/Encoding.def); nothing here matches form names.
// The linker (link/Cfg.cpp, link/Rewrite.cpp) uses it on objects, asm/mc/ImageCode.h on images for
// the runtime and the C++ export; each adds only what its words mean to it.
#pragma once

#include "isa/Encoding.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pto::obj::code {

/// What happens at the end of a block: fall through, branch (Cond: when the block's setc
/// condition holds), return, call (then fall through), or a computed branch or call, which no
/// tool here follows (each refuses it with its own words).
enum class Transfer : uint8_t { Fall, Direct, Cond, Ret, Call, Indirect };

/// What a block holds: scalar code, one tile op, or one extension control op (sync, block index).
enum class BlockKind : uint8_t { Scalar, Tile, Control };

/// One decoded word of a function.
struct Word {
  uint64_t offset = 0; // .text offset
  uint32_t size = 0;   // bytes: 2, 4, 6 or 8
  isa::enc::Inst inst;
};

/// One block: the words of [offset, end). A block opens at a start word (Flow other than None and
/// Stop) or, with no block open, at any other word (code after a BSTOP, or at the function's
/// start); it closes at a Stop word or where the next block opens. A Stop word with no block open
/// belongs to the range of the block before it.
struct BlockWords {
  uint64_t offset = 0, end = 0;
  bool hasStart = false; // the first word is a start word (else the block is implicit: Fall)
  BlockKind kind = BlockKind::Scalar;
  /// Control blocks: the start word's op (its CTL field: SET_FLAG, WAIT_FLAG, PIPE_BARRIER, ...).
  isa::enc::ExtCtl control = isa::enc::ExtCtl::None;
  Transfer transfer = Transfer::Fall;
  /// Direct, Cond and Call: the start word's offset plus its Label field's byte offset (not
  /// checked here: a consumer decides what a target must be).
  std::optional<uint64_t> target;
  uint32_t firstWord = 0, numWords = 0; // in FunctionWords::words
};

struct FunctionWords {
  std::vector<Word> words;        // in address order
  std::vector<BlockWords> blocks; // in address order, covering the words without gaps

  std::span<const Word> wordsOf(const BlockWords& b) const {
    return {words.data() + b.firstWord, b.numWords};
  }
  /// The start word of `b`, or nullptr for an implicit block.
  const Word* startOf(const BlockWords& b) const {
    return b.hasStart ? &words[b.firstWord] : nullptr;
  }
  /// The index of the block that opens at `offset`, or nullopt.
  std::optional<size_t> blockStartingAt(uint64_t offset) const;
};

/// A word that does not decode: where, and the decoder's reason.
struct WordError {
  uint64_t offset = 0;
  std::string message;
};

/// The blocks of a .text range. Decoding stops at the first word that does not decode: `error`
/// says where and why, and `code` holds every word and block before it, so that a consumer that
/// checks the words in address order still reports the first problem first.
struct DecodedBlocks {
  FunctionWords code;
  std::optional<WordError> error;
};

/// Decodes [begin, end) of `text` (a function's words; the caller checks the range lies in it).
DecodedBlocks decodeBlocks(std::span<const uint8_t> text, uint64_t begin, uint64_t end);

/// The same decoding one word at a time, for a consumer that reads each word as it comes and keeps
/// none (the linker: a decoded word is ~100 bytes, and a function of 200k words decoded whole costs
/// its page faults). The blocks are decodeBlocks's; the words are not kept.
class BlockScanner {
public:
  /// [begin, end) of `text`, as decodeBlocks.
  BlockScanner(std::span<const uint8_t> text, uint64_t begin, uint64_t end)
      : text_(text), pos_(begin), end_(end) {}
  /// The next word, or nullptr at the end of the range or at a word that does not decode (then
  /// error() says where and why, and the range ends there). Valid until the next call.
  const Word* next();
  /// The last word opened a block: blocks().back(), whose `end` is set once the next block opens
  /// (or at the end: after next() returned nullptr).
  bool opened() const { return opened_; }
  std::vector<BlockWords>& blocks() { return blocks_; }
  const std::optional<WordError>& error() const { return error_; }

private:
  /// A word decoded before on this thread (same bytes), or nullptr; sets `consumed` on a hit.
  static const isa::enc::Inst* cachedDecode(std::span<const uint8_t> bytes, size_t& consumed);
  static void remember(std::span<const uint8_t> bytes, const isa::enc::Inst& inst);

  std::span<const uint8_t> text_;
  uint64_t pos_, end_;
  bool isOpen_ = false; // a block is open (no Stop word since its start)
  bool opened_ = false;
  Word word_;
  std::vector<BlockWords> blocks_;
  std::optional<WordError> error_;
};

} // namespace pto::obj::code
