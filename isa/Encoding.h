// PTO ISA 0.58.3 command words: a table-driven encoder, decoder, canonical printer and parser
// for single instruction words (16/32/48/64 bits), plus the pto-toolchain extension space.
// All facts come from isa/Encoding.def (see docs/encoding.md). Errors are values.
#pragma once

#include "isa/Fixpipe.h"
#include "isa/Isa.h"
#include "support/Result.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace pto::isa::enc {

// ---------------------------------------------------------------- result type
template <typename T> using Result = pto::Result<T>; // support/Result.h

// ---------------------------------------------------------------- codes
/// The 5-bit DataType codes (reference 3.1). 31 = DTYPE_NONE (field sentinel).
inline constexpr unsigned kDataTypeNone = 31;
struct DataTypeInfo {
  unsigned code;
  std::string_view name; // FP32, S8, U4X2, DTYPE_NONE ...
  unsigned bits;
  std::optional<DType> ours;
};
std::span<const DataTypeInfo> allDataTypes();
const DataTypeInfo* dataTypeInfo(unsigned code); // nullptr for reserved codes
bool isConcreteDataType(unsigned code);          // {0-14, 16-20, 24-28}
std::optional<unsigned> dataTypeCode(DType t);   // our element type -> code
std::optional<DType> dtypeOfCode(unsigned code);
/// Accepts the spec names (case-insensitive) and our dtype spellings (f32, i8, ...).
std::optional<unsigned> parseDataType(std::string_view text);

/// B.DATR.RMode code for a public CAST_* rounding mode (reference 3.3; never the ordinal).
unsigned rmodeCode(RoundMode m);
std::string_view rmodeName(unsigned code);
unsigned cmodeCode(CmpMode m); // EQ 0, NE 1, LT 2, GT 3, LE 4, GE 5
unsigned padCode(PadValue p);  // Zero 0, Max 1, Min 2, Null 3
std::optional<unsigned> layoutCode(std::string_view name);
std::string_view layoutName(unsigned code);   // "" when reserved
unsigned pipeCode(Pipe p);                    // extension control pipe code
std::optional<Pipe> pipeOfCode(int64_t code); // its inverse (nullopt: no such pipe)

/// GPR selectors 0..23 (zero, sp, a0..a7, ra, s0..s8, x0..x3; see Encoding.def).
inline constexpr unsigned kNumGprs = 24;
std::string_view gprName(unsigned index);                // "" if >= 24
std::optional<unsigned> parseGpr(std::string_view text); // ABI names and R0..R23

/// PEMode <-> 4-bit PE mask (PE0 is the most significant digit); only 8 masks encode.
std::optional<unsigned> peModeOfMask(unsigned mask4);
unsigned maskOfPeMode(unsigned peMode);
inline constexpr unsigned kPeModeAll = 7; // mask 1111

// ---------------------------------------------------------------- forms
enum class FormId : uint16_t {
#define PTO_ENC_FORM(Id, Bits, Match, Mask, Status, Group, Flow, Syntax) Id,
#define PTO_ENC_FIELD(Form, Name, Kind, Sign, P0, P1, P2, Dom)
#include "isa/Encoding.def"
};

enum class FieldKind : uint8_t {
  UInt,
  SInt,
  Gpr,
  SReg,
  Tile,
  Hand,
  PeMask,
  Last,
  DType,
  Layout,
  Pad,
  CMode,
  RMode,
  Label,
  LoopNest,
  BrType,
  TraceBE,
  RTypeNeg,
  RTypeNot,
  Shamt,
  Hidden,
  FpType, // scalar float source: fd (FP64), fs (FP32)
  IntSrc, // scvtf/ucvtf integer source: d (64-bit), w (32-bit)
  FpDst,  // scalar float destination format (DataType order 0..14: fd, fs, ..., fh, bf16, ...)
  IntDst  // fcvtz integer destination: ud uw uh ub u4 u2 u1 b1 sd sw sh sb s4 s2 s1
};
enum class FormStatus : uint8_t { Accepted, ReservedInPto };
enum class FormGroup : uint8_t { Cmd, Scalar, Ext };
/// A form's place in the block structure (the Flow column of Encoding.def, docs/abi.md).
enum class Flow : uint8_t { None, Stop, Fall, Op, Direct, Cond, Ret, Call, Indirect, ByBrType };

/// An instruction field by name (the PTO_ENC_FIELD_NAME table of Encoding.def): a form has a
/// subset of them (FormInfo::fields).
enum class Field : uint8_t {
#define PTO_ENC_FIELD_NAME(Name) Name,
#include "isa/Encoding.def"
};
inline constexpr std::string_view kFieldNames[] = {
#define PTO_ENC_FIELD_NAME(Name) #Name,
#include "isa/Encoding.def"
};
inline constexpr size_t kNumFields = std::size(kFieldNames);
std::string_view name(Field f);
/// The field of a name held at run time (text being parsed), or nullopt.
std::optional<Field> fieldNamed(std::string_view name);

/// A field named in code: Field::PipeA, or the literal "PipeA", which is looked up at compile
/// time (a name that is no field does not compile: the lookup throws in a constant expression).
struct FieldName {
  Field id;
  constexpr FieldName(Field f) : id(f) {}
  consteval FieldName(const char* text) : id(lookup(text)) {}

private:
  static consteval Field lookup(std::string_view text) {
    for (size_t i = 0; i < kNumFields; ++i)
      if (kFieldNames[i] == text) return static_cast<Field>(i);
    throw "no instruction field has this name (isa/Encoding.def, PTO_ENC_FIELD_NAME)";
  }
};

struct Piece {
  uint8_t instrLsb = 0, width = 0, valueLsb = 0;
};
struct Domain {
  enum class Kind : uint8_t { Any, Set, Range, NotEq } kind = Kind::Any;
  uint64_t set = 0;
  int64_t lo = 0, hi = 0;
  bool contains(int64_t v) const;
};
struct FieldInfo {
  Field id{};
  std::string_view name;
  FieldKind kind = FieldKind::UInt;
  bool isSigned = false;
  std::vector<Piece> pieces;
  unsigned width = 0;     // value width (highest value bit + 1)
  uint64_t valueMask = 0; // value bits that are encoded
  Domain domain;
};
struct FormInfo {
  FormId id;
  std::string_view idName; // "B_IOT_S2D"
  unsigned bits;           // 16, 32, 48, 64
  uint64_t match, mask;
  FormStatus status;
  FormGroup group;
  Flow flow;
  std::string_view syntax;
  std::vector<FieldInfo> fields;
  int labelField = -1; // index of the Label field (branch and call offsets), -1 when none
  std::string_view mnemonic() const; // first word of the canonical text ("B.IOT", "add", "@TEPL")
  /// Whether a word of this form starts a block (every BSTART* form, 32- or 16-bit).
  bool startsBlock() const { return flow != Flow::None && flow != Flow::Stop; }
  bool stopsBlock() const { return flow == Flow::Stop; }
  int fieldIndex(std::string_view name) const; // -1 if absent (a name from text)
  int fieldIndex(Field f) const { return slot[static_cast<size_t>(f)]; } // -1 if absent
  bool has(Field f) const { return fieldIndex(f) >= 0; }
  std::array<int8_t, kNumFields> slot{}; // per Field: its index in `fields`, or -1
};
std::span<const FormInfo> allForms();
const FormInfo& info(FormId id);

// ---------------------------------------------------------------- instructions
inline constexpr unsigned kMaxFields = 12;
/// One instruction word as fields: form + field values in the form's field order.
struct Inst {
  FormId form = FormId::BSTOP;
  std::array<int64_t, kMaxFields> field{};

  const FormInfo& formInfo() const { return info(form); }
  /// The block start's flow with ByBrType resolved (FALL -> Fall, RET -> Ret, else Indirect);
  /// Flow::None / Flow::Stop for the other words.
  Flow flow() const;
  /// The byte offset of the Label field from this word (2 x the field), when the form has one.
  std::optional<int64_t> labelOffset() const;
  /// The field's value; nullopt when the form has no such field.
  std::optional<int64_t> get(FieldName f) const {
    const int i = formInfo().fieldIndex(f.id);
    if (i < 0) return std::nullopt;
    return field[static_cast<size_t>(i)];
  }
  /// Sets the field; false (not to be ignored) when the form has no such field.
  [[nodiscard]] bool set(FieldName f, int64_t value) {
    const int i = formInfo().fieldIndex(f.id);
    if (i < 0) return false;
    field[static_cast<size_t>(i)] = value;
    return true;
  }
  /// Sets a field that the form has by construction (a word builder's): a field it lacks is a
  /// bug in the builder, reported on stderr and fatal, never a word with the field left 0.
  void put(FieldName f, int64_t value);
  bool operator==(const Inst&) const = default;
};

struct Encoded {
  uint64_t value = 0;
  unsigned bits = 32;
  uint32_t word32() const { return static_cast<uint32_t>(value); }
  bool operator==(const Encoded&) const = default;
};

struct DecodeOptions {
  bool extensions = false; // accept the pto-toolchain extension space (Group Ext)
};

/// Encodes; fails when a field value does not fit its width or violates its 0.58.3 domain, or
/// when a tile start names a selector hole.
Result<Encoded> encode(const Inst& inst);
/// Decodes one instruction of `bits` bits (value as in Encoded). Strict 0.58.3 semantics:
/// the highest-priority matching form (most mask bits) decides; reserved field values,
/// reserved-in-pto forms, TEPL selector holes and reserved DataTypes are rejected.
Result<Inst> decode(uint64_t value, unsigned bits, DecodeOptions opts = {});
inline Result<Inst> decode32(uint32_t word, DecodeOptions opts = {}) {
  return decode(word, 32, opts);
}
/// Instruction length from the first halfword(s) in memory (little-endian): 16, 32, 48 or 64.
/// `second` is the next halfword when available (needed for the fused BSTART.CALL).
unsigned lengthOf(uint16_t first, std::optional<uint16_t> second = std::nullopt);
/// Decodes the instruction at the start of `bytes`; sets `consumed` to its size in bytes.
Result<Inst> decodeBytes(std::span<const uint8_t> bytes, size_t& consumed, DecodeOptions opts = {});

/// Canonical assembly text (reference 5.3), e.g. "B.IOT T#1, T#2, mask=1111, last, ->T<1>".
std::string format(const Inst& inst);
/// Parses canonical text back to fields (also accepts BSTART.TEPL m, f, DT, R0..R23 and the
/// documented aliases). The result is encodable iff encode() accepts it.
Result<Inst> parse(std::string_view text, DecodeOptions opts = {});

/// Convenience: text of a decoded word, or "<error>" text.
std::string disassemble(uint64_t value, unsigned bits, DecodeOptions opts = {});

// ---------------------------------------------------------------- tile operations
enum class TileOp : uint16_t {
#define PTO_ENC_TILEOP(Name, Family, Engine, Mode, Function, Start, Ours) Name,
#define PTO_ENC_XOP(Name, Xop, Ours) Name,
#include "isa/Encoding.def"
};
enum class TileFamily : uint8_t { TEPL, TLSU, CUBE, EXT };
enum class TileEngine : uint8_t { VEC, SFU, TLSU, CUBE, EXT };
struct TileOpInfo {
  TileOp op;
  std::string_view name;
  TileFamily family;
  TileEngine engine;
  unsigned mode;     // TEPL mode
  unsigned function; // TEPL function, TLSU/CUBE function, or extension XOP
  FormId startForm;
  std::optional<OpId> ours;
  unsigned selector() const { return mode << 5 | function; }
};
std::span<const TileOpInfo> allTileOps();
const TileOpInfo& info(TileOp op);
const TileOpInfo* findTileOp(std::string_view name); // spec name (TADD, TMATMUL_ACC, TAXPY...)
/// The encoding of one of our ops (Ops.def): a 0.58.3 selector or an extension XOP.
const TileOpInfo* tileOpFor(OpId op);
/// The start word of a tile block: BSTART.VEC/SFU (TEPL), the named TLSU/CUBE start, or
/// BSTART.EXT for extension ops.
Inst tileStart(TileOp op, unsigned dataTypeCode);
std::optional<TileOp> tileOpOf(const Inst& start);
std::optional<unsigned> dataTypeOf(const Inst& start);
/// The 0.58.3 start-word formula of a catalog op (reference 2.2), for conformance checks.
uint32_t catalogStartWord(TileOp op, unsigned dataTypeCode);

// ---------------------------------------------------------------- extension control ops
enum class ExtCtl : uint8_t {
  None = 0,
#define PTO_ENC_XCTL(Name, Ctl, NumPipes) Name = Ctl,
#include "isa/Encoding.def"
};
std::string_view name(ExtCtl c);
unsigned numPipes(ExtCtl c);
Inst extControl(ExtCtl c, Pipe a = Pipe::S, Pipe b = Pipe::S);

// ---------------------------------------------------------------- word builders
/// B.DIM <gpr>, <imm>, ->LB<lb>: the loop bound is (GPR + imm)[15:0]. imm < 2^17.
Inst bDim(unsigned lb, unsigned gpr, uint32_t imm);
/// B.IOR src0, src1, src2, ->dst (GPR selectors; 0 = zero).
Inst bIor(unsigned src0, unsigned src1 = 0, unsigned src2 = 0, unsigned dst = 0);
/// Source-form B.IOT: one or two 6-bit tile indices (0..63 = T#1..N#16).
Inst bIot(unsigned tile0, std::optional<unsigned> tile1, bool last, unsigned peMode = kPeModeAll);
/// B.TBANK: B.IOT operands after it in the block name descriptors bank * kTilesPerBank + field.
inline constexpr unsigned kTilesPerBank = 64;
inline constexpr unsigned kTileBanks = 512;
Inst bTbank(unsigned bank);
/// Destination-form B.IOT: optional sources, a destination hand (0 T, 1 U, 2 M, 3 N), SizeCode.
Inst bIotDst(std::optional<unsigned> tile0, std::optional<unsigned> tile1, unsigned hand,
             unsigned sizeCode, bool last, unsigned peMode = kPeModeAll);
struct Datr {
  unsigned layout = 0, dataType = 0, pad = 0, cmode = 0, rmode = 0;
  bool sat = false, canonicalize = false;
};
Inst bDatr(const Datr& d);
/// The fixpipe words of a TMOV/TSTORE block (docs/encoding.md 5.3): B.FPATR with the pre-quant
/// and relu modes (every other field 0), B.XATR with atomic add, store phase, acc-to-vec mode.
Inst bFpatr(const fix::Attrs& a);
Inst bXatr(const fix::Attrs& a);
/// Reads those words back into `a` (the fields of the other word are left as they are); an
/// error for a B.FPATR field a TMOV/TSTORE does not use or a mode not executed here.
std::optional<std::string> readFpatr(const Inst& in, fix::Attrs& a);
std::optional<std::string> readXatr(const Inst& in, fix::Attrs& a);
Inst bstop();
/// BSTART DIRECT/COND with a byte offset from this word (must be even).
Inst bstartDirect(int64_t byteOffset);
Inst bstartCond(int64_t byteOffset);
/// A scalar (or any) form with named fields; fails on a field the form does not have.
struct FieldValue {
  FieldName field;
  int64_t value = 0;
};
Result<Inst> make(FormId form, std::initializer_list<FieldValue> fields);
/// The same with names held at run time (looked up then); fails on an unknown name. A template,
/// so that a braced list of literal names takes the overload above, checked at compile time.
Result<Inst> makeNamed(FormId form, std::span<const std::pair<std::string_view, int64_t>> fields);
template <class = void>
Result<Inst> make(FormId form, std::initializer_list<std::pair<std::string_view, int64_t>> fields) {
  return makeNamed(form, std::span(fields.begin(), fields.size()));
}
/// Scalar instructions that put `value` in GPR `rd` (uses `scratch` only for values that need
/// both halves): ADDI / HL.LIS / HL.LIU, or HL.LUI + HL.LIU + OR for full 64-bit constants.
std::vector<Inst> materialize64(unsigned rd, uint64_t value, unsigned scratch);

// ---------------------------------------------------------------- ISA identity note
/// The .note.pto.isa descriptor (UTF-8 JSON, sorted keys, no whitespace, no NUL). Without
/// extensions it is exactly the 0.58.3 identity (reference 6). With extensions it adds
/// "extensions":["pto-toolchain-ext-v1"], so a strict 0.58.3 linker/loader (which requires an
/// exactly equal identity) refuses the object instead of misreading extension words.
std::string isaNoteDescriptor(bool usesExtensions);
inline constexpr std::string_view kExtensionName = "pto-toolchain-ext-v1";

} // namespace pto::isa::enc

namespace pto::isa::trapword {
/// The trap words (docs/abi.md): `add zero, s<<k, ->zero`, a shifted add from `zero` into `zero`
/// that the code generator emits for nothing else; both backends stop on it at its line, the C++
/// export writes __builtin_trap(). k = 1: an scf.for whose step `s` is not positive would run;
/// k = 2 (s = zero): pto.trap; k = 3 / 4: a view of a boxed tile whose run-time row / column offset
/// `s` is off its inner box grid.
inline constexpr unsigned kStepShift = 1, kTrapShift = 2, kBoxRowShift = 3, kBoxColShift = 4;
} // namespace pto::isa::trapword
