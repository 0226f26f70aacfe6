// The differential check of the hand-written lexer (asm/parse/Lexer.h) against the lexer ANTLR
// generates from grammar/PTO.g4: both lex the same text and every token is compared (type,
// channel, start/stop index, line, column, text), and so are the lexer errors reported. Shared by
// tests/unit/LexerTest.cpp and the libFuzzer target tests/fuzz/fuzz_lexer.cpp.
#pragma once

#include "PTOLexer.h"
#include "asm/parse/Lexer.h"

#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace pto::test {

struct LexedToken {
  size_t type, channel, start, stop, line, col;
  std::string text;
  bool operator==(const LexedToken&) const = default;
};

struct Lexed {
  std::vector<LexedToken> tokens;
  std::vector<std::string> errors; // "line:col: message", in order
};

/// Records what a lexer reports to its error listeners.
class ErrorRecorder : public antlr4::BaseErrorListener {
public:
  explicit ErrorRecorder(std::vector<std::string>& out) : out_(out) {}
  void syntaxError(antlr4::Recognizer*, antlr4::Token*, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    out_.push_back(std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
  }

private:
  std::vector<std::string>& out_;
};

inline void drain(antlr4::TokenSource& source, Lexed& out) {
  for (;;) {
    std::unique_ptr<antlr4::Token> t = source.nextToken();
    out.tokens.push_back({t->getType(), t->getChannel(), t->getStartIndex(), t->getStopIndex(),
                          t->getLine(), t->getCharPositionInLine(), t->getText()});
    if (t->getType() == antlr4::Token::EOF) return;
  }
}

/// The generated lexer's tokens, over the input stream parseModule uses.
inline Lexed lexWithAntlr(std::string_view utf8) {
  Lexed out;
  as::CompactInputStream input(utf8);
  ptogen::PTOLexer lexer(&input);
  ErrorRecorder errors(out.errors);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&errors);
  drain(lexer, out);
  // The lexer's DFA is shared by all instances and grows with every new input (the fuzzer).
  auto* sim = lexer.getInterpreter<antlr4::atn::LexerATNSimulator>();
  if (sim->getDFA(0).states.size() > 20000) sim->clearDFA();
  return out;
}

inline Lexed lexWithHand(std::string_view utf8) {
  Lexed out;
  as::CompactInputStream input(utf8);
  as::HandLexer lexer(input);
  ErrorRecorder errors(out.errors);
  lexer.setErrorListener(&errors);
  drain(lexer, out);
  return out;
}

inline std::string describe(const LexedToken& t) {
  std::ostringstream s;
  s << "type " << t.type << " channel " << t.channel << " [" << t.start << ", "
    << static_cast<long long>(t.stop) << "] at " << t.line << ":" << t.col << " text '" << t.text
    << "'";
  return s.str();
}

/// Empty when both lexers agree on `utf8`, else where they first differ.
inline std::string lexerDifference(std::string_view utf8) {
  const Lexed a = lexWithAntlr(utf8), h = lexWithHand(utf8);
  for (size_t i = 0; i < a.tokens.size() || i < h.tokens.size(); ++i) {
    if (i >= a.tokens.size()) return "extra token " + describe(h.tokens[i]);
    if (i >= h.tokens.size()) return "missing token " + describe(a.tokens[i]);
    if (!(a.tokens[i] == h.tokens[i]))
      return "token " + std::to_string(i) + ": ANTLR " + describe(a.tokens[i]) + ", hand " +
             describe(h.tokens[i]);
  }
  if (a.errors != h.errors) {
    std::string s = "errors differ:\nANTLR:";
    for (const auto& e : a.errors)
      s += "\n  " + e;
    s += "\nhand:";
    for (const auto& e : h.errors)
      s += "\n  " + e;
    return s;
  }
  return {};
}

/// Whether `s` is UTF-8 as parseModule accepts it (no overlong forms, surrogates or code points
/// past U+10FFFF): only such text ever reaches a lexer. Written independently of the front end's
/// own check.
inline bool validUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len;
    char32_t cp, min;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

} // namespace pto::test
