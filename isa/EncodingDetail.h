// Internals of the 0.58.3 codec shared by isa/Encoding.cpp (tables, bit packing, decoding)
// and isa/EncodingText.cpp (the canonical text of instructions). Not a public header.
#pragma once

#include "support/Text.h"

#include "isa/Encoding.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pto::isa::enc::detail {

using support::iequals;

/// A code and its spelling (round modes, compare modes, pads, named field values...).
struct NamedCode {
  unsigned code;
  std::string_view name;
};
const std::vector<NamedCode>& rmodes();
const std::vector<NamedCode>& rmodeAliases();
const std::vector<NamedCode>& cmodes();
const std::vector<NamedCode>& pads();
/// The named values of a field kind (Encoding.def PTO_ENC_NAMED).
const std::vector<NamedCode>& named(std::string_view kind);
std::string_view nameOf(const std::vector<NamedCode>& t, unsigned code);
std::optional<unsigned> codeOf(const std::vector<NamedCode>& t, std::string_view name);

/// An extension control block (BSTART.EXTC) and how many pipes it names.
struct XCtlRow {
  ExtCtl ctl;
  std::string_view name;
  unsigned numPipes;
};
const std::vector<XCtlRow>& xctls();
const XCtlRow* xctl(unsigned code);

const TileOpInfo* teplOp(unsigned mode, unsigned function);
const TileOpInfo* extOp(unsigned xop);

// The text of instructions (EncodingText.cpp): a form's syntax pattern expanded and matched,
// and the hand-written syntaxes ("@NAME" in Encoding.def).
std::string expand(const FormInfo& f, const Inst& in);
bool matchPattern(const FormInfo& f, std::string_view text, Inst& in);
std::string formatCustom(const Inst& in);
std::optional<Inst> parseCustom(const FormInfo& f, std::string_view text);

} // namespace pto::isa::enc::detail
