// pto-ld: link PTO objects into a loadable image (docs/linking.md).
#include "export/CppExport.h"
#include "link/Linker.h"
#include "support/FileIO.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

/// A failed link leaves no output; an output never replaces one of the objects
/// (obj::writeOutputFile).
bool writeOutput(const std::string& path, const void* data, size_t size,
                 const std::vector<std::string>& inputs, std::string& err) {
  if (auto e = pto::obj::writeOutputFile(
          path, std::string_view(static_cast<const char*>(data), size), inputs)) {
    err = *e;
    return false;
  }
  return true;
}

/// Every input read as an object; each one that cannot be read is reported (false then).
bool readObjects(const std::vector<std::string>& inputs,
                 std::vector<pto::link::InputObject>& objects) {
  bool ok = true;
  for (const std::string& path : inputs) {
    std::vector<uint8_t> bytes;
    if (auto e = pto::obj::readInputFile(path, bytes)) {
      std::cerr << "pto-ld: error: " << *e << "\n";
      ok = false;
      continue;
    }
    auto r = pto::obj::readObject(bytes.data(), bytes.size());
    if (auto* err = std::get_if<std::string>(&r)) {
      std::cerr << "pto-ld: error: '" << path << "': " << *err << "\n";
      ok = false;
      continue;
    }
    objects.push_back({path, std::move(std::get<pto::obj::ObjectFile>(r))});
  }
  return ok;
}

/// The image (or its C++ export) to `output` and the map to `mapFile` when given.
bool writeLinked(const pto::link::LinkResult& res, const std::string& emit, std::string output,
                 const std::string& mapFile, const std::vector<std::string>& inputs) {
  auto bytes = pto::obj::writeImage(*res.image);
  if (auto* err = std::get_if<std::string>(&bytes)) {
    std::cerr << "pto-ld: error: cannot write the image: " << *err << "\n";
    return false;
  }
  if (emit != "image") { // the C++ export (docs/cpp-export.md) replaces the image as the output
    auto text = emit == "cpp" ? pto::cppexport::exportCpp(*res.image)
                              : pto::cppexport::exportCppHost(*res.image);
    if (auto* e = std::get_if<pto::cppexport::ExportError>(&text)) {
      std::cerr << "pto-ld: error: cannot export C++: " << e->message << "\n";
      return false;
    }
    const std::string& cpp = std::get<std::string>(text);
    bytes = std::vector<uint8_t>(cpp.begin(), cpp.end());
  }
  if (output.empty()) output = emit == "image" ? "a.img" : emit == "cpp" ? "a.cpp" : "a_host.cpp";
  std::string err;
  if (!mapFile.empty()) {
    if (pto::obj::sameFile(mapFile, output)) {
      std::cerr << "pto-ld: error: the map file '" << mapFile << "' is also the output\n";
      return false;
    }
    std::string map = pto::link::formatMap(res);
    if (!writeOutput(mapFile, map.data(), map.size(), inputs, err)) {
      std::cerr << "pto-ld: error: " << err << "\n";
      return false;
    }
  }
  auto& data = std::get<std::vector<uint8_t>>(bytes);
  if (!writeOutput(output, data.data(), data.size(), inputs, err)) {
    std::cerr << "pto-ld: error: " << err << "\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // A link is short-lived: keep what it frees for its own reuse instead of handing it back to the
  // kernel (large blocks are mmap'ed and unmapped by default) and faulting it in again; page
  // faults were a third of the CPU time of a large link.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  CLI::App app{
      "pto-ld: the PTO linker. Resolves symbols across objects, places every tile by liveness, "
      "assigns hardware event ids and writes a loadable image."};
  app.set_version_flag("--version", std::string("pto-ld (pto-toolchain) ") + PTO_VERSION);
  std::vector<std::string> inputs, entries;
  std::string output, mapFile, archText, emit = "image";
  app.add_option("inputs", inputs, "Object files")->required();
  app.add_option(
      "-o,--output", output,
      "Output file (default a.img, a.cpp for --emit=cpp, a_host.cpp for --emit=cpp-host)");
  app.add_option("--emit", emit,
                 "What to write: the image (default), its pto-isa C++ (cpp) or a host launcher for "
                 "it (cpp-host); "
                 "docs/cpp-export.md")
      ->check(CLI::IsMember({"image", "cpp", "cpp-host"}));
  app.add_option("--entry", entries,
                 "Export this kernel (repeatable; default: the pto.entry functions)");
  app.add_option("--Map,--map", mapFile,
                 "Write the placement map to this file (also -Map=<file>, -Map <file>)");
  bool autoSync = false, noAutoSync = false, allowRaces = false, verbose = false;
  auto* autoOpt = app.add_flag(
      "--auto-sync", autoSync,
      "Insert set_flag/wait_flag pairs and barriers in every function, also those with explicit "
      "sync (default: only in functions with no explicit sync; docs/sync.md)");
  app.add_flag("--no-auto-sync", noAutoSync,
               "Insert nothing: check every function, and report every unordered dependency "
               "between pipes as a race")
      ->excludes(autoOpt);
  app.add_flag("-v,--verbose", verbose,
               "Say which sync mode each function got and what was inserted");
  app.add_flag("--allow-races", allowRaces,
               "Report a race (a dependency between pipes that no event orders) as a warning");
  bool noMultiBuffer = false;
  app.add_flag("--no-multibuf", noMultiBuffer,
               "Do not rotate the tiles of pipelined loops over several copies in functions that "
               "get sync inserted (automatic multi-buffering, docs/sync.md section 5a)");
  bool ptoPositions = false, timePasses = false;
  app.add_flag("--time-passes", timePasses,
               "Print the wall time of each pass of the link to stderr (as LLVM's -time-passes)");
  app.add_flag("--pto-positions", ptoPositions,
               "Report .pto positions only, not the frontend's debug locations the objects carry");
  app.add_option("--arch", archText, "Require objects for this arch: a2a3 or a5")
      ->check(CLI::IsMember({"a2a3", "a2", "a3", "a5"}));
  // GNU ld spells it -Map=file: accept that form too.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-Map=", 0) == 0)
      a = "--Map=" + a.substr(5);
    else if (a == "-Map")
      a = "--Map";
    args.push_back(a);
  }
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  pto::link::LinkOptions opts;
  opts.entries = entries;
  opts.sync = autoSync     ? pto::link::SyncMode::Insert
              : noAutoSync ? pto::link::SyncMode::Check
                           : pto::link::SyncMode::Auto;
  opts.allowRaces = allowRaces;
  opts.ptoPositions = ptoPositions;
  opts.syncLog = !mapFile.empty();
  opts.multiBuffer = !noMultiBuffer;
  if (!archText.empty()) opts.arch = pto::isa::parseArch(archText);
  // --time-passes: reading the inputs and writing the output beside the passes of the link.
  using Clock = std::chrono::steady_clock;
  std::vector<pto::link::PassTime> times;
  auto timed = [&](std::string_view name, Clock::time_point since) {
    times.push_back({name, std::chrono::duration<double>(Clock::now() - since).count(), 1});
  };
  auto report = [&] {
    if (timePasses) std::cerr << pto::link::formatPassTimes(times);
  };
  Clock::time_point start = Clock::now();
  std::vector<pto::link::InputObject> objects;
  if (!readObjects(inputs, objects)) return 1;
  timed("read inputs", start);
  pto::link::LinkResult res = pto::link::link(objects, opts);
  times.insert(times.end(), res.passTimes.begin(), res.passTimes.end());
  start = Clock::now();
  for (const auto& d : res.diags)
    std::cerr << "pto-ld: " << pto::link::severity(d) << d.text << "\n";
  if (verbose && res.image)
    for (size_t f = 0; f < res.functionSync.size() && f < res.image->functions.size(); ++f)
      std::cerr << "pto-ld: @" << res.image->functions[f].name << ": "
                << res.functionSync[f].describe(res.syncMode) << "\n";
  if (verbose && res.image)
    for (const std::string& line : res.multiBufferLog)
      std::cerr << "pto-ld: " << line << "\n";
  if (!res.ok()) {
    report();
    return 1;
  }
  if (!writeLinked(res, emit, output, mapFile, inputs)) return 1;
  timed("write output", start);
  report();
  return 0;
}
