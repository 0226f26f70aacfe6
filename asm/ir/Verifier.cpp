// The per-arch verifier's driver (VerifierImpl.h): the module (entries, recursion, calls), the
// constants it reads, the per-op dispatch, views, scalar memory and sync. The tile checks are in
// VerifyTiles.cpp.
#include "asm/ir/Verifier.h"
#include "asm/ir/VerifierImpl.h"
#include "isa/PrintFormat.h"
#include "support/Text.h"

#include <functional>
#include <set>

namespace pto::as {
namespace verify {

void Verifier::run() {
  std::set<std::string> names;
  for (const auto& f : mod_.functions)
    names.insert(f->name);
  checkEntries();
  checkRecursion();
  checkReservedBuffers();
  checkPipePeers();
  for (const auto& f : mod_.functions) {
    fn_ = f.get();
    checkedTiles_.clear();
    pipeInits_.clear();
    unboundEntries_.clear();
    pipeSplits_.clear();
    reportedSplitMix_.clear();
    for (ValueId a : f->body.args)
      checkValueType(a);
    walk(f->body, [&](const Op& op) { checkOp(op, names); });
    checkLocalAllocUses();
  }
}

/// PTOAS plans local memory for tiles only: a local `memref.alloc` stands for a tile when a tile
/// op, a view or bind_tile uses it. One that nothing uses (only deallocated) or that leaves its
/// region through scf.yield is refused, with PTOAS's message.
void Verifier::checkLocalAllocUses() {
  std::set<ValueId> used, yielded;
  walk(fn_->body, [&](const Op& op) {
    for (ValueId v : op.operands)
      (op.kind == OpKind::Yield ? yielded : used).insert(v);
  });
  walk(fn_->body, [&](const Op& op) {
    if (op.kind != OpKind::AllocTile || op.name != "memref.alloc" || op.results.empty()) return;
    const ValueId buffer = op.results[0];
    if (used.count(buffer) && !yielded.count(buffer)) return;
    diags_.error(op.loc, "'memref.alloc' PlanMemory is tilebuf-only: local memref.alloc is "
                         "unsupported; use pto.alloc_tile (" +
                             std::string(yielded.count(buffer)
                                             ? "this buffer leaves its region through scf.yield"
                                             : "no tile op, view or bind_tile uses this buffer") +
                             ")");
  });
}

void Verifier::checkEntries() {
  bool anyMarked = false;
  for (const auto& f : mod_.functions)
    anyMarked = anyMarked || f->isEntry;
  for (const auto& f : mod_.functions) {
    if (f->isEntry && !f->resultTypes.empty())
      diags_.error(f->loc, "entry function '@" + f->name + "' must not return values");
    // A module's only function is its entry when none is marked (as in PTOAS: "PTO entry
    // functions must return void"); a library function sits beside others (docs/abi.md).
    if (!anyMarked && mod_.functions.size() == 1 && !f->resultTypes.empty())
      diags_.error(f->loc,
                   "entry function '@" + f->name +
                       "' must not return values (a module's only function is its entry kernel)");
    if (f->kernelKind == Function::KernelKind::Invalid)
      diags_.error(f->loc,
                   "pto.kernel_kind must be #pto.kernel_kind<vector> or #pto.kernel_kind<cube>");
  }
}

void Verifier::checkRecursion() {
  std::map<std::string, std::vector<const Op*>> calls; // caller -> its call ops
  for (const auto& f : mod_.functions)
    walk(f->body, [&](const Op& op) {
      if (op.kind == OpKind::Call) calls[f->name].push_back(&op);
    });
  std::map<std::string, int> state; // 0 unvisited, 1 on the path, 2 done
  std::function<bool(const std::string&)> visit = [&](const std::string& fn) {
    state[fn] = 1;
    for (const Op* call : calls[fn]) {
      int s = state[call->name];
      if (s == 1) {
        diags_.error(
            call->loc,
            "recursive call to '@" + call->name +
                "' is not supported: a function's tiles have fixed addresses, so a recursive "
                "call would overwrite the tiles of the calls still running");
        return true;
      }
      if (s == 0 && visit(call->name)) return true;
    }
    state[fn] = 2;
    return false;
  };
  for (const auto& f : mod_.functions)
    if (state[f->name] == 0 && visit(f->name)) return; // one report per module is enough
}

const NamedAttr* Verifier::findAttr(std::span<const NamedAttr> attrs, std::string_view key) {
  for (const NamedAttr& a : attrs)
    if (a.key == key) return &a;
  return nullptr;
}

void Verifier::noteDef(ValueId v, SrcLoc errorAt) {
  const SrcLoc& def = value(v).loc;
  if (def.line == errorAt.line && def.col == errorAt.col) return;
  diags_.note(def, "'%" + value(v).name + "' is defined here");
}

std::optional<int64_t> Verifier::constValue(ValueId v) const {
  if (constants_.empty()) indexConstants();
  auto it = constants_.find({fn_, v});
  if (it == constants_.end()) return std::nullopt;
  return it->second;
}

void Verifier::indexConstants() const {
  for (const auto& f : mod_.functions)
    walk(f->body, [&](const Op& op) {
      if (op.kind != OpKind::Constant) return;
      // The syntaxes' integer literals: decimal or 0x-hex (never octal: "040" is forty).
      if (op.constant.kind == ConstantValue::Kind::Int)
        constants_[{f.get(), op.results[0]}] = static_cast<int64_t>(op.constant.bits);
    });
}

void Verifier::checkOp(const Op& op, const std::set<std::string>& functionNames) {
  // Ops the builder already reported (an undefined operand) are not checked again.
  for (ValueId v : op.operands)
    if (v == kNoValue) return;
  checkEntryBound(op);
  // A declared tile's type errors point at its type annotation.
  if (op.kind == OpKind::AllocTile && op.typeLoc.valid() && op.typeLoc.line != 0)
    checkTileType(type(op.results[0]).slotTile(), op.typeLoc, op.results[0]);
  for (ValueId r : op.results)
    checkValueType(r);
  for (const Region& reg : op.regions)
    for (ValueId a : reg.args)
      checkValueType(a);
  switch (op.kind) {
  case OpKind::TileOp:
    checkTileOp(op);
    break;
  case OpKind::AllocTile:
    checkAlloc(op);
    break;
  case OpKind::MultiTileGet:
    checkMultiTileGet(op);
    break;
  case OpKind::TAssign:
    checkAssign(op);
    break;
  case OpKind::MakeTensorView:
    checkMakeView(op);
    break;
  case OpKind::ReinterpretView:
    checkReinterpret(op);
    break;
  case OpKind::PartitionView:
    checkPartition(op);
    break;
  case OpKind::SetFlag:
  case OpKind::WaitFlag:
    checkFlag(op);
    break;
  case OpKind::Barrier:
    checkBarrier(op);
    break;
  case OpKind::Call:
    if (!functionNames.count(op.name))
      diags_.error(op.typeLoc, "call to undefined function '@" + op.name + "'");
    break;
  case OpKind::Subset:
    checkSubset(op);
    break;
  case OpKind::TGetVal:
    checkTGetVal(op);
    break;
  case OpKind::Print:
    checkPrint(op);
    break;
  case OpKind::LoadScalar:
  case OpKind::StoreScalar:
    checkScalarMemory(op);
    break;
  case OpKind::PipeInit:
  case OpKind::PipePush:
  case OpKind::PipePop:
  case OpKind::PipeFree:
  case OpKind::PipeAlloc:
    checkPipeOp(op);
    break;
  default:
    break;
  }
}

void Verifier::checkMakeView(const Op& op) {
  const Type& vt = type(op.results[0]);
  ValueId ptr = op.operands[0];
  const Type& pt = type(ptr);
  if (pt.kind != TypeKind::Ptr) {
    diags_.error(op.operandLocs[0],
                 "'pto.make_tensor_view' needs a !pto.ptr operand, found " + toString(pt));
    return;
  }
  if (pt.elem != vt.elem) {
    diags_.error(op.operandLocs[0], "pointer element type " + std::string(isa::spelling(pt.elem)) +
                                        " does not match the view element type " +
                                        std::string(isa::spelling(vt.elem)));
    noteDef(ptr);
  }
  size_t rank = vt.shape.size();
  if (static_cast<size_t>(op.ints[0]) != rank || static_cast<size_t>(op.ints[1]) != rank)
    diags_.error(op.loc, "a rank-" + std::to_string(rank) + " view needs " + std::to_string(rank) +
                             " shape and stride operands, found " + std::to_string(op.ints[0]) +
                             " and " + std::to_string(op.ints[1]));
}

void Verifier::checkReinterpret(const Op& op) {
  const Type& src = type(op.operands[0]);
  const Type& res = type(op.results[0]);
  const std::string name = "'memref.reinterpret_cast'";
  if (src.kind != TypeKind::TensorView) {
    diags_.error(op.operandLocs[0],
                 name + " needs a GM memref or tensor view operand, found " + toString(src));
    return;
  }
  if (src.elem != res.elem) {
    diags_.error(op.typeLoc, name + " cannot change the element type (" +
                                 std::string(isa::spelling(src.elem)) + " to " +
                                 std::string(isa::spelling(res.elem)) + ")");
    return;
  }
  if (isa::bitWidth(res.elem) < 8)
    diags_.error(op.typeLoc, name + " of " + std::string(isa::spelling(res.elem)) +
                                 " elements (a sub-byte offset) is not supported");
  // A static size in the result type must be the size operand's value.
  const size_t rank = static_cast<size_t>(op.ints[0]);
  for (size_t i = 0; i < rank && i < res.shape.size(); ++i) {
    std::optional<int64_t> v = constValue(op.operands[2 + i]);
    if (res.shape[i] != kDynamic && v && *v != res.shape[i])
      diags_.error(op.operandLocs[2 + i], name + " size " + std::to_string(*v) + " of dimension " +
                                              std::to_string(i) + " differs from the result type " +
                                              toString(res));
  }
}

void Verifier::checkPartition(const Op& op) {
  if (op.ints.size() < 2) return;
  const Type& src = type(op.operands[0]);
  const Type& res = type(op.results[0]);
  if (src.kind != TypeKind::TensorView) {
    diags_.error(op.operandLocs[0],
                 "'pto.partition_view' needs a !pto.tensor_view operand, found " + toString(src));
    return;
  }
  size_t rank = src.shape.size();
  if (static_cast<size_t>(op.ints[0]) != rank || static_cast<size_t>(op.ints[1]) != rank) {
    diags_.error(op.loc, "a partition of a rank-" + std::to_string(rank) + " view needs " +
                             std::to_string(rank) + " offsets and sizes");
    return;
  }
  if (src.elem != res.elem)
    diags_.error(op.typeLoc, "partition element type " + std::string(isa::spelling(res.elem)) +
                                 " differs from the view's " +
                                 std::string(isa::spelling(src.elem)));
  // Constant sizes must equal the static result dims (trailing dims aligned).
  size_t resRank = res.shape.size();
  for (size_t i = 0; i < rank; ++i) {
    ValueId sz = op.operands[1 + rank + i];
    auto c = constValue(sz);
    if (!c) continue;
    if (*c <= 0) diags_.error(op.operandLocs[1 + rank + i], "partition size must be positive");
    if (rank == resRank && res.shape[i] != kDynamic && res.shape[i] != *c)
      diags_.error(op.typeLoc,
                   "partition size " + std::to_string(*c) + " in dimension " + std::to_string(i) +
                       " does not match the result type dimension " + std::to_string(res.shape[i]));
    // A static partition must lie inside a static view.
    auto off = constValue(op.operands[1 + i]);
    const bool pastView = op.ints.size() > 2 && op.ints[2] == kPartitionPastView;
    if (off && !pastView && src.shape[i] != kDynamic && (*off < 0 || *off + *c > src.shape[i]))
      diags_.error(op.operandLocs[1 + i], "partition [" + std::to_string(*off) + ", " +
                                              std::to_string(*off + *c) + ") in dimension " +
                                              std::to_string(i) + " is outside the view's extent " +
                                              std::to_string(src.shape[i]));
  }
}

void Verifier::checkScalarMemory(const Op& op) {
  bool load = op.kind == OpKind::LoadScalar;
  ValueId ptr = op.operands[load ? 0 : 1];
  const Type& pt = type(ptr);
  const Type& vt = type(load ? op.results[0] : op.operands[0]);
  // A GM pointer, or a 1-D view of GM (a memref<?xT> argument, as PTOAS's tests pass one) or a
  // partition of one (a memref.subview of it).
  const bool view1d = pt.isView() && pt.shape.size() == 1;
  if (pt.kind != TypeKind::Ptr && !view1d) {
    diags_.error(op.operandLocs[load ? 0 : 1],
                 "'" + op.name + "' needs a !pto.ptr operand or a 1-D view or partition, found " +
                     toString(pt));
    return;
  }
  if (!type(op.operands[load ? 1 : 2]).isIntLike())
    diags_.error(op.operandLocs[load ? 1 : 2],
                 "'" + op.name + "' offset must be an integer or index");
  if (vt.kind != TypeKind::Scalar || vt.elem != pt.elem)
    diags_.error(load ? op.loc : op.operandLocs[0],
                 "'" + op.name + "' " + (load ? "loads " : "stores ") + toString(vt) + " through " +
                     toString(pt) + ": the types must match");
}

/// pto.print prints one integer, index or f16/bf16/f32 scalar through a format of
/// isa/PrintFormat.h; pto.trap takes nothing.
void Verifier::checkPrint(const Op& op) {
  if (op.named == NamedOp::Trap) {
    if (!op.operands.empty()) diags_.error(op.loc, "'pto.trap' takes no operands");
    return;
  }
  if (op.operands.size() != 1)
    return diags_.error(op.loc, "'pto.print' prints one scalar: pto.print ins(\"format\", %x : T)");
  const Type& t = type(op.operands[0]);
  const bool scalar = t.kind == TypeKind::Index ||
                      (t.kind == TypeKind::Scalar && isa::bitWidth(t.elem) >= 8) ||
                      (t.kind == TypeKind::Scalar && t.elem == isa::DType::I1);
  const bool wideFloat = !isa::isFloat(t.elem) || t.elem == isa::DType::F32 ||
                         t.elem == isa::DType::F16 || t.elem == isa::DType::BF16;
  if (!scalar || !wideFloat)
    return diags_.error(op.operandLocs[0], "'pto.print' prints an integer, index, f16, bf16 or " +
                                               std::string("f32 scalar, found ") + toString(t));
  const std::optional<std::string> format = ir::printFormat(op);
  if (!format) return diags_.error(op.loc, "'pto.print' format is not a string");
  if (auto e = isa::print::formatError(*format, ir::printedType(t)))
    diags_.error(op.loc, "'pto.print' cannot print with " + *e);
}

void Verifier::checkFlag(const Op& op) {
  if (op.event->kind == EventRef::Kind::Const) {
    unsigned n = isa::profile(arch_).eventIdsPerPipePair;
    if (op.event->id < 0 || op.event->id >= static_cast<int>(n))
      diags_.error(op.typeLoc.valid() ? op.typeLoc : op.loc,
                   "event id " + std::to_string(op.event->id) + " is out of range: " + archName() +
                       " has EVENT_ID0..EVENT_ID" + std::to_string(n - 1) + " per pipe pair");
  }
  if (op.srcPipe == isa::Pipe::All || op.dstPipe == isa::Pipe::All)
    diags_.error(op.loc, "PIPE_ALL cannot be an event endpoint; use 'pto.barrier <PIPE_ALL>'");
  else if (op.srcPipe == op.dstPipe)
    diags_.error(op.loc, "an event between " + std::string(isa::spelling(op.srcPipe)) +
                             " and itself orders nothing; use 'pto.barrier <" +
                             std::string(isa::spelling(op.srcPipe)) + ">'");
}

void Verifier::checkBarrier(const Op& op) {
  if (arch_ != isa::Arch::A5) return;
  if (op.srcPipe == isa::Pipe::V)
    diags_.warning(
        op.loc,
        "a PIPE_V barrier has no effect on a5: the hardware keeps the vector pipe in order");
  else if (op.srcPipe != isa::Pipe::MTE2 && op.srcPipe != isa::Pipe::MTE3 &&
           op.srcPipe != isa::Pipe::All)
    diags_.error(op.loc, "a5 supports pipe barriers only on PIPE_MTE2, PIPE_MTE3 and PIPE_ALL");
}

} // namespace verify

isa::Arch resolveArch(const ir::Module& m, std::optional<isa::Arch> flag) {
  if (flag) return *flag;
  return m.targetArch.value_or(isa::Arch::A2A3);
}

void verifyModule(const ir::Module& m, isa::Arch arch, DiagEngine& diags) {
  verify::Verifier(m, arch, diags).run();
}

void verifyManualPlacement(const ir::Module& m, DiagEngine& diags) {
  for (const auto& f : m.functions)
    ir::walk(f->body, [&](const ir::Op& op) {
      if (op.kind == ir::OpKind::AllocTile &&
          (op.name == "pto.alloc_tile" || op.name == "pto.alloc_multi_tile") &&
          (op.ints.empty() || op.ints[0] == 0))
        diags.error(op.loc, "'" + op.name + "' requires 'addr' operand when --pto-level=level3");
    });
}

void verifyTAssignMode(const ir::Module& m, bool level3, bool insertSync, DiagEngine& diags) {
  for (const auto& f : m.functions) {
    std::set<ir::ValueId> constants;
    ir::walk(f->body, [&](const ir::Op& op) {
      if (op.kind == ir::OpKind::Constant) constants.insert(op.results.begin(), op.results.end());
    });
    ir::walk(f->body, [&](const ir::Op& op) {
      if (op.kind != ir::OpKind::TAssign) return;
      // PTOAS's rules: its insert-sync pass cannot follow a tile whose address changes, and a
      // run-time address could land on a tile the linker placed (levels 1 and 2).
      if (insertSync)
        diags.error(op.loc, "pto.tassign requires --enable-insert-sync to be disabled");
      else if (!level3 && op.operands.size() > 1 && !constants.count(op.operands[1]))
        diags.error(op.loc, "pto.tassign with a run-time address is only supported when "
                            "--pto-level=level3 (every tile at an address of its author's)");
    });
  }
}

} // namespace pto::as
