// HandLexer: grammar/PTO.g4's lexer rules, hand-written (see Lexer.h for why and how it is
// checked). Each rule below is a function from a start position to the length of the longest
// prefix in the rule's language; match() takes the longest of all, and among equally long
// matches the rule that comes first in the grammar, which is what ANTLR's lexer does.
#include "asm/parse/Lexer.h"

#include "PTOLexer.h"
#include "support/Text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <typeinfo>

// Under AddressSanitizer a released token's storage is poisoned until a new token is made in it:
// a read of a token after LexedTokenStream::releaseTokens is then reported, not silently given
// another token's fields.
#if defined(__SANITIZE_ADDRESS__)
#define PTO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTO_ASAN 1
#endif
#endif
#ifdef PTO_ASAN
#include <sanitizer/asan_interface.h>
#define PTO_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define PTO_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define PTO_POISON(p, n) ((void)(p), (void)(n))
#define PTO_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace pto::as {

CompactInputStream::CompactInputStream(std::string_view utf8) {
  if (utf8.starts_with("\xEF\xBB\xBF"))
    utf8.remove_prefix(3); // a byte order mark, as ANTLR drops it
  ascii_ = support::asciiPrefix(utf8) == utf8.size();
  if (ascii_) { // most modules: read in place (a widening copy was 4 bytes per input byte)
    bytes_ = utf8;
    return;
  }
  size_t n = 0;
  for (char c : utf8)
    n += (static_cast<unsigned char>(c) >> 6) != 2;
  _data.resize(n);
  char32_t* out = _data.data();
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) { // most of every module
      *out++ = c;
      ++i;
      continue;
    }
    const size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len && i + k < utf8.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
    *out++ = cp;
    i += len;
  }
}

// LA, consume and seek: ANTLRInputStream's, over the bytes of an ASCII input.
size_t CompactInputStream::LA(ssize_t i) {
  if (!ascii_) return ANTLRInputStream::LA(i);
  if (i == 0) return 0; // undefined
  const auto position = static_cast<ssize_t>(p);
  if (i < 0) {
    ++i; // LA(-1) is the character before p
    if (position + i - 1 < 0) return antlr4::IntStream::EOF;
  }
  if (position + i - 1 >= static_cast<ssize_t>(bytes_.size())) return antlr4::IntStream::EOF;
  return static_cast<unsigned char>(bytes_[static_cast<size_t>(position + i - 1)]);
}

void CompactInputStream::consume() {
  if (!ascii_) return ANTLRInputStream::consume();
  if (p >= bytes_.size()) throw antlr4::IllegalStateException("cannot consume EOF");
  ++p;
}

void CompactInputStream::seek(size_t index) {
  if (!ascii_) return ANTLRInputStream::seek(index);
  p = index <= p ? index : std::min(index, bytes_.size()); // seeking forward consumes up to there
}

std::string CompactInputStream::toString() const {
  if (!ascii_) return ANTLRInputStream::toString();
  return std::string(bytes_);
}

std::string CompactInputStream::getText(const antlr4::misc::Interval& interval) {
  // ANTLRInputStream::getText's bounds, down to its reading of an interval whose end is before
  // its start; but encoded here directly instead of through std::wstring_convert, which was a
  // visible cost of building the IR (every token's text passes through here).
  const size_t n = size();
  if (interval.a < 0 || interval.b < 0) return {};
  const size_t start = static_cast<size_t>(interval.a);
  size_t stop = static_cast<size_t>(interval.b);
  if (stop >= n) stop = n - 1;
  if (start >= n) return {};
  const size_t count = std::min(stop - start + 1, n - start);
  if (ascii_) return std::string(bytes_.substr(start, count));
  const std::u32string_view cps = std::u32string_view(_data).substr(start, count);
  size_t bytes = 0;
  for (char32_t cp : cps)
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  std::string out(bytes, '\0');
  char* p = out.data();
  for (char32_t cp : cps) {
    if (cp < 0x80) {
      *p++ = static_cast<char>(cp);
    } else if (cp < 0x800) {
      *p++ = static_cast<char>(0xC0 | (cp >> 6));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *p++ = static_cast<char>(0xE0 | (cp >> 12));
      *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *p++ = static_cast<char>(0xF0 | (cp >> 18));
      *p++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

namespace {

using L = ptogen::PTOLexer;

/// The largest code point; ANTLR's `.` and `~[...]` sets range over 0..U+10FFFF.
constexpr char32_t kMaxChar = 0x10FFFF;

struct Literal {
  std::u32string text;
  size_t type;
};

/// What the generated lexer knows and the hand-written rules must agree with: the token types
/// of the rules that are a single literal (keywords, punctuation), and each token type's rule
/// position, which breaks ties between equally long matches.
struct Tables {
  std::array<std::vector<Literal>, 128> literalsByFirst; // literals starting with that ASCII char
  std::vector<Literal> otherLiterals;                    // literals starting with non-ASCII
  std::vector<size_t> priority;                          // by token type; lower wins

  Tables() {
    antlr4::ANTLRInputStream empty;
    L lexer(&empty);
    const antlr4::atn::ATN& atn = lexer.getATN();
    const antlr4::dfa::Vocabulary& vocab = lexer.getVocabulary();
    priority.assign(vocab.getMaxTokenType() + 1, std::numeric_limits<size_t>::max());
    for (size_t rule = atn.ruleToTokenType.size(); rule-- > 0;) {
      const size_t type = atn.ruleToTokenType[rule];
      if (type < priority.size()) priority[type] = rule;
    }
    for (size_t type = 1; type <= vocab.getMaxTokenType(); ++type) {
      const std::string quoted = vocab.getLiteralName(type);
      if (quoted.empty()) continue;
      Literal lit{unquote(quoted), type};
      if (lit.text[0] < 128)
        literalsByFirst[lit.text[0]].push_back(std::move(lit));
      else
        otherLiterals.push_back(std::move(lit));
    }
  }

  /// A vocabulary literal name ('func.func') as the characters it matches. ANTLR writes a
  /// literal in the grammar's own escape syntax; the grammar's literals need none but `\\` and
  /// `\'`, and anything else is refused here rather than matched wrongly.
  static std::u32string unquote(const std::string& quoted) {
    if (quoted.size() < 3 || quoted.front() != '\'' || quoted.back() != '\'')
      throw std::logic_error("unexpected literal name " + quoted);
    std::u32string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
      char c = quoted[i];
      if (c == '\\') {
        c = quoted[++i];
        if (c != '\\' && c != '\'') throw std::logic_error("unsupported escape in " + quoted);
      }
      if (static_cast<unsigned char>(c) >= 0x80)
        throw std::logic_error("non-ASCII literal " + quoted); // would need UTF-8 decoding
      out.push_back(static_cast<char32_t>(c));
    }
    return out;
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

/// A token whose storage belongs to HandLexer's arena. The token stream owns tokens through
/// std::unique_ptr<Token> and deletes them; the class's operator delete makes that delete run
/// the destructor only, and the arena frees the memory with the lexer.
///
/// Not a CommonToken: that is 112 bytes (a std::string for text set by hand, size_t fields),
/// and tokens were half of pto-as's peak memory. The same observable token in 48 bytes: inputs
/// are at most 1 GiB (tools/pto-as.cpp, kMaxSourceBytes), so indexes, lines and columns fit 32
/// bits, and the all-ones value stands for ANTLR's size_t(-1) (EOF's type, an unset token index,
/// the stop index of EOF at offset 0); a text set by hand (nothing here does) is kept by the lexer.
class ArenaToken final : public antlr4::WritableToken {
public:
  ArenaToken(HandLexer* lexer, uint32_t chunk, size_t type, size_t start, size_t stop, size_t line,
             size_t col)
      : lexer_(lexer), type_(narrow(type)), line_(narrow(line)), col_(narrow(col)),
        start_(narrow(start)), stop_(narrow(stop)), chunk_(chunk) {}
  static void* operator new(size_t, void* where) noexcept { return where; }
  static void operator delete(void*) noexcept {}

  std::string getText() const override {
    // CommonToken::getText: its own text if set, else the input's between start and stop.
    if (hasText_) return lexer_->handText(this);
    antlr4::CharStream* input = getInputStream();
    const size_t n = input->size(), start = getStartIndex(), stop = getStopIndex();
    if (start < n && stop < n) return input->getText(antlr4::misc::Interval(start, stop));
    return "<EOF>";
  }
  size_t getType() const override { return wide(type_); }
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() const override { return col_; }
  size_t getChannel() const override { return channel_; }
  size_t getTokenIndex() const override { return wide(index_); }
  size_t getStartIndex() const override { return start_; }
  size_t getStopIndex() const override { return wide(stop_); }
  antlr4::TokenSource* getTokenSource() const override { return lexer_; }
  antlr4::CharStream* getInputStream() const override { return lexer_->getInputStream(); }
  std::string toString() const override {
    antlr4::CommonToken same(const_cast<ArenaToken*>(this));
    return same.toString();
  }
  void setText(const std::string& text) override {
    lexer_->setHandText(this, text);
    hasText_ = true;
  }
  void setType(size_t type) override { type_ = narrow(type); }
  void setLine(size_t line) override { line_ = narrow(line); }
  void setCharPositionInLine(size_t col) override { col_ = narrow(col); }
  void setChannel(size_t channel) override { channel_ = static_cast<uint16_t>(channel); }
  void setTokenIndex(size_t index) override { index_ = narrow(index); }
  uint32_t chunk() const { return chunk_; }
  bool hasText() const { return hasText_; }

private:
  static constexpr uint32_t kAllOnes = std::numeric_limits<uint32_t>::max();
  static uint32_t narrow(size_t v) {
    return v == std::numeric_limits<size_t>::max() ? kAllOnes : static_cast<uint32_t>(v);
  }
  static size_t wide(uint32_t v) { return v == kAllOnes ? std::numeric_limits<size_t>::max() : v; }

  HandLexer* lexer_;
  uint32_t type_, line_, col_, start_, stop_;
  uint32_t index_ = kAllOnes; // INVALID_INDEX until the token stream numbers it
  uint32_t chunk_;            // where in HandLexer's arena it is stored
  uint16_t channel_ = antlr4::Token::DEFAULT_CHANNEL;
  bool hasText_ = false;
};
static_assert(sizeof(ArenaToken) == 48);

// Small enough that the chunks held by the few tokens outside functions (a function's first and
// last token stay referred to by the tree around it) add little: 24 KiB.
constexpr size_t kTokensPerChunk = 512;

bool isDigit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool isUpper(char32_t c) {
  return c >= 'A' && c <= 'Z';
}
bool isHex(char32_t c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// fragment ID_START : [a-zA-Z_] ;  fragment ID_CHAR : [a-zA-Z0-9_$.] ;
bool isIdStart(char32_t c) {
  return (c >= 'a' && c <= 'z') || isUpper(c) || c == '_';
}
bool isIdChar(char32_t c) {
  return isIdStart(c) || isDigit(c) || c == '$' || c == '.';
}
// BLOCK_MNEMONIC's suffix characters: [A-Z0-9_]
bool isSuffixChar(char32_t c) {
  return isUpper(c) || isDigit(c) || c == '_';
}
bool isSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool isNotEol(char32_t c) {
  return c != '\r' && c != '\n' && c <= kMaxChar;
}

/// The longest matches of the rules, over the code points s[0..n). Every function takes the
/// position of the rule's first character and returns the end of its longest match, or 0 when
/// the rule does not match there.
/// Ch is char (an ASCII input, read in place) or char32_t (code points).
template <class Ch> struct Rules {
  const Ch* s;
  size_t n;

  static char32_t code(Ch c) {
    if constexpr (sizeof(Ch) == 1)
      return static_cast<unsigned char>(c);
    else
      return c;
  }
  /// s[k], or a value no character class contains when k is past the end.
  char32_t at(size_t k) const { return k < n ? code(s[k]) : std::numeric_limits<char32_t>::max(); }
  template <class Pred> size_t run(size_t k, Pred pred) const {
    while (k < n && pred(code(s[k])))
      ++k;
    return k;
  }
  bool startsWith(size_t k, std::u32string_view lit) const {
    if (n - k < lit.size()) return false;
    for (size_t j = 0; j < lit.size(); ++j)
      if (code(s[k + j]) != lit[j]) return false;
    return true;
  }

  // BLOCK_MNEMONIC : ('BSTART' | 'BSTOP' | 'B.' [A-Z]+) ('.' [A-Z0-9_]+)* ;
  size_t blockMnemonic(size_t i) const {
    size_t k = 0;
    if (startsWith(i, U"BSTART"))
      k = i + 6;
    else if (startsWith(i, U"BSTOP"))
      k = i + 5;
    else if (at(i + 1) == '.' && isUpper(at(i + 2)))
      k = run(i + 2, isUpper);
    else
      return 0;
    while (at(k) == '.' && isSuffixChar(at(k + 1)))
      k = run(k + 1, isSuffixChar);
    return k;
  }
  // TREG : 'T#' [0-9]+ ;
  size_t treg(size_t i) const {
    return at(i + 1) == '#' && isDigit(at(i + 2)) ? run(i + 2, isDigit) : 0;
  }
  // SHAPE : (([0-9]+ | '?') 'x')+ ;
  size_t shape(size_t i) const {
    size_t end = 0;
    for (size_t k = i;;) {
      size_t g;
      if (isDigit(at(k)))
        g = run(k, isDigit);
      else if (at(k) == '?')
        g = k + 1;
      else
        return end;
      if (at(g) != 'x') return end;
      end = k = g + 1;
    }
  }
  // fragment EXPONENT : [eE] [+-]? [0-9]+ ;
  size_t exponent(size_t k) const {
    if (at(k) != 'e' && at(k) != 'E') return 0;
    ++k;
    if (at(k) == '+' || at(k) == '-') ++k;
    return isDigit(at(k)) ? run(k, isDigit) : 0;
  }
  // FLOAT : [0-9]+ '.' [0-9]* EXPONENT? | [0-9]+ EXPONENT ;  (s[i] is a digit)
  size_t floatNumber(size_t i) const {
    const size_t d = run(i, isDigit);
    if (at(d) == '.') {
      const size_t f = run(d + 1, isDigit);
      const size_t e = exponent(f);
      return e ? e : f;
    }
    return exponent(d);
  }
  // INT : '0x' [0-9a-fA-F]+ | [0-9]+ ;  (s[i] is a digit)
  size_t intNumber(size_t i) const {
    if (at(i) == '0' && at(i + 1) == 'x' && isHex(at(i + 2))) return run(i + 2, isHex);
    return run(i, isDigit); // never longer than the hex form when that matches
  }
  // ID_CHAR+ after one leading character (VALUE_ID, SYMBOL, CARET_ID).
  size_t idCharsAfter(size_t i) const {
    const size_t k = run(i + 1, isIdChar);
    return k > i + 1 ? k : 0;
  }
  // STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;
  size_t string(size_t i) const {
    if (at(i) != '"') return 0;
    for (size_t j = i + 1; j < n;) {
      const char32_t c = code(s[j]);
      if (c == '"') return j + 1;
      if (c == '\r' || c == '\n' || c > kMaxChar) return 0;
      if (c == '\\') {
        if (j + 1 >= n || code(s[j + 1]) > kMaxChar) return 0;
        j += 2;
      } else {
        ++j;
      }
    }
    return 0;
  }
  // LOC : 'loc(' LOC_PART* ')' ;
  // fragment LOC_PART : ~[()"\r\n] | '"' (~["\\\r\n] | '\\' .)* '"' | '(' LOC_PART* ')' ;
  // The parentheses are counted (a LOC_PART inside a string is skipped by string()).
  size_t location(size_t i) const {
    if (!startsWith(i, U"loc(")) return 0;
    size_t depth = 1;
    for (size_t j = i + 4; j < n;) {
      const char32_t c = code(s[j]);
      if (c == '\r' || c == '\n' || c > kMaxChar) return 0;
      if (c == '"') {
        j = string(j);
        if (j == 0) return 0;
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) return j + 1;
      ++j;
    }
    return 0;
  }
  // BANG_TYPE : '!' ID_START ID_CHAR* '<' (~[<>\-] | '-' ~[>])* '>' ;  (k: after ID_CHAR*)
  size_t bangTypeParams(size_t k) const {
    if (at(k) != '<') return 0;
    for (size_t j = k + 1; j < n;) {
      const char32_t c = code(s[j]);
      if (c == '>') return j + 1;
      if (c == '<' || c > kMaxChar) return 0;
      if (c == '-') {
        if (j + 1 >= n || code(s[j + 1]) == '>' || code(s[j + 1]) > kMaxChar) return 0;
        j += 2;
      } else {
        ++j;
      }
    }
    return 0;
  }
};

} // namespace

HandLexer::HandLexer(CompactInputStream& input)
    : input_(&input), ascii_(input.ascii()), bytes_(input.bytes()), codePoints_(input.codePoints()),
      size_(input.size()) {
  (void)tables(); // fail here, not in the middle of a parse, if the vocabulary is unexpected
}

HandLexer::~HandLexer() {
  for (Chunk& chunk : chunks_)
    PTO_UNPOISON(chunk.memory.get(), kTokensPerChunk * sizeof(ArenaToken));
}

antlr4::TokenFactory<antlr4::CommonToken>* HandLexer::getTokenFactory() {
  // For the tokens the parser's error recovery conjures up; heap tokens, as PTOLexer's.
  return antlr4::CommonTokenFactory::DEFAULT.get();
}

namespace {

template <class Ch> std::pair<size_t, size_t> longestMatch(const Rules<Ch>& r, size_t i) {
  const Tables& tab = tables();
  const char32_t c = r.at(i);
  struct {
    size_t type, len;
  } best{0, 0};
  size_t bestPriority = std::numeric_limits<size_t>::max();
  auto offer = [&](size_t type, size_t end) {
    if (end <= i) return;
    const size_t len = end - i;
    const size_t priority = tab.priority[type];
    if (len > best.len || (len == best.len && priority < bestPriority)) {
      best = {type, len};
      bestPriority = priority;
    }
  };
  for (const Literal& lit : c < 128 ? tab.literalsByFirst[c] : tab.otherLiterals)
    if (r.startsWith(i, lit.text)) offer(lit.type, i + lit.text.size());

  if (isIdStart(c)) {
    const size_t end = r.run(i + 1, isIdChar);
    offer(L::IDENT, end);
    if (c == 'B') offer(L::BLOCK_MNEMONIC, r.blockMnemonic(i));
    if (c == 'T') offer(L::TREG, r.treg(i));
    if (c == 'l') offer(L::LOC, r.location(i));
  } else if (isDigit(c)) {
    offer(L::INT, r.intNumber(i));
    offer(L::FLOAT, r.floatNumber(i));
    offer(L::SHAPE, r.shape(i));
  } else {
    switch (c) {
    case '?':
      offer(L::SHAPE, r.shape(i));
      break;
    case '%':
      offer(L::VALUE_ID, r.idCharsAfter(i));
      break;
    case '@': // SYMBOL : '@' (ID_CHAR+ | STRING) ;
      offer(L::SYMBOL, r.idCharsAfter(i));
      offer(L::SYMBOL, r.string(i + 1));
      break;
    case '^':
      offer(L::CARET_ID, r.idCharsAfter(i));
      break;
    case '#':
      // HASH_NUM : '#' [0-9]+ ;  HASH_ID : '#' ID_START ID_CHAR* ;
      if (isDigit(r.at(i + 1))) offer(L::HASH_NUM, r.run(i + 1, isDigit));
      if (isIdStart(r.at(i + 1))) offer(L::HASH_ID, r.run(i + 2, isIdChar));
      // HASH_COMMENT : '#' ([ \t] ~[\r\n]*)? -> skip ;
      offer(L::HASH_COMMENT,
            r.at(i + 1) == ' ' || r.at(i + 1) == '\t' ? r.run(i + 2, isNotEol) : i + 1);
      break;
    case '!': // BANG_TYPE and BANG_ID : '!' ID_START ID_CHAR* ;
      if (isIdStart(r.at(i + 1))) {
        const size_t k = r.run(i + 2, isIdChar);
        offer(L::BANG_ID, k);
        offer(L::BANG_TYPE, r.bangTypeParams(k));
      }
      break;
    case '"':
      offer(L::STRING, r.string(i));
      break;
    case '/': // LINE_COMMENT : '//' ~[\r\n]* -> skip ;
      if (r.at(i + 1) == '/') offer(L::LINE_COMMENT, r.run(i + 2, isNotEol));
      break;
    case ';': // SEMI_COMMENT : ';' ~[\r\n]* -> skip ;
      offer(L::SEMI_COMMENT, r.run(i + 1, isNotEol));
      break;
    case ' ':
    case '\t':
    case '\r':
    case '\n': // WS : [ \t\r\n]+ -> skip ;
      offer(L::WS, r.run(i, isSpace));
      break;
    default:
      break;
    }
  }
  if (c <= kMaxChar) offer(L::ANY, i + 1); // ANY : . ;
  return {best.type, best.len};
}

} // namespace

HandLexer::Match HandLexer::match(size_t i) const {
  // The rules read bytes where the input is ASCII, code points otherwise.
  if (ascii_) {
    const auto [type, len] = longestMatch(Rules<char>{bytes_.data(), bytes_.size()}, i);
    return {type, len};
  }
  const auto [type, len] = longestMatch(Rules<char32_t>{codePoints_.data(), codePoints_.size()}, i);
  return {type, len};
}

void HandLexer::advance(size_t len) {
  // As ANTLR counts: a line per '\n', a column per code point.
  auto step = [&](auto text) {
    for (const size_t end = pos_ + len; pos_ < end; ++pos_) {
      if (text[pos_] == '\n') {
        ++line_;
        col_ = 0;
      } else {
        ++col_;
      }
    }
  };
  if (ascii_)
    step(bytes_);
  else
    step(codePoints_);
}

std::unique_ptr<antlr4::Token> HandLexer::makeToken(size_t type, size_t start, size_t stop,
                                                    size_t line, size_t col) {
  if (chunks_.empty() || chunkUsed_ == kTokensPerChunk) {
    if (!spareChunks_.empty()) {
      const uint32_t reused = spareChunks_.back();
      spareChunks_.pop_back();
      chunks_[reused].spare = false;
      useChunk(reused);
    } else {
      // Not zeroed: every slot is constructed before use.
      chunks_.push_back(
          {std::make_unique_for_overwrite<std::byte[]>(kTokensPerChunk * sizeof(ArenaToken))});
      useChunk(static_cast<uint32_t>(chunks_.size() - 1));
    }
  }
  Chunk& chunk = chunks_[filling_];
  std::byte* slot = chunk.memory.get() + chunkUsed_++ * sizeof(ArenaToken);
  PTO_UNPOISON(slot, sizeof(ArenaToken));
  ++chunk.live;
  return std::unique_ptr<antlr4::Token>(
      new (slot) ArenaToken(this, filling_, type, start, stop, line, col));
}

void HandLexer::useChunk(uint32_t next) {
  // The chunk filled so far is spare at once if its tokens were all released while it filled.
  if (next != filling_ && filling_ < chunks_.size()) spareIfFree(filling_);
  filling_ = next;
  chunkUsed_ = 0;
}

void HandLexer::spareIfFree(uint32_t c) {
  Chunk& chunk = chunks_[c];
  if (chunk.live != 0 || chunk.spare || c == filling_) return;
  chunk.spare = true;
  spareChunks_.push_back(c);
}

void HandLexer::release(antlr4::Token* token) {
  // Only this lexer's tokens reach here (the stream holds nothing else); the token is not
  // destroyed (it owns nothing): its slot is simply made again later.
  auto* t = static_cast<ArenaToken*>(token);
  if (t->hasText()) handTexts_.erase(t);
  const uint32_t chunk = t->chunk();
  PTO_POISON(t, sizeof(ArenaToken));
  --chunks_[chunk].live;
  spareIfFree(chunk);
}

void HandLexer::rewind() {
  pos_ = 0;
  line_ = 1;
  col_ = 0;
  handTexts_.clear();
  spareChunks_.clear();
  for (uint32_t c = 0; c < chunks_.size(); ++c) {
    chunks_[c].live = 0;
    chunks_[c].spare = true;
    spareChunks_.push_back(c);
    PTO_POISON(chunks_[c].memory.get(), kTokensPerChunk * sizeof(ArenaToken));
  }
  chunkUsed_ = kTokensPerChunk; // the next token takes a spare chunk
}

std::unique_ptr<antlr4::Token> HandLexer::nextToken() {
  for (;;) {
    const size_t start = pos_, line = line_, col = col_;
    // EOF: start at the end, stop one before it, text "<EOF>" (CommonToken's, from the indexes).
    if (start >= size_) return makeToken(antlr4::Token::EOF, start, start - 1, line, col);
    const Match m = match(start);
    if (m.len == 0) {
      // No rule matches (a code point past U+10FFFF): reported and skipped as ANTLR's lexer
      // reports and skips it, with the character written out as UTF-8 would encode it.
      if (listener_) {
        const char32_t cp = codePoints_[start]; // never in ASCII input
        std::string shown;
        for (int shift = 18; shift >= 0; shift -= 6)
          shown.push_back(static_cast<char>(((cp >> shift) & 0x3f) | (shift == 18 ? 0xf0 : 0x80)));
        listener_->syntaxError(nullptr, nullptr, line, col,
                               "token recognition error at: '" + shown + "'", nullptr);
      }
      advance(1);
      continue;
    }
    advance(m.len);
    switch (m.type) {
    case L::LINE_COMMENT:
    case L::HASH_COMMENT:
    case L::SEMI_COMMENT:
    case L::WS:
      continue; // the grammar's `-> skip` rules
    default:
      return makeToken(m.type, start, start + m.len - 1, line, col);
    }
  }
}

size_t tokenTextBytes(antlr4::Token* token) {
  // CommonToken::getText of a token without text of its own: the input's text from start to
  // stop, one byte per code point when the input is ASCII.
  if (typeid(*token) == typeid(ArenaToken)) {
    const auto* in = static_cast<const CompactInputStream*>(token->getInputStream());
    const size_t start = token->getStartIndex(), stop = token->getStopIndex();
    if (in->ascii() && start <= stop && stop < in->bytes().size() &&
        token->getType() != antlr4::Token::EOF)
      return stop - start + 1;
  }
  return token->getText().size();
}

} // namespace pto::as
