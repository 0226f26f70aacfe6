// Tile ops in each spelling (DPS `ins(...) outs(...)`, SSA `%d = op %s`, PTO-AS `op %d, %s`):
// operands to roles, the type pool, operand resolution and `%view[...]` operands (attributes:
// BuildTileAttrs.cpp).
#include "asm/parse/BuilderImpl.h"

#include <algorithm>

namespace pto::as::detail {

Builder::Kind Builder::kindOf(const OperandRef& r) {
  if (r.kind == OperandRef::Literal) return Kind::Scalar;
  if (r.kind == OperandRef::Memory) return Kind::View;
  auto v = lookup(r.name);
  if (!v) return Kind::Unknown;
  const Type& t = fn_->type(*v);
  if (t.isTile()) return Kind::Tile;
  if (t.isView()) return Kind::View;
  return Kind::Scalar;
}

bool Builder::compatible(Kind k, const isa::Role& role) {
  if (k == Kind::Unknown) return true;
  switch (role.kind) {
  case isa::RoleKind::Tile:
    return k == Kind::Tile;
  case isa::RoleKind::View:
    return k == Kind::View;
  case isa::RoleKind::Any:
    return true;
  default:
    return k == Kind::Scalar;
  }
}

bool Builder::matchRoles(const std::vector<const isa::Role*>& roles, const std::vector<Kind>& kinds,
                         size_t ri, size_t oi, std::vector<int>& assign) {
  if (ri == roles.size()) return oi == kinds.size();
  const isa::Role& role = *roles[ri];
  if (role.variadic) {
    size_t n = oi;
    while (n < kinds.size() && compatible(kinds[n], role))
      ++n;
    for (size_t end = n + 1; end-- > oi;) {
      for (size_t k = oi; k < end; ++k)
        assign[k] = static_cast<int>(ri);
      if ((end > oi || role.optional) && matchRoles(roles, kinds, ri + 1, end, assign)) return true;
    }
    return false;
  }
  if (oi < kinds.size() && compatible(kinds[oi], role)) {
    assign[oi] = static_cast<int>(ri);
    if (matchRoles(roles, kinds, ri + 1, oi + 1, assign)) return true;
  }
  return role.optional && matchRoles(roles, kinds, ri + 1, oi, assign);
}

/// PTOAS writes TMRGSORT's list form as `ins(src0, ..., srcN, tmp) outs(dst[, executed])`;
/// pto-as's form, its block and the kernels take the scratch tile right after the destination
/// (`outs(dst, tmp)`, pto-isa's argument order). With one output tile and three or more input
/// tiles, the last input tile is that scratch tile and moves there.
void Builder::moveMergeScratch(const isa::OpInfo& info, std::vector<Bound>& bound) {
  std::vector<size_t> inTiles, outTiles;
  for (size_t i = 0; i < bound.size(); ++i) {
    if (kindOf(bound[i].ref) != Kind::Tile) continue;
    (info.roles[static_cast<size_t>(bound[i].role)].isOutput ? outTiles : inTiles).push_back(i);
  }
  if (outTiles.size() != 1 || inTiles.size() < 3) return;
  Bound scratch = bound[inTiles.back()];
  scratch.role = bound[outTiles[0]].role;
  const size_t dstAt = outTiles[0] - 1; // the scratch entry, before it, goes away
  bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(inTiles.back()));
  bound.insert(bound.begin() + static_cast<std::ptrdiff_t>(dstAt + 1), scratch);
}

std::string Builder::signatureHelp(const isa::OpInfo& info) {
  std::string ins, outs;
  for (const auto& r : info.roles) {
    std::string s = std::string(r.name) + (r.optional ? "?" : "") + (r.variadic ? "..." : "");
    std::string& into = r.isOutput ? outs : ins;
    if (!into.empty()) into += ", ";
    into += s;
  }
  return "pto." + std::string(info.mnemonic) + " ins(" + ins + ") outs(" + outs + ")";
}

const isa::OpInfo& Builder::scalarFirstVariant(const isa::OpInfo& info, Pieces& p, bool ssa) {
  if (std::optional<isa::OpId> twin = isa::scalarSecondForm(info.id)) {
    // TGATHER's compare form: the only TGATHER spelling with a scalar operand.
    std::vector<OperandRef> all = p.operands;
    if (P::CallPieceContext* ins = p.call("ins")) all = collectPieces(ins->piece()).operands;
    for (const OperandRef& o : all)
      if (kindOf(o) == Kind::Scalar) return isa::info(*twin);
    return info;
  }
  std::optional<isa::OpId> twin = isa::scalarFirstForm(info.id);
  if (!twin) return info;
  // The first input: ins(...)'s first operand, the SSA form's first, or the PTO-AS form's second
  // (its destination comes first).
  std::optional<OperandRef> first;
  if (P::CallPieceContext* ins = p.call("ins")) {
    Pieces in = collectPieces(piecesOf(ins));
    if (!in.operands.empty()) first = in.operands.front();
  } else if (size_t at = ssa ? 0 : 1; p.operands.size() > at) {
    first = p.operands[at];
  }
  return first && kindOf(*first) == Kind::Scalar ? isa::info(*twin) : info;
}

bool Builder::resolvePrecision(const isa::OpInfo*& info, SrcLoc loc, TileAttrs& attrs,
                               const std::vector<Bound>& bound) {
  auto at = std::find_if(attrs.list.begin(), attrs.list.end(),
                         [](const NamedAttr& a) { return a.key == "precisionType"; });
  if (at == attrs.list.end()) return true;
  const std::string opName = "'pto." + std::string(info->mnemonic) + "'";
  const std::string_view stem = isa::precisionFamily(info->id);
  if (stem.empty()) {
    diags_.error(loc, opName + " has no precisionType attribute (PTOAS gives one to tsqrt, " +
                          "trsqrt, trecip, tdiv, tdivs, texp and tlog)");
    return false;
  }
  const bool high = at->value == kHighPrecision;
  at->value = "#pto<" + std::string(stem) + "_precision " + at->value + ">";
  if (!high) return true;
  if (arch() != isa::Arch::A5) {
    diags_.warning(loc, "precisionType high_precision on " + opName +
                            " has no effect on a2a3: pto-isa runs the default algorithm there");
    return true;
  }
  const std::optional<isa::OpId> twin = isa::highPrecisionForm(info->id);
  if (!twin) {
    diags_.error(loc, "precisionType high_precision on " + opName +
                          " is not supported: pto-as has the high-precision forms of tsqrt, " +
                          "trsqrt, trecip and tdiv");
    return false;
  }
  const isa::OpInfo& hp = isa::info(*twin);
  // Every role the high-precision form requires must be bound (TRSQRT's tmp, PTOAS's rule).
  for (size_t r = 0; r < hp.roles.size(); ++r) {
    const bool given = std::any_of(bound.begin(), bound.end(),
                                   [&](const Bound& b) { return b.role == static_cast<int>(r); });
    if (!given && !hp.roles[r].optional) {
      diags_.error(loc, opName + " with precisionType high_precision needs its '" +
                            std::string(hp.roles[r].name) + "' operand");
      return false;
    }
  }
  attrs.list.erase(at); // the op itself now says it
  info = &hp;
  return true;
}

namespace {
/// The op's input and output roles, each in table order.
std::pair<std::vector<const isa::Role*>, std::vector<const isa::Role*>>
inOutRoles(const isa::OpInfo& info) {
  std::vector<const isa::Role*> inRoles, outRoles;
  for (const auto& r : info.roles)
    (r.isOutput ? outRoles : inRoles).push_back(&r);
  return {inRoles, outRoles};
}
} // namespace

bool Builder::bindRoles(const isa::OpInfo& info, const std::vector<OperandRef>& ops,
                        const std::vector<const isa::Role*>& roles,
                        const std::vector<std::optional<Type>>& annotations,
                        std::vector<Bound>& bound) {
  std::vector<Kind> kinds;
  for (auto& o : ops)
    kinds.push_back(kindOf(o));
  std::vector<int> assign(ops.size(), -1);
  if (!matchRoles(roles, kinds, 0, 0, assign)) return false;
  for (size_t i = 0; i < ops.size(); ++i)
    bound.push_back({ops[i], static_cast<int>(roles[assign[i]] - info.roles.data()),
                     i < annotations.size() ? annotations[i] : std::nullopt});
  return true;
}

std::vector<std::optional<Type>> Builder::readTypeList(const std::vector<P::TypeContext*>& ts,
                                                       bool& bad) {
  std::vector<std::optional<Type>> out;
  for (auto* t : ts) {
    out.push_back(readType(t));
    bad |= !out.back();
  }
  return out;
}

bool Builder::fpClauseFits(const isa::OpInfo& info, const Pieces& in) {
  // `ins(%acc : T fp %scale : S)` (PTOAS's tstore): the word names the operand after it, which
  // is the op's second input when the op has a scaling tile `fp`.
  const bool hasFp = std::any_of(info.roles.begin(), info.roles.end(),
                                 [](const isa::Role& r) { return r.id == isa::RoleId::Fp; });
  if (hasFp && in.bareWords.size() == 1 && in.operands.size() == 2) return true;
  diags_.error(in.operands.empty() ? SrcLoc{} : in.operands.front().loc,
               "'" + in.bareWords.front() + "' in ins() of 'pto." + std::string(info.mnemonic) +
                   "'" +
                   (hasFp ? " names the second of two operands" : " is not an operand of it"));
  return false;
}

bool Builder::bindDpsForm(const isa::OpInfo& info, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results, std::vector<Bound>& bound,
                          TileAttrs& attrs) {
  // DPS form: ins(operands [{attrs}] : types) outs(operands : types) [{attrs}]
  P::CallPieceContext* ins = p.call("ins");
  P::CallPieceContext* outs = p.call("outs");
  if (!results.empty())
    diags_.error(results.front().loc,
                 "'pto." + std::string(info.mnemonic) + "' in DPS form produces no results");
  Pieces in = ins ? collectPieces(piecesOf(ins)) : Pieces{};
  Pieces out = outs ? collectPieces(piecesOf(outs)) : Pieces{};
  if (!in.bareWords.empty() && !fpClauseFits(info, in)) return false;
  bool badType = false;
  auto inTypes = readTypeList(in.types, badType);
  auto outTypes = readTypeList(out.types, badType);
  if (badType) return false;
  if (!in.types.empty() && inTypes.size() != in.operands.size()) {
    if (inTypes.size() == 1)
      inTypes.resize(in.operands.size(), inTypes[0]);
    else
      diags_.error(in.typesLoc, "ins() has " + std::to_string(in.operands.size()) +
                                    " operands but " + std::to_string(inTypes.size()) + " types");
  }
  const auto [inRoles, outRoles] = inOutRoles(info);
  if (!bindRoles(info, in.operands, inRoles, inTypes, bound) ||
      !bindRoles(info, out.operands, outRoles, outTypes, bound)) {
    diags_.error(loc, "operands do not match '" + signatureHelp(info) + "'");
    return false;
  }
  if (info.id == isa::OpId::TMRGSORT) moveMergeScratch(info, bound);
  for (auto* d : in.dicts)
    readTileAttrs(d, attrs);
  for (auto* d : p.dicts)
    readTileAttrs(d, attrs);
  return true;
}

bool Builder::bindPositionalForm(const isa::OpInfo& info, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results, std::vector<Bound>& bound,
                                 TileAttrs& attrs) {
  // PTO-AS (`op %dst, %src...`) or SSA (`%dst = op %src...`) form: types come as a pool.
  bool badType = false;
  std::vector<std::optional<Type>> pool = readTypeList(p.types, badType);
  std::vector<std::optional<Type>> arrow = readTypeList(p.arrowTypes, badType);
  if (badType) return false;
  const auto [inRoles, outRoles] = inOutRoles(info);
  const std::vector<OperandRef>& inOps = p.operands;
  if (!results.empty()) { // SSA
    for (auto& r : results)
      ssaResultNames_.insert(r.name);
    if (!bindRoles(info, inOps, inRoles, {}, bound)) {
      diags_.error(loc, "operands do not match '" + signatureHelp(info) + "'");
      return false;
    }
    if (results.size() != outRoles.size()) {
      diags_.error(results.front().loc, "'pto." + std::string(info.mnemonic) + "' produces " +
                                            std::to_string(outRoles.size()) + " result(s) but " +
                                            std::to_string(results.size()) + " name(s) are given");
      return false;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      OperandRef o;
      o.name = results[i].name;
      o.loc = results[i].loc;
      bound.push_back({o, static_cast<int>(outRoles[i] - info.roles.data()),
                       i < arrow.size() ? arrow[i] : std::nullopt});
    }
  } else {
    // Destination first (the C++ intrinsic order); loads/stores may name the view either side.
    std::vector<const isa::Role*> order = outRoles;
    order.insert(order.end(), inRoles.begin(), inRoles.end());
    std::vector<const isa::Role*> alt = inRoles;
    alt.insert(alt.end(), outRoles.begin(), outRoles.end());
    if (!bindRoles(info, inOps, order, {}, bound) && !bindRoles(info, inOps, alt, {}, bound)) {
      diags_.error(loc, "operands do not match '" + std::string(info.mnemonic) + " " +
                            asmSignature(info) + "'");
      return false;
    }
  }
  // Type pool: operands without a known type take the next annotation of their kind.
  assignPoolTypes(info, bound, pool, p.typesLoc);
  for (auto* d : p.dicts)
    readTileAttrs(d, attrs);
  for (auto* h : p.hashes)
    readHashAttr(h, attrs);
  for (auto* a : p.angles)
    readAngleAttrs(a, attrs);
  return true;
}

void Builder::buildTileOp(const isa::OpInfo& baseInfo, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  const isa::OpInfo& info = scalarFirstVariant(baseInfo, p, !results.empty());
  std::vector<Bound> bound;
  TileAttrs attrs;
  std::vector<std::pair<std::string, SrcLoc>> waits, records;

  // Event chains and attributes, whatever the form.
  for (auto* c : p.calls) {
    std::string kw = c->callKw->getText();
    if (kw != "wait" && kw != "record") continue;
    Pieces ev = collectPieces(piecesOf(c));
    for (auto& r : ev.operands)
      (kw == "wait" ? waits : records).push_back({r.name, r.loc});
  }

  bool ok;
  if (p.generic)
    ok = bindGeneric(info, loc, p, bound, attrs);
  else if (p.call("ins") || p.call("outs"))
    ok = bindDpsForm(info, loc, p, results, bound, attrs);
  else
    ok = bindPositionalForm(info, loc, p, results, bound, attrs);
  if (!ok) return;
  if (!p.keywords.empty())
    diags_.error(p.keywords[0].loc, "unsupported clause '" + p.keywords[0].key + "' on 'pto." +
                                        std::string(info.mnemonic) + "'");
  const isa::OpInfo* chosen = &info;
  if (!resolvePrecision(chosen, loc, attrs, bound)) return;
  finishTileOp(*chosen, loc, bound, attrs, waits, records, p.typesLoc);
  ssaResultNames_.clear();
}

namespace {
/// PTOAS's operand order of a tile op (its ODS operands): the required inputs, the outputs,
/// then the optional inputs, each in signature order. Indices into info.roles.
std::vector<int> genericOrder(const isa::OpInfo& info) {
  std::vector<int> order;
  for (int pass = 0; pass < 3; ++pass)
    for (size_t r = 0; r < info.roles.size(); ++r) {
      const isa::Role& role = info.roles[r];
      const int group = role.isOutput ? 1 : role.optional ? 2 : 0;
      if (group == pass) order.push_back(static_cast<int>(r));
    }
  return order;
}

/// The group sizes without operandSegmentSizes for `n` operands: one per required group, then
/// the optional groups in order while operands remain.
std::vector<int> defaultSegments(const isa::OpInfo& info, const std::vector<int>& order, size_t n) {
  std::vector<int> sizes(order.size(), 1);
  size_t required = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (info.roles[order[k]].optional) sizes[k] = 0;
    required += static_cast<size_t>(sizes[k]);
  }
  size_t extra = n > required ? n - required : 0;
  for (size_t k = 0; k < order.size() && extra > 0; ++k)
    if (sizes[k] == 0) sizes[k] = 1, --extra;
  return sizes;
}
} // namespace

bool Builder::bindGeneric(const isa::OpInfo& info, SrcLoc loc, Pieces& p, std::vector<Bound>& bound,
                          TileAttrs& attrs) {
  const std::string opName = "\"pto." + std::string(info.mnemonic) + "\"";
  if (p.parens.size() != 1) {
    diags_.error(loc, opName + " needs its operands in one '(...)'");
    return false;
  }
  Pieces args = collectPieces(p.parens[0]->piece());
  std::vector<std::optional<Type>> types;
  for (auto* t : p.types) {
    types.push_back(readType(t));
    if (!types.back()) return false;
  }
  if (!types.empty() && types.size() != args.operands.size()) {
    diags_.error(p.typesLoc, opName + " has " + std::to_string(args.operands.size()) +
                                 " operands but " + std::to_string(types.size()) + " types");
    return false;
  }
  const std::vector<int> order = genericOrder(info);
  std::vector<int> sizes = defaultSegments(info, order, args.operands.size());
  P::AttrEntryContext* segments = nullptr;
  if (p.props)
    for (auto* e : p.props->attrEntry())
      if (entryKey(e) == "operandSegmentSizes") segments = e;
  if (segments) {
    auto parsed =
        segments->attrValue() ? denseArray(segments->attrValue()->getText()) : std::nullopt;
    // A list that leaves out trailing optional groups gives them no operands: PTOAS appends an
    // op's new optional operands (tstore's fp after its preQuantScalar), so inputs written
    // before still read.
    auto trailingOptional = [&](size_t from) {
      for (size_t k = from; k < order.size(); ++k)
        if (!info.roles[order[k]].optional) return false;
      return true;
    };
    if (parsed && parsed->size() < order.size() && trailingOptional(parsed->size()))
      parsed->resize(order.size(), 0);
    if (!parsed || parsed->size() != order.size()) {
      diags_.error(locOf(segments), "operandSegmentSizes of " + opName + " must list " +
                                        std::to_string(order.size()) + " sizes ('" +
                                        signatureHelp(info) + "')");
      return false;
    }
    sizes = *parsed;
  }
  size_t total = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const isa::Role& role = info.roles[order[k]];
    if (sizes[k] > 1 || (sizes[k] == 0 && !role.optional)) {
      diags_.error(segments ? locOf(segments) : loc,
                   opName + ": operand '" + std::string(role.name) + "' takes " +
                       (role.optional ? "0 or 1" : "exactly 1") + " operand");
      return false;
    }
    total += static_cast<size_t>(sizes[k]);
  }
  if (total != args.operands.size()) {
    diags_.error(loc, opName + " has " + std::to_string(args.operands.size()) +
                          " operands; its operand groups hold " + std::to_string(total) + " ('" +
                          signatureHelp(info) + "')");
    return false;
  }
  for (size_t k = 0, next = 0; k < order.size(); ++k)
    if (sizes[k] == 1) {
      bound.push_back(
          {args.operands[next], order[k], next < types.size() ? types[next] : std::nullopt});
      ++next;
    }
  if (p.props)
    for (auto* e : p.props->attrEntry())
      if (e != segments)
        addTileAttr(entryKey(e), e->attrValue() ? enumWord(e->attrValue()) : std::nullopt,
                    entryValue(e), locOf(e), attrs);
  for (auto* d : p.dicts)
    readTileAttrs(d, attrs);
  return true;
}

std::string Builder::asmSignature(const isa::OpInfo& info) {
  std::string s;
  auto add = [&](const isa::Role& r) {
    if (!s.empty()) s += ", ";
    s += "%" + std::string(r.name) + (r.optional ? "?" : "");
  };
  for (const auto& r : info.roles)
    if (r.isOutput) add(r);
  for (const auto& r : info.roles)
    if (!r.isOutput) add(r);
  return s;
}

void Builder::assignPoolTypes(const isa::OpInfo& info, std::vector<Bound>& bound,
                              const std::vector<std::optional<Type>>& pool, SrcLoc) {
  std::vector<Type> tiles, views, scalars;
  for (auto& t : pool) {
    if (!t) continue;
    if (t->isTile() || t->kind == TypeKind::LocalView)
      tiles.push_back(*t);
    else if (t->isView())
      views.push_back(*t);
    else
      scalars.push_back(*t);
  }
  size_t ti = 0, vi = 0, si = 0;
  viewAnnotation_.reset();
  if (!views.empty()) viewAnnotation_ = views.front(); // for `%view[...]` operands in fragments
  auto next = [](std::vector<Type>& v, size_t& i) -> std::optional<Type> {
    if (v.empty()) return std::nullopt;
    return v[std::min(i++, v.size() - 1)];
  };
  for (Bound& b : bound) {
    const isa::Role& role = info.roles[b.role];
    if (b.annotated) continue;
    if (role.kind == isa::RoleKind::Tile) {
      b.annotated = next(tiles, ti);
    } else if (role.kind == isa::RoleKind::View) {
      if (b.ref.kind != OperandRef::Memory) b.annotated = next(views, vi);
    } else {
      b.annotated = next(scalars, si);
    }
  }
}

void Builder::finishTileOp(const isa::OpInfo& info, SrcLoc loc, std::vector<Bound>& bound,
                           TileAttrs& attrs,
                           const std::vector<std::pair<std::string, SrcLoc>>& waits,
                           const std::vector<std::pair<std::string, SrcLoc>>& records,
                           SrcLoc typesLoc) {
  std::string opName = "pto." + std::string(info.mnemonic);
  // Resolve tiles and views first (literal scalars take their type from the tiles).
  std::vector<ValueId> values(bound.size(), kNoValue);
  std::optional<isa::DType> tileDType;
  bool ok = true;
  auto resolve = [&](size_t i) {
    Bound& b = bound[i];
    const isa::Role& role = info.roles[b.role];
    if (role.kind == isa::RoleKind::Tile) {
      values[i] = resolveTile(b, role, typesLoc);
      if (values[i] != kNoValue && fn_->type(values[i]).isTile() && (role.isOutput || !tileDType))
        tileDType = fn_->type(values[i]).tile.dtype;
    } else if (role.kind == isa::RoleKind::View) {
      if (b.ref.kind != OperandRef::Memory) values[i] = resolveNamed(b, "view");
    }
    ok &= values[i] != kNoValue || role.kind != isa::RoleKind::Tile;
  };
  for (size_t i = 0; i < bound.size(); ++i)
    resolve(i);
  for (size_t i = 0; i < bound.size(); ++i) {
    Bound& b = bound[i];
    const isa::Role& role = info.roles[b.role];
    if (role.kind == isa::RoleKind::View && b.ref.kind == OperandRef::Memory) {
      values[i] = memoryView(b.ref, bound, values, info);
    } else if (role.kind != isa::RoleKind::Tile && role.kind != isa::RoleKind::View) {
      Type want = b.annotated ? *b.annotated
                  : role.kind == isa::RoleKind::IntScalar
                      ? Type::scalar(isa::DType::I32)
                      : Type::scalar(tileDType.value_or(isa::DType::F32));
      if (b.ref.kind == OperandRef::Literal)
        values[i] = literalOperand(b.ref, want);
      else if (b.ref.kind == OperandRef::Value && !lookup(b.ref.name) && fn_->isFragment &&
               b.annotated)
        values[i] = declareFragmentParam(b.ref, *b.annotated);
      else
        values[i] = use(b.ref);
    }
    if (values[i] == kNoValue) ok = false;
  }
  if (!ok) return;
  // Waits come before the op, records after it (the C++ Event<Src, Dst> model).
  for (auto& [name, wloc] : waits) {
    Op& w = emit(OpKind::WaitFlag, wloc, "pto.wait_flag");
    w.event.edit().kind = EventRef::Kind::Symbolic;
    w.event.edit().symbol = name;
    events_[name].waits.push_back({&cur(), &w});
  }
  Op& op = emit(OpKind::TileOp, loc, opName);
  op.tileOp = info.id;
  op.attrs = std::move(attrs.list);
  op.modes = attrs.modes;
  // The attributes of isa/OpAttrs.def (B.IOR scalars, TRANDOM's rounds...), read from their
  // text once.
  readTileOpAttributes(op);
  op.typeLoc = typesLoc;
  // Operands in signature order (DPS: inputs then outputs).
  std::vector<size_t> order(bound.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bound[a].role < bound[b].role; });
  for (size_t i : order) {
    addOperand(op, values[i], bound[i].ref.loc);
    op.operandRoles.push_back(static_cast<int16_t>(bound[i].role));
  }
  for (auto& [name, rloc] : records) {
    Op& r = emit(OpKind::SetFlag, rloc, "pto.set_flag");
    r.event.edit().kind = EventRef::Kind::Symbolic;
    r.event.edit().symbol = name;
    events_[name].records.push_back({&cur(), &r});
  }
  pendingEventOps_.push_back(&op);
}

ValueId Builder::literalOperand(const OperandRef& r, const Type& want) {
  // A hex immediate for a float scalar is its bit pattern: keep it, the printer shows it as is.
  return constant(r.lit, want, r.loc).value_or(kNoValue);
}

ValueId Builder::resolveNamed(Bound& b, const char* what) {
  if (auto v = lookup(b.ref.name)) {
    checkAnnotation(b, *v);
    return *v;
  }
  if (fn_->isFragment && b.annotated) return declareFragmentParam(b.ref, *b.annotated);
  diags_.error(b.ref.loc, std::string("use of undefined ") + what + " '%" + b.ref.name + "'");
  return kNoValue;
}

void Builder::checkAnnotation(const Bound& b, ValueId v) {
  if (!b.annotated || annotatedAs(v, *b.annotated)) return;
  // A GM memref.subview is a partition; its uses spell its memref type (a GM view of its shape).
  const Type& t = fn_->type(v);
  if (t.kind == TypeKind::PartView && b.annotated->kind == TypeKind::TensorView &&
      b.annotated->elem == t.elem && b.annotated->shape == t.shape)
    return;
  diags_.error(b.ref.loc, "'%" + b.ref.name + "' is annotated as " + toString(*b.annotated) +
                              " but has type " + toString(fn_->type(v)));
  diags_.note(fn_->value(v).loc, "'%" + b.ref.name + "' is defined here");
}

ValueId Builder::resolveTile(Bound& b, const isa::Role& role, SrcLoc typesLoc) {
  if (b.ref.kind != OperandRef::Value) {
    diags_.error(b.ref.loc, "expected a tile for operand '" + std::string(role.name) + "'");
    return kNoValue;
  }
  if (auto v = lookup(b.ref.name)) {
    if (!fn_->type(*v).isTile()) {
      diags_.error(b.ref.loc, "operand '" + std::string(role.name) + "' must be a tile, '%" +
                                  b.ref.name + "' is " + toString(fn_->type(*v)));
      diags_.note(fn_->value(*v).loc, "'%" + b.ref.name + "' is defined here");
      return kNoValue;
    }
    checkAnnotation(b, *v);
    return *v;
  }
  if (b.annotated && b.annotated->isTile() && (fn_->isFragment || role.isOutput)) {
    // Fragments declare tiles by use; SSA results are new tiles.
    if (fn_->isFragment || ssaResultNames_.count(b.ref.name))
      return declareFragmentTile(b.ref, *b.annotated);
  }
  if (!b.annotated && role.isOutput && ssaResultNames_.count(b.ref.name)) {
    diags_.error(b.ref.loc,
                 "cannot infer the type of result '%" + b.ref.name + "': annotate it (': T -> T')");
    return kNoValue;
  }
  if (fn_->isFragment && !b.annotated) {
    diags_.error(b.ref.loc,
                 "tile '%" + b.ref.name +
                     "' is used before it has a type: annotate its first use (': !pto.tile<...>')");
    (void)typesLoc;
    return kNoValue;
  }
  diags_.error(b.ref.loc, "use of undefined tile '%" + b.ref.name + "'");
  return kNoValue;
}

ValueId Builder::memoryView(const OperandRef& r, const std::vector<Bound>& bound,
                            const std::vector<ValueId>& values, const isa::OpInfo& info) {
  Bound base{r, 0, std::nullopt};
  base.ref.kind = OperandRef::Value;
  for (const Bound& b : bound)
    if (b.ref.name == r.name && b.annotated) base.annotated = b.annotated;
  ValueId view = kNoValue;
  if (auto v = lookup(r.name))
    view = *v;
  else if (fn_->isFragment && viewAnnotation_ && viewAnnotation_->isView())
    view = declareFragmentParam(r, *viewAnnotation_);
  else {
    diags_.error(r.loc, "use of undefined view '%" + r.name + "'");
    return kNoValue;
  }
  const Type vt = fn_->type(view); // a copy: emitting constants below grows fn_->values
  if (vt.kind != TypeKind::TensorView) {
    diags_.error(r.loc, "'%" + r.name + "[...]' needs a !pto.tensor_view, found " + toString(vt));
    return kNoValue;
  }
  std::optional<TileType> tile;
  for (size_t i = 0; i < bound.size(); ++i)
    if (info.roles[bound[i].role].kind == isa::RoleKind::Tile && values[i] != kNoValue) {
      tile = fn_->type(values[i]).tile;
      break;
    }
  if (!tile) return kNoValue;
  size_t rank = vt.shape.size();
  if (r.indices.size() > rank) {
    diags_.error(r.loc, "'%" + r.name + "' has rank " + std::to_string(rank) + " but " +
                            std::to_string(r.indices.size()) + " indices are given");
    return kNoValue;
  }
  if (tile->validRows == kDynamic || tile->validCols == kDynamic) {
    diags_.error(r.loc, "a memory operand needs a tile with a static valid shape");
    return kNoValue;
  }
  // Offsets first (their constants come before the partition op), then the op itself.
  building_ = nullptr;
  std::vector<ValueId> offsets;
  for (size_t i = 0; i + r.indices.size() < rank; ++i)
    offsets.push_back(constantInt(0, Type::index(), r.loc));
  for (auto& idx : r.indices) {
    ValueId v = indexOperand(idx);
    if (v == kNoValue) return kNoValue;
    if (!fn_->type(v).isIntLike()) {
      diags_.error(idx.loc, "index '%" + idx.name + "' must be an integer or index, found " +
                                toString(fn_->type(v)));
      return kNoValue;
    }
    offsets.push_back(v);
  }
  Op& op = emit(OpKind::PartitionView, r.loc, "pto.partition_view");
  addOperand(op, view, r.loc);
  std::vector<int64_t> sizes(rank, 1);
  if (rank >= 1) sizes[rank - 1] = tile->validCols;
  if (rank >= 2) sizes[rank - 2] = tile->validRows;
  std::vector<ValueId> sizeVals;
  for (int64_t s : sizes)
    sizeVals.push_back(constantInt(s, Type::index(), r.loc));
  for (ValueId v : offsets)
    addOperand(op, v, r.loc);
  for (ValueId v : sizeVals)
    addOperand(op, v, r.loc);
  op.ints = {static_cast<int64_t>(rank), static_cast<int64_t>(rank)};
  ValueId result = fn_->addValue(r.name + "_part", Type{TypeKind::PartView, vt.elem, sizes}, r.loc);
  op.results.push_back(result);
  return result;
}

} // namespace pto::as::detail
