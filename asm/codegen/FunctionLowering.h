// The code generator's shared state (internal to asm/): the machine-instruction type that
// instruction selection hands to register allocation and emission, and the per-function lowering
// class whose members are defined by job in Lower.cpp (driver, values, control flow),
// LowerScalar.cpp (integer and floating-point scalar code), LowerTiles.cpp (views, tiles, tile
// blocks, sync), RegAlloc.cpp (linear scan and spill code) and Emit.cpp (frame, layout,
// encoding). docs/abi.md describes what they produce.
#pragma once

#include "asm/codegen/GmAddress.h"
#include "asm/ir/IR.h"
#include "isa/Encoding.h"
#include "isa/Fixpipe.h"
#include "isa/ScalarFp.h"
#include "obj/Object.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pto::as::lower {

using namespace pto::ir;
namespace enc = isa::enc;
using enc::FormId;

using VReg = uint32_t;
inline constexpr VReg kNoVReg = ~0u;

// GPR selectors (docs/encoding.md "GPR naming"): zero, sp, a0..a7, ra, s0..s8, x0..x3.
inline constexpr unsigned kZero = 0, kSp = 1, kA0 = 2, kRa = 10, kX0 = 20;
// x1..x3 are reserved as scratch for spill code and 64-bit constants.
inline constexpr unsigned kScratch[] = {21, 22, 23};
inline constexpr unsigned kMaxRegParams = 8;

/// A register operand of a machine instruction: which field holds it, the virtual register,
/// and whether the instruction writes it.
struct RegRef {
  enc::FieldName field; // a literal name is checked when it compiles (isa/Encoding.h)
  VReg v;
  bool def;
};

/// What few machine instructions carry beyond their word: register operands, a callee, and
/// frame offsets known only after allocation. Kept beside the instructions
/// (FunctionLowering::extras_) so that the many words without any cost none of it.
struct MInstExtra {
  std::vector<RegRef> regs;
  unsigned paramReg = 0; // ParamDef: the ABI register holding the parameter on entry
  // Frame offsets known only after allocation: a stack parameter's index, or the byte offset
  // of an event-id array in the array area (which follows the spill slots).
  int stackParam = -1;
  int arrayBase = -1;
  int outArg = -1;       // a call's outgoing argument slot (the call-argument area)
  std::string callee;    // Call relocation target
  int32_t gmAccess = -1; // a tile block's GM access: its index in FunctionLowering::gmPlanned_
};

/// The distinct words of one function, each kept once (a function of a million tile ops has a
/// few dozen distinct words): a machine instruction names its word by index. Index 0 is the
/// default enc::Inst.
class InstPool {
public:
  InstPool() { intern(enc::Inst{}); }
  uint32_t intern(const enc::Inst& inst);
  const enc::Inst& operator[](uint32_t i) const { return insts_[i]; }
  size_t size() const { return insts_.size(); }

private:
  static size_t hash(const enc::Inst& inst);
  void grow();
  std::vector<enc::Inst> insts_;
  std::vector<uint32_t> slots_; // open addressing: an index into insts_, or ~0u
};

/// A relocation of a word: its type and the tile or event index.
using MReloc = std::pair<obj::RelocType, uint32_t>;

/// A machine instruction in 32 bytes (issue #34 item 5: 6 of them per tile op): its kind, its
/// word (an index into the function's InstPool), a label, the source location its first word
/// carries (line table), its relocations (a run of the function's MReloc list: most tile ops
/// have a few, so they are not extras), and what rarely goes with it (an index into the
/// function's extras).
struct MInst;
using MCode = std::deque<MInst>;

struct MInst {
  static constexpr uint32_t kNoExtra = ~0u;
  enum Kind : uint8_t { Word, Label, Jump, CondJump, ParamDef } kind = Word;
  enum Frame : uint8_t {
    None,
    BlockStart,
    SpAdjust,
    RaSave,
    RaRestore
  } frame = None;            // prologue/epilogue
  bool clobbersRegs = false; // a call, or the argument loads right before it
  uint8_t relocCount = 0;    // relocations at relocAt in the function's MReloc list
  uint32_t inst = 0;         // index into the function's InstPool
  int label = -1;            // Label: its id; Jump/CondJump: the target
  SrcLoc loc;                // first word of a source op carries it (line table)
  uint32_t extra = kNoExtra; // index into the function's MInstExtra, or kNoExtra
  uint32_t relocAt = 0;
};

/// A GM view in registers: base address, and per dimension the stride in elements.
/// The row-major contiguous strides of a static shape, in elements (wrapping, never undefined,
/// for shapes beyond 2^63 elements: dimensions are at most 2^40 each, not their product).
inline std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] =
        static_cast<int64_t>(static_cast<uint64_t>(strides[d]) * static_cast<uint64_t>(shape[d]));
  return strides;
}

struct ViewRegs {
  VReg base = kNoVReg;
  std::vector<ValueId> strides;      // values (constants are rematerialized at use)
  std::vector<int64_t> constStrides; // for tensor-view parameters (static row-major strides)
  isa::DType elem = isa::DType::F32;
  bool dn = false; // column-major (layout DN): the elements of a column are adjacent
};

/// A partition in registers: the byte address of its first element and the stride in bytes
/// between its rows (ND) or its columns (DN). Dimensions before the last two that span more than
/// one element (`outer`) make the partition a stack of 2-D slices, moved one TLOAD/TSTORE each.
struct PartRegs {
  VReg addr = kNoVReg;
  VReg rowStride = kNoVReg;
  bool dn = false;
  ValueId source = kNoValue; // the view it partitions
  struct Outer {
    int64_t size;
    VReg strideBytes;
  };
  std::vector<Outer> outer;
  int64_t sliceRows = 0, sliceCols = 0; // the last two dimensions (static) when `outer` is set
  // A partition of more than two dimensions with a size known only at run time: the dimensions
  // before the last two (sizes as values) are walked by emitted loops, one TLOAD/TSTORE per
  // slice into its rows of the tile through a view bound at run time (TASSIGN).
  struct DynOuter {
    ValueId size;
    VReg strideBytes;
  };
  std::vector<DynOuter> dynOuter;
  ValueId sliceRowsV = kNoValue, sliceColsV = kNoValue; // the last two sizes, when dynOuter is set
};

/// The valid shape of a tile as the code generator knows it: a constant or a value.
struct Dim {
  int64_t constant = 0;
  ValueId value = kNoValue;
  VReg computed = kNoVReg; // a register the lowering computed it in (a subset's clamped valid)
  bool dynamic() const { return value != kNoValue || computed != kNoVReg; }
};

class FunctionLowering {
public:
  FunctionLowering(const Function& fn, uint32_t index, isa::Arch arch, DiagEngine& diags,
                   obj::ObjectFile& obj)
      : fn_(fn), index_(index), diags_(diags), obj_(obj) {
    obj_.arch = arch;
  }

  bool run();

  /// run() frees the top-level ops of `body` (the function's own, writable) as it lowers them.
  void releaseOpsOf(Region* body) { release_ = body; }
  obj::Function& result() { return out_; }
  std::vector<uint8_t>& text() { return text_; }
  std::vector<obj::Reloc>& relocs() { return relocs_; }
  std::vector<obj::LineEntry>& lines() { return lines_; }
  /// The GM access records of the function's tile blocks (offsets into its text).
  std::vector<obj::GmAccess>& gmAccesses() { return gmAccesses_; }

private:
  // ------------------------------------------------------------ errors
  void unsupported(SrcLoc loc, const std::string& what);
  /// The start word's data-type code for a tile block of `dtype`, or nothing (reported at `loc`).
  std::optional<unsigned> blockTypeCode(SrcLoc loc, isa::DType dtype);
  /// A value the code generator has no home for. After an error this is the error's echo (the
  /// refused op defined nothing), so only the first refusal is reported, not its consequences.
  void missing(SrcLoc loc, const std::string& what);

  // ------------------------------------------------------------ emission helpers
  VReg newVReg() { return nextVReg_++; }

  MInst& emit(enc::Inst inst, std::vector<RegRef> regs = {});
  /// A word not yet in code_.
  MInst word(const enc::Inst& inst) {
    MInst m;
    m.inst = pool_.intern(inst);
    return m;
  }
  const enc::Inst& instOf(const MInst& m) const { return pool_[m.inst]; }
  void setInst(MInst& m, const enc::Inst& inst) { m.inst = pool_.intern(inst); }
  /// The instruction's extras, made on first use.
  MInstExtra& extra(MInst& m);
  const MInstExtra* extraOf(const MInst& m) const {
    return m.extra == MInst::kNoExtra ? nullptr : &extras_[m.extra];
  }
  const std::vector<RegRef>& regsOf(const MInst& m) const;
  /// Gives `m` one more relocation (kept in one run with its others).
  void addReloc(MInst& m, obj::RelocType type, uint32_t index);

  enc::Inst make(FormId f, std::initializer_list<enc::FieldValue> fields);

  /// Scalar instructions execute inside a scalar block; open one after a tile block.
  void needScalarBlock();

  /// A scalar instruction with register fields (vregs, or physical registers via physical()).
  void scalar(FormId f, std::initializer_list<enc::FieldValue> fields, std::vector<RegRef> regs);

  void copy(VReg dst, VReg src);

  int newLabel() { return nextLabel_++; }
  void placeLabel(int label);
  /// Starts a block whose end jumps to `label` (unconditionally or when the commit condition
  /// set by a SETC in the block is true).
  void startBranchBlock(int label, bool conditional);

  /// A conditional exit: a COND block of its own that computes the commit condition and leaves
  /// for `label` when it holds. A COND block transfers at its end, so the guarded code must not
  /// share it: the block is closed right after the condition (docs/abi.md, "Control flow").
  template <class EmitCondition>
  void conditionalExit(int label, SrcLoc loc, EmitCondition emitCondition) {
    pendingLoc_ = loc; // the test belongs to the structured op's line
    startBranchBlock(label, true);
    emitCondition();
    inScalarBlock_ = false;
  }

  // ------------------------------------------------------------ values
  /// The register holding a scalar value. Constants are rematerialized at every use (they cost
  /// one or two instructions and never occupy a register across the program).
  VReg reg(ValueId v);

  VReg define(ValueId v);

  void materialize(VReg r, uint64_t bits);

  std::optional<int64_t> constantInt(ValueId v) const;

  /// Raw bits of a constant: integers sign-extended, floats as their IEEE (or bf16) pattern,
  /// hex literals as written.
  std::optional<uint64_t> constantBits(const Op& op);

  // ------------------------------------------------------------ parameters (docs/abi.md)

  void addParam(ValueId a);

  void lowerParams();
  /// Whether a view parameter of unknown shape is used only through its base address
  /// (memref.reinterpret_cast's source, a 1-D view's scalar loads and stores).
  bool onlyBaseUses(ValueId v) const;
  /// lowerRegion of the function's body that frees each op once it is lowered.
  void lowerReleasing(Region& body);

  // ------------------------------------------------------------ regions and ops
  void lowerRegion(const Region& r);

  void lowerOp(const Op& op);

  // ------------------------------------------------------------ scalar arithmetic
  void lowerArith(const Op& op);

  // ------------------------------------------------------------ scalar floating point
  // The 0.58.3 FSU forms compute in FP32 (.fs) or FP64 (.fd). f16 and bf16 values live in the low
  // 16 bits of a register (zero-extended); they are widened to FP32 exactly, computed there and
  // rounded once back (for +, -, *, / and compares this equals the operation in the narrow type:
  // FP32 carries more than twice their precision plus two bits). docs/abi.md "Floating point".

  VReg constant(uint64_t bits);

  /// `r` (a value of type t) in the unit's compute type: FP64 for f64, else FP32.
  VReg widen(VReg r, isa::DType t);

  static unsigned computeType(isa::DType t) {
    return t == isa::DType::F64 ? isa::kFpSrcF64 : isa::kFpSrcF32;
  }

  /// A value of the compute type rounded (to nearest even) into `dst`'s format, into `d`.
  void narrowInto(VReg d, VReg r, isa::DType from, isa::DType dst);

  void fpu(FormId f, unsigned type, std::initializer_list<VReg> srcs, VReg d);

  static bool scalarFloat(isa::DType t);

  void lowerFloat(const Op& op, ArithOp arith);
  bool foldConstant(const Op& op, ArithOp arith);

  /// cmpf: the FSU compares are ordered (a NaN operand gives 0); the unordered predicates are
  /// their complements, ord/uno test each operand against itself.
  void lowerCmpF(const Op& op);

  /// Keeps narrow integers sign-extended in their 64-bit registers (i1 as 0/1).
  void normalize(VReg r, const Type& t);
  /// A zero-extended copy of a narrow integer (the register itself for 64-bit types).
  VReg zeroExtended(VReg r, const Type& t);
  void zeroExtend(VReg r, const Type& from);

  /// ceil/floor division from DIV and REM: q + (r != 0 && (r < 0) == (b < 0)) for ceil,
  /// q - (r != 0 && (r < 0) != (b < 0)) for floor.
  void lowerRoundingDiv(const Op& op, ArithOp arith);

  void lowerCmp(const Op& op);

  // ------------------------------------------------------------ control flow
  void lowerFor(const Op& op);

  static const Op* terminator(const Region& r, OpKind kind);

  void lowerIf(const Op& op);

  void lowerWhile(const Op& op);

  // ------------------------------------------------------------ values carried across regions
  // A value that crosses a region boundary (iter_args, scf.if and scf.while results) has one
  // home that every incoming edge writes: a scalar its register; a tensor view its base register
  // (strides must agree on every edge); a partition its address and stride registers (its static
  // shape must agree); a tile one descriptor, the first incoming tile's, into which a different
  // tile arriving on another edge is copied with TMOV (tiles are buffers: docs/abi.md).

  /// Gives `home` a fresh home initialised from `from` (the first incoming edge).
  bool bindHome(ValueId home, ValueId from, SrcLoc loc);

  /// The result of a loop shares the home of its iter_arg.
  void shareHome(ValueId result, ValueId home);

  static std::vector<VReg*> partRegs(PartRegs& p);

  /// An edge into the homes: homes[i] = srcs[i] for all i at once (a value may feed another
  /// position, as in a swap).
  /// `loop`: the yield of an scf.for or scf.while body, written in the block that jumps back.
  void yieldTo(const std::vector<ValueId>& homes, const std::vector<ValueId>& srcs, SrcLoc loc,
               bool loop = false);

  bool sameStrides(const ViewRegs& a, const ViewRegs& b) const;
  static bool sameShape(const PartRegs& a, const PartRegs& b);

  /// home <- src as a TMOV block (both have the yielded value's type, so the same shape).
  void copyTile(uint32_t home, ValueId src, SrcLoc loc);

  /// The return block, preceded by the epilogue (frame release, ra restore). Whether a frame
  /// is needed is known only after register allocation: layout() drops what is not needed.
  void emitReturn(SrcLoc);

  /// A call: arguments go through the call-argument area of the frame into a0..a7 (so that no
  /// argument overwrites another), values live across the call are kept in the frame (the
  /// callee may use every register), and the result comes back in a0 (docs/abi.md).
  void lowerSignal(const Op& op);
  void lowerSyncAll(const Op& op);
  void lowerCall(const Op& op);
  void lowerReturn(const Op& op);
  void lowerGetValidShape(const Op& op);
  std::optional<VReg> validExtentReg(const Dim& d, ValueId tile, SrcLoc loc);
  void lowerGetStride(const Op& op, size_t dim);
  std::optional<VReg> descAddress(uint32_t idx);
  bool tileAbiValues(ValueId tile, SrcLoc loc, const std::string& use, std::vector<VReg>& out);
  void bindTileResult(ValueId result, const std::vector<VReg>& regs);

  // ------------------------------------------------------------ views
  bool viewLayout(const Op& op, size_t stridesAt, size_t rank, ViewRegs& v);
  void lowerReinterpret(const Op& op);
  void lowerMakeView(const Op& op);

  void lowerGetDim(const Op& op);

  static size_t sliceRowsDim(const Type& pt, size_t rank, bool dn);
  void lowerPartition(const Op& op);
  /// A whole tensor view used as a GM operand: the partition at offset zero with the view's
  /// shape. Computed at each use (the registers of one use may not dominate the next).
  std::optional<PartRegs> wholeViewPartition(const Op& op, ValueId view);

  VReg strideReg(const ViewRegs& v, size_t i);
  VReg packPair(VReg lo, VReg hi);

  /// dst = base + elems * bits / 8.
  void addScaled(VReg dst, VReg base, VReg elems, unsigned bits);
  void scaleToBytes(VReg dst, VReg elems, unsigned bits);

  // ------------------------------------------------------------ tiles
  uint32_t addTile(ValueId v, obj::TileDesc d);
  /// Whether one more tile descriptor fits the 64 that B.IOT can index; reports at `loc` if not.
  bool tileDescFits(SrcLoc loc);

  static obj::TileDesc descOf(const TileType& t);

  void lowerAlloc(const Op& op);

  void lowerView(const Op& op);

  void lowerAssign(const Op& op);
  void lowerTGetVal(const Op& op);
  void lowerTrap(const Op& op);
  void lowerPrint(const Op& op);

  std::optional<uint32_t> tileIndex(ValueId v, SrcLoc loc);

  // ------------------------------------------------------------ tile blocks
  /// The register of a dynamic bound, resolved before the tile block starts (a constant is
  /// rematerialized by scalar code, which must not land inside the block).
  VReg dimReg(const Dim& d) {
    return d.computed != kNoVReg ? d.computed : d.value == kNoValue ? kNoVReg : reg(d.value);
  }
  /// A subset's valid extent along one axis, as PTOAS gives it when its parent's valid shape or
  /// its offset is known only at run time: the parent's valid extent less the offset, within
  /// 0..size.
  Dim subsetValid(const Dim& parent, ValueId offset, int64_t size);

  /// B.DIM for one loop bound: an immediate, or a GPR (dynamic valid shapes).
  void dim(unsigned lb, const Dim& d, VReg r);

  std::pair<Dim, Dim> validOf(ValueId tile);

  /// Op attributes the tile block has no field for: any value but the one the runtime and the
  /// NPU default to is refused here, at its source line, rather than dropped.
  bool attributesEncodable(const Op& op, const isa::OpInfo& info);

  void lowerTileOp(const Op& op);

  bool isDn(ValueId view) const;

  /// A TLOAD/TSTORE whose partition has more than two non-unit dimensions: one block per 2-D
  /// slice (the last two dimensions), each into its rows of the tile through an alias
  /// descriptor. The tile must be row-major without boxes, so a slice's rows are contiguous.
  void lowerSlicedTransfer(const Op& op, const isa::OpInfo& info, const enc::TileOpInfo& eop,
                           const PartRegs& p, ValueId tile);

  int64_t rootPlacement(uint32_t idx) const;
  void lowerDynamicSlices(const Op& op, const isa::OpInfo& info, const enc::TileOpInfo& eop,
                          const PartRegs& p, ValueId tile);
  /// Nested loops over `dims` (count, stride in bytes each), outermost first; `body` runs in the
  /// innermost with the slice's GM address. Loop registers stay live through each loop.
  void sliceLoops(const std::vector<PartRegs::DynOuter>& dims, size_t k, VReg gm, SrcLoc loc,
                  const std::function<void(VReg)>& body);
  /// A TASSIGN block: tile `idx` is at the byte address (a view: offset in its parent) in `addr`.
  void emitTileBind(uint32_t idx, VReg addr);
  /// A descriptor placed at run time, copied from `idx` (kept a view of its parent if it is one).
  uint32_t runtimeTile(ValueId v, uint32_t idx);
  void lowerRuntimeSubset(const Op& op, obj::TileDesc d, const TileType& src);
  TileType storageShape(ValueId tile, uint32_t desc) const;
  void checkOnBoxGrid(VReg offset, uint32_t box, unsigned shift, SrcLoc loc);
  void lowerMultiTileGet(const Op& op);
  void setSubsetValid(const Op& op);

  std::optional<enc::Datr> datrFor(const Op& op, const isa::OpInfo& info, ValueId dst);

  // ------------------------------------------------------------ cross-core pipes (LowerPipes.cpp)
  struct PipeState {
    uint8_t flagBase = 0, dirMask = 1;
    std::optional<uint32_t> buf; // this core's reserved slot buffer (a tile), if bound
    bool bufIsV2C = false;
    bool gmEntries = false;           // slots are GM tensor views (gm_slot_tensor)
    std::vector<int64_t> slotStrides; // gmEntries: the slot view's strides, in elements
  };
  void lowerReserve(const Op& op);
  bool isCubeFunction() const;
  void lowerPipeInit(const Op& op);
  void lowerPipeData(const Op& op);
  void lowerDeclareGlobal(const Op& op);
  void lowerPipeEntry(const Op& op, const PipeState& pipe);
  bool gmEntryInit(const Op& op, PipeState& pipe);
  void bindTiles(const std::vector<uint32_t>& idx);
  void bindTiles(const std::vector<uint32_t>& idx, const std::vector<bool>& reloc);
  void markSubblockZero(isa::Arch arch);
  std::map<ValueId, PipeState> pipes_;
  std::set<ValueId> imported_;

  // ------------------------------------------------------------ sync and runtime ids
  uint32_t eventIndex(const Op& op);

  bool sliceable(const Op& op, const isa::OpInfo& info, const TileType& tt);
  void lowerCoreSync(const Op& op);
  void lowerSync(const Op& op);

  void lowerBlockInfo(const Op& op);

  void lowerScalarMemory(const Op& op);

  /// Event-id arrays live in the stack frame, 8 bytes per entry.
  void lowerEventArray(const Op& op);

  // ------------------------------------------------------------ register allocation
  struct Interval {
    VReg v;
    size_t start, end;
    int reg = -1;
    int slot = -1;
    int fixedReg = -1;
  };

  void allocateRegisters();

  /// Replaces virtual registers by physical ones; spilled values go through scratch registers
  /// with loads before and stores after the instruction.
  /// A word that belongs to a block's header (B.DIM, B.IOR, B.IOT, B.DATR, ...): scalar code for
  /// it cannot go next to it, only before the block starts or after it ends.
  bool isHeaderWord(const MInst& m) const;
  bool startsBlock(const MInst& m) const;

  /// Replaces virtual registers by physical ones; spilled values go through the scratch
  /// registers x1..x3: loaded before the instruction and stored after it. For the header words
  /// of a block the loads go before the block (in a scalar block of their own) and the stores
  /// after its BSTOP, since scalar instructions inside a tile block would end it.
  void rewrite(std::map<VReg, Interval>& iv);
  void assignInPlace(std::map<VReg, Interval>& iv);

  // ------------------------------------------------------------ layout and encoding
  void layout();

  /// Stack parameters sit just above the frame; event-id arrays follow the spill slots; call
  /// arguments use the call-argument area.
  void patchFrameOffsets(uint32_t frame);

  /// With a frame, the function starts by reserving it (and saving ra when it calls) and every
  /// return releases it; without one, the placeholders emitted at returns are dropped.
  void placeFrameCode(uint32_t frame);

  unsigned wordBytes(const MInst& m) const;
  void releaseCode();

  const Function& fn_;
  uint32_t index_;
  DiagEngine& diags_;
  obj::ObjectFile& obj_;
  obj::Function out_;
  std::vector<uint8_t> text_;
  std::vector<obj::Reloc> relocs_;
  std::vector<obj::LineEntry> lines_;
  // GM access records (GmAddress.h): the tracker, the access of the tile op being lowered (its
  // blocks' start words get it), the records by extra index, the records with their offsets.
  std::unique_ptr<GmAddressTracker> gm_;
  std::optional<obj::GmAccess> currentGm_;
  std::vector<obj::GmAccess> gmPlanned_, gmAccesses_;
  /// Gives a tile block's start word the GM access of the op being lowered, if it has one.
  MInst& withGmAccess(MInst& start);
  support::InternedString obj_source_;
  bool ok_ = true;
  Region* release_ = nullptr; // releaseOpsOf
  // The machine code and its relocations grow a block at a time (std::deque): a doubling vector
  // left room for as many again at pto-as's peak (#34 item 5).
  MCode code_;
  InstPool pool_;
  std::vector<MInstExtra> extras_;
  std::deque<MReloc> mrelocs_; // the words' relocations, a run per word (MInst::relocAt)
  VReg nextVReg_ = 0;
  int nextLabel_ = 0;
  bool inScalarBlock_ = false;
  SrcLoc currentLoc_, pendingLoc_;
  std::map<ValueId, VReg> vregs_;
  std::map<ValueId, uint64_t> constants_;
  std::map<ValueId, ViewRegs> views_;
  std::map<ValueId, std::vector<ValueId>> dynamicShapes_; // make_tensor_view shape operands
  std::map<ValueId, PartRegs> parts_;
  std::map<ValueId, uint32_t> tiles_;
  std::map<ValueId, std::pair<Dim, Dim>> valid_;
  std::map<uint32_t, VReg> runtimeAddr_; // descriptors placed at run time: the bound register
  std::map<ValueId, uint32_t> arrays_;
  uint32_t arrayBytes_ = 0;
  std::vector<std::pair<size_t, size_t>> loops_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> eventIds_;
  int spillSlots_ = 0;
  bool hasCalls_ = false;
  uint32_t callArea_ = 0;

public:
  void setSourceName(std::string name) { obj_source_ = std::move(name); }
};

} // namespace pto::as::lower
