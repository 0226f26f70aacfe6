// PTOAS's communication ops that move data (docs/multi-device.md, "Puts, gets and collectives"):
// pto.tput / pto.tget (pto.comm.tput / tget) and the collectives pto.tbroadcast,
// pto.comm_tgather, pto.comm_tscatter, pto.treduce (and their pto.comm.* names). Each is one
// IR op (OpKind::Comm, printed back as written) whose region holds what it does in the
// machine's own ops, as pto-isa's implementation does it: GM -> staging tile (TLOAD) -> GM
// (TSTORE) with PIPE_ALL barriers between the steps, a peer's GM being any view of a peer's
// window. Every backend, the npu link model and any transport under TLOAD / TSTORE serve
// them unchanged.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>

namespace pto::as::detail {

namespace {
int64_t elementCount(const Type& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d == kDynamic || d <= 0) return -1;
    n *= d;
  }
  return n;
}
} // namespace

std::optional<Builder::CommKind> Builder::commKindOf(std::string_view name) {
  static constexpr std::pair<std::string_view, CommKind> kNames[] = {
      {"pto.tput", CommKind::Put},
      {"pto.comm.tput", CommKind::Put},
      {"pto.tget", CommKind::Get},
      {"pto.comm.tget", CommKind::Get},
      {"pto.tbroadcast", CommKind::Broadcast},
      {"pto.comm.tbroadcast", CommKind::Broadcast},
      {"pto.comm_tgather", CommKind::Gather},
      {"pto.comm.tgather", CommKind::Gather},
      {"pto.comm_tscatter", CommKind::Scatter},
      {"pto.comm.tscatter", CommKind::Scatter},
      {"pto.treduce", CommKind::Reduce},
      {"pto.comm.treduce", CommKind::Reduce}};
  for (const auto& [n, k] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

/// Reads the operands, types and attributes of a data-moving comm op in either form:
/// generic `"pto.tput"(%dst, %src, %ping) <{atomicType = ...}> : (A, B, C) -> ()` or PTOAS's
/// custom `pto.comm.tput(%dst, %src, buf(%ping, %pong) : A, B, C, D) {atomicType = ...}`.
void Builder::buildComm(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results) {
  using K = PieceKind;
  const CommKind kind = *commKindOf(name);
  if (!onlyPieces(diags_, p, name, {K::Paren, K::Dict, K::Props, K::Types, K::Arrow})) return;
  if (p.parens.size() != 1) {
    diags_.error(loc, "expected '" + name + "(...)' with its operands in parentheses");
    return;
  }
  Pieces inner = collectPieces(piecesOf(p.parens[0]));
  const bool custom = !inner.bareWords.empty();
  std::vector<OperandRef> refs = inner.operands;
  if (custom) {
    // `buf(%ping[, %pong])` after a put's or get's views: the staging tiles; `recv(%ping[,
    // %pong]), group(%m0, ...)` after a collective's local view (and treduce's acc).
    const bool p2p = kind == CommKind::Put || kind == CommKind::Get;
    const std::vector<std::string> words =
        p2p ? std::vector<std::string>{"buf"} : std::vector<std::string>{"recv", "group"};
    if (inner.bareWords != words || inner.parens.size() != words.size()) {
      diags_.error(loc, "expected '" + name +
                            (p2p ? "(%dst, %src, buf(%ping[, %pong]) : ...)'"
                                 : "(%local, [%acc, ]recv(%ping[, %pong]), group(...) : ...)'"));
      return;
    }
    for (auto* paren : inner.parens)
      for (const OperandRef& r : collectPieces(piecesOf(paren)).operands)
        refs.push_back(r);
  }
  std::vector<P::TypeContext*> types = custom ? inner.types : p.types;
  if (types.size() != refs.size()) {
    diags_.error(loc, "'" + name + "' has " + std::to_string(refs.size()) + " operands and " +
                          std::to_string(types.size()) + " types");
    return;
  }
  if (!expectResults(name, loc, results, 0)) return;
  CommOperands c;
  c.name = name;
  c.loc = loc;
  c.kind = kind;
  if (!readCommOperands(name, refs, types, c.values, c.locs)) return;
  std::vector<P::AttrDictContext*> dicts = custom ? p.dicts : inner.dicts;
  for (auto* d : p.dicts)
    if (std::find(dicts.begin(), dicts.end(), d) == dicts.end()) dicts.push_back(d);
  if (p.props) dicts.push_back(p.props);
  for (auto* d : dicts)
    for (auto* e : d->attrEntry())
      if (!readCommAttr(c, e)) return;
  c.custom = custom;
  if (!splitCommOperands(c)) return;
  if (!checkComm(c)) return;
  expandComm(c);
}

bool Builder::readCommOperands(const std::string& name, const std::vector<OperandRef>& refs,
                               const std::vector<P::TypeContext*>& types,
                               std::vector<ValueId>& values, std::vector<SrcLoc>& locs) {
  for (size_t i = 0; i < refs.size() && i < types.size(); ++i) {
    ValueId v = use(refs[i]);
    if (v == kNoValue) return false;
    auto t = readType(types[i]);
    if (!t) return false;
    if (!(*t == fn_->type(v))) {
      diags_.error(locOf(types[i]), "'" + name + "': operand " + std::to_string(i) +
                                        " is written as " + toString(*t) + " but is " +
                                        toString(fn_->type(v)));
      return false;
    }
    values.push_back(v);
    locs.push_back(refs[i].loc);
  }
  return true;
}

bool Builder::readCommAttr(CommOperands& c, P::AttrEntryContext* e) {
  const std::string key = entryKey(e);
  SrcLoc at = locOf(e);
  std::string value = e->attrValue() ? textOf(e->attrValue()) : "";
  if (key == "atomicType" && c.kind == CommKind::Put) {
    auto w = enumWord(e->attrValue());
    c.atomic = w ? isa::parseAtomicType(*w) : std::nullopt;
    if (!c.atomic) {
      diags_.error(at, "unknown atomicType '" + value + "' (expected atomic_none, atomic_add)");
      return false;
    }
    return true;
  }
  if (key == "root" && c.kind != CommKind::Put && c.kind != CommKind::Get) {
    auto v = support::parseInt(value);
    if (!v) {
      diags_.error(at, "'" + c.name + "' needs an integer root, found '" + value + "'");
      return false;
    }
    c.root = *v;
    c.rootLoc = at;
    return true;
  }
  if (key == "reduceOp" && c.kind == CommKind::Reduce) {
    auto w = enumWord(e->attrValue());
    if (!w || (*w != "sum" && *w != "max" && *w != "min")) {
      diags_.error(at, "unknown reduceOp '" + value + "' (expected sum, max, min)");
      return false;
    }
    c.reduceOp = *w;
    return true;
  }
  if (key == "operandSegmentSizes" && c.kind != CommKind::Put && c.kind != CommKind::Get) {
    const auto sizes = denseArray(value); // `array<i32: 1, 1, 0, 3>`
    if (!sizes) {
      diags_.error(at, "'" + c.name + "' needs operandSegmentSizes as array<i32: ...>, found '" +
                           value + "'");
      return false;
    }
    c.segments.assign(sizes->begin(), sizes->end());
    c.segmentsLoc = at;
    return true;
  }
  diags_.error(at, "'" + c.name + "' does not take the attribute '" + key + "'");
  return false;
}

/// Splits the operands by role: the local view(s), the staging tiles (the first ones that are
/// tiles), the group (the views after them). operandSegmentSizes, when written, must agree.
bool Builder::splitCommOperands(CommOperands& c) {
  const size_t locals = 1; // dst / src / the reduce's dst
  const size_t fixedTiles = c.kind == CommKind::Reduce ? 2 : 1;
  size_t i = 0;
  auto isTile = [&](size_t k) { return fn_->type(c.values[k]).isTile(); };
  if (c.kind == CommKind::Put || c.kind == CommKind::Get) {
    if (c.values.size() < 3 || c.values.size() > 4) {
      diags_.error(c.loc, "'" + c.name + "' takes dst, src and one or two staging tiles (ping, " +
                              "pong), found " + std::to_string(c.values.size()) + " operands");
      return false;
    }
    c.views = {0, 1};
    for (size_t k = 2; k < c.values.size(); ++k)
      c.tiles.push_back(k);
    return true;
  }
  c.views = {0};
  i = locals;
  while (i < c.values.size() && isTile(i) && c.tiles.size() < fixedTiles + 1)
    c.tiles.push_back(i++);
  for (; i < c.values.size(); ++i)
    c.group.push_back(i);
  if (c.tiles.size() < fixedTiles) {
    diags_.error(c.loc, "'" + c.name + "' needs " + std::string(fixedTiles == 2 ? "acc and " : "") +
                            "a staging tile after its local view");
    return false;
  }
  if (!c.segments.empty()) {
    std::vector<int64_t> want = {1, 1};
    if (c.kind == CommKind::Reduce) want.push_back(1);
    want.push_back(static_cast<int64_t>(c.tiles.size() - fixedTiles));
    want.push_back(static_cast<int64_t>(c.group.size()));
    if (c.segments != want) {
      diags_.error(c.segmentsLoc, "'" + c.name +
                                      "': operandSegmentSizes does not match the operands (a "
                                      "tile after the staging tile is the pong; the views "
                                      "after the tiles are the group)");
      return false;
    }
  }
  return true;
}

/// PTOAS's verifier rules for the data-moving comm ops, with pto-isa's constraints on shapes.
bool Builder::checkComm(CommOperands& c) {
  auto fail = [&](SrcLoc at, const std::string& what) {
    diags_.error(at, "'" + c.name + "' " + what);
    return false;
  };
  auto T = [&](size_t k) -> const Type& { return fn_->type(c.values[k]); };
  const isa::DType elem = T(c.views[0]).elem;
  for (size_t k : c.views)
    if (!T(k).isView()) return fail(c.locs[k], "expects a GM view here, found " + toString(T(k)));
  for (size_t k : c.group)
    if (!T(k).isView())
      return fail(c.locs[k], "expects a GM view of a group member, found " + toString(T(k)));
  for (size_t k : c.tiles) {
    if (!T(k).isTile()) return fail(c.locs[k], "expects a tile here, found " + toString(T(k)));
    if (T(k).tile.loc != isa::Loc::Vec)
      return fail(c.locs[k], "stages data in UB: its tiles need loc=vec, found " + toString(T(k)));
  }
  for (size_t k = 0; k < c.values.size(); ++k)
    if (T(k).elem != elem)
      return fail(c.locs[k], "moves " + std::string(isa::spelling(elem)) +
                                 " data: every view and tile needs that element type, found " +
                                 toString(T(k)));
  // The ping and the pong (and the reduce's recv ping/pong) are alike.
  const size_t firstStage = c.kind == CommKind::Reduce ? 1 : 0;
  for (size_t k = firstStage + 1; k < c.tiles.size(); ++k)
    if (!(T(c.tiles[k]) == T(c.tiles[firstStage])))
      return fail(c.locs[c.tiles[k]],
                  "needs its pong tile of the ping's type " + toString(T(c.tiles[firstStage])));
  TileType stage = T(c.tiles[firstStage]).tile;
  // A staging tile typed `v_row=?, v_col=?` whose pto.alloc_tile gives its valid shape as
  // constants (PTOAS's DeepseekV4 combine kernel) has that valid shape.
  if (stage.validRows < 0 || stage.validCols < 0)
    if (auto valid = constantAllocValid(c.values[c.tiles[firstStage]])) {
      stage.validRows = valid->first;
      stage.validCols = valid->second;
    }
  const int64_t stageElems = stage.validRows * stage.validCols;
  auto viewElems = [&](size_t k) -> std::optional<int64_t> {
    int64_t n = elementCount(T(k));
    if (n <= 0) {
      fail(c.locs[k], "expects a view with a positive static shape, found " + toString(T(k)));
      return std::nullopt;
    }
    return n;
  };
  // What one transfer moves: the view a put or get copies, a group member for a collective.
  const size_t unit = c.group.empty() ? c.views[0] : c.group[0];
  if (c.kind == CommKind::Put || c.kind == CommKind::Get) {
    auto d = viewElems(0), s = viewElems(1);
    if (!d || !s) return false;
    if (!(T(0).shape == T(1).shape))
      return fail(c.locs[1], "copies between views of one shape: dst is " + toString(T(0)) +
                                 ", src " + toString(T(1)));
  } else {
    if (c.group.empty()) return fail(c.loc, "needs a group: one view per member after the tiles");
    if (!c.root) return fail(c.loc, "needs a root: {root = N : i32}");
    if (*c.root < 0 || *c.root >= static_cast<int64_t>(c.group.size()))
      return fail(c.rootLoc, "root " + std::to_string(*c.root) +
                                 " is not a member of its group of " +
                                 std::to_string(c.group.size()));
    for (size_t k : c.group)
      if (!(T(k).shape == T(c.group[0]).shape))
        return fail(c.locs[k], "needs group members of one shape, " + toString(T(c.group[0])) +
                                   ", found " + toString(T(k)));
    if (!viewElems(c.group[0])) return false;
    if (c.kind == CommKind::Reduce && !(T(c.tiles[0]) == T(c.tiles[1])))
      return fail(c.locs[c.tiles[0]],
                  "needs its acc tile of the recv tile's type " + toString(T(c.tiles[1])));
    if (c.kind == CommKind::Reduce && !c.reduceOp)
      return fail(c.loc, "needs a reduceOp: {reduceOp = #pto<reduce_op sum|max|min>}");
  }
  // One transfer through the staging tile when it holds the unit; else pto-isa's chunked mode:
  // the tile slides over the unit's rows and columns, which its valid shape must divide.
  const Type& ut = T(unit);
  c.unitCols = ut.shape.empty() ? 1 : ut.shape.back();
  c.unitRows = elementCount(ut) / c.unitCols;
  c.tileRows = stage.validRows;
  c.tileCols = stage.validCols;
  if (elementCount(ut) != stageElems) {
    bool outerOnes = true;
    for (size_t i = 0; i + 2 < ut.shape.size(); ++i)
      outerOnes = outerOnes && ut.shape[i] == 1;
    if (stage.validRows <= 0 || stage.validCols <= 0 || c.unitRows % stage.validRows != 0 ||
        c.unitCols % stage.validCols != 0 || !outerOnes)
      return fail(c.locs[c.tiles[firstStage]],
                  "moves " + std::to_string(c.unitRows) + "x" + std::to_string(c.unitCols) +
                      " per transfer through a staging tile of " + std::to_string(stage.validRows) +
                      "x" + std::to_string(stage.validCols) +
                      " valid elements: pto-isa's chunked mode needs the tile's valid rows and "
                      "columns to divide the transfer's (and no other dimension above 1)");
    c.chunked = true;
  }
  if (c.kind == CommKind::Gather || c.kind == CommKind::Scatter) warnRowsPastView(c);
  if (c.kind == CommKind::Broadcast || c.kind == CommKind::Reduce)
    if (!(T(c.views[0]).shape == T(c.group[0]).shape))
      return fail(c.locs[0], "needs its local view of the members' shape " +
                                 toString(T(c.group[0])) + ", found " + toString(T(0)));
  return true;
}

/// A gather's or scatter's local view with fewer rows than its N members' N x H: pto-isa
/// addresses member r's rows through the view's DIM_3 stride all the same, so the rows past the
/// view are read or written where that stride puts them (a 1-D view's rows follow one another).
/// PTOAS accepts it; a warning names it, and the runtime's bounds check still guards the bytes.
void Builder::warnRowsPastView(const CommOperands& c) {
  const Type& local = fn_->type(c.values[0]);
  const size_t rank = local.shape.size();
  const int64_t haveRows = rank >= 2 ? local.shape[rank - 2] : 1;
  const int64_t needRows = static_cast<int64_t>(c.group.size()) * c.unitRows;
  if (haveRows == kDynamic || haveRows >= needRows) return;
  const bool gather = c.kind == CommKind::Gather;
  diags_.warning(c.locs[0],
                 "'" + c.name + "' " + (gather ? "writes" : "reads") + " " +
                     std::to_string(c.group.size()) + " members x " + std::to_string(c.unitRows) +
                     (c.unitRows == 1 ? " row" : " rows") + " from row 0 of this view, " +
                     "which has " + std::to_string(haveRows) + ": rows [" +
                     std::to_string(haveRows) + ", " + std::to_string(needRows) +
                     ") lie past it, where pto-isa's " + (gather ? "TGATHER" : "TSCATTER") +
                     " also puts them (the view's row stride; a 1-D view's length)");
}

Op& Builder::emitCommTileOp(isa::OpId id, SrcLoc loc, std::initializer_list<ValueId> operands) {
  const isa::OpInfo& info = isa::info(id);
  Op& op = emit(OpKind::TileOp, loc, "pto." + std::string(info.mnemonic));
  op.tileOp = id;
  op.typeLoc = loc;
  int16_t role = 0;
  for (ValueId v : operands) {
    // The operands are the required tiles and views: skip optional roles (TSTORE's pre and fp)
    // and scalar ones.
    while (role < static_cast<int16_t>(info.roles.size()) &&
           (info.roles[role].optional || (info.roles[role].kind != isa::RoleKind::Tile &&
                                          info.roles[role].kind != isa::RoleKind::View)))
      ++role;
    addOperand(op, v, loc);
    op.operandRoles.push_back(role++);
  }
  return op;
}

void Builder::emitCommBarrier(SrcLoc loc) {
  Op& b = emit(OpKind::Barrier, loc, "pto.barrier");
  b.srcPipe = b.dstPipe = isa::Pipe::All;
}

/// The rows [row0, row0 + rows) and columns [col0, col0 + cols) of `view`, a pto.partition_view
/// of this function (whose dimensions above the last two are 1): a new partition of the same
/// tensor view. Used for gather's and scatter's rows and for the chunks of pto-isa's chunked
/// mode.
std::optional<ValueId> Builder::commSlice(const CommOperands& c, ValueId view, SrcLoc viewLoc,
                                          int64_t row0, int64_t col0, int64_t rows, int64_t cols) {
  const Op* def = nullptr;
  walk(fn_->body, [&](const Op& op) {
    if (op.kind == OpKind::PartitionView && !op.results.empty() && op.results[0] == view) def = &op;
  });
  // Copies: the ops and values emitted below may move the function's op and type storage.
  const Type lt = fn_->type(view);
  const size_t rank = lt.shape.size();
  bool fits = def && rank >= 1 && lt.shape.back() != kDynamic && lt.shape.back() >= col0 + cols;
  for (size_t i = 0; fits && i + 2 < rank; ++i)
    fits = lt.shape[i] == 1;
  const int64_t haveRows = rank >= 2 ? lt.shape[rank - 2] : 1;
  fits = fits && haveRows != kDynamic;
  // Rows past the view: a gather's or scatter's member r lands at rows [r x H, (r + 1) x H) of
  // the local view's DIM_3, which pto-isa's TGATHER / TSCATTER address with the view's row
  // stride whether the view has those rows or not (a 1-D view's padded DIM_3 stride is its
  // length, as PTOAS's GlobalTensor has it). checkComm warns of it once, at the op.
  const bool pastView = fits && row0 + rows > haveRows;
  const size_t tvRank = def ? static_cast<size_t>(def->ints[0]) : 0;
  if (!def) {
    diags_.error(viewLoc, "'" + c.name +
                              "' takes rows and columns of this view (a gather's or scatter's "
                              "members, or the chunks of a staging tile smaller than the "
                              "transfer), which needs a pto.partition_view of this function, "
                              "found " +
                              toString(lt));
    return std::nullopt;
  }
  if (!fits || rows > haveRows || tvRank < 1) {
    diags_.error(viewLoc, "'" + c.name + "' moves rows [" + std::to_string(row0) + ", " +
                              std::to_string(row0 + rows) + ") x columns [" + std::to_string(col0) +
                              ", " + std::to_string(col0 + cols) +
                              ") of this view, which has not got them (its columns and its "
                              "static rows must hold each transfer), found " +
                              toString(lt));
    return std::nullopt;
  }
  // The operands first (constants and additions), then the partition that uses them; the
  // tensor view's rank (the partition's trailing dimensions align with it).
  const Type idx = Type::index();
  auto shifted = [&](ValueId off, int64_t by) {
    if (by == 0) return off;
    if (auto k = integerConstant(off)) return constantInt(*k + by, idx, c.loc);
    ValueId step = constantInt(by, idx, c.loc);
    Op& add = emit(OpKind::Arith, c.loc, "arith.addi");
    addOperand(add, off, c.loc);
    addOperand(add, step, c.loc);
    ValueId sum = fn_->addValue("comm_off", idx, c.loc);
    add.results.push_back(sum);
    return sum;
  };
  const std::vector<ValueId> defOperands = def->operands;
  def = nullptr;
  std::vector<ValueId> offsets, sizes;
  for (size_t i = 0; i < tvRank; ++i) {
    ValueId off = defOperands[1 + i];
    ValueId size = defOperands[1 + tvRank + i];
    if (i == tvRank - 1) {
      // A 1-D view's rows follow one another: row r starts r view lengths on.
      off = shifted(off, col0 + (tvRank < 2 ? row0 * lt.shape.back() : 0));
      size = constantInt(cols, idx, c.loc);
    } else if (i == tvRank - 2) {
      off = shifted(off, row0);
      size = constantInt(rows, idx, c.loc);
    }
    offsets.push_back(off);
    sizes.push_back(size);
  }
  Type st = lt;
  st.shape[rank - 1] = cols;
  if (rank >= 2) st.shape[rank - 2] = rows;
  Op& slice = emit(OpKind::PartitionView, c.loc, "pto.partition_view");
  slice.typeLoc = c.loc;
  addOperand(slice, defOperands[0], c.loc);
  for (ValueId v : offsets)
    addOperand(slice, v, c.loc);
  for (ValueId v : sizes)
    addOperand(slice, v, c.loc);
  slice.ints = {static_cast<int64_t>(tvRank), static_cast<int64_t>(tvRank)};
  if (pastView) slice.ints.push_back(kPartitionPastView);
  ValueId out = fn_->addValue("comm_slice", st, c.loc);
  slice.results.push_back(out);
  return out;
}

/// The op and its region: what it does in TLOAD / TSTORE / TADD|TMAX|TMIN and barriers, chunk
/// by chunk (one chunk when the staging tile holds the whole transfer).
void Builder::expandComm(CommOperands& c) {
  Op& op = emit(OpKind::Comm, c.loc, c.name);
  for (size_t k = 0; k < c.values.size(); ++k)
    addOperand(op, c.values[k], c.locs[k]);
  // ints: {custom form, tiles, group size}; attrs in PTOAS's spelling.
  op.ints = {c.custom ? 1 : 0, static_cast<int64_t>(c.tiles.size()),
             static_cast<int64_t>(c.group.size())};
  if (c.atomic)
    op.attrs.push_back(
        {"atomicType", "#pto<atomic_type " + std::string(isa::spelling(*c.atomic)) + ">"});
  if (c.reduceOp) op.attrs.push_back({"reduceOp", "#pto<reduce_op " + *c.reduceOp + ">"});
  if (c.root) op.attrs.push_back({"root", std::to_string(*c.root) + " : i32"});
  op.regions.emplace_back();
  Op* commOp = &op;
  regions_.push_back(&op.regions[0]);
  emitCommBarrier(c.loc); // every earlier op of the core is done (pto-isa's pipe barrier)
  const int64_t tr = c.chunked ? c.tileRows : c.unitRows;
  const int64_t tc = c.chunked ? c.tileCols : c.unitCols;
  bool ok = true;
  for (int64_t i = 0; ok && i < c.unitRows; i += tr)
    for (int64_t j = 0; ok && j < c.unitCols; j += tc)
      ok = expandCommChunk(c, i, j, tr, tc);
  regions_.pop_back();
  building_ = commOp;
}

/// One chunk (rows [i, i + tr) x columns [j, j + tc) of the unit transfer) of a comm op.
bool Builder::expandCommChunk(const CommOperands& c, int64_t i, int64_t j, int64_t tr, int64_t tc) {
  const SrcLoc at = c.loc;
  auto V = [&](size_t k) { return c.values[k]; };
  // The chunk of operand k, rows shifted by `rowBase` (gather's and scatter's stacking).
  auto part = [&](size_t k, int64_t rowBase = 0) -> std::optional<ValueId> {
    if (!c.chunked && rowBase == 0) return V(k);
    return commSlice(c, V(k), c.locs[k], rowBase + i, j, tr, tc);
  };
  const ValueId ping = V(c.tiles[c.kind == CommKind::Reduce ? 1 : 0]);
  auto load = [&](std::optional<ValueId> view, ValueId tile) {
    if (!view) return false;
    emitCommTileOp(isa::OpId::TLOAD, at, {*view, tile});
    emitCommBarrier(at);
    return true;
  };
  auto store = [&](ValueId tile, std::optional<ValueId> view, bool atomic) {
    if (!view) return false;
    Op& s = emitCommTileOp(isa::OpId::TSTORE, at, {tile, *view});
    if (atomic) {
      s.modes.edit().atomic = isa::AtomicType::Add;
      s.attrs.push_back({"atomicType", "#pto<atomic_type atomic_add>"});
    }
    emitCommBarrier(at);
    return true;
  };
  const int64_t h = c.unitRows;
  switch (c.kind) {
  case CommKind::Put:
  case CommKind::Get:
    return load(part(1), ping) && store(ping, part(0), c.atomic == isa::AtomicType::Add);
  case CommKind::Broadcast:
    if (!load(part(0), ping)) return false;
    for (size_t k : c.group)
      if (!store(ping, part(k), false)) return false;
    return true;
  case CommKind::Gather:
    for (size_t r = 0; r < c.group.size(); ++r)
      if (!load(part(c.group[r]), ping) ||
          !store(ping, commSlice(c, V(0), c.locs[0], static_cast<int64_t>(r) * h + i, j, tr, tc),
                 false))
        return false;
    return true;
  case CommKind::Scatter:
    for (size_t r = 0; r < c.group.size(); ++r)
      if (!load(commSlice(c, V(0), c.locs[0], static_cast<int64_t>(r) * h + i, j, tr, tc), ping) ||
          !store(ping, part(c.group[r]), false))
        return false;
    return true;
  case CommKind::Reduce: {
    const ValueId acc = V(c.tiles[0]);
    const isa::OpId combine = *c.reduceOp == "sum"   ? isa::OpId::TADD
                              : *c.reduceOp == "max" ? isa::OpId::TMAX
                                                     : isa::OpId::TMIN;
    if (!load(part(c.group[static_cast<size_t>(*c.root)]), acc)) return false;
    for (size_t r = 0; r < c.group.size(); ++r) {
      if (static_cast<int64_t>(r) == *c.root) continue;
      if (!load(part(c.group[r]), ping)) return false;
      emitCommTileOp(combine, at, {acc, ping, acc});
      emitCommBarrier(at);
    }
    return store(acc, part(0), false);
  }
  }
  return false;
}

} // namespace pto::as::detail
