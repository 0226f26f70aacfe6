// Linker tests: linking the vadd sample in-process, symbol and arch errors, event patching,
// the image writer/reader round trip, and corrupt images (never a crash, always a message).
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Encoding.h"
#include "link/Cfg.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

using namespace pto;

namespace {

/// The vadd sample carries its loads' and store's tiles across iterations without events: those
/// races are not what these tests are about.
link::LinkOptions racesAllowed() {
  link::LinkOptions o;
  o.allowRaces = true;
  return o;
}

obj::ObjectFile assemble(const std::string& path, std::optional<isa::Arch> arch = std::nullopt) {
  return test::assembleFile(path, arch);
}

std::string vaddPath() {
  return std::string(PTO_SOURCE_DIR) + "/samples/vadd/vadd.pto";
}

std::string errorsOf(const link::LinkResult& r) {
  std::string s;
  for (const auto& d : r.diags)
    s += (d.note ? "note: " : "error: ") + d.text + "\n";
  return s;
}

} // namespace

TEST(Link, VaddLinksAndPatchesEventIds) {
  obj::ObjectFile o = assemble(vaddPath());
  link::LinkResult r = link::link({{"vadd.o", o}}, racesAllowed());
  ASSERT_TRUE(r.ok()) << errorsOf(r);
  const obj::Image& img = *r.image;
  ASSERT_EQ(img.entries.size(), 1u);
  EXPECT_EQ(img.entries[0].name, "vadd");
  for (const obj::TileDesc& t : img.functions[0].tiles)
    EXPECT_GE(t.placement, 0);
  // Every event word now carries the id of its event.
  std::map<std::string, int> ids;
  for (const obj::ImageEvent& e : img.events)
    ids[e.name] = e.id;
  EXPECT_NE(ids["la"], ids["lb"]);
  for (const obj::Reloc& rel : o.relocs) {
    if (rel.type != obj::RelocType::Event) continue;
    size_t used = 0;
    auto w = isa::enc::decodeBytes(std::span<const uint8_t>(img.text.data() + rel.offset, 4), used,
                                   {.extensions = true});
    ASSERT_TRUE(w);
    EXPECT_EQ(*w->get("uimm17"), ids[o.events[rel.index].name]);
  }
  // Round trip through the ELF image.
  auto bytes = obj::writeImage(img);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes));
  auto& b = std::get<std::vector<uint8_t>>(bytes);
  auto back = obj::readImage(b.data(), b.size());
  ASSERT_TRUE(std::holds_alternative<obj::Image>(back)) << std::get<std::string>(back);
  EXPECT_EQ(std::get<obj::Image>(back), img);
  EXPECT_NE(link::formatMap(r).find("@vadd"), std::string::npos);
}

TEST(Link, SymbolErrorsNameBothObjects) {
  obj::ObjectFile o = assemble(vaddPath());
  link::LinkResult dup = link::link({{"a.o", o}, {"b.o", o}}, {});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(errorsOf(dup).find("duplicate symbol 'vadd': defined in 'a.o' and in 'b.o'"),
            std::string::npos);
  obj::ObjectFile caller = o;
  caller.functions[0].name = "k";
  caller.relocs.push_back(test::relocAt(0, obj::RelocType::Call, 0, 0, "missing"));
  link::LinkResult und = link::link({{"k.o", caller}}, {});
  ASSERT_FALSE(und.ok());
  EXPECT_NE(errorsOf(und).find("undefined symbol 'missing' (called from @k in 'k.o')"),
            std::string::npos);
  link::LinkResult noEntry = link::link({{"a.o", o}}, {{"nope"}, std::nullopt});
  EXPECT_NE(errorsOf(noEntry).find("--entry 'nope': no such kernel"), std::string::npos);
}

TEST(Link, ArchMismatch) {
  obj::ObjectFile a = assemble(vaddPath());
  obj::ObjectFile b = a;
  b.arch = isa::Arch::A5;
  b.functions[0].name = "other";
  link::LinkResult r = link::link({{"a.o", a}, {"b.o", b}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(errorsOf(r).find("'b.o' is for a5 but 'a.o' is for a2a3"), std::string::npos);
  r = link::link({{"a.o", a}}, {{}, isa::Arch::A5});
  EXPECT_NE(errorsOf(r).find("'a.o' is for a2a3, but --arch a5 was given"), std::string::npos);
}

TEST(Link, CfgOfVaddHasTheLoop) {
  obj::ObjectFile o = assemble(vaddPath());
  auto built = link::buildCfg(o, 0);
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(built));
  const auto& cfg = std::get<link::FunctionCfg>(built);
  bool backEdge = false, tadd = false;
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    for (int32_t s : cfg.blocks[b].succ)
      backEdge |= s >= 0 && static_cast<uint32_t>(s) < b;
    if (cfg.blocks[b].op == isa::OpId::TADD) {
      tadd = true;
      auto uses = cfg.usesOf(cfg.blocks[b]);
      ASSERT_EQ(uses.size(), 3u);
      EXPECT_TRUE(uses[0].write && !uses[0].read);
      EXPECT_TRUE(uses[1].read && uses[2].read);
    }
  }
  EXPECT_TRUE(backEdge);
  EXPECT_TRUE(tadd);
}

TEST(Image, CorruptInputNeverCrashes) {
  obj::ObjectFile o = assemble(vaddPath());
  link::LinkResult r = link::link({{"vadd.o", o}}, racesAllowed());
  ASSERT_TRUE(r.ok());
  auto good = std::get<std::vector<uint8_t>>(obj::writeImage(*r.image));
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bad = good;
    if (i % 3 == 0) {
      bad.resize(rng() % bad.size());
    } else {
      for (int k = 0; k < 1 + i % 4; ++k)
        bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
    auto res = obj::readImage(bad.data(), bad.size());
    if (auto* e = std::get_if<std::string>(&res)) {
      EXPECT_FALSE(e->empty());
    }
  }
  // An object is not an image.
  auto ob = std::get<std::vector<uint8_t>>(obj::writeObject(o));
  auto res = obj::readImage(ob.data(), ob.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(res));
  EXPECT_NE(std::get<std::string>(res).find("not a linked image"), std::string::npos);
  // A placement pushed out of its buffer is rejected by the reader.
  obj::Image img = *r.image;
  img.functions[0].tiles[0].placement = 196608;
  auto b2 = std::get<std::vector<uint8_t>>(obj::writeImage(img));
  res = obj::readImage(b2.data(), b2.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(res));
  EXPECT_NE(std::get<std::string>(res).find("past the end of its buffer"), std::string::npos);
}
