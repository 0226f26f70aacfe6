// Helpers that read parse-tree fragments (types, attribute values, angle-bracket parameters)
// into IR values. Shared by the IR builder; kept apart so that the builder reads as the
// op-by-op interpretation of the generic statement syntax.
#pragma once

#include "PTOParser.h"
#include "asm/ir/IR.h"
#include "support/Diagnostics.h"
#include "support/Text.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace pto::as {

using P = ptogen::PTOParser;

SrcLoc locOf(antlr4::Token* t);
SrcLoc locOf(antlr4::tree::TerminalNode* n);
SrcLoc locOf(antlr4::ParserRuleContext* ctx);
// Children by kind. ANTLR's generated accessors (ctx->stmt(), ctx->VALUE_ID()) dynamic_cast
// every child to the wanted class on every call, a fifth of all instructions of assembling a
// large module; these read the kind of a child from its rule index or token type instead.

/// Whether a parse-tree node is a token (TerminalNodeImpl, or an ErrorNodeImpl deriving from it).
bool isToken(antlr4::tree::ParseTree* node);
/// The `i`-th child of `ctx` of rule `rule` (as T, that rule's context class), or null.
template <typename T> T* ruleChild(antlr4::ParserRuleContext* ctx, size_t rule, size_t i = 0) {
  for (antlr4::tree::ParseTree* c : ctx->children)
    if (!isToken(c) && static_cast<antlr4::RuleContext*>(c)->getRuleIndex() == rule && i-- == 0)
      return static_cast<T*>(c);
  return nullptr;
}
/// Every child of `ctx` of rule `rule`, in order.
template <typename T> std::vector<T*> ruleChildren(antlr4::ParserRuleContext* ctx, size_t rule) {
  std::vector<T*> out;
  for (antlr4::tree::ParseTree* c : ctx->children)
    if (!isToken(c) && static_cast<antlr4::RuleContext*>(c)->getRuleIndex() == rule)
      out.push_back(static_cast<T*>(c));
  return out;
}
/// The first token child of `ctx` of type `type`, or null (ctx->VALUE_ID() and the like).
antlr4::tree::TerminalNode* tokenChild(antlr4::ParserRuleContext* ctx, size_t type);

/// ctx->getText() of a rule that is one token (opName, word, predicateWord), without the string
/// stream RuleContext::getText builds it in.
std::string wordText(antlr4::ParserRuleContext* ctx);
/// The source text of a rule, as written (cheap: a slice of the input, unlike getText()).
std::string textOf(antlr4::ParserRuleContext* ctx);

/// One `<...>` parameter: `key = value` or a bare value, as text (whitespace collapsed).
struct AngleParam {
  std::string key;   // empty when there is no '='
  std::string value; // e.g. "f16", "16x16xf32", "cmp lt", "#pto.address_space<vec>"
  SrcLoc loc;        // the parameter
  SrcLoc valueLoc;   // its value
  const std::string& text() const { return value; }
  std::vector<std::string> words() const;
  /// The location of the last word of the value (for "unknown element type" errors).
  SrcLoc lastWordLoc() const;
};
std::vector<AngleParam> angleParams(P::AngleContext* angle);
/// The parameters of `inner` (the text between the outer angle brackets of a type token that
/// starts at `start`): top-level commas split, a top-level '=' separates key and value.
std::vector<AngleParam> angleParamsFromText(std::string_view inner, SrcLoc start);

/// Parses `16x16xf32`, `?x?xf16`, `32x32`, `f32`: dims, then an optional element type.
struct ShapeSpec {
  std::vector<int64_t> dims;
  std::optional<isa::DType> elem;
};
/// A dimension is '?' or at most 2^40; `why` (when given) says what is wrong with a negative or
/// too large dimension.
std::optional<ShapeSpec> parseShape(std::string_view text, std::string* why = nullptr);
/// The enum word of an attribute written as text: `#pto.x<WORD>`, `#pto<x WORD>`, `<WORD>`, `WORD`.
std::string enumWordOfText(std::string_view text);
/// The numbers of `array<i32: 1, 1, 0, 1>` (MLIR's dense array attribute: operandSegmentSizes),
/// or nullopt.
std::optional<std::vector<int>> denseArray(const std::string& text);

/// Reads types; reports errors to diags and returns nullopt on failure.
class TypeReader {
public:
  /// `arch` answers the target arch when a keyed tile type leaves its layout keys out: a left
  /// tile's default block layout differs between a2a3 and a5.
  TypeReader(DiagEngine& diags, std::function<isa::Arch()> arch)
      : diags_(diags), arch_(std::move(arch)) {}
  std::optional<ir::Type> read(P::TypeContext* t);
  /// Types repeat thousands of times in real modules; successful reads are cached by text.
  std::unordered_map<std::string, ir::Type> cache_;
  std::set<std::tuple<uint32_t, uint32_t, std::string>> failed_; // line, column, text
  /// MLIR's `!name = type` (BuildModule.cpp): later uses of `!name` read as the type; a name
  /// defined twice or one of the dialect's own names is an error.
  void defineAlias(const std::string& name, P::TypeContext* type, SrcLoc at);
  std::optional<ir::TileType> readTile(const std::vector<AngleParam>& params, SrcLoc loc);
  /// PTOAS's `#pto.tile_buf_config<blayout=.., slayout=.., s_fractal_size=.., pad=..[,
  /// compact=..]>` (values as words, `#pto.blayout<col_major>`, or PTOAS's enum numbers with `:
  /// i32`) applied to `t`; false (reported) on an unknown key or value.
  bool applyTileConfig(ir::TileType& t, const std::vector<AngleParam>& params);
  /// PTOAS's explicit tile-config rule for left, right and acc tiles (SyntaxTypes.cpp); false
  /// (reported) on a field that differs from the arch's cube layout.
  bool explicitConfigAgrees(const ir::TileType& t, const std::vector<AngleParam>& params,
                            bool configAttr);

private:
  std::optional<ir::Type> readUncached(P::TypeContext* t);
  std::optional<ir::Type> readBang(const std::string& name, const std::vector<AngleParam>& params,
                                   bool hasAngle, SrcLoc loc);
  std::optional<ir::Type> readMultiTile(const std::vector<AngleParam>& params, SrcLoc loc);
  std::optional<ir::Type> readBuiltin(const std::string& name,
                                      const std::vector<AngleParam>& params, bool hasAngle,
                                      SrcLoc loc);
  bool tileFields(ir::TileType& t, const std::vector<AngleParam>& params);
  bool tileFieldsDefaults(ir::TileType& t, const std::vector<AngleParam>& params);
  bool tilePositional(ir::TileType& t, const std::vector<AngleParam>& params, size_t first);
  bool tileOption(ir::TileType& t, const AngleParam& p);

  std::optional<int64_t> intParam(const AngleParam& p, bool allowDynamic);
  bool unknownElem(const AngleParam& p);
  DiagEngine& diags_;
  std::unordered_map<std::string, ir::Type> aliases_;
  std::function<isa::Arch()> arch_;
};

/// The enum word of an attribute value in any of the three spellings: `#pto.x<WORD>`,
/// `#pto<x WORD>`, `<WORD>`, plus bare `WORD` and `"WORD"`.
std::optional<std::string> enumWord(P::AttrValueContext* v);
std::optional<std::string> enumWord(P::AngleContext* angle);

/// Canonical text of an attribute value for round-tripping unknown attributes.
std::string canonicalText(antlr4::ParserRuleContext* ctx);

/// Parses an integer literal (decimal or 0x hex, optional leading '-').
using support::parseInt; // integer literals (support/Text.h)

} // namespace pto::as
