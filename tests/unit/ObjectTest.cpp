#include "obj/Object.h"
#include "obj/GmAccess.h"
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

// ---------------------------------------------------------------- .pto.gmaccess
namespace {

/// sample() with a second defined function (a pointer and a scalar parameter) and GM access
/// records in both functions, every field set somewhere.
obj::ObjectFile gmSample() {
  obj::ObjectFile o = sample();
  for (uint32_t w : {0x01000043u, 0x0408CE13u})
    for (int i = 0; i < 4; ++i)
      o.text.push_back(static_cast<uint8_t>(w >> (8 * i)));
  obj::Function f;
  f.name = "second";
  f.flags = obj::kEntry | obj::kKernelVector;
  f.textOffset = 16;
  f.textSize = 8;
  f.params.push_back({"p", obj::ParamKind::Pointer, isa::DType::F16, {}, "", false});
  f.params.push_back({"n", obj::ParamKind::Scalar, isa::DType::I32, {}, "", false});
  o.functions.push_back(f); // function 2 (1 is the declaration)
  obj::GmAccess a;
  a.textOffset = 0;
  a.function = 0;
  a.param = 0;
  a.known = true;
  a.offset = -64;
  a.bytes = 256;
  a.symbol = 0x9e3779b97f4a7c15u;
  a.loop = 2;
  a.stride = -512;
  o.gmAccesses.push_back(a);
  obj::GmAccess any; // record 1: any byte of any parameter, at the same word
  any.function = 0;
  any.write = true;
  o.gmAccesses.push_back(any);
  obj::GmAccess v;
  v.textOffset = 8;
  v.function = 0;
  v.param = 1; // the tensor view
  v.write = true;
  v.known = true;
  v.offset = int64_t(1) << 40;
  v.bytes = 4096;
  o.gmAccesses.push_back(v);
  obj::GmAccess s;
  s.textOffset = 16;
  s.function = 2;
  s.param = 0;
  s.known = true;
  s.bytes = 1;
  s.symbol = UINT64_MAX;
  s.loop = UINT32_MAX;
  s.stride = INT64_MIN;
  o.gmAccesses.push_back(s);
  return o;
}

/// The index, file offset and size of the section `name` of an ELF file (index 0 when absent).
struct SectionAt {
  size_t index = 0, offset = 0, size = 0;
};
SectionAt sectionNamed(const std::vector<uint8_t>& bytes, const std::string& name) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  auto header = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  const Elf64_Shdr names = header(eh.e_shstrndx);
  for (size_t i = 1; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = header(i);
    if (name == reinterpret_cast<const char*>(bytes.data() + names.sh_offset + sh.sh_name))
      return {i, sh.sh_offset, sh.sh_size};
  }
  return {};
}

/// Reads `bytes` and returns the error (or "" when it loads).
std::string readError(const std::vector<uint8_t>& bytes) {
  auto r = obj::readObject(bytes.data(), bytes.size());
  auto* e = std::get_if<std::string>(&r);
  return e ? *e : std::string();
}

} // namespace

TEST(GmAccessTable, RoundTripKeepsEveryField) {
  const obj::ObjectFile o = gmSample();
  auto bytes = bytesOf(o);
  auto r = obj::readObject(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  EXPECT_EQ(std::get<obj::ObjectFile>(r).gmAccesses, o.gmAccesses);
  EXPECT_EQ(std::get<obj::ObjectFile>(r), o);
  // After .strtab (the fixed sections keep their indices): 56-byte records after the header.
  const SectionAt gm = sectionNamed(bytes, ".pto.gmaccess");
  EXPECT_EQ(gm.index, sectionNamed(bytes, ".strtab").index + 1);
  EXPECT_EQ(sectionNamed(bytes, ".strtab").index, 9u);
  EXPECT_EQ(gm.size, 16 + 56 * o.gmAccesses.size());
  // Both optional tables: the extents first, then the GM accesses.
  obj::ObjectFile both = o;
  both.functions[2].params[0].extent = "64*%n";
  auto bothBytes = bytesOf(both);
  EXPECT_EQ(sectionNamed(bothBytes, ".pto.extents").index, 10u);
  EXPECT_EQ(sectionNamed(bothBytes, ".pto.gmaccess").index, 11u);
  auto rb = obj::readObject(bothBytes.data(), bothBytes.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(rb)) << std::get<std::string>(rb);
  EXPECT_EQ(std::get<obj::ObjectFile>(rb), both);
}

TEST(GmAccessTable, NoRecordsNoSection) {
  auto bytes = bytesOf(sample());
  EXPECT_EQ(sectionNamed(bytes, ".pto.gmaccess").index, 0u);
  auto r = obj::readObject(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r));
  EXPECT_TRUE(std::get<obj::ObjectFile>(r).gmAccesses.empty());
}

// Each rule of the reader on a record corrupted in the file: the message names the section and
// the record.
TEST(GmAccessTable, ReaderRejectsEachBadRecord) {
  const auto good = bytesOf(gmSample());
  const SectionAt gm = sectionNamed(good, ".pto.gmaccess");
  ASSERT_NE(gm.index, 0u);
  ASSERT_EQ(readError(good), "");
  // Field offsets in a 56-byte record.
  enum : size_t {
    kText = 0,
    kFunction = 8,
    kParam = 12,
    kFlags = 16,
    kLoop = 20,
    kOffset = 24,
    kBytes = 32,
    kSymbol = 40,
    kStride = 48
  };
  auto with = [&](size_t record, size_t field, uint64_t value, size_t width) {
    auto bytes = good;
    std::memcpy(bytes.data() + gm.offset + 16 + 56 * record + field, &value, width);
    return readError(bytes);
  };
  const std::string at = ".pto.gmaccess: gm access record ";
  EXPECT_EQ(with(1, kFunction, 3, 4), at + "1 names a missing function 3");
  EXPECT_EQ(with(2, kText, 9, 8), at + "2 is at an odd text offset 0x9");
  EXPECT_EQ(with(3, kText, 24, 8), at + "3 at 0x18 is past the end of .text");
  EXPECT_EQ(with(0, kText, 16, 8), at + "0 at 0x10 is outside function 'vadd' [0x0, 0x10)");
  EXPECT_EQ(with(3, kText, 14, 8), at + "3 at 0xe is outside function 'second' [0x10, 0x18)");
  EXPECT_EQ(with(0, kParam, 2, 4), at + "0 names a missing parameter 2 of 'vadd'");
  EXPECT_EQ(with(0, kParam, uint32_t(-2), 4), at + "0 names a missing parameter -2 of 'vadd'");
  EXPECT_EQ(with(3, kParam, 1, 4),
            at + "3: parameter 'n' of 'second' is not a pointer or tensor_view");
  for (size_t field : {kOffset, kBytes, kSymbol, kStride})
    EXPECT_EQ(with(1, field, 8, 8),
              at + "1 is not known but has an offset, size, symbol, loop or stride")
        << "field at " << field;
  EXPECT_EQ(with(1, kLoop, 1, 4),
            at + "1 is not known but has an offset, size, symbol, loop or stride");
  EXPECT_EQ(with(0, kBytes, 0, 8), at + "0 is known but covers no bytes");
  EXPECT_EQ(with(2, kStride, 64, 8), at + "2 has a stride but no loop");
  // (a fuzzed object once had one: the listing's .gmaccess refused what the reader took)
  EXPECT_EQ(with(0, kStride, 0, 8), at + "0 has a loop but no stride");
  EXPECT_EQ(with(1, kText, 10, 8), at + "2 is not sorted by text offset (0x8 after 0xa)");
  EXPECT_EQ(with(0, kFlags, 6, 4), at + "0 has unknown flags 0x6");
  // The table header.
  auto bytes = good;
  bytes[gm.offset] ^= 1;
  EXPECT_EQ(readError(bytes), ".pto.gmaccess: bad table magic");
  bytes = good;
  bytes[gm.offset + 8] = 5; // five records in a section of four
  EXPECT_EQ(readError(bytes), ".pto.gmaccess: records extend past the end of the section");
  bytes = good;
  bytes[gm.offset + 8] = 3; // three records and a fourth's bytes
  EXPECT_EQ(readError(bytes), ".pto.gmaccess: bytes after the last record");
}

// The writer keeps the same rules (an object it writes always reads back).
TEST(GmAccessTable, WriterRejectsABadRecord) {
  obj::ObjectFile o = gmSample();
  std::swap(o.gmAccesses[2], o.gmAccesses[3]);
  auto r = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r),
            ".pto.gmaccess: gm access record 3 is not sorted by text offset (0x8 after 0x10)");
  o = gmSample();
  o.gmAccesses[3].function = 0; // the word of @second named as one of @vadd
  r = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r), ".pto.gmaccess: gm access record 3 at 0x10 is outside "
                                      "function 'vadd' [0x0, 0x10)");
  o = gmSample();
  o.gmAccesses[1].textOffset = 10;
  r = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r),
            ".pto.gmaccess: gm access record 2 is not sorted by text offset (0x8 after 0xa)");
}

TEST(GmAccessTable, ObjdumpListing) {
  EXPECT_EQ(obj::gmAccessListing(gmSample()),
            "GM ACCESSES (4):\n"
            "gm 0x0 @vadd %x read known: offset -64 bytes 256 symbol 0x9e3779b97f4a7c15 loop 2 "
            "stride -512\n"
            "gm 0x0 @vadd (any parameter) write\n"
            "gm 0x8 @vadd %v write known: offset +1099511627776 bytes 4096\n"
            "gm 0x10 @second %p read known: offset +0 bytes 1 symbol 0xffffffffffffffff loop "
            "4294967295 stride -9223372036854775808\n");
}
