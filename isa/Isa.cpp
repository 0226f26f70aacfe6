#include "isa/Isa.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace pto::isa {

// ---------------------------------------------------------------- data types
namespace {
constexpr DTypeInfo kDTypes[] = {
#define PTO_DTYPE(Id, spelling, bits, kind, cpp) {DType::Id, spelling, bits, DTypeKind::kind, cpp},
#include "isa/DTypes.def"
};

struct DTypeAlias {
  std::string_view text;
  DType type;
};
// Spellings users write besides the canonical MLIR one: C++ names, PTO-AS short names and
// MLIR's finite-only fp8 variants.
constexpr DTypeAlias kDTypeAliases[] = {
    {"float", DType::F32},
    {"float32", DType::F32},
    {"fp32", DType::F32},
    {"half", DType::F16},
    {"float16", DType::F16},
    {"fp16", DType::F16},
    {"bfloat16", DType::BF16},
    {"f8E4M3FN", DType::F8E4M3},
    {"e4m3", DType::F8E4M3},
    {"f8E5M2FNUZ", DType::F8E5M2},
    {"e5m2", DType::F8E5M2},
    {"hifloat8", DType::HIF8},
    {"f8E8M0FNU", DType::E8M0},
    {"e8m0", DType::E8M0},
    {"f4E2M1FN", DType::F4E2M1X2},
    {"f4E2M1", DType::F4E2M1X2},
    {"f4E1M2", DType::F4E1M2X2},
    {"int4", DType::I4},
    {"s4", DType::I4},
    {"si4", DType::I4},
    {"int8", DType::I8},
    {"si8", DType::I8},
    {"s8", DType::I8},
    {"int16", DType::I16},
    {"si16", DType::I16},
    {"s16", DType::I16},
    {"int32", DType::I32},
    {"si32", DType::I32},
    {"s32", DType::I32},
    {"int64", DType::I64},
    {"si64", DType::I64},
    {"s64", DType::I64},
    {"uint8", DType::U8},
    {"u8", DType::U8},
    {"uint16", DType::U16},
    {"u16", DType::U16},
    {"uint32", DType::U32},
    {"u32", DType::U32},
    {"uint64", DType::U64},
    {"u64", DType::U64},
    {"bool", DType::I1},
    {"double", DType::F64},
};
} // namespace

const DTypeInfo& info(DType t) {
  return kDTypes[static_cast<unsigned>(t)];
}

std::optional<DType> parseDType(std::string_view text) {
  for (const DTypeInfo& d : kDTypes)
    if (d.spelling == text) return d.id;
  for (const DTypeAlias& a : kDTypeAliases)
    if (a.text == text) return a.type;
  return std::nullopt;
}

std::string DTypeSet::describe() const {
  std::string out;
  for (const DTypeInfo& d : kDTypes) {
    if (!contains(d.id)) continue;
    if (!out.empty()) out += ", ";
    out += d.spelling;
  }
  return out.empty() ? "none" : out;
}

// ---------------------------------------------------------------- small enums
namespace {
template <typename E> struct EnumRow {
  E value;
  std::vector<std::string_view> names; // canonical first
};
} // namespace

#define PTO_ENUM_BEGIN(T)                                                                          \
  static const std::vector<EnumRow<T>>& rows##T() {                                                \
    static const std::vector<EnumRow<T>> rows = {
#define PTO_ENUM(T, Id, ...) {T::Id, {__VA_ARGS__}},
#define PTO_ENUM_END(T)                                                                            \
  }                                                                                                \
  ;                                                                                                \
  return rows;                                                                                     \
  }                                                                                                \
  std::string_view spelling(T v) {                                                                 \
    return rows##T()[static_cast<unsigned>(v)].names.front();                                      \
  }                                                                                                \
  std::optional<T> parse##T(std::string_view text) {                                               \
    for (const auto& row : rows##T())                                                              \
      for (std::string_view n : row.names)                                                         \
        if (n == text) return row.value;                                                           \
    return std::nullopt;                                                                           \
  }                                                                                                \
  std::vector<std::string_view> spellings##T() {                                                   \
    std::vector<std::string_view> out;                                                             \
    for (const auto& row : rows##T())                                                              \
      out.push_back(row.names.front());                                                            \
    return out;                                                                                    \
  }
#include "isa/Enums.def"

// ---------------------------------------------------------------- arch profiles
namespace {
constexpr uint32_t KiB = 1024;
// Buffer capacities: pto-isa buffer_limits.hpp (reference 4.6). Alignment of manual
// addresses: 32 B for UB/L1/bias/scaling, 512 B (one fractal) for the L0 buffers.
const ArchProfile kProfiles[] = {
    {Arch::A2A3,
     "a2a3",
     {{192 * KiB, 32},
      {512 * KiB, 32},
      {64 * KiB, 512},
      {64 * KiB, 512},
      {128 * KiB, 512},
      {1 * KiB, 32},
      {2 * KiB, 32}},
     8},
    {Arch::A5,
     "a5",
     {{256 * KiB, 32},
      {512 * KiB, 32},
      {64 * KiB, 512},
      {64 * KiB, 512},
      {256 * KiB, 512},
      {4 * KiB, 32},
      {4 * KiB, 32}},
     8},
};
} // namespace

const ArchProfile& profile(Arch a) {
  return kProfiles[static_cast<unsigned>(a)];
}

Pipe pipeOf(SyncOpType t) {
  switch (t) {
  case SyncOpType::TLOAD:
    return Pipe::MTE2;
  case SyncOpType::TSTORE_VEC:
    return Pipe::MTE3;
  case SyncOpType::TSTORE_ACC:
    return Pipe::FIX;
  case SyncOpType::TMOV_M2L:
  case SyncOpType::TMOV_M2B:
    return Pipe::MTE1;
  case SyncOpType::TMOV_M2S:
  case SyncOpType::TMOV_V2M:
    return Pipe::FIX;
  case SyncOpType::TMOV_M2V:
  case SyncOpType::TVEC:
  case SyncOpType::TVECWAIT_EVENT:
    return Pipe::V;
  case SyncOpType::TMATMUL:
    return Pipe::M;
  }
  return Pipe::All;
}

// ---------------------------------------------------------------- operand roles
namespace {
struct RoleRow {
  RoleId id;
  std::string_view spelling;
  Slot slot;
};
constexpr RoleRow kRoles[] = {
#define PTO_ROLE(Id, spelling, slot) {RoleId::Id, spelling, Slot::slot},
#include "isa/Roles.def"
};
} // namespace

std::string_view spelling(RoleId r) {
  return kRoles[static_cast<unsigned>(r)].spelling;
}

std::optional<RoleId> parseRoleId(std::string_view text) {
  for (const RoleRow& r : kRoles)
    if (r.spelling == text) return r.id;
  return std::nullopt;
}

bool isIndexRole(RoleId r) {
  return r == RoleId::Indices || r == RoleId::Indexes || r == RoleId::Idx || r == RoleId::Offsets;
}

Loc cubeLocOf(RoleId r) {
  switch (r) {
  case RoleId::Lhs:
    return Loc::Left;
  case RoleId::Rhs:
    return Loc::Right;
  case RoleId::Bias:
    return Loc::Bias;
  case RoleId::Dst:
  case RoleId::Acc:
    return Loc::Acc;
  default:
    return Loc::Scaling;
  }
}

Slot slotOf(OpId op, RoleId role) {
  // pto-isa's TSEL(dst, mask, src0, src1[, tmp]): the mask takes the first source slot.
  if (op == OpId::TSEL || op == OpId::TSELS) {
    switch (role) {
    case RoleId::Mask:
      return Slot::Src0;
    case RoleId::Src0:
    case RoleId::Src:
      return Slot::Src1;
    case RoleId::Src1:
      return Slot::Src2;
    default:
      break;
    }
  }
  return kRoles[static_cast<unsigned>(role)].slot;
}

SlotOperands slotOperands(const OpInfo& op, std::span<const int> roles) {
  SlotOperands at;
  at.fill(-1);
  for (size_t k = 0; k < roles.size(); ++k) {
    if (roles[k] < 0) continue;
    const Slot s = op.roles[static_cast<size_t>(roles[k])].slot;
    int& first = at[static_cast<size_t>(s)];
    if (s != Slot::None && first < 0) first = static_cast<int>(k);
  }
  return at;
}

// ---------------------------------------------------------------- op table
namespace {
// Named dtype sets used by Ops.def (reference ptoas-syntax.md 4.4 and the seed documents).
using enum DType;
const DTypeSet AllData = {F32, F16, BF16, F8E4M3, F8E5M2, HIF8, E8M0, F4E2M1X2, F4E1M2X2,
                          I4,  I8,  I16,  I32,    I64,    U8,   U16,  U32,      U64};
const DTypeSet ArithA2 = {I32, I16, F16, F32};
const DTypeSet ArithA5 = {I32, I16, I8, F16, BF16, F32};
const DTypeSet MulA5 = {I32, I16, F16, F32};
const DTypeSet FloatHF = {F16, F32};
const DTypeSet GatherCmpA2 = {F16, F32, I32}; // i32 with cmpMode eq only (the verifier)
const DTypeSet GatherCmpA5 = {I16, I32, F16, F32};
const DTypeSet IntAll = {I8, I16, I32, U8, U16, U32};
const DTypeSet RemA2 = {I32, F32};
const DTypeSet RemA5 = {I32, I16, F32, F16};
const DTypeSet SignedA2 = {I16, I32, F16, F32};
const DTypeSet SignedA5 = {I8, I16, I32, F16, BF16, F32};
const DTypeSet ReluA2 = {I32, F16, F32};
const DTypeSet NotA2 = {I16, U16};
const DTypeSet ReduceA2 = {F16, F32, I16, I32};
const DTypeSet ReduceA5 = {I8, I16, I32, F16, BF16, F32};
const DTypeSet LoadA2 = {I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32};
const DTypeSet LoadA5 = {I8,   I16, I32,    I64,    U8,   U16,  U32,      U64,      F16,
                         BF16, F32, F8E4M3, F8E5M2, HIF8, E8M0, F4E2M1X2, F4E1M2X2, I4};
const DTypeSet RandomTypes = {I32, U32};
const DTypeSet ConcatTypes = {I8, I16, I32, U8, U16, U32, F16, BF16, F32}; // pto-isa TCONCAT
const DTypeSet DeinterleaveTypes = {I8,  I16, I32,  U8, U16,
                                    U32, F16, BF16, F32}; // pto-isa TDEINTERLEAVE
const DTypeSet GmIndexedA2 = {I8,  I16, I32,  U8, U16,
                              U32, F16, BF16, F32}; // pto-isa's MGatherCheck / MScatterCheck
const DTypeSet PrintTypes = {F32, F16, I8, I16, I32, U8, U16, U32}; // pto-isa TPRINT constraints

std::vector<Role> parseSignature(std::string_view sig) {
  std::vector<Role> roles;
  bool outputs = false;
  size_t pos = 0;
  while (pos < sig.size()) {
    if (sig.substr(pos, 2) == "->") {
      outputs = true;
      pos += 2;
      continue;
    }
    size_t end = sig.find_first_of(",-", pos);
    if (end == std::string_view::npos) end = sig.size();
    std::string_view item = sig.substr(pos, end - pos);
    pos = end < sig.size() && sig[end] == ',' ? end + 1 : end;
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) throw std::logic_error("bad op signature");
    Role r;
    r.name = item.substr(0, colon);
    std::optional<RoleId> id = parseRoleId(r.name);
    if (!id)
      throw std::logic_error("op signature role '" + std::string(r.name) + "' is not in Roles.def");
    r.id = *id;
    r.isOutput = outputs;
    std::string_view kind = item.substr(colon + 1);
    switch (kind.front()) {
    case 'T':
      r.kind = RoleKind::Tile;
      break;
    case 'V':
      r.kind = RoleKind::View;
      break;
    case 'S':
      r.kind = RoleKind::Scalar;
      break;
    case 'I':
      r.kind = RoleKind::IntScalar;
      break;
    case 'F':
      r.kind = RoleKind::FloatScalar;
      break;
    default:
      r.kind = RoleKind::Any;
      break;
    }
    r.optional = kind.find('?') != std::string_view::npos;
    r.variadic = kind.find('*') != std::string_view::npos;
    roles.push_back(r);
  }
  return roles;
}

std::vector<OpInfo> buildOps() {
  std::vector<OpInfo> ops = {
#define PTO_OP(Id, mnemonic, pipe, engine, signature, rule, a2a3, a5, flags)                       \
  {OpId::Id, mnemonic, Pipe::pipe, Engine::engine, signature, TypeRule::rule, a2a3, a5, flags, {}},
#include "isa/Ops.def"
  };
  for (OpInfo& op : ops) {
    op.roles = parseSignature(op.signature);
    for (Role& r : op.roles)
      if (r.kind == RoleKind::Tile) r.slot = slotOf(op.id, r.id);
  }
  return ops;
}

const std::vector<OpInfo>& opTable() {
  static const std::vector<OpInfo> ops = buildOps();
  return ops;
}
} // namespace

size_t OpInfo::numInputs() const {
  return std::count_if(roles.begin(), roles.end(), [](const Role& r) { return !r.isOutput; });
}
size_t OpInfo::numOutputs() const {
  return roles.size() - numInputs();
}

std::vector<int> tileOperandRoles(const OpInfo& op, size_t n) {
  std::vector<int> order; // tile roles in operand order: outputs, then inputs
  for (bool outputs : {true, false})
    for (size_t r = 0; r < op.roles.size(); ++r)
      if (op.roles[r].kind == RoleKind::Tile && op.roles[r].isOutput == outputs)
        order.push_back(static_cast<int>(r));
  size_t required = 0;
  for (int r : order)
    required += !op.roles[r].optional && !op.roles[r].variadic;
  size_t extra = n > required ? n - required : 0;
  std::vector<int> out;
  out.reserve(n);
  for (int r : order) {
    size_t take = 1;
    if (op.roles[r].variadic) {
      take = extra;
      extra = 0;
    } else if (op.roles[r].optional) {
      if (extra == 0) continue;
      --extra;
    }
    for (size_t k = 0; k < take && out.size() < n; ++k)
      out.push_back(r);
  }
  out.resize(n, -1); // surplus operands
  return out;
}

std::span<const OpInfo> allOps() {
  return opTable();
}
const OpInfo& info(OpId id) {
  return opTable()[static_cast<unsigned>(id)];
}

const OpInfo* findOp(std::string_view mnemonic) {
  if (mnemonic.starts_with("pto.")) mnemonic.remove_prefix(4);
  std::string lower(mnemonic);
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // PTO-AS spells suffixed ops with '_' (tmatmul_acc) where MLIR uses '.' (tmatmul.acc).
  for (const OpInfo& op : opTable()) {
    if (op.mnemonic == lower) return &op;
  }
  // PTOAS's tstore_fp (pto-isa's TSTORE_FP) is TSTORE with its scaling tile `fp`.
  if (lower == "tstore_fp" || lower == "tstore.fp") return &info(OpId::TSTORE);
  std::replace(lower.begin(), lower.end(), '_', '.');
  for (const OpInfo& op : opTable()) {
    std::string dotted(op.mnemonic);
    std::replace(dotted.begin(), dotted.end(), '_', '.');
    if (dotted == lower) return &op;
  }
  return nullptr;
}

ShapeFrom shapeFrom(const OpInfo& op, bool hasTileOutput) {
  const bool reduce = op.flags & (kRowReduce | kColReduce);
  if (reduce || !hasTileOutput || op.id == OpId::TCMP || op.id == OpId::TCMPS ||
      op.id == OpId::TSTORE || op.id == OpId::TGATHER_CMP)
    return ShapeFrom::Source;
  return ShapeFrom::Destination;
}

StartTypeFrom startTypeFrom(const OpInfo& op) {
  if (op.rule == TypeRule::Matmul) return StartTypeFrom::Lhs;
  if (op.id == OpId::TCVT || op.id == OpId::TDEQUANT || op.id == OpId::TGATHER_CMP)
    return StartTypeFrom::Source;
  return StartTypeFrom::ShapeTile;
}

bool axpyPairSupported(DType dst, DType src) {
  return (dst == DType::F16 && src == DType::F16) || (dst == DType::F32 && src == DType::F32) ||
         (dst == DType::F32 && src == DType::F16);
}

std::optional<OpId> scalarFirstForm(OpId id) {
  if (id == OpId::TDIVS) return OpId::TDIVS_SF;
  return std::nullopt;
}

namespace {
/// The ops with a precision option (pto-isa's *Algorithm template argument, PTOAS's
/// precisionType) and their algorithm family, with the high-precision op where there is one.
struct PrecisionRow {
  OpId op;
  std::string_view family;
  std::optional<OpId> high;
};
constexpr PrecisionRow kPrecision[] = {
    {OpId::TSQRT, "sqrt", OpId::TSQRT_HP},    {OpId::TRSQRT, "rsqrt", OpId::TRSQRT_HP},
    {OpId::TRECIP, "recip", OpId::TRECIP_HP}, {OpId::TDIV, "div", OpId::TDIV_HP},
    {OpId::TDIVS, "div", std::nullopt},       {OpId::TDIVS_SF, "div", std::nullopt},
    {OpId::TEXP, "exp", std::nullopt},        {OpId::TLOG, "log", std::nullopt},
};
} // namespace

std::optional<OpId> highPrecisionForm(OpId id) {
  for (const PrecisionRow& r : kPrecision)
    if (r.op == id) return r.high;
  return std::nullopt;
}

OpId defaultPrecisionForm(OpId id) {
  for (const PrecisionRow& r : kPrecision)
    if (r.high == id) return r.op;
  return id;
}

std::string_view precisionFamily(OpId id) {
  const OpId base = defaultPrecisionForm(id);
  for (const PrecisionRow& r : kPrecision)
    if (r.op == base) return r.family;
  return "";
}

std::optional<OpId> scalarSecondForm(OpId id) {
  if (id == OpId::TGATHER) return OpId::TGATHER_CMP;
  return std::nullopt;
}

// ---------------------------------------------------------------- TCVT table
namespace {
struct CvtRow {
  DType src;
  DTypeSet a2a3;
  DTypeSet a5;
};
// Seed 003 ("supported conversions", A2/A3 vs A5 side by side); reference 3.6.
const CvtRow kCvtTable[] = {
    {F32, {F16, F32, BF16, I16, I32, I64}, {F32, F16, BF16, I16, I32, I64, F8E4M3, F8E5M2, HIF8}},
    {F16, {F32, I32, I16, I8, U8, I4}, {F32, I32, I16, I8, U8, HIF8}},
    {BF16, {F32, I32}, {F32, I32, F16, F4E1M2X2, F4E2M1X2}},
    {I16, {F16, F32}, {U8, F16, F32, U32, I32}},
    {I32, {F32, I16, I64, F16}, {F32, I16, U16, I64, U8}},
    {I64, {F32, I32}, {F32, I32}},
    {U8, {F16}, {F16, U16}},
    {I8, {F16}, {F16, I16, I32}},
    {I4, {F16}, {}},
    {U32, {}, {U8, U16, I16}},
    {F8E4M3, {}, {F32}},
    {F8E5M2, {}, {F32}},
    {HIF8, {}, {F32}},
    {F4E1M2X2, {}, {BF16}},
    {F4E2M1X2, {}, {BF16}},
};
} // namespace

bool cvtSupported(Arch a, DType src, DType dst) {
  for (const CvtRow& row : kCvtTable)
    if (row.src == src) return (a == Arch::A5 ? row.a5 : row.a2a3).contains(dst);
  return false;
}

} // namespace pto::isa
