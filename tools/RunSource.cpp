// `pto-run kernel.pto`: the reference interpreter behind pto-run's options (tools/RunSource.h).
#include "tools/RunSource.h"

#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Numerics.h"
#include "ref/Interp.h"
#include "ref/Scalar.h"
#include "runtime/Npy.h"
#include "support/FileIO.h"
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

int fail(const std::string& msg) {
  fprintf(stderr, "%s\n", msg.c_str());
  return 1;
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
  std::string input, kernel, backend = "ref", arch, trace;
  std::vector<std::string> argSpecs, randomSpecs, zeroSpecs, outSpecs, prints;
  uint64_t seed = 0;
  Options opts;
  opts.maxOps = 10'000'000'000ull;
  unsigned threads = 0;
  bool quiet = false, profile = false;
  size_t profileTop = 20;
  app.add_option("input", input, "Source file (.pto)")->required();
  app.add_option("--kernel", kernel, "The kernel to run (may be omitted when the file has one)");
  app.add_option("--arg", argSpecs, "NAME=file.npy | NAME=file.bin:SHAPE:DTYPE | NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--random", randomSpecs, "NAME=SHAPE:DTYPE")->allow_extra_args(false);
  app.add_option("--zeros", zeroSpecs, "NAME=SHAPE:DTYPE")->allow_extra_args(false);
  app.add_option("--out", outSpecs, "NAME=file.npy")->allow_extra_args(false);
  app.add_option("--print", prints, "Print the buffer NAME after the run")->allow_extra_args(false);
  app.add_option("--seed", seed, "Seed of --random (default 0)");
  app.add_option("--blocks", opts.blocks, "Blocks to launch; they run one after another")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads,
                 "Accepted for compatibility (the interpreter runs one block at a time)");
  app.add_option("--max-instructions", opts.maxOps,
                 "Operations a block may run (default 1e10; 0 = no limit)");
  app.add_option(
      "--backend", backend,
      "ref (default) or cpu: both run the reference interpreter; npu needs a linked image");
  app.add_option("--trace", trace, "npu only (refused)");
  app.add_flag("--profile", profile, "npu only (refused)");
  app.add_option("--profile-top", profileTop, "npu only (refused)");
  app.add_option("--arch", arch,
                 "Verify for this arch (a2a3 or a5) instead of the module's pto.target_arch");
  app.add_flag("-q,--quiet", quiet, "No summary line on stderr");
  CLI11_PARSE(app, argc, argv);

  if (backend == "npu")
    return fail("pto-run: error: " + input +
                " is a source file: the npu model runs linked images only (pto-as, pto-ld); "
                "source files run on the reference interpreter (--backend ref)");
  if (backend != "ref" && backend != "cpu")
    return fail("pto-run: error: unknown backend '" + backend + "' (ref, cpu or npu)");
  if (!trace.empty() || profile || app.count("--profile-top"))
    return fail("pto-run: error: --trace and --profile need a linked image and --backend npu");
  std::optional<isa::Arch> archFlag;
  if (!arch.empty()) {
    archFlag = isa::parseArch(arch);
    if (!archFlag) return fail("pto-run: error: unknown arch '" + arch + "' (a2a3 or a5)");
  }
  std::string text;
  if (auto e = obj::readInputFile(input, text)) return fail("pto-run: error: " + *e);
  as::SourceFile src(input, std::move(text));
  std::ostringstream diagText;
  std::unique_ptr<ir::Module> mod;
  isa::Arch a = isa::Arch::A2A3;
  {
    as::DiagEngine diags(src, diagText);
    mod = as::parseModule(src, diags, archFlag);
    if (mod && !diags.failed()) {
      a = as::resolveArch(*mod, archFlag);
      as::verifyModule(*mod, a, diags);
    }
    if (!mod || diags.failed()) {
      diags.flush();
      fprintf(stderr, "%s", diagText.str().c_str());
      return 1;
    }
  }
  if (!kernel.empty() && kernel[0] == '@') kernel = kernel.substr(1);
  if (kernel.empty()) {
    auto names = kernelNames(*mod);
    if (names.size() != 1) {
      std::string list;
      for (auto& n : names)
        list += " @" + n;
      return fail("pto-run: error: " + input + " has " +
                  (names.empty() ? "no entry kernel" : "several kernels") +
                  "; choose one with --kernel:" + list);
    }
    kernel = names[0];
  }
  auto found = Kernel::find(*mod, a, kernel);
  if (!found) return fail(found.error().message);
  Kernel& K = found.value();
  rt::NamedSpecs args, randoms, zeros, outs;
  for (auto [specs, flag, out] : {std::tuple{&argSpecs, "--arg", &args},
                                  {&randomSpecs, "--random", &randoms},
                                  {&zeroSpecs, "--zeros", &zeros},
                                  {&outSpecs, "--out", &outs}})
    if (auto st = rt::splitNamedSpecs(*specs, flag, *out)) return fail("pto-run: " + st->message);
  for (std::string& p : prints)
    if (!p.empty() && p[0] == '%') p = p.substr(1);
  using Kind = rt::Module::ParamInfo::Kind;
  auto paramOf = [&](const std::string& name) -> const rt::Module::ParamInfo* {
    for (const auto& p : K.params())
      if (p.name == name) return &p;
    return nullptr;
  };
  auto noParam = [&](const std::string& name) {
    std::string list;
    for (const auto& p : K.params())
      list += " %" + p.name;
    return fail("pto-run: error: kernel @" + kernel + " has no parameter %" + name +
                " (parameters:" + list + ")");
  };
  std::map<std::string, Tensor> buffers;
  std::mt19937_64 rng(seed);
  for (auto& [name, spec] : randoms) {
    if (!paramOf(name)) return noParam(name);
    auto rs = rt::randomSpec(spec);
    if (!rs)
      return fail("pto-run: error: --random " + name + "=" + spec +
                  ": expected SHAPE:DTYPE[:LO:HI], e.g. 64x64:f32");
    buffers[name] = rt::randomTensor(Tensor::zeros(rs->dtype, rs->shape), rng, rs->range);
  }
  for (auto& [name, spec] : zeros) {
    if (!paramOf(name)) return noParam(name);
    auto st = rt::shapeAndType(spec);
    if (!st)
      return fail("pto-run: error: --zeros " + name + "=" + spec +
                  ": expected SHAPE:DTYPE, e.g. 64x64:f32");
    buffers[name] = Tensor::zeros(st->second, st->first);
  }
  for (auto& [name, spec] : args) {
    const auto* p = paramOf(name);
    if (!p) return noParam(name);
    if (p->kind != Kind::Pointer && p->kind != Kind::TensorView) {
      char* end = nullptr;
      rt::Status st;
      if (p->kind == Kind::Scalar && isa::isFloat(p->dtype)) {
        const double d = strtod(spec.c_str(), &end);
        if (spec.empty() || *end)
          return fail("pto-run: error: --arg " + name + ": '" + spec + "' is not a number");
        st = K.bindScalar(name, d);
      } else {
        const long long v = strtoll(spec.c_str(), &end, 0);
        if (spec.empty() || *end)
          return fail("pto-run: error: --arg " + name + ": '" + spec + "' is not an integer");
        st = K.bindScalar(name, static_cast<int64_t>(v));
      }
      if (st) return fail("pto-run: " + st->message);
      continue;
    }
    rt::Result<Tensor> t = rt::Error{};
    if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0) {
      t = rt::readNpy(spec);
    } else {
      auto c2 = spec.rfind(':');
      auto c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : spec.rfind(':', c2 - 1);
      if (c1 == std::string::npos)
        return fail("pto-run: error: --arg " + name + "=" + spec +
                    ": expected file.npy or file.bin:SHAPE:DTYPE");
      auto st = rt::shapeAndType(spec.substr(c1 + 1));
      if (!st) return fail("pto-run: error: --arg " + name + "=" + spec + ": bad SHAPE:DTYPE");
      t = rt::readRaw(spec.substr(0, c1), st->second, st->first);
    }
    if (!t) return fail(t.error().message);
    buffers[name] = std::move(t.value());
  }
  for (const auto& p : K.params()) {
    if ((p.kind != Kind::Pointer && p.kind != Kind::TensorView) || buffers.count(p.name)) continue;
    if (p.kind == Kind::TensorView)
      buffers[p.name] = Tensor::zeros(p.dtype, p.shape);
    else
      return fail("pto-run: error: pointer parameter %" + p.name + " of @" + kernel +
                  " needs --arg, --random or --zeros");
  }
  for (auto& [name, t] : buffers) {
    const auto* p = paramOf(name);
    if (!rt::retag(t, p->dtype))
      return fail("pto-run: error: parameter %" + name + " has element type " +
                  std::string(isa::spelling(p->dtype)) + " but the data is " +
                  std::string(isa::spelling(t.dtype)));
    if (auto st = K.bind(name, &t)) return fail("pto-run: " + st->message);
  }
  Stats stats;
  const rt::Status runError = K.run(opts, &stats);
  fputs(stats.output.c_str(), stdout); // TPRINT text, also when the run fails after it
  if (runError) {
    fflush(stdout);
    return fail(runError->message);
  }
  for (auto& [name, path] : outs) {
    auto it = buffers.find(name);
    if (it == buffers.end()) {
      if (!paramOf(name)) return noParam(name);
      return fail("pto-run: error: --out " + name + ": parameter %" + name + " is not a buffer");
    }
    if (auto st = rt::writeNpy(path, it->second, rt::inputFilesOf(input, args)))
      return fail("pto-run: " + st->message);
  }
  for (auto& name : prints) {
    auto it = buffers.find(name);
    if (it == buffers.end()) return noParam(name);
    rt::printTensor(name, it->second);
  }
  if (!quiet)
    fprintf(stderr,
            "pto-run: @%s: %u block(s), %llu tile ops, %llu scalar ops (reference interpreter)\n",
            kernel.c_str(), opts.blocks, static_cast<unsigned long long>(stats.tileOps),
            static_cast<unsigned long long>(stats.scalarOps));
  return 0;
}

} // namespace pto::ref
