#include "link/Cfg.h"

#include "asm/mc/BlockHeader.h"
#include "asm/mc/Blocks.h"
#include "isa/Encoding.h"
#include "support/Text.h"

#include <algorithm>
#include <cstdio>

namespace pto::link {

namespace enc = isa::enc;

void FunctionCfg::computePreds() {
  size_t n = blocks.size();
  predStart.assign(n + 1, 0);
  for (const Block& b : blocks)
    for (int32_t s : b.succ)
      if (s >= 0) ++predStart[static_cast<size_t>(s) + 1];
  for (size_t i = 0; i < n; ++i)
    predStart[i + 1] += predStart[i];
  preds.assign(predStart[n], 0);
  std::vector<uint32_t> fill(predStart.begin(), predStart.end() - 1);
  for (uint32_t i = 0; i < n; ++i)
    for (int32_t s : blocks[i].succ)
      if (s >= 0) preds[fill[static_cast<size_t>(s)]++] = i;
}

int32_t FunctionCfg::blockAt(uint64_t off) const {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), off,
                             [](uint64_t o, const Block& b) { return o < b.offset; });
  if (it == blocks.begin()) return -1;
  --it;
  return off < it->end ? static_cast<int32_t>(it - blocks.begin()) : -1;
}

std::vector<TileUse> classifyOperands(std::optional<isa::OpId> op,
                                      std::span<const uint32_t> tiles) {
  std::vector<TileUse> out;
  out.reserve(tiles.size());
  if (!op) { // unknown op: destination first, the rest are sources
    for (size_t i = 0; i < tiles.size(); ++i)
      out.push_back({tiles[i], i > 0, i == 0, false});
    return out;
  }
  if (*op == isa::OpId::TASSIGN ||
      *op == isa::OpId::TGET_SCALE_ADDR) { // binds the tile's address: a use (liveness), no data
    for (uint32_t t : tiles)
      out.push_back({t, false, false, false});
    return out;
  }
  const isa::OpInfo& info = isa::info(*op);
  const std::vector<int> roles = isa::tileOperandRoles(info, tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (roles[i] < 0) { // surplus: a source
      out.push_back({tiles[i], true, false, false});
      continue;
    }
    const isa::Role& r = info.roles[static_cast<size_t>(roles[i])];
    TileUse u{tiles[i], !r.isOutput, r.isOutput, false};
    if (r.isOutput && (info.flags & isa::kReadsDst)) u.read = true;
    if (r.id == isa::RoleId::Tmp) u = {tiles[i], false, true, true};
    out.push_back(u);
  }
  return out;
}

namespace {

std::string at(uint64_t off, uint64_t* errorOffset) {
  if (errorOffset) *errorOffset = off;
  return support::hex0x(off);
}

/// The CFG being built from the function's blocks as the one block decoder finds them
/// (asm/mc/Blocks.h), one word at a time: the linker's view of each block (its tile operands, its
/// sync event) and the successors.
class CfgBuilder {
public:
  CfgBuilder(const std::string& name, size_t numTiles, uint64_t* errorOffset)
      : where_("@" + name), numTiles_(numTiles), errorOffset_(errorOffset) {}

  std::variant<FunctionCfg, std::string> run(std::span<const uint8_t> text, uint64_t begin,
                                             uint64_t end) {
    obj::code::BlockScanner scan(text, begin, end);
    std::vector<uint32_t> iot; // the current block's B.IOT operands, destination first
    Block cur;
    bool have = false;
    while (const obj::code::Word* w = scan.next()) {
      if (!scan.opened()) {
        if (auto e = header(cur, *w, iot)) return *e;
        continue;
      }
      // The block's first word is its start (or opened an implicit block): not read as a header.
      if (have) finish(cur, iot);
      const obj::code::BlockWords& bw = scan.blocks().back();
      cur = Block{};
      cur.offset = bw.offset;
      cur.transfer = bw.transfer;
      cur.target = bw.target ? static_cast<int64_t>(*bw.target) : -1;
      iot.clear();
      header_.start();
      if (bw.hasStart)
        if (auto e = start(cur, bw, w->inst)) return *e;
      have = true;
    }
    if (have) finish(cur, iot);
    const std::vector<obj::code::BlockWords>& bws = scan.blocks();
    for (size_t i = 0; i < cfg_.blocks.size(); ++i)
      cfg_.blocks[i].end = bws[i].end;
    if (const auto& e = scan.error())
      return where_ + ": cannot decode the word at " + at(e->offset, errorOffset_) + ": " +
             e->message;
    if (auto e = checkTiles()) return *e;
    if (auto e = connectBlocks(cfg_, where_, errorOffset_)) return *e;
    return std::move(cfg_);
  }

private:
  void finish(Block& b, const std::vector<uint32_t>& iot) {
    if (b.kind == BlockKind::Tile) {
      auto uses = classifyOperands(b.op, iot);
      b.firstUse = static_cast<uint32_t>(cfg_.uses.size());
      b.numUses = static_cast<uint32_t>(uses.size());
      cfg_.uses.insert(cfg_.uses.end(), uses.begin(), uses.end());
    }
    cfg_.blocks.push_back(b);
  }

  std::optional<std::string> start(Block& b, const obj::code::BlockWords& bw, const enc::Inst& in) {
    if (bw.transfer == Transfer::Indirect)
      return where_ + ": indirect branch at " + at(bw.offset, errorOffset_) +
             " (not supported by the linker)";
    b.kind = bw.kind;
    if (bw.kind == BlockKind::Tile) b.op = enc::info(*enc::tileOpOf(in)).ours;
    if (bw.kind == BlockKind::Control) return control(b, bw.control, in);
    return std::nullopt;
  }

  /// The pipes of a sync block (set_flag, wait_flag: source and destination; pipe_barrier: its
  /// pipe); other control ops (block index) have none the linker reads.
  std::optional<std::string> control(Block& b, ExtCtl op, const enc::Inst& in) {
    b.control = op;
    if (op == ExtCtl::SET_FLAG || op == ExtCtl::WAIT_FLAG) {
      auto sp = enc::pipeOfCode(in.get("PipeA").value_or(0)),
           dp = enc::pipeOfCode(in.get("PipeB").value_or(0));
      if (!sp || !dp)
        return where_ + ": bad pipe in the sync word at " + at(b.offset, errorOffset_);
      b.srcPipe = *sp;
      b.dstPipe = *dp;
    } else if (op == ExtCtl::PIPE_BARRIER) {
      auto bp = enc::pipeOfCode(in.get("PipeA").value_or(0));
      if (!bp) return where_ + ": bad pipe in the barrier word at " + at(b.offset, errorOffset_);
      b.srcPipe = b.dstPipe = *bp;
    }
    return std::nullopt;
  }

  /// What the linker reads from a block's other words, through the one header reader
  /// (asm/mc/BlockHeader.h): tile operands and the sync event id.
  std::optional<std::string> header(Block& b, const obj::code::Word& w,
                                    std::vector<uint32_t>& iot) {
    using Kind = obj::code::HeaderWord::Kind;
    const obj::code::HeaderWord h = header_.read(w.inst);
    switch (h.kind) {
    case Kind::Operands:
      if (b.kind == BlockKind::Tile) iot.insert(iot.end(), h.tiles, h.tiles + h.numTiles);
      break;
    case Kind::DestinationHand:
      // As the image decoder refuses it: this toolchain's operands are descriptor indices.
      return where_ + ": the word at " + at(w.offset, errorOffset_) + ": " +
             obj::code::destinationHandRefusal(b.kind == BlockKind::Tile ? b.op : std::nullopt);
    case Kind::Dim:
      if (h.lb == 0 && isFlag(b)) {
        b.eventWord = w.offset;
        b.eventId = static_cast<int32_t>(h.bound.imm); // 17 bits
        b.dynamicEvent = h.bound.reg != 0;
      }
      break;
    default:
      break;
    }
    return std::nullopt;
  }

  std::optional<std::string> checkTiles() {
    for (const Block& b : cfg_.blocks)
      if (b.kind == BlockKind::Tile)
        for (const TileUse& u : cfg_.usesOf(b))
          if (u.tile >= numTiles_)
            return where_ + ": the tile block at " + at(b.offset, errorOffset_) +
                   " names tile index " + std::to_string(u.tile) + " but the function has " +
                   std::to_string(numTiles_) + " tiles";
    return std::nullopt;
  }

  const std::string where_;
  const size_t numTiles_;
  obj::code::HeaderReader header_; // the current block's
  uint64_t* errorOffset_;
  FunctionCfg cfg_;
};

} // namespace

std::optional<std::string> connectBlocks(FunctionCfg& cfg, const std::string& where,
                                         uint64_t* errorOffset) {
  for (size_t i = 0; i < cfg.blocks.size(); ++i) {
    Block& b = cfg.blocks[i];
    int32_t next = i + 1 < cfg.blocks.size() ? static_cast<int32_t>(i + 1) : -1;
    int32_t tb = -1;
    b.succ[0] = b.succ[1] = -1;
    if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) {
      const int64_t t = b.target;
      tb = t >= 0 ? cfg.blockAt(static_cast<uint64_t>(t)) : -1;
      if (tb < 0 || cfg.blocks[static_cast<size_t>(tb)].offset != static_cast<uint64_t>(t))
        return where + ": the branch at " + at(b.offset, errorOffset) + " targets " +
               support::hex0x(static_cast<uint64_t>(t)) +
               ", which is not a block start in the function";
    }
    switch (b.transfer) {
    case Transfer::Fall:
    case Transfer::Call:
      b.succ[0] = next;
      break;
    case Transfer::Direct:
      b.succ[0] = tb;
      break;
    case Transfer::Cond:
      b.succ[0] = next, b.succ[1] = tb == next ? -1 : tb;
      break;
    case Transfer::Ret:
    case Transfer::Indirect: // refused by the decoder's consumer
      break;
    }
  }
  cfg.computePreds();
  return std::nullopt;
}

std::variant<FunctionCfg, std::string> decodeCfg(std::span<const uint8_t> text, uint64_t begin,
                                                 uint64_t end, const std::string& name,
                                                 size_t numTiles, uint64_t* errorOffset) {
  return CfgBuilder(name, numTiles, errorOffset).run(text, begin, end);
}

std::variant<FunctionCfg, std::string> buildCfg(const obj::ObjectFile& obj, uint32_t fi,
                                                uint64_t* errorOffset) {
  if (fi >= obj.functions.size()) return std::string("no such function");
  const obj::Function& f = obj.functions[fi];
  if (f.textOffset > obj.text.size() || f.textSize > obj.text.size() - f.textOffset)
    return "@" + f.name + ": code extends past .text";
  return decodeCfg(obj.text, f.textOffset, f.textOffset + f.textSize, f.name, f.tiles.size(),
                   errorOffset);
}

} // namespace pto::link
