// Hostile inputs, second tour (issue 34): the .npy header read as numpy's format specifies it,
// the escaping functions of support/Escape.h, the strict integer parser of support/Numbers.h,
// the safe output path and sameFile through a dangling link. Expected values are worked by hand.
#include "obj/Object.h"
#include "runtime/Npy.h"
#include "support/Escape.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace pto;

namespace {

/// A version 1.0 .npy file: magic, the header length, `header` as given (no padding added),
/// then `data`.
std::vector<uint8_t> npy(const std::string& header, size_t dataBytes) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  b.push_back(static_cast<uint8_t>(header.size() & 0xff));
  b.push_back(static_cast<uint8_t>(header.size() >> 8));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), dataBytes, 0);
  return b;
}

std::string npyError(const std::string& header, size_t dataBytes) {
  auto r = rt::fromNpy(npy(header, dataBytes), "x.npy");
  return r ? std::string("accepted") : r.error().message;
}

const std::string kGood = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n";

} // namespace

TEST(NpyHeader, NumpysOwnHeadersRead) {
  auto r = rt::fromNpy(npy(kGood, 24), "x.npy");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r->dtype, isa::DType::F32);
  // Keys in another order, double quotes, (n,) and () shapes, no trailing comma.
  auto o = rt::fromNpy(npy("{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<i4\"}\n", 16),
                       "x.npy");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->shape, (std::vector<int64_t>{4}));
  auto s = rt::fromNpy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': ()}\n", 8), "x.npy");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->shape.empty());
  // toNpy's own output reads back.
  auto back = rt::fromNpy(rt::toNpy(r.value()), "y.npy");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->shape, r->shape);
}

TEST(NpyHeader, WhatNumpyRefusesIsRefused) {
  // A header length too short: the dict is cut (was 0-d data read from the header bytes).
  auto cut = npy(kGood, 24);
  cut[8] = 20;
  auto r = rt::fromNpy(cut, "x.npy");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("x.npy: error: not a supported .npy file"), std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False}\n", 4).find("has no 'shape'"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n", 4)
                .find("unexpected key 'x'"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': 'False', 'shape': (1,)}\n", 4)
                .find("'fortran_order' is not True or False"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (1,)}\n", 4)
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False, 'shape': (4)}\n", 16)
                .find("'shape' is not a tuple"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}\n", 4)
                .find("'shape' is not a tuple"),
            std::string::npos);
  EXPECT_NE(npyError("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x\n", 4)
                .find("does not end in spaces and a newline"),
            std::string::npos);
  EXPECT_NE(
      npyError("{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}\n", 4).find("Fortran order"),
      std::string::npos);
  // Trailing data: 2x3 f32 is 24 bytes, 28 are there.
  EXPECT_NE(npyError(kGood, 28).find("4 bytes after the data (24 bytes"), std::string::npos);
  EXPECT_NE(npyError(kGood, 20).find("truncated data (20 of 24 bytes)"), std::string::npos);
}

TEST(Escape, CppStringLiteralKeepsTheBytes) {
  EXPECT_EQ(support::cppStringLiteral("ab"), "\"ab\"");
  EXPECT_EQ(support::cppStringLiteral("a\"b\\c"), "\"a\\042b\\134c\"");
  EXPECT_EQ(support::cppStringLiteral("\n1"), "\"\\0121\""); // three digits: '1' stays a digit
  EXPECT_EQ(support::cppStringLiteral("?"
                                      "?/"),
            "\"\\077\\077/\"");
  EXPECT_EQ(support::cppStringLiteral("\xff"), "\"\\377\"");
}

TEST(Escape, CppCommentTextStaysOnItsLine) {
  EXPECT_EQ(support::cppCommentText("k.pto"), "k.pto");
  EXPECT_EQ(support::cppCommentText("a\nb"), "a\\x0ab");
  EXPECT_EQ(support::cppCommentText("a\\"), "a\\x5c");
  EXPECT_EQ(support::cppCommentText("a\r"), "a\\x0d");
  EXPECT_EQ(support::cppCommentText("?"
                                    "?/"),
            "?\\x3f/");
  EXPECT_EQ(support::cppCommentText("\xc3\xa9"), "\\xc3\\xa9");
}

TEST(Escape, TerminalText) {
  EXPECT_EQ(support::visibleText("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(support::visibleText("\xc2\x9b"), "\\u009b");
  EXPECT_EQ(support::visibleText("\xc3\xa9"), "\xc3\xa9");
}

TEST(Escape, SafeFileNames) {
  EXPECT_TRUE(support::isSafeFileName("arg0"));
  EXPECT_TRUE(support::isSafeFileName("x.1-y_z+"));
  EXPECT_FALSE(support::isSafeFileName(""));
  EXPECT_FALSE(support::isSafeFileName(".."));
  EXPECT_FALSE(support::isSafeFileName(".hidden"));
  EXPECT_FALSE(support::isSafeFileName("-rf"));
  EXPECT_FALSE(support::isSafeFileName("../x"));
  EXPECT_FALSE(support::isSafeFileName("/abs"));
  EXPECT_FALSE(support::isSafeFileName("a b"));
  EXPECT_FALSE(support::isSafeFileName(std::string(201, 'a')));
  const fs::path dir = fs::temp_directory_path() / ("pto-hostile-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string err;
  auto p = support::safePathIn(dir.string(), "x", ".npy", "parameter %x", err);
  ASSERT_TRUE(p) << err;
  EXPECT_EQ(*p, (dir / "x.npy").string());
  EXPECT_FALSE(support::safePathIn(dir.string(), "../x", ".npy", "parameter %y", err));
  EXPECT_NE(err.find("parameter %y is not a safe file name"), std::string::npos);
  fs::create_symlink("/tmp", dir / "z.npy");
  EXPECT_FALSE(support::safePathIn(dir.string(), "z", ".npy", "parameter %z", err));
  EXPECT_NE(err.find("leads outside the directory"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Numbers, StrictIntegers) {
  EXPECT_EQ(obj::parseWideInteger("0"), obj::WideInt{0});
  EXPECT_EQ(obj::parseWideInteger("-9223372036854775808"), -(obj::WideInt{1} << 63));
  EXPECT_EQ(obj::parseWideInteger("18446744073709551615"), (obj::WideInt{1} << 64) - 1);
  EXPECT_EQ(obj::parseWideInteger("0x10"), obj::WideInt{16});
  EXPECT_EQ(obj::parseWideInteger("+7"), obj::WideInt{7});
  for (const char* bad : {"", " 1", "1 ", "1e3", "1.0", "1_0", "0b1", "--1", "+-1", "0x",
                          "18446744073709551616", "inf"})
    EXPECT_FALSE(obj::parseWideInteger(bad)) << bad;
  EXPECT_FALSE(
      obj::parseIntegerIn("2147483648", -(obj::WideInt{1} << 31), (obj::WideInt{1} << 31) - 1));
  EXPECT_TRUE(
      obj::parseIntegerIn("2147483647", -(obj::WideInt{1} << 31), (obj::WideInt{1} << 31) - 1));
  EXPECT_EQ(obj::wideText(-(obj::WideInt{1} << 63)), "-9223372036854775808");
  EXPECT_EQ(obj::wideText((obj::WideInt{1} << 64) - 1), "18446744073709551615");
  EXPECT_EQ(obj::wideText(0), "0");
}

TEST(FileIO, SameFileThroughADanglingLink) {
  const fs::path dir = fs::temp_directory_path() / ("pto-same-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink("out.img", dir / "map");
  EXPECT_TRUE(obj::sameFile((dir / "map").string(), (dir / "out.img").string()));
  EXPECT_TRUE(obj::sameFile((dir / "out.img").string(), (dir / "." / "out.img").string()));
  EXPECT_FALSE(obj::sameFile((dir / "map").string(), (dir / "other.img").string()));
  fs::remove_all(dir);
}

TEST(ObjectChecks, DuplicateParameterIsRefused) {
  obj::ObjectFile o;
  obj::Function f;
  f.name = "k";
  f.flags = obj::kEntry;
  obj::Param p;
  p.name = "x";
  p.kind = obj::ParamKind::Scalar;
  p.dtype = isa::DType::I32;
  f.params = {p, p};
  o.functions.push_back(f);
  auto bytes = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::string>(bytes));
  EXPECT_EQ(std::get<std::string>(bytes), "function @k has two parameters named %x");
}

TEST(ObjectChecks, DuplicateParameterInAnObjectIsRefusedOnRead) {
  // An object written with parameters %xa and %xb, then "xb" renamed "xa" in .strtab (another
  // producer's object): readObject refuses it, as pto-ld then does.
  obj::ObjectFile o;
  obj::Function f;
  f.name = "k";
  f.flags = obj::kEntry;
  obj::Param p;
  p.kind = obj::ParamKind::Scalar;
  p.dtype = isa::DType::I32;
  p.name = "xa";
  f.params.push_back(p);
  p.name = "xb";
  f.params.push_back(p);
  o.functions.push_back(f);
  auto written = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(written));
  std::vector<uint8_t> bytes = std::get<std::vector<uint8_t>>(written);
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(obj::readObject(bytes.data(), bytes.size())));
  const std::string from("\0xb\0", 4);
  auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  ASSERT_NE(at, bytes.end());
  at[2] = 'a';
  auto r = obj::readObject(bytes.data(), bytes.size());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ(std::get<std::string>(r), "function @k has two parameters named %xa");
}
