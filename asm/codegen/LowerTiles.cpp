// Instruction selection for tile blocks (B.DATR, B.DIM, B.IOR, B.IOT), tile descriptors, and the
// sync / runtime-id blocks of the extension space (docs/abi.md). GM views are LowerGmViews.cpp,
// tile placement and tile views LowerTileViews.cpp.
#include "asm/codegen/FunctionLowering.h"
#include "isa/Fixpipe.h"

#include "isa/Numerics.h"
#include "isa/OpAttrs.h"
#include "isa/Random.h"
#include "isa/ScalarFp.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

namespace pto::as::lower {

/// dst = base + elems * bits / 8.
void FunctionLowering::addScaled(VReg dst, VReg base, VReg elems, unsigned bits) {
  if (bits >= 8) {
    unsigned shift = static_cast<unsigned>(std::countr_zero(bits / 8));
    scalar(FormId::S_ADD, {{"shamt", shift}},
           {{"SrcL", base, false}, {"SrcR", elems, false}, {"RegDst", dst, true}});
    return;
  }
  VReg half = newVReg();
  scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", half, true}});
  scalar(FormId::S_ADD, {}, {{"SrcL", base, false}, {"SrcR", half, false}, {"RegDst", dst, true}});
}

void FunctionLowering::scaleToBytes(VReg dst, VReg elems, unsigned bits) {
  if (bits >= 8)
    scalar(FormId::S_SLLI, {{"shamt", std::countr_zero(bits / 8)}},
           {{"SrcL", elems, false}, {"RegDst", dst, true}});
  else
    scalar(FormId::S_SRLI, {{"shamt", 1}}, {{"SrcL", elems, false}, {"RegDst", dst, true}});
}

std::optional<unsigned> FunctionLowering::blockTypeCode(SrcLoc loc, isa::DType dtype) {
  auto code = enc::dataTypeCode(dtype);
  if (!code)
    unsupported(loc, "element type " + std::string(isa::spelling(dtype)) + " in a tile block");
  return code;
}

bool FunctionLowering::tileDescFits(SrcLoc loc) {
  if (out_.tiles.size() < obj::kMaxTilesPerFunction) return true;
  diags_.error(loc, "function '@" + fn_.name + "' uses more than " +
                        std::to_string(obj::kMaxTilesPerFunction) +
                        " tile descriptors (B.TBANK selects 512 banks of 64)");
  ok_ = false;
  return false;
}

uint32_t FunctionLowering::addTile(ValueId v, obj::TileDesc d) {
  d.name = fn_.value(v).name;
  tileDescFits(fn_.value(v).loc); // an error, but lowering goes on to report the rest
  out_.tiles.push_back(std::move(d));
  uint32_t idx = static_cast<uint32_t>(out_.tiles.size() - 1);
  tiles_[v] = idx;
  return idx;
}

obj::TileDesc FunctionLowering::descOf(const TileType& t) {
  obj::TileDesc d;
  d.loc = t.loc;
  d.dtype = t.dtype;
  d.blayout = t.blayout;
  d.slayout = t.slayout;
  d.pad = t.pad;
  d.compact = t.compact;
  d.fractal = static_cast<uint16_t>(t.fractal);
  d.rows = static_cast<uint32_t>(t.rows);
  d.cols = static_cast<uint32_t>(t.cols);
  d.validRows = static_cast<int32_t>(t.validRows);
  d.validCols = static_cast<int32_t>(t.validCols);
  return d;
}

std::optional<uint32_t> FunctionLowering::tileIndex(ValueId v, SrcLoc loc) {
  auto it = tiles_.find(v);
  if (it != tiles_.end()) return it->second;
  missing(loc, "this tile operand");
  return std::nullopt;
}

/// B.DIM for one loop bound: an immediate, or a GPR (dynamic valid shapes).
void FunctionLowering::dim(unsigned lb, const Dim& d, VReg r) {
  if (!d.dynamic()) {
    emit(enc::bDim(lb, kZero, static_cast<uint32_t>(d.constant)));
    return;
  }
  emit(enc::bDim(lb, kZero, 0), {{"RegSrc", r, false}});
}

std::pair<Dim, Dim> FunctionLowering::validOf(ValueId tile) {
  auto it = valid_.find(tile);
  if (it != valid_.end()) return it->second;
  const TileType& t = fn_.type(tile).tile;
  return {Dim{t.validRows, kNoValue}, Dim{t.validCols, kNoValue}};
}

/// Op attributes the tile block has no field for (the rows of isa/OpAttrs.def encoded as
/// Refused: PTOAS's attributes with a meaning, such as a binary-tree column sum or TLOAD
/// padding): any value but the one the runtime and the NPU default to is refused here, at its
/// source line, rather than dropped. TMOV/TSTORE's fixpipe attributes are encoded
/// (ir::fixpipeAttrs, docs/encoding.md 5.3).
bool FunctionLowering::attributesEncodable(const Op& op, const isa::OpInfo& info) {
  for (const ir::AttrReading& a : op.modes->readings) {
    const isa::OpAttr& u = isa::opAttr(a.id);
    if (u.encoding != isa::AttrEncoding::Refused || a.isDefault) continue;
    unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "' with " + std::string(u.key) +
                            " = " + a.text + " (the tile block has no field for it)");
    return false;
  }
  return true;
}

namespace {
/// A tile op's operands by role.
struct RoleOperands {
  std::vector<ValueId> tilesOut, tilesIn, scalars;
  ValueId view = kNoValue, dst = kNoValue, src = kNoValue; // dst, src: the first of each
  bool scalarOut = false; // TMRGSORT's executed counts: written to B.IOR RegDst
};

RoleOperands operandsByRole(const Op& op, const isa::OpInfo& info) {
  RoleOperands r;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& role = info.roles[op.operandRoles[i]];
    ValueId v = op.operands[i];
    if (role.isOutput && role.kind != isa::RoleKind::Tile && role.kind != isa::RoleKind::View) {
      r.scalarOut = true;
    } else if (role.kind == isa::RoleKind::Tile) {
      (role.isOutput ? r.tilesOut : r.tilesIn).push_back(v);
      if (role.isOutput && r.dst == kNoValue) r.dst = v;
      if (!role.isOutput && r.src == kNoValue) r.src = v;
    } else if (role.kind == isa::RoleKind::View) {
      r.view = v;
    } else {
      r.scalars.push_back(v);
    }
  }
  return r;
}
} // namespace

MInst& FunctionLowering::withGmAccess(MInst& start) {
  if (currentGm_) {
    extra(start).gmAccess = static_cast<int32_t>(gmPlanned_.size());
    gmPlanned_.push_back(*currentGm_);
  }
  return start;
}

void FunctionLowering::lowerTileOp(const Op& op) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  if (!attributesEncodable(op, info)) return;
  const enc::TileOpInfo* eop = enc::tileOpFor(op.tileOp);
  if (!eop) return unsupported(op.loc, "'pto." + std::string(info.mnemonic) + "'");
  const isa::fix::Attrs fix = ir::fixpipeAttrs(fn_, op);
  // B.FPATR outside a matrix block and B.XATR are extensions (docs/encoding.md 5.3).
  if (eop->family == enc::TileFamily::EXT || fix.needsFpatr() || fix.needsXatr())
    obj_.usesExtensions = true;
  auto [tilesOut, tilesIn, scalars, view, dst, src, scalarOut] = operandsByRole(op, info);
  // TGET_SCALE_ADDR places its destination at run time (from the source's address): later
  // uses of the tile name the descriptor the block binds.
  if (info.id == isa::OpId::TGET_SCALE_ADDR && dst != kNoValue) {
    auto it = tiles_.find(dst);
    if (it == tiles_.end()) return missing(op.loc, "the scaling tile");
    runtimeTile(dst, it->second);
  }
  // Registers for the scalar and GM operands are computed before the block starts: a tile
  // block holds only header words.
  std::vector<VReg> iorRegs;
  // The op's GM access, for its blocks' start words (every path below that emits one).
  currentGm_.reset();
  if (view != kNoValue && gm_)
    currentGm_ = gm_->access(view, roleValue(op, isa::RoleId::Dst) == view);
  if (view != kNoValue) {
    std::optional<PartRegs> part;
    if (auto p = parts_.find(view); p != parts_.end())
      part = p->second;
    else if (!(part = wholeViewPartition(op, view)))
      return;
    if (!part->outer.empty()) {
      if (fix.needsFpatr() || fix.needsXatr())
        return unsupported(op.loc, "fixpipe attributes with a partition of more than two "
                                   "non-unit dimensions");
      return lowerSlicedTransfer(op, info, *eop, *part, dst != kNoValue ? dst : src);
    }
    if (!part->dynOuter.empty()) {
      if (fix.needsFpatr() || fix.needsXatr())
        return unsupported(op.loc, "fixpipe attributes with a partition of dynamic outer "
                                   "dimensions");
      return lowerDynamicSlices(op, info, *eop, *part, dst != kNoValue ? dst : src);
    }
    iorRegs = {part->addr, part->rowStride};
  }
  if (info.id == isa::OpId::TRANDOM && scalars.size() == 6) {
    // Key and counter: two 32-bit scalars per register (isa/Random.h).
    for (size_t i = 0; i < scalars.size(); i += 2)
      iorRegs.push_back(packPair(reg(scalars[i]), reg(scalars[i + 1])));
    scalars.clear();
  }
  for (ValueId s : scalars)
    iorRegs.push_back(reg(s));
  std::vector<uint64_t> ior = op.modes->ior;
  if ((info.id == isa::OpId::MGATHER || info.id == isa::OpId::MSCATTER) && !ior.empty()) {
    auto word = ir::gmModeWord(fn_, op, ior[0]);
    if (auto* why = std::get_if<std::string>(&word)) return unsupported(op.loc, *why);
    ior[0] = std::get<uint64_t>(word);
  }
  for (uint64_t imm : ior)
    iorRegs.push_back(constant(imm));
  if (iorRegs.size() > 3)
    return unsupported(op.loc, "'pto." + std::string(info.mnemonic) +
                                   "' with more than three scalar operands");
  const ValueId shapeTile =
      isa::shapeFrom(info, dst != kNoValue) == isa::ShapeFrom::Source && src != kNoValue ? src
                                                                                         : dst;
  std::pair<Dim, Dim> valid = shapeTile != kNoValue ? validOf(shapeTile) : std::pair<Dim, Dim>{};
  const isa::DType startType = fn_.type(startTypeTile(op, info, shapeTile, src)).tile.dtype;
  auto code = blockTypeCode(op.loc, startType);
  if (!code) return;
  VReg rowsReg = dimReg(valid.first), colsReg = dimReg(valid.second);
  inScalarBlock_ = false;
  withGmAccess(emit(enc::tileStart(eop->op, *code)));
  // B.DATR: destination type, rounding, saturation, compare mode.
  if (auto datr = datrFor(op, info, dst)) emit(enc::bDatr(*datr));
  if (fix.needsFpatr()) emit(enc::bFpatr(fix));
  if (fix.needsXatr()) emit(enc::bXatr(fix));
  if (info.rule == isa::TypeRule::Matmul) {
    emit(make(FormId::B_FPATR, {}));
    const TileType& L = fn_.type(roleValue(op, isa::RoleId::Lhs)).tile;
    const TileType& R = fn_.type(roleValue(op, isa::RoleId::Rhs)).tile;
    auto v = [](int64_t valid, int64_t phys) { return valid == kDynamic ? phys : valid; };
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(v(L.validRows, L.rows))));
    emit(enc::bDim(1, kZero, static_cast<uint32_t>(v(R.validCols, R.cols))));
    emit(enc::bDim(2, kZero, static_cast<uint32_t>(v(L.validCols, L.cols))));
  } else if (shapeTile != kNoValue) {
    const TileType& t = fn_.type(shapeTile).tile;
    dim(0, valid.second, colsReg);
    if (valid.first.dynamic() || valid.first.constant != 1) dim(1, valid.first, rowsReg);
    if (valid.second.dynamic() || valid.second.constant != t.cols)
      emit(enc::bDim(2, kZero, static_cast<uint32_t>(t.cols)));
  }
  if (!iorRegs.empty() || scalarOut) {
    std::vector<RegRef> refs;
    const enc::FieldName fields[] = {"RegSrc0", "RegSrc1", "RegSrc2"};
    for (size_t i = 0; i < iorRegs.size(); ++i)
      refs.push_back({fields[i], iorRegs[i], false});
    // The counts land in a register of their own: PTOAS's DPS output names a value that no op
    // reads afterwards (SSA values do not change), so nothing else sees the write.
    if (scalarOut) refs.push_back({"RegDst", newVReg(), true});
    emit(enc::bIor(0, 0, 0, 0), refs);
  }
  // B.IOT: tile operands, destination first, two per word, `last` on the final word.
  std::vector<ValueId> order = tilesOut;
  order.insert(order.end(), tilesIn.begin(), tilesIn.end());
  std::vector<uint32_t> idx;
  for (ValueId t : order) {
    auto i = tileIndex(t, op.loc);
    if (!i) return;
    idx.push_back(*i);
  }
  bindTiles(idx);
  emit(enc::bstop());
}

bool FunctionLowering::isDn(ValueId view) const {
  auto p = parts_.find(view);
  return p != parts_.end() && p->second.dn;
}

std::optional<enc::Datr> FunctionLowering::datrFor(const Op& op, const isa::OpInfo& info,
                                                   ValueId dst) {
  enc::Datr d;
  switch (info.id) {
  case isa::OpId::TCVT: {
    d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
    d.rmode = enc::rmodeCode(op.modes->round.value_or(isa::RoundMode::CAST_RINT));
    // The block always carries the effective saturation: the attribute, else the pair's
    // default (docs/numerics.md), so an explicit OFF on a pair that saturates by default stays OFF.
    if (op.modes->sat)
      d.sat = *op.modes->sat == isa::SatMode::ON;
    else
      d.sat = isa::cvtSaturatesByDefault(fn_.type(roleValue(op, isa::RoleId::Src)).tile.dtype,
                                         fn_.type(dst).tile.dtype);
    return d;
  }
  case isa::OpId::TCMP:
  case isa::OpId::TCMPS:
  case isa::OpId::TGATHER_CMP:
    d.dataType = enc::dataTypeCode(fn_.type(roleValue(op, isa::RoleId::Src0) != kNoValue
                                                ? roleValue(op, isa::RoleId::Src0)
                                                : roleValue(op, isa::RoleId::Src))
                                       .tile.dtype)
                     .value_or(0);
    d.cmode = enc::cmodeCode(op.modes->cmp.value_or(isa::CmpMode::EQ));
    return d;
  case isa::OpId::TDEQUANT:
  case isa::OpId::TQUANT:
    d.dataType = enc::dataTypeCode(fn_.type(dst).tile.dtype).value_or(0);
    return d;
  case isa::OpId::TRANDOM: { // the round count (isa/Random.h); 10 needs no B.DATR
    const auto rounds = op.modes->rounds.value_or(isa::trandom::kDefaultRounds);
    const auto code = isa::trandom::roundsCode(static_cast<uint64_t>(rounds));
    if (!code || *code == 0) return std::nullopt;
    d.rmode = *code;
    return d;
  }
  case isa::OpId::TLOAD:
  case isa::OpId::TPREFETCH: {
    // GM in DN layout: B.DATR.Layout DN2ND (the runtime reads the GM side of the code).
    ValueId view = roleValue(op, isa::RoleId::Src);
    if (view == kNoValue || !isDn(view)) return std::nullopt;
    d.layout = *enc::layoutCode("DN2ND");
    d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
    return d;
  }
  case isa::OpId::TSTORE: {
    // A store that converts (acc f32 -> f16 GM through the fixpipe) names the GM type; a
    // store to a DN view says so in the layout (ND2DN).
    ValueId view = roleValue(op, isa::RoleId::Dst), src = roleValue(op, isa::RoleId::Src);
    if (view == kNoValue || src == kNoValue) return std::nullopt;
    const bool converts = fn_.type(view).elem != fn_.type(src).tile.dtype;
    if (!converts && !isDn(view)) return std::nullopt;
    d.dataType = enc::dataTypeCode(fn_.type(view).elem).value_or(0);
    if (isDn(view)) d.layout = *enc::layoutCode("ND2DN");
    return d;
  }
  default:
    return std::nullopt;
  }
}

uint32_t FunctionLowering::eventIndex(const Op& op) {
  std::string name = op.event->symbol.empty() ? "anon." + std::string(isa::spelling(op.srcPipe)) +
                                                    "." + std::string(isa::spelling(op.dstPipe))
                                              : op.event->symbol;
  auto key = std::pair(index_, name);
  if (auto it = eventIds_.find(key); it != eventIds_.end()) return it->second;
  obj_.events.push_back({index_, name, op.srcPipe, op.dstPipe});
  uint32_t id = static_cast<uint32_t>(obj_.events.size() - 1);
  eventIds_[key] = id;
  return id;
}

/// Cross-core flags and buffer tokens: BSTART.EXT <CTL>, <pipe> with the id in B.DIM ->LB0,
/// like SET_FLAG's event id (constant or a register).
void FunctionLowering::lowerCoreSync(const Op& op) {
  obj_.usesExtensions = true;
  const enc::ExtCtl ctl = op.named == NamedOp::SyncSet    ? enc::ExtCtl::SYNC_SET
                          : op.named == NamedOp::SyncWait ? enc::ExtCtl::SYNC_WAIT
                          : op.named == NamedOp::GetBuf   ? enc::ExtCtl::GET_BUF
                                                          : enc::ExtCtl::RLS_BUF;
  VReg dynamic = op.event->kind == EventRef::Kind::Dynamic ? reg(op.operands[0]) : kNoVReg;
  inScalarBlock_ = false;
  emit(enc::extControl(ctl, op.srcPipe));
  if (dynamic != kNoVReg)
    emit(enc::bDim(0, kZero, 0), {{"RegSrc", dynamic, false}});
  else
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.event->id)));
  emit(enc::bstop());
}

void FunctionLowering::lowerSync(const Op& op) {
  obj_.usesExtensions = true;
  if (op.kind == OpKind::Barrier) {
    inScalarBlock_ = false;
    emit(enc::extControl(enc::ExtCtl::PIPE_BARRIER, op.srcPipe));
    emit(enc::bstop());
    return;
  }
  VReg dynamic = op.event->kind == EventRef::Kind::Dynamic ? reg(op.operands[0]) : kNoVReg;
  inScalarBlock_ = false;
  emit(enc::extControl(op.kind == OpKind::SetFlag ? enc::ExtCtl::SET_FLAG : enc::ExtCtl::WAIT_FLAG,
                       op.srcPipe, op.dstPipe));
  switch (op.event->kind) {
  case EventRef::Kind::Const:
    emit(enc::bDim(0, kZero, static_cast<uint32_t>(op.event->id)));
    break;
  case EventRef::Kind::Dynamic:
    emit(enc::bDim(0, kZero, 0), {{"RegSrc", dynamic, false}});
    break;
  case EventRef::Kind::Symbolic: {
    MInst& w = emit(enc::bDim(0, kZero, 0));
    addReloc(w, obj::RelocType::Event, eventIndex(op));
    break;
  }
  }
  emit(enc::bstop());
}

void FunctionLowering::lowerBlockInfo(const Op& op) {
  obj_.usesExtensions = true;
  enc::ExtCtl c = op.named == NamedOp::GetBlockIdx      ? enc::ExtCtl::GET_BLOCK_IDX
                  : op.named == NamedOp::GetBlockNum    ? enc::ExtCtl::GET_BLOCK_NUM
                  : op.named == NamedOp::GetSubblockIdx ? enc::ExtCtl::GET_SUBBLOCK_IDX
                                                        : enc::ExtCtl::GET_SUBBLOCK_NUM;
  inScalarBlock_ = false;
  emit(enc::extControl(c));
  emit(enc::bIor(0, 0, 0, 0), {{"RegDst", define(op.results[0]), true}});
  emit(enc::bstop());
}

void FunctionLowering::lowerScalarMemory(const Op& op) {
  bool load = op.kind == OpKind::LoadScalar;
  ValueId ptr = op.operands[load ? 0 : 1], off = op.operands[load ? 1 : 2];
  isa::DType elem = fn_.type(ptr).elem;
  unsigned bytes = std::max(1u, isa::bitWidth(elem) / 8);
  unsigned shift = static_cast<unsigned>(std::countr_zero(bytes));
  VReg p = kNoVReg, o = reg(off);
  const TypeKind kind = fn_.type(ptr).kind;
  if (kind == TypeKind::TensorView || kind == TypeKind::PartView) {
    // A 1-D view or partition of one (the verifier's rule) of unit stride: its base, or the
    // partition's first element, is the pointer.
    const PartRegs* part = nullptr;
    if (kind == TypeKind::PartView) {
      auto it = parts_.find(ptr);
      if (it == parts_.end()) return missing(op.loc, "this partition");
      part = &it->second;
    }
    auto v = views_.find(part ? part->source : ptr);
    if (v == views_.end()) return missing(op.loc, "this view");
    const std::optional<int64_t> stride =
        !v->second.constStrides.empty() ? std::optional<int64_t>(v->second.constStrides[0])
        : !v->second.strides.empty()    ? constantInt(v->second.strides[0])
                                        : std::nullopt;
    if (stride != 1)
      return unsupported(op.loc, "'" + op.name + "' through a view whose stride is not 1");
    p = part ? part->addr : v->second.base;
  } else {
    p = reg(ptr);
  }
  bool isSigned = isa::info(elem).kind == isa::DTypeKind::SInt;
  if (load) {
    FormId f = bytes == 8   ? FormId::S_LD
               : bytes == 4 ? (isSigned ? FormId::S_LW : FormId::S_LWU)
               : bytes == 2 ? (isSigned ? FormId::S_LH : FormId::S_LHU)
                            : (isSigned ? FormId::S_LB : FormId::S_LBU);
    scalar(f, {{"shamt", shift}},
           {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", define(op.results[0]), true}});
    return;
  }
  // Stores have no scaled index: form the address first.
  VReg addr = newVReg();
  scalar(FormId::S_ADD, {{"shamt", shift}},
         {{"SrcL", p, false}, {"SrcR", o, false}, {"RegDst", addr, true}});
  FormId f = bytes == 8   ? FormId::S_SD
             : bytes == 4 ? FormId::S_SW
             : bytes == 2 ? FormId::S_SH
                          : FormId::S_SB;
  scalar(f, {{"SrcR", kZero}}, {{"SrcD", reg(op.operands[0]), false}, {"SrcL", addr, false}});
}

/// Event-id arrays live in the stack frame, 8 bytes per entry.
void FunctionLowering::lowerEventArray(const Op& op) {
  if (op.kind == OpKind::DeclareEventIdArray) {
    int64_t n = 1;
    for (int64_t d : fn_.type(op.results[0]).shape)
      n *= d;
    // The array area is addressed with 12-bit offsets from sp past the spill slots.
    if (arrayBytes_ + n * 8 > 2048)
      return unsupported(op.loc, "more than 2 KiB of event-id and local arrays in one function");
    arrays_[op.results[0]] = arrayBytes_;
    arrayBytes_ += static_cast<uint32_t>(n * 8);
    pendingLoc_ = {};
    return;
  }
  auto base = arrays_.find(op.operands[0]);
  if (base == arrays_.end()) return missing(op.loc, "this array");
  // The element's index, row-major over the dimensions: ((i0 * d1) + i1) * d2 + i2 ...
  const std::vector<int64_t>& dims = fn_.type(op.operands[0]).shape;
  VReg idx = reg(op.operands[1]);
  for (size_t k = 1; k < dims.size(); ++k) {
    VReg d = newVReg(), scaled = newVReg(), sum = newVReg();
    materialize(d, static_cast<uint64_t>(dims[k]));
    scalar(FormId::S_MUL, {}, {{"SrcL", idx, false}, {"SrcR", d, false}, {"RegDst", scaled, true}});
    scalar(
        FormId::S_ADD, {},
        {{"SrcL", scaled, false}, {"SrcR", reg(op.operands[1 + k]), false}, {"RegDst", sum, true}});
    idx = sum;
  }
  VReg addr = newVReg();
  // addr = sp + arrayBase + 8*idx; the array area follows the spill slots (patched later).
  scalar(FormId::S_ADD, {{"shamt", 3}, {"SrcL", kSp}},
         {{"SrcR", idx, false}, {"RegDst", addr, true}});
  scalar(FormId::S_ADDI, {{"uimm12", 0}}, {{"SrcL", addr, false}, {"RegDst", addr, true}});
  extra(code_.back()).arrayBase = static_cast<int>(base->second);
  if (op.kind == OpKind::EventIdArraySet)
    scalar(FormId::S_SD, {{"SrcR", kZero}},
           {{"SrcD", reg(op.operands.back()), false}, {"SrcL", addr, false}});
  else
    scalar(FormId::S_LD, {{"SrcR", kZero}},
           {{"SrcL", addr, false}, {"RegDst", define(op.results[0]), true}});
}

} // namespace pto::as::lower
