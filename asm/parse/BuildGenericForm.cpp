// MLIR's generic op form for the ops that are not tile ops: `%r = "arith.addi"(%a, %b) :
// (i32, i32) -> i32`, `"arith.cmpi"(%a, %b) <{predicate = 2 : i64}> : (i32, i32) -> i1`,
// `"arith.constant"() <{value = 1 : i32}> : () -> i32`, `"func.return"(%x) : (i32) -> ()`,
// `"func.call"(%x) <{callee = @f}> : (i32) -> i32`, and every pto op: its operands in the
// parentheses, its attributes in `<{...}>` (or `{...}`), its types in the function type. The
// pieces are rewritten into the op's custom form (operands, `key = value` attributes, `: types
// -> results`) and built by the op's own builder, which checks them as it checks that form.
#include "asm/parse/BuilderImpl.h"
#include "support/Numbers.h"

#include <iterator>
#include <typeinfo>

namespace pto::as::detail {
namespace {

/// MLIR's integer encoding of the cmpi / cmpf predicates: their order in asm/ir/Arith.def.
std::string predicateSpelling(bool isFloat, int64_t n) {
  static const char* const kInt[] = {
#define PTO_CMPI_PRED(id, spelling) spelling,
#include "asm/ir/Arith.def"
#undef PTO_CMPI_PRED
  };
  static const char* const kFloat[] = {
#define PTO_CMPF_PRED(id, spelling) spelling,
#include "asm/ir/Arith.def"
#undef PTO_CMPF_PRED
  };
  if (isFloat) return n >= 0 && n < int64_t(std::size(kFloat)) ? kFloat[n] : "";
  return n >= 0 && n < int64_t(std::size(kInt)) ? kInt[n] : "";
}

/// The scalar loads and stores take (ptr, offset[, value]) in the generic form and `%value,
/// %ptr[%offset]` in the custom one: the pointer and offset become one memory operand, and the
/// offset's type leaves the type list.
void scalarMemoryPieces(const std::string& name, Pieces& c) {
  const bool load = name == "pto.load_scalar" || name == "pto.load";
  const bool store = name == "pto.store_scalar" || name == "pto.store";
  if ((!load && !store) || c.operands.size() != (store ? 3u : 2u)) return;
  OperandRef mem = c.operands[0];
  mem.kind = OperandRef::Memory;
  mem.indices = {c.operands[1]};
  c.operands = store ? std::vector<OperandRef>{c.operands[2], mem} : std::vector<OperandRef>{mem};
  if (c.types.size() == (store ? 3u : 2u)) {
    if (store)
      c.types = {c.types[0], c.types[2]};
    else
      c.types.pop_back();
  }
}

} // namespace

/// The generic form's pieces as the custom form's: operands, keywords (the properties and
/// attributes but operandSegmentSizes), operand types and, after an arrow, the result types.
Pieces Builder::customPieces(const std::string& name, const Pieces& p) {
  Pieces out;
  if (!p.parens.empty()) {
    Pieces inner = collectPieces(piecesOf(p.parens[0]));
    out.operands = inner.operands;
    for (const OperandRef& r : out.operands)
      out.seen.push_back({PieceKind::Operand, r.loc, {}, p.parens[0]});
  }
  std::vector<P::AttrDictContext*> dicts = p.dicts;
  if (p.props) dicts.insert(dicts.begin(), p.props);
  for (P::AttrDictContext* d : dicts)
    for (P::AttrEntryContext* e : d->attrEntry()) {
      std::string key = entryKey(e);
      if (key == "operandSegmentSizes" || key == "operand_segment_sizes" || !e->attrValue())
        continue;
      out.keywords.push_back({key, e->attrValue(), locOf(e)});
      out.seen.push_back({PieceKind::Keyword, locOf(e), key, e});
    }
  out.types = p.types;
  out.arrowTypes = p.arrowTypes;
  out.hasArrow = !p.arrowTypes.empty();
  out.typesLoc = p.typesLoc;
  scalarMemoryPieces(name, out);
  if (!out.types.empty()) out.seen.push_back({PieceKind::Types, p.typesLoc, {}, p.types[0]});
  if (out.hasArrow) out.seen.push_back({PieceKind::Arrow, p.typesLoc, {}, p.arrowTypes[0]});
  return out;
}

/// arith, func and scf ops in the generic form; false when `name` is none of them.
bool Builder::buildGenericScalar(const std::string& name, SrcLoc loc, Pieces& p,
                                 const std::vector<ResultName>& results) {
  Pieces c = customPieces(name, p);
  auto keyword = [&](std::string_view k) -> const Keyword* { return c.keyword(k); };
  if (name == "arith.constant") {
    const Keyword* v = keyword("value");
    if (!v || !v->value->literal() || c.arrowTypes.size() != 1) {
      diags_.error(loc, "expected '\"arith.constant\"() <{value = literal}> : () -> T'");
      return true;
    }
    Pieces k;
    OperandRef r;
    r.kind = OperandRef::Literal;
    r.lit = v->value->literal();
    r.loc = v->loc;
    k.operands.push_back(r);
    k.types = c.arrowTypes;
    buildConstant(loc, k, results);
    return true;
  }
  if (const ArithDef* a = findArith(name)) {
    std::string pred;
    if (a->cls == ArithClass::CmpI || a->cls == ArithClass::CmpF) {
      const Keyword* k = keyword("predicate");
      auto n = k ? parseInt(k->value->getText()) : std::nullopt;
      pred = n ? predicateSpelling(a->cls == ArithClass::CmpF, *n) : "";
      if (pred.empty()) {
        diags_.error(k ? k->loc : loc, "'\"" + name +
                                           "\"' needs <{predicate = N : i64}>, N "
                                           "one of MLIR's predicate numbers");
        return true;
      }
    }
    if (a->cls == ArithClass::Cast && c.arrowTypes.size() == 1) c.toType = c.arrowTypes[0];
    buildArith(*a, name, loc, pred, loc, c, results);
    return true;
  }
  if (name == "func.return" || name == "return" || name == "scf.yield") {
    buildTerminator(name == "scf.yield" ? OpKind::Yield : OpKind::Return, name, loc, c, results);
    return true;
  }
  if (name == "scf.condition") {
    if (c.operands.empty()) {
      diags_.error(loc, "'\"scf.condition\"' takes the condition and the values passed");
      return true;
    }
    Op& op = emit(OpKind::Condition, loc, "scf.condition");
    addOperand(op, scalarOperand(c.operands[0], Type::scalar(isa::DType::I1)), c.operands[0].loc);
    for (size_t i = 1; i < c.operands.size(); ++i)
      addOperand(op, scalarOperand(c.operands[i], Type::index()), c.operands[i].loc);
    return true;
  }
  if (name == "cf.br" || name == "cf.cond_br") {
    buildGenericBranch(name, loc, p, c, results);
    return true;
  }
  if (name == "func.call" || name == "call") {
    const Keyword* callee = keyword("callee");
    if (!callee || !callee->value->SYMBOL()) {
      diags_.error(loc, "expected '\"func.call\"(%args) <{callee = @f}> : (types) -> results'");
      return true;
    }
    buildCallTo(callee->value->SYMBOL()->getText().substr(1), callee->loc, loc, c, results);
    return true;
  }
  return false;
}

/// `"cf.br"(%args)[^dest] : (T...) -> ()` and `"cf.cond_br"(%c, %t..., %f...)[^t, ^f]
/// <{operandSegmentSizes = array<i32: 1, NT, NF>}> : (i1, T...) -> ()`: the terminator of the
/// block being built, as buildBranch makes it from the custom form.
void Builder::buildGenericBranch(const std::string& name, SrcLoc loc, const Pieces& p,
                                 const Pieces& c, const std::vector<ResultName>& results) {
  expectResults(name, loc, results, 0);
  const bool cond = name == "cf.cond_br";
  std::vector<P::SuccessorPieceContext*> succ;
  for (P::BracketContext* b : p.brackets)
    for (P::PieceContext* piece : piecesOf(b))
      if (typeid(*piece) == typeid(P::SuccessorPieceContext))
        succ.push_back(static_cast<P::SuccessorPieceContext*>(piece));
  // The operand groups: [condition,] the true successor's, the false successor's.
  std::vector<int> groups{static_cast<int>(c.operands.size())};
  if (cond) {
    groups.clear();
    P::AttrDictContext* props = p.props ? p.props : p.dicts.empty() ? nullptr : p.dicts[0];
    for (P::AttrEntryContext* e : props ? props->attrEntry() : std::vector<P::AttrEntryContext*>{})
      if (entryKey(e) == "operandSegmentSizes" && e->attrValue())
        groups = denseArray(e->attrValue()->getText()).value_or(std::vector<int>{});
  }
  size_t total = 0;
  for (int g : groups)
    total += static_cast<size_t>(g);
  if (!curBlock_ || curBlock_->term.kind != CfgTerm::None || succ.size() != (cond ? 2u : 1u) ||
      groups.size() != (cond ? 3u : 1u) || (cond && groups[0] != 1) || total != c.operands.size() ||
      c.types.size() != c.operands.size()) {
    diags_.error(loc, cond ? "expected '\"cf.cond_br\"(%c, %t..., %f...)[^t, ^f] <{"
                             "operandSegmentSizes = array<i32: 1, NT, NF>}> : (i1, T...) -> ()' "
                             "ending a block"
                           : "expected '\"cf.br\"(%args)[^dest] : (T...) -> ()' ending a block");
    return;
  }
  CfgTerm t;
  t.kind = cond ? CfgTerm::CondBr : CfgTerm::Br;
  t.loc = loc;
  size_t at = 0;
  if (cond) {
    t.cond = branchCondition(c.operands[0]);
    if (t.cond == kNoValue) return;
    at = 1;
  }
  for (size_t k = 0; k < succ.size(); ++k) {
    t.dest[k] = succ[k]->CARET_ID()->getText();
    t.destLoc[k] = locOf(succ[k]->CARET_ID());
    for (int n = groups[cond ? k + 1 : 0]; n > 0; --n, ++at) {
      auto ty = readType(c.types[at]);
      ValueId v = scalarOperand(c.operands[at], ty.value_or(Type::index()));
      if (v == kNoValue) return;
      t.args[k].push_back(v);
      t.argLocs[k].push_back(c.operands[at].loc);
    }
  }
  curBlock_->term = std::move(t);
}

} // namespace pto::as::detail
