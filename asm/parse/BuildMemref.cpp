// PTOAS's memref-level buffers and views: pto.pointer_cast (a local buffer at a manual address),
// memref.subview of a local buffer or of a GM memref, memref.alloc, memref.reinterpret_cast and
// memref.dealloc.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>
#include <iterator>

namespace pto::as::detail {
/// PTOAS's `%b = pto.pointer_cast(%addr) [{config = #pto.tile_buf_config<...>}] : memref<...>`:
/// the local buffer at byte `addr` of its memory, a tile at a manual address (pto.alloc_tile
/// addr = %addr; a run-time address needs --pto-level=level3, as PTOAS's PlanMemory output
/// always has).
void Builder::buildPointerCast(const std::string& name, SrcLoc loc, Pieces& p,
                               const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Paren, PieceKind::Dict, PieceKind::Types})) return;
  std::vector<OperandRef> addr;
  if (p.parens.size() == 1) addr = collectPieces(piecesOf(p.parens[0])).operands;
  if (addr.size() != 1) {
    diags_.error(loc, "expected '" + name + "(%addr) : memref<..., #pto.address_space<...>>'");
    return;
  }
  auto type = singleType(name, loc, p);
  if (!type) return;
  if (!type->isTile()) {
    diags_.error(p.typesLoc, "'" + name +
                                 "' makes a local buffer (a memref in vec, mat, left, "
                                 "right, acc, bias or scaling), found " +
                                 toString(*type));
    return;
  }
  for (auto* d : p.dicts)
    for (auto* e : d->attrEntry()) {
      if (entryKey(e) != "config" || !e->attrValue()) continue;
      const std::string config = textOf(e->attrValue());
      SrcLoc at = locOf(e->attrValue());
      const size_t open = config.find('<');
      if (!config.starts_with("#pto.tile_buf_config<") || !config.ends_with(">")) {
        diags_.error(at, "'" + name + "' expects config = #pto.tile_buf_config<...>");
        return;
      }
      at.col += static_cast<uint32_t>(open + 1);
      const std::vector<AngleParam> params = angleParamsFromText(
          std::string_view(config).substr(open + 1, config.size() - open - 2), at);
      if (!types_.applyTileConfig(type->tile, params) ||
          !types_.explicitConfigAgrees(type->tile, params, true))
        return;
    }
  const ValueId a = scalarOperand(addr[0], Type::scalar(isa::DType::I64));
  if (a == kNoValue) return;
  Op& op = emit(OpKind::AllocTile, loc, "pto.alloc_tile");
  op.typeLoc = p.typesLoc;
  op.ints = {1, 0, 0};
  addOperand(op, a, addr[0].loc);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

/// `memref.subview %m[offsets] [sizes] [strides] : A to B` of a local buffer (rank 1 or 2, unit
/// strides): a view of the buffer's bytes with its row pitch, as pto.subview (a GM memref is
/// partitioned with pto.partition_view).
/// `memref.subview %m[o0, o1] [s0, s1] [1, 1] : A to B` of a GM memref (a parameter, a
/// reinterpret_cast): the partition at those offsets with those static sizes, as
/// pto.partition_view makes it (the strides stay the memref's, so they must be 1 here).
void Builder::buildGmSubview(SrcLoc loc, ValueId src, Pieces& p,
                             const std::vector<ResultName>& results) {
  const Type view = fn_->type(src); // a copy: the operands emitted below add values
  std::vector<int64_t> sizes;
  for (const OperandRef& r : collectPieces(piecesOf(p.brackets[0])).operands) {
    auto v = r.kind == OperandRef::Literal ? parseInt(r.lit->getText()) : std::nullopt;
    if (!v || *v <= 0) {
      diags_.error(r.loc, "'memref.subview' of a GM memref needs positive constant sizes");
      return;
    }
    sizes.push_back(*v);
  }
  for (const OperandRef& r : collectPieces(piecesOf(p.brackets[1])).operands)
    if (r.kind != OperandRef::Literal || parseInt(r.lit->getText()) != 1) {
      diags_.error(r.loc, "'memref.subview' of a GM memref with strides other than 1 is not "
                          "supported (a partition keeps its view's strides)");
      return;
    }
  const std::vector<OperandRef>& offsets = p.operands[0].indices;
  if (sizes.size() != view.shape.size() || offsets.size() != sizes.size()) {
    diags_.error(loc, "'memref.subview' of " + toString(view) + " takes " +
                          std::to_string(view.shape.size()) + " offsets, sizes and strides");
    return;
  }
  Op& op = emit(OpKind::PartitionView, loc, "pto.partition_view");
  op.typeLoc = locOf(p.toType);
  addOperand(op, src, p.operands[0].loc);
  for (const OperandRef& o : offsets)
    addOperand(op, indexOperand(o), o.loc);
  for (int64_t s : sizes)
    addOperand(op, constantInt(s, Type::index(), loc), loc);
  op.ints = {static_cast<int64_t>(sizes.size()), static_cast<int64_t>(sizes.size())};
  const Type part{TypeKind::PartView, view.elem, sizes};
  if (expectResults("memref.subview", loc, results, 1)) defineResults(op, results, {part});
}

void Builder::buildMemrefSubview(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  const std::string name = "memref.subview";
  if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory ||
      p.brackets.size() != 2 || p.types.size() != 1 || !p.toType) {
    diags_.error(loc, "expected 'memref.subview %m[offsets] [sizes] [strides] : A to B'");
    return;
  }
  const ValueId src = use(p.operands[0]);
  if (src == kNoValue) return;
  if (fn_->type(src).isView()) return buildGmSubview(loc, src, p, results);
  if (!fn_->type(src).isTile()) {
    diags_.error(p.operands[0].loc, "'memref.subview' of " + toString(fn_->type(src)) +
                                        " is not supported: a GM memref is partitioned with "
                                        "pto.partition_view");
    return;
  }
  auto literals = [&](P::BracketContext* b,
                      const char* what) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> out;
    for (const OperandRef& r : collectPieces(piecesOf(b)).operands) {
      auto v = r.kind == OperandRef::Literal ? parseInt(r.lit->getText()) : std::nullopt;
      if (!v || *v <= 0) {
        diags_.error(r.loc, std::string("'memref.subview' ") + what +
                                " must be positive integer constants");
        return std::nullopt;
      }
      out.push_back(*v);
    }
    return out;
  };
  auto sizes = literals(p.brackets[0], "sizes");
  auto strides = literals(p.brackets[1], "strides");
  if (!sizes || !strides) return;
  const std::vector<OperandRef>& offsets = p.operands[0].indices;
  const size_t rank = sizes->size();
  if (rank < 1 || rank > 2 || offsets.size() != rank || strides->size() != rank) {
    diags_.error(loc, "'memref.subview' of a local buffer takes one or two dimensions, with as "
                      "many offsets, sizes and strides");
    return;
  }
  for (int64_t st : *strides)
    if (st != 1) {
      diags_.error(locOf(p.brackets[1]), "'memref.subview' with strides other than 1 is not "
                                         "supported (a local view keeps its buffer's pitch)");
      return;
    }
  Op& op = emit(OpKind::Subset, loc, "pto.subview");
  addOperand(op, src, p.operands[0].loc);
  if (rank == 1) addOperand(op, constantInt(0, Type::index(), loc), loc);
  for (const OperandRef& o : offsets)
    addOperand(op, indexOperand(o), o.loc);
  TileType t = fn_->type(src).tile;
  t.rows = t.validRows = rank == 1 ? 1 : (*sizes)[0];
  t.cols = t.validCols = sizes->back();
  op.ints = {t.rows, t.cols};
  auto declared = readType(p.toType);
  if (!declared) return;
  if (!(*declared == Type::tileOf(t))) {
    diags_.error(locOf(p.toType), "'memref.subview' result type " + toString(*declared) +
                                      " differs from the view " + toString(Type::tileOf(t)));
    return;
  }
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {Type::tileOf(t)});
}

/// `%b = memref.alloc() : memref<16x16xf16, #pto.address_space<vec>>`: a local buffer is a
/// tile (the memref form of pto.alloc_tile; the linker places it).
void Builder::buildMemrefAlloc(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  const std::string name = "memref.alloc";
  for (P::ParenPieceContext* paren : p.parens)
    if (!piecesOf(paren).empty()) {
      diags_.error(loc, "'memref.alloc' with dynamic sizes or symbols is not supported (local "
                        "buffers have static shapes)");
      return;
    }
  auto type = singleType(name, loc, p);
  if (!type) return;
  if (type->kind == TypeKind::LocalView) {
    diags_.error(p.typesLoc, "a local memref needs static, positive dimensions and its "
                             "row-major layout to be allocated, found " +
                                 toString(*type));
    return;
  }
  if (!type->isTile()) {
    diags_.error(
        p.typesLoc,
        "'memref.alloc' allocates a local buffer (a memref in vec, mat, left, right, acc, bias "
        "or scaling), found " +
            toString(*type));
    return;
  }
  Op& op = emit(OpKind::AllocTile, loc, "memref.alloc");
  op.typeLoc = p.typesLoc;
  op.ints = {0, 0, 0};
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

/// `%v = memref.reinterpret_cast %m to offset: [%o], sizes: [...], strides: [...] : A to B`: a GM
/// view of %m's storage, element (i, j, ...) at base + o + i*s0 + j*s1 + ... elements (MLIR
/// memref semantics). The result type's shape and strides are the operands' (the verifier checks
/// the static ones agree).
void Builder::buildReinterpretCast(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  const std::string name = "memref.reinterpret_cast";
  const Keyword* offset = p.colonKeyword("offset");
  const Keyword* sizes = p.colonKeyword("sizes");
  const Keyword* strides = p.colonKeyword("strides");
  if (p.operands.size() != 1 || !offset || !sizes || !strides || !p.toType) {
    diags_.error(loc, "expected '" + name +
                          " %src to offset: [%o], sizes: [...], strides: [...] : A to B'");
    return;
  }
  auto type = readType(p.toType);
  if (!type) return;
  if (type->isTile() || type->kind == TypeKind::LocalView) {
    const ValueId src = use(p.operands[0]);
    if (src != kNoValue) buildLocalReinterpret(loc, src, *type, p, results);
    return;
  }
  if (type->kind != TypeKind::TensorView) {
    diags_.error(locOf(p.toType),
                 "'" + name + "' makes a GM view (a memref in #pto.address_space<gm>), found " +
                     toString(*type));
    return;
  }
  std::vector<ValueId> off = indexList(offset->value, "offset", offset->loc);
  std::vector<ValueId> sh = indexList(sizes->value, "sizes", sizes->loc);
  std::vector<ValueId> st = indexList(strides->value, "strides", strides->loc);
  if (off.size() != 1 || sh.size() != type->shape.size() || st.size() != sh.size()) {
    diags_.error(loc, "'" + name + "' needs one offset and " + std::to_string(type->shape.size()) +
                          " sizes and strides for " + toString(*type) + ", found " +
                          std::to_string(off.size()) + ", " + std::to_string(sh.size()) + " and " +
                          std::to_string(st.size()));
    return;
  }
  ValueId src = use(p.operands[0]);
  if (std::optional<Type> a = p.types.size() == 1 ? readType(p.types[0]) : std::nullopt;
      a && src != kNoValue && !(fn_->type(src) == *a))
    diags_.error(locOf(p.types[0]), "type " + toString(*a) + " does not match operand '%" +
                                        fn_->value(src).name + "' of type " +
                                        toString(fn_->type(src)));
  Op& op = emit(OpKind::ReinterpretView, loc, name);
  op.typeLoc = locOf(p.toType);
  addOperand(op, src, p.operands[0].loc);
  addOperand(op, off[0], offset->loc);
  for (ValueId v : sh)
    addOperand(op, v, sizes->loc);
  for (ValueId v : st)
    addOperand(op, v, strides->loc);
  op.ints = {static_cast<int64_t>(sh.size())};
  for (auto* d : p.dicts)
    for (auto& a : readAttrs(d))
      op.attrs.push_back(a);
  if (const NamedAttr* layout = op.attr("layout")) op.layout = parseViewLayout(layout->value);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

/// The integers of `offset: [...]` / `sizes: [...]` / `strides: [...]`: literals or values
/// arith.constant defines.
std::optional<std::vector<int64_t>> Builder::constantList(const Keyword& k,
                                                          const std::string& what) {
  std::vector<int64_t> out;
  for (ValueId v : indexList(k.value, what, k.loc)) {
    const std::optional<int64_t> c = integerConstant(v);
    if (!c) {
      diags_.error(k.loc, "'memref.reinterpret_cast' of a local buffer needs constant " + what +
                              " (its result is a tile view, of static shape)");
      return std::nullopt;
    }
    out.push_back(*c);
  }
  return out;
}

/// Whether a view's elements are its source's, row for row (the same element type, layout and
/// pitch): a reshape that changes any of them starts a buffer of its own. A subset keeps its
/// source's pitch whatever its own columns (the code generator binds it with the source's).
static bool samePitch(const TileType& source, const TileType& view, bool subset) {
  return source.dtype == view.dtype && (subset || source.cols == view.cols) &&
         source.blayout == view.blayout && source.slayout == view.slayout;
}

/// The buffer whose storage a local view names from its start: through memref.subview /
/// pto.subview and bind_tile, as MLIR's memref.reinterpret_cast counts its offset from the
/// source's base pointer, not from the view's offset; and through the iter_args of an enclosing
/// scf.for to their initial values (`carried`, when given, gets each iter_arg passed: buildFor
/// checks that the loop yields a view of the same buffer).
ValueId Builder::bufferBase(ValueId view, std::vector<ValueId>* carried) const {
  for (bool moved = true; moved;) {
    moved = false;
    if (auto it = carriedFrom_.find({fn_, view}); it != carriedFrom_.end()) {
      if (carried) carried->push_back(view);
      view = it->second;
      moved = true;
      continue;
    }
    for (const Region* r : regions_)
      for (const auto& op : r->ops)
        if ((op->kind == OpKind::Subset || op->kind == OpKind::Reshape) && !op->results.empty() &&
            op->results[0] == view && !op->operands.empty() &&
            samePitch(fn_->type(op->operands[0]).tile, fn_->type(view).tile,
                      op->kind == OpKind::Subset)) {
          view = op->operands[0];
          moved = true;
        }
  }
  return view;
}

/// Whether a result type's static dimensions (rank 1: the columns) are the view's.
static bool staticDimsAgree(const std::vector<int64_t>& dims, std::pair<int64_t, int64_t> rc) {
  const std::vector<int64_t> want = dims.size() == 1 ? std::vector<int64_t>{rc.second}
                                                     : std::vector<int64_t>{rc.first, rc.second};
  if (dims.size() != want.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != kDynamic && dims[i] != want[i]) return false;
  return true;
}

/// `memref.reinterpret_cast %buf to offset: [o], sizes: [r, c], strides: [s, 1] : A to B` of a
/// local buffer: the r x c view whose element (i, j) is element o + i*s + j of the buffer's
/// storage (MLIR's semantics, the offset counted from the buffer's start). A tile view keeps its
/// buffer's row pitch and row-major order, so s must be that pitch (or r 1) and the column
/// stride 1 (or c 1); the view becomes a pto.subview of the buffer at (o / pitch, o % pitch).
void Builder::buildLocalReinterpret(SrcLoc loc, ValueId src, const Type& declared, Pieces& p,
                                    const std::vector<ResultName>& results) {
  const std::string name = "memref.reinterpret_cast";
  if (!fn_->type(src).isTile()) {
    diags_.error(p.operands[0].loc, "'" + name + "' to a local memref needs a local buffer, '%" +
                                        fn_->value(src).name + "' is " + toString(fn_->type(src)));
    return;
  }
  auto off = constantList(*p.colonKeyword("offset"), "offset");
  auto sizes = constantList(*p.colonKeyword("sizes"), "sizes");
  auto strides = constantList(*p.colonKeyword("strides"), "strides");
  if (!off || !sizes || !strides) return;
  const size_t rank = sizes->size();
  const size_t declaredRank = declared.isTile() ? 2 : declared.shape.size();
  if (off->size() != 1 || rank < 1 || rank > 2 || strides->size() != rank ||
      (declared.kind == TypeKind::LocalView && declaredRank != rank)) {
    diags_.error(loc, "'" + name +
                          "' of a local buffer takes one offset and one or two sizes "
                          "and strides, as many as its result type's dimensions");
    return;
  }
  std::vector<ValueId> carried;
  const ValueId base = bufferBase(src, &carried);
  for (ValueId arg : carried)
    carriedBases_.push_back({fn_, arg, base, loc});
  const TileType buf = fn_->type(base).tile;
  const int64_t r = rank == 1 ? 1 : (*sizes)[0], c = sizes->back();
  const int64_t rowStride = rank == 1 ? buf.cols : (*strides)[0], colStride = strides->back();
  const std::string spec = "offset " + std::to_string((*off)[0]) + ", sizes " + std::to_string(r) +
                           "x" + std::to_string(c) + ", strides [" + std::to_string(rowStride) +
                           ", " + std::to_string(colStride) + "]";
  if (buf.blayout != isa::BLayout::RowMajor || buf.slayout != isa::SLayout::NoneBox) {
    diags_.error(loc, "'" + name + "' of a local buffer laid out " + toString(fn_->type(base)) +
                          " is not supported (a view of a row-major, unboxed buffer only)");
    return;
  }
  if (buf.rows > 1 && buf.validCols != buf.cols) {
    diags_.error(loc, "'" + name + "' of " + toString(fn_->type(base)) +
                          " is not supported: its rows are padded to 32 bytes in storage (" +
                          std::to_string(buf.validCols) + " of " + std::to_string(buf.cols) +
                          " columns), and MLIR's offsets and strides count the unpadded elements");
    return;
  }
  if ((c > 1 && colStride != 1) || (r > 1 && rowStride != buf.cols)) {
    diags_.error(loc, "'" + name + "' (" + spec + ") is not a view a tile can name: a local view " +
                          "keeps its buffer's row-major order and row pitch (strides [" +
                          std::to_string(buf.cols) + ", 1])");
    return;
  }
  const int64_t o = (*off)[0], row = o / buf.cols, col = o % buf.cols;
  if (r <= 0 || c <= 0 || o < 0 || row + r > buf.rows || col + c > buf.validCols) {
    diags_.error(loc, "'" + name + "' (" + spec + ") reaches past its " + std::to_string(buf.rows) +
                          "x" + std::to_string(buf.cols) + " buffer");
    return;
  }
  const bool sameKind = declared.isTile()
                            ? declared.tile.dtype == buf.dtype && declared.tile.loc == buf.loc &&
                                  declared.tile.validRows == r && declared.tile.validCols == c
                            : declared.elem == buf.dtype && declared.tile.loc == buf.loc &&
                                  staticDimsAgree(declared.shape, {r, c});
  if (!sameKind) {
    diags_.error(locOf(p.toType), "'" + name + "' result type " + toString(declared) +
                                      " differs from the view it makes: " + std::to_string(r) +
                                      "x" + std::to_string(c) + " " +
                                      std::string(isa::spelling(buf.dtype)) + " in " +
                                      std::string(isa::spelling(buf.loc)));
    return;
  }
  Op& op = emit(OpKind::Subset, loc, "pto.subview");
  addOperand(op, base, p.operands[0].loc);
  addOperand(op, constantInt(row, Type::index(), loc), loc);
  addOperand(op, constantInt(col, Type::index(), loc), loc);
  TileType t = buf;
  t.rows = t.validRows = r;
  t.cols = t.validCols = c;
  op.ints = {r, c};
  if (!expectResults(name, loc, results, 1)) return;
  defineResults(op, results, {Type::tileOf(t)});
  if (!op.results.empty()) boundTileAnnotations_[{fn_, op.results[0]}] = declared;
}

/// `memref.dealloc %b : memref<...>`: the end of a buffer's life. The linker's planner frees a
/// tile after its last use already, so the op only checks its operand.
void Builder::buildMemrefDealloc(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  if (!expectResults("memref.dealloc", loc, results, 0)) return;
  if (p.operands.size() != 1) {
    diags_.error(loc, "'memref.dealloc' takes one buffer");
    return;
  }
  ValueId v = use(p.operands[0]);
  if (v != kNoValue && !fn_->type(v).isTile())
    diags_.error(p.operands[0].loc,
                 "'memref.dealloc' frees a local buffer, found " + toString(fn_->type(v)));
}

} // namespace pto::as::detail
