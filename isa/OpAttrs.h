// The attributes of tile ops that change what an op computes, and how each layer handles them:
// the table isa/OpAttrs.def, the one list the verifier, the encoding and the reference
// interpreter answer to (checked by OpRecord.EveryOpHasEveryLayer).
#pragma once

#include "isa/Isa.h"

#include <span>
#include <string_view>

namespace pto::isa {

/// Where an attribute's value goes in the tile block (OpAttrs.def, the Encoding column).
enum class AttrEncoding : uint8_t { Ior, Datr, Operands, Refused };
/// Whether the reference interpreter runs the attribute (OpAttrs.def, the Ref column).
enum class AttrRef : uint8_t { Runs, Refused };

struct OpAttr {
  OpId op;
  std::string_view key;
  std::string_view defaultValue; // "" = none
  std::string_view validValue;   // a value other than the default the verifier accepts
  std::string_view invalidValue; // a value the verifier refuses; "" = no verifier rule
  AttrEncoding encoding;
  AttrRef ref;
};

inline constexpr OpAttr kOpAttrs[] = {
#define PTO_OP_ATTR(Op, Key, Default, Valid, Invalid, Enc, Ref)                                    \
  {OpId::Op, Key, Default, Valid, Invalid, AttrEncoding::Enc, AttrRef::Ref},
#include "isa/OpAttrs.def"
};

inline std::span<const OpAttr> opAttrs() {
  return kOpAttrs;
}

/// An attribute value's last word: `#pto<relu_pre_mode no_relu>`, `"no_relu"`, `no_relu : i1`
/// and `no_relu` are the same value.
constexpr std::string_view attrValueWord(std::string_view v) {
  if (const size_t colon = v.find(" :"); colon != std::string_view::npos) v = v.substr(0, colon);
  while (!v.empty() && (v.back() == '>' || v.back() == ' ' || v.back() == '"'))
    v.remove_suffix(1);
  const size_t cut = v.find_last_of(" <\"");
  if (cut != std::string_view::npos) v.remove_prefix(cut + 1);
  return v;
}

/// Whether `value` is the row's default (never, for a row without one).
constexpr bool isDefaultAttrValue(const OpAttr& a, std::string_view value) {
  return !a.defaultValue.empty() && attrValueWord(value) == a.defaultValue;
}

} // namespace pto::isa
