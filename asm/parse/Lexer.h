// The front end's lexer. grammar/PTO.g4 stays the one definition of the syntax and ANTLR still
// generates the parser and a lexer from it (ptogen::PTOLexer), but pto-as lexes with HandLexer:
// ANTLR 4.9's lexer interpreter (a lock per DFA transition, a heap token per token, virtual
// calls per character) was over a third of all instructions of assembling a large module.
//
// HandLexer produces exactly the token stream PTOLexer produces: the same token types, text,
// start/stop indexes, lines and columns, the same skipped whitespace and comments, and the same
// longest match with the grammar's rule order breaking ties. The types of keyword and
// punctuation tokens are read from the generated lexer's vocabulary and the rule order from its
// ATN, so they cannot drift from the grammar; the other rules are written out below and are
// checked against PTOLexer by tests/unit/LexerTest.cpp (every .pto file in the repository and
// the corpus, and many random inputs) and by the libFuzzer target tests/fuzz/fuzz_lexer.cpp.
#pragma once

#include "antlr4-runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pto::as {

/// The input as ANTLR's lexer and tokens see it: one index per code point. ANTLR 4.9's own
/// UTF-8 decoder leaves a buffer of five code points per input byte (20 bytes of memory for each
/// byte of source, measured). Here an ASCII input (most modules) is read in place, one byte per
/// code point, and any other input is decoded (it is valid UTF-8, checked before) into exactly one
/// char32_t per character. A byte order mark is dropped, as ANTLR drops it. Every CharStream
/// call answers as ANTLRInputStream's would over the same text (tests/unit/LexerTest.cpp).
/// An ASCII `utf8` must outlive the stream.
class CompactInputStream : public antlr4::ANTLRInputStream {
public:
  explicit CompactInputStream(std::string_view utf8);
  bool ascii() const { return ascii_; }
  /// The text, when ascii(): index i is byte i.
  std::string_view bytes() const { return bytes_; }
  /// The code points, when not ascii().
  std::u32string_view codePoints() const { return _data; }

  size_t size() override { return ascii_ ? bytes_.size() : _data.size(); }
  size_t LA(ssize_t i) override;
  size_t LT(ssize_t i) override { return LA(i); }
  void consume() override;
  void seek(size_t index) override;
  /// The same text as ANTLRInputStream::getText gives, for valid code points.
  std::string getText(const antlr4::misc::Interval& interval) override;
  std::string toString() const override;

private:
  bool ascii_ = false;     // every code point is below 0x80
  std::string_view bytes_; // the text, when ascii_ (then _data is empty)
};

/// An antlr4::TokenSource equivalent to ptogen::PTOLexer over the same input (see above).
/// Tokens live in an arena owned by the lexer: the token stream that receives them must be
/// destroyed before the lexer (declare the lexer first).
class HandLexer final : public antlr4::TokenSource {
public:
  explicit HandLexer(CompactInputStream& input);
  ~HandLexer() override;
  HandLexer(const HandLexer&) = delete;
  HandLexer& operator=(const HandLexer&) = delete;

  /// Receives "token recognition error" reports as PTOLexer's listeners would. Valid UTF-8 never
  /// causes one (the grammar's ANY rule matches every code point), so this only matters for
  /// code points past U+10FFFF, which parseModule rejects before lexing.
  void setErrorListener(antlr4::ANTLRErrorListener* listener) { listener_ = listener; }

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() override { return col_; }
  antlr4::CharStream* getInputStream() override { return input_; }
  std::string getSourceName() override { return input_->getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken>* getTokenFactory() override;

  /// The text of a token of this lexer set by hand (WritableToken::setText); tokens keep none.
  void setHandText(const antlr4::Token* token, const std::string& text) {
    handTexts_[token] = text;
  }
  const std::string& handText(const antlr4::Token* token) const { return handTexts_.at(token); }

  /// A token of this lexer that nothing refers to any more (LexedTokenStream::releaseTokens):
  /// its storage is reused once every token stored beside it is released too, so the tokens of a
  /// large module need not all be in memory at once.
  void release(antlr4::Token* token);
  /// Starts again at the beginning of the input with every token's storage free. Only when no
  /// token of this lexer is referred to any more (LexedTokenStream::relexFromStart).
  void rewind();
  /// Chunks of token storage allocated so far (for tests: released storage is reused).
  size_t chunksAllocated() const { return chunks_.size(); }

private:
  struct Match {
    size_t type;
    size_t len; // 0: no rule matches
  };
  Match match(size_t at) const;
  void advance(size_t len);
  std::unique_ptr<antlr4::Token> makeToken(size_t type, size_t start, size_t stop, size_t line,
                                           size_t col);

  CompactInputStream* input_;
  // The input, as bytes when it is ASCII (index i is byte i), else as code points.
  bool ascii_;
  std::string_view bytes_;
  std::u32string_view codePoints_;
  size_t size_; // in code points
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t col_ = 0;
  antlr4::ANTLRErrorListener* listener_ = nullptr;
  // Token storage: fixed-size chunks, freed with the lexer. A chunk whose tokens are all
  // released is reused for new tokens.
  struct Chunk {
    std::unique_ptr<std::byte[]> memory;
    size_t live = 0;    // tokens made in it and not released
    bool spare = false; // in spareChunks_
  };
  void useChunk(uint32_t chunk);
  void spareIfFree(uint32_t chunk);
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> spareChunks_; // all released, not the one being filled
  uint32_t filling_ = 0;              // the chunk new tokens go to (when chunks_ is not empty)
  size_t chunkUsed_ = 0;              // slots of it taken
  std::unordered_map<const antlr4::Token*, std::string> handTexts_;
};

/// The length in bytes of a token's text (its getText().size()), without making the text when
/// the token is HandLexer's and the input is ASCII: every source location takes one.
size_t tokenTextBytes(antlr4::Token* token);

} // namespace pto::as
