#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Encoding.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace pto;
namespace enc = isa::enc;

namespace {

std::optional<obj::ObjectFile> lower(const std::string& text, isa::Arch arch,
                                     std::string* diagnostics = nullptr) {
  as::SourceFile src("t.pto", text);
  std::ostringstream out;
  as::DiagEngine diags(src, out);
  auto m = as::parseModule(src, diags, arch);
  std::optional<obj::ObjectFile> o;
  if (m && diags.errors() == 0) {
    as::verifyModule(*m, arch, diags);
    if (diags.errors() == 0) o = as::lowerModule(*m, arch, diags);
  }
  diags.flush();
  if (diagnostics) *diagnostics = out.str();
  return o;
}

std::vector<enc::Inst> decodeAll(const obj::ObjectFile& o) {
  std::vector<enc::Inst> out;
  size_t pc = 0;
  while (pc < o.text.size()) {
    size_t n = 0;
    auto d = enc::decodeBytes(std::span(o.text).subspan(pc), n, {.extensions = true});
    EXPECT_TRUE(d.ok()) << "undecodable word at " << pc << ": "
                        << (d.ok() ? "" : d.error().message);
    if (!d) break;
    out.push_back(*d);
    pc += n;
  }
  return out;
}

std::string tileType(isa::DType t) {
  unsigned bits = isa::bitWidth(t);
  unsigned cols = bits >= 8 ? 256 / bits : 64; // one 32-byte row multiple
  return "!pto.tile_buf<vec, 16x" + std::to_string(cols) + "x" + std::string(isa::spelling(t)) +
         ">";
}

} // namespace

// For every elementwise vector op with a plain "all tiles share the dtype" rule, and every
// dtype the arch accepts, the lowered block starts with the op's 0.58.3 (or extension) start
// word for that dtype, binds the tiles destination first, and decodes back.
TEST(Lower, EveryElementwiseOpAndDTypeEncodesItsStartWord) {
  int checked = 0;
  for (isa::Arch arch : {isa::Arch::A2A3, isa::Arch::A5}) {
    for (const isa::OpInfo& op : isa::allOps()) {
      if (op.rule != isa::TypeRule::SameAll || !(op.flags & isa::kSameValid) || !op.supports(arch))
        continue;
      const enc::TileOpInfo* eop = enc::tileOpFor(op.id);
      ASSERT_NE(eop, nullptr) << op.mnemonic;
      for (unsigned d = 0; d < isa::kNumDTypes; ++d) {
        isa::DType dt = static_cast<isa::DType>(d);
        if (!op.types(arch).contains(dt)) continue;
        std::string ty = tileType(dt);
        std::string ins, insTypes;
        int tiles = 0;
        for (const isa::Role& r : op.roles) {
          if (r.isOutput || r.optional) continue;
          if (!ins.empty()) ins += ", ", insTypes += ", ";
          if (r.kind == isa::RoleKind::Tile) {
            ins += "%t" + std::to_string(tiles++);
            insTypes += ty;
          } else {
            ins += "%s";
            insTypes += std::string(isa::spelling(dt));
          }
        }
        std::string text = "pto." + std::string(op.mnemonic) + " ins(" + ins + " : " + insTypes +
                           ") outs(%d : " + ty + ")\n";
        std::string diags;
        auto o = lower(text, arch, &diags);
        ASSERT_TRUE(o.has_value()) << text << diags;
        auto words = decodeAll(*o);
        auto start = std::find_if(words.begin(), words.end(),
                                  [](const enc::Inst& w) { return enc::tileOpOf(w).has_value(); });
        ASSERT_NE(start, words.end()) << text;
        EXPECT_EQ(enc::tileOpOf(*start), eop->op) << text;
        EXPECT_EQ(enc::dataTypeOf(*start), enc::dataTypeCode(dt)) << text;
        EXPECT_EQ(o->usesExtensions, eop->family == enc::TileFamily::EXT) << text;
        // The first B.IOT names the destination: %d is declared after the input tiles.
        auto iot = std::find_if(start, words.end(),
                                [](const enc::Inst& w) { return w.get("SrcTile0").has_value(); });
        ASSERT_NE(iot, words.end());
        EXPECT_EQ(iot->get("SrcTile0"), tiles) << text;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(Lower, TcvtCarriesDestinationTypeAndRoundMode) {
  auto o = lower("%d = pto.tcvt %s {rmode = #pto<round_mode FLOOR>} : !pto.tile<16x16xf32> -> "
                 "!pto.tile<16x16xf16>\n",
                 isa::Arch::A2A3);
  ASSERT_TRUE(o);
  auto words = decodeAll(*o);
  auto datr = std::find_if(words.begin(), words.end(),
                           [](const enc::Inst& w) { return w.form == enc::FormId::B_DATR; });
  ASSERT_NE(datr, words.end());
  EXPECT_EQ(datr->get("DataType"), enc::dataTypeCode(isa::DType::F16));
  EXPECT_EQ(datr->get("RMode"), enc::rmodeCode(isa::RoundMode::CAST_FLOOR));
}

TEST(Lower, ManyLiveScalarsSpillToTheFrame) {
  // 30 values live at once force spills: the frame grows and the code still decodes.
  std::string text = "module {\n func.func @k(%p: !pto.ptr<i64>, %n: index) {\n";
  for (int i = 0; i < 30; ++i)
    text += "  %v" + std::to_string(i) + " = arith.muli %n, %n : index\n";
  text += "  %acc0 = arith.addi %v0, %v1 : index\n";
  for (int i = 2; i < 30; ++i)
    text += "  %acc" + std::to_string(i - 1) + " = arith.addi %acc" + std::to_string(i - 2) +
            ", %v" + std::to_string(i) + " : index\n";
  text += "  %r = arith.index_cast %acc28 : index to i64\n  %z = arith.constant 0 : index\n"
          "  pto.store_scalar %r, %p[%z] : !pto.ptr<i64>, i64\n  return\n }\n}\n";
  std::string diags;
  auto o = lower(text, isa::Arch::A2A3, &diags);
  ASSERT_TRUE(o) << diags;
  EXPECT_GT(o->functions[0].frameSize, 0u);
  decodeAll(*o);
}

TEST(Lower, LoopsBecomeCondAndDirectBlocks) {
  auto o = lower(R"(kernel @k(%x: !pto.tensor_view<64x64xf32>) {
  tile %a : !pto.tile<f32, 16, 64>
  scf.for %i = 0 to 64 step 16 {
    tload %a, %x[%i, 0]
    tstore %x[%i, 0], %a
  }
}
)",
                 isa::Arch::A2A3);
  ASSERT_TRUE(o);
  auto words = decodeAll(*o);
  int conds = 0, directs = 0;
  for (const auto& w : words) {
    conds += w.form == enc::FormId::BSTART_COND;
    directs += w.form == enc::FormId::BSTART_DIRECT;
  }
  EXPECT_EQ(conds, 1);
  EXPECT_EQ(directs, 1);
  ASSERT_EQ(o->functions[0].params.size(), 1u);
  EXPECT_EQ(o->functions[0].params[0].kind, obj::ParamKind::TensorView);
}

TEST(Lower, UnsupportedConstructsAreLocatedErrors) {
  std::string diags;
  auto o =
      lower("module {\n func.func @k(%a: f32) {\n  %b = arith.remf %a, %a : f32\n  return\n }\n}\n",
            isa::Arch::A2A3, &diags);
  EXPECT_FALSE(o);
  EXPECT_NE(diags.find("t.pto:3:"), std::string::npos) << diags;
  EXPECT_NE(diags.find("not supported by the code generator"), std::string::npos) << diags;
}

// A dynamic valid shape's register is computed before the tile block: scalar code inside the
// block would start a new block and leave the tile op without its operands (found by the
// linker's sync analysis on the softmax corpus kernel).
TEST(Lower, DynamicValidShapeRegistersComeBeforeTheTileBlock) {
  auto o = lower(R"(module {
  func.func @k() {
    %c16 = arith.constant 16 : index
    %t = pto.alloc_tile valid_col = %c16 : !pto.tile_buf<vec, 16x64xf32, valid=16x?>
    %u = pto.alloc_tile valid_col = %c16 : !pto.tile_buf<vec, 16x64xf32, valid=16x?>
    pto.texp ins(%t : !pto.tile_buf<vec, 16x64xf32, valid=16x?>) outs(%u : !pto.tile_buf<vec, 16x64xf32, valid=16x?>)
    return
  }
})",
                 isa::Arch::A2A3);
  ASSERT_TRUE(o);
  auto words = decodeAll(*o);
  auto start = std::find_if(words.begin(), words.end(),
                            [](const enc::Inst& w) { return enc::tileOpOf(w).has_value(); });
  ASSERT_NE(start, words.end());
  bool dynamicDim = false;
  for (auto it = start + 1; it != words.end() && it->form != enc::FormId::BSTOP; ++it) {
    EXPECT_FALSE(enc::info(it->form).mnemonic().starts_with("BSTART")) << enc::format(*it);
    if (it->form == enc::FormId::B_DIM_LB0) dynamicDim = it->get("RegSrc") != 0;
  }
  EXPECT_TRUE(dynamicDim);
}
