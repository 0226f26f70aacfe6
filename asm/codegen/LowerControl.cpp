// Lowering of structured control flow (scf.for, scf.if, scf.while), the values carried across
// regions, and the signals in GM whose wait is a loop (docs/abi.md, "Control flow", "Signals").
// Split from Lower.cpp, which keeps the driver, values, parameters and calls.
#include "asm/codegen/FunctionLowering.h"

#include <algorithm>

namespace pto::as::lower {

void FunctionLowering::lowerFor(const Op& op) {
  const Region& body = op.regions[0];
  VReg iv = define(body.args[0]);
  copy(iv, reg(op.operands[0]));
  std::vector<ValueId> carried; // the body's iter_args: each one's home holds the value
  for (size_t i = 3; i < op.operands.size(); ++i) {
    if (!bindHome(body.args[i - 2], op.operands[i], op.operandLocs[i])) return;
    carried.push_back(body.args[i - 2]);
  }
  // scf.for's step must be positive when the loop runs (MLIR; the reference interpreter's
  // rule, issue 34 item 10). A constant step that is not positive, with constant bounds that
  // make the loop run, is an error here; otherwise, unless the step is a positive constant, the
  // loop's entry checks it at run time: when iv < ub and step <= 0 it traps (the trap word:
  // `add` with a shift from x0 into x0, docs/abi.md), and the backends report the step at the
  // loop's line.
  const auto step = constantInt(op.operands[2]);
  const auto lb = constantInt(op.operands[0]), ub = constantInt(op.operands[1]);
  if (step && *step <= 0 && lb && ub && *lb < *ub) {
    diags_.error(op.operandLocs.size() > 2 ? op.operandLocs[2] : op.loc,
                 "scf.for step " + std::to_string(*step) + " is not positive, and the loop runs (" +
                     std::to_string(*lb) + " to " + std::to_string(*ub) + ")");
    ok_ = false;
    return;
  }
  if (!step || (*step <= 0 && !(lb && ub))) {
    const int stepOk = newLabel();
    conditionalExit(stepOk, op.loc, [&] { // no trip: any step
      scalar(FormId::S_SETC_GE, {}, {{"SrcL", iv, false}, {"SrcR", reg(op.operands[1]), false}});
    });
    conditionalExit(stepOk, op.loc, [&] { // 0 < step
      scalar(FormId::S_SETC_LT, {{"SrcL", kZero}}, {{"SrcR", reg(op.operands[2]), false}});
    });
    pendingLoc_ = op.loc;
    scalar(FormId::S_ADD,
           {{"shamt", isa::trapword::kStepShift}, {"SrcL", kZero}, {"RegDst", kZero}},
           {{"SrcR", reg(op.operands[2]), false}});
    placeLabel(stepOk);
    inScalarBlock_ = false;
  }
  int head = newLabel(), exit = newLabel();
  placeLabel(head);
  size_t loopStart = code_.size();
  // Head block: leave when iv >= ub (signed, as index arithmetic is).
  conditionalExit(exit, op.loc, [&] {
    scalar(FormId::S_SETC_GE, {}, {{"SrcL", iv, false}, {"SrcR", reg(op.operands[1]), false}});
  });
  lowerRegion(body);
  // Latch block: step, carry the yielded values, jump back.
  startBranchBlock(head, false);
  const Op* yield = terminator(body, OpKind::Yield);
  if (yield) yieldTo(carried, yield->operands, yield->loc, true);
  scalar(FormId::S_ADD, {},
         {{"SrcL", iv, false}, {"SrcR", reg(op.operands[2]), false}, {"RegDst", iv, true}});
  loops_.push_back({loopStart, code_.size() - 1});
  placeLabel(exit);
  inScalarBlock_ = false;
  for (size_t i = 0; i < op.results.size() && i < carried.size(); ++i)
    shareHome(op.results[i], carried[i]);
}

const Op* FunctionLowering::terminator(const Region& r, OpKind kind) {
  if (r.ops.empty() || r.ops.back()->kind != kind) return nullptr;
  return r.ops.back().get();
}

void FunctionLowering::lowerIf(const Op& op) {
  int elseLabel = newLabel(), end = newLabel();
  VReg c = reg(op.operands[0]);
  conditionalExit(elseLabel, op.loc, [&] {
    scalar(FormId::S_SETC_EQ, {{"SrcR", kZero}}, {{"SrcL", c, false}});
  });
  lowerRegion(op.regions[0]);
  // The results' homes are made on the then edge, from the values it yields.
  const Op* thenYield = terminator(op.regions[0], OpKind::Yield);
  if (!op.results.empty() && !thenYield)
    return unsupported(op.loc, "'scf.if' with results and no 'scf.yield'");
  for (size_t i = 0; i < op.results.size(); ++i)
    if (!bindHome(op.results[i], thenYield->operands[i], thenYield->operandLocs[i])) return;
  bool hasElse = !op.regions[1].ops.empty();
  if (hasElse) startBranchBlock(end, false);
  placeLabel(elseLabel);
  inScalarBlock_ = false;
  if (hasElse) {
    lowerRegion(op.regions[1]);
    if (const Op* y = terminator(op.regions[1], OpKind::Yield))
      yieldTo(op.results, y->operands, y->loc);
    placeLabel(end);
    inScalarBlock_ = false;
  }
}

void FunctionLowering::lowerWhile(const Op& op) {
  const Region& before = op.regions[0];
  const Region& after = op.regions[1];
  for (size_t i = 0; i < before.args.size(); ++i)
    if (!bindHome(before.args[i], op.operands[i], op.operandLocs[i])) return;
  int head = newLabel(), exit = newLabel();
  placeLabel(head);
  size_t loopStart = code_.size();
  inScalarBlock_ = false;
  lowerRegion(before);
  const Op* cond = terminator(before, OpKind::Condition);
  if (!cond) return unsupported(op.loc, "'scf.while' without 'scf.condition'");
  // The values scf.condition passes become the results (on exit) and the after region's
  // arguments (otherwise); both homes are written before the decision, which reads neither.
  for (size_t i = 0; i + 1 < cond->operands.size(); ++i) {
    if (i < op.results.size() &&
        !bindHome(op.results[i], cond->operands[i + 1], cond->operandLocs[i + 1]))
      return;
    if (i < after.args.size() &&
        !bindHome(after.args[i], cond->operands[i + 1], cond->operandLocs[i + 1]))
      return;
  }
  VReg c = reg(cond->operands[0]);
  conditionalExit(exit, cond->loc, [&] {
    scalar(FormId::S_SETC_EQ, {{"SrcR", kZero}}, {{"SrcL", c, false}});
  });
  lowerRegion(after);
  startBranchBlock(head, false);
  if (const Op* y = terminator(after, OpKind::Yield))
    yieldTo(before.args, y->operands, y->loc, true);
  loops_.push_back({loopStart, code_.size() - 1});
  placeLabel(exit);
  inScalarBlock_ = false;
}

// A value that crosses a region boundary (iter_args, scf.if and scf.while results) has one
// home that every incoming edge writes: a scalar its register; a tensor view its base register
// (strides must agree on every edge); a partition its address and stride registers (its static
// shape must agree); a tile one descriptor, the first incoming tile's, into which a different
// tile arriving on another edge is copied with TMOV (tiles are buffers: docs/abi.md).

/// Gives `home` a fresh home initialised from `from` (the first incoming edge).
bool FunctionLowering::bindHome(ValueId home, ValueId from, SrcLoc loc) {
  const Type& t = fn_.type(home);
  switch (t.kind) {
  case TypeKind::Tile: {
    auto d = tiles_.find(from);
    if (d == tiles_.end()) {
      missing(loc, "this tile operand");
      return false;
    }
    tiles_[home] = d->second;
    if (auto v = valid_.find(from); v != valid_.end()) valid_[home] = v->second;
    return true;
  }
  case TypeKind::TensorView: {
    auto v = views_.find(from);
    if (v == views_.end()) {
      missing(loc, "this tensor view");
      return false;
    }
    ViewRegs h = v->second;
    h.base = newVReg();
    copy(h.base, v->second.base);
    views_[home] = h;
    if (auto s = dynamicShapes_.find(from); s != dynamicShapes_.end())
      dynamicShapes_[home] = s->second;
    return true;
  }
  case TypeKind::PartView: {
    auto p = parts_.find(from);
    if (p == parts_.end()) {
      missing(loc, "this partition view");
      return false;
    }
    PartRegs h = p->second;
    for (VReg* r : partRegs(h)) {
      VReg src = *r;
      *r = newVReg();
      copy(*r, src);
    }
    parts_[home] = h;
    return true;
  }
  case TypeKind::EventIdArray:
  case TypeKind::Pipe:
  case TypeKind::AsyncSession:
  case TypeKind::AsyncEvent:
  case TypeKind::MultiTile:
  case TypeKind::LocalView:
  case TypeKind::None:
    unsupported(loc, "carrying " + toString(t) + " across a region");
    return false;
  default: {
    VReg src = reg(from);
    copy(define(home), src);
    return true;
  }
  }
}

/// The result of a loop shares the home of its iter_arg.
void FunctionLowering::shareHome(ValueId result, ValueId home) {
  if (auto it = vregs_.find(home); it != vregs_.end()) vregs_[result] = it->second;
  if (auto it = tiles_.find(home); it != tiles_.end()) tiles_[result] = it->second;
  if (auto it = valid_.find(home); it != valid_.end()) valid_[result] = it->second;
  if (auto it = views_.find(home); it != views_.end()) views_[result] = it->second;
  if (auto it = dynamicShapes_.find(home); it != dynamicShapes_.end())
    dynamicShapes_[result] = it->second;
  if (auto it = parts_.find(home); it != parts_.end()) parts_[result] = it->second;
}

std::vector<VReg*> FunctionLowering::partRegs(PartRegs& p) {
  std::vector<VReg*> regs{&p.addr, &p.rowStride};
  for (PartRegs::Outer& o : p.outer)
    regs.push_back(&o.strideBytes);
  return regs;
}

/// An edge into the homes: homes[i] = srcs[i] for all i at once (a value may feed another
/// position, as in a swap).
void FunctionLowering::yieldTo(const std::vector<ValueId>& homes, const std::vector<ValueId>& srcs,
                               SrcLoc loc, bool loop) {
  std::vector<VReg> dstRegs, srcRegs;
  std::vector<std::pair<uint32_t, ValueId>> tileCopies; // (home descriptor, source tile)
  for (size_t i = 0; i < homes.size() && i < srcs.size(); ++i) {
    const Type& t = fn_.type(homes[i]);
    switch (t.kind) {
    case TypeKind::Tile: {
      auto h = tiles_.find(homes[i]);
      auto s = tiles_.find(srcs[i]);
      if (h == tiles_.end() || s == tiles_.end()) return missing(loc, "this tile operand");
      if (h->second != s->second) tileCopies.push_back({h->second, srcs[i]});
      break;
    }
    case TypeKind::TensorView: {
      auto h = views_.find(homes[i]);
      auto s = views_.find(srcs[i]);
      if (h == views_.end() || s == views_.end()) return missing(loc, "this tensor view");
      if (!sameStrides(h->second, s->second))
        return unsupported(loc, "yielding tensor views with different strides");
      dstRegs.push_back(h->second.base);
      srcRegs.push_back(s->second.base);
      break;
    }
    case TypeKind::PartView: {
      auto h = parts_.find(homes[i]);
      auto s = parts_.find(srcs[i]);
      if (h == parts_.end() || s == parts_.end()) return missing(loc, "this partition view");
      if (!sameShape(h->second, s->second))
        return unsupported(loc, "yielding partition views of different layouts or slice shapes");
      for (VReg* r : partRegs(h->second))
        dstRegs.push_back(*r);
      for (VReg* r : partRegs(s->second))
        srcRegs.push_back(*r);
      break;
    }
    default:
      dstRegs.push_back(vregs_.count(homes[i]) ? vregs_[homes[i]] : reg(homes[i]));
      srcRegs.push_back(reg(srcs[i]));
      break;
    }
  }
  // A loop that yields another tile in an iter_arg's place: PTOAS carries the tile's handle (the
  // next iteration names the yielded tile's storage, a view's too), where a copy into the
  // iter_arg's storage would name other elements once views alias; refused by name.
  if (loop && !tileCopies.empty())
    return unsupported(loc, "a loop that yields another tile in place of a tile iter_arg (the "
                            "next iteration would name the yielded tile's storage; yield the "
                            "iter_arg itself, written in place)");
  // Tiles: a home that another copy reads must not be overwritten first.
  for (auto& [home, src] : tileCopies)
    for (auto& [otherHome, otherSrc] : tileCopies)
      if (tiles_[otherSrc] == home && otherHome != home)
        return unsupported(loc, "tiles exchanged between the values a region yields");
  std::vector<VReg> tmp;
  for (VReg s : srcRegs) {
    VReg t = newVReg();
    copy(t, s);
    tmp.push_back(t);
  }
  for (size_t i = 0; i < tmp.size(); ++i)
    copy(dstRegs[i], tmp[i]);
  for (auto& [home, src] : tileCopies)
    copyTile(home, src, loc);
}

bool FunctionLowering::sameStrides(const ViewRegs& a, const ViewRegs& b) const {
  if (a.strides.size() != b.strides.size() || a.dn != b.dn || a.constStrides != b.constStrides)
    return false;
  for (size_t i = 0; i < a.strides.size(); ++i) {
    if (a.strides[i] == b.strides[i]) continue;
    auto x = constantInt(a.strides[i]), y = constantInt(b.strides[i]);
    if (!x || !y || *x != *y) return false;
  }
  return true;
}

bool FunctionLowering::sameShape(const PartRegs& a, const PartRegs& b) {
  if (a.dn != b.dn || a.outer.size() != b.outer.size() || a.sliceRows != b.sliceRows ||
      a.sliceCols != b.sliceCols)
    return false;
  for (size_t i = 0; i < a.outer.size(); ++i)
    if (a.outer[i].size != b.outer[i].size) return false;
  return true;
}

/// home <- src as a TMOV block (both have the yielded value's type, so the same shape).
void FunctionLowering::copyTile(uint32_t home, ValueId src, SrcLoc loc) {
  auto code = enc::dataTypeCode(fn_.type(src).tile.dtype);
  auto eop = enc::tileOpFor(isa::OpId::TMOV);
  auto s = tiles_.find(src);
  if (!code || !eop || s == tiles_.end())
    return unsupported(loc, "copying a yielded tile of this type");
  const TileType& t = fn_.type(src).tile;
  std::pair<Dim, Dim> valid = validOf(src);
  VReg rowsReg = dimReg(valid.first), colsReg = dimReg(valid.second);
  inScalarBlock_ = false;
  pendingLoc_ = loc;
  emit(enc::tileStart(eop->op, *code));
  dim(0, valid.second, colsReg);
  if (valid.first.dynamic() || valid.first.constant != 1) dim(1, valid.first, rowsReg);
  if (valid.second.dynamic() || valid.second.constant != t.cols)
    emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
  bindTiles({home, s->second});
  emit(enc::bstop());
}

/// A signal in GM (docs/abi.md, "Signals"; docs/multi-device.md): one extension control block,
/// BSTART.EXT COMM_NOTIFY / COMM_WAIT / COMM_TEST with the mode (notifyOp or cmp) in B.DIM and
/// B.IOR signal address, value (-> the test's result). The runtime does the atomic add and
/// blocks a wait, so a wait no core or rank will ever satisfy is a deadlock it reports.
void FunctionLowering::lowerSignal(const Op& op) {
  auto part = parts_.find(op.operands[0]);
  if (part == parts_.end()) return missing(op.loc, "this signal view");
  obj_.usesExtensions = true;
  const VReg addr = part->second.addr, value = reg(op.operands[1]);
  const enc::ExtCtl ctl = op.named == NamedOp::Notify ? enc::ExtCtl::COMM_NOTIFY
                          : op.named == NamedOp::Wait ? enc::ExtCtl::COMM_WAIT
                                                      : enc::ExtCtl::COMM_TEST;
  inScalarBlock_ = false;
  pendingLoc_ = op.loc;
  emit(enc::extControl(ctl));
  emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.ints[0])));
  std::vector<RegRef> refs = {{"RegSrc0", addr, false}, {"RegSrc1", value, false}};
  if (ctl == enc::ExtCtl::COMM_TEST) refs.push_back({"RegDst", define(op.results[0]), true});
  emit(enc::bIor(0, 0, 0, 0), refs);
  emit(enc::bstop());
}

/// pto.syncall: BSTART.EXT COMM_SYNCALL ; BSTOP (every core of every rank meets).
void FunctionLowering::lowerSyncAll(const Op& op) {
  obj_.usesExtensions = true;
  inScalarBlock_ = false;
  pendingLoc_ = op.loc;
  emit(enc::extControl(enc::ExtCtl::COMM_SYNCALL));
  emit(enc::bstop());
}

/// pto.trap: the trap word `add zero, zero<<2, ->zero` (docs/abi.md), on which both backends stop
/// with "pto.trap executed" at its line.
void FunctionLowering::lowerTrap(const Op& op) {
  pendingLoc_ = op.loc;
  scalar(
      FormId::S_ADD,
      {{"shamt", isa::trapword::kTrapShift}, {"SrcL", kZero}, {"SrcR", kZero}, {"RegDst", kZero}},
      {});
}

} // namespace pto::as::lower
