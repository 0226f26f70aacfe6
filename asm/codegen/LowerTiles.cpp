// Instruction selection for GM views, tile descriptors and tile blocks (B.DATR, B.DIM, B.IOR,
// B.IOT), and the sync / runtime-id blocks of the extension space (docs/abi.md).
#include "asm/codegen/FunctionLowering.h"
#include "isa/Fixpipe.h"

#include "isa/Numerics.h"
#include "isa/OpAttrs.h"
#include "isa/Random.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

namespace pto::as::lower {

/// The view's layout: the `layout` attribute (ND or DN), else as PTOAS infers from constant
/// strides (column-major is DN). The strides are operands stridesAt.. of the op.
bool FunctionLowering::viewLayout(const Op& op, size_t stridesAt, size_t rank, ViewRegs& v) {
  switch (op.layout) {
  case ViewLayout::Inferred:
    if (rank >= 2) {
      auto inner = constantInt(op.operands[stridesAt + rank - 1]),
           outer = constantInt(op.operands[stridesAt + rank - 2]);
      v.dn = inner && outer && *outer == 1 && *inner != 1;
    }
    break;
  case ViewLayout::ND:
    break;
  case ViewLayout::DN:
    v.dn = true;
    break;
  case ViewLayout::Unsupported:
    unsupported(op.loc,
                "a tensor view with layout " + op.attr("layout")->value + " (ND and DN are)");
    return false;
  }
  if (v.dn && rank < 2) {
    unsupported(op.loc, "a DN tensor view of rank 1");
    return false;
  }
  for (size_t i = 0; i < rank; ++i)
    v.strides.push_back(op.operands[stridesAt + i]);
  return true;
}

void FunctionLowering::lowerMakeView(const Op& op) {
  ViewRegs v;
  size_t rank = static_cast<size_t>(op.ints[0]);
  if (!viewLayout(op, 1 + rank, rank, v)) return;
  v.base = reg(op.operands[0]);
  v.elem = fn_.type(op.results[0]).elem;
  views_[op.results[0]] = v;
  dynamicShapes_[op.results[0]] =
      std::vector<ValueId>(op.operands.begin() + 1, op.operands.begin() + 1 + rank);
  pendingLoc_ = {};
}

/// memref.reinterpret_cast: base = the source's base + offset * element bytes; sizes and strides
/// are the operands, as make_tensor_view's.
void FunctionLowering::lowerReinterpret(const Op& op) {
  auto src = views_.find(op.operands[0]);
  if (src == views_.end()) return missing(op.loc, "a memref.reinterpret_cast of this view");
  const VReg srcBase = src->second.base;
  ViewRegs v;
  size_t rank = static_cast<size_t>(op.ints[0]);
  if (!viewLayout(op, 2 + rank, rank, v)) return;
  v.elem = fn_.type(op.results[0]).elem;
  const unsigned shift =
      static_cast<unsigned>(std::countr_zero(std::max(1u, isa::bitWidth(v.elem) / 8)));
  v.base = define(op.results[0]);
  scalar(
      FormId::S_ADD, {{"shamt", shift}},
      {{"SrcL", srcBase, false}, {"SrcR", reg(op.operands[1]), false}, {"RegDst", v.base, true}});
  views_[op.results[0]] = v;
  dynamicShapes_[op.results[0]] =
      std::vector<ValueId>(op.operands.begin() + 2, op.operands.begin() + 2 + rank);
  pendingLoc_ = {};
}

void FunctionLowering::lowerGetDim(const Op& op) {
  auto dim = constantInt(op.operands[1]);
  if (!dim) return unsupported(op.loc, "'pto.get_tensor_view_dim' with a non-constant dimension");
  const Type& t = fn_.type(op.operands[0]);
  if (*dim < 0 || static_cast<size_t>(*dim) >= t.shape.size()) {
    diags_.error(op.operandLocs[1],
                 "dimension " + std::to_string(*dim) + " is out of range for " + toString(t));
    ok_ = false;
    return;
  }
  // A static extent is a constant; a dynamic one is the shape operand of make_tensor_view.
  if (t.shape[*dim] != kDynamic) {
    constants_[op.results[0]] = static_cast<uint64_t>(t.shape[*dim]);
    return;
  }
  auto shapes = dynamicShapes_.find(op.operands[0]);
  if (shapes == dynamicShapes_.end())
    return unsupported(op.loc, "'pto.get_tensor_view_dim' of this view");
  copy(define(op.results[0]), reg(shapes->second[*dim]));
}

void FunctionLowering::lowerPartition(const Op& op) {
  auto vit = views_.find(op.operands[0]);
  if (vit == views_.end()) return missing(op.loc, "a partition of this view");
  const ViewRegs& v = vit->second;
  size_t rank = static_cast<size_t>(op.ints[0]);
  const Type& pt = fn_.type(op.results[0]);
  unsigned elemBits = isa::bitWidth(v.elem);
  PartRegs p;
  p.dn = v.dn;
  // Dimensions before the last two that span more than one element: a stack of 2-D slices,
  // counted at run time when a size of the partition is dynamic.
  bool dynamic = false;
  for (size_t i = 0; i + 2 < rank; ++i)
    dynamic = dynamic ||
              (pt.shape[i] != 1 && (pt.shape[i] == kDynamic || pt.shape[rank - 1] == kDynamic ||
                                    pt.shape[rank - 2] == kDynamic));
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (pt.shape[i] == 1) continue;
    if (v.dn) return unsupported(op.loc, "a DN partition with more than two non-unit dimensions");
    VReg stride = newVReg();
    scaleToBytes(stride, strideReg(v, i), elemBits);
    if (dynamic)
      p.dynOuter.push_back({op.operands[1 + rank + i], stride});
    else
      p.outer.push_back({pt.shape[i], stride});
  }
  if (dynamic) {
    p.sliceRowsV = op.operands[1 + 2 * rank - 2];
    p.sliceColsV = op.operands[1 + 2 * rank - 1];
  }
  if (!p.outer.empty()) {
    p.sliceRows = rank >= 2 ? pt.shape[rank - 2] : 1;
    p.sliceCols = pt.shape[rank - 1];
  }
  VReg acc = kNoVReg;
  for (size_t i = 0; i < rank; ++i) {
    ValueId off = op.operands[1 + i];
    auto c = constantInt(off);
    if (c && *c == 0) continue;
    VReg term = newVReg();
    VReg o = reg(off);
    VReg s = strideReg(v, i);
    // `mulu`: the bits of `mul`, and the backends keep the exact product and sum when it leaves
    // int64, so that the bounds check of the access is exact (docs/abi.md, issue 34 item 11).
    scalar(FormId::S_MULU, {}, {{"SrcL", o, false}, {"SrcR", s, false}, {"RegDst", term, true}});
    if (acc == kNoVReg)
      acc = term;
    else {
      VReg sum = newVReg();
      scalar(FormId::S_ADD, {},
             {{"SrcL", acc, false}, {"SrcR", term, false}, {"RegDst", sum, true}});
      acc = sum;
    }
  }
  p.addr = newVReg();
  if (acc == kNoVReg)
    copy(p.addr, v.base);
  else
    addScaled(p.addr, v.base, acc, elemBits);
  p.rowStride = newVReg();
  // ND: the stride between rows; DN: between columns (the rows of a column are adjacent).
  if (rank >= 2)
    scaleToBytes(p.rowStride, strideReg(v, v.dn ? rank - 1 : rank - 2), elemBits);
  else
    materialize(p.rowStride, 0);
  parts_[op.results[0]] = p;
}

std::optional<PartRegs> FunctionLowering::wholeViewPartition(const Op& op, ValueId view) {
  auto vit = views_.find(view);
  if (vit == views_.end()) {
    unsupported(op.loc, "a GM operand that is neither a tensor view nor a partition of one");
    return std::nullopt;
  }
  const ViewRegs& v = vit->second;
  const Type& t = fn_.type(view);
  const size_t rank = t.shape.size();
  const unsigned elemBits = isa::bitWidth(v.elem);
  PartRegs p;
  p.dn = v.dn;
  // Leading dimensions laid out contiguously (static row-major strides) fold into the rows:
  // the whole view is one 2-D transfer, as a memref of 16x16x16 is a 256x16 buffer.
  bool folds = !v.dn && v.constStrides.size() == rank;
  for (size_t i = 0; folds && i + 2 < rank; ++i)
    folds =
        t.shape[i + 1] != kDynamic && v.constStrides[i] == v.constStrides[i + 1] * t.shape[i + 1];
  for (size_t i = 0; !folds && i + 2 < rank; ++i) {
    if (t.shape[i] == 1) continue;
    if (v.dn) {
      unsupported(op.loc,
                  "a whole DN tensor view with more than two non-unit dimensions as a GM operand");
      return std::nullopt;
    }
    if (t.shape[i] == kDynamic || t.shape[rank - 1] == kDynamic || t.shape[rank - 2] == kDynamic) {
      unsupported(
          op.loc,
          "a whole tensor view of more than two dimensions with a dynamic size as a GM operand");
      return std::nullopt;
    }
    VReg stride = newVReg();
    scaleToBytes(stride, strideReg(v, i), elemBits);
    p.outer.push_back({t.shape[i], stride});
  }
  if (!p.outer.empty()) {
    p.sliceRows = rank >= 2 ? t.shape[rank - 2] : 1;
    p.sliceCols = t.shape[rank - 1];
  }
  p.addr = newVReg();
  copy(p.addr, v.base);
  p.rowStride = newVReg();
  if (rank >= 2)
    scaleToBytes(p.rowStride, strideReg(v, v.dn ? rank - 1 : rank - 2), elemBits);
  else
    materialize(p.rowStride, 0);
  return p;
}

/// (hi << 32) | (lo & 0xFFFFFFFF): two 32-bit scalars in one register (isa/Random.h).
VReg FunctionLowering::packPair(VReg lo, VReg hi) {
  VReg low = newVReg(), high = newVReg(), both = newVReg();
  scalar(FormId::S_SLLI, {{"shamt", 32}}, {{"SrcL", lo, false}, {"RegDst", low, true}});
  scalar(FormId::S_SRLI, {{"shamt", 32}}, {{"SrcL", low, false}, {"RegDst", low, true}});
  scalar(FormId::S_SLLI, {{"shamt", 32}}, {{"SrcL", hi, false}, {"RegDst", high, true}});
  scalar(FormId::S_OR, {}, {{"SrcL", low, false}, {"SrcR", high, false}, {"RegDst", both, true}});
  return both;
}

VReg FunctionLowering::strideReg(const ViewRegs& v, size_t i) {
  if (!v.constStrides.empty()) {
    VReg r = newVReg();
    materialize(r, static_cast<uint64_t>(v.constStrides[i]));
    return r;
  }
  return reg(v.strides[i]);
}

/// dst = base + elems * bits / 8.
void FunctionLowering::addScaled(VReg dst, VReg base, VReg elems, unsigned bits) {
  if (bits >= 8) {
    unsigned shift = static_cast<unsigned>(std::countr_zero(bits / 8));
    scalar(FormId::S_ADD, {{"shamt", shift}},
           {{"SrcL", base, false}, {"SrcR", elems, false}, {"RegDst", dst, true}});
    return;
  }
  VReg half = newVReg();
  scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", half, true}});
  scalar(FormId::S_ADD, {}, {{"SrcL", base, false}, {"SrcR", half, false}, {"RegDst", dst, true}});
}

void FunctionLowering::scaleToBytes(VReg dst, VReg elems, unsigned bits) {
  if (bits >= 8)
    scalar(FormId::S_SLLI, {{"shamt", std::countr_zero(bits / 8)}},
           {{"SrcL", elems, false}, {"RegDst", dst, true}});
  else
    scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", dst, true}});
}

std::optional<unsigned> FunctionLowering::blockTypeCode(SrcLoc loc, isa::DType dtype) {
  auto code = enc::dataTypeCode(dtype);
  if (!code)
    unsupported(loc, "element type " + std::string(isa::spelling(dtype)) + " in a tile block");
  return code;
}

bool FunctionLowering::tileDescFits(SrcLoc loc) {
  if (out_.tiles.size() < obj::kMaxTilesPerFunction) return true;
  diags_.error(loc, "function '@" + fn_.name + "' uses more than " +
                        std::to_string(obj::kMaxTilesPerFunction) +
                        " tile descriptors (B.TBANK selects 512 banks of 64)");
  ok_ = false;
  return false;
}

uint32_t FunctionLowering::addTile(ValueId v, obj::TileDesc d) {
  d.name = fn_.value(v).name;
  tileDescFits(fn_.value(v).loc); // an error, but lowering goes on to report the rest
  out_.tiles.push_back(std::move(d));
  uint32_t idx = static_cast<uint32_t>(out_.tiles.size() - 1);
  tiles_[v] = idx;
  return idx;
}

obj::TileDesc FunctionLowering::descOf(const TileType& t) {
  obj::TileDesc d;
  d.loc = t.loc;
  d.dtype = t.dtype;
  d.blayout = t.blayout;
  d.slayout = t.slayout;
  d.pad = t.pad;
  d.compact = t.compact;
  d.fractal = static_cast<uint16_t>(t.fractal);
  d.rows = static_cast<uint32_t>(t.rows);
  d.cols = static_cast<uint32_t>(t.cols);
  d.validRows = static_cast<int32_t>(t.validRows);
  d.validCols = static_cast<int32_t>(t.validCols);
  return d;
}

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

void FunctionLowering::lowerView(const Op& op) {
  auto parent = tiles_.find(op.operands[0]);
  if (parent == tiles_.end()) return missing(op.loc, "a view of this tile");
  const TileType& src = fn_.type(op.operands[0]).tile;
  const TileType& t = fn_.type(op.results[0]).tile;
  obj::TileDesc d = descOf(t);
  d.aliasOf = static_cast<int32_t>(parent->second);
  if (op.kind == OpKind::Subset) {
    auto r = constantInt(op.operands[1]), c = constantInt(op.operands[2]);
    if (src.slayout != isa::SLayout::NoneBox)
      return unsupported(op.loc, "'" + op.name + "' of a boxed tile");
    if (!r || !c) return lowerRuntimeSubset(op, d);
    // A view keeps its parent's pitch: a row-major view the parent's columns per row, a
    // column-major (DN) view the parent's rows per column.
    const bool colMajor = src.blayout == isa::BLayout::ColMajor;
    const int64_t element = colMajor ? *c * src.rows + *r : *r * src.cols + *c;
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

/// A subset at offsets known at run time (PTOAS's pto.subview at a loop's row): a view of its
/// row-major parent, with the parent's pitch, bound where it is made (TASSIGN) at the byte
/// offset (row * parent cols + col) * element size computed by scalar code. The runtime refuses
/// an offset past the parent's end, and clips the view to the rows left in its parent.
void FunctionLowering::lowerRuntimeSubset(const Op& op, obj::TileDesc d) {
  const TileType& src = fn_.type(op.operands[0]).tile;
  const unsigned bits = isa::bitWidth(src.dtype);
  if (src.blayout != isa::BLayout::RowMajor || bits < 8)
    return unsupported(op.loc, "'" + op.name + "' with run-time offsets of a " +
                                   (bits < 8 ? "sub-byte" : "column-major") + " tile");
  const TileType& t = fn_.type(op.results[0]).tile;
  d.aliasOffset = 0;
  d.placement = obj::kRuntimePlaced;
  d.cols = static_cast<uint32_t>(src.cols);
  if (!tileDescFits(op.loc)) return;
  const uint32_t idx = addTile(op.results[0], d);
  valid_[op.results[0]] = {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
  setSubsetValid(op);
  // element = row * parent cols + col; offset = element << log2(element bytes)
  const VReg pitch = newVReg(), element = newVReg(), offset = newVReg();
  materialize(pitch, static_cast<uint64_t>(src.cols));
  scalar(FormId::S_MUL, {},
         {{"SrcL", reg(op.operands[1]), false}, {"SrcR", pitch, false}, {"RegDst", element, true}});
  scalar(
      FormId::S_ADD, {},
      {{"SrcL", element, false}, {"SrcR", reg(op.operands[2]), false}, {"RegDst", element, true}});
  scalar(FormId::S_ADD,
         {{"shamt", static_cast<unsigned>(std::countr_zero(bits / 8))}, {"SrcL", kZero}},
         {{"SrcR", element, false}, {"RegDst", offset, true}});
  emitTileBind(idx, offset);
  pendingLoc_ = {};
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

std::optional<uint32_t> FunctionLowering::tileIndex(ValueId v, SrcLoc loc) {
  auto it = tiles_.find(v);
  if (it != tiles_.end()) return it->second;
  missing(loc, "this tile operand");
  return std::nullopt;
}

/// B.DIM for one loop bound: an immediate, or a GPR (dynamic valid shapes).
void FunctionLowering::dim(unsigned lb, const Dim& d, VReg r) {
  if (!d.dynamic()) {
    emit(enc::bDim(lb, kZero, static_cast<uint32_t>(d.constant)));
    return;
  }
  emit(enc::bDim(lb, kZero, 0), {{"RegSrc", r, false}});
}

std::pair<Dim, Dim> FunctionLowering::validOf(ValueId tile) {
  auto it = valid_.find(tile);
  if (it != valid_.end()) return it->second;
  const TileType& t = fn_.type(tile).tile;
  return {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
}

/// Op attributes the tile block has no field for (the rows of isa/OpAttrs.def encoded as
/// Refused: PTOAS's attributes with a meaning, such as a binary-tree column sum or TLOAD
/// padding): any value but the one the runtime and the NPU default to is refused here, at its
/// source line, rather than dropped. TMOV/TSTORE's fixpipe attributes are encoded
/// (ir::fixpipeAttrs, docs/encoding.md 5.3).
bool FunctionLowering::attributesEncodable(const Op& op, const isa::OpInfo& info) {
  for (const ir::AttrReading& a : op.modes->readings) {
    const isa::OpAttr& u = isa::opAttr(a.id);
    if (u.encoding != isa::AttrEncoding::Refused || a.isDefault) continue;
    unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "' with " + std::string(u.key) +
                            " = " + a.text + " (the tile block has no field for it)");
    return false;
  }
  return true;
}

namespace {
/// A tile op's operands by role.
struct RoleOperands {
  std::vector<ValueId> tilesOut, tilesIn, scalars;
  ValueId view = kNoValue, dst = kNoValue, src = kNoValue; // dst, src: the first of each
  bool scalarOut = false; // TMRGSORT's executed counts: written to B.IOR RegDst
};

RoleOperands operandsByRole(const Op& op, const isa::OpInfo& info) {
  RoleOperands r;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& role = info.roles[op.operandRoles[i]];
    ValueId v = op.operands[i];
    if (role.isOutput && role.kind != isa::RoleKind::Tile && role.kind != isa::RoleKind::View) {
      r.scalarOut = true;
    } else if (role.kind == isa::RoleKind::Tile) {
      (role.isOutput ? r.tilesOut : r.tilesIn).push_back(v);
      if (role.isOutput && r.dst == kNoValue) r.dst = v;
      if (!role.isOutput && r.src == kNoValue) r.src = v;
    } else if (role.kind == isa::RoleKind::View) {
      r.view = v;
    } else {
      r.scalars.push_back(v);
    }
  }
  return r;
}
} // namespace

void FunctionLowering::lowerTileOp(const Op& op) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  if (!attributesEncodable(op, info)) return;
  const enc::TileOpInfo* eop = enc::tileOpFor(op.tileOp);
  if (!eop) return unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "'");
  const isa::fix::Attrs fix = ir::fixpipeAttrs(fn_, op);
  // B.FPATR outside a matrix block and B.XATR are extensions (docs/encoding.md 5.3).
  if (eop->family == enc::TileFamily::EXT || fix.needsFpatr() || fix.needsXatr())
    obj_.usesExtensions = true;
  auto [tilesOut, tilesIn, scalars, view, dst, src, scalarOut] = operandsByRole(op, info);
  // TGET_SCALE_ADDR places its destination at run time (from the source's address): later
  // uses of the tile name the descriptor the block binds.
  if (info.id == isa::OpId::TGET_SCALE_ADDR && dst != kNoValue) {
    auto it = tiles_.find(dst);
    if (it == tiles_.end()) return missing(op.loc, "the scaling tile");
    runtimeTile(dst, it->second);
  }
  // Registers for the scalar and GM operands are computed before the block starts: a tile
  // block holds only header words.
  std::vector<VReg> iorRegs;
  if (view != kNoValue) {
    std::optional<PartRegs> part;
    if (auto p = parts_.find(view); p != parts_.end())
      part = p->second;
    else if (!(part = wholeViewPartition(op, view)))
      return;
    if (!part->outer.empty()) {
      if (fix.needsFpatr() || fix.needsXatr())
        return unsupported(op.loc, "fixpipe attributes with a partition of more than two "
                                   "non-unit dimensions");
      return lowerSlicedTransfer(op, info, *eop, *part, dst != kNoValue ? dst : src);
    }
    if (!part->dynOuter.empty()) {
      if (fix.needsFpatr() || fix.needsXatr())
        return unsupported(op.loc, "fixpipe attributes with a partition of dynamic outer "
                                   "dimensions");
      return lowerDynamicSlices(op, info, *eop, *part, dst != kNoValue ? dst : src);
    }
    iorRegs = {part->addr, part->rowStride};
  }
  if (info.id == isa::OpId::TRANDOM && scalars.size() == 6) {
    // Key and counter: two 32-bit scalars per register (isa/Random.h).
    for (size_t i = 0; i < scalars.size(); i += 2)
      iorRegs.push_back(packPair(reg(scalars[i]), reg(scalars[i + 1])));
    scalars.clear();
  }
  for (ValueId s : scalars)
    iorRegs.push_back(reg(s));
  for (uint64_t imm : op.modes->ior)
    iorRegs.push_back(constant(imm));
  if (iorRegs.size() > 3)
    return unsupported(op.loc, "'pto." + std::string(info.mnemonic) +
                                   "' with more than three scalar operands");
  const ValueId shapeTile =
      isa::shapeFrom(info, dst != kNoValue) == isa::ShapeFrom::Source && src != kNoValue ? src
                                                                                         : dst;
  std::pair<Dim, Dim> valid = shapeTile != kNoValue ? validOf(shapeTile) : std::pair<Dim, Dim>{};
  const isa::DType startType = fn_.type(startTypeTile(op, info, shapeTile, src)).tile.dtype;
  auto code = blockTypeCode(op.loc, startType);
  if (!code) return;
  VReg rowsReg = dimReg(valid.first), colsReg = dimReg(valid.second);
  inScalarBlock_ = false;
  MInst& start = emit(enc::tileStart(eop->op, *code));
  (void)start;
  // B.DATR: destination type, rounding, saturation, compare mode.
  if (auto datr = datrFor(op, info, dst)) emit(enc::bDatr(*datr));
  if (fix.needsFpatr()) emit(enc::bFpatr(fix));
  if (fix.needsXatr()) emit(enc::bXatr(fix));
  if (info.rule == isa::TypeRule::Matmul) {
    emit(make(FormId::B_FPATR, {}));
    const TileType& L = fn_.type(roleValue(op, isa::RoleId::Lhs)).tile;
    const TileType& R = fn_.type(roleValue(op, isa::RoleId::Rhs)).tile;
    auto v = [](int64_t valid, int64_t phys) { return valid == kDynamic ? phys : valid; };
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(v(L.validRows, L.rows))));
    emit(enc::bDim(1, kZero, static_cast<uint32_t>(v(R.validCols, R.cols))));
    emit(enc::bDim(2, kZero, static_cast<uint32_t>(v(L.validCols, L.cols))));
  } else if (shapeTile != kNoValue) {
    const TileType& t = fn_.type(shapeTile).tile;
    dim(0, valid.second, colsReg);
    if (valid.first.dynamic() || valid.first.constant != 1) dim(1, valid.first, rowsReg);
    if (valid.second.dynamic() || valid.second.constant != t.cols)
      emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
  }
  if (!iorRegs.empty() || scalarOut) {
    std::vector<RegRef> refs;
    const enc::FieldName fields[] = {"RegSrc0", "RegSrc1", "RegSrc2"};
    for (size_t i = 0; i < iorRegs.size(); ++i)
      refs.push_back({fields[i], iorRegs[i], false});
    // The counts land in a register of their own: PTOAS's DPS output names a value that no op
    // reads afterwards (SSA values do not change), so nothing else sees the write.
    if (scalarOut) refs.push_back({"RegDst", newVReg(), true});
    emit(enc::bIor(0, 0, 0, 0), refs);
  }
  // B.IOT: tile operands, destination first, two per word, `last` on the final word.
  std::vector<ValueId> order = tilesOut;
  order.insert(order.end(), tilesIn.begin(), tilesIn.end());
  std::vector<uint32_t> idx;
  for (ValueId t : order) {
    auto i = tileIndex(t, op.loc);
    if (!i) return;
    idx.push_back(*i);
  }
  bindTiles(idx);
  emit(enc::bstop());
}

bool FunctionLowering::isDn(ValueId view) const {
  auto p = parts_.find(view);
  return p != parts_.end() && p->second.dn;
}

void FunctionLowering::emitTileBind(uint32_t idx, VReg addr) {
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

std::optional<enc::Datr> FunctionLowering::datrFor(const Op& op, const isa::OpInfo& info,
                                                   ValueId dst) {
  enc::Datr d;
  switch (info.id) {
  case isa::OpId::TCVT: {
    d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
    d.rmode = enc::rmodeCode(op.modes->round.value_or(isa::RoundMode::CAST_RINT));
    // The block always carries the effective saturation: the attribute, else the pair's
    // default (docs/numerics.md), so an explicit OFF on a pair that saturates by default stays OFF.
    if (op.modes->sat)
      d.sat = *op.modes->sat == isa::SatMode::ON;
    else
      d.sat = isa::cvtSaturatesByDefault(fn_.type(roleValue(op, isa::RoleId::Src)).tile.dtype,
                                         fn_.type(dst).tile.dtype);
    return d;
  }
  case isa::OpId::TCMP:
  case isa::OpId::TCMPS:
  case isa::OpId::TGATHER_CMP:
    d.dataType = enc::dataTypeCode(fn_.type(roleValue(op, isa::RoleId::Src0) != kNoValue
                                                ? roleValue(op, isa::RoleId::Src0)
                                                : roleValue(op, isa::RoleId::Src))
                                       .tile.dtype)
                     .value_or(0);
    d.cmode = enc::cmodeCode(op.modes->cmp.value_or(isa::CmpMode::EQ));
    return d;
  case isa::OpId::TDEQUANT:
  case isa::OpId::TQUANT:
    d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
    return d;
  case isa::OpId::TRANDOM: { // the round count (isa/Random.h); 10 needs no B.DATR
    const auto rounds = op.modes->rounds.value_or(isa::trandom::kDefaultRounds);
    const auto code = isa::trandom::roundsCode(static_cast<uint64_t>(rounds));
    if (!code || *code == 0) return std::nullopt;
    d.rmode = *code;
    return d;
  }
  case isa::OpId::TLOAD:
  case isa::OpId::TPREFETCH: {
    // GM in DN layout: B.DATR.Layout DN2ND (the runtime reads the GM side of the code).
    ValueId view = roleValue(op, isa::RoleId::Src);
    if (view == kNoValue || !isDn(view)) return std::nullopt;
    d.layout = *enc::layoutCode("DN2ND");
    d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
    return d;
  }
  case isa::OpId::TSTORE: {
    // A store that converts (acc f32 -> f16 GM through the fixpipe) names the GM type; a
    // store to a DN view says so in the layout (ND2DN).
    ValueId view = roleValue(op, isa::RoleId::Dst), src = roleValue(op, isa::RoleId::Src);
    if (view == kNoValue || src == kNoValue) return std::nullopt;
    const bool converts = fn_.type(view).elem != fn_.type(src).tile.dtype;
    if (!converts && !isDn(view)) return std::nullopt;
    d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
    if (isDn(view)) d.layout = *enc::layoutCode("ND2DN");
    return d;
  }
  default:
    return std::nullopt;
  }
}

uint32_t FunctionLowering::eventIndex(const Op& op) {
  std::string name = op.event->symbol.empty() ? "anon." + std::string(isa::spelling(op.srcPipe)) +
                                                    "." + std::string(isa::spelling(op.dstPipe))
                                              : op.event->symbol;
  auto key = std::pair(index_, name);
  if (auto it = eventIds_.find(key); it != eventIds_.end()) return it->second;
  obj_.events.push_back({index_, name, op.srcPipe, op.dstPipe});
  uint32_t id = static_cast<uint32_t>(obj_.events.size() - 1);
  eventIds_[key] = id;
  return id;
}

/// Cross-core flags and buffer tokens: BSTART.EXT <CTL>, <pipe> with the id in B.DIM ->LB0,
/// like SET_FLAG's event id (constant or a register).
void FunctionLowering::lowerCoreSync(const Op& op) {
  obj_.usesExtensions = true;
  const enc::ExtCtl ctl = op.named == NamedOp::SyncSet    ? enc::ExtCtl::SYNC_SET
                          : op.named == NamedOp::SyncWait ? enc::ExtCtl::SYNC_WAIT
                          : op.named == NamedOp::GetBuf   ? enc::ExtCtl::GET_BUF
                                                          : enc::ExtCtl::RLS_BUF;
  VReg dynamic = op.event->kind == EventRef::Kind::Dynamic ? reg(op.operands[0]) : kNoVReg;
  inScalarBlock_ = false;
  emit(enc::extControl(ctl, op.srcPipe));
  if (dynamic != kNoVReg)
    emit(enc::bDim(0, kZero, 0), {{"RegSrc", dynamic, false}});
  else
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.event->id)));
  emit(enc::bstop());
}

void FunctionLowering::lowerSync(const Op& op) {
  obj_.usesExtensions = true;
  if (op.kind == OpKind::Barrier) {
    inScalarBlock_ = false;
    emit(enc::extControl(enc::ExtCtl::PIPE_BARRIER, op.srcPipe));
    emit(enc::bstop());
    return;
  }
  VReg dynamic = op.event->kind == EventRef::Kind::Dynamic ? reg(op.operands[0]) : kNoVReg;
  inScalarBlock_ = false;
  emit(enc::extControl(op.kind == OpKind::SetFlag ? enc::ExtCtl::SET_FLAG : enc::ExtCtl::WAIT_FLAG,
                       op.srcPipe, op.dstPipe));
  switch (op.event->kind) {
  case EventRef::Kind::Const:
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.event->id)));
    break;
  case EventRef::Kind::Dynamic:
    emit(enc::bDim(0, kZero, 0), {{"RegSrc", dynamic, false}});
    break;
  case EventRef::Kind::Symbolic: {
    MInst& w = emit(enc::bDim(0, kZero, 0));
    addReloc(w, obj::RelocType::Event, eventIndex(op));
    break;
  }
  }
  emit(enc::bstop());
}

void FunctionLowering::lowerBlockInfo(const Op& op) {
  obj_.usesExtensions = true;
  enc::ExtCtl c = op.named == NamedOp::GetBlockIdx      ? enc::ExtCtl::GET_BLOCK_IDX
                  : op.named == NamedOp::GetBlockNum    ? enc::ExtCtl::GET_BLOCK_NUM
                  : op.named == NamedOp::GetSubblockIdx ? enc::ExtCtl::GET_SUBBLOCK_IDX
                                                        : enc::ExtCtl::GET_SUBBLOCK_NUM;
  inScalarBlock_ = false;
  emit(enc::extControl(c));
  emit(enc::bIor(0, 0, 0, 0), {{"RegDst", define(op.results[0]), true}});
  emit(enc::bstop());
}

void FunctionLowering::lowerScalarMemory(const Op& op) {
  bool load = op.kind == OpKind::LoadScalar;
  ValueId ptr = op.operands[load ? 0 : 1], off = op.operands[load ? 1 : 2];
  isa::DType elem = fn_.type(ptr).elem;
  unsigned bytes = std::max(1u, isa::bitWidth(elem) / 8);
  unsigned shift = static_cast<unsigned>(std::countr_zero(bytes));
  VReg p = reg(ptr), o = reg(off);
  bool isSigned = isa::info(elem).kind == isa::DTypeKind::SInt;
  if (load) {
    FormId f = bytes == 8   ? FormId::S_LD
               : bytes == 4 ? (isSigned ? FormId::S_LW : FormId::S_LWU)
               : bytes == 2 ? (isSigned ? FormId::S_LH : FormId::S_LHU)
                            : (isSigned ? FormId::S_LB : FormId::S_LBU);
    scalar(f, {{"shamt", shift}},
           {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  // Stores have no scaled index: form the address first.
  VReg addr = newVReg();
  scalar(FormId::S_ADD, {{"shamt", shift}},
         {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", addr, true}});
  FormId f = bytes == 8   ? FormId::S_SD
             : bytes == 4 ? FormId::S_SW
             : bytes == 2 ? FormId::S_SH
                          : FormId::S_SB;
  scalar(f, {{"SrcR", kZero}}, {{"SrcD", reg(op.operands[0]), false}, {"SrcL", addr, false}});
}

/// Event-id arrays live in the stack frame, 8 bytes per entry.
void FunctionLowering::lowerEventArray(const Op& op) {
  if (op.kind == OpKind::DeclareEventIdArray) {
    int64_t n = 1;
    for (int64_t d : fn_.type(op.results[0]).shape)
      n *= d;
    // The array area is addressed with 12-bit offsets from sp past the spill slots.
    if (arrayBytes_ + n * 8 > 2048)
      return unsupported(op.loc, "more than 2 KiB of event-id and local arrays in one function");
    arrays_[op.results[0]] = arrayBytes_;
    arrayBytes_ += static_cast<uint32_t>(n * 8);
    pendingLoc_ = {};
    return;
  }
  auto base = arrays_.find(op.operands[0]);
  if (base == arrays_.end()) return missing(op.loc, "this array");
  // The element's index, row-major over the dimensions: ((i0 * d1) + i1) * d2 + i2 ...
  const std::vector<int64_t>& dims = fn_.type(op.operands[0]).shape;
  VReg idx = reg(op.operands[1]);
  for (size_t k = 1; k < dims.size(); ++k) {
    VReg d = newVReg(), scaled = newVReg(), sum = newVReg();
    materialize(d, static_cast<uint64_t>(dims[k]));
    scalar(FormId::S_MUL, {}, {{"SrcL", idx, false}, {"SrcR", d, false}, {"RegDst", scaled, true}});
    scalar(
        FormId::S_ADD, {},
        {{"SrcL", scaled, false}, {"SrcR", reg(op.operands[1 + k]), false}, {"RegDst", sum, true}});
    idx = sum;
  }
  VReg addr = newVReg();
  // addr = sp + arrayBase + 8*idx; the array area follows the spill slots (patched later).
  scalar(FormId::S_ADD, {{"shamt", 3}, {"SrcL", kSp}},
         {{"SrcR", idx, false}, {"RegDst", addr, true}});
  scalar(FormId::S_ADDI, {{"uimm12", 0}}, {{"SrcL", addr, false}, {"RegDst", addr, true}});
  extra(code_.back()).arrayBase = static_cast<int>(base->second);
  if (op.kind == OpKind::EventIdArraySet)
    scalar(FormId::S_SD, {{"SrcR", kZero}},
           {{"SrcD", reg(op.operands.back()), false}, {"SrcL", addr, false}});
  else
    scalar(FormId::S_LD, {{"SrcR", kZero}},
           {{"SrcL", addr, false}, {"RegDst", define(op.results[0]), true}});
}

} // namespace pto::as::lower
