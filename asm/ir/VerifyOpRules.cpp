// Verifier rules of single tile ops beyond the op table's columns: fixpipe attributes, store
// counts, attribute scalars (TRANDOM rounds, TTRI, TMRGSORT lists, TGATHER's mask and compare
// forms, TGET_SCALE_ADDR, TQUANT types); docs/verifier.md. The values of the attributes of
// isa/OpAttrs.def are checked by attributeValueError, from the parser's readings by each row's
// domain.
#include "asm/ir/Verifier.h"
#include "asm/ir/VerifierImpl.h"
#include "isa/Fixpipe.h"
#include "isa/Random.h"
#include "support/Text.h"

namespace pto::as::verify {

using isa::DType;
using isa::Loc;

std::optional<std::string> attributeValueError(const Op& op, isa::OpAttrId id) {
  const isa::OpAttr& row = isa::opAttr(id);
  const ir::AttrReading* r = op.kind == ir::OpKind::TileOp ? ir::attrReading(op, id) : nullptr;
  if (!r || r->value || row.domain == isa::AttrDomain::Word) return std::nullopt;
  return std::string(row.key) + " " + std::string(isa::domainRule(row.domain)) + ", found " +
         r->text;
}

void Verifier::checkFixpipe(const Op& op, const std::string& name,
                            const std::vector<Operand>& ops) {
  namespace fix = isa::fix;
  const Operand *src = nullptr, *dst = nullptr, *fp = nullptr, *pre = nullptr;
  for (const Operand& o : ops) {
    if (o.role->id == isa::RoleId::Src) src = &o;
    if (o.role->id == isa::RoleId::Dst) dst = &o;
    if (o.role->id == isa::RoleId::Fp) fp = &o;
    if (o.role->id == isa::RoleId::Pre) pre = &o;
  }
  if (!src || !dst) return;
  const ir::TileModes& m = *op.modes;
  const TileType& s = tileOf(*src);
  const bool relu = m.relu && *m.relu != isa::ReluPreMode::NoRelu;
  const bool fromAcc = s.loc == Loc::Acc;
  const bool toVec = type(dst->value).isTile() && tileOf(*dst).loc == Loc::Vec;
  const DType d = type(dst->value).isTile() ? tileOf(*dst).dtype : type(dst->value).elem;
  auto error = [&](SrcLoc at, const std::string& what) {
    diags_.error(at, "'" + name + "' " + what);
  };
  if (relu && !fromAcc) return error(op.loc, "expects reluPreMode form to use loc=acc src");
  if (pre && !fromAcc) return error(pre->loc, "expects preQuantScalar form to use loc=acc src");
  if (fp && !fromAcc) return error(fp->loc, "expects fp form to use loc=acc src");
  if (fp && pre)
    return error(pre->loc, "expects fp and preQuantScalar forms to be mutually exclusive");
  if (fp && tileOf(*fp).loc != Loc::Scaling)
    return error(fp->loc, "expects fp to be in the scaling address space");
  if (m.accToVec && !(fromAcc && toVec))
    return error(op.loc, "expects accToVecMode to be used only for acc-to-vec tmov");
  const bool dual = m.accToVec && (*m.accToVec == isa::AccToVecMode::DualSplitM ||
                                   *m.accToVec == isa::AccToVecMode::DualSplitN);
  if (dual && (fp || pre))
    return error(op.loc,
                 "expects fp/preQuantScalar acc-to-vec forms to use single-mode accToVecMode");
  if ((relu || fp || pre) && s.dtype != DType::F32 && s.dtype != DType::I32)
    return error(src->loc, "expects an acc src of element type f32 or i32 for the fixpipe's "
                           "relu or quantisation, found " +
                               dt(s.dtype));
  if (fp || pre) {
    const auto kind = fp ? fix::QuantKind::Vector : fix::QuantKind::Scalar;
    if (!fix::quantPreFor(s.dtype, d, kind))
      return error(fp ? fp->loc : pre->loc,
                   std::string("has no ") + (fp ? "vector" : "scalar") + " pre-quantisation from " +
                       dt(s.dtype) + " to " + dt(d) +
                       (fp ? " (f32 -> i8/ui8/f16; i32 -> i8/ui8/f16/bf16)"
                           : " (f32 -> i8/ui8/f16/bf16; i32 -> i8/ui8/f16/bf16)"));
    const bool a2a3Pair =
        d == DType::I8 || d == DType::U8 || (s.dtype == DType::I32 && d == DType::F16);
    if (arch_ != isa::Arch::A5 && !a2a3Pair)
      return error(fp ? fp->loc : pre->loc,
                   "on " + archName() +
                       " quantises f32 to i8/ui8 and i32 to i8/ui8/f16 only, found " + dt(s.dtype) +
                       " to " + dt(d));
  }
  if (m.atomic && *m.atomic == isa::AtomicType::Add && !fix::atomicAddType(d))
    return error(dst->loc, "with atomicType = atomic_add needs a destination of f32, f16, bf16, "
                           "i32, i16 or i8, found " +
                               dt(d));
}

/// TSTORE writes the tile's valid region into the partition: when both are static they hold the
/// same number of elements (PTOAS's contract, which keeps reshaping stores such as 1x1024 <->
/// 32x32 and 5-D partitions legal while refusing a store that would leave part of the
/// partition unwritten or write past it).
void Verifier::checkStoreCount(const std::string& name, const std::vector<Operand>& ops) {
  const Operand *src = nullptr, *view = nullptr;
  for (const Operand& o : ops) {
    if (o.role->id == isa::RoleId::Src && o.role->kind == isa::RoleKind::Tile) src = &o;
    if (o.role->id == isa::RoleId::Dst && o.role->kind == isa::RoleKind::View) view = &o;
  }
  if (!src || !view || type(view->value).kind != ir::TypeKind::PartView) return;
  int64_t viewCount = 1;
  for (int64_t dim : type(view->value).shape) {
    if (dim == kDynamic || dim <= 0 || viewCount > (int64_t{1} << 40)) return;
    viewCount *= dim;
  }
  const TileType& t = tileOf(*src);
  if (t.validRows == kDynamic || t.validCols == kDynamic) return;
  if (viewCount != t.validRows * t.validCols) {
    diags_.error(view->loc, "'" + name + "' expects dst static element count (" +
                                std::to_string(viewCount) +
                                ") to match src valid_shape static element count (" +
                                std::to_string(t.validRows * t.validCols) + ", " + vshape(t) + ")");
    noteDef(view->value, view->loc);
  }
}

void Verifier::checkAttributeScalars(const Op& op, const std::string& name) {
  if (op.tileOp == isa::OpId::TQUANT) checkQuantType(op, name);
  if (op.tileOp == isa::OpId::TGATHER) checkMaskPattern(op, name);
  if (op.tileOp == isa::OpId::TMRGSORT) checkMergeLists(op, name);
  if (op.tileOp == isa::OpId::TGATHER_CMP) checkGatherCompare(op, name);
  if (op.tileOp == isa::OpId::TGATHER) checkGatherIndexShape(op, name);
  if (op.tileOp == isa::OpId::TGATHERB) checkGatherBlocks(op, name);
  if (op.tileOp == isa::OpId::TGET_SCALE_ADDR) checkScaleAddr(op, name);
  if (op.tileOp == isa::OpId::TCONCATIDX) checkConcatIdx(op, name);
  if (op.tileOp == isa::OpId::TRANDOM)
    if (auto e = attributeValueError(op, isa::OpAttrId::TrandomRounds))
      diags_.error(op.loc, "'" + name + "' " + *e);
  if (op.tileOp == isa::OpId::TCI)
    if (auto e = attributeValueError(op, isa::OpAttrId::TciDescending))
      diags_.error(op.loc, "'" + name + "' " + *e);
  if (op.tileOp == isa::OpId::TTRI)
    if (auto e = attributeValueError(op, isa::OpAttrId::TtriUpperOrLower))
      diags_.error(op.loc, "'" + name + "' " + *e);
}

/// TMRGSORT's list form (dst, tmp, 2-4 lists) may stop when a list runs out (`exhausted`) and
/// report how far it got in a vector<4xi16> (pto-isa's MrgSortExecutedNumList); the block form
/// (dst, src, blockLen) has neither.
void Verifier::checkMergeLists(const Op& op, const std::string& name) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  size_t tiles = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& r = info.roles[op.operandRoles[i]];
    tiles += r.kind == isa::RoleKind::Tile;
    if (r.id == isa::RoleId::Executed && type(op.operands[i]).kind != ir::TypeKind::Vector)
      return diags_.error(op.operandLocs[i], "'" + name +
                                                 "' reports its executed counts in a "
                                                 "vector<4xi16>, found " +
                                                 toString(type(op.operands[i])));
  }
  const bool lists = tiles >= 4;
  bool executed = false;
  for (size_t i = 0; i < op.operands.size(); ++i)
    executed |= info.roles[op.operandRoles[i]].id == isa::RoleId::Executed;
  if (!lists && (executed || ir::attrReading(op, isa::OpAttrId::TmrgsortExhausted)))
    diags_.error(op.loc, "'" + name +
                             "' takes 'exhausted' and an executed-count output only when it "
                             "merges lists (dst, tmp and 2 to 4 sources)");
  if (auto e = attributeValueError(op, isa::OpAttrId::TmrgsortExhausted))
    diags_.error(op.loc, "'" + name + "' " + *e);
}

/// TGET_SCALE_ADDR (PTOAS's verifier): the destination is a scaling tile with the source's shape
/// and valid shape; the source lives in L0 (left or right), whose addresses map onto the scaling
/// buffer by >> 4.
/// TCONCATIDX's count tiles (pto-isa's TCONCAT static asserts): 8-, 16- or 32-bit integers,
/// both of one type; each row's count is the element in its first column.
void Verifier::checkConcatIdx(const Op& op, const std::string& name) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  const TileType* first = nullptr;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::RoleId role = info.roles[op.operandRoles[i]].id;
    if (role != isa::RoleId::Idx0 && role != isa::RoleId::Idx1) continue;
    if (!type(op.operands[i]).isTile()) return;
    const TileType& t = type(op.operands[i]).tile;
    const isa::DTypeInfo& d = isa::info(t.dtype);
    const bool integer = d.kind == isa::DTypeKind::SInt || d.kind == isa::DTypeKind::UInt;
    if (!integer || (d.bits != 8 && d.bits != 16 && d.bits != 32))
      return diags_.error(op.operandLocs[i], "'" + name + "' counts are 8-, 16- or 32-bit " +
                                                 "integers, found " +
                                                 std::string(isa::spelling(t.dtype)));
    if (first && first->dtype != t.dtype)
      return diags_.error(op.operandLocs[i], "'" + name + "' expects idx0 and idx1 of one type (" +
                                                 std::string(isa::spelling(first->dtype)) + ")");
    first = &t;
  }
}

void Verifier::checkScaleAddr(const Op& op, const std::string& name) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  const TileType *src = nullptr, *dst = nullptr;
  SrcLoc dstLoc = op.loc, srcLoc = op.loc;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (!type(op.operands[i]).isTile()) return;
    const bool out = info.roles[op.operandRoles[i]].isOutput;
    (out ? dst : src) = &type(op.operands[i]).tile;
    (out ? dstLoc : srcLoc) = op.operandLocs[i];
  }
  if (!src || !dst) return;
  if (dst->loc != isa::Loc::Scaling)
    return diags_.error(dstLoc, "'" + name + "' binds a scaling tile (loc=scaling), found loc=" +
                                    std::string(isa::spelling(dst->loc)));
  if (src->loc != isa::Loc::Left && src->loc != isa::Loc::Right)
    return diags_.error(srcLoc, "'" + name +
                                    "' takes the scale address of a left or right tile, "
                                    "found loc=" +
                                    std::string(isa::spelling(src->loc)));
  // The scale tile of an MX operand (PTOAS's verifier): a left M x K source has an M x
  // ceil(K/32) one, a right K x N source a ceil(K/32) x N one, K the source's valid extent;
  // a dynamic extent agrees with any. PTOAS before v0.6 typed it with the source's shape and
  // valid shape instead: kernels written so are accepted too (the binding is the same).
  const bool left = src->loc == isa::Loc::Left;
  const int64_t k = left ? src->validCols : src->validRows;
  const int64_t scaleK = k == kDynamic ? kDynamic : (k + 31) / 32;
  auto agrees = [](int64_t a, int64_t b) { return a == kDynamic || b == kDynamic || a == b; };
  const bool mx =
      left ? agrees(dst->rows, src->rows) && agrees(dst->cols, scaleK) &&
                 agrees(dst->validRows, src->validRows) && agrees(dst->validCols, scaleK)
           : agrees(dst->rows, scaleK) && agrees(dst->cols, src->cols) &&
                 agrees(dst->validRows, scaleK) && agrees(dst->validCols, src->validCols);
  const bool sourceShaped = src->rows == dst->rows && src->cols == dst->cols &&
                            src->validRows == dst->validRows && src->validCols == dst->validCols;
  if (!mx && !sourceShaped)
    diags_.error(dstLoc, "'" + name + "' expects dst shape/valid_shape to be " +
                             (left ? "[M, ceil(K/32)]" : "[ceil(K/32), N]") + " (" +
                             (left ? std::to_string(src->rows) + "x" + std::to_string(scaleK)
                                   : std::to_string(scaleK) + "x" + std::to_string(src->cols)) +
                             ", or the source's " + std::to_string(src->rows) + "x" +
                             std::to_string(src->cols) + " as PTOAS before v0.6), found " +
                             std::to_string(dst->rows) + "x" + std::to_string(dst->cols) +
                             ", valid " + vshape(*dst));
}

/// TGATHER's compare form: pto-isa's CmpMode GT or EQ, and a first index that keeps every index
/// an i32 (pto-isa's uint32_t offset; PTOAS's i32 attribute).
void Verifier::checkGatherCompare(const Op& op, const std::string& name) {
  const isa::CmpMode mode = op.modes->cmp.value_or(isa::CmpMode::EQ);
  if (mode != isa::CmpMode::EQ && mode != isa::CmpMode::GT)
    diags_.error(op.loc, "'" + name + "' compare form supports cmpMode eq or gt, found " +
                             std::string(isa::spelling(mode)));
  const isa::OpInfo& info = isa::info(op.tileOp);
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (info.roles[op.operandRoles[i]].id == isa::RoleId::Src && arch_ != isa::Arch::A5 &&
        type(op.operands[i]).isTile() && type(op.operands[i]).tile.dtype == DType::I32 &&
        mode != isa::CmpMode::EQ)
      diags_.error(op.operandLocs[i],
                   "'" + name + "' compare form takes an i32 source only with cmpMode eq on a2a3");
  if (auto e = attributeValueError(op, isa::OpAttrId::TgatherCmpOffset))
    diags_.error(op.loc, "'" + name + "' " + *e);
}

/// TGATHER's index form writes one element per index: the index tile covers exactly the
/// destination's valid region (PTOAS's verifier, same message; pto-isa's kernels iterate both).
void Verifier::checkGatherIndexShape(const Op& op, const std::string& name) {
  const TileType* dst = ir::roleTile(*fn_, op, isa::RoleId::Dst);
  const TileType* idx = ir::roleTile(*fn_, op, isa::RoleId::Indices);
  if (!dst || !idx) return;
  const TileType &d = *dst, &i = *idx;
  if (d.validRows == kDynamic || d.validCols == kDynamic || i.validRows == kDynamic ||
      i.validCols == kDynamic)
    return;
  if (i.validRows < d.validRows || i.validCols < d.validCols) return; // the coverage rule's
  if (d.validRows != i.validRows || d.validCols != i.validCols)
    diags_.error(op.loc, "'" + name + "' expects dst and indices to have the same valid_shape (" +
                             vshape(d) + " and " + vshape(i) + ")");
}

/// TGATHERB gathers 32-byte blocks (pto-isa's vgatherb, docs/runtime.md): each row of the offset
/// tile holds one byte offset per 32-byte block of the destination row, in groups of eight (one
/// 256-byte repeat), and both tiles are row-major; A2/A3 moves 1-, 2- or 4-byte elements.
void Verifier::checkGatherBlocks(const Op& op, const std::string& name) {
  const TileType* dst = ir::roleTile(*fn_, op, isa::RoleId::Dst);
  const TileType* off = ir::roleTile(*fn_, op, isa::RoleId::Offsets);
  if (!dst || !off) return;
  const TileType &d = *dst, &o = *off;
  if (d.blayout != isa::BLayout::RowMajor || o.blayout != isa::BLayout::RowMajor)
    return diags_.error(op.loc, "'" + name + "' expects dst and offsets to use row-major layout");
  const unsigned bits = isa::bitWidth(d.dtype);
  if (arch_ != isa::Arch::A5 && bits != 8 && bits != 16 && bits != 32)
    return diags_.error(op.loc, "'" + name +
                                    "' expects A2/A3 dst element size to be 1, 2, or 4 "
                                    "bytes, found " +
                                    std::to_string(bits / 8));
  if (d.validRows != kDynamic && o.validRows != kDynamic && d.validRows != o.validRows)
    return diags_.error(
        op.loc, "'" + name + "' expects offsets valid rows to match dst valid rows (" +
                    std::to_string(o.validRows) + " and " + std::to_string(d.validRows) + ")");
  if (d.validCols == kDynamic || o.validCols == kDynamic) return;
  const int64_t blocks = (d.validCols * bits / 8 + 31) / 32;
  const int64_t entries = (blocks + 7) / 8 * 8;
  if (o.validCols != entries)
    diags_.error(op.loc, "'" + name +
                             "' expects offsets valid cols to be compact 32B block address count "
                             "padded to 8 entries; expected " +
                             std::to_string(entries) + ", got " + std::to_string(o.validCols));
}

/// TGATHER's mask form (`maskPattern`) packs the selected columns of each row of its source; it
/// takes no index or tmp tile (PTOAS's parser), and pto-isa has seven patterns.
void Verifier::checkMaskPattern(const Op& op, const std::string& name) {
  if (!ir::attrReading(op, isa::OpAttrId::TgatherMaskPattern)) return;
  if (auto e = attributeValueError(op, isa::OpAttrId::TgatherMaskPattern))
    return diags_.error(op.loc, "'" + name + "' " + *e);
  const isa::OpInfo& info = isa::info(op.tileOp);
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& r = info.roles[op.operandRoles[i]];
    if (!r.isOutput && r.id != isa::RoleId::Src)
      return diags_.error(op.operandLocs[i],
                          "'" + name + "' mask-pattern tgather does not take extra ins operands");
  }
}

/// TQUANT's mode (pto-isa's QuantType) is its offset tile: INT8_SYM writes i8 and takes no offset,
/// INT8_ASYM writes ui8 and needs one (pto-isa's static_asserts). PTOAS also spells the mode as
/// `quant_type`, which must then agree with the operands (PTOAS's verifier, same messages).
void Verifier::checkQuantType(const Op& op, const std::string& name) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  bool hasOffset = false;
  size_t dst = op.operands.size();
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& r = info.roles[op.operandRoles[i]];
    if (r.id == isa::RoleId::Offset) hasOffset = true;
    if (r.isOutput) dst = i;
  }
  bool sym = !hasOffset;
  const ir::AttrReading* quant = ir::attrReading(op, isa::OpAttrId::TquantQuantType);
  if (quant) {
    sym = quant->value == 0;
    if (auto e = attributeValueError(op, isa::OpAttrId::TquantQuantType))
      return diags_.error(op.loc, "'" + name + "' " + *e);
    if (sym && hasOffset)
      return diags_.error(op.loc,
                          "'" + name + "' INT8_SYM quantization must not have an offset operand");
    if (!sym && !hasOffset)
      return diags_.error(op.loc,
                          "'" + name + "' INT8_ASYM quantization requires an offset operand");
  }
  if (dst == op.operands.size() || !type(op.operands[dst]).isTile()) return;
  const DType d = type(op.operands[dst]).tile.dtype;
  if (d != DType::I8 && d != DType::U8) return; // the type rule says what it produces
  if (sym && d != DType::I8)
    diags_.error(op.operandLocs[dst],
                 "'" + name + "' expects dst element type i8 for INT8_SYM quantization (" +
                     (quant ? "" : "no offset tile; ") + "found ui8)");
  else if (!sym && d != DType::U8)
    diags_.error(op.operandLocs[dst],
                 "'" + name + "' expects dst element type ui8 for INT8_ASYM quantization (" +
                     (quant ? "" : "an offset tile; ") + "found i8)");
}

} // namespace pto::as::verify
