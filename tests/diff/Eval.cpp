// The oracle: runs a generated Program on its AST (structured control flow as written, scalar
// semantics from Values.cpp, tiles as arrays of f32). Anything whose result the op definitions
// leave undefined (division by zero, an out-of-range index or shift, a tile read before any
// write) makes the program invalid instead of producing a value.
#include "tests/diff/Kernel.h"

#include <stdexcept>

namespace pto::diff {
namespace {

struct Invalid {
  std::string why;
};

class Evaluator {
public:
  Evaluator(const Program& p, uint64_t maxSteps) : p_(p), maxSteps_(maxSteps) {
    for (const Buffer& b : p.buffers)
      mem_.push_back(b.init);
    tiles_.assign(size_t(p.numTiles), {});
  }

  EvalResult run() {
    EvalResult r;
    try {
      const Function& k = p_.kernel();
      std::vector<uint64_t> args;
      for (const ScalarParam& s : p_.scalars)
        args.push_back(s.value);
      call(k, args);
      r.ok = true;
      r.buffers = mem_;
    } catch (const Invalid& e) {
      r.why = e.why;
    }
    r.steps = steps_;
    return r;
  }

private:
  const Program& p_;
  uint64_t maxSteps_, steps_ = 0;
  std::vector<std::vector<uint64_t>> mem_;
  std::vector<std::vector<uint64_t>> tiles_; // f32 bits, empty = never written
  int depth_ = 0;

  struct Frame {
    const Function* fn;
    std::vector<uint64_t> v;
    std::vector<bool> set;
  };

  static uint64_t get(const Frame& f, int id) {
    if (id < 0 || size_t(id) >= f.v.size() || !f.set[size_t(id)])
      throw Invalid{"use of an undefined value %v" + std::to_string(id)};
    return f.v[size_t(id)];
  }
  static void put(Frame& f, int id, uint64_t bits) {
    f.v[size_t(id)] = sem::mask(f.fn->valueTys[size_t(id)], bits);
    f.set[size_t(id)] = true;
  }

  uint64_t call(const Function& fn, const std::vector<uint64_t>& args) {
    if (++depth_ > 16) throw Invalid{"call depth"};
    Frame f{&fn, std::vector<uint64_t>(fn.valueTys.size()), std::vector<bool>(fn.valueTys.size())};
    for (size_t i = 0; i < args.size(); ++i)
      put(f, fn.params[i], args[i]);
    block(f, fn.body);
    --depth_;
    return fn.ret >= 0 ? get(f, fn.ret) : 0;
  }

  size_t index(const Frame& f, int id, size_t size) {
    const uint64_t i = get(f, id);
    if (i >= size) throw Invalid{"index " + std::to_string(int64_t(i)) + " out of range"};
    return size_t(i);
  }

  // Binds a region's parameters, runs its body, returns the terminator's operands.
  std::vector<uint64_t> region(Frame& f, const Region& r, const std::vector<uint64_t>& in) {
    for (size_t i = 0; i < in.size(); ++i)
      put(f, r.params[i], in[i]);
    block(f, r.body);
    std::vector<uint64_t> out;
    for (int y : r.yields)
      out.push_back(get(f, y));
    return out;
  }

  void block(Frame& f, const Block& b) {
    for (const Stmt& s : b)
      stmt(f, s);
  }

  void stmt(Frame& f, const Stmt& s) {
    if (++steps_ > maxSteps_) throw Invalid{"step budget exceeded"};
    using K = Stmt::Kind;
    switch (s.kind) {
    case K::Const:
      put(f, s.res[0], s.imm);
      break;
    case K::Binary: {
      const uint64_t a = get(f, s.args[0]), b = get(f, s.args[1]);
      uint64_t r = 0;
      if (isFloat(s.ty))
        r = sem::floatBinary(s.op, s.ty, a, b);
      else if (!sem::intBinary(s.op, s.ty, a, b, r))
        throw Invalid{"undefined " + s.op};
      put(f, s.res[0], r);
      break;
    }
    case K::Unary:
      put(f, s.res[0], sem::floatNeg(s.ty, get(f, s.args[0])));
      break;
    case K::Cmp: {
      const uint64_t a = get(f, s.args[0]), b = get(f, s.args[1]);
      put(f, s.res[0],
          (isFloat(s.ty) ? sem::floatCmp(s.op, s.ty, a, b) : sem::intCmp(s.op, s.ty, a, b)) ? 1
                                                                                            : 0);
      break;
    }
    case K::Select:
      put(f, s.res[0], get(f, s.args[0]) ? get(f, s.args[1]) : get(f, s.args[2]));
      break;
    case K::Cast: {
      uint64_t r = 0;
      const Ty from = f.fn->valueTys[size_t(s.args[0])];
      if (!sem::cast(s.op, from, s.ty, get(f, s.args[0]), r)) throw Invalid{"bad cast " + s.op};
      put(f, s.res[0], r);
      break;
    }
    case K::Load: {
      const auto& m = mem_[size_t(s.buf)];
      put(f, s.res[0], m[index(f, s.args[0], m.size())]);
      break;
    }
    case K::Store: {
      auto& m = mem_[size_t(s.buf)];
      m[index(f, s.args[1], m.size())] = get(f, s.args[0]);
      break;
    }
    case K::For: {
      const Ty t = s.ty;
      int64_t iv = sem::sext(t, get(f, s.args[0]));
      const int64_t ub = sem::sext(t, get(f, s.args[1])), step = sem::sext(t, get(f, s.args[2]));
      if (step <= 0) throw Invalid{"non-positive step"};
      std::vector<uint64_t> carried;
      for (size_t i = 3; i < s.args.size(); ++i)
        carried.push_back(get(f, s.args[i]));
      while (iv < ub) {
        std::vector<uint64_t> in{uint64_t(iv)};
        in.insert(in.end(), carried.begin(), carried.end());
        carried = region(f, s.regions[0], in);
        if (__builtin_add_overflow(iv, step, &iv)) break;
        if (bitWidth(t) == 32 && iv > INT32_MAX) break;
      }
      for (size_t i = 0; i < s.res.size(); ++i)
        put(f, s.res[i], carried[i]);
      break;
    }
    case K::If: {
      const bool c = get(f, s.args[0]) != 0;
      if (c || s.hasElse) {
        const auto out = region(f, s.regions[c ? 0 : 1], {});
        for (size_t i = 0; i < s.res.size(); ++i)
          put(f, s.res[i], out[i]);
      }
      break;
    }
    case K::While: {
      std::vector<uint64_t> cur;
      for (int a : s.args)
        cur.push_back(get(f, a));
      for (;;) {
        const auto before = region(f, s.regions[0], cur);
        std::vector<uint64_t> fwd(before.begin() + 1, before.end());
        if (!before[0]) {
          for (size_t i = 0; i < s.res.size(); ++i)
            put(f, s.res[i], fwd[i]);
          break;
        }
        cur = region(f, s.regions[1], fwd);
        if (++steps_ > maxSteps_) throw Invalid{"step budget exceeded"};
      }
      break;
    }
    case K::Call: {
      std::vector<uint64_t> args;
      for (int a : s.args)
        args.push_back(get(f, a));
      const uint64_t r = call(p_.funcs[size_t(s.callee)], args);
      put(f, s.res[0], r);
      break;
    }
    case K::TileLoad: {
      const auto& m = mem_[size_t(s.buf)];
      const size_t off = index(f, s.args[0], m.size());
      if (off + size_t(p_.tileWidth) > m.size()) throw Invalid{"tile load out of range"};
      tileRef(s.tile).assign(m.begin() + long(off), m.begin() + long(off) + p_.tileWidth);
      break;
    }
    case K::TileBinary: {
      const auto& a = readTile(s.tileA);
      const auto& b = readTile(s.tileB);
      std::vector<uint64_t> r(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        r[i] = tileOp(s.op, a[i], b[i]);
      tileRef(s.tile) = r;
      break;
    }
    case K::TileScalar: {
      const auto& a = readTile(s.tileA);
      const uint64_t x = get(f, s.args[0]);
      std::vector<uint64_t> r(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        r[i] = tileOp(s.op == "tadds" ? "tadd" : "tmul", a[i], x);
      tileRef(s.tile) = r;
      break;
    }
    case K::TileStore: {
      auto& m = mem_[size_t(s.buf)];
      const size_t off = index(f, s.args[0], m.size());
      if (off + size_t(p_.tileWidth) > m.size()) throw Invalid{"tile store out of range"};
      const auto& t = readTile(s.tileA);
      for (size_t i = 0; i < t.size(); ++i)
        m[off + i] = t[i];
      break;
    }
    }
  }

  std::vector<uint64_t>& tileRef(int t) {
    if (t < 0 || size_t(t) >= tiles_.size()) throw Invalid{"no tile " + std::to_string(t)};
    return tiles_[size_t(t)];
  }
  const std::vector<uint64_t>& readTile(int t) {
    const auto& v = tileRef(t);
    if (v.empty()) throw Invalid{"tile read before it is written"};
    return v;
  }

  static uint64_t tileOp(const std::string& op, uint64_t a, uint64_t b) {
    if (op == "tadd") return sem::floatBinary("addf", Ty::F32, a, b);
    if (op == "tsub") return sem::floatBinary("subf", Ty::F32, a, b);
    return sem::floatBinary("mulf", Ty::F32, a, b); // tmul
  }
};

} // namespace

EvalResult evaluate(const Program& p, uint64_t maxSteps) {
  return Evaluator(p, maxSteps).run();
}

} // namespace pto::diff
