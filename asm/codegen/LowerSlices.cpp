// Instruction selection for GM transfers whose partition has more than two dimensions: one
// block per 2-D slice, with static outer sizes (alias descriptors) or run-time ones (loops that
// bind a view of the tile per slice with TASSIGN); docs/abi.md.
#include "asm/codegen/FunctionLowering.h"

#include <functional>

namespace pto::as::lower {

/// Slices of a partition go to rows of a row-major tile without boxes (a slice's rows are then
/// contiguous), and the block has no room for scalar operands beside the slice's registers.
bool FunctionLowering::sliceable(const Op& op, const isa::OpInfo& info, const TileType& tt) {
  if (tt.blayout != isa::BLayout::RowMajor || tt.slayout != isa::SLayout::NoneBox) {
    unsupported(
        op.loc,
        "a partition with more than two non-unit dimensions and a boxed or column-major tile");
    return false;
  }
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::RoleKind k = info.roles[op.operandRoles[i]].kind;
    if (k != isa::RoleKind::Tile && k != isa::RoleKind::View) {
      unsupported(op.operandLocs[i],
                  "a scalar operand with a partition of more than two non-unit dimensions");
      return false;
    }
  }
  return true;
}

/// A TLOAD/TSTORE whose partition has more than two non-unit dimensions: one block per 2-D
/// slice (the last two dimensions), each into its rows of the tile through an alias
/// descriptor. The tile must be row-major without boxes, so a slice's rows are contiguous.
void FunctionLowering::lowerSlicedTransfer(const Op& op, const isa::OpInfo& info,
                                           const enc::TileOpInfo& eop, const PartRegs& p,
                                           ValueId tile) {
  const TileType& tt = fn_.type(tile).tile;
  if (!sliceable(op, info, tt)) return;
  int64_t slices = 1;
  for (const PartRegs::Outer& o : p.outer)
    slices *= o.size;
  if (slices * p.sliceRows > tt.rows || p.sliceCols > tt.cols) {
    diags_.error(op.loc, "the partition's " + std::to_string(slices) + " slices of " +
                             std::to_string(p.sliceRows) + "x" + std::to_string(p.sliceCols) +
                             " do not fit the " + std::to_string(tt.rows) + "x" +
                             std::to_string(tt.cols) + " tile");
    ok_ = false;
    return;
  }
  auto parent = tileIndex(tile, op.loc);
  if (!parent) return;
  auto code = blockTypeCode(op.loc, tt.dtype);
  if (!code) return;
  const auto datr = datrFor(op, info, roleValue(op, isa::RoleId::Dst));
  const uint32_t sliceBytes =
      static_cast<uint32_t>(p.sliceRows * tt.cols * isa::bitWidth(tt.dtype) / 8);
  for (int64_t s = 0; s < slices; ++s) {
    // The slice's GM address: the partition's plus sum(index_k * stride_k), row-major indices.
    VReg addr = p.addr;
    int64_t rest = s;
    for (size_t k = p.outer.size(); k-- > 0;) {
      const int64_t idx = rest % p.outer[k].size;
      rest /= p.outer[k].size;
      if (idx == 0) continue;
      VReg n = newVReg(), term = newVReg(), sum = newVReg();
      materialize(n, static_cast<uint64_t>(idx));
      scalar(FormId::S_MUL, {},
             {{"SrcL", n, false}, {"SrcR", p.outer[k].strideBytes, false}, {"RegDst", term, true}});
      scalar(FormId::S_ADD, {},
             {{"SrcL", addr, false}, {"SrcR", term, false}, {"RegDst", sum, true}});
      addr = sum;
    }
    obj::TileDesc d = out_.tiles[*parent];
    d.name = out_.tiles[*parent].name + "." + std::to_string(s);
    d.aliasOf = static_cast<int32_t>(*parent);
    d.aliasOffset = static_cast<uint32_t>(s) * sliceBytes;
    d.placement = obj::kUnplaced;
    d.rows = static_cast<uint32_t>(p.sliceRows);
    d.validRows = static_cast<int32_t>(p.sliceRows);
    d.validCols = static_cast<int32_t>(p.sliceCols);
    if (!tileDescFits(op.loc)) return;
    out_.tiles.push_back(d);
    const uint32_t idx = static_cast<uint32_t>(out_.tiles.size() - 1);
    inScalarBlock_ = false;
    withGmAccess(emit(enc::tileStart(eop.op, *code)));
    if (datr) emit(enc::bDatr(*datr));
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(p.sliceCols)));
    if (p.sliceRows != 1) emit(enc::bDim(1, kZero, static_cast<uint32_t>(p.sliceRows)));
    emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", addr, false}, {"RegSrc1", p.rowStride, false}});
    bindTiles({idx}, {rootPlacement(idx) == obj::kUnplaced});
    emit(enc::bstop());
  }
}

/// A TLOAD/TSTORE whose partition has more than two dimensions and a size known at run time:
/// loops over the dimensions before the last two (row-major order, as pto-isa's TLOAD walks
/// them), each iteration binding a view of the tile at the slice's first row (TASSIGN) and
/// moving the slice's rows x cols with one block. The rows of slice k start at k * rows; a
/// slice that does not fit the rest of the tile is a runtime error (docs/abi.md).
void FunctionLowering::lowerDynamicSlices(const Op& op, const isa::OpInfo& info,
                                          const enc::TileOpInfo& eop, const PartRegs& p,
                                          ValueId tile) {
  const TileType& tt = fn_.type(tile).tile;
  if (!sliceable(op, info, tt)) return;
  auto parent = tileIndex(tile, op.loc);
  if (!parent) return;
  auto code = blockTypeCode(op.loc, tt.dtype);
  if (!code) return;
  const auto datr = datrFor(op, info, roleValue(op, isa::RoleId::Dst));
  // The slice view: the tile's shape from a row bound at run time, valid shape from B.DIM.
  obj::TileDesc d = out_.tiles[*parent];
  d.name = out_.tiles[*parent].name + ".slice";
  d.aliasOf = static_cast<int32_t>(*parent);
  d.aliasOffset = 0;
  d.placement = obj::kRuntimePlaced;
  d.validRows = d.validCols = obj::kDynamicDim;
  if (!tileDescFits(op.loc)) return;
  out_.tiles.push_back(d);
  const auto slice = static_cast<uint32_t>(out_.tiles.size() - 1);
  obj_.usesExtensions = true;
  // Byte offset of the next slice in the tile, and the bytes one slice's rows take.
  VReg offset = newVReg(), step = newVReg(), rowBytes = newVReg();
  materialize(offset, 0);
  materialize(rowBytes, static_cast<uint64_t>(tt.cols) * isa::bitWidth(tt.dtype) / 8);
  scalar(FormId::S_MUL, {},
         {{"SrcL", reg(p.sliceRowsV), false}, {"SrcR", rowBytes, false}, {"RegDst", step, true}});
  sliceLoops(p.dynOuter, 0, p.addr, op.loc, [&](VReg gm) {
    emitTileBind(slice, offset);
    // The sizes' registers first: a constant is materialized by scalar code, outside the block.
    const VReg cols = reg(p.sliceColsV), rows = reg(p.sliceRowsV);
    inScalarBlock_ = false;
    withGmAccess(emit(enc::tileStart(eop.op, *code)));
    if (datr) emit(enc::bDatr(*datr));
    emit(enc::bDim(0, kZero, 0), {{"RegSrc", cols, false}});
    emit(enc::bDim(1, kZero, 0), {{"RegSrc", rows, false}});
    emit(enc::bDim(2, kZero, static_cast<uint32_t>(tt.cols)));
    emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", gm, false}, {"RegSrc1", p.rowStride, false}});
    bindTiles({slice}, {rootPlacement(*parent) == obj::kUnplaced});
    emit(enc::bstop());
    scalar(FormId::S_ADD, {},
           {{"SrcL", offset, false}, {"SrcR", step, false}, {"RegDst", offset, true}});
  });
}

void FunctionLowering::sliceLoops(const std::vector<PartRegs::DynOuter>& dims, size_t k, VReg gm,
                                  SrcLoc loc, const std::function<void(VReg)>& body) {
  if (k == dims.size()) return body(gm);
  // for (i = 0, a = gm; i < size; ++i, a += stride) -- the shape of lowerFor's loops.
  VReg i = newVReg(), a = newVReg(), one = newVReg();
  materialize(i, 0);
  copy(a, gm);
  const int head = newLabel(), exit = newLabel();
  placeLabel(head);
  const size_t loopStart = code_.size();
  conditionalExit(exit, loc, [&] {
    scalar(FormId::S_SETC_GE, {}, {{"SrcL", i, false}, {"SrcR", reg(dims[k].size), false}});
  });
  sliceLoops(dims, k + 1, a, loc, body);
  startBranchBlock(head, false);
  materialize(one, 1);
  scalar(FormId::S_ADD, {}, {{"SrcL", i, false}, {"SrcR", one, false}, {"RegDst", i, true}});
  scalar(FormId::S_ADD, {},
         {{"SrcL", a, false}, {"SrcR", dims[k].strideBytes, false}, {"RegDst", a, true}});
  loops_.push_back({loopStart, code_.size() - 1});
  placeLabel(exit);
  inScalarBlock_ = false;
}

} // namespace pto::as::lower
