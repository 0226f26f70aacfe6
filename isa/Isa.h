// The PTO machine model: data types, small enums, arch profiles and the op table.
// Everything here is derived from the .def tables beside this file (one source of truth).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pto::isa {

// ---------------------------------------------------------------- data types
enum class DTypeKind : uint8_t { Float, SInt, UInt, Bool };

enum class DType : uint8_t {
#define PTO_DTYPE(Id, spelling, bits, kind, cpp) Id,
#include "isa/DTypes.def"
};
inline constexpr unsigned kNumDTypes = 0
#define PTO_DTYPE(Id, spelling, bits, kind, cpp) +1
#include "isa/DTypes.def"
    ;

struct DTypeInfo {
  DType id;
  std::string_view spelling;
  unsigned bits;
  DTypeKind kind;
  std::string_view cppName;
};
const DTypeInfo& info(DType t);
inline std::string_view spelling(DType t) {
  return info(t).spelling;
}
inline unsigned bitWidth(DType t) {
  return info(t).bits;
}
/// Bytes per element for layout purposes (packed 4-bit types count as 1/2: callers use bits).
inline bool isFloat(DType t) {
  return info(t).kind == DTypeKind::Float;
}
inline bool isInteger(DType t) {
  return info(t).kind == DTypeKind::SInt || info(t).kind == DTypeKind::UInt;
}
/// Accepts the canonical spelling and the aliases users write (float, half, int8, u8, f8E4M3FN...).
std::optional<DType> parseDType(std::string_view text);

/// A set of data types, used by the op table's per-arch rules.
class DTypeSet {
public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types)
      bits_ |= bit(t);
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet r;
    r.bits_ = bits_ | o.bits_;
    return r;
  }
  std::string describe() const; // "f16, f32, i16, i32"
private:
  static constexpr uint32_t bit(DType t) { return 1u << static_cast<unsigned>(t); }
  uint32_t bits_ = 0;
};

// ---------------------------------------------------------------- small enums
#define PTO_ENUM_BEGIN(T) enum class T : uint8_t {
#define PTO_ENUM(T, Id, ...) Id,
#define PTO_ENUM_END(T)                                                                            \
  }                                                                                                \
  ;
#include "isa/Enums.def"

#define PTO_ENUM_BEGIN(T)                                                                          \
  std::string_view spelling(T v);                                                                  \
  std::optional<T> parse##T(std::string_view text);                                                \
  std::vector<std::string_view> spellings##T();
#define PTO_ENUM(T, Id, ...)
#define PTO_ENUM_END(T)
#include "isa/Enums.def"

// ---------------------------------------------------------------- arch profiles
struct BufferSpec {
  uint32_t capacity;  // bytes
  uint32_t alignment; // bytes, for manual addresses
};
struct ArchProfile {
  Arch arch;
  std::string_view name;
  BufferSpec buffers[7]; // indexed by Loc
  unsigned eventIdsPerPipePair;
};
const ArchProfile& profile(Arch a);
inline const BufferSpec& buffer(Arch a, Loc l) {
  return profile(a).buffers[static_cast<unsigned>(l)];
}

/// The pipe a high-level sync endpoint stands for (record_event / wait_event).
Pipe pipeOf(SyncOpType t);

// ---------------------------------------------------------------- op table
enum class Engine : uint8_t { Vector, Cube, Mte, Scalar };

/// How the element types of an op's operands must relate (see Ops.def).
enum class TypeRule : uint8_t {
  SameAll,   // every tile operand has the dst dtype, which is in the arch set
  SrcSet,    // src dtype in the arch set, dst any (compares, argmax...)
  Cvt,       // TCVT conversion table
  Axpy,      // (dst, src) in {(f16,f16), (f32,f32), (f32,f16)}
  Dequant,   // dst/scale/offset f32, src s8|s16
  Quant,     // src f32, dst s8|u8
  Matmul,    // (acc, left, right) triples
  Mov,       // same dtype, or acc(f32/i32)->vec/mat conversion
  Insert,    // TINSERT: acc->mat converts (f32 -> f16/bf16, A5 also f32/i32 kept), vec sources keep
             // theirs
  Load,      // tile dtype in set, same element width as the view
  Store,     // like Load, acc sources may narrow
  Gather,    // data tile in the set, index tiles i16/i32/u16/u32
  GatherCmp, // TGATHER_CMP: src in the set, dst and cdst i32/u32 alike, the scalar of src's type
  PartArg,   // TPARTARGMAX/MIN: dst, src0, src1 one value type in the set; dstIdx, src0Idx,
             // src1Idx one index type (f16: i16/u16/i32/u32, f32: i32/u32)
  Any,       // no dtype constraint beyond the tile's own
};

enum OpFlag : uint32_t {
  kA5Only = 1u << 0,        // rejected on A2/A3
  kVecTiles = 1u << 1,      // every tile operand must be loc=vec
  kRowMajor = 1u << 2,      // every tile operand must be row-major (blayout=row_major)
  kSameValid = 1u << 3,     // src/dst valid shapes must match
  kReadsDst = 1u << 4,      // dst is read as well as written (accumulate / in-place)
  kScalarFirstOK = 1u << 5, // the scalar may come first: scalarFirstForm() names that op
  kRowReduce = 1u << 6,     // dst valid cols == 1, rows equal
  kColReduce = 1u << 7,     // dst valid rows == 1, cols equal
  kRowExpand = 1u << 8,     // second src is the per-row (N x 1) operand
  kColExpand = 1u << 9,     // second src is the per-col (1 x N) operand
  kCubeLocs = 1u << 10,     // operands in left/right/acc (matmul family)
  kA2A3Only = 1u << 11,     // rejected on A5
};

/// Operand role kinds in an op signature.
enum class RoleKind : uint8_t { Tile, View, Scalar, IntScalar, FloatScalar, Any };

/// The role names the signatures use (Roles.def): code asks for a role by this id, never by its
/// spelling, so a renamed or misspelt role is a compile error or a table-build failure.
enum class RoleId : uint8_t {
#define PTO_ROLE(Id, spelling, slot) Id,
#include "isa/Roles.def"
};
std::string_view spelling(RoleId r);
std::optional<RoleId> parseRoleId(std::string_view text);
/// The roles that hold element positions rather than data (gather/scatter/sort indices).
bool isIndexRole(RoleId r);
/// The buffer a matmul-family (kCubeLocs) operand lives in: lhs left, rhs right, bias bias,
/// dst/acc acc, the MX scales scaling.
Loc cubeLocOf(RoleId r);

/// The operand slots of a tile kernel (rt::TileInst's dst, src0..src3, acc, bias, tmp, lscale,
/// rscale); None for a role no kernel slot names.
enum class Slot : uint8_t {
  None,
  Dst,
  Src0,
  Src1,
  Src2,
  Src3,
  Acc,
  Bias,
  Tmp,
  LScale,
  RScale,
  Dst1, // a second output (TPARTARGMAX's indices)
};
inline constexpr size_t kNumSlots = 12;

struct Role {
  std::string_view name; // as the signature spells it, for diagnostics and printing
  RoleId id{};
  RoleKind kind;
  bool optional = false;
  bool variadic = false;
  bool isOutput = false;
  Slot slot = Slot::None; // tile roles only (slotOf)
};

enum class OpId : uint16_t {
#define PTO_OP(Id, mnemonic, pipe, engine, signature, rule, a2a3, a5, flags) Id,
#include "isa/Ops.def"
};

struct OpInfo {
  OpId id;
  std::string_view mnemonic; // without "pto." (e.g. "tadd", "tmatmul.acc")
  Pipe pipe;                 // default pipe (some ops refine it by operand locations)
  Engine engine;
  std::string_view signature; // "src0:T,src1:T->dst:T"
  TypeRule rule;
  DTypeSet a2a3Types;
  DTypeSet a5Types;
  uint32_t flags;
  std::vector<Role> roles; // parsed signature: inputs then outputs
  size_t numInputs() const;
  size_t numOutputs() const;
  const DTypeSet& types(Arch a) const { return a == Arch::A5 ? a5Types : a2a3Types; }
  bool supports(Arch a) const {
    return !((flags & kA5Only) && a != Arch::A5) && !((flags & kA2A3Only) && a == Arch::A5);
  }
};

/// The role (an index into OpInfo::roles) of each of `n` tile operands of an op, in the order the
/// code lists them (B.IOT: outputs first, then inputs, each in signature order). Optional roles
/// are filled in order while operands remain beyond the required ones; a variadic role takes the
/// operands beyond the required ones; a surplus operand gets -1. The assembler's operand order,
/// the linker's read/write analysis, the runtime and the C++ export all follow this one rule.
std::vector<int> tileOperandRoles(const OpInfo& op, size_t n);

/// The kernel slot a tile role of an op fills: the role's column in Roles.def, except that
/// TSEL/TSELS pass the mask first (mask -> src0, src0/src -> src1, src1 -> src2).
Slot slotOf(OpId op, RoleId role);

/// For each Slot, the index of the first tile operand that fills it, -1 for none. `roles` holds
/// each tile operand's role (an index into op.roles, -1 for a surplus operand), as
/// tileOperandRoles gives them. The runtime and the reference interpreter both bind kernels so.
using SlotOperands = std::array<int, kNumSlots>;
SlotOperands slotOperands(const OpInfo& op, std::span<const int> roles);
inline int slotOperand(const SlotOperands& s, Slot slot) {
  return s[static_cast<size_t>(slot)];
}

std::span<const OpInfo> allOps();
const OpInfo& info(OpId id);
/// Looks up a tile op by mnemonic, with or without the "pto." prefix, any case.
const OpInfo* findOp(std::string_view mnemonic);

/// The op a kScalarFirstOK op becomes when its scalar operand is written first (TDIVS ->
/// TDIVS_SF: scalar / tile is another operation, not another operand order).
std::optional<OpId> scalarFirstForm(OpId id);
/// The op a tile op becomes when its second input is a scalar (TGATHER -> TGATHER_CMP, the
/// compare form: indices of the source elements that compare true against the scalar).
std::optional<OpId> scalarSecondForm(OpId id);

/// The high-precision form of a tile op (TSQRT -> TSQRT_HP, TRSQRT, TRECIP, TDIV; pto-isa's
/// *Algorithm::HIGH_PRECISION), whose roles are the base op's in the same order; nullopt for
/// an op without one.
std::optional<OpId> highPrecisionForm(OpId id);
/// The op a high-precision form is the variant of (TSQRT_HP -> TSQRT); `id` itself for any other
/// op. The cpu backend and the reference interpreter compute both alike: the correctly rounded
/// result, which is what the high-precision algorithm is for (docs/numerics.md).
OpId defaultPrecisionForm(OpId id);
/// The algorithm family of an op with a precision option ("sqrt", "rsqrt", "recip", "div",
/// "exp", "log": PTOAS's #pto<sqrt_precision ...>, pto-isa's SqrtAlgorithm), its high-precision
/// form's too; "" for an op without one.
std::string_view precisionFamily(OpId id);

/// Which tile operand's valid shape bounds a tile block (its B.DIM): the destination, or the
/// source for reductions, compares, stores and ops without a tile output (TPRINT). The
/// assembler's lowering, the reference interpreter and the C++ export all ask this.
enum class ShapeFrom : uint8_t { Destination, Source };
ShapeFrom shapeFrom(const OpInfo& op, bool hasTileOutput);

/// Whose element type is a tile block's BSTART DataType (the data the op reads): the shape
/// tile's, the source's (conversions, TDEQUANT), or the left matrix's (matmuls).
enum class StartTypeFrom : uint8_t { ShapeTile, Source, Lhs };
StartTypeFrom startTypeFrom(const OpInfo& op);

/// TAXPY's (destination, source) element types: (f16, f16), (f32, f32) and (f32, f16).
bool axpyPairSupported(DType dst, DType src);

/// TCVT: is (src -> dst) supported on the arch? (seed 003 table / reference 3.6)
bool cvtSupported(Arch a, DType src, DType dst);

} // namespace pto::isa
