// Attribute values read from their text: see AttrValues.h.
#include "asm/parse/AttrValues.h"

#include "isa/OpAttrs.h"
#include "isa/Random.h"
#include "support/Text.h"

#include <climits>
#include <string>

namespace pto::as {
namespace {

/// An attribute's text without its `: type` suffix.
std::string_view withoutType(std::string_view v) {
  if (auto colon = v.find(" :"); colon != std::string_view::npos) v = v.substr(0, colon);
  return v;
}

/// The code of `word` among `words` (its index), searching from `first`.
template <size_t N>
std::optional<int64_t> wordCode(const std::string_view (&words)[N], std::string_view word,
                                size_t first) {
  for (size_t i = first; i < N; ++i)
    if (word == words[i]) return static_cast<int64_t>(i);
  return std::nullopt;
}

/// The value of `text` in `domain`, or nullopt when it is not one of the domain's values.
std::optional<int64_t> domainValue(isa::AttrDomain domain, std::string_view text) {
  using D = isa::AttrDomain;
  const std::string_view word = isa::attrValueWord(text);
  const std::optional<int64_t> n = support::parseInt(withoutType(text));
  switch (domain) {
  case D::UpperOrLower:
    return n && (*n == 0 || *n == 1) ? n : std::nullopt;
  case D::Bool:
    if (word == "true") return 1;
    if (word == "false") return 0;
    return n && (*n == 0 || *n == 1) ? n : std::nullopt;
  case D::Offset:
    return n && *n >= 0 && *n <= INT32_MAX ? n : std::nullopt;
  case D::Rounds:
    return n && isa::trandom::roundsCode(static_cast<uint64_t>(*n)) ? n : std::nullopt;
  case D::QuantType:
    if (word == "INT8_SYM") return 0;
    if (word == "INT8_ASYM") return 1;
    return std::nullopt;
  case D::MaskPattern:
    for (size_t i = 0; i < std::size(isa::kMaskPatterns); ++i)
      if (word == isa::kMaskPatterns[i]) return static_cast<int64_t>(i + 1);
    return std::nullopt;
  case D::Coalesce:
    return wordCode(isa::kCoalesceWords, word, 1);
  case D::GatherOob:
    return wordCode(isa::kGatherOobWords, word, 0);
  case D::ScatterOob:
    return wordCode(isa::kScatterOobWords, word, 0);
  case D::ScatterAtomic:
    return wordCode(isa::kScatterAtomicWords, word, 0);
  case D::ScatterConflict:
    return wordCode(isa::kScatterConflictWords, word, 0);
  case D::Word:
    break;
  }
  return std::nullopt;
}

/// The B.IOR scalars of the Ior attributes read (TMRGSORT's exhausted lists, TGATHER's mask
/// pattern, TGATHER_CMP's first index, TCI's direction, TTRI's orientation): the 0.58.3 fields
/// after the scalar operands. A value left out, or the block's default, adds none, except
/// TGATHER_CMP's offset, which its compare form always carries.
std::vector<uint64_t> iorScalars(const ir::Op& op) {
  using Id = isa::OpAttrId;
  const auto value = [&](Id id) -> std::optional<int64_t> {
    const ir::AttrReading* r = ir::attrReading(op, id);
    return r ? r->value : std::nullopt;
  };
  switch (op.tileOp) {
  case isa::OpId::TMRGSORT:
    if (value(Id::TmrgsortExhausted) == 1) return {1};
    break;
  case isa::OpId::TGATHER:
    if (auto code = value(Id::TgatherMaskPattern)) return {static_cast<uint64_t>(*code)};
    break;
  case isa::OpId::TGATHER_CMP:
    return {static_cast<uint64_t>(value(Id::TgatherCmpOffset).value_or(0))};
  case isa::OpId::TCI:
    if (value(Id::TciDescending) == 1) return {1};
    break;
  case isa::OpId::TTRI:
    if (auto upper = value(Id::TtriUpperOrLower); upper && *upper != 0)
      return {static_cast<uint64_t>(*upper)};
    break;
  case isa::OpId::MGATHER:
  case isa::OpId::MSCATTER: {
    // One mode word (isa::gm); the table's capacity is the code generator's to add.
    const bool gather = op.tileOp == isa::OpId::MGATHER;
    isa::gm::Modes m;
    auto code = [&](Id id) { return static_cast<unsigned>(value(id).value_or(0)); };
    m.coalesce = code(gather ? Id::MgatherCoalesce : Id::MscatterCoalesce);
    m.oob = code(gather ? Id::MgatherGatherOob : Id::MscatterScatterOob);
    if (!gather) {
      m.atomic = code(Id::MscatterAtomicOp);
      m.conflict = code(Id::MscatterConflict);
    }
    if (const uint64_t word = isa::gm::modeWord(m)) return {word};
    break;
  }
  default:
    break;
  }
  return {};
}

} // namespace

std::optional<int64_t> attrValueInt(std::span<const ir::NamedAttr> attrs, std::string_view key) {
  for (const ir::NamedAttr& a : attrs) {
    if (a.key != key) continue;
    const std::string_view v = withoutType(a.value);
    if (v == "true") return 1;
    if (v == "false") return 0;
    return support::parseInt(v);
  }
  return std::nullopt;
}

std::optional<int64_t> attrInt(const ir::Op& op, std::string_view key) {
  const ir::NamedAttr* a = op.attr(key);
  if (!a) return std::nullopt;
  return support::parseInt(withoutType(a->value));
}

ir::PipeAttrs readPipeAttrs(std::span<const ir::NamedAttr> attrs) {
  auto text = [&](std::string_view key) {
    for (const ir::NamedAttr& a : attrs)
      if (a.key == key) {
        std::string v = a.value;
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        if (!v.empty() && v.front() == '@') v = v.substr(1);
        return v;
      }
    return std::string();
  };
  ir::PipeAttrs p;
  p.name = text("name");
  p.peerFunc = text("peer_func");
  p.frontend = text("frontend");
  p.size = attrValueInt(attrs, "size");
  p.autoAlloc = attrValueInt(attrs, "auto");
  p.base = attrValueInt(attrs, "base");
  for (const ir::NamedAttr& a : attrs)
    if (a.key == "location") {
      const std::string& loc = a.value;
      if (loc.find("<vec>") != std::string::npos || loc == "vec") p.location = isa::Loc::Vec;
      if (loc.find("<mat>") != std::string::npos || loc == "mat") p.location = isa::Loc::Mat;
    }
  p.dirMask = attrValueInt(attrs, "dir_mask");
  p.slotSize = attrValueInt(attrs, "slot_size");
  p.slotNum = attrValueInt(attrs, "slot_num");
  p.localSlotNum = attrValueInt(attrs, "local_slot_num");
  p.flagBase = attrValueInt(attrs, "flag_base");
  p.noSplit = attrValueInt(attrs, "nosplit");
  return p;
}

void readTileOpAttributes(ir::Op& op) {
  std::vector<ir::AttrReading> readings;
  for (const isa::OpAttr& row : isa::opAttrs()) {
    const ir::NamedAttr* a = row.op == op.tileOp ? op.attr(row.key) : nullptr;
    if (!a) continue;
    readings.push_back({row.id, domainValue(row.domain, a->value),
                        isa::isDefaultAttrValue(row, a->value), a->value});
  }
  if (!readings.empty()) op.modes.edit().readings = std::move(readings);
  if (auto ior = iorScalars(op); !ior.empty()) op.modes.edit().ior = std::move(ior);
  if (const ir::AttrReading* r = ir::attrReading(op, isa::OpAttrId::TrandomRounds))
    op.modes.edit().rounds = r->value;
}

} // namespace pto::as
