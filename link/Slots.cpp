#include "link/Slots.h"

#include "asm/mc/BlockHeader.h"
#include "asm/mc/ImageCode.h"
#include "isa/Encoding.h"
#include "isa/ScalarSemantics.h"
#include "link/Planner.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>

namespace pto::link {

namespace {

namespace enc = isa::enc;
using obj::code::AluOp;
using obj::code::RType;
using obj::code::ScalarKind;
using obj::code::ScalarOp;

constexpr uint32_t kMaxPeriod = 16; // longer periods are left unknown
constexpr unsigned kRegs = enc::kNumGprs;

/// What a block does to the registers and which slot values it reads, in order.
struct Step {
  enum class Kind : uint8_t { Scalar, Clobber, ClobberAll, Bind, Flag } kind = Kind::Scalar;
  explicit Step(const ScalarOp& s) : op(s) {}
  explicit Step(Kind k, uint8_t r = 0, uint32_t t = 0, uint32_t i = 0)
      : kind(k), reg(r), tile(t), imm(i) {}
  ScalarOp op;       // Scalar
  uint8_t reg = 0;   // Clobber: the register; Bind: the address; Flag: the id's register
  uint32_t tile = 0; // Bind: the descriptor
  uint32_t imm = 0;  // Flag: the id's immediate
};

std::vector<Step> stepsOf(const obj::ObjectFile& ob, const Block& blk) {
  std::vector<Step> out;
  obj::code::HeaderReader header;
  std::optional<uint8_t> addr, idReg;
  uint32_t idImm = 0;
  std::vector<uint32_t> tiles;
  for (uint64_t at = blk.offset; at < blk.end;) {
    size_t used = 0;
    auto in = enc::decodeBytes(std::span<const uint8_t>(ob.text).subspan(at, blk.end - at), used,
                               enc::DecodeOptions{.extensions = true});
    if (!in || used == 0) return {Step(Step::Kind::ClobberAll)};
    at += used;
    const enc::FormInfo& fi = in->formInfo();
    if (fi.startsBlock()) {
      header.start();
      continue;
    }
    if (fi.group == enc::FormGroup::Scalar) {
      auto op = obj::code::decodeScalar(*in);
      if (auto* s = std::get_if<ScalarOp>(&op))
        out.emplace_back(*s);
      else
        out.emplace_back(Step::Kind::ClobberAll);
      continue;
    }
    const obj::code::HeaderWord h = header.read(*in);
    using HK = obj::code::HeaderWord::Kind;
    if (h.kind == HK::Ior) {
      if (h.iorDst) out.emplace_back(Step::Kind::Clobber, h.iorDst);
      addr = h.iorSrc[0];
    } else if (h.kind == HK::Operands) {
      tiles.insert(tiles.end(), h.tiles, h.tiles + h.numTiles);
    } else if (h.kind == HK::Dim && h.lb == 0 && h.bound.reg != 0) {
      idReg = h.bound.reg;
      idImm = h.bound.imm;
    }
  }
  if (blk.kind == BlockKind::Tile && blk.op == isa::OpId::TASSIGN && addr && tiles.size() == 1)
    out.emplace_back(Step::Kind::Bind, *addr, tiles[0]);
  if (isFlag(blk) && blk.dynamicEvent && idReg)
    out.emplace_back(Step::Kind::Flag, *idReg, 0, idImm);
  if (blk.transfer == Transfer::Call) out.emplace_back(Step::Kind::ClobberAll);
  return out;
}

/// The B operand of an ALU operation from the value of its second register.
uint64_t operandB(const ScalarOp& s, uint64_t r2) {
  if (s.useImm) return static_cast<uint64_t>(s.imm);
  uint64_t v = r2;
  switch (s.rtype) {
  case RType::SignWord:
    v = isa::scalar::sext32(v);
    break;
  case RType::ZeroWord:
    v = isa::scalar::zext32(v);
    break;
  case RType::NegOrNot:
    v = isa::isLogical(s.op) ? isa::scalar::bnot(v) : isa::scalar::neg(v);
    break;
  case RType::None:
    break;
  }
  return v << s.shamt;
}

// ---------------------------------------------------------------------------------------------
// Constant propagation over the function: the registers' values where a loop is entered.

struct Known {
  uint8_t state = 0; // 0: not reached, 1: the constant v, 2: unknown
  uint64_t v = 0;
  bool operator==(const Known&) const = default;
};
using Regs = std::array<Known, kRegs>;

Known join(Known a, Known b) {
  if (a.state == 0) return b;
  if (b.state == 0 || a == b) return a;
  return {2, 0};
}

void constStep(Regs& r, const Step& st) {
  auto unknown = [&](uint8_t reg) {
    if (reg != 0 && reg < kRegs) r[reg] = {2, 0};
  };
  switch (st.kind) {
  case Step::Kind::Scalar: {
    const ScalarOp& s = st.op;
    if (s.kind == ScalarKind::Store) return;
    if (s.kind != ScalarKind::Alu) return unknown(s.rd);
    const Known a = r[s.rs1], b = s.useImm ? Known{1, 0} : r[s.rs2];
    if (a.state != 1 || b.state != 1) return unknown(s.rd);
    if (s.rd != 0 && s.rd < kRegs) r[s.rd] = {1, isa::scalar::alu(s.op, a.v, operandB(s, b.v))};
    return;
  }
  case Step::Kind::Clobber:
    return unknown(st.reg);
  case Step::Kind::ClobberAll:
    for (uint8_t q = 1; q < kRegs; ++q)
      r[q] = {2, 0};
    return;
  default:
    return;
  }
}

/// Per block: the registers on entry (forward data flow to a fixed point).
std::vector<Regs> propagateConstants(const FunctionCfg& cfg,
                                     const std::vector<std::vector<Step>>& steps) {
  const size_t nb = cfg.blocks.size();
  std::vector<Regs> in(nb);
  if (nb == 0) return in;
  for (Known& k : in[0])
    k = {2, 0};
  in[0][0] = {1, 0};
  std::set<uint32_t> work{0};
  while (!work.empty()) {
    const uint32_t b = *work.begin();
    work.erase(work.begin());
    Regs r = in[b];
    for (const Step& st : steps[b])
      constStep(r, st);
    for (int32_t s : cfg.blocks[b].succ) {
      if (s < 0) continue;
      Regs& d = in[static_cast<size_t>(s)];
      bool changed = false;
      for (unsigned q = 0; q < kRegs; ++q) {
        const Known j = join(d[q], r[q]);
        changed |= !(j == d[q]);
        d[q] = j;
      }
      if (changed) work.insert(static_cast<uint32_t>(s));
    }
  }
  return in;
}

// ---------------------------------------------------------------------------------------------
// A loop's values as functions of the iteration number k = 0, 1, 2, ...

/// Unknown; Lin: a * k + b (a == 0: a constant); Per: v[k mod v.size()].
struct Val {
  enum class K : uint8_t { Unknown, Lin, Per } k = K::Unknown;
  int64_t a = 0, b = 0;
  std::vector<uint64_t> v;
  bool constant() const { return k == K::Lin && a == 0; }
  uint32_t period() const {
    return k == K::Per ? static_cast<uint32_t>(v.size()) : k == K::Lin && a == 0 ? 1 : 0;
  }
  uint64_t at(uint64_t i) const { return k == K::Per ? v[i % v.size()] : static_cast<uint64_t>(b); }
};

Val lin(int64_t a, int64_t b) {
  return {Val::K::Lin, a, b, {}};
}

/// A value that is the same every `p`-th iteration, as a table (or a constant).
Val periodic(std::vector<uint64_t> v) {
  if (std::all_of(v.begin(), v.end(), [&](uint64_t x) { return x == v[0]; }))
    return lin(0, static_cast<int64_t>(v[0]));
  return {Val::K::Per, 0, 0, std::move(v)};
}

/// `f` applied to the values of x and y in each iteration of their common period.
template <class F> Val elementwise(const Val& x, const Val& y, F f) {
  const uint32_t px = x.period(), py = y.period();
  if (!px || !py) return {};
  const uint32_t p = std::lcm(px, py);
  if (p > kMaxPeriod) return {};
  std::vector<uint64_t> v(p);
  for (uint32_t i = 0; i < p; ++i)
    v[i] = f(x.at(i), y.at(i));
  return periodic(std::move(v));
}

/// (a * k + b) mod n for every k >= 0, when a and b are not negative: period n / gcd(a, n).
Val modulo(const Val& x, uint64_t n) {
  if (x.k != Val::K::Lin || x.a < 0 || x.b < 0 || n == 0) return {};
  const uint64_t a = static_cast<uint64_t>(x.a) % n;
  const uint64_t p = n / std::gcd(a == 0 ? n : a, n);
  if (p > kMaxPeriod) return {};
  std::vector<uint64_t> v(p);
  for (uint64_t i = 0; i < p; ++i)
    v[i] = (a * i + static_cast<uint64_t>(x.b)) % n;
  return periodic(std::move(v));
}

Val linear(AluOp op, const Val& x, const Val& y) {
  if (x.k != Val::K::Lin || y.k != Val::K::Lin) return {};
  int64_t a = 0, b = 0;
  bool bad = false;
  switch (op) {
  case AluOp::Add:
    bad = __builtin_add_overflow(x.a, y.a, &a) || __builtin_add_overflow(x.b, y.b, &b);
    break;
  case AluOp::Sub:
    bad = __builtin_sub_overflow(x.a, y.a, &a) || __builtin_sub_overflow(x.b, y.b, &b);
    break;
  case AluOp::Mul:
  case AluOp::MulU: {
    if (x.a != 0 && y.a != 0) return {};
    const Val& l = x.a != 0 ? x : y;
    const int64_t c = x.a != 0 ? y.b : x.b;
    bad = __builtin_mul_overflow(l.a, c, &a) || __builtin_mul_overflow(l.b, c, &b);
    break;
  }
  case AluOp::Sll:
    if (y.a != 0 || y.b < 0 || y.b > 30) return {};
    bad = __builtin_mul_overflow(x.a, int64_t{1} << y.b, &a) ||
          __builtin_mul_overflow(x.b, int64_t{1} << y.b, &b);
    break;
  case AluOp::RemU:
  case AluOp::Rem:
    if (y.a != 0 || y.b <= 0) return {};
    return modulo(x, static_cast<uint64_t>(y.b));
  case AluOp::And: // a mask of the low bits: the remainder by a power of two
    if (y.a != 0 || y.b < 0 || (y.b & (y.b + 1)) != 0) return {};
    return modulo(x, static_cast<uint64_t>(y.b) + 1);
  default:
    return {};
  }
  return bad ? Val{} : lin(a, b);
}

/// The B operand as a value: the immediate, or the second register transformed.
Val valueB(const ScalarOp& s, const Val& r2) {
  if (s.useImm) return lin(0, s.imm);
  if (r2.period()) {
    std::vector<uint64_t> v(r2.period());
    for (uint32_t i = 0; i < v.size(); ++i)
      v[i] = operandB(s, r2.at(i));
    return periodic(std::move(v));
  }
  if (r2.k != Val::K::Lin || s.shamt > 30) return {};
  const int64_t scale = int64_t{1} << s.shamt;
  int64_t a = 0, b = 0;
  if (__builtin_mul_overflow(r2.a, scale, &a) || __builtin_mul_overflow(r2.b, scale, &b)) return {};
  if (s.rtype == RType::None) return lin(a, b);
  if (s.rtype == RType::NegOrNot && !isa::isLogical(s.op) && a != INT64_MIN && b != INT64_MIN)
    return lin(-a, -b);
  return {};
}

Val aluValue(const ScalarOp& s, const Val& x, const Val& r2) {
  const Val y = valueB(s, r2);
  if (x.period() && y.period())
    return elementwise(x, y, [&](uint64_t a, uint64_t b) { return isa::scalar::alu(s.op, a, b); });
  if (s.op == AluOp::Li) return y;
  return linear(s.op, x, y);
}

/// The loop [h, latch] when its body is a straight line entered only at h: every block but the
/// latch falls through or leaves the loop by a conditional exit, the latch branches back to h.
bool straightLoop(const FunctionCfg& cfg, uint32_t h, uint32_t latch) {
  for (uint32_t b = h; b <= latch; ++b) {
    const Block& blk = cfg.blocks[b];
    if (b != h)
      for (uint32_t p : cfg.predsOf(b))
        if (p < h || p > latch) return false;
    if (b == latch)
      return blk.transfer == Transfer::Direct && blk.succ[0] == static_cast<int32_t>(h);
    if (blk.transfer == Transfer::Call || blk.transfer == Transfer::Direct ||
        blk.transfer == Transfer::Ret)
      return false;
    if (blk.transfer == Transfer::Cond &&
        blk.target >= static_cast<int64_t>(cfg.blocks[h].offset) &&
        blk.target < static_cast<int64_t>(cfg.blocks[latch].end))
      return false;
  }
  return false;
}

/// What one loop's slot blocks read: per TASSIGN or dynamic flag block, its value per iteration.
struct LoopValues {
  SlotLoop loop;
  std::map<uint32_t, Val> at; // block -> the address (TASSIGN) or id (flag), known per iteration
};

class SlotReader {
public:
  SlotReader(const FunctionCfg& cfg, const obj::ObjectFile& ob) : cfg_(cfg) {
    steps_.resize(cfg.blocks.size());
    for (size_t b = 0; b < cfg.blocks.size(); ++b)
      steps_[b] = stepsOf(ob, cfg.blocks[b]);
    entry_ = propagateConstants(cfg, steps_);
  }

  /// The loops with a known slot value, each with its values.
  std::vector<LoopValues> loops() const {
    std::vector<LoopValues> out;
    for (uint32_t latch = 0; latch < cfg_.blocks.size(); ++latch) {
      const Block& lb = cfg_.blocks[latch];
      if (lb.transfer != Transfer::Direct || lb.succ[0] < 0 ||
          static_cast<uint32_t>(lb.succ[0]) > latch)
        continue;
      if (auto l = loop(static_cast<uint32_t>(lb.succ[0]), latch)) out.push_back(std::move(*l));
    }
    return out;
  }

  std::optional<LoopValues> loop(uint32_t h, uint32_t latch) const {
    if (!straightLoop(cfg_, h, latch)) return std::nullopt;
    bool slots = false;
    for (uint32_t b = h; b <= latch; ++b)
      for (const Step& st : steps_[b])
        slots |= st.kind == Step::Kind::Bind || st.kind == Step::Kind::Flag;
    if (!slots) return std::nullopt;
    std::array<Val, kRegs> r = header(h, latch);
    LoopValues out;
    out.loop.header = h;
    out.loop.latch = latch;
    for (uint32_t b = h; b <= latch; ++b)
      for (const Step& st : steps_[b])
        step(r, st, b, out);
    if (out.at.empty() || out.loop.period > kMaxPeriod) return std::nullopt;
    return out;
  }

private:
  /// The registers at the loop's header as functions of the iteration: an induction variable
  /// (the back edge adds a constant to it) that enters the loop as a constant, a register the
  /// body leaves alone that enters it as one; the others unknown.
  std::array<Val, kRegs> header(uint32_t h, uint32_t latch) const {
    // Each register after one trip through the body, as (a header register + c) or a constant.
    struct Delta {
      int8_t reg = -1; // -1: unknown; kRegs: the constant c
      int64_t c = 0;
    };
    std::array<Delta, kRegs> d;
    for (unsigned q = 0; q < kRegs; ++q)
      d[q] = {static_cast<int8_t>(q), 0};
    d[0] = {static_cast<int8_t>(kRegs), 0};
    for (uint32_t b = h; b <= latch; ++b)
      for (const Step& st : steps_[b])
        deltaStep(d, st);
    Known in[kRegs];
    for (unsigned q = 0; q < kRegs; ++q) {
      in[q] = Known{};
      for (uint32_t p : cfg_.predsOf(h))
        if (p < h || p > latch) {
          Regs out = entry_[p];
          for (const Step& st : steps_[p])
            constStep(out, st);
          in[q] = join(in[q], out[q]);
        }
    }
    std::array<Val, kRegs> r;
    for (unsigned q = 0; q < kRegs; ++q) {
      if (in[q].state != 1) continue;
      const auto e = static_cast<int64_t>(in[q].v);
      if (d[q].reg == static_cast<int8_t>(q))
        r[q] = lin(d[q].c, e);
      else if (d[q].reg == static_cast<int8_t>(kRegs) && d[q].c == e)
        r[q] = lin(0, e);
    }
    return r;
  }

  template <class D> static void deltaStep(D& d, const Step& st) {
    auto unknown = [&](uint8_t reg) {
      if (reg != 0 && reg < kRegs) d[reg] = {-1, 0};
    };
    if (st.kind == Step::Kind::Clobber) return unknown(st.reg);
    if (st.kind == Step::Kind::ClobberAll) {
      for (uint8_t q = 1; q < kRegs; ++q)
        d[q] = {-1, 0};
      return;
    }
    if (st.kind != Step::Kind::Scalar) return;
    const ScalarOp& s = st.op;
    if (s.kind == ScalarKind::Store) return;
    if (s.kind != ScalarKind::Alu || s.rd == 0 || s.rd >= kRegs) return unknown(s.rd);
    const auto konst = static_cast<int8_t>(kRegs);
    const auto a = d[s.rs1];
    std::optional<int64_t> b;
    if (s.useImm)
      b = s.imm;
    else if (d[s.rs2].reg == konst)
      b = static_cast<int64_t>(operandB(s, static_cast<uint64_t>(d[s.rs2].c)));
    if (a.reg == konst && b) {
      d[s.rd] = {konst, static_cast<int64_t>(isa::scalar::alu(s.op, static_cast<uint64_t>(a.c),
                                                              static_cast<uint64_t>(*b)))};
    } else if (a.reg >= 0 && a.reg != konst && b && (s.op == AluOp::Add || s.op == AluOp::Sub)) {
      int64_t c = 0;
      if (s.op == AluOp::Add ? __builtin_add_overflow(a.c, *b, &c)
                             : __builtin_sub_overflow(a.c, *b, &c))
        return unknown(s.rd);
      d[s.rd] = {a.reg, c};
    } else {
      unknown(s.rd);
    }
  }

  static void step(std::array<Val, kRegs>& r, const Step& st, uint32_t b, LoopValues& out) {
    auto unknown = [&](uint8_t reg) {
      if (reg != 0 && reg < kRegs) r[reg] = {};
    };
    switch (st.kind) {
    case Step::Kind::Scalar: {
      const ScalarOp& s = st.op;
      if (s.kind == ScalarKind::Store) return;
      if (s.kind != ScalarKind::Alu || s.rd == 0 || s.rd >= kRegs) return unknown(s.rd);
      const Val x = r[s.rs1], y = s.useImm ? lin(0, 0) : r[s.rs2];
      r[s.rd] = aluValue(s, x, y);
      return;
    }
    case Step::Kind::Clobber:
      return unknown(st.reg);
    case Step::Kind::ClobberAll:
      for (uint8_t q = 1; q < kRegs; ++q)
        r[q] = {};
      return;
    case Step::Kind::Bind:
    case Step::Kind::Flag: {
      if (st.reg >= kRegs) return;
      ScalarOp addImm;
      addImm.useImm = true;
      addImm.imm = st.imm;
      Val v = st.kind == Step::Kind::Flag ? aluValue(addImm, r[st.reg], lin(0, 0)) : r[st.reg];
      if (!v.period()) return;
      out.loop.period = std::lcm(out.loop.period, v.period());
      ++(st.kind == Step::Kind::Bind ? out.loop.binds : out.loop.events);
      out.at[b] = std::move(v);
      return;
    }
    }
  }

  const FunctionCfg& cfg_;
  std::vector<std::vector<Step>> steps_;
  std::vector<Regs> entry_;
};

/// Whether the function has a TASSIGN or a dynamic set/wait at all (most have neither: their
/// words are not read again).
bool hasSlotBlocks(const FunctionCfg& cfg) {
  return std::any_of(cfg.blocks.begin(), cfg.blocks.end(), [](const Block& b) {
    return (b.kind == BlockKind::Tile && b.op == isa::OpId::TASSIGN) ||
           (isFlag(b) && b.dynamicEvent);
  });
}

/// Builds the view: each loop unrolled over its period, its slots renamed, its ids constant.
class ViewBuilder {
public:
  ViewBuilder(const FunctionCfg& cfg, const obj::Function& fn, std::span<const TileSpan> spans,
              isa::Arch arch)
      : fn_(fn), arch_(arch) {
    v_.cfg = cfg;
    v_.origin.resize(cfg.blocks.size());
    std::iota(v_.origin.begin(), v_.origin.end(), 0u);
    v_.tiles = fn.tiles;
    v_.spans.assign(spans.begin(), spans.end());
    v_.spans.resize(fn.tiles.size());
    v_.tileOrigin.resize(fn.tiles.size());
    std::iota(v_.tileOrigin.begin(), v_.tileOrigin.end(), 0u);
  }

  void unroll(const LoopValues& lv) {
    const uint32_t h = lv.loop.header, latch = lv.loop.latch, len = latch - h + 1;
    const uint32_t p = lv.loop.period;
    const auto first = static_cast<uint32_t>(v_.cfg.blocks.size()); // copy 1's header
    auto index = [&](uint32_t copy, uint32_t b) {
      return copy % p == 0 ? b : first + (copy % p - 1) * len + (b - h);
    };
    const std::vector<Block> body(v_.cfg.blocks.begin() + h, v_.cfg.blocks.begin() + latch + 1);
    v_.cfg.blocks.resize(first + (p - 1) * len);
    v_.origin.resize(v_.cfg.blocks.size());
    for (uint32_t k = 0; k < p; ++k) {
      std::map<uint32_t, uint32_t> bound; // descriptor -> its slot's descriptor in this copy
      for (uint32_t b = h; b <= latch; ++b) {
        Block blk = body[b - h];
        for (int32_t& s : blk.succ) {
          if (s < 0 || static_cast<uint32_t>(s) < h || static_cast<uint32_t>(s) > latch) continue;
          s = static_cast<int32_t>(b == latch && static_cast<uint32_t>(s) == h
                                       ? index(k + 1, h)
                                       : index(k, static_cast<uint32_t>(s)));
        }
        const auto firstUse = static_cast<uint32_t>(v_.cfg.uses.size());
        for (uint32_t u = blk.firstUse; u < blk.firstUse + blk.numUses; ++u) {
          TileUse use = v_.cfg.uses[u];
          if (auto it = bound.find(use.tile); it != bound.end()) use.tile = it->second;
          v_.cfg.uses.push_back(use);
        }
        blk.firstUse = firstUse;
        if (auto it = lv.at.find(b); it != lv.at.end()) {
          const uint64_t value = it->second.at(k);
          if (isFlag(blk) && value <= 7) {
            blk.eventId = static_cast<int32_t>(value);
            blk.dynamicEvent = false;
          } else if (blk.kind == BlockKind::Tile && blk.numUses == 1) {
            const uint32_t t = v_.cfg.uses[blk.firstUse].tile;
            if (auto slot = slotTile(v_.tileOrigin[t], value)) bound[v_.tileOrigin[t]] = *slot;
          }
        }
        v_.cfg.blocks[index(k, b)] = blk;
        v_.origin[index(k, b)] = b;
      }
    }
    v_.loops.push_back(lv.loop);
  }

  SlotView finish() {
    v_.cfg.computePreds();
    return std::move(v_);
  }

private:
  /// The descriptor of tile `t` bound at `addr`: a root placed at run time that fits its buffer
  /// there gets a descriptor of its own per address (nullopt: left as it is, may alias its buffer).
  std::optional<uint32_t> slotTile(uint32_t t, uint64_t addr) {
    const obj::TileDesc& d = fn_.tiles[t];
    if (d.placement != obj::kRuntimePlaced || d.aliasOf >= 0) return std::nullopt;
    const uint64_t bytes = tileBytes(d), cap = isa::buffer(arch_, d.loc).capacity;
    if (addr > cap || bytes > cap - addr) return std::nullopt;
    auto [it, added] = slots_.try_emplace({t, addr}, static_cast<uint32_t>(v_.tiles.size()));
    if (added) {
      obj::TileDesc s = d;
      s.name += "@" + std::to_string(addr);
      s.placement = static_cast<int64_t>(addr);
      v_.tiles.push_back(std::move(s));
      v_.spans.push_back({d.loc, static_cast<int64_t>(addr), bytes});
      v_.tileOrigin.push_back(t);
    }
    return it->second;
  }

  const obj::Function& fn_;
  isa::Arch arch_;
  SlotView v_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> slots_;
};

} // namespace

std::optional<SlotView> resolveSlots(const FunctionCfg& cfg, const obj::ObjectFile& ob,
                                     uint32_t function, std::span<const TileSpan> spans,
                                     isa::Arch arch) {
  if (!hasSlotBlocks(cfg)) return std::nullopt;
  const SlotReader reader(cfg, ob);
  const std::vector<LoopValues> loops = reader.loops();
  if (loops.empty()) return std::nullopt;
  ViewBuilder view(cfg, ob.functions[function], spans, arch);
  for (const LoopValues& l : loops)
    view.unroll(l);
  return view.finish();
}

std::vector<Dependency> originalDependencies(const SlotView& view,
                                             const std::vector<Dependency>& deps) {
  std::vector<Dependency> out;
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (Dependency d : deps) {
    d.from = view.origin[d.from];
    d.to = view.origin[d.to];
    if (!d.gm) {
      d.fromTile = view.tileOrigin[d.fromTile];
      d.toTile = view.tileOrigin[d.toTile];
    }
    if (seen.insert({d.from, d.to}).second) out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const Dependency& a, const Dependency& b) {
    return std::pair(a.to, a.from) < std::pair(b.to, b.from);
  });
  return out;
}

std::vector<GmUse> gmUsesOfView(const SlotView& view, std::span<const GmUse> gm) {
  std::multimap<uint32_t, const obj::GmAccess*> byBlock;
  for (const GmUse& g : gm)
    byBlock.insert({g.block, &g.access});
  std::vector<GmUse> out;
  for (uint32_t b = 0; b < view.origin.size(); ++b) {
    auto [lo, hi] = byBlock.equal_range(view.origin[b]);
    for (auto it = lo; it != hi; ++it)
      out.push_back({b, *it->second});
  }
  return out;
}

std::map<uint32_t, uint32_t> slotPeriods(const FunctionCfg& cfg, const obj::ObjectFile& ob) {
  std::map<uint32_t, uint32_t> out;
  if (!hasSlotBlocks(cfg)) return out;
  for (const LoopValues& l : SlotReader(cfg, ob).loops())
    out[l.loop.latch] = l.loop.period;
  return out;
}

} // namespace pto::link
