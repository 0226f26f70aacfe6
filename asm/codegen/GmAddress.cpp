// GM addresses of tile ops as affine forms (asm/codegen/GmAddress.h).
#include "asm/codegen/GmAddress.h"

#include <algorithm>

namespace pto::as::lower {

using namespace pto::ir;

namespace {

/// a + b, or nothing when a coefficient or the constant leaves int64.
std::optional<Affine> add(const Affine& a, const Affine& b, int64_t sign) {
  Affine r;
  if (__builtin_mul_overflow(b.constant, sign, &r.constant) ||
      __builtin_add_overflow(a.constant, r.constant, &r.constant))
    return std::nullopt;
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
      r.terms.push_back(a.terms[i++]);
      continue;
    }
    int64_t c = 0;
    if (__builtin_mul_overflow(b.terms[j].second, sign, &c)) return std::nullopt;
    if (i < a.terms.size() && a.terms[i].first == b.terms[j].first) {
      if (__builtin_add_overflow(a.terms[i].second, c, &c)) return std::nullopt;
      ++i;
    }
    if (c != 0) r.terms.push_back({b.terms[j].first, c});
    ++j;
  }
  return r;
}

std::optional<Affine> scale(const Affine& a, int64_t k) {
  Affine r;
  if (k == 0) return r;
  if (__builtin_mul_overflow(a.constant, k, &r.constant)) return std::nullopt;
  for (auto [v, c] : a.terms) {
    int64_t s = 0;
    if (__builtin_mul_overflow(c, k, &s)) return std::nullopt;
    r.terms.push_back({v, s});
  }
  return r;
}

// Beyond a few terms an address is not worth following: a record then says "anywhere in the
// parameter", which orders more than needed but never less.
constexpr size_t kMaxTerms = 6;

uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

} // namespace

GmAddressTracker::GmAddressTracker(const Function& fn, ConstantOf constantOf)
    : fn_(fn), constantOf_(std::move(constantOf)) {
  for (size_t i = 0; i < fn.body.args.size(); ++i) {
    const ValueId a = fn.body.args[i];
    const Type& t = fn.type(a);
    const unsigned bits = isa::bitWidth(t.elem);
    if (t.kind == TypeKind::Ptr) {
      places_[a] = Place{static_cast<int32_t>(i), Affine{}, {}, false, bits};
    } else if (t.kind == TypeKind::TensorView || t.kind == TypeKind::PartView) {
      // A tensor-view parameter is static and row-major (obj::Param::shape).
      Place p{static_cast<int32_t>(i), Affine{}, {}, true, bits};
      int64_t stride = std::max<int64_t>(1, bits / 8);
      p.strides.assign(t.shape.size(), 0);
      for (size_t d = t.shape.size(); d-- > 0;) {
        p.strides[d] = stride;
        if (t.shape[d] == kDynamic || __builtin_mul_overflow(stride, t.shape[d], &stride)) {
          p.stridesKnown = false;
          break;
        }
      }
      places_[a] = p;
    }
  }
}

std::optional<Affine> GmAddressTracker::affineOf(ValueId v) const {
  if (auto c = constantOf_(v)) return Affine{*c, {}};
  if (auto it = affine_.find(v); it != affine_.end()) return it->second;
  if (variant_.count(v)) return std::nullopt;
  return Affine{0, {{v, 1}}}; // an atom
}

void GmAddressTracker::enterLoop(const Op& op) {
  Loop l;
  l.id = nextLoop_++;
  if (op.kind == OpKind::For && !op.regions.empty() && !op.regions[0].args.empty()) {
    l.iv = op.regions[0].args[0];
    l.step = constantOf_(op.operands[2]);
    // The carried values change from one iteration to the next.
    for (size_t i = 1; i < op.regions[0].args.size(); ++i)
      variant_.insert(op.regions[0].args[i]);
  } else {
    for (const Region& r : op.regions)
      for (ValueId a : r.args)
        variant_.insert(a);
  }
  // An enclosing loop's variable changes within this loop's runs only between them, but an
  // access here sees it as one more atom that is not the innermost loop's: access() refuses
  // to call such an address known.
  loops_.push_back(l);
}

void GmAddressTracker::exitLoop() {
  if (!loops_.empty()) loops_.pop_back();
}

void GmAddressTracker::before(const Op& op) {
  switch (op.kind) {
  case OpKind::Arith:
    arith(op);
    break;
  case OpKind::MakeTensorView:
  case OpKind::ReinterpretView:
  case OpKind::PartitionView:
  case OpKind::AddPtr:
    view(op);
    break;
  default:
    break;
  }
  markVariant(op);
}

/// A result made inside a loop that is not an affine form of known values differs from one
/// iteration to the next as far as the tracker knows.
void GmAddressTracker::markVariant(const Op& op) {
  if (loops_.empty() || op.kind == OpKind::Constant) return;
  for (ValueId r : op.results)
    if (!affine_.count(r) && !places_.count(r) && !constantOf_(r)) variant_.insert(r);
}

void GmAddressTracker::arith(const Op& op) {
  if (op.results.empty()) return;
  auto operand = [&](size_t i) -> std::optional<Affine> {
    if (i >= op.operands.size()) return std::nullopt;
    return affineOf(op.operands[i]);
  };
  std::optional<Affine> r;
  switch (op.arith) {
  case ArithOp::AddI:
  case ArithOp::SubI:
    if (auto a = operand(0), b = operand(1); a && b)
      r = add(*a, *b, op.arith == ArithOp::AddI ? 1 : -1);
    break;
  case ArithOp::MulI:
    if (auto a = operand(0), b = operand(1); a && b) {
      if (b->terms.empty())
        r = scale(*a, b->constant);
      else if (a->terms.empty())
        r = scale(*b, a->constant);
    }
    break;
  case ArithOp::IndexCast:
  case ArithOp::IndexCastUI:
  case ArithOp::ExtSI:
  case ArithOp::ExtUI:
    r = operand(0);
    break;
  default:
    break;
  }
  if (r && r->terms.size() <= kMaxTerms) affine_[op.results[0]] = std::move(*r);
}

std::optional<GmAddressTracker::Place> GmAddressTracker::placeOf(ValueId v) const {
  auto it = places_.find(v);
  if (it == places_.end()) return std::nullopt;
  return it->second;
}

void GmAddressTracker::view(const Op& op) {
  if (op.results.empty() || op.operands.empty()) return;
  auto src = placeOf(op.operands[0]);
  if (!src) return;
  Place p = *src;
  const unsigned bits = isa::bitWidth(fn_.type(op.results[0]).elem);
  const int64_t elemBytes = bits / 8;
  auto bytesOf = [&](ValueId elems, int64_t scaleBy) -> std::optional<Affine> {
    auto e = affineOf(elems);
    if (!e || scaleBy <= 0) return std::nullopt;
    return scale(*e, scaleBy);
  };
  auto shifted = [&](const std::optional<Affine>& by) {
    if (p.offset && by)
      p.offset = add(*p.offset, *by, 1);
    else
      p.offset.reset();
  };
  switch (op.kind) {
  case OpKind::AddPtr:
    if (op.operands.size() < 2) return;
    shifted(bytesOf(op.operands[1],
                    std::max<int64_t>(1, isa::bitWidth(fn_.type(op.operands[0]).elem) / 8)));
    break;
  case OpKind::MakeTensorView:
  case OpKind::ReinterpretView: {
    const size_t rank = static_cast<size_t>(op.ints[0]);
    const size_t stridesAt = op.kind == OpKind::MakeTensorView ? 1 + rank : 2 + rank;
    if (op.kind == OpKind::ReinterpretView)
      shifted(bytesOf(op.operands[1], std::max<int64_t>(1, elemBytes)));
    p.elemBits = bits;
    p.strides.clear();
    p.stridesKnown = elemBytes > 0 && op.operands.size() >= stridesAt + rank;
    for (size_t i = 0; p.stridesKnown && i < rank; ++i) {
      auto s = constantOf_(op.operands[stridesAt + i]);
      int64_t b = 0;
      if (!s || *s < 0 || __builtin_mul_overflow(*s, elemBytes, &b))
        p.stridesKnown = false;
      else
        p.strides.push_back(b);
    }
    break;
  }
  case OpKind::PartitionView: {
    const size_t rank = static_cast<size_t>(op.ints[0]);
    if (!p.stridesKnown || p.strides.size() != rank || op.operands.size() < 1 + 2 * rank) {
      p.offset.reset();
      break;
    }
    for (size_t i = 0; i < rank && p.offset; ++i)
      shifted(bytesOf(op.operands[1 + i], p.strides[i]));
    break;
  }
  default:
    return;
  }
  if (p.offset && p.offset->terms.size() > kMaxTerms) p.offset.reset();
  places_[op.results[0]] = std::move(p);
}

obj::GmAccess GmAddressTracker::access(ValueId view, bool write) const {
  obj::GmAccess a;
  a.write = write;
  auto p = placeOf(view);
  if (!p) return a; // any parameter
  a.param = p->param;
  const Type& t = fn_.type(view);
  const int64_t elemBytes = p->elemBits / 8;
  if (!p->offset || !p->stridesKnown || elemBytes <= 0 || p->strides.size() != t.shape.size())
    return a;
  // The hull of the bytes: from the first element to the end of the last.
  int64_t last = 0;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    int64_t span = 0;
    if (t.shape[i] == kDynamic || t.shape[i] <= 0 ||
        __builtin_mul_overflow(t.shape[i] - 1, p->strides[i], &span) ||
        __builtin_add_overflow(last, span, &last))
      return a;
  }
  // Every atom the same in each execution of the op but the innermost loop's variable.
  const Loop* inner = loops_.empty() ? nullptr : &loops_.back();
  Affine rest;
  rest.constant = p->offset->constant;
  int64_t perIteration = 0;
  for (auto [v, c] : p->offset->terms) {
    if (variant_.count(v)) return a;
    bool isIv = false;
    for (const Loop& l : loops_)
      isIv = isIv || l.iv == v;
    if (!isIv) {
      rest.terms.push_back({v, c});
      continue;
    }
    // The variable of a loop that is not the only one around the op: its iterations and an
    // enclosing loop's interleave, which one stride cannot say.
    if (loops_.size() != 1 || inner->iv != v || !inner->step) return a;
    if (__builtin_mul_overflow(c, *inner->step, &perIteration)) return a;
  }
  uint64_t symbol = 0;
  for (auto [v, c] : rest.terms)
    symbol = mix(mix(symbol == 0 ? 1 : symbol, v), static_cast<uint64_t>(c));
  a.known = true;
  a.offset = rest.constant;
  a.bytes = static_cast<uint64_t>(last) + static_cast<uint64_t>(elemBytes);
  a.symbol = symbol;
  if (perIteration != 0) {
    a.loop = inner->id;
    a.stride = perIteration;
  }
  return a;
}

} // namespace pto::as::lower
