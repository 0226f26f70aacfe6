// The Kernel IR: what every textual form lowers to. Functions hold typed scalar SSA values,
// structured control flow (regions), tiles (a tile_buf type plus an optional manual placement),
// tile ops (one isa::OpId each, operands in DPS order: inputs then outputs) and sync ops.
// Every op and value carries its source location.
#pragma once

#include "isa/Fixpipe.h"
#include "isa/Isa.h"
#include "isa/OpAttrs.h"
#include "isa/TileLayout.h"
#include "support/Diagnostics.h"
#include "support/ThinVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace pto::ir {

using as::SrcLoc;
inline constexpr int64_t kDynamic = -1; // a `?` dimension
/// A pto.partition_view's third int: the partition may leave its tensor view on purpose. Only
/// the builder makes one, for the rows a collective stacks past its local view as pto-isa does
/// (asm/parse/BuildComm.cpp); every access still meets the runtime's bounds check.
inline constexpr int64_t kPartitionPastView = 1;

/// A tile buffer type (!pto.tile_buf / !pto.tile): location, element type, physical shape,
/// valid shape (static or kDynamic), layouts, fractal size, pad and compact mode.
struct TileType {
  isa::Loc loc = isa::Loc::Vec;
  isa::DType dtype = isa::DType::F32;
  int64_t rows = 0, cols = 0;
  int64_t validRows = 0, validCols = 0;
  isa::BLayout blayout = isa::BLayout::RowMajor;
  isa::SLayout slayout = isa::SLayout::NoneBox;
  int64_t fractal = 512;
  isa::PadValue pad = isa::PadValue::Null;
  isa::CompactMode compact = isa::CompactMode::Null;
  bool operator==(const TileType&) const = default;
  /// Bytes occupied by the physical tile.
  uint64_t byteSize() const;
};

enum class TypeKind : uint8_t {
  None,
  Index,        // index
  Scalar,       // iN / fN (elem)
  Ptr,          // !pto.ptr<elem>
  TensorView,   // !pto.tensor_view<shape x elem>
  PartView,     // !pto.partition_tensor_view<shape x elem>
  Tile,         // !pto.tile_buf<...>
  EventIdArray, // !pto.eventid_array<N> (shape[0] = N); !pto.local_array<..> (localArray)
  Pipe,         // !pto.pipe: a cross-core pipe, defined by its init op (never flows)
  Vector,       // vector<4xi16>: tmrgsort's executed-count list, 64 bits in one register
  AsyncSession, // !pto.async_session: defined by pto.build_async_session (never flows)
  AsyncEvent,   // !pto.async_event: defined by pto.tput_async / tget_async (never flows)
  // !pto.multi_tile_buf<T, count=N>: N slots of tile type T laid out back to back; `tile` is
  // the storage (T with N times its rows, the bytes of all slots), shape[0] = N. Only
  // pto.multi_tile_get reads it (a slot, of type T).
  MultiTile,
  // A local memref type whose dimensions or strides are `?` or not the contiguous row-major ones
  // (`memref<?x?xf16, strided<[?, ?], offset: ?>, #pto.address_space<vec>>`): it names no tile
  // by itself. Only a memref.reinterpret_cast of a local buffer, whose constant operands give
  // the shape and strides, makes a value it may annotate (elem, shape with kDynamic, tile.loc).
  LocalView,
};

struct Type {
  Type() = default;
  Type(TypeKind k, isa::DType e = isa::DType::F32, std::vector<int64_t> s = {}, TileType t = {})
      : kind(k), elem(e), shape(std::move(s)), tile(t) {}
  TypeKind kind = TypeKind::None;
  isa::DType elem = isa::DType::F32;
  std::vector<int64_t> shape; // views (kDynamic = ?), eventid_array size
  TileType tile;
  // A GM memref type whose layout spells other strides or an offset (`strided<[?, 1], offset:
  // ?>`): only a memref.reinterpret_cast result has them (its operands give the strides).
  bool strided = false;
  // An EventIdArray that is PTOAS's `!pto.local_array<D0x...xT>` (elem T, shape the dims): a
  // stack array of scalars, one 8-byte slot per element like an event-id array's.
  bool localArray = false;
  bool operator==(const Type&) const = default;

  static Type index() { return {TypeKind::Index}; }
  static Type scalar(isa::DType t) { return {TypeKind::Scalar, t}; }
  static Type ptr(isa::DType t) { return {TypeKind::Ptr, t}; }
  static Type tileOf(const TileType& t) { return {TypeKind::Tile, t.dtype, {}, t}; }
  static Type multiTileOf(const TileType& slot, int64_t count) {
    TileType storage = slot;
    storage.rows *= count;
    return {TypeKind::MultiTile, slot.dtype, {count}, storage};
  }
  /// A multi_tile_buf's slot type.
  TileType slotTile() const {
    TileType slot = tile;
    if (kind == TypeKind::MultiTile && !shape.empty() && shape[0] > 0) slot.rows /= shape[0];
    return slot;
  }
  bool isTile() const { return kind == TypeKind::Tile; }
  bool isView() const { return kind == TypeKind::TensorView || kind == TypeKind::PartView; }
  /// A value in one scalar register (a vector<4xi16> too: four 16-bit lanes, lane i in bits
  /// 16i+15..16i, the layout of the merge unit's count register).
  bool isScalarLike() const {
    return kind == TypeKind::Index || kind == TypeKind::Scalar || kind == TypeKind::Vector;
  }
  static Type mrgSortCounts() { return {TypeKind::Vector, isa::DType::I16, {4}}; }
  bool isIntLike() const {
    return kind == TypeKind::Index || (kind == TypeKind::Scalar && !isa::isFloat(elem));
  }
  bool isFloatScalar() const { return kind == TypeKind::Scalar && isa::isFloat(elem); }
};

/// Canonical text of a type, as pto-as --emit=ir prints it (compact tile_buf syntax).
std::string toString(const Type& t);

struct Op;
/// pto.print's format (its `format` attribute, an MLIR string) as bytes; nothing when absent or
/// not a string. An op without one prints its value alone (isa::print::formatted).
std::optional<std::string> printFormat(const Op& op);
/// The element type pto.print prints a value of type `t` as: index as i64, i1 as i32 (0 or 1).
isa::DType printedType(const Type& t);

/// The element of its parent a subset at (r, c) starts at (its byte offset is this times the
/// element size): the parent's element offset of (r, c) (isa/TileLayout.h), a view keeping the
/// parent's pitch; past the parent's rows or columns, the pitch's continuation (r * cols + c, or
/// c * rows + r for a column-major parent), which the bounds checks then judge.
uint64_t subsetElement(const TileType& parent, uint64_t r, uint64_t c);

/// The refusal of a subset of a boxed tile whose offsets are not on its inner box grid (the
/// code generator and the reference interpreter say the same).
std::string boxedSubsetOffsetError(const std::string& op, uint64_t r, uint64_t c,
                                   isa::InnerBox box);

/// A position in the frontend's source (an MLIR FileLineColLoc): `file` is 1-based into
/// Module::locFiles (0: none known, as for loc(unknown) or a name without a child).
struct FrontendPos {
  uint32_t file = 0;
  uint32_t line = 0, col = 0;
  bool known() const { return file != 0; }
};

/// One MLIR debug location as written (`loc(#loc3)`, `loc("rope.py":23:8)`, ...): its text in
/// Module::locText, where the .pto has it, and what it resolves to (docs/language.md, "Debug
/// locations"): the position a person reads first and, for a callsite, its callers, innermost
/// first (Module::locCallers[callersBegin, callersBegin + callersCount)).
struct FrontendLoc {
  uint32_t textBegin = 0, textLen = 0;
  SrcLoc at;
  FrontendPos pos;
  uint32_t callersBegin = 0, callersCount = 0;
};

/// `#name = loc(...)`: printed back after the module, as MLIR prints it.
struct LocAlias {
  std::string name; // without '#'
  uint32_t loc = 0; // index into Module::frontLocs
};

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = ~0u;

struct Value {
  std::string name; // without '%'
  Type type;
  SrcLoc loc;            // where it is defined
  uint32_t frontLoc = 0; // index into Module::frontLocs (0: none); function and block arguments
};

/// A named attribute kept as canonical text (printed back and re-parsed by pto-as).
struct NamedAttr {
  std::string key;
  std::string value; // empty for unit attributes
};

/// The tile-op attributes that change what the op computes, typed once by the front end (the
/// op's attrs keep their canonical text, in source order, for printing only).
/// A GM view's `layout` attribute (make_tensor_view, memref.reinterpret_cast), parsed once by the
/// front end: absent (inferred from constant strides, as PTOAS does), ND, DN, or a spelling the
/// code generator does not support (its text stays in `attrs` for the message).
enum class ViewLayout : uint8_t { Inferred, ND, DN, Unsupported };
/// Any spelling (#pto.layout<dn>, #pto<layout dn>, dn, ...): its first word after `pto` and
/// `layout`, case-insensitive.
ViewLayout parseViewLayout(std::string_view text);

/// A tile op's attribute of isa/OpAttrs.def, read once from its text by the parser
/// (as::readTileOpAttributes): every layer past the parser reads this, never the text.
struct AttrReading {
  isa::OpAttrId id;
  std::optional<int64_t> value; // in the row's domain (isa::AttrDomain); nullopt: not in it
  bool isDefault = false;       // the row's default value (isa::isDefaultAttrValue)
  std::string text;             // as written, canonical: for messages
  bool operator==(const AttrReading&) const = default;
};

struct TileModes {
  std::optional<isa::RoundMode> round; // rmode: TCVT's rounding (absent: CAST_RINT)
  std::optional<isa::SatMode> sat;     // sat_mode: TCVT's saturation (absent: the pair's default)
  std::optional<isa::CmpMode> cmp;     // cmpMode: TCMP/TCMPS's comparison (absent: eq)
  std::optional<int64_t> rounds;       // rounds: TRANDOM's Philox rounds (absent: the default)
  /// The attributes encoded as B.IOR scalars after the operands' (the Ior rows of
  /// isa/OpAttrs.def: exhausted, maskPattern, offset, descending, upperOrLower).
  std::vector<uint64_t> ior;
  std::vector<AttrReading> readings; // the op's attributes of isa/OpAttrs.def
  // The fixpipe attributes of TMOV/TSTORE (absent: the default, isa/Fixpipe.h).
  std::optional<isa::ReluPreMode> relu;      // reluPreMode
  std::optional<isa::AtomicType> atomic;     // atomicType (TSTORE)
  std::optional<isa::StPhase> phase;         // stPhase
  std::optional<isa::AccToVecMode> accToVec; // accToVecMode (TMOV acc -> vec)
  bool operator==(const TileModes&) const = default;
};

/// The ops that share an OpKind and differ by name (asm/ir/NamedOps.def); None for the others.
enum class NamedOp : uint8_t {
  None,
#define PTO_NAMED_OP(id, name) id,
#include "asm/ir/NamedOps.def"
#undef PTO_NAMED_OP
};
/// The row of an op name ("pto.syncall"), or None.
NamedOp findNamedOp(std::string_view name);

/// The arith ops (asm/ir/Arith.def); None for an op that is not one.
enum class ArithOp : uint8_t {
  None,
#define PTO_ARITH(id, spelling, cls) id,
#include "asm/ir/Arith.def"
#undef PTO_ARITH
};
/// What an arith op's operands are: integers, floats, a compare, select, a cast.
enum class ArithClass : uint8_t { IntBinary, FloatBinary, FloatUnary, CmpI, CmpF, Select, Cast };
struct ArithDef {
  ArithOp op;
  std::string_view name; // after "arith."
  ArithClass cls;
};
/// The arith op `name` ("arith.addi"...), or null when it is not an arith op.
const ArithDef* findArith(std::string_view name);
const ArithDef& arithDef(ArithOp op);
/// The predicates of arith.cmpi (I*) and arith.cmpf (F*) (asm/ir/Arith.def).
enum class CmpPredicate : uint8_t {
  None,
#define PTO_CMPI_PRED(id, spelling) I##id,
#define PTO_CMPF_PRED(id, spelling) F##id,
#include "asm/ir/Arith.def"
#undef PTO_CMPI_PRED
#undef PTO_CMPF_PRED
};
/// The predicate `spelling` of a cmpi (float false) or cmpf (float true), or nullopt.
std::optional<CmpPredicate> findCmpPredicate(bool isFloat, std::string_view spelling);
std::string_view spelling(CmpPredicate p);

/// The attributes of pto.reserve_buffer / import_reserved_buffer and of the pipe init ops, read
/// from their text once by the parser (readPipeAttrs); absent ones are nullopt / empty.
struct PipeAttrs {
  std::string name, peerFunc; // the buffer's name and the importing function's peer (no @)
  std::string frontend;       // "aic" / "aiv": the front-end init op an internal one came from
  std::optional<int64_t> size, autoAlloc, base; // reserve_buffer (autoAlloc: `auto`)
  std::optional<isa::Loc> location;             // #pto.address_space<vec|mat> (else absent)
  std::optional<int64_t> dirMask, slotSize, slotNum, localSlotNum, flagBase, noSplit; // init
  bool operator==(const PipeAttrs&) const = default;
};

enum class OpKind : uint8_t {
  // scalar
  Constant, // Op::constant (setConstant); attrs: value text; result type
  Arith,    // name = "arith.addi" etc. (Op::arith); binary, unary casts, cmpi/cmpf (Op::predicate),
            // select
  // control flow
  For,       // operands: lb, ub, step, inits...; regions[0] args: iv, iter values
  If,        // operands: cond; regions: then, else (else may be empty)
  While,     // operands: inits; regions: before (ends with Condition), after
  Condition, // scf.condition(%c) args...
  Yield,     // scf.yield
  Call,      // func.call @callee
  Return,    // return
  Section,   // pto.section.vector|cube; name holds the kind
  // GM views, tiles, scalars
  MakeTensorView,  // operands: ptr, shape..., strides...; numShape
  ReinterpretView, // memref.reinterpret_cast: operands view, offset, sizes..., strides...; rank
  PartitionView,   // operands: view, offsets..., sizes...; ints rank, rank[, kPartitionPastView]
  GetTensorViewDim,
  AllocTile,     // optional operands tagged by attrs addr/valid_row/valid_col
  Subset,        // operands: src, offsets...; sizes in ints
  Reshape,       // pto.treshape
  Bitcast,       // pto.bitcast
  SetValidShape, // operands: tile, vr, vc
  GetValidShape, // pto.get_validshape (results vr, vc) / tile_valid_rows / tile_valid_cols (name)
  MultiTileGet,  // pto.multi_tile_get: operands multi_tile_buf, slot -> the slot's tile
  TAssign,       // operands: tile, addr -> result (or in place for fragments)
  LoadScalar,
  StoreScalar,
  AddPtr,
  BlockInfo, // get_block_idx/num, get_subblock_idx/num (name)
  TGetVal,
  DeclareEventIdArray, // also pto.declare_local_array (name)
  EventIdArrayGet,     // operands: array, indices... (one per dimension)
  EventIdArraySet,     // operands: array, indices..., value
  Print,               // pto.print / pto.trap (name); pto.tprint is the tile op TPRINT
  // tile computation
  TileOp, // tileOp; operands in signature order, roles[] says which role each fills
  // cross-core pipes (docs/pipes.md)
  ReserveBuffer,  // pto.reserve_buffer: attrs name, size, location, auto[, base]; result i32
  ImportReserved, // pto.import_reserved_buffer: attrs name, peer_func; result i32
  PipeInit,  // initialize_l2g2l_pipe / initialize_l2l_pipe (name): operands [gm,] local[, peer];
             // ints {hasGm, gmEntries}; attrs dir_mask, slot_size, slot_num[, local_slot_num,
             // flag_base, nosplit]; result !pto.pipe. A GM-entry pipe (gmEntries, PTOAS's
             // gm_slot_tensor) has one operand: the tensor view of one slot at the ring's base.
  PipePush,  // pto.tpush(tile or GM entry, pipe) {split}: ints {split}
  PipePop,   // pto.tpop(tile or GM entry, pipe) {split}: ints {split}
  PipeFree,  // pto.tfree([GM entry,] pipe) {split}: ints {split}
  PipeAlloc, // pto.talloc(GM entry, pipe) {split}: ints {split}
  DeclareGlobal, // pto.declare_global -> !pto.tensor_view: a GM entry a talloc / tpop binds
  // synchronisation
  SetFlag, // src/dst pipe, event
  WaitFlag,
  CoreSync, // pto.sync.set/wait (cross-core flag), pto.get_buf/rls_buf (A5 buffer token): name
  Barrier,  // pipe
  // signals in GM (PTOAS's pto.comm.tnotify / twait / ttest): name; operands: the signal (a
  // one-element i32 view), the value; ints {mode}: for tnotify 0 set, 1 add; for twait and ttest
  // the comparison, an isa::CmpMode. ttest has an i1 result.
  Signal,
  // PTOAS's data-moving comm ops (pto.tput, pto.tget, the collectives; asm/parse/BuildComm.cpp):
  // name as written; operands in PTOAS's order; ints {custom form, tiles, group size}; attrs
  // atomicType / reduceOp / root. regions[0] is what it does in machine ops (TLOAD, TSTORE,
  // TADD/TMAX/TMIN, barriers), lowered and interpreted in its place.
  Comm,
  // PTOAS's asynchronous comm ops (pto.build_async_session, pto.tput_async / tget_async,
  // pto.wait_async_event / test_async_event, also pto.comm.*; asm/parse/BuildAsyncComm.cpp):
  // name as written; ints {generic form}; attrs the session's as written. A put's or get's
  // regions[0] is its copy (TLOAD, TSTORE, barriers), complete when issued; a wait or test
  // yields true.
  AsyncComm,
};

/// Event id of a set/wait: a constant hardware id, a symbolic name resolved by the linker,
/// or a dynamic operand.
struct EventRef {
  enum class Kind : uint8_t { Const, Symbolic, Dynamic } kind = Kind::Const;
  int id = 0;
  std::string symbol;
  bool operator==(const EventRef&) const = default;
};

/// A payload few ops carry, kept out of line so that an Op stays small (a module may hold a
/// million tile ops): reading an absent one sees T's default; edit() makes it, and assigning
/// T's default frees it. Copies are deep.
template <typename T> class OutOfLine {
public:
  OutOfLine() = default;
  OutOfLine(const OutOfLine& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  OutOfLine(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(const OutOfLine& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  OutOfLine& operator=(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(T v) {
    if (v == T{})
      p_.reset();
    else
      p_ = std::make_unique<T>(std::move(v));
    return *this;
  }
  const T& operator*() const { return p_ ? *p_ : kDefault; }
  const T* operator->() const { return &**this; }
  T& edit() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }

private:
  static inline const T kDefault{};
  std::unique_ptr<T> p_;
};

/// An arith.constant's value, read once from its canonical literal (readConstant) where the op
/// is made; the literal's text stays in the op's attrs, for printing only.
struct ConstantValue {
  enum class Kind : uint8_t {
    None,  // no reader supports it (a decimal float of a type without an IEEE format: f8...)
    Bool,  // true / false: bits 1 / 0
    Int,   // an integer of any integer type or index, or a 0x bit pattern (of a float type too):
           // its value as written, two's complement in 64 bits (hex as written, never octal)
    Float, // a decimal of f16 / bf16 / f32 / f64: its pattern in the type's width, rounded once
           // to nearest even (f32 straight from the decimal, never through a double)
    Dense, // vector<4xi16>: lane i in bits 16i+15..16i
  };
  Kind kind = Kind::None;
  uint64_t bits = 0;
  /// Its integer value (Int and Bool), else nullopt.
  std::optional<int64_t> integer() const {
    if (kind != Kind::Int && kind != Kind::Bool) return std::nullopt;
    return static_cast<int64_t>(bits);
  }
};
/// The value of a canonical literal (as the builder normalizes it) of a constant of `type`.
ConstantValue readConstant(std::string_view text, const Type& type);

struct Op;
struct Region {
  std::vector<ValueId> args;
  std::vector<std::unique_ptr<Op>> ops;
};

/// One op. The fields every op has come first, packed; the payloads of a few kinds live out of
/// line (OutOfLine: read with ->, written with edit()).
struct Op {
  OpKind kind;
  ArithOp arith = ArithOp::None;               // for Arith: which op, from its name
  CmpPredicate predicate = CmpPredicate::None; // for cmpi / cmpf
  NamedOp named = NamedOp::None;               // the ops told apart by name only
  isa::OpId tileOp{};                          // for TileOp
  ViewLayout layout = ViewLayout::Inferred;    // MakeTensorView, ReinterpretCast
  // sync
  isa::Pipe srcPipe = isa::Pipe::All, dstPipe = isa::Pipe::All;
  SrcLoc loc;
  SrcLoc typeLoc;         // the type annotation, for type errors
  uint32_t frontLoc = 0;  // its debug location: index into Module::frontLocs (0: none)
  ConstantValue constant; // Constant: its value, typed
  std::string name;       // arith op name, section kind, block-info name, callee...
  std::vector<ValueId> operands;
  std::vector<SrcLoc> operandLocs;   // parallel to operands
  std::vector<int16_t> operandRoles; // TileOp: index into OpInfo::roles per operand
  std::vector<ValueId> results;
  // Empty on most ops: one pointer each while empty (support/ThinVector.h).
  support::ThinVector<Region> regions;
  support::ThinVector<NamedAttr> attrs; // canonical attribute text (rmode, sat_mode, ...)
  support::ThinVector<int64_t> ints;    // small integer payload (subset sizes, view shape counts)
  OutOfLine<TileModes> modes;           // TileOp: the attributes with meaning, typed
  OutOfLine<PipeAttrs> pipe;            // ReserveBuffer, ImportReserved, PipeInit
  OutOfLine<EventRef> event;            // SetFlag, WaitFlag, CoreSync, a tile op's record / wait

  const NamedAttr* attr(std::string_view key) const;
};

struct Function {
  std::string name;
  SrcLoc loc;
  bool isDeclaration = false;
  bool isPrivate = false;
  bool isFragment = false; // synthesised from bare top-level statements
  bool isEntry = false;    // marked pto.entry (a `kernel`, a fragment)
  /// pto.kernel_kind: absent, #pto.kernel_kind<vector> or <cube>, or another value (Invalid,
  /// which the verifier reports).
  enum class KernelKind : uint8_t { None, Vector, Cube, Invalid } kernelKind = KernelKind::None;
  uint32_t frontLoc = 0; // index into Module::frontLocs (0: none)
  std::vector<NamedAttr> attrs;
  std::vector<Type> resultTypes;
  Region body;               // body.args are the function arguments
  std::vector<Value> values; // indexed by ValueId

  ValueId addValue(std::string name, Type type, SrcLoc loc) {
    values.push_back({std::move(name), std::move(type), loc, 0});
    return static_cast<ValueId>(values.size() - 1);
  }
  const Value& value(ValueId id) const { return values[id]; }
  const Type& type(ValueId id) const { return values[id].type; }
  bool hasAttr(std::string_view key) const;
};

struct Module {
  std::string fileName;
  std::vector<NamedAttr> attrs;
  std::optional<isa::Arch> targetArch; // from pto.target_arch
  SrcLoc targetArchLoc;
  std::vector<std::unique_ptr<Function>> functions;
  // MLIR debug locations. frontLocs[0] stands for "none"; the texts are stored back to back in
  // locText (a module may carry a million of them), the file names once each.
  std::vector<FrontendLoc> frontLocs = std::vector<FrontendLoc>(1);
  std::string locText;
  std::vector<std::string> locFiles;
  std::vector<FrontendPos> locCallers;
  std::vector<LocAlias> locAliases;
  uint32_t frontLoc = 0; // the module's own
  /// Records a location's text; returns its index into frontLocs.
  uint32_t addFrontLoc(std::string_view text, SrcLoc at);
  std::string_view frontLocText(uint32_t id) const {
    const FrontendLoc& l = frontLocs[id];
    return std::string_view(locText).substr(l.textBegin, l.textLen);
  }
  /// `file:line:col` (`file:line` without a column); empty when unknown.
  std::string posText(FrontendPos p) const;
  /// A resolved location as reports show it: its position, then each caller's, innermost first;
  /// empty when it has no position.
  std::vector<std::string> placeTexts(uint32_t id) const;
  /// The same on one line, as the object's line table records it: `rope.py:23:8` or
  /// `rope.py:23:8 (called from model.py:88:2)`; empty when it has no position.
  std::string placeLine(uint32_t id) const;
};

/// The .pto line of each op, argument, function and module with a debug location that has a
/// position -> its index into Module::frontLocs (0: none; the first one on a line wins), and the
/// lines of locations whose op is not in the IR. Indexed by line, sized to the last such line.
std::vector<uint32_t> frontLocsByLine(const Module& m);

/// Calls fn(op) for every op in the region, depth first, in program order.
template <typename Fn> void walk(const Region& r, Fn&& fn) {
  for (const auto& op : r.ops) {
    fn(*op);
    for (const Region& sub : op->regions)
      walk(sub, fn);
  }
}

/// The pipe a tile op executes on: the op table's default, refined by operand locations for
/// TMOV/TEXTRACT/TINSERT/TSTORE and by arch for TSCATTER (ptoas-syntax.md section 2).
isa::Pipe pipeOf(const Function& fn, const Op& op, isa::Arch arch);

/// The tile operand filling the named role of a tile op, or nullptr.
const TileType* roleTile(const Function& fn, const Op& op, isa::RoleId role);
ValueId roleValue(const Op& op, isa::RoleId role);
/// The value whose element type is a tile op's BSTART DataType (isa::startTypeFrom): the shape
/// tile (the source when there is none), the source, or the left matrix (the source without
/// one).
ValueId startTypeTile(const Op& op, const isa::OpInfo& info, ValueId shapeTile, ValueId src);

/// The fixpipe attributes of a TMOV/TSTORE (isa/Fixpipe.h): the modes as written, and the
/// pre-quant mode pto-isa's NPU code picks for the tile types and the quant operand (defaults
/// for any other op). The code generator encodes them, the reference interpreter runs them.
isa::fix::Attrs fixpipeAttrs(const Function& fn, const Op& op);
/// MGATHER's / MSCATTER's mode word (isa::gm, its B.IOR scalar) from the attributes' word
/// `word` and what only the operands' types tell: the coalesce mode the shapes imply and the
/// table's capacity (rows in row mode, elements in element mode), when an out-of-bounds policy
/// needs them; or why they cannot be known (valid shapes known only at run time, no coalesce
/// attribute). The code generator and the reference interpreter both take the word from here.
std::variant<uint64_t, std::string> gmModeWord(const Function& fn, const Op& op, uint64_t word);

/// The op's attribute `id` of isa/OpAttrs.def as the parser read it, or null when it has none.
const AttrReading* attrReading(const Op& op, isa::OpAttrId id);

/// A `dense<[a, b, c, d]>` / `dense<v>` literal of vector<4xi16> as one register: lane i in bits
/// 16i+15..16i (each lane -32768..65535, kept modulo 2^16); nullopt when malformed.
std::optional<uint64_t> denseCountsBits(std::string_view text);
/// Its canonical text, `dense<[a, b, c, d]>` (each lane as written, unsigned 16-bit).
std::string denseCountsText(uint64_t bits);

/// Makes `op` an arith.constant of the canonical literal `text` for a result of `type`: its
/// value attribute (printed) and its value (read once, readConstant).
void setConstant(Op& op, std::string text, const Type& type);

/// Records the arch in the module (pto.target_arch), replacing any previous value, so that
/// the printed IR verifies the same way without the --arch flag.
void setTargetArch(Module& m, isa::Arch arch);

/// Prints the module in the canonical text form (MLIR style, DPS tile ops, compact tile_buf
/// types). pto-as parses it back to the same IR.
std::string print(const Module& m);

} // namespace pto::ir
