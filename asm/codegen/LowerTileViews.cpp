// Tile placement and tile views: alloc_tile, subset / subview (at constant or run-time offsets,
// with PTOAS's valid shapes), reshape / bitcast, tassign, tgetval, and the TASSIGN binding of a
// descriptor placed at run time.
#include "asm/codegen/FunctionLowering.h"

#include "isa/TileLayout.h"

#include <algorithm>
#include <bit>

namespace pto::as::lower {

void FunctionLowering::lowerAlloc(const Op& op) {
  const TileType& t = fn_.type(op.results[0]).tile;
  obj::TileDesc d = descOf(t);
  size_t k = 0;
  Dim rows{t.validRows, kNoValue}, cols{t.validCols, kNoValue};
  ValueId runtimeAddr = kNoValue;
  if (op.ints[0]) {
    auto a = constantInt(op.operands[k]);
    if (a)
      d.placement = *a;
    else // bound where the tile is allocated (TASSIGN)
      runtimeAddr = op.operands[k];
    ++k;
  }
  if (op.ints[1]) rows = {0, op.operands[k++]};
  if (op.ints[2]) cols = {0, op.operands[k++]};
  if (runtimeAddr != kNoValue) d.placement = obj::kRuntimePlaced;
  const uint32_t idx = addTile(op.results[0], d);
  valid_[op.results[0]] = {rows, cols};
  if (runtimeAddr != kNoValue) emitTileBind(idx, reg(runtimeAddr));
  pendingLoc_ = {};
}

/// A tile's type with the rows and columns of its storage: a view's are its parent's pitch (its
/// descriptor's), not its own shape, so a view of a view steps its rows (or columns) as the buffer
/// does.
TileType FunctionLowering::storageShape(ValueId tile, uint32_t desc) const {
  TileType t = fn_.type(tile).tile;
  t.rows = static_cast<int64_t>(out_.tiles[desc].rows);
  t.cols = static_cast<int64_t>(out_.tiles[desc].cols);
  return t;
}

void FunctionLowering::lowerView(const Op& op) {
  auto parent = tiles_.find(op.operands[0]);
  if (parent == tiles_.end()) return missing(op.loc, "a view of this tile");
  const TileType src = storageShape(op.operands[0], parent->second);
  const TileType& t = fn_.type(op.results[0]).tile;
  obj::TileDesc d = descOf(t);
  d.aliasOf = static_cast<int32_t>(parent->second);
  if (op.kind == OpKind::Subset) {
    auto r = constantInt(op.operands[1]), c = constantInt(op.operands[2]);
    const bool boxed = src.slayout != isa::SLayout::NoneBox;
    if (!r || !c) return lowerRuntimeSubset(op, d, src);
    const isa::InnerBox box = isa::innerBox(src.dtype, src.slayout, src.fractal);
    if (boxed && (*r % box.rows != 0 || *c % box.cols != 0)) {
      diags_.error(op.loc, ir::boxedSubsetOffsetError(op.name, static_cast<uint64_t>(*r),
                                                      static_cast<uint64_t>(*c), box));
      ok_ = false;
      return;
    }
    // A view keeps its parent's pitch: a row-major view the parent's columns per row, a
    // column-major (DN) view the parent's rows per column; a boxed view the same, in boxes (on
    // the box grid the boxes of a column, or of a row, stay adjacent). It starts at the element
    // (r, c) of its parent.
    const bool colMajor = src.blayout == isa::BLayout::ColMajor;
    const int64_t element =
        *r < 0 || *c < 0 ? (colMajor ? *c * src.rows + *r : *r * src.cols + *c)
                         : static_cast<int64_t>(ir::subsetElement(src, static_cast<uint64_t>(*r),
                                                                  static_cast<uint64_t>(*c)));
    d.aliasOffset = static_cast<uint32_t>(element * isa::bitWidth(src.dtype) / 8);
    if (colMajor)
      d.rows = static_cast<uint32_t>(src.rows);
    else
      d.cols = static_cast<uint32_t>(src.cols);
  }
  addTile(op.results[0], d);
  valid_[op.results[0]] = {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
  if (op.kind == OpKind::Subset) setSubsetValid(op);
  pendingLoc_ = {};
}

Dim FunctionLowering::subsetValid(const Dim& parent, ValueId offset, int64_t size) {
  const auto off = constantInt(offset);
  if (!parent.dynamic() && off)
    return Dim{std::clamp<int64_t>(parent.constant - *off, 0, size), kNoValue};
  const VReg p = parent.dynamic() ? dimReg(parent) : newVReg();
  if (!parent.dynamic()) materialize(p, static_cast<uint64_t>(parent.constant));
  const VReg o = reg(offset), limit = newVReg(), v = newVReg();
  materialize(limit, static_cast<uint64_t>(size));
  scalar(FormId::S_SUB, {}, {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", v, true}});
  scalar(FormId::S_MIN, {}, {{"SrcL", v, false}, {"SrcR", limit, false}, {"RegDst", v, true}});
  scalar(FormId::S_MAX, {{"SrcR", kZero}}, {{"SrcL", v, false}, {"RegDst", v, true}});
  return Dim{0, kNoValue, v};
}

/// pto.subset's valid shape where its type leaves it dynamic (`?`, its parent's valid shape or
/// its offset known only at run time), as PTOAS computes it: per axis the parent's valid extent
/// less the offset, within 0..size. A subview's is its sizes or its `valid [..]` clause.
void FunctionLowering::setSubsetValid(const Op& op) {
  const TileType& t = fn_.type(op.results[0]).tile;
  if (op.name.ends_with("subview") || (t.validRows >= 0 && t.validCols >= 0)) return;
  const auto parent = validOf(op.operands[0]);
  auto& valid = valid_[op.results[0]];
  if (t.validRows < 0) valid.first = subsetValid(parent.first, op.operands[1], op.ints[0]);
  if (t.validCols < 0) valid.second = subsetValid(parent.second, op.operands[2], op.ints[1]);
}

/// pto.tgetval: a TGETVAL block on the scalar pipe (its tile read ordered after the vector ops
/// that wrote it, as TSETVAL's write is), B.IOR RegSrc0 the storage index and RegDst the result.
void FunctionLowering::lowerTGetVal(const Op& op) {
  auto idx = tileIndex(op.operands[0], op.loc);
  if (!idx) return;
  auto code = blockTypeCode(op.loc, fn_.type(op.operands[0]).tile.dtype);
  if (!code) return;
  const VReg offset = reg(op.operands[1]);
  const VReg value = define(op.results[0]);
  inScalarBlock_ = false;
  obj_.usesExtensions = true;
  emit(enc::tileStart(enc::tileOpFor(isa::OpId::TGETVAL)->op, *code));
  emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", offset, false}, {"RegDst", value, true}});
  bindTiles({*idx});
  emit(enc::bstop());
  pendingLoc_ = {};
}

/// pto.print: a PRINT block on the scalar pipe (docs/encoding.md 5.6): B.IOR RegSrc0 the value,
/// B.DIM ->LB1 the format's length in bytes, then its bytes two to a B.DIM ->LB0 immediate (low
/// byte first). The format was checked by the verifier (isa/PrintFormat.h).
void FunctionLowering::lowerPrint(const Op& op) {
  const std::string format = ir::printFormat(op).value_or("");
  const ValueId value = op.operands[0];
  auto code = blockTypeCode(op.loc, ir::printedType(fn_.type(value)));
  if (!code) return;
  const VReg v = reg(value);
  inScalarBlock_ = false;
  obj_.usesExtensions = true;
  emit(enc::tileStart(enc::tileOpFor(isa::OpId::PRINT)->op, *code));
  emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", v, false}});
  emit(enc::bDim(1, kZero, static_cast<uint32_t>(format.size())));
  for (size_t i = 0; i < format.size(); i += 2) {
    const uint32_t lo = static_cast<uint8_t>(format[i]);
    const uint32_t hi = i + 1 < format.size() ? static_cast<uint8_t>(format[i + 1]) : 0;
    emit(enc::bDim(0, kZero, lo | hi << 8));
  }
  emit(enc::bstop());
  pendingLoc_ = {};
}

/// A valid extent in a register: the one that holds a dynamic extent, a constant for a static
/// one. An extent that no op gave (a reshape or bitcast whose type says `?`) is refused by name.
std::optional<VReg> FunctionLowering::validExtentReg(const Dim& d, ValueId tile, SrcLoc loc) {
  if (d.dynamic()) return dimReg(d);
  if (d.constant < 0) {
    unsupported(loc, "reading the valid shape of '%" + fn_.value(tile).name +
                         "', which no op set (set it with pto.set_validshape first)");
    return std::nullopt;
  }
  return constant(static_cast<uint64_t>(d.constant));
}

/// pto.get_validshape / tile_valid_rows / tile_valid_cols: a static valid extent is a constant, a
/// dynamic one the register that holds it.
void FunctionLowering::lowerGetValidShape(const Op& op) {
  const auto [rows, cols] = validOf(op.operands[0]);
  std::vector<const Dim*> dims;
  if (op.name != "pto.tile_valid_cols") dims.push_back(&rows);
  if (op.name != "pto.tile_valid_rows") dims.push_back(&cols);
  for (size_t i = 0; i < dims.size() && i < op.results.size(); ++i) {
    if (!dims[i]->dynamic() && dims[i]->constant >= 0) {
      constants_[op.results[i]] = static_cast<uint64_t>(dims[i]->constant);
      continue;
    }
    auto r = validExtentReg(*dims[i], op.operands[0], op.loc);
    if (!r) return;
    copy(define(op.results[i]), *r);
  }
  pendingLoc_ = {};
}

/// pto.multi_tile_get: slot k of a multi-buffer tile, a view of the storage k * (slot bytes) on
/// with the slot's own layout. A constant slot is an alias descriptor at that offset; a slot
/// known at run time is bound there by TASSIGN (the runtime refuses a slot past the storage).
/// The slot keeps the valid shape its alloc_multi_tile gave.
void FunctionLowering::lowerMultiTileGet(const Op& op) {
  auto parent = tiles_.find(op.operands[0]);
  if (parent == tiles_.end()) return missing(op.loc, "a slot of this multi-buffer tile");
  const TileType& slot = fn_.type(op.results[0]).tile;
  obj::TileDesc d = descOf(slot);
  d.aliasOf = static_cast<int32_t>(parent->second);
  const uint64_t slotBytes = slot.byteSize();
  const auto k = constantInt(op.operands[1]);
  if (k) {
    d.aliasOffset = static_cast<uint32_t>(static_cast<uint64_t>(*k) * slotBytes);
  } else {
    d.aliasOffset = 0;
    d.placement = obj::kRuntimePlaced;
  }
  if (!tileDescFits(op.loc)) return;
  const uint32_t idx = addTile(op.results[0], d);
  valid_[op.results[0]] = validOf(op.operands[0]);
  if (!k) {
    const VReg size = newVReg(), offset = newVReg();
    materialize(size, slotBytes);
    scalar(FormId::S_MUL, {},
           {{"SrcL", reg(op.operands[1]), false}, {"SrcR", size, false}, {"RegDst", offset, true}});
    emitTileBind(idx, offset);
  }
  pendingLoc_ = {};
}

/// A subset at offsets known at run time (PTOAS's pto.subview at a loop's row): a view with its
/// parent's pitch, bound where it is made (TASSIGN) at the byte offset of the element (row, col)
/// computed by scalar code: row * parent cols + col for a row-major parent, col * parent rows +
/// row for a column-major one. On a boxed parent the offsets must lie on its inner box grid,
/// where (row, col)'s element is row * parent cols + col * box rows (row-major box grid) or col *
/// parent rows + row * box cols (column-major): an offset off the grid traps at run time, at the
/// view's line. The runtime refuses an offset past the parent's end, and clips the view to the
/// rows left in its parent.
void FunctionLowering::lowerRuntimeSubset(const Op& op, obj::TileDesc d, const TileType& src) {
  const unsigned bits = isa::bitWidth(src.dtype);
  if (bits < 8)
    return unsupported(op.loc, "'" + op.name + "' with run-time offsets of a sub-byte tile");
  const TileType& t = fn_.type(op.results[0]).tile;
  const bool colMajor = src.blayout == isa::BLayout::ColMajor;
  d.aliasOffset = 0;
  d.placement = obj::kRuntimePlaced;
  if (colMajor)
    d.rows = static_cast<uint32_t>(src.rows);
  else
    d.cols = static_cast<uint32_t>(src.cols);
  if (!tileDescFits(op.loc)) return;
  const uint32_t idx = addTile(op.results[0], d);
  valid_[op.results[0]] = {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
  setSubsetValid(op);
  const VReg row = reg(op.operands[1]), col = reg(op.operands[2]);
  uint64_t minorStep = 1;
  if (src.slayout != isa::SLayout::NoneBox) {
    const isa::InnerBox box = isa::innerBox(src.dtype, src.slayout, src.fractal);
    checkOnBoxGrid(row, box.rows, isa::trapword::kBoxRowShift, op.loc);
    checkOnBoxGrid(col, box.cols, isa::trapword::kBoxColShift, op.loc);
    minorStep = colMajor ? box.cols : box.rows;
  }
  // element = major * pitch + minor * step; offset = element << log2(element bytes)
  const VReg major = colMajor ? col : row, minor = colMajor ? row : col;
  const VReg pitch = newVReg(), element = newVReg(), offset = newVReg();
  materialize(pitch, static_cast<uint64_t>(colMajor ? src.rows : src.cols));
  scalar(FormId::S_MUL, {},
         {{"SrcL", major, false}, {"SrcR", pitch, false}, {"RegDst", element, true}});
  VReg step = minor;
  if (minorStep != 1) {
    const VReg k = newVReg();
    step = newVReg();
    materialize(k, minorStep);
    scalar(FormId::S_MUL, {}, {{"SrcL", minor, false}, {"SrcR", k, false}, {"RegDst", step, true}});
  }
  scalar(FormId::S_ADD, {},
         {{"SrcL", element, false}, {"SrcR", step, false}, {"RegDst", element, true}});
  scalar(FormId::S_ADD,
         {{"shamt", static_cast<unsigned>(std::countr_zero(bits / 8))}, {"SrcL", kZero}},
         {{"SrcR", element, false}, {"RegDst", offset, true}});
  emitTileBind(idx, offset);
  pendingLoc_ = {};
}

/// Traps (the trap word of `shift`, docs/abi.md) unless `offset` is a multiple of `box`, a power
/// of two: the offset of a view into a boxed tile must lie on its inner box grid.
void FunctionLowering::checkOnBoxGrid(VReg offset, uint32_t box, unsigned shift, SrcLoc loc) {
  const int onGrid = newLabel();
  const VReg low = newVReg();
  conditionalExit(onGrid, loc, [&] {
    scalar(FormId::S_ANDI, {{"simm12", static_cast<int64_t>(box - 1)}},
           {{"SrcL", offset, false}, {"RegDst", low, true}});
    scalar(FormId::S_SETC_EQI, {{"simm12", 0}}, {{"SrcL", low, false}});
  });
  pendingLoc_ = loc;
  scalar(FormId::S_ADD, {{"shamt", shift}, {"SrcL", kZero}, {"RegDst", kZero}},
         {{"SrcR", offset, false}});
  placeLabel(onGrid);
  inScalarBlock_ = false;
}

void FunctionLowering::lowerAssign(const Op& op) {
  auto a = constantInt(op.operands[1]);
  auto it = tiles_.find(op.operands[0]);
  if (it == tiles_.end()) return unsupported(op.loc, "'pto.tassign' of this tile");
  if (!a) { // a run-time address: a descriptor placed at run time, bound here (TASSIGN)
    ValueId target = op.results.empty() ? op.operands[0] : op.results[0];
    auto validIt = valid_.find(op.operands[0]);
    auto valid = validIt != valid_.end() ? validIt->second : std::pair<Dim, Dim>{};
    const uint32_t idx = runtimeTile(target, it->second);
    valid_[target] = valid;
    emitTileBind(idx, reg(op.operands[1]));
    pendingLoc_ = {};
    return;
  }
  // Rebinding: a new descriptor at the new address; later uses of the tile name it.
  obj::TileDesc d = out_.tiles[it->second];
  d.placement = *a;
  ValueId target = op.results.empty() ? op.operands[0] : op.results[0];
  auto validIt = valid_.find(op.operands[0]);
  auto valid = validIt != valid_.end() ? validIt->second : std::pair<Dim, Dim>{};
  if (d.placement == out_.tiles[it->second].placement && op.results.empty()) return;
  addTile(target, d);
  valid_[target] = valid;
  pendingLoc_ = {};
}

void FunctionLowering::emitTileBind(uint32_t idx, VReg addr) {
  runtimeAddr_[idx] = addr;
  obj_.usesExtensions = true;
  inScalarBlock_ = false;
  const auto code = enc::dataTypeCode(out_.tiles[idx].dtype);
  emit(enc::tileStart(enc::tileOpFor(isa::OpId::TASSIGN)->op, code.value_or(0)));
  emit(enc::bIor(0, 0, 0, 0), {{"RegSrc0", addr, false}});
  bindTiles({idx}, {rootPlacement(idx) == obj::kUnplaced});
  emit(enc::bstop());
}

uint32_t FunctionLowering::runtimeTile(ValueId v, uint32_t idx) {
  obj::TileDesc d = out_.tiles[idx];
  d.placement = obj::kRuntimePlaced;
  d.aliasOf = -1; // the address names the tile's own storage, not a place in its parent
  d.aliasOffset = 0;
  return addTile(v, d);
}

int64_t FunctionLowering::rootPlacement(uint32_t idx) const {
  while (out_.tiles[idx].aliasOf >= 0)
    idx = static_cast<uint32_t>(out_.tiles[idx].aliasOf);
  return out_.tiles[idx].placement;
}

} // namespace pto::as::lower
