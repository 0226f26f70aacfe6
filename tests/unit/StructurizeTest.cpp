// The cf-dialect blocks of a function body as the structured ops the front end rebuilds them
// into (asm/parse/Structurize.cpp): which op each shape becomes, what its results are, and which
// shapes are refused.
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace pto;

namespace {

using Parsed = test::ParsedText;

Parsed parse(const std::string& body, const std::string& signature = "(%x: i32) -> i32") {
  // @f is a helper (an entry function returns nothing), the module's entry another function.
  return test::parseText("module {\n  func.func private @f" + signature + " {\n" + body +
                             "\n  }\n  func.func @main() attributes {pto.entry} {\n"
                             "    return\n  }\n}\n",
                         isa::Arch::A2A3, true, "cf.pto");
}

/// The kinds of the top-level ops of the function body.
std::vector<ir::OpKind> topKinds(const Parsed& p) {
  std::vector<ir::OpKind> kinds;
  for (const auto& op : p.module->functions.at(0)->body.ops)
    kinds.push_back(op->kind);
  return kinds;
}

const ir::Op& topOp(const Parsed& p, ir::OpKind kind) {
  for (const auto& op : p.module->functions.at(0)->body.ops)
    if (op->kind == kind) return *op;
  throw std::runtime_error("no such op");
}

} // namespace

TEST(Structurize, DiamondBecomesIfWhoseResultsAreTheJoinArguments) {
  Parsed p = parse(R"(    %z = arith.constant 0 : i32
    %neg = arith.cmpi slt, %x, %z : i32
    cf.cond_br %neg, ^a, ^b
  ^a:
    cf.br ^join(%z : i32)
  ^b:
    cf.br ^join(%x : i32)
  ^join(%r: i32):
    return %r : i32)");
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  using K = ir::OpKind;
  EXPECT_EQ(topKinds(p), (std::vector<K>{K::Constant, K::Arith, K::If, K::Return}));
  const ir::Op& ifOp = topOp(p, K::If);
  ASSERT_EQ(ifOp.results.size(), 1u);
  // The join block's argument is the scf.if's result, which the return passes on.
  EXPECT_EQ(topOp(p, K::Return).operands, ifOp.results);
  EXPECT_EQ(p.module->functions[0]->value(ifOp.results[0]).name, "r");
}

TEST(Structurize, TwoReturnsMeetInOneReturn) {
  Parsed p = parse(R"(    %c = arith.constant true
    cf.cond_br %c, ^a, ^b
  ^a:
    %one = arith.constant 1 : i32
    return %one : i32
  ^b:
    return %x : i32)");
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  using K = ir::OpKind;
  EXPECT_EQ(topKinds(p), (std::vector<K>{K::Constant, K::If, K::Return}));
  EXPECT_EQ(topOp(p, K::If).results.size(), 1u);
}

TEST(Structurize, LoopBecomesWhileCarryingTheHeadsValuesToItsExit) {
  Parsed p = parse(R"(    %c1 = arith.constant 1 : i32
    cf.br ^head(%x : i32)
  ^head(%k: i32):
    %k2 = arith.subi %k, %c1 : i32
    %z = arith.constant 0 : i32
    %more = arith.cmpi sgt, %k2, %z : i32
    cf.cond_br %more, ^head(%k2 : i32), ^done
  ^done:
    return %k2 : i32)");
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  using K = ir::OpKind;
  EXPECT_EQ(topKinds(p), (std::vector<K>{K::Constant, K::While, K::Return}));
  const ir::Op& w = topOp(p, K::While);
  // scf.condition passes %k2 (used by ^done) and the head's next argument.
  const ir::Op& cond = *w.regions[0].ops.back();
  EXPECT_EQ(cond.kind, K::Condition);
  EXPECT_EQ(cond.operands.size(), 3u);
  EXPECT_EQ(w.results.size(), 2u);
  EXPECT_EQ(topOp(p, K::Return).operands[0], w.results[0]);
}

TEST(Structurize, RefusesTwoExitsAndUnreachableExits) {
  Parsed twoExits = parse(R"(    %z = arith.constant 0 : i32
    cf.br ^head(%x : i32)
  ^head(%k: i32):
    %stop = arith.cmpi eq, %k, %z : i32
    cf.cond_br %stop, ^out, ^body
  ^body:
    %neg = arith.cmpi slt, %k, %z : i32
    cf.cond_br %neg, ^out, ^head(%z : i32)
  ^out:
    return %k : i32)");
  EXPECT_NE(twoExits.diagnostics.find("is left from more than one place"), std::string::npos)
      << twoExits.diagnostics;
  Parsed spin = parse(R"(    cf.br ^spin
  ^spin:
    cf.br ^spin)");
  EXPECT_NE(spin.diagnostics.find("never reaches a return"), std::string::npos) << spin.diagnostics;
}
