// Tensor views and tile values: make_tensor_view, partition_view, get_tensor_view_dim,
// alloc_tile and `tile` declarations, subset, treshape / bitcast, set_validshape, tassign
// (manual placement) and the tiles and parameters a fragment declares by use.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>
#include <iterator>

namespace pto::as::detail {

std::optional<Type> Builder::singleType(const std::string& name, SrcLoc loc, Pieces& p) {
  P::TypeContext* t =
      !p.arrowTypes.empty() ? p.arrowTypes.back() : (!p.types.empty() ? p.types.back() : nullptr);
  // PTOAS's index-input compatibility lists the integer type of index operands after the
  // result type (`: !pto.tile_buf<...>, i32`): the result is then the first type.
  if (p.arrowTypes.empty() && p.types.size() > 1) {
    auto last = readType(p.types.back());
    if (last && last->kind == TypeKind::Scalar && last->isIntLike()) t = p.types.front();
  }
  if (!t) {
    diags_.error(loc, "'" + name + "' needs a result type annotation");
    return std::nullopt;
  }
  return readType(t);
}

std::vector<ValueId> Builder::indexList(P::AttrValueContext* v, const std::string& what,
                                        SrcLoc loc) {
  std::vector<ValueId> out;
  if (!v || !v->bracket()) {
    diags_.error(loc, "expected '" + what + " = [...]'");
    return out;
  }
  Pieces items = collectPieces(piecesOf(v->bracket()));
  for (auto& r : items.operands)
    out.push_back(indexOperand(r));
  return out;
}

void Builder::buildMakeTensorView(const std::string& name, SrcLoc loc, Pieces& p,
                                  const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name,
                  {PieceKind::Operand, PieceKind::Keyword, PieceKind::Dict, PieceKind::Types},
                  {"shape", "strides"}))
    return;
  auto type = singleType(name, loc, p);
  if (!type) return;
  if (type->kind != TypeKind::TensorView) {
    diags_.error(p.typesLoc,
                 "'" + name + "' must produce a !pto.tensor_view, found " + toString(*type));
    return;
  }
  if (p.operands.size() != 1) {
    diags_.error(loc, "'" + name + "' takes one pointer operand");
    return;
  }
  const Keyword* shape = p.keyword("shape");
  const Keyword* strides = p.keyword("strides");
  if (!shape || !strides) {
    diags_.error(loc, "'" + name + "' needs 'shape = [...]' and 'strides = [...]'");
    return;
  }
  Op& op = emit(OpKind::MakeTensorView, loc, name);
  op.typeLoc = p.typesLoc;
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  auto sh = indexList(shape->value, "shape", shape->loc);
  auto st = indexList(strides->value, "strides", strides->loc);
  for (ValueId v : sh)
    addOperand(op, v, shape->loc);
  for (ValueId v : st)
    addOperand(op, v, strides->loc);
  op.ints = {static_cast<int64_t>(sh.size()), static_cast<int64_t>(st.size())};
  for (auto* d : p.dicts)
    for (auto& a : readAttrs(d))
      op.attrs.push_back(a);
  if (const NamedAttr* layout = op.attr("layout")) op.layout = parseViewLayout(layout->value);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

void Builder::buildPartitionView(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name,
                  {PieceKind::Operand, PieceKind::Keyword, PieceKind::Types, PieceKind::Arrow},
                  {"offsets", "sizes"}))
    return;
  auto type = singleType(name, loc, p);
  if (!type) return;
  if (type->kind != TypeKind::PartView) {
    diags_.error(locOf(p.arrowTypes.empty() ? p.types.back() : p.arrowTypes.back()),
                 "'" + name + "' must produce a !pto.partition_tensor_view, found " +
                     toString(*type));
    return;
  }
  const Keyword* offsets = p.keyword("offsets");
  const Keyword* sizes = p.keyword("sizes");
  if (p.operands.size() != 1 || !offsets || !sizes) {
    diags_.error(loc, "expected '" + name + " %view, offsets = [...], sizes = [...] : T -> P'");
    return;
  }
  Op& op = emit(OpKind::PartitionView, loc, name);
  op.typeLoc = p.arrowTypes.empty() ? p.typesLoc : locOf(p.arrowTypes.back());
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  auto off = indexList(offsets->value, "offsets", offsets->loc);
  auto sz = indexList(sizes->value, "sizes", sizes->loc);
  for (ValueId v : off)
    addOperand(op, v, offsets->loc);
  for (ValueId v : sz)
    addOperand(op, v, sizes->loc);
  op.ints = {static_cast<int64_t>(off.size()), static_cast<int64_t>(sz.size())};
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

/// `%t = pto.multi_tile_get %mb[%k] : !pto.multi_tile_buf<T, count=N> -> T`: slot k (an index,
/// constant or not) of a multi-buffer tile, a view of its bytes k * sizeof(T) on.
void Builder::buildMultiTileGet(const std::string& name, SrcLoc loc, Pieces& p,
                                const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory ||
      p.operands[0].indices.size() != 1 || p.arrowTypes.size() != 1) {
    diags_.error(loc,
                 "expected '" + name + " %multi[%slot] : !pto.multi_tile_buf<T, count=N> -> T'");
    return;
  }
  const ValueId src = use(p.operands[0]);
  if (src == kNoValue) return;
  if (fn_->type(src).kind != TypeKind::MultiTile) {
    diags_.error(p.operands[0].loc,
                 "'" + name + "' reads a !pto.multi_tile_buf, found " + toString(fn_->type(src)));
    return;
  }
  auto declared = readType(p.arrowTypes[0]);
  if (!declared) return;
  const Type slot = Type::tileOf(fn_->type(src).slotTile());
  if (!(*declared == slot)) {
    diags_.error(locOf(p.arrowTypes[0]), "'" + name + "' expects result type " + toString(slot) +
                                             " (the slot type), found " + toString(*declared));
    return;
  }
  const ValueId k = indexOperand(p.operands[0].indices[0]);
  if (k == kNoValue || !expectResults(name, loc, results, 1)) return;
  Op& op = emit(OpKind::MultiTileGet, loc, name);
  addOperand(op, src, p.operands[0].loc);
  addOperand(op, k, p.operands[0].indices[0].loc);
  defineResults(op, results, {slot});
}

/// `%r, %c = pto.get_validshape %t : T`, `%r = pto.tile_valid_rows %t : T -> index` (and
/// tile_valid_cols): a tile's valid shape, static or set at run time, as index values.
void Builder::buildGetValidShape(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  const bool both = name == "pto.get_validshape";
  if (p.operands.size() != 1) {
    diags_.error(loc, "expected '" + name + " %tile : T" + (both ? "'" : " -> index'"));
    return;
  }
  const ValueId tile = use(p.operands[0]);
  if (tile == kNoValue) return;
  if (!fn_->type(tile).isTile()) {
    diags_.error(p.operands[0].loc,
                 "'" + name + "' reads a tile, found " + toString(fn_->type(tile)));
    return;
  }
  if (!expectResults(name, loc, results, both ? 2 : 1)) return;
  Op& op = emit(OpKind::GetValidShape, loc, name);
  addOperand(op, tile, p.operands[0].loc);
  defineResults(op, results,
                both ? std::vector<Type>{Type::index(), Type::index()}
                     : std::vector<Type>{Type::index()});
}

void Builder::buildGetDim(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 2) {
    diags_.error(loc, "expected '" + name + " %view, %dim : T -> index'");
    return;
  }
  Op& op = emit(OpKind::GetTensorViewDim, loc, name);
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  addOperand(op, indexOperand(p.operands[1]), p.operands[1].loc);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {Type::index()});
}

void Builder::buildAllocTile(const std::string& name, SrcLoc loc, Pieces& p,
                             const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Keyword, PieceKind::Types},
                  {"addr", "valid_row", "valid_col"}))
    return;
  auto type = singleType(name, loc, p);
  if (!type) return;
  // pto.alloc_multi_tile: the storage of N slots (ir::TypeKind::MultiTile), placed as one tile.
  const bool multi = name == "pto.alloc_multi_tile";
  if (multi ? type->kind != TypeKind::MultiTile : !type->isTile()) {
    diags_.error(p.typesLoc, "'" + name + "' must produce a " +
                                 (multi ? "!pto.multi_tile_buf" : "tile") + ", found " +
                                 toString(*type));
    return;
  }
  Op& op = emit(OpKind::AllocTile, loc, name);
  op.typeLoc = p.typesLoc;
  op.ints = {0, 0, 0};
  const char* keys[] = {"addr", "valid_row", "valid_col"};
  Type keyTypes[] = {Type::scalar(isa::DType::I64), Type::index(), Type::index()};
  for (const Keyword& kw : p.keywords) {
    auto it = std::find(std::begin(keys), std::end(keys), kw.key);
    if (it == std::end(keys)) {
      diags_.error(kw.loc, "unknown clause '" + kw.key + "' on '" + name +
                               "' (addr, valid_row, valid_col)");
      continue;
    }
  }
  for (int k = 0; k < 3; ++k) {
    const Keyword* kw = p.keyword(keys[k]);
    if (!kw) continue;
    ValueId v = keywordValue(*kw, keyTypes[k]);
    if (v == kNoValue) continue;
    op.ints[k] = 1;
    addOperand(op, v, locOf(kw->value));
  }
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

ValueId Builder::keywordValue(const Keyword& kw, const Type& type) {
  P::AttrValueContext* v = kw.value;
  if (v->VALUE_ID()) {
    OperandRef r;
    r.name = v->VALUE_ID()->getText().substr(1);
    r.loc = locOf(v->VALUE_ID());
    return type.kind == TypeKind::Index ? indexOperand(r) : use(r);
  }
  if (v->literal()) return constant(v->literal(), type, locOf(v->literal())).value_or(kNoValue);
  diags_.error(locOf(v), "expected a value or an integer after '" + kw.key + " ='");
  return kNoValue;
}

// `pto.subset` and PTOAS's `pto.subview`: a view of a tile at offsets with static sizes. Both
// keep the parent's row pitch (the view's bytes are the parent's). They differ in the valid
// shape PTOAS gives the view: a subset at a run-time offset gets a dynamic valid dimension, a
// subview always the sizes (or what its `-> T` result type says).
void Builder::buildSubset(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  const bool subview = name.ends_with("subview");
  if (subview
          ? !onlyPieces(diags_, p, name,
                        {PieceKind::Operand, PieceKind::Sizes, PieceKind::WordBracket,
                         PieceKind::Types, PieceKind::Arrow},
                        {"valid"})
          : !onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Sizes, PieceKind::Types}))
    return;
  if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory || !p.sizes ||
      p.types.size() > 1 || p.arrowTypes.size() > 1) {
    diags_.error(loc, "expected '" + name + " %tile[%row, %col] sizes [R, C] : T" +
                          (subview ? " [-> T']'" : "'"));
    return;
  }
  ValueId src = use(p.operands[0]);
  if (src == kNoValue) return;
  if (!fn_->type(src).isTile()) {
    diags_.error(p.operands[0].loc, "'" + name + "' needs a tile operand");
    return;
  }
  Pieces sz = collectPieces(piecesOf(p.sizes->bracket()));
  std::vector<int64_t> sizes;
  for (auto& r : sz.operands) {
    auto v = r.kind == OperandRef::Literal ? parseInt(r.lit->getText()) : std::nullopt;
    if (!v || *v <= 0) {
      diags_.error(r.loc, std::string(subview ? "subview" : "subset") +
                              " sizes must be positive integer constants");
      return;
    }
    sizes.push_back(*v);
  }
  if (sizes.size() != 2 || p.operands[0].indices.size() != 2) {
    diags_.error(loc, "'" + name + "' takes two offsets and two sizes");
    return;
  }
  Op& op = emit(OpKind::Subset, loc, name);
  addOperand(op, src, p.operands[0].loc);
  for (auto& idx : p.operands[0].indices)
    addOperand(op, indexOperand(idx), idx.loc);
  op.ints = sizes;
  TileType t = fn_->type(src).tile;
  t.rows = t.validRows = sizes[0];
  t.cols = t.validCols = sizes[1];
  // As PTOAS infers it: an offset that is not a constant makes that valid dimension dynamic
  // (`v_row=?` / `v_col=?`), its value the parent's valid extent less the offset within 0..size
  // (the code generator and the reference interpreter compute it).
  const TileType parent = fn_->type(src).tile;
  // So does a parent's dynamic valid dimension: the view's is the parent's less the offset.
  if (!subview && (!definedByConstant(op.operands[1]) || parent.validRows == kDynamic))
    t.validRows = kDynamic;
  if (!subview && (!definedByConstant(op.operands[2]) || parent.validCols == kDynamic))
    t.validCols = kDynamic;
  // `valid [%vr, %vc]`: the view's valid shape, known at run time (PTOAS's newer subview).
  std::vector<OperandRef> valid;
  if (p.validBracket) {
    valid = collectPieces(piecesOf(p.validBracket->bracket())).operands;
    if (valid.size() != 2) {
      diags_.error(locOf(p.validBracket), "'" + name + "' takes 'valid [%rows, %cols]'");
      return;
    }
  }
  if (subview && !p.arrowTypes.empty() &&
      !subviewResultType(name, t, parent, p.arrowTypes[0], !valid.empty()))
    return;
  if (!expectResults(name, loc, results, 1)) return;
  defineResults(op, results, {Type::tileOf(t)});
  if (!valid.empty()) {
    op.ints.push_back(1); // printed back as the clause (IR.cpp)
    Op& set = emit(OpKind::SetValidShape, locOf(p.validBracket), "pto.set_validshape");
    addOperand(set, op.results[0], loc);
    for (const OperandRef& v : valid)
      addOperand(set, indexOperand(v), v.loc);
  }
  // PTOAS (since its subview stride fix) types a view with its parent's rows and columns and
  // the sizes as its valid shape: `!pto.tile_buf<vec, 16x16xf32, valid=8x8>`. Uses may annotate
  // the view that way; it names the same bytes.
  if (subview) boundTileAnnotations_[{fn_, op.results[0]}] = Type::tileOf(parentShaped(t, parent));
}

/// A view's type as PTOAS writes it: the parent's rows and columns, the view's valid shape.
TileType Builder::parentShaped(const TileType& view, const TileType& parent) {
  TileType t = view;
  t.rows = parent.rows;
  t.cols = parent.cols;
  return t;
}

/// A subview's written result type: the parent's location, element type and layout with the
/// sizes as its shape (PTOAS's rule); its valid shape, static within the sizes, is the view's.
bool Builder::subviewResultType(const std::string& name, TileType& t, const TileType& parent,
                                P::TypeContext* written, bool validClause) {
  auto declared = readType(written);
  if (!declared) return false;
  const SrcLoc at = locOf(written);
  if (!declared->isTile()) {
    diags_.error(at, "'" + name + "' yields a tile, not " + toString(*declared));
    return false;
  }
  const TileType& d = declared->tile;
  TileType expect = t;
  expect.validRows = d.validRows;
  expect.validCols = d.validCols;
  // Either the sizes as its shape (PTOAS before its stride fix) or the parent's shape (after).
  if (!(d == expect) && !(d == parentShaped(expect, parent))) {
    diags_.error(at, "'" + name + "' result type " + toString(*declared) + " differs from " +
                         toString(Type::tileOf(t)) + " and " +
                         toString(Type::tileOf(parentShaped(t, parent))) +
                         " (the parent's location, element type and layout; the sizes or the "
                         "parent's shape as shape)");
    return false;
  }
  if ((d.validRows != kDynamic && d.validRows > t.rows) ||
      (d.validCols != kDynamic && d.validCols > t.cols)) {
    diags_.error(at, "'" + name + "' result valid shape " + std::to_string(d.validRows) + "x" +
                         std::to_string(d.validCols) + " exceeds the sizes " +
                         std::to_string(t.rows) + "x" + std::to_string(t.cols));
    return false;
  }
  if ((d.validRows == kDynamic || d.validCols == kDynamic) && !validClause) {
    diags_.error(at, "'" + name +
                         "' with a dynamic valid shape ('?') is not supported: give a "
                         "static valid shape, a 'valid [%r, %c]' clause, or pto.set_validshape "
                         "the view");
    return false;
  }
  t.validRows = d.validRows;
  t.validCols = d.validCols;
  return true;
}

/// PTOAS's `pto.bind_tile %buf[, %vrow, %vcol] {config = #pto.tile_buf_config<...>} : M -> M`:
/// the buffer's bytes seen as a tile with the config's layout and the given valid shape. Built
/// as a `pto.treshape` of the buffer (the same storage; the linker keeps the buffer live while
/// the result is used) and, for a valid shape known only at run time, a `pto.set_validshape`.
void Builder::buildBindTile(const std::string& name, SrcLoc loc, Pieces& p,
                            const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name,
                  {PieceKind::Operand, PieceKind::Dict, PieceKind::Types, PieceKind::Arrow}))
    return;
  if ((p.operands.size() != 1 && p.operands.size() != 3) || p.arrowTypes.size() != 1) {
    diags_.error(loc, "expected '" + name +
                          " %buf[, %valid_row, %valid_col] {config = #pto.tile_buf_config<...>} "
                          ": T -> T'");
    return;
  }
  const ValueId src = use(p.operands[0]);
  if (src == kNoValue) return;
  if (!fn_->type(src).isTile()) {
    diags_.error(p.operands[0].loc,
                 "'" + name + "' binds a local buffer, not " + toString(fn_->type(src)));
    return;
  }
  std::string config;
  SrcLoc configLoc = loc;
  for (auto* d : p.dicts)
    for (auto* e : d->attrEntry())
      if (entryKey(e) == "config" && e->attrValue()) {
        config = textOf(e->attrValue()); // as written, so columns map back to the source
        configLoc = locOf(e->attrValue());
      }
  if (!config.starts_with("#pto.tile_buf_config<") || !config.ends_with(">")) {
    diags_.error(loc, "'" + name + "' needs {config = #pto.tile_buf_config<...>}");
    return;
  }
  auto declared = readType(p.arrowTypes[0]);
  if (!declared) return;
  TileType t = fn_->type(src).tile;
  const size_t open = config.find('<');
  configLoc.col += static_cast<uint32_t>(open + 1); // the parameters start after '<'
  const std::vector<AngleParam> configParams = angleParamsFromText(
      std::string_view(config).substr(open + 1, config.size() - open - 2), configLoc);
  if (!types_.applyTileConfig(t, configParams) ||
      !types_.explicitConfigAgrees(t, configParams, true))
    return;
  std::vector<ValueId> valid;
  for (size_t i = 1; i < p.operands.size(); ++i)
    valid.push_back(indexOperand(p.operands[i]));
  if (valid.size() == 2) {
    const auto r = integerConstant(valid[0]), c = integerConstant(valid[1]);
    t.validRows = r ? *r : kDynamic;
    t.validCols = c ? *c : kDynamic;
    if ((r && (*r < 0 || *r > t.rows)) || (c && (*c < 0 || *c > t.cols))) {
      diags_.error(loc, "'" + name + "' valid shape " + std::to_string(r.value_or(0)) + "x" +
                            std::to_string(c.value_or(0)) + " exceeds the " +
                            std::to_string(t.rows) + "x" + std::to_string(t.cols) + " buffer");
      return;
    }
  }
  Op& op = emit(OpKind::Reshape, loc, "pto.treshape");
  addOperand(op, src, p.operands[0].loc);
  if (!expectResults(name, loc, results, 1)) return;
  defineResults(op, results, {Type::tileOf(t)});
  const ValueId bound = op.results.empty() ? kNoValue : op.results[0];
  if (bound == kNoValue) return;
  boundTileAnnotations_[{fn_, bound}] = *declared;
  if (valid.size() == 2 && (t.validRows == kDynamic || t.validCols == kDynamic)) {
    Op& sv = emit(OpKind::SetValidShape, loc, "pto.set_validshape");
    addOperand(sv, bound, loc);
    addOperand(sv, valid[0], p.operands[1].loc);
    addOperand(sv, valid[1], p.operands[2].loc);
  }
}

void Builder::buildReshape(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 1 || p.arrowTypes.size() != 1) {
    diags_.error(loc, "expected '" + name + " %src : T1 -> T2'");
    return;
  }
  auto type = readType(p.arrowTypes[0]);
  if (!type) return;
  Op& op = emit(name == "pto.bitcast" ? OpKind::Bitcast : OpKind::Reshape, loc, name);
  op.typeLoc = locOf(p.arrowTypes[0]);
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  checkAnnotatedTypes(op, p);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

void Builder::buildSetValidShape(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
  expectResults(name, loc, results, 0);
  if (p.operands.size() != 3) {
    diags_.error(loc, "expected '" + name + " %tile, %rows, %cols : T'");
    return;
  }
  Op& op = emit(OpKind::SetValidShape, loc, name);
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  for (int i = 1; i < 3; ++i)
    addOperand(op, indexOperand(p.operands[i]), p.operands[i].loc);
}

void Builder::buildTAssign(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name,
                  {PieceKind::Operand, PieceKind::Call, PieceKind::Symbol, PieceKind::Paren,
                   PieceKind::Types, PieceKind::Arrow},
                  {"tile", "ins"}))
    return;
  if (auto* ins = p.call("ins")) {
    Pieces inner = collectPieces(piecesOf(ins));
    inner.dicts.insert(inner.dicts.end(), p.dicts.begin(), p.dicts.end());
    p = std::move(inner);
  }
  // The address: tile(N), @tile(N), or a second operand.
  std::optional<int64_t> constAddr;
  SrcLoc addrLoc;
  auto readAddrCall = [&](const std::vector<P::PieceContext*>& pieces, SrcLoc at) {
    Pieces a = collectPieces(pieces);
    if (a.operands.size() == 1 && a.operands[0].kind == OperandRef::Literal)
      constAddr = parseInt(a.operands[0].lit->getText());
    addrLoc = at;
    if (!constAddr) diags_.error(at, "expected 'tile(<address>)' with an integer address");
  };
  if (auto* t = p.call("tile")) readAddrCall(piecesOf(t), locOf(t));
  if (!p.symbols.empty()) {
    std::string sym = p.symbols[0]->SYMBOL()->getText();
    if (sym != "@tile" || p.parens.empty()) {
      diags_.error(locOf(p.symbols[0]->SYMBOL()), "expected '@tile(<address>)'");
      return;
    }
    readAddrCall(piecesOf(p.parens[0]), locOf(p.symbols[0]->SYMBOL()));
  }
  if (p.operands.empty()) {
    diags_.error(loc, "expected '" + name + " %tile, <address>'");
    return;
  }
  const OperandRef& tileRef = p.operands[0];
  std::optional<ValueId> tile = lookup(tileRef.name);
  std::optional<Type> annotated;
  if (!p.types.empty()) annotated = readType(p.types[0]);
  if (!tile && fn_->isFragment && constAddr) {
    // Fragment tiles are declared by their first typed use; remember the placement until then.
    pendingPlacements_[tileRef.name] = {*constAddr, addrLoc};
    return;
  }
  if (!tile && fn_->isFragment && annotated && annotated->isTile())
    tile = declareFragmentTile(tileRef, *annotated);
  if (!tile) {
    use(tileRef);
    return;
  }
  if (!fn_->type(*tile).isTile()) {
    diags_.error(tileRef.loc, "'" + name + "' needs a tile operand, '%" + tileRef.name + "' is " +
                                  toString(fn_->type(*tile)));
    return;
  }
  ValueId addr = kNoValue;
  if (constAddr) {
    addr = constantInt(*constAddr, Type::scalar(isa::DType::I64), addrLoc);
  } else if (p.operands.size() == 2) {
    const OperandRef& a = p.operands[1];
    std::optional<Type> addrType;
    if (p.types.size() == 2) addrType = readType(p.types[1]);
    if (a.kind == OperandRef::Value && !lookup(a.name) && fn_->isFragment && addrType &&
        addrType->isIntLike())
      addr = declareFragmentParam(a, *addrType);
    else
      addr = scalarOperand(a, Type::scalar(isa::DType::I64));
    addrLoc = a.loc;
  } else {
    diags_.error(loc, "expected '" + name + " %tile, <address>'");
    return;
  }
  Op& op = emit(OpKind::TAssign, loc, name);
  addOperand(op, *tile, tileRef.loc);
  addOperand(op, addr, addrLoc);
  if (results.size() == 1)
    defineResults(op, results, {fn_->type(*tile)});
  else
    expectResults(name, loc, results, 0);
}

void Builder::buildTileDecl(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  expectResults("tile", loc, results, 0);
  if (p.operands.empty() || p.types.size() != 1) {
    diags_.error(loc, "expected 'tile %name[, %name...] : !pto.tile<...>'");
    return;
  }
  auto type = readType(p.types[0]);
  if (!type) return;
  if (!type->isTile()) {
    diags_.error(p.typesLoc, "'tile' declares tiles; " + toString(*type) + " is not a tile type");
    return;
  }
  const Keyword* addr = p.keyword("addr");
  if (addr && p.operands.size() != 1) {
    diags_.error(addr->loc, "'addr =' places a single tile; declare placed tiles one per line");
    return;
  }
  for (auto& r : p.operands) {
    if (r.kind != OperandRef::Value) {
      diags_.error(r.loc, "expected a tile name");
      continue;
    }
    Op& op = emit(OpKind::AllocTile, r.loc, "pto.alloc_tile");
    op.typeLoc = p.typesLoc;
    op.ints = {0, 0, 0};
    if (addr) {
      ValueId a = keywordValue(*addr, Type::scalar(isa::DType::I64));
      if (a != kNoValue) {
        op.ints[0] = 1;
        addOperand(op, a, locOf(addr->value));
      }
    }
    op.results.push_back(define(r.name, *type, r.loc));
  }
}

ValueId Builder::declareFragmentTile(const OperandRef& r, const Type& type) {
  // Insert the implicit alloc at the current point, before the op that uses it.
  Op& op = emit(OpKind::AllocTile, r.loc, "pto.alloc_tile");
  op.typeLoc = r.loc;
  op.ints = {0, 0, 0};
  op.attrs.push_back({"implicit", ""});
  if (auto it = pendingPlacements_.find(r.name); it != pendingPlacements_.end()) {
    ValueId a = constantInt(it->second.addr, Type::scalar(isa::DType::I64), it->second.loc);
    op.ints[0] = 1;
    addOperand(op, a, it->second.loc);
    pendingPlacements_.erase(it);
  }
  ValueId v = define(r.name, type, r.loc);
  op.results.push_back(v);
  return v;
}

ValueId Builder::declareFragmentParam(const OperandRef& r, const Type& type) {
  ValueId v = fn_->addValue(r.name, type, r.loc);
  scopes_.front()[r.name] = v;
  fn_->body.args.push_back(v);
  return v;
}

} // namespace pto::as::detail
