// Calls that pass or return tiles (PTOAS's `func.func @f(%t: !pto.tile_buf<...>)`) are inlined
// before lowering (docs/abi.md, "Tiles across calls"). A tile is a descriptor of its function's
// table placed by the linker; a callee cannot name the caller's descriptor, and a tile's address
// is not known until link time. Inlined, the callee's ops use the caller's tile itself, with its
// placement and its valid shape (static, or dynamic through pto.set_validshape), and the linker
// sees one function whose tile lifetimes it plans as a whole.
#include "asm/codegen/InlineTiles.h"

#include <map>
#include <set>

namespace pto::as::lower {
namespace {

using ir::Function;
using ir::Op;
using ir::OpKind;
using ir::Region;
using ir::ValueId;

/// Values of the callee renamed into the caller: arguments become the call's operands, every
/// other value a fresh value of the caller (same name, type and place).
class Renamer {
public:
  Renamer(const Function& callee, Function& caller) : callee_(callee), caller_(caller) {}
  void bind(ValueId from, ValueId to) { map_[from] = to; }
  ValueId operator()(ValueId v) {
    if (auto it = map_.find(v); it != map_.end()) return it->second;
    const ir::Value& old = callee_.values[v];
    ValueId fresh = caller_.addValue(old.name, old.type, old.loc);
    caller_.values[fresh].frontLoc = old.frontLoc;
    map_[v] = fresh;
    return fresh;
  }

private:
  const Function& callee_;
  Function& caller_;
  std::map<ValueId, ValueId> map_;
};

std::unique_ptr<Op> cloneOp(const Op& op, Renamer& rename);

void cloneRegionInto(const Region& from, Region& to, Renamer& rename) {
  for (ValueId a : from.args)
    to.args.push_back(rename(a));
  for (const auto& op : from.ops)
    to.ops.push_back(cloneOp(*op, rename));
}

std::unique_ptr<Op> cloneOp(const Op& op, Renamer& rename) {
  auto copy = std::make_unique<Op>();
  copy->kind = op.kind;
  copy->loc = op.loc;
  copy->name = op.name;
  copy->tileOp = op.tileOp;
  copy->arith = op.arith;
  copy->predicate = op.predicate;
  copy->named = op.named;
  copy->operandLocs = op.operandLocs;
  copy->operandRoles = op.operandRoles;
  copy->attrs = op.attrs;
  copy->modes = op.modes;
  copy->layout = op.layout;
  copy->pipe = op.pipe;
  copy->ints = op.ints;
  copy->typeLoc = op.typeLoc;
  copy->frontLoc = op.frontLoc;
  copy->srcPipe = op.srcPipe;
  copy->dstPipe = op.dstPipe;
  copy->event = op.event;
  copy->constant = op.constant;
  for (ValueId v : op.operands)
    copy->operands.push_back(rename(v));
  for (ValueId v : op.results)
    copy->results.push_back(rename(v));
  copy->regions.resize(op.regions.size());
  for (size_t i = 0; i < op.regions.size(); ++i)
    cloneRegionInto(op.regions[i], copy->regions[i], rename);
  return copy;
}

std::unique_ptr<Function> cloneFunction(const Function& f) {
  auto copy = std::make_unique<Function>();
  copy->name = f.name;
  copy->loc = f.loc;
  copy->isDeclaration = f.isDeclaration;
  copy->isPrivate = f.isPrivate;
  copy->isFragment = f.isFragment;
  copy->isEntry = f.isEntry;
  copy->kernelKind = f.kernelKind;
  copy->frontLoc = f.frontLoc;
  copy->attrs = f.attrs;
  copy->resultTypes = f.resultTypes;
  copy->values = f.values;
  // The copy keeps every value id: it renames nothing.
  Function& self = *copy;
  Renamer same(f, self);
  for (ValueId v = 0; v < f.values.size(); ++v)
    same.bind(v, v);
  cloneRegionInto(f.body, copy->body, same);
  return copy;
}

class Inliner {
public:
  Inliner(const ir::Module& m, DiagEngine& diags) : diags_(diags) {
    for (const auto& f : m.functions)
      byName_[f->name] = f.get();
  }

  /// The function with its tile calls inlined: the module's own when it has none.
  const Function* resolved(const Function& f) {
    if (auto it = done_.find(&f); it != done_.end()) return it->second;
    if (!hasTileCall(f.body)) return done_[&f] = &f;
    if (!active_.insert(&f).second) return nullptr; // recursion: refused by the verifier
    auto copy = cloneFunction(f);
    // A callee's renames are its own: they are applied before it is cloned into callers.
    auto outer = std::move(renames_);
    renames_.clear();
    ok_ &= inlineRegion(*copy, copy->body);
    applyRenames(*copy);
    renames_ = std::move(outer);
    active_.erase(&f);
    const Function* result = copy.get();
    owned_.push_back(std::move(copy));
    return done_[&f] = result;
  }

  bool ok() const { return ok_; }
  std::vector<std::unique_ptr<Function>> takeOwned() { return std::move(owned_); }

private:
  const Function* callee(const Op& op) const {
    auto it = byName_.find(op.name);
    return it == byName_.end() ? nullptr : it->second;
  }

  /// A call to a function of this module that takes or returns tiles: inlined. A declaration's
  /// body is in another object, so a call to it stays a call and passes each tile by its
  /// address (docs/abi.md).
  bool isTileCall(const Op& op) const {
    const Function* f = op.kind == OpKind::Call ? callee(op) : nullptr;
    return f && !f->isDeclaration && takesTiles(*f);
  }

  bool hasTileCall(const Region& r) const {
    for (const auto& op : r.ops) {
      if (isTileCall(*op)) return true;
      for (const Region& sub : op->regions)
        if (hasTileCall(sub)) return true;
    }
    return false;
  }

  bool inlineRegion(Function& fn, Region& r) {
    bool ok = true;
    std::vector<std::unique_ptr<Op>> ops;
    for (auto& op : r.ops) {
      for (Region& sub : op->regions)
        ok &= inlineRegion(fn, sub);
      if (!isTileCall(*op)) {
        ops.push_back(std::move(op));
        continue;
      }
      ok &= inlineCall(fn, *op, ops);
    }
    r.ops = std::move(ops);
    return ok;
  }

  /// Replaces one call by the callee's body; uses of the call's results are renamed to the
  /// values the callee returns.
  bool inlineCall(Function& fn, const Op& call, std::vector<std::unique_ptr<Op>>& out) {
    const Function* target = callee(call);
    const Function* body = resolved(*target);
    if (!body) return false;
    if (!returnsAtEnd(body->body)) {
      diags_.error(call.loc, "'@" + target->name +
                                 "' returns from inside a region; a function that takes tiles "
                                 "must return at its end to be inlined");
      return false;
    }
    Renamer rename(*body, fn);
    for (size_t i = 0; i < body->body.args.size() && i < call.operands.size(); ++i)
      rename.bind(body->body.args[i], call.operands[i]);
    for (const auto& op : body->body.ops) {
      if (op->kind == OpKind::Return) {
        for (size_t i = 0; i < op->operands.size() && i < call.results.size(); ++i)
          renameUses(call.results[i], rename(op->operands[i]));
        continue;
      }
      out.push_back(cloneOp(*op, rename));
    }
    return true;
  }

  /// A function that takes tiles returns once, at the end of its body (MLIR's func.return).
  static bool returnsAtEnd(const Region& body) {
    size_t returns = 0;
    ir::walk(body, [&](const Op& o) { returns += o.kind == OpKind::Return; });
    return returns == 0 || (returns == 1 && body.ops.back()->kind == OpKind::Return);
  }

  /// Later uses of a call's result name the returned value instead (SSA: the call was the
  /// result's only definition).
  void renameUses(ValueId from, ValueId to) { renames_[from] = to; }

  void applyRenames(Function& fn) {
    if (renames_.empty()) return;
    auto follow = [&](ValueId v) {
      for (auto it = renames_.find(v); it != renames_.end(); it = renames_.find(v))
        v = it->second;
      return v;
    };
    auto fix = [&](auto& self, Region& r) -> void {
      for (auto& op : r.ops) {
        for (ValueId& v : op->operands)
          v = follow(v);
        for (Region& sub : op->regions)
          self(self, sub);
      }
    };
    fix(fix, fn.body);
    renames_.clear();
  }

private:
  DiagEngine& diags_;
  std::map<std::string, const Function*, std::less<>> byName_;
  std::map<const Function*, const Function*> done_;
  std::set<const Function*> active_;
  std::vector<std::unique_ptr<Function>> owned_;
  std::map<ValueId, ValueId> renames_;
  bool ok_ = true;
};

/// A function that takes tiles and stays a function (nothing inlines it, or it is also called
/// from elsewhere) receives each tile by its address in its buffer (the parameter itself, an
/// index) and, for each dynamic valid dimension, the dimension as an index parameter right after
/// it, named `%t.v_row` / `%t.v_col` (PTOAS passes them the same way). Its body starts by giving
/// each such tile its valid shape. A declaration gets the same parameters (its body is in
/// another object).
std::unique_ptr<Function> withTileSignature(const Function& f) {
  auto copy = cloneFunction(f);
  std::vector<ValueId> args;
  std::vector<std::unique_ptr<Op>> prologue;
  for (ValueId a : f.body.args) {
    args.push_back(a);
    const ir::Type& t = f.type(a);
    if (!t.isTile() || tileAbiDims(t) == 0) continue;
    auto set = std::make_unique<Op>();
    set->kind = OpKind::SetValidShape;
    set->loc = f.values[a].loc;
    set->name = "pto.set_validshape";
    set->operands.push_back(a);
    set->operandLocs.push_back(set->loc);
    const std::pair<int64_t, const char*> dims[2] = {{t.tile.validRows, ".v_row"},
                                                     {t.tile.validCols, ".v_col"}};
    for (const auto& [dim, suffix] : dims) {
      ValueId v;
      if (dim == ir::kDynamic) {
        v = copy->addValue(f.values[a].name + suffix, ir::Type::index(), set->loc);
        args.push_back(v);
      } else { // a static dimension of a tile whose other one is dynamic
        v = copy->addValue(f.values[a].name + suffix, ir::Type::index(), set->loc);
        auto c = std::make_unique<Op>();
        c->kind = OpKind::Constant;
        c->loc = set->loc;
        c->name = "arith.constant";
        c->results.push_back(v);
        ir::setConstant(*c, std::to_string(dim), ir::Type::index());
        prologue.push_back(std::move(c));
      }
      set->operands.push_back(v);
      set->operandLocs.push_back(set->loc);
    }
    prologue.push_back(std::move(set));
  }
  copy->body.args = std::move(args);
  if (f.isDeclaration) return copy;
  for (auto& op : copy->body.ops)
    prologue.push_back(std::move(op));
  copy->body.ops = std::move(prologue);
  return copy;
}

} // namespace

unsigned tileAbiDims(const ir::Type& t) {
  if (!t.isTile()) return 0;
  return (t.tile.validRows == ir::kDynamic) + (t.tile.validCols == ir::kDynamic);
}

unsigned abiSlots(const ir::Type& t) {
  return t.isTile() ? 1 + tileAbiDims(t) : 1;
}

bool takesTiles(const ir::Function& f) {
  for (ValueId a : f.body.args)
    if (f.type(a).isTile()) return true;
  for (const ir::Type& t : f.resultTypes)
    if (t.isTile()) return true;
  return false;
}

InlinedModule inlineTileCalls(const ir::Module& m, DiagEngine& diags) {
  InlinedModule result;
  Inliner inliner(m, diags);
  for (const auto& f : m.functions)
    if (const ir::Function* g = inliner.resolved(*f)) result.functions.push_back(g);
  result.ok = inliner.ok();
  result.owned = inliner.takeOwned();
  std::vector<const ir::Function*> kept;
  for (const ir::Function* f : result.functions) {
    if (!takesTiles(*f)) {
      kept.push_back(f);
      continue;
    }
    // A private function is called only from this module, where every call was inlined: like
    // an internal function after LLVM's inliner, it has nothing left to do.
    if (f->isPrivate && !f->isDeclaration) continue;
    result.owned.push_back(withTileSignature(*f));
    kept.push_back(result.owned.back().get());
  }
  result.functions = std::move(kept);
  return result;
}

} // namespace pto::as::lower
