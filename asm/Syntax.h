// Helpers that read parse-tree fragments (types, attribute values, angle-bracket parameters)
// into IR values. Shared by the IR builder; kept apart so that the builder reads as the
// op-by-op interpretation of the generic statement syntax.
#pragma once

#include "PTOParser.h"
#include "asm/Diagnostics.h"
#include "asm/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace pto::as {

using P = ptogen::PTOParser;

SrcLoc locOf(antlr4::Token* t);
SrcLoc locOf(antlr4::tree::TerminalNode* n);
SrcLoc locOf(antlr4::ParserRuleContext* ctx);

/// One `<...>` parameter: `key = atoms` or bare atoms.
struct AngleParam {
  std::string key; // empty when there is no '='
  std::vector<P::AngleAtomContext*> atoms;
  SrcLoc loc;
  std::string text() const; // the atoms' text joined by single spaces
};
std::vector<AngleParam> angleParams(P::AngleContext* angle);

/// Parses `16x16xf32` / `?x?xf16` / `32x32` style atoms. elem is set when a dtype follows.
struct ShapeSpec {
  std::vector<int64_t> dims;
  std::optional<isa::DType> elem;
};
std::optional<ShapeSpec> parseShapeAtoms(const std::vector<P::AngleAtomContext*>& atoms);

/// Reads types; reports errors to diags and returns nullopt on failure.
class TypeReader {
public:
  explicit TypeReader(DiagEngine& diags) : diags_(diags) {}
  std::optional<ir::Type> read(P::TypeContext* t);
  std::optional<ir::TileType> readTile(P::AngleContext* angle, SrcLoc loc, bool docsForm);

private:
  std::optional<ir::Type> readBang(const std::string& name, P::AngleContext* angle, SrcLoc loc);
  std::optional<ir::Type> readBuiltin(const std::string& name, P::AngleContext* angle, SrcLoc loc);
  bool tileKeyed(ir::TileType& t, const std::vector<AngleParam>& params);
  bool tileCompact(ir::TileType& t, const std::vector<AngleParam>& params);
  bool tilePositional(ir::TileType& t, const std::vector<AngleParam>& params, size_t first);
  bool tileOption(ir::TileType& t, const AngleParam& p);
  std::optional<int64_t> intParam(const AngleParam& p, bool allowDynamic);
  bool unknownElem(const AngleParam& p);
  DiagEngine& diags_;
};

/// The enum word of an attribute value in any of the three spellings: `#pto.x<WORD>`,
/// `#pto<x WORD>`, `<WORD>`, plus bare `WORD` and `"WORD"`.
std::optional<std::string> enumWord(P::AttrValueContext* v);
std::optional<std::string> enumWord(P::AngleContext* angle);

/// Canonical text of an attribute value for round-tripping unknown attributes.
std::string canonicalText(antlr4::ParserRuleContext* ctx);

/// Parses an integer literal (decimal or 0x hex, optional leading '-').
std::optional<int64_t> parseInt(const std::string& text);

} // namespace pto::as
