// The Kernel IR: types, attributes, the typed tables and the queries the rooms share (the text
// form is asm/ir/Printer.cpp).
#include "asm/ir/IR.h"

#include "support/Escape.h"

#include "isa/OpAttrs.h"

#include "isa/Numerics.h"
#include "isa/Pipes.h"
#include "support/Text.h"

#include <bit>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace pto::ir {

uint64_t TileType::byteSize() const {
  return (static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * isa::bitWidth(dtype) + 7) / 8;
}

ViewLayout parseViewLayout(std::string_view text) {
  std::string word;
  for (char ch : std::string(text) + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty() && word != "pto" && word != "layout") {
      break;
    } else {
      word.clear();
    }
  }
  return word == "dn" ? ViewLayout::DN : word == "nd" ? ViewLayout::ND : ViewLayout::Unsupported;
}

const NamedAttr* Op::attr(std::string_view key) const {
  for (const NamedAttr& a : attrs)
    if (a.key == key) return &a;
  return nullptr;
}

bool Function::hasAttr(std::string_view key) const {
  for (const NamedAttr& a : attrs)
    if (a.key == key) return true;
  return false;
}

static std::string dims(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape)
    s += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return s;
}

std::string toString(const Type& t) {
  switch (t.kind) {
  case TypeKind::None:
    return "none";
  case TypeKind::Index:
    return "index";
  case TypeKind::Scalar:
    return std::string(isa::spelling(t.elem));
  case TypeKind::Ptr:
    return "!pto.ptr<" + std::string(isa::spelling(t.elem)) + ">";
  case TypeKind::TensorView:
    return "!pto.tensor_view<" + dims(t.shape) + std::string(isa::spelling(t.elem)) + ">";
  case TypeKind::PartView:
    return "!pto.partition_tensor_view<" + dims(t.shape) + std::string(isa::spelling(t.elem)) + ">";
  case TypeKind::EventIdArray: {
    if (!t.localArray) return "!pto.eventid_array<" + std::to_string(t.shape.at(0)) + ">";
    std::string dims;
    for (int64_t d : t.shape)
      dims += std::to_string(d) + "x";
    return "!pto.local_array<" + dims + std::string(isa::spelling(t.elem)) + ">";
  }
  case TypeKind::MultiTile:
    return "!pto.multi_tile_buf<" + toString(Type::tileOf(t.slotTile())) +
           ", count=" + std::to_string(t.shape.at(0)) + ">";
  case TypeKind::LocalView:
    return "memref<" + dims(t.shape) + std::string(isa::spelling(t.elem)) +
           (t.strided ? ", strided<...>" : "") + ", #pto.address_space<" +
           std::string(isa::spelling(t.tile.loc)) + ">>";
  case TypeKind::Pipe:
    return "!pto.pipe";
  case TypeKind::AsyncSession:
    return "!pto.async_session";
  case TypeKind::AsyncEvent:
    return "!pto.async_event";
  case TypeKind::Vector:
    return "vector<" + dims(t.shape) + std::string(isa::spelling(t.elem)) + ">";
  case TypeKind::Tile: {
    const TileType& tt = t.tile;
    std::string s = "!pto.tile_buf<" + std::string(isa::spelling(tt.loc)) + ", " +
                    std::to_string(tt.rows) + "x" + std::to_string(tt.cols) + "x" +
                    std::string(isa::spelling(tt.dtype));
    auto d = [](int64_t v) { return v == kDynamic ? std::string("?") : std::to_string(v); };
    if (tt.validRows != tt.rows || tt.validCols != tt.cols)
      s += ", valid=" + d(tt.validRows) + "x" + d(tt.validCols);
    if (tt.blayout != isa::BLayout::RowMajor)
      s += ", blayout=" + std::string(isa::spelling(tt.blayout));
    if (tt.slayout != isa::SLayout::NoneBox)
      s += ", slayout=" + std::string(isa::spelling(tt.slayout));
    if (tt.fractal != 512) s += ", fractal=" + std::to_string(tt.fractal);
    if (tt.pad != isa::PadValue::Null) s += ", pad=" + std::to_string(static_cast<int>(tt.pad));
    if (tt.compact != isa::CompactMode::Null)
      s += ", compact=" + std::to_string(static_cast<int>(tt.compact));
    return s + ">";
  }
  }
  return "?";
}

std::optional<std::string> printFormat(const Op& op) {
  const NamedAttr* a = op.attr("format");
  if (!a) return std::string();
  return support::mlirStringValue(a->value);
}

isa::DType printedType(const Type& t) {
  if (t.kind == TypeKind::Index) return isa::DType::I64;
  if (t.elem == isa::DType::I1) return isa::DType::I32;
  return t.elem;
}

uint64_t subsetElement(const TileType& parent, uint64_t r, uint64_t c) {
  const uint64_t rows = static_cast<uint64_t>(parent.rows),
                 cols = static_cast<uint64_t>(parent.cols);
  if (r >= rows || c >= cols)
    return parent.blayout == isa::BLayout::ColMajor ? c * rows + r : r * cols + c;
  return isa::elementOffset(parent.blayout, parent.slayout,
                            isa::innerBox(parent.dtype, parent.slayout, parent.fractal),
                            static_cast<uint32_t>(rows), static_cast<uint32_t>(cols),
                            static_cast<uint32_t>(r), static_cast<uint32_t>(c));
}

std::string boxedSubsetOffsetError(const std::string& op, uint64_t r, uint64_t c,
                                   isa::InnerBox box) {
  return "'" + op + "' of a boxed tile at (" + std::to_string(r) + ", " + std::to_string(c) +
         "): its offsets must lie on the tile's " + std::to_string(box.rows) + "x" +
         std::to_string(box.cols) + " inner box grid";
}

std::variant<uint64_t, std::string> gmModeWord(const Function& fn, const Op& op, uint64_t word) {
  isa::gm::Modes m = isa::gm::modesOf(word);
  if (m.oob == 0) return word;
  const bool gather = op.tileOp == isa::OpId::MGATHER;
  const ValueId data = roleValue(op, gather ? isa::RoleId::Dst : isa::RoleId::Src);
  const ValueId idx = roleValue(op, isa::RoleId::Idx);
  const ValueId table = roleValue(op, isa::RoleId::Mem);
  if (data == kNoValue || idx == kNoValue || table == kNoValue) return std::string("its operands");
  const TileType& d = fn.type(data).tile;
  const TileType& i = fn.type(idx).tile;
  if (m.coalesce == 0) {
    if (d.validRows == kDynamic || d.validCols == kDynamic || i.validRows == kDynamic ||
        i.validCols == kDynamic)
      return std::string("an out-of-bounds policy with valid shapes known only at run time and "
                         "no coalesce attribute (write coalesce = row or elem)");
    m.coalesce = isa::gm::inferredCoalesce(d.validRows, d.validCols, i.validRows, i.validCols);
  }
  const std::vector<int64_t>& shape = fn.type(table).shape;
  uint64_t capacity = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (m.coalesce != isa::gm::kElem && k + 1 == shape.size()) break;
    if (shape[k] == kDynamic || shape[k] <= 0 ||
        __builtin_mul_overflow(capacity, static_cast<uint64_t>(shape[k]), &capacity))
      return std::string("an out-of-bounds policy with a table of dynamic or too large a shape");
  }
  if (capacity == 0 || capacity > isa::gm::kMaxCapacity)
    return "a table of " + std::to_string(capacity) + " entries for an out-of-bounds policy";
  m.capacity = capacity;
  return isa::gm::modeWord(m);
}

isa::fix::Attrs fixpipeAttrs(const Function& fn, const Op& op) {
  namespace fix = isa::fix;
  fix::Attrs a;
  if (op.kind != OpKind::TileOp || (op.tileOp != isa::OpId::TMOV && op.tileOp != isa::OpId::TSTORE))
    return a;
  const TileModes& m = *op.modes;
  a.relu = m.relu.value_or(a.relu);
  a.atomic = m.atomic.value_or(a.atomic);
  a.phase = m.phase.value_or(a.phase);
  a.accToVec = m.accToVec.value_or(a.accToVec);
  const fix::QuantKind kind = roleValue(op, isa::RoleId::Fp) != kNoValue    ? fix::QuantKind::Vector
                              : roleValue(op, isa::RoleId::Pre) != kNoValue ? fix::QuantKind::Scalar
                                                                            : fix::QuantKind::None;
  const ValueId src = roleValue(op, isa::RoleId::Src), dst = roleValue(op, isa::RoleId::Dst);
  if (src == kNoValue || dst == kNoValue || !fn.type(src).isTile()) return a;
  const TileType& s = fn.type(src).tile;
  // B.FPATR is written only for relu or quantisation, so a plain cast keeps its 0.58.3 block;
  // with relu the cast's mode is named in it.
  if (s.loc == isa::Loc::Acc &&
      (kind != fix::QuantKind::None || a.relu != isa::ReluPreMode::NoRelu)) {
    const isa::DType d = fn.type(dst).isTile() ? fn.type(dst).tile.dtype : fn.type(dst).elem;
    a.quant = fix::quantPreFor(s.dtype, d, kind).value_or(fix::QuantPre::None);
  }
  return a;
}

ValueId startTypeTile(const Op& op, const isa::OpInfo& info, ValueId shapeTile, ValueId src) {
  switch (isa::startTypeFrom(info)) {
  case isa::StartTypeFrom::ShapeTile:
    return shapeTile != kNoValue ? shapeTile : src;
  case isa::StartTypeFrom::Source:
    return src;
  case isa::StartTypeFrom::Lhs: {
    const ValueId lhs = roleValue(op, isa::RoleId::Lhs);
    return lhs != kNoValue ? lhs : src;
  }
  }
  return src;
}

ValueId roleValue(const Op& op, isa::RoleId role) {
  if (op.kind != OpKind::TileOp) return kNoValue;
  const isa::OpInfo& info = isa::info(op.tileOp);
  for (size_t i = 0; i < op.operands.size() && i < op.operandRoles.size(); ++i)
    if (info.roles[op.operandRoles[i]].id == role) return op.operands[i];
  return kNoValue;
}

namespace {
constexpr ArithDef kArith[] = {
#define PTO_ARITH(id, spelling, cls) {ArithOp::id, spelling, ArithClass::cls},
#include "asm/ir/Arith.def"
#undef PTO_ARITH
};
struct PredicateRow {
  CmpPredicate id;
  bool isFloat;
  std::string_view spelling;
};
constexpr PredicateRow kPredicates[] = {
#define PTO_CMPI_PRED(id, spelling) {CmpPredicate::I##id, false, spelling},
#define PTO_CMPF_PRED(id, spelling) {CmpPredicate::F##id, true, spelling},
#include "asm/ir/Arith.def"
#undef PTO_CMPI_PRED
#undef PTO_CMPF_PRED
};
} // namespace

NamedOp findNamedOp(std::string_view name) {
  static constexpr std::pair<std::string_view, NamedOp> kNamed[] = {
#define PTO_NAMED_OP(id, name) {name, NamedOp::id},
#include "asm/ir/NamedOps.def"
#undef PTO_NAMED_OP
  };
  for (const auto& [spelling, id] : kNamed)
    if (spelling == name) return id;
  return NamedOp::None;
}

const ArithDef* findArith(std::string_view name) {
  if (!name.starts_with("arith.")) return nullptr;
  name.remove_prefix(6);
  for (const ArithDef& d : kArith)
    if (d.name == name) return &d;
  return nullptr;
}

const ArithDef& arithDef(ArithOp op) {
  return kArith[static_cast<size_t>(op) - 1];
}

std::optional<CmpPredicate> findCmpPredicate(bool isFloat, std::string_view spelling) {
  for (const PredicateRow& p : kPredicates)
    if (p.isFloat == isFloat && p.spelling == spelling) return p.id;
  return std::nullopt;
}

std::string_view spelling(CmpPredicate p) {
  return p == CmpPredicate::None ? "" : kPredicates[static_cast<size_t>(p) - 1].spelling;
}

const AttrReading* attrReading(const Op& op, isa::OpAttrId id) {
  for (const AttrReading& r : op.modes->readings)
    if (r.id == id) return &r;
  return nullptr;
}

std::optional<uint64_t> denseCountsBits(std::string_view text) {
  std::string s;
  for (char ch : text)
    if (ch != ' ') s += ch;
  if (!s.starts_with("dense<") || !s.ends_with(">")) return std::nullopt;
  std::string_view body = std::string_view(s).substr(6, s.size() - 7);
  const bool list = body.starts_with("[") && body.ends_with("]");
  if (list) body = body.substr(1, body.size() - 2);
  std::vector<int64_t> lanes;
  while (!body.empty()) {
    const size_t comma = body.find(',');
    auto v = support::parseInt(body.substr(0, comma));
    if (!v || *v < -32768 || *v > 65535) return std::nullopt;
    lanes.push_back(*v);
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
  }
  if (lanes.size() == 1 && !list) lanes.assign(4, lanes[0]); // the splat form
  if (lanes.size() != 4) return std::nullopt;
  uint64_t bits = 0;
  for (size_t i = 0; i < 4; ++i)
    bits |= (static_cast<uint64_t>(lanes[i]) & 0xFFFF) << (16 * i);
  return bits;
}

std::string denseCountsText(uint64_t bits) {
  std::string s = "dense<[";
  for (unsigned i = 0; i < 4; ++i)
    s += (i ? ", " : "") + std::to_string(bits >> (16 * i) & 0xFFFF);
  return s + "]>";
}

ConstantValue readConstant(std::string_view text, const Type& type) {
  using K = ConstantValue::Kind;
  if (text == "true" || text == "false") return {K::Bool, text == "true" ? 1u : 0u};
  if (type.kind == TypeKind::Vector) {
    auto lanes = denseCountsBits(text);
    return lanes ? ConstantValue{K::Dense, *lanes} : ConstantValue{};
  }
  const bool hex =
      text.find("0x") != std::string_view::npos || text.find("0X") != std::string_view::npos;
  if (type.isIntLike() || hex) {
    auto v = support::parseInt(text);
    return v ? ConstantValue{K::Int, static_cast<uint64_t>(*v)} : ConstantValue{};
  }
  if (!type.isFloatScalar()) return {};
  const std::string s(text);
  char* end = nullptr;
  if (type.elem == isa::DType::F32) { // rounded once, from the decimal
    const float f = std::strtof(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return {};
    return {K::Float, std::bit_cast<uint32_t>(f)};
  }
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return {};
  switch (type.elem) {
  case isa::DType::F64:
    return {K::Float, std::bit_cast<uint64_t>(d)};
  case isa::DType::F16:
  case isa::DType::BF16:
    return {K::Float,
            isa::encodeFromDouble(type.elem, d, isa::RoundMode::CAST_RINT, isa::SatMode::OFF)};
  default:
    return {};
  }
}

void setConstant(Op& op, std::string text, const Type& type) {
  op.constant = readConstant(text, type);
  op.attrs.push_back({"value", std::move(text)});
}

const TileType* roleTile(const Function& fn, const Op& op, isa::RoleId role) {
  ValueId v = roleValue(op, role);
  if (v == kNoValue || !fn.type(v).isTile()) return nullptr;
  return &fn.type(v).tile;
}

isa::Pipe pipeOf(const Function& fn, const Op& op, isa::Arch arch) {
  const TileType* src = roleTile(fn, op, isa::RoleId::Src);
  const TileType* dst = roleTile(fn, op, isa::RoleId::Dst);
  return isa::pipeOf(op.tileOp, src ? std::optional(src->loc) : std::nullopt,
                     dst ? std::optional(dst->loc) : std::nullopt, arch);
}

void setTargetArch(Module& m, isa::Arch arch) {
  std::string value = "\"" + std::string(isa::spelling(arch)) + "\"";
  std::erase_if(m.attrs, [](const NamedAttr& a) { return a.key == "pto.device-spec"; });
  m.targetArch = arch;
  for (NamedAttr& a : m.attrs)
    if (a.key == "pto.target_arch") {
      a.value = value;
      return;
    }
  m.attrs.insert(m.attrs.begin(), {"pto.target_arch", value});
}

// ---------------------------------------------------------------- printer

uint32_t Module::addFrontLoc(std::string_view text, SrcLoc at) {
  FrontendLoc l;
  l.textBegin = static_cast<uint32_t>(locText.size());
  l.textLen = static_cast<uint32_t>(text.size());
  l.at = at;
  locText += text;
  frontLocs.push_back(l);
  return static_cast<uint32_t>(frontLocs.size() - 1);
}

std::string Module::posText(FrontendPos p) const {
  if (!p.known()) return {};
  std::string s = locFiles[p.file - 1] + ':' + std::to_string(p.line);
  if (p.col != 0) s += ':' + std::to_string(p.col);
  return s;
}

std::vector<std::string> Module::placeTexts(uint32_t id) const {
  std::vector<std::string> out;
  if (id == 0 || !frontLocs[id].pos.known()) return out;
  const FrontendLoc& l = frontLocs[id];
  out.push_back(posText(l.pos));
  for (uint32_t i = 0; i < l.callersCount; ++i)
    out.push_back(posText(locCallers[l.callersBegin + i]));
  return out;
}

std::string Module::placeLine(uint32_t id) const {
  std::vector<std::string> places = placeTexts(id);
  if (places.empty()) return {};
  std::string s = places[0];
  for (size_t i = 1; i < places.size(); ++i)
    s += (i == 1 ? " (called from " : ", called from ") + places[i];
  if (places.size() > 1) s += ')';
  return s;
}

std::vector<uint32_t> frontLocsByLine(const Module& m) {
  std::vector<uint32_t> byLine;
  auto mark = [&](SrcLoc loc, uint32_t id) {
    if (id == 0 || !loc.valid() || !m.frontLocs[id].pos.known()) return;
    if (byLine.size() <= loc.line) byLine.resize(loc.line + 1, 0);
    if (byLine[loc.line] == 0) byLine[loc.line] = id;
  };
  for (const auto& f : m.functions) {
    mark(f->loc, f->frontLoc);
    for (const Value& v : f->values)
      mark(v.loc, v.frontLoc);
    walk(f->body, [&](const Op& op) { mark(op.loc, op.frontLoc); });
  }
  // What the IR does not hold (an op the builder refused) is found by the line of its location;
  // an alias definition stands for no op.
  std::vector<bool> alias(m.frontLocs.size(), false);
  for (const LocAlias& a : m.locAliases)
    alias[a.loc] = true;
  for (uint32_t id = 1; id < m.frontLocs.size(); ++id)
    if (!alias[id]) mark(m.frontLocs[id].at, id);
  return byLine;
}

} // namespace pto::ir
