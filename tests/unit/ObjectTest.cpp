#include "obj/Object.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>

using namespace pto;

namespace {

obj::ObjectFile sample() {
  obj::ObjectFile o;
  o.arch = isa::Arch::A5;
  o.usesExtensions = true;
  for (uint32_t w : {0x08019181u, 0x01000043u, 0x0408CE13u, 0x00000001u}) {
    for (int i = 0; i < 4; ++i)
      o.text.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  obj::Function f;
  f.name = "vadd";
  f.flags = obj::kEntry | obj::kKernelVector;
  f.textOffset = 0;
  f.textSize = o.text.size();
  f.params.push_back({"x", obj::ParamKind::Pointer, isa::DType::F32, {}, "", false});
  f.params.push_back({"v", obj::ParamKind::TensorView, isa::DType::F16, {64, 128}, "", false});
  obj::TileDesc t;
  t.name = "a";
  t.rows = 16;
  t.cols = 64;
  t.validRows = 16;
  t.validCols = obj::kDynamicDim;
  f.tiles.push_back(t);
  t.name = "b";
  t.placement = 0x2000;
  f.tiles.push_back(t);
  t.name = "b_view";
  t.aliasOf = 1;
  t.aliasOffset = 256;
  f.tiles.push_back(t);
  o.functions.push_back(f);
  obj::Function helper;
  helper.name = "helper";
  helper.flags = obj::kDeclaration;
  o.functions.push_back(helper);
  o.events.push_back({0, "e0", isa::Pipe::MTE2, isa::Pipe::V});
  o.relocs.push_back(test::relocAt(8, obj::RelocType::Tile, 0, 0));
  o.relocs.push_back(test::relocAt(4, obj::RelocType::Event, 0, 0));
  o.relocs.push_back(test::relocAt(0, obj::RelocType::Call, 0, 0, "external_fn"));
  o.lines.push_back(test::lineAt(0, "vadd.pto", 3, 5));
  return o;
}

std::vector<uint8_t> bytesOf(const obj::ObjectFile& o) {
  auto r = obj::writeObject(o);
  if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << *e;
  return std::get<std::vector<uint8_t>>(r);
}

} // namespace

TEST(Object, WriteReadRoundTrip) {
  obj::ObjectFile o = sample();
  auto bytes = bytesOf(o);
  auto r = obj::readObject(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  EXPECT_EQ(std::get<obj::ObjectFile>(r), o);
}

TEST(Object, RejectsEveryTruncation) {
  auto bytes = bytesOf(sample());
  for (size_t n = 0; n < bytes.size(); n += 7) {
    auto r = obj::readObject(bytes.data(), n);
    EXPECT_TRUE(std::holds_alternative<std::string>(r))
        << "accepted a file truncated to " << n << " bytes";
  }
}

TEST(Object, CorruptBytesNeverCrash) {
  auto bytes = bytesOf(sample());
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto copy = bytes;
    copy[i] ^= 0xA5;
    auto r = obj::readObject(copy.data(), copy.size());
    if (auto* e = std::get_if<std::string>(&r)) {
      EXPECT_FALSE(e->empty());
    }
  }
}

TEST(Object, RejectsWrongIdentityAndType) {
  auto bytes = bytesOf(sample());
  auto copy = bytes;
  copy[16] = 2; // e_type = ET_EXEC
  auto r = obj::readObject(copy.data(), copy.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("not a relocatable object"), std::string::npos);
  std::string text = "not elf at all";
  r = obj::readObject(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
}

// The message once said "0x" before a decimal number.
TEST(Object, UnknownArchFlagsAreNamedInDecimal) {
  auto bytes = bytesOf(sample());
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  eh.e_flags = 26;
  std::memcpy(bytes.data(), &eh, sizeof eh);
  auto r = obj::readObject(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r), "unknown arch flags 26");
}

// Found by the object fuzzer: the section-name table was read before its bounds were checked.
TEST(Object, RejectsABadSectionNameTable) {
  auto bytes = bytesOf(sample());
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  auto zero = bytes;
  reinterpret_cast<Elf64_Ehdr*>(zero.data())->e_shstrndx = 0;
  Elf64_Shdr* sh0 = reinterpret_cast<Elf64_Shdr*>(zero.data() + eh.e_shoff);
  sh0->sh_offset = 0x10;
  sh0->sh_size = 0x7fffffffffff;
  auto r = obj::readObject(zero.data(), zero.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  auto nobits = bytes;
  Elf64_Shdr* names = reinterpret_cast<Elf64_Shdr*>(nobits.data() + eh.e_shoff) + eh.e_shstrndx;
  names->sh_type = SHT_NOBITS;
  names->sh_offset = 0xd00000000;
  r = obj::readObject(nobits.data(), nobits.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("section"), std::string::npos);
}
