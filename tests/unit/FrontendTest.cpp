#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace pto;

namespace {

using Parsed = test::ParsedText;

Parsed parse(const std::string& text, std::optional<isa::Arch> arch = std::nullopt,
             bool verify = true) {
  return test::parseText(text, arch, verify);
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST(Frontend, DpsKernelBuildsIR) {
  auto p = parse(R"(
module {
  func.func @k(%a: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %v = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>
    %u = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>
    pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<vec, 16x16xf32>)
    pto.tsqrt ins(%t : !pto.tile_buf<vec, 16x16xf32>) outs(%u : !pto.tile_buf<vec, 16x16xf32>)
    return
  }
})");
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  ASSERT_EQ(p.module->functions.size(), 1u);
  int tileOps = 0;
  ir::walk(p.module->functions[0]->body,
           [&](const ir::Op& op) { tileOps += op.kind == ir::OpKind::TileOp; });
  EXPECT_EQ(tileOps, 2);
}

// An arith.constant's value is read once, by the front end, into Op::constant: the code
// generator, the extent analysis and the reference interpreter read that, never the text.
TEST(Frontend, ConstantsCarryTheirTypedValue) {
  auto p = parse(R"(
func.func @k(%o: !pto.ptr<i64>) {
  %a = arith.constant 0xFFFFFFFFFFFFFFFF : i64
  %b = arith.constant -42 : i32
  %c = arith.constant 9223372036854775807 : i64
  %d = arith.constant -9223372036854775808 : i64
  %e = arith.constant 18446744073709551615 : ui64
  %f = arith.constant 1.5e-3 : f32
  %g = arith.constant 2.5E+2 : f64
  %h = arith.constant 1 : f16
  %i = arith.constant 0x7FC00000 : f32
  %j = arith.constant 040 : index
  %k = arith.constant -0x10 : i32
  %l = arith.constant true
  %m = arith.constant 3.0e38 : bf16
  %n = arith.constant 0.1 : f32
  %q = arith.constant 1.0e0 : f8E4M3
  return
})",
                 std::nullopt, false);
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  std::map<std::string, ir::ConstantValue> got;
  const ir::Function& fn = *p.module->functions[0];
  ir::walk(fn.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Constant) got[fn.value(op.results[0]).name] = op.constant;
  });
  using K = ir::ConstantValue::Kind;
  const std::pair<std::string, ir::ConstantValue> want[] = {
      {"a", {K::Int, ~uint64_t{0}}},
      {"b", {K::Int, static_cast<uint64_t>(int64_t{-42})}}, // sign-extended to 64 bits
      {"c", {K::Int, 0x7FFFFFFFFFFFFFFF}},
      {"d", {K::Int, 0x8000000000000000}},
      {"e", {K::Int, ~uint64_t{0}}},
      {"f", {K::Float, std::bit_cast<uint32_t>(1.5e-3f)}},
      {"g", {K::Float, std::bit_cast<uint64_t>(250.0)}},
      {"h", {K::Float, 0x3C00}},
      {"i", {K::Int, 0x7FC00000}}, // a pattern, as written
      {"j", {K::Int, 40}},         // decimal, never octal
      {"k", {K::Int, static_cast<uint64_t>(int64_t{-16})}},
      {"l", {K::Bool, 1}},
      {"m", {K::Float, 0x7F62}}, // 3.0e38 rounded to bf16's nearest (even)
      {"n", {K::Float, 0x3DCCCCCD}},
      {"q", {K::None, 0}}, // no IEEE format: the readers report it
  };
  ASSERT_EQ(got.size(), std::size(want));
  for (const auto& [name, v] : want) {
    EXPECT_EQ(got[name].kind, v.kind) << "%" << name;
    EXPECT_EQ(got[name].bits, v.bits) << "%" << name << std::hex << " 0x" << got[name].bits;
  }
  EXPECT_EQ(got["d"].integer(), INT64_MIN);
  EXPECT_EQ(got["l"].integer(), 1);
  EXPECT_FALSE(got["f"].integer());
}

TEST(Frontend, AssemblyFormFragmentDeclaresTilesByUse) {
  auto p = parse("tadd %d, %a, %b : !pto.tile<f32, 16, 16>\n");
  ASSERT_EQ(p.errors, 0u) << p.diagnostics;
  const ir::Function& f = *p.module->functions[0];
  EXPECT_TRUE(f.isFragment);
  int allocs = 0;
  ir::walk(f.body, [&](const ir::Op& op) { allocs += op.kind == ir::OpKind::AllocTile; });
  EXPECT_EQ(allocs, 3);
}

TEST(Frontend, VerifierRejectsWrongDType) {
  auto p = parse("%d = pto.tsqrt %s : !pto.tile<16x16xbf16> -> !pto.tile<16x16xbf16>\n");
  EXPECT_GE(p.errors, 1u);
  EXPECT_NE(p.diagnostics.find("does not support bf16"), std::string::npos) << p.diagnostics;
}

TEST(Frontend, ArchFlagOverridesModuleAttribute) {
  const char* text = R"(module attributes {pto.target_arch = "a5"} {
  func.func @k() {
    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xbf16>
    %u = pto.alloc_tile : !pto.tile_buf<vec, 16x16xbf16>
    pto.tadd ins(%t, %t : !pto.tile_buf<vec, 16x16xbf16>, !pto.tile_buf<vec, 16x16xbf16>) outs(%u : !pto.tile_buf<vec, 16x16xbf16>)
    return
  }
})";
  EXPECT_EQ(parse(text).errors, 0u);
  EXPECT_GE(parse(text, isa::Arch::A2A3).errors, 1u);
}

TEST(Frontend, SyntaxErrorIsLocated) {
  auto p = parse("module {\n  func.func @k( {\n}\n");
  EXPECT_GE(p.errors, 1u);
  EXPECT_NE(p.diagnostics.find("test.pto:2:"), std::string::npos) << p.diagnostics;
}

TEST(Frontend, CorpusKernelsVerifyAndRoundTrip) {
  std::filesystem::path dir = std::filesystem::path(PTO_SHARED_DIR) / "corpus" / "pto-kernels";
  PTO_REQUIRE_SHARED(std::filesystem::exists(dir));
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".pto") continue;
    ++count;
    auto p = parse(readFile(entry.path()));
    ASSERT_EQ(p.errors, 0u) << entry.path() << "\n" << p.diagnostics;
    std::string once = ir::print(*p.module);
    auto again = parse(once);
    ASSERT_EQ(again.errors, 0u) << once << again.diagnostics;
    EXPECT_EQ(ir::print(*again.module), once) << entry.path();
  }
  EXPECT_GE(count, 24); // every corpus kernel verifies, the v_col=? subsets of stage3_split too
}
