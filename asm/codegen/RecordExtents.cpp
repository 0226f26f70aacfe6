// Extents of pointer parameters (asm/codegen/RecordExtents.h). A view `make_tensor_view %p, shape =
// [s..], strides = [t..]` touches elements [0, 1 + sum (s_i - 1) * t_i) of %p; a scalar load or
// store %p[%i] touches element %i. Each is bounded from above by a polynomial over the integer
// scalar parameters, assuming parameters are not negative: constants fold, addi/subi/muli and casts
// combine, a loop variable is below its upper bound, division and remainder by constants bound.
// The parameter's extent is the max over its accesses; an access that cannot be bounded makes
// it unknown.
#include "asm/codegen/RecordExtents.h"

#include "support/Text.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace pto::as {

using namespace ir;

namespace {

/// sum of coef * product(params): the key is the sorted list of parameter names.
struct Poly {
  std::map<std::vector<std::string>, int64_t> terms;

  static Poly constant(int64_t c) {
    Poly p;
    if (c) p.terms[{}] = c;
    return p;
  }
  static Poly var(const std::string& n) {
    Poly p;
    p.terms[{n}] = 1;
    return p;
  }
  std::optional<int64_t> asConstant() const {
    if (terms.empty()) return 0;
    if (terms.size() == 1 && terms.begin()->first.empty()) return terms.begin()->second;
    return std::nullopt;
  }
  Poly operator+(const Poly& o) const {
    Poly r = *this;
    for (auto& [k, c] : o.terms)
      if ((r.terms[k] += c) == 0) r.terms.erase(k);
    return r;
  }
  Poly operator*(int64_t s) const {
    Poly r;
    if (s)
      for (auto& [k, c] : terms)
        r.terms[k] = c * s;
    return r;
  }
  Poly operator-(const Poly& o) const { return *this + o * -1; }
  Poly operator*(const Poly& o) const {
    Poly r;
    for (auto& [ka, ca] : terms)
      for (auto& [kb, cb] : o.terms) {
        std::vector<std::string> k = ka;
        k.insert(k.end(), kb.begin(), kb.end());
        std::sort(k.begin(), k.end());
        if ((r.terms[k] += ca * cb) == 0) r.terms.erase(k);
      }
    return r;
  }
  std::string text() const {
    if (terms.empty()) return "0";
    std::string s;
    // Highest degree first, the constant last, no spaces (one token in block assembly): "64*%n+1".
    std::vector<std::pair<std::vector<std::string>, int64_t>> order(terms.begin(), terms.end());
    std::stable_sort(order.begin(), order.end(),
                     [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
    for (auto& [k, c] : order) {
      int64_t mag = c < 0 ? -c : c;
      if (s.empty())
        s += c < 0 ? "0-" : "";
      else
        s += c < 0 ? "-" : "+";
      std::string t = k.empty() || mag != 1 ? std::to_string(mag) : "";
      for (const std::string& n : k)
        t += (t.empty() ? "%" : "*%") + n;
      s += t;
    }
    return s;
  }
};

class Analysis {
public:
  using Callees = std::map<std::string, std::vector<PointerUse>>;
  explicit Analysis(const Function& fn, const Callees* callees = nullptr)
      : fn_(fn), callees_(callees) {
    for (ValueId a : fn.body.args) {
      const Type& t = fn.type(a);
      if (t.kind == TypeKind::Index || (t.kind == TypeKind::Scalar && isa::isInteger(t.elem)))
        scalarParam_.insert(a);
    }
    walk(fn.body, [&](const Op& op) {
      for (ValueId r : op.results)
        def_[r] = &op;
      if (op.kind == OpKind::For && !op.regions.empty() && !op.regions[0].args.empty())
        loopOf_[op.regions[0].args[0]] = &op;
    });
  }

  std::vector<PointerUse> run() {
    const auto& args = fn_.body.args;
    std::vector<PointerUse> out(args.size());
    walk(fn_.body, [&](const Op& op) {
      switch (op.kind) {
      case OpKind::MakeTensorView:
        return tensorView(op);
      case OpKind::PartitionView:
        if (auto it = viewBase_.find(op.operands[0]); it != viewBase_.end() && !op.results.empty())
          viewBase_[op.results[0]] = it->second;
        for (size_t i = 1; i < op.operands.size(); ++i)
          markIndex(op.operands[i], indexParams_);
        break;
      case OpKind::LoadScalar:
      case OpKind::StoreScalar:
        return scalarAccess(op);
      case OpKind::AddPtr:
        if (op.operands.size() > 1) markIndex(op.operands[1], indexParams_);
        break;
      case OpKind::For:
        for (size_t i = 0; i < 3 && i < op.operands.size(); ++i)
          markIndex(op.operands[i], indexParams_);
        break;
      case OpKind::Call:
        return call(op);
      case OpKind::PipeInit:
        return pipeInit(op);
      case OpKind::TileOp:
        return tileOp(op);
      default:
        break;
      }
    });
    for (size_t i = 0; i < args.size(); ++i) {
      if (fn_.type(args[i]).kind != TypeKind::Ptr) continue;
      out[i].indexValues = indexParams_.count(args[i]) > 0;
      // A scalar access at an index that cannot be bounded (one loaded from memory) is trusted
      // to stay inside the tensor the kernel declares for that pointer; with no view, the extent
      // is unknown.
      if (unboundedScalar_.count(args[i]) && !viewed_.count(args[i])) continue;
      auto it = accesses_.find(args[i]);
      if (it == accesses_.end()) {
        out[i].extent = "0";
        continue;
      }
      if (auto e = extentOf(it->second)) out[i].extent = *e;
    }
    return out;
  }

private:
  std::map<ValueId, std::vector<std::optional<Poly>>> accesses_; // by pointer parameter
  std::map<ValueId, ValueId> tileSource_; // tile -> pointer parameter it was loaded from
  std::set<ValueId> indexParams_;
  std::set<ValueId> viewed_;          // pointers with a tensor view
  std::set<ValueId> unboundedScalar_; // with a scalar access at an unbounded index

  void tensorView(const Op& op) {
    auto [base, off] = pointer(op.operands[0]);
    if (base == kNoValue) return;
    size_t n = op.ints.empty() ? 0 : static_cast<size_t>(op.ints[0]);
    std::optional<Poly> e = off;
    bool empty = false;
    if (e) *e = *e + Poly::constant(1);
    for (size_t i = 0; i < n && e; ++i) {
      auto s = upper(op.operands[1 + i]);
      auto t = 1 + n + i < op.operands.size() ? upper(op.operands[1 + n + i]) : std::nullopt;
      if (!s || !t) {
        e.reset();
        break;
      }
      if (s->asConstant() && *s->asConstant() <= 0) empty = true;
      *e = *e + (*s - Poly::constant(1)) * *t;
    }
    for (size_t i = 1; i < op.operands.size(); ++i)
      markIndex(op.operands[i], indexParams_);
    if (!empty) accesses_[base].push_back(e);
    viewed_.insert(base);
    if (!op.results.empty()) viewBase_[op.results[0]] = base;
  }

  void scalarAccess(const Op& op) {
    const size_t p = op.kind == OpKind::LoadScalar ? 0 : 1;
    if (op.operands.size() < p + 2) return;
    auto [base, off] = pointer(op.operands[p]);
    if (base == kNoValue) return;
    auto i = upper(op.operands[p + 1]);
    if (!(off && i)) {
      unboundedScalar_.insert(base); // data-dependent: bounded by the views, if any
      markIndex(op.operands[p + 1], indexParams_);
      if (op.kind == OpKind::LoadScalar && !op.results.empty()) loadedFrom_[op.results[0]] = base;
      return;
    }
    accesses_[base].push_back(off && i ? std::optional<Poly>(*off + *i + Poly::constant(1))
                                       : std::nullopt);
    markIndex(op.operands[p + 1], indexParams_);
    if (op.kind == OpKind::LoadScalar && !op.results.empty()) loadedFrom_[op.results[0]] = base;
  }

  void call(const Op& op) {
    // A pointer handed to another function of the module touches what that function's
    // parameter does (when its extent is a constant); otherwise it is not known here.
    const std::vector<PointerUse>* callee = nullptr;
    if (callees_)
      if (auto it = callees_->find(op.name); it != callees_->end()) callee = &it->second;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      auto [base, off] = pointer(op.operands[k]);
      if (base == kNoValue) continue;
      std::optional<int64_t> n;
      if (callee && k < callee->size()) {
        n = support::parseInt((*callee)[k].extent);
        if ((*callee)[k].indexValues) indexParams_.insert(base);
      }
      accesses_[base].push_back(n && off ? std::optional<Poly>(*off + Poly::constant(*n))
                                         : std::nullopt);
    }
  }

  void pipeInit(const Op& op) {
    // A GM slot ring (initialize_l2g2l_pipe): slot_num slots of slot_size bytes, twice that
    // for a two-way pipe (docs/pipes.md).
    if (op.ints.empty() || !op.ints[0] || op.operands.empty()) return;
    // A GM-entry pipe names the tensor view of its first slot: the ring starts at its pointer.
    ValueId ring = op.operands[0];
    if (op.ints.size() > 1 && op.ints[1]) {
      auto d = def_.find(ring);
      if (d == def_.end() || d->second->kind != OpKind::MakeTensorView) return;
      ring = d->second->operands[0];
    }
    auto [base, off] = pointer(ring);
    if (base == kNoValue) return;
    const auto slots = op.pipe->slotNum;
    const auto size = op.pipe->slotSize;
    const auto dir = op.pipe->dirMask;
    const int64_t elemBytes = std::max(1u, isa::bitWidth(fn_.type(base).elem) / 8);
    if (!slots || !size || !dir || !off) {
      accesses_[base].push_back(std::nullopt);
      return;
    }
    const int64_t bytes = *slots * *size * (*dir == 3 ? 2 : 1);
    accesses_[base].push_back(*off + Poly::constant((bytes + elemBytes - 1) / elemBytes));
  }

  void tileOp(const Op& op) {
    const isa::OpInfo& info = isa::info(op.tileOp);
    for (size_t i = 0; i < op.operands.size() && i < op.operandRoles.size(); ++i) {
      if (op.operandRoles[i] < 0) continue;
      using enum isa::RoleId;
      const isa::RoleId role = info.roles[static_cast<size_t>(op.operandRoles[i])].id;
      ValueId v = op.operands[i];
      if (isa::isIndexRole(role))
        if (auto it = tileSource_.find(v); it != tileSource_.end()) indexParams_.insert(it->second);
      if (role == Row || role == Col || role == Offset || role == Start)
        markIndex(v, indexParams_); // positions inside a tile
    }
    if (op.tileOp == isa::OpId::TLOAD) {
      ValueId src = roleValue(op, isa::RoleId::Src), dst = roleValue(op, isa::RoleId::Dst);
      if (auto it = viewBase_.find(src); it != viewBase_.end() && dst != kNoValue)
        tileSource_[dst] = it->second;
    }
  }

  /// The extent of a pointer parameter from its accesses: the largest constant, one expression,
  /// or max(...) of them; nullopt when one access is unbounded.
  static std::optional<std::string> extentOf(const std::vector<std::optional<Poly>>& accesses) {
    int64_t best = 0;
    std::vector<std::string> symbolic;
    for (const auto& e : accesses) {
      if (!e)
        return std::nullopt;
      else if (auto c = e->asConstant())
        best = std::max(best, *c);
      else if (std::find(symbolic.begin(), symbolic.end(), e->text()) == symbolic.end())
        symbolic.push_back(e->text());
    }
    if (symbolic.empty()) return std::to_string(best);
    if (symbolic.size() == 1 && best == 0) return symbolic[0];
    std::string s = "max(";
    for (const std::string& t : symbolic)
      s += t + ",";
    return s + std::to_string(best) + ")";
  }

  const Function& fn_;
  const Callees* callees_ = nullptr;
  std::set<ValueId> scalarParam_;
  std::map<ValueId, const Op*> def_, loopOf_;
  std::map<ValueId, ValueId> viewBase_;   // tensor / partition view -> pointer parameter
  std::map<ValueId, ValueId> loadedFrom_; // scalar loaded from a pointer parameter
  int depth_ = 0;

  /// The pointer parameter a pointer value is derived from, and an upper bound of its offset.
  std::pair<ValueId, std::optional<Poly>> pointer(ValueId v) {
    for (int guard = 0; guard < 64; ++guard) {
      if (v == kNoValue) return {kNoValue, std::nullopt};
      if (std::find(fn_.body.args.begin(), fn_.body.args.end(), v) != fn_.body.args.end() &&
          fn_.type(v).kind == TypeKind::Ptr)
        return {v, Poly{}};
      auto it = def_.find(v);
      if (it == def_.end() || it->second->kind != OpKind::AddPtr || it->second->operands.size() < 2)
        return {kNoValue, std::nullopt};
      auto [base, off] = pointer(it->second->operands[0]);
      auto add = upper(it->second->operands[1]);
      return {base, off && add ? std::optional<Poly>(*off + *add) : std::nullopt};
    }
    return {kNoValue, std::nullopt};
  }

  /// Marks the pointer parameters whose loaded values flow into `v` (an index or offset).
  void markIndex(ValueId v, std::set<ValueId>& out, int depth = 0) {
    if (v == kNoValue || depth > 32) return;
    if (auto it = loadedFrom_.find(v); it != loadedFrom_.end()) out.insert(it->second);
    auto it = def_.find(v);
    if (it == def_.end() || it->second->kind != OpKind::Arith) return;
    for (ValueId o : it->second->operands)
      markIndex(o, out, depth + 1);
  }

  /// The exact value of an integer scalar, as a polynomial of the scalar parameters.
  std::optional<Poly> exact(ValueId v) {
    if (scalarParam_.count(v)) return Poly::var(fn_.value(v).name);
    auto it = def_.find(v);
    if (it == def_.end() || ++depth_ > 64) return std::nullopt;
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    const Op& op = *it->second;
    if (op.kind == OpKind::Constant) {
      auto c = op.constant.integer();
      return c ? std::optional<Poly>(Poly::constant(*c)) : std::nullopt;
    }
    if (op.kind != OpKind::Arith) return std::nullopt;
    const ArithOp n = op.arith;
    if (isCast(n) && op.operands.size() == 1) return exact(op.operands[0]);
    if (op.operands.size() != 2) return std::nullopt;
    auto a = exact(op.operands[0]), b = exact(op.operands[1]);
    if (!a || !b) return std::nullopt;
    if (n == ArithOp::AddI) return *a + *b;
    if (n == ArithOp::SubI) return *a - *b;
    if (n == ArithOp::MulI) return *a * *b;
    return std::nullopt;
  }

  static bool isCast(ArithOp n) {
    return n == ArithOp::IndexCast || n == ArithOp::IndexCastUI || n == ArithOp::ExtSI ||
           n == ArithOp::ExtUI || n == ArithOp::TruncI;
  }

  /// An upper bound of an integer scalar (parameters taken as non-negative).
  std::optional<Poly> upper(ValueId v) {
    if (auto e = exact(v)) return e;
    if (++depth_ > 64) {
      --depth_;
      return std::nullopt;
    }
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    if (auto l = loopOf_.find(v); l != loopOf_.end()) {
      const Op& loop = *l->second;
      if (loop.operands.size() < 3) return std::nullopt;
      auto step = exact(loop.operands[2]);
      auto ub = upper(loop.operands[1]);
      if (!step || !step->asConstant() || *step->asConstant() <= 0 || !ub) return std::nullopt;
      return *ub - Poly::constant(1);
    }
    auto it = def_.find(v);
    if (it == def_.end() || it->second->kind != OpKind::Arith) return std::nullopt;
    const Op& op = *it->second;
    const ArithOp n = op.arith;
    if (isCast(n) && op.operands.size() == 1) return upper(op.operands[0]);
    if (op.operands.size() != 2) return std::nullopt;
    if (n == ArithOp::AddI || n == ArithOp::MulI) {
      auto a = upper(op.operands[0]), b = upper(op.operands[1]);
      if (!a || !b) return std::nullopt;
      return n == ArithOp::AddI ? *a + *b : *a * *b;
    }
    if (n == ArithOp::SubI) {
      auto a = upper(op.operands[0]);
      auto b = exact(op.operands[1]);
      if (!a) return std::nullopt;
      return b ? *a - *b : *a; // subtracting something not negative
    }
    if (n == ArithOp::MinUI || n == ArithOp::MinSI) {
      auto a = upper(op.operands[0]), b = upper(op.operands[1]);
      if (a && b && a->asConstant() && b->asConstant())
        return Poly::constant(std::min(*a->asConstant(), *b->asConstant()));
      if (a && a->asConstant()) return a;
      if (b && b->asConstant()) return b;
      return a ? a : b;
    }
    if (n == ArithOp::MaxUI || n == ArithOp::MaxSI) {
      auto a = upper(op.operands[0]), b = upper(op.operands[1]);
      if (a && b && a->asConstant() && b->asConstant())
        return Poly::constant(std::max(*a->asConstant(), *b->asConstant()));
      return std::nullopt;
    }
    if (n == ArithOp::DivSI || n == ArithOp::DivUI || n == ArithOp::CeilDivSI ||
        n == ArithOp::CeilDivUI || n == ArithOp::FloorDivSI) {
      auto a = upper(op.operands[0]);
      auto b = exact(op.operands[1]);
      if (!a || !a->asConstant() || !b || !b->asConstant() || *b->asConstant() <= 0)
        return std::nullopt;
      int64_t x = *a->asConstant(), d = *b->asConstant();
      return Poly::constant(n == ArithOp::CeilDivSI || n == ArithOp::CeilDivUI ? (x + d - 1) / d
                                                                               : x / d);
    }
    if (n == ArithOp::RemSI || n == ArithOp::RemUI) {
      auto b = exact(op.operands[1]);
      if (!b || !b->asConstant() || *b->asConstant() <= 0) return std::nullopt;
      return Poly::constant(*b->asConstant() - 1);
    }
    return std::nullopt;
  }
};

} // namespace

std::vector<PointerUse> pointerUses(const Function& fn) {
  return Analysis(fn).run();
}

ModuleExtents collectExtents(const Module& m) {
  // Functions by name, so that a module of many functions is matched in linear time (#34).
  std::unordered_map<std::string_view, std::vector<const Function*>> defined;
  for (const auto& g : m.functions)
    if (!g->isDeclaration) defined[g->name].push_back(g.get());
  // Callees first, so that a caller knows what the pointers it passes on are used for (calls
  // never recurse: the verifier refuses cycles).
  Analysis::Callees done;
  std::set<std::string> visiting;
  std::function<void(const Function&)> analyse = [&](const Function& f) {
    if (done.count(f.name) || !visiting.insert(f.name).second) return;
    walk(f.body, [&](const Op& op) {
      if (op.kind != OpKind::Call) return;
      auto it = defined.find(op.name);
      if (it == defined.end()) return;
      for (const Function* g : it->second)
        analyse(*g);
    });
    done[f.name] = Analysis(f, &done).run();
  };
  for (const auto& f : m.functions)
    if (!f->isDeclaration) analyse(*f);
  return done;
}

void applyExtents(const Module& m, const ModuleExtents& done, obj::ObjectFile& object) {
  std::unordered_map<std::string_view, std::vector<obj::Function*>> objectFunctions;
  for (obj::Function& of : object.functions)
    if (!(of.flags & obj::kDeclaration)) objectFunctions[of.name].push_back(&of);
  for (const auto& f : m.functions) {
    if (f->isDeclaration) continue;
    auto it = objectFunctions.find(f->name);
    if (it == objectFunctions.end()) continue;
    for (obj::Function* of : it->second) {
      if (of->params.size() != f->body.args.size()) continue;
      auto found = done.find(f->name);
      if (found == done.end()) continue;
      const std::vector<PointerUse>& uses = found->second;
      for (size_t i = 0; i < of->params.size(); ++i) {
        if (of->params[i].kind != obj::ParamKind::Pointer) continue;
        of->params[i].extent = uses[i].extent;
        of->params[i].indexValues = uses[i].indexValues;
      }
    }
  }
}

void recordExtents(const Module& m, obj::ObjectFile& object) {
  applyExtents(m, collectExtents(m), object);
}

} // namespace pto::as
