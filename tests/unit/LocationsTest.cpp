// The reader of MLIR debug locations (asm/parse/Locations.cpp): every form resolves to the
// position and callers its definition gives (docs/language.md, "Debug locations"), aliases in
// any order, and random location trees against a second resolver written from that definition
// over the tree itself.
#include "asm/parse/Locations.h"
#include "asm/parse/Parser.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace pto::test {
namespace {

ParsedText parse(const std::string& text) {
  return parseText(text, std::nullopt, false, "t.pto");
}

/// The resolved places ("file:line:col", callers after) of the first op of function @k.
std::vector<std::string> firstOpPlaces(const ir::Module& m) {
  const ir::Op& op = *m.functions.at(0)->body.ops.at(0);
  return m.placeTexts(op.frontLoc);
}

std::string constantWith(const std::string& loc, const std::string& after = "") {
  return "module {\n  func.func @k() {\n    %c = arith.constant 1 : index " + loc +
         "\n    return\n  }\n}\n" + after;
}

TEST(Locations, EveryFormResolves) {
  struct Case {
    std::string loc, after;
    std::vector<std::string> want;
  } cases[] = {
      {"loc(\"a.py\":3:4)", "", {"a.py:3:4"}},
      {"loc(\"a.py\":3)", "", {"a.py:3"}},
      {"loc(\"a.py\":3:4 to 5:6)", "", {"a.py:3:4"}},
      {"loc(\"a.py\":3:4 to :9)", "", {"a.py:3:4"}},
      {"loc(unknown)", "", {}},
      {"loc(\"name\")", "", {}},
      {"loc(\"name\"(\"b.py\":1:2))", "", {"b.py:1:2"}},
      {"loc(callsite(\"a.py\":1:2 at \"b.py\":3:4))", "", {"a.py:1:2", "b.py:3:4"}},
      {"loc(callsite(callsite(\"a.py\":1:2 at \"b.py\":3:4) at \"c.py\":5:6))",
       "",
       {"a.py:1:2", "b.py:3:4", "c.py:5:6"}},
      {"loc(fused[unknown, \"a.py\":7:8, \"b.py\":1:1])", "", {"a.py:7:8"}},
      {"loc(fused<\"x\"<1>>[\"a.py\":7:8])", "", {"a.py:7:8"}},
      {"loc(#a)", "#a = loc(#b)\n#b = loc(\"d \\\"q\\\".py\":2:3)\n", {"d \"q\".py:2:3"}},
  };
  for (const Case& c : cases) {
    ParsedText p = parse(constantWith(c.loc, c.after));
    ASSERT_TRUE(p.module) << c.loc << "\n" << p.diagnostics;
    EXPECT_EQ(p.diagnostics, "") << c.loc;
    EXPECT_EQ(firstOpPlaces(*p.module), c.want) << c.loc;
  }
}

// A random location tree, printed as MLIR prints it and resolved by the definition directly.
struct Tree {
  std::mt19937 rng{20261203};
  std::vector<std::string> aliasTexts; // #l<i> = loc(<text>)
  std::vector<std::vector<std::string>> aliasPlaces;

  std::vector<std::string> gen(unsigned depth, std::string& text) {
    unsigned kind = rng() % (depth > 3 ? 2 : 7);
    if (kind == 0) {
      unsigned line = rng() % 1000 + 1, col = rng() % 80 + 1;
      std::string f = "f" + std::to_string(rng() % 4) + ".py";
      text = "\"" + f + "\":" + std::to_string(line) + ":" + std::to_string(col);
      return {f + ":" + std::to_string(line) + ":" + std::to_string(col)};
    }
    if (kind == 1) {
      if (aliasTexts.empty() || rng() % 2) {
        text = "unknown";
        return {};
      }
      size_t a = rng() % aliasTexts.size();
      text = "#l" + std::to_string(a);
      return aliasPlaces[a];
    }
    if (kind == 2) {
      std::string child;
      auto r = gen(depth + 1, child);
      text = "\"n\"(" + child + ")";
      return r;
    }
    if (kind == 3 || kind == 4) {
      std::string callee, caller;
      auto r = gen(depth + 1, callee);
      auto c = gen(depth + 1, caller);
      text = "callsite(" + callee + " at " + caller + ")";
      // The callee's place and callers, then the caller's chain; with no callee place the
      // first caller is shown first.
      r.insert(r.end(), c.begin(), c.end());
      return r;
    }
    std::vector<std::string> first;
    text = "fused[";
    unsigned n = rng() % 3 + 1;
    for (unsigned i = 0; i < n; ++i) {
      std::string part;
      auto r = gen(depth + 1, part);
      if (first.empty()) first = r;
      text += (i ? ", " : "") + part;
    }
    text += "]";
    return first;
  }
};

TEST(Locations, RandomTreesMatchTheDefinition) {
  Tree t;
  std::string module = "module {\n  func.func @k() {\n";
  std::vector<std::vector<std::string>> want;
  for (unsigned i = 0; i < 40; ++i) { // aliases, each may use the ones before it
    std::string text;
    t.aliasPlaces.push_back(t.gen(1, text));
    t.aliasTexts.push_back(text);
  }
  for (unsigned i = 0; i < 400; ++i) {
    std::string text;
    want.push_back(t.gen(0, text));
    module += "    %c" + std::to_string(i) + " = arith.constant 1 : index loc(" + text + ")\n";
  }
  module += "    return\n  }\n}\n";
  for (size_t a = 0; a < t.aliasTexts.size(); ++a)
    module += "#l" + std::to_string(a) + " = loc(" + t.aliasTexts[a] + ")\n";
  ParsedText p = parse(module);
  ASSERT_TRUE(p.module) << p.diagnostics;
  EXPECT_EQ(p.diagnostics, "");
  const auto& ops = p.module->functions.at(0)->body.ops;
  ASSERT_GE(ops.size(), want.size());
  size_t compared = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<std::string> got = p.module->placeTexts(ops[i]->frontLoc);
    EXPECT_EQ(got, want[i]) << "op " << i;
    ++compared;
  }
  EXPECT_EQ(compared, 400u);
}

} // namespace
} // namespace pto::test
