// Sync: set_flag / wait_flag / record_event / wait_event, barriers, event id arrays, and the
// event chains of tile ops (`wait(...)` / `record(...)`) resolved at the end of a function.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace pto::as::detail {

/// The event-id arrays (`pto.declare_eventid_array -> !pto.eventid_array<N>`, `_get`, `_set`)
/// and PTOAS's stack arrays of scalars, which work the same way with an element type and one
/// index per dimension: `%a = pto.declare_local_array -> !pto.local_array<4x8xi32>`,
/// `%v = pto.local_array_get %a[%i, %j] : !pto.local_array<4x8xi32> -> i32`,
/// `pto.local_array_set %a[%i, %j], %v : !pto.local_array<4x8xi32>, i32`.
void Builder::buildEventIdArray(const std::string& name, SrcLoc loc, Pieces& p,
                                const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  const bool local = name.find("local_array") != std::string::npos;
  const std::string arrayType = local ? "!pto.local_array<D0x...xT>" : "!pto.eventid_array<N>";
  if (name == "pto.declare_eventid_array" || name == "pto.declare_local_array") {
    auto type = singleType(name, loc, p);
    if (!type) return;
    if (type->kind != TypeKind::EventIdArray || type->localArray != local) {
      diags_.error(loc, "'" + name + "' must produce a " + arrayType);
      return;
    }
    Op& op = emit(OpKind::DeclareEventIdArray, loc, name);
    if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
    return;
  }
  const bool isSet = name == "pto.eventid_array_set" || name == "pto.local_array_set";
  if (p.operands.empty() || p.operands[0].kind != OperandRef::Memory ||
      p.operands.size() != (isSet ? 2u : 1u)) {
    diags_.error(loc, "expected '" + name + " %array[%index...]" + (isSet ? ", %value" : "") +
                          " : " + arrayType + (local ? (isSet ? ", T" : " -> T") : "") + "'");
    return;
  }
  const ValueId array = use(p.operands[0]);
  if (array == kNoValue) return;
  const Type at = fn_->type(array); // a copy: the index operands emitted below add values
  if (at.kind != TypeKind::EventIdArray || at.localArray != local) {
    diags_.error(p.operands[0].loc,
                 "'" + name + "' takes a " + arrayType + ", not " + toString(at));
    return;
  }
  const std::vector<OperandRef>& idx = p.operands[0].indices;
  if (idx.size() != at.shape.size()) {
    diags_.error(p.operands[0].loc, "'" + name + "' takes " + std::to_string(at.shape.size()) +
                                        " index(es) for " + toString(at) + ", found " +
                                        std::to_string(idx.size()));
    return;
  }
  const Type elem = local ? Type::scalar(at.elem) : Type::index();
  Op& op = emit(isSet ? OpKind::EventIdArraySet : OpKind::EventIdArrayGet, loc, name);
  addOperand(op, array, p.operands[0].loc);
  for (const OperandRef& i : idx)
    addOperand(op, indexOperand(i), i.loc);
  if (isSet) {
    addOperand(op, scalarOperand(p.operands[1], elem), p.operands[1].loc);
    ValueId v = op.operands.back();
    if (local && v != kNoValue && !(fn_->type(v) == elem))
      diags_.error(p.operands[1].loc, "'" + name + "' stores a " + toString(elem) + " into " +
                                          toString(at) + ", not " + toString(fn_->type(v)));
    expectResults(name, loc, results, 0);
  } else if (expectResults(name, loc, results, 1)) {
    defineResults(op, results, {elem});
  }
}

/// A literal's text without its quotes, if it is a string.
static std::string unquoted(std::string text) {
  if (text.size() >= 2 && text.front() == '"') return text.substr(1, text.size() - 2);
  return text;
}

std::vector<Builder::SyncItem> Builder::syncItems(P::BracketContext* b) {
  std::vector<SyncItem> out;
  SyncItem item;
  bool have = false;
  for (auto* piece : piecesOf(b)) {
    if (dynamic_cast<P::CommaPieceContext*>(piece)) {
      out.push_back(item);
      item = {};
      have = false;
      continue;
    }
    have = true;
    item.loc = locOf(piece);
    if (auto* h = dynamic_cast<P::HashPieceContext*>(piece)) {
      if (h->angle()) item.word = enumWord(h->angle()).value_or("");
    } else if (auto* a = dynamic_cast<P::AnglePieceContext*>(piece)) {
      item.word = enumWord(a->angle()).value_or("");
    } else if (auto* s = dynamic_cast<P::SymbolPieceContext*>(piece)) {
      item.symbol = s->SYMBOL()->getText().substr(1);
    } else if (auto* v = dynamic_cast<P::ValuePieceContext*>(piece)) {
      OperandRef r;
      r.name = v->VALUE_ID()->getText().substr(1);
      r.loc = locOf(v->VALUE_ID());
      item.value = r;
    } else if (auto* l = dynamic_cast<P::LiteralPieceContext*>(piece)) {
      item.word = unquoted(l->getText());
    }
  }
  if (have) out.push_back(item);
  return out;
}

std::optional<isa::Pipe> Builder::syncPipe(const SyncItem& it, bool highLevel) {
  if (highLevel) {
    auto t = isa::parseSyncOpType(it.word);
    if (!t) {
      diags_.error(
          it.loc,
          "unknown sync endpoint '" + it.word +
              "' (expected TLOAD, TSTORE_VEC, "
              "TSTORE_ACC, TMOV_M2L, TMOV_M2S, TMOV_M2B, TMOV_M2V, TMOV_V2M, TMATMUL, TVEC)");
      return std::nullopt;
    }
    return isa::pipeOf(*t);
  }
  auto p = isa::parsePipe(it.word);
  if (!p)
    diags_.error(it.loc, "unknown pipe '" + it.word +
                             "' (expected PIPE_S, PIPE_V, PIPE_M, "
                             "PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL)");
  return p;
}

void Builder::buildSync(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Bracket})) return;
  expectResults(name, loc, results, 0);
  bool highLevel = name == "pto.record_event" || name == "pto.wait_event";
  bool isSet = name == "pto.record_event" || name.starts_with("pto.set_flag");
  bool dyn = name.ends_with("_dyn");
  if (p.brackets.size() != 1) {
    diags_.error(loc, "expected '" + name + "[<src>, <dst>, <event>]'");
    return;
  }
  auto items = syncItems(p.brackets[0]);
  if (items.size() != 3 && !(!dyn && items.size() == 2)) {
    diags_.error(locOf(p.brackets[0]), "'" + name + "' takes [source, destination, event id]");
    return;
  }
  auto src = syncPipe(items[0], highLevel), dst = syncPipe(items[1], highLevel);
  if (!src || !dst) return;
  Op& op = emit(isSet ? OpKind::SetFlag : OpKind::WaitFlag, loc, name);
  op.srcPipe = *src;
  op.dstPipe = *dst;
  if (items.size() == 2) {
    op.event.edit().kind = EventRef::Kind::Symbolic; // the linker picks the id
    return;
  }
  const SyncItem& ev = items[2];
  if (dyn || ev.value) {
    if (!ev.value) {
      diags_.error(ev.loc, "'" + name + "' needs a dynamic event id value");
      return;
    }
    op.event.edit().kind = EventRef::Kind::Dynamic;
    addOperand(op, scalarOperand(*ev.value, Type::index()), ev.loc);
    return;
  }
  if (!ev.symbol.empty()) {
    op.event.edit().kind = EventRef::Kind::Symbolic;
    op.event.edit().symbol = ev.symbol;
    return;
  }
  std::string w = ev.word;
  auto id = w.starts_with("EVENT_ID") ? parseInt(w.substr(8)) : parseInt(w);
  if (!id) {
    diags_.error(ev.loc, "expected an event id EVENT_ID0..EVENT_ID7, found '" + w + "'");
    return;
  }
  op.event.edit().kind = EventRef::Kind::Const;
  op.event.edit().id = static_cast<int>(*id);
  op.typeLoc = ev.loc;
}

void Builder::buildBarrier(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Angle, PieceKind::Hash, PieceKind::Bracket})) return;
  expectResults(name, loc, results, 0);
  std::string word;
  SrcLoc wloc = loc;
  bool highLevel = name == "pto.barrier_sync";
  if (!p.angles.empty()) {
    word = enumWord(p.angles[0]).value_or("");
    wloc = locOf(p.angles[0]);
  } else if (!p.hashes.empty() && p.hashes[0]->angle()) {
    word = enumWord(p.hashes[0]->angle()).value_or("");
    wloc = locOf(p.hashes[0]);
  } else if (!p.brackets.empty()) {
    auto items = syncItems(p.brackets[0]);
    if (items.size() == 1) word = items[0].word, wloc = items[0].loc;
  }
  if (word.empty()) {
    diags_.error(loc, "expected '" + name + (highLevel ? " [<TVEC>]'" : " <PIPE_X>'"));
    return;
  }
  auto pipe = syncPipe({word, "", std::nullopt, wloc}, highLevel);
  if (!pipe) return;
  Op& op = emit(OpKind::Barrier, loc, "pto.barrier");
  op.srcPipe = op.dstPipe = *pipe;
}

/// Signals in GM, as PTOAS writes them (its comm ops; pto-isa's TNOTIFY / TWAIT / TTEST):
/// `pto.comm.tnotify(%sig, %v : T, i32) {notifyOp = #pto<notify_op set|atomic_add>}`,
/// `pto.comm.twait(%sig, %v : T, i32) {cmp = #pto<wait_cmp ge>}`, `%b = pto.ttest(...) {cmp}`,
/// and the generic forms `"pto.tnotify"(%sig, %v) <{...}> : (T, i32) -> ()`. The signal is a
/// one-element i32 view; a peer's signal is a view of its address like any other.
void Builder::buildSignal(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  const std::string base = name.substr(name.find_last_of('.') + 1); // tnotify, twait, ttest
  using K = PieceKind;
  if (!onlyPieces(diags_, p, name, {K::Paren, K::Dict, K::Props, K::Types, K::Arrow})) return;
  Pieces inner;
  if (p.parens.size() == 1) inner = collectPieces(piecesOf(p.parens[0]));
  // The generic form's types follow the parentheses (the custom ttest ends in `-> i1` too).
  const bool generic = !p.types.empty();
  std::vector<P::TypeContext*> types = generic ? p.types : inner.types;
  if (p.parens.size() != 1 || inner.operands.size() != 2 || types.size() != 2) {
    diags_.error(loc, "expected '" + name + "(%signal, %value : T, i32) {...}'");
    return;
  }
  ValueId sig = use(inner.operands[0]);
  if (sig == kNoValue) return;
  const Type& st = fn_->type(sig);
  int64_t count = 1;
  for (int64_t d : st.shape)
    count = d == kDynamic ? -1 : (count < 0 ? -1 : count * d);
  if (!st.isView() || st.elem != isa::DType::I32 || count != 1) {
    diags_.error(inner.operands[0].loc, "'" + name +
                                            "' needs a signal: a one-element i32 GM view, "
                                            "found " +
                                            toString(st));
    return;
  }
  ValueId value = scalarOperand(inner.operands[1], Type::scalar(isa::DType::I32));
  if (value == kNoValue) return;
  if (!(fn_->type(value) == Type::scalar(isa::DType::I32))) {
    diags_.error(inner.operands[1].loc, "'" + name + "' compares and writes i32 signals, found " +
                                            toString(fn_->type(value)));
    return;
  }
  // The mode: notifyOp for tnotify, cmp for the others (an attribute or a property).
  const char* key = base == "tnotify" ? "notifyOp" : "cmp";
  std::optional<std::string> word;
  SrcLoc wordLoc = loc;
  std::vector<P::AttrDictContext*> dicts = p.dicts;
  if (p.props) dicts.push_back(p.props);
  for (auto* d : dicts)
    for (auto* e : d->attrEntry())
      if (entryKey(e) == key && e->attrValue()) {
        word = enumWord(e->attrValue());
        wordLoc = locOf(e->attrValue());
      }
  int64_t mode = 0;
  if (base == "tnotify") {
    // PTOAS's NotifyOp: set, atomic_add (`add` is read as atomic_add).
    if (word && *word != "set" && *word != "atomic_add" && *word != "add") {
      diags_.error(wordLoc, "unknown notifyOp '" + *word + "' (set, atomic_add)");
      return;
    }
    mode = word && *word != "set" ? 1 : 0;
  } else {
    auto cmp = word ? isa::parseCmpMode(*word) : std::nullopt;
    if (!cmp) {
      diags_.error(wordLoc, "'" + name + "' needs {cmp = #pto<wait_cmp eq|ne|lt|le|gt|ge>}");
      return;
    }
    mode = static_cast<int64_t>(*cmp);
  }
  const bool test = base == "ttest";
  if (!expectResults(name, loc, results, test ? 1 : 0)) return;
  Op& op = emit(OpKind::Signal, loc, "pto.comm." + base);
  addOperand(op, sig, inner.operands[0].loc);
  addOperand(op, value, inner.operands[1].loc);
  op.ints = {mode};
  if (test) defineResults(op, results, {Type::scalar(isa::DType::I1)});
}

/// `pto.syncall` (or `"pto.syncall"() : () -> ()`): every core of every rank waits until all
/// have arrived (docs/multi-device.md). No operands, no results.
void Builder::buildSyncAll(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  using K = PieceKind;
  if (!onlyPieces(diags_, p, name, {K::Paren, K::Types, K::Arrow})) return;
  if (!p.parens.empty() && !collectPieces(piecesOf(p.parens[0])).operands.empty()) {
    diags_.error(loc, "'" + name + "' takes no operands");
    return;
  }
  if (!expectResults(name, loc, results, 0)) return;
  emit(OpKind::Signal, loc, "pto.syncall");
}

/// GM memory ordering as PTOAS's newer kernels write it: `pto.fence.barrier_all
/// #pto.fence_scope<gm>` and the data-cache maintenance `pto.cmo.cacheinvalid %view
/// single_cache_line : T` / `pto.cmo.cacheinvalid all #pto.address_space<gm>`. The simulated GM
/// is coherent (scalar stores reach GM at once), so what remains of both is their ordering: a
/// PIPE_ALL barrier, every earlier access done before any later one starts. They keep their
/// spelling in the IR (attribute "form").
void Builder::buildMemoryFence(const std::string& name, SrcLoc loc, Pieces& p,
                               const std::vector<ResultName>& results) {
  expectResults(name, loc, results, 0);
  std::string form;
  ValueId view = kNoValue;
  SrcLoc viewLoc = loc;
  auto hashWord = [&](std::string_view kind) -> std::optional<std::string> {
    if (p.hashes.size() != 1 || !p.hashes[0]->angle() || p.hashes[0]->HASH_ID()->getText() != kind)
      return std::nullopt;
    return enumWord(p.hashes[0]->angle());
  };
  if (name == "pto.fence.barrier_all") {
    if (!onlyPieces(diags_, p, name, {PieceKind::Hash})) return;
    auto scope = hashWord("#pto.fence_scope");
    if (!scope || *scope != "gm") {
      diags_.error(loc, "expected '" + name + " #pto.fence_scope<gm>'");
      return;
    }
    form = "#pto.fence_scope<gm>";
  } else { // pto.cmo.cacheinvalid
    if (!onlyPieces(diags_, p, name,
                    {PieceKind::Operand, PieceKind::BareWord, PieceKind::Hash, PieceKind::Types},
                    {"single_cache_line", "all"}))
      return;
    const std::string mode = p.bareWords.size() == 1 ? p.bareWords[0] : "";
    if (mode == "single_cache_line" && p.operands.size() == 1 &&
        p.operands[0].kind == OperandRef::Value) {
      view = use(p.operands[0]);
      viewLoc = p.operands[0].loc;
      if (view == kNoValue) return;
      if (!fn_->type(view).isView() && fn_->type(view).kind != TypeKind::Ptr) {
        diags_.error(viewLoc, "'" + name + "' invalidates the lines of a GM view or pointer, not " +
                                  toString(fn_->type(view)));
        return;
      }
      form = "single_cache_line";
    } else if (auto space = hashWord("#pto.address_space");
               mode == "all" && p.operands.empty() && space && *space == "gm") {
      form = "all #pto.address_space<gm>";
    } else {
      diags_.error(loc, "expected '" + name + " %view single_cache_line : T' or '" + name +
                            " all #pto.address_space<gm>'");
      return;
    }
  }
  Op& op = emit(OpKind::Barrier, loc, name);
  op.srcPipe = op.dstPipe = isa::Pipe::All;
  op.attrs.push_back({"form", form});
  if (view != kNoValue) addOperand(op, view, viewLoc);
}

/// The pipe and id of a buffer token op: `[#pto.pipe_event_type<OP>, id[, mode]]`, or the string
/// form of PTOAS's get_buf_dyn / rls_buf_dyn, `"PIPE_X", %id[, mode]` (`pipeWord`: the item
/// names a pipe). A mode written there must be 0, as the `{mode = ...}` attribute.
bool Builder::tokenItems(const std::string& name, SrcLoc loc, Pieces& p, SyncItem& pipeItem,
                         SyncItem& idItem, bool& pipeWord) {
  std::vector<SyncItem> items;
  if (p.brackets.size() == 1 && p.operands.empty()) {
    items = syncItems(p.brackets[0]);
  } else if (p.brackets.empty() && !p.operands.empty() &&
             p.operands[0].kind == OperandRef::Literal &&
             p.operands[0].lit->getText().starts_with("\"")) {
    pipeWord = true;
    for (const OperandRef& r : p.operands) {
      SyncItem it;
      it.loc = r.loc;
      if (r.kind == OperandRef::Literal)
        it.word = unquoted(r.lit->getText());
      else
        it.value = r;
      items.push_back(it);
    }
  }
  if (items.size() != 2 && items.size() != 3) {
    diags_.error(loc, "expected '" + name + " [#pto.pipe_event_type<OP>, <buffer id>[, <mode>]]'" +
                          (name.ends_with("_dyn") ? " or '" + name + " \"PIPE_X\", %id[, <mode>]'"
                                                  : std::string()));
    return false;
  }
  if (items.size() == 3 && items[2].word != "0") {
    diags_.error(items[2].loc, "'" + name + "' with mode " +
                                   (items[2].word.empty() ? "?" : items[2].word) +
                                   " is not supported (mode 0 is)");
    return false;
  }
  pipeItem = items[0];
  idItem = items[1];
  return true;
}

/// Cross-core flags and A5 buffer tokens, one pipe and one id each (docs/sync.md):
/// `pto.sync.set <PIPE_FIX>, 0` / `pto.sync.wait #pto.pipe<PIPE_V>, %id` (PTOAS's ffts_mode 2,
/// the only mode modelled) and `pto.get_buf [#pto.pipe_event_type<TVEC>, 0] {mode = 0}` /
/// `pto.rls_buf [...]`. PTOAS's named `pto.set_intra_block` / `pto.wait_intra_block` are the
/// flags between the cube and vector halves of one block too (ids 0..15 on A2/A3, 0..31 on A5,
/// PTOAS's limits): the same op, printed back as pto.sync.set / pto.sync.wait.
void Builder::buildCoreSync(const std::string& writtenName, SrcLoc loc, Pieces& p,
                            const std::vector<ResultName>& results) {
  const bool intra = writtenName.ends_with("_intra_block");
  const std::string name =
      intra ? (writtenName.starts_with("pto.set") ? "pto.sync.set" : "pto.sync.wait")
      : writtenName.ends_with("_dyn") ? writtenName.substr(0, writtenName.size() - 4)
                                      : writtenName;
  const bool token = name == "pto.get_buf" || name == "pto.rls_buf";
  if (!onlyPieces(diags_, p, writtenName,
                  token ? std::initializer_list<PieceKind>{PieceKind::Bracket, PieceKind::Operand,
                                                           PieceKind::Comma, PieceKind::Dict}
                        : std::initializer_list<PieceKind>{PieceKind::Angle, PieceKind::Hash,
                                                           PieceKind::Operand, PieceKind::Comma,
                                                           PieceKind::Dict}))
    return;
  expectResults(name, loc, results, 0);
  std::vector<NamedAttr> attrs = p.dicts.empty() ? std::vector<NamedAttr>{} : readAttrs(p.dicts[0]);
  const std::string modeKey = token ? "mode" : "ffts_mode";
  const int64_t defaultMode = token ? 0 : 2;
  if (auto m = attrValueInt(attrs, modeKey); m && *m != defaultMode) {
    diags_.error(loc, "'" + writtenName + "' with " + modeKey + " = " + std::to_string(*m) +
                          " is not supported (" + modeKey + " " + std::to_string(defaultMode) +
                          " is)");
    return;
  }
  SyncItem pipeItem, idItem;
  bool pipeWord = false; // the token op's string form names a pipe, not an op type
  if (token) {
    if (!tokenItems(writtenName, loc, p, pipeItem, idItem, pipeWord)) return;
  } else {
    if (!p.angles.empty()) {
      pipeItem = {enumWord(p.angles[0]).value_or(""), "", std::nullopt, locOf(p.angles[0])};
    } else if (!p.hashes.empty() && p.hashes[0]->angle()) {
      pipeItem = {enumWord(p.hashes[0]->angle()).value_or(""), "", std::nullopt,
                  locOf(p.hashes[0])};
    }
    if (pipeItem.word.empty() || p.operands.size() != 1) {
      diags_.error(loc, "expected '" + writtenName + " <PIPE_X>, <event id>'");
      return;
    }
    const OperandRef& r = p.operands[0];
    idItem.loc = r.loc;
    if (r.kind == OperandRef::Literal)
      idItem.word = r.lit->getText();
    else
      idItem.value = r;
  }
  // A token op names an op type (#pto.pipe_event_type<TLOAD>) or, PTOAS's pipe-like attribute,
  // a pipe (#pto.pipe<PIPE_MTE2>, what --emit=ir prints).
  auto pipe = syncPipe(pipeItem, token && !pipeWord && !pipeItem.word.starts_with("PIPE_"));
  if (!pipe) return;
  if (*pipe == isa::Pipe::All) {
    diags_.error(pipeItem.loc, "'" + writtenName + "' names one pipe, not PIPE_ALL");
    return;
  }
  using isa::Pipe;
  if (intra && *pipe != Pipe::FIX && *pipe != Pipe::MTE1 && *pipe != Pipe::MTE2 &&
      *pipe != Pipe::MTE3 && *pipe != Pipe::V) {
    diags_.error(pipeItem.loc, "'" + writtenName +
                                   "' takes PIPE_FIX, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 or PIPE_V "
                                   "(PTOAS's rule)");
    return;
  }
  Op& op = emit(OpKind::CoreSync, loc, name);
  op.srcPipe = op.dstPipe = *pipe;
  op.attrs = attrs;
  if (idItem.value) {
    op.event.edit().kind = EventRef::Kind::Dynamic;
    addOperand(op, scalarOperand(*idItem.value, Type::index()), idItem.loc);
    return;
  }
  auto id = parseInt(idItem.word);
  // Flag ids: 16 per vector core (id 16.. names the second, as PTOAS's A5 mirroring does).
  const int64_t limit = intra && arch() == isa::Arch::A2A3 ? 16 : 32;
  if (!id || *id < 0 || *id >= limit) {
    diags_.error(idItem.loc, "'" + writtenName + "' takes an id in 0.." +
                                 std::to_string(limit - 1) + ", found '" + idItem.word + "'");
    return;
  }
  op.event.edit().kind = EventRef::Kind::Const;
  op.event.edit().id = static_cast<int>(*id);
  op.typeLoc = idItem.loc;
}

/// PTOAS's `pto.set_cross_block <PIPE_X>, id` / `pto.wait_cross_block` (ffts mode 0): a flag
/// that every core of the launch raises and each waits for, a split barrier across blocks. The
/// runtime models flags within one core only (docs/sync.md), so these are refused by name.
void Builder::buildCrossBlockFlag(const std::string& name, SrcLoc loc, Pieces&,
                                  const std::vector<ResultName>&) {
  diags_.error(loc, "'" + name +
                        "' (a flag every block of the launch raises and waits for, ffts mode 0) "
                        "is not supported: flags are modelled within one block (pto.sync.set, "
                        "pto.set_intra_block); a barrier of every block is pto.syncall");
}

/// `pto.tsync ins(%a, %b : A, B)`: waits until every operation on the named buffers has
/// finished. The hardware names them by the events of their last operations (pto-isa's
/// TSYNC(events...)); the code generator orders all pipes instead, a full barrier, which waits
/// for at least those operations.
void Builder::buildTSync(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Call, PieceKind::Dict}, {"ins"})) return;
  expectResults(name, loc, results, 0);
  P::CallPieceContext* ins = p.call("ins");
  if (!ins) {
    diags_.error(loc, "expected '" + name + " ins(%buffer, ... : T, ...)'");
    return;
  }
  for (const OperandRef& r : collectPieces(piecesOf(ins)).operands)
    if (use(r) == kNoValue) return;
  Op& op = emit(OpKind::Barrier, loc, "pto.barrier");
  op.srcPipe = op.dstPipe = isa::Pipe::All;
}

void Builder::resolveEvents() {
  // Each region's ops by position, with the pipe of the nearest tile op before and after each
  // one, made once a region (finding a site and walking to its neighbour was a scan a site),
  // and the ops to erase removed in one pass a region at the end (was one pass an op: 40k
  // unwaited events took 8 s).
  struct RegionPipes {
    std::unordered_map<const Op*, size_t> pos;
    std::vector<isa::Pipe> before, after;
  };
  std::unordered_map<const Region*, RegionPipes> pipes;
  std::unordered_map<Region*, std::unordered_set<const Op*>> doomed;
  auto pipesOf = [&](const Region* r) -> const RegionPipes& {
    auto [it, fresh] = pipes.try_emplace(r);
    RegionPipes& rp = it->second;
    if (!fresh) return rp;
    const auto& ops = r->ops;
    rp.before.assign(ops.size(), isa::Pipe::S);
    rp.after.assign(ops.size(), isa::Pipe::S);
    isa::Pipe last = isa::Pipe::S;
    for (size_t i = 0; i < ops.size(); ++i) {
      rp.pos.emplace(ops[i].get(), i);
      rp.before[i] = last;
      if (ops[i]->kind == OpKind::TileOp) last = tilePipe(*ops[i]);
    }
    last = isa::Pipe::S;
    for (size_t i = ops.size(); i-- > 0;) {
      rp.after[i] = last;
      if (ops[i]->kind == OpKind::TileOp) last = tilePipe(*ops[i]);
    }
    return rp;
  };
  auto neighbour = [&](const EventSite& site, int dir) {
    const RegionPipes& rp = pipesOf(site.region);
    auto it = rp.pos.find(site.op);
    if (it == rp.pos.end()) return isa::Pipe::S;
    return dir < 0 ? rp.before[it->second] : rp.after[it->second];
  };
  auto erase = [&](const EventSite& site) { doomed[site.region].insert(site.op); };
  for (auto& [name, uses] : events_) {
    std::optional<isa::Pipe> src, dst;
    for (auto& site : uses.records) {
      isa::Pipe p = neighbour(site, -1);
      if (src && *src != p) {
        diags_.error(site.op->loc, "event '%" + name + "' is recorded on " +
                                       std::string(isa::spelling(p)) + " and on " +
                                       std::string(isa::spelling(*src)));
      }
      src = p;
    }
    for (auto& site : uses.waits) {
      isa::Pipe p = neighbour(site, +1);
      if (dst && *dst != p)
        diags_.error(site.op->loc,
                     "event '%" + name + "' is waited on by ops on " +
                         std::string(isa::spelling(p)) + " and on " +
                         std::string(isa::spelling(*dst)) +
                         "; an event connects one source pipe to one destination pipe");
      dst = p;
    }
    if (uses.records.empty()) {
      diags_.error(uses.waits.front().op->loc,
                   "event '%" + name + "' is waited on but never recorded");
      for (auto& site : uses.waits)
        erase(site);
      continue;
    }
    if (uses.waits.empty()) {
      diags_.warning(uses.records.front().op->loc,
                     "event '%" + name + "' is recorded but never waited on");
      for (auto& site : uses.records)
        erase(site);
      continue;
    }
    for (auto& site : uses.records)
      site.op->srcPipe = *src, site.op->dstPipe = *dst;
    for (auto& site : uses.waits)
      site.op->srcPipe = *src, site.op->dstPipe = *dst;
    if (*src == *dst) {
      for (auto& site : uses.records)
        erase(site);
      for (auto& site : uses.waits) {
        site.op->kind = OpKind::Barrier;
        site.op->name = "pto.barrier";
      }
    }
  }
  for (auto& entry : doomed) { // not a structured binding: clang 14 cannot capture one
    const std::unordered_set<const Op*>& gone = entry.second;
    std::erase_if(entry.first->ops, [&](const auto& o) { return gone.count(o.get()) != 0; });
  }
  events_.clear();
  pendingEventOps_.clear();
}

isa::Pipe Builder::neighbourPipe(const EventSite& site, int dir) {
  auto& ops = site.region->ops;
  auto it = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == site.op; });
  while (true) {
    if (dir < 0) {
      if (it == ops.begin()) break;
      --it;
    } else {
      ++it;
      if (it == ops.end()) break;
    }
    if ((*it)->kind == OpKind::TileOp) return tilePipe(**it);
  }
  return isa::Pipe::S;
}

void Builder::erase(const EventSite& site) {
  auto& ops = site.region->ops;
  ops.erase(std::remove_if(ops.begin(), ops.end(), [&](auto& o) { return o.get() == site.op; }),
            ops.end());
}

} // namespace pto::as::detail
