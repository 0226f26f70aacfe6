// LexedTokenStream: see TokenStream.h.
#include "asm/parse/TokenStream.h"

#include <memory>
#include <utility>

namespace pto::as {

antlr4::Token* LexedTokenStream::LT(ssize_t k) {
  // CommonTokenStream::LT walks k - 1 on-channel tokens on from the current one.
  if (antlr4::Token* t = fetchedAhead(k)) return t;
  return CommonTokenStream::LT(k);
}

size_t LexedTokenStream::LA(ssize_t i) {
  if (antlr4::Token* t = fetchedAhead(i)) return t->getType();
  return CommonTokenStream::LA(i);
}

void LexedTokenStream::consume() {
  // With the next token fetched and on the channel, CommonTokenStream::consume only steps to it.
  if (fetchedAhead(2) != nullptr) {
    ++_p;
    return;
  }
  CommonTokenStream::consume();
}

void LexedTokenStream::releaseTokens(size_t first, size_t last) {
  for (size_t i = first; i <= last && i < _tokens.size(); ++i)
    if (_tokens[i]) lexer_.release(_tokens[i].release()); // the lexer keeps the storage
}

void LexedTokenStream::relexFromStart() {
  setTokenSource(&lexer_); // drops every token, to be fetched again from the start
  lexer_.rewind();
  allOnChannel_ = true;
}

size_t LexedTokenStream::fetch(size_t n) {
  // BufferedTokenStream::fetch, without its dynamic_cast: HandLexer's tokens are WritableTokens.
  if (_fetchedEOF) return 0;
  for (size_t i = 0; i < n;) {
    std::unique_ptr<antlr4::Token> t = lexer_.nextToken();
    static_cast<antlr4::WritableToken*>(t.get())->setTokenIndex(_tokens.size());
    allOnChannel_ = allOnChannel_ && t->getChannel() == channel;
    const bool eof = t->getType() == antlr4::Token::EOF;
    _tokens.push_back(std::move(t));
    ++i;
    if (eof) {
      _fetchedEOF = true;
      return i;
    }
  }
  return n;
}

} // namespace pto::as
