// pto-objdump listings and the block assembler: -d output assembles back to the same object.
#include "asm/mc/Disasm.h"
#include "asm/mc/BlockAsm.h"
#include "isa/Encoding.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <sstream>

using namespace pto;
namespace enc = isa::enc;

namespace {

void emit(obj::ObjectFile& o, const enc::Inst& in) {
  auto e = enc::encode(in);
  ASSERT_TRUE(e.ok()) << e.error().message;
  for (unsigned i = 0; i < e->bits / 8; ++i)
    o.text.push_back(static_cast<uint8_t>(e->value >> (8 * i)));
}
void emitText(obj::ObjectFile& o, std::string_view text) {
  auto in = enc::parse(text, {.extensions = true});
  ASSERT_TRUE(in.ok()) << text << ": " << in.error().message;
  emit(o, *in);
}
enc::Inst start(std::string_view op, std::string_view dt) {
  const enc::TileOpInfo* t = enc::findTileOp(op);
  EXPECT_NE(t, nullptr) << op;
  return enc::tileStart(t->op, *enc::parseDataType(dt));
}

/// The worked encodings of reference section 1.5, an extension SET_FLAG block and scalar code,
/// in a kernel with params, tiles, an event, relocations and line entries, plus a declaration.
obj::ObjectFile sample() {
  obj::ObjectFile o;
  o.arch = isa::Arch::A5;
  o.usesExtensions = true;
  obj::Function f;
  f.name = "vadd";
  f.flags = obj::kEntry | obj::kKernelVector;
  f.frameSize = 32;
  // TADD FP32
  emit(o, start("TADD", "FP32"));
  emit(o, enc::bDim(0, 0, 16));
  emit(o, enc::bIotDst(0, 1, 0, 1, true));
  emit(o, enc::bstop());
  // TDEQUANT S8 (B.DATR: destination FP32, RNE)
  emit(o, start("TDEQUANT", "S8"));
  emit(o, enc::bDatr({.layout = 0, .dataType = 1, .pad = 0, .cmode = 0, .rmode = 1}));
  emit(o, enc::bDim(0, 0, 16));
  emit(o, enc::bIotDst(1, std::nullopt, 0, 1, true));
  emit(o, enc::bstop());
  // TLOAD U8
  emit(o, start("TLOAD", "U8"));
  emit(o, enc::bDim(0, 0, 64));
  emit(o, enc::bDim(1, 0, 8));
  emit(o, enc::bDim(2, 0, 64));
  emit(o, enc::bIor(0, *enc::parseGpr("a0"), 0, 0));
  emit(o, enc::bIotDst(std::nullopt, std::nullopt, 0, 1, true));
  emit(o, enc::bstop());
  // set_flag MTE2 -> V on a symbolic event (relocated B.DIM), then scalar code.
  emit(o, enc::extControl(enc::ExtCtl::SET_FLAG, isa::Pipe::MTE2, isa::Pipe::V));
  uint64_t eventWord = o.text.size();
  emit(o, enc::bDim(0, 0, 0));
  emit(o, enc::bstop());
  emit(o, *enc::make(enc::FormId::S_ADDI, {{"RegDst", 3}, {"SrcL", 2}, {"uimm12", 7}}));
  for (const enc::Inst& in : enc::materialize64(2, 0x123456789abcull, 3))
    emit(o, in);
  emitText(o, "C.BSTOP");
  emitText(o, "L.BSTOP");
  f.textOffset = 0;
  f.textSize = o.text.size();
  f.params.push_back({"x", obj::ParamKind::Pointer, isa::DType::F32, {}, "", false});
  f.params.push_back({"v", obj::ParamKind::TensorView, isa::DType::F16, {64, -1}, "", false});
  f.params.push_back({"n", obj::ParamKind::Index, isa::DType::I64, {}, "", false});
  f.params.push_back({"alpha", obj::ParamKind::Scalar, isa::DType::F32, {}, "", false});
  obj::TileDesc t;
  t.name = "a";
  t.rows = 16;
  t.cols = 64;
  t.validRows = 16;
  t.validCols = obj::kDynamicDim;
  f.tiles.push_back(t);
  t.name = "b";
  t.validCols = 64;
  t.placement = 0x2000;
  t.blayout = isa::BLayout::ColMajor;
  t.slayout = isa::SLayout::RowMajor;
  t.fractal = 1024;
  t.pad = isa::PadValue::Zero;
  t.compact = isa::CompactMode::RowPlusOne;
  f.tiles.push_back(t);
  t = obj::TileDesc{};
  t.name = "b view";
  t.loc = isa::Loc::Mat;
  t.dtype = isa::DType::I8;
  t.rows = 8;
  t.cols = 32;
  t.validRows = 8;
  t.validCols = 32;
  t.aliasOf = 1;
  t.aliasOffset = 256;
  f.tiles.push_back(t);
  o.functions.push_back(f);
  obj::Function helper;
  helper.name = "helper";
  helper.flags = obj::kDeclaration | obj::kPrivate;
  o.functions.push_back(helper);
  obj::Function empty;
  empty.name = "empty";
  empty.flags = obj::kKernelCube | (1u << 9);
  empty.textOffset = o.text.size();
  o.functions.push_back(empty);
  o.events.push_back({0, "e0", isa::Pipe::MTE2, isa::Pipe::V});
  o.events.push_back({0, "e1", isa::Pipe::V, isa::Pipe::MTE3});
  o.relocs.push_back(test::relocAt(8, obj::RelocType::Tile, 0, 0, ""));
  o.relocs.push_back(test::relocAt(eventWord, obj::RelocType::Event, 0, 1, ""));
  o.relocs.push_back(test::relocAt(0, obj::RelocType::Call, 0, 0, "external_fn"));
  o.lines.push_back(test::lineAt(0, "vadd.pto", 3, 5));
  o.lines.push_back(test::lineAt(16, "vadd.pto", 4, 5));
  o.lines.push_back(test::lineAt(16, "dir with space/x.pto", 1, 1));
  o.lines.push_back(test::lineAt(o.text.size(), "vadd.pto", 9, 1));
  return o;
}

std::string listing(const obj::ObjectFile& o) {
  as::DisasmOptions opts;
  opts.disassemble = true;
  return as::blockListing(o, opts);
}

struct Assembled {
  std::optional<obj::ObjectFile> obj;
  std::string diags;
};

Assembled assemble(const std::string& text, const std::string& name = "t.s") {
  as::SourceFile src(name, text);
  std::ostringstream out;
  Assembled r;
  {
    as::DiagEngine diags(src, out);
    r.obj = as::assembleBlockText(src, diags);
  }
  r.diags = out.str();
  return r;
}

std::string stripColumns(const std::string& text) {
  static const std::regex addr(R"(^ *[0-9a-f]+:\t[0-9a-f ]+\t)", std::regex::multiline);
  return std::regex_replace(text, addr, "");
}

} // namespace

TEST(Disasm, WorkedEncodings) {
  std::string l = listing(sample());
  for (const char* want : {"       0:\t08019181\tBSTART.VEC TADD, FP32\t; R_PTO_CALL external_fn\n",
                           "       4:\t01000043\tB.DIM zero, 16, ->LB0\n",
                           "       8:\t0408ce13\tB.IOT T#1, T#2, mask=1111, last, ->T<1>",
                           "      10:\t9eb19181\tBSTART.SFU TDEQUANT, S8\n",
                           "      14:\t00109023\tB.DATR {NORM, FP32, Zero, EQ, RNE, 0, 0}\n",
                           "      1c:\t0018de13\tB.IOT T#2, mask=1111, last, ->T<1>\n",
                           "      24:\td8011181\tBSTART.TLOAD U8\n",
                           "      34:\t00200013\tB.IOR zero, a0, zero, ->zero\n",
                           "      38:\t0008ee13\tB.IOT mask=1111, last, ->T<1>\n",
                           "\tBSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V\n",
                           "\taddi a0, 7, ->a1\n",
                           "\tC.BSTOP\n",
                           "\t0000000f 00000001\tL.BSTOP\n",
                           ".arch a5\n",
                           ".extensions pto-toolchain-ext-v1\n",
                           ".function @vadd entry kernel=vector frame=32\n",
                           ".param %v tensor_view 64x?xf16\n",
                           ".tile T#1 %a vec 16x64xf32 valid=16x?\n",
                           ".tile T#3 %\"b view\" mat 8x32xi8 valid=8x32 view=T#2+256\n",
                           ".event @e1 PIPE_V PIPE_MTE3\n",
                           ".reloc 0x8 tile T#1\n",
                           ".reloc 0x0 call @external_fn\n",
                           ".loc \"dir with space/x.pto\":1:1\n",
                           ".function @helper private declaration\n",
                           "0000000000000000 <vadd>:\n"})
    EXPECT_NE(l.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << l;
  EXPECT_EQ(l.find("warning"), std::string::npos) << l;
}

TEST(Disasm, ListingAssemblesToTheSameObject) {
  obj::ObjectFile o = sample();
  std::string l = listing(o);
  Assembled a = assemble(l);
  ASSERT_TRUE(a.obj) << a.diags << l;
  EXPECT_EQ(a.diags, "");
  EXPECT_EQ(*a.obj, o) << l << "\n---\n" << listing(*a.obj);
  // And through the ELF writer and reader, with the file header line in front.
  auto bytes = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes)) << std::get<std::string>(bytes);
  auto& b = std::get<std::vector<uint8_t>>(bytes);
  auto back = obj::readObject(b.data(), b.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(back)) << std::get<std::string>(back);
  as::DisasmOptions all;
  all.disassemble = all.headers = all.symbols = all.relocs = all.tiles = all.raw = true;
  all.fileName = "k.o";
  std::string full = as::disassemble(std::get<obj::ObjectFile>(back), all, b);
  EXPECT_EQ(full.rfind("k.o:     file format elf64-pto (a5)\n", 0), 0u) << full;
  // The whole -d output of the tool, header line included, assembles too.
  Assembled again = assemble(as::disassemble(std::get<obj::ObjectFile>(back), [] {
    as::DisasmOptions d;
    d.disassemble = true;
    d.fileName = "k.o";
    return d;
  }()));
  ASSERT_TRUE(again.obj) << again.diags;
  EXPECT_EQ(*again.obj, o);
}

TEST(Disasm, ListingWithoutAddressAndHexColumns) {
  obj::ObjectFile o = sample();
  std::string bare = stripColumns(listing(o));
  EXPECT_EQ(bare.find("08019181"), std::string::npos);
  Assembled a = assemble(bare);
  ASSERT_TRUE(a.obj) << a.diags << bare;
  EXPECT_EQ(*a.obj, o);
}

TEST(Disasm, OtherListings) {
  obj::ObjectFile o = sample();
  as::DisasmOptions opts;
  opts.headers = opts.symbols = opts.relocs = opts.tiles = opts.raw = true;
  std::string s = as::disassemble(o, opts);
  for (const char* want :
       {"  1 .text", ".pto.tiles", ".note.pto.isa", "NOTE", "RELA", " g     F .text", "*UND*",
        "external_fn", "R_PTO_TILE        vadd:T#1 (%a)", "R_PTO_EVENT       vadd:@e1",
        "R_PTO_CALL        external_fn", "TILES FOR @vadd (3):", "0x2000", "view of T#2+256",
        "\n08019181\n01000043\n", "\n000e 01234117\n"})
    EXPECT_NE(s.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << s;
}

TEST(Disasm, SourceInterleaved) {
  as::DisasmOptions opts;
  opts.source = true;
  opts.readSource = [](const std::string& f) -> std::optional<std::string> {
    if (f == "vadd.pto")
      return std::string("l1\nl2\n  pto.tadd ins(%a, %b) outs(%c)\n  pto.set_flag\n");
    return std::nullopt;
  };
  obj::ObjectFile o = sample();
  std::string l = as::blockListing(o, opts);
  EXPECT_NE(l.find("; vadd.pto:3:   pto.tadd ins(%a, %b) outs(%c)\n.loc vadd.pto:3:5\n"),
            std::string::npos)
      << l;
  Assembled a = assemble(l);
  ASSERT_TRUE(a.obj) << a.diags;
  EXPECT_EQ(*a.obj, o);
}

TEST(Disasm, UndecodableAndRandomWordsRoundTrip) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    obj::ObjectFile o;
    size_t n = 2 * (rng() % 40);
    for (size_t i = 0; i < n; ++i)
      o.text.push_back(static_cast<uint8_t>(rng()));
    if (round % 3 == 0 && n) o.text.push_back(0x0e); // a truncated 48-bit prefix at the end
    if (round % 5 == 0) o.text.push_back(0x42);      // an odd byte
    obj::Function f;
    f.name = "r";
    f.textSize = o.text.size();
    o.functions.push_back(f);
    std::string l = listing(o);
    Assembled a = assemble(l);
    ASSERT_TRUE(a.obj) << a.diags << l;
    if (a.obj->usesExtensions) o.usesExtensions = true; // extension words declare the note
    EXPECT_EQ(a.obj->text, o.text) << l;
    EXPECT_EQ(*a.obj, o) << l;
  }
}

TEST(Disasm, UndecodableWordIsData) {
  obj::ObjectFile o;
  for (uint8_t b : {0xef, 0xbe, 0xad, 0xde})
    o.text.push_back(b);
  o.functions.push_back({"k", obj::kEntry, 0, 4, 0, {}, {}});
  std::string l = listing(o);
  EXPECT_NE(l.find("       0:\tdeadbeef\t.word 0xdeadbeef\t; 0xDEADBEEF: no PTO ISA 0.58.3 form"),
            std::string::npos)
      << l;
}

/// A function of every kind of block, with an undecodable word in the middle of the COND block.
obj::ObjectFile blocksSample() {
  obj::ObjectFile o;
  o.arch = isa::Arch::A5;
  o.usesExtensions = true;
  emitText(o, "BSTART.STD FALL");            // 0x00 scalar
  emitText(o, "addi zero, 1, ->a3");         // 0x04
  emitText(o, "BSTART COND, pc+24");         // 0x08 scalar, COND -> 0x20
  emitText(o, "setc.ge a4, a3");             // 0x0c
  for (uint8_t b : {0xef, 0xbe, 0xad, 0xde}) // 0x10 undecodable
    o.text.push_back(b);
  emitText(o, "addi zero, 2, ->a3");                     // 0x14 implicit block
  emitText(o, "BSTOP");                                  // 0x18
  emitText(o, "BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V"); // 0x1c control
  emitText(o, "BSTOP");                                  // 0x20
  emit(o, start("TADD", "FP32"));                        // 0x24 tile
  emitText(o, "BSTOP");                                  // 0x28
  emitText(o, "BSTART.CALL pc+0, rt(uimm5=0), ->ra");    // 0x2c call, relocated
  emitText(o, "BSTART DIRECT, pc-48");                   // 0x30 direct -> 0x00
  emitText(o, "BSTART.STD RET");                         // 0x34
  obj::Function f;
  f.name = "k";
  f.flags = obj::kEntry;
  f.textSize = o.text.size();
  o.functions.push_back(f);
  obj::Function ext;
  ext.name = "ext";
  ext.flags = obj::kDeclaration;
  o.functions.push_back(ext);
  o.relocs.push_back(test::relocAt(0x2c, obj::RelocType::Call, 0, 0, "ext"));
  return o;
}

TEST(Disasm, BlockNotesFromTheSharedDecoder) {
  const obj::ObjectFile o = blocksSample();
  ASSERT_EQ(o.text.size(), 0x38u);
  as::DisasmOptions opts;
  opts.blocks = true;
  const std::string l = as::blockListing(o, opts);
  for (const char* want : {
           "; block 0x0..0x8: scalar, falls through\n       0:\t",
           "; block 0x8..0x10: scalar, branches to 0x20 <k+0x20> if its condition holds "
           "(not a block start)\n       8:\t",
           // The bad word is data with the decoder's reason; the listing goes on after it, in a
           // block of its own (no start word).
           "      10:\tdeadbeef\t.word 0xdeadbeef\t; 0xDEADBEEF: no PTO ISA 0.58.3 form",
           "; block 0x14..0x1c: scalar (no start word), falls through\n      14:\t",
           "; block 0x1c..0x24: control SET_FLAG, falls through\n      1c:\t",
           "; block 0x24..0x2c: tile TADD, falls through\n      24:\t",
           "; block 0x2c..0x30: scalar, calls @ext (relocated), then falls through\n      2c:\t",
           "; block 0x30..0x34: scalar, branches to 0x0 <k>\n      30:\t",
           "; block 0x34..0x38: scalar, returns\n      34:\t",
       })
    EXPECT_NE(l.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << l;
  // The notes are comments: the listing assembles to the same object, and without --blocks the
  // listing is the same lines without them.
  Assembled a = assemble(l);
  ASSERT_TRUE(a.obj) << a.diags << l;
  EXPECT_EQ(*a.obj, o) << l;
  std::string plain;
  std::istringstream in(l);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("; block ", 0) != 0) plain += line + "\n";
  EXPECT_EQ(plain, listing(o));
}

TEST(Disasm, BlockNotesOfACallByOffset) {
  obj::ObjectFile o = blocksSample();
  o.relocs.clear(); // the call's label field is its target: 0x2c itself, inside @k
  as::DisasmOptions opts;
  opts.blocks = true;
  const std::string l = as::blockListing(o, opts);
  EXPECT_NE(l.find("; block 0x2c..0x30: scalar, calls 0x2c <k+0x2c> (not a function start), then "
                   "falls through\n"),
            std::string::npos)
      << l;
}

TEST(Disasm, QuotedNamesRoundTrip) {
  obj::ObjectFile o;
  obj::Function f;
  f.name = "we\"ird\nname";
  f.flags = obj::kDeclaration;
  f.params.push_back({"", obj::ParamKind::Scalar, isa::DType::I32, {}, "", false});
  o.functions.push_back(f);
  o.events.push_back({0, "a;b", isa::Pipe::S, isa::Pipe::All});
  o.relocs.clear();
  Assembled a = assemble(listing(o));
  ASSERT_TRUE(a.obj) << a.diags << listing(o);
  EXPECT_EQ(*a.obj, o);
}

TEST(Disasm, NonCanonicalObjectsWarn) {
  obj::ObjectFile o = sample();
  o.functions[0].textOffset = 4;
  o.functions[0].textSize -= 4;
  std::string l = listing(o);
  EXPECT_NE(l.find("; warning: function @vadd at 0x4 does not follow"), std::string::npos) << l;
  Assembled a = assemble(l);
  EXPECT_TRUE(a.obj) << a.diags; // still assembles (comments), to a canonical object
}

TEST(BlockAsm, LooksLikeBlockAssembly) {
  EXPECT_TRUE(as::looksLikeBlockAssembly("k.o:     file format elf64-pto (a2a3)\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("; comment\n\n.function @k entry\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("  // c\n.arch a5\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("       0:\t08019181\tBSTART.VEC TADD, FP32\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("0000000000000000 <vadd>:\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("BSTART.VEC TADD, FP32\nBSTOP\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("B.DIM zero, 16, ->LB0\n"));
  EXPECT_TRUE(as::looksLikeBlockAssembly("addi a0, 7, ->a1\n"));
  EXPECT_FALSE(as::looksLikeBlockAssembly(""));
  EXPECT_FALSE(as::looksLikeBlockAssembly("// RUN: pto-as %s\nmodule {\n}\n"));
  EXPECT_FALSE(as::looksLikeBlockAssembly("func.func @k(%a: !pto.ptr<f32>) {\n"));
  EXPECT_FALSE(as::looksLikeBlockAssembly(
      "tadd %c, %a, %b : !pto.tile<f32, 16, 16>\nBSTART.VEC TADD, FP32\n"));
  EXPECT_FALSE(as::looksLikeBlockAssembly("%0 = pto.tadd %a, %b\n"));
  EXPECT_FALSE(as::looksLikeBlockAssembly("add %a, %b\n"));
}

TEST(BlockAsm, LocatedErrors) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"BSTOP\n", "t.s:1:1: error: instruction before any .function directive (missing "
                  ".function)\nBSTOP\n^~~~~\n"},
      {".function @k\nFOO a0\n", "t.s:2:1: error: unknown mnemonic 'FOO'\nFOO a0\n^~~\n"},
      {".function @k\nBSTART.VEC TFOO, FP32\n", "t.s:2:12: error: unknown tile op 'TFOO'"},
      {".function @k\nBSTART.VEC TADD, FP99\n", "t.s:2:18: error: unknown DataType 'FP99'"},
      {".function @k\nB.DIM zero, 200000, ->LB0\n", "t.s:2:1: error: bad field value: "},
      {".function @k\naddi a0, ->a1\n",
       "t.s:2:1: error: invalid operands for 'addi'; expected 'addi "},
      {".function @k\n   0:\t08019182\tBSTART.VEC TADD, FP32\n",
       "t.s:2:7: error: hex column '08019182' disagrees with the encoding of 'BSTART.VEC TADD, "
       "FP32' (08019181)"},
      {".function @k\n.tile T#1 %a vec 16x16xf99\n", "t.s:2:18: error: unknown element type 'f99'"},
      {".function @k\n.tile T#1 %a vec 16x16xf32 valid=17x16\n",
       "t.s:2:28: error: valid shape 17x16 exceeds"},
      {".function @k\n.tile T#2 %a vec 16x16xf32\n", "t.s:2:7: error: tile table of @k has no T#1"},
      {".function @k\n.param %a pointer f32\n",
       "t.s:2:11: error: unknown parameter kind 'pointer'"},
      {".function @k\n.event @e PIPE_Q PIPE_V\n", "t.s:2:11: error: unknown pipe 'PIPE_Q'"},
      {".function @k\nBSTOP\n.reloc 0x2 tile T#1\n",
       "t.s:3:1: error: relocation offset 0x2 is not the start of a word"},
      {".function @k\nBSTOP\n.reloc 0x0 event @nope\n", "t.s:3:18: error: no event @nope"},
      {".function @k\n.bogus 1\n", "t.s:2:1: error: unknown directive '.bogus'"},
      {".arch a9\n", "t.s:1:7: error: unknown arch 'a9'"},
      {".function @k\n.function @k\n", "t.s:2:11: error: duplicate function @k"},
      {".function @k fast\n", "t.s:1:14: error: unknown function attribute 'fast'"},
      {".function @\"k\n", "t.s:1:11: error: unterminated string"},
      {".function @k\n<j>:\n", "t.s:2:1: error: label <j> does not name the current function @k"},
      {".function @k\n.loc foo.pto:x:1\n",
       "t.s:2:6: error: expected <file>:<line>:<col> with numeric"},
      {".function @k\n.word 0x1ffffffff\n", "t.s:2:7: error: bad .word value"},
  };
  for (const Case& c : cases) {
    Assembled a = assemble(c.text);
    EXPECT_FALSE(a.obj) << c.text;
    EXPECT_NE(a.diags.find(c.want), std::string::npos)
        << "input:\n"
        << c.text << "\nwant: " << c.want << "\ngot:\n"
        << a.diags;
  }
}

TEST(BlockAsm, HandWrittenWithoutColumns) {
  Assembled a = assemble(".function @k entry kernel=vector\n"
                         ".tile T#1 %a vec 16x16xf32\n"
                         ".tile T#2 %b vec 16x16xf32\n"
                         "BSTART.VEC TADD, FP32   ; c = a + b\n"
                         ".reloc tile T#2\n"
                         "B.DIM zero, 16, ->LB0\n"
                         "B.IOT T#1, T#2, mask=1111, last, ->T<1>\n"
                         "BSTOP\n");
  ASSERT_TRUE(a.obj) << a.diags;
  const obj::ObjectFile& o = *a.obj;
  EXPECT_EQ(o.text.size(), 16u);
  EXPECT_EQ(o.text[0], 0x81);
  ASSERT_EQ(o.functions.size(), 1u);
  EXPECT_EQ(o.functions[0].textSize, 16u);
  EXPECT_EQ(o.functions[0].tiles[0].validRows, 16);
  ASSERT_EQ(o.relocs.size(), 1u);
  EXPECT_EQ(o.relocs[0].offset, 4u);
  EXPECT_EQ(o.relocs[0].index, 1u);
  EXPECT_FALSE(o.usesExtensions);
}
