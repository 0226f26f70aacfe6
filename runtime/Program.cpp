// Image -> decoded program (docs/runtime.md, "Decoding"). asm/mc/ImageCode decodes every function's
// words into blocks (the one block decoder, shared with the C++ exporter); here the blocks become
// micro-ops, and tile blocks become TileInsts with resolved operands and a cpu kernel chosen for
// their dtypes.
#include "runtime/Program.h"

#include "isa/Encoding.h"
#include "support/Text.h"

#include <algorithm>

namespace pto::rt {
namespace {

namespace enc = isa::enc;
namespace code = obj::code;

void innerBox(TileOperand& t, uint16_t fractal) {
  const isa::InnerBox box = isa::innerBox(t.dtype, t.slayout, fractal);
  t.innerRows = box.rows;
  t.innerCols = box.cols;
}

class FunctionDecoder {
public:
  FunctionDecoder(const obj::Image& img, const code::FunctionCode& fc, DecodedFunction& out)
      : img_(img), fn_(img.functions[fc.function]), fc_(fc), out_(out) {}

  std::optional<std::string> run() {
    out_.index = fc_.function;
    out_.name = fn_.name;
    out_.frameSize = fn_.frameSize;
    out_.flags = fn_.flags;
    for (const obj::Param& p : fn_.params) {
      Module::ParamInfo pi;
      pi.name = p.name;
      pi.kind = static_cast<Module::ParamInfo::Kind>(p.kind);
      pi.dtype = p.dtype;
      pi.shape = p.shape;
      out_.params.push_back(pi);
    }
    for (const obj::BufferUse& u : img_.layout)
      if (u.function == out_.index) out_.bufferUsed[static_cast<unsigned>(u.loc)] = u.used;
    out_.arch = img_.arch;
    for (const obj::TileDesc& d : fn_.tiles)
      if (d.placement == obj::kRuntimePlaced) {
        out_.runtimeDescs = fn_.tiles;
        // A run-time address may be anywhere in its buffer: clear all of it at block start, so
        // that what a kernel reads there does not depend on an earlier block.
        out_.bufferUsed[static_cast<unsigned>(d.loc)] = isa::buffer(img_.arch, d.loc).capacity;
      }
    const uint64_t end = fn_.textOffset + fn_.textSize;
    std::vector<uint32_t> startOf(fc_.blocks.size() + 1);
    std::vector<std::pair<uint32_t, uint64_t>> branches; // (micro-op, target offset)
    for (size_t bi = 0; bi < fc_.blocks.size(); ++bi) {
      const code::Block& b = fc_.blocks[bi];
      startOf[bi] = static_cast<uint32_t>(out_.code.size());
      if (b.transfer == code::Transfer::Cond) push(MOp{.kind = MKind::ClearCond}, b.offset);
      std::optional<std::string> err;
      switch (b.kind) {
      case code::BlockKind::Scalar:
        for (const code::ScalarInst& si : b.scalars)
          push(scalar(si.op), si.offset);
        break;
      case code::BlockKind::Tile:
        err = tile(b);
        break;
      case code::BlockKind::Control:
        err = control(b);
        break;
      }
      if (err) return at(b.offset, *err);
      switch (b.transfer) {
      case code::Transfer::Fall:
      case code::Transfer::Indirect: // refused by decodeFunction
        break;
      case code::Transfer::Direct:
      case code::Transfer::Cond:
        branches.push_back({static_cast<uint32_t>(out_.code.size()), b.target});
        push(MOp{.kind = b.transfer == code::Transfer::Direct ? MKind::Jump : MKind::JumpIf},
             b.offset);
        break;
      case code::Transfer::Ret:
        push(MOp{.kind = MKind::Ret}, b.offset);
        break;
      case code::Transfer::Call: { // resolved to a function index once every function is decoded
        MOp m{.kind = MKind::Call};
        m.s.imm = static_cast<int64_t>(b.target);
        push(m, b.offset);
        break;
      }
      }
    }
    startOf[fc_.blocks.size()] = static_cast<uint32_t>(out_.code.size());
    push(MOp{.kind = MKind::Ret}, end);
    for (auto [mi, target] : branches) // decodeFunction checked every target is a block start
      out_.code[mi].target = startOf[*fc_.blockAt(target, end)];
    return std::nullopt;
  }

private:
  /// "@fn+0x10 (k.pto:12:3): msg" — the word, and its source line when the image has one.
  std::string at(uint64_t off, const std::string& msg) const {
    const std::string loc = code::sourceLocation(img_, fc_.function, off);
    return "@" + fn_.name + "+" + support::hex0x(off - fn_.textOffset) +
           (loc.empty() ? "" : " (" + loc + ")") + ": " + msg;
  }

  void push(MOp m, uint64_t offset) {
    m.textOffset = static_cast<uint32_t>(offset);
    out_.code.push_back(m);
  }

  static uint8_t dstReg(uint8_t r) { return r == 0 ? kSinkReg : r; }

  static MOp scalar(const code::ScalarOp& s) {
    static constexpr MKind kKinds[] = {MKind::Alu,  MKind::Setc,  MKind::Csel,
                                       MKind::Load, MKind::Store, MKind::Fpu};
    static_assert(std::size(kKinds) == static_cast<size_t>(code::ScalarKind::Fpu) + 1);
    MOp m{.kind = kKinds[static_cast<size_t>(s.kind)], .s = s};
    m.s.rd = dstReg(s.rd);
    return m;
  }

  std::optional<std::string> tile(const code::Block& b) {
    const code::TileBlock& tb = b.tile;
    // An image edited after linking may name an op its arch does not have (both backends refuse).
    if (!isa::info(tb.op).supports(img_.arch))
      return std::string(isa::enc::info(tb.encOp).name) + " is not available on " +
             std::string(isa::spelling(img_.arch));
    if (tb.op == isa::OpId::TASSIGN) return bind(b);
    if (tb.op == isa::OpId::TGET_SCALE_ADDR) return bindScale(b);
    tile_ = TileInst{};
    tile_.op = tb.op;
    tile_.name = isa::enc::info(tb.encOp).name.data();
    tile_.startType = tb.startType;
    tile_.datr = tb.datr;
    tile_.fix = tb.fix;
    tile_.text = tb.text;
    std::copy(std::begin(tb.dim), std::end(tb.dim), tile_.dim);
    if (tb.ior) {
      for (unsigned i = 0; i < 3; ++i)
        tile_.ior[i] = (*tb.ior)[i];
      tile_.numIor = 3;
    }
    tile_.iorDst = tb.iorDst;
    for (uint32_t idx : tb.tiles)
      tile_.tiles.push_back(operand(idx));
    if (auto e = gmLayout()) return e;
    if (auto e = buildTile()) return e;
    if (tile_.op == isa::OpId::TPIPE_INIT || tile_.op == isa::OpId::TPIPE_PUSH ||
        tile_.op == isa::OpId::TPIPE_POP || tile_.op == isa::OpId::TPIPE_FREE)
      out_.crossCore = true;
    MOp m{.kind = MKind::Tile};
    m.target = static_cast<uint32_t>(out_.tiles.size());
    out_.tiles.push_back(std::move(tile_));
    push(m, b.offset);
    return std::nullopt;
  }

  /// The GM side of a TLOAD/TSTORE's B.DATR layout: ND (NORM, ND2x / x2ND) or DN (DN2x / x2DN);
  /// the fractal GM layouts are load errors.
  std::optional<std::string> gmLayout() {
    const bool load = tile_.op == isa::OpId::TLOAD || tile_.op == isa::OpId::TPREFETCH;
    if ((!load && tile_.op != isa::OpId::TSTORE) || !tile_.datr || tile_.datr->layout == 0)
      return std::nullopt;
    const std::string_view name = enc::layoutName(tile_.datr->layout);
    const std::string_view gm =
        load ? name.substr(0, name.find('2')) : name.substr(name.rfind('2') + 1);
    if (gm == "DN")
      tile_.gmDn = true;
    else if (gm != "ND")
      return std::string(tile_.name) + " with GM layout " + std::string(name) +
             " is not supported by the runtime (ND and DN are)";
    return std::nullopt;
  }

  /// TASSIGN: one tile and its address in B.IOR src0, checked and recorded when it runs.
  std::optional<std::string> bind(const code::Block& b) {
    const code::TileBlock& tb = b.tile;
    if (tb.tiles.size() != 1 || !tb.ior)
      return std::string("TASSIGN needs one tile (B.IOT) and its address (B.IOR src0)");
    if (fn_.tiles[tb.tiles[0]].placement != obj::kRuntimePlaced)
      return "TASSIGN of tile %" + fn_.tiles[tb.tiles[0]].name +
             ", whose placement is not set at run time (the linker placed it)";
    MOp m{.kind = MKind::Bind};
    m.s.rs1 = (*tb.ior)[0];
    m.target = tb.tiles[0];
    push(m, b.offset);
    return std::nullopt;
  }

  /// TGET_SCALE_ADDR: the scaling tile (placed at run time) and its MX source, B.IOT dst, src.
  std::optional<std::string> bindScale(const code::Block& b) {
    const code::TileBlock& tb = b.tile;
    if (tb.tiles.size() != 2)
      return std::string("TGET_SCALE_ADDR needs two tiles (B.IOT dst, src)");
    if (fn_.tiles[tb.tiles[0]].placement != obj::kRuntimePlaced)
      return "TGET_SCALE_ADDR of tile %" + fn_.tiles[tb.tiles[0]].name +
             ", whose placement is not set at run time (the linker placed it)";
    MOp m{.kind = MKind::BindScale};
    m.target = tb.tiles[0];
    m.s.imm = tb.tiles[1];
    push(m, b.offset);
    return std::nullopt;
  }

  std::optional<std::string> control(const code::Block& b) {
    const code::ControlBlock& c = b.control;
    const auto ctl = static_cast<unsigned>(c.ctl);
    if ((ctl >= 1 && ctl <= 3) || isCoreSync(c.ctl)) {
      SyncInst s;
      s.kind = c.ctl;
      s.src = c.pipeA;
      s.dst = c.ctl == enc::ExtCtl::SET_FLAG || c.ctl == enc::ExtCtl::WAIT_FLAG ? c.pipeB : c.pipeA;
      s.event = c.event;
      MOp m{.kind = MKind::Sync};
      m.target = static_cast<uint32_t>(out_.syncs.size());
      out_.syncs.push_back(s);
      push(m, b.offset);
    } else if (ctl >= 4 && ctl <= 7) {
      MOp m{.kind = MKind::BlockInfo};
      m.s.rd = dstReg(c.result);
      m.s.imm = ctl;
      push(m, b.offset);
    } else if (ctl >= 12 && ctl <= 15) { // COMM_NOTIFY / WAIT / TEST / SYNCALL
      MOp m{.kind = MKind::Comm};
      out_.usesComm = true;
      m.target = ctl;
      m.s.rs1 = c.ior[0];
      m.s.rs2 = c.ior[1];
      m.s.rd = dstReg(c.result);
      m.s.imm = c.event.present ? c.event.imm : 0;
      push(m, b.offset);
    } else {
      return "extension control " + std::to_string(ctl) + " is not supported by the runtime";
    }
    return std::nullopt;
  }

  TileOperand operand(uint32_t idx) {
    const obj::TileDesc& d = fn_.tiles[idx];
    TileOperand t;
    t.loc = static_cast<uint8_t>(d.loc);
    t.dtype = d.dtype;
    t.blayout = d.blayout;
    t.slayout = d.slayout;
    t.offset = static_cast<uint32_t>(d.placement);
    t.rows = d.rows;
    t.cols = d.cols;
    t.validRows = d.validRows;
    t.validCols = d.validCols;
    t.pad = d.pad;
    t.name = d.name;
    if (d.placement == obj::kRuntimePlaced) {
      t.offset = 0;
      t.runtimeDesc = static_cast<int32_t>(idx);
      tile_.runtimeTiles = true;
    }
    innerBox(t, d.fractal);
    return t;
  }

  std::optional<std::string> buildTile() {
    if (auto e = assignTileRoles(tile_)) return e;
    if (auto e = selectKernel(tile_)) return *e;
    return std::nullopt;
  }

  const obj::Image& img_;
  const obj::Function& fn_;
  const code::FunctionCode& fc_;
  DecodedFunction& out_;
  TileInst tile_;
};

/// TMRGSORT's two variadic roles cannot be split by the role table; the B.IOT count decides
/// between pto-isa's two forms: (dst, src) with a block length, and (dst, tmp, src0..src3)
/// merging 2-4 lists.
std::optional<std::string> mergeSortRoles(TileInst& t) {
  const int n = static_cast<int>(t.tiles.size());
  t.dst = 0;
  t.src0 = 1;
  t.src1 = t.src2 = t.src3 = t.tmp = -1;
  if (n == 2) return std::nullopt;
  if (n < 4 || n > 6)
    return "TMRGSORT has " + std::to_string(n) +
           " tile operands; it takes (dst, src) or (dst, tmp, 2 to 4 sources)";
  t.tmp = 1;
  t.src0 = 2;
  t.src1 = 3;
  t.src2 = n > 4 ? 4 : -1;
  t.src3 = n > 5 ? 5 : -1;
  return std::nullopt;
}

} // namespace

void assignSlots(TileInst& t, std::span<const int> roles) {
  using isa::Slot;
  const isa::SlotOperands at = isa::slotOperands(isa::info(t.op), roles);
  t.dst = isa::slotOperand(at, Slot::Dst);
  t.src0 = isa::slotOperand(at, Slot::Src0);
  t.src1 = isa::slotOperand(at, Slot::Src1);
  t.src2 = isa::slotOperand(at, Slot::Src2);
  t.src3 = isa::slotOperand(at, Slot::Src3);
  t.acc = isa::slotOperand(at, Slot::Acc);
  t.bias = isa::slotOperand(at, Slot::Bias);
  t.tmp = isa::slotOperand(at, Slot::Tmp);
  t.lscale = isa::slotOperand(at, Slot::LScale);
  t.rscale = isa::slotOperand(at, Slot::RScale);
  t.dst1 = isa::slotOperand(at, Slot::Dst1);
}

std::optional<std::string> assignTileRoles(TileInst& t) {
  const isa::OpInfo& oi = isa::info(t.op);
  // Tile roles by the one rule (isa::tileOperandRoles, docs/linking.md 2).
  const size_t n = t.tiles.size();
  size_t required = 0;
  for (const isa::Role& r : oi.roles)
    required += r.kind == isa::RoleKind::Tile && !r.optional && !r.variadic;
  if (n < required)
    return std::string(t.name) + " has " + std::to_string(n) + " tile operands, needs " +
           std::to_string(required);
  assignSlots(t, isa::tileOperandRoles(oi, n));
  if (t.op == isa::OpId::TMRGSORT)
    if (auto e = mergeSortRoles(t)) return e;
  return std::nullopt;
}

namespace {

uint64_t descBytes(const obj::TileDesc& d) {
  return (uint64_t{d.rows} * d.cols * isa::bitWidth(d.dtype) + 7) / 8;
}

/// A view bound at run time ends where its parent does, `left` bytes on: the lines left from its
/// offset (rows of a row-major view, columns of a column-major one; blocks of box rows or box
/// columns on a boxed one), the last of them possibly in part (a view narrower than its pitch,
/// PTOAS's subview). The pitch, the line's length, stays.
void clipToParent(TileOperand& o, uint64_t left) {
  const bool colMajor = o.blayout == isa::BLayout::ColMajor;
  const uint32_t width = o.slayout == isa::SLayout::NoneBox ? 1
                         : colMajor                         ? o.innerCols
                                                            : o.innerRows;
  uint32_t& lines = colMajor ? o.cols : o.rows;
  const uint64_t pitch = colMajor ? o.rows : o.cols, bits = isa::bitWidth(o.dtype);
  const uint64_t lineBytes = (pitch * width * bits + 7) / 8;
  if (!lineBytes || left / lineBytes >= lines / std::max(1u, width)) return;
  const uint64_t tail = left % lineBytes * 8 / bits / width; // elements of the pitch left
  o.lastLine = static_cast<uint32_t>(tail);
  o.lastLineWidth = width;
  lines = static_cast<uint32_t>((left / lineBytes + (tail > 0)) * width);
}

int64_t boundAt(const TileBindings& b, uint32_t i) {
  return i < b.size() ? b[i] : -1;
}

/// The byte offset of descriptor `i` in its buffer: the image's, or the bound one (a view bound
/// at run time: its parent's plus the bound offset, else plus its static one).
std::optional<int64_t> offsetOf(const std::vector<obj::TileDesc>& ds, const TileBindings& b,
                                uint32_t i) {
  for (int64_t add = 0;;) {
    const obj::TileDesc& d = ds[i];
    if (d.placement >= 0) return add + d.placement;
    if (d.aliasOf < 0) {
      if (boundAt(b, i) < 0) return std::nullopt;
      return add + boundAt(b, i);
    }
    add += boundAt(b, i) >= 0 ? boundAt(b, i) : d.aliasOffset;
    i = static_cast<uint32_t>(d.aliasOf);
  }
}

} // namespace

std::optional<std::string> bindTile(const DecodedFunction& fn, TileBindings& b, uint32_t desc,
                                    uint64_t addr) {
  const obj::TileDesc& d = fn.runtimeDescs[desc];
  const std::string what = "TASSIGN of tile %" + d.name + " (" + std::to_string(descBytes(d)) +
                           " bytes) at " + support::hex0x(addr);
  if (d.aliasOf >= 0) { // a view: at `addr` bytes into its parent
    const obj::TileDesc& p = fn.runtimeDescs[static_cast<size_t>(d.aliasOf)];
    if (addr > descBytes(p))
      return what + ": the offset is past the end of its parent %" + p.name + " (" +
             std::to_string(descBytes(p)) + " bytes)";
  } else {
    const isa::BufferSpec& spec = isa::buffer(fn.arch, d.loc);
    if (addr > spec.capacity || descBytes(d) > spec.capacity - addr)
      return what + ": the tile does not fit the " + std::string(isa::spelling(d.loc)) +
             " buffer (" + std::to_string(spec.capacity) + " bytes)";
    if (spec.alignment && addr % spec.alignment)
      return what + ": the address is not a multiple of " + std::to_string(spec.alignment) +
             " bytes";
  }
  if (b.empty()) b.assign(fn.runtimeDescs.size(), -1);
  b[desc] = static_cast<int64_t>(addr);
  return std::nullopt;
}

bool isCoreSync(isa::enc::ExtCtl k) {
  using enum isa::enc::ExtCtl;
  return k == SYNC_SET || k == SYNC_WAIT || k == GET_BUF || k == RLS_BUF;
}

std::optional<std::string> coreSyncStep(Core& c, const SyncInst& s) {
  using enum isa::enc::ExtCtl;
  const uint32_t id = s.eventId(c);
  const char* what = s.kind == SYNC_SET    ? "SYNC_SET"
                     : s.kind == SYNC_WAIT ? "SYNC_WAIT"
                     : s.kind == GET_BUF   ? "GET_BUF"
                                           : "RLS_BUF";
  if (id >= c.crossFlags.size())
    return std::string(what) + ": id " + std::to_string(id) + " is out of range (0..31)";
  const bool flag = s.kind == SYNC_SET || s.kind == SYNC_WAIT;
  if (flag && c.cluster)
    return std::string(what) +
           ": cross-core flags between the cores of a cluster run are not modelled (a kernel "
           "with cross-core pipes runs as one); the flag is set and waited on one core only";
  const auto pipeBit = static_cast<uint16_t>(1u << static_cast<unsigned>(s.src));
  switch (s.kind) {
  case SYNC_SET:
    ++c.crossFlags[id];
    return std::nullopt;
  case SYNC_WAIT:
    if (c.crossFlags[id] == 0)
      return std::string(what) + " on flag " + std::to_string(id) +
             ", which no earlier SYNC_SET raised: the core would wait forever";
    --c.crossFlags[id];
    return std::nullopt;
  case GET_BUF:
    if (c.bufTokens[id] & pipeBit)
      return std::string(what) + ": " + std::string(isa::spelling(s.src)) + " acquires buffer id " +
             std::to_string(id) + " a second time without releasing it";
    c.bufTokens[id] |= pipeBit;
    return std::nullopt;
  default:
    if (!(c.bufTokens[id] & pipeBit))
      return std::string(what) + ": " + std::string(isa::spelling(s.src)) + " releases buffer id " +
             std::to_string(id) + ", which it has not acquired";
    c.bufTokens[id] &= static_cast<uint16_t>(~pipeBit);
    return std::nullopt;
  }
}

std::optional<std::string> bindScaleTile(const DecodedFunction& fn, TileBindings& b, uint32_t desc,
                                         uint32_t src) {
  constexpr unsigned kShiftMxAddr = 4; // pto-isa's SHIFT_MX_ADDR
  const std::optional<int64_t> at = offsetOf(fn.runtimeDescs, b, src);
  if (!at)
    return "TGET_SCALE_ADDR: tile %" + fn.runtimeDescs[src].name +
           " is used before a TASSIGN gives it an address";
  return bindTile(fn, b, desc, static_cast<uint64_t>(*at) >> kShiftMxAddr);
}

std::optional<std::string> resolveTiles(const DecodedFunction& fn, const TileBindings& b,
                                        TileInst& t) {
  for (TileOperand& o : t.tiles) {
    if (o.runtimeDesc < 0) continue;
    const auto i = static_cast<uint32_t>(o.runtimeDesc);
    const std::optional<int64_t> off = offsetOf(fn.runtimeDescs, b, i);
    if (!off)
      return std::string(t.name) + ": tile %" + o.name +
             " is used before a TASSIGN gives it an address";
    o.offset = static_cast<uint32_t>(*off);
    const obj::TileDesc& d = fn.runtimeDescs[i];
    if (d.aliasOf >= 0 && boundAt(b, i) >= 0)
      clipToParent(o, descBytes(fn.runtimeDescs[static_cast<size_t>(d.aliasOf)]) -
                          static_cast<uint64_t>(b[i]));
  }
  return std::nullopt;
}

std::string Program::locationOf(uint32_t function, uint64_t textOffset) const {
  return code::sourceLocation(image, function, textOffset);
}

std::string Program::locationAt(uint64_t textOffset) const {
  for (uint32_t i = 0; i < image.functions.size(); ++i) {
    const obj::Function& f = image.functions[i];
    if (textOffset < f.textOffset || textOffset >= f.textOffset + f.textSize) continue;
    std::string loc = locationOf(i, textOffset);
    return loc.empty() ? fileName + ":@" + f.name + "+" + support::hex0x(textOffset - f.textOffset)
                       : loc;
  }
  return support::hex0x(textOffset);
}

Result<std::shared_ptr<Program>> decodeImage(obj::Image image, std::string fileName) {
  auto p = std::make_shared<Program>();
  p->image = std::move(image);
  p->fileName = std::move(fileName);
  p->functions.resize(p->image.functions.size());
  for (uint32_t i = 0; i < p->image.functions.size(); ++i) {
    auto fc = code::decodeFunction(p->image, i);
    if (auto* e = std::get_if<code::CodeError>(&fc)) {
      const obj::Function& f = p->image.functions[i];
      return Error{p->fileName + ": error: @" + f.name + "+" +
                   support::hex0x(e->offset - f.textOffset) + ": " + e->message};
    }
    FunctionDecoder d(p->image, std::get<code::FunctionCode>(fc), p->functions[i]);
    if (auto e = d.run()) return Error{p->fileName + ": error: " + *e};
  }
  // Calls name their callee by text offset (decodeFunction checked it starts a function).
  for (DecodedFunction& fn : p->functions)
    for (MOp& m : fn.code)
      if (m.kind == MKind::Call)
        m.target = *code::functionAt(p->image, static_cast<uint64_t>(m.s.imm));
  for (const obj::ImageEntry& e : p->image.entries) {
    p->entryByName.try_emplace(e.name, p->entries.size());
    p->entries.push_back(e.function);
  }
  for (const DecodedFunction& fn : p->functions)
    p->crossCore = p->crossCore || fn.crossCore;
  return p;
}

} // namespace pto::rt
