#include "isa/Encoding.h"
#include "isa/EncodingDetail.h"
#include "support/Text.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>

namespace pto::isa::enc {

namespace detail {

// ================================================================ small helpers

using support::parseInt;

// ================================================================ code tables
struct NoneTag {};
constexpr NoneTag NONE{};
constexpr std::optional<DType> ourDT(DType d) {
  return d;
}
constexpr std::optional<DType> ourDT(NoneTag) {
  return std::nullopt;
}
constexpr std::optional<OpId> ourOp(OpId o) {
  return o;
}
constexpr std::optional<OpId> ourOp(NoneTag) {
  return std::nullopt;
}

const std::vector<DataTypeInfo>& dataTypes() {
  static const std::vector<DataTypeInfo> t = [] {
    using enum DType;
    return std::vector<DataTypeInfo>{
#define PTO_ENC_DTYPE(Code, Name, Bits, Ours) {Code, #Name, Bits, ourDT(Ours)},
#include "isa/Encoding.def"
    };
  }();
  return t;
}

const std::vector<NamedCode>& rmodes() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_RMODE(Code, Name, Alias) {Code, #Name},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& rmodeAliases() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_RMODE(Code, Name, Alias) {Code, Alias},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& cmodes() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_CMODE(Code, Name, Ours) {Code, #Name},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& pads() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_PAD(Code, Name, Ours) {Code, #Name},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& layouts() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_LAYOUT(Code, Name) {Code, #Name},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& gprs() {
  static const std::vector<NamedCode> t = {
#define PTO_ENC_GPR(Index, Name) {Index, #Name},
#include "isa/Encoding.def"
  };
  return t;
}
const std::vector<NamedCode>& named(std::string_view kind) {
  struct Row {
    std::string_view kind;
    NamedCode nc;
  };
  static const std::vector<Row> rows = {
#define PTO_ENC_NAMED(Kind, Code, Name) {#Kind, {Code, #Name}},
#include "isa/Encoding.def"
  };
  static std::map<std::string_view, std::vector<NamedCode>> byKind = [] {
    std::map<std::string_view, std::vector<NamedCode>> m;
    for (const Row& r : rows)
      m[r.kind].push_back(r.nc);
    return m;
  }();
  static const std::vector<NamedCode> empty;
  auto it = byKind.find(kind);
  return it == byKind.end() ? empty : it->second;
}

std::string_view nameOf(const std::vector<NamedCode>& t, unsigned code) {
  for (const NamedCode& n : t)
    if (n.code == code) return n.name;
  return {};
}
std::optional<unsigned> codeOf(const std::vector<NamedCode>& t, std::string_view name) {
  for (const NamedCode& n : t)
    if (iequals(n.name, name)) return n.code;
  return std::nullopt;
}

const std::vector<XCtlRow>& xctls() {
  static const std::vector<XCtlRow> t = {
#define PTO_ENC_XCTL(Name, Ctl, NumPipes) {ExtCtl::Name, #Name, NumPipes},
#include "isa/Encoding.def"
  };
  return t;
}
const XCtlRow* xctl(unsigned code) {
  for (const XCtlRow& r : xctls())
    if (static_cast<unsigned>(r.ctl) == code) return &r;
  return nullptr;
}

// ================================================================ form table
Piece P(unsigned lsb, unsigned width, unsigned vlsb) {
  Piece p;
  p.instrLsb = static_cast<uint8_t>(lsb);
  p.width = static_cast<uint8_t>(width);
  p.valueLsb = static_cast<uint8_t>(vlsb);
  return p;
}
constexpr std::nullopt_t NP = std::nullopt;
Domain domAny() {
  return Domain{};
}
Domain domSet(uint64_t s) {
  Domain d;
  d.kind = Domain::Kind::Set;
  d.set = s;
  return d;
}
Domain domRange(int64_t lo, int64_t hi) {
  Domain d;
  d.kind = Domain::Kind::Range;
  d.lo = lo;
  d.hi = hi;
  return d;
}
[[maybe_unused]] Domain domNotEq(int64_t v) {
  Domain d;
  d.kind = Domain::Kind::NotEq;
  d.lo = v;
  return d;
}

FieldInfo makeField(Field id, std::string_view name, FieldKind kind, bool isSigned,
                    std::initializer_list<std::optional<Piece>> pieces, Domain dom) {
  FieldInfo f;
  f.id = id;
  f.name = name;
  f.kind = kind;
  f.isSigned = isSigned;
  f.domain = dom;
  for (const auto& p : pieces) {
    if (!p) continue;
    f.pieces.push_back(*p);
    f.width = std::max(f.width, unsigned(p->valueLsb) + p->width);
    f.valueMask |= ((uint64_t(1) << p->width) - 1) << p->valueLsb;
  }
  return f;
}

std::vector<FormInfo> buildForms() {
  std::vector<FormInfo> forms;
#define ANY domAny()
#define SET(x) domSet(x##ull)
#define RANGE(a, b) domRange(a, b)
#define NOTEQ(v) domNotEq(v)
#define PTO_ENC_FORM(Id, Bits, Match, Mask, Status, Group, Flow_, Syntax)                          \
  forms.push_back(FormInfo{FormId::Id,                                                             \
                           #Id,                                                                    \
                           Bits,                                                                   \
                           Match##ull,                                                             \
                           Mask##ull,                                                              \
                           FormStatus::Status,                                                     \
                           FormGroup::Group,                                                       \
                           Flow::Flow_,                                                            \
                           Syntax,                                                                 \
                           {}});
#define PTO_ENC_FIELD(Form, Name, Kind, Sign, P0, P1, P2, Dom)                                     \
  forms[static_cast<unsigned>(FormId::Form)].fields.push_back(makeField(                           \
      Field::Name, #Name, FieldKind::Kind, std::string_view(#Sign) == "S", {P0, P1, P2}, Dom));
#include "isa/Encoding.def"
#undef ANY
#undef SET
#undef RANGE
#undef NOTEQ
  for (FormInfo& f : forms) {
    f.slot.fill(-1);
    for (size_t k = 0; k < f.fields.size(); ++k) {
      if (f.fields[k].kind == FieldKind::Label) f.labelField = static_cast<int>(k);
      f.slot[static_cast<size_t>(f.fields[k].id)] = static_cast<int8_t>(k);
    }
  }
  return forms;
}

const std::vector<FormInfo>& forms() {
  static const std::vector<FormInfo> f = buildForms();
  return f;
}

/// Forms of one length in decode-priority order: most mask bits first, then table order.
const std::vector<const FormInfo*>& priority(unsigned bits) {
  static const std::map<unsigned, std::vector<const FormInfo*>> byBits = [] {
    std::map<unsigned, std::vector<const FormInfo*>> m;
    for (const FormInfo& f : forms())
      m[f.bits].push_back(&f);
    for (auto& [b, v] : m)
      std::stable_sort(v.begin(), v.end(), [](const FormInfo* a, const FormInfo* c) {
        return std::popcount(a->mask) > std::popcount(c->mask);
      });
    return m;
  }();
  static const std::vector<const FormInfo*> empty;
  auto it = byBits.find(bits);
  return it == byBits.end() ? empty : it->second;
}

/// The forms of priority(bits) that can match a word whose low 8 bits are `low`, in the same
/// order: decode() looks at one such bucket instead of every form of the length.
const std::vector<const FormInfo*>& candidates(unsigned bits, uint8_t low) {
  using Buckets = std::array<std::vector<const FormInfo*>, 256>;
  static const std::map<unsigned, Buckets> byLow = [] {
    std::map<unsigned, Buckets> m;
    for (unsigned b : {16u, 32u, 48u, 64u}) {
      Buckets& buckets = m[b];
      for (unsigned k = 0; k < 256; ++k)
        for (const FormInfo* f : priority(b))
          if ((k & f->mask & 0xFF) == (f->match & 0xFF)) buckets[k].push_back(f);
    }
    return m;
  }();
  static const std::vector<const FormInfo*> empty;
  auto it = byLow.find(bits);
  return it == byLow.end() ? empty : it->second[low];
}

struct Reserved {
  std::string_view name;
  unsigned bits;
  uint64_t match, mask;
};
const std::vector<Reserved>& reservations() {
  static const std::vector<Reserved> t = {
#define PTO_ENC_RESERVED(Name, Bits, Match, Mask) {Name, Bits, Match##ull, Mask##ull},
#include "isa/Encoding.def"
  };
  return t;
}

// ================================================================ tile op table
std::vector<TileOpInfo> buildTileOps() {
  using enum OpId;
  std::vector<TileOpInfo> t;
#define PTO_ENC_TILEOP(Name, Family, Engine, Mode, Function, Start, Ours)                          \
  t.push_back(TileOpInfo{TileOp::Name, #Name, TileFamily::Family, TileEngine::Engine, Mode,        \
                         Function, FormId::Start, ourOp(Ours)});
#define PTO_ENC_XOP(Name, Xop, Ours)                                                               \
  t.push_back(TileOpInfo{TileOp::Name, #Name, TileFamily::EXT, TileEngine::EXT, 0, Xop,            \
                         FormId::BSTART_EXT, ourOp(Ours)});
#include "isa/Encoding.def"
  return t;
}
const std::vector<TileOpInfo>& tileOps() {
  static const std::vector<TileOpInfo> t = buildTileOps();
  return t;
}
const TileOpInfo* teplOp(unsigned mode, unsigned function) {
  for (const TileOpInfo& o : tileOps())
    if (o.family == TileFamily::TEPL && o.mode == mode && o.function == function) return &o;
  return nullptr;
}
const TileOpInfo* extOp(unsigned xop) {
  for (const TileOpInfo& o : tileOps())
    if (o.family == TileFamily::EXT && o.function == xop) return &o;
  return nullptr;
}
const TileOpInfo* namedStartOp(FormId f) {
  // By form id, built once: decoding asks for every block start.
  static const std::map<FormId, const TileOpInfo*> byForm = [] {
    std::map<FormId, const TileOpInfo*> m;
    for (const TileOpInfo& o : tileOps())
      if (o.family != TileFamily::TEPL && o.family != TileFamily::EXT)
        m.try_emplace(o.startForm, &o);
    return m;
  }();
  auto it = byForm.find(f);
  return it == byForm.end() ? nullptr : it->second;
}

// ================================================================ bit packing
int64_t extractField(const FieldInfo& f, uint64_t word) {
  uint64_t v = 0;
  for (const Piece& p : f.pieces)
    v |= ((word >> p.instrLsb) & ((uint64_t(1) << p.width) - 1)) << p.valueLsb;
  if (f.isSigned && f.width < 64 && (v >> (f.width - 1) & 1)) v |= ~uint64_t(0) << f.width;
  return static_cast<int64_t>(v);
}

std::optional<std::string> fieldFits(const FieldInfo& f, int64_t v) {
  if (f.isSigned) {
    int64_t lo = -(int64_t(1) << (f.width - 1)), hi = (int64_t(1) << (f.width - 1)) - 1;
    if (v < lo || v > hi)
      return "value " + std::to_string(v) + " does not fit signed field " + std::string(f.name);
    uint64_t u = static_cast<uint64_t>(v) & ((uint64_t(1) << f.width) - 1);
    if ((u & ~f.valueMask) != 0)
      return "field " + std::string(f.name) + " cannot encode " + std::to_string(v);
  } else {
    if (v < 0 || (f.width < 64 && static_cast<uint64_t>(v) >> f.width))
      return "value " + std::to_string(v) + " does not fit field " + std::string(f.name);
    if ((static_cast<uint64_t>(v) & ~f.valueMask) != 0)
      return "field " + std::string(f.name) + " cannot encode " + std::to_string(v);
  }
  return std::nullopt;
}

uint64_t placeField(const FieldInfo& f, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v), w = 0;
  for (const Piece& p : f.pieces)
    w |= ((u >> p.valueLsb) & ((uint64_t(1) << p.width) - 1)) << p.instrLsb;
  return w;
}

// ================================================================ semantic checks
/// Checks beyond field domains: TEPL selector holes, extension op numbers. Empty = fine.
std::optional<std::string> semanticCheck(const Inst& in) {
  const FormInfo& f = info(in.form);
  if (f.status == FormStatus::ReservedInPto)
    return std::string(f.mnemonic()) + " is reserved-in-pto in PTO ISA 0.58.3";
  if (in.form == FormId::BSTART_TEPL) {
    unsigned mode = static_cast<unsigned>(*in.get("Mode")),
             fn = static_cast<unsigned>(*in.get("Function"));
    if (!teplOp(mode, fn)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "TEPL selector 0x%03X (mode %u, function %u) is reserved",
                    mode << 5 | fn, mode, fn);
      return std::string(buf);
    }
  }
  // The hint text spells BR.none/likely/unlikely; LUL alone (no V) would print as BR.none and lose
  // a bit.
  if (in.form == FormId::B_HINT && *in.get("V") == 0 && *in.get("LUL") != 0)
    return std::string("B.HINT LUL set without V: a branch-likelihood bit with no branch hint");
  if (in.form == FormId::BSTART_EXT && !extOp(static_cast<unsigned>(*in.get("XOP"))))
    return "extension op " + std::to_string(*in.get("XOP")) + " is not assigned";
  if (in.form == FormId::BSTART_EXTC) {
    const XCtlRow* r = xctl(static_cast<unsigned>(*in.get("CTL")));
    if (!r) return "extension control " + std::to_string(*in.get("CTL")) + " is not assigned";
    if (r->numPipes < 1 && *in.get("PipeA") != 0) return std::string(r->name) + " takes no pipe";
    if (r->numPipes < 2 && *in.get("PipeB") != 0)
      return std::string(r->name) + " takes one pipe at most";
  }
  return std::nullopt;
}

std::string hexOf(uint64_t v, unsigned bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llX", static_cast<int>((bits + 3) / 4),
                static_cast<unsigned long long>(v));
  return buf;
}

} // namespace detail

using namespace detail;

// ================================================================ public: codes
bool Domain::contains(int64_t v) const {
  switch (kind) {
  case Kind::Any:
    return true;
  case Kind::Set:
    return v >= 0 && v < 64 && ((set >> v) & 1);
  case Kind::Range:
    return v >= lo && v <= hi;
  case Kind::NotEq:
    return v != lo;
  }
  return false;
}

std::span<const DataTypeInfo> allDataTypes() {
  return dataTypes();
}
const DataTypeInfo* dataTypeInfo(unsigned code) {
  for (const DataTypeInfo& d : dataTypes())
    if (d.code == code) return &d;
  return nullptr;
}
bool isConcreteDataType(unsigned code) {
  return code < 32 && ((0x1F1F7FFFu >> code) & 1);
}
std::optional<unsigned> dataTypeCode(DType t) {
  for (const DataTypeInfo& d : dataTypes())
    if (d.ours == t) return d.code;
  return std::nullopt;
}
std::optional<DType> dtypeOfCode(unsigned code) {
  const DataTypeInfo* d = dataTypeInfo(code);
  return d ? d->ours : std::nullopt;
}
std::optional<unsigned> parseDataType(std::string_view text) {
  for (const DataTypeInfo& d : dataTypes())
    if (iequals(d.name, text)) return d.code;
  if (auto t = pto::isa::parseDType(text)) return dataTypeCode(*t);
  return std::nullopt;
}

unsigned rmodeCode(RoundMode m) {
  switch (m) {
#define PTO_ENC_CAST(Ours, Code)                                                                   \
  case RoundMode::Ours:                                                                            \
    return Code;
#include "isa/Encoding.def"
  }
  return 0;
}
std::string_view rmodeName(unsigned code) {
  return nameOf(rmodes(), code);
}
unsigned cmodeCode(CmpMode m) {
  switch (m) {
#define PTO_ENC_CMODE(Code, Name, Ours)                                                            \
  case CmpMode::Ours:                                                                              \
    return Code;
#include "isa/Encoding.def"
  }
  return 0;
}
unsigned padCode(PadValue p) {
  switch (p) {
#define PTO_ENC_PAD(Code, Name, Ours)                                                              \
  case PadValue::Ours:                                                                             \
    return Code;
#include "isa/Encoding.def"
  }
  return 3;
}
std::optional<unsigned> layoutCode(std::string_view name) {
  return codeOf(layouts(), name);
}
std::string_view layoutName(unsigned code) {
  return nameOf(layouts(), code);
}
namespace {
/// Each pipe's extension control code (by isa::Pipe), looked up by name once.
const std::vector<unsigned>& pipeCodes() {
  static const std::vector<unsigned> codes = [] {
    std::vector<unsigned> v;
    for (size_t i = 0; i < spellingsPipe().size(); ++i) {
      auto c = codeOf(named("ExtPipe"), spelling(static_cast<Pipe>(i)));
      v.push_back(c ? *c : 0);
    }
    return v;
  }();
  return codes;
}
} // namespace
unsigned pipeCode(Pipe p) {
  const auto& codes = pipeCodes();
  return static_cast<size_t>(p) < codes.size() ? codes[static_cast<size_t>(p)] : 0;
}
std::optional<Pipe> pipeOfCode(int64_t code) {
  const auto& codes = pipeCodes();
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i] == code) return static_cast<Pipe>(i);
  return std::nullopt;
}
std::string_view gprName(unsigned index) {
  return nameOf(gprs(), index);
}
std::optional<unsigned> parseGpr(std::string_view text) {
  for (const NamedCode& g : gprs())
    if (g.name == text) return g.code;
  if (text.size() >= 2 && (text[0] == 'R' || text[0] == 'r')) {
    auto n = parseInt(text.substr(1));
    if (n && *n >= 0 && *n < static_cast<int64_t>(kNumGprs) && text[1] != '-' && text[1] != '+')
      return static_cast<unsigned>(*n);
  }
  return std::nullopt;
}
std::optional<unsigned> peModeOfMask(unsigned mask4) {
  for (unsigned i = 0; i < 8; ++i)
    if (maskOfPeMode(i) == mask4) return i;
  return std::nullopt;
}
unsigned maskOfPeMode(unsigned peMode) {
  static const unsigned m[8] = {0x0, 0x8, 0x4, 0x2, 0x1, 0xC, 0xE, 0xF};
  return m[peMode & 7];
}

// ================================================================ public: forms
std::span<const FormInfo> allForms() {
  return forms();
}
const FormInfo& info(FormId id) {
  return forms()[static_cast<unsigned>(id)];
}
std::string_view FormInfo::mnemonic() const {
  size_t sp = syntax.find(' ');
  return sp == std::string_view::npos ? syntax : syntax.substr(0, sp);
}
int FormInfo::fieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return static_cast<int>(i);
  return -1;
}
void Inst::put(FieldName f, int64_t value) {
  if (set(f, value)) return;
  std::fprintf(stderr, "internal error: isa::enc: %s has no field %s\n",
               std::string(formInfo().idName).c_str(), std::string(name(f.id)).c_str());
  std::abort();
}
std::string_view name(Field f) {
  return kFieldNames[static_cast<size_t>(f)];
}
std::optional<Field> fieldNamed(std::string_view name) {
  // Sorted once: the code generator names register fields as text (asm/codegen).
  static const std::vector<std::pair<std::string_view, Field>> sorted = [] {
    std::vector<std::pair<std::string_view, Field>> v;
    for (size_t i = 0; i < kNumFields; ++i)
      v.push_back({kFieldNames[i], static_cast<Field>(i)});
    std::sort(v.begin(), v.end());
    return v;
  }();
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair(name, Field{}),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  if (it == sorted.end() || it->first != name) return std::nullopt;
  return it->second;
}
Flow Inst::flow() const {
  const FormInfo& f = info(form);
  if (f.flow != Flow::ByBrType) return f.flow;
  const int64_t br = get("BrType").value_or(1);
  return br == 1 ? Flow::Fall : br == 7 ? Flow::Ret : Flow::Indirect;
}
std::optional<int64_t> Inst::labelOffset() const {
  const int k = info(form).labelField;
  if (k < 0) return std::nullopt;
  return 2 * field[static_cast<size_t>(k)];
}

Result<Encoded> encode(const Inst& in) {
  const FormInfo& f = info(in.form);
  uint64_t w = f.match;
  for (size_t i = 0; i < f.fields.size(); ++i) {
    const FieldInfo& fi = f.fields[i];
    if (auto e = fieldFits(fi, in.field[i]))
      return Result<Encoded>::failure(std::string(f.idName) + ": " + *e);
    if (!fi.domain.contains(in.field[i]))
      return Result<Encoded>::failure(std::string(f.idName) + ": value " +
                                      std::to_string(in.field[i]) + " is reserved for field " +
                                      std::string(fi.name));
    w |= placeField(fi, in.field[i]);
  }
  for (size_t i = f.fields.size(); i < kMaxFields; ++i)
    if (in.field[i] != 0)
      return Result<Encoded>::failure(std::string(f.idName) + ": stray field value");
  if (auto e = semanticCheck(in)) return Result<Encoded>::failure(*e);
  return Encoded{w, f.bits};
}

Result<Inst> decode(uint64_t value, unsigned bits, DecodeOptions opts) {
  if (bits != 16 && bits != 32 && bits != 48 && bits != 64)
    return Result<Inst>::failure("unsupported instruction length " + std::to_string(bits));
  if (bits < 64) value &= (uint64_t(1) << bits) - 1;
  auto reservedName = [&]() -> std::optional<std::string_view> {
    for (const Reserved& r : reservations())
      if (r.bits == bits && (value & r.mask) == r.match) return r.name;
    return std::nullopt;
  };
  for (const FormInfo* f : candidates(bits, static_cast<uint8_t>(value))) {
    if ((value & f->mask) != f->match) continue;
    if (f->group == FormGroup::Ext && !opts.extensions) continue;
    Inst in;
    in.form = f->id;
    for (size_t i = 0; i < f->fields.size(); ++i) {
      in.field[i] = extractField(f->fields[i], value);
      if (!f->fields[i].domain.contains(in.field[i])) {
        std::string msg = hexOf(value, bits) + ": " + std::string(f->mnemonic()) + " field " +
                          std::string(f->fields[i].name) + " value " + std::to_string(in.field[i]) +
                          " is reserved";
        if (auto r = reservedName())
          msg += " (reserved-in-pto extension encoding: " + std::string(*r) + ")";
        return Result<Inst>::failure(msg);
      }
    }
    if (auto e = semanticCheck(in)) return Result<Inst>::failure(hexOf(value, bits) + ": " + *e);
    return in;
  }
  if (auto r = reservedName())
    return Result<Inst>::failure(hexOf(value, bits) +
                                 ": reserved-in-pto extension encoding: " + std::string(*r));
  return Result<Inst>::failure(hexOf(value, bits) + ": no PTO ISA 0.58.3 form at " +
                               std::to_string(bits) + " bits");
}

unsigned lengthOf(uint16_t first, std::optional<uint16_t> second) {
  if ((first & 0xF) == 0xE) return 48;
  if ((first & 1) == 0) {
    // The fused BSTART.CALL: a C.BSTART DIRECT halfword followed by C.SETRET (0x5016/0xf83f).
    if ((first & 0xF) == 0x2 && second && (*second & 0xF83F) == 0x5016) return 32;
    return 16;
  }
  if ((first & 0x7F) == 0x0F) return 64;
  return 32;
}

Result<Inst> decodeBytes(std::span<const uint8_t> bytes, size_t& consumed, DecodeOptions opts) {
  consumed = 0;
  if (bytes.size() < 2) return Result<Inst>::failure("truncated instruction");
  auto half = [&](size_t i) { return static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8); };
  std::optional<uint16_t> second;
  if (bytes.size() >= 4) second = half(1);
  unsigned bits = lengthOf(half(0), second);
  if (bytes.size() < bits / 8) return Result<Inst>::failure("truncated instruction");
  uint64_t v = 0;
  for (unsigned i = 0; i < bits / 16; ++i)
    v |= uint64_t(half(i)) << (16 * i);
  consumed = bits / 8;
  return decode(v, bits, opts);
}

std::string format(const Inst& in) {
  const FormInfo& f = info(in.form);
  if (!f.syntax.empty() && f.syntax[0] == '@') return formatCustom(in);
  return expand(f, in);
}

Result<Inst> parse(std::string_view text, DecodeOptions opts) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  size_t sp = text.find_first_of(" \t");
  std::string_view head = text.substr(0, sp);
  for (const FormInfo& f : forms()) {
    if (f.group == FormGroup::Ext && !opts.extensions) continue;
    if (f.syntax[0] == '@') {
      bool candidate =
          (f.syntax == "@TEPL" && (iequals(head, "BSTART.VEC") || iequals(head, "BSTART.SFU") ||
                                   iequals(head, "BSTART.TEPL"))) ||
          ((f.syntax == "@EXT" || f.syntax == "@EXTC") && iequals(head, "BSTART.EXT")) ||
          (f.syntax == "@CATR" && iequals(head, "B.CATR")) ||
          (f.syntax == "@HINT" && iequals(head, "B.HINT") &&
           text.find('{') != std::string_view::npos);
      if (!candidate) continue;
      if (auto in = parseCustom(f, text)) return *in;
      continue;
    }
    // A mnemonic may hold type fields (fadd.$SrcType): its literal part must start the word.
    std::string_view mn = f.mnemonic();
    if (size_t dollar = mn.find('$'); dollar != std::string_view::npos) {
      if (head.size() < dollar || !iequals(head.substr(0, dollar), mn.substr(0, dollar))) continue;
    } else if (!iequals(mn, head)) {
      continue;
    }
    Inst in;
    if (matchPattern(f, text, in)) return in;
  }
  return Result<Inst>::failure("cannot parse '" + std::string(text) + "'");
}

std::string disassemble(uint64_t value, unsigned bits, DecodeOptions opts) {
  auto r = decode(value, bits, opts);
  return r ? format(*r) : "<" + r.error().message + ">";
}

// ================================================================ public: tile ops
std::span<const TileOpInfo> allTileOps() {
  return tileOps();
}
const TileOpInfo& info(TileOp op) {
  return tileOps()[static_cast<unsigned>(op)];
}
const TileOpInfo* findTileOp(std::string_view name) {
  for (const TileOpInfo& o : tileOps())
    if (iequals(o.name, name)) return &o;
  return nullptr;
}
const TileOpInfo* tileOpFor(OpId op) {
  for (const TileOpInfo& o : tileOps())
    if (o.ours == op) return &o;
  return nullptr;
}
Inst tileStart(TileOp op, unsigned dt) {
  const TileOpInfo& o = info(op);
  Inst in;
  in.form = o.startForm;
  in.put("DataType", dt);
  if (o.family == TileFamily::TEPL) {
    in.put("Mode", o.mode);
    in.put("Function", o.function);
  } else if (o.family == TileFamily::EXT) {
    in.put("XOP", o.function);
  }
  return in;
}
std::optional<TileOp> tileOpOf(const Inst& s) {
  if (s.form == FormId::BSTART_TEPL) {
    if (const TileOpInfo* o = teplOp(static_cast<unsigned>(*s.get("Mode")),
                                     static_cast<unsigned>(*s.get("Function"))))
      return o->op;
    return std::nullopt;
  }
  if (s.form == FormId::BSTART_EXT) {
    if (const TileOpInfo* o = extOp(static_cast<unsigned>(*s.get("XOP")))) return o->op;
    return std::nullopt;
  }
  if (const TileOpInfo* o = namedStartOp(s.form)) return o->op;
  return std::nullopt;
}
std::optional<unsigned> dataTypeOf(const Inst& s) {
  if (!tileOpOf(s)) return std::nullopt;
  return static_cast<unsigned>(*s.get("DataType"));
}
uint32_t catalogStartWord(TileOp op, unsigned dt) {
  const TileOpInfo& o = info(op);
  switch (o.family) {
  case TileFamily::TEPL:
    return dt << 27 | o.mode << 25 | o.function << 20 | 0x00019181u;
  case TileFamily::TLSU:
    return dt << 27 | o.function << 20 | 0x00011181u;
  case TileFamily::CUBE:
    return dt << 27 | o.function << 20 | 0x00031181u;
  case TileFamily::EXT:
    return dt << 27 | o.function << 20 | 0x00039181u;
  }
  return 0;
}

// ================================================================ public: extension control
std::string_view name(ExtCtl c) {
  const XCtlRow* r = xctl(static_cast<unsigned>(c));
  return r ? r->name : "";
}
unsigned numPipes(ExtCtl c) {
  const XCtlRow* r = xctl(static_cast<unsigned>(c));
  return r ? r->numPipes : 0;
}
Inst extControl(ExtCtl c, Pipe a, Pipe b) {
  Inst in;
  in.form = FormId::BSTART_EXTC;
  in.put("CTL", static_cast<int64_t>(c));
  unsigned n = numPipes(c);
  in.put("PipeA", n >= 1 ? pipeCode(a) : 0);
  in.put("PipeB", n >= 2 ? pipeCode(b) : 0);
  return in;
}

std::string isaNoteDescriptor(bool usesExtensions) {
  std::string s = "{\"encoding_abi\":\"pto-isa-0.58.3-mode-function-v1\","
                  "\"encoding_projection_sha256\":"
                  "\"8a48b80e04484c70870f155bf9efc79d2a805cf99e809f4e4e8a7e6a7eb34172\",";
  if (usesExtensions) s += "\"extensions\":[\"" + std::string(kExtensionName) + "\"],";
  return s + "\"release\":\"0.58.3\"}";
}

} // namespace pto::isa::enc
