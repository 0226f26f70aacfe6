#include "asm/BlockAsm.h"

#include "asm/Disasm.h"
#include "isa/Encoding.h"
#include "obj/Extent.h"
#include "obj/Numbers.h"

#include <cctype>
#include <charconv>
#include <map>
#include <set>

namespace pto::as {

namespace enc = isa::enc;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}
bool istartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && iequals(s.substr(0, p.size()), p);
}
bool isHex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/// Unsigned integer: decimal or 0x hex.
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

/// The end of the code part of a line: the first `;` or `//` outside a quoted string.
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

/// Length of an address prefix "hex:" followed by white space or the end; 0 if none.
size_t addressPrefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && isHex(s[i]))
    ++i;
  if (i == 0 || i >= s.size() || s[i] != ':') return 0;
  if (i + 1 < s.size() && !isSpace(s[i + 1])) return 0;
  return i + 1;
}

/// The header pto-objdump prints for each file: "<file>:     file format elf64-pto (<arch>)",
/// the whole line (a line that merely contains the words is code and is assembled).
bool isHeaderLine(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  constexpr std::string_view kMark = ":     file format elf64-pto (";
  size_t at = s.rfind(kMark);
  if (at == std::string_view::npos || at == 0 || isSpace(s[0]) || s.back() != ')') return false;
  std::string_view arch = s.substr(at + kMark.size(), s.size() - 1 - (at + kMark.size()));
  return isa::parseArch(arch).has_value();
}

/// "<name>:" optionally after an address ("0000000000000000 <vadd>:").
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

/// Whether `head` (upper-cased) names a form: a fixed mnemonic, or one whose mnemonic holds type
/// fields (`fadd.$SrcType` is `FADD.` followed by the type).
bool isKnownMnemonic(const std::string& head);

/// Mnemonics the word layer knows, upper-cased (first word of the canonical text).
const std::set<std::string>& knownMnemonics() {
  static const std::set<std::string> names = [] {
    std::set<std::string> s;
    auto up = [](std::string_view v) {
      std::string r(v);
      for (char& c : r)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return r;
    };
    for (const enc::FormInfo& f : enc::allForms())
      if (!f.mnemonic().empty() && f.mnemonic()[0] != '@' &&
          f.mnemonic().find('$') == std::string_view::npos)
        s.insert(up(f.mnemonic()));
    for (const char* extra :
         {"BSTART.VEC", "BSTART.SFU", "BSTART.TEPL", "BSTART.EXT", "B.CATR", "B.HINT"})
      s.insert(extra);
    return s;
  }();
  return names;
}

bool isKnownMnemonic(const std::string& head) {
  if (knownMnemonics().count(head)) return true;
  static const std::vector<std::string> prefixes = [] {
    std::vector<std::string> v;
    for (const enc::FormInfo& f : enc::allForms())
      if (size_t d = f.mnemonic().find('$'); d != std::string_view::npos && d > 0) {
        std::string p(f.mnemonic().substr(0, d));
        for (char& c : p)
          c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        v.push_back(p);
      }
    return v;
  }();
  for (const std::string& p : prefixes)
    if (head.size() > p.size() && head.compare(0, p.size(), p) == 0) return true;
  return false;
}
std::string upper(std::string_view v) {
  std::string r(v);
  for (char& c : r)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// ---------------------------------------------------------------- directive tokens
struct Token {
  std::string value; // unescaped; a quoted name keeps its sigil: @"a b" -> "@a b"
  uint32_t col = 0;  // 1-based
  uint32_t len = 0;
  bool quoted = false;
  std::string suffix; // text right after a closing quote (".loc "f":3:4" -> ":3:4")
};

/// Splits the code part of a line at white space; "..." strings (optionally after a sigil)
/// are one token. Returns false with `err` set on an unterminated string or a bad escape.
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

// ---------------------------------------------------------------- the assembler
struct PendingFunction {
  obj::Function fn;
  uint32_t line = 0;
  SrcLoc loc;
  uint64_t start = 0;
  bool hasWords = false;
  std::optional<uint64_t> explicitOffset;
  SrcLoc offsetLoc;
  std::map<uint32_t, obj::TileDesc> tiles;
  std::map<uint32_t, SrcLoc> tileLocs;
};

struct PendingReloc {
  size_t index; // into obj.relocs
  SrcLoc loc;
  SrcLoc targetLoc;
  std::string eventName; // Event by name: resolved at the end
  bool byName = false;
};

class Assembler {
public:
  Assembler(const SourceFile& src, DiagEngine& diags) : src_(src), diags_(diags) {}

  std::optional<obj::ObjectFile> run() {
    unsigned before = diags_.errors();
    for (uint32_t ln = 1; ln <= src_.numLines(); ++ln)
      line(ln);
    finishFunction();
    resolve();
    if (diags_.errors() != before) return std::nullopt;
    return std::move(obj_);
  }

private:
  const SourceFile& src_;
  DiagEngine& diags_;
  obj::ObjectFile obj_;
  std::optional<PendingFunction> cur_;
  std::set<std::string> names_;
  std::vector<PendingReloc> relocs_;
  bool reportedNoFunction_ = false;
  uint32_t ln_ = 0;

  SrcLoc at(uint32_t col, uint32_t len) const {
    return SrcLoc{ln_, col == 0 ? 1 : col, len == 0 ? 1 : len};
  }
  SrcLoc at(const Token& t) const { return at(t.col, t.len); }
  void error(SrcLoc loc, const std::string& msg) { diags_.error(loc, msg); }

  bool needFunction(SrcLoc loc, const std::string& what) {
    if (cur_) return true;
    if (!reportedNoFunction_)
      error(loc, what + " before any .function directive (missing .function)");
    reportedNoFunction_ = true;
    return false;
  }

  void line(uint32_t ln) {
    ln_ = ln;
    std::string_view full = src_.lineText(ln);
    std::string_view code = full.substr(0, codeEnd(full));
    size_t b = 0;
    while (b < code.size() && isSpace(code[b]))
      ++b;
    size_t e = code.size();
    while (e > b && isSpace(code[e - 1]))
      --e;
    if (b == e) return;
    std::string_view s = code.substr(b, e - b);
    if (isHeaderLine(s)) return;
    if (auto label = labelOf(s)) {
      if (needFunction(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())), "label"))
        if (*label != quoteName('@', cur_->fn.name).substr(1))
          error(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())),
                "label <" + std::string(*label) + "> does not name the current function " +
                    quoteName('@', cur_->fn.name));
      return;
    }
    if (s[0] == '.') {
      directive(code, b);
      return;
    }
    size_t textBegin = b;
    std::vector<uint8_t> hexBytes;
    uint32_t hexCol = 0, hexLen = 0;
    if (size_t a = addressPrefix(s)) {
      // Address column (ignored), then an optional hex column of 2/4/8-digit groups.
      size_t i = b + a;
      while (true) {
        while (i < e && isSpace(code[i]))
          ++i;
        size_t j = i;
        while (j < e && !isSpace(code[j]))
          ++j;
        std::string_view tok = code.substr(i, j - i);
        bool group = (tok.size() == 2 || tok.size() == 4 || tok.size() == 8) && j < e;
        for (char c : tok)
          group = group && isHex(c);
        if (!group) break;
        if (!hexCol) hexCol = static_cast<uint32_t>(i + 1);
        hexLen = static_cast<uint32_t>(j - hexCol + 1);
        uint32_t v = static_cast<uint32_t>(std::stoul(std::string(tok), nullptr, 16));
        for (size_t k = 0; k < tok.size() / 2; ++k)
          hexBytes.push_back(static_cast<uint8_t>(v >> (8 * k)));
        i = j;
      }
      textBegin = i;
      if (textBegin >= e) {
        error(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())),
              "missing instruction text after the address");
        return;
      }
    }
    std::string_view text = code.substr(textBegin, e - textBegin);
    SrcLoc textLoc = at(static_cast<uint32_t>(textBegin + 1), static_cast<uint32_t>(text.size()));
    std::vector<uint8_t> bytes;
    if (text[0] == '.') {
      if (!data(code, textBegin, bytes)) return;
    } else if (!instruction(text, textBegin, bytes)) {
      return;
    }
    if (!needFunction(textLoc, "instruction")) return;
    if (hexCol && hexBytes != bytes) {
      // Show the encoding in the grouping of the hex column (little-endian groups).
      std::string want;
      size_t pos = 0;
      for (size_t g = hexCol - 1; g < hexCol - 1 + hexLen && pos < bytes.size();) {
        size_t j = g;
        while (j < code.size() && !isSpace(code[j]))
          ++j;
        size_t n = std::min((j - g) / 2, bytes.size() - pos);
        if (!want.empty()) want += ' ';
        for (size_t k = n; k-- > 0;)
          want += hexByte(bytes[pos + k]);
        pos += n;
        g = j;
        while (g < code.size() && isSpace(code[g]))
          ++g;
      }
      for (; pos < bytes.size(); ++pos)
        want += " " + hexByte(bytes[pos]);
      error(at(hexCol, hexLen), "hex column '" + std::string(code.substr(hexCol - 1, hexLen)) +
                                    "' disagrees with the encoding of '" + std::string(text) +
                                    "' (" + want + ")");
      return;
    }
    cur_->hasWords = true;
    obj_.text.insert(obj_.text.end(), bytes.begin(), bytes.end());
  }

  static std::string hexByte(uint8_t x) {
    static const char* d = "0123456789abcdef";
    return std::string{d[x >> 4], d[x & 15]};
  }

  bool instruction(std::string_view text, size_t col0, std::vector<uint8_t>& bytes) {
    size_t sp = 0;
    while (sp < text.size() && !isSpace(text[sp]))
      ++sp;
    std::string_view head = text.substr(0, sp);
    SrcLoc headLoc = at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(head.size()));
    if (!isKnownMnemonic(upper(head))) {
      error(headLoc, "unknown mnemonic '" + std::string(head) + "'");
      return false;
    }
    auto inst = enc::parse(text, enc::DecodeOptions{.extensions = true});
    if (!inst) {
      operandError(text, col0, head);
      return false;
    }
    auto word = enc::encode(*inst);
    if (!word) {
      error(at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(text.size())),
            "bad field value: " + word.error());
      return false;
    }
    if (inst->formInfo().group == enc::FormGroup::Ext) obj_.usesExtensions = true;
    for (unsigned k = 0; k < word->bits / 8; ++k)
      bytes.push_back(static_cast<uint8_t>(word->value >> (8 * k)));
    return true;
  }

  /// Explains why canonical text does not parse: the tile op or DataType of a tile start, else
  /// the expected operand shapes of the mnemonic.
  void operandError(std::string_view text, size_t col0, std::string_view head) {
    SrcLoc whole = at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(text.size()));
    // Operands: comma-separated after the mnemonic.
    struct Operand {
      std::string_view text;
      size_t col;
    };
    std::vector<Operand> ops;
    size_t i = head.size();
    while (i < text.size()) {
      while (i < text.size() && (isSpace(text[i]) || text[i] == ','))
        ++i;
      size_t j = i;
      while (j < text.size() && text[j] != ',')
        ++j;
      size_t k = j;
      while (k > i && isSpace(text[k - 1]))
        --k;
      if (k > i) ops.push_back({text.substr(i, k - i), col0 + i + 1});
      i = j;
    }
    auto opLoc = [&](const Operand& o) {
      return at(static_cast<uint32_t>(o.col), static_cast<uint32_t>(o.text.size()));
    };
    std::string h = upper(head);
    if (h == "BSTART.VEC" || h == "BSTART.SFU" || h == "BSTART.EXT") {
      if (ops.empty())
        return error(whole, "'" + std::string(head) + "' needs a tile op and a DataType");
      bool control = h == "BSTART.EXT" &&
                     (isa::parsePipe(ops.size() > 1 ? ops[1].text : "PIPE_S") || ops.size() == 1);
      if (!control && !enc::findTileOp(ops[0].text))
        return error(opLoc(ops[0]), "unknown tile op '" + std::string(ops[0].text) + "'");
      if (!control && ops.size() > 1 && !enc::parseDataType(ops[1].text))
        return error(opLoc(ops[1]), "unknown DataType '" + std::string(ops[1].text) + "'");
      if (!control && ops.size() < 2)
        return error(whole, "'" + std::string(head) + "' needs a DataType after the tile op");
      return error(whole, "invalid operands for '" + std::string(head) +
                              "' (wrong engine for the op, or a reserved "
                              "selector/DataType)");
    }
    std::string expected;
    for (const enc::FormInfo& f : enc::allForms())
      if (iequals(f.mnemonic(), head) && !f.syntax.empty() && f.syntax[0] != '@') {
        if (expected.size() > 300) break;
        expected += (expected.empty() ? "" : " or ") + ("'" + std::string(f.syntax) + "'");
      }
    error(whole, "invalid operands for '" + std::string(head) + "'" +
                     (expected.empty() ? "" : "; expected " + expected));
  }

  /// .word / .short / .byte values (raw data in .text).
  bool data(std::string_view code, size_t begin, std::vector<uint8_t>& bytes) {
    std::vector<Token> toks;
    std::string err;
    uint32_t errCol = 0;
    if (!tokenize(code, begin, toks, err, errCol)) {
      error(at(errCol, 1), err);
      return false;
    }
    const Token& d = toks[0];
    unsigned size = d.value == ".word"                          ? 4
                    : d.value == ".short" || d.value == ".half" ? 2
                    : d.value == ".byte"                        ? 1
                                                                : 0;
    if (!size) {
      error(at(d), "unknown data directive '" + d.value + "' (expected .word, .short or .byte)");
      return false;
    }
    if (toks.size() < 2) {
      error(at(d), "'" + d.value + "' needs a value");
      return false;
    }
    for (size_t i = 1; i < toks.size(); ++i) {
      std::string v = toks[i].value;
      if (i + 1 < toks.size() && !v.empty() && v.back() == ',') v.pop_back();
      auto n = parseU64(v);
      if (!n || (size < 8 && *n >> (8 * size))) {
        error(at(toks[i]), "bad " + d.value + " value '" + toks[i].value + "'");
        return false;
      }
      for (unsigned k = 0; k < size; ++k)
        bytes.push_back(static_cast<uint8_t>(*n >> (8 * k)));
    }
    return true;
  }

  // ---------------------------------------------------------------- directives
  void directive(std::string_view code, size_t begin) {
    std::vector<Token> t;
    std::string err;
    uint32_t errCol = 0;
    if (!tokenize(code, begin, t, err, errCol)) {
      error(at(errCol, 1), err);
      return;
    }
    const std::string& d = t[0].value;
    if (d == ".arch") return archDirective(t);
    if (d == ".extensions") {
      if (t.size() > 2 || (t.size() == 2 && t[1].value != enc::kExtensionName))
        return error(at(t.size() > 1 ? t[1] : t[0]),
                     "expected '.extensions " + std::string(enc::kExtensionName) + "'");
      obj_.usesExtensions = true;
      return;
    }
    if (d == ".function") return functionDirective(t);
    if (d == ".param") return paramDirective(t);
    if (d == ".tile") return tileDirective(t);
    if (d == ".event") return eventDirective(t);
    if (d == ".reloc") return relocDirective(t);
    if (d == ".loc") return locDirective(t);
    if (d == ".word" || d == ".short" || d == ".half" || d == ".byte") {
      std::vector<uint8_t> bytes;
      if (!data(code, begin, bytes)) return;
      if (!needFunction(at(t[0]), "data")) return;
      cur_->hasWords = true;
      obj_.text.insert(obj_.text.end(), bytes.begin(), bytes.end());
      return;
    }
    error(at(t[0]), "unknown directive '" + d + "'");
  }

  bool expectCount(const std::vector<Token>& t, size_t min, const std::string& usage) {
    if (t.size() >= min) return true;
    const Token& last = t.back();
    error(at(last.col + last.len, 1), "expected " + usage);
    return false;
  }

  /// A name token with the given sigil (@name, %name, @"quoted").
  std::optional<std::string> name(const Token& tok, char sigil) {
    if (tok.value.empty() || tok.value[0] != sigil || (!tok.quoted && tok.value.size() < 2) ||
        !tok.suffix.empty()) {
      error(at(tok), std::string("expected a name starting with '") + sigil + "'");
      return std::nullopt;
    }
    return tok.value.substr(1);
  }

  void archDirective(const std::vector<Token>& t) {
    if (!expectCount(t, 2, "an arch (a2a3 or a5)")) return;
    auto a = isa::parseArch(t[1].value);
    if (!a) return error(at(t[1]), "unknown arch '" + t[1].value + "' (expected a2a3 or a5)");
    if (t.size() > 2) return error(at(t[2]), "unexpected '" + t[2].value + "'");
    obj_.arch = *a;
  }

  void functionDirective(const std::vector<Token>& t) {
    finishFunction();
    if (!expectCount(t, 2, "a function name (@name)")) return;
    auto n = name(t[1], '@');
    if (!n) return;
    PendingFunction pf;
    pf.fn.name = *n;
    pf.line = ln_;
    pf.loc = at(t[1]);
    pf.start = obj_.text.size();
    if (!names_.insert(*n).second) error(at(t[1]), "duplicate function " + quoteName('@', *n));
    for (size_t i = 2; i < t.size(); ++i) {
      const std::string& v = t[i].value;
      auto keyed = [&](std::string_view key) -> std::optional<std::string_view> {
        if (v.size() > key.size() && v.compare(0, key.size(), key) == 0 && v[key.size()] == '=')
          return std::string_view(v).substr(key.size() + 1);
        return std::nullopt;
      };
      if (v == "entry")
        pf.fn.flags |= obj::kEntry;
      else if (v == "private")
        pf.fn.flags |= obj::kPrivate;
      else if (v == "declaration")
        pf.fn.flags |= obj::kDeclaration;
      else if (v == "kernel=vector")
        pf.fn.flags |= obj::kKernelVector;
      else if (v == "kernel=cube")
        pf.fn.flags |= obj::kKernelCube;
      else if (auto f = keyed("frame")) {
        auto x = parseU64(*f);
        if (!x || *x > obj::kMaxFrameSize)
          error(at(t[i]), "bad frame size '" + std::string(*f) + "' (at most " +
                              std::to_string(obj::kMaxFrameSize) + " bytes)");
        else
          pf.fn.frameSize = static_cast<uint32_t>(*x);
      } else if (auto f = keyed("flags")) {
        auto x = parseU64(*f);
        if (!x || *x > UINT32_MAX)
          error(at(t[i]), "bad flags '" + std::string(*f) + "'");
        else
          pf.fn.flags |= static_cast<uint32_t>(*x);
      } else if (auto f = keyed("offset")) {
        auto x = parseU64(*f);
        if (!x)
          error(at(t[i]), "bad offset '" + std::string(*f) + "'");
        else {
          pf.explicitOffset = *x;
          pf.offsetLoc = at(t[i]);
        }
      } else {
        error(at(t[i]), "unknown function attribute '" + v +
                            "' (expected entry, private, declaration, kernel=vector|cube, frame=N, "
                            "flags=N, offset=N)");
      }
    }
    cur_ = std::move(pf);
  }

  void finishFunction() {
    if (!cur_) return;
    PendingFunction& pf = *cur_;
    obj::Function& f = pf.fn;
    if (pf.hasWords) {
      f.textOffset = pf.start;
      f.textSize = obj_.text.size() - pf.start;
      if (pf.explicitOffset)
        error(pf.offsetLoc, "offset= is only allowed on a function without words");
    } else {
      f.textOffset = pf.explicitOffset               ? *pf.explicitOffset
                     : (f.flags & obj::kDeclaration) ? 0
                                                     : pf.start;
      f.textSize = 0;
      if (f.textOffset > obj_.text.size() && pf.explicitOffset) {
        // The final .text size is known only at the end; checked in resolve().
      }
    }
    uint32_t next = 0;
    for (auto& [index, tile] : pf.tiles) {
      if (index != next) {
        error(pf.tileLocs[index], "tile table of " + quoteName('@', f.name) + " has no " +
                                      tileLabel(next) + " (tiles must be numbered without holes)");
        break;
      }
      f.tiles.push_back(tile);
      ++next;
    }
    for (size_t i = 0; i < f.tiles.size(); ++i)
      if (f.tiles[i].aliasOf >= static_cast<int32_t>(i))
        error(pf.tileLocs[static_cast<uint32_t>(i)],
              tileLabel(static_cast<uint32_t>(i)) +
                  " is a view of a tile that does not come before it");
    obj_.functions.push_back(std::move(f));
    cur_.reset();
  }

  /// "[dims x]* dtype": 64x64xf32, ?x16xf16, f32.
  bool shapedType(const Token& tok, std::vector<int64_t>& shape, isa::DType& dtype) {
    std::string_view s = tok.value;
    while (!s.empty() &&
           (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '?' || s[0] == '-')) {
      size_t x = s.find('x');
      if (x == std::string_view::npos) break;
      std::string_view dim = s.substr(0, x);
      if (dim == "?")
        shape.push_back(-1);
      else if (auto v = parseI64(dim))
        shape.push_back(*v);
      else {
        error(at(tok), "bad dimension '" + std::string(dim) + "' in '" + tok.value + "'");
        return false;
      }
      s.remove_prefix(x + 1);
    }
    auto dt = isa::parseDType(s);
    if (!dt) {
      error(at(tok), "unknown element type '" + std::string(s) + "' in '" + tok.value + "'");
      return false;
    }
    dtype = *dt;
    return true;
  }

  void paramDirective(const std::vector<Token>& t) {
    if (!needFunction(at(t[0]), ".param")) return;
    if (t.size() < 4)
      return error(
          at(t[0]),
          "expected '.param %name ptr|scalar|tensor_view|index <type> [extent=E] [index]'");
    auto n = name(t[1], '%');
    if (!n) return;
    obj::Param p;
    p.name = *n;
    const std::string& k = t[2].value;
    if (k == "ptr")
      p.kind = obj::ParamKind::Pointer;
    else if (k == "scalar")
      p.kind = obj::ParamKind::Scalar;
    else if (k == "tensor_view")
      p.kind = obj::ParamKind::TensorView;
    else if (k == "index")
      p.kind = obj::ParamKind::Index;
    else
      return error(at(t[2]), "unknown parameter kind '" + k +
                                 "' (expected ptr, scalar, tensor_view or index)");
    if (!shapedType(t[3], p.shape, p.dtype)) return;
    if (p.shape.size() > 5) return error(at(t[3]), "a parameter has at most 5 dimensions");
    int64_t elements = 1;
    for (int64_t d : p.shape) {
      // A dimension is '?' or a non-negative integer (the loader refuses anything else).
      if (d == obj::kDynamicDim) continue;
      if (d < 0)
        return error(at(t[3]), "a parameter dimension must be '?' or a non-negative integer, not " +
                                   std::to_string(d));
      auto m = obj::checkedMul(elements, d);
      if (!m || *m > obj::kMaxParamElements || d > obj::kMaxParamElements)
        return error(at(t[3]),
                     "the parameter shape '" + t[3].value + "' has more than 2^40 elements");
      elements = *m;
    }
    for (size_t k = 4; k < t.size(); ++k) { // pointer extents (docs/object-format.md section 2.9)
      const std::string& v = t[k].value;
      if (p.kind == obj::ParamKind::Pointer && !t[k].quoted && v.starts_with("extent=") &&
          p.extent.empty()) {
        p.extent = v.substr(7);
        if (auto e = obj::checkExtent(p.extent)) return error(at(t[k]), *e);
      } else if (p.kind == obj::ParamKind::Pointer && !t[k].quoted && v == "index" &&
                 !p.indexValues) {
        p.indexValues = true;
      } else {
        return error(at(t[k]), "unexpected '" + v + "'");
      }
    }
    cur_->fn.params.push_back(std::move(p));
  }

  std::optional<uint32_t> u32(const Token& tok, std::string_view v, const char* what) {
    auto x = parseU64(v);
    if (!x || *x > UINT32_MAX) {
      error(at(tok), std::string("bad ") + what + " '" + std::string(v) + "'");
      return std::nullopt;
    }
    return static_cast<uint32_t>(*x);
  }

  void tileDirective(const std::vector<Token>& t) {
    if (!needFunction(at(t[0]), ".tile")) return;
    if (!expectCount(t, 5, "'.tile T#n %name <loc> <rows>x<cols>x<dtype> [key=value...]'")) return;
    auto index = parseTileLabel(t[1].value);
    if (!index)
      return error(at(t[1]), "expected a tile label (T#1..T#16, U#.., M#.., N#.., or #index)");
    if (cur_->tiles.count(*index))
      return error(at(t[1]), "tile " + tileLabel(*index) + " is already defined");
    auto n = name(t[2], '%');
    if (!n) return;
    obj::TileDesc d;
    d.name = *n;
    auto loc = isa::parseLoc(t[3].value);
    if (!loc) return error(at(t[3]), "unknown tile location '" + t[3].value + "'");
    d.loc = *loc;
    std::vector<int64_t> shape;
    if (!shapedType(t[4], shape, d.dtype)) return;
    if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0 || shape[0] > UINT32_MAX ||
        shape[1] > UINT32_MAX)
      return error(at(t[4]), "expected <rows>x<cols>x<dtype> with static rows and cols");
    d.rows = static_cast<uint32_t>(shape[0]);
    d.cols = static_cast<uint32_t>(shape[1]);
    d.validRows = static_cast<int32_t>(std::min<uint64_t>(d.rows, INT32_MAX));
    d.validCols = static_cast<int32_t>(std::min<uint64_t>(d.cols, INT32_MAX));
    for (size_t i = 5; i < t.size(); ++i) {
      const Token& tok = t[i];
      size_t eq = tok.value.find('=');
      if (eq == std::string::npos)
        return error(at(tok), "expected key=value, got '" + tok.value + "'");
      std::string key = tok.value.substr(0, eq);
      std::string_view v = std::string_view(tok.value).substr(eq + 1);
      if (key == "valid") {
        size_t x = v.find('x');
        auto dim = [&](std::string_view s) -> std::optional<int32_t> {
          if (s == "?") return obj::kDynamicDim;
          auto u = parseU64(s);
          if (!u || *u > INT32_MAX) return std::nullopt;
          return static_cast<int32_t>(*u);
        };
        auto r = x == std::string_view::npos ? std::nullopt : dim(v.substr(0, x));
        auto c = x == std::string_view::npos ? std::nullopt : dim(v.substr(x + 1));
        if (!r || !c) return error(at(tok), "expected valid=<rows>x<cols> (numbers or ?)");
        if (*r > static_cast<int64_t>(d.rows) || *c > static_cast<int64_t>(d.cols))
          return error(at(tok), "valid shape " + std::string(v) + " exceeds the tile shape " +
                                    std::to_string(d.rows) + "x" + std::to_string(d.cols));
        d.validRows = *r;
        d.validCols = *c;
      } else if (key == "blayout") {
        auto x = isa::parseBLayout(v);
        if (!x) return error(at(tok), "unknown blayout '" + std::string(v) + "'");
        d.blayout = *x;
      } else if (key == "slayout") {
        auto x = isa::parseSLayout(v);
        if (!x) return error(at(tok), "unknown slayout '" + std::string(v) + "'");
        d.slayout = *x;
      } else if (key == "pad") {
        auto x = isa::parsePadValue(v);
        if (!x) return error(at(tok), "unknown pad value '" + std::string(v) + "'");
        d.pad = *x;
      } else if (key == "compact") {
        auto x = isa::parseCompactMode(v);
        if (!x) return error(at(tok), "unknown compact mode '" + std::string(v) + "'");
        d.compact = *x;
      } else if (key == "fractal") {
        auto x = parseU64(v);
        if (!x || *x > UINT16_MAX)
          return error(at(tok), "bad fractal size '" + std::string(v) + "'");
        d.fractal = static_cast<uint16_t>(*x);
      } else if (key == "addr") {
        auto x = parseU64(v);
        if (!x || *x > static_cast<uint64_t>(INT64_MAX))
          return error(at(tok), "bad address '" + std::string(v) + "'");
        d.placement = static_cast<int64_t>(*x);
      } else if (key == "view") {
        size_t plus = v.find('+');
        auto parent = parseTileLabel(v.substr(0, plus));
        if (!parent || *parent > INT32_MAX - 1)
          return error(at(tok), "expected view=<tile>[+<byte offset>]");
        d.aliasOf = static_cast<int32_t>(*parent);
        if (plus != std::string_view::npos) {
          auto off = u32(tok, v.substr(plus + 1), "view offset");
          if (!off) return;
          d.aliasOffset = *off;
        }
      } else if (key == "view_offset") {
        auto off = u32(tok, v, "view offset");
        if (!off) return;
        d.aliasOffset = *off;
      } else {
        return error(at(tok),
                     "unknown tile attribute '" + key +
                         "' (expected valid, blayout, slayout, fractal, pad, compact, addr, view)");
      }
    }
    cur_->tiles[*index] = d;
    cur_->tileLocs[*index] = at(t[1]);
  }

  void eventDirective(const std::vector<Token>& t) {
    if (!needFunction(at(t[0]), ".event")) return;
    if (!expectCount(t, 4, "'.event @name <src pipe> <dst pipe>'")) return;
    auto n = name(t[1], '@');
    if (!n) return;
    obj::Event ev;
    ev.function = static_cast<uint32_t>(obj_.functions.size());
    ev.name = *n;
    auto sp = isa::parsePipe(t[2].value), dp = isa::parsePipe(t[3].value);
    if (!sp) return error(at(t[2]), "unknown pipe '" + t[2].value + "'");
    if (!dp) return error(at(t[3]), "unknown pipe '" + t[3].value + "'");
    if (t.size() > 4) return error(at(t[4]), "unexpected '" + t[4].value + "'");
    ev.srcPipe = *sp;
    ev.dstPipe = *dp;
    obj_.events.push_back(std::move(ev));
  }

  void relocDirective(const std::vector<Token>& t) {
    const char* usage = "'.reloc [<offset>] tile T#n | event @name|#index | call @symbol'";
    if (!expectCount(t, 3, usage)) return;
    size_t k = 1;
    obj::Reloc r;
    r.offset = obj_.text.size(); // no offset: the next word
    if (auto off = parseU64(t[1].value)) {
      r.offset = *off;
      k = 2;
    }
    if (!expectCount(t, k + 2, usage)) return;
    const std::string& kind = t[k].value;
    PendingReloc pr;
    pr.loc = at(t[0]);
    pr.targetLoc = at(t[k + 1]);
    if (t.size() > k + 2) return error(at(t[k + 2]), "unexpected '" + t[k + 2].value + "'");
    if (kind == "tile") {
      if (!needFunction(at(t[0]), ".reloc tile")) return;
      auto index = parseTileLabel(t[k + 1].value);
      if (!index) return error(at(t[k + 1]), "expected a tile label (T#1..N#16 or #index)");
      r.type = obj::RelocType::Tile;
      r.function = static_cast<uint32_t>(obj_.functions.size());
      r.index = *index;
    } else if (kind == "event") {
      if (!needFunction(at(t[0]), ".reloc event")) return;
      r.type = obj::RelocType::Event;
      r.function = static_cast<uint32_t>(obj_.functions.size());
      const Token& target = t[k + 1];
      if (!target.quoted && target.value.size() > 1 && target.value[0] == '#') {
        auto x = parseU64(std::string_view(target.value).substr(1));
        if (!x || *x > UINT32_MAX)
          return error(at(target), "bad event index '" + target.value + "'");
        r.index = static_cast<uint32_t>(*x);
      } else {
        auto n = name(target, '@');
        if (!n) return;
        pr.byName = true;
        pr.eventName = *n;
      }
    } else if (kind == "call") {
      auto n = name(t[k + 1], '@');
      if (!n) return;
      if (n->empty()) return error(at(t[k + 1]), "a call needs a symbol name");
      r.type = obj::RelocType::Call;
      r.symbol = *n;
    } else {
      return error(at(t[k]),
                   "unknown relocation kind '" + kind + "' (expected tile, event or call)");
    }
    pr.index = obj_.relocs.size();
    obj_.relocs.push_back(std::move(r));
    relocs_.push_back(std::move(pr));
  }

  void locDirective(const std::vector<Token>& t) {
    if (!expectCount(t, 2, "'.loc <file>:<line>:<col>'")) return;
    if (t.size() > 2) return error(at(t[2]), "unexpected '" + t[2].value + "'");
    const Token& tok = t[1];
    obj::LineEntry l;
    l.textOffset = obj_.text.size();
    std::string_view rest;
    if (tok.quoted) {
      l.file = tok.value;
      rest = tok.suffix;
      if (rest.empty() || rest[0] != ':') return error(at(tok), "expected \"file\":<line>:<col>");
      rest.remove_prefix(1);
    } else {
      std::string_view v = tok.value;
      size_t c2 = v.rfind(':');
      size_t c1 =
          c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : v.rfind(':', c2 - 1);
      if (c1 == std::string_view::npos) return error(at(tok), "expected <file>:<line>:<col>");
      l.file = std::string(v.substr(0, c1));
      rest = v.substr(c1 + 1);
    }
    size_t c = rest.find(':');
    auto lineNo = c == std::string_view::npos ? std::nullopt : parseU64(rest.substr(0, c));
    auto colNo = c == std::string_view::npos ? std::nullopt : parseU64(rest.substr(c + 1));
    if (!lineNo || !colNo || *lineNo > UINT32_MAX || *colNo > UINT32_MAX)
      return error(at(tok), "expected <file>:<line>:<col> with numeric line and column");
    l.line = static_cast<uint32_t>(*lineNo);
    l.col = static_cast<uint32_t>(*colNo);
    obj_.lines.push_back(std::move(l));
  }

  /// Checks that need the whole file: relocation targets and offsets, explicit offsets.
  void resolve() {
    for (const PendingReloc& pr : relocs_) {
      obj::Reloc& r = obj_.relocs[pr.index];
      ln_ = pr.loc.line;
      if (r.offset % 2 || r.offset + 4 > obj_.text.size() || r.offset > obj_.text.size())
        error(pr.loc, "relocation offset 0x" + hexOf(r.offset) +
                          " is not the start of a word in .text (size 0x" +
                          hexOf(obj_.text.size()) + ")");
      if (r.type == obj::RelocType::Tile) {
        if (r.function < obj_.functions.size() &&
            r.index >= obj_.functions[r.function].tiles.size())
          error(pr.targetLoc, "relocation names " + tileLabel(r.index) + ", which " +
                                  quoteName('@', obj_.functions[r.function].name) +
                                  " does not define");
      } else if (r.type == obj::RelocType::Event) {
        if (pr.byName) {
          auto idx = findEventByName(obj_, r.function, pr.eventName);
          if (!idx)
            error(pr.targetLoc,
                  "no event " + quoteName('@', pr.eventName) + " (or the name is ambiguous)");
          else
            r.index = *idx;
        } else if (r.index >= obj_.events.size()) {
          error(pr.targetLoc, "no event #" + std::to_string(r.index));
        }
      }
    }
  }

  static std::string hexOf(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }
};

} // namespace

bool looksLikeBlockAssembly(std::string_view text) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    line = line.substr(0, codeEnd(line));
    size_t b = 0;
    while (b < line.size() && isSpace(line[b]))
      ++b;
    size_t e = line.size();
    while (e > b && isSpace(line[e - 1]))
      --e;
    if (b == e) continue;
    std::string_view s = line.substr(b, e - b);
    if (isHeaderLine(s) || labelOf(s) || addressPrefix(s)) return true;
    if (s[0] == '.') {
      size_t sp = 0;
      while (sp < s.size() && !isSpace(s[sp]))
        ++sp;
      static const std::set<std::string_view> directives = {
          ".arch",  ".extensions", ".function", ".param", ".tile", ".event",
          ".reloc", ".loc",        ".word",     ".short", ".byte"};
      return directives.count(s.substr(0, sp)) != 0;
    }
    size_t sp = 0;
    while (sp < s.size() && !isSpace(s[sp]))
      ++sp;
    std::string head = upper(s.substr(0, sp));
    if (!isKnownMnemonic(head)) return false;
    for (std::string_view p : {"BSTART", "B.", "BSTOP", "C.", "L.", "HL."})
      if (istartsWith(head, p)) return true;
    return static_cast<bool>(enc::parse(s, enc::DecodeOptions{.extensions = true}));
  }
  return false;
}

std::optional<obj::ObjectFile> assembleBlockText(const SourceFile& src, DiagEngine& diags) {
  return Assembler(src, diags).run();
}

} // namespace pto::as
