// Delta reduction of a failing program. Candidates, tried from the last statement to the first
// until none is accepted: drop a statement (its results become zero constants, or it goes away
// when nothing uses them), inline the then or else region of an scf.if, run the body of an
// scf.for or the before region of an scf.while once in place. A candidate is kept when the
// evaluator still accepts it (no undefined behaviour), and the tool chain still fails with the same
// kind of failure (assembler errors included, so the verifier checks every candidate). Helpers
// nobody calls are dropped at the end.
#include "tests/diff/Check.h"

#include <functional>

namespace pto::diff {
namespace {

// Calls f(block, index) for every statement in pre-order; stops when f returns true.
bool walk(Block& b, const std::function<bool(Block&, size_t)>& f) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (f(b, i)) return true;
    for (Region& r : b[i].regions)
      if (walk(r.body, f)) return true;
  }
  return false;
}

void renameUses(Block& b, int from, int to) {
  for (Stmt& s : b) {
    for (int& a : s.args)
      if (a == from) a = to;
    for (Region& r : s.regions) {
      for (int& y : r.yields)
        if (y == from) y = to;
      renameUses(r.body, from, to);
    }
  }
}
void renameUses(Function& f, int from, int to) {
  renameUses(f.body, from, to);
  if (f.ret == from) f.ret = to;
}

bool used(const Block& b, int id) {
  for (const Stmt& s : b) {
    for (int a : s.args)
      if (a == id) return true;
    for (const Region& r : s.regions) {
      for (int y : r.yields)
        if (y == id) return true;
      if (used(r.body, id)) return true;
    }
  }
  return false;
}

enum class Edit { Drop, InlineThen, InlineElse, InlineFor, InlineWhile };

// Applies `e` to the k-th statement (pre-order over all functions); false when it does not apply.
bool apply(Program& p, int k, Edit e) {
  for (Function& f : p.funcs) {
    bool done = false, ok = false;
    walk(f.body, [&](Block& b, size_t i) {
      if (k-- != 0) return false;
      done = true;
      Stmt s = b[i];
      const auto unusedAll = [&] {
        for (int r : s.res)
          if (used(f.body, r) || f.ret == r) return false;
        return true;
      };
      if (e == Edit::Drop) {
        if (s.kind == Stmt::Kind::Const && !unusedAll()) return true;
        b.erase(b.begin() + long(i));
        if (!unusedAll()) {
          std::vector<Stmt> zeros;
          for (int r : s.res) {
            Stmt c;
            c.kind = Stmt::Kind::Const;
            c.ty = f.valueTys[size_t(r)];
            c.res = {r};
            zeros.push_back(c);
          }
          b.insert(b.begin() + long(i), zeros.begin(), zeros.end());
        }
        ok = true;
        return true;
      }
      std::vector<int> params, bindTo;
      Region body;
      if ((e == Edit::InlineThen || e == Edit::InlineElse) && s.kind == Stmt::Kind::If) {
        const size_t which = e == Edit::InlineThen ? 0 : 1;
        if (which >= s.regions.size()) return true;
        body = s.regions[which];
      } else if (e == Edit::InlineFor && s.kind == Stmt::Kind::For) {
        body = s.regions[0];
        params = body.params;
        bindTo.assign(s.args.begin(), s.args.end());
        bindTo.erase(bindTo.begin() + 1, bindTo.begin() + 3); // lb, inits...
      } else if (e == Edit::InlineWhile && s.kind == Stmt::Kind::While) {
        body = s.regions[0]; // the before region once: its forwarded values become the results
        params = body.params;
        bindTo = s.args;
        body.yields.erase(body.yields.begin());
      } else {
        return true;
      }
      b.erase(b.begin() + long(i));
      b.insert(b.begin() + long(i), body.body.begin(), body.body.end());
      for (size_t j = 0; j < params.size(); ++j)
        renameUses(f, params[j], bindTo[j]);
      for (size_t j = 0; j < s.res.size(); ++j)
        renameUses(f, s.res[j], body.yields[j]);
      ok = true;
      return true;
    });
    if (done) return ok;
  }
  return false;
}

int countStmts(Program& p) {
  int n = 0;
  for (Function& f : p.funcs)
    walk(f.body, [&](Block&, size_t) { return ++n, false; });
  return n;
}

bool calls(const Block& b, int callee) {
  for (const Stmt& s : b) {
    if (s.kind == Stmt::Kind::Call && s.callee == callee) return true;
    for (const Region& r : s.regions)
      if (calls(r.body, callee)) return true;
  }
  return false;
}

void renumberCallees(Block& b, int removed) {
  for (Stmt& s : b) {
    if (s.kind == Stmt::Kind::Call && s.callee > removed) --s.callee;
    for (Region& r : s.regions)
      renumberCallees(r.body, removed);
  }
}

void dropUnusedHelpers(Program& p) {
  for (int h = int(p.funcs.size()) - 2; h >= 0; --h) {
    bool any = false;
    for (const Function& f : p.funcs)
      any = any || calls(f.body, h);
    if (any) continue;
    p.funcs.erase(p.funcs.begin() + h);
    for (Function& f : p.funcs)
      renumberCallees(f.body, h);
  }
}

} // namespace

Program reduce(const Program& start, const CheckOptions& opts, const std::string& kind,
               int* steps) {
  Program cur = start;
  int tried = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int k = countStmts(cur) - 1; k >= 0; --k) {
      for (Edit e :
           {Edit::Drop, Edit::InlineThen, Edit::InlineElse, Edit::InlineFor, Edit::InlineWhile}) {
        Program cand = cur;
        if (!apply(cand, k, e)) continue;
        const EvalResult ev = evaluate(cand);
        if (!ev.ok) continue;
        ++tried;
        std::string k2;
        if (check(cand, ev, opts, &k2).empty() || k2 != kind) continue;
        cur = std::move(cand);
        changed = true;
        break;
      }
    }
  }
  dropUnusedHelpers(cur);
  if (cur.numTiles > 0) { // no tile op left: try without the tiles and views
    Program cand = cur;
    cand.numTiles = 0;
    const EvalResult ev = evaluate(cand);
    std::string k2;
    if (ev.ok && !check(cand, ev, opts, &k2).empty() && k2 == kind) cur = std::move(cand);
  }
  if (steps) *steps = tried;
  return cur;
}

} // namespace pto::diff
