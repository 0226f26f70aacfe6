// TypeReader (asm/parse/Syntax.h): `!pto.*` types, memrefs and tile configurations from the parse
// tree into the Kernel IR's types, with located errors. The rest of the syntax helpers: Syntax.cpp.
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

namespace {
struct UsualLayout {
  isa::BLayout blayout;
  isa::SLayout slayout;
  int64_t fractal;
};
/// A location's usual layout: what PTOAS's tile-config inference gives and pto-isa's TileLeft /
/// TileRight / TileAcc / TileMat declare (vec, bias, scaling: row_major / none_box / 512).
UsualLayout usualLayout(isa::Loc loc, bool a5) {
  using isa::BLayout, isa::SLayout, isa::Loc;
  switch (loc) {
  case Loc::Mat:
    return {BLayout::ColMajor, SLayout::RowMajor, 512};
  case Loc::Left:
    return {a5 ? BLayout::ColMajor : BLayout::RowMajor, SLayout::RowMajor, 512};
  case Loc::Right:
    return {BLayout::RowMajor, SLayout::ColMajor, 512};
  case Loc::Acc:
    return {BLayout::ColMajor, SLayout::RowMajor, 1024};
  default:
    return {BLayout::RowMajor, SLayout::NoneBox, 512};
  }
}
} // namespace

std::optional<Type> TypeReader::read(P::TypeContext* t) {
  if (!t) return std::nullopt;
  std::string key = textOf(t);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  // A type that failed is reported once at its place, however often the builder reads it (a
  // function argument's type is read for the argument and for the signature).
  const SrcLoc at = locOf(t);
  const std::tuple<uint32_t, uint32_t, std::string> place{at.line, at.col, key};
  if (failed_.count(place)) return std::nullopt;
  auto type = readUncached(t);
  if (type)
    cache_.emplace(std::move(key), *type);
  else
    failed_.insert(place);
  return type;
}

std::optional<Type> TypeReader::readUncached(P::TypeContext* t) {
  SrcLoc loc = locOf(t);
  if (t->BANG_TYPE()) {
    // `!pto.name<params>` lexed as one token: split the name and the parameter text.
    std::string text = t->BANG_TYPE()->getText();
    size_t open = text.find('<');
    SrcLoc start = loc;
    start.col += static_cast<uint32_t>(open + 1);
    return readBang(
        text.substr(0, open),
        angleParamsFromText(std::string_view(text).substr(open + 1, text.size() - open - 2), start),
        true, loc);
  }
  if (t->BANG_ID())
    return readBang(t->BANG_ID()->getText(), angleParams(t->angle()), t->angle() != nullptr, loc);
  if (t->IDENT())
    return readBuiltin(t->IDENT()->getText(), angleParams(t->angle()), t->angle() != nullptr, loc);
  if (t->angle()) { // legacy `tile<...>` without the bang, or PTOAS's bare `<...>` shorthands
    auto params = angleParams(t->angle());
    // `<f32>`: the pointer shorthand (`!pto.ptr<f32>`).
    if (params.size() == 1 && params[0].key.empty())
      if (auto dt = isa::parseDType(params[0].text())) return Type::ptr(*dt);
    auto tile = readTile(params, loc);
    if (!tile) return std::nullopt;
    return Type::tileOf(*tile);
  }
  diags_.error(loc, "a function type is not allowed here");
  return std::nullopt;
}

namespace {
/// Whether `strided<[s0, ..., sN]>` spells the row-major strides of `dims`; with an offset
/// (`strided<[1], offset: 256>`) only when `offsetAllowed`.
bool contiguousStrides(const std::string& text, const std::vector<int64_t>& dims,
                       bool offsetAllowed = false) {
  size_t open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  if (!offsetAllowed && text.find("offset", close) != std::string::npos) return false;
  std::vector<int64_t> strides;
  std::string item;
  for (size_t i = open + 1; i <= close; ++i) {
    char ch = text[i];
    if (ch == ',' || ch == ']') {
      size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b == std::string::npos) return false;
      item = item.substr(b, e - b + 1);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
          item.size() > 12)
        return false;
      strides.push_back(std::stoll(item));
      item.clear();
    } else {
      item += ch;
    }
  }
  if (strides.size() != dims.size()) return false;
  int64_t expect = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (strides[i] != expect || dims[i] < 0) return false;
    expect *= dims[i];
  }
  return true;
}
} // namespace

std::optional<Type> TypeReader::readBuiltin(const std::string& name,
                                            const std::vector<AngleParam>& params, bool hasAngle,
                                            SrcLoc loc) {
  if (name == "index" && !hasAngle) return Type::index();
  if (!hasAngle) {
    if (auto dt = isa::parseDType(name)) return Type::scalar(*dt);
    diags_.error(loc, "unknown type '" + name + "'");
    return std::nullopt;
  }
  if (name == "vector") {
    // vector<4xi16>: the one vector type PTO uses (tmrgsort's executed-count list).
    if (params.size() == 1 && params[0].key.empty() && params[0].text() == "4xi16")
      return Type::mrgSortCounts();
    diags_.error(loc, "only 'vector<4xi16>' (tmrgsort's executed-count list) is supported");
    return std::nullopt;
  }
  if (name == "memref") {
    // memref<RxCxT, #pto.address_space<vec>>: a local buffer (tile) or a GM tensor.
    std::string why;
    auto shape = params.empty() ? std::nullopt : parseShape(params[0].value, &why);
    if (!why.empty()) {
      diags_.error(params[0].valueLoc, why);
      return std::nullopt;
    }
    if (!shape || !shape->elem) {
      diags_.error(loc, "expected 'memref<shape x dtype, #pto.address_space<...>>'");
      return std::nullopt;
    }
    std::string space = "gm";
    const AngleParam* strided = nullptr; // a layout with other strides or an offset
    bool offsetOnly = false;             // contiguous strides and an offset
    for (size_t i = 1; i < params.size(); ++i) {
      const std::string& v = params[i].value;
      if (v.starts_with("strided")) {
        if (!contiguousStrides(v, shape->dims)) strided = &params[i];
        offsetOnly = strided && contiguousStrides(v, shape->dims, true);
        continue;
      }
      space = enumWordOfText(v);
    }
    // A local view's offset in its buffer is the business of the op that makes it
    // (memref.subview, pto.pointer_cast): its type is the contiguous buffer it names.
    if (space != "gm" && offsetOnly) strided = nullptr;
    if (space == "gm") {
      // Its strides come from the memref.reinterpret_cast that makes it (checked there).
      Type t{TypeKind::TensorView, *shape->elem, shape->dims};
      t.strided = strided != nullptr;
      return t;
    }
    auto l = isa::parseLoc(space);
    if (!l || shape->dims.empty()) {
      diags_.error(loc, "unsupported memref address space '" + space + "'");
      return std::nullopt;
    }
    // Other strides, or `?` dimensions: the memref.reinterpret_cast that makes such a view gives
    // them (checked there); the type alone names no tile.
    if (strided || std::count(shape->dims.begin(), shape->dims.end(), kDynamic) > 0) {
      Type t{TypeKind::LocalView, *shape->elem, shape->dims};
      t.tile.loc = *l;
      t.strided = strided != nullptr;
      return t;
    }
    // A local memref is a tile buffer: its leading dimensions stack into rows (a 16x16x16
    // buffer is a 256x16 tile), as the PTO memory planner lays it out. Rows are padded to the
    // 32-byte alignment of a row-major tile (a 16x16xi8 buffer is a 16x32 tile whose valid
    // region is 16x16).
    if (shape->dims.back() <= 0) {
      diags_.error(loc, "a local memref needs static, positive dimensions");
      return std::nullopt;
    }
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < shape->dims.size(); ++i) {
      if (shape->dims[i] <= 0 || rows > (int64_t{1} << 31) / shape->dims[i]) {
        diags_.error(loc, "a local memref needs static, positive dimensions");
        return std::nullopt;
      }
      rows *= shape->dims[i];
    }
    TileType tt;
    tt.loc = *l;
    tt.dtype = *shape->elem;
    tt.rows = tt.validRows = rows;
    tt.cols = tt.validCols = shape->dims.back();
    const int64_t bits = isa::bitWidth(tt.dtype), rowBits = tt.cols * bits;
    if (bits > 0 && tt.cols > 0 && rowBits % 256 != 0) tt.cols = (rowBits + 255) / 256 * 256 / bits;
    return Type::tileOf(tt);
  }
  diags_.error(loc, "unsupported type '" + name + "<...>'");
  return std::nullopt;
}

void TypeReader::defineAlias(const std::string& name, P::TypeContext* type, SrcLoc at) {
  if (name.starts_with("!pto.")) {
    diags_.error(at, "'" + name + "' is a type of the pto dialect, not an alias name");
    return;
  }
  auto t = read(type);
  if (!t) return;
  if (!aliases_.emplace(name, *t).second)
    diags_.error(at, "type alias '" + name + "' is defined twice");
}

/// `!pto.multi_tile_buf<!pto.tile_buf<...>, count=N>` (or a type alias for the slot).
std::optional<Type> TypeReader::readMultiTile(const std::vector<AngleParam>& params, SrcLoc loc) {
  const auto count =
      params.size() == 2 && params[1].key == "count" ? intParam(params[1], false) : std::nullopt;
  std::optional<Type> slot;
  if (count && !params[0].key.empty())
    slot = std::nullopt;
  else if (count) {
    const std::string& text = params[0].text();
    const size_t open = text.find('<');
    if (open != std::string::npos && text.back() == '>')
      slot = readBang(
          text.substr(0, open),
          angleParamsFromText(std::string_view(text).substr(open + 1, text.size() - open - 2),
                              params[0].valueLoc),
          true, params[0].valueLoc);
    else if (auto it = aliases_.find(text); it != aliases_.end())
      slot = it->second;
  }
  if (!count || *count < 1 || *count > 64 || !slot || !slot->isTile()) {
    diags_.error(loc, "expected '!pto.multi_tile_buf<!pto.tile_buf<...>, count=N>' with N in "
                      "1..64");
    return std::nullopt;
  }
  return Type::multiTileOf(slot->tile, *count);
}

std::optional<Type> TypeReader::readBang(const std::string& name,
                                         const std::vector<AngleParam>& params, bool hasAngle,
                                         SrcLoc loc) {
  if (!hasAngle)
    if (auto it = aliases_.find(name); it != aliases_.end()) return it->second;
  if (name == "!pto.tile_buf" || name == "!pto.tile") {
    if (!hasAngle) {
      diags_.error(loc, "expected '<' after '" + name + "'");
      return std::nullopt;
    }
    // PTOAS's tile_buf names its location: `<1x16xf32>` alone is its "missing loc" (the PTO-AS
    // `!pto.tile<16x16xf32>` and `!pto.tile_buf<f32, 16, 16>` forms default to vec).
    if (name == "!pto.tile_buf" && !params.empty() && params[0].key.empty() &&
        !isa::parseLoc(params[0].text()) && !isa::parseDType(params[0].text()) &&
        std::none_of(params.begin(), params.end(),
                     [](const AngleParam& p) { return p.key == "loc"; })) {
      diags_.error(params[0].loc, "missing loc in !pto.tile_buf (a location first: "
                                  "!pto.tile_buf<vec, " +
                                      params[0].text() + ">)");
      return std::nullopt;
    }
    auto tile = readTile(params, loc);
    if (!tile) return std::nullopt;
    return Type::tileOf(*tile);
  }
  if (name == "!pto.ptr") {
    // PTOAS's pointers name their memory again since its SIMT work: `!pto.ptr<f16, gm>` is the
    // GM pointer `!pto.ptr<f16>`; a pointer into a core's local memory (`ub`) is not.
    const bool space = params.size() == 2 && params[1].key.empty();
    if ((params.size() != 1 && !space) || !params[0].key.empty() ||
        !isa::parseDType(params[0].text())) {
      diags_.error(loc, "expected '!pto.ptr<dtype>' or '!pto.ptr<dtype, gm>'");
      return std::nullopt;
    }
    if (space && params[1].text() != "gm") {
      diags_.error(params[1].loc, "a !pto.ptr into '" + params[1].text() +
                                      "' is not supported: pointers address GM ('gm'); local "
                                      "memory is reached through tiles");
      return std::nullopt;
    }
    return Type::ptr(*isa::parseDType(params[0].text()));
  }
  if (name == "!pto.tensor_view" || name == "!pto.partition_tensor_view") {
    std::string why;
    auto shape = params.size() == 1 ? parseShape(params[0].value, &why) : std::nullopt;
    if (!why.empty()) {
      diags_.error(params[0].valueLoc, why);
      return std::nullopt;
    }
    if (!shape || !shape->elem || shape->dims.empty() || shape->dims.size() > 5) {
      diags_.error(loc, "expected '" + name + "<d0x...xdN x dtype>' with 1 to 5 dimensions");
      return std::nullopt;
    }
    return Type{name == "!pto.tensor_view" ? TypeKind::TensorView : TypeKind::PartView,
                *shape->elem, shape->dims};
  }
  if (name == "!pto.async_session" || name == "!pto.async_event") {
    if (hasAngle) {
      diags_.error(loc, "'" + name + "' takes no parameters");
      return std::nullopt;
    }
    return Type{name == "!pto.async_event" ? TypeKind::AsyncEvent : TypeKind::AsyncSession};
  }
  if (name == "!pto.pipe") {
    if (hasAngle) {
      diags_.error(loc, "'!pto.pipe' takes no parameters");
      return std::nullopt;
    }
    return Type{TypeKind::Pipe};
  }
  if (name == "!pto.multi_tile_buf") return readMultiTile(params, loc);
  if (name == "!pto.eventid_array") {
    auto n = params.size() == 1 ? intParam(params[0], false) : std::nullopt;
    if (!n || *n <= 0 || *n > 64) {
      diags_.error(loc, "expected '!pto.eventid_array<N>' with N in 1..64");
      return std::nullopt;
    }
    return Type{TypeKind::EventIdArray, isa::DType::I32, {*n}};
  }
  if (name == "!pto.local_array") {
    std::string why;
    auto shape = params.size() == 1 ? parseShape(params[0].value, &why) : std::nullopt;
    int64_t elems = 1;
    bool ok = shape && shape->elem && !shape->dims.empty() && why.empty();
    for (int64_t d : ok ? shape->dims : std::vector<int64_t>{}) {
      ok &= d > 0;
      elems *= ok ? d : 1;
    }
    constexpr int64_t kMaxLocalArrayElems = 256; // 8 bytes each in the frame (docs/abi.md)
    const isa::DType e = ok ? *shape->elem : isa::DType::I32;
    const bool scalarElem = (isa::isInteger(e) && e != isa::DType::I4) || e == isa::DType::F16 ||
                            e == isa::DType::BF16 || e == isa::DType::F32 || e == isa::DType::F64 ||
                            isa::info(e).kind == isa::DTypeKind::Bool;
    if (!ok || elems > kMaxLocalArrayElems || !scalarElem) {
      diags_.error(loc, "expected '!pto.local_array<D0x...xT>': static dimensions, at most " +
                            std::to_string(kMaxLocalArrayElems) +
                            " elements, a scalar element type");
      return std::nullopt;
    }
    Type t{TypeKind::EventIdArray, *shape->elem, shape->dims};
    t.localArray = true;
    return t;
  }
  diags_.error(loc, "unsupported type '" + name + "'");
  return std::nullopt;
}

/// `16x16xf17` / `f17`: reports an unknown element type at the word. Returns true if reported.
bool TypeReader::unknownElem(const AngleParam& p) {
  if (!p.key.empty() || p.value.empty()) return false;
  // The word after the shape ("16x16xf17" -> "f17"), or the whole value ("f17").
  std::string word = p.value;
  size_t lastX = std::string::npos;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] != 'x') continue;
    std::string_view head(word.data(), i);
    bool dims = !head.empty();
    for (char c : head)
      dims = dims && (std::isdigit(static_cast<unsigned char>(c)) || c == 'x' || c == '?');
    if (dims) lastX = i;
  }
  if (lastX != std::string::npos) word = word.substr(lastX + 1);
  if (word.empty() || !std::isalpha(static_cast<unsigned char>(word[0])) || isa::parseDType(word))
    return false;
  if (lastX == std::string::npos && isa::parseLoc(word)) return false;
  SrcLoc l = p.valueLoc;
  l.col += static_cast<uint32_t>(p.value.size() - word.size());
  l.len = static_cast<uint32_t>(word.size());
  diags_.error(l, "unknown element type '" + word + "'");
  return true;
}

std::optional<int64_t> TypeReader::intParam(const AngleParam& p, bool allowDynamic) {
  std::string t = p.text();
  if (allowDynamic && (t == "?" || t == "-1")) return kDynamic;
  auto v = parseInt(t);
  if (!v || *v < 0) {
    diags_.error(p.loc, "expected a non-negative integer" +
                            std::string(allowDynamic ? " or '?'" : "") + ", found '" + t + "'");
    return std::nullopt;
  }
  return v;
}

std::optional<TileType> TypeReader::readTile(const std::vector<AngleParam>& params, SrcLoc loc) {
  TileType t;
  if (params.empty()) {
    diags_.error(loc, "empty tile type");
    return std::nullopt;
  }
  auto isLocWord = [](const AngleParam& p) { return p.key.empty() && isa::parseLoc(p.text()); };
  bool compactShape = params.size() > 1 && params[0].key.empty() && params[1].key.empty() &&
                      params[1].value.find('x') != std::string::npos &&
                      std::isdigit(static_cast<unsigned char>(params[1].value.front())) &&
                      !isa::parseDType(params[0].text());
  bool ok;
  if (!params[0].key.empty() && params[0].key != "loc") {
    ok = tileFieldsDefaults(t, params); // keyed, starting with another key
  } else if (params[0].key == "loc" && params.size() > 1 && !params[1].key.empty()) {
    ok = tileFieldsDefaults(t, params);
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
  } else if (isLocWord(params[0]) && params.size() > 1) {
    ok = tileFields(t, params);
  } else {
    ok = tilePositional(t, params, 0);
  }
  // The keyed form is PTOAS's own; the compact form is what pto-as prints (it leaves out the
  // compact defaults, so its fields are never a partial config of PTOAS's).
  const bool keyed = !params[0].key.empty();
  if (!ok || (keyed && !explicitConfigAgrees(t, params, false))) return std::nullopt;
  return t;
}

// PTOAS's tile-config rule (its InferPTOTileConfig pass): a left, right or acc tile may spell
// part of its layout, but what it spells must be the layout the arch's cube reads: left row_major
// (a2a3) or col_major (a5) boxes of row_major, right row_major of col_major, acc col_major of
// row_major with 1024-byte fractals. Fields left out take those values (tileFieldsDefaults).
bool TypeReader::explicitConfigAgrees(const TileType& t, const std::vector<AngleParam>& params,
                                      bool configAttr) {
  using isa::BLayout, isa::SLayout, isa::Loc;
  // A tile_buf type that spells all three is taken as written (PTOAS prints complete types, and
  // its own samples write a5-style left tiles for a3); a partial one and a memref's
  // `#pto.tile_buf_config<...>` (bind_tile, pointer_cast) are checked.
  const auto given = std::count_if(params.begin(), params.end(), [](const AngleParam& p) {
    return p.key == "blayout" || p.key == "slayout" || p.key == "fractal" ||
           p.key == "s_fractal_size";
  });
  if (!configAttr && given == 3) return true;
  const bool a5 = arch_ && arch_() == isa::Arch::A5;
  if (t.loc != Loc::Left && t.loc != Loc::Right && t.loc != Loc::Acc) return true;
  const auto [b, sl, fractal] = usualLayout(t.loc, a5);
  const char* where = t.loc == Loc::Left ? "left" : t.loc == Loc::Right ? "right" : "acc";
  for (const AngleParam& p : params) {
    std::string expected, got;
    if (p.key == "blayout" && t.blayout != b)
      expected = std::string(isa::spelling(b)), got = std::string(isa::spelling(t.blayout));
    else if (p.key == "slayout" && t.slayout != sl)
      expected = std::string(isa::spelling(sl)), got = std::string(isa::spelling(t.slayout));
    else if ((p.key == "fractal" || p.key == "s_fractal_size") && t.fractal != fractal)
      expected = std::to_string(fractal), got = std::to_string(t.fractal);
    if (expected.empty()) continue;
    diags_.error(p.loc, "explicit tile config field '" +
                            std::string(p.key == "s_fractal_size" ? "fractal" : p.key) +
                            "' for loc=" + where + " on arch " + (a5 ? "a5" : "a3") + " must be " +
                            expected + ", got " + got);
    return false;
  }
  return true;
}

namespace {

/// One field of a tile type that may be written twice (`<vec, 16x16xf32, rows=16>`): the
/// second spelling must agree with the first, as PTOAS requires ("conflicting rows values").
struct TileField {
  std::optional<int64_t> value;
  bool set(int64_t v, const AngleParam& p, const char* name, DiagEngine& diags) {
    if (value && *value != v) {
      diags.error(p.loc, std::string("conflicting ") + name + " values in !pto.tile_buf");
      return false;
    }
    value = v;
    return true;
  }
};

bool isLayoutKey(const std::string& key) {
  return key == "blayout" || key == "slayout" || key == "fractal" || key == "pad" ||
         key == "compact";
}

} // namespace

// The tile_buf forms PTOAS reads: keys (loc, dtype, rows, cols, v_row, v_col, valid, blayout,
// slayout, fractal, pad, compact) in any order, each once, beside positional words (a location
// `vec`, a shape `16x16xf32`). A field given both ways must agree. rows and cols default to
// nothing (required), v_row / v_col to rows / cols; the layout keys keep the TileType defaults
// (row_major, none_box, 512, null, null) here (tileFieldsDefaults fills them by location).
bool TypeReader::tileFields(TileType& t, const std::vector<AngleParam>& params) {
  TileField loc, dtype, rows, cols, vrow, vcol;
  std::vector<std::string> seen;
  for (const AngleParam& p : params) {
    if (!p.key.empty() && std::find(seen.begin(), seen.end(), p.key) != seen.end()) {
      diags_.error(p.loc, "duplicate tile_buf parameter '" + p.key + "'");
      return false;
    }
    if (!p.key.empty()) seen.push_back(p.key);
    if (p.key.empty() || p.key == "loc") {
      if (auto l = isa::parseLoc(p.text())) {
        if (!loc.set(static_cast<int64_t>(*l), p, "loc", diags_)) return false;
        continue;
      }
      if (!p.key.empty()) {
        diags_.error(p.loc, "unknown tile location '" + p.text() +
                                "' (expected vec, mat, left, right, acc, bias or scaling)");
        return false;
      }
      std::string why;
      auto shape = parseShape(p.value, &why);
      if (!why.empty()) return diags_.error(p.valueLoc, why), false;
      if (!shape || !shape->elem || shape->dims.size() != 2) {
        if (unknownElem(p)) return false;
        diags_.error(p.loc,
                     "expected a tile location, a 'RxCxdtype' shape or 'key=value', found '" +
                         p.text() + "'");
        return false;
      }
      if (!dtype.set(static_cast<int64_t>(*shape->elem), p, "dtype", diags_) ||
          !rows.set(shape->dims[0], p, "rows", diags_) ||
          !cols.set(shape->dims[1], p, "cols", diags_))
        return false;
    } else if (p.key == "dtype") {
      auto dt = isa::parseDType(p.text());
      if (!dt) return diags_.error(p.loc, "unknown element type '" + p.text() + "'"), false;
      if (!dtype.set(static_cast<int64_t>(*dt), p, "dtype", diags_)) return false;
    } else if (p.key == "rows" || p.key == "cols") {
      auto n = intParam(p, false);
      if (!n || !(p.key == "rows" ? rows : cols).set(*n, p, p.key.c_str(), diags_)) return false;
    } else if (p.key == "v_row" || p.key == "v_col") {
      auto n = intParam(p, true);
      if (!n || !(p.key == "v_row" ? vrow : vcol).set(*n, p, p.key.c_str(), diags_)) return false;
    } else if (p.key == "valid") {
      auto s = parseShape(p.value);
      if (!s || s->elem || s->dims.size() != 2)
        return diags_.error(p.loc, "expected 'valid=RxC' ('?' for dynamic)"), false;
      if (!vrow.set(s->dims[0], p, "v_row", diags_) || !vcol.set(s->dims[1], p, "v_col", diags_))
        return false;
    } else if (isLayoutKey(p.key)) {
      if (!tileOption(t, p)) return false;
    } else {
      diags_.error(p.loc, "unknown tile_buf parameter '" + p.key +
                              "' (loc, dtype, rows, cols, v_row, v_col, valid, blayout, slayout, "
                              "fractal, pad, compact)");
      return false;
    }
  }
  const std::pair<const char*, const TileField*> required[] = {
      {"loc", &loc}, {"dtype", &dtype}, {"rows", &rows}, {"cols", &cols}};
  for (const auto& [name, field] : required)
    if (!field->value) {
      diags_.error(params.front().loc, std::string("missing ") + name +
                                           " in !pto.tile_buf (loc, dtype, rows and cols are "
                                           "required, as a key or in the 'RxCxdtype' shape)");
      return false;
    }
  if (*rows.value == kDynamic || *cols.value == kDynamic) {
    diags_.error(params.front().loc, "expected a static tile shape: rows and cols cannot be '?' "
                                     "(a dynamic extent is the valid shape, v_row / v_col)");
    return false;
  }
  t.loc = static_cast<isa::Loc>(*loc.value);
  t.dtype = static_cast<isa::DType>(*dtype.value);
  t.rows = *rows.value;
  t.cols = *cols.value;
  // PTOAS's rule: a valid shape gives both dimensions (v_row and v_col, or valid=RxC).
  if (vrow.value.has_value() != vcol.value.has_value()) {
    diags_.error(params.front().loc, "v_row and v_col must be provided together in !pto.tile_buf");
    return false;
  }
  t.validRows = vrow.value.value_or(t.rows);
  t.validCols = vcol.value.value_or(t.cols);
  return true;
}

// The keyed form: the fields of tileFields, then each layout key left out takes the value of
// the location's usual layout (what PTOAS's tile-config inference gives and what pto-isa's
// TileLeft / TileRight / TileAcc / TileMat aliases declare): vec, bias, scaling row_major /
// none_box / 512; mat col_major / row_major / 512; left row_major (a2a3) or col_major (a5) /
// row_major / 512; right row_major / col_major / 512; acc col_major / row_major / 1024.
bool TypeReader::tileFieldsDefaults(TileType& t, const std::vector<AngleParam>& params) {
  if (!tileFields(t, params)) return false;
  auto given = [&](const char* key) {
    return std::any_of(params.begin(), params.end(),
                       [&](const AngleParam& p) { return p.key == key; });
  };
  const auto [b, sl, fractal] = usualLayout(t.loc, arch_ && arch_() == isa::Arch::A5);
  if (!given("blayout")) t.blayout = b;
  if (!given("slayout")) t.slayout = sl;
  if (!given("fractal")) t.fractal = fractal;
  return true;
}

bool TypeReader::applyTileConfig(TileType& t, const std::vector<AngleParam>& params) {
  for (const AngleParam& p : params) {
    AngleParam q = p;
    if (q.key == "s_fractal_size") q.key = "fractal";
    std::string v = q.text();
    if (const size_t colon = v.find(" :"); colon != std::string::npos) v = v.substr(0, colon);
    if (const size_t colon = v.find(':'); colon != std::string::npos) v = v.substr(0, colon);
    while (!v.empty() && v.back() == ' ')
      v.pop_back();
    if (v.starts_with("#")) v = enumWordOfText(v);
    // PTOAS's enum numbers: BLayout RowMajor 0, ColMajor 1; SLayout NoneBox 0, RowMajor 1,
    // ColMajor 2.
    static constexpr const char* kB[] = {"row_major", "col_major"};
    static constexpr const char* kS[] = {"none_box", "row_major", "col_major"};
    if (auto n = parseInt(v); n && *n >= 0) {
      if (q.key == "blayout" && *n < 2) v = kB[*n];
      if (q.key == "slayout" && *n < 3) v = kS[*n];
    }
    q.value = v;
    if (q.key != "blayout" && q.key != "slayout" && q.key != "fractal" && q.key != "pad" &&
        q.key != "compact") {
      diags_.error(p.loc, "unknown tile_buf_config parameter '" + p.key +
                              "' (blayout, slayout, s_fractal_size, pad, compact)");
      return false;
    }
    if (!tileOption(t, q)) return false;
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
      return diags_.error(p.loc, "unknown slayout '" + v + "' (none_box, row_major, col_major)"),
             false;
    t.slayout = *s;
  } else if (p.key == "fractal") {
    auto f = intParam(p, false);
    if (!f) return false;
    t.fractal = *f;
  } else if (p.key == "pad") {
    auto n = parseInt(v);
    if (n && *n >= 0 && *n <= 3)
      t.pad = static_cast<isa::PadValue>(*n);
    else if (auto pv = isa::parsePadValue(v))
      t.pad = *pv;
    else
      return diags_.error(p.loc, "unknown pad value '" + v + "' (0..3 or null/zero/max/min)"),
             false;
  } else if (p.key == "compact") {
    auto n = parseInt(v);
    if (n && *n >= 0 && *n <= 2)
      t.compact = static_cast<isa::CompactMode>(*n);
    else if (auto c = isa::parseCompactMode(v))
      t.compact = *c;
    else
      return diags_.error(p.loc, "unknown compact mode '" + v + "' (0..2)"), false;
  } else if (p.key == "valid") {
    auto s = parseShape(p.value);
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

// The documentation / PTO-AS forms: <f32, 16, 16>, <16x16xf32>,
// <[loc=vec,] f32, 16, 16, RowMajor, NoneBox, None, Zero>.
bool TypeReader::tilePositional(TileType& t, const std::vector<AngleParam>& params, size_t first) {
  size_t i = first;
  if (i >= params.size()) {
    diags_.error(params.back().loc, "expected the tile element type and shape");
    return false;
  }
  std::string why;
  auto s = parseShape(params[i].value, &why);
  if (!why.empty()) return diags_.error(params[i].valueLoc, why), false;
  if (s && s->elem && s->dims.size() == 2) {
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
      if (v == "None" || v == "NZ" || v == "ZN" || v == "FR" || v == "RN" || v == "ZZ" || v == "NN")
        ok = true;
      else if (auto n = parseInt(v))
        t.fractal = *n, ok = true;
      break;
    case 3:
      if (v == "Invalid")
        t.pad = isa::PadValue::Null, ok = true;
      else if (auto pv = isa::parsePadValue(v))
        t.pad = *pv, ok = true;
      break;
    default:
      break;
    }
    if (!ok) {
      diags_.error(p.loc, "unexpected tile parameter '" + v + "'");
      return false;
    }
  }
  return true;
}

} // namespace pto::as
