// Scalar statements: scf.for / scf.if / scf.while and their terminators, literals and
// constants, arith ops, scalar loads and stores, pointer arithmetic, block info and print.
#include "asm/parse/BuilderImpl.h"
#include "support/Numbers.h"

#include <algorithm>

namespace pto::as::detail {

std::optional<ValueId> Builder::operandValue(P::OperandContext* o, const Type& want) {
  if (o->VALUE_ID()) {
    OperandRef r;
    r.name = o->VALUE_ID()->getText().substr(1);
    if (o->HASH_NUM()) r.name += o->HASH_NUM()->getText();
    r.loc = locOf(o->VALUE_ID());
    ValueId v = use(r);
    if (v == kNoValue) return std::nullopt;
    return v;
  }
  return constant(o->literal(), want, locOf(o->literal()));
}

std::optional<Type> Builder::typeGroup(P::TypeGroupContext* g, std::vector<Type>& out) {
  if (g->type().size() == 1 && g->children.size() == 1) {
    auto t = types_.read(g->type(0));
    if (t) out.push_back(*t);
    return t;
  }
  for (auto* t : g->type())
    if (auto ty = types_.read(t)) out.push_back(*ty);
  return std::nullopt;
}

void Builder::buildFor(P::ScfForContext* f, const std::vector<ResultName>& results) {
  Type ivType = Type::index();
  if (f->type())
    if (auto t = types_.read(f->type())) ivType = *t;
  Op& op = emit(OpKind::For, locOf(f->getStart()), "scf.for");
  auto ops = f->operand();
  for (size_t i = 0; i < 3; ++i) {
    auto v = operandValue(ops[i], ivType);
    addOperand(op, v.value_or(kNoValue), locOf(ops[i]));
  }
  std::vector<Type> iterTypes;
  if (f->typeGroup()) typeGroup(f->typeGroup(), iterTypes);
  auto iters = f->iterArg();
  if (!iters.empty() && iters.size() != iterTypes.size())
    diags_.error(locOf(f->typeGroup()), "scf.for has " + std::to_string(iters.size()) +
                                            " iter_args but " + std::to_string(iterTypes.size()) +
                                            " types");
  std::vector<std::pair<size_t, Type>> viewTypes; // iter_args typed as a local view's `?` memref
  for (size_t i = 0; i < iters.size(); ++i) {
    Type t = i < iterTypes.size() ? iterTypes[i] : Type::index();
    auto v = operandValue(iters[i]->operand(), t);
    addOperand(op, v.value_or(kNoValue), locOf(iters[i]->operand()));
    if (t.kind == TypeKind::LocalView && v) {
      // The view's tile carries through; uses may keep spelling the cast's result type.
      if (!annotatedAs(*v, t))
        diags_.error(locOf(iters[i]->operand()), "iter_arg type " + toString(t) +
                                                     " names no tile: it may carry only a view " +
                                                     "memref.reinterpret_cast made with that type");
      iterTypes[i] = fn_->type(*v);
      viewTypes.emplace_back(i, t);
    }
  }
  op.regions.emplace_back();
  scopes_.emplace_back();
  Region& body = op.regions[0];
  body.args.push_back(define(f->VALUE_ID()->getText().substr(1), ivType, locOf(f->VALUE_ID())));
  for (size_t i = 0; i < iters.size(); ++i)
    body.args.push_back(define(iters[i]->VALUE_ID()->getText().substr(1),
                               i < iterTypes.size() ? iterTypes[i] : Type::index(),
                               locOf(iters[i]->VALUE_ID())));
  for (const auto& [i, t] : viewTypes)
    boundTileAnnotations_[{fn_, body.args[i + 1]}] = t;
  for (size_t i = 0; i < iters.size(); ++i)
    if (3 + i < op.operands.size() && op.operands[3 + i] != kNoValue &&
        fn_->type(op.operands[3 + i]).isTile())
      carriedFrom_[{fn_, body.args[i + 1]}] = op.operands[3 + i];
  buildRegionBody(f->region(), body, false);
  checkCarriedBases(op);
  scopes_.pop_back();
  iterTypes.resize(iters.size(), Type::index());
  defineResults(op, results, iterTypes);
  for (const auto& [i, t] : viewTypes)
    if (i < op.results.size()) boundTileAnnotations_[{fn_, op.results[i]}] = t;
}

/// A memref.reinterpret_cast in the loop body that counted its offset from the buffer an iter_arg
/// starts in assumed every iteration's view is of that buffer: the yield must keep it so.
void Builder::checkCarriedBases(const Op& loop) {
  const Region& body = loop.regions[0];
  const Op* yield =
      !body.ops.empty() && body.ops.back()->kind == OpKind::Yield ? body.ops.back().get() : nullptr;
  std::erase_if(carriedBases_, [&](const CarriedBase& c) {
    if (c.fn != fn_) return false;
    auto arg = std::find(body.args.begin() + 1, body.args.end(), c.arg);
    if (arg == body.args.end()) return false;
    const size_t k = static_cast<size_t>(arg - body.args.begin() - 1);
    if (yield && k < yield->operands.size() && bufferBase(yield->operands[k]) != c.base)
      diags_.error(c.loc, "'memref.reinterpret_cast' counts its offset from the buffer of '%" +
                              fn_->value(c.arg).name +
                              "', but the scf.for yields a view of another buffer in its place: "
                              "which buffer the offset starts from changes between iterations");
    return true;
  });
}

bool Builder::annotatedAs(ValueId v, const Type& t) const {
  if (fn_->type(v) == t) return true;
  auto it = boundTileAnnotations_.find({fn_, v});
  return it != boundTileAnnotations_.end() && it->second == t;
}

/// A region's argument types: a local view's `?` memref type carries a tile through scf.for
/// only (buildFor); results are checked where they are defined (defineResults).
void Builder::refuseViewTypes(const std::vector<Type>& types, SrcLoc loc, const char* what) {
  for (const Type& t : types)
    if (t.kind == TypeKind::LocalView)
      diags_.error(loc, std::string(what) + " input type " + toString(t) +
                            " names no tile (a memref.reinterpret_cast's view type may carry "
                            "through scf.for only)");
}

void Builder::buildIf(P::ScfIfContext* i, const std::vector<ResultName>& results) {
  Op& op = emit(OpKind::If, locOf(i->getStart()), "scf.if");
  auto c = operandValue(i->operand(), Type::scalar(isa::DType::I1));
  addOperand(op, c.value_or(kNoValue), locOf(i->operand()));
  std::vector<Type> types;
  if (i->typeGroup()) typeGroup(i->typeGroup(), types);
  op.regions.resize(2);
  auto regions = i->region();
  buildRegionBody(regions[0], op.regions[0]);
  if (regions.size() > 1)
    buildRegionBody(regions[1], op.regions[1]);
  else if (!types.empty())
    diags_.error(op.loc, "scf.if with results needs an else region");
  defineResults(op, results, types);
}

void Builder::buildWhile(P::ScfWhileContext* w, const std::vector<ResultName>& results) {
  Op& op = emit(OpKind::While, locOf(w->getStart()), "scf.while");
  std::vector<Type> inTypes, outTypes;
  if (auto* ft = w->type(); ft && ft->ARROW()) {
    for (auto* t : ft->type())
      if (auto ty = types_.read(t)) inTypes.push_back(*ty);
    typeGroup(ft->typeGroup(), outTypes);
    refuseViewTypes(inTypes, op.loc, "scf.while");
  } else {
    diags_.error(locOf(w->type()), "scf.while needs a function type '(inputs) -> (results)'");
  }
  auto iters = w->iterArg();
  if (iters.size() != inTypes.size())
    diags_.error(locOf(w->type()), "scf.while has " + std::to_string(iters.size()) +
                                       " initial values but " + std::to_string(inTypes.size()) +
                                       " input types");
  for (size_t k = 0; k < iters.size(); ++k) {
    auto v = operandValue(iters[k]->operand(), k < inTypes.size() ? inTypes[k] : Type::index());
    addOperand(op, v.value_or(kNoValue), locOf(iters[k]->operand()));
  }
  op.regions.resize(2);
  scopes_.emplace_back();
  for (size_t k = 0; k < iters.size(); ++k)
    op.regions[0].args.push_back(define(iters[k]->VALUE_ID()->getText().substr(1),
                                        k < inTypes.size() ? inTypes[k] : Type::index(),
                                        locOf(iters[k]->VALUE_ID())));
  auto regions = w->region();
  buildRegionBody(regions[0], op.regions[0], false);
  scopes_.pop_back();
  buildRegionBody(regions[1], op.regions[1]);
  defineResults(op, results, outTypes);
}

std::optional<ValueId> Builder::constant(P::LiteralContext* lit, const Type& type, SrcLoc loc) {
  std::string text = lit->getText();
  if (!checkLiteral(text, type, loc)) return std::nullopt;
  Op& op = emitBefore(OpKind::Constant, loc, "arith.constant");
  setConstant(op, normalizeLiteral(text, type), type);
  std::string name = constantName(text, type);
  ValueId v = fn_->addValue(name, type, loc);
  op.results.push_back(v);
  return v;
}

bool Builder::checkLiteral(const std::string& text, const Type& type, SrcLoc loc) {
  bool isFloatText =
      text.find_first_of(".eE") != std::string::npos && text.find("0x") == std::string::npos;
  if (type.kind == TypeKind::Vector || text.starts_with("dense")) {
    if (type.kind == TypeKind::Vector && text.starts_with("dense") && denseCountsBits(text))
      return true;
    diags_.error(loc, type.kind == TypeKind::Vector
                          ? "a vector<4xi16> constant is 'dense<[a, b, c, d]>' or 'dense<v>', "
                            "each lane -32768..65535"
                          : "a dense literal needs the type vector<4xi16>, not " + toString(type));
    return false;
  }
  if (text == "true" || text == "false") {
    if (type.kind == TypeKind::Scalar && type.elem == isa::DType::I1) return true;
    diags_.error(loc, "boolean literal used where " + toString(type) + " is expected");
    return false;
  }
  if (type.kind == TypeKind::Index || (type.kind == TypeKind::Scalar && !isa::isFloat(type.elem))) {
    if (isFloatText) {
      diags_.error(loc, "floating-point literal '" + text + "' used where " + toString(type) +
                            " is expected");
      return false;
    }
    auto v = parseInt(text);
    // A ui64 constant spans 0..2^64-1; it is kept as its 64 bits (normalizeLiteral).
    if (!v && type.kind == TypeKind::Scalar && type.elem == isa::DType::U64 &&
        obj::parseIntegerIn(text, 0, static_cast<obj::WideInt>(UINT64_MAX)))
      return true;
    if (!v) {
      diags_.error(loc, "integer literal '" + text + "' is out of range");
      return false;
    }
    if (type.kind == TypeKind::Scalar && isa::bitWidth(type.elem) < 64) {
      unsigned bits = isa::bitWidth(type.elem);
      int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << bits) - 1;
      if (*v < lo || *v > hi) {
        diags_.error(loc, "literal " + text + " does not fit in " + toString(type));
        return false;
      }
    }
    return true;
  }
  if (type.kind == TypeKind::Scalar) return true;
  diags_.error(loc, "a literal cannot have type " + toString(type));
  return false;
}

std::string Builder::normalizeLiteral(const std::string& text, const Type& type) {
  if (type.kind == TypeKind::Vector) return denseCountsText(denseCountsBits(text).value_or(0));
  bool decimalInt = !text.empty() && text.find_first_of(".eExX") == std::string::npos;
  if (type.isFloatScalar() && decimalInt) return text + ".0";
  if (type.kind == TypeKind::Scalar && type.elem == isa::DType::U64 && !parseInt(text))
    if (auto v = obj::parseIntegerIn(text, 0, static_cast<obj::WideInt>(UINT64_MAX)))
      return std::to_string(static_cast<int64_t>(static_cast<uint64_t>(*v)));
  return text;
}

std::string Builder::constantName(const std::string& text, const Type& type) {
  if (type.isFloatScalar() || text.find_first_of(".eExX") != std::string::npos || text == "true" ||
      text == "false")
    return "cst";
  std::string digits = text.front() == '-' ? "m" + text.substr(1) : text;
  return "c" + digits + (type.kind == TypeKind::Index ? "" : "_" + toString(type));
}

void Builder::buildArith(const ArithDef& def, const std::string& name, SrcLoc loc,
                         const std::string& pred, SrcLoc predLoc, Pieces& p,
                         const std::vector<ResultName>& results) {
  bool isCmp = def.cls == ArithClass::CmpI || def.cls == ArithClass::CmpF;
  std::optional<CmpPredicate> predicate;
  if (isCmp) {
    predicate = findCmpPredicate(def.cls == ArithClass::CmpF, pred);
    const bool ok = predicate.has_value();
    if (pred.empty()) {
      diags_.error(loc, "'" + name + "' needs a predicate: '" + name + " <pred>, %a, %b : T'");
      return;
    }
    if (!ok) {
      diags_.error(predLoc, "unknown predicate '" + pred + "' for '" + name + "'");
      return;
    }
  } else if (!pred.empty()) {
    diags_.error(predLoc, "unexpected '" + pred + ",' after '" + name + "'");
    return;
  }
  if (p.types.empty()) {
    diags_.error(loc, "'" + name + "' needs a type: '... : T'");
    return;
  }
  auto ty = readType(p.types.back());
  if (!ty) return;
  Type operandType = *ty, resultType = *ty;
  size_t arity = 2;
  switch (def.cls) {
  case ArithClass::CmpI:
  case ArithClass::CmpF:
    resultType = Type::scalar(isa::DType::I1);
    break;
  case ArithClass::Select:
    arity = 3;
    break;
  case ArithClass::FloatUnary:
    arity = 1;
    break;
  case ArithClass::Cast:
    arity = 1;
    if (!p.toType) {
      diags_.error(p.typesLoc, "'" + name + "' needs '... : SrcType to DstType'");
      return;
    }
    if (auto to = readType(p.toType))
      resultType = *to;
    else
      return;
    break;
  default:
    break;
  }
  if (p.operands.size() != arity) {
    diags_.error(loc, "'" + name + "' expects " + std::to_string(arity) + " operands, found " +
                          std::to_string(p.operands.size()));
    return;
  }
  Op& op = emit(OpKind::Arith, loc, name);
  op.arith = def.op;
  if (isCmp) op.predicate = *predicate;
  for (size_t i = 0; i < p.operands.size(); ++i) {
    Type want =
        (def.cls == ArithClass::Select && i == 0) ? Type::scalar(isa::DType::I1) : operandType;
    ValueId v = scalarOperand(p.operands[i], want);
    addOperand(op, v, p.operands[i].loc);
    if (v != kNoValue && !(fn_->type(v) == want)) {
      diags_.error(p.operands[i].loc, "operand '%" + fn_->value(v).name + "' has type " +
                                          toString(fn_->type(v)) + " but '" + name + "' expects " +
                                          toString(want));
      diags_.note(fn_->value(v).loc, "'%" + fn_->value(v).name + "' is defined here");
    }
  }
  if (def.cls == ArithClass::IntBinary && !operandType.isIntLike())
    diags_.error(p.typesLoc,
                 "'" + name + "' needs an integer or index type, found " + toString(operandType));
  if ((def.cls == ArithClass::FloatBinary || def.cls == ArithClass::FloatUnary) &&
      !operandType.isFloatScalar())
    diags_.error(p.typesLoc,
                 "'" + name + "' needs a floating-point type, found " + toString(operandType));
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {resultType});
}

ValueId Builder::scalarOperand(const OperandRef& r, const Type& want) {
  if (r.kind == OperandRef::Literal) return constant(r.lit, want, r.loc).value_or(kNoValue);
  if (r.kind == OperandRef::Memory) {
    diags_.error(r.loc, "a memory operand is not allowed here");
    return kNoValue;
  }
  return use(r);
}

/// An operand that is an index by the op's definition (an offset, a size, a valid shape).
ValueId Builder::indexOperand(const OperandRef& r) {
  ValueId v = scalarOperand(r, Type::index());
  return v == kNoValue ? v : asIndex(v, r.loc);
}

/// PTOAS's index-input compatibility: an op operand that is an index (offsets, sizes, valid
/// shapes, scalar addresses) may be given as an i8..i64 value; it is read through an
/// `arith.index_cast` placed before the op. The arith ops keep MLIR's exact types.
ValueId Builder::asIndex(ValueId v, SrcLoc loc) {
  const Type t = fn_->type(v);
  if (t.kind != TypeKind::Scalar || !t.isIntLike() || t.elem == isa::DType::I1) return v;
  // A constant stays a constant, so what needs one (a dimension number, a static offset) has it.
  if (auto c = integerConstant(v)) return constantInt(*c, Type::index(), loc);
  Op& cast = emitBefore(OpKind::Arith, loc, "arith.index_cast");
  cast.arith = ArithOp::IndexCast;
  addOperand(cast, v, loc);
  ValueId id = fn_->addValue(fn_->value(v).name + "_index", Type::index(), loc);
  cast.results.push_back(id);
  return id;
}

void Builder::buildConstant(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Literal) {
    diags_.error(loc, "'arith.constant' expects one literal: 'arith.constant 0 : index'");
    return;
  }
  P::LiteralContext* lit = p.operands[0].lit;
  std::string text = lit->getText();
  Type type;
  if (p.types.empty()) {
    if (text != "true" && text != "false") {
      diags_.error(loc,
                   "'arith.constant " + text + "' needs a type: 'arith.constant " + text + " : T'");
      return;
    }
    type = Type::scalar(isa::DType::I1);
  } else if (auto t = readType(p.types[0])) {
    type = *t;
  } else {
    return;
  }
  if (!checkLiteral(text, type, p.operands[0].loc)) return;
  Op& op = emit(OpKind::Constant, loc, "arith.constant");
  setConstant(op, normalizeLiteral(text, type), type);
  if (expectResults("arith.constant", loc, results, 1)) defineResults(op, results, {type});
}

void Builder::buildCondition(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  expectResults("scf.condition", loc, results, 0);
  Op& op = emit(OpKind::Condition, loc, "scf.condition");
  if (p.parens.empty()) {
    diags_.error(loc, "expected 'scf.condition(%cond) %args : types'");
    return;
  }
  Pieces cond = collectPieces(piecesOf(p.parens[0]));
  if (cond.operands.size() != 1) {
    diags_.error(loc, "scf.condition takes one condition operand");
    return;
  }
  addOperand(op, scalarOperand(cond.operands[0], Type::scalar(isa::DType::I1)),
             cond.operands[0].loc);
  for (auto& r : p.operands)
    addOperand(op, scalarOperand(r, Type::index()), r.loc);
}

ValueId Builder::constantInt(int64_t v, const Type& type, SrcLoc loc) {
  Op& op = emitBefore(OpKind::Constant, loc, "arith.constant");
  setConstant(op, std::to_string(v), type);
  ValueId id = fn_->addValue(constantName(std::to_string(v), type), type, loc);
  op.results.push_back(id);
  return id;
}

void Builder::buildLoadScalar(const std::string& name, SrcLoc loc, Pieces& p,
                              const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 1 || p.operands[0].kind != OperandRef::Memory ||
      p.operands[0].indices.size() != 1 || p.arrowTypes.size() != 1) {
    diags_.error(loc, "expected '" + name + " %ptr[%offset] : !pto.ptr<T> -> T'");
    return;
  }
  auto type = readType(p.arrowTypes[0]);
  if (!type) return;
  Op& op = emit(OpKind::LoadScalar, loc, name);
  addOperand(op, use(p.operands[0]), p.operands[0].loc);
  addOperand(op, indexOperand(p.operands[0].indices[0]), p.operands[0].indices[0].loc);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

void Builder::buildStoreScalar(const std::string& name, SrcLoc loc, Pieces& p,
                               const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types})) return;
  expectResults(name, loc, results, 0);
  if (p.operands.size() != 2 || p.operands[1].kind != OperandRef::Memory ||
      p.operands[1].indices.size() != 1) {
    diags_.error(loc, "expected '" + name + " %value, %ptr[%offset] : !pto.ptr<T>, T'");
    return;
  }
  Type valueType = Type::scalar(isa::DType::F32);
  if (p.types.size() == 2)
    if (auto t = readType(p.types[1])) valueType = *t;
  Op& op = emit(OpKind::StoreScalar, loc, name);
  addOperand(op, scalarOperand(p.operands[0], valueType), p.operands[0].loc);
  addOperand(op, use(p.operands[1]), p.operands[1].loc);
  addOperand(op, indexOperand(p.operands[1].indices[0]), p.operands[1].indices[0].loc);
}

void Builder::buildAddPtr(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 2) {
    diags_.error(loc, "expected '" + name + " %ptr, %offset : P -> P'");
    return;
  }
  Op& op = emit(OpKind::AddPtr, loc, name);
  ValueId ptr = use(p.operands[0]);
  addOperand(op, ptr, p.operands[0].loc);
  addOperand(op, indexOperand(p.operands[1]), p.operands[1].loc);
  if (ptr == kNoValue) return;
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {fn_->type(ptr)});
}

/// PTOAS's `pto.castptr %v : A -> B` (and its two halves `pto.inttoptr` / `pto.ptrtoint`): a GM
/// pointer from a signless i64 address, the address of a GM pointer as an i64, or a GM pointer
/// to another element type. Registers hold the address's bits either way, so it is
/// arith.bitcast under the pointer's type. Local-memory pointers are refused where their type
/// is read.
void Builder::buildCastPtr(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Operand, PieceKind::Types, PieceKind::Arrow}))
    return;
  if (p.operands.size() != 1 || p.types.size() != 1 || p.arrowTypes.size() != 1) {
    diags_.error(loc, "expected '" + name + " %value : SrcType -> DstType'");
    return;
  }
  auto from = readType(p.types[0]), to = readType(p.arrowTypes[0]);
  if (!from || !to) return;
  const bool fromPtr = from->kind == TypeKind::Ptr, toPtr = to->kind == TypeKind::Ptr;
  const bool fromAddr = from->kind == TypeKind::Scalar && from->elem == isa::DType::I64;
  const bool toAddr = to->kind == TypeKind::Scalar && to->elem == isa::DType::I64;
  std::string problem;
  if (!fromPtr && !toPtr)
    problem = "casts to or from a !pto.ptr";
  else if (!fromPtr && !fromAddr)
    problem = "takes an integer address as a signless i64, found " + toString(*from);
  else if (!toPtr && !toAddr)
    problem = "gives an integer address as a signless i64, found " + toString(*to);
  else if ((name == "pto.inttoptr" && !toPtr) || (name == "pto.ptrtoint" && !fromPtr))
    problem = name == "pto.inttoptr" ? "makes a !pto.ptr" : "reads a !pto.ptr";
  if (!problem.empty()) {
    diags_.error(p.typesLoc, "'" + name + "' " + problem);
    return;
  }
  ValueId v = use(p.operands[0]);
  if (v == kNoValue) return;
  if (!(fn_->type(v) == *from)) {
    diags_.error(p.operands[0].loc, "'%" + p.operands[0].name + "' has type " +
                                        toString(fn_->type(v)) + ", not " + toString(*from));
    return;
  }
  Op& op = emit(OpKind::Arith, loc, "arith.bitcast");
  op.arith = ArithOp::Bitcast;
  addOperand(op, v, p.operands[0].loc);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*to});
}

void Builder::buildBlockInfo(const std::string& name, SrcLoc loc, Pieces& p,
                             const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {})) return;
  if (!p.operands.empty()) diags_.error(p.operands[0].loc, "'" + name + "' takes no operands");
  Op& op = emit(OpKind::BlockInfo, loc, name);
  if (expectResults(name, loc, results, 1))
    defineResults(op, results, {Type::scalar(isa::DType::I64)});
}

void Builder::buildTGetVal(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Call, PieceKind::OutsType}, {"ins"})) return;
  auto* ins = p.call("ins");
  if (!ins || !p.outsType) {
    diags_.error(loc, "expected '" + name + " ins(%tile, %offset : T, index) outs : T'");
    return;
  }
  Pieces in = collectPieces(piecesOf(ins));
  auto type = readType(p.outsType);
  if (in.operands.size() != 2 || !type) {
    diags_.error(loc, "expected '" + name + " ins(%tile, %offset : T, index) outs : T'");
    return;
  }
  Op& op = emit(OpKind::TGetVal, loc, name);
  addOperand(op, use(in.operands[0]), in.operands[0].loc);
  addOperand(op, indexOperand(in.operands[1]), in.operands[1].loc);
  if (expectResults(name, loc, results, 1)) defineResults(op, results, {*type});
}

void Builder::buildPrint(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results) {
  if (!onlyPieces(diags_, p, name, {PieceKind::Call}, {"ins"})) return;
  expectResults(name, loc, results, 0);
  Op& op = emit(OpKind::Print, loc, name);
  if (auto* ins = p.call("ins")) {
    Pieces in = collectPieces(piecesOf(ins));
    for (auto& r : in.operands) {
      if (r.kind == OperandRef::Literal && r.lit->STRING()) {
        op.attrs.push_back({"format", r.lit->getText()});
        continue;
      }
      addOperand(op, scalarOperand(r, Type::index()), r.loc);
    }
  }
}

} // namespace pto::as::detail
