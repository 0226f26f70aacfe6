// The block assembly lexer (BlockAsmImpl.h): comments, address prefixes, header and label lines,
// the mnemonics the encoding tables know, integers, and directive tokens with quoted strings.
#include "asm/mc/BlockAsmImpl.h"
#include "isa/Encoding.h"

#include <cctype>
#include <charconv>

namespace pto::as::blockasm {

namespace enc = isa::enc;

bool istartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && iequals(s.substr(0, p.size()), p);
}
bool isHex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

std::string upper(std::string_view v) {
  std::string r(v);
  for (char& c : r)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

std::optional<uint64_t> parseU64(std::string_view t) {
  if (t.empty()) return std::nullopt;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}
std::optional<int64_t> parseI64(std::string_view t) {
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  auto u = parseU64(t);
  if (!u || *u > static_cast<uint64_t>(INT64_MAX) + (neg ? 1 : 0)) return std::nullopt;
  return neg ? static_cast<int64_t>(0 - *u) : static_cast<int64_t>(*u);
}

size_t codeEnd(std::string_view line) {
  bool inQuote = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (inQuote) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inQuote = false;
    } else if (c == '"') {
      inQuote = true;
    } else if (c == ';' || (c == '/' && i + 1 < line.size() && line[i + 1] == '/')) {
      return i;
    }
  }
  return line.size();
}

size_t addressPrefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && isHex(s[i]))
    ++i;
  if (i == 0 || i >= s.size() || s[i] != ':') return 0;
  if (i + 1 < s.size() && !isSpace(s[i + 1])) return 0;
  return i + 1;
}

bool isHeaderLine(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  constexpr std::string_view kMark = ":     file format elf64-pto (";
  size_t at = s.rfind(kMark);
  if (at == std::string_view::npos || at == 0 || isSpace(s[0]) || s.back() != ')') return false;
  std::string_view arch = s.substr(at + kMark.size(), s.size() - 1 - (at + kMark.size()));
  return isa::parseArch(arch).has_value();
}

std::optional<std::string_view> labelOf(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && isHex(s[i]))
    ++i;
  while (i < s.size() && isSpace(s[i]))
    ++i;
  if (i >= s.size() || s[i] != '<' || s.size() < i + 3 || s.substr(s.size() - 2) != ">:")
    return std::nullopt;
  return s.substr(i + 1, s.size() - i - 3);
}

namespace {

/// Mnemonics the word layer knows, upper-cased (first word of the canonical text).
const std::set<std::string>& knownMnemonics() {
  static const std::set<std::string> names = [] {
    std::set<std::string> s;
    for (const enc::FormInfo& f : enc::allForms())
      if (!f.mnemonic().empty() && f.mnemonic()[0] != '@' &&
          f.mnemonic().find('$') == std::string_view::npos)
        s.insert(upper(f.mnemonic()));
    for (const char* extra :
         {"BSTART.VEC", "BSTART.SFU", "BSTART.TEPL", "BSTART.EXT", "B.CATR", "B.HINT"})
      s.insert(extra);
    return s;
  }();
  return names;
}

} // namespace

bool isKnownMnemonic(const std::string& head) {
  if (knownMnemonics().count(head)) return true;
  static const std::vector<std::string> prefixes = [] {
    std::vector<std::string> v;
    for (const enc::FormInfo& f : enc::allForms())
      if (size_t d = f.mnemonic().find('$'); d != std::string_view::npos && d > 0)
        v.push_back(upper(f.mnemonic().substr(0, d)));
    return v;
  }();
  for (const std::string& p : prefixes)
    if (head.size() > p.size() && head.compare(0, p.size(), p) == 0) return true;
  return false;
}

bool tokenize(std::string_view line, size_t begin, std::vector<Token>& out, std::string& err,
              uint32_t& errCol) {
  size_t i = begin;
  while (true) {
    while (i < line.size() && isSpace(line[i]))
      ++i;
    if (i >= line.size()) return true;
    Token t;
    t.col = static_cast<uint32_t>(i + 1);
    size_t start = i;
    size_t q = i;
    if ((line[q] == '@' || line[q] == '%') && q + 1 < line.size() && line[q + 1] == '"') {
      t.value += line[q];
      ++q;
    }
    if (q < line.size() && line[q] == '"') {
      t.quoted = true;
      i = q + 1;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i];
        if (c == '"') {
          closed = true;
          ++i;
          break;
        }
        if (c == '\\') {
          if (i + 1 >= line.size()) break;
          char e = line[i + 1];
          if (e == 'x') {
            if (i + 3 >= line.size() || !isHex(line[i + 2]) || !isHex(line[i + 3])) {
              err = "bad \\x escape";
              errCol = static_cast<uint32_t>(i + 1);
              return false;
            }
            t.value +=
                static_cast<char>(std::stoi(std::string(line.substr(i + 2, 2)), nullptr, 16));
            i += 4;
            continue;
          }
          if (e == 'n')
            t.value += '\n';
          else if (e == 't')
            t.value += '\t';
          else
            t.value += e;
          i += 2;
          continue;
        }
        t.value += c;
        ++i;
      }
      if (!closed) {
        err = "unterminated string";
        errCol = static_cast<uint32_t>(start + 1);
        return false;
      }
      while (i < line.size() && !isSpace(line[i]))
        t.suffix += line[i++];
    } else {
      while (i < line.size() && !isSpace(line[i]))
        t.value += line[i++];
    }
    t.len = static_cast<uint32_t>(i - start);
    out.push_back(std::move(t));
  }
}

} // namespace pto::as::blockasm
