#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace pto;

namespace {

struct Parsed {
  std::unique_ptr<ir::Module> module;
  std::string diagnostics;
  unsigned errors = 0;
};

Parsed parse(const std::string& text, std::optional<isa::Arch> arch = std::nullopt,
             bool verify = true) {
  as::SourceFile src("test.pto", text);
  std::ostringstream out;
  as::DiagEngine diags(src, out);
  Parsed p;
  p.module = as::parseModule(src, diags, arch);
  if (p.module && diags.errors() == 0 && verify)
    as::verifyModule(*p.module, as::resolveArch(*p.module, arch), diags);
  p.diagnostics = out.str();
  p.errors = diags.errors();
  return p;
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
