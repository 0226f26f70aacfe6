// Parse tree -> Kernel IR. Structural statements map one to one; generic statements are read
// into a flat "pieces" summary and then interpreted per op (scalar ops, views, tiles, tile ops
// in any of their spellings, sync ops).
#include "PTOLexer.h"
#include "PTOParser.h"
#include "asm/Frontend.h"
#include "asm/Syntax.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <typeindex>
#include <set>
#include <sstream>
#include <unordered_map>

namespace pto::as {
namespace {

using namespace pto::ir;

// ---------------------------------------------------------------- syntax errors
/// Thrown by the syntax error listener once the error limit is reached: parsing stops there
/// instead of building an error-recovery tree over the rest of a garbage input.
struct TooManyErrors {};

class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  explicit SyntaxErrorListener(DiagEngine& d) : diags_(d) {}
  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* tok, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    SrcLoc loc{static_cast<uint32_t>(line), static_cast<uint32_t>(col + 1), 1};
    bool atEof = tok && tok->getType() == antlr4::Token::EOF;
    if (tok && !atEof) loc.len = static_cast<uint32_t>(std::max<size_t>(1, tok->getText().size()));
    auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
    std::string text;
    if (atEof && parser) {
      // Point just past the last real token: that is where the text stopped short.
      if (antlr4::Token* last = lastToken(parser)) {
        loc = locOf(last);
        loc.col += loc.len;
        loc.len = 1;
        text = "unexpected end of file after '" + last->getText() + "'";
      } else {
        text = "unexpected end of file";
      }
      if (msg.find("'}'") != std::string::npos) text += "; expected '}'";
    } else {
      text = friendly(msg, tok);
    }
    // ANTLR's recovery can report the same position twice; one report is enough.
    if (loc.line == lastLine_ && loc.col == lastCol_) return;
    lastLine_ = loc.line;
    lastCol_ = loc.col;
    diags_.error(loc, text);
    if (diags_.errorLimitReached()) throw TooManyErrors{};
    // Point at the unclosed bracket when that is the likely cause: the file ended inside a
    // region, or an angle-bracket type was not closed.
    if (parser && (atEof || msg.find("'>'") != std::string::npos)) noteOpenBracket(parser, loc, atEof);
  }

private:
  static antlr4::Token* lastToken(antlr4::Parser* parser) {
    auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream());
    if (!stream) return nullptr;
    for (size_t i = stream->size(); i-- > 0;) {
      antlr4::Token* t = stream->get(i);
      if (t->getType() != antlr4::Token::EOF && t->getChannel() == antlr4::Token::DEFAULT_CHANNEL) return t;
    }
    return nullptr;
  }

  /// For an error inside `{...}` or `<...>` that opened on an earlier line, a note at the opener.
  void noteOpenBracket(antlr4::Parser* parser, SrcLoc at, bool atEof) {
    for (antlr4::ParserRuleContext* ctx = parser->getContext(); ctx; ctx = dynamic_cast<antlr4::ParserRuleContext*>(ctx->parent)) {
      antlr4::Token* open = nullptr;
      if (dynamic_cast<P::RegionContext*>(ctx) || dynamic_cast<P::AngleContext*>(ctx)) open = ctx->getStart();
      else if (auto* m = dynamic_cast<P::ModuleOpContext*>(ctx)) {
        for (auto* c : m->children)
          if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(c); t && t->getText() == "{") open = t->getSymbol();
      }
      if (!open || (open->getText() != "{" && open->getText() != "<")) continue;
      if (!atEof && open->getText() != "<") return;
      if (open->getLine() == at.line) return;
      diags_.note(locOf(open), "to match this '" + open->getText() + "'");
      return;
    }
  }

  static std::string friendly(const std::string& msg, antlr4::Token* tok) {
    std::string text = tok ? tok->getText() : "";
    if (msg.rfind("token recognition error", 0) == 0) return "invalid character in input: " + msg.substr(msg.find("at:") + 4);
    if (!text.empty() && (msg.find("extraneous input") != std::string::npos ||
                          msg.find("mismatched input") != std::string::npos ||
                          msg.find("no viable alternative") != std::string::npos))
      return "unexpected '" + text + "'" + expecting(msg);
    return msg;
  }
  static std::string expecting(const std::string& msg) {
    auto p = msg.find("expecting ");
    if (p == std::string::npos) return "";
    std::string e = msg.substr(p + 10);
    if (e.size() > 80) return "";
    return "; expected " + e;
  }
  DiagEngine& diags_;
  uint32_t lastLine_ = 0, lastCol_ = 0;
};

// ---------------------------------------------------------------- pieces
struct OperandRef {
  enum Kind { Value, Literal, Memory } kind = Value;
  std::string name; // value name without '%', with "#N" for result-group uses
  SrcLoc loc;
  P::LiteralContext* lit = nullptr;
  std::vector<OperandRef> indices; // Memory: base[indices]
  P::AttrDictContext* dict = nullptr;
};

struct Keyword {
  std::string key;
  P::AttrValueContext* value;
  SrcLoc loc;
};

enum class PieceKind { Operand, Types, To, Arrow, Dict, Keyword, Hash, Angle, Call, Bracket, Symbol, Paren, Sizes, OutsType, Comma };

struct PieceSeen {
  PieceKind kind;
  SrcLoc loc;
  std::string word;                  // keyword key or call name
  antlr4::ParserRuleContext* ctx;    // for the text of "unexpected ..." errors
};

struct Pieces {
  std::vector<PieceSeen> seen; // every top-level piece, in order (for "unexpected ..." errors)
  std::vector<OperandRef> operands;
  std::vector<P::TypeContext*> types;   // after ':'
  P::TypeContext* toType = nullptr;     // `: A to B`
  std::vector<P::TypeContext*> arrowTypes;
  bool hasArrow = false;
  SrcLoc typesLoc;
  std::vector<P::AttrDictContext*> dicts;
  std::vector<Keyword> keywords;
  std::vector<P::HashPieceContext*> hashes;
  std::vector<P::AngleContext*> angles;
  std::vector<P::CallPieceContext*> calls;
  std::vector<P::BracketContext*> brackets;
  std::vector<P::SymbolPieceContext*> symbols;
  std::vector<P::ParenPieceContext*> parens;
  P::SizesPieceContext* sizes = nullptr;
  P::TypeContext* outsType = nullptr;

  P::CallPieceContext* call(std::string_view kw) const {
    for (auto* c : calls)
      if (c->callKw->getText() == kw) return c;
    return nullptr;
  }
  const Keyword* keyword(std::string_view k) const {
    for (const Keyword& kw : keywords)
      if (kw.key == k) return &kw;
    return nullptr;
  }
};

void addTypes(Pieces& p, P::TypeContext* t) {
  // A function type `(A, B) -> C` splits into operand types and result types.
  if (t->ARROW()) {
    for (auto* in : t->type()) p.types.push_back(in);
    p.hasArrow = true;
    auto* g = t->typeGroup();
    if (g->type().empty()) return;
    for (auto* r : g->type()) p.arrowTypes.push_back(r);
    return;
  }
  p.types.push_back(t);
}

/// The kind of a piece from its context class (one typeid lookup instead of a dynamic_cast
/// chain: pieces are the bulk of every statement).
PieceKind kindOf(P::PieceContext* piece) {
  static const std::unordered_map<std::type_index, PieceKind> kKinds = {
      {typeid(P::ValuePieceContext), PieceKind::Operand},   {typeid(P::LiteralPieceContext), PieceKind::Operand},
      {typeid(P::TypesPieceContext), PieceKind::Types},     {typeid(P::ArrowPieceContext), PieceKind::Arrow},
      {typeid(P::DictPieceContext), PieceKind::Dict},       {typeid(P::BracketPieceContext), PieceKind::Bracket},
      {typeid(P::AnglePieceContext), PieceKind::Angle},     {typeid(P::HashPieceContext), PieceKind::Hash},
      {typeid(P::KeywordPieceContext), PieceKind::Keyword}, {typeid(P::SizesPieceContext), PieceKind::Sizes},
      {typeid(P::CallPieceContext), PieceKind::Call},       {typeid(P::OutsTypePieceContext), PieceKind::OutsType},
      {typeid(P::ParenPieceContext), PieceKind::Paren},     {typeid(P::SymbolPieceContext), PieceKind::Symbol},
      {typeid(P::CommaPieceContext), PieceKind::Comma},
  };
  auto it = kKinds.find(typeid(*piece));
  return it == kKinds.end() ? PieceKind::Comma : it->second;
}

void addTypeList(Pieces& out, P::TypeListContext* t) {
  out.typesLoc = locOf(t->type(0));
  auto types = t->type();
  bool hasTo = false;
  for (auto* child : t->children)
    if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(child); term && term->getText() == "to") hasTo = true;
  if (hasTo) {
    out.toType = types.back();
    types.pop_back();
  }
  for (auto* ty : types) addTypes(out, ty);
}

Pieces collectPieces(const std::vector<P::PieceContext*>& pieces);

/// The pieces of a generic statement: head pieces, the type list, then tail pieces.
Pieces collectStatement(P::GenericOpContext* g) {
  std::vector<P::PieceContext*> pieces;
  for (auto* h : g->headPiece()) pieces.push_back(h->piece());
  Pieces out = collectPieces(pieces);
  if (g->typeList()) {
    out.seen.push_back({PieceKind::Types, locOf(g->typeList()), {}, g->typeList()});
    addTypeList(out, g->typeList());
    std::vector<P::PieceContext*> tail;
    for (auto* t : g->tailPiece()) tail.push_back(t->piece());
    Pieces rest = collectPieces(tail);
    out.seen.insert(out.seen.end(), rest.seen.begin(), rest.seen.end());
    auto append = [](auto& into, const auto& from) { into.insert(into.end(), from.begin(), from.end()); };
    append(out.arrowTypes, rest.arrowTypes);
    out.hasArrow |= rest.hasArrow;
    append(out.dicts, rest.dicts);
    append(out.keywords, rest.keywords);
    append(out.hashes, rest.hashes);
    append(out.angles, rest.angles);
    append(out.calls, rest.calls);
  }
  return out;
}

Pieces collectPieces(const std::vector<P::PieceContext*>& pieces) {
  Pieces out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    P::PieceContext* piece = pieces[i];
    PieceKind kind = kindOf(piece);
    std::string word;
    if (kind == PieceKind::Keyword) word = static_cast<P::KeywordPieceContext*>(piece)->word()->getText();
    if (kind == PieceKind::Call) word = static_cast<P::CallPieceContext*>(piece)->callKw->getText();
    out.seen.push_back({kind, locOf(piece), word, piece});
    if (auto* v = dynamic_cast<P::ValuePieceContext*>(piece); v && kind == PieceKind::Operand) {
      OperandRef r;
      r.name = v->VALUE_ID()->getText().substr(1);
      if (v->HASH_NUM()) r.name += v->HASH_NUM()->getText();
      r.loc = locOf(v->VALUE_ID());
      // `%base[%i, %j]` is a memory operand; `%v {attrs}` attaches attributes to the operand.
      if (i + 1 < pieces.size() && kindOf(pieces[i + 1]) == PieceKind::Bracket) {
        auto* b = static_cast<P::BracketPieceContext*>(pieces[i + 1]);
        r.kind = OperandRef::Memory;
        Pieces inner = collectPieces(b->bracket()->piece());
        r.indices = inner.operands;
        ++i;
      }
      if (i + 1 < pieces.size() && kindOf(pieces[i + 1]) == PieceKind::Dict) {
        auto* d = static_cast<P::DictPieceContext*>(pieces[i + 1]);
        out.seen.push_back({PieceKind::Dict, locOf(d), {}, d});
        r.dict = d->attrDict();
        out.dicts.push_back(r.dict);
        ++i;
      }
      out.operands.push_back(std::move(r));
      continue;
    }
    switch (kind) {
    case PieceKind::Operand: { // a literal
      auto* l = static_cast<P::LiteralPieceContext*>(piece);
      OperandRef r;
      r.kind = OperandRef::Literal;
      r.lit = l->literal();
      r.loc = locOf(l->literal());
      out.operands.push_back(std::move(r));
      break;
    }
    case PieceKind::Types: addTypeList(out, static_cast<P::TypesPieceContext*>(piece)->typeList()); break;
    case PieceKind::Arrow: {
      out.hasArrow = true;
      for (auto* ty : static_cast<P::ArrowPieceContext*>(piece)->typeGroup()->type()) out.arrowTypes.push_back(ty);
      break;
    }
    case PieceKind::Dict: out.dicts.push_back(static_cast<P::DictPieceContext*>(piece)->attrDict()); break;
    case PieceKind::Bracket: out.brackets.push_back(static_cast<P::BracketPieceContext*>(piece)->bracket()); break;
    case PieceKind::Angle: out.angles.push_back(static_cast<P::AnglePieceContext*>(piece)->angle()); break;
    case PieceKind::Hash: out.hashes.push_back(static_cast<P::HashPieceContext*>(piece)); break;
    case PieceKind::Keyword: {
      auto* k = static_cast<P::KeywordPieceContext*>(piece);
      out.keywords.push_back({word, k->attrValue(), locOf(k->word())});
      break;
    }
    case PieceKind::Sizes: out.sizes = static_cast<P::SizesPieceContext*>(piece); break;
    case PieceKind::Call: out.calls.push_back(static_cast<P::CallPieceContext*>(piece)); break;
    case PieceKind::OutsType: out.outsType = static_cast<P::OutsTypePieceContext*>(piece)->type(); break;
    case PieceKind::Paren: out.parens.push_back(static_cast<P::ParenPieceContext*>(piece)); break;
    case PieceKind::Symbol: out.symbols.push_back(static_cast<P::SymbolPieceContext*>(piece)); break;
    case PieceKind::Comma:
    case PieceKind::To: break;
    }
  }
  return out;
}

/// Reports the first piece an op does not take ("unexpected '...' in 'op'"); keyword and call
/// pieces must also be among the allowed words.
bool onlyPieces(DiagEngine& diags, const Pieces& p, const std::string& op, std::initializer_list<PieceKind> kinds,
                std::initializer_list<std::string_view> words = {}) {
  for (const PieceSeen& seen : p.seen) {
    if (seen.kind == PieceKind::Comma) continue; // separators go anywhere
    bool ok = std::find(kinds.begin(), kinds.end(), seen.kind) != kinds.end();
    if (ok && (seen.kind == PieceKind::Keyword || seen.kind == PieceKind::Call))
      ok = std::find(words.begin(), words.end(), seen.word) != words.end();
    if (ok) continue;
    std::string full = textOf(seen.ctx);
    std::string text = full.size() > 40 ? full.substr(0, 37) + "..." : full;
    if (seen.kind == PieceKind::Keyword) text = seen.word + " =";
    if (seen.kind == PieceKind::Call) text = seen.word + "(...)";
    diags.error(seen.loc, "unexpected '" + text + "' in '" + op + "'");
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- arith table
enum class ArithClass { IntBinary, FloatBinary, AnyBinary, FloatUnary, CmpI, CmpF, Select, Cast };
struct ArithDef {
  std::string_view name;
  ArithClass cls;
};
constexpr ArithDef kArith[] = {
    {"addi", ArithClass::IntBinary},      {"subi", ArithClass::IntBinary},
    {"muli", ArithClass::IntBinary},      {"divsi", ArithClass::IntBinary},
    {"divui", ArithClass::IntBinary},     {"remsi", ArithClass::IntBinary},
    {"remui", ArithClass::IntBinary},     {"ceildivsi", ArithClass::IntBinary},
    {"ceildivui", ArithClass::IntBinary}, {"floordivsi", ArithClass::IntBinary},
    {"minsi", ArithClass::IntBinary},     {"minui", ArithClass::IntBinary},
    {"maxsi", ArithClass::IntBinary},     {"maxui", ArithClass::IntBinary},
    {"andi", ArithClass::IntBinary},      {"ori", ArithClass::IntBinary},
    {"xori", ArithClass::IntBinary},      {"shli", ArithClass::IntBinary},
    {"shrsi", ArithClass::IntBinary},     {"shrui", ArithClass::IntBinary},
    {"addf", ArithClass::FloatBinary},    {"subf", ArithClass::FloatBinary},
    {"mulf", ArithClass::FloatBinary},    {"divf", ArithClass::FloatBinary},
    {"remf", ArithClass::FloatBinary},    {"maximumf", ArithClass::FloatBinary},
    {"minimumf", ArithClass::FloatBinary}, {"maxnumf", ArithClass::FloatBinary},
    {"minnumf", ArithClass::FloatBinary}, {"negf", ArithClass::FloatUnary},
    {"cmpi", ArithClass::CmpI},           {"cmpf", ArithClass::CmpF},
    {"select", ArithClass::Select},       {"index_cast", ArithClass::Cast},
    {"index_castui", ArithClass::Cast},   {"bitcast", ArithClass::Cast},
    {"extf", ArithClass::Cast},           {"truncf", ArithClass::Cast},
    {"extsi", ArithClass::Cast},          {"extui", ArithClass::Cast},
    {"trunci", ArithClass::Cast},         {"sitofp", ArithClass::Cast},
    {"uitofp", ArithClass::Cast},         {"fptosi", ArithClass::Cast},
    {"fptoui", ArithClass::Cast},
};
const ArithDef* findArith(std::string_view name) {
  if (!name.starts_with("arith.")) return nullptr;
  name.remove_prefix(6);
  for (const ArithDef& d : kArith)
    if (d.name == name) return &d;
  return nullptr;
}
constexpr std::string_view kCmpIPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
constexpr std::string_view kCmpFPreds[] = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                                           "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"};

// Canonical keys and value spellings of the tile-op attributes pto-as understands.
struct AttrAlias {
  std::string_view alias;
  std::string_view key;
};
constexpr AttrAlias kAttrAliases[] = {
    {"rmode", "rmode"},       {"round_mode", "rmode"}, {"roundMode", "rmode"},
    {"rnd", "rmode"},         {"sat_mode", "sat_mode"}, {"sat", "sat_mode"},
    {"satMode", "sat_mode"},  {"saturation", "sat_mode"}, {"cmpMode", "cmpMode"},
    {"cmp", "cmpMode"},       {"cmp_mode", "cmpMode"}, {"precision", "precision"},
    {"algorithm", "precision"},
};

// ---------------------------------------------------------------- the builder
class Builder {
public:
  Builder(const SourceFile& src, DiagEngine& diags, std::optional<isa::Arch> arch)
      : src_(src), diags_(diags), types_(diags), archFlag_(arch) {}

  std::unique_ptr<Module> build(P::FileContext* file) {
    mod_ = std::make_unique<Module>();
    mod_->fileName = src_.name();
    std::vector<P::StmtContext*> fragmentStmts;
    for (auto* item : file->item()) buildItem(item, fragmentStmts);
    if (!fragmentStmts.empty()) buildFragment(fragmentStmts);
    return std::move(mod_);
  }

private:
  // ------------------------------------------------------------ module structure
  void buildItem(P::ItemContext* item, std::vector<P::StmtContext*>& fragment) {
    if (auto* m = item->moduleOp()) {
      if (m->attrDict()) readModuleAttrs(m->attrDict());
      for (auto* sub : m->item()) buildItem(sub, fragment);
    } else if (auto* f = item->funcOp()) {
      buildFunc(f);
    } else if (auto* k = item->kernelOp()) {
      buildKernel(k);
    } else if (auto* s = item->stmt()) {
      fragment.push_back(s);
    }
  }

  void readModuleAttrs(P::AttrDictContext* dict) {
    for (auto* e : dict->attrEntry()) {
      std::string key = entryKey(e);
      std::string value = entryValue(e);
      mod_->attrs.push_back({key, value});
      if (key == "pto.target_arch" || key == "pto.device-spec") {
        auto word = enumWord(e->attrValue());
        std::optional<isa::Arch> arch;
        if (word && key == "pto.target_arch") arch = isa::parseArch(*word);
        if (word && key == "pto.device-spec")
          arch = (word->starts_with("Ascend950") || word->starts_with("Ascend910_95")) ? isa::Arch::A5
                                                                                         : isa::Arch::A2A3;
        if (!arch) {
          diags_.error(locOf(e), "unknown target arch '" + value + "' (expected \"a2a3\", \"a2\", \"a3\" or \"a5\")");
          continue;
        }
        mod_->targetArch = arch;
        mod_->targetArchLoc = locOf(e);
      }
    }
  }

  /// The value of `key = value [: type]` as canonical text (empty for a unit attribute).
  static std::string entryValue(P::AttrEntryContext* e) {
    if (!e->attrValue()) return "";
    std::string v = canonicalText(e->attrValue());
    if (e->type()) v += " : " + canonicalText(e->type());
    return v;
  }

  static std::string entryKey(P::AttrEntryContext* e) {
    std::string k = e->word() ? e->word()->getText() : e->STRING()->getText();
    if (k.size() >= 2 && k.front() == '"') k = k.substr(1, k.size() - 2);
    return k;
  }

  std::vector<NamedAttr> readAttrs(P::AttrDictContext* dict) {
    std::vector<NamedAttr> out;
    if (!dict) return out;
    for (auto* e : dict->attrEntry())
      out.push_back({entryKey(e), entryValue(e)});
    return out;
  }

  isa::Arch arch() const {
    if (archFlag_) return *archFlag_;
    return mod_->targetArch.value_or(isa::Arch::A2A3);
  }

  Function* beginFunction(std::string name, SrcLoc loc) {
    for (auto& f : mod_->functions)
      if (f->name == name) {
        diags_.error(loc, "redefinition of function '@" + name + "'");
        diags_.note(f->loc, "previous definition is here");
        break;
      }
    mod_->functions.push_back(std::make_unique<Function>());
    fn_ = mod_->functions.back().get();
    fn_->name = std::move(name);
    fn_->loc = loc;
    scopes_.assign(1, {});
    events_.clear();
    pendingPlacements_.clear();
    return fn_;
  }

  void readArgs(const std::vector<P::FuncArgContext*>& args, Region& region) {
    unsigned index = 0;
    for (auto* a : args) {
      auto ty = types_.read(a->type());
      if (!ty) {
        ++index;
        continue;
      }
      std::string name = a->VALUE_ID() ? a->VALUE_ID()->getText().substr(1) : "arg" + std::to_string(index);
      SrcLoc loc = a->VALUE_ID() ? locOf(a->VALUE_ID()) : locOf(a->type());
      region.args.push_back(define(name, *ty, loc));
      ++index;
    }
  }

  void buildFunc(P::FuncOpContext* f) {
    std::string name = f->SYMBOL()->getText().substr(1);
    Function* fn = beginFunction(name, locOf(f->SYMBOL()));
    fn->isPrivate = f->visibility && f->visibility->getText() == "private";
    fn->attrs = readAttrs(f->attrDict());
    if (auto* r = f->funcResults()) {
      std::vector<P::TypeContext*> rts;
      if (r->type().size() == 1 && r->children.size() == 2) rts.push_back(r->type(0));
      else rts = r->type();
      for (auto* t : rts)
        if (auto ty = types_.read(t)) fn->resultTypes.push_back(*ty);
    }
    readArgs(f->funcArg(), fn->body);
    if (!f->region()) {
      fn->isDeclaration = true;
      return;
    }
    buildRegionBody(f->region(), fn->body, false);
    finishFunction();
  }

  void buildKernel(P::KernelOpContext* k) {
    Function* fn = beginFunction(k->SYMBOL()->getText().substr(1), locOf(k->SYMBOL()));
    fn->attrs = readAttrs(k->attrDict());
    if (!fn->hasAttr("pto.entry")) fn->attrs.push_back({"pto.entry", ""});
    readArgs(k->funcArg(), fn->body);
    buildRegionBody(k->region(), fn->body, false);
    finishFunction();
  }

  void buildFragment(const std::vector<P::StmtContext*>& stmts) {
    std::string stem = src_.name();
    if (auto slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
    if (auto dot = stem.find('.'); dot != std::string::npos) stem = stem.substr(0, dot);
    std::string name;
    for (char c : stem) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "fragment_" + name;
    Function* fn = beginFunction(name, locOf(stmts.front()));
    fn->isFragment = true;
    fn->attrs.push_back({"pto.entry", ""});
    regions_.push_back(&fn->body);
    for (auto* s : stmts) buildStmt(s);
    regions_.pop_back();
    finishFunction();
  }

  void finishFunction() {
    resolveEvents();
    for (auto& [name, p] : pendingPlacements_)
      diags_.error(p.loc, "'%" + name + "' is placed with tassign but never used as a tile");
    pendingPlacements_.clear();
    fn_ = nullptr;
  }

  // ------------------------------------------------------------ values and scopes
  ValueId define(const std::string& name, Type type, SrcLoc loc) {
    auto& scope = scopes_.back();
    if (auto it = scope.find(name); it != scope.end()) {
      diags_.error(loc, "redefinition of value '%" + name + "'");
      diags_.note(fn_->value(it->second).loc, "previous definition is here");
    }
    ValueId id = fn_->addValue(name, std::move(type), loc);
    scope[name] = id;
    return id;
  }

  std::optional<ValueId> lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end()) return f->second;
    return std::nullopt;
  }

  ValueId use(const OperandRef& r) {
    if (auto id = lookup(r.name)) return *id;
    diags_.error(r.loc, "use of undefined value '%" + r.name + "'");
    return kNoValue;
  }

  // ------------------------------------------------------------ regions and statements
  Region& cur() { return *regions_.back(); }

  /// Whether `v` is the result of an arith.constant in an enclosing region.
  bool definedByConstant(ValueId v) const {
    if (v == kNoValue) return false;
    for (const Region* r : regions_)
      for (const auto& op : r->ops)
        if (op->kind == OpKind::Constant && std::find(op->results.begin(), op->results.end(), v) != op->results.end())
          return true;
    return false;
  }

  Op& emit(OpKind kind, SrcLoc loc, std::string name = {}) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->loc = loc;
    op->name = std::move(name);
    cur().ops.push_back(std::move(op));
    building_ = cur().ops.back().get();
    return *cur().ops.back();
  }

  /// Emits a helper op (a constant) so that it comes before the op being built, which may
  /// already be in the region when its operands are read.
  Op& emitBefore(OpKind kind, SrcLoc loc, std::string name) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->loc = loc;
    op->name = std::move(name);
    auto& ops = cur().ops;
    if (building_ && !ops.empty() && ops.back().get() == building_) {
      ops.insert(ops.end() - 1, std::move(op));
      return *ops[ops.size() - 2];
    }
    ops.push_back(std::move(op));
    return *ops.back();
  }

  void addOperand(Op& op, ValueId v, SrcLoc loc) {
    op.operands.push_back(v);
    op.operandLocs.push_back(loc);
  }

  void buildRegionBody(P::RegionContext* r, Region& region, bool newScope = true) {
    if (newScope) scopes_.emplace_back();
    regions_.push_back(&region);
    if (auto* label = r->blockLabel()) readArgs(label->funcArg(), region);
    for (auto* s : r->stmt()) buildStmt(s);
    regions_.pop_back();
    if (newScope) scopes_.pop_back();
  }

  struct ResultName {
    std::string name;
    SrcLoc loc;
  };
  std::vector<ResultName> resultNames(P::ResultListContext* rl) {
    std::vector<ResultName> out;
    if (!rl) return out;
    for (auto* g : rl->resultGroup()) {
      std::string base = g->VALUE_ID()->getText().substr(1);
      SrcLoc loc = locOf(g->VALUE_ID());
      if (g->INT()) {
        auto n = parseInt(g->INT()->getText());
        if (!n || *n < 1 || *n > 64) {
          diags_.error(locOf(g->INT()), "invalid result count");
          continue;
        }
        for (int64_t i = 0; i < *n; ++i) out.push_back({base + "#" + std::to_string(i), loc});
      } else {
        out.push_back({base, loc});
      }
    }
    return out;
  }

  /// Defines result values; for a single-result group "%x:1" also binds "%x".
  void defineResults(Op& op, const std::vector<ResultName>& names, const std::vector<Type>& types) {
    if (names.size() != types.size()) {
      SrcLoc loc = names.empty() ? op.loc : names.front().loc;
      diags_.error(loc, "'" + opLabel(op) + "' produces " + std::to_string(types.size()) +
                            " result(s) but " + std::to_string(names.size()) + " name(s) are given");
      return;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      op.results.push_back(define(names[i].name, types[i], names[i].loc));
      if (names[i].name.ends_with("#0")) scopes_.back()[names[i].name.substr(0, names[i].name.size() - 2)] = op.results.back();
    }
  }

  static std::string opLabel(const Op& op) { return op.name.empty() ? "operation" : op.name; }

  void buildStmt(P::StmtContext* s) {
    building_ = nullptr;
    if (auto* sec = s->section()) {
      Op& op = emit(OpKind::Section, locOf(sec->kind), sec->kind->getText());
      op.regions.emplace_back();
      buildRegionBody(sec->region(), op.regions[0]);
      return;
    }
    if (auto* b = s->blockInsn()) {
      diags_.error(locOf(b->BLOCK_MNEMONIC()),
                   "canonical block assembly ('" + b->BLOCK_MNEMONIC()->getText() +
                       "') cannot be mixed with PTO source operations; assemble it on its own");
      return;
    }
    auto results = resultNames(s->resultList());
    if (auto* f = s->scfFor()) return buildFor(f, results);
    if (auto* i = s->scfIf()) return buildIf(i, results);
    if (auto* w = s->scfWhile()) return buildWhile(w, results);
    buildGeneric(s->genericOp(), results);
  }

  std::optional<ValueId> operandValue(P::OperandContext* o, const Type& want) {
    if (o->VALUE_ID()) {
      OperandRef r;
      r.name = o->VALUE_ID()->getText().substr(1);
      if (o->HASH_NUM()) r.name += o->HASH_NUM()->getText();
      r.loc = locOf(o->VALUE_ID());
      ValueId v = use(r);
      if (v == kNoValue) return std::nullopt;
      return v;
    }
    return constant(o->literal(), want, locOf(o->literal()));
  }

  std::optional<Type> typeGroup(P::TypeGroupContext* g, std::vector<Type>& out) {
    if (g->type().size() == 1 && g->children.size() == 1) {
      auto t = types_.read(g->type(0));
      if (t) out.push_back(*t);
      return t;
    }
    for (auto* t : g->type())
      if (auto ty = types_.read(t)) out.push_back(*ty);
    return std::nullopt;
  }

  void buildFor(P::ScfForContext* f, const std::vector<ResultName>& results) {
    Type ivType = Type::index();
    if (f->type())
      if (auto t = types_.read(f->type())) ivType = *t;
    Op& op = emit(OpKind::For, locOf(f->getStart()), "scf.for");
    auto ops = f->operand();
    for (size_t i = 0; i < 3; ++i) {
      auto v = operandValue(ops[i], ivType);
      addOperand(op, v.value_or(kNoValue), locOf(ops[i]));
    }
    std::vector<Type> iterTypes;
    if (f->typeGroup()) typeGroup(f->typeGroup(), iterTypes);
    auto iters = f->iterArg();
    if (!iters.empty() && iters.size() != iterTypes.size())
      diags_.error(locOf(f->typeGroup()), "scf.for has " + std::to_string(iters.size()) +
                                              " iter_args but " + std::to_string(iterTypes.size()) + " types");
    for (size_t i = 0; i < iters.size(); ++i) {
      Type t = i < iterTypes.size() ? iterTypes[i] : Type::index();
      auto v = operandValue(iters[i]->operand(), t);
      addOperand(op, v.value_or(kNoValue), locOf(iters[i]->operand()));
    }
    op.regions.emplace_back();
    scopes_.emplace_back();
    Region& body = op.regions[0];
    body.args.push_back(define(f->VALUE_ID()->getText().substr(1), ivType, locOf(f->VALUE_ID())));
    for (size_t i = 0; i < iters.size(); ++i)
      body.args.push_back(define(iters[i]->VALUE_ID()->getText().substr(1),
                                 i < iterTypes.size() ? iterTypes[i] : Type::index(),
                                 locOf(iters[i]->VALUE_ID())));
    buildRegionBody(f->region(), body, false);
    scopes_.pop_back();
    iterTypes.resize(iters.size(), Type::index());
    defineResults(op, results, iterTypes);
  }

  void buildIf(P::ScfIfContext* i, const std::vector<ResultName>& results) {
    Op& op = emit(OpKind::If, locOf(i->getStart()), "scf.if");
    auto c = operandValue(i->operand(), Type::scalar(isa::DType::I1));
    addOperand(op, c.value_or(kNoValue), locOf(i->operand()));
    std::vector<Type> types;
    if (i->typeGroup()) typeGroup(i->typeGroup(), types);
    op.regions.resize(2);
    auto regions = i->region();
    buildRegionBody(regions[0], op.regions[0]);
    if (regions.size() > 1) buildRegionBody(regions[1], op.regions[1]);
    else if (!types.empty())
      diags_.error(op.loc, "scf.if with results needs an else region");
    defineResults(op, results, types);
  }

  void buildWhile(P::ScfWhileContext* w, const std::vector<ResultName>& results) {
    Op& op = emit(OpKind::While, locOf(w->getStart()), "scf.while");
    std::vector<Type> inTypes, outTypes;
    if (auto* ft = w->type(); ft && ft->ARROW()) {
      for (auto* t : ft->type())
        if (auto ty = types_.read(t)) inTypes.push_back(*ty);
      typeGroup(ft->typeGroup(), outTypes);
    } else {
      diags_.error(locOf(w->type()), "scf.while needs a function type '(inputs) -> (results)'");
    }
    auto iters = w->iterArg();
    if (iters.size() != inTypes.size())
      diags_.error(locOf(w->type()), "scf.while has " + std::to_string(iters.size()) +
                                         " initial values but " + std::to_string(inTypes.size()) + " input types");
    for (size_t k = 0; k < iters.size(); ++k) {
      auto v = operandValue(iters[k]->operand(), k < inTypes.size() ? inTypes[k] : Type::index());
      addOperand(op, v.value_or(kNoValue), locOf(iters[k]->operand()));
    }
    op.regions.resize(2);
    scopes_.emplace_back();
    for (size_t k = 0; k < iters.size(); ++k)
      op.regions[0].args.push_back(define(iters[k]->VALUE_ID()->getText().substr(1),
                                          k < inTypes.size() ? inTypes[k] : Type::index(),
                                          locOf(iters[k]->VALUE_ID())));
    auto regions = w->region();
    buildRegionBody(regions[0], op.regions[0], false);
    scopes_.pop_back();
    buildRegionBody(regions[1], op.regions[1]);
    defineResults(op, results, outTypes);
  }

  // ------------------------------------------------------------ constants
  std::optional<ValueId> constant(P::LiteralContext* lit, const Type& type, SrcLoc loc) {
    std::string text = lit->getText();
    if (!checkLiteral(text, type, loc)) return std::nullopt;
    Op& op = emitBefore(OpKind::Constant, loc, "arith.constant");
    op.attrs.push_back({"value", normalizeLiteral(text, type)});
    std::string name = constantName(text, type);
    ValueId v = fn_->addValue(name, type, loc);
    op.results.push_back(v);
    return v;
  }

  bool checkLiteral(const std::string& text, const Type& type, SrcLoc loc) {
    bool isFloatText = text.find_first_of(".eE") != std::string::npos && text.find("0x") == std::string::npos;
    if (text == "true" || text == "false") {
      if (type.kind == TypeKind::Scalar && type.elem == isa::DType::I1) return true;
      diags_.error(loc, "boolean literal used where " + toString(type) + " is expected");
      return false;
    }
    if (type.kind == TypeKind::Index || (type.kind == TypeKind::Scalar && !isa::isFloat(type.elem))) {
      if (isFloatText) {
        diags_.error(loc, "floating-point literal '" + text + "' used where " + toString(type) + " is expected");
        return false;
      }
      auto v = parseInt(text);
      if (!v) {
        diags_.error(loc, "integer literal '" + text + "' is out of range");
        return false;
      }
      if (type.kind == TypeKind::Scalar && isa::bitWidth(type.elem) < 64) {
        unsigned bits = isa::bitWidth(type.elem);
        int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << bits) - 1;
        if (*v < lo || *v > hi) {
          diags_.error(loc, "literal " + text + " does not fit in " + toString(type));
          return false;
        }
      }
      return true;
    }
    if (type.kind == TypeKind::Scalar) return true;
    diags_.error(loc, "a literal cannot have type " + toString(type));
    return false;
  }

  /// Hex literals for float types are bit patterns (0x3F800000 is 1.0f); print them as such.
  /// A decimal integer written for a float type prints as a float literal ("0" -> "0.0"), as
  /// MLIR requires; hex literals for float types are bit patterns and stay as written.
  static std::string normalizeLiteral(const std::string& text, const Type& type) {
    bool decimalInt = !text.empty() && text.find_first_of(".eExX") == std::string::npos;
    if (type.isFloatScalar() && decimalInt) return text + ".0";
    return text;
  }

  /// MLIR-style names for materialized constants: %c16, %c0_i64, %cm1_i32, %cst (the printer
  /// makes repeated names unique).
  static std::string constantName(const std::string& text, const Type& type) {
    if (type.isFloatScalar() || text.find_first_of(".eExX") != std::string::npos || text == "true" || text == "false")
      return "cst";
    std::string digits = text.front() == '-' ? "m" + text.substr(1) : text;
    return "c" + digits + (type.kind == TypeKind::Index ? "" : "_" + toString(type));
  }

  // ------------------------------------------------------------ generic statements
  void buildGeneric(P::GenericOpContext* g, const std::vector<ResultName>& results) {
    std::string name = g->opName()->getText();
    SrcLoc loc = locOf(g->opName());
    Pieces p = collectStatement(g);
    std::string pred = g->predicate ? g->predicate->getText() : "";
    SrcLoc predLoc = locOf(g->predicate);

    if (const ArithDef* a = findArith(name)) {
      bool cast = a->cls == ArithClass::Cast;
      if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
      if (!cast && p.toType) {
        diags_.error(locOf(p.toType), "unexpected 'to' type in '" + name + "'");
        return;
      }
      return buildArith(*a, name, loc, pred, predLoc, p, results);
    }
    if (!pred.empty()) {
      diags_.error(predLoc, "unexpected '" + pred + ",' after '" + name + "'");
      return;
    }
    auto only = [&](std::initializer_list<PieceKind> kinds, std::initializer_list<std::string_view> words = {}) {
      return onlyPieces(diags_, p, name, kinds, words);
    };
    using K = PieceKind;
    if (name == "arith.constant") return only({K::Operand, K::Types}) ? buildConstant(loc, p, results) : void();
    if (name == "return" || name == "func.return")
      return only({K::Operand, K::Types}) ? buildTerminator(OpKind::Return, name, loc, p, results) : void();
    if (name == "scf.yield") return only({K::Operand, K::Types}) ? buildTerminator(OpKind::Yield, name, loc, p, results) : void();
    if (name == "scf.condition")
      return only({K::Paren, K::Operand, K::Types}) ? buildCondition(loc, p, results) : void();
    if (name == "func.call" || name == "call")
      return only({K::Symbol, K::Paren, K::Types}) ? buildCall(loc, p, results) : void();
    if (name == "tile") return only({K::Operand, K::Types, K::Keyword}, {"addr"}) ? buildTileDecl(loc, p, results) : void();

    std::string base = name.starts_with("pto.") ? name.substr(4) : name;
    using Handler = void (Builder::*)(const std::string&, SrcLoc, Pieces&, const std::vector<ResultName>&);
    static const std::map<std::string, Handler, std::less<>> kHandlers = {
        {"make_tensor_view", &Builder::buildMakeTensorView},
        {"partition_view", &Builder::buildPartitionView},
        {"get_tensor_view_dim", &Builder::buildGetDim},
        {"alloc_tile", &Builder::buildAllocTile},
        {"subset", &Builder::buildSubset},
        {"treshape", &Builder::buildReshape},
        {"bitcast", &Builder::buildReshape},
        {"set_validshape", &Builder::buildSetValidShape},
        {"tassign", &Builder::buildTAssign},
        {"load_scalar", &Builder::buildLoadScalar},
        {"store_scalar", &Builder::buildStoreScalar},
        {"addptr", &Builder::buildAddPtr},
        {"get_block_idx", &Builder::buildBlockInfo},
        {"get_block_num", &Builder::buildBlockInfo},
        {"get_subblock_idx", &Builder::buildBlockInfo},
        {"get_subblock_num", &Builder::buildBlockInfo},
        {"tgetval", &Builder::buildTGetVal},
        {"record_event", &Builder::buildSync},
        {"wait_event", &Builder::buildSync},
        {"set_flag", &Builder::buildSync},
        {"wait_flag", &Builder::buildSync},
        {"set_flag_dyn", &Builder::buildSync},
        {"wait_flag_dyn", &Builder::buildSync},
        {"barrier", &Builder::buildBarrier},
        {"barrier_sync", &Builder::buildBarrier},
        {"pipe_barrier", &Builder::buildBarrier},
        {"declare_eventid_array", &Builder::buildEventIdArray},
        {"eventid_array_get", &Builder::buildEventIdArray},
        {"eventid_array_set", &Builder::buildEventIdArray},
        {"print", &Builder::buildPrint},
        {"tprint", &Builder::buildPrint},
        {"trap", &Builder::buildPrint},
    };
    if (auto it = kHandlers.find(base); it != kHandlers.end())
      return (this->*(it->second))("pto." + base, loc, p, results);
    if (const isa::OpInfo* info = isa::findOp(name)) {
      bool dps = p.call("ins") || p.call("outs");
      bool ok = dps ? only({K::Call, K::Dict}, {"ins", "outs", "wait", "record"})
                    : only({K::Operand, K::Types, K::Arrow, K::Dict, K::Hash, K::Angle, K::Call}, {"wait", "record"});
      return ok ? buildTileOp(*info, loc, p, results) : void();
    }
    diags_.error(loc, "unknown operation '" + name + "'");
  }

  std::optional<Type> readType(P::TypeContext* t) { return types_.read(t); }

  bool expectResults(const std::string& name, SrcLoc loc, const std::vector<ResultName>& results, size_t n) {
    if (results.size() == n) return true;
    diags_.error(results.empty() ? loc : results.front().loc,
                 "'" + name + "' produces " + std::to_string(n) + " result(s) but " +
                     std::to_string(results.size()) + " name(s) are given");
    return false;
  }

  void buildArith(const ArithDef& def, const std::string& name, SrcLoc loc, const std::string& pred,
                  SrcLoc predLoc, Pieces& p, const std::vector<ResultName>& results) {
    bool isCmp = def.cls == ArithClass::CmpI || def.cls == ArithClass::CmpF;
    if (isCmp) {
      bool ok = false;
      if (def.cls == ArithClass::CmpI)
        for (auto pr : kCmpIPreds) ok |= pr == pred;
      else
        for (auto pr : kCmpFPreds) ok |= pr == pred;
      if (pred.empty()) {
        diags_.error(loc, "'" + name + "' needs a predicate: '" + name + " <pred>, %a, %b : T'");
        return;
      }
      if (!ok) {
        diags_.error(predLoc, "unknown predicate '" + pred + "' for '" + name + "'");
        return;
      }
    } else if (!pred.empty()) {
      diags_.error(predLoc, "unexpected '" + pred + ",' after '" + name + "'");
      return;
    }
    if (p.types.empty()) {
      diags_.error(loc, "'" + name + "' needs a type: '... : T'");
      return;
    }
    auto ty = readType(p.types.back());
    if (!ty) return;
    Type operandType = *ty, resultType = *ty;
    size_t arity = 2;
    switch (def.cls) {
    case ArithClass::CmpI:
    case ArithClass::CmpF: resultType = Type::scalar(isa::DType::I1); break;
    case ArithClass::Select: arity = 3; break;
    case ArithClass::FloatUnary: arity = 1; break;
    case ArithClass::Cast:
      arity = 1;
      if (!p.toType) {
        diags_.error(p.typesLoc, "'" + name + "' needs '... : SrcType to DstType'");
        return;
      }
      if (auto to = readType(p.toType)) resultType = *to;
      else return;
      break;
    default: break;
    }
    if (p.operands.size() != arity) {
      diags_.error(loc, "'" + name + "' expects " + std::to_string(arity) + " operands, found " +
                            std::to_string(p.operands.size()));
      return;
    }
    Op& op = emit(OpKind::Arith, loc, name);
    if (isCmp) op.attrs.push_back({"predicate", pred});
    for (size_t i = 0; i < p.operands.size(); ++i) {
      Type want = (def.cls == ArithClass::Select && i == 0) ? Type::scalar(isa::DType::I1) : operandType;
      ValueId v = scalarOperand(p.operands[i], want);
      addOperand(op, v, p.operands[i].loc);
      if (v != kNoValue && !(fn_->type(v) == want)) {
        diags_.error(p.operands[i].loc, "operand '%" + fn_->value(v).name + "' has type " +
                                            toString(fn_->type(v)) + " but '" + name + "' expects " +
                                            toString(want));
        diags_.note(fn_->value(v).loc, "'%" + fn_->value(v).name + "' is defined here");
      }
    }
    if (def.cls == ArithClass::IntBinary && !operandType.isIntLike())
      diags_.error(p.typesLoc, "'" + name + "' needs an integer or index type, found " + toString(operandType));
    if ((def.cls == ArithClass::FloatBinary || def.cls == ArithClass::FloatUnary) && !operandType.isFloatScalar())
      diags_.error(p.typesLoc, "'" + name + "' needs a floating-point type, found " + toString(operandType));
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {resultType});
  }

  ValueId scalarOperand(const OperandRef& r, const Type& want) {
    if (r.kind == OperandRef::Literal) return constant(r.lit, want, r.loc).value_or(kNoValue);
    if (r.kind == OperandRef::Memory) {
      diags_.error(r.loc, "a memory operand is not allowed here");
      return kNoValue;
    }
    return use(r);
  }

  void buildConstant(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Literal) {
      diags_.error(loc, "'arith.constant' expects one literal: 'arith.constant 0 : index'");
      return;
    }
    P::LiteralContext* lit = p.operands[0].lit;
    std::string text = lit->getText();
    Type type;
    if (p.types.empty()) {
      if (text != "true" && text != "false") {
        diags_.error(loc, "'arith.constant " + text + "' needs a type: 'arith.constant " + text + " : T'");
        return;
      }
      type = Type::scalar(isa::DType::I1);
    } else if (auto t = readType(p.types[0])) {
      type = *t;
    } else {
      return;
    }
    if (!checkLiteral(text, type, p.operands[0].loc)) return;
    Op& op = emit(OpKind::Constant, loc, "arith.constant");
    op.attrs.push_back({"value", normalizeLiteral(text, type)});
    if (expectResults("arith.constant", loc, results, 1)) defineResults(op, results, {type});
  }

  void buildTerminator(OpKind kind, const std::string& name, SrcLoc loc, Pieces& p,
                       const std::vector<ResultName>& results) {
    expectResults(name, loc, results, 0);
    Op& op = emit(kind, loc, kind == OpKind::Return ? "return" : "scf.yield");
    for (auto& r : p.operands) addOperand(op, scalarOperand(r, Type::index()), r.loc);
    checkAnnotatedTypes(op, p);
  }

  /// `op %a, %b : A, B`: the annotated types must match the operands' types.
  void checkAnnotatedTypes(Op& op, Pieces& p) {
    if (p.types.empty()) return;
    if (p.types.size() != op.operands.size()) {
      diags_.error(p.typesLoc, "'" + op.name + "' has " + std::to_string(op.operands.size()) +
                                   " operand(s) but " + std::to_string(p.types.size()) + " type(s)");
      return;
    }
    for (size_t i = 0; i < p.types.size(); ++i) {
      auto t = readType(p.types[i]);
      ValueId v = op.operands[i];
      if (!t || v == kNoValue) continue;
      if (!(fn_->type(v) == *t)) {
        diags_.error(locOf(p.types[i]), "type " + toString(*t) + " does not match operand '%" +
                                            fn_->value(v).name + "' of type " + toString(fn_->type(v)));
        diags_.note(fn_->value(v).loc, "'%" + fn_->value(v).name + "' is defined here");
      }
    }
  }

  void buildCondition(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    expectResults("scf.condition", loc, results, 0);
    Op& op = emit(OpKind::Condition, loc, "scf.condition");
    if (p.parens.empty()) {
      diags_.error(loc, "expected 'scf.condition(%cond) %args : types'");
      return;
    }
    Pieces cond = collectPieces(p.parens[0]->piece());
    if (cond.operands.size() != 1) {
      diags_.error(loc, "scf.condition takes one condition operand");
      return;
    }
    addOperand(op, scalarOperand(cond.operands[0], Type::scalar(isa::DType::I1)), cond.operands[0].loc);
    for (auto& r : p.operands) addOperand(op, scalarOperand(r, Type::index()), r.loc);
  }

  void buildCall(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (p.symbols.empty() || p.parens.empty()) {
      diags_.error(loc, "expected 'func.call @callee(%args) : (types) -> results'");
      return;
    }
    Op& op = emit(OpKind::Call, loc, p.symbols[0]->SYMBOL()->getText().substr(1));
    op.typeLoc = locOf(p.symbols[0]->SYMBOL());
    Pieces args = collectPieces(p.parens[0]->piece());
    for (auto& r : args.operands) addOperand(op, scalarOperand(r, Type::index()), r.loc);
    std::vector<Type> rts;
    for (auto* t : p.arrowTypes)
      if (auto ty = readType(t)) rts.push_back(*ty);
    defineResults(op, results, rts);
  }

  // ------------------------------------------------------------ views and tiles
  std::optional<Type> singleType(const std::string& name, SrcLoc loc, Pieces& p) {
    P::TypeContext* t = !p.arrowTypes.empty() ? p.arrowTypes.back() : (!p.types.empty() ? p.types.back() : nullptr);
    if (!t) {
      diags_.error(loc, "'" + name + "' needs a result type annotation");
      return std::nullopt;
    }
    return readType(t);
  }

  std::vector<ValueId> indexList(P::AttrValueContext* v, const std::string& what, SrcLoc loc) {
    std::vector<ValueId> out;
    if (!v || !v->bracket()) {
      diags_.error(loc, "expected '" + what + " = [...]'");
      return out;
    }
    Pieces items = collectPieces(v->bracket()->piece());
    for (auto& r : items.operands) out.push_back(scalarOperand(r, Type::index()));
    return out;
  }

  void buildMakeTensorView(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Keyword, PieceKind::Dict, PieceKind::Types}, {"shape", "strides"})) return;
    auto type = singleType(name, loc, p);
    if (!type) return;
    if (type->kind != TypeKind::TensorView) {
      diags_.error(p.typesLoc, "'" + name + "' must produce a !pto.tensor_view, found " + toString(*type));
      return;
    }
    if (p.operands.size() != 1) {
      diags_.error(loc, "'" + name + "' takes one pointer operand");
      return;
    }
    const Keyword* shape = p.keyword("shape");
    const Keyword* strides = p.keyword("strides");
    if (!shape || !strides) {
      diags_.error(loc, "'" + name + "' needs 'shape = [...]' and 'strides = [...]'");
      return;
    }
    Op& op = emit(OpKind::MakeTensorView, loc, name);
    op.typeLoc = p.typesLoc;
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    auto sh = indexList(shape->value, "shape", shape->loc);
    auto st = indexList(strides->value, "strides", strides->loc);
    for (ValueId v : sh) addOperand(op, v, shape->loc);
    for (ValueId v : st) addOperand(op, v, strides->loc);
    op.ints = {static_cast<int64_t>(sh.size()), static_cast<int64_t>(st.size())};
    for (auto* d : p.dicts)
      for (auto& a : readAttrs(d)) op.attrs.push_back(a);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  void buildPartitionView(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Keyword, PieceKind::Types, PieceKind::Arrow}, {"offsets", "sizes"})) return;
    auto type = singleType(name, loc, p);
    if (!type) return;
    if (type->kind != TypeKind::PartView) {
      diags_.error(locOf(p.arrowTypes.empty() ? p.types.back() : p.arrowTypes.back()),
                   "'" + name + "' must produce a !pto.partition_tensor_view, found " + toString(*type));
      return;
    }
    const Keyword* offsets = p.keyword("offsets");
    const Keyword* sizes = p.keyword("sizes");
    if (p.operands.size() != 1 || !offsets || !sizes) {
      diags_.error(loc, "expected '" + name + " %view, offsets = [...], sizes = [...] : T -> P'");
      return;
    }
    Op& op = emit(OpKind::PartitionView, loc, name);
    op.typeLoc = p.arrowTypes.empty() ? p.typesLoc : locOf(p.arrowTypes.back());
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    auto off = indexList(offsets->value, "offsets", offsets->loc);
    auto sz = indexList(sizes->value, "sizes", sizes->loc);
    for (ValueId v : off) addOperand(op, v, offsets->loc);
    for (ValueId v : sz) addOperand(op, v, sizes->loc);
    op.ints = {static_cast<int64_t>(off.size()), static_cast<int64_t>(sz.size())};
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  void buildGetDim(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow})) return;
    if (p.operands.size() != 2) {
      diags_.error(loc, "expected '" + name + " %view, %dim : T -> index'");
      return;
    }
    Op& op = emit(OpKind::GetTensorViewDim, loc, name);
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    addOperand(op, scalarOperand(p.operands[1], Type::index()), p.operands[1].loc);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {Type::index()});
  }

  void buildAllocTile(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Keyword, PieceKind::Types}, {"addr", "valid_row", "valid_col"})) return;
    auto type = singleType(name, loc, p);
    if (!type) return;
    if (!type->isTile()) {
      diags_.error(p.typesLoc, "'" + name + "' must produce a tile, found " + toString(*type));
      return;
    }
    Op& op = emit(OpKind::AllocTile, loc, name);
    op.typeLoc = p.typesLoc;
    op.ints = {0, 0, 0};
    const char* keys[] = {"addr", "valid_row", "valid_col"};
    Type keyTypes[] = {Type::scalar(isa::DType::I64), Type::index(), Type::index()};
    for (const Keyword& kw : p.keywords) {
      auto it = std::find(std::begin(keys), std::end(keys), kw.key);
      if (it == std::end(keys)) {
        diags_.error(kw.loc, "unknown clause '" + kw.key + "' on '" + name + "' (addr, valid_row, valid_col)");
        continue;
      }
    }
    for (int k = 0; k < 3; ++k) {
      const Keyword* kw = p.keyword(keys[k]);
      if (!kw) continue;
      ValueId v = keywordValue(*kw, keyTypes[k]);
      if (v == kNoValue) continue;
      op.ints[k] = 1;
      addOperand(op, v, locOf(kw->value));
    }
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  ValueId keywordValue(const Keyword& kw, const Type& type) {
    P::AttrValueContext* v = kw.value;
    if (v->VALUE_ID()) {
      OperandRef r;
      r.name = v->VALUE_ID()->getText().substr(1);
      r.loc = locOf(v->VALUE_ID());
      return use(r);
    }
    if (v->literal()) return constant(v->literal(), type, locOf(v->literal())).value_or(kNoValue);
    diags_.error(locOf(v), "expected a value or an integer after '" + kw.key + " ='");
    return kNoValue;
  }

  void buildSubset(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Sizes, PieceKind::Types})) return;
    if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory || !p.sizes) {
      diags_.error(loc, "expected '" + name + " %tile[%row, %col] sizes [R, C] : T'");
      return;
    }
    ValueId src = use(p.operands[0]);
    if (src == kNoValue) return;
    if (!fn_->type(src).isTile()) {
      diags_.error(p.operands[0].loc, "'" + name + "' needs a tile operand");
      return;
    }
    Pieces sz = collectPieces(p.sizes->bracket()->piece());
    std::vector<int64_t> sizes;
    for (auto& r : sz.operands) {
      auto v = r.kind == OperandRef::Literal ? parseInt(r.lit->getText()) : std::nullopt;
      if (!v || *v <= 0) {
        diags_.error(r.loc, "subset sizes must be positive integer constants");
        return;
      }
      sizes.push_back(*v);
    }
    if (sizes.size() != 2 || p.operands[0].indices.size() != 2) {
      diags_.error(loc, "'" + name + "' takes two offsets and two sizes");
      return;
    }
    Op& op = emit(OpKind::Subset, loc, name);
    addOperand(op, src, p.operands[0].loc);
    for (auto& idx : p.operands[0].indices) addOperand(op, scalarOperand(idx, Type::index()), idx.loc);
    op.ints = sizes;
    TileType t = fn_->type(src).tile;
    t.rows = t.validRows = sizes[0];
    t.cols = t.validCols = sizes[1];
    // As PTOAS infers it: an offset that is not a constant makes that valid dimension dynamic
    // (`v_row=?` / `v_col=?`).
    if (!definedByConstant(op.operands[1])) t.validRows = kDynamic;
    if (!definedByConstant(op.operands[2])) t.validCols = kDynamic;
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {Type::tileOf(t)});
  }

  void buildReshape(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow})) return;
    if (p.operands.size() != 1 || p.arrowTypes.size() != 1) {
      diags_.error(loc, "expected '" + name + " %src : T1 -> T2'");
      return;
    }
    auto type = readType(p.arrowTypes[0]);
    if (!type) return;
    Op& op = emit(name == "pto.bitcast" ? OpKind::Bitcast : OpKind::Reshape, loc, name);
    op.typeLoc = locOf(p.arrowTypes[0]);
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    checkAnnotatedTypes(op, p);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  void buildSetValidShape(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
    expectResults(name, loc, results, 0);
    if (p.operands.size() != 3) {
      diags_.error(loc, "expected '" + name + " %tile, %rows, %cols : T'");
      return;
    }
    Op& op = emit(OpKind::SetValidShape, loc, name);
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    for (int i = 1; i < 3; ++i) addOperand(op, scalarOperand(p.operands[i], Type::index()), p.operands[i].loc);
  }

  /// Manual placement: `%t2 = pto.tassign %t, %addr : T -> T` (rebinding), `pto.tassign %t,
  /// tile(0x1000)` / `@tile(0x1000)` / `tassign %t, %addr : T, index` (in place).
  void buildTAssign(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Call, PieceKind::Symbol, PieceKind::Paren, PieceKind::Types, PieceKind::Arrow}, {"tile", "ins"})) return;
    if (auto* ins = p.call("ins")) {
      Pieces inner = collectPieces(ins->piece());
      inner.dicts.insert(inner.dicts.end(), p.dicts.begin(), p.dicts.end());
      p = std::move(inner);
    }
    // The address: tile(N), @tile(N), or a second operand.
    std::optional<int64_t> constAddr;
    SrcLoc addrLoc;
    auto readAddrCall = [&](const std::vector<P::PieceContext*>& pieces, SrcLoc at) {
      Pieces a = collectPieces(pieces);
      if (a.operands.size() == 1 && a.operands[0].kind == OperandRef::Literal)
        constAddr = parseInt(a.operands[0].lit->getText());
      addrLoc = at;
      if (!constAddr) diags_.error(at, "expected 'tile(<address>)' with an integer address");
    };
    if (auto* t = p.call("tile")) readAddrCall(t->piece(), locOf(t));
    if (!p.symbols.empty()) {
      std::string sym = p.symbols[0]->SYMBOL()->getText();
      if (sym != "@tile" || p.parens.empty()) {
        diags_.error(locOf(p.symbols[0]->SYMBOL()), "expected '@tile(<address>)'");
        return;
      }
      readAddrCall(p.parens[0]->piece(), locOf(p.symbols[0]->SYMBOL()));
    }
    if (p.operands.empty()) {
      diags_.error(loc, "expected '" + name + " %tile, <address>'");
      return;
    }
    const OperandRef& tileRef = p.operands[0];
    std::optional<ValueId> tile = lookup(tileRef.name);
    std::optional<Type> annotated;
    if (!p.types.empty()) annotated = readType(p.types[0]);
    if (!tile && fn_->isFragment && constAddr) {
      // Fragment tiles are declared by their first typed use; remember the placement until then.
      pendingPlacements_[tileRef.name] = {*constAddr, addrLoc};
      return;
    }
    if (!tile && fn_->isFragment && annotated && annotated->isTile()) tile = declareFragmentTile(tileRef, *annotated);
    if (!tile) {
      use(tileRef);
      return;
    }
    if (!fn_->type(*tile).isTile()) {
      diags_.error(tileRef.loc, "'" + name + "' needs a tile operand, '%" + tileRef.name + "' is " +
                                    toString(fn_->type(*tile)));
      return;
    }
    ValueId addr = kNoValue;
    if (constAddr) {
      addr = constantInt(*constAddr, Type::scalar(isa::DType::I64), addrLoc);
    } else if (p.operands.size() == 2) {
      const OperandRef& a = p.operands[1];
      std::optional<Type> addrType;
      if (p.types.size() == 2) addrType = readType(p.types[1]);
      if (a.kind == OperandRef::Value && !lookup(a.name) && fn_->isFragment && addrType && addrType->isIntLike())
        addr = declareFragmentParam(a, *addrType);
      else
        addr = scalarOperand(a, Type::scalar(isa::DType::I64));
      addrLoc = a.loc;
    } else {
      diags_.error(loc, "expected '" + name + " %tile, <address>'");
      return;
    }
    Op& op = emit(OpKind::TAssign, loc, name);
    addOperand(op, *tile, tileRef.loc);
    addOperand(op, addr, addrLoc);
    if (results.size() == 1) defineResults(op, results, {fn_->type(*tile)});
    else expectResults(name, loc, results, 0);
  }

  ValueId constantInt(int64_t v, const Type& type, SrcLoc loc) {
    Op& op = emitBefore(OpKind::Constant, loc, "arith.constant");
    op.attrs.push_back({"value", std::to_string(v)});
    ValueId id = fn_->addValue(constantName(std::to_string(v), type), type, loc);
    op.results.push_back(id);
    return id;
  }

  void buildLoadScalar(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow})) return;
    if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory ||
        p.operands[0].indices.size() != 1 || p.arrowTypes.size() != 1) {
      diags_.error(loc, "expected '" + name + " %ptr[%offset] : !pto.ptr<T> -> T'");
      return;
    }
    auto type = readType(p.arrowTypes[0]);
    if (!type) return;
    Op& op = emit(OpKind::LoadScalar, loc, name);
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    addOperand(op, scalarOperand(p.operands[0].indices[0], Type::index()), p.operands[0].indices[0].loc);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  void buildStoreScalar(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
    expectResults(name, loc, results, 0);
    if (p.operands.size() != 2 || p.operands[1].kind != OperandRef::Memory || p.operands[1].indices.size() != 1) {
      diags_.error(loc, "expected '" + name + " %value, %ptr[%offset] : !pto.ptr<T>, T'");
      return;
    }
    Type valueType = Type::scalar(isa::DType::F32);
    if (p.types.size() == 2)
      if (auto t = readType(p.types[1])) valueType = *t;
    Op& op = emit(OpKind::StoreScalar, loc, name);
    addOperand(op, scalarOperand(p.operands[0], valueType), p.operands[0].loc);
    addOperand(op, use(p.operands[1]), p.operands[1].loc);
    addOperand(op, scalarOperand(p.operands[1].indices[0], Type::index()), p.operands[1].indices[0].loc);
  }

  void buildAddPtr(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow})) return;
    if (p.operands.size() != 2) {
      diags_.error(loc, "expected '" + name + " %ptr, %offset : P -> P'");
      return;
    }
    Op& op = emit(OpKind::AddPtr, loc, name);
    ValueId ptr = use(p.operands[0]);
    addOperand(op, ptr, p.operands[0].loc);
    addOperand(op, scalarOperand(p.operands[1], Type::index()), p.operands[1].loc);
    if (ptr == kNoValue) return;
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {fn_->type(ptr)});
  }

  void buildBlockInfo(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {})) return;
    if (!p.operands.empty()) diags_.error(p.operands[0].loc, "'" + name + "' takes no operands");
    Op& op = emit(OpKind::BlockInfo, loc, name);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {Type::scalar(isa::DType::I64)});
  }

  void buildTGetVal(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Call, PieceKind::OutsType}, {"ins"})) return;
    auto* ins = p.call("ins");
    if (!ins || !p.outsType) {
      diags_.error(loc, "expected '" + name + " ins(%tile, %offset : T, index) outs : T'");
      return;
    }
    Pieces in = collectPieces(ins->piece());
    auto type = readType(p.outsType);
    if (in.operands.size() != 2 || !type) {
      diags_.error(loc, "expected '" + name + " ins(%tile, %offset : T, index) outs : T'");
      return;
    }
    Op& op = emit(OpKind::TGetVal, loc, name);
    addOperand(op, use(in.operands[0]), in.operands[0].loc);
    addOperand(op, scalarOperand(in.operands[1], Type::index()), in.operands[1].loc);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
  }

  void buildEventIdArray(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow})) return;
    if (name == "pto.declare_eventid_array") {
      auto type = singleType(name, loc, p);
      if (!type) return;
      if (type->kind != TypeKind::EventIdArray) {
        diags_.error(loc, "'" + name + "' must produce a !pto.eventid_array<N>");
        return;
      }
      Op& op = emit(OpKind::DeclareEventIdArray, loc, name);
      if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
      return;
    }
    bool isSet = name == "pto.eventid_array_set";
    if (p.operands.empty() || p.operands[0].kind != OperandRef::Memory || p.operands[0].indices.size() != 1 ||
        p.operands.size() != (isSet ? 2u : 1u)) {
      diags_.error(loc, isSet ? "expected '" + name + " %array[%index], %value : !pto.eventid_array<N>'"
                              : "expected '" + name + " %array[%index] : !pto.eventid_array<N>'");
      return;
    }
    Op& op = emit(isSet ? OpKind::EventIdArraySet : OpKind::EventIdArrayGet, loc, name);
    addOperand(op, use(p.operands[0]), p.operands[0].loc);
    addOperand(op, scalarOperand(p.operands[0].indices[0], Type::index()), p.operands[0].indices[0].loc);
    if (isSet) {
      addOperand(op, scalarOperand(p.operands[1], Type::index()), p.operands[1].loc);
      expectResults(name, loc, results, 0);
    } else if (expectResults(name, loc, results, 1)) {
      defineResults(op, results, {Type::index()});
    }
  }

  void buildPrint(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Call}, {"ins"})) return;
    expectResults(name, loc, results, 0);
    Op& op = emit(OpKind::Print, loc, name);
    if (auto* ins = p.call("ins")) {
      Pieces in = collectPieces(ins->piece());
      for (auto& r : in.operands) {
        if (r.kind == OperandRef::Literal && r.lit->STRING()) {
          op.attrs.push_back({"format", r.lit->getText()});
          continue;
        }
        addOperand(op, scalarOperand(r, Type::index()), r.loc);
      }
    }
  }

  // ------------------------------------------------------------ sync
  /// One entry of a `[a, b, c]` sync list: an enum word, a symbol or a value.
  struct SyncItem {
    std::string word;
    std::string symbol;
    std::optional<OperandRef> value;
    SrcLoc loc;
  };
  std::vector<SyncItem> syncItems(P::BracketContext* b) {
    std::vector<SyncItem> out;
    SyncItem item;
    bool have = false;
    for (auto* piece : b->piece()) {
      if (dynamic_cast<P::CommaPieceContext*>(piece)) {
        out.push_back(item);
        item = {};
        have = false;
        continue;
      }
      have = true;
      item.loc = locOf(piece);
      if (auto* h = dynamic_cast<P::HashPieceContext*>(piece)) {
        if (h->angle()) item.word = enumWord(h->angle()).value_or("");
      } else if (auto* a = dynamic_cast<P::AnglePieceContext*>(piece)) {
        item.word = enumWord(a->angle()).value_or("");
      } else if (auto* s = dynamic_cast<P::SymbolPieceContext*>(piece)) {
        item.symbol = s->SYMBOL()->getText().substr(1);
      } else if (auto* v = dynamic_cast<P::ValuePieceContext*>(piece)) {
        OperandRef r;
        r.name = v->VALUE_ID()->getText().substr(1);
        r.loc = locOf(v->VALUE_ID());
        item.value = r;
      } else if (auto* l = dynamic_cast<P::LiteralPieceContext*>(piece)) {
        item.word = l->getText();
        if (item.word.size() >= 2 && item.word.front() == '"') item.word = item.word.substr(1, item.word.size() - 2);
      }
    }
    if (have) out.push_back(item);
    return out;
  }

  std::optional<isa::Pipe> syncPipe(const SyncItem& it, bool highLevel) {
    if (highLevel) {
      auto t = isa::parseSyncOpType(it.word);
      if (!t) {
        diags_.error(it.loc, "unknown sync endpoint '" + it.word + "' (expected TLOAD, TSTORE_VEC, "
                             "TSTORE_ACC, TMOV_M2L, TMOV_M2S, TMOV_M2B, TMOV_M2V, TMOV_V2M, TMATMUL, TVEC)");
        return std::nullopt;
      }
      return isa::pipeOf(*t);
    }
    auto p = isa::parsePipe(it.word);
    if (!p) diags_.error(it.loc, "unknown pipe '" + it.word + "' (expected PIPE_S, PIPE_V, PIPE_M, "
                                 "PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL)");
    return p;
  }

  void buildSync(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Bracket})) return;
    expectResults(name, loc, results, 0);
    bool highLevel = name == "pto.record_event" || name == "pto.wait_event";
    bool isSet = name == "pto.record_event" || name.starts_with("pto.set_flag");
    bool dyn = name.ends_with("_dyn");
    if (p.brackets.size() != 1) {
      diags_.error(loc, "expected '" + name + "[<src>, <dst>, <event>]'");
      return;
    }
    auto items = syncItems(p.brackets[0]);
    if (items.size() != 3 && !(!dyn && items.size() == 2)) {
      diags_.error(locOf(p.brackets[0]), "'" + name + "' takes [source, destination, event id]");
      return;
    }
    auto src = syncPipe(items[0], highLevel), dst = syncPipe(items[1], highLevel);
    if (!src || !dst) return;
    Op& op = emit(isSet ? OpKind::SetFlag : OpKind::WaitFlag, loc, name);
    op.srcPipe = *src;
    op.dstPipe = *dst;
    if (items.size() == 2) {
      op.event.kind = EventRef::Kind::Symbolic; // the linker picks the id
      return;
    }
    const SyncItem& ev = items[2];
    if (dyn || ev.value) {
      if (!ev.value) {
        diags_.error(ev.loc, "'" + name + "' needs a dynamic event id value");
        return;
      }
      op.event.kind = EventRef::Kind::Dynamic;
      addOperand(op, scalarOperand(*ev.value, Type::index()), ev.loc);
      return;
    }
    if (!ev.symbol.empty()) {
      op.event.kind = EventRef::Kind::Symbolic;
      op.event.symbol = ev.symbol;
      return;
    }
    std::string w = ev.word;
    auto id = w.starts_with("EVENT_ID") ? parseInt(w.substr(8)) : parseInt(w);
    if (!id) {
      diags_.error(ev.loc, "expected an event id EVENT_ID0..EVENT_ID7, found '" + w + "'");
      return;
    }
    op.event.kind = EventRef::Kind::Const;
    op.event.id = static_cast<int>(*id);
    op.typeLoc = ev.loc;
  }

  void buildBarrier(const std::string& name, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    if (!onlyPieces(diags_, p, name, {PieceKind::Angle, PieceKind::Hash, PieceKind::Bracket})) return;
    expectResults(name, loc, results, 0);
    std::string word;
    SrcLoc wloc = loc;
    bool highLevel = name == "pto.barrier_sync";
    if (!p.angles.empty()) {
      word = enumWord(p.angles[0]).value_or("");
      wloc = locOf(p.angles[0]);
    } else if (!p.hashes.empty() && p.hashes[0]->angle()) {
      word = enumWord(p.hashes[0]->angle()).value_or("");
      wloc = locOf(p.hashes[0]);
    } else if (!p.brackets.empty()) {
      auto items = syncItems(p.brackets[0]);
      if (items.size() == 1) word = items[0].word, wloc = items[0].loc;
    }
    if (word.empty()) {
      diags_.error(loc, "expected '" + name + (highLevel ? " [<TVEC>]'" : " <PIPE_X>'"));
      return;
    }
    auto pipe = syncPipe({word, "", std::nullopt, wloc}, highLevel);
    if (!pipe) return;
    Op& op = emit(OpKind::Barrier, loc, "pto.barrier");
    op.srcPipe = op.dstPipe = *pipe;
  }

  // ------------------------------------------------------------ tiles in PTO-AS kernels/fragments
  /// `tile %a, %b : !pto.tile<...> [addr = 0x1000]`: declares tiles (like pto.alloc_tile).
  void buildTileDecl(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    expectResults("tile", loc, results, 0);
    if (p.operands.empty() || p.types.size() != 1) {
      diags_.error(loc, "expected 'tile %name[, %name...] : !pto.tile<...>'");
      return;
    }
    auto type = readType(p.types[0]);
    if (!type) return;
    if (!type->isTile()) {
      diags_.error(p.typesLoc, "'tile' declares tiles; " + toString(*type) + " is not a tile type");
      return;
    }
    const Keyword* addr = p.keyword("addr");
    if (addr && p.operands.size() != 1) {
      diags_.error(addr->loc, "'addr =' places a single tile; declare placed tiles one per line");
      return;
    }
    for (auto& r : p.operands) {
      if (r.kind != OperandRef::Value) {
        diags_.error(r.loc, "expected a tile name");
        continue;
      }
      Op& op = emit(OpKind::AllocTile, r.loc, "pto.alloc_tile");
      op.typeLoc = p.typesLoc;
      op.ints = {0, 0, 0};
      if (addr) {
        ValueId a = keywordValue(*addr, Type::scalar(isa::DType::I64));
        if (a != kNoValue) {
          op.ints[0] = 1;
          addOperand(op, a, locOf(addr->value));
        }
      }
      op.results.push_back(define(r.name, *type, r.loc));
    }
  }

  ValueId declareFragmentTile(const OperandRef& r, const Type& type) {
    // Insert the implicit alloc at the current point, before the op that uses it.
    Op& op = emit(OpKind::AllocTile, r.loc, "pto.alloc_tile");
    op.typeLoc = r.loc;
    op.ints = {0, 0, 0};
    op.attrs.push_back({"implicit", ""});
    if (auto it = pendingPlacements_.find(r.name); it != pendingPlacements_.end()) {
      ValueId a = constantInt(it->second.addr, Type::scalar(isa::DType::I64), it->second.loc);
      op.ints[0] = 1;
      addOperand(op, a, it->second.loc);
      pendingPlacements_.erase(it);
    }
    ValueId v = define(r.name, type, r.loc);
    op.results.push_back(v);
    return v;
  }

  ValueId declareFragmentParam(const OperandRef& r, const Type& type) {
    ValueId v = fn_->addValue(r.name, type, r.loc);
    scopes_.front()[r.name] = v;
    fn_->body.args.push_back(v);
    return v;
  }

  // ------------------------------------------------------------ tile ops
  enum class Kind { Tile, View, Scalar, Unknown };

  Kind kindOf(const OperandRef& r) {
    if (r.kind == OperandRef::Literal) return Kind::Scalar;
    if (r.kind == OperandRef::Memory) return Kind::View;
    auto v = lookup(r.name);
    if (!v) return Kind::Unknown;
    const Type& t = fn_->type(*v);
    if (t.isTile()) return Kind::Tile;
    if (t.isView()) return Kind::View;
    return Kind::Scalar;
  }

  static bool compatible(Kind k, const isa::Role& role) {
    if (k == Kind::Unknown) return true;
    switch (role.kind) {
    case isa::RoleKind::Tile: return k == Kind::Tile;
    case isa::RoleKind::View: return k == Kind::View;
    case isa::RoleKind::Any: return true;
    default: return k == Kind::Scalar;
    }
  }

  /// Assigns operands to roles in order, skipping optional roles when needed (backtracking).
  static bool matchRoles(const std::vector<const isa::Role*>& roles, const std::vector<Kind>& kinds,
                         size_t ri, size_t oi, std::vector<int>& assign) {
    if (ri == roles.size()) return oi == kinds.size();
    const isa::Role& role = *roles[ri];
    if (role.variadic) {
      size_t n = oi;
      while (n < kinds.size() && compatible(kinds[n], role)) ++n;
      for (size_t end = n + 1; end-- > oi;) {
        for (size_t k = oi; k < end; ++k) assign[k] = static_cast<int>(ri);
        if ((end > oi || role.optional) && matchRoles(roles, kinds, ri + 1, end, assign)) return true;
      }
      return false;
    }
    if (oi < kinds.size() && compatible(kinds[oi], role)) {
      assign[oi] = static_cast<int>(ri);
      if (matchRoles(roles, kinds, ri + 1, oi + 1, assign)) return true;
    }
    return role.optional && matchRoles(roles, kinds, ri + 1, oi, assign);
  }

  struct Bound {
    OperandRef ref;
    int role; // index into info.roles
    std::optional<Type> annotated;
  };

  std::string signatureHelp(const isa::OpInfo& info) {
    std::string ins, outs;
    for (const auto& r : info.roles) {
      std::string s = std::string(r.name) + (r.optional ? "?" : "") + (r.variadic ? "..." : "");
      std::string& into = r.isOutput ? outs : ins;
      if (!into.empty()) into += ", ";
      into += s;
    }
    return "pto." + std::string(info.mnemonic) + " ins(" + ins + ") outs(" + outs + ")";
  }

  void buildTileOp(const isa::OpInfo& info, SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
    std::vector<const isa::Role*> inRoles, outRoles;
    for (const auto& r : info.roles) (r.isOutput ? outRoles : inRoles).push_back(&r);
    std::vector<Bound> bound;
    std::vector<NamedAttr> attrs;
    std::vector<std::pair<std::string, SrcLoc>> waits, records;
    std::string opName = "pto." + std::string(info.mnemonic);

    auto roleIndex = [&](const isa::Role* r) { return static_cast<int>(r - info.roles.data()); };
    auto bindList = [&](const std::vector<OperandRef>& ops, const std::vector<const isa::Role*>& roles,
                        std::vector<std::optional<Type>> annotations, SrcLoc at) -> bool {
      std::vector<Kind> kinds;
      for (auto& o : ops) kinds.push_back(kindOf(o));
      std::vector<int> assign(ops.size(), -1);
      if (!matchRoles(roles, kinds, 0, 0, assign)) return false;
      for (size_t i = 0; i < ops.size(); ++i)
        bound.push_back({ops[i], roleIndex(roles[assign[i]]), i < annotations.size() ? annotations[i] : std::nullopt});
      (void)at;
      return true;
    };
    bool badType = false;
    auto readTypes = [&](const std::vector<P::TypeContext*>& ts) {
      std::vector<std::optional<Type>> out;
      for (auto* t : ts) {
        out.push_back(readType(t));
        badType |= !out.back();
      }
      return out;
    };

    // Event chains and attributes, whatever the form.
    for (auto* c : p.calls) {
      std::string kw = c->callKw->getText();
      if (kw != "wait" && kw != "record") continue;
      Pieces ev = collectPieces(c->piece());
      for (auto& r : ev.operands) (kw == "wait" ? waits : records).push_back({r.name, r.loc});
    }

    P::CallPieceContext* ins = p.call("ins");
    P::CallPieceContext* outs = p.call("outs");
    if (ins || outs) {
      // DPS form: ins(operands [{attrs}] : types) outs(operands : types) [{attrs}]
      if (!results.empty()) diags_.error(results.front().loc, "'" + opName + "' in DPS form produces no results");
      Pieces in = ins ? collectPieces(ins->piece()) : Pieces{};
      Pieces out = outs ? collectPieces(outs->piece()) : Pieces{};
      auto inTypes = readTypes(in.types), outTypes = readTypes(out.types);
      if (badType) return;
      if (!in.types.empty() && inTypes.size() != in.operands.size()) {
        if (inTypes.size() == 1) inTypes.resize(in.operands.size(), inTypes[0]);
        else diags_.error(in.typesLoc, "ins() has " + std::to_string(in.operands.size()) + " operands but " +
                                           std::to_string(inTypes.size()) + " types");
      }
      if (!bindList(in.operands, inRoles, inTypes, locOf(ins)) ||
          !bindList(out.operands, outRoles, outTypes, locOf(outs))) {
        diags_.error(loc, "operands do not match '" + signatureHelp(info) + "'");
        return;
      }
      for (auto* d : in.dicts) readTileAttrs(d, attrs);
      for (auto* d : p.dicts) readTileAttrs(d, attrs);
    } else {
      // PTO-AS (`op %dst, %src...`) or SSA (`%dst = op %src...`) form: types come as a pool.
      std::vector<std::optional<Type>> pool = readTypes(p.types);
      std::vector<std::optional<Type>> arrow = readTypes(p.arrowTypes);
      if (badType) return;
      bool ssa = !results.empty();
      std::vector<OperandRef> outOps, inOps = p.operands;
      if (ssa) {
        for (auto& r : results) {
          OperandRef o;
          o.name = r.name;
          o.loc = r.loc;
          outOps.push_back(o);
        }
        for (auto& r : results) ssaResultNames_.insert(r.name);
        if (!bindList(inOps, inRoles, {}, loc)) {
          diags_.error(loc, "operands do not match '" + signatureHelp(info) + "'");
          return;
        }
        if (outOps.size() != outRoles.size()) {
          diags_.error(results.front().loc, "'" + opName + "' produces " + std::to_string(outRoles.size()) +
                                                " result(s) but " + std::to_string(outOps.size()) + " name(s) are given");
          return;
        }
        for (size_t i = 0; i < outOps.size(); ++i)
          bound.push_back({outOps[i], roleIndex(outRoles[i]), i < arrow.size() ? arrow[i] : std::nullopt});
      } else {
        // Destination first (the C++ intrinsic order); loads/stores may name the view either side.
        std::vector<const isa::Role*> order = outRoles;
        order.insert(order.end(), inRoles.begin(), inRoles.end());
        std::vector<const isa::Role*> alt = inRoles;
        alt.insert(alt.end(), outRoles.begin(), outRoles.end());
        if (!bindList(inOps, order, {}, loc) && !bindList(inOps, alt, {}, loc)) {
          diags_.error(loc, "operands do not match '" + std::string(info.mnemonic) + " " + asmSignature(info) + "'");
          return;
        }
      }
      // Type pool: operands without a known type take the next annotation of their kind.
      assignPoolTypes(info, bound, pool, p.typesLoc);
      for (auto* d : p.dicts) readTileAttrs(d, attrs);
      for (auto* h : p.hashes) readHashAttr(h, attrs);
      for (auto* a : p.angles) readAngleAttrs(a, attrs);
    }
    if (!p.keywords.empty())
      diags_.error(p.keywords[0].loc, "unsupported clause '" + p.keywords[0].key + "' on '" + opName + "'");
    finishTileOp(info, loc, bound, attrs, waits, records, p.typesLoc);
    ssaResultNames_.clear();
  }

  std::string asmSignature(const isa::OpInfo& info) {
    std::string s;
    auto add = [&](const isa::Role& r) {
      if (!s.empty()) s += ", ";
      s += "%" + std::string(r.name) + (r.optional ? "?" : "");
    };
    for (const auto& r : info.roles) if (r.isOutput) add(r);
    for (const auto& r : info.roles) if (!r.isOutput) add(r);
    return s;
  }

  void assignPoolTypes(const isa::OpInfo& info, std::vector<Bound>& bound,
                       const std::vector<std::optional<Type>>& pool, SrcLoc) {
    std::vector<Type> tiles, views, scalars;
    for (auto& t : pool) {
      if (!t) continue;
      if (t->isTile()) tiles.push_back(*t);
      else if (t->isView()) views.push_back(*t);
      else scalars.push_back(*t);
    }
    size_t ti = 0, vi = 0, si = 0;
    viewAnnotation_.reset();
    if (!views.empty()) viewAnnotation_ = views.front(); // for `%view[...]` operands in fragments
    auto next = [](std::vector<Type>& v, size_t& i) -> std::optional<Type> {
      if (v.empty()) return std::nullopt;
      return v[std::min(i++, v.size() - 1)];
    };
    for (Bound& b : bound) {
      const isa::Role& role = info.roles[b.role];
      if (b.annotated) continue;
      if (role.kind == isa::RoleKind::Tile) {
        b.annotated = next(tiles, ti);
      } else if (role.kind == isa::RoleKind::View) {
        if (b.ref.kind != OperandRef::Memory) b.annotated = next(views, vi);
      } else {
        b.annotated = next(scalars, si);
      }
    }
  }

  void readTileAttrs(P::AttrDictContext* d, std::vector<NamedAttr>& attrs) {
    for (auto* e : d->attrEntry()) {
      std::string key = entryKey(e);
      addTileAttr(key, e->attrValue() ? enumWord(e->attrValue()) : std::nullopt, entryValue(e), locOf(e), attrs);
    }
  }
  void readHashAttr(P::HashPieceContext* h, std::vector<NamedAttr>& attrs) {
    // #cmp=gt (PTO-AS) or #pto.round_mode<CAST_RINT> / #pto<round_mode X> standing alone.
    std::string key = h->HASH_ID()->getText().substr(1);
    if (h->attrValue()) {
      addTileAttr(key, enumWord(h->attrValue()), canonicalText(h->attrValue()), locOf(h), attrs);
      return;
    }
    auto params = angleParams(h->angle());
    if (key == "pto" && params.size() == 1 && params[0].words().size() == 2) {
      auto words = params[0].words();
      addTileAttr(words[0], words[1], words[1], locOf(h), attrs);
      return;
    }
    if (key.starts_with("pto.") && h->angle()) {
      addTileAttr(key.substr(4), enumWord(h->angle()), canonicalText(h), locOf(h), attrs);
      return;
    }
    diags_.error(locOf(h), "unexpected attribute '" + h->getText() + "'");
  }
  void readAngleAttrs(P::AngleContext* a, std::vector<NamedAttr>& attrs) {
    // `<rmode=CAST_RINT>` (seed form)
    for (auto& prm : angleParams(a)) {
      if (prm.key.empty()) {
        diags_.error(prm.loc, "expected '<key=value>' attributes");
        continue;
      }
      addTileAttr(prm.key, prm.text(), prm.text(), prm.loc, attrs);
    }
  }

  void addTileAttr(const std::string& rawKey, std::optional<std::string> word, const std::string& text,
                   SrcLoc loc, std::vector<NamedAttr>& attrs) {
    std::string key = rawKey;
    for (const AttrAlias& a : kAttrAliases)
      if (a.alias == rawKey) key = std::string(a.key);
    std::string value = text;
    if (key == "rmode") {
      auto m = word ? isa::parseRoundMode(*word) : std::nullopt;
      if (!m) {
        diags_.error(loc, "unknown rounding mode '" + word.value_or(text) +
                              "' (expected CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD, CAST_NONE)");
        return;
      }
      value = "#pto<round_mode " + std::string(isa::spelling(*m)) + ">";
    } else if (key == "sat_mode") {
      auto m = word ? isa::parseSatMode(*word) : std::nullopt;
      if (!m) {
        diags_.error(loc, "unknown saturation mode '" + word.value_or(text) + "' (expected ON or OFF)");
        return;
      }
      value = "#pto<saturation_mode " + std::string(isa::spelling(*m)) + ">";
    } else if (key == "cmpMode") {
      auto m = word ? isa::parseCmpMode(*word) : std::nullopt;
      if (!m) {
        diags_.error(loc, "unknown compare mode '" + word.value_or(text) + "' (expected eq, ne, lt, le, gt, ge)");
        return;
      }
      value = "#pto<cmp " + std::string(isa::spelling(*m)) + ">";
    } else if (key == "precision") {
      if (!word || (*word != "DEFAULT" && *word != "HIGH_PRECISION")) {
        diags_.error(loc, "unknown precision '" + word.value_or(text) + "' (expected DEFAULT or HIGH_PRECISION)");
        return;
      }
      value = "#pto<sqrt_algorithm " + *word + ">";
    }
    for (auto& a : attrs)
      if (a.key == key) {
        diags_.error(loc, "duplicate attribute '" + key + "'");
        return;
      }
    attrs.push_back({key, value});
  }

  void finishTileOp(const isa::OpInfo& info, SrcLoc loc, std::vector<Bound>& bound, std::vector<NamedAttr>& attrs,
                    const std::vector<std::pair<std::string, SrcLoc>>& waits,
                    const std::vector<std::pair<std::string, SrcLoc>>& records, SrcLoc typesLoc) {
    std::string opName = "pto." + std::string(info.mnemonic);
    // Resolve tiles and views first (literal scalars take their type from the tiles).
    std::vector<ValueId> values(bound.size(), kNoValue);
    std::optional<isa::DType> tileDType;
    bool ok = true;
    auto resolve = [&](size_t i) {
      Bound& b = bound[i];
      const isa::Role& role = info.roles[b.role];
      if (role.kind == isa::RoleKind::Tile) {
        values[i] = resolveTile(b, role, typesLoc);
        if (values[i] != kNoValue && fn_->type(values[i]).isTile() && (role.isOutput || !tileDType))
          tileDType = fn_->type(values[i]).tile.dtype;
      } else if (role.kind == isa::RoleKind::View) {
        if (b.ref.kind != OperandRef::Memory) values[i] = resolveNamed(b, "view");
      }
      ok &= values[i] != kNoValue || role.kind != isa::RoleKind::Tile;
    };
    for (size_t i = 0; i < bound.size(); ++i) resolve(i);
    for (size_t i = 0; i < bound.size(); ++i) {
      Bound& b = bound[i];
      const isa::Role& role = info.roles[b.role];
      if (role.kind == isa::RoleKind::View && b.ref.kind == OperandRef::Memory) {
        values[i] = memoryView(b.ref, bound, values, info);
      } else if (role.kind != isa::RoleKind::Tile && role.kind != isa::RoleKind::View) {
        Type want = b.annotated ? *b.annotated
                    : role.kind == isa::RoleKind::IntScalar ? Type::scalar(isa::DType::I32)
                    : Type::scalar(tileDType.value_or(isa::DType::F32));
        if (b.ref.kind == OperandRef::Literal) values[i] = literalOperand(b.ref, want);
        else if (b.ref.kind == OperandRef::Value && !lookup(b.ref.name) && fn_->isFragment && b.annotated)
          values[i] = declareFragmentParam(b.ref, *b.annotated);
        else values[i] = use(b.ref);
      }
      if (values[i] == kNoValue) ok = false;
    }
    if (!ok) return;
    // Waits come before the op, records after it (the C++ Event<Src, Dst> model).
    for (auto& [name, wloc] : waits) {
      Op& w = emit(OpKind::WaitFlag, wloc, "pto.wait_flag");
      w.event.kind = EventRef::Kind::Symbolic;
      w.event.symbol = name;
      events_[name].waits.push_back({&cur(), &w});
    }
    Op& op = emit(OpKind::TileOp, loc, opName);
    op.tileOp = info.id;
    op.attrs = std::move(attrs);
    op.typeLoc = typesLoc;
    // Operands in signature order (DPS: inputs then outputs).
    std::vector<size_t> order(bound.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bound[a].role < bound[b].role; });
    for (size_t i : order) {
      addOperand(op, values[i], bound[i].ref.loc);
      op.operandRoles.push_back(static_cast<int16_t>(bound[i].role));
    }
    for (auto& [name, rloc] : records) {
      Op& r = emit(OpKind::SetFlag, rloc, "pto.set_flag");
      r.event.kind = EventRef::Kind::Symbolic;
      r.event.symbol = name;
      events_[name].records.push_back({&cur(), &r});
    }
    pendingEventOps_.push_back(&op);
  }

  ValueId literalOperand(const OperandRef& r, const Type& want) {
    std::string text = r.lit->getText();
    // A hex immediate for a float scalar is its bit pattern: keep it, the printer shows it as is.
    return constant(r.lit, want, r.loc).value_or(kNoValue);
    (void)text;
  }

  ValueId resolveNamed(Bound& b, const char* what) {
    if (auto v = lookup(b.ref.name)) {
      checkAnnotation(b, *v);
      return *v;
    }
    if (fn_->isFragment && b.annotated) return declareFragmentParam(b.ref, *b.annotated);
    diags_.error(b.ref.loc, std::string("use of undefined ") + what + " '%" + b.ref.name + "'");
    return kNoValue;
  }

  void checkAnnotation(const Bound& b, ValueId v) {
    if (!b.annotated || fn_->type(v) == *b.annotated) return;
    diags_.error(b.ref.loc, "'%" + b.ref.name + "' is annotated as " + toString(*b.annotated) +
                                " but has type " + toString(fn_->type(v)));
    diags_.note(fn_->value(v).loc, "'%" + b.ref.name + "' is defined here");
  }

  ValueId resolveTile(Bound& b, const isa::Role& role, SrcLoc typesLoc) {
    if (b.ref.kind != OperandRef::Value) {
      diags_.error(b.ref.loc, "expected a tile for operand '" + std::string(role.name) + "'");
      return kNoValue;
    }
    if (auto v = lookup(b.ref.name)) {
      if (!fn_->type(*v).isTile()) {
        diags_.error(b.ref.loc, "operand '" + std::string(role.name) + "' must be a tile, '%" + b.ref.name +
                                    "' is " + toString(fn_->type(*v)));
        diags_.note(fn_->value(*v).loc, "'%" + b.ref.name + "' is defined here");
        return kNoValue;
      }
      checkAnnotation(b, *v);
      return *v;
    }
    if (b.annotated && b.annotated->isTile() && (fn_->isFragment || role.isOutput)) {
      // Fragments declare tiles by use; SSA results are new tiles.
      if (fn_->isFragment || ssaResultNames_.count(b.ref.name)) return declareFragmentTile(b.ref, *b.annotated);
    }
    if (!b.annotated && role.isOutput && ssaResultNames_.count(b.ref.name)) {
      diags_.error(b.ref.loc, "cannot infer the type of result '%" + b.ref.name + "': annotate it (': T -> T')");
      return kNoValue;
    }
    if (fn_->isFragment && !b.annotated) {
      diags_.error(b.ref.loc, "tile '%" + b.ref.name + "' is used before it has a type: annotate its first use (': !pto.tile<...>')");
      (void)typesLoc;
      return kNoValue;
    }
    diags_.error(b.ref.loc, "use of undefined tile '%" + b.ref.name + "'");
    return kNoValue;
  }

  /// `%view[%i, %j]` as a tload/tstore operand: a partition of the view with the tile's shape.
  ValueId memoryView(const OperandRef& r, const std::vector<Bound>& bound, const std::vector<ValueId>& values,
                     const isa::OpInfo& info) {
    Bound base{r, 0, std::nullopt};
    base.ref.kind = OperandRef::Value;
    for (const Bound& b : bound)
      if (b.ref.name == r.name && b.annotated) base.annotated = b.annotated;
    ValueId view = kNoValue;
    if (auto v = lookup(r.name)) view = *v;
    else if (fn_->isFragment && viewAnnotation_ && viewAnnotation_->isView())
      view = declareFragmentParam(r, *viewAnnotation_);
    else {
      diags_.error(r.loc, "use of undefined view '%" + r.name + "'");
      return kNoValue;
    }
    const Type vt = fn_->type(view); // a copy: emitting constants below grows fn_->values
    if (vt.kind != TypeKind::TensorView) {
      diags_.error(r.loc, "'%" + r.name + "[...]' needs a !pto.tensor_view, found " + toString(vt));
      return kNoValue;
    }
    std::optional<TileType> tile;
    for (size_t i = 0; i < bound.size(); ++i)
      if (info.roles[bound[i].role].kind == isa::RoleKind::Tile && values[i] != kNoValue) {
        tile = fn_->type(values[i]).tile;
        break;
      }
    if (!tile) return kNoValue;
    size_t rank = vt.shape.size();
    if (r.indices.size() > rank) {
      diags_.error(r.loc, "'%" + r.name + "' has rank " + std::to_string(rank) + " but " +
                              std::to_string(r.indices.size()) + " indices are given");
      return kNoValue;
    }
    if (tile->validRows == kDynamic || tile->validCols == kDynamic) {
      diags_.error(r.loc, "a memory operand needs a tile with a static valid shape");
      return kNoValue;
    }
    // Offsets first (their constants come before the partition op), then the op itself.
    building_ = nullptr;
    std::vector<ValueId> offsets;
    for (size_t i = 0; i + r.indices.size() < rank; ++i) offsets.push_back(constantInt(0, Type::index(), r.loc));
    for (auto& idx : r.indices) {
      ValueId v = scalarOperand(idx, Type::index());
      if (v == kNoValue) return kNoValue;
      if (!fn_->type(v).isIntLike()) {
        diags_.error(idx.loc, "index '%" + idx.name + "' must be an integer or index, found " + toString(fn_->type(v)));
        return kNoValue;
      }
      offsets.push_back(v);
    }
    Op& op = emit(OpKind::PartitionView, r.loc, "pto.partition_view");
    addOperand(op, view, r.loc);
    std::vector<int64_t> sizes(rank, 1);
    if (rank >= 1) sizes[rank - 1] = tile->validCols;
    if (rank >= 2) sizes[rank - 2] = tile->validRows;
    std::vector<ValueId> sizeVals;
    for (int64_t s : sizes) sizeVals.push_back(constantInt(s, Type::index(), r.loc));
    for (ValueId v : offsets) addOperand(op, v, r.loc);
    for (ValueId v : sizeVals) addOperand(op, v, r.loc);
    op.ints = {static_cast<int64_t>(rank), static_cast<int64_t>(rank)};
    ValueId result = fn_->addValue(r.name + "_part",
                                   Type{TypeKind::PartView, vt.elem, sizes}, r.loc);
    op.results.push_back(result);
    return result;
  }

  // ------------------------------------------------------------ event chains
  struct EventSite {
    Region* region;
    Op* op;
  };
  struct EventUses {
    std::vector<EventSite> records, waits;
  };

  /// Gives the chained events their pipes: a record takes the pipe of the op it follows, a
  /// wait the pipe of the op it precedes. Same-pipe chains become a pipe barrier.
  void resolveEvents() {
    for (auto& [name, uses] : events_) {
      std::optional<isa::Pipe> src, dst;
      for (auto& site : uses.records) {
        isa::Pipe p = neighbourPipe(site, -1);
        if (src && *src != p) {
          diags_.error(site.op->loc, "event '%" + name + "' is recorded on " + std::string(isa::spelling(p)) +
                                         " and on " + std::string(isa::spelling(*src)));
        }
        src = p;
      }
      for (auto& site : uses.waits) {
        isa::Pipe p = neighbourPipe(site, +1);
        if (dst && *dst != p)
          diags_.error(site.op->loc, "event '%" + name + "' is waited on by ops on " + std::string(isa::spelling(p)) +
                                         " and on " + std::string(isa::spelling(*dst)) +
                                         "; an event connects one source pipe to one destination pipe");
        dst = p;
      }
      if (uses.records.empty()) {
        diags_.error(uses.waits.front().op->loc, "event '%" + name + "' is waited on but never recorded");
        for (auto& site : uses.waits) erase(site);
        continue;
      }
      if (uses.waits.empty()) {
        diags_.warning(uses.records.front().op->loc, "event '%" + name + "' is recorded but never waited on");
        for (auto& site : uses.records) erase(site);
        continue;
      }
      for (auto& site : uses.records) site.op->srcPipe = *src, site.op->dstPipe = *dst;
      for (auto& site : uses.waits) site.op->srcPipe = *src, site.op->dstPipe = *dst;
      if (*src == *dst) {
        for (auto& site : uses.records) erase(site);
        for (auto& site : uses.waits) {
          site.op->kind = OpKind::Barrier;
          site.op->name = "pto.barrier";
        }
      }
    }
    events_.clear();
    pendingEventOps_.clear();
  }

  isa::Pipe neighbourPipe(const EventSite& site, int dir) {
    auto& ops = site.region->ops;
    auto it = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == site.op; });
    while (true) {
      if (dir < 0) {
        if (it == ops.begin()) break;
        --it;
      } else {
        ++it;
        if (it == ops.end()) break;
      }
      if ((*it)->kind == OpKind::TileOp) return tilePipe(**it);
    }
    return isa::Pipe::S;
  }

  isa::Pipe tilePipe(const Op& op) { return ir::pipeOf(*fn_, op, arch()); }

  void erase(const EventSite& site) {
    auto& ops = site.region->ops;
    ops.erase(std::remove_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == site.op; }), ops.end());
  }

  // ------------------------------------------------------------ state
  const SourceFile& src_;
  DiagEngine& diags_;
  TypeReader types_;
  std::optional<isa::Arch> archFlag_;
  std::unique_ptr<Module> mod_;
  Function* fn_ = nullptr;
  std::vector<std::unordered_map<std::string, ValueId>> scopes_;
  std::vector<Region*> regions_;
  Op* building_ = nullptr;
  std::optional<Type> viewAnnotation_;
  struct Placement {
    int64_t addr;
    SrcLoc loc;
  };
  std::map<std::string, Placement> pendingPlacements_;
  std::map<std::string, EventUses> events_;
  std::vector<Op*> pendingEventOps_;
  std::set<std::string> ssaResultNames_;
};

} // namespace

namespace {
/// The offset of the first byte that is not part of valid UTF-8, if any. ANTLR's input stream
/// throws on invalid UTF-8, so the text is checked first and the byte reported with its place.
std::optional<size_t> firstInvalidUtf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return i;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::nullopt;
}
} // namespace

namespace {
/// Brackets nest at most this deep (like clang's -fbracket-depth): the parser, the builder, the
/// verifier and the code generator recurse on nesting, and the bound keeps every one of them far
/// from the end of the stack, also under AddressSanitizer.
constexpr unsigned kMaxNesting = 256;

/// The bracket ('{', '(', '[' or '<') that opens level kMaxNesting + 1, if any. Strings and
/// comments are skipped as the lexer skips them; '->' is no bracket.
std::optional<SrcLoc> tooDeeplyNested(std::string_view text) {
  unsigned depth = 0;
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    auto toEol = [&] {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    };
    if (c == '\n') {
      ++line;
      col = 1;
      continue;
    }
    if ((static_cast<unsigned char>(c) >> 6) != 2) ++col; // columns count characters
    if (c == '"') {
      while (i + 1 < text.size() && text[i + 1] != '"' && text[i + 1] != '\n') i += text[i + 1] == '\\' ? 2 : 1;
      if (i + 1 < text.size() && text[i + 1] == '"') ++i;
    } else if ((c == '/' && next == '/') || c == ';' || (c == '#' && (next == ' ' || next == '\t'))) {
      toEol();
    } else if (c == '-' && next == '>') {
      ++i;
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      if (++depth > kMaxNesting) return SrcLoc{line, col - 1, 1};
    } else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}
/// Error recovery with a budget. ANTLR's recovery skips tokens until it can resynchronise and
/// keeps each skipped token as an error node; on garbage (2 MB of '%') that read every token of
/// the file into memory twice over while reporting a single error. Here skipped tokens build no
/// error nodes (a tree with syntax errors is dropped anyway), and once recovery has skipped or
/// retried kRecoveryBudget times the parse stops with an error at that point: memory stays
/// proportional to the input actually parsed.
class BoundedRecovery : public antlr4::DefaultErrorStrategy {
public:
  explicit BoundedRecovery(DiagEngine& d) : diags_(d) {}

  void recover(antlr4::Parser* recognizer, std::exception_ptr e) override {
    spend(recognizer, 1);
    antlr4::DefaultErrorStrategy::recover(recognizer, e);
  }
  antlr4::Token* recoverInline(antlr4::Parser* recognizer) override {
    spend(recognizer, 1);
    return antlr4::DefaultErrorStrategy::recoverInline(recognizer);
  }

protected:
  void consumeUntil(antlr4::Parser* recognizer, const antlr4::misc::IntervalSet& set) override {
    antlr4::TokenStream* in = recognizer->getTokenStream();
    for (size_t t = in->LA(1); t != antlr4::Token::EOF && !set.contains(t); t = in->LA(1)) {
      spend(recognizer, 1);
      in->consume();
    }
  }

private:
  static constexpr size_t kRecoveryBudget = 100000;
  void spend(antlr4::Parser* recognizer, size_t n) {
    spent_ += n;
    if (spent_ <= kRecoveryBudget) return;
    if (!diags_.errorLimitReached())
      diags_.error(locOf(recognizer->getTokenStream()->LT(1)),
                   "too much input that is not valid syntax; stopping here");
    throw TooManyErrors{};
  }
  DiagEngine& diags_;
  size_t spent_ = 0;
};

/// The input as code points. ANTLR 4.9's own UTF-8 decoder leaves a buffer of five code points
/// per input byte (20 bytes of memory for each byte of source, measured); this one decodes the
/// already validated UTF-8 into exactly one code point per character.
class CompactInputStream : public antlr4::ANTLRInputStream {
public:
  explicit CompactInputStream(std::string_view utf8) {
    if (utf8.starts_with("\xEF\xBB\xBF")) utf8.remove_prefix(3); // a byte order mark, as ANTLR drops it
    size_t n = 0;
    for (char c : utf8) n += (static_cast<unsigned char>(c) >> 6) != 2;
    _data.reserve(n);
    for (size_t i = 0; i < utf8.size();) {
      const auto c = static_cast<unsigned char>(utf8[i]);
      const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
      for (size_t k = 1; k < len && i + k < utf8.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
      _data.push_back(cp);
      i += len;
    }
  }
};

/// ANTLR keeps the prediction DFAs of every parse in static tables shared by all parsers: a
/// process that parses many different inputs (a fuzzer, a server) grows them without end.
/// Past this many states they are dropped and rebuilt on demand by the next parse.
constexpr size_t kMaxCachedDfaStates = 20000;

void boundParserCaches(ptogen::PTOParser& parser, ptogen::PTOLexer& lexer) {
  auto* p = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  auto* l = lexer.getInterpreter<antlr4::atn::LexerATNSimulator>();
  size_t states = 0;
  for (const antlr4::dfa::DFA& dfa : p->decisionToDFA) states += dfa.states.size();
  for (size_t mode = 0; mode < lexer.getModeNames().size(); ++mode) states += l->getDFA(mode).states.size();
  if (states <= kMaxCachedDfaStates) return;
  p->clearDFA();
  l->clearDFA();
}
} // namespace

std::unique_ptr<ir::Module> parseModule(const SourceFile& src, DiagEngine& diags, std::optional<isa::Arch> arch) {
  if (auto deep = tooDeeplyNested(src.text())) {
    diags.error(*deep, "brackets nest more than " + std::to_string(kMaxNesting) + " levels deep");
    return nullptr;
  }
  if (auto bad = firstInvalidUtf8(src.text())) {
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < *bad; ++i) {
      if (src.text()[i] == '\n') line++, col = 1;
      else if ((static_cast<unsigned char>(src.text()[i]) >> 6) != 2) ++col;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(src.text()[*bad]));
    diags.error({line, col, 1}, std::string("invalid UTF-8 byte ") + hex + " in the input");
    return nullptr;
  }
  CompactInputStream input(src.text()); // valid UTF-8 (checked above)
  ptogen::PTOLexer lexer(&input);
  SyntaxErrorListener listener(diags);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&listener);
  antlr4::CommonTokenStream tokens(&lexer);
  ptogen::PTOParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  // Two-stage parsing: the fast SLL mode first, full LL only when SLL reports a syntax error.
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  P::FileContext* tree = nullptr;
  try {
    try {
      tree = parser.file();
    } catch (antlr4::ParseCancellationException&) {
      tokens.seek(0);
      parser.reset();
      parser.setErrorHandler(std::make_shared<BoundedRecovery>(diags));
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
      tree = parser.file();
    }
  } catch (const TooManyErrors&) {
    boundParserCaches(parser, lexer);
    return nullptr;
  }
  boundParserCaches(parser, lexer);
  if (diags.errors() > 0) return nullptr;
  Builder builder(src, diags, arch);
  return builder.build(tree);
}

} // namespace pto::as
