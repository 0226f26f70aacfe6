// MGATHER and MSCATTER (PTOAS's verifier, pto-isa's static_asserts; docs/verifier.md): the index
// tile, the coalesce mode against the shapes, and per arch the element types, layouts, atomic
// ops and conflict policy their modes allow.
#include "asm/ir/VerifierImpl.h"

#include "isa/OpAttrs.h"

namespace pto::as::verify {

void Verifier::checkGmIndexed(const Op& op, const std::string& name,
                              const std::vector<Operand>& ops) {
  using isa::DType;
  using Id = isa::OpAttrId;
  const bool gather = op.tileOp == isa::OpId::MGATHER;
  const Operand* data = roleTile(ops, gather ? isa::RoleId::Dst : isa::RoleId::Src);
  const Operand* idx = roleTile(ops, isa::RoleId::Idx);
  const Operand* mem = nullptr;
  for (const Operand& o : ops)
    if (o.role->id == isa::RoleId::Mem) mem = &o;
  if (!data || !idx || !mem) return;
  bool bad = false;
  for (const isa::OpAttr& row : isa::opAttrs())
    if (row.op == op.tileOp)
      if (auto e = attributeValueError(op, row.id)) {
        diags_.error(op.loc, "'" + name + "' " + *e);
        bad = true;
      }
  if (bad) return;
  const TileType &d = tileOf(*data), &i = tileOf(*idx);
  const bool a5 = arch_ == isa::Arch::A5;
  auto value = [&](Id id) {
    return ir::attrReading(op, id) ? ir::attrReading(op, id)->value : std::nullopt;
  };
  auto code = [&](Id id) { return static_cast<unsigned>(value(id).value_or(0)); };
  if (i.dtype != DType::I32 && i.dtype != DType::U32)
    return dtypeError(*idx, name, "index tile must be i32 or ui32, found " + dt(i.dtype));
  // The coalesce mode: rows need an index of one row (or, on A5, one column) of R, elements an
  // index of the data's valid shape; left out, the shapes decide (isa::gm::Modes).
  const unsigned coalesce = code(gather ? Id::MgatherCoalesce : Id::MscatterCoalesce);
  const bool known = d.validRows != kDynamic && d.validCols != kDynamic &&
                     i.validRows != kDynamic && i.validCols != kDynamic;
  if (known && coalesce == isa::gm::kRow) {
    const bool asRow = i.validRows == 1 && i.validCols == d.validRows;
    const bool asCol = i.validCols == 1 && i.validRows == d.validRows;
    if (!asRow && !(a5 && asCol))
      return diags_.error(idx->loc, "'" + name + "' with coalesce = row takes one index per " +
                                        "data row: an index tile of valid shape 1x" +
                                        std::to_string(d.validRows) +
                                        (a5 ? " or " + std::to_string(d.validRows) + "x1" : "") +
                                        ", found " + vshape(i));
  }
  if (known && coalesce == isa::gm::kElem &&
      (i.validRows != d.validRows || i.validCols != d.validCols))
    return diags_.error(idx->loc, "'" + name + "' with coalesce = elem takes one index per " +
                                      "element: an index tile of the data's valid shape " +
                                      vshape(d) + ", found " + vshape(i));
  // A policy for indices out of the table needs the table's size.
  const unsigned oob = code(gather ? Id::MgatherGatherOob : Id::MscatterScatterOob);
  const Type& table = type(mem->value);
  bool staticTable = !table.shape.empty();
  for (int64_t n : table.shape)
    staticTable = staticTable && n != kDynamic && n > 0;
  if (oob != 0 && coalesce == 0 && !known)
    return diags_.error(op.loc, "'" + name + "' with an out-of-bounds policy and valid shapes " +
                                    "known only at run time needs coalesce = row or elem");
  if (oob != 0 && !staticTable)
    return diags_.error(op.loc, "'" + name +
                                    "' with an out-of-bounds policy needs a table view of " +
                                    "static shape (its capacity), found " + toString(table));
  if (!gather) {
    if (op.attr("scatterConflict") && !a5)
      return diags_.error(op.loc, "'" + name + "' expects scatterConflict only on A5 targets");
    const unsigned atomic = code(Id::MscatterAtomicOp);
    const isa::DTypeSet addTypes =
        a5 ? isa::DTypeSet{DType::I32, DType::U32, DType::F32, DType::F16, DType::BF16}
           : isa::DTypeSet{DType::I8, DType::I16, DType::I32, DType::F16, DType::BF16, DType::F32};
    if (atomic == isa::gm::kAtomicAdd && !addTypes.contains(d.dtype))
      return dtypeError(*data, name,
                        "atomic add on " + archName() + " takes " + addTypes.describe() +
                            " data, found " + dt(d.dtype));
    if (atomic == isa::gm::kAtomicMax || atomic == isa::gm::kAtomicMin) {
      const std::string which = atomic == isa::gm::kAtomicMax ? "max" : "min";
      if (!a5)
        return diags_.error(op.loc,
                            "'" + name + "' atomic " + which +
                                " is A5 only (A2/A3's MTE3 path has no atomic max or min unit)");
      const isa::DTypeSet maxMinTypes{DType::I32, DType::U32, DType::F32};
      if (!maxMinTypes.contains(d.dtype))
        return dtypeError(*data, name,
                          "atomic " + which + " takes " + maxMinTypes.describe() + " data, found " +
                              dt(d.dtype));
    }
  }
  if (a5) return;
  // A2/A3 (pto-isa's MGatherCheck / MScatterCheck): ND tiles of the 9 data types, rows of 32 bytes.
  const isa::DTypeSet& allowed = isa::info(op.tileOp).types(arch_);
  if (!allowed.contains(d.dtype))
    return dtypeError(*data, name,
                      "on A2/A3 moves " + allowed.describe() + " data, found " + dt(d.dtype));
  for (const Operand* t : {data, idx})
    if (tileOf(*t).blayout != isa::BLayout::RowMajor || tileOf(*t).slayout != isa::SLayout::NoneBox)
      return diags_.error(t->loc, "'" + name + "' on A2/A3 needs row-major ND tiles " +
                                      "(blayout=row_major, slayout=none_box), found " +
                                      toString(type(t->value)));
  if (d.cols * isa::bitWidth(d.dtype) / 8 % 32 != 0)
    return diags_.error(data->loc,
                        "'" + name + "' on A2/A3 needs data tile rows of a multiple " +
                            "of 32 bytes (pto-isa: Cols*sizeof(T) 32-byte aligned), found " +
                            std::to_string(d.cols) + " x " + dt(d.dtype));
}

} // namespace pto::as::verify
