// Module structure: modules and their attributes, functions, kernels and fragments, values
// and scopes, regions and statements, calls and returns.
#include "asm/parse/BuilderImpl.h"
#include "asm/parse/Locations.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace pto::as::detail {

namespace {
/// The functions of the module being built, by name, for beginFunction's redefinition check
/// (it looked at every earlier function: 10k functions 4.9 s, 20k 30 s). Reset by begin(),
/// indexed as functions are added; a hit is checked against the module's list.
struct FunctionIndex {
  const Module* mod = nullptr;
  size_t indexed = 0;
  std::unordered_map<std::string, size_t> byName; // the first definition's position

  void reset(const Module* m) {
    mod = m;
    indexed = 0;
    byName.clear();
  }
  const Function* find(const Module& m, const std::string& name) {
    const auto& fs = m.functions;
    if (mod != &m || indexed > fs.size()) reset(&m);
    for (; indexed < fs.size(); ++indexed)
      byName.try_emplace(fs[indexed]->name, indexed);
    auto it = byName.find(name);
    if (it == byName.end() || it->second >= fs.size() || fs[it->second]->name != name)
      return nullptr;
    return fs[it->second].get();
  }
};
thread_local FunctionIndex functionIndex;
} // namespace

void Builder::begin() {
  mod_ = std::make_unique<Module>();
  functionIndex.reset(mod_.get());
  mod_->fileName = src_.name();
}

void Builder::buildStreamed(antlr4::ParserRuleContext* f) {
  streamed_.insert(f);
  if (f->getRuleIndex() == P::RuleFuncOp)
    buildFunc(static_cast<P::FuncOpContext*>(f));
  else
    buildKernel(static_cast<P::KernelOpContext*>(f));
}

void Builder::typeAliasStreamed(P::TypeAliasContext* a) {
  streamed_.insert(a);
  types_.defineAlias(a->BANG_ID()->getText(), a->type(), locOf(a->BANG_ID()));
}

void Builder::moduleAttrsStreamed(P::ModuleOpContext* m) {
  streamed_.insert(m);
  readModuleAttrs(m->attrDict());
}

void Builder::fragmentStmtStreamed(P::StmtContext* s) {
  if (!fragmentOpen_) beginFragment(s);
  buildStmt(s);
}

std::unique_ptr<Module> Builder::finish(P::FileContext* file) {
  std::vector<P::StmtContext*> fragmentStmts;
  for (auto* item : file->item())
    buildItem(item, fragmentStmts);
  if (fragmentOpen_) {
    for (auto* s : fragmentStmts) // none: a file is streamed only when it has nothing else
      buildStmt(s);
    endFragment();
  } else if (!fragmentStmts.empty()) {
    buildFragment(fragmentStmts);
  }
  resolveLocations(*mod_, diags_);
  return std::move(mod_);
}

void Builder::buildItem(P::ItemContext* item, std::vector<P::StmtContext*>& fragment) {
  if (auto* m = item->moduleOp()) {
    if (m->attrDict() && !streamed_.contains(m)) readModuleAttrs(m->attrDict());
    if (m->LOC() && mod_->frontLoc == 0) mod_->frontLoc = recordLoc(m->LOC());
    for (auto* sub : m->item())
      buildItem(sub, fragment);
  } else if (auto* f = item->funcOp()) {
    if (!streamed_.contains(f)) buildFunc(f);
  } else if (auto* k = item->kernelOp()) {
    if (!streamed_.contains(k)) buildKernel(k);
  } else if (auto* t = item->typeAlias()) {
    if (!streamed_.contains(t)) typeAliasStreamed(t);
  } else if (auto* a = item->locAlias()) {
    mod_->locAliases.push_back({a->HASH_ID()->getText().substr(1), recordLoc(a->LOC())});
  } else if (auto* s = item->stmt()) {
    fragment.push_back(s);
  }
}

uint32_t Builder::recordLoc(antlr4::tree::TerminalNode* loc) {
  if (!loc) return 0;
  return mod_->addFrontLoc(loc->getText(), locOf(loc));
}

void Builder::readModuleAttrs(P::AttrDictContext* dict) {
  for (auto* e : dict->attrEntry()) {
    std::string key = entryKey(e);
    std::string value = entryValue(e);
    mod_->attrs.push_back({key, value});
    if (key == "pto.target_arch" || key == "pto.device-spec") {
      auto word = enumWord(e->attrValue());
      std::optional<isa::Arch> arch;
      if (word && key == "pto.target_arch") arch = isa::parseArch(*word);
      if (word && key == "pto.device-spec")
        arch = (word->starts_with("Ascend950") || word->starts_with("Ascend910_95"))
                   ? isa::Arch::A5
                   : isa::Arch::A2A3;
      if (!arch) {
        diags_.error(locOf(e), "unknown target arch '" + value +
                                   "' (expected \"a2a3\", \"a2\", \"a3\" or \"a5\")");
        continue;
      }
      mod_->targetArch = arch;
      mod_->targetArchLoc = locOf(e);
    }
  }
}

std::string Builder::entryValue(P::AttrEntryContext* e) {
  if (!e->attrValue()) return "";
  std::string v = canonicalText(e->attrValue());
  if (e->type()) v += " : " + canonicalText(e->type());
  return v;
}

std::string Builder::entryKey(P::AttrEntryContext* e) {
  std::string k = e->word() ? e->word()->getText() : e->STRING()->getText();
  if (k.size() >= 2 && k.front() == '"') k = k.substr(1, k.size() - 2);
  return k;
}

std::vector<NamedAttr> Builder::readAttrs(P::AttrDictContext* dict) {
  std::vector<NamedAttr> out;
  if (!dict) return out;
  for (auto* e : dict->attrEntry())
    out.push_back({entryKey(e), entryValue(e)});
  return out;
}

isa::Arch Builder::arch() const {
  if (archFlag_) return *archFlag_;
  return mod_->targetArch.value_or(isa::Arch::A2A3);
}

Builder::Declared Builder::signatureOf(const Function& f) {
  Declared d;
  for (ValueId a : f.body.args)
    d.args.push_back(f.type(a));
  d.results = f.resultTypes;
  d.loc = f.loc;
  return d;
}

Function* Builder::beginFunction(std::string name, SrcLoc loc, bool declaration) {
  redeclared_.reset();
  definedEarlier_ = nullptr;
  Function* prev = const_cast<Function*>(functionIndex.find(*mod_, name));
  if (prev && prev->isDeclaration) {
    redeclared_ = signatureOf(*prev);
    *prev = Function{};
    fn_ = prev;
  } else {
    if (prev && declaration) {
      redeclared_ = signatureOf(*prev);
      definedEarlier_ = prev;
    } else if (prev) {
      diags_.error(loc, "redefinition of function '@" + name + "'");
      diags_.note(prev->loc, "previous definition is here");
    }
    mod_->functions.push_back(std::make_unique<Function>());
    fn_ = mod_->functions.back().get();
  }
  fn_->name = std::move(name);
  fn_->loc = loc;
  scopes_.assign(1, {});
  events_.clear();
  pendingPlacements_.clear();
  return fn_;
}

void Builder::readArgs(const std::vector<P::FuncArgContext*>& args, Region& region) {
  unsigned index = 0;
  for (auto* a : args) {
    auto ty = types_.read(a->type());
    if (ty && ty->kind == TypeKind::LocalView) {
      diags_.error(locOf(a->type()),
                   "a local memref parameter of type " + toString(*ty) +
                       " is not supported: a tile parameter has a static shape and the "
                       "row-major layout (a ? dimension or other strides name no tile)");
      ty.reset();
    } else if (ty && ty->strided) {
      diags_.error(locOf(a->type()),
                   "a memref parameter whose layout has other strides or an offset is not "
                   "supported: memrefs are contiguous and row-major (memref.reinterpret_cast "
                   "makes a strided view of one)");
      ty.reset();
    }
    if (!ty) {
      ++index;
      continue;
    }
    std::string name =
        a->VALUE_ID() ? a->VALUE_ID()->getText().substr(1) : "arg" + std::to_string(index);
    SrcLoc loc = a->VALUE_ID() ? locOf(a->VALUE_ID()) : locOf(a->type());
    region.args.push_back(define(name, *ty, loc));
    fn_->values[region.args.back()].frontLoc = recordLoc(a->LOC());
    ++index;
  }
}

void Builder::checkRedeclaration(const Function& fn) {
  if (!redeclared_) return;
  const Declared now = signatureOf(fn);
  if (now.args == redeclared_->args && now.results == redeclared_->results) return;
  diags_.error(fn.loc, "'@" + fn.name + "' is declared again with another signature");
  diags_.note(redeclared_->loc, "previous declaration is here");
}

Function* Builder::beginFuncHeader(P::FuncOpContext* f) {
  std::string name = f->SYMBOL()->getText().substr(1);
  Function* fn = beginFunction(name, locOf(f->SYMBOL()), !f->region());
  fn->isPrivate = f->visibility && f->visibility->getText() == "private";
  fn->attrs = readAttrs(f->attrDict());
  if (auto* r = f->funcResults()) {
    std::vector<P::TypeContext*> rts;
    if (r->type().size() == 1 && r->children.size() == 2)
      rts.push_back(r->type(0));
    else
      rts = r->type();
    for (auto* t : rts)
      if (auto ty = types_.read(t)) fn->resultTypes.push_back(*ty);
  }
  readArgs(f->funcArg(), fn->body);
  checkRedeclaration(*fn);
  return fn;
}

Function* Builder::beginKernelHeader(P::KernelOpContext* k) {
  Function* fn = beginFunction(k->SYMBOL()->getText().substr(1), locOf(k->SYMBOL()));
  fn->attrs = readAttrs(k->attrDict());
  if (!fn->hasAttr("pto.entry")) fn->attrs.push_back({"pto.entry", ""});
  readArgs(k->funcArg(), fn->body);
  checkRedeclaration(*fn);
  return fn;
}

void Builder::buildFunc(P::FuncOpContext* f) {
  Function* fn = beginFuncHeader(f);
  fn->frontLoc = recordLoc(f->LOC());
  if (!f->region()) {
    if (definedEarlier_) { // declared after its definition: the definition stands
      mod_->functions.pop_back();
      fn_ = definedEarlier_;
      definedEarlier_ = nullptr;
      return;
    }
    fn->isDeclaration = true;
    readFunctionAttrs(); // a declaration's flags reach its object too
    return;
  }
  buildFunctionBody(f->region());
}

void Builder::buildKernel(P::KernelOpContext* k) {
  Function* fn = beginKernelHeader(k);
  fn->frontLoc = recordLoc(k->LOC());
  buildFunctionBody(k->region());
}

void Builder::buildFunctionBody(P::RegionContext* r) {
  if (hasBlocks(r))
    buildBlocks(r, fn_->body, true, fn_->resultTypes);
  else
    buildRegionBody(r, fn_->body, false);
  finishFunction();
}

void Builder::bodyStreamBegin(antlr4::ParserRuleContext* f) {
  streamed_.insert(f);
  if (f->getRuleIndex() == P::RuleFuncOp)
    beginFuncHeader(static_cast<P::FuncOpContext*>(f));
  else
    beginKernelHeader(static_cast<P::KernelOpContext*>(f));
  // What buildRegionBody does around the statements of a function's body.
  bodyEnclosingBlock_ = curBlock_;
  curBlock_ = nullptr;
  regions_.push_back(&fn_->body);
}

void Builder::bodyStmtStreamed(P::StmtContext* s) {
  buildStmt(s);
}

void Builder::bodyStreamEnd(antlr4::ParserRuleContext* f) {
  regions_.pop_back();
  curBlock_ = bodyEnclosingBlock_;
  // The function's location follows its body: it is read only now.
  auto* loc = f->getRuleIndex() == P::RuleFuncOp ? static_cast<P::FuncOpContext*>(f)->LOC()
                                                 : static_cast<P::KernelOpContext*>(f)->LOC();
  fn_->frontLoc = recordLoc(loc);
  finishFunction();
}

void Builder::buildFragment(const std::vector<P::StmtContext*>& stmts) {
  beginFragment(stmts.front());
  for (auto* s : stmts)
    buildStmt(s);
  endFragment();
}

void Builder::beginFragment(P::StmtContext* first) {
  std::string stem = src_.name();
  if (auto slash = stem.find_last_of('/'); slash != std::string::npos)
    stem = stem.substr(slash + 1);
  if (auto dot = stem.find('.'); dot != std::string::npos) stem = stem.substr(0, dot);
  std::string name;
  for (char c : stem)
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "fragment_" + name;
  Function* fn = beginFunction(name, locOf(first));
  fn->isFragment = true;
  fn->attrs.push_back({"pto.entry", ""});
  regions_.push_back(&fn->body);
  fragmentOpen_ = true;
}

void Builder::endFragment() {
  regions_.pop_back();
  finishFunction();
  fragmentOpen_ = false;
}

void Builder::readFunctionAttrs() {
  fn_->isEntry = fn_->hasAttr("pto.entry");
  for (const NamedAttr& a : fn_->attrs)
    if (a.key == "pto.kernel_kind")
      fn_->kernelKind = a.value.find("cube") != std::string::npos ? Function::KernelKind::Cube
                        : a.value.find("vector") != std::string::npos
                            ? Function::KernelKind::Vector
                            : Function::KernelKind::Invalid;
}

void Builder::finishFunction() {
  resolveEvents();
  assignFrontendFlags();
  readFunctionAttrs();
  for (auto& [name, p] : pendingPlacements_)
    diags_.error(p.loc, "'%" + name + "' is placed with tassign but never used as a tile");
  pendingPlacements_.clear();
  fn_ = nullptr;
}

ValueId Builder::define(const std::string& name, Type type, SrcLoc loc) {
  auto& scope = scopes_.back();
  if (auto it = scope.find(name); it != scope.end()) {
    diags_.error(loc, "redefinition of value '%" + name + "'");
    diags_.note(fn_->value(it->second).loc, "previous definition is here");
  }
  ValueId id = fn_->addValue(name, std::move(type), loc);
  scope[name] = id;
  return id;
}

std::optional<ValueId> Builder::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto f = it->find(name); f != it->end()) return f->second;
  return std::nullopt;
}

ValueId Builder::use(const OperandRef& r) {
  if (auto id = lookup(r.name)) return *id;
  diags_.error(r.loc, "use of undefined value '%" + r.name + "'");
  return kNoValue;
}

bool Builder::definedByConstant(ValueId v) const {
  if (v == kNoValue) return false;
  for (const Region* r : regions_)
    for (const auto& op : r->ops)
      if (op->kind == OpKind::Constant &&
          std::find(op->results.begin(), op->results.end(), v) != op->results.end())
        return true;
  return false;
}

std::optional<std::pair<int64_t, int64_t>> Builder::constantAllocValid(ValueId tile) const {
  const Op* alloc = nullptr;
  for (const Region* r : regions_)
    for (const auto& op : r->ops) {
      const bool defines = !op->results.empty() && op->results[0] == tile;
      if (defines && op->kind == OpKind::AllocTile) alloc = op.get();
      if (op->kind == OpKind::SetValidShape && !op->operands.empty() && op->operands[0] == tile)
        return std::nullopt;
    }
  // ints: whether addr, valid_row and valid_col are given, their operands in that order.
  if (!alloc || alloc->ints.size() < 3 || !alloc->ints[1] || !alloc->ints[2]) return std::nullopt;
  const size_t row = alloc->ints[0] ? 1 : 0;
  const auto rows = integerConstant(alloc->operands[row]);
  const auto cols = integerConstant(alloc->operands[row + 1]);
  if (!rows || !cols || *rows <= 0 || *cols <= 0) return std::nullopt;
  return std::pair{*rows, *cols};
}

std::optional<int64_t> Builder::integerConstant(ValueId v) const {
  if (v == kNoValue || !fn_->type(v).isIntLike()) return std::nullopt;
  for (const Region* r : regions_)
    for (const auto& op : r->ops)
      if (op->kind == OpKind::Constant && !op->results.empty() && op->results[0] == v)
        return op->constant.kind == ConstantValue::Kind::Int ? op->constant.integer()
                                                             : std::nullopt;
  return std::nullopt;
}

namespace {
/// The kinds whose ops are told apart by name (asm/ir/NamedOps.def).
bool namedOpKind(OpKind k) {
  return k == OpKind::Section || k == OpKind::BlockInfo || k == OpKind::CoreSync ||
         k == OpKind::Signal || k == OpKind::Print;
}
} // namespace

Op& Builder::emit(OpKind kind, SrcLoc loc, std::string name) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->loc = loc;
  op->name = std::move(name);
  op->named = namedOpKind(kind) ? findNamedOp(op->name) : NamedOp::None;
  op->frontLoc = curFrontLoc_;
  cur().ops.push_back(std::move(op));
  building_ = cur().ops.back().get();
  return *cur().ops.back();
}

Op& Builder::emitBefore(OpKind kind, SrcLoc loc, std::string name) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->loc = loc;
  op->name = std::move(name);
  op->named = namedOpKind(kind) ? findNamedOp(op->name) : NamedOp::None;
  op->frontLoc = curFrontLoc_;
  auto& ops = cur().ops;
  if (building_ && !ops.empty() && ops.back().get() == building_) {
    ops.insert(ops.end() - 1, std::move(op));
    return *ops[ops.size() - 2];
  }
  ops.push_back(std::move(op));
  return *ops.back();
}

void Builder::addOperand(Op& op, ValueId v, SrcLoc loc) {
  op.operands.push_back(v);
  op.operandLocs.push_back(loc);
}

void Builder::buildRegionBody(P::RegionContext* r, Region& region, bool newScope) {
  if (hasBlocks(r)) {
    diags_.error(locOf(r->getStart()), "this region holds one block: ^bb labels and cf branches "
                                       "belong in a function body or scf.execute_region");
    return;
  }
  CfgBlock* enclosing = curBlock_; // a cf branch in this region is not its block's terminator
  curBlock_ = nullptr;
  if (newScope) scopes_.emplace_back();
  regions_.push_back(&region);
  if (auto* label = ruleChild<P::BlockLabelContext>(r, P::RuleBlockLabel))
    readArgs(label->funcArg(), region);
  for (antlr4::tree::ParseTree* c : r->children)
    if (!isToken(c)) {
      auto* rule = static_cast<antlr4::ParserRuleContext*>(c);
      if (rule->getRuleIndex() == P::RuleStmt) buildStmt(static_cast<P::StmtContext*>(rule));
    }
  regions_.pop_back();
  if (newScope) scopes_.pop_back();
  curBlock_ = enclosing;
}

std::vector<Builder::ResultName> Builder::resultNames(P::ResultListContext* rl) {
  std::vector<ResultName> out;
  if (!rl) return out;
  for (auto* g : rl->resultGroup()) {
    std::string base = g->VALUE_ID()->getText().substr(1);
    SrcLoc loc = locOf(g->VALUE_ID());
    if (g->INT()) {
      auto n = parseInt(g->INT()->getText());
      if (!n || *n < 1 || *n > 64) {
        diags_.error(locOf(g->INT()), "invalid result count");
        continue;
      }
      for (int64_t i = 0; i < *n; ++i)
        out.push_back({base + "#" + std::to_string(i), loc});
    } else {
      out.push_back({base, loc});
    }
  }
  return out;
}

void Builder::defineResults(Op& op, const std::vector<ResultName>& names,
                            const std::vector<Type>& types) {
  for (const Type& t : types)
    if (t.kind == TypeKind::LocalView) {
      // Only memref.reinterpret_cast (and scf.for carrying its view) give such a type a tile.
      diags_.error(op.loc, "'" + opLabel(op) + "' result type " + toString(t) +
                               " names no tile: a local memref with ? dimensions or other "
                               "strides types only a memref.reinterpret_cast of a local buffer");
      resultsRejected_ = true;
      return;
    }
  if (names.empty() && op.kind == OpKind::Call) {
    // MLIR lets an op leave its results unnamed; PTOAS's tests call a function for its effect
    // that way (`func.call @f() : () -> i64`). Such results are values no text can refer to,
    // named for printing only. Other ops keep the error below: a result nothing can use is a
    // mistake in an op that has no effect besides its results.
    for (const Type& t : types)
      op.results.push_back(
          fn_->addValue("$unused" + std::to_string(fn_->values.size()), t, op.loc));
    return;
  }
  if (names.size() != types.size()) {
    resultsRejected_ = true;
    SrcLoc loc = names.empty() ? op.loc : names.front().loc;
    diags_.error(loc, "'" + opLabel(op) + "' produces " + std::to_string(types.size()) +
                          " result(s) but " + std::to_string(names.size()) + " name(s) are given");
    return;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    op.results.push_back(define(names[i].name, types[i], names[i].loc));
    if (names[i].name.ends_with("#0"))
      scopes_.back()[names[i].name.substr(0, names[i].name.size() - 2)] = op.results.back();
  }
}

void Builder::buildStmt(P::StmtContext* s) {
  // Every op the statement makes (its materialised constants too) carries its location; the
  // statements of its regions carry their own.
  const uint32_t enclosing = curFrontLoc_;
  curFrontLoc_ = recordLoc(s->LOC());
  buildStmtBody(s);
  curFrontLoc_ = enclosing;
}

void Builder::buildStmtBody(P::StmtContext* s) {
  building_ = nullptr;
  // One pass over the children for the statement's parts (see ruleChild).
  P::ResultListContext* resultList = nullptr;
  antlr4::ParserRuleContext* body = nullptr;
  for (antlr4::tree::ParseTree* c : s->children) {
    if (isToken(c)) continue;
    auto* rule = static_cast<antlr4::ParserRuleContext*>(c);
    if (rule->getRuleIndex() == P::RuleResultList)
      resultList = static_cast<P::ResultListContext*>(rule);
    else
      body = rule;
  }
  const size_t kind = body ? body->getRuleIndex() : size_t{P::RuleGenericOp};
  if (kind == P::RuleSection) {
    auto* sec = static_cast<P::SectionContext*>(body);
    Op& op = emit(OpKind::Section, locOf(sec->kind), sec->kind->getText());
    op.regions.emplace_back();
    buildRegionBody(sec->region(), op.regions[0]);
    return;
  }
  if (kind == P::RuleBlockInsn) {
    auto* b = static_cast<P::BlockInsnContext*>(body);
    diags_.error(locOf(b->BLOCK_MNEMONIC()),
                 "canonical block assembly ('" + b->BLOCK_MNEMONIC()->getText() +
                     "') cannot be mixed with PTO source operations; assemble it on its own");
    return;
  }
  auto results = resultNames(resultList);
  if (kind == P::RuleScfFor) return buildFor(static_cast<P::ScfForContext*>(body), results);
  if (kind == P::RuleScfIf) return buildIf(static_cast<P::ScfIfContext*>(body), results);
  if (kind == P::RuleScfWhile) return buildWhile(static_cast<P::ScfWhileContext*>(body), results);
  if (kind == P::RuleScfExecute)
    return buildExecuteRegion(static_cast<P::ScfExecuteContext*>(body), results);
  resultsRejected_ = false;
  buildGeneric(static_cast<P::GenericOpContext*>(body), results);
  dropOpWithRejectedResults();
}

// An op whose result names were rejected (reported) defines none of its values; it leaves the IR
// so that no later pass meets an op without the results its kind promises (an alloc_tile
// written without a name once crashed the verifier).
void Builder::dropOpWithRejectedResults() {
  if (!resultsRejected_ || !building_ || !building_->results.empty() || !building_->regions.empty())
    return;
  auto& ops = cur().ops;
  if (!ops.empty() && ops.back().get() == building_) {
    ops.pop_back();
    building_ = nullptr;
  }
}

bool Builder::expectResults(const std::string& name, SrcLoc loc,
                            const std::vector<ResultName>& results, size_t n) {
  if (results.size() == n) return true;
  resultsRejected_ = true;
  diags_.error(results.empty() ? loc : results.front().loc,
               "'" + name + "' produces " + std::to_string(n) + " result(s) but " +
                   std::to_string(results.size()) + " name(s) are given");
  return false;
}

void Builder::buildTerminator(OpKind kind, const std::string& name, SrcLoc loc, Pieces& p,
                              const std::vector<ResultName>& results) {
  expectResults(name, loc, results, 0);
  Op& op = emit(kind, loc, kind == OpKind::Return ? "return" : "scf.yield");
  for (auto& r : p.operands)
    addOperand(op, scalarOperand(r, Type::index()), r.loc);
  checkAnnotatedTypes(op, p);
}

void Builder::checkAnnotatedTypes(Op& op, Pieces& p) {
  if (p.types.empty()) return;
  if (p.types.size() != op.operands.size()) {
    diags_.error(p.typesLoc, "'" + op.name + "' has " + std::to_string(op.operands.size()) +
                                 " operand(s) but " + std::to_string(p.types.size()) + " type(s)");
    return;
  }
  for (size_t i = 0; i < p.types.size(); ++i) {
    auto t = readType(p.types[i]);
    ValueId v = op.operands[i];
    if (!t || v == kNoValue) continue;
    if (!annotatedAs(v, *t)) {
      diags_.error(locOf(p.types[i]), "type " + toString(*t) + " does not match operand '%" +
                                          fn_->value(v).name + "' of type " +
                                          toString(fn_->type(v)));
      diags_.note(fn_->value(v).loc, "'%" + fn_->value(v).name + "' is defined here");
    }
  }
}

void Builder::buildCall(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results) {
  if (p.symbols.empty() || p.parens.empty()) {
    diags_.error(loc, "expected 'func.call @callee(%args) : (types) -> results'");
    return;
  }
  Pieces args = collectPieces(piecesOf(p.parens[0]));
  args.arrowTypes = p.arrowTypes;
  buildCallTo(p.symbols[0]->SYMBOL()->getText().substr(1), locOf(p.symbols[0]->SYMBOL()), loc, args,
              results);
}

void Builder::buildCallTo(const std::string& callee, SrcLoc calleeLoc, SrcLoc loc, Pieces& args,
                          const std::vector<ResultName>& results) {
  Op& op = emit(OpKind::Call, loc, callee);
  op.typeLoc = calleeLoc;
  for (auto& r : args.operands)
    addOperand(op, scalarOperand(r, Type::index()), r.loc);
  std::vector<Type> rts;
  for (auto* t : args.arrowTypes)
    if (auto ty = readType(t)) rts.push_back(*ty);
  defineResults(op, results, rts);
}

} // namespace pto::as::detail
