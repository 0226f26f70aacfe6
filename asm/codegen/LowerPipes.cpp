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
  PipeState pipe{c.flagBase, c.dirMask, std::nullopt, false};
  VReg gm = kNoVReg, local = kNoVReg;
  size_t k = 0;
  if (c.gmPath) gm = reg(op.operands[k++]);
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

void FunctionLowering::lowerPipeData(const Op& op) {
  const ValueId pipeValue = op.operands.back();
  auto p = pipes_.find(pipeValue);
  if (p == pipes_.end()) return missing(op.loc, "this pipe");
  const PipeState& pipe = p->second;
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
