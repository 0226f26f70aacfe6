#include "asm/Syntax.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

namespace pto::as {

using ir::kDynamic;
using ir::TileType;
using ir::Type;
using ir::TypeKind;

SrcLoc locOf(antlr4::Token* t) {
  if (!t) return {};
  return {static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine() + 1),
          static_cast<uint32_t>(std::max<size_t>(1, t->getText().size()))};
}
SrcLoc locOf(antlr4::tree::TerminalNode* n) { return n ? locOf(n->getSymbol()) : SrcLoc{}; }
SrcLoc locOf(antlr4::ParserRuleContext* ctx) {
  if (!ctx || !ctx->getStart()) return {};
  SrcLoc l = locOf(ctx->getStart());
  antlr4::Token* stop = ctx->getStop();
  if (stop && stop->getLine() == ctx->getStart()->getLine() &&
      stop->getStopIndex() >= ctx->getStart()->getStartIndex())
    l.len = static_cast<uint32_t>(stop->getStopIndex() - ctx->getStart()->getStartIndex() + 1);
  return l;
}

std::optional<int64_t> parseInt(const std::string& text) {
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && s.front() == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  // Hex literals are bit patterns (0xFFFFFFFF is a valid 32-bit immediate), decimals must fit.
  if (base == 10 && v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  int64_t r = static_cast<int64_t>(v);
  return neg ? -r : r;
}

std::string AngleParam::text() const {
  std::string s;
  for (auto* a : atoms) {
    if (!s.empty()) s += ' ';
    s += a->getText();
  }
  return s;
}

std::vector<AngleParam> angleParams(P::AngleContext* angle) {
  std::vector<AngleParam> out;
  if (!angle) return out;
  for (P::AngleArgContext* arg : angle->angleArg()) {
    AngleParam p;
    p.loc = locOf(arg);
    bool afterEq = false;
    std::vector<P::AngleAtomContext*> keyAtoms;
    for (auto* child : arg->children) {
      if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(child)) {
        if (term->getText() == "=") afterEq = true;
        continue;
      }
      auto* atom = dynamic_cast<P::AngleAtomContext*>(child);
      if (!atom) continue;
      (afterEq ? p.atoms : keyAtoms).push_back(atom);
    }
    if (afterEq) {
      for (auto* k : keyAtoms) p.key += k->getText();
    } else {
      p.atoms = std::move(keyAtoms);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<ShapeSpec> parseShapeAtoms(const std::vector<P::AngleAtomContext*>& atoms) {
  ShapeSpec spec;
  size_t i = 0;
  auto addDims = [&](const std::string& text) -> bool {
    size_t pos = 0;
    while (pos < text.size()) {
      size_t x = text.find('x', pos);
      if (x == std::string::npos) x = text.size();
      std::string d = text.substr(pos, x - pos);
      if (d == "?") {
        spec.dims.push_back(kDynamic);
      } else {
        auto v = parseInt(d);
        if (!v || *v < 0) return false;
        spec.dims.push_back(*v);
      }
      pos = x + 1;
    }
    return true;
  };
  if (i < atoms.size() && atoms[i]->SHAPE()) {
    if (!addDims(atoms[i]->SHAPE()->getText())) return std::nullopt;
    ++i;
  }
  if (i < atoms.size()) {
    std::string t = atoms[i]->getText();
    if (t == "?") {
      spec.dims.push_back(kDynamic);
    } else if (atoms[i]->INT()) {
      auto v = parseInt(t);
      if (!v) return std::nullopt;
      spec.dims.push_back(*v);
    } else if (auto dt = isa::parseDType(t)) {
      spec.elem = *dt;
    } else {
      return std::nullopt;
    }
    ++i;
  }
  if (i != atoms.size() || (spec.dims.empty() && !spec.elem)) return std::nullopt;
  return spec;
}

// ---------------------------------------------------------------- attribute values
std::optional<std::string> enumWord(P::AngleContext* angle) {
  auto params = angleParams(angle);
  if (params.size() != 1 || params[0].atoms.empty()) return std::nullopt;
  auto* last = params[0].atoms.back();
  if (last->angle()) return enumWord(last->angle());
  std::string t = last->getText();
  if (t.size() >= 2 && t.front() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

std::optional<std::string> enumWord(P::AttrValueContext* v) {
  if (!v) return std::nullopt;
  if (v->angle()) return enumWord(v->angle());
  if (v->literal() && v->literal()->STRING()) {
    std::string t = v->literal()->getText();
    return t.substr(1, t.size() - 2);
  }
  if (v->literal()) return v->literal()->getText();
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
    for (auto* c : t->children) collect(c);
  };
  collect(ctx);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == ",") out += ", ";
    else if (t == "=") out += " = ";
    else if (t == ":") out += " : ";
    else {
      // Two word-like tokens in a row (`cmp lt`) need a separating space.
      if (!out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_') &&
          (std::isalnum(static_cast<unsigned char>(t.front())) || t.front() == '_'))
        out += ' ';
      out += t;
    }
  }
  return out;
}

// ---------------------------------------------------------------- types
std::optional<Type> TypeReader::read(P::TypeContext* t) {
  if (!t) return std::nullopt;
  SrcLoc loc = locOf(t);
  if (t->BANG_ID()) return readBang(t->BANG_ID()->getText(), t->angle(), loc);
  if (t->IDENT()) return readBuiltin(t->IDENT()->getText(), t->angle(), loc);
  if (t->angle()) { // legacy `tile<...>` without the bang
    auto tile = readTile(t->angle(), loc, true);
    if (!tile) return std::nullopt;
    return Type::tileOf(*tile);
  }
  diags_.error(loc, "a function type is not allowed here");
  return std::nullopt;
}

std::optional<Type> TypeReader::readBuiltin(const std::string& name, P::AngleContext* angle,
                                            SrcLoc loc) {
  if (name == "index" && !angle) return Type::index();
  if (!angle) {
    if (auto dt = isa::parseDType(name)) return Type::scalar(*dt);
    diags_.error(loc, "unknown type '" + name + "'");
    return std::nullopt;
  }
  if (name == "memref") {
    // memref<RxCxT, #pto.address_space<vec>>: a local buffer (tile) or a GM tensor.
    auto params = angleParams(angle);
    auto shape = params.empty() ? std::nullopt : parseShapeAtoms(params[0].atoms);
    if (!shape || !shape->elem) {
      diags_.error(loc, "expected 'memref<shape x dtype, #pto.address_space<...>>'");
      return std::nullopt;
    }
    std::string space = "gm";
    if (params.size() > 1 && !params[1].atoms.empty() && params[1].atoms[0]->angle())
      if (auto w = enumWord(params[1].atoms[0]->angle())) space = *w;
    if (space == "gm") return Type{TypeKind::TensorView, *shape->elem, shape->dims};
    auto l = isa::parseLoc(space);
    if (!l || shape->dims.size() != 2) {
      diags_.error(loc, "unsupported memref address space '" + space + "'");
      return std::nullopt;
    }
    TileType tt;
    tt.loc = *l;
    tt.dtype = *shape->elem;
    tt.rows = tt.validRows = shape->dims[0];
    tt.cols = tt.validCols = shape->dims[1];
    return Type::tileOf(tt);
  }
  diags_.error(loc, "unsupported type '" + name + "<...>'");
  return std::nullopt;
}

std::optional<Type> TypeReader::readBang(const std::string& name, P::AngleContext* angle,
                                         SrcLoc loc) {
  auto params = angleParams(angle);
  if (name == "!pto.tile_buf" || name == "!pto.tile") {
    if (!angle) {
      diags_.error(loc, "expected '<' after '" + name + "'");
      return std::nullopt;
    }
    auto tile = readTile(angle, loc, name == "!pto.tile");
    if (!tile) return std::nullopt;
    return Type::tileOf(*tile);
  }
  if (name == "!pto.ptr") {
    if (params.size() != 1 || params[0].atoms.size() != 1 || !isa::parseDType(params[0].text())) {
      if (params.size() == 2)
        diags_.error(loc, "!pto.ptr no longer accepts an address space: write !pto.ptr<T>");
      else
        diags_.error(loc, "expected '!pto.ptr<dtype>'");
      return std::nullopt;
    }
    return Type::ptr(*isa::parseDType(params[0].text()));
  }
  if (name == "!pto.tensor_view" || name == "!pto.partition_tensor_view") {
    auto shape = params.size() == 1 ? parseShapeAtoms(params[0].atoms) : std::nullopt;
    if (!shape || !shape->elem || shape->dims.empty() || shape->dims.size() > 5) {
      diags_.error(loc, "expected '" + name + "<d0x...xdN x dtype>' with 1 to 5 dimensions");
      return std::nullopt;
    }
    return Type{name == "!pto.tensor_view" ? TypeKind::TensorView : TypeKind::PartView,
                *shape->elem, shape->dims};
  }
  if (name == "!pto.eventid_array") {
    auto n = params.size() == 1 ? intParam(params[0], false) : std::nullopt;
    if (!n || *n <= 0 || *n > 64) {
      diags_.error(loc, "expected '!pto.eventid_array<N>' with N in 1..64");
      return std::nullopt;
    }
    return Type{TypeKind::EventIdArray, isa::DType::I32, {*n}};
  }
  diags_.error(loc, "unsupported type '" + name + "'");
  return std::nullopt;
}

/// `16x16xf17` / `f17`: reports an unknown element type at the word. Returns true if reported.
bool TypeReader::unknownElem(const AngleParam& p) {
  if (!p.key.empty() || p.atoms.empty()) return false;
  P::AngleAtomContext* last = p.atoms.back();
  if (!last->word() || isa::parseDType(last->getText())) return false;
  if (p.atoms.size() == 1 && isa::parseLoc(last->getText())) return false;
  if (p.atoms.size() > 1 && !p.atoms.front()->SHAPE()) return false;
  diags_.error(locOf(last), "unknown element type '" + last->getText() + "'");
  return true;
}

std::optional<int64_t> TypeReader::intParam(const AngleParam& p, bool allowDynamic) {
  std::string t = p.text();
  if (allowDynamic && (t == "?" || t == "-1")) return kDynamic;
  auto v = parseInt(t);
  if (!v || *v < 0) {
    diags_.error(p.loc, "expected a non-negative integer" + std::string(allowDynamic ? " or '?'" : "") +
                            ", found '" + t + "'");
    return std::nullopt;
  }
  return v;
}

std::optional<TileType> TypeReader::readTile(P::AngleContext* angle, SrcLoc loc, bool docsForm) {
  auto params = angleParams(angle);
  TileType t;
  if (params.empty()) {
    diags_.error(loc, "empty tile type");
    return std::nullopt;
  }
  bool ok;
  bool compactShape = params.size() > 1 && params[0].key.empty() && params[1].key.empty() &&
                      !params[1].atoms.empty() && params[1].atoms[0]->SHAPE() && !isa::parseDType(params[0].text());
  if (params[0].key == "loc" && params.size() > 1 && !params[1].key.empty()) {
    ok = tileKeyed(t, params);
  } else if (compactShape && !isa::parseLoc(params[0].text())) {
    diags_.error(params[0].loc, "unknown tile location '" + params[0].text() +
                                    "' (expected vec, mat, left, right, acc, bias or scaling)");
    return std::nullopt;
  } else if (params[0].key == "loc") {
    auto l = isa::parseLoc(params[0].text());
    if (!l) {
      diags_.error(params[0].loc, "unknown tile location '" + params[0].text() + "'");
      return std::nullopt;
    }
    t.loc = *l;
    ok = tilePositional(t, params, 1);
  } else if (params[0].key.empty() && isa::parseLoc(params[0].text()) && params.size() > 1) {
    t.loc = *isa::parseLoc(params[0].text());
    ok = tileCompact(t, params);
  } else {
    ok = tilePositional(t, params, 0);
  }
  (void)docsForm;
  if (!ok) return std::nullopt;
  return t;
}

// loc=, dtype=, rows=, cols=, v_row=, v_col=, blayout=, slayout=, fractal=, pad= [, compact=]
bool TypeReader::tileKeyed(TileType& t, const std::vector<AngleParam>& params) {
  static const char* kOrder[] = {"loc", "dtype", "rows", "cols", "v_row",
                                 "v_col", "blayout", "slayout", "fractal", "pad"};
  if (params.size() < 10 || params.size() > 11) {
    diags_.error(params.front().loc.valid() ? params.front().loc : SrcLoc{},
                 "keyed !pto.tile_buf needs the keys loc, dtype, rows, cols, v_row, v_col, "
                 "blayout, slayout, fractal, pad (in this order), then optionally compact");
    return false;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const char* want = i < 10 ? kOrder[i] : "compact";
    if (params[i].key != want) {
      diags_.error(params[i].loc, std::string("expected key '") + want + "' here, found '" +
                                      (params[i].key.empty() ? params[i].text() : params[i].key) +
                                      "'");
      return false;
    }
  }
  auto l = isa::parseLoc(params[0].text());
  if (!l) {
    diags_.error(params[0].loc, "unknown tile location '" + params[0].text() + "'");
    return false;
  }
  t.loc = *l;
  auto dt = isa::parseDType(params[1].text());
  if (!dt) {
    diags_.error(params[1].loc, "unknown element type '" + params[1].text() + "'");
    return false;
  }
  t.dtype = *dt;
  auto rows = intParam(params[2], false), cols = intParam(params[3], false);
  auto vr = intParam(params[4], true), vc = intParam(params[5], true);
  if (!rows || !cols || !vr || !vc) return false;
  t.rows = *rows;
  t.cols = *cols;
  t.validRows = *vr;
  t.validCols = *vc;
  for (size_t i = 6; i < params.size(); ++i) {
    AngleParam p = params[i];
    if (!tileOption(t, p)) return false;
  }
  return true;
}

bool TypeReader::tileOption(TileType& t, const AngleParam& p) {
  std::string v = p.text();
  if (p.key == "blayout") {
    auto b = isa::parseBLayout(v);
    if (!b) return diags_.error(p.loc, "unknown blayout '" + v + "' (row_major, col_major)"), false;
    t.blayout = *b;
  } else if (p.key == "slayout") {
    auto s = isa::parseSLayout(v);
    if (!s)
      return diags_.error(p.loc, "unknown slayout '" + v + "' (none_box, row_major, col_major)"), false;
    t.slayout = *s;
  } else if (p.key == "fractal") {
    auto f = intParam(p, false);
    if (!f) return false;
    t.fractal = *f;
  } else if (p.key == "pad") {
    auto n = parseInt(v);
    if (n && *n >= 0 && *n <= 3) t.pad = static_cast<isa::PadValue>(*n);
    else if (auto pv = isa::parsePadValue(v)) t.pad = *pv;
    else return diags_.error(p.loc, "unknown pad value '" + v + "' (0..3 or null/zero/max/min)"), false;
  } else if (p.key == "compact") {
    auto n = parseInt(v);
    if (n && *n >= 0 && *n <= 2) t.compact = static_cast<isa::CompactMode>(*n);
    else if (auto c = isa::parseCompactMode(v)) t.compact = *c;
    else return diags_.error(p.loc, "unknown compact mode '" + v + "' (0..2)"), false;
  } else if (p.key == "valid") {
    auto s = parseShapeAtoms(p.atoms);
    if (!s || s->elem || s->dims.size() != 2)
      return diags_.error(p.loc, "expected 'valid=RxC' ('?' for dynamic)"), false;
    t.validRows = s->dims[0];
    t.validCols = s->dims[1];
  } else {
    diags_.error(p.loc, "unknown tile_buf parameter '" + p.key + "'");
    return false;
  }
  return true;
}

// vec, RxCxT [, valid=VRxVC] [, blayout=..] [, slayout=..] [, fractal=..] [, pad=..] [, compact=..]
bool TypeReader::tileCompact(TileType& t, const std::vector<AngleParam>& params) {
  auto shape = parseShapeAtoms(params[1].atoms);
  if (!shape || !shape->elem || shape->dims.size() != 2 || shape->dims[0] == kDynamic ||
      shape->dims[1] == kDynamic) {
    if (unknownElem(params[1])) return false;
    diags_.error(params[1].loc, "expected a static 'RxCxdtype' tile shape");
    return false;
  }
  t.dtype = *shape->elem;
  t.rows = t.validRows = shape->dims[0];
  t.cols = t.validCols = shape->dims[1];
  std::vector<std::string> seen;
  for (size_t i = 2; i < params.size(); ++i) {
    const AngleParam& p = params[i];
    if (p.key.empty()) {
      diags_.error(p.loc, "expected 'key=value' in compact tile_buf syntax");
      return false;
    }
    if (std::find(seen.begin(), seen.end(), p.key) != seen.end()) {
      diags_.error(p.loc, "duplicate tile_buf parameter '" + p.key + "'");
      return false;
    }
    seen.push_back(p.key);
    if (!tileOption(t, p)) return false;
  }
  return true;
}

// The documentation / PTO-AS forms: <f32, 16, 16>, <16x16xf32>,
// <[loc=vec,] f32, 16, 16, RowMajor, NoneBox, None, Zero>.
bool TypeReader::tilePositional(TileType& t, const std::vector<AngleParam>& params, size_t first) {
  size_t i = first;
  if (i >= params.size()) {
    diags_.error(params.back().loc, "expected the tile element type and shape");
    return false;
  }
  if (auto s = parseShapeAtoms(params[i].atoms); s && s->elem && s->dims.size() == 2) {
    t.dtype = *s->elem;
    t.rows = s->dims[0];
    t.cols = s->dims[1];
    ++i;
  } else {
    auto dt = isa::parseDType(params[i].text());
    if (!dt || !params[i].key.empty()) {
      if (unknownElem(params[i])) return false;
      diags_.error(params[i].loc, "expected a tile element type, found '" + params[i].text() + "'");
      return false;
    }
    t.dtype = *dt;
    if (i + 2 >= params.size()) {
      diags_.error(params[i].loc, "expected rows and cols after the element type");
      return false;
    }
    auto r = intParam(params[i + 1], false), c = intParam(params[i + 2], false);
    if (!r || !c) return false;
    t.rows = *r;
    t.cols = *c;
    i += 3;
  }
  t.validRows = t.rows;
  t.validCols = t.cols;
  // Optional positional BLayout, SLayout, Fractal, Pad (docs form), then key=value options.
  int positional = 0;
  for (; i < params.size(); ++i) {
    const AngleParam& p = params[i];
    if (!p.key.empty()) {
      if (!tileOption(t, p)) return false;
      continue;
    }
    std::string v = p.text();
    bool ok = false;
    switch (positional++) {
    case 0:
      if (auto b = isa::parseBLayout(v)) t.blayout = *b, ok = true;
      break;
    case 1:
      if (auto s = isa::parseSLayout(v)) t.slayout = *s, ok = true;
      break;
    case 2: // docs fractal names; the byte size stays the default 512 except for numbers
      if (v == "None" || v == "NZ" || v == "ZN" || v == "FR" || v == "RN" || v == "ZZ" || v == "NN") ok = true;
      else if (auto n = parseInt(v)) t.fractal = *n, ok = true;
      break;
    case 3:
      if (v == "Invalid") t.pad = isa::PadValue::Null, ok = true;
      else if (auto pv = isa::parsePadValue(v)) t.pad = *pv, ok = true;
      break;
    default: break;
    }
    if (!ok) {
      diags_.error(p.loc, "unexpected tile parameter '" + v + "'");
      return false;
    }
  }
  return true;
}

} // namespace pto::as
