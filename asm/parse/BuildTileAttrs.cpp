// Tile-op attributes in each spelling (`{key = value}`, `#key=value`, `<key=value>`): canonical
// keys, round/saturation/compare/precision words and the fixpipe modes of TMOV/TSTORE.
#include "asm/parse/BuilderImpl.h"

namespace pto::as::detail {
namespace {

// Canonical keys and value spellings of the tile-op attributes pto-as understands.
struct AttrAlias {
  std::string_view alias;
  std::string_view key;
};
constexpr AttrAlias kAttrAliases[] = {
    {"rmode", "rmode"},
    {"round_mode", "rmode"},
    {"roundMode", "rmode"},
    {"rnd", "rmode"},
    {"sat_mode", "sat_mode"},
    {"sat", "sat_mode"},
    {"satMode", "sat_mode"},
    {"saturation", "sat_mode"},
    {"cmpMode", "cmpMode"},
    {"cmp", "cmpMode"},
    {"cmp_mode", "cmpMode"},
    {"precision", "precisionType"},
    {"algorithm", "precisionType"},
    {"precisionType", "precisionType"},
};

} // namespace

void Builder::readTileAttrs(P::AttrDictContext* d, TileAttrs& attrs) {
  for (auto* e : d->attrEntry()) {
    std::string key = entryKey(e);
    addTileAttr(key, e->attrValue() ? enumWord(e->attrValue()) : std::nullopt, entryValue(e),
                locOf(e), attrs);
  }
}

void Builder::readHashAttr(P::HashPieceContext* h, TileAttrs& attrs) {
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

void Builder::readAngleAttrs(P::AngleContext* a, TileAttrs& attrs) {
  // `<rmode=CAST_RINT>` (seed form)
  for (auto& prm : angleParams(a)) {
    if (prm.key.empty()) {
      diags_.error(prm.loc, "expected '<key=value>' attributes");
      continue;
    }
    addTileAttr(prm.key, prm.text(), prm.text(), prm.loc, attrs);
  }
}

void Builder::addTileAttr(const std::string& rawKey, std::optional<std::string> word,
                          const std::string& text, SrcLoc loc, TileAttrs& attrs) {
  std::string key = rawKey;
  for (const AttrAlias& a : kAttrAliases)
    if (a.alias == rawKey) key = std::string(a.key);
  TileModes modes = attrs.modes; // committed only when the attribute is accepted
  std::optional<std::string> value = tileModeText(key, word, text, loc, modes);
  if (!value) return;
  for (auto& a : attrs.list)
    if (a.key == key) {
      diags_.error(loc, "duplicate attribute '" + key + "'");
      return;
    }
  attrs.list.push_back({key, *value});
  attrs.modes = modes;
}

/// The canonical text of a tile attribute; for the modes (rmode, sat_mode, cmpMode) also their
/// typed value in `modes`, the one place they are parsed. nullopt after a located error.
std::optional<std::string> Builder::tileModeText(const std::string& key,
                                                 const std::optional<std::string>& word,
                                                 const std::string& text, SrcLoc loc,
                                                 TileModes& modes) {
  if (key == "rmode") {
    modes.round = word ? isa::parseRoundMode(*word) : std::nullopt;
    if (!modes.round) {
      diags_.error(loc, "unknown rounding mode '" + word.value_or(text) +
                            "' (expected CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, "
                            "CAST_ODD, CAST_NONE)");
      return std::nullopt;
    }
    return "#pto<round_mode " + std::string(isa::spelling(*modes.round)) + ">";
  }
  if (key == "sat_mode") {
    modes.sat = word ? isa::parseSatMode(*word) : std::nullopt;
    if (!modes.sat) {
      diags_.error(loc,
                   "unknown saturation mode '" + word.value_or(text) + "' (expected ON or OFF)");
      return std::nullopt;
    }
    return "#pto<saturation_mode " + std::string(isa::spelling(*modes.sat)) + ">";
  }
  if (key == "cmpMode") {
    modes.cmp = word ? isa::parseCmpMode(*word) : std::nullopt;
    if (!modes.cmp) {
      diags_.error(loc, "unknown compare mode '" + word.value_or(text) +
                            "' (expected eq, ne, lt, le, gt, ge)");
      return std::nullopt;
    }
    return "#pto<cmp " + std::string(isa::spelling(*modes.cmp)) + ">";
  }
  if (auto fix = fixpipeModeText(key, word, text, loc, modes)) return *fix;
  if (key == "reluPreMode" || key == "atomicType" || key == "stPhase" || key == "accToVecMode")
    return std::nullopt; // an unknown value, reported
  if (key == "precisionType") {
    // PTOAS's #pto<sqrt_precision high_precision>, or the seed's HIGH_PRECISION; the op's own
    // spelling is written once the op is known (Builder::resolvePrecision).
    const bool high = word && (*word == "HIGH_PRECISION" || *word == "high_precision");
    if (!word || (!high && *word != "DEFAULT" && *word != "default")) {
      diags_.error(loc, "unknown precision '" + word.value_or(text) +
                            "' (expected default or high_precision)");
      return std::nullopt;
    }
    return std::string(high ? kHighPrecision : kDefaultPrecision);
  }
  return text;
}

namespace {
/// Parses one fixpipe mode into `slot`; the canonical text, or "" (error) for an unknown word.
template <class E, class Parse>
std::string fixMode(std::optional<E>& slot, Parse parse, const std::optional<std::string>& word,
                    std::string_view attr) {
  slot = word ? parse(*word) : std::nullopt;
  if (!slot) return "";
  return "#pto<" + std::string(attr) + " " + std::string(isa::spelling(*slot)) + ">";
}
} // namespace

/// reluPreMode, atomicType, stPhase, accToVecMode (PTOAS's spellings, isa/Enums.def); nullopt
/// when `key` is none of them or after a located error.
std::optional<std::string> Builder::fixpipeModeText(const std::string& key,
                                                    const std::optional<std::string>& word,
                                                    const std::string& text, SrcLoc loc,
                                                    TileModes& modes) {
  std::string out, expected;
  if (key == "reluPreMode") {
    out = fixMode(modes.relu, isa::parseReluPreMode, word, "relu_pre_mode");
    expected = "no_relu, normal_relu";
  } else if (key == "atomicType") {
    out = fixMode(modes.atomic, isa::parseAtomicType, word, "atomic_type");
    expected = "atomic_none, atomic_add";
  } else if (key == "stPhase") {
    out = fixMode(modes.phase, isa::parseStPhase, word, "st_phase");
    expected = "unspecified, partial, final";
  } else if (key == "accToVecMode") {
    out = fixMode(modes.accToVec, isa::parseAccToVecMode, word, "acc_to_vec_mode");
    expected = "single_mode_vec0, single_mode_vec1, dual_mode_split_m, dual_mode_split_n";
  } else {
    return std::nullopt;
  }
  if (out.empty()) {
    diags_.error(loc,
                 "unknown " + key + " '" + word.value_or(text) + "' (expected " + expected + ")");
    return std::nullopt;
  }
  return out;
}

} // namespace pto::as::detail
