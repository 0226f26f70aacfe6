#include "link/Cfg.h"

#include "isa/Encoding.h"

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
    if (r.name == "tmp") u = {tiles[i], false, true, true};
    out.push_back(u);
  }
  return out;
}

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

} // namespace

std::variant<FunctionCfg, std::string> buildCfg(const obj::ObjectFile& obj, uint32_t fi,
                                                uint64_t* errorOffset) {
  auto at = [&](uint64_t off) {
    if (errorOffset) *errorOffset = off;
    return hex(off);
  };
  if (fi >= obj.functions.size()) return std::string("no such function");
  const obj::Function& f = obj.functions[fi];
  std::string where = "@" + f.name;
  if (f.textOffset > obj.text.size() || f.textSize > obj.text.size() - f.textOffset)
    return where + ": code extends past .text";
  FunctionCfg cfg;
  std::vector<int64_t> target; // per block: branch target (.text offset) or -1
  std::vector<uint32_t> iot;   // B.IOT operands of the current tile block
  const uint64_t end = f.textOffset + f.textSize;
  auto finish = [&] {
    if (cfg.blocks.empty()) return;
    Block& b = cfg.blocks.back();
    if (b.kind == BlockKind::Tile) {
      auto uses = classifyOperands(b.op, iot);
      b.firstUse = static_cast<uint32_t>(cfg.uses.size());
      b.numUses = static_cast<uint32_t>(uses.size());
      cfg.uses.insert(cfg.uses.end(), uses.begin(), uses.end());
    }
    iot.clear();
  };
  bool open = false; // a block is open (no BSTOP seen yet)
  uint64_t pos = f.textOffset;
  while (pos < end) {
    size_t consumed = 0;
    auto r = enc::decodeBytes(std::span<const uint8_t>(obj.text.data() + pos, end - pos), consumed,
                              enc::DecodeOptions{.extensions = true});
    if (!r) return where + ": cannot decode the word at " + at(pos) + ": " + r.error();
    const enc::Inst& in = *r;
    std::string_view id = in.formInfo().idName;
    bool start = in.formInfo().startsBlock();
    if (start || !open) {
      finish();
      if (!cfg.blocks.empty()) cfg.blocks.back().end = pos;
      Block b;
      b.offset = pos;
      int64_t tgt = -1;
      if (start) {
        int label = -1;
        for (size_t k = 0; k < in.formInfo().fields.size(); ++k)
          if (in.formInfo().fields[k].kind == enc::FieldKind::Label) label = static_cast<int>(k);
        if (in.form == enc::FormId::C_BSTART_FP) {
          int64_t br = in.get("BrType").value_or(1);
          if (br == 7)
            b.transfer = Transfer::Ret;
          else if (br != 1)
            return where + ": indirect branch at " + at(pos) + " (not supported by the linker)";
        } else if (endsWith(id, "_RET")) {
          b.transfer = Transfer::Ret;
        } else if (endsWith(id, "_IND")) {
          return where + ": indirect branch at " + at(pos) + " (not supported by the linker)";
        } else if (id.find("CALL") != std::string_view::npos) {
          b.transfer = Transfer::Call;
        } else if (endsWith(id, "_DIRECT") && label >= 0) {
          b.transfer = Transfer::Direct;
        } else if (endsWith(id, "_COND") && label >= 0) {
          b.transfer = Transfer::Cond;
        }
        if ((b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) && label >= 0)
          tgt = static_cast<int64_t>(pos) + 2 * in.field[static_cast<size_t>(label)];
        if (auto op = enc::tileOpOf(in)) {
          b.kind = BlockKind::Tile;
          b.op = enc::info(*op).ours;
        } else if (in.form == enc::FormId::BSTART_EXTC) {
          int64_t ctl = in.get("CTL").value_or(0);
          if (ctl == 1 || ctl == 2) {
            b.kind = ctl == 1 ? BlockKind::SetFlag : BlockKind::WaitFlag;
            auto sp = enc::pipeOfCode(in.get("PipeA").value_or(0)),
                 dp = enc::pipeOfCode(in.get("PipeB").value_or(0));
            if (!sp || !dp) return where + ": bad pipe in the sync word at " + at(pos);
            b.srcPipe = *sp;
            b.dstPipe = *dp;
          } else if (ctl == 3) {
            b.kind = BlockKind::Barrier;
            auto bp = enc::pipeOfCode(in.get("PipeA").value_or(0));
            if (!bp) return where + ": bad pipe in the barrier word at " + at(pos);
            b.srcPipe = b.dstPipe = *bp;
          } else {
            b.kind = BlockKind::Other;
          }
        }
      }
      cfg.blocks.push_back(b);
      target.push_back(tgt);
      open = true;
    } else {
      Block& b = cfg.blocks.back();
      switch (in.form) {
      case enc::FormId::B_IOT_S1:
      case enc::FormId::B_IOT_S2:
      case enc::FormId::B_IOT_S1D:
      case enc::FormId::B_IOT_S2D:
        if (b.kind == BlockKind::Tile) {
          iot.push_back(static_cast<uint32_t>(*in.get("SrcTile0")));
          if (auto t1 = in.get("SrcTile1")) iot.push_back(static_cast<uint32_t>(*t1));
        }
        break;
      case enc::FormId::B_DIM_LB0:
        if (b.kind == BlockKind::SetFlag || b.kind == BlockKind::WaitFlag) {
          b.eventWord = pos;
          b.eventId = *in.get("uimm17");
          b.dynamicEvent = in.get("RegSrc").value_or(0) != 0;
        }
        break;
      case enc::FormId::BSTOP:
      case enc::FormId::C_BSTOP:
      case enc::FormId::L_BSTOP:
        open = false;
        break;
      default:
        break;
      }
    }
    pos += consumed;
  }
  finish();
  if (!cfg.blocks.empty()) cfg.blocks.back().end = end;
  for (const Block& b : cfg.blocks)
    if (b.kind == BlockKind::Tile)
      for (const TileUse& u : cfg.usesOf(b))
        if (u.tile >= f.tiles.size())
          return where + ": the tile block at " + at(b.offset) + " names tile index " +
                 std::to_string(u.tile) + " but the function has " +
                 std::to_string(f.tiles.size()) + " tiles";
  // Successors.
  for (size_t i = 0; i < cfg.blocks.size(); ++i) {
    Block& b = cfg.blocks[i];
    int32_t next = i + 1 < cfg.blocks.size() ? static_cast<int32_t>(i + 1) : -1;
    int32_t tb = -1;
    if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) {
      tb = target[i] >= 0 ? cfg.blockAt(static_cast<uint64_t>(target[i])) : -1;
      if (tb < 0 || cfg.blocks[static_cast<size_t>(tb)].offset != static_cast<uint64_t>(target[i]))
        return where + ": the branch at " + at(b.offset) + " targets " +
               hex(static_cast<uint64_t>(target[i])) +
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
      break;
    }
  }
  cfg.computePreds();
  return cfg;
}

} // namespace pto::link
