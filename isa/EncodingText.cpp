// The canonical text of PTO ISA 0.58.3 instructions: field values, the syntax patterns of
// Encoding.def and the hand-written syntaxes (TEPL, EXT, EXTC, CATR, HINT). Encoding.cpp's
// format() and parse() call in here (docs/encoding.md).
#include "isa/EncodingDetail.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <span>

namespace pto::isa::enc::detail {

using support::parseInt;

// ================================================================ text: field values
const char* const kPeMasks[8] = {"0000", "1000", "0100", "0010", "0001", "1100", "1110", "1111"};
const char kHands[4] = {'T', 'U', 'M', 'N'};

std::string sregName(int64_t v) {
  if (v >= 0 && v < 24) return std::string(gprName(static_cast<unsigned>(v)));
  if (v >= 24 && v < 28) return "t#" + std::to_string(v - 23);
  if (v >= 28 && v < 32) return "u#" + std::to_string(v - 27);
  return std::to_string(v);
}

/// Spellings of the scalar floating-point type fields (docs/encoding.md "Scalar floating point").
std::span<const std::string_view> scalarTypeNames(FieldKind kind) {
  static constexpr std::string_view kFp[] = {"fd", "fs"};
  static constexpr std::string_view kIntSrc[] = {"d", "w"};
  static constexpr std::string_view kFpDst[] = {"fd",   "fs",     "tf32",   "hf32", "fh",
                                                "bf16", "hif8",   "e4m3",   "e5m2", "e3m2",
                                                "e2m3", "e2m1x2", "e1m2x2", "e8m0", "hif4x2"};
  static constexpr std::string_view kIntDst[] = {"ud", "uw", "uh", "ub", "u4", "u2", "u1", "b1",
                                                 "sd", "sw", "sh", "sb", "s4", "s2", "s1"};
  switch (kind) {
  case FieldKind::FpType:
    return kFp;
  case FieldKind::IntSrc:
    return kIntSrc;
  case FieldKind::FpDst:
    return kFpDst;
  case FieldKind::IntDst:
    return kIntDst;
  default:
    return {};
  }
}

std::string printField(const FieldInfo& f, int64_t v) {
  auto orNum = [&](std::string_view s) { return s.empty() ? std::to_string(v) : std::string(s); };
  unsigned u = static_cast<unsigned>(v);
  switch (f.kind) {
  case FieldKind::UInt:
    return std::to_string(static_cast<uint64_t>(v));
  case FieldKind::SInt:
    return std::to_string(v);
  case FieldKind::Gpr:
    return orNum(gprName(u));
  case FieldKind::SReg:
    return sregName(v);
  case FieldKind::Tile:
    return std::string(1, kHands[(u >> 4) & 3]) + "#" + std::to_string((u & 15) + 1);
  case FieldKind::Hand:
    return std::string(1, kHands[u & 3]);
  case FieldKind::PeMask:
    return kPeMasks[u & 7];
  case FieldKind::Last:
    return v ? ", last" : "";
  case FieldKind::DType: {
    const DataTypeInfo* d = dataTypeInfo(u);
    return d ? std::string(d->name) : "DT" + std::to_string(v);
  }
  case FieldKind::Layout:
    return orNum(layoutName(u));
  case FieldKind::Pad:
    return orNum(nameOf(pads(), u));
  case FieldKind::CMode:
    return orNum(nameOf(cmodes(), u));
  case FieldKind::RMode:
    return orNum(rmodeName(u));
  case FieldKind::Label:
    return (v < 0 ? "pc-" : "pc+") + std::to_string(v < 0 ? -2 * v : 2 * v);
  case FieldKind::LoopNest:
    return orNum(nameOf(named("LoopNest"), u));
  case FieldKind::BrType:
    return orNum(nameOf(named("BrType"), u));
  case FieldKind::TraceBE:
    return orNum(nameOf(named("TraceBE"), u));
  case FieldKind::RTypeNeg:
  case FieldKind::RTypeNot: {
    static const char* const neg[4] = {"", ".sw", ".uw", ".neg"};
    static const char* const nt[4] = {"", ".sw", ".uw", ".not"};
    return (f.kind == FieldKind::RTypeNeg ? neg : nt)[u & 3];
  }
  case FieldKind::Shamt:
    return v ? "<<" + std::to_string(v) : "";
  case FieldKind::Hidden:
    return "";
  case FieldKind::FpType:
  case FieldKind::IntSrc:
  case FieldKind::FpDst:
  case FieldKind::IntDst: {
    auto names = scalarTypeNames(f.kind);
    return u < names.size() ? std::string(names[u]) : "?" + std::to_string(v);
  }
  }
  return std::to_string(v);
}

/// Parses one value of a field kind from a token.
std::optional<int64_t> parseToken(FieldKind kind, std::string_view t) {
  switch (kind) {
  case FieldKind::UInt:
  case FieldKind::SInt:
    return parseInt(t);
  case FieldKind::Gpr:
    if (auto g = parseGpr(t)) return *g;
    return std::nullopt;
  case FieldKind::SReg: {
    if (auto g = parseGpr(t)) return *g;
    if (t.size() == 3 && (t[0] == 't' || t[0] == 'u') && t[1] == '#' && t[2] >= '1' && t[2] <= '4')
      return (t[0] == 't' ? 23 : 27) + (t[2] - '0');
    return std::nullopt;
  }
  case FieldKind::Tile: {
    if (t.size() < 3 || t[1] != '#') return std::nullopt;
    const char* h = std::find(kHands, kHands + 4, std::toupper(static_cast<unsigned char>(t[0])));
    auto n = parseInt(t.substr(2));
    if (h == kHands + 4 || !n || *n < 1 || *n > 16) return std::nullopt;
    return (h - kHands) * 16 + (*n - 1);
  }
  case FieldKind::Hand: {
    if (t.size() != 1) return std::nullopt;
    const char* h = std::find(kHands, kHands + 4, std::toupper(static_cast<unsigned char>(t[0])));
    if (h == kHands + 4) return std::nullopt;
    return h - kHands;
  }
  case FieldKind::PeMask:
    for (unsigned i = 0; i < 8; ++i)
      if (t == kPeMasks[i]) return i;
    return std::nullopt;
  case FieldKind::DType:
    if (auto c = parseDataType(t)) return *c;
    return std::nullopt;
  case FieldKind::Layout:
    if (auto c = layoutCode(t)) return *c;
    return parseInt(t);
  case FieldKind::Pad:
    if (auto c = codeOf(pads(), t)) return *c;
    return parseInt(t);
  case FieldKind::CMode:
    if (iequals(t, "None")) return 0; // spec examples write None for EQ (code 0)
    if (auto c = codeOf(cmodes(), t)) return *c;
    return parseInt(t);
  case FieldKind::RMode:
    if (auto c = codeOf(rmodes(), t)) return *c;
    if (auto c = codeOf(rmodeAliases(), t)) return *c;
    return parseInt(t);
  case FieldKind::Label: {
    if (t.size() < 4 || !iequals(t.substr(0, 2), "pc")) return std::nullopt;
    auto n = parseInt(t.substr(2));
    if (!n || (*n % 2) != 0 || (t[2] != '+' && t[2] != '-')) return std::nullopt;
    return *n / 2;
  }
  case FieldKind::LoopNest:
    if (auto c = codeOf(named("LoopNest"), t)) return *c;
    return std::nullopt;
  case FieldKind::BrType:
    if (auto c = codeOf(named("BrType"), t)) return *c;
    return std::nullopt;
  case FieldKind::TraceBE:
    if (auto c = codeOf(named("TraceBE"), t)) return *c;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

// ================================================================ text: pattern engine
class Cursor {
public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void skipWs() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool atEnd() {
    skipWs();
    return i_ == s_.size();
  }
  bool eat(std::string_view lit) { // case-insensitive, after optional whitespace
    size_t save = i_;
    skipWs();
    if (s_.size() - i_ >= lit.size() && iequals(s_.substr(i_, lit.size()), lit)) {
      i_ += lit.size();
      return true;
    }
    i_ = save;
    return false;
  }
  bool peekIs(std::string_view lit) {
    size_t save = i_;
    bool r = eat(lit);
    i_ = save;
    return r;
  }
  std::string_view token() {
    skipWs();
    size_t b = i_;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (std::isspace(static_cast<unsigned char>(c)) ||
          std::string_view(",<>[](){}").find(c) != std::string_view::npos)
        break;
      if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') break;
      ++i_;
    }
    return s_.substr(b, i_ - b);
  }
  size_t pos() const { return i_; }
  void reset(size_t p) { i_ = p; }

private:
  std::string_view s_;
  size_t i_ = 0;
};

/// The end of the field name that starts at `b` in a syntax template: the longest run of name
/// characters that names a field, so literal digits may follow a name (`$SrcType2$DstType`).
size_t fieldNameEnd(const FormInfo& f, std::string_view syn, size_t b) {
  size_t e = b;
  while (e < syn.size() && (std::isalnum(static_cast<unsigned char>(syn[e])) || syn[e] == '_'))
    ++e;
  for (size_t k = e; k > b; --k)
    if (f.fieldIndex(syn.substr(b, k - b)) >= 0) return k;
  return e;
}

std::string expand(const FormInfo& f, const Inst& in) {
  std::string out;
  std::string_view syn = f.syntax;
  for (size_t i = 0; i < syn.size();) {
    if (syn[i] != '$') {
      out += syn[i++];
      continue;
    }
    size_t b = ++i;
    i = fieldNameEnd(f, syn, b);
    int idx = f.fieldIndex(syn.substr(b, i - b));
    if (idx >= 0)
      out += printField(f.fields[static_cast<size_t>(idx)], in.field[static_cast<size_t>(idx)]);
  }
  return out;
}

/// Matches `text` against a pattern form; fields set in `in`. Whole text must be consumed.
bool matchPattern(const FormInfo& f, std::string_view text, Inst& in) {
  in = Inst{};
  in.form = f.id;
  Cursor c(text);
  std::string_view syn = f.syntax;
  for (size_t i = 0; i < syn.size();) {
    char ch = syn[i];
    if (ch == ' ') {
      ++i;
      continue;
    }
    if (ch != '$') {
      size_t b = i;
      while (i < syn.size() && syn[i] != '$' && syn[i] != ' ')
        ++i;
      if (!c.eat(syn.substr(b, i - b))) return false;
      continue;
    }
    size_t b = ++i;
    i = fieldNameEnd(f, syn, b);
    int idx = f.fieldIndex(syn.substr(b, i - b));
    if (idx < 0) return false;
    const FieldInfo& fi = f.fields[static_cast<size_t>(idx)];
    int64_t& slot = in.field[static_cast<size_t>(idx)];
    switch (fi.kind) {
    case FieldKind::Last: {
      size_t save = c.pos();
      slot = 0;
      if (c.eat(",") && c.eat("last"))
        slot = 1;
      else
        c.reset(save);
      break;
    }
    case FieldKind::Shamt: {
      slot = 0;
      if (c.eat("<<")) {
        auto v = parseInt(c.token());
        if (!v) return false;
        slot = *v;
      }
      break;
    }
    case FieldKind::RTypeNeg:
    case FieldKind::RTypeNot: {
      slot = 0;
      if (c.eat(".sw"))
        slot = 1;
      else if (c.eat(".uw"))
        slot = 2;
      else if (c.eat(fi.kind == FieldKind::RTypeNeg ? ".neg" : ".not"))
        slot = 3;
      break;
    }
    case FieldKind::Hidden:
      slot = 0;
      break;
    case FieldKind::FpType:
    case FieldKind::IntSrc:
    case FieldKind::FpDst:
    case FieldKind::IntDst: {
      // Part of the mnemonic (fadd.fs, fcvt.fs2fh): the longest spelling that follows.
      auto names = scalarTypeNames(fi.kind);
      int best = -1;
      for (size_t k = 0; k < names.size(); ++k)
        if ((best < 0 || names[k].size() > names[static_cast<size_t>(best)].size()) &&
            c.peekIs(names[k]))
          best = static_cast<int>(k);
      if (best < 0 || !c.eat(names[static_cast<size_t>(best)])) return false;
      slot = best;
      break;
    }
    default: {
      // A register token may carry a .sw/.uw suffix that belongs to the next field.
      std::string_view tok = c.token();
      if (fi.kind == FieldKind::SReg || fi.kind == FieldKind::Gpr) {
        size_t dot = tok.find('.');
        if (dot != std::string_view::npos) {
          c.reset(c.pos() - (tok.size() - dot));
          tok = tok.substr(0, dot);
        }
      }
      auto v = parseToken(fi.kind, tok);
      if (!v) return false;
      slot = *v;
    }
    }
  }
  return c.atEnd();
}

// ================================================================ custom syntaxes
std::string formatCustom(const Inst& in) {
  const FormInfo& f = info(in.form);
  auto g = [&](FieldName n) { return *in.get(n); };
  auto dt = [&](int64_t v) {
    return printField(f.fields[static_cast<size_t>(f.fieldIndex("DataType"))], v);
  };
  if (f.syntax == "@TEPL") {
    const TileOpInfo* op =
        teplOp(static_cast<unsigned>(g("Mode")), static_cast<unsigned>(g("Function")));
    if (!op)
      return "BSTART.TEPL " + std::to_string(g("Mode")) + ", " + std::to_string(g("Function")) +
             ", " + dt(g("DataType"));
    return std::string(op->engine == TileEngine::VEC ? "BSTART.VEC " : "BSTART.SFU ") +
           std::string(op->name) + ", " + dt(g("DataType"));
  }
  if (f.syntax == "@EXT") {
    const TileOpInfo* op = extOp(static_cast<unsigned>(g("XOP")));
    return "BSTART.EXT " + (op ? std::string(op->name) : "XOP" + std::to_string(g("XOP"))) + ", " +
           dt(g("DataType"));
  }
  if (f.syntax == "@EXTC") {
    const XCtlRow* r = xctl(static_cast<unsigned>(g("CTL")));
    std::string s = "BSTART.EXT " + (r ? std::string(r->name) : "CTL" + std::to_string(g("CTL")));
    unsigned n = r ? r->numPipes : 2;
    const auto& pipes = named("ExtPipe");
    if (n >= 1) s += ", " + std::string(nameOf(pipes, static_cast<unsigned>(g("PipeA"))));
    if (n >= 2) s += ", " + std::string(nameOf(pipes, static_cast<unsigned>(g("PipeB"))));
    return s;
  }
  if (f.syntax == "@CATR") {
    std::string s = "B.CATR {";
    bool first = true;
    for (auto [field, text] : {std::pair<Field, std::string_view>{Field::trap, "trap"},
                               {Field::atom, "atomic"},
                               {Field::aq, "aq"},
                               {Field::rl, "rl"},
                               {Field::far, "far"},
                               {Field::DR, "dr"}}) {
      if (!g(field)) continue;
      if (!first) s += ", ";
      s += text;
      first = false;
    }
    return s + "}";
  }
  if (f.syntax == "@HINT") {
    std::string br = !g("V") ? "BR.none" : g("LUL") ? "BR.likely" : "BR.unlikely";
    return "B.HINT {" + br + ", TEMP." +
           std::string(nameOf(named("HintTemp"), static_cast<unsigned>(g("temp")))) + ", " +
           std::to_string(g("prefetch_size")) + "}";
  }
  return "<?>";
}

std::optional<Inst> parseCustom(const FormInfo& f, std::string_view text) {
  Inst in;
  in.form = f.id;
  Cursor c(text);
  auto setF = [&](FieldName n, int64_t v) { in.put(n, v); };
  auto dtype = [&]() -> std::optional<int64_t> {
    if (!c.eat(",")) return std::nullopt;
    auto v = parseDataType(c.token());
    if (!v) return std::nullopt;
    return *v;
  };
  if (f.syntax == "@TEPL") {
    if (c.eat("BSTART.TEPL")) {
      const std::string_view head = c.token();
      auto m = parseInt(head);
      if (!m) {
        // The seeds' spelling: BSTART.TEPL <TileOp>, <DataType> (seed 000: TDEQUANT).
        const TileOpInfo* op = findTileOp(head);
        auto d = dtype();
        if (!op || op->family != TileFamily::TEPL || !d || !c.atEnd()) return std::nullopt;
        setF("Mode", op->mode);
        setF("Function", op->function);
        setF("DataType", *d);
        return in;
      }
      if (!c.eat(",")) return std::nullopt;
      auto fn = parseInt(c.token());
      auto d = dtype();
      if (!fn || !d || !c.atEnd()) return std::nullopt;
      setF("Mode", *m);
      setF("Function", *fn);
      setF("DataType", *d);
      return in;
    }
    bool vec = c.eat("BSTART.VEC");
    if (!vec && !c.eat("BSTART.SFU")) return std::nullopt;
    const TileOpInfo* op = findTileOp(c.token());
    if (!op || op->family != TileFamily::TEPL || (op->engine == TileEngine::VEC) != vec)
      return std::nullopt;
    auto d = dtype();
    if (!d || !c.atEnd()) return std::nullopt;
    setF("Mode", op->mode);
    setF("Function", op->function);
    setF("DataType", *d);
    return in;
  }
  if (f.syntax == "@EXT") {
    if (!c.eat("BSTART.EXT")) return std::nullopt;
    const TileOpInfo* op = findTileOp(c.token());
    if (!op || op->family != TileFamily::EXT) return std::nullopt;
    auto d = dtype();
    if (!d || !c.atEnd()) return std::nullopt;
    setF("XOP", op->function);
    setF("DataType", *d);
    return in;
  }
  if (f.syntax == "@EXTC") {
    if (!c.eat("BSTART.EXT")) return std::nullopt;
    std::string_view name = c.token();
    const XCtlRow* r = nullptr;
    for (const XCtlRow& x : xctls())
      if (iequals(x.name, name)) r = &x;
    if (!r) return std::nullopt;
    setF("CTL", static_cast<int64_t>(r->ctl));
    const Field fields[2] = {Field::PipeA, Field::PipeB};
    for (unsigned i = 0; i < r->numPipes; ++i) {
      if (!c.eat(",")) return std::nullopt;
      auto p = codeOf(named("ExtPipe"), c.token());
      if (!p) return std::nullopt;
      setF(fields[i], *p);
    }
    if (!c.atEnd()) return std::nullopt;
    return in;
  }
  if (f.syntax == "@CATR") {
    if (!c.eat("B.CATR") || !c.eat("{")) return std::nullopt;
    if (c.eat("}")) return c.atEnd() ? std::optional<Inst>(in) : std::nullopt;
    do {
      std::string_view t = c.token();
      if (t == "trap")
        setF("trap", 1);
      else if (t == "atomic")
        setF("atom", 1);
      else if (t == "aq")
        setF("aq", 1);
      else if (t == "rl")
        setF("rl", 1);
      else if (t == "aqrl")
        setF("aq", 1), setF("rl", 1);
      else if (t == "far")
        setF("far", 1);
      else if (t == "dr")
        setF("DR", 1);
      else
        return std::nullopt;
    } while (c.eat(","));
    if (!c.eat("}") || !c.atEnd()) return std::nullopt;
    return in;
  }
  if (f.syntax == "@HINT") {
    if (!c.eat("B.HINT") || !c.eat("{") || !c.eat("BR.")) return std::nullopt;
    std::string_view br = c.token();
    if (br == "likely")
      setF("V", 1), setF("LUL", 1);
    else if (br == "unlikely")
      setF("V", 1);
    else if (br != "none")
      return std::nullopt;
    if (!c.eat(",") || !c.eat("TEMP.")) return std::nullopt;
    auto t = codeOf(named("HintTemp"), c.token());
    if (!t || !c.eat(",")) return std::nullopt;
    auto n = parseInt(c.token());
    if (!n || !c.eat("}") || !c.atEnd()) return std::nullopt;
    setF("temp", *t);
    setF("prefetch_size", *n);
    return in;
  }
  return std::nullopt;
}

} // namespace pto::isa::enc::detail
