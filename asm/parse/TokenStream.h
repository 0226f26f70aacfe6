// The token stream the parser reads HandLexer's tokens from.
//
// ANTLR's CommonTokenStream finds the k-th token ahead by walking the tokens one by one (in case
// some are on another channel), and checks each token it fetches with a dynamic_cast before
// numbering it: with the parser and its predictions asking for lookahead several times per
// token, that was a twentieth of all instructions of assembling a large module. HandLexer puts
// every token on the default channel (the grammar's only other tokens are skipped) and makes only
// WritableTokens, so the k-th token ahead is simply the one k - 1 places on, once fetched.
// LexedTokenStream takes these shortcuts while they hold and otherwise leaves every call to
// CommonTokenStream, so it behaves as a CommonTokenStream over the same lexer in every respect
// (tests/unit/ParserTest.cpp compares them).
#pragma once

#include "antlr4-runtime.h"
#include "asm/parse/Lexer.h"

#include <cstddef>

namespace pto::as {

class LexedTokenStream final : public antlr4::CommonTokenStream {
public:
  explicit LexedTokenStream(HandLexer& lexer) : CommonTokenStream(&lexer), lexer_(lexer) {}

  antlr4::Token* LT(ssize_t k) override;
  size_t LA(ssize_t i) override;
  void consume() override;

  /// Tokens [first, last] will never be asked for again (a function the builder is done with):
  /// their storage goes back to the lexer, and get() of them is no longer allowed. A parse
  /// that must start over (two-stage parsing) calls relexFromStart() instead of seek(0).
  void releaseTokens(size_t first, size_t last);
  /// Forgets every token and lexes again from the start of the input (as seek(0) on a fresh
  /// stream): tokens are made on demand, exactly as the first time.
  void relexFromStart();

protected:
  size_t fetch(size_t n) override;

private:
  /// The token k places on from the current one (k >= 1) if it has been fetched and the
  /// shortcut holds, else null.
  antlr4::Token* fetchedAhead(ssize_t k) const {
    const size_t i = _p + static_cast<size_t>(k) - 1;
    return k > 0 && allOnChannel_ && isInitialized() && i < _tokens.size() ? _tokens[i].get()
                                                                           : nullptr;
  }
  HandLexer& lexer_;
  bool allOnChannel_ = true; // every token fetched is on the stream's channel
};

} // namespace pto::as
