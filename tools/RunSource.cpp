// `pto-run kernel.pto`: the reference interpreter behind pto-run's options (tools/RunSource.h).
#include "tools/RunSource.h"

#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Numerics.h"
#include "ref/Interp.h"
#include "ref/Scalar.h"
#include "runtime/Npy.h"
#include "support/Escape.h"
#include "support/FileIO.h"
#include "tools/NumberOption.h"
#include "tools/ToolArgs.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

namespace pto::ref {
namespace {

using rt::Tensor;

/// Reports `msg` on stderr, escaped for the terminal (names come from the image or the source);
/// a message of a library without its tool's name ("error: ...") gets it.
int fail(const std::string& msg) {
  const std::string text = support::visibleText(msg, true);
  fprintf(stderr, "%s%s\n", text.starts_with("error: ") ? "pto-run: " : "", text.c_str());
  return 1;
}

/// What the command line says.
struct SourceOptions {
  std::string input, kernel, backend = "ref", arch, trace;
  std::vector<std::string> argSpecs, randomSpecs, zeroSpecs, outSpecs, prints;
  uint64_t seed = 0;
  Options run;
  unsigned threads = 0;
  bool quiet = false, profile = false;
  size_t profileTop = 20;
};

void addOptions(CLI::App& app, SourceOptions& o) {
  o.run.maxOps = 10'000'000'000ull;
  app.add_option("input", o.input, "Source file (.pto)")->required();
  app.add_option("--kernel", o.kernel, "The kernel to run (may be omitted when the file has one)");
  app.add_option("--arg", o.argSpecs, "NAME=file.npy | NAME=file.bin:SHAPE:DTYPE | NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--random", o.randomSpecs, "NAME=SHAPE:DTYPE[:LO:HI]")->allow_extra_args(false);
  app.add_option("--zeros", o.zeroSpecs, "NAME=SHAPE:DTYPE")->allow_extra_args(false);
  app.add_option("--out", o.outSpecs, "NAME=file.npy")->allow_extra_args(false);
  app.add_option("--print", o.prints, "Print the buffer NAME after the run")
      ->allow_extra_args(false);
  tools::addIntegerOption(app, "--seed", o.seed, "Seed of --random (default 0)");
  tools::addIntegerOption(app, "--blocks", o.run.blocks,
                          "Blocks to launch; they run one after another", 1);
  tools::addIntegerOption(app, "--threads", o.threads,
                          "Accepted for compatibility (the interpreter runs one block at a time)");
  tools::addIntegerOption(app, "--max-instructions", o.run.maxOps,
                          "Operations a block may run (default 1e10; 0 = no limit)");
  app.add_option(
      "--backend", o.backend,
      "ref (default) or cpu: both run the reference interpreter; npu needs a linked image");
  app.add_option("--trace", o.trace, "npu only (refused)");
  app.add_flag("--profile", o.profile, "npu only (refused)");
  tools::addIntegerOption(app, "--profile-top", o.profileTop, "npu only (refused)");
  app.add_option("--arch", o.arch,
                 "Verify for this arch (a2a3 or a5) instead of the module's pto.target_arch");
  app.add_flag("-q,--quiet", o.quiet, "No summary line on stderr");
}

/// Parses and verifies the source as pto-as does; the diagnostics go to stderr.
std::unique_ptr<ir::Module> loadSource(const std::string& input, std::optional<isa::Arch> archFlag,
                                       isa::Arch& arch) {
  std::string text;
  if (auto e = obj::readInputFile(input, text)) {
    fail("pto-run: error: " + *e);
    return nullptr;
  }
  as::SourceFile src(input, std::move(text));
  std::ostringstream diagText;
  as::DiagEngine diags(src, diagText);
  std::unique_ptr<ir::Module> mod = as::parseModule(src, diags, archFlag);
  if (mod && !diags.failed()) {
    arch = as::resolveArch(*mod, archFlag);
    as::verifyModule(*mod, arch, diags);
  }
  if (!mod || diags.failed()) {
    diags.flush();
    fprintf(stderr, "%s", diagText.str().c_str());
    return nullptr;
  }
  return mod;
}

/// The kernel to run: --kernel, or the module's only kernel.
rt::Status chooseKernel(const ir::Module& mod, SourceOptions& o) {
  if (!o.kernel.empty() && o.kernel[0] == '@') o.kernel = o.kernel.substr(1);
  if (!o.kernel.empty()) return std::nullopt;
  auto names = kernelNames(mod);
  if (names.size() != 1) {
    std::string list;
    for (auto& n : names)
      list += " @" + n;
    return rt::Error{"error: " + o.input + " has " +
                     (names.empty() ? "no entry kernel" : "several kernels") +
                     "; choose one with --kernel:" + list};
  }
  o.kernel = names[0];
  return std::nullopt;
}

/// Binds every buffer: those given, tensor views not given as zeros; a pointer not given is an
/// error.
rt::Status bindBuffers(Kernel& K, const std::string& kernel, rt::GivenArgs& given) {
  using Kind = rt::Module::ParamInfo::Kind;
  for (const auto& p : K.params()) {
    if ((p.kind != Kind::Pointer && p.kind != Kind::TensorView) || given.buffers.count(p.name))
      continue;
    if (p.kind == Kind::Pointer)
      return rt::Error{"error: pointer parameter %" + p.name + " of @" + kernel +
                       " needs --arg, --random or --zeros"};
    auto x = rt::makeTensor(p.dtype, p.shape, "parameter %" + p.name);
    if (!x) return x.error();
    given.buffers[p.name] = std::move(x.value());
  }
  for (auto& [name, t] : given.buffers) {
    const std::string& key = name; // a lambda cannot capture a structured binding (clang 14)
    const auto& p =
        *std::find_if(K.params().begin(), K.params().end(), [&](auto& q) { return q.name == key; });
    if (!rt::retag(t, p.dtype))
      return rt::Error{"error: parameter %" + name + " has element type " +
                       std::string(isa::spelling(p.dtype)) + " but the data is " +
                       std::string(isa::spelling(t.dtype))};
    if (auto st = K.bind(name, &t)) return st;
  }
  return std::nullopt;
}

} // namespace

bool isSourceInput(int argc, char** argv) {
  static const std::set<std::string> kFlags = {"-q", "--quiet", "--profile",
                                               "-h", "--help",  "--version"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 1 && a[0] == '-') {
      if (a.find('=') == std::string::npos && !kFlags.count(a)) ++i; // the option's value
      continue;
    }
    std::ifstream in(a, std::ios::binary);
    if (!in) return false; // pto-run reports it
    char magic[4] = {};
    in.read(magic, 4);
    return !(in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
             magic[3] == 'F');
  }
  return false;
}

int runSourceMain(int argc, char** argv) {
  CLI::App app{"pto-run kernel.pto: run a source file on the reference interpreter of the Kernel "
               "IR (no assembling or "
               "linking; docs/runtime.md)."};
  SourceOptions o;
  addOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  if (o.backend == "npu")
    return fail("pto-run: error: " + o.input +
                " is a source file: the npu model runs linked images only (pto-as, pto-ld); "
                "source files run on the reference interpreter (--backend ref)");
  if (o.backend != "ref" && o.backend != "cpu")
    return fail("pto-run: error: unknown backend '" + o.backend + "' (ref, cpu or npu)");
  if (app.count("--trace") || o.profile || app.count("--profile-top"))
    return fail("pto-run: error: --trace and --profile need a linked image and --backend npu");
  std::optional<isa::Arch> archFlag;
  if (!o.arch.empty()) {
    archFlag = isa::parseArch(o.arch);
    if (!archFlag) return fail("pto-run: error: unknown arch '" + o.arch + "' (a2a3 or a5)");
  }
  rt::NamedSpecs args, randoms, zeros, outs;
  for (auto [specs, flag, out] : {std::tuple{&o.argSpecs, "--arg", &args},
                                  {&o.randomSpecs, "--random", &randoms},
                                  {&o.zeroSpecs, "--zeros", &zeros},
                                  {&o.outSpecs, "--out", &outs}})
    if (auto st = rt::splitNamedSpecs(*specs, flag, *out)) return fail("pto-run: " + st->message);
  for (std::string& p : o.prints)
    if (!p.empty() && p[0] == '%') p = p.substr(1);
  isa::Arch a = isa::Arch::A2A3;
  std::unique_ptr<ir::Module> mod = loadSource(o.input, archFlag, a);
  if (!mod) return 1;
  if (auto st = chooseKernel(*mod, o)) return fail("pto-run: " + st->message);
  auto found = Kernel::find(*mod, a, o.kernel);
  if (!found) return fail(found.error().message);
  Kernel& K = found.value();
  rt::OutputPlan plan;
  if (auto st = rt::planOutputs(o.kernel, K.params(), outs, std::nullopt, std::nullopt, plan))
    return fail("pto-run: " + st->message);
  if (auto st = rt::checkPrints(o.kernel, K.params(), o.prints))
    return fail("pto-run: " + st->message);
  std::mt19937_64 rng(o.seed);
  rt::GivenArgs given;
  auto bindBits = [&](const std::string& n, uint64_t bits) { return K.bindScalarBits(n, bits); };
  if (auto st = rt::readGivenArgs(o.kernel, K.params(), args, randoms, zeros, rng, bindBits, given))
    return fail("pto-run: " + st->message);
  if (auto st = bindBuffers(K, o.kernel, given)) return fail("pto-run: " + st->message);
  Stats stats;
  const rt::Status runError = K.run(o.run, &stats);
  fputs(stats.output.c_str(), stdout); // TPRINT text, also when the run fails after it
  if (runError) {
    fflush(stdout);
    return fail(runError->message);
  }
  for (auto& [name, path] : plan.npy)
    if (auto st = rt::writeNpy(path, given.buffers.at(name), rt::inputFilesOf(o.input, args)))
      return fail("pto-run: " + st->message);
  for (auto& name : o.prints)
    rt::printTensor(name, given.buffers.at(name));
  if (auto e = obj::flushStandardOutput()) return fail("pto-run: error: " + *e);
  if (!o.quiet)
    fprintf(stderr,
            "pto-run: @%s: %u block(s), %llu tile ops, %llu scalar ops (reference interpreter)\n",
            o.kernel.c_str(), o.run.blocks, static_cast<unsigned long long>(stats.tileOps),
            static_cast<unsigned long long>(stats.scalarOps));
  return 0;
}

} // namespace pto::ref
