// Generic statements: the flat "pieces" summary of a statement and the dispatch of a generic
// statement to the builder of its op.
#include "asm/parse/BuilderImpl.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <typeinfo>

namespace pto::as::detail {
namespace {

void addTypes(Pieces& p, P::TypeContext* t) {
  // A function type `(A, B) -> C` splits into operand types and result types.
  if (tokenChild(t, P::ARROW)) {
    for (auto* in : ruleChildren<P::TypeContext>(t, P::RuleType))
      p.types.push_back(in);
    p.hasArrow = true;
    auto* g = ruleChild<P::TypeGroupContext>(t, P::RuleTypeGroup);
    for (auto* r : ruleChildren<P::TypeContext>(g, P::RuleType))
      p.arrowTypes.push_back(r);
    return;
  }
  p.types.push_back(t);
}

/// The kind of a piece from its context class (one typeid lookup instead of a dynamic_cast
/// chain: pieces are the bulk of every statement).
PieceKind kindOf(P::PieceContext* piece) {
  // The piece's labelled alternative, by its dynamic type. The types are compared by address
  // first (one type_info object per type in this executable): hashing a type_index hashes its
  // name, 1% of pto-as's instructions. Equality (by name) remains the fallback.
  struct Entry {
    const std::type_info& type;
    PieceKind kind;
  };
  static const Entry kKinds[] = {
      {typeid(P::ValuePieceContext), PieceKind::Operand},
      {typeid(P::TypesPieceContext), PieceKind::Types},
      {typeid(P::KeywordPieceContext), PieceKind::Keyword},
      {typeid(P::DictPieceContext), PieceKind::Dict},
      {typeid(P::LiteralPieceContext), PieceKind::Operand},
      {typeid(P::ArrowPieceContext), PieceKind::Arrow},
      {typeid(P::BracketPieceContext), PieceKind::Bracket},
      {typeid(P::AnglePieceContext), PieceKind::Angle},
      {typeid(P::HashPieceContext), PieceKind::Hash},
      {typeid(P::SizesPieceContext), PieceKind::Sizes},
      {typeid(P::WordBracketPieceContext), PieceKind::WordBracket},
      {typeid(P::BareWordPieceContext), PieceKind::BareWord},
      {typeid(P::CallPieceContext), PieceKind::Call},
      {typeid(P::OutsTypePieceContext), PieceKind::OutsType},
      {typeid(P::ParenPieceContext), PieceKind::Paren},
      {typeid(P::SymbolPieceContext), PieceKind::Symbol},
      {typeid(P::CommaPieceContext), PieceKind::Comma},
      {typeid(P::ColonKeywordPieceContext), PieceKind::ColonKeyword},
      {typeid(P::ToPieceContext), PieceKind::To},
      {typeid(P::PropsPieceContext), PieceKind::Props},
      {typeid(P::SuccessorPieceContext), PieceKind::Successor},
      {typeid(P::RegionsPieceContext), PieceKind::Regions},
  };
  const std::type_info& type = typeid(*piece);
  for (const Entry& e : kKinds)
    if (&e.type == &type) return e.kind;
  for (const Entry& e : kKinds)
    if (e.type == type) return e.kind;
  return PieceKind::Comma;
}

void addTypeList(Pieces& out, P::TypeListContext* t) {
  auto types = ruleChildren<P::TypeContext>(t, P::RuleType);
  out.typesLoc = locOf(types.front());
  // typeList : ':' type (',' type)* ('to' type)? : a token other than ':' and ',' is 'to'.
  bool hasTo = false;
  for (auto* child : t->children)
    if (isToken(child)) {
      const size_t type = static_cast<antlr4::tree::TerminalNode*>(child)->getSymbol()->getType();
      hasTo |= type != P::COLON && type != P::COMMA;
    }
  if (hasTo) {
    out.toType = types.back();
    types.pop_back();
  }
  for (auto* ty : types)
    addTypes(out, ty);
}

/// The pieces of a generic statement: head pieces, the type list, then tail pieces.
Pieces collectStatement(P::GenericOpContext* g) {
  std::vector<P::PieceContext*> pieces;
  for (auto* h : ruleChildren<P::HeadPieceContext>(g, P::RuleHeadPiece))
    pieces.push_back(ruleChild<P::PieceContext>(h, P::RulePiece));
  Pieces out = collectPieces(pieces);
  if (auto* types = ruleChild<P::TypeListContext>(g, P::RuleTypeList)) {
    out.seen.push_back({PieceKind::Types, locOf(types), {}, types});
    addTypeList(out, types);
    std::vector<P::PieceContext*> tail;
    for (auto* t : ruleChildren<P::TailPieceContext>(g, P::RuleTailPiece))
      tail.push_back(ruleChild<P::PieceContext>(t, P::RulePiece));
    Pieces rest = collectPieces(tail);
    out.seen.insert(out.seen.end(), rest.seen.begin(), rest.seen.end());
    auto append = [](auto& into, const auto& from) {
      into.insert(into.end(), from.begin(), from.end());
    };
    append(out.arrowTypes, rest.arrowTypes);
    out.hasArrow |= rest.hasArrow;
    append(out.dicts, rest.dicts);
    append(out.keywords, rest.keywords);
    append(out.hashes, rest.hashes);
    append(out.angles, rest.angles);
    append(out.calls, rest.calls);
  }
  return out;
}

} // namespace

Pieces collectPieces(const std::vector<P::PieceContext*>& pieces) {
  Pieces out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    P::PieceContext* piece = pieces[i];
    PieceKind kind = kindOf(piece);
    std::string word;
    if (kind == PieceKind::Keyword)
      word = wordText(static_cast<P::KeywordPieceContext*>(piece)->word());
    if (kind == PieceKind::ColonKeyword)
      word = wordText(static_cast<P::ColonKeywordPieceContext*>(piece)->word());
    if (kind == PieceKind::Call) word = static_cast<P::CallPieceContext*>(piece)->callKw->getText();
    if (kind == PieceKind::WordBracket)
      word = static_cast<P::WordBracketPieceContext*>(piece)->IDENT()->getText();
    if (kind == PieceKind::BareWord)
      word = static_cast<P::BareWordPieceContext*>(piece)->IDENT()->getText();
    out.seen.push_back({kind, locOf(piece), word, piece});
    if (kind == PieceKind::Operand && typeid(*piece) == typeid(P::ValuePieceContext)) {
      OperandRef r;
      antlr4::tree::TerminalNode* value = tokenChild(piece, P::VALUE_ID);
      r.name = value->getText().substr(1);
      if (auto* hash = tokenChild(piece, P::HASH_NUM)) r.name += hash->getText();
      r.loc = locOf(value);
      // `%base[%i, %j]` is a memory operand; `%v {attrs}` attaches attributes to the operand.
      if (i + 1 < pieces.size() && kindOf(pieces[i + 1]) == PieceKind::Bracket) {
        auto* b = static_cast<P::BracketPieceContext*>(pieces[i + 1]);
        r.kind = OperandRef::Memory;
        Pieces inner = collectPieces(ruleChildren<P::PieceContext>(
            ruleChild<P::BracketContext>(b, P::RuleBracket), P::RulePiece));
        r.indices = inner.operands;
        ++i;
      }
      if (i + 1 < pieces.size() && kindOf(pieces[i + 1]) == PieceKind::Dict) {
        auto* d = static_cast<P::DictPieceContext*>(pieces[i + 1]);
        out.seen.push_back({PieceKind::Dict, locOf(d), {}, d});
        r.dict = d->attrDict();
        out.dicts.push_back(r.dict);
        ++i;
      }
      out.operands.push_back(std::move(r));
      continue;
    }
    switch (kind) {
    case PieceKind::Operand: { // a literal
      auto* l = static_cast<P::LiteralPieceContext*>(piece);
      OperandRef r;
      r.kind = OperandRef::Literal;
      r.lit = l->literal();
      r.loc = locOf(l->literal());
      out.operands.push_back(std::move(r));
      break;
    }
    case PieceKind::Types:
      addTypeList(out, static_cast<P::TypesPieceContext*>(piece)->typeList());
      break;
    case PieceKind::Arrow: {
      out.hasArrow = true;
      for (auto* ty : static_cast<P::ArrowPieceContext*>(piece)->typeGroup()->type())
        out.arrowTypes.push_back(ty);
      break;
    }
    case PieceKind::Dict:
      out.dicts.push_back(static_cast<P::DictPieceContext*>(piece)->attrDict());
      break;
    case PieceKind::Bracket:
      out.brackets.push_back(static_cast<P::BracketPieceContext*>(piece)->bracket());
      break;
    case PieceKind::Angle:
      out.angles.push_back(static_cast<P::AnglePieceContext*>(piece)->angle());
      break;
    case PieceKind::Hash:
      out.hashes.push_back(static_cast<P::HashPieceContext*>(piece));
      break;
    case PieceKind::Keyword: {
      auto* k = static_cast<P::KeywordPieceContext*>(piece);
      out.keywords.push_back({word, k->attrValue(), locOf(k->word())});
      break;
    }
    case PieceKind::ColonKeyword: {
      auto* k = static_cast<P::ColonKeywordPieceContext*>(piece);
      out.colonKeywords.push_back({word, k->attrValue(), locOf(k->word())});
      break;
    }
    case PieceKind::Sizes:
      out.sizes = static_cast<P::SizesPieceContext*>(piece);
      break;
    case PieceKind::WordBracket:
      if (word == "valid") out.validBracket = static_cast<P::WordBracketPieceContext*>(piece);
      break;
    case PieceKind::BareWord:
      out.bareWords.push_back(word);
      break;
    case PieceKind::Call:
      out.calls.push_back(static_cast<P::CallPieceContext*>(piece));
      break;
    case PieceKind::OutsType:
      out.outsType = static_cast<P::OutsTypePieceContext*>(piece)->type();
      break;
    case PieceKind::Paren:
      out.parens.push_back(static_cast<P::ParenPieceContext*>(piece));
      break;
    case PieceKind::Symbol:
      out.symbols.push_back(static_cast<P::SymbolPieceContext*>(piece));
      break;
    case PieceKind::Props:
      out.props = static_cast<P::PropsPieceContext*>(piece)->attrDict();
      break;
    case PieceKind::Successor:
      out.successors.push_back(static_cast<P::SuccessorPieceContext*>(piece));
      break;
    case PieceKind::Regions:
      break;
    case PieceKind::Comma:
    case PieceKind::To:
      break;
    }
  }
  return out;
}

/// Reports the first piece an op does not take ("unexpected '...' in 'op'"); keyword and call
/// pieces must also be among the allowed words.
bool onlyPieces(DiagEngine& diags, const Pieces& p, const std::string& op,
                std::initializer_list<PieceKind> kinds,
                std::initializer_list<std::string_view> words) {
  for (const PieceSeen& seen : p.seen) {
    if (seen.kind == PieceKind::Comma) continue; // separators go anywhere
    bool ok = std::find(kinds.begin(), kinds.end(), seen.kind) != kinds.end();
    if (ok && (seen.kind == PieceKind::Keyword || seen.kind == PieceKind::ColonKeyword ||
               seen.kind == PieceKind::Call || seen.kind == PieceKind::WordBracket ||
               seen.kind == PieceKind::BareWord))
      ok = std::find(words.begin(), words.end(), seen.word) != words.end();
    if (ok) continue;
    std::string full = textOf(seen.ctx);
    std::string text = full.size() > 40 ? full.substr(0, 37) + "..." : full;
    if (seen.kind == PieceKind::Keyword) text = seen.word + " =";
    if (seen.kind == PieceKind::ColonKeyword) text = seen.word + ":";
    if (seen.kind == PieceKind::Call) text = seen.word + "(...)";
    if (seen.kind == PieceKind::WordBracket) text = seen.word + " [...]";
    if (seen.kind == PieceKind::BareWord) text = seen.word;
    diags.error(seen.loc, "unexpected '" + text + "' in '" + op + "'");
    return false;
  }
  return true;
}

void Builder::buildGeneric(P::GenericOpContext* g, const std::vector<ResultName>& results) {
  P::OpNameContext* opName = g->opName();
  std::string name = wordText(opName);
  SrcLoc loc = locOf(opName);
  Pieces p = collectStatement(g);
  if (g->opName()->STRING())
    return buildQuotedGeneric(name.substr(1, name.size() - 2), loc, p, results);
  std::string pred = g->predicate ? wordText(g->predicate) : "";
  SrcLoc predLoc = locOf(g->predicate);

  if (name == "builtin.unrealized_conversion_cast") {
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
    return buildUnrealizedCast(loc, p, results);
  }
  if (const ArithDef* a = findArith(name)) {
    bool cast = a->cls == ArithClass::Cast;
    if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
    if (!cast && p.toType) {
      diags_.error(locOf(p.toType), "unexpected 'to' type in '" + name + "'");
      return;
    }
    return buildArith(*a, name, loc, pred, predLoc, p, results);
  }
  if (!pred.empty()) {
    diags_.error(predLoc, "unexpected '" + pred + ",' after '" + name + "'");
    return;
  }
  auto only = [&](std::initializer_list<PieceKind> kinds,
                  std::initializer_list<std::string_view> words = {}) {
    return onlyPieces(diags_, p, name, kinds, words);
  };
  using K = PieceKind;
  if (name == "arith.constant")
    return only({K::Operand, K::Types}) ? buildConstant(loc, p, results) : void();
  if (name == "return" || name == "func.return")
    return only({K::Operand, K::Types}) ? buildTerminator(OpKind::Return, name, loc, p, results)
                                        : void();
  if (name == "scf.yield")
    return only({K::Operand, K::Types}) ? buildTerminator(OpKind::Yield, name, loc, p, results)
                                        : void();
  if (name == "cf.br" || name == "cf.cond_br")
    return only({K::Operand, K::Successor, K::Dict}) ? buildBranch(name, loc, p, results) : void();
  if (name == "scf.condition")
    return only({K::Paren, K::Operand, K::Types}) ? buildCondition(loc, p, results) : void();
  if (name == "func.call" || name == "call")
    return only({K::Symbol, K::Paren, K::Types}) ? buildCall(loc, p, results) : void();
  if (name == "tile")
    return only({K::Operand, K::Types, K::Keyword}, {"addr"}) ? buildTileDecl(loc, p, results)
                                                              : void();
  if (name == "memref.alloc")
    return only({K::Paren, K::Types}) ? buildMemrefAlloc(loc, p, results) : void();
  if (name == "memref.subview")
    return only({K::Operand, K::Bracket, K::Types, K::Dict}) ? buildMemrefSubview(loc, p, results)
                                                             : void();
  if (name == "memref.dealloc")
    return only({K::Operand, K::Types}) ? buildMemrefDealloc(loc, p, results) : void();
  if (name == "memref.reinterpret_cast")
    return only({K::Operand, K::To, K::ColonKeyword, K::Dict, K::Types},
                {"offset", "sizes", "strides"})
               ? buildReinterpretCast(loc, p, results)
               : void();

  buildPtoOp(name, loc, p, results);
}

/// MLIR's `builtin.unrealized_conversion_cast %v : A to B`, as PTOAS leaves it between scalar
/// types: the same bits under another type (a signless and an unsigned integer, an integer and
/// a float of its width) is arith.bitcast; index and an integer is arith.index_cast. Other pairs
/// have no meaning of their own and are refused.
void Builder::buildUnrealizedCast(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  if (p.types.empty() || !p.toType) {
    diags_.error(loc, "'builtin.unrealized_conversion_cast' needs '... : SrcType to DstType'");
    return;
  }
  auto from = readType(p.types.back()), to = readType(p.toType);
  if (!from || !to) return;
  auto width = [](const Type& t) {
    return t.kind == TypeKind::Scalar ? isa::bitWidth(t.elem) : 0u;
  };
  const bool fromIndex = from->kind == TypeKind::Index, toIndex = to->kind == TypeKind::Index;
  std::string as;
  if ((fromIndex && to->isIntLike() && !toIndex) || (toIndex && from->isIntLike() && !fromIndex))
    as = "arith.index_cast";
  else if (width(*from) != 0 && width(*from) == width(*to))
    as = "arith.bitcast";
  if (as.empty()) {
    diags_.error(p.typesLoc, "'builtin.unrealized_conversion_cast' from " + toString(*from) +
                                 " to " + toString(*to) +
                                 " is not supported (scalars of one width, or index and an "
                                 "integer)");
    return;
  }
  buildArith(*findArith(as), as, loc, "", {}, p, results);
}

/// MLIR's generic form names the op in quotes (`"pto.tadd"(...) <{...}> : (...) -> ()`): tile
/// ops, the signals and comm ops here; arith, func and scf ops and the other pto ops through
/// their custom form's builder (BuildGenericForm.cpp).
void Builder::buildQuotedGeneric(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  for (const PieceSeen& seen : p.seen)
    if (seen.kind == PieceKind::Regions) {
      diags_.error(seen.loc, "the generic form of '" + name +
                                 "' with regions is not supported: write its custom form");
      return;
    }
  if (name == "pto.tnotify" || name == "pto.twait" || name == "pto.ttest")
    return buildSignal(name, loc, p, results);
  if (name == "pto.syncall") return buildSyncAll(name, loc, p, results);
  if (commKindOf(name)) return buildComm(name, loc, p, results);
  if (isAsyncCommOp(name)) return buildAsyncComm(name, loc, p, results);
  const isa::OpInfo* info = isa::findOp(name);
  if (!info) {
    if (buildGenericScalar(name, loc, p, results)) return;
    using K = PieceKind;
    if (!onlyPieces(diags_, p, name, {K::Paren, K::Props, K::Types, K::Arrow, K::Dict})) return;
    if (!name.starts_with("pto.")) {
      diags_.error(loc, "the generic form of '" + name + "' is not supported (its custom form is)");
      return;
    }
    Pieces c = customPieces(name, p);
    return buildPtoOp(name, loc, c, results);
  }
  p.generic = true;
  using K = PieceKind;
  if (!onlyPieces(diags_, p, name, {K::Paren, K::Props, K::Types, K::Arrow, K::Dict})) return;
  buildTileOp(*info, loc, p, results);
}

/// PTOAS's tload takes HIVM's load clauses (pad_mode, pad_value, left_padding_num,
/// right_padding_num, init_out_buffer, init_condition) and drops them when it emits pto-isa's
/// TLOAD, which has no per-load padding. Dropping them would change what the author asked for,
/// so each is refused by name at its place.
bool Builder::loadClausesSupported(const Pieces& p) {
  static const std::set<std::string_view> clauses = {"pad_mode",         "pad_value",
                                                     "left_padding_num", "right_padding_num",
                                                     "init_out_buffer",  "init_condition"};
  for (const PieceSeen& seen : p.seen)
    if (seen.kind == PieceKind::Keyword && clauses.count(seen.word)) {
      diags_.error(seen.loc,
                   "'pto.tload' clause '" + seen.word +
                       "' is not supported: pto-isa's TLOAD has no per-load padding or "
                       "initialization (PTOAS drops the clause); the tile's `pad` value pads "
                       "its rows, pto.tfillpad fills the rest");
      return false;
    }
  return true;
}

/// The builders of the pto ops that are not tile ops of the op table, by name without `pto.`.
const std::map<std::string, Builder::PtoHandler, std::less<>>& Builder::ptoHandlers() {
  static const std::map<std::string, Builder::PtoHandler, std::less<>> kHandlers = {
      {"make_tensor_view", &Builder::buildMakeTensorView},
      {"partition_view", &Builder::buildPartitionView},
      {"get_tensor_view_dim", &Builder::buildGetDim},
      {"get_tensor_view_stride", &Builder::buildGetDim},
      {"get_validshape", &Builder::buildGetValidShape},
      {"tile_valid_rows", &Builder::buildGetValidShape},
      {"tile_valid_cols", &Builder::buildGetValidShape},
      {"alloc_tile", &Builder::buildAllocTile},
      {"alloc_multi_tile", &Builder::buildAllocTile},
      {"multi_tile_get", &Builder::buildMultiTileGet},
      {"subset", &Builder::buildSubset},
      {"subview", &Builder::buildSubset},
      {"treshape", &Builder::buildReshape},
      {"bind_tile", &Builder::buildBindTile},
      {"pointer_cast", &Builder::buildPointerCast},
      {"fence.barrier_all", &Builder::buildMemoryFence},
      {"comm.tnotify", &Builder::buildSignal},
      {"comm.twait", &Builder::buildSignal},
      {"comm.ttest", &Builder::buildSignal},
      {"tnotify", &Builder::buildSignal},
      {"twait", &Builder::buildSignal},
      {"ttest", &Builder::buildSignal},
      {"syncall", &Builder::buildSyncAll},
      {"cmo.cacheinvalid", &Builder::buildMemoryFence},
      {"bitcast", &Builder::buildReshape},
      {"set_validshape", &Builder::buildSetValidShape},
      {"tassign", &Builder::buildTAssign},
      {"load_scalar", &Builder::buildLoadScalar},
      {"store_scalar", &Builder::buildStoreScalar},
      {"load", &Builder::buildLoadScalar}, // PTOAS's newer spellings of the same ops
      {"store", &Builder::buildStoreScalar},
      {"addptr", &Builder::buildAddPtr},
      {"castptr", &Builder::buildCastPtr},
      {"inttoptr", &Builder::buildCastPtr},
      {"ptrtoint", &Builder::buildCastPtr},
      {"get_block_idx", &Builder::buildBlockInfo},
      {"get_block_num", &Builder::buildBlockInfo},
      {"get_subblock_idx", &Builder::buildBlockInfo},
      {"get_subblock_num", &Builder::buildBlockInfo},
      {"tgetval", &Builder::buildTGetVal},
      {"record_event", &Builder::buildSync},
      {"wait_event", &Builder::buildSync},
      {"set_flag", &Builder::buildSync},
      {"wait_flag", &Builder::buildSync},
      {"set_flag_dyn", &Builder::buildSync},
      {"wait_flag_dyn", &Builder::buildSync},
      {"barrier", &Builder::buildBarrier},
      {"sync.set", &Builder::buildCoreSync},
      {"sync.wait", &Builder::buildCoreSync},
      {"set_intra_block", &Builder::buildCoreSync},
      {"wait_intra_block", &Builder::buildCoreSync},
      {"set_cross_block", &Builder::buildCrossBlockFlag},
      {"wait_cross_block", &Builder::buildCrossBlockFlag},
      {"get_buf", &Builder::buildCoreSync},
      {"rls_buf", &Builder::buildCoreSync},
      {"get_buf_dyn", &Builder::buildCoreSync},
      {"rls_buf_dyn", &Builder::buildCoreSync},
      {"barrier_sync", &Builder::buildBarrier},
      {"pipe_barrier", &Builder::buildBarrier},
      {"tsync", &Builder::buildTSync},
      {"declare_eventid_array", &Builder::buildEventIdArray},
      {"eventid_array_get", &Builder::buildEventIdArray},
      {"eventid_array_set", &Builder::buildEventIdArray},
      {"declare_local_array", &Builder::buildEventIdArray},
      {"local_array_get", &Builder::buildEventIdArray},
      {"local_array_set", &Builder::buildEventIdArray},
      {"print", &Builder::buildPrint},
      {"trap", &Builder::buildPrint},
      {"reserve_buffer", &Builder::buildReserve},
      {"import_reserved_buffer", &Builder::buildReserve},
      {"initialize_l2g2l_pipe", &Builder::buildPipeInit},
      {"initialize_l2l_pipe", &Builder::buildPipeInit},
      {"aic_initialize_pipe", &Builder::buildFrontendInit},
      {"aiv_initialize_pipe", &Builder::buildFrontendInit},
      {"tpush", &Builder::buildPipeData},
      {"tpop", &Builder::buildPipeData},
      {"tfree", &Builder::buildPipeData},
      {"talloc", &Builder::buildPipeData},
      {"declare_global", &Builder::buildDeclareGlobal},
      {"tpush_to_aiv", &Builder::buildFrontendData},
      {"talloc_to_aiv", &Builder::buildTAllocSlot},
      {"talloc_to_aic", &Builder::buildTAllocSlot},
      {"tpush_to_aic", &Builder::buildFrontendData},
      {"tpop_from_aic", &Builder::buildFrontendData},
      {"tpop_from_aiv", &Builder::buildFrontendData},
      {"tfree_from_aic", &Builder::buildFrontendData},
      {"tfree_from_aiv", &Builder::buildFrontendData},
      {"declare_tile", &Builder::buildDeclareTile},
      {"set_ffts", &Builder::buildSetFfts},
  };
  return kHandlers;
}

/// A `pto.` op (or a PTO-AS mnemonic) that is not arith or structure: its builder by name, or a
/// tile op of the op table.
void Builder::buildPtoOp(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results) {
  auto only = [&](std::initializer_list<PieceKind> kinds,
                  std::initializer_list<std::string_view> words = {}) {
    return onlyPieces(diags_, p, name, kinds, words);
  };
  using K = PieceKind;
  std::string base = name.starts_with("pto.") ? name.substr(4) : name;
  const auto& kHandlers = ptoHandlers();
  // The machine ops of the pipes are written with the ops above (docs/pipes.md).
  if (base.starts_with("tpipe.")) {
    diags_.error(loc, "'" + name +
                          "' is the machine form of a cross-core pipe op: write pto.tpush, "
                          "pto.tpop, pto.tfree or an initialize_pipe op");
    return;
  }
  if (base == "tassign.rt") {
    diags_.error(loc, "'" + name +
                          "' is the machine form of a run-time tile address: write "
                          "pto.tassign");
    return;
  }
  if (base == "print.rt") {
    diags_.error(loc, "'" + name + "' is the machine form of pto.print: write pto.print ins(\"" +
                          "format\", %value : type)");
    return;
  }
  if (commKindOf(name)) return buildComm(name, loc, p, results);
  if (isAsyncCommOp(name)) return buildAsyncComm(name, loc, p, results);
  if (auto it = kHandlers.find(base); it != kHandlers.end())
    return (this->*(it->second))("pto." + base, loc, p, results);
  if (const isa::OpInfo* info = isa::findOp(name)) {
    if (base == "tload" && !loadClausesSupported(p)) return;
    bool dps = p.call("ins") || p.call("outs");
    bool ok = dps ? only({K::Call, K::Dict}, {"ins", "outs", "wait", "record"})
                  : only({K::Operand, K::Types, K::Arrow, K::Dict, K::Hash, K::Angle, K::Call},
                         {"wait", "record"});
    return ok ? buildTileOp(*info, loc, p, results) : void();
  }
  diags_.error(loc, "unknown operation '" + name + "'");
}

} // namespace pto::as::detail
