// pto-as: parse any textual PTO form, verify it for an arch, and emit the Kernel IR.
#include "asm/codegen/CodeGen.h"
#include "asm/codegen/RecordExtents.h"
#include "asm/ir/Verifier.h"
#include "asm/mc/BlockAsm.h"
#include "asm/parse/Locations.h"
#include "asm/parse/Parser.h"
#include "obj/Object.h"
#include "support/FileIO.h"

#include "tools/NumberOption.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace {

/// pto-as reads sources of up to 1 GiB, four times the other tools' limit: the listing
/// pto-objdump -d prints of an object is about 3.6 times its size (a million tile ops: a 120 MB
/// object, a 430 MB listing), and that listing must assemble back (#34 item 5). The lexer's
/// 32-bit positions still fit.
constexpr uint64_t kMaxSourceBytes = uint64_t{1} << 30;

/// Writes the output through the one writer (support/FileIO.h): atomic for regular files, in place
/// for devices and FIFOs, never over the input.
bool writeOutput(const std::string& path, std::string_view data, const std::string& input,
                 std::string& err) {
  if (auto e = pto::obj::writeOutputFile(path, data, {input})) {
    err = *e;
    return false;
  }
  return true;
}

/// One name token of a block assembly line at `i` ('@' or '%', then a plain or quoted name with
/// the block lexer's escapes): the name, and `i` moved past it.
std::string nameToken(std::string_view line, size_t& i) {
  std::string name;
  if (i < line.size() && line[i] == '"') {
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] != '\\' || i + 1 >= line.size()) {
        name += line[i];
        continue;
      }
      const char e = line[++i];
      if (e == 'x' && i + 2 < line.size()) {
        name += static_cast<char>(std::stoi(std::string(line.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        name += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
    }
    ++i;
    return name;
  }
  while (i < line.size() && line[i] != ' ' && line[i] != '\t')
    name += line[i++];
  return name;
}

/// A block assembly function that declares a parameter name twice can never be bound: an error
/// at the second '.param' (a note at the first), as the MLIR form reports a redefined argument.
bool reportDuplicateParams(const pto::as::SourceFile& src, const pto::obj::ObjectFile& object,
                           pto::as::DiagEngine& diags) {
  std::set<std::pair<std::string, std::string>> duplicates; // function, parameter
  for (const auto& f : object.functions) {
    std::set<std::string> seen;
    for (const auto& p : f.params)
      if (!seen.insert(p.name).second) duplicates.insert({f.name, p.name});
  }
  if (duplicates.empty()) return false;
  std::string function;
  std::map<std::pair<std::string, std::string>, pto::as::SrcLoc> first;
  for (uint32_t n = 1; n <= src.numLines(); ++n) {
    const std::string_view line = src.lineText(n);
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos) continue;
    const bool isFunction = line.substr(i).starts_with(".function");
    if (!isFunction && !line.substr(i).starts_with(".param")) continue;
    i = line.find_first_not_of(" \t", i + (isFunction ? 9 : 6));
    if (i == std::string_view::npos || (line[i] != '@' && line[i] != '%')) continue;
    const size_t col = i++;
    const std::string name = nameToken(line, i);
    if (isFunction) {
      function = name;
      continue;
    }
    const pto::as::SrcLoc loc{n, static_cast<uint32_t>(col + 1), static_cast<uint32_t>(i - col)};
    const auto key = std::pair{function, name};
    if (!duplicates.count(key)) continue;
    if (auto it = first.find(key); it != first.end()) {
      diags.error(loc, "function @" + function + " already has a parameter named %" + name);
      diags.note(it->second, "the first is here");
    } else {
      first.emplace(key, loc);
    }
  }
  diags.flush();
  std::cerr << diags.errors() << (diags.errors() == 1 ? " error" : " errors") << " generated.\n";
  return true;
}

/// Writes text to the output (atomically, docs/reliability.md): 0, or 1 with the error printed.
int writeText(const std::string& output, std::string_view data, const std::string& input) {
  std::string err;
  if (!writeOutput(output, data, input, err)) {
    std::cerr << "pto-as: error: " << err << "\n";
    return 1;
  }
  return 0;
}

/// Writes an object's bytes (or reports why they could not be made): 0, or 1.
int writeObjectBytes(const std::variant<std::vector<uint8_t>, std::string>& bytes,
                     const std::string& output, const std::string& input) {
  if (auto* e = std::get_if<std::string>(&bytes)) {
    std::cerr << "pto-as: error: cannot write the object: " << *e << "\n";
    return 1;
  }
  const auto& b = std::get<std::vector<uint8_t>>(bytes);
  return writeText(output, {reinterpret_cast<const char*>(b.data()), b.size()}, input);
}

/// Every error reported: "N errors generated." (or the warnings that count as errors), exit 1.
int reportFailure(pto::as::DiagEngine& diags) {
  if (diags.errors() > 0)
    std::cerr << diags.errors() << (diags.errors() == 1 ? " error" : " errors") << " generated.\n";
  else
    std::cerr << "pto-as: error: warnings treated as errors (--fatal-warnings)\n";
  return 1;
}

/// Canonical block assembly to an object (no IR on the way).
int assembleBlocks(pto::as::SourceFile& src, pto::as::DiagEngine& diags,
                   std::optional<pto::isa::Arch> archFlag, bool verifyOnly,
                   const std::string& input, const std::string& output) {
  auto object = pto::as::assembleBlockText(src, diags);
  if (object && object->functions.empty())
    diags.warning({}, "no functions in '" + src.name() + "'");
  diags.flush();
  if (!object || diags.failed()) return reportFailure(diags);
  if (archFlag) object->arch = *archFlag;
  if (reportDuplicateParams(src, *object, diags)) return 1;
  if (verifyOnly) return 0;
  return writeObjectBytes(pto::obj::writeObject(*object), output, input);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"pto-as: the PTO assembler. Reads .pto text in any accepted form (MLIR-style "
               "modules, PTO-AS assembly, SSA and DPS tile ops), verifies it for the target arch "
               "and emits the Kernel IR."};
  app.set_version_flag("--version", std::string("pto-as (pto-toolchain) ") + PTO_VERSION);
  std::string input, output, archText, emit = "obj", level = "level2";
  bool verifyOnly = false, fatalWarnings = false;
  unsigned errorLimit = 50;
  app.add_option("input", input, "Input file ('-' for stdin)")->required();
  app.add_option("-o,--output", output,
                 "Output file ('-' for stdout; default: the input's name with .o for an object, "
                 "stdout for --emit=ir)");
  app.add_option("--arch", archText, "Target arch: a2a3 (default) or a5; overrides pto.target_arch")
      ->check(CLI::IsMember({"a2a3", "a2", "a3", "a5"}));
  app.add_option("--emit", emit,
                 "What to emit: obj (an ELF relocatable object, the default, whatever the output "
                 "is named) or ir "
                 "(the canonical Kernel IR text)")
      ->check(CLI::IsMember({"ir", "obj"}));
  app.add_option("--pto-level", level,
                 "PTOAS's build level: level3 is manual memory, where every pto.alloc_tile names "
                 "its address (level1 and level2, the default, let the linker place tiles)")
      ->check(CLI::IsMember({"level1", "level2", "level3"}));
  bool insertSync = false;
  app.add_flag("--enable-insert-sync", insertSync,
               "PTOAS's automatic sync insertion: accepted for PTOAS command lines (pto-ld "
               "--auto-sync inserts sync here); pto.tassign is refused under it, as PTOAS does");
  app.add_flag("--verify-only", verifyOnly, "Parse and verify; write nothing");
  app.add_flag("--fatal-warnings", fatalWarnings, "Treat warnings as errors");
  pto::tools::addIntegerOption(app, "--error-limit", errorLimit,
                               "Stop reporting after this many errors (default 50)");
  bool ptoPositions = false;
  app.add_flag("--pto-positions", ptoPositions,
               "Report .pto positions only, not the MLIR debug locations (loc(...)) the module "
               "carries: for people who edit the .pto by hand");
  CLI11_PARSE(app, argc, argv);
  if (output.empty()) // like cc -c: k.pto -> k.o in the current directory; IR to stdout
    output = emit == "ir"   ? "-"
             : input == "-" ? "a.o"
                            : std::filesystem::path(input).stem().string() + ".o";

  std::string text;
  if (auto e = pto::obj::readInputFile(input, text, kMaxSourceBytes)) {
    std::cerr << "pto-as: error: " << *e << "\n";
    return 1;
  }
  pto::as::SourceFile src(input == "-" ? "<stdin>" : input, std::move(text));
  pto::as::DiagEngine diags(src, std::cerr);
  diags.setWarningsAreErrors(fatalWarnings);
  diags.setErrorLimit(errorLimit);
  diags.setDeferred(true);
  std::optional<pto::isa::Arch> archFlag;
  if (!archText.empty()) archFlag = pto::isa::parseArch(archText);

  // Canonical block assembly (what pto-objdump -d prints) assembles straight to an object.
  if (pto::as::looksLikeBlockAssembly(src.text()))
    return assembleBlocks(src, diags, archFlag, verifyOnly, input, output);

  pto::as::assumeOneParserThread(); // pto-as parses one file on this thread
  auto module = pto::as::parseModule(src, diags, archFlag);
  // Reports lead with the module's debug locations (docs/language.md, "Debug locations").
  std::optional<pto::as::ModuleLocator> locator;
  if (module && !ptoPositions) {
    locator.emplace(*module);
    diags.setLocator(&*locator);
  }
  struct LocatorGuard { // the last reports are flushed while the module is alive
    pto::as::DiagEngine& diags;
    ~LocatorGuard() {
      diags.flush();
      diags.setLocator(nullptr);
    }
  } locatorGuard{diags};
  if (module) {
    pto::isa::Arch arch = pto::as::resolveArch(*module, archFlag);
    pto::as::verifyModule(*module, arch, diags);
    if (level == "level3") pto::as::verifyManualPlacement(*module, diags);
    // Code-generation rules (PTOAS's): the Kernel IR of --emit=ir is written either way.
    if (emit != "ir") pto::as::verifyTAssignMode(*module, level == "level3", insertSync, diags);
    if (module->functions.empty() && diags.errors() == 0)
      diags.warning({}, "no functions in '" + src.name() + "'");
  }
  diags.flush();
  if (!module || diags.failed()) return reportFailure(diags);
  // --verify-only runs every check that -o runs: the code generator's refusals included.
  if (verifyOnly) {
    auto object =
        pto::as::lowerModuleReleasing(*module, pto::as::resolveArch(*module, archFlag), diags);
    diags.flush();
    if (!object) return reportFailure(diags);
    return 0;
  }
  if (emit == "obj") {
    pto::isa::Arch arch = pto::as::resolveArch(*module, archFlag);
    // What each pointer parameter spans (obj/Extent.h), from the bodies the lowering frees.
    const pto::as::ModuleExtents extents = pto::as::collectExtents(*module);
    auto object = pto::as::lowerModuleReleasing(*module, arch, diags);
    diags.flush();
    if (!object) return reportFailure(diags);
    pto::as::applyExtents(*module, extents, *object);
    // Nothing more is reported against the module: it goes before the object's bytes are made,
    // and the object before they are written (each was a copy at pto-as's peak, #34 item 5).
    diags.setLocator(nullptr);
    locator.reset();
    module.reset();
    auto bytes = pto::obj::writeObject(*object);
    object.reset();
    return writeObjectBytes(bytes, output, input);
  }
  if (archFlag) pto::ir::setTargetArch(*module, *archFlag);
  return writeText(output, pto::ir::print(*module), input);
}
