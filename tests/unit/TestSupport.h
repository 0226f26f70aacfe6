// Helpers the unit tests share: reading files, and running the real tool chain in process
// (.pto -> object -> image -> runtime Module) with each stage's diagnostics as the failure text.
#pragma once

#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace pto::test {

// Object records built field by field (their member order is the object model's, not a call's).
inline obj::Reloc relocAt(uint64_t offset, obj::RelocType type, uint32_t function, uint32_t index,
                          const char* symbol = "") {
  obj::Reloc r;
  r.offset = offset;
  r.type = type;
  r.function = function;
  r.index = index;
  r.symbol = symbol;
  return r;
}

/// A GM access record of known bytes: [offset, offset + bytes) of parameter `param` of
/// function 0, moving `stride` bytes an iteration of `loop` (0: a fixed address).
inline obj::GmAccess gmAccessAt(uint64_t textOffset, int32_t param, bool write, int64_t offset,
                                uint64_t bytes, uint32_t loop = 0, int64_t stride = 0) {
  obj::GmAccess g;
  g.textOffset = textOffset;
  g.param = param;
  g.write = write;
  g.known = true;
  g.offset = offset;
  g.bytes = bytes;
  g.loop = loop;
  g.stride = stride;
  return g;
}

inline obj::LineEntry lineAt(uint64_t textOffset, const char* file, uint32_t line, uint32_t col) {
  obj::LineEntry l;
  l.textOffset = textOffset;
  l.file = file;
  l.line = line;
  l.col = col;
  return l;
}

inline std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A path below the source tree (samples, docs).
inline std::string sourcePath(const std::string& rel) {
  return std::string(PTO_SOURCE_DIR) + "/" + rel;
}

/// A corpus kernel of ../shared; `haveCorpus()` says whether a checkout has them.
inline std::string corpusPath(const std::string& name) {
  return std::string(PTO_SHARED_DIR) + "/corpus/pto-kernels/" + name;
}
inline bool haveCorpus() {
  return std::filesystem::exists(std::string(PTO_SHARED_DIR) + "/corpus/pto-kernels");
}

/// A test that needs ../shared skips without it, except under CI (the CI variable set), where
/// a missing ../shared is a failure: CI must never pass by skipping.
#define PTO_REQUIRE_SHARED(available)                                                              \
  do {                                                                                             \
    if (!(available)) {                                                                            \
      if (std::getenv("CI"))                                                                       \
        FAIL() << "../shared is required under CI but missing (" PTO_SHARED_DIR ")";               \
      GTEST_SKIP() << "../shared is not available";                                                \
    }                                                                                              \
  } while (0)

/// The front end's answer on a text: the module (null when it was not built), every diagnostic,
/// and the error count.
struct ParsedText {
  std::unique_ptr<ir::Module> module;
  std::string diagnostics;
  unsigned errors = 0;
};

/// pto-as's front end in process on `text` named `name`: parse, then (`verify`, when the parse
/// had no error) verify for the arch (the module's, or `arch`).
inline ParsedText parseText(const std::string& text, std::optional<isa::Arch> arch = std::nullopt,
                            bool verify = true, const std::string& name = "test.pto") {
  as::SourceFile src(name, text);
  std::ostringstream out;
  ParsedText p;
  {
    as::DiagEngine diags(src, out);
    p.module = as::parseModule(src, diags, arch);
    if (p.module && diags.errors() == 0 && verify)
      as::verifyModule(*p.module, as::resolveArch(*p.module, arch), diags);
    p.errors = diags.errors();
  }
  p.diagnostics = out.str();
  return p;
}

/// pto-as in process on `text` named `name`: parse, verify for the arch (the module's, or
/// `arch`), lower.
inline obj::ObjectFile assembleText(const std::string& text,
                                    std::optional<isa::Arch> arch = std::nullopt,
                                    const std::string& name = "k.pto") {
  as::SourceFile src(name, text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags, arch);
  EXPECT_TRUE(m) << err.str();
  if (!m) return {};
  const isa::Arch a = as::resolveArch(*m, arch);
  as::verifyModule(*m, a, diags);
  auto o = as::lowerModule(*m, a, diags);
  EXPECT_TRUE(o) << err.str();
  return o ? *o : obj::ObjectFile{};
}

/// pto-as in process on a file.
inline obj::ObjectFile assembleFile(const std::string& path,
                                    std::optional<isa::Arch> arch = std::nullopt) {
  return assembleText(readText(path), arch, path);
}

/// pto-ld in process (one object, --auto-sync unless told otherwise).
inline obj::Image linkOne(const obj::ObjectFile& o, bool autoSync = true) {
  link::LinkOptions opts;
  opts.sync = autoSync ? link::SyncMode::Insert : link::SyncMode::Check;
  link::LinkResult r = link::link({{"k.o", o}}, opts);
  std::string msgs;
  for (const auto& d : r.diags)
    msgs += d.text + "\n";
  EXPECT_TRUE(r.ok()) << msgs;
  return r.ok() ? *r.image : obj::Image{};
}

/// .pto -> object -> image (with --auto-sync) -> a loaded runtime Module named after the file.
inline rt::Module buildModule(const std::string& path) {
  auto bytes = obj::writeImage(linkOne(assembleFile(path)));
  EXPECT_EQ(bytes.index(), 0u);
  auto mod = rt::Module::load(std::get<0>(bytes), path);
  EXPECT_TRUE(mod.ok()) << (mod.ok() ? "" : mod.error().message);
  return mod.value();
}

} // namespace pto::test
