// Internal to the front end: the blocks of a region written with MLIR's cf dialect (`^bb1(%x:
// i32):`, `cf.br`, `cf.cond_br`) and their conversion into the Kernel IR's structured ops. The
// Kernel IR has regions of one block only (scf.if, scf.for, scf.while); a region of blocks is
// rebuilt from them: a conditional branch whose two ways meet again becomes an scf.if whose
// results are the meeting block's arguments, a loop (a block that a later block branches back
// to) an scf.while whose condition is the loop's one exit test. Returns become one return at the
// end. Control flow that has no such form (a loop left from two places, a jump into the middle
// of a loop, a return from inside a loop) is refused at the branch, by name.
#pragma once

#include "asm/ir/IR.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pto::as::detail {

using namespace pto::ir;

/// A block's terminator as written: `cf.br ^d(args)`, `cf.cond_br %c, ^t(args), ^f(args)`, or
/// the region's exit (`return` in a function body, `scf.yield` in scf.execute_region).
struct CfgTerm {
  enum Kind : uint8_t { None, Br, CondBr, Exit } kind = None;
  SrcLoc loc;
  ValueId cond = kNoValue;
  std::string dest[2];          // the successors' labels (with '^')
  SrcLoc destLoc[2];            // where each is written
  std::vector<ValueId> args[2]; // the values each successor receives (Exit: args[0])
  std::vector<SrcLoc> argLocs[2];
};

struct CfgBlock {
  std::string label; // with '^'; empty for an unlabelled entry block
  SrcLoc loc;
  std::vector<ValueId> args;
  std::vector<std::unique_ptr<Op>> ops; // without the terminator
  CfgTerm term;
};

/// Appends the structured form of `blocks` (blocks[0] the entry) to `out`. In a function body
/// (`functionBody`) every exit is a return of `exitTypes` and `out` ends with one `return`; in
/// scf.execute_region the values the exits yield are returned. nullopt after an error
/// (reported).
std::optional<std::vector<ValueId>> structurize(Function& fn, std::vector<CfgBlock>& blocks,
                                                const std::vector<Type>& exitTypes,
                                                bool functionBody, Region& out, DiagEngine& diags);

} // namespace pto::as::detail
