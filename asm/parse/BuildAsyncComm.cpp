// PTOAS's asynchronous communication ops (docs/multi-device.md, "Asynchronous sessions"):
// pto.build_async_session, pto.tput_async / pto.tget_async, pto.wait_async_event /
// pto.test_async_event (also spelled pto.comm.*), custom and generic forms, with PTOAS's
// verifier rules. Each is one IR op (OpKind::AsyncComm, printed back as written). A put or get
// completes when it is issued: its region holds the copy in the machine's own ops (TLOAD of
// the source into a staging tile, TSTORE to the destination, between PIPE_ALL barriers), so
// every backend, the npu link model and any transport under TLOAD / TSTORE serve it; its event
// is then complete, and a wait or test of it yields true.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>
#include <cstdint>

namespace pto::as::detail {

namespace {
/// The op's name without its dialect prefix: `pto.comm.tput_async` -> `tput_async`.
std::string_view asyncBase(std::string_view name) {
  for (std::string_view prefix : {"pto.comm.", "pto."})
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  return name;
}

// Bytes a staging tile of the copy holds at most: the copy runs in chunks of this size (pto-isa's
// SDMA moves the data without UB; the model borrows a UB tile for it, so it keeps it small).
constexpr int64_t kStageBytes = 8192;
} // namespace

bool Builder::isAsyncCommOp(std::string_view name) {
  static constexpr std::string_view kBases[] = {"build_async_session", "tput_async", "tget_async",
                                                "wait_async_event", "test_async_event"};
  if (!name.starts_with("pto.")) return false;
  return std::find(std::begin(kBases), std::end(kBases), asyncBase(name)) != std::end(kBases);
}

/// `%s = pto.build_async_session(%scratch, %ws : T, W) {attrs} -> !pto.async_session`,
/// `%e = pto.tput_async(%dst, %src, %s : A, B, !pto.async_session) -> !pto.async_event`,
/// `%ok = pto.wait_async_event(%e, %s : !pto.async_event, !pto.async_session) -> i1`, or the
/// generic `"pto.tput_async"(%dst, %src, %s) : (A, B, !pto.async_session) -> !pto.async_event`.
void Builder::buildAsyncComm(const std::string& name, SrcLoc loc, Pieces& p,
                             const std::vector<ResultName>& results) {
  using K = PieceKind;
  const std::string base(asyncBase(name));
  if (!onlyPieces(diags_, p, name, {K::Paren, K::Dict, K::Props, K::Types, K::Arrow})) return;
  Pieces inner;
  if (p.parens.size() == 1) inner = collectPieces(piecesOf(p.parens[0]));
  std::vector<P::TypeContext*> types = p.types.empty() ? inner.types : p.types;
  const bool session = base == "build_async_session";
  const bool transfer = base == "tput_async" || base == "tget_async";
  const size_t want = transfer ? 3 : 2;
  if (p.parens.size() != 1 || inner.operands.size() != want || types.size() != want ||
      p.arrowTypes.size() != 1) {
    const char* form = session    ? "(%scratch, %workspace : T, W) -> !pto.async_session"
                       : transfer ? "(%dst, %src, %session : A, B, !pto.async_session) -> "
                                    "!pto.async_event"
                                  : "(%event, %session : !pto.async_event, !pto.async_session) "
                                    "-> i1";
    diags_.error(loc, "expected '" + name + form + "'");
    return;
  }
  AsyncOperands a{name, loc, {}, {}};
  if (!readCommOperands(name, inner.operands, types, a.values, a.locs)) return;
  const Type resultType = session    ? Type{TypeKind::AsyncSession}
                          : transfer ? Type{TypeKind::AsyncEvent}
                                     : Type::scalar(isa::DType::I1);
  auto rt = readType(p.arrowTypes[0]);
  if (!rt) return;
  if (!(*rt == resultType)) {
    diags_.error(locOf(p.arrowTypes[0]),
                 "'" + name + "' yields " + toString(resultType) + ", found " + toString(*rt));
    return;
  }
  std::vector<NamedAttr> attrs;
  std::vector<P::AttrDictContext*> dicts = p.dicts;
  if (p.props) dicts.push_back(p.props);
  for (auto* d : dicts)
    for (auto* e : d->attrEntry())
      if (!readAsyncAttr(a, e, session, attrs)) return;
  const bool ok = session    ? checkAsyncSession(a)
                  : transfer ? checkAsyncTransfer(a)
                             : checkAsyncWait(a);
  if (!ok || !expectResults(name, loc, results, 1)) return;
  Op& op = emit(OpKind::AsyncComm, loc, name);
  for (size_t i = 0; i < a.values.size(); ++i)
    addOperand(op, a.values[i], a.locs[i]);
  op.ints = {p.types.empty() ? 0 : 1}; // the generic form's types follow the parentheses
  op.attrs = std::move(attrs);
  if (transfer) expandAsyncTransfer(a, op);
  defineResults(*building_, results, {resultType});
}

/// build_async_session's tuning attributes (pto-isa's SDMA configuration), checked as PTOAS
/// does; the model keeps them for the IR only (a copy completes when issued).
bool Builder::readAsyncAttr(const AsyncOperands& a, P::AttrEntryContext* e, bool session,
                            std::vector<NamedAttr>& attrs) {
  const std::string key = entryKey(e);
  const SrcLoc at = locOf(e);
  const std::string text = e->attrValue() ? textOf(e->attrValue()) : "";
  struct Range {
    std::string_view key;
    int64_t lo, hi;
    const char* rule;
  };
  static constexpr Range kRanges[] = {
      {"sync_id", 0, 7, "in range [0, 7]"},
      {"block_bytes", 1, INT64_MAX, "greater than 0"},
      {"comm_block_offset", 0, INT64_MAX, "non-negative"},
      {"queue_num", 1, INT64_MAX, "greater than 0"},
      {"channel_group_idx", 0, UINT32_MAX, "non-negative and to fit in uint32"}};
  const Range* r = nullptr;
  for (const Range& k : kRanges)
    if (k.key == key) r = &k;
  if (!session || !r) {
    diags_.error(at, "'" + a.name + "' does not take the attribute '" + key + "'" +
                         (session ? " (sync_id, block_bytes, comm_block_offset, queue_num, "
                                    "channel_group_idx)"
                                  : ""));
    return false;
  }
  auto v = support::parseInt(text.substr(0, text.find(':')));
  if (!v || *v < r->lo || *v > r->hi) {
    diags_.error(at, "'" + a.name + "' expects " + key + " " + r->rule + ", found '" + text + "'");
    return false;
  }
  // Printed with PTOAS's attribute types (I32Attr for these two, I64Attr for the others).
  const bool i32 = key == "sync_id" || key == "queue_num";
  attrs.push_back({key, std::to_string(*v) + (i32 ? " : i32" : " : i64")});
  return true;
}

/// PTOAS's rules: the scratch a vec tile of rank 1 or 2 and static shape holding 8 bytes or
/// more; the workspace a !pto.ptr or GM view of 8-bit integers.
bool Builder::checkAsyncSession(const AsyncOperands& a) {
  const Type& s = fn_->type(a.values[0]);
  const Type& w = fn_->type(a.values[1]);
  auto fail = [&](size_t k, const std::string& what) {
    diags_.error(a.locs[k], "'" + a.name + "' expects " + what + ", found " +
                                toString(fn_->type(a.values[k])));
    return false;
  };
  if (!s.isTile() || s.tile.loc != isa::Loc::Vec)
    return fail(0, "scratch to be a tile in the vec address space");
  if (s.tile.rows == kDynamic || s.tile.cols == kDynamic)
    return fail(0, "scratch to have a static shape");
  if (s.tile.byteSize() < sizeof(uint64_t)) return fail(0, "scratch to provide at least 8 bytes");
  if (w.kind != TypeKind::Ptr && !w.isView())
    return fail(1, "workspace to be a !pto.ptr or a GM memref");
  if (w.elem != isa::DType::I8 && w.elem != isa::DType::U8)
    return fail(1, "workspace element type to be an 8-bit integer");
  return true;
}

/// PTOAS's rules for a put or get: views of one element type and one static shape, each
/// logically one-dimensional (every dimension but the last 1), and a session.
bool Builder::checkAsyncTransfer(const AsyncOperands& a) {
  const char* role[] = {"dst", "src"};
  for (size_t k = 0; k < 2; ++k) {
    const Type& t = fn_->type(a.values[k]);
    bool flat = t.isView() && !t.shape.empty();
    for (size_t i = 0; flat && i < t.shape.size(); ++i)
      flat =
          t.shape[i] != kDynamic && t.shape[i] > 0 && (i + 1 == t.shape.size() || t.shape[i] == 1);
    if (!flat) {
      diags_.error(a.locs[k], "'" + a.name + "' expects " + role[k] +
                                  " to be a static flat contiguous logical 1D GM view or "
                                  "memref, found " +
                                  toString(t));
      return false;
    }
  }
  const Type& d = fn_->type(a.values[0]);
  const Type& s = fn_->type(a.values[1]);
  if (d.elem != s.elem) {
    diags_.error(a.locs[1], "'" + a.name + "' expects src and dst to have the same element type, " +
                                "found " + toString(d) + " and " + toString(s));
    return false;
  }
  if (d.shape != s.shape) {
    diags_.error(a.locs[1], "'" + a.name + "' expects src and dst to have the same static shape, " +
                                "found " + toString(d) + " and " + toString(s));
    return false;
  }
  if (fn_->type(a.values[2]).kind != TypeKind::AsyncSession) {
    diags_.error(a.locs[2], "'" + a.name + "' expects a session (!pto.async_session), found " +
                                toString(fn_->type(a.values[2])));
    return false;
  }
  return true;
}

bool Builder::checkAsyncWait(const AsyncOperands& a) {
  const TypeKind want[] = {TypeKind::AsyncEvent, TypeKind::AsyncSession};
  const char* what[] = {"an event (!pto.async_event)", "a session (!pto.async_session)"};
  for (size_t k = 0; k < 2; ++k)
    if (fn_->type(a.values[k]).kind != want[k]) {
      diags_.error(a.locs[k], "'" + a.name + "' expects " + what[k] + ", found " +
                                  toString(fn_->type(a.values[k])));
      return false;
    }
  return true;
}

/// A view of elements [off, off + len) of the logically 1-D view `v`: a pto.partition_view of
/// it when it is a tensor view (a memref parameter, a make_tensor_view), else of the tensor view
/// its pto.partition_view of this function partitions.
std::optional<ValueId> Builder::asyncSlice(const AsyncOperands& a, size_t k, int64_t off,
                                           int64_t len) {
  const ValueId v = a.values[k];
  const Type t = fn_->type(v); // a copy: the values added below may move the type storage
  if (t.kind == TypeKind::TensorView) {
    const Type idx = Type::index();
    const size_t rank = t.shape.size();
    std::vector<ValueId> offs, sizes; // the constants first: emitting them may move the ops
    for (size_t i = 0; i < rank; ++i) {
      offs.push_back(constantInt(i + 1 == rank ? off : 0, idx, a.loc));
      sizes.push_back(constantInt(i + 1 == rank ? len : 1, idx, a.loc));
    }
    Op& slice = emit(OpKind::PartitionView, a.loc, "pto.partition_view");
    slice.typeLoc = a.loc;
    addOperand(slice, v, a.loc);
    for (ValueId o : offs)
      addOperand(slice, o, a.loc);
    for (ValueId s : sizes)
      addOperand(slice, s, a.loc);
    slice.ints = {static_cast<int64_t>(rank), static_cast<int64_t>(rank)};
    Type st = t;
    st.kind = TypeKind::PartView;
    st.shape.back() = len;
    ValueId out = fn_->addValue("async_slice", st, a.loc);
    slice.results.push_back(out);
    return out;
  }
  CommOperands c;
  c.name = a.name;
  c.loc = a.loc;
  return commSlice(c, v, a.locs[k], 0, off, 1, len);
}

/// A vec tile of `len` valid elements of type `elem`, its row padded to 32 bytes (the UB block):
/// the staging tile of one chunk of a copy.
ValueId Builder::asyncStageTile(const AsyncOperands& a, isa::DType elem, int64_t len) {
  TileType tt;
  tt.loc = isa::Loc::Vec;
  tt.dtype = elem;
  const int64_t perBlock = std::max<int64_t>(1, 256 / isa::bitWidth(elem));
  tt.rows = tt.validRows = 1;
  tt.cols = (len + perBlock - 1) / perBlock * perBlock;
  tt.validCols = len;
  Op& op = emit(OpKind::AllocTile, a.loc, "pto.alloc_tile");
  op.typeLoc = a.loc;
  op.ints = {0, 0, 0};
  ValueId v = fn_->addValue("async_stage", Type::tileOf(tt), a.loc);
  op.results.push_back(v);
  return v;
}

/// The copy of a put or get, src -> dst, in chunks of at most kStageBytes: per chunk a TLOAD
/// into the staging tile and a TSTORE from it, each followed by a PIPE_ALL barrier (one barrier
/// before the first: the transfer reads what earlier ops wrote).
void Builder::expandAsyncTransfer(const AsyncOperands& a, Op& op) {
  op.regions.emplace_back();
  Op* asyncOp = &op;
  regions_.push_back(&op.regions[0]);
  const Type t = fn_->type(a.values[0]); // a copy: the ops emitted below add values
  const int64_t n = t.shape.back();
  const int64_t chunk = std::min<int64_t>(n, kStageBytes * 8 / isa::bitWidth(t.elem));
  emitCommBarrier(a.loc);
  std::optional<ValueId> full, tail;
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t len = std::min(chunk, n - off);
    std::optional<ValueId>& tile = len == chunk ? full : tail;
    if (!tile) tile = asyncStageTile(a, t.elem, len);
    const bool whole = len == n;
    std::optional<ValueId> src = whole ? a.values[1] : asyncSlice(a, 1, off, len);
    std::optional<ValueId> dst = whole ? a.values[0] : asyncSlice(a, 0, off, len);
    if (!src || !dst) break;
    emitCommTileOp(isa::OpId::TLOAD, a.loc, {*src, *tile});
    emitCommBarrier(a.loc);
    emitCommTileOp(isa::OpId::TSTORE, a.loc, {*tile, *dst});
    emitCommBarrier(a.loc);
  }
  regions_.pop_back();
  building_ = asyncOp;
}

} // namespace pto::as::detail
