// Instruction selection for GM views: make_tensor_view, memref.reinterpret_cast, get_dim,
// partition_view (their base, shape and stride registers), and scalar packing for tile blocks.
#include "asm/codegen/FunctionLowering.h"

#include <algorithm>
#include <bit>

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
  if (!dim) return unsupported(op.loc, "'" + op.name + "' with a non-constant dimension");
  const Type& t = fn_.type(op.operands[0]);
  if (*dim < 0 || static_cast<size_t>(*dim) >= t.shape.size()) {
    diags_.error(op.operandLocs[1],
                 "dimension " + std::to_string(*dim) + " is out of range for " + toString(t));
    ok_ = false;
    return;
  }
  if (op.name == "pto.get_tensor_view_stride") return lowerGetStride(op, static_cast<size_t>(*dim));
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

/// pto.get_tensor_view_stride: the stride in elements of a view's dimension (a partition's are its
/// view's): a static stride is a constant, a dynamic one the make_tensor_view operand.
void FunctionLowering::lowerGetStride(const Op& op, size_t dim) {
  ValueId view = op.operands[0];
  if (auto p = parts_.find(view); p != parts_.end() && p->second.source != kNoValue)
    view = p->second.source;
  auto vit = views_.find(view);
  if (vit == views_.end()) return unsupported(op.loc, "'" + op.name + "' of this view");
  const ViewRegs& v = vit->second;
  if (!v.constStrides.empty() && dim < v.constStrides.size()) {
    constants_[op.results[0]] = static_cast<uint64_t>(v.constStrides[dim]);
    return;
  }
  if (dim >= v.strides.size()) return unsupported(op.loc, "'" + op.name + "' of this view");
  copy(define(op.results[0]), reg(v.strides[dim]));
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
  p.source = op.operands[0];
  // The rows of a slice: the second-to-last dimension, or, when that one is a single element,
  // the last static dimension before it that spans more (moving a singleton axis changes no
  // address: 1x16x1x16 is 16 rows of 16 at the second dimension's stride, as PTOAS
  // canonicalizes it, issue 453).
  const size_t rowsDim = sliceRowsDim(pt, rank, v.dn);
  // Dimensions before the rows that span more than one element: a stack of 2-D slices,
  // counted at run time when a size of the partition is dynamic.
  bool dynamic = false;
  for (size_t i = 0; i < rowsDim; ++i)
    dynamic = dynamic ||
              (pt.shape[i] != 1 && (pt.shape[i] == kDynamic || pt.shape[rank - 1] == kDynamic ||
                                    pt.shape[rowsDim] == kDynamic));
  for (size_t i = 0; i < rowsDim; ++i) {
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
    p.sliceRowsV = op.operands[1 + rank + rowsDim];
    p.sliceColsV = op.operands[1 + 2 * rank - 1];
  }
  if (!p.outer.empty()) {
    p.sliceRows = rank >= 2 ? pt.shape[rowsDim] : 1;
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
    scaleToBytes(p.rowStride, strideReg(v, v.dn ? rank - 1 : rowsDim), elemBits);
  else
    materialize(p.rowStride, 0);
  parts_[op.results[0]] = p;
}

size_t FunctionLowering::sliceRowsDim(const Type& pt, size_t rank, bool dn) {
  if (rank < 2) return 0;
  const size_t rows = rank - 2;
  if (dn || rank < 3 || pt.shape[rows] != 1 || pt.shape[rank - 1] == kDynamic) return rows;
  for (size_t j = rows; j-- > 0;)
    if (pt.shape[j] != 1) return pt.shape[j] == kDynamic ? rows : j;
  return rows;
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
  const size_t rowsDim = folds ? (rank >= 2 ? rank - 2 : 0) : sliceRowsDim(t, rank, v.dn);
  for (size_t i = 0; !folds && i < rowsDim; ++i) {
    if (t.shape[i] == 1) continue;
    if (v.dn) {
      unsupported(op.loc,
                  "a whole DN tensor view with more than two non-unit dimensions as a GM operand");
      return std::nullopt;
    }
    if (t.shape[i] == kDynamic || t.shape[rank - 1] == kDynamic || t.shape[rowsDim] == kDynamic) {
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
    p.sliceRows = rank >= 2 ? t.shape[rowsDim] : 1;
    p.sliceCols = t.shape[rank - 1];
  }
  p.addr = newVReg();
  copy(p.addr, v.base);
  p.rowStride = newVReg();
  if (rank >= 2)
    scaleToBytes(p.rowStride, strideReg(v, v.dn ? rank - 1 : rowsDim), elemBits);
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

} // namespace pto::as::lower
