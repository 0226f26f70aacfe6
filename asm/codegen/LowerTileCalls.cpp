// Tiles that cross a call which stays a call (docs/abi.md, "Tiles across calls"): a call to a
// declaration (its body is in another object) and a public function's tile results. A tile goes
// by its byte address in its buffer and the valid dimensions its type leaves dynamic; the
// receiver binds a descriptor placed at run time there (TASSIGN). Values come back in a0..a7.
#include "asm/codegen/FunctionLowering.h"
#include "asm/codegen/InlineTiles.h"

namespace pto::as::lower {

/// The byte address of descriptor `idx` in its buffer, as a register: a constant placement, the
/// address a TASSIGN bound it at, or its parent's address plus its offset. Nothing for a tile
/// the linker places (its address is known only at link time).
std::optional<VReg> FunctionLowering::descAddress(uint32_t idx) {
  const obj::TileDesc& d = out_.tiles[idx];
  std::optional<VReg> base;
  if (d.placement == obj::kRuntimePlaced) {
    auto it = runtimeAddr_.find(idx);
    if (it == runtimeAddr_.end()) return std::nullopt;
    base = it->second;
    if (d.aliasOf < 0) return base; // bound at its own address
  } else if (d.aliasOf < 0) {
    if (d.placement == obj::kUnplaced) return std::nullopt;
    return constant(static_cast<uint64_t>(d.placement));
  }
  // A view: its offset (the bound register, or the static alias offset) past its parent's start.
  auto parent = descAddress(static_cast<uint32_t>(d.aliasOf));
  if (!parent) return std::nullopt;
  const VReg offset = base ? *base : constant(d.aliasOffset);
  const VReg sum = newVReg();
  scalar(FormId::S_ADD, {},
         {{"SrcL", *parent, false}, {"SrcR", offset, false}, {"RegDst", sum, true}});
  return sum;
}

/// The values a tile takes across a call: its address, then each valid dimension its type leaves
/// dynamic. False (after a located error naming `use`) for a tile whose address is not known
/// before linking.
bool FunctionLowering::tileAbiValues(ValueId tile, SrcLoc loc, const std::string& use,
                                     std::vector<VReg>& out) {
  auto idx = tileIndex(tile, loc);
  if (!idx) return false;
  // The receiver binds a tile of the declared type, with that type's own row pitch: a view that
  // keeps its parent's pitch (a column subset) would be read with the wrong one.
  const TileType& ty = fn_.type(tile).tile;
  const obj::TileDesc& desc = out_.tiles[*idx];
  const bool colMajor = ty.blayout == isa::BLayout::ColMajor;
  if (colMajor ? desc.rows != static_cast<uint32_t>(ty.rows)
               : desc.cols != static_cast<uint32_t>(ty.cols)) {
    unsupported(loc, use + " '%" + fn_.value(tile).name + "', a view that keeps its parent's " +
                         (colMajor ? "column height (" + std::to_string(desc.rows)
                                   : "row pitch (" + std::to_string(desc.cols)) +
                         " elements) where its type has " +
                         std::to_string(colMajor ? ty.rows : ty.cols) +
                         " (the other side binds it with its type's own pitch; copy it into a "
                         "tile of its own first)");
    return false;
  }
  auto addr = descAddress(*idx);
  if (!addr) {
    unsupported(loc, use + " '%" + fn_.value(tile).name +
                         "', which the linker places: its address is known only at link time "
                         "(place it with `alloc_tile addr =` or pto.tassign, or pass a tile "
                         "parameter)");
    return false;
  }
  out.push_back(*addr);
  const TileType& t = fn_.type(tile).tile;
  const auto [rows, cols] = validOf(tile);
  const std::pair<int64_t, const Dim*> dims[2] = {{t.validRows, &rows}, {t.validCols, &cols}};
  for (const auto& [declared, dim] : dims) {
    if (declared != kDynamic) continue;
    auto r = validExtentReg(*dim, tile, loc);
    if (!r) return false;
    out.push_back(*r);
  }
  return true;
}

/// A tile a call returned: a descriptor placed at run time at the returned address, with the
/// returned valid dimensions.
void FunctionLowering::bindTileResult(ValueId result, const std::vector<VReg>& regs) {
  const TileType& t = fn_.type(result).tile;
  obj::TileDesc d = descOf(t);
  d.placement = obj::kRuntimePlaced;
  if (!tileDescFits(currentLoc_)) return;
  const uint32_t idx = addTile(result, d);
  size_t k = 1;
  Dim rows{t.validRows, kNoValue}, cols{t.validCols, kNoValue};
  if (t.validRows == kDynamic) rows = Dim{0, kNoValue, regs[k++]};
  if (t.validCols == kDynamic) cols = Dim{0, kNoValue, regs[k++]};
  valid_[result] = {rows, cols};
  emitTileBind(idx, regs[0]);
}

/// `return %a, %b, ...`: the values (a tile as its address and dynamic valid dimensions) in
/// a0..a7. Each move may overwrite a register another value still waits in, so values live
/// across the moves are kept in the frame (the moves count as clobbering every register).
void FunctionLowering::lowerReturn(const Op& op) {
  std::vector<VReg> values;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ValueId v = op.operands[i];
    const SrcLoc at = i < op.operandLocs.size() ? op.operandLocs[i] : op.loc;
    const Type& t = fn_.type(v);
    if (t.isTile()) {
      if (!tileAbiValues(v, at, "returning the tile", values)) return;
    } else if (!t.isScalarLike() && t.kind != TypeKind::Ptr && !t.isView()) {
      return unsupported(at, "returning " + toString(t));
    } else {
      values.push_back(reg(v));
    }
  }
  if (values.size() > kMaxRegParams)
    return unsupported(op.loc, "returning more than 8 values (a tile counts its address and "
                               "each dynamic valid dimension)");
  for (size_t i = 0; i < values.size(); ++i) {
    scalar(FormId::S_ADDI, {{"uimm12", 0}, {"RegDst", kA0 + static_cast<int64_t>(i)}},
           {{"SrcL", values[i], false}});
    code_.back().clobbersRegs = values.size() > 1;
  }
  emitReturn(op.loc);
}

} // namespace pto::as::lower
