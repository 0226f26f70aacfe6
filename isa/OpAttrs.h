// The attributes of tile ops that change what an op computes, and how each layer handles them:
// the table isa/OpAttrs.def, the one list the verifier, the encoding and the reference
// interpreter answer to (checked by OpRecord.EveryOpHasEveryLayer).
#pragma once

#include "isa/Isa.h"

#include <cstddef>
#include <iterator>
#include <span>
#include <string_view>

namespace pto::isa {

/// The rows of OpAttrs.def, by name: how every layer past the parser names an attribute.
enum class OpAttrId : uint8_t {
#define PTO_OP_ATTR(Id, Op, Key, Default, Valid, Invalid, Domain, Enc, Ref) Id,
#include "isa/OpAttrs.def"
};
/// The values an attribute may take (OpAttrs.def, the Domain column).
enum class AttrDomain : uint8_t {
  UpperOrLower,    // 0 (lower) or 1 (upper)
  Bool,            // true or false (1 or 0)
  Offset,          // an integer in 0..INT32_MAX (pto-isa's uint32_t, PTOAS's i32)
  Rounds,          // TRANDOM's Philox rounds: 7 or 10 (isa/Random.h)
  QuantType,       // INT8_SYM (0) or INT8_ASYM (1)
  MaskPattern,     // TGATHER's P0101 ... P1111: codes 1..7 (pto-isa's MaskPattern)
  Coalesce,        // MGATHER / MSCATTER: row (1) or elem (2) (pto-isa's Coalesce)
  GatherOob,       // undefined (0), clamp, wrap, zero (pto-isa's GatherOOB)
  ScatterOob,      // undefined (0), skip, clamp, wrap (pto-isa's ScatterOOB)
  ScatterAtomic,   // none (0), add, max, min (pto-isa's ScatterAtomicOp)
  ScatterConflict, // last (0), default (pto-isa's ScatterConflict, A5)
  Word,            // any word: no rule (attributes refused at lowering but for their default)
};
/// What the values of `d` must be, for the verifier's message ("" for Word).
constexpr std::string_view domainRule(AttrDomain d) {
  switch (d) {
  case AttrDomain::UpperOrLower:
    return "must be 0 (lower) or 1 (upper)";
  case AttrDomain::Bool:
    return "must be true or false";
  case AttrDomain::Offset:
    return "must be an integer in 0..2147483647";
  case AttrDomain::Rounds:
    return "must be 7 or 10";
  case AttrDomain::QuantType:
    return "must be INT8_SYM or INT8_ASYM";
  case AttrDomain::MaskPattern:
    return "must be one of P0101, P1010, P0001, P0010, P0100, P1000, P1111";
  case AttrDomain::Coalesce:
    return "must be #pto<coalesce row> or #pto<coalesce elem>";
  case AttrDomain::GatherOob:
    return "must be undefined, clamp, wrap or zero";
  case AttrDomain::ScatterOob:
    return "must be undefined, skip, clamp or wrap";
  case AttrDomain::ScatterAtomic:
    return "must be none, add, max or min";
  case AttrDomain::ScatterConflict:
    return "must be last or default";
  case AttrDomain::Word:
    break;
  }
  return "";
}
/// TGATHER's mask patterns, in the order of their codes 1..7 (pto-isa's MaskPattern): the
/// columns c of each row with c % 2 == 0 (P0101), c % 2 == 1 (P1010), c % 4 == 0, 1, 2, 3
/// (P0001, P0010, P0100, P1000) or all (P1111).
inline constexpr std::string_view kMaskPatterns[] = {"P0101", "P1010", "P0001", "P0010",
                                                     "P0100", "P1000", "P1111"};
/// The words of the MGATHER / MSCATTER mode domains, in the order of their codes.
inline constexpr std::string_view kCoalesceWords[] = {"", "row", "elem"}; // 0: from the shapes
inline constexpr std::string_view kGatherOobWords[] = {"undefined", "clamp", "wrap", "zero"};
inline constexpr std::string_view kScatterOobWords[] = {"undefined", "skip", "clamp", "wrap"};
inline constexpr std::string_view kScatterAtomicWords[] = {"none", "add", "max", "min"};
inline constexpr std::string_view kScatterConflictWords[] = {"last", "default"};

/// Where an attribute's value goes in the tile block (OpAttrs.def, the Encoding column).
enum class AttrEncoding : uint8_t { Ior, Datr, Operands, Refused };
/// Whether the reference interpreter runs the attribute (OpAttrs.def, the Ref column).
enum class AttrRef : uint8_t { Runs, Refused };

struct OpAttr {
  OpAttrId id;
  OpId op;
  std::string_view key;
  std::string_view defaultValue; // "" = none
  std::string_view validValue;   // a value other than the default the verifier accepts
  std::string_view invalidValue; // a value the verifier refuses; "" = no verifier rule
  AttrDomain domain;
  AttrEncoding encoding;
  AttrRef ref;
};

inline constexpr OpAttr kOpAttrs[] = {
#define PTO_OP_ATTR(Id, Op, Key, Default, Valid, Invalid, Domain, Enc, Ref)                        \
  {OpAttrId::Id,       OpId::Op,          Key,         Default, Valid, Invalid,                    \
   AttrDomain::Domain, AttrEncoding::Enc, AttrRef::Ref},
#include "isa/OpAttrs.def"
};

inline std::span<const OpAttr> opAttrs() {
  return kOpAttrs;
}
/// The row of `id` (the rows are in OpAttrId's order).
constexpr const OpAttr& opAttr(OpAttrId id) {
  return kOpAttrs[static_cast<size_t>(id)];
}
static_assert([] {
  for (size_t i = 0; i < std::size(kOpAttrs); ++i)
    if (static_cast<size_t>(kOpAttrs[i].id) != i) return false;
  return true;
}());

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

/// MGATHER's and MSCATTER's modes, packed in one word, the block's third B.IOR scalar (after
/// the table's address and row stride; docs/encoding.md 5.5): bits 0-1 the coalesce mode (0:
/// from the shapes, as before the attribute existed: an index tile of one row or column of R
/// gathers rows, else elements; 1 row, 2 elem), bits 2-3 the out-of-bounds policy (the
/// GatherOOB or ScatterOOB code), bits 4-5 the scatter's atomic op, bit 6 its conflict policy,
/// bits 8-63 the table's capacity (rows in row mode, elements in element mode), which a policy
/// other than undefined needs.
namespace gm {
struct Modes {
  unsigned coalesce = 0, oob = 0, atomic = 0, conflict = 0;
  uint64_t capacity = 0;
};
inline constexpr unsigned kCapacityShift = 8;
inline constexpr uint64_t kMaxCapacity = ~uint64_t{0} >> kCapacityShift;
constexpr uint64_t modeWord(const Modes& m) {
  return (m.coalesce & 3u) | (m.oob & 3u) << 2 | (m.atomic & 3u) << 4 | (m.conflict & 1u) << 6 |
         m.capacity << kCapacityShift;
}
constexpr Modes modesOf(uint64_t word) {
  return {static_cast<unsigned>(word & 3u), static_cast<unsigned>(word >> 2 & 3u),
          static_cast<unsigned>(word >> 4 & 3u), static_cast<unsigned>(word >> 6 & 1u),
          word >> kCapacityShift};
}
// The codes of the policies (pto-isa's enums).
inline constexpr unsigned kRow = 1, kElem = 2;
inline constexpr unsigned kGatherClamp = 1, kGatherWrap = 2, kGatherZero = 3;
inline constexpr unsigned kScatterSkip = 1, kScatterClamp = 2, kScatterWrap = 3;
inline constexpr unsigned kAtomicAdd = 1, kAtomicMax = 2, kAtomicMin = 3;

/// The coalesce mode when the attribute is left out: the index tile's valid shape picks it. One
/// index per data row (1 x R or R x 1, the data having more than one column) gathers rows;
/// anything else gathers elements. The verifier, the encoder and every backend ask this.
constexpr unsigned inferredCoalesce(uint32_t dataRows, uint32_t dataCols, uint32_t idxRows,
                                    uint32_t idxCols) {
  const bool same = idxRows == dataRows && idxCols == dataCols;
  const bool row = !same && dataCols > 1 &&
                   ((idxRows == 1 && idxCols == dataRows) || (idxCols == 1 && idxRows == dataRows));
  return row ? kRow : kElem;
}
} // namespace gm

} // namespace pto::isa
