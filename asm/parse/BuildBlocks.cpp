// Regions of blocks (MLIR's cf dialect: `^bb1(%x: i32):`, `cf.br`, `cf.cond_br`) in function
// bodies and scf.execute_region, and scf.execute_region itself. Each block is built into a region
// of its own, kept on the region stack until the last block is built (so that constants of
// earlier blocks stay visible to the builders that need a constant), then Structurize.cpp turns
// the blocks into scf.if / scf.while.
#include "asm/parse/BuilderImpl.h"

#include <deque>

namespace pto::as::detail {

bool Builder::hasBlocks(P::RegionContext* r) {
  bool stmtSeen = false, labelSeen = false;
  for (antlr4::tree::ParseTree* c : r->children) {
    if (isToken(c)) continue;
    const size_t rule = static_cast<antlr4::ParserRuleContext*>(c)->getRuleIndex();
    if (rule == P::RuleBlockLabel) {
      if (stmtSeen || labelSeen) return true;
      labelSeen = true;
    } else if (rule == P::RuleStmt) {
      stmtSeen = true;
    }
  }
  return false;
}

std::optional<std::vector<ValueId>> Builder::buildBlocks(P::RegionContext* r, Region& out,
                                                         bool functionBody,
                                                         const std::vector<Type>& exitTypes) {
  const OpKind exitKind = functionBody ? OpKind::Return : OpKind::Yield;
  std::vector<CfgBlock> blocks;
  std::deque<Region> built; // one per block, in place while later blocks are built
  CfgBlock* enclosing = curBlock_;
  auto startBlock = [&](P::BlockLabelContext* label) {
    blocks.emplace_back();
    built.emplace_back();
    regions_.push_back(&built.back());
    CfgBlock& b = blocks.back();
    b.loc = label ? locOf(label->CARET_ID()) : locOf(r->getStart());
    if (!label) return;
    b.label = label->CARET_ID()->getText();
    // The entry block's arguments are the function's (MLIR's generic printing labels it).
    Region& argsInto = blocks.size() == 1 ? out : built.back();
    const size_t before = argsInto.args.size();
    readArgs(label->funcArg(), argsInto);
    if (blocks.size() > 1) b.args = built.back().args;
    if (blocks.size() == 1 && !functionBody && argsInto.args.size() != before)
      diags_.error(b.loc, "the entry block of scf.execute_region takes no arguments");
  };
  for (antlr4::tree::ParseTree* c : r->children) {
    if (isToken(c)) continue;
    auto* rule = static_cast<antlr4::ParserRuleContext*>(c);
    if (rule->getRuleIndex() == P::RuleBlockLabel) {
      startBlock(static_cast<P::BlockLabelContext*>(rule));
      continue;
    }
    if (rule->getRuleIndex() != P::RuleStmt) continue;
    if (blocks.empty()) startBlock(nullptr);
    CfgBlock& b = blocks.back();
    if (b.term.kind != CfgTerm::None) {
      diags_.error(locOf(rule->getStart()),
                   "an operation after the terminator of block " +
                       (b.label.empty() ? std::string("the entry block") : "'" + b.label + "'"));
      continue;
    }
    curBlock_ = &b;
    buildStmt(static_cast<P::StmtContext*>(rule));
    Region& ops = built.back();
    if (b.term.kind == CfgTerm::None && !ops.ops.empty() && ops.ops.back()->kind == exitKind) {
      const Op& exit = *ops.ops.back();
      b.term.kind = CfgTerm::Exit;
      b.term.loc = exit.loc;
      b.term.args[0] = exit.operands;
      b.term.argLocs[0] = exit.operandLocs;
      ops.ops.pop_back();
      building_ = nullptr;
    }
  }
  curBlock_ = enclosing;
  for (size_t k = 0; k < blocks.size(); ++k) {
    blocks[k].ops = std::move(built[k].ops);
    regions_.pop_back();
  }
  if (blocks.empty()) return std::vector<ValueId>{};
  return structurize(*fn_, blocks, exitTypes, functionBody, out, diags_);
}

/// The condition of a cf.cond_br in either form: an i1, or kNoValue after an error.
ValueId Builder::branchCondition(const OperandRef& r) {
  const ValueId v = scalarOperand(r, Type::scalar(isa::DType::I1));
  if (v == kNoValue || fn_->type(v) == Type::scalar(isa::DType::I1)) return v;
  diags_.error(r.loc, "the condition of 'cf.cond_br' is an i1, not " + toString(fn_->type(v)));
  return kNoValue;
}

void Builder::buildBranch(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results) {
  expectResults(name, loc, results, 0);
  if (!curBlock_ || curBlock_->term.kind != CfgTerm::None) {
    diags_.error(loc, "'" + name +
                          "' ends a block of a function body or of scf.execute_region (a region "
                          "with ^bb labels)");
    return;
  }
  const bool cond = name == "cf.cond_br";
  const size_t want = cond ? 2 : 1;
  if (p.successors.size() != want || p.operands.size() != (cond ? 1u : 0u)) {
    diags_.error(loc, cond ? "expected 'cf.cond_br %cond, ^true[(%args : types)], "
                             "^false[(%args : types)]'"
                           : "expected 'cf.br ^dest[(%args : types)]'");
    return;
  }
  CfgTerm t;
  t.kind = cond ? CfgTerm::CondBr : CfgTerm::Br;
  t.loc = loc;
  if (cond) {
    t.cond = branchCondition(p.operands[0]);
    if (t.cond == kNoValue) return;
  }
  for (size_t k = 0; k < want; ++k) {
    P::SuccessorPieceContext* s = p.successors[k];
    t.dest[k] = s->CARET_ID()->getText();
    t.destLoc[k] = locOf(s->CARET_ID());
    Pieces a = collectPieces(piecesOf(s));
    if (!a.types.empty() && a.types.size() != a.operands.size()) {
      diags_.error(a.typesLoc, "the branch to '" + t.dest[k] + "' passes " +
                                   std::to_string(a.operands.size()) + " value(s) with " +
                                   std::to_string(a.types.size()) + " type(s)");
      return;
    }
    for (size_t i = 0; i < a.operands.size(); ++i) {
      std::optional<Type> ty;
      if (i < a.types.size()) ty = readType(a.types[i]);
      ValueId v = scalarOperand(a.operands[i], ty.value_or(Type::index()));
      if (v == kNoValue) return;
      t.args[k].push_back(v);
      t.argLocs[k].push_back(a.operands[i].loc);
    }
  }
  curBlock_->term = std::move(t);
}

/// `%r = scf.execute_region -> T { ... scf.yield %v : T }`: the region runs once, in place, so
/// its ops join the enclosing region and %r names the value yielded (with several blocks, the
/// results of the structured ops that join them).
void Builder::buildExecuteRegion(P::ScfExecuteContext* e, const std::vector<ResultName>& results) {
  SrcLoc loc = locOf(e->getStart());
  std::vector<Type> types;
  if (e->typeGroup()) typeGroup(e->typeGroup(), types);
  if (!expectResults("scf.execute_region", loc, results, types.size())) return;
  scopes_.emplace_back();
  auto vals = buildBlocks(e->region(), cur(), false, types);
  scopes_.pop_back();
  if (!vals) return;
  for (size_t i = 0; i < results.size() && i < vals->size(); ++i) {
    const std::string& name = results[i].name;
    scopes_.back()[name] = (*vals)[i];
    if (name.ends_with("#0")) scopes_.back()[name.substr(0, name.size() - 2)] = (*vals)[i];
  }
}

} // namespace pto::as::detail
