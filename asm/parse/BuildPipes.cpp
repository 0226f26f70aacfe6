// Cross-core pipes (docs/pipes.md): reserve_buffer / import_reserved_buffer, the pipe init ops and
// tpush / tpop / tfree, in PTOAS's internal form and its front-end form (aic/aiv_initialize_pipe,
// tpush_to_aiv, tpop_from_aic, tfree_from_aic, ...). The front-end form is rewritten here into
// the internal one, as PTOAS's LowerFrontendPipeOps pass does: one pipe per function, found by
// the data ops without an operand.
#include "asm/parse/BuilderImpl.h"
#include "support/Text.h"

namespace pto::as::detail {
namespace {

const NamedAttr* findNamed(std::span<const NamedAttr> attrs, std::string_view key) {
  for (const NamedAttr& a : attrs)
    if (a.key == key) return &a;
  return nullptr;
}

} // namespace

std::vector<NamedAttr> Builder::pipeAttrs(const std::string& name, SrcLoc loc, Pieces& p) {
  if (p.dicts.empty()) {
    diags_.error(loc, "'" + name + "' expects an attribute dictionary");
    return {};
  }
  return readAttrs(p.dicts[0]);
}

/// The tile type after `->` of a declaring op (declare_tile, tpop_from_*); nullopt after an error.
std::optional<Type> Builder::arrowTileType(const std::string& name, SrcLoc loc, Pieces& p) {
  if (p.arrowTypes.size() != 1) {
    diags_.error(loc, "'" + name + "' expects '-> !pto.tile_buf<...>'");
    return std::nullopt;
  }
  auto type = readType(p.arrowTypes[0]);
  if (type && !type->isTile()) {
    diags_.error(locOf(p.arrowTypes[0]),
                 "'" + name + "' must produce a tile, found " + toString(*type));
    return std::nullopt;
  }
  return type;
}

/// `{split = N}`: 0 (none), 1 (rows: top half to vector core 0) or 2 (columns).
std::optional<int64_t> Builder::pipeSplit(const std::string& name, SrcLoc loc, Pieces& p) {
  std::vector<NamedAttr> attrs = p.dicts.empty() ? std::vector<NamedAttr>{} : readAttrs(p.dicts[0]);
  std::optional<int64_t> split = attrValueInt(attrs, "split");
  if (!split) {
    diags_.error(loc, "'" + name + "' expects a 'split' attribute (0, 1 or 2)");
    return std::nullopt;
  }
  if (*split < 0 || *split > 2) {
    diags_.error(loc, "'" + name + "' expects 'split' to be 0, 1, or 2");
    return std::nullopt;
  }
  return split;
}

/// `%a = pto.reserve_buffer {name = "s", size = N, location = #pto.address_space<vec|mat>,
/// auto = true|false[, base = B]} -> i32` and `%a = pto.import_reserved_buffer {name = "s",
/// peer_func = @f} -> i32`.
void Builder::buildReserve(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Dict, PieceKind::Arrow})) return;
  std::vector<NamedAttr> attrs = pipeAttrs(name, loc, p);
  if (attrs.empty()) return;
  const bool import = name == "pto.import_reserved_buffer";
  for (const char* key : import ? std::vector<const char*>{"name", "peer_func"}
                                : std::vector<const char*>{"name", "size", "location"})
    if (!findNamed(attrs, key)) {
      diags_.error(loc, "'" + name + "' expects a '" + key + "' attribute");
      return;
    }
  Op& op = emit(import ? OpKind::ImportReserved : OpKind::ReserveBuffer, loc, name);
  // PTOAS spells `auto` as the attribute autoAlloc; both are read.
  for (NamedAttr& a : attrs)
    if (a.key == "autoAlloc") a.key = "auto";
  op.attrs = std::move(attrs);
  op.pipe = readPipeAttrs(op.attrs);
  if (expectResults(name, loc, results, 1))
    defineResults(op, results, {Type::scalar(isa::DType::I32)});
}

/// The internal init ops: `%p = pto.initialize_l2g2l_pipe {attrs}(%gm : T, %local : i32[, %peer
/// : i32]) -> !pto.pipe` and `%p = pto.initialize_l2l_pipe {attrs}(%local[, %peer]) -> ...`.
void Builder::buildPipeInit(const std::string& name, SrcLoc loc, Pieces& p,
                            const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Dict, PieceKind::Paren, PieceKind::Arrow})) return;
  std::vector<NamedAttr> attrs = pipeAttrs(name, loc, p);
  if (attrs.empty()) return;
  if (p.parens.empty()) {
    diags_.error(loc, "'" + name + "' expects its buffers in parentheses");
    return;
  }
  const bool gm = name == "pto.initialize_l2g2l_pipe";
  Pieces args = collectPieces(piecesOf(p.parens[0]));
  // Operands first: an op is emitted whole or not at all.
  std::vector<ValueId> values;
  for (const OperandRef& r : args.operands)
    if (values.push_back(use(r)); values.back() == kNoValue) return;
  // A GM-entry pipe (PTOAS's gm_slot_tensor) names just the tensor view of its first slot.
  const bool gmEntries =
      gm && values.size() == 1 && fn_->type(values[0]).kind == TypeKind::TensorView;
  const size_t minArgs = gm ? 2 : 1;
  if (!gmEntries && (values.size() < minArgs || values.size() > minArgs + 1)) {
    diags_.error(loc, "'" + name + "' expects " +
                          (gm ? "(gm_slot_buffer, local_addr[, peer_local_addr]) or "
                                "(gm_slot_tensor)"
                              : "(local_addr[, peer_local_addr])"));
    return;
  }
  if (!expectResults(name, loc, results, 1)) return;
  Op& op = emit(OpKind::PipeInit, loc, name);
  op.attrs = std::move(attrs);
  op.pipe = readPipeAttrs(op.attrs);
  op.ints = {gm ? 1 : 0, gmEntries ? 1 : 0};
  for (size_t i = 0; i < values.size(); ++i)
    addOperand(op, values[i], args.operands[i].loc);
  defineResults(op, results, {Type{TypeKind::Pipe}});
}

/// The front-end init ops `pto.aic_initialize_pipe` / `pto.aiv_initialize_pipe {dir_mask = D,
/// slot_size = S[, nosplit = B]}([gm_slot_buffer = %g : T,] c2v_consumer_buf = %a : i32,
/// v2c_consumer_buf = %b : i32)`, rewritten to the internal op the arch uses (PTOAS's
/// LowerFrontendPipeOps): A5 rings live in the consumer's local memory (initialize_l2l_pipe),
/// A2/A3 rings in GM (initialize_l2g2l_pipe); 8 slots one way, 4 each way for dir_mask 3.
void Builder::buildFrontendInit(const std::string& name, SrcLoc loc, Pieces& p,
                                const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Dict, PieceKind::Paren})) return;
  if (!expectResults(name, loc, results, 0)) return;
  std::vector<NamedAttr> attrs = pipeAttrs(name, loc, p);
  if (attrs.empty()) return;
  // PTOAS binds an init to its push, pop and free ops by `id` (0 when absent), unique in the
  // function: a function may open several pipes.
  const int64_t id = attrValueInt(attrs, "id").value_or(0);
  FrontendPipe& fp = frontendPipes_[fn_][id];
  if (fp.pipe != kNoValue) {
    diags_.error(loc, "'" + name + "' requires 'id' to be unique in the function (id " +
                          std::to_string(id) + ")");
    diags_.note(fp.loc, "previous initialize_pipe with this id is here");
    return;
  }
  std::optional<int64_t> dir = attrValueInt(attrs, "dir_mask"),
                         slotSize = attrValueInt(attrs, "slot_size");
  if (!dir || !slotSize) {
    diags_.error(loc, "'" + name + "' expects 'dir_mask' and 'slot_size' attributes");
    return;
  }
  std::optional<int64_t> slotNum = attrValueInt(attrs, "slot_num"),
                         localSlotNum = attrValueInt(attrs, "local_slot_num");
  if ((slotNum && *slotNum <= 0) || (localSlotNum && *localSlotNum <= 0)) {
    diags_.error(loc, "'" + name + "' expects 'slot_num' and 'local_slot_num' to be positive");
    return;
  }
  if (p.parens.empty()) {
    diags_.error(loc, "'" + name + "' expects its buffers in parentheses");
    return;
  }
  Pieces args = collectPieces(piecesOf(p.parens[0]));
  std::map<std::string, std::pair<ValueId, SrcLoc>> bufs;
  for (const Keyword& kw : args.keywords) {
    if (kw.key != "gm_slot_buffer" && kw.key != "c2v_consumer_buf" &&
        kw.key != "v2c_consumer_buf" && kw.key != "gm_slot_tensor") {
      diags_.error(kw.loc, "unknown operand '" + kw.key + "' of '" + name +
                               "' (gm_slot_buffer, gm_slot_tensor, c2v_consumer_buf, "
                               "v2c_consumer_buf)");
      return;
    }
    auto* value = kw.value;
    if (!value || !value->VALUE_ID()) {
      diags_.error(kw.loc, "'" + kw.key + "' expects a value");
      return;
    }
    OperandRef r;
    r.name = value->VALUE_ID()->getText().substr(1);
    r.loc = locOf(value);
    ValueId v = use(r);
    if (v == kNoValue) return;
    bufs[kw.key] = {v, r.loc};
  }
  const int64_t slots = slotNum.value_or(*dir == 3 ? 4 : 8);
  if (bufs.count("gm_slot_tensor")) {
    if (bufs.size() > 1 || localSlotNum) {
      diags_.error(loc, "'" + name +
                            "' with 'gm_slot_tensor' (a global-only GM FIFO) takes no "
                            "gm_slot_buffer, local_slot_num, c2v_consumer_buf or "
                            "v2c_consumer_buf");
      return;
    }
    return buildGmEntryInit(name, loc, attrs, bufs["gm_slot_tensor"], *dir, *slotSize, slots, fp);
  }
  for (const char* key : {"c2v_consumer_buf", "v2c_consumer_buf"})
    if (!bufs.count(key)) {
      diags_.error(loc, "'" + name + "' expects '" + std::string(key) + " = %value : i32'");
      return;
    }
  const bool a5 = arch() == isa::Arch::A5;
  if (!a5 && !bufs.count("gm_slot_buffer")) {
    diags_.error(loc, "'" + name + "' requires 'gm_slot_buffer' when lowering to a2/a3");
    return;
  }
  if (a5 && localSlotNum) {
    diags_.error(loc, "'" + name + "' expects 'local_slot_num' to be omitted on a5");
    return;
  }
  Op& op =
      emit(OpKind::PipeInit, loc, a5 ? "pto.initialize_l2l_pipe" : "pto.initialize_l2g2l_pipe");
  op.ints = {a5 ? 0 : 1, 0};
  op.attrs = {{"dir_mask", std::to_string(*dir)},
              {"slot_size", std::to_string(*slotSize)},
              {"slot_num", std::to_string(slots)}};
  if (!a5) op.attrs.push_back({"local_slot_num", std::to_string(localSlotNum.value_or(slots))});
  if (const NamedAttr* ns = findNamed(attrs, "nosplit")) op.attrs.push_back(*ns);
  // Which kernel kind the front-end op belongs to, for the verifier.
  op.attrs.push_back({"frontend", name == "pto.aic_initialize_pipe" ? "\"aic\"" : "\"aiv\""});
  op.pipe = readPipeAttrs(op.attrs);
  if (!a5) addOperand(op, bufs["gm_slot_buffer"].first, bufs["gm_slot_buffer"].second);
  // One way: the consumer's buffer of that direction; both ways: C2V's, then V2C's.
  if (*dir == 2) {
    addOperand(op, bufs["v2c_consumer_buf"].first, bufs["v2c_consumer_buf"].second);
  } else {
    addOperand(op, bufs["c2v_consumer_buf"].first, bufs["c2v_consumer_buf"].second);
    if (*dir == 3) addOperand(op, bufs["v2c_consumer_buf"].first, bufs["v2c_consumer_buf"].second);
  }
  const ValueId pipe =
      fn_->addValue("pipe" + std::to_string(fn_->values.size()), Type{TypeKind::Pipe}, loc);
  op.results.push_back(pipe);
  fp = {pipe, static_cast<int>(*dir), loc, &op};
}

/// A front-end init with `gm_slot_tensor`: PTOAS's global-only GM FIFO, whose slots stay in GM
/// and are handed over as tensor views (talloc / tpush / tpop / tfree of a !pto.tensor_view),
/// A2/A3 only (initialize_l2g2l_pipe; A5's pipes have no GM ring). The view describes one slot
/// at the ring's base; slot k starts k x slot_size bytes on.
void Builder::buildGmEntryInit(const std::string& name, SrcLoc loc,
                               const std::vector<NamedAttr>& attrs,
                               std::pair<ValueId, SrcLoc> slotView, int64_t dir, int64_t slotSize,
                               int64_t slots, FrontendPipe& fp) {
  if (arch() == isa::Arch::A5) {
    diags_.error(loc, "'" + name +
                          "' with 'gm_slot_tensor' needs an A2/A3 target: its slots "
                          "stay in GM, and A5's pipes have no GM ring");
    return;
  }
  if (fn_->type(slotView.first).kind != TypeKind::TensorView) {
    diags_.error(slotView.second, "'gm_slot_tensor' of '" + name +
                                      "' expects a !pto.tensor_view, found " +
                                      toString(fn_->type(slotView.first)));
    return;
  }
  Op& op = emit(OpKind::PipeInit, loc, "pto.initialize_l2g2l_pipe");
  op.ints = {1, 1};
  op.attrs = {{"dir_mask", std::to_string(dir)},
              {"slot_size", std::to_string(slotSize)},
              {"slot_num", std::to_string(slots)}};
  if (const NamedAttr* ns = findNamed(attrs, "nosplit")) op.attrs.push_back(*ns);
  op.attrs.push_back({"frontend", name == "pto.aic_initialize_pipe" ? "\"aic\"" : "\"aiv\""});
  op.pipe = readPipeAttrs(op.attrs);
  addOperand(op, slotView.first, slotView.second);
  const ValueId pipe =
      fn_->addValue("pipe" + std::to_string(fn_->values.size()), Type{TypeKind::Pipe}, loc);
  op.results.push_back(pipe);
  fp = {pipe, static_cast<int>(dir), loc, &op};
}

/// The cross-core flags of a function's front-end pipes, in the order of their ids: two per
/// direction each (flag_base F: F, F+1; a two-way pipe's V2C F+2, F+3), of the 16 the hardware
/// has. Both ends of a pipe open the same ids with the same directions (the verifier pairs them),
/// so both count the same flags.
void Builder::assignFrontendFlags() {
  auto it = frontendPipes_.find(fn_);
  if (it == frontendPipes_.end() || it->second.size() < 2) return;
  int64_t next = 0;
  for (auto& [id, fp] : it->second) {
    if (!fp.init) continue;
    const int64_t width = fp.dir == 3 ? 4 : 2;
    if (next > 12 || next + width > 16) {
      diags_.error(fp.loc, "the function's pipes need more cross-core flags than the hardware's "
                           "16 (pipe id " +
                               std::to_string(id) + " would start at flag " + std::to_string(next) +
                               "; a pipe starts at 0..12)");
      return;
    }
    fp.init->attrs.push_back({"flag_base", std::to_string(next)});
    fp.init->pipe = readPipeAttrs(fp.init->attrs);
    next += width;
  }
}

/// `pto.tpush(%tile, %pipe : T, !pto.pipe) {split}`, `pto.tpop(%tile, %pipe : ...) {split}`,
/// `pto.tfree(%pipe : !pto.pipe) {split}`.
void Builder::buildPipeData(const std::string& name, SrcLoc loc, Pieces& p,
                            const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Paren, PieceKind::Dict})) return;
  if (!expectResults(name, loc, results, 0)) return;
  const bool free = name == "pto.tfree";
  const std::string form = free ? "([%entry, ]%pipe : [!pto.tensor_view<...>, ]!pto.pipe)"
                           : name == "pto.talloc"
                               ? "(%entry, %pipe : !pto.tensor_view<...>, !pto.pipe)"
                               : "(%tile, %pipe : T, !pto.pipe)";
  Pieces args = p.parens.empty() ? Pieces{} : collectPieces(piecesOf(p.parens[0]));
  if (p.parens.empty() || args.operands.size() > 2 || args.operands.size() < (free ? 1u : 2u)) {
    diags_.error(loc, "'" + name + "' expects " + form);
    return;
  }
  auto split = pipeSplit(name, loc, p);
  if (!split) return;
  std::vector<ValueId> values;
  for (const OperandRef& r : args.operands)
    if (values.push_back(use(r)); values.back() == kNoValue) return;
  Op& op = emit(free                   ? OpKind::PipeFree
                : name == "pto.tpush"  ? OpKind::PipePush
                : name == "pto.talloc" ? OpKind::PipeAlloc
                                       : OpKind::PipePop,
                loc, name);
  op.ints = {*split};
  for (size_t i = 0; i < values.size(); ++i)
    addOperand(op, values[i], args.operands[i].loc);
}

/// The front-end data ops: the function's one pipe (its aic/aiv_initialize_pipe) is implied.
/// `pto.tpush_to_aiv(%t : T) {split}`, `%t = pto.tpop_from_aic [(%vr, %vc)] {split} -> T`
/// (a declared tile, its valid shape set from the operands, then tpop), `pto.tfree_from_aic
/// {split}`; the same with aic/aiv swapped.
/// The front-end pipe a data op names by its `id` (0 when absent), which must enable the op's
/// direction (C2V for the cube's pushes and the vector cores' pops); nullptr after an error.
const Builder::FrontendPipe* Builder::frontendPipeFor(const std::string& name, SrcLoc loc,
                                                      Pieces& p, bool c2v) {
  const int64_t id =
      attrValueInt(p.dicts.empty() ? std::vector<NamedAttr>{} : readAttrs(p.dicts[0]), "id")
          .value_or(0);
  auto it = frontendPipes_.find(fn_);
  auto pipeIt = it == frontendPipes_.end() ? decltype(it->second.end()){} : it->second.find(id);
  if (it == frontendPipes_.end() || pipeIt == it->second.end() || pipeIt->second.pipe == kNoValue) {
    diags_.error(loc, "'" + name + "' requires a frontend initialize_pipe op" +
                          (id ? " with id " + std::to_string(id) : std::string()) +
                          " in the same function");
    return nullptr;
  }
  const FrontendPipe& fp = pipeIt->second;
  if (!(fp.dir & (c2v ? 1 : 2))) {
    diags_.error(loc, "'" + name + "' requires the dominating initialize_pipe op to enable " +
                          (c2v ? "C2V" : "V2C"));
    diags_.note(fp.loc, "the initialize_pipe op is here");
    return nullptr;
  }
  return &fp;
}

/// `%e = pto.talloc_to_aiv {[id,] split} -> !pto.tensor_view<...>` (cube) and `talloc_to_aic`
/// (vector): the producer's next free slot of a GM-entry pipe, as PTOAS lowers it: a declared
/// GM entry, then pto.talloc binding it to the slot.
void Builder::buildTAllocSlot(const std::string& name, SrcLoc loc, Pieces& p,
                              const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Dict, PieceKind::Arrow})) return;
  if (!expectResults(name, loc, results, 1)) return;
  auto split = pipeSplit(name, loc, p);
  if (!split) return;
  const FrontendPipe* fp = frontendPipeFor(name, loc, p, name.ends_with("_to_aiv"));
  if (!fp) return;
  const ValueId entry = declareGlobal(name, loc, p, results);
  if (entry == kNoValue) return;
  Op& op = emit(OpKind::PipeAlloc, loc, "pto.talloc");
  op.ints = {*split};
  addOperand(op, entry, loc);
  addOperand(op, fp->pipe, loc);
}

/// A GM entry declared for a talloc or tpop to bind (`%e = pto.declare_global -> T`, T after the
/// op's `->`); kNoValue after an error.
ValueId Builder::declareGlobal(const std::string& name, SrcLoc loc, Pieces& p,
                               const std::vector<ResultName>& results) {
  auto type = arrowViewType(name, loc, p);
  if (!type) return kNoValue;
  Op& decl = emit(OpKind::DeclareGlobal, loc, "pto.declare_global");
  decl.typeLoc = locOf(p.arrowTypes[0]);
  defineResults(decl, results, {*type});
  return decl.results.empty() ? kNoValue : decl.results[0];
}

/// The one operand in a front-end data op's parentheses (the pushed tile or entry, the freed
/// entry) and its location; kNoValue after an error.
std::pair<ValueId, SrcLoc> Builder::soleOperand(const std::string& name, SrcLoc loc, Pieces& p,
                                                const std::string& form) {
  Pieces args = p.parens.empty() ? Pieces{} : collectPieces(piecesOf(p.parens[0]));
  if (args.operands.size() != 1) {
    diags_.error(loc, "'" + name + "' expects " + form);
    return {kNoValue, loc};
  }
  return {use(args.operands[0]), args.operands[0].loc};
}

/// The internal data op a front-end push, pop or free becomes: `item` (a tile or GM entry, or
/// none for a tile pipe's free) and the pipe.
void Builder::emitPipeData(const std::string& name, SrcLoc loc, ValueId item, SrcLoc itemLoc,
                           ValueId pipe, int64_t split) {
  const bool push = name.starts_with("pto.tpush_to_");
  const bool pop = name.starts_with("pto.tpop_from_");
  Op& op = emit(push  ? OpKind::PipePush
                : pop ? OpKind::PipePop
                      : OpKind::PipeFree,
                loc,
                push  ? "pto.tpush"
                : pop ? "pto.tpop"
                      : "pto.tfree");
  op.ints = {split};
  if (item != kNoValue) addOperand(op, item, itemLoc);
  addOperand(op, pipe, loc);
}

/// The GM-entry forms of the front-end data ops: `pto.tpush_to_aiv(%e : !pto.tensor_view<...>)`,
/// `%e = pto.tpop_from_aic {...} -> !pto.tensor_view<...>` (a declared GM entry, then tpop
/// binding it), `pto.tfree_from_aic(%e : !pto.tensor_view<...>)`; aic and aiv swapped alike.
void Builder::buildFrontendEntry(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results, const FrontendPipe& fp,
                                 int64_t split) {
  std::pair<ValueId, SrcLoc> entry{kNoValue, loc};
  if (name.starts_with("pto.tpop_from_")) {
    if (!p.parens.empty()) {
      diags_.error(loc, "'" + name +
                            "' of a GM entry takes no valid_row / valid_col operands "
                            "(the entry is the whole slot)");
      return;
    }
    entry.first = declareGlobal(name, loc, p, results);
  } else {
    entry = soleOperand(name, loc, p, "(%entry : !pto.tensor_view<...>)");
  }
  if (entry.first == kNoValue) return;
  emitPipeData(name, loc, entry.first, entry.second, fp.pipe, split);
}

void Builder::buildFrontendData(const std::string& name, SrcLoc loc, Pieces& p,
                                const std::vector<ResultName>& results) {
  const bool push = name.starts_with("pto.tpush_to_");
  const bool pop = name.starts_with("pto.tpop_from_");
  if (!onlyPieces(diags_, p, name,
                  pop ? std::initializer_list<PieceKind>{PieceKind::Paren, PieceKind::Dict,
                                                         PieceKind::Arrow}
                      : std::initializer_list<PieceKind>{PieceKind::Paren, PieceKind::Dict}))
    return;
  if (!expectResults(name, loc, results, pop ? 1 : 0)) return;
  // A slot of a GM-tensor pipe: popped as, or pushed and freed with, a !pto.tensor_view.
  bool gmSlot =
      pop && p.arrowTypes.size() == 1 && p.arrowTypes[0]->getText().starts_with("!pto.tensor_view");
  if (!pop && !p.parens.empty())
    for (auto* t : collectPieces(piecesOf(p.parens[0])).types)
      gmSlot |= t->getText().starts_with("!pto.tensor_view");
  auto split = pipeSplit(name, loc, p);
  if (!split) return;
  // Cube-side ops move tiles to or from the vector cores (C2V out, V2C in), and the reverse.
  const bool c2v = name.ends_with("_to_aiv") || name.ends_with("_from_aic");
  const FrontendPipe* found = frontendPipeFor(name, loc, p, c2v);
  if (!found) return;
  const FrontendPipe& fp = *found;
  if (gmSlot) return buildFrontendEntry(name, loc, p, results, fp, *split);
  ValueId tile = kNoValue;
  SrcLoc tileLoc = loc;
  if (push) {
    std::tie(tile, tileLoc) = soleOperand(name, loc, p, "(%tile : !pto.tile_buf<...>)");
    if (tile == kNoValue) return;
  } else if (pop) {
    auto type = arrowTileType(name, loc, p);
    if (!type) return;
    std::vector<ValueId> valid;
    if (!p.parens.empty()) {
      Pieces args = collectPieces(piecesOf(p.parens[0]));
      for (const OperandRef& r : args.operands)
        valid.push_back(indexOperand(r));
      if (valid.size() != 2) {
        diags_.error(loc, "'" + name +
                              "' expects valid_row and valid_col operands to be provided together");
        return;
      }
      if (type->tile.validRows != kDynamic || type->tile.validCols != kDynamic) {
        diags_.error(locOf(p.arrowTypes[0]),
                     "'" + name +
                         "' expects tile result to have dynamic validShape (?, ?) when "
                         "valid_row/valid_col operands are provided");
        return;
      }
    }
    // A dynamic valid shape without operands starts as the whole tile (PTOAS constructs the
    // tile with its rows and cols).
    ValueId vr = kNoValue, vc = kNoValue;
    if (!valid.empty()) {
      vr = valid[0];
      vc = valid[1];
      if (vr == kNoValue || vc == kNoValue) return;
    } else {
      if (type->tile.validRows == kDynamic) vr = constantInt(type->tile.rows, Type::index(), loc);
      if (type->tile.validCols == kDynamic) vc = constantInt(type->tile.cols, Type::index(), loc);
    }
    Op& decl = emit(OpKind::AllocTile, loc, "pto.declare_tile");
    decl.typeLoc = locOf(p.arrowTypes[0]);
    decl.ints = {0, vr != kNoValue, vc != kNoValue};
    if (vr != kNoValue) addOperand(decl, vr, loc);
    if (vc != kNoValue) addOperand(decl, vc, loc);
    defineResults(decl, results, {*type});
    if (decl.results.empty()) return;
    tile = decl.results[0];
  }
  emitPipeData(name, loc, tile, tileLoc, fp.pipe, *split);
}

/// `%t = pto.declare_tile -> T`: a tile whose storage a tpop fills (the linker places it).
void Builder::buildDeclareTile(const std::string& name, SrcLoc loc, Pieces& p,
                               const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Arrow, PieceKind::Dict})) return;
  auto type = arrowTileType(name, loc, p);
  if (!type || !expectResults(name, loc, results, 1)) return;
  Op& op = emit(OpKind::AllocTile, loc, name);
  op.typeLoc = locOf(p.arrowTypes[0]);
  op.ints = {0, 0, 0};
  defineResults(op, results, {*type});
}

/// `%e = pto.declare_global -> !pto.tensor_view<...>`: a GM entry of a pipe whose slots are
/// tensor views; the talloc or tpop after it binds it to a slot.
void Builder::buildDeclareGlobal(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Arrow, PieceKind::Dict})) return;
  if (expectResults(name, loc, results, 1)) (void)declareGlobal(name, loc, p, results);
}

/// The tensor view type after `->` of a GM entry (declare_global, talloc_to_*, tpop_from_*) with
/// a static shape; nullopt after an error.
std::optional<Type> Builder::arrowViewType(const std::string& name, SrcLoc loc, Pieces& p) {
  if (p.arrowTypes.size() != 1) {
    diags_.error(loc, "'" + name + "' expects '-> !pto.tensor_view<...>'");
    return std::nullopt;
  }
  auto type = readType(p.arrowTypes[0]);
  if (!type) return std::nullopt;
  const bool dynamic =
      std::any_of(type->shape.begin(), type->shape.end(), [](int64_t d) { return d < 0; });
  if (type->kind != TypeKind::TensorView || type->shape.empty() || dynamic) {
    diags_.error(locOf(p.arrowTypes[0]), "'" + name +
                                             "' must produce a !pto.tensor_view of static shape "
                                             "(a pipe slot), found " +
                                             toString(*type));
    return std::nullopt;
  }
  return type;
}

/// `pto.set_ffts %ffts : memref<Nxi64>`: sets the base address of the FFTS flags the hardware's
/// cross-core handshakes use. The model keeps those handshakes itself (docs/pipes.md), so the
/// op has no effect to model; its operand must still name a value.
void Builder::buildSetFfts(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
  if (!expectResults(name, loc, results, 0)) return;
  if (p.operands.size() != 1) {
    diags_.error(loc, "'" + name + "' expects one operand: the FFTS address");
    return;
  }
  (void)use(p.operands[0]);
}

} // namespace pto::as::detail
