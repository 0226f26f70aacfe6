// The generator of random well-formed kernels. Every program is built so that it is defined by
// construction: buffer indices are a loop counter bounded by the buffer's size, a constant in
// range or `remui x, size`; divisors are nonzero constants (never -1) or `maxui (andi x, 255), 1`;
// shift amounts are `andi x, width-1` or constants below the width; loops have small trip counts
// and every scf.while carries a counter that its condition bounds. The evaluator then runs the
// program; a draw it rejects (it should not happen) is replaced by the next draw.
#include "tests/diff/Kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace pto::diff {
namespace {

const char* kIntBin[] = {"addi",      "subi",      "muli",       "andi",  "ori",   "xori",  "minsi",
                         "maxsi",     "minui",     "maxui",      "divsi", "divui", "remsi", "remui",
                         "ceildivsi", "ceildivui", "floordivsi", "shli",  "shrsi", "shrui"};
const char* kIntPred[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
const char* kFloatBin[] = {"addf",     "subf",     "mulf",    "divf",
                           "maximumf", "minimumf", "maxnumf", "minnumf"};
const char* kFloatPred[] = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                            "ueq",   "ugt", "uge", "ult", "ule", "une", "uno", "true"};

class Gen {
public:
  Gen(uint64_t seed, const GenOptions& o) : rng_(seed), o_(o) {
    if (o_.halfs) o_.floats = true;
  }

  Program run() {
    makeBuffers();
    const int helpers = o_.noCalls ? 0 : int(pick(uint64_t(o_.maxHelpers) + 1));
    for (int h = 0; h < helpers; ++h)
      makeHelper(h);
    makeKernel();
    return std::move(p_);
  }

private:
  std::mt19937_64 rng_;
  GenOptions o_;
  Program p_;
  Function* fn_ = nullptr;
  int fnIndex_ = 0;
  Block* cur_ = nullptr;
  std::vector<std::vector<int>> scopes_;
  std::vector<int64_t>
      bound_; // value id -> exclusive upper bound of a value known in [0, b), or -1
  int budget_ = 0;
  bool inKernel_ = false;
  int tileIn_ = -1, tileOut_ = -1, tileRows_ = 0;

  uint64_t pick(uint64_t n) { return n ? rng_() % n : 0; }
  bool excluded(const std::string& op) const {
    return std::find(o_.exclude.begin(), o_.exclude.end(), op) != o_.exclude.end();
  }
  bool chance(int percent) { return int(pick(100)) < percent; }
  template <size_t N> const char* from(const char* (&a)[N]) { return a[pick(N)]; }

  std::vector<Ty> scalarTys() const {
    std::vector<Ty> t{Ty::I32, Ty::I64, Ty::Index};
    if (o_.floats) t.push_back(Ty::F32);
    if (o_.halfs) {
      t.push_back(Ty::F16);
      t.push_back(Ty::BF16);
    }
    return t;
  }
  Ty anyTy() {
    auto t = scalarTys();
    return t[pick(t.size())];
  }
  Ty intTy() {
    const Ty t[] = {Ty::I32, Ty::I64, Ty::Index};
    return t[pick(3)];
  }

  // ---- values and statements ----

  int newValue(Ty t) {
    const int id = fn_->newValue(t);
    bound_.resize(fn_->valueTys.size(), -1);
    return id;
  }
  void emit(Stmt s) {
    for (int r : s.res)
      scopes_.back().push_back(r);
    cur_->push_back(std::move(s));
    --budget_;
  }
  int emit1(Stmt s, Ty t) {
    const int r = newValue(t);
    s.res = {r};
    emit(std::move(s));
    return r;
  }
  int konst(Ty t, uint64_t bits) {
    Stmt s;
    s.kind = Stmt::Kind::Const;
    s.ty = t;
    if (o_.noWideConsts && isInt(t))
      bits = uint64_t(std::clamp<int64_t>(int64_t(bits), INT32_MIN, INT32_MAX));
    s.imm = sem::mask(t, bits);
    return emit1(std::move(s), t);
  }
  int binary(const std::string& op, Ty t, int a, int b) {
    Stmt s;
    s.kind = Stmt::Kind::Binary;
    s.op = op;
    s.ty = t;
    s.args = {a, b};
    return emit1(std::move(s), t);
  }
  int castTo(const std::string& op, Ty to, int a) {
    Stmt s;
    s.kind = Stmt::Kind::Cast;
    s.op = op;
    s.ty = to;
    s.args = {a};
    return emit1(std::move(s), to);
  }

  uint64_t intEdge(Ty t) {
    const unsigned w = bitWidth(t);
    const uint64_t smin = uint64_t{1} << (w - 1);
    const uint64_t vals[] = {0,
                             1,
                             ~uint64_t{0},
                             2,
                             3,
                             7,
                             16,
                             31,
                             32,
                             63,
                             smin,
                             smin - 1,
                             0x80,
                             255,
                             uint64_t(-128),
                             0x55555555,
                             0xdeadbeefcafe,
                             uint64_t(-1000)};
    switch (pick(4)) {
    case 0:
      return rng_();
    case 1:
      return pick(10);
    default:
      return vals[pick(std::size(vals))];
    }
  }
  uint64_t floatEdge(Ty t) {
    // f32 patterns; narrower types get the value rounded to them or their own patterns.
    const uint32_t f32[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000,
                            0x40200000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x00000001,
                            0x007fffff, 0x00800000, 0x7f7fffff, 0x4f000000, 0xcf000000, 0x4f800000,
                            0x5f000000, 0x4b800001, 0x3dcccccd, 0x3f801000, 0x3f803000, 0x477fe000,
                            0x477ff000, 0x33800000, 0x387fc000, 0xc2f70000, 0x40490fdb, 0x3f7fffff};
    if (t == Ty::F16 && chance(40)) {
      const uint16_t h[] = {0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00,
                            0x3c01, 0x7c00, 0x7e00, 0x8000, 0x3555};
      return h[pick(std::size(h))];
    }
    uint32_t bits = chance(80) ? f32[pick(std::size(f32))] : uint32_t(rng_());
    if (chance(20)) bits = std::bit_cast<uint32_t>(float(int(pick(41)) - 20) * 0.25f);
    if (t == Ty::F32) return bits;
    return sem::fromDouble(t, double(std::bit_cast<float>(bits)));
  }
  int newConst(Ty t) {
    if (t == Ty::I1) return konst(t, pick(2));
    if (isFloat(t)) return konst(t, floatEdge(t));
    return konst(t, intEdge(t));
  }

  std::vector<int> visible(Ty t) const {
    std::vector<int> r;
    for (const auto& sc : scopes_)
      for (int v : sc)
        if (fn_->valueTys[size_t(v)] == t) r.push_back(v);
    return r;
  }
  // A value of type t: a recent one, any visible one, or a new constant.
  int value(Ty t) {
    auto vs = visible(t);
    if (vs.empty() || chance(12)) {
      if (t == Ty::I1) return cmp();
      return newConst(t);
    }
    if (chance(60)) return vs[vs.size() - 1 - pick(std::min<size_t>(vs.size(), 4))];
    return vs[pick(vs.size())];
  }

  int cmp() {
    Stmt s;
    s.kind = Stmt::Kind::Cmp;
    const Ty t = anyTy();
    s.ty = t;
    do
      s.op = isFloat(t) ? from(kFloatPred) : from(kIntPred);
    while (excluded((isFloat(t) ? "cmpf-" : "cmpi-") + s.op));
    s.args = {value(t), value(t)};
    return emit1(std::move(s), Ty::I1);
  }

  // A nonzero divisor, never -1 (so no signed overflow).
  int divisor(Ty t) {
    if (chance(50)) {
      const int64_t c[] = {1, 2, 3, 5, 7, 16, -2, -3, -7, 100, 1 << 20};
      const unsigned w = bitWidth(t);
      switch (pick(4)) {
      case 0:
        return konst(t, uint64_t{1} << (w - 1)); // INT_MIN
      case 1:
        return konst(t, (uint64_t{1} << (w - 1)) - 1); // INT_MAX
      default:
        return konst(t, uint64_t(c[pick(std::size(c))]));
      }
    }
    const int masked = binary("andi", t, value(t), konst(t, 255));
    return binary("maxui", t, masked, konst(t, 1));
  }
  int shiftAmount(Ty t) {
    if (chance(40)) return konst(t, pick(bitWidth(t)));
    return binary("andi", t, value(t), konst(t, bitWidth(t) - 1));
  }

  void intArith() {
    const Ty t = intTy();
    std::string op;
    do
      op = from(kIntBin);
    while (excluded(op));
    const int a = value(t);
    int b;
    if (op.find("div") != std::string::npos || op.find("rem") != std::string::npos)
      b = divisor(t);
    else if (op.rfind("sh", 0) == 0)
      b = shiftAmount(t);
    else
      b = value(t);
    binary(op, t, a, b);
  }

  void floatArith() {
    const Ty t = o_.halfs ? std::vector<Ty>{Ty::F32, Ty::F16, Ty::BF16}[pick(3)] : Ty::F32;
    if (chance(15)) {
      Stmt s;
      s.kind = Stmt::Kind::Unary;
      s.op = "negf";
      s.ty = t;
      s.args = {value(t)};
      emit1(std::move(s), t);
      return;
    }
    std::string op;
    do
      op = from(kFloatBin);
    while (excluded(op));
    binary(op, t, value(t), value(t));
  }

  void select() {
    Stmt s;
    s.kind = Stmt::Kind::Select;
    const Ty t = chance(10) ? Ty::I1 : anyTy();
    s.ty = t;
    s.args = {value(Ty::I1), value(t), value(t)};
    emit1(std::move(s), t);
  }

  void cast() {
    struct C {
      const char* op;
      Ty from, to;
      bool fl;
    };
    static const C casts[] = {
        {"index_cast", Ty::I32, Ty::Index, false},   {"index_cast", Ty::Index, Ty::I32, false},
        {"index_cast", Ty::I64, Ty::Index, false},   {"index_cast", Ty::Index, Ty::I64, false},
        {"index_castui", Ty::I32, Ty::Index, false}, {"index_castui", Ty::Index, Ty::I32, false},
        {"extsi", Ty::I32, Ty::I64, false},          {"extui", Ty::I32, Ty::I64, false},
        {"trunci", Ty::I64, Ty::I32, false},         {"extui", Ty::I1, Ty::I32, false},
        {"extsi", Ty::I1, Ty::I64, false},           {"sitofp", Ty::I32, Ty::F32, true},
        {"sitofp", Ty::I64, Ty::F32, true},          {"uitofp", Ty::I32, Ty::F32, true},
        {"uitofp", Ty::I64, Ty::F32, true},          {"fptosi", Ty::F32, Ty::I32, true},
        {"fptosi", Ty::F32, Ty::I64, true},          {"fptoui", Ty::F32, Ty::I32, true},
        {"fptoui", Ty::F32, Ty::I64, true},          {"bitcast", Ty::I32, Ty::F32, true},
        {"bitcast", Ty::F32, Ty::I32, true},
    };
    static const C halfCasts[] = {
        {"extf", Ty::F16, Ty::F32, true},    {"truncf", Ty::F32, Ty::F16, true},
        {"extf", Ty::BF16, Ty::F32, true},   {"truncf", Ty::F32, Ty::BF16, true},
        {"sitofp", Ty::I32, Ty::F16, true},  {"uitofp", Ty::I64, Ty::F16, true},
        {"sitofp", Ty::I64, Ty::BF16, true}, {"fptosi", Ty::F16, Ty::I32, true},
        {"fptoui", Ty::BF16, Ty::I64, true}, {"fptosi", Ty::BF16, Ty::I32, true},
    };
    C c;
    for (int tries = 0;; ++tries) {
      if (o_.halfs && chance(40))
        c = halfCasts[pick(std::size(halfCasts))];
      else {
        do
          c = casts[pick(std::size(casts))];
        while (c.fl && !o_.floats);
      }
      if (!excluded(c.op) && !excluded(std::string(c.op) + "-" + tyName(c.from))) break;
      if (tries > 100) return;
    }
    castTo(c.op, c.to, value(c.from));
  }

  // ---- memory ----

  std::vector<int> scalarBuffers() const {
    std::vector<int> r;
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const Buffer& b = p_.buffers[i];
      if (b.tiles || (isFloat(b.elem) && !o_.floats)) continue;
      r.push_back(int(i));
    }
    return r;
  }

  // An index value provably in [0, size).
  int indexFor(int64_t size) {
    std::vector<int> bounded;
    for (const auto& sc : scopes_)
      for (int v : sc)
        if (bound_[size_t(v)] >= 0 && bound_[size_t(v)] <= size) bounded.push_back(v);
    if (!bounded.empty() && chance(60)) return bounded[pick(bounded.size())];
    if (chance(30)) return konst(Ty::Index, pick(uint64_t(size)));
    int x = value(chance(70) ? Ty::Index : intTy());
    if (fn_->valueTys[size_t(x)] != Ty::Index) x = castTo("index_cast", Ty::Index, x);
    return binary("remui", Ty::Index, x, konst(Ty::Index, uint64_t(size)));
  }

  void load() {
    auto bs = scalarBuffers();
    if (bs.empty()) return;
    const int b = bs[pick(bs.size())];
    Stmt s;
    s.kind = Stmt::Kind::Load;
    s.buf = b;
    s.ty = p_.buffers[size_t(b)].elem;
    s.args = {indexFor(int64_t(p_.buffers[size_t(b)].init.size()))};
    emit1(std::move(s), s.ty);
  }

  void store() {
    auto bs = scalarBuffers();
    if (bs.empty()) return;
    const int b = bs[pick(bs.size())];
    Stmt s;
    s.kind = Stmt::Kind::Store;
    s.buf = b;
    s.ty = p_.buffers[size_t(b)].elem;
    const int v = value(s.ty);
    s.args = {v, indexFor(int64_t(p_.buffers[size_t(b)].init.size()))};
    emit(std::move(s));
  }

  // ---- tiles ----

  int tileOffset() {
    const int row = indexFor(tileRows_);
    return binary("muli", Ty::Index, row, konst(Ty::Index, uint64_t(p_.tileWidth)));
  }
  void tileOp() {
    Stmt s;
    s.tile = int(pick(uint64_t(p_.numTiles)));
    switch (pick(5)) {
    case 0:
      s.kind = Stmt::Kind::TileLoad;
      // Loads read the input buffer only: auto-sync orders tile buffers, not GM, so a TLOAD of
      // what a TSTORE wrote (MTE3 -> MTE2) would race on the npu (docs/sync.md).
      s.buf = tileIn_;
      s.args = {tileOffset()};
      break;
    case 1:
    case 2: {
      const char* ops[] = {"tadd", "tsub", "tmul"};
      s.kind = Stmt::Kind::TileBinary;
      s.op = ops[pick(3)];
      s.tileA = int(pick(uint64_t(p_.numTiles)));
      s.tileB = int(pick(uint64_t(p_.numTiles)));
      break;
    }
    case 3:
      s.kind = Stmt::Kind::TileScalar;
      s.op = chance(50) ? "tadds" : "tmuls";
      s.tileA = int(pick(uint64_t(p_.numTiles)));
      s.args = {o_.floats ? value(Ty::F32) : konst(Ty::F32, floatEdge(Ty::F32))};
      break;
    default:
      s.kind = Stmt::Kind::TileStore;
      s.buf = tileOut_;
      s.tileA = s.tile;
      s.tile = -1;
      s.args = {tileOffset()};
      break;
    }
    emit(std::move(s));
  }

  // ---- control flow ----

  // Runs `body` with a new scope in region r (whose params are already made) of the current block.
  template <typename F> void inRegion(Region& r, F body) {
    Block* saved = cur_;
    cur_ = &r.body;
    scopes_.push_back(r.params);
    body();
    scopes_.pop_back();
    cur_ = saved;
  }

  std::vector<Ty> resultTys(int maxN) {
    std::vector<Ty> t;
    const int n = int(pick(uint64_t(maxN) + 1));
    for (int i = 0; i < n; ++i)
      t.push_back(chance(10) ? Ty::I1 : anyTy());
    return t;
  }

  void forLoop(int depth) {
    Stmt s;
    s.kind = Stmt::Kind::For;
    const bool i32 = chance(10);
    const Ty t = i32 ? Ty::I32 : Ty::Index;
    s.ty = t;
    int64_t lb = 0, ubMax = -1;
    int lbv, ubv;
    if (chance(70))
      lbv = konst(t, 0);
    else {
      lb = int64_t(pick(3));
      lbv = konst(t, uint64_t(lb));
    }
    std::vector<int> nparams;
    if (!i32 && inKernel_)
      for (size_t i = 0; i < p_.scalars.size(); ++i)
        if (p_.scalars[i].ty == Ty::Index) nparams.push_back(int(i));
    if (!nparams.empty() && chance(50)) {
      const int i = nparams[pick(nparams.size())];
      ubv = fn_->params[size_t(i)];
      ubMax = int64_t(p_.scalars[size_t(i)].value);
    } else {
      ubMax = int64_t(pick(6));
      ubv = konst(t, uint64_t(ubMax));
    }
    int stepv;
    if (chance(10)) // a step known only at run time: 1 + (x & 3)
      stepv = binary("addi", t, binary("andi", t, value(t), konst(t, 3)), konst(t, 1));
    else
      stepv = konst(t, chance(70) ? 1 : 1 + pick(3));
    s.args = {lbv, ubv, stepv};
    const auto tys = resultTys(2);
    for (Ty x : tys)
      s.args.push_back(value(x));
    Region r;
    const int iv = newValue(t);
    if (!i32 && lb >= 0) bound_[size_t(iv)] = ubMax;
    r.params.push_back(iv);
    for (Ty x : tys)
      r.params.push_back(newValue(x));
    inRegion(r, [&] {
      block(depth + 1, 2 + int(pick(6)));
      for (Ty x : tys)
        r.yields.push_back(value(x));
    });
    s.regions.push_back(std::move(r));
    for (Ty x : tys)
      s.res.push_back(newValue(x));
    emit(std::move(s));
  }

  void ifStmt(int depth) {
    Stmt s;
    s.kind = Stmt::Kind::If;
    s.args = {value(Ty::I1)};
    const auto tys = resultTys(2);
    s.hasElse = !tys.empty() || chance(50);
    s.regions.resize(s.hasElse ? 2 : 1);
    for (auto& r : s.regions)
      inRegion(r, [&] {
        block(depth + 1, 1 + int(pick(5)));
        for (Ty x : tys)
          r.yields.push_back(value(x));
      });
    for (Ty x : tys)
      s.res.push_back(newValue(x));
    emit(std::move(s));
  }

  void whileLoop(int depth) {
    Stmt s;
    s.kind = Stmt::Kind::While;
    // Carried: a counter k (from 0) and up to two more values. The condition is k < limit
    // (possibly and-ed with anything), and the after region yields k + 1: it terminates.
    int64_t limit;
    int limitv;
    std::vector<int> nparams;
    if (inKernel_)
      for (size_t i = 0; i < p_.scalars.size(); ++i)
        if (p_.scalars[i].ty == Ty::Index) nparams.push_back(int(i));
    std::vector<Ty> tys{Ty::Index};
    for (Ty x : resultTys(2))
      tys.push_back(x);
    s.args.push_back(konst(Ty::Index, 0));
    if (!nparams.empty() && chance(50)) {
      const int i = nparams[pick(nparams.size())];
      limitv = fn_->params[size_t(i)];
      limit = int64_t(p_.scalars[size_t(i)].value);
    } else {
      limit = int64_t(pick(5));
      limitv = konst(Ty::Index, uint64_t(limit));
    }
    for (size_t i = 1; i < tys.size(); ++i)
      s.args.push_back(value(tys[i]));
    Region before, after;
    for (Ty x : tys)
      before.params.push_back(newValue(x));
    inRegion(before, [&] {
      block(depth + 1, int(pick(4)));
      int c = cmpi("slt", before.params[0], limitv);
      if (chance(30)) c = binary("andi", Ty::I1, c, value(Ty::I1));
      before.yields.push_back(c);
      before.yields.push_back(before.params[0]);
      for (size_t i = 1; i < tys.size(); ++i)
        before.yields.push_back(value(tys[i]));
    });
    for (Ty x : tys)
      after.params.push_back(newValue(x));
    bound_[size_t(after.params[0])] = limit;
    inRegion(after, [&] {
      block(depth + 1, 1 + int(pick(5)));
      after.yields.push_back(binary("addi", Ty::Index, after.params[0], konst(Ty::Index, 1)));
      for (size_t i = 1; i < tys.size(); ++i)
        after.yields.push_back(value(tys[i]));
    });
    s.regions.push_back(std::move(before));
    s.regions.push_back(std::move(after));
    for (Ty x : tys)
      s.res.push_back(newValue(x));
    emit(std::move(s));
  }

  int cmpi(const char* pred, int a, int b) {
    Stmt s;
    s.kind = Stmt::Kind::Cmp;
    s.op = pred;
    s.ty = fn_->valueTys[size_t(a)];
    s.args = {a, b};
    return emit1(std::move(s), Ty::I1);
  }

  void call() {
    const int n = inKernel_ ? int(p_.funcs.size()) - 1 : fnIndex_;
    if (n <= 0) return;
    const int callee = int(pick(uint64_t(n)));
    const Function& f = p_.funcs[size_t(callee)];
    Stmt s;
    s.kind = Stmt::Kind::Call;
    s.callee = callee;
    for (int a : f.params)
      s.args.push_back(value(f.valueTys[size_t(a)]));
    s.ty = *f.result;
    emit1(std::move(s), s.ty);
  }

  void statement(int depth) {
    const bool canNest = depth < o_.maxDepth && budget_ > 4;
    for (;;) {
      const int k = int(pick(100));
      if (k < 22) return intArith();
      if (k < 28) return (void)cmp();
      if (k < 33) return select();
      if (k < 40) return cast();
      if (k < 47 && inKernel_) return load();
      if (k < 56 && inKernel_) return store();
      if (k < 64 && canNest) return forLoop(depth);
      if (k < 72 && canNest && !o_.noIf) return ifStmt(depth);
      if (k < 76 && canNest && !o_.noWhile) return whileLoop(depth);
      if (k < 81 && !o_.noCalls) return call();
      if (k >= 81 && k < 91 && o_.floats) return floatArith();
      if (k >= 91 && o_.tiles && inKernel_) return tileOp();
    }
  }

  void block(int depth, int n) {
    for (int i = 0; i < n && budget_ > 0; ++i)
      statement(depth);
  }

  // ---- functions ----

  void begin(Function& f) {
    fn_ = &f;
    bound_.assign(f.valueTys.size(), -1);
    cur_ = &f.body;
    scopes_.assign(1, f.params);
  }

  void makeHelper(int h) {
    Function f;
    f.name = "h" + std::to_string(h);
    const int np = 1 + int(pick(3));
    for (int i = 0; i < np; ++i)
      f.params.push_back(f.newValue(anyTy()));
    f.result = anyTy();
    p_.funcs.push_back(std::move(f));
    fnIndex_ = h;
    begin(p_.funcs.back());
    inKernel_ = false;
    budget_ = 4 + int(pick(8));
    block(std::max(1, o_.maxDepth - 1), budget_);
    fn_->ret = value(*fn_->result);
  }

  void makeBuffers() {
    const int n = 2 + int(pick(3));
    std::vector<Ty> elems{Ty::I32, Ty::I64};
    if (o_.floats) elems.push_back(Ty::F32);
    if (o_.halfs) {
      elems.push_back(Ty::F16);
      elems.push_back(Ty::BF16);
    }
    for (int i = 0; i < n; ++i) {
      Buffer b;
      b.elem = elems[pick(elems.size())];
      b.init.resize(1 + pick(8));
      for (auto& x : b.init)
        x = isFloat(b.elem) ? floatEdge(b.elem) : sem::mask(b.elem, intEdge(b.elem));
      p_.buffers.push_back(std::move(b));
    }
    // Index parameters: mostly the exact size of a buffer (so `for %i = 0 to %n` walks it).
    const int ni = 1 + int(pick(2));
    for (int i = 0; i < ni; ++i) {
      ScalarParam sp;
      sp.value = chance(80) ? p_.buffers[pick(p_.buffers.size())].init.size() : pick(3);
      p_.scalars.push_back(sp);
    }
    if (chance(50)) p_.scalars.push_back({chance(50) ? Ty::I32 : Ty::I64, 0});
    for (size_t i = size_t(ni); i < p_.scalars.size(); ++i)
      p_.scalars[i].value = sem::mask(p_.scalars[i].ty, intEdge(p_.scalars[i].ty));
    if (o_.tiles) {
      tileRows_ = 2 + int(pick(3));
      p_.tileWidth = chance(50) ? 8 : 16;
      p_.numTiles = 2 + int(pick(2));
      for (int i = 0; i < 2; ++i) {
        Buffer b;
        b.elem = Ty::F32;
        b.tiles = true;
        b.init.resize(size_t(tileRows_ * p_.tileWidth));
        for (auto& x : b.init)
          x = floatEdge(Ty::F32);
        p_.buffers.push_back(std::move(b));
      }
      tileIn_ = int(p_.buffers.size()) - 2;
      tileOut_ = int(p_.buffers.size()) - 1;
    }
  }

  void makeKernel() {
    Function k;
    k.name = "k";
    for (const ScalarParam& s : p_.scalars)
      k.params.push_back(k.newValue(s.ty));
    p_.funcs.push_back(std::move(k));
    fnIndex_ = int(p_.funcs.size()) - 1;
    begin(p_.funcs.back());
    inKernel_ = true;
    // Each tile starts with a load, so that no op reads a tile before it is written.
    for (int t = 0; t < p_.numTiles; ++t) {
      Stmt s;
      s.kind = Stmt::Kind::TileLoad;
      s.tile = t;
      s.buf = tileIn_;
      s.args = {konst(Ty::Index, uint64_t(int(pick(uint64_t(tileRows_))) * p_.tileWidth))};
      emit(std::move(s));
    }
    budget_ = 8 + int(pick(uint64_t(o_.maxStmts)));
    block(0, budget_);
    // Make the last values observable: two stores per buffer, of the newest values of its type.
    for (int b : scalarBuffers())
      for (int i = 0; i < 2; ++i) {
        Stmt s;
        s.kind = Stmt::Kind::Store;
        s.buf = b;
        s.ty = p_.buffers[size_t(b)].elem;
        auto vs = visible(s.ty);
        const int v =
            vs.empty() ? newConst(s.ty) : vs[vs.size() - 1 - pick(std::min<size_t>(vs.size(), 3))];
        s.args = {v, indexFor(int64_t(p_.buffers[size_t(b)].init.size()))};
        emit(std::move(s));
      }
    if (o_.tiles)
      for (int t = 0; t < p_.numTiles; ++t) {
        Stmt s;
        s.kind = Stmt::Kind::TileStore;
        s.tileA = t;
        s.buf = tileOut_;
        s.args = {tileOffset()};
        emit(std::move(s));
      }
  }
};

} // namespace

Program generate(uint64_t seed, const GenOptions& opts, EvalResult& expected, int* attempts) {
  for (int a = 0;; ++a) {
    Program p = Gen(seed * 0x9E3779B97F4A7C15ull + uint64_t(a), opts).run();
    expected = evaluate(p);
    if (expected.ok || a >= 1000) {
      if (attempts) *attempts = a + 1;
      return p;
    }
  }
}

} // namespace pto::diff
