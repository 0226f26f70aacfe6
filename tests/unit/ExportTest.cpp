// The C++ export (export/CppExport.h) and the block decoder under it (asm/mc/ImageCode.h): blocks
// of a linked sample, normalized scalar operations, names and addresses taken from the image,
// determinism, and located errors for what pto-isa C++ cannot express.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/mc/BlockAsm.h"
#include "asm/mc/ImageCode.h"
#include "asm/parse/Parser.h"
#include "export/CppExport.h"
#include "link/Linker.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace pto;
namespace code = pto::obj::code;

namespace {

using test::assembleFile;
using test::linkOne;

obj::Image sample(const std::string& rel) {
  return linkOne(assembleFile(std::string(PTO_SOURCE_DIR) + "/samples/" + rel));
}

obj::Image fromBlockText(const std::string& text) {
  as::SourceFile src("k.s", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto o = as::assembleBlockText(src, diags);
  EXPECT_TRUE(o) << err.str();
  return linkOne(*o);
}

std::string cpp(const obj::Image& img) {
  auto r = cppexport::exportCpp(img);
  if (auto* e = std::get_if<cppexport::ExportError>(&r)) {
    ADD_FAILURE() << e->message;
    return "";
  }
  return std::get<std::string>(r);
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST(ExportCode, VaddDecodesIntoTheAbiBlocks) {
  obj::Image img = sample("vadd/vadd.pto");
  auto r = code::decodeFunction(img, 0);
  ASSERT_TRUE(std::holds_alternative<code::FunctionCode>(r))
      << std::get<code::CodeError>(r).message;
  const code::FunctionCode& fc = std::get<code::FunctionCode>(r);
  std::vector<isa::OpId> ops;
  unsigned sets = 0, conds = 0, directs = 0;
  const uint64_t end = img.functions[0].textOffset + img.functions[0].textSize;
  for (const code::Block& b : fc.blocks) {
    if (b.kind == code::BlockKind::Tile) ops.push_back(b.tile.op);
    if (b.kind == code::BlockKind::Control && b.control.ctl == isa::enc::ExtCtl::SET_FLAG) ++sets;
    if (b.transfer == code::Transfer::Cond || b.transfer == code::Transfer::Direct) {
      EXPECT_TRUE(fc.blockAt(b.target, end)) << "branch to a non-block";
      (b.transfer == code::Transfer::Cond ? conds : directs) += 1;
    }
  }
  EXPECT_EQ(ops, (std::vector<isa::OpId>{isa::OpId::TLOAD, isa::OpId::TLOAD, isa::OpId::TADD,
                                         isa::OpId::TSTORE}));
  EXPECT_GE(sets, 4u);
  EXPECT_EQ(conds, 1u);   // the loop exit
  EXPECT_EQ(directs, 1u); // the back edge
  // The TADD block names its operands destination first: %c, %a, %b.
  for (const code::Block& b : fc.blocks)
    if (b.kind == code::BlockKind::Tile && b.tile.op == isa::OpId::TADD) {
      ASSERT_EQ(b.tile.tiles.size(), 3u);
      EXPECT_EQ(img.functions[0].tiles[b.tile.tiles[0]].name, "c");
      EXPECT_EQ(b.tile.dim[0].imm, 64u);
      EXPECT_TRUE(b.tile.dim[0].isConstant());
    }
}

TEST(ExportCode, ScalarFormsNormalize) {
  obj::Image img =
      fromBlockText(".arch a2a3\n.function @k entry\n"
                    "BSTART.STD FALL\naddi zero, 5, ->a0\nsetc.ge a0, a1\nsdi a0, [sp, 8]\n"
                    "hl.lis -7, ->a2\nsub a0, a1.neg, ->a3\n");
  auto r = code::decodeFunction(img, 0);
  ASSERT_TRUE(std::holds_alternative<code::FunctionCode>(r))
      << std::get<code::CodeError>(r).message;
  const auto& b = std::get<code::FunctionCode>(r).blocks.at(0);
  ASSERT_EQ(b.scalars.size(), 5u);
  const code::ScalarOp& addi = b.scalars[0].op;
  EXPECT_EQ(addi.kind, code::ScalarKind::Alu);
  EXPECT_EQ(addi.op, code::AluOp::Add);
  EXPECT_TRUE(addi.useImm);
  EXPECT_EQ(addi.imm, 5);
  EXPECT_EQ(b.scalars[1].op.kind, code::ScalarKind::Setc);
  EXPECT_EQ(b.scalars[1].op.op, code::AluOp::CmpGe);
  const code::ScalarOp& st = b.scalars[2].op; // sdi names the value first, then the base
  EXPECT_EQ(st.kind, code::ScalarKind::Store);
  EXPECT_EQ(st.rs1, code::kSpReg);
  EXPECT_EQ(st.rs3, code::kA0Reg);
  EXPECT_EQ(st.imm, 8);
  EXPECT_EQ(b.scalars[3].op.op, code::AluOp::Li);
  EXPECT_EQ(b.scalars[3].op.imm, -7);
  EXPECT_EQ(b.scalars[4].op.rtype, code::RType::NegOrNot);
}

TEST(ExportCpp, SameImageSameText) {
  obj::Image img = sample("vadd-tiled/vadd_tiled.pto");
  std::string a = cpp(img), b = cpp(img);
  EXPECT_EQ(a, b);
  auto bytes = obj::writeImage(img);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes));
  const auto& v = std::get<std::vector<uint8_t>>(bytes);
  auto back = obj::readImage(v.data(), v.size());
  ASSERT_TRUE(std::holds_alternative<obj::Image>(back));
  EXPECT_EQ(cpp(std::get<obj::Image>(back)), a);
}

TEST(ExportCpp, AddressesAndNamesComeFromTheImage) {
  obj::Image img = sample("vadd/vadd.pto");
  std::string before = cpp(img);
  EXPECT_TRUE(contains(before, "TASSIGN(a, 0x0);")) << before;
  EXPECT_TRUE(contains(before, "TADD(c, a, b);"));
  img.functions[0].tiles[0].placement = 0x8000; // %a elsewhere, named like a register
  img.functions[0].tiles[0].name = "a0";
  img.functions[0].tiles[1].name = "c"; // %b takes %c's name first
  std::string after = cpp(img);
  EXPECT_TRUE(contains(after, "TASSIGN(tile0, 0x8000);")) << after;
  EXPECT_TRUE(contains(after, "TASSIGN(c, 0x1000);"));
  EXPECT_TRUE(contains(after, "TADD(c_1, tile0, c);"));
}

TEST(ExportCpp, SeedOpsTakeTheirAttributes) {
  std::string cvt = cpp(sample("tcvt/tcvt.pto"));
  EXPECT_TRUE(contains(cvt, "TCVT(i3, a, RoundMode::CAST_FLOOR, SaturationMode::ON);")) << cvt;
  std::string sq = cpp(sample("tsqrt/tsqrt.pto"));
  EXPECT_TRUE(contains(sq, "TSQRT<SqrtAlgorithm::DEFAULT>(b, a);")) << sq;
  std::string ax = cpp(sample("taxpy/taxpy.pto"));
  EXPECT_TRUE(contains(ax, "TAXPY(dw, hx, pto_export::bits<half>(")) << ax;
  std::string dq = cpp(sample("tdequant/tdequant.pto"));
  EXPECT_TRUE(contains(dq, "TDEQUANT(d, src, sc, of);")) << dq;
}

TEST(ExportCpp, UnexpressibleOpIsALocatedError) {
  obj::Image img = fromBlockText(
      ".arch a5\n.function @rnd entry kernel=vector\n"
      ".tile T#1 %r vec 16x16xi32 addr=0x0\n.loc rnd.pto:4:3\n"
      "BSTART.EXT TRANDOM, S32\nB.DIM zero, 16, ->LB0\nB.IOT T#1, mask=1111, last\nBSTOP\n");
  auto r = cppexport::exportCpp(img);
  ASSERT_TRUE(std::holds_alternative<cppexport::ExportError>(r));
  const std::string& msg = std::get<cppexport::ExportError>(r).message;
  EXPECT_TRUE(contains(msg, "rnd.pto:4:3")) << msg;
  EXPECT_TRUE(contains(msg, "@rnd")) << msg;
  EXPECT_TRUE(contains(msg, "pto.trandom")) << msg;
}

// Found by fuzz-image: a tile block with fewer tile operands than its op needs (an edited image)
// is an export error naming the missing operand, not a read past the operand list.
TEST(ExportCpp, MissingTileOperandIsAnError) {
  obj::Image img =
      fromBlockText(".arch a2a3\n.function @k entry\n.tile T#1 %c vec 16x16xf32 addr=0x0\n"
                    ".loc k.pto:7:3\nBSTART.VEC TADD, FP32\nB.DIM zero, 16, ->LB0\n"
                    "B.IOT T#1, mask=1111, last\nBSTOP\n");
  auto r = cppexport::exportCpp(img);
  ASSERT_TRUE(std::holds_alternative<cppexport::ExportError>(r));
  const std::string& msg = std::get<cppexport::ExportError>(r).message;
  EXPECT_TRUE(contains(msg, "k.pto:7:3")) << msg;
  EXPECT_TRUE(contains(msg, "tile operand")) << msg;
}

TEST(ExportCpp, PathDependentStackAccessIsAnError) {
  // a0 is sp + 8 on one path and a GM pointer (the argument) on the other: the store through it
  // can be neither a frame access nor a GM access.
  obj::Image img = fromBlockText(".arch a2a3\n.function @k entry\n.param %p ptr i64\n"
                                 "BSTART COND, pc+16\nsetc.eq a1, zero\n"
                                 "BSTART.STD FALL\naddi sp, 8, ->a0\n"
                                 "BSTART.STD FALL\nsdi a1, [a0, 0]\n");
  auto r = cppexport::exportCpp(img);
  ASSERT_TRUE(std::holds_alternative<cppexport::ExportError>(r)) << std::get<std::string>(r);
  EXPECT_TRUE(contains(std::get<cppexport::ExportError>(r).message, "addresses the stack or GM"));
}

TEST(ExportCpp, HostLauncherListsEveryKernel) {
  auto r = cppexport::exportCppHost(sample("taxpy/taxpy.pto"));
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  const std::string& host = std::get<std::string>(r);
  EXPECT_TRUE(contains(host, "void pto_launch_axpy(uint32_t blocks, void* stream, void* x32"))
      << host;
  EXPECT_TRUE(contains(host, "{\"a16\", false, \"<f2\", 2, 'h', 0, {}}")) << host;
  EXPECT_TRUE(contains(host, "aclrtMemcpy("));
}
