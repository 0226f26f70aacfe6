// Lowering of verified Kernel IR to a PTO object (docs/abi.md): the driver, values and
// constants, parameters, the walk over regions, structured control flow and the values carried
// across regions. The other jobs of asm/codegen/FunctionLowering.h's FunctionLowering live beside
// this file.
#include "asm/codegen/CodeGen.h"
#include "asm/codegen/FunctionLowering.h"
#include "asm/codegen/InlineTiles.h"

#include "isa/Numerics.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_map>

namespace pto::as::lower {

bool FunctionLowering::run() {
  out_.name = fn_.name;
  if (fn_.isEntry || fn_.isFragment) out_.flags |= obj::kEntry;
  if (!fn_.resultTypes.empty()) out_.flags |= obj::kReturnsValues;
  if (fn_.isPrivate) out_.flags |= obj::kPrivate;
  if (fn_.isDeclaration) out_.flags |= obj::kDeclaration;
  if (fn_.kernelKind != Function::KernelKind::None)
    out_.flags |=
        fn_.kernelKind == Function::KernelKind::Cube ? obj::kKernelCube : obj::kKernelVector;
  if (!fn_.isDeclaration) {
    markSubblockZero(obj_.arch);
    lowerParams();
    gm_ = std::make_unique<GmAddressTracker>(fn_, [this](ValueId v) { return constantInt(v); });
    const bool returns = !fn_.body.ops.empty() && fn_.body.ops.back()->kind == OpKind::Return;
    if (release_)
      lowerReleasing(*release_);
    else
      lowerRegion(fn_.body);
    if (ok_ && !returns) emitReturn(fn_.loc);
    if (ok_) allocateRegisters();
    if (ok_) layout();
  } else {
    for (ValueId a : fn_.body.args)
      addParam(a);
  }
  return ok_;
}

void FunctionLowering::unsupported(SrcLoc loc, const std::string& what) {
  diags_.error(loc, what + " is not supported by the code generator");
  ok_ = false;
}

/// A value the code generator has no home for. After an error this is the error's echo (the
/// refused op defined nothing), so only the first refusal is reported, not its consequences.
void FunctionLowering::missing(SrcLoc loc, const std::string& what) {
  if (ok_) unsupported(loc, what);
}

size_t InstPool::hash(const enc::Inst& inst) {
  size_t h = static_cast<size_t>(inst.form) * 0x9E3779B97F4A7C15ull;
  for (int64_t f : inst.field)
    h = (h ^ static_cast<uint64_t>(f)) * 0x100000001B3ull + (h >> 29);
  return h;
}

void InstPool::grow() {
  slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, ~0u);
  const size_t mask = slots_.size() - 1;
  for (uint32_t i = 0; i < insts_.size(); ++i) {
    size_t at = hash(insts_[i]) & mask;
    while (slots_[at] != ~0u)
      at = (at + 1) & mask;
    slots_[at] = i;
  }
}

uint32_t InstPool::intern(const enc::Inst& inst) {
  if ((insts_.size() + 1) * 2 > slots_.size()) grow(); // at most half full
  const size_t mask = slots_.size() - 1;
  size_t at = hash(inst) & mask;
  for (; slots_[at] != ~0u; at = (at + 1) & mask)
    if (insts_[slots_[at]] == inst) return slots_[at];
  slots_[at] = static_cast<uint32_t>(insts_.size());
  insts_.push_back(inst);
  return slots_[at];
}

MInstExtra& FunctionLowering::extra(MInst& m) {
  if (m.extra == MInst::kNoExtra) {
    m.extra = static_cast<uint32_t>(extras_.size());
    extras_.emplace_back();
  }
  return extras_[m.extra];
}

void FunctionLowering::addReloc(MInst& m, obj::RelocType type, uint32_t index) {
  if (m.relocCount > 0 && m.relocAt + m.relocCount != mrelocs_.size()) {
    // Another word's relocations came since: the run moves to the end (the old one is dropped).
    const uint32_t from = m.relocAt;
    m.relocAt = static_cast<uint32_t>(mrelocs_.size());
    for (uint32_t k = 0; k < m.relocCount; ++k)
      mrelocs_.push_back(mrelocs_[from + k]);
  }
  if (m.relocCount == 0) m.relocAt = static_cast<uint32_t>(mrelocs_.size());
  mrelocs_.push_back({type, index});
  ++m.relocCount;
}

const std::vector<RegRef>& FunctionLowering::regsOf(const MInst& m) const {
  static const std::vector<RegRef> none;
  const MInstExtra* e = extraOf(m);
  return e ? e->regs : none;
}

MInst& FunctionLowering::emit(enc::Inst inst, std::vector<RegRef> regs) {
  MInst m = word(inst);
  if (!regs.empty()) extra(m).regs = std::move(regs);
  if (pendingLoc_.valid()) {
    m.loc = pendingLoc_;
    pendingLoc_ = {};
  }
  code_.push_back(std::move(m));
  return code_.back();
}

enc::Inst FunctionLowering::make(FormId f, std::initializer_list<enc::FieldValue> fields) {
  auto r = enc::make(f, fields);
  if (!r) {
    diags_.error(currentLoc_, "internal encoding error: " + r.error().message);
    ok_ = false;
    return enc::bstop();
  }
  return *r;
}

/// Scalar instructions execute inside a scalar block; open one after a tile block.
void FunctionLowering::needScalarBlock() {
  if (inScalarBlock_) return;
  emit(make(FormId::BSTART_STD_FALL, {}));
  inScalarBlock_ = true;
}

/// A scalar instruction with register fields (vregs, or physical registers via physical()).
void FunctionLowering::scalar(FormId f, std::initializer_list<enc::FieldValue> fields,
                              std::vector<RegRef> regs) {
  needScalarBlock();
  emit(make(f, fields), std::move(regs));
}

void FunctionLowering::copy(VReg dst, VReg src) {
  scalar(FormId::S_ADDI, {{"uimm12", 0}}, {{"SrcL", src, false}, {"RegDst", dst, true}});
}

void FunctionLowering::placeLabel(int label) {
  MInst m;
  m.kind = MInst::Label;
  m.label = label;
  code_.push_back(std::move(m));
}

/// Starts a block whose end jumps to `label` (unconditionally or when the commit condition
/// set by a SETC in the block is true).
void FunctionLowering::startBranchBlock(int label, bool conditional) {
  MInst m;
  m.kind = conditional ? MInst::CondJump : MInst::Jump;
  m.label = label;
  m.loc = pendingLoc_;
  pendingLoc_ = {};
  code_.push_back(std::move(m));
  inScalarBlock_ = true;
}

/// The register holding a scalar value. Constants are rematerialized at every use (they cost
/// one or two instructions and never occupy a register across the program).
VReg FunctionLowering::reg(ValueId v) {
  if (auto c = constants_.find(v); c != constants_.end()) {
    VReg r = newVReg();
    materialize(r, c->second);
    return r;
  }
  if (auto it = vregs_.find(v); it != vregs_.end()) return it->second;
  if (ok_)
    diags_.error(fn_.value(v).loc,
                 "internal error: value '%" + fn_.value(v).name + "' has no register");
  ok_ = false;
  return newVReg();
}

VReg FunctionLowering::define(ValueId v) {
  VReg r = newVReg();
  vregs_[v] = r;
  return r;
}

void FunctionLowering::materialize(VReg r, uint64_t bits) {
  needScalarBlock();
  for (const enc::Inst& i : enc::materialize64(0, bits, kScratch[2])) {
    std::vector<RegRef> refs;
    const enc::FormInfo& fi = i.formInfo();
    // Only the words writing rd (0 here) define r; the low half of a 64-bit constant goes to
    // the physical scratch register first.
    if (fi.fieldIndex("RegDst") >= 0 && i.get("RegDst").value_or(0) == 0)
      refs.push_back({"RegDst", r, true});
    // The OR of a full 64-bit constant reads and writes the destination.
    if (i.form == FormId::S_OR) refs.push_back({"SrcL", r, false});
    emit(i, refs);
  }
}

std::optional<int64_t> FunctionLowering::constantInt(ValueId v) const {
  auto c = constants_.find(v);
  if (c == constants_.end() || !fn_.type(v).isIntLike()) return std::nullopt;
  return static_cast<int64_t>(c->second);
}

/// Raw bits of a constant (as the front end read it, ir::ConstantValue): integers
/// sign-extended, floats as their IEEE (or bf16) pattern, hex literals as written.
std::optional<uint64_t> FunctionLowering::constantBits(const Op& op) {
  if (op.constant.kind == ir::ConstantValue::Kind::None) return std::nullopt;
  return op.constant.bits;
}

void FunctionLowering::addParam(ValueId a) {
  const Type& t = fn_.type(a);
  obj::Param p;
  p.name = fn_.value(a).name;
  p.dtype = t.elem;
  switch (t.kind) {
  case TypeKind::Ptr:
    p.kind = obj::ParamKind::Pointer;
    break;
  case TypeKind::TensorView:
  case TypeKind::PartView: // a partition passed in: its own contiguous row-major buffer
    p.kind = obj::ParamKind::TensorView;
    p.shape = t.shape;
    break;
  case TypeKind::Index:
  case TypeKind::Tile: // its address in its buffer
    p.kind = obj::ParamKind::Index;
    p.dtype = isa::DType::I64;
    break;
  case TypeKind::Vector: // one register: the four 16-bit lanes (IR.h)
    p.kind = obj::ParamKind::Scalar;
    p.dtype = isa::DType::I64;
    break;
  default:
    p.kind = obj::ParamKind::Scalar;
    break;
  }
  out_.params.push_back(std::move(p));
}

/// Whether every use of `v` is as the source of a memref.reinterpret_cast.
bool FunctionLowering::onlyBaseUses(ValueId v) const {
  // A 1-D view's element i is at base + i whatever its length: scalar loads and stores
  // through it need no shape.
  const bool oneDim = fn_.type(v).shape.size() == 1;
  bool only = true;
  walk(fn_.body, [&](const Op& op) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (op.operands[i] != v) continue;
      const bool reinterpreted = op.kind == OpKind::ReinterpretView && i == 0;
      const bool scalar = oneDim && ((op.kind == OpKind::LoadScalar && i == 0) ||
                                     (op.kind == OpKind::StoreScalar && i == 1));
      if (!reinterpreted && !scalar) only = false;
    }
  });
  return only;
}

void FunctionLowering::lowerParams() {
  const auto& args = fn_.body.args;
  for (size_t i = 0; i < args.size(); ++i) {
    ValueId a = args[i];
    const Type& t = fn_.type(a);
    addParam(a);
    const bool staticShape = std::find(t.shape.begin(), t.shape.end(), kDynamic) == t.shape.end();
    if ((t.kind == TypeKind::PartView && !staticShape) || t.kind == TypeKind::EventIdArray ||
        t.kind == TypeKind::MultiTile) {
      unsupported(fn_.value(a).loc, "a parameter of type " + toString(t) +
                                        (t.kind == TypeKind::PartView
                                             ? " (a partition parameter needs a static shape)"
                                             : ""));
      continue;
    }
    // A view of unknown shape is only its base address: enough for memref.reinterpret_cast
    // (which gives the shape and strides) and a 1-D view's scalar accesses, too little for any
    // other use.
    if (t.kind == TypeKind::TensorView &&
        std::find(t.shape.begin(), t.shape.end(), kDynamic) != t.shape.end() && !onlyBaseUses(a))
      unsupported(fn_.value(a).loc, "a tensor_view parameter with a dynamic shape (other than as "
                                    "the source of memref.reinterpret_cast, or a 1-D view's "
                                    "scalar loads and stores)");
    // A tile comes as its address in its buffer (docs/abi.md, "Tiles across calls"): the
    // parameter's register binds a descriptor placed at run time.
    const bool tile = t.kind == TypeKind::Tile;
    VReg r = tile ? newVReg() : define(a);
    if (i < kMaxRegParams) {
      MInst m;
      m.kind = MInst::ParamDef;
      extra(m).paramReg = kA0 + static_cast<unsigned>(i);
      // A marker, not a word: the register allocator binds r to a0..a7 and writes no field
      // (RegDst only fills the slot).
      extra(m).regs.push_back({"RegDst", r, true});
      code_.push_back(std::move(m));
    } else {
      // Parameters beyond a0..a7 are passed in the caller's frame: [sp + frame + 8*(i-8)],
      // loaded once here (the offset is patched when the frame size is known).
      needScalarBlock();
      extra(emit(make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}}), {{"RegDst", r, true}}))
          .stackParam = static_cast<int>(i - kMaxRegParams);
    }
    if (tile) {
      obj::TileDesc d = descOf(t.tile);
      d.placement = obj::kRuntimePlaced;
      emitTileBind(addTile(a, d), r);
    }
    if (t.kind == TypeKind::TensorView || t.kind == TypeKind::PartView) {
      ViewRegs vr;
      vr.base = r;
      vr.elem = t.elem;
      vr.constStrides = contiguousStrides(t.shape);
      views_[a] = vr;
    }
  }
}

void FunctionLowering::lowerRegion(const Region& r) {
  // Lowering goes on after a refusal so that every refusal is reported in one run; nothing is
  // emitted once ok_ is false.
  for (const auto& op : r.ops) {
    currentLoc_ = op->loc;
    pendingLoc_ = op->loc;
    lowerOp(*op);
  }
}

void FunctionLowering::lowerReleasing(Region& body) {
  for (auto& op : body.ops) {
    currentLoc_ = op->loc;
    pendingLoc_ = op->loc;
    lowerOp(*op);
    op.reset();
  }
  std::vector<std::unique_ptr<Op>>().swap(body.ops);
}

void FunctionLowering::lowerOp(const Op& op) {
  if (gm_) gm_->before(op);
  switch (op.kind) {
  case OpKind::Constant: {
    auto bits = constantBits(op);
    if (!bits) return unsupported(op.loc, "the constant '" + op.attr("value")->value + "'");
    constants_[op.results[0]] = *bits;
    pendingLoc_ = {};
    return;
  }
  case OpKind::Arith:
    return lowerArith(op);
  case OpKind::For:
  case OpKind::While:
    if (gm_) gm_->enterLoop(op);
    op.kind == OpKind::For ? lowerFor(op) : lowerWhile(op);
    if (gm_) gm_->exitLoop();
    return;
  case OpKind::If:
    return lowerIf(op);
  case OpKind::Condition:
  case OpKind::Yield:
    return; // handled by the enclosing structured op
  case OpKind::Return:
    return lowerReturn(op);
  case OpKind::Section:
    out_.flags |= op.named == NamedOp::SectionCube ? obj::kKernelCube : obj::kKernelVector;
    return lowerRegion(op.regions[0]);
  case OpKind::Comm: // a put, get or collective: its TLOAD / TSTORE steps (BuildComm.cpp)
    return lowerRegion(op.regions[0]);
  case OpKind::AsyncComm: // a put's or get's copy; a wait or test of its event yields true
    if (!op.regions.empty()) lowerRegion(op.regions[0]);
    if (op.name.ends_with("_async_event")) constants_[op.results[0]] = 1;
    return;
  case OpKind::MakeTensorView:
    return lowerMakeView(op);
  case OpKind::ReinterpretView:
    return lowerReinterpret(op);
  case OpKind::PartitionView:
    return lowerPartition(op);
  case OpKind::GetTensorViewDim:
    return lowerGetDim(op);
  case OpKind::AllocTile:
    return lowerAlloc(op);
  case OpKind::Subset:
  case OpKind::Reshape:
  case OpKind::Bitcast:
    return lowerView(op);
  case OpKind::GetValidShape:
    return lowerGetValidShape(op);
  case OpKind::MultiTileGet:
    return lowerMultiTileGet(op);
  case OpKind::SetValidShape:
    valid_[op.operands[0]] = {Dim{0, op.operands[1]}, Dim{0, op.operands[2]}};
    pendingLoc_ = {};
    return;
  case OpKind::TAssign:
    return lowerAssign(op);
  case OpKind::LoadScalar:
  case OpKind::StoreScalar:
    return lowerScalarMemory(op);
  case OpKind::AddPtr: {
    VReg p = reg(op.operands[0]), o = reg(op.operands[1]);
    unsigned shift = static_cast<unsigned>(
        std::countr_zero(std::max(1u, isa::bitWidth(fn_.type(op.operands[0]).elem) / 8)));
    scalar(FormId::S_ADD, {{"shamt", shift}},
           {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  case OpKind::BlockInfo:
    return lowerBlockInfo(op);
  case OpKind::TileOp:
    return lowerTileOp(op);
  case OpKind::SetFlag:
  case OpKind::WaitFlag:
  case OpKind::Barrier:
    return lowerSync(op);
  case OpKind::CoreSync:
    return lowerCoreSync(op);
  case OpKind::Signal:
    return op.named == NamedOp::SyncAll ? lowerSyncAll(op) : lowerSignal(op);
  case OpKind::DeclareEventIdArray:
  case OpKind::EventIdArrayGet:
  case OpKind::EventIdArraySet:
    return lowerEventArray(op);
  case OpKind::Call:
    return lowerCall(op);
  case OpKind::TGetVal:
    return lowerTGetVal(op);
  case OpKind::Print:
    return op.named == NamedOp::Trap ? lowerTrap(op) : lowerPrint(op);
  case OpKind::ReserveBuffer:
  case OpKind::ImportReserved:
    return lowerReserve(op);
  case OpKind::PipeInit:
    return lowerPipeInit(op);
  case OpKind::PipePush:
  case OpKind::PipePop:
  case OpKind::PipeFree:
  case OpKind::PipeAlloc:
    return lowerPipeData(op);
  case OpKind::DeclareGlobal:
    return lowerDeclareGlobal(op);
  }
}

/// The return block, preceded by the epilogue (frame release, ra restore). Whether a frame
/// is needed is known only after register allocation: layout() drops what is not needed.
void FunctionLowering::emitReturn(SrcLoc) {
  if (!inScalarBlock_) emit(make(FormId::BSTART_STD_FALL, {})).frame = MInst::BlockStart;
  // ra is reloaded from the frame before the frame is released.
  emit(make(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}, {"RegDst", kRa}})).frame =
      MInst::RaRestore;
  emit(make(FormId::S_ADDI, {{"SrcL", kSp}, {"uimm12", 0}, {"RegDst", kSp}})).frame =
      MInst::SpAdjust;
  emit(make(FormId::BSTART_STD_RET, {}));
  inScalarBlock_ = true;
}

/// A call: arguments go through the call-argument area of the frame into a0..a7 (so that no
/// argument overwrites another), values live across the call are kept in the frame (the
/// callee may use every register), and the result comes back in a0 (docs/abi.md).
void FunctionLowering::lowerCall(const Op& op) {
  // The argument registers: a tile (passed to a declaration: a call to a function of the module
  // that takes tiles was inlined) is its address and dynamic valid dimensions.
  std::vector<VReg> args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ValueId v = op.operands[i];
    const SrcLoc at = i < op.operandLocs.size() ? op.operandLocs[i] : op.loc;
    if (fn_.type(v).isTile()) {
      if (!tileAbiValues(v, at, "passing the tile", args)) return;
    } else if (!fn_.type(v).isScalarLike() && fn_.type(v).kind != TypeKind::Ptr) {
      return unsupported(at, "passing " + toString(fn_.type(v)) + " to a call");
    } else {
      args.push_back(reg(v));
    }
  }
  if (args.size() > kMaxRegParams)
    return unsupported(op.loc, "a call with more than 8 arguments (a tile counts its address "
                               "and each dynamic valid dimension)");
  size_t resultSlots = 0;
  for (ValueId r : op.results)
    resultSlots += abiSlots(fn_.type(r));
  if (resultSlots > kMaxRegParams)
    return unsupported(op.loc, "a call with more than 8 results (a tile counts its address and "
                               "each dynamic valid dimension)");
  hasCalls_ = true;
  for (size_t i = 0; i < args.size(); ++i) {
    scalar(FormId::S_SDI, {{"SrcR", kSp}, {"simm12", 0}}, {{"SrcL", args[i], false}});
    extra(code_.back()).outArg = static_cast<int>(i);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    scalar(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}, {"RegDst", kA0 + static_cast<int64_t>(i)}},
           {});
    extra(code_.back()).outArg = static_cast<int>(i);
    code_.back().clobbersRegs = true;
  }
  MInst& call = emit(make(FormId::BSTART_CALL, {{"simm12", 0}, {"uimm5", 1}}));
  call.clobbersRegs = true;
  extra(call).callee = op.name;
  inScalarBlock_ = false; // the callee returns to the next word, which starts a block
  if (resultSlots == 1 && !fn_.type(op.results[0]).isTile()) {
    scalar(FormId::S_ADDI, {{"SrcL", kA0}, {"uimm12", 0}},
           {{"RegDst", define(op.results[0]), true}});
    return;
  }
  // Several values come back in a0..a7: each is stored to the call-argument area before any is
  // read into a register, so that no result overwrites another still waiting in its register.
  for (size_t i = 0; i < resultSlots; ++i) {
    scalar(FormId::S_SDI, {{"SrcR", kSp}, {"simm12", 0}, {"SrcL", kA0 + static_cast<int64_t>(i)}},
           {});
    extra(code_.back()).outArg = static_cast<int>(i);
  }
  size_t slot = 0;
  for (ValueId r : op.results) {
    const bool tile = fn_.type(r).isTile();
    std::vector<VReg> regs;
    for (unsigned k = 0; k < abiSlots(fn_.type(r)); ++k) {
      const VReg v = tile ? newVReg() : define(r);
      scalar(FormId::S_LDI, {{"SrcL", kSp}, {"simm12", 0}}, {{"RegDst", v, true}});
      extra(code_.back()).outArg = static_cast<int>(slot++);
      regs.push_back(v);
    }
    if (tile) bindTileResult(r, regs);
  }
}

} // namespace pto::as::lower

namespace pto::as {

using lower::FunctionLowering;

namespace {

/// Appends `from` to `to`, taking its buffer when `to` is empty; `from` is left empty.
template <typename T> void appendMoved(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to.swap(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  std::vector<T>().swap(from);
}

/// The writable function behind each function to lower: the module's own, or the inlined copy.
std::unordered_map<const ir::Function*, ir::Function*> writable(ir::Module& m,
                                                                lower::InlinedModule& inlined) {
  std::unordered_map<const ir::Function*, ir::Function*> out;
  for (auto& f : m.functions)
    out[f.get()] = f.get();
  for (auto& f : inlined.owned)
    out[f.get()] = f.get();
  return out;
}

std::optional<obj::ObjectFile> lowerFunctions(const ir::Module& m, isa::Arch arch,
                                              DiagEngine& diags, ir::Module* release) {
  obj::ObjectFile obj;
  obj.arch = arch;
  // Each line entry records its op's debug location beside the .pto position.
  const std::vector<uint32_t> frontByLine = ir::frontLocsByLine(m);
  lower::InlinedModule inlined = lower::inlineTileCalls(m, diags);
  std::unordered_map<const ir::Function*, ir::Function*> bodies;
  if (release) bodies = writable(*release, inlined);
  bool ok = inlined.ok;
  for (size_t i = 0; i < inlined.functions.size(); ++i) {
    FunctionLowering fl(*inlined.functions[i], static_cast<uint32_t>(i), arch, diags, obj);
    fl.setSourceName(m.fileName);
    if (auto it = bodies.find(inlined.functions[i]); it != bodies.end())
      fl.releaseOpsOf(&it->second->body);
    if (!fl.run()) {
      ok = false;
      continue;
    }
    obj::Function f = std::move(fl.result());
    // Functions are laid out one after the other; offsets in relocs and lines are shifted.
    uint64_t base = obj.text.size();
    f.textOffset = base;
    f.textSize = fl.text().size();
    for (obj::Reloc& r : fl.relocs())
      r.offset += base;
    for (obj::LineEntry& l : fl.lines()) {
      l.textOffset += base;
      if (l.line < frontByLine.size()) l.frontend = m.placeLine(frontByLine[l.line]);
    }
    for (obj::GmAccess& g : fl.gmAccesses())
      g.textOffset += base;
    appendMoved(obj.gmAccesses, fl.gmAccesses());
    // Moved, not copied: a copy of a function's relocations and line entries (a million each in
    // a function of a million tile ops) would double them at pto-as's peak.
    appendMoved(obj.text, fl.text());
    appendMoved(obj.relocs, fl.relocs());
    appendMoved(obj.lines, fl.lines());
    obj.functions.push_back(std::move(f));
  }
  if (!ok) return std::nullopt;
  return obj;
}

} // namespace

std::optional<obj::ObjectFile> lowerModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags) {
  return lowerFunctions(m, arch, diags, nullptr);
}

std::optional<obj::ObjectFile> lowerModuleReleasing(ir::Module& m, isa::Arch arch,
                                                    DiagEngine& diags) {
  return lowerFunctions(m, arch, diags, &m);
}

} // namespace pto::as
