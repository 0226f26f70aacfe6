// Lowering of cross-core pipes (docs/pipes.md). A reserve_buffer becomes a tile descriptor of
// its bytes in vec or mat (placed by the linker, or at its fixed base), bound by the blocks
// that use the slots; an import names the peer's buffer, which the peer's own init registers.
// The init, push, pop and free ops become the extension tile blocks TPIPE_INIT/PUSH/POP/FREE,
// their configuration packed into a B.IOR word (isa/CrossCore.h).
#include "asm/codegen/FunctionLowering.h"
#include "isa/CrossCore.h"
#include "support/Text.h"

#include <algorithm>

namespace pto::as::lower {

void FunctionLowering::lowerReserve(const Op& op) {
  if (op.kind == OpKind::ImportReserved) {
    imported_.insert(op.results[0]);
    pendingLoc_ = {};
    return;
  }
  const bool mat = op.pipe->location == isa::Loc::Mat;
  obj::TileDesc d;
  d.loc = mat ? isa::Loc::Mat : isa::Loc::Vec;
  d.dtype = isa::DType::U8;
  d.rows = 1;
  d.cols = static_cast<uint32_t>(op.pipe->size.value_or(0));
  d.validRows = 1;
  d.validCols = static_cast<int32_t>(d.cols);
  if (op.pipe->autoAlloc.value_or(0) == 0) d.placement = op.pipe->base.value_or(0);
  addTile(op.results[0], d);
  pendingLoc_ = {};
}

/// The kernel kind of this function decides a push's or pop's direction: the cube pushes to the
/// vector cores (C2V) and pops from them (V2C).
bool FunctionLowering::isCubeFunction() const {
  return fn_.kernelKind == Function::KernelKind::Cube;
}

void FunctionLowering::lowerPipeInit(const Op& op) {
  isa::xcore::InitConfig c;
  c.dirMask = static_cast<uint8_t>(op.pipe->dirMask.value_or(1));
  c.slotSize = static_cast<uint32_t>(op.pipe->slotSize.value_or(0));
  c.slotNum = static_cast<uint8_t>(op.pipe->slotNum.value_or(8));
  c.gmPath = op.ints[0] != 0;
  c.localSlotNum = static_cast<uint8_t>(op.pipe->localSlotNum.value_or(c.slotNum));
  if (!c.gmPath) c.localSlotNum = c.slotNum;
  c.flagBase = static_cast<uint8_t>(op.pipe->flagBase.value_or(0));
  c.noSplit = op.pipe->noSplit.value_or(0) != 0;
  PipeState pipe{c.flagBase, c.dirMask, std::nullopt, false, false, {}};
  VReg gm = kNoVReg, local = kNoVReg;
  size_t k = 0;
  if (op.ints.size() > 1 && op.ints[1]) {
    if (!gmEntryInit(op, pipe)) return;
    c.gmEntries = true;
    gm = views_[op.operands[k++]].base;
  } else if (c.gmPath) {
    gm = reg(op.operands[k++]);
  }
  // The local buffers, C2V's first (or V2C's alone for dir_mask 2): a reserved buffer is bound
  // as a tile; an imported one is the peer's, which the peer's init registers; any other value
  // is an address computed at run time, passed in a register.
  for (size_t i = 0; k < op.operands.size(); ++k, ++i) {
    const ValueId v = op.operands[k];
    const bool v2c = c.dirMask == isa::xcore::kV2C || i == 1;
    if (auto t = tiles_.find(v); t != tiles_.end()) {
      pipe.buf = t->second;
      pipe.bufIsV2C = v2c;
      c.bufIsV2C = v2c;
    } else if (!imported_.count(v)) {
      if (local != kNoVReg)
        return unsupported(op.loc, "a two-way pipe whose two local buffers are both addresses "
                                   "computed at run time (B.IOR has room for one)");
      local = reg(v);
      c.localIsV2C = v2c;
    }
  }
  const VReg cfg = constant(isa::xcore::pack(c));
  pipes_[op.results[0]] = pipe;
  inScalarBlock_ = false;
  emit(enc::tileStart(enc::tileOpFor(isa::OpId::TPIPE_INIT)->op,
                      *enc::dataTypeCode(isa::DType::U8)));
  obj_.usesExtensions = true;
  std::vector<RegRef> refs;
  if (gm != kNoVReg) refs.push_back({"RegSrc0", gm, false});
  if (local != kNoVReg) refs.push_back({"RegSrc1", local, false});
  refs.push_back({"RegSrc2", cfg, false});
  emit(enc::bIor(0, 0, 0, 0), refs);
  if (pipe.buf) bindTiles({*pipe.buf});
  emit(enc::bstop());
}

/// A GM-entry pipe's init: the slot view's strides, constants (the entries a talloc or tpop binds
/// are views with them).
bool FunctionLowering::gmEntryInit(const Op& op, PipeState& pipe) {
  auto v = views_.find(op.operands[0]);
  if (v == views_.end()) {
    missing(op.loc, "the GM slot tensor of this pipe");
    return false;
  }
  pipe.gmEntries = true;
  if (!v->second.constStrides.empty()) {
    pipe.slotStrides = v->second.constStrides;
  } else {
    for (ValueId s : v->second.strides) {
      auto k = constantInt(s);
      if (!k) {
        unsupported(op.loc, "a gm_slot_tensor whose strides are known only at run time");
        return false;
      }
      pipe.slotStrides.push_back(*k);
    }
  }
  if (v->second.dn) {
    unsupported(op.loc, "a gm_slot_tensor of layout DN");
    return false;
  }
  return true;
}

/// `pto.declare_global`: a GM entry whose base a later talloc or tpop sets (its register).
void FunctionLowering::lowerDeclareGlobal(const Op& op) {
  const Type& t = fn_.type(op.results[0]);
  ViewRegs v;
  v.base = define(op.results[0]);
  v.elem = t.elem;
  v.constStrides = contiguousStrides(t.shape);
  views_[op.results[0]] = v;
  pendingLoc_ = {};
}

/// The data ops of a GM-entry pipe: talloc and tpop bind their entry to a slot (TPIPE_ALLOC /
/// TPIPE_TAKE give its address, vector core 1's half of a split slot `half` bytes on: the entry's
/// rows, or columns, at the slot's strides), tpush commits it and tfree gives it back, each after
/// a pipe_barrier(PIPE_ALL): the stores into the slot, or the loads from it, are done by then.
void FunctionLowering::lowerPipeEntry(const Op& op, const PipeState& pipe) {
  const bool producer = op.kind == OpKind::PipeAlloc || op.kind == OpKind::PipePush;
  isa::xcore::OpConfig c;
  c.flagBase = pipe.flagBase;
  c.dir = static_cast<uint8_t>(producer == isCubeFunction() ? isa::xcore::kC2V : isa::xcore::kV2C);
  c.split = static_cast<uint8_t>(op.ints[0]);
  const VReg cfg = constant(isa::xcore::pack(c));
  const ValueId entry = op.operands[0];
  auto view = views_.find(entry);
  if (view == views_.end()) return missing(op.loc, "this GM entry");
  obj_.usesExtensions = true;
  inScalarBlock_ = false;
  if (op.kind == OpKind::PipePush || op.kind == OpKind::PipeFree) {
    emit(enc::extControl(enc::ExtCtl::PIPE_BARRIER, isa::Pipe::All));
    emit(enc::bstop());
    emit(enc::tileStart(enc::tileOpFor(op.kind == OpKind::PipePush ? isa::OpId::TPIPE_COMMIT
                                                                   : isa::OpId::TPIPE_FREE)
                            ->op,
                        *enc::dataTypeCode(isa::DType::U8)));
    emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", cfg, false}});
    emit(enc::bstop());
    return;
  }
  const Type& t = fn_.type(entry);
  const size_t rank = t.shape.size();
  view->second.constStrides = pipe.slotStrides; // the entry lies in the slot
  view->second.strides.clear();
  uint64_t half = 0;
  if (c.split != 0 && rank >= 2 && pipe.slotStrides.size() == rank) {
    const size_t axis = c.split == 1 ? rank - 2 : rank - 1;
    // Unsigned: a slot view's constant strides may be as large as written (a run-time error then).
    half = static_cast<uint64_t>(t.shape[axis]) * static_cast<uint64_t>(pipe.slotStrides[axis]) *
           std::max(1u, isa::bitWidth(t.elem) / 8);
  }
  const VReg halfReg = constant(half);
  emit(enc::tileStart(
      enc::tileOpFor(op.kind == OpKind::PipeAlloc ? isa::OpId::TPIPE_ALLOC : isa::OpId::TPIPE_TAKE)
          ->op,
      *enc::dataTypeCode(isa::DType::U8)));
  emit(enc::bIor(0, 0, 0, 0),
       {{"RegSrc0", cfg, false}, {"RegSrc1", halfReg, false}, {"RegDst", view->second.base, true}});
  emit(enc::bstop());
}

void FunctionLowering::lowerPipeData(const Op& op) {
  const ValueId pipeValue = op.operands.back();
  auto p = pipes_.find(pipeValue);
  if (p == pipes_.end()) return missing(op.loc, "this pipe");
  const PipeState& pipe = p->second;
  if (pipe.gmEntries) return lowerPipeEntry(op, pipe);
  const bool cube = isCubeFunction();
  const bool push = op.kind == OpKind::PipePush;
  isa::xcore::OpConfig c;
  c.flagBase = pipe.flagBase;
  c.dir = static_cast<uint8_t>(push == cube ? isa::xcore::kC2V : isa::xcore::kV2C);
  c.split = static_cast<uint8_t>(op.ints[0]);
  // The slot buffer this core reads from: its own reserved buffer of the popped direction.
  const bool ownBuf = !push && pipe.buf && pipe.bufIsV2C == (c.dir == isa::xcore::kV2C);
  const VReg cfg = constant(isa::xcore::pack(c));
  const isa::OpId id = push                         ? isa::OpId::TPIPE_PUSH
                       : op.kind == OpKind::PipePop ? isa::OpId::TPIPE_POP
                                                    : isa::OpId::TPIPE_FREE;
  ValueId tile = op.kind == OpKind::PipeFree ? kNoValue : op.operands[0];
  std::pair<Dim, Dim> valid;
  VReg rowsReg = kNoVReg, colsReg = kNoVReg;
  isa::DType dtype = isa::DType::U8;
  if (tile != kNoValue) {
    valid = validOf(tile);
    rowsReg = dimReg(valid.first);
    colsReg = dimReg(valid.second);
    dtype = fn_.type(tile).tile.dtype;
  }
  auto code = blockTypeCode(op.loc, dtype);
  if (!code) return;
  std::vector<uint32_t> bind;
  if (tile != kNoValue) {
    auto i = tileIndex(tile, op.loc);
    if (!i) return;
    bind.push_back(*i);
  }
  if (ownBuf) bind.push_back(*pipe.buf);
  inScalarBlock_ = false;
  emit(enc::tileStart(enc::tileOpFor(id)->op, *code));
  obj_.usesExtensions = true;
  if (tile != kNoValue) {
    const TileType& t = fn_.type(tile).tile;
    dim(0, valid.second, colsReg);
    dim(1, valid.first, rowsReg);
    emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
  }
  emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", cfg, false}});
  if (!bind.empty()) bindTiles(bind);
  emit(enc::bstop());
}

/// On A5 a vector function whose pipe ops do not split their tiles runs on vector core 0 only
/// (PTOAS guards its body with get_subblockid() == 0), unless it asks for its sub-block itself.
void FunctionLowering::markSubblockZero(isa::Arch arch) {
  if (arch != isa::Arch::A5 || isCubeFunction()) return;
  bool unsplit = false, asksSubblock = false;
  walk(fn_.body, [&](const Op& op) {
    if ((op.kind == OpKind::PipePush || op.kind == OpKind::PipePop ||
         op.kind == OpKind::PipeFree) &&
        op.ints[0] == 0)
      unsplit = true;
    if (op.named == NamedOp::GetSubblockIdx || op.named == NamedOp::GetSubblockNum)
      asksSubblock = true;
  });
  if (unsplit && !asksSubblock) out_.flags |= obj::kSubblockZeroOnly;
}

} // namespace pto::as::lower
