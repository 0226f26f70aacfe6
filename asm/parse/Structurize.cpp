// The blocks of a cf-dialect region as structured ops (see Structurize.h). The analysis is the
// usual one: dominators and post-dominators (Cooper, Harvey and Kennedy's iteration over reverse
// post-order), natural loops from the back edges. The emission walks the blocks from the entry:
// a block's ops move into the current region, a `cf.br` continues with its successor (its
// arguments stand for the values passed), a `cf.cond_br` becomes an scf.if whose branches run
// up to the block where they meet (the immediate post-dominator), whose arguments are the
// scf.if's results, and a loop head an scf.while. Every block is emitted once: control flow that
// would need a block twice is refused, never duplicated.
#include "asm/parse/Structurize.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace pto::as::detail {
namespace {

constexpr int kNone = -1;

using Graph = std::vector<std::vector<int>>;

/// Immediate dominators of the nodes reachable from `root` along `next` (kNone for the others;
/// the root is its own), and the reverse post-order index of each node.
std::vector<int> immediateDominators(int root, const Graph& next, const Graph& prev) {
  const size_t n = next.size();
  std::vector<int> order, rpoIndex(n, kNone);
  std::vector<char> seen(n, 0);
  std::vector<std::pair<int, size_t>> stack{{root, 0}};
  seen[root] = 1;
  while (!stack.empty()) {
    auto& [node, k] = stack.back();
    if (k < next[node].size()) {
      int s = next[node][k++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  std::reverse(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    rpoIndex[order[i]] = static_cast<int>(i);
  std::vector<int> idom(n, kNone);
  idom[root] = root;
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (rpoIndex[a] > rpoIndex[b])
        a = idom[a];
      while (rpoIndex[b] > rpoIndex[a])
        b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int b : order) {
      if (b == root) continue;
      int d = kNone;
      for (int p : prev[b])
        if (idom[p] != kNone) d = d == kNone ? p : intersect(p, d);
      if (d != idom[b]) {
        idom[b] = d;
        changed = true;
      }
    }
  }
  return idom;
}

struct Next {
  int block;
  std::vector<ValueId> args;
};

class Structurizer {
public:
  Structurizer(Function& fn, std::vector<CfgBlock>& blocks, const std::vector<Type>& exitTypes,
               bool functionBody, DiagEngine& diags)
      : fn_(fn), blocks_(blocks), exitTypes_(exitTypes), functionBody_(functionBody),
        diags_(diags) {}

  bool analyse();
  std::optional<std::vector<ValueId>> run(Region& out);

private:
  int exitNode() const { return static_cast<int>(blocks_.size()); }
  /// `'^bb1'`, or "the entry block" for an unlabelled one.
  std::string nameOf(int b) const {
    return b == exitNode()            ? "the exit"
           : blocks_[b].label.empty() ? "the entry block"
                                      : "'" + blocks_[b].label + "'";
  }
  /// `block '^bb1'`, or "the entry block".
  std::string blockName(int b) const {
    return blocks_[b].label.empty() ? nameOf(b) : "block " + nameOf(b);
  }
  bool resolveSuccessors();
  bool checkArgs(const CfgTerm& t, int k, int dest);
  void findLoops();
  bool dominates(const std::vector<int>& idom, int a, int b) const;

  std::optional<std::vector<ValueId>> emitRange(int b, std::vector<ValueId> args, int join,
                                                Region& out, int header);
  std::optional<Next> emitIf(int b, int join, Region& out);
  std::optional<Next> emitLoop(int head, std::vector<ValueId> inits, Region& out);
  bool loopShape(int head, int& exiting, std::set<int>& before);
  std::vector<ValueId> liveOut(const std::set<int>& part);

  ValueId resolve(ValueId v) const {
    for (int i = 0; i < 1000; ++i) {
      auto it = subst_.find(v);
      if (it == subst_.end()) return v;
      v = it->second;
    }
    return v;
  }
  std::vector<ValueId> mapped(const std::vector<ValueId>& vs) const {
    std::vector<ValueId> out;
    for (ValueId v : vs)
      out.push_back(resolve(v));
    return out;
  }
  void substitute(Op& op) const;
  void bind(int b, const std::vector<ValueId>& args);
  void moveOps(int b, Region& out);
  std::vector<ValueId> fresh(const std::vector<ValueId>& like);
  std::unique_ptr<Op> yieldOp(const std::vector<ValueId>& vals, SrcLoc loc) const;
  ValueId negate(ValueId c, Region& out, SrcLoc loc);

  Function& fn_;
  std::vector<CfgBlock>& blocks_;
  const std::vector<Type>& exitTypes_;
  bool functionBody_;
  DiagEngine& diags_;
  Graph succ_, pred_;
  std::vector<int> idom_, ipdom_;
  std::vector<char> isHead_, emitted_;
  std::map<int, std::set<int>> loops_; // head -> the blocks of its natural loop
  std::map<int, std::vector<int>> latches_;
  std::vector<int> active_; // the heads of the loops being emitted
  std::map<ValueId, ValueId> subst_;
  SrcLoc exitLoc_;
  bool exitSeen_ = false;
};

bool Structurizer::checkArgs(const CfgTerm& t, int k, int dest) {
  const std::vector<ValueId>& args = t.args[k];
  std::vector<Type> want;
  if (dest == exitNode())
    want = exitTypes_;
  else
    for (ValueId a : blocks_[dest].args)
      want.push_back(fn_.type(a));
  SrcLoc at = dest == exitNode() ? t.loc : t.destLoc[k];
  if (args.size() != want.size()) {
    diags_.error(at, (dest == exitNode() ? std::string(functionBody_ ? "the return" : "scf.yield")
                                         : "the branch to " + nameOf(dest)) +
                         " passes " + std::to_string(args.size()) + " value(s) but " +
                         std::to_string(want.size()) + " are expected");
    return false;
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] != kNoValue && !(fn_.type(args[i]) == want[i])) {
      diags_.error(k < 2 && i < t.argLocs[k].size() ? t.argLocs[k][i] : at,
                   "value '%" + fn_.value(args[i]).name + "' of type " +
                       toString(fn_.type(args[i])) + " passed where " + toString(want[i]) +
                       " is expected");
      return false;
    }
  return true;
}

bool Structurizer::resolveSuccessors() {
  std::map<std::string, int> byLabel;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const std::string& l = blocks_[b].label;
    if (l.empty()) continue;
    if (!byLabel.emplace(l, static_cast<int>(b)).second) {
      diags_.error(blocks_[b].loc, "block '" + l + "' is defined twice");
      return false;
    }
  }
  succ_.assign(blocks_.size() + 1, {});
  pred_.assign(blocks_.size() + 1, {});
  for (size_t b = 0; b < blocks_.size(); ++b) {
    CfgTerm& t = blocks_[b].term;
    if (t.kind == CfgTerm::None) {
      diags_.error(blocks_[b].loc,
                   blockName(static_cast<int>(b)) + " does not end with a terminator (" +
                       (functionBody_ ? "return" : "scf.yield") + ", cf.br or cf.cond_br)");
      return false;
    }
    if (t.kind == CfgTerm::Exit) {
      if (!checkArgs(t, 0, exitNode())) return false;
      succ_[b].push_back(exitNode());
      if (!exitSeen_) exitLoc_ = t.loc;
      exitSeen_ = true;
      continue;
    }
    for (int k = 0; k < (t.kind == CfgTerm::CondBr ? 2 : 1); ++k) {
      auto it = byLabel.find(t.dest[k]);
      if (it == byLabel.end() || it->second == 0) {
        diags_.error(t.destLoc[k], it == byLabel.end()
                                       ? "branch to an undefined block '" + t.dest[k] + "'"
                                       : "branch to the entry block '" + t.dest[k] + "'");
        return false;
      }
      if (!checkArgs(t, k, it->second)) return false;
      succ_[b].push_back(it->second);
    }
  }
  for (size_t b = 0; b < succ_.size(); ++b)
    for (int s : succ_[b])
      pred_[s].push_back(static_cast<int>(b));
  return true;
}

bool Structurizer::dominates(const std::vector<int>& idom, int a, int b) const {
  for (int x = b; x != kNone; x = idom[x]) {
    if (x == a) return true;
    if (idom[x] == x) return false;
  }
  return false;
}

void Structurizer::findLoops() {
  isHead_.assign(blocks_.size() + 1, 0);
  for (size_t u = 0; u < blocks_.size(); ++u) {
    if (idom_[u] == kNone) continue; // unreachable
    for (int h : succ_[u]) {
      if (h == exitNode() || !dominates(idom_, h, static_cast<int>(u))) continue;
      isHead_[h] = 1;
      latches_[h].push_back(static_cast<int>(u));
      std::set<int>& body = loops_[h];
      body.insert(h);
      std::vector<int> work{static_cast<int>(u)};
      while (!work.empty()) {
        int x = work.back();
        work.pop_back();
        if (!body.insert(x).second) continue;
        for (int p : pred_[x])
          if (idom_[p] != kNone) work.push_back(p);
      }
    }
  }
}

bool Structurizer::analyse() {
  if (!resolveSuccessors()) return false;
  idom_ = immediateDominators(0, succ_, pred_);
  ipdom_ = immediateDominators(exitNode(), pred_, succ_);
  findLoops();
  // A reachable block that never reaches an exit: report the loop it is caught in.
  int stuck = kNone;
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (idom_[b] != kNone && ipdom_[b] == kNone &&
        (stuck == kNone || (isHead_[b] && !isHead_[stuck])))
      stuck = static_cast<int>(b);
  if (stuck != kNone) {
    diags_.error(blocks_[stuck].loc, blockName(stuck) + " never reaches " +
                                         (functionBody_ ? "a return" : "scf.yield") +
                                         " (a loop without an exit)");
    return false;
  }
  emitted_.assign(blocks_.size(), 0);
  return true;
}

void Structurizer::substitute(Op& op) const {
  for (ValueId& v : op.operands)
    v = resolve(v);
  for (Region& r : op.regions)
    for (auto& inner : r.ops)
      substitute(*inner);
}

void Structurizer::bind(int b, const std::vector<ValueId>& args) {
  const std::vector<ValueId>& formal = blocks_[b].args;
  for (size_t i = 0; i < formal.size() && i < args.size(); ++i)
    if (formal[i] != args[i]) subst_[formal[i]] = args[i];
}

void Structurizer::moveOps(int b, Region& out) {
  emitted_[b] = 1;
  for (auto& op : blocks_[b].ops) {
    substitute(*op);
    out.ops.push_back(std::move(op));
  }
  blocks_[b].ops.clear();
}

std::vector<ValueId> Structurizer::fresh(const std::vector<ValueId>& like) {
  std::vector<ValueId> out;
  for (ValueId v : like) {
    Value copy = fn_.value(v);
    out.push_back(fn_.addValue(copy.name, copy.type, copy.loc));
  }
  return out;
}

std::unique_ptr<Op> Structurizer::yieldOp(const std::vector<ValueId>& vals, SrcLoc loc) const {
  auto y = std::make_unique<Op>();
  y->kind = OpKind::Yield;
  y->name = "scf.yield";
  y->loc = loc;
  y->operands = vals;
  y->operandLocs.assign(vals.size(), loc);
  return y;
}

/// `c xor true`, for a loop whose exit test leaves the loop when its condition holds.
ValueId Structurizer::negate(ValueId c, Region& out, SrcLoc loc) {
  const Type i1 = Type::scalar(isa::DType::I1);
  auto k = std::make_unique<Op>();
  k->kind = OpKind::Constant;
  k->name = "arith.constant";
  k->loc = loc;
  setConstant(*k, "true", i1);
  k->results.push_back(fn_.addValue("true", i1, loc));
  ValueId t = k->results[0];
  out.ops.push_back(std::move(k));
  auto x = std::make_unique<Op>();
  x->kind = OpKind::Arith;
  x->name = "arith.xori";
  x->arith = ArithOp::XOrI;
  x->loc = loc;
  x->operands = {c, t};
  x->operandLocs = {loc, loc};
  x->results.push_back(fn_.addValue("not", i1, loc));
  ValueId r = x->results[0];
  out.ops.push_back(std::move(x));
  return r;
}

/// Emits blocks from `b` (entered with `args`) into `out` until control reaches `join`; returns
/// the values passed to `join`. `header` is the loop head whose scf.while is being built (its
/// block is emitted here once, as the before region's start).
std::optional<std::vector<ValueId>> Structurizer::emitRange(int b, std::vector<ValueId> args,
                                                            int join, Region& out, int header) {
  bool first = true;
  SrcLoc last = blocks_.empty() ? SrcLoc{} : blocks_[0].loc;
  for (;; first = false) {
    const bool enteringHead = first && b == header;
    if (b == join && !enteringHead) return args;
    if (b == exitNode()) {
      diags_.error(last, std::string(functionBody_ ? "a return" : "an scf.yield") +
                             " inside a loop written with cf branches is not supported (the "
                             "loop becomes an scf.while, which is left at its exit test only)");
      return std::nullopt;
    }
    if (isHead_[b] && !enteringHead) {
      if (std::find(active_.begin(), active_.end(), b) != active_.end()) {
        diags_.error(last, "a branch back to the head of loop " + nameOf(b) +
                               " from inside a nested construct is not supported");
        return std::nullopt;
      }
      auto next = emitLoop(b, std::move(args), out);
      if (!next) return std::nullopt;
      b = next->block;
      args = std::move(next->args);
      continue;
    }
    if (emitted_[b]) {
      diags_.error(blocks_[b].loc, blockName(b) +
                                       " is reached by control flow that has no structured "
                                       "form (scf.if / scf.while): it would run in two places");
      return std::nullopt;
    }
    bind(b, args);
    moveOps(b, out);
    CfgTerm& t = blocks_[b].term;
    last = t.loc;
    if (t.kind == CfgTerm::Exit) {
      args = mapped(t.args[0]);
      b = exitNode();
      continue;
    }
    if (t.kind == CfgTerm::Br) {
      const int s = succ_[b][0];
      args = mapped(t.args[0]);
      if (s != join && s != exitNode() && !isHead_[s] && pred_[s].size() > 1) {
        diags_.error(t.destLoc[0], "the branch to " + nameOf(s) +
                                       " joins control flow that has no structured form "
                                       "(scf.if / scf.while)");
        return std::nullopt;
      }
      b = s;
      continue;
    }
    auto next = emitIf(b, join, out);
    if (!next) return std::nullopt;
    b = next->block;
    args = std::move(next->args);
  }
}

/// `cf.cond_br` at the end of `b`: an scf.if whose branches run to where they meet again.
std::optional<Next> Structurizer::emitIf(int b, int join, Region& out) {
  CfgTerm& t = blocks_[b].term;
  const int meet = ipdom_[b];
  const bool merge = meet != join && meet != exitNode();
  const int ifJoin = merge ? meet : join;
  std::vector<Type> types;
  if (ifJoin == exitNode())
    types = exitTypes_;
  else
    for (ValueId a : blocks_[ifJoin].args)
      types.push_back(fn_.type(a));
  auto op = std::make_unique<Op>();
  op->kind = OpKind::If;
  op->name = "scf.if";
  op->loc = t.loc;
  op->operands = {resolve(t.cond)};
  op->operandLocs = {t.loc};
  op->regions.resize(2);
  for (int k = 0; k < 2; ++k) {
    auto vals = emitRange(succ_[b][k], mapped(t.args[k]), ifJoin, op->regions[k], kNone);
    if (!vals) return std::nullopt;
    op->regions[k].ops.push_back(yieldOp(*vals, t.loc));
  }
  std::vector<ValueId> results;
  if (merge) {
    results = blocks_[meet].args;
  } else {
    for (const Type& ty : types)
      results.push_back(fn_.addValue("r", ty, t.loc));
  }
  op->results = results;
  out.ops.push_back(std::move(op));
  return Next{ifJoin, results};
}

/// The values defined in `part` (block arguments, op results) that are used outside it.
std::vector<ValueId> Structurizer::liveOut(const std::set<int>& part) {
  std::set<ValueId> defined, used;
  std::function<void(const Op&, bool)> visit = [&](const Op& op, bool inside) {
    for (ValueId v : op.operands)
      if (!inside) used.insert(v);
    if (inside) defined.insert(op.results.begin(), op.results.end());
    for (const Region& r : op.regions) {
      if (inside) defined.insert(r.args.begin(), r.args.end());
      for (const auto& o : r.ops)
        visit(*o, inside);
    }
  };
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const bool inside = part.count(static_cast<int>(b)) != 0;
    if (inside) defined.insert(blocks_[b].args.begin(), blocks_[b].args.end());
    for (const auto& op : blocks_[b].ops)
      visit(*op, inside);
    const CfgTerm& t = blocks_[b].term;
    if (inside) continue;
    used.insert(t.cond);
    for (const auto& a : t.args)
      used.insert(a.begin(), a.end());
  }
  std::vector<ValueId> live;
  for (ValueId v : defined)
    if (used.count(v)) live.push_back(v);
  return live;
}

/// The loop at `head` in the form scf.while takes: one block leaves it (`exiting`, with a
/// cf.cond_br), and the blocks from the head to that test (`before`) branch back to the head
/// only from the test.
bool Structurizer::loopShape(int head, int& exiting, std::set<int>& before) {
  const std::set<int>& body = loops_[head];
  exiting = kNone;
  for (int u : body)
    for (int s : succ_[u]) {
      if (body.count(s)) continue;
      if (exiting != kNone && exiting != u) {
        diags_.error(blocks_[u].term.loc,
                     "loop " + nameOf(head) + " is left from more than one place, which " +
                         "scf.while cannot express (its one exit is the condition's test)");
        return false;
      }
      exiting = u;
    }
  const CfgTerm& et = blocks_[exiting].term;
  if (et.kind != CfgTerm::CondBr || succ_[exiting][0] == succ_[exiting][1]) {
    diags_.error(et.loc, "loop " + nameOf(head) + " must be left by a cf.cond_br");
    return false;
  }
  std::vector<int> work{head};
  while (!work.empty()) {
    int x = work.back();
    work.pop_back();
    if (!before.insert(x).second || x == exiting) continue;
    for (int s : succ_[x])
      if (body.count(s) && s != head) work.push_back(s);
  }
  for (int l : latches_[head])
    if (l != exiting && before.count(l)) {
      diags_.error(blocks_[l].term.loc,
                   "a branch back to the head of loop " + nameOf(head) +
                       " before its exit test is not supported (scf.while tests first)");
      return false;
    }
  return true;
}

/// The loop at `head`, entered with `inits`, as an scf.while: the before region runs from the
/// head to the exit test, the after region from the test's way into the loop back to the head.
/// The values of the before part used later pass through scf.condition.
std::optional<Next> Structurizer::emitLoop(int head, std::vector<ValueId> inits, Region& out) {
  if (emitted_[head]) {
    diags_.error(blocks_[head].loc, "loop " + nameOf(head) +
                                        " is entered from more than one place, which has no "
                                        "structured form (scf.while)");
    return std::nullopt;
  }
  int exiting = kNone;
  std::set<int> before;
  if (!loopShape(head, exiting, before)) return std::nullopt;
  CfgTerm& et = blocks_[exiting].term;
  const int in = loops_[head].count(succ_[exiting][0]) ? 0 : 1, outK = 1 - in;
  const std::vector<ValueId> live = liveOut(before);
  std::vector<ValueId> passed = live;
  passed.insert(passed.end(), et.args[in].begin(), et.args[in].end());
  passed.insert(passed.end(), et.args[outK].begin(), et.args[outK].end());
  auto op = std::make_unique<Op>();
  op->kind = OpKind::While;
  op->name = "scf.while";
  op->loc = blocks_[head].loc;
  op->operands = inits;
  op->operandLocs.assign(inits.size(), op->loc);
  op->regions.resize(2);
  op->regions[0].args = blocks_[head].args;
  active_.push_back(head);
  Region& pre = op->regions[0];
  if (exiting == head) {
    moveOps(head, pre);
  } else {
    auto arrived = emitRange(head, {}, exiting, pre, head);
    if (!arrived) return std::nullopt;
    bind(exiting, *arrived);
    moveOps(exiting, pre);
  }
  ValueId c = resolve(et.cond);
  if (in == 1) c = negate(c, pre, et.loc);
  auto cond = std::make_unique<Op>();
  cond->kind = OpKind::Condition;
  cond->name = "scf.condition";
  cond->loc = et.loc;
  cond->operands.push_back(c);
  for (ValueId v : mapped(passed))
    cond->operands.push_back(v);
  cond->operandLocs.assign(cond->operands.size(), et.loc);
  pre.ops.push_back(std::move(cond));
  const size_t nIn = et.args[in].size();
  std::vector<ValueId> afterArgs = fresh(passed);
  op->regions[1].args = afterArgs;
  for (size_t i = 0; i < live.size(); ++i)
    subst_[live[i]] = afterArgs[i];
  std::vector<ValueId> inArgs(afterArgs.begin() + live.size(),
                              afterArgs.begin() + live.size() + nIn);
  auto back = emitRange(succ_[exiting][in], inArgs, head, op->regions[1], kNone);
  if (!back) return std::nullopt;
  op->regions[1].ops.push_back(yieldOp(*back, et.loc));
  std::vector<ValueId> results = fresh(passed);
  op->results = results;
  for (size_t i = 0; i < live.size(); ++i)
    subst_[live[i]] = results[i];
  active_.pop_back();
  out.ops.push_back(std::move(op));
  return Next{succ_[exiting][outK],
              std::vector<ValueId>(results.begin() + live.size() + nIn, results.end())};
}

std::optional<std::vector<ValueId>> Structurizer::run(Region& out) {
  auto vals = emitRange(0, {}, exitNode(), out, kNone);
  if (!vals) return std::nullopt;
  if (functionBody_) {
    auto ret = std::make_unique<Op>();
    ret->kind = OpKind::Return;
    ret->name = "return";
    ret->loc = exitLoc_;
    ret->operands = *vals;
    ret->operandLocs.assign(vals->size(), exitLoc_);
    out.ops.push_back(std::move(ret));
  }
  return vals;
}

} // namespace

std::optional<std::vector<ValueId>> structurize(Function& fn, std::vector<CfgBlock>& blocks,
                                                const std::vector<Type>& exitTypes,
                                                bool functionBody, Region& out, DiagEngine& diags) {
  Structurizer s(fn, blocks, exitTypes, functionBody, diags);
  if (!s.analyse()) return std::nullopt;
  return s.run(out);
}

} // namespace pto::as::detail
