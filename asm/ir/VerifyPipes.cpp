// Cross-core pipes and reserved buffers (docs/pipes.md): the rules PTOAS's verifiers and passes
// apply (same messages where PTOAS has one), plus the limits of the hardware's 16 cross-core
// flags.
#include "asm/ir/VerifierImpl.h"
#include "support/Text.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace pto::as::verify {

std::string Verifier::kernelKind(const Function& f) {
  switch (f.kernelKind) {
  case Function::KernelKind::Cube:
    return "cube";
  case Function::KernelKind::Vector:
    return "vector";
  default:
    return {};
  }
}

/// Module-wide: reserve names and imports are unique in a function; an import names an existing
/// function holding a reserve_buffer of that name.
void Verifier::checkReservedBuffers() {
  std::map<std::string, std::vector<std::string>> reserves; // function -> reserve names
  for (const auto& f : mod_.functions)
    walk(f->body, [&](const Op& op) {
      if (op.kind == OpKind::ReserveBuffer) reserves[f->name].push_back(op.pipe->name);
    });
  for (const auto& f : mod_.functions) {
    checkPipeFlags(*f);
    // A function opens one pipe per id (PTOAS's `id`), so it may hold several reserves and
    // imports: a reserve's name, and an import's (name, peer_func), are unique in it.
    std::map<std::string, const Op*> reserveNamed;
    std::map<std::pair<std::string, std::string>, const Op*> importNamed;
    walk(f->body, [&](const Op& op) {
      if (op.kind == OpKind::ReserveBuffer) {
        if (auto [it, fresh] = reserveNamed.try_emplace(op.pipe->name, &op); !fresh) {
          diags_.error(op.loc, "'pto.reserve_buffer' expects 'name' to be unique in the function "
                               "('" +
                                   op.pipe->name + "')");
          diags_.note(it->second->loc, "the first reserve_buffer of that name is here");
        }
        checkReserve(op);
        if (op.pipe->autoAlloc.value_or(0) == 0 && op.pipe->base) checkManualReserveTiles(*f, op);
      } else if (op.kind == OpKind::ImportReserved) {
        if (auto [it, fresh] = importNamed.try_emplace({op.pipe->name, op.pipe->peerFunc}, &op);
            !fresh) {
          diags_.error(op.loc, "'pto.import_reserved_buffer' expects (name, peer_func) to be "
                               "unique in the function ('" +
                                   op.pipe->name + "', @" + op.pipe->peerFunc + ")");
          diags_.note(it->second->loc, "the first import of that buffer is here");
        }
        const std::string& peer = op.pipe->peerFunc;
        const std::string& name = op.pipe->name;
        bool exists = false;
        for (const auto& g : mod_.functions)
          exists = exists || (g->name == peer && !g->isDeclaration);
        if (!exists) {
          diags_.error(op.loc, "'pto.import_reserved_buffer' expects 'peer_func' to reference an "
                               "existing func.func (@" +
                                   peer + ")");
          return;
        }
        const auto& names = reserves[peer];
        if (std::find(names.begin(), names.end(), name) == names.end())
          diags_.error(op.loc, "'pto.import_reserved_buffer' expects matching peer reserve_buffer "
                               "to exist ('" +
                                   name + "' in @" + peer + ")");
      }
    });
  }
}

/// A reserve_buffer at a manual base (`auto = false`) is placed by its author, so the tiles beside
/// it must be too: the linker cannot keep planned tiles clear of bytes it did not place (PTOAS's
/// PlanMemory refuses the same mix, with this message).
void Verifier::checkManualReserveTiles(const Function& f, const Op& reserve) {
  std::set<ValueId> assigned; // tiles a pto.tassign places
  walk(f.body, [&](const Op& op) {
    if (op.kind == OpKind::TAssign && !op.operands.empty()) assigned.insert(op.operands[0]);
  });
  walk(f.body, [&](const Op& op) {
    const bool userAlloc = op.name == "pto.alloc_tile" || op.name == "memref.alloc" ||
                           op.name == "pto.alloc_multi_tile";
    if (op.kind != OpKind::AllocTile || !userAlloc || op.results.empty()) return;
    if ((!op.ints.empty() && op.ints[0] != 0) || assigned.count(op.results[0])) return;
    diags_.error(op.loc, "'" + op.name +
                             "' cannot use pto.reserve_buffer with auto = false when local "
                             "pto.alloc_tile still requires PlanMemory address assignment");
    diags_.note(reserve.loc, "the reserve_buffer at a manual base is here");
  });
}

/// The pipes one function opens use disjoint cross-core flags: two directions on one flag pair
/// would be one queue (flag_base F: F and F+1, a two-way pipe's V2C F+2 and F+3).
void Verifier::checkPipeFlags(const Function& f) {
  std::map<int64_t, const Op*> owner; // flag -> the init using it
  walk(f.body, [&](const Op& op) {
    if (op.kind != OpKind::PipeInit) return;
    const int64_t base = op.pipe->flagBase.value_or(0);
    const int64_t width = op.pipe->dirMask.value_or(1) == 3 ? 4 : 2;
    for (int64_t flag = base; flag < base + width; ++flag) {
      auto [it, fresh] = owner.try_emplace(flag, &op);
      if (fresh || it->second == &op) continue;
      diags_.error(op.loc, "'" + op.name + "' uses cross-core flag " + std::to_string(flag) +
                               ", which another pipe of the function already uses (give each "
                               "pipe its own id, or flag_base)");
      diags_.note(it->second->loc, "the other pipe is opened here");
      return;
    }
  });
}

void Verifier::checkReserve(const Op& op) {
  const std::string what = "'pto.reserve_buffer'";
  const auto size = op.pipe->size;
  if (!size || *size <= 0) diags_.error(op.loc, what + " expects 'size' to be greater than 0");
  const bool vec = op.pipe->location == isa::Loc::Vec;
  const bool mat = op.pipe->location == isa::Loc::Mat;
  if (!vec && !mat)
    diags_.error(op.loc, what + " expects 'location' to be #pto.address_space<vec> or "
                                "#pto.address_space<mat>");
  const auto autoAlloc = op.pipe->autoAlloc;
  const auto base = op.pipe->base;
  if (autoAlloc.value_or(0) == 0 && !base)
    diags_.error(op.loc, what + " expects 'base' when 'auto' is false");
  if (autoAlloc.value_or(0) != 0 && base)
    diags_.error(op.loc, what + " expects 'base' to be absent when 'auto' is true");
  if (base && *base < 0) diags_.error(op.loc, what + " expects 'base' to be non-negative");
  if (size && *size > 0 && (vec || mat) && !base) {
    const isa::BufferSpec& buf = isa::buffer(arch_, vec ? isa::Loc::Vec : isa::Loc::Mat);
    if (*size > static_cast<int64_t>(buf.capacity))
      diags_.error(op.loc, what + " exceeds available local memory capacity (" +
                               std::to_string(buf.capacity) + " bytes on " + archName() + ")");
  }
  if (base && *base >= 0 && size && *size > 0 && (vec || mat)) {
    const isa::BufferSpec& buf = isa::buffer(arch_, vec ? isa::Loc::Vec : isa::Loc::Mat);
    if (*base % 256 != 0)
      diags_.error(op.loc, what + " expects 'base' to satisfy the address-space alignment (256)");
    else if (*base + *size > static_cast<int64_t>(buf.capacity))
      diags_.error(op.loc, what + " exceeds available local memory capacity (" +
                               std::to_string(buf.capacity) + " bytes on " + archName() + ")");
  }
}

/// One op of the pipe family, against its function's kernel kind and its pipe's init op.
void Verifier::checkPipeOp(const Op& op) {
  // The builder emits these whole (a pipe last, a tile first for push and pop); an op that is
  // not is left to the builder's error.
  const size_t want =
      op.kind == OpKind::PipePush || op.kind == OpKind::PipePop || op.kind == OpKind::PipeAlloc ? 2
                                                                                                : 1;
  if (op.operands.size() < want || op.ints.empty() ||
      (op.kind == OpKind::PipeInit && op.results.empty()))
    return;
  const std::string kind = kernelKind(*fn_);
  if (op.kind == OpKind::PipeInit) return checkPipeInit(op, kind);
  const std::string what = "'" + op.name + "'";
  if (kind.empty()) {
    diags_.error(op.loc, what + " must be inside a kernel_kind function (#pto.kernel_kind<cube> "
                                "or #pto.kernel_kind<vector>)");
    return;
  }
  const ValueId pipe = op.operands.back();
  const Op* init = pipeInits_.count(pipe) ? pipeInits_.at(pipe) : nullptr;
  if (type(pipe).kind != TypeKind::Pipe || !init) {
    diags_.error(op.operandLocs.back(), what + " expects a pipe_handle produced by "
                                               "pto.initialize_l2l_pipe or "
                                               "pto.initialize_l2g2l_pipe");
    return;
  }
  // The cube pushes C2V and pops V2C; the vector cores the reverse.
  const bool cube = kind == "cube";
  const bool c2v = op.kind == OpKind::PipePush || op.kind == OpKind::PipeAlloc ? cube : !cube;
  const int dir = static_cast<int>(init->pipe->dirMask.value_or(0));
  if (!(dir & (c2v ? 1 : 2))) {
    diags_.error(op.loc, what + " in a " + kind + " kernel moves tiles " +
                             (c2v ? "cube to vector (C2V)" : "vector to cube (V2C)") +
                             ", which the pipe's dir_mask " + std::to_string(dir) +
                             " does not enable");
    diags_.note(init->loc, "the pipe is initialized here");
  }
  // One logical pipe is split or not, never both (PTOAS's InferValidatePipeInit).
  auto& splits = pipeSplits_[pipe];
  splits.insert(op.ints[0] == 0 ? 0 : 1);
  if (splits.size() == 2 && !reportedSplitMix_.count(pipe)) {
    reportedSplitMix_.insert(pipe);
    diags_.error(op.loc, what + " cannot mix 'split = 0' with 'split = 1' or 'split = 2' on the "
                                "same logical pipe");
  }
  const bool gmEntries = init->ints.size() > 1 && init->ints[1];
  if (gmEntries) return checkPipeEntry(op, *init, cube);
  if (op.kind == OpKind::PipeAlloc || (op.kind == OpKind::PipeFree && op.operands.size() > 1)) {
    diags_.error(op.loc, what + (op.kind == OpKind::PipeAlloc ? "" : " with an entry operand") +
                             " needs a pipe whose slots are GM tensor views (gm_slot_tensor); "
                             "this pipe hands tiles over");
    diags_.note(init->loc, "the pipe is initialized here");
    return;
  }
  if (op.kind == OpKind::PipeFree) return;
  const ValueId tile = op.operands[0];
  if (!type(tile).isTile()) {
    diags_.error(op.operandLocs[0], what + " expects a tile, found " + toString(type(tile)));
    return;
  }
  const isa::Loc loc = type(tile).tile.loc;
  if (op.kind == OpKind::PipePush) {
    const isa::Loc want = cube ? isa::Loc::Acc : isa::Loc::Vec;
    if (loc != want)
      diags_.error(op.operandLocs[0], what + " in a " + kind + " kernel pushes " +
                                          (cube ? "an acc" : "a vec") +
                                          " tile, found loc=" + std::string(isa::spelling(loc)));
  } else {
    const isa::Loc want = cube ? isa::Loc::Mat : isa::Loc::Vec;
    if (loc != want)
      diags_.error(op.operandLocs[0], what + " in a " + kind + " kernel pops into " +
                                          (cube ? "a mat" : "a vec") +
                                          " tile, found loc=" + std::string(isa::spelling(loc)));
  }
}

/// A GM entry (pto.declare_global) has no address until a talloc or tpop binds it to a slot: any
/// other use before that reads nothing.
void Verifier::checkEntryBound(const Op& op) {
  if (op.kind == OpKind::DeclareGlobal && !op.results.empty()) {
    unboundEntries_.insert(op.results[0]);
    return;
  }
  const bool binds = op.kind == OpKind::PipeAlloc || op.kind == OpKind::PipePop;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (!unboundEntries_.count(op.operands[i])) continue;
    if (binds && i == 0) {
      unboundEntries_.erase(op.operands[i]);
      continue;
    }
    diags_.error(op.operandLocs[i], "'%" + fn_->value(op.operands[i]).name +
                                        "' (pto.declare_global) is used before a pto.talloc or "
                                        "pto.tpop binds it to a pipe slot");
    unboundEntries_.erase(op.operands[i]); // reported once
  }
}

/// A data op of a GM-entry pipe (PTOAS's global-only GM FIFO): its entry is a !pto.tensor_view
/// (a tfree names the one its tpop gave) of the slot view's element type, and fits the slot:
/// a vector core's entry of a split slot is half of it.
void Verifier::checkPipeEntry(const Op& op, const Op& init, bool cube) {
  const std::string what = "'" + op.name + "'";
  if (op.operands.size() < 2) {
    diags_.error(op.loc, what + " of a pipe whose slots are GM tensor views names the entry it "
                                "gives back (tfree_from_aic(%entry : !pto.tensor_view<...>))");
    return;
  }
  const Type& entry = type(op.operands[0]);
  if (entry.kind != TypeKind::TensorView) {
    diags_.error(op.operandLocs[0], what +
                                        " of a pipe whose slots are GM tensor views "
                                        "(gm_slot_tensor) expects a !pto.tensor_view entry, "
                                        "found " +
                                        toString(entry));
    diags_.note(init.loc, "the pipe is initialized here");
    return;
  }
  const Type& slot = type(init.operands[0]);
  if (slot.elem != entry.elem || slot.shape.size() != entry.shape.size()) {
    diags_.error(op.operandLocs[0], what + " entry " + toString(entry) +
                                        " does not match the pipe's gm_slot_tensor " +
                                        toString(slot));
    return;
  }
  // Saturating at 2^62: a written shape may be as large as the parser reads.
  constexpr int64_t kCap = int64_t{1} << 62;
  auto times = [&](int64_t a, int64_t n) { return a > kCap / n ? kCap : a * n; };
  int64_t bytes = static_cast<int64_t>(std::max(1u, isa::bitWidth(entry.elem) / 8));
  for (int64_t d : entry.shape)
    bytes = times(bytes, std::max<int64_t>(d, 1));
  if (!cube && op.ints[0] != 0) bytes = times(bytes, 2); // a vector core's half of a split slot
  const int64_t slotSize = init.pipe->slotSize.value_or(0);
  if (slotSize > 0 && bytes > slotSize)
    diags_.error(op.operandLocs[0],
                 what + " entry " + toString(entry) + " needs " + std::to_string(bytes) +
                     " bytes of a slot" + (!cube && op.ints[0] ? " (two halves, split)" : "") +
                     ", more than the pipe's slot_size " + std::to_string(slotSize));
}

void Verifier::checkPipeInit(const Op& op, const std::string& kind) {
  const std::string what = "'" + op.name + "'";
  pipeInits_[op.results[0]] = &op;
  const std::string& frontend = op.pipe->frontend;
  if (!frontend.empty() && kind != (frontend == "aic" ? "cube" : "vector"))
    diags_.error(op.loc, "'pto." + frontend + "_initialize_pipe' must be inside a " +
                             (frontend == "aic" ? "cube" : "vector") + " kernel function");
  if (frontend.empty() && kind.empty())
    diags_.error(op.loc, what + " must be inside a kernel_kind function (#pto.kernel_kind<cube> "
                                "or #pto.kernel_kind<vector>)");
  const auto dir = op.pipe->dirMask;
  const auto slotSize = op.pipe->slotSize;
  const auto slotNum = op.pipe->slotNum;
  const auto localSlots = op.pipe->localSlotNum;
  const auto flagBase = op.pipe->flagBase;
  if (!dir || *dir < 1 || *dir > 3)
    diags_.error(op.loc, what + " expects 'dir_mask' to be 1, 2, or 3");
  if (!slotSize || *slotSize <= 0)
    diags_.error(op.loc, what + " expects 'slot_size' to be greater than 0");
  else if (*slotSize > 256 * 1024)
    diags_.error(op.loc, what + " expects 'slot_size' of at most 262144 bytes");
  if (!slotNum || (*slotNum != 4 && *slotNum != 8))
    diags_.error(op.loc, what + " expects 'slot_num' to be 4 or 8");
  if (localSlots && (*localSlots <= 0 || (slotNum && *localSlots > *slotNum)))
    diags_.error(op.loc, what + " expects 'local_slot_num' to be greater than 0 and less than or "
                                "equal to slot_num");
  // A pipe uses flags F and F+1 per direction (F+2, F+3 for V2C of a two-way pipe) of the 16
  // cross-core flags.
  if (flagBase && (*flagBase < 0 || *flagBase > 12))
    diags_.error(op.loc, what + " expects 'flag_base' in 0..12 (the pipe uses flags flag_base.."
                                "flag_base+3 of the 16 cross-core flags)");
  if (op.ints.size() > 1 && op.ints[1]) { // a GM-entry pipe: one slot's tensor view
    if (arch_ == isa::Arch::A5)
      diags_.error(op.loc, what + " with a gm_slot_tensor needs an A2/A3 target: A5's pipes have "
                                  "no GM ring");
    return;
  }
  const size_t first = op.ints[0] ? 1 : 0; // the GM ring comes first in initialize_l2g2l_pipe
  if (op.operands.size() <= first) {
    diags_.error(op.loc, what + " expects a local address");
    return;
  }
  const size_t locals = op.operands.size() - first;
  if (dir && *dir == 3 && locals != 2)
    diags_.error(op.loc, what + " expects 'peer_local_addr' when dir_mask is 3");
  if (dir && *dir != 3 && locals != 1)
    diags_.error(op.loc, what + " 'peer_local_addr' is only allowed when dir_mask is 3");
  if (op.ints[0]) {
    const Type& g = type(op.operands[0]);
    // PTOAS's frontends also pass the ring as an integer (`%gm_slot_buffer: i32`): its GM byte
    // address, as a pointer is one in a register.
    if (g.kind != TypeKind::Ptr && g.kind != TypeKind::TensorView && !g.isIntLike())
      diags_.error(op.operandLocs[0], what +
                                          " expects the GM slot buffer to be a pointer, a GM "
                                          "memref or an integer GM address, found " +
                                          toString(g));
  }
  bool fromReserves = true;
  for (size_t i = first; i < op.operands.size(); ++i) {
    if (!type(op.operands[i]).isIntLike())
      diags_.error(op.operandLocs[i], what + " expects a local address (i32), found " +
                                          toString(type(op.operands[i])));
    const Op* def = definingOp(op.operands[i]);
    fromReserves = fromReserves && def &&
                   (def->kind == OpKind::ReserveBuffer || def->kind == OpKind::ImportReserved);
  }
  if (!fromReserves && !flagBase)
    diags_.error(op.loc, what + " requires local_addr to come from pto.reserve_buffer or "
                                "pto.import_reserved_buffer when 'flag_base' is not explicit");
}

/// Module-wide, as PTOAS's InferValidatePipeInit and ResolveReservedBuffers passes: the init ops
/// whose buffers come from a reserve_buffer / import_reserved_buffer pair up, one per side, in
/// two functions; the two ends of a pipe agree on splitting tiles (split = 0 on one side and 1
/// or 2 on the other would deadlock), and an explicit nosplit agrees with the pipe's users.
void Verifier::checkPipePeers() {
  struct End {
    const Function* fn;
    const Op* init;
    std::set<int> splits; // 0: split = 0 seen, 1: split 1 or 2 seen
  };
  std::vector<End> ends;
  std::map<std::tuple<std::string, std::string, int>, std::vector<size_t>> groups;
  for (const auto& f : mod_.functions) {
    std::map<ValueId, const Op*> defs;
    std::map<ValueId, size_t> endOf;
    walk(f->body, [&](const Op& op) {
      for (ValueId r : op.results)
        defs[r] = &op;
      if (op.kind == OpKind::PipeInit && !op.results.empty() && !op.ints.empty()) {
        endOf[op.results[0]] = ends.size();
        ends.push_back({f.get(), &op, {}});
      } else if ((op.kind == OpKind::PipePush || op.kind == OpKind::PipePop ||
                  op.kind == OpKind::PipeFree) &&
                 !op.operands.empty() && !op.ints.empty() && endOf.count(op.operands.back())) {
        ends[endOf[op.operands.back()]].splits.insert(op.ints[0] == 0 ? 0 : 1);
      }
    });
    for (auto [pipe, e] : endOf) {
      const Op& init = *ends[e].init;
      const int dir = static_cast<int>(init.pipe->dirMask.value_or(1));
      if (dir < 1 || dir > 3) continue; // reported by checkPipeInit
      const size_t first = init.ints[0] ? 1 : 0;
      for (size_t i = first; i < init.operands.size(); ++i) {
        auto d = defs.find(init.operands[i]);
        if (d == defs.end()) continue;
        const Op& def = *d->second;
        if (def.kind != OpKind::ReserveBuffer && def.kind != OpKind::ImportReserved) continue;
        const std::string owner = def.kind == OpKind::ReserveBuffer ? f->name : def.pipe->peerFunc;
        const int way = dir == 3 ? (i == first ? 1 : 2) : dir;
        groups[{owner, def.pipe->name, way}].push_back(e);
      }
    }
  }
  const std::string pair = "requires a complete peer init pair when local_addr comes from "
                           "pto.reserve_buffer or pto.import_reserved_buffer";
  for (const auto& [key, members] : groups) {
    std::set<const Function*> fns;
    for (size_t e : members)
      fns.insert(ends[e].fn);
    if (members.size() != 2 || fns.size() != 2) {
      for (size_t e : members)
        diags_.error(ends[e].init->loc, "'" + ends[e].init->name + "' " + pair);
      continue;
    }
    const End &a = ends[members[0]], &b = ends[members[1]];
    // Both ends wait on and signal the same cross-core flags (a function's pipes take theirs in
    // the order of their ids).
    const int64_t fa = a.init->pipe->flagBase.value_or(0), fb = b.init->pipe->flagBase.value_or(0);
    if (fa != fb)
      diags_.error(b.init->loc, "'" + b.init->name + "' uses cross-core flags from " +
                                    std::to_string(fb) + " but its peer in @" + a.fn->name +
                                    " uses them from " + std::to_string(fa) +
                                    ": open the same pipe ids, with the same directions, in both "
                                    "functions");
    const auto na = a.init->pipe->noSplit, nb = b.init->pipe->noSplit;
    if (na && nb && *na != *nb)
      diags_.error(b.init->loc, "'" + b.init->name +
                                    "' conflicting explicit 'nosplit' across peer pipe init ops");
    const bool aSplit = a.splits.count(1), aWhole = a.splits.count(0);
    const bool bSplit = b.splits.count(1), bWhole = b.splits.count(0);
    if ((aSplit && bWhole) || (aWhole && bSplit))
      diags_.error(b.init->loc,
                   "'" + b.init->name + "' conflicting pipe split usage across peer pipe init ops");
  }
  for (const End& e : ends) {
    const auto ns = e.init->pipe->noSplit;
    if (!ns) continue;
    if (*ns && e.splits.count(1))
      diags_.error(e.init->loc, "'" + e.init->name +
                                    "' explicit 'nosplit = true' conflicts with downstream users "
                                    "that require split = 1 or split = 2");
    if (!*ns && e.splits.count(0))
      diags_.error(e.init->loc, "'" + e.init->name +
                                    "' explicit 'nosplit = false' conflicts with downstream users "
                                    "that require split = 0");
  }
}

const Op* Verifier::definingOp(ValueId v) const {
  const Op* found = nullptr;
  walk(fn_->body, [&](const Op& op) {
    for (ValueId r : op.results)
      if (r == v) found = &op;
  });
  return found;
}

} // namespace pto::as::verify
