#include "asm/parse/Syntax.h"

#include "asm/parse/Lexer.h"

#include "support/Numbers.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <functional>
#include <typeinfo>

namespace pto::as {

using ir::kDynamic;
using ir::TileType;
using ir::Type;
using ir::TypeKind;

SrcLoc locOf(antlr4::Token* t) {
  if (!t) return {};
  return {static_cast<uint32_t>(t->getLine()),
          static_cast<uint32_t>(t->getCharPositionInLine() + 1),
          static_cast<uint32_t>(std::max<size_t>(1, tokenTextBytes(t)))};
}
SrcLoc locOf(antlr4::tree::TerminalNode* n) {
  return n ? locOf(n->getSymbol()) : SrcLoc{};
}
SrcLoc locOf(antlr4::ParserRuleContext* ctx) {
  if (!ctx || !ctx->getStart()) return {};
  SrcLoc l = locOf(ctx->getStart());
  antlr4::Token* stop = ctx->getStop();
  if (stop && stop->getLine() == ctx->getStart()->getLine() &&
      stop->getStopIndex() >= ctx->getStart()->getStartIndex())
    l.len = static_cast<uint32_t>(stop->getStopIndex() - ctx->getStart()->getStartIndex() + 1);
  return l;
}

bool isToken(antlr4::tree::ParseTree* node) {
  // Comparing type_infos of different classes compares their names as strings (two calls of
  // strcmp per rule node: 2% of assembling a large module). The answer depends on the class
  // only, so it is remembered per type_info object: objects of one class share one.
  struct Verdict {
    const std::type_info* type = nullptr;
    bool token = false;
  };
  static thread_local std::array<Verdict, 64> verdicts;
  const std::type_info* type = &typeid(*node);
  Verdict& v = verdicts[(reinterpret_cast<uintptr_t>(type) >> 4) % verdicts.size()];
  if (v.type != type)
    v = {type, *type == typeid(antlr4::tree::TerminalNodeImpl) ||
                   *type == typeid(antlr4::tree::ErrorNodeImpl)};
  return v.token;
}

antlr4::tree::TerminalNode* tokenChild(antlr4::ParserRuleContext* ctx, size_t type) {
  for (antlr4::tree::ParseTree* c : ctx->children)
    if (isToken(c)) {
      auto* t = static_cast<antlr4::tree::TerminalNode*>(c); // ParseTree is its plain base
      if (t->getSymbol()->getType() == type) return t;
    }
  return nullptr;
}

std::string wordText(antlr4::ParserRuleContext* ctx) {
  antlr4::Token* a = ctx->getStart();
  if (a && a == ctx->getStop() && a->getType() != antlr4::Token::EOF) return a->getText();
  return ctx->getText();
}

std::string textOf(antlr4::ParserRuleContext* ctx) {
  antlr4::Token* a = ctx ? ctx->getStart() : nullptr;
  antlr4::Token* b = ctx ? ctx->getStop() : nullptr;
  if (!a || !b || b->getStopIndex() < a->getStartIndex() || b->getType() == antlr4::Token::EOF)
    return "";
  if (a == b) return a->getText();
  return a->getInputStream()->getText(
      antlr4::misc::Interval(a->getStartIndex(), b->getStopIndex()));
}

std::vector<std::string> AngleParam::words() const {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < value.size()) {
    size_t j = value.find(' ', i);
    if (j == std::string::npos) j = value.size();
    if (j > i) out.push_back(value.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

SrcLoc AngleParam::lastWordLoc() const {
  size_t sp = value.rfind(' ');
  SrcLoc l = valueLoc;
  if (sp != std::string::npos) l.col += static_cast<uint32_t>(sp + 1);
  l.len = static_cast<uint32_t>(value.size() - (sp == std::string::npos ? 0 : sp + 1));
  return l;
}

namespace {
/// Trims and collapses runs of whitespace to one space.
std::string squeeze(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

/// Location of offset `off` inside text that starts at `start`.
SrcLoc advance(SrcLoc start, std::string_view text, size_t off) {
  SrcLoc l = start;
  for (size_t i = 0; i < off && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++l.line;
      l.col = 1;
    } else {
      ++l.col;
    }
  }
  l.len = 1;
  return l;
}
} // namespace

std::vector<AngleParam> angleParamsFromText(std::string_view inner, SrcLoc start) {
  std::vector<AngleParam> out;
  if (squeeze(inner).empty()) return out;
  size_t begin = 0;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i <= inner.size(); ++i) {
    char c = i < inner.size() ? inner[i] : ',';
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '<' || c == '[' || c == '(') ++depth;
    if (c == '>' || c == ']' || c == ')') --depth;
    if (c != ',' || depth > 0) continue;
    std::string_view item = inner.substr(begin, i - begin);
    AngleParam p;
    size_t lead = item.find_first_not_of(" \t\r\n");
    p.loc = advance(start, inner, begin + (lead == std::string_view::npos ? 0 : lead));
    size_t eq = std::string_view::npos;
    int d = 0;
    for (size_t k = 0; k < item.size(); ++k) {
      if (item[k] == '<' || item[k] == '[') ++d;
      if (item[k] == '>' || item[k] == ']') --d;
      if (item[k] == '=' && d == 0) {
        eq = k;
        break;
      }
    }
    size_t valueStart = eq == std::string_view::npos ? 0 : eq + 1;
    if (eq != std::string_view::npos) {
      p.key = squeeze(item.substr(0, eq));
      p.key.erase(std::remove(p.key.begin(), p.key.end(), ' '), p.key.end());
    }
    std::string_view v = item.substr(valueStart);
    size_t vlead = v.find_first_not_of(" \t\r\n");
    p.value = squeeze(v);
    p.valueLoc =
        advance(start, inner, begin + valueStart + (vlead == std::string_view::npos ? 0 : vlead));
    p.loc.len = static_cast<uint32_t>(std::max<size_t>(1, squeeze(item).size()));
    p.valueLoc.len = static_cast<uint32_t>(std::max<size_t>(1, p.value.size()));
    out.push_back(std::move(p));
    begin = i + 1;
  }
  return out;
}

std::vector<AngleParam> angleParams(P::AngleContext* angle) {
  if (!angle) return {};
  // The text between the brackets, parsed like a type token's parameters.
  antlr4::Token* open = angle->getStart();
  antlr4::Token* close = angle->getStop();
  if (!open || !close || close->getStartIndex() <= open->getStopIndex()) return {};
  std::string inner = open->getInputStream()->getText(
      antlr4::misc::Interval(open->getStopIndex() + 1, close->getStartIndex() - 1));
  SrcLoc start = locOf(open);
  start.col += 1;
  if (close->getStartIndex() == open->getStopIndex() + 1) return {};
  return angleParamsFromText(inner, start);
}

namespace {
constexpr int64_t kMaxDim = int64_t(1) << 40; // elements along one dimension
} // namespace

std::optional<ShapeSpec> parseShape(std::string_view written, std::string* why) {
  // MLIR's printer writes `32x32xf16`; PTOAS's tests also write `32 x 32 x f16`.
  std::string compact;
  for (char c : written)
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  const std::string_view text = compact;
  ShapeSpec spec;
  size_t pos = 0;
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
  };
  // A dimension: digits (checked against kMaxDim, never std::stoll: it throws) or '?'.
  auto dim = [&](std::string_view d) -> bool {
    if (d == "?") {
      spec.dims.push_back(kDynamic);
      return true;
    }
    if (!d.empty() && d[0] == '-' && digits(d.substr(1))) {
      if (why) *why = "negative dimension '" + std::string(d) + "'";
      return false;
    }
    if (!digits(d)) return false;
    auto v = obj::parseUnsigned(d);
    if (!v || *v > static_cast<uint64_t>(kMaxDim)) {
      if (why) *why = "dimension '" + std::string(d) + "' is too large (at most 2^40)";
      return false;
    }
    spec.dims.push_back(static_cast<int64_t>(*v));
    return true;
  };
  // Leading dimensions, each followed by 'x'.
  while (pos < text.size()) {
    size_t x = text.find('x', pos);
    if (x == std::string_view::npos) break;
    if (!dim(text.substr(pos, x - pos))) {
      if (why && !why->empty()) return std::nullopt;
      break;
    }
    pos = x + 1;
  }
  std::string_view rest = text.substr(pos);
  // PTOAS spells the MX scale type with its dialect: `1x4x!pto.f8E8M0`.
  if (rest.starts_with("!pto.")) rest.remove_prefix(5);
  if (auto dt = isa::parseDType(rest))
    spec.elem = *dt;
  else if (!dim(rest))
    return std::nullopt;
  return spec;
}

std::string enumWordOfText(std::string_view text) {
  size_t open = text.find('<');
  if (open != std::string_view::npos) {
    size_t close = text.rfind('>');
    if (close != std::string_view::npos && close > open)
      return enumWordOfText(text.substr(open + 1, close - open - 1));
  }
  std::string s = squeeze(text);
  size_t sp = s.rfind(' ');
  if (sp != std::string::npos) s = s.substr(sp + 1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

// ---------------------------------------------------------------- attribute values
std::optional<std::string> enumWord(P::AngleContext* angle) {
  auto params = angleParams(angle);
  if (params.size() != 1 || params[0].value.empty() || !params[0].key.empty()) return std::nullopt;
  return enumWordOfText(params[0].value);
}

std::optional<std::string> enumWord(P::AttrValueContext* v) {
  if (!v) return std::nullopt;
  if (v->angle()) return enumWord(v->angle());
  if (v->literal() && v->literal()->STRING()) {
    std::string t = textOf(v->literal());
    return t.substr(1, t.size() - 2);
  }
  if (v->literal()) return textOf(v->literal());
  if (v->type() && v->type()->IDENT() && !v->type()->angle()) return v->type()->IDENT()->getText();
  return std::nullopt;
}

std::string canonicalText(antlr4::ParserRuleContext* ctx) {
  // Re-join the tokens with the spacing pto-as prints: a space after ',' and around '='.
  std::string out;
  std::vector<antlr4::tree::ParseTree*> stack{ctx};
  std::vector<std::string> tokens;
  std::function<void(antlr4::tree::ParseTree*)> collect = [&](antlr4::tree::ParseTree* t) {
    if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(t)) {
      if (term->getSymbol()->getType() != antlr4::Token::EOF) tokens.push_back(term->getText());
      return;
    }
    for (auto* c : t->children)
      collect(c);
  };
  collect(ctx);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == ",")
      out += ", ";
    else if (t == "=")
      out += " = ";
    else if (t == ":")
      out += " : ";
    else {
      // Two word-like tokens in a row (`cmp lt`) need a separating space.
      if (!out.empty() &&
          (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_') &&
          (std::isalnum(static_cast<unsigned char>(t.front())) || t.front() == '_'))
        out += ' ';
      out += t;
    }
  }
  return out;
}

/// The numbers of `array<i32: 1, 1, 0, 1>` (MLIR's dense array attribute), or nullopt.
std::optional<std::vector<int>> denseArray(const std::string& text) {
  const size_t colon = text.find(':'), close = text.rfind('>');
  if (!text.starts_with("array<") || colon == std::string::npos || close == std::string::npos ||
      close < colon)
    return std::nullopt;
  std::vector<int> out;
  std::string item;
  for (char c : text.substr(colon + 1, close - colon - 1) + ",") {
    if (c == ' ') continue;
    if (c != ',') {
      if (c < '0' || c > '9' || item.size() > 3) return std::nullopt;
      item += c;
      continue;
    }
    if (item.empty()) return std::nullopt;
    out.push_back(std::stoi(item));
    item.clear();
  }
  return out;
}

} // namespace pto::as
