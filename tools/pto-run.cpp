// pto-run: load a linked PTO image and run one kernel on the cpu backend or the npu model
// (docs/runtime.md; `pto-run --help` lists the options).
#include "isa/Numerics.h"
#include "runtime/Npy.h"
#include "runtime/Runtime.h"
#include "runtime/npu/Report.h"
#include "support/FileIO.h"
#include "tools/RunSource.h"
#include "tools/ToolArgs.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace pto;
using namespace pto::rt;

namespace {

int fail(const std::string& msg) {
  fprintf(stderr, "%s\n", msg.c_str());
  return 1;
}

std::string typeText(const Module::ParamInfo& p) {
  std::string t(isa::spelling(p.dtype));
  switch (p.kind) {
  case Module::ParamInfo::Kind::Pointer:
    return "ptr<" + t + ">";
  case Module::ParamInfo::Kind::Index:
    return "index";
  case Module::ParamInfo::Kind::Scalar:
    return t;
  case Module::ParamInfo::Kind::TensorView: {
    std::string shape;
    for (int64_t d : p.shape)
      shape += std::to_string(d) + "x";
    return "tensor_view<" + shape + t + ">";
  }
  }
  return t;
}

/// --list: every entry kernel's parameters with their type and extent.
void listKernels(const Module& mod, const std::vector<std::string>& names) {
  for (const std::string& k : names) {
    printf("@%s\n", k.c_str());
    for (const auto& p : *mod.params(k)) {
      std::string what;
      if (p.kind == Module::ParamInfo::Kind::Pointer) {
        auto ext = mod.pointerExtent(k, p.name);
        what = ext && !ext->expr.empty() ? "extent " + ext->expr + " elements" : "extent unknown";
        if (ext && ext->indexValues) what += ", index values";
      } else if (p.kind == Module::ParamInfo::Kind::TensorView) {
        int64_t n = 1;
        for (int64_t d : p.shape)
          n *= d;
        what = "extent " + std::to_string(n) + " elements";
      } else {
        what = "scalar";
      }
      printf("  %%%-12s %-22s %s\n", p.name.c_str(), typeText(p).c_str(), what.c_str());
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  // A source file (not an ELF image) runs on the reference interpreter of the Kernel IR.
  if (ref::isSourceInput(argc, argv)) return ref::runSourceMain(argc, argv);
  CLI::App app{
      "pto-run: load a linked PTO image (pto-ld output) and run one kernel on the cpu backend "
      "(exact PTO semantics) or the npu model (pipes, events, cycles, races, deadlocks). "
      "A source file (pto-run kernel.pto ...) runs without assembling or linking, on the reference "
      "interpreter of the Kernel IR, with the same options (--backend npu excepted). "
      "docs/runtime.md, docs/npu-model.md."};
  app.set_version_flag("--version", std::string("pto-run (pto-toolchain) ") + PTO_VERSION);
  std::string image, kernel, backend = "cpu", arch, tracePath;
  std::vector<std::string> argSpecs, randomSpecs, zeroSpecs, outSpecs, prints;
  uint64_t seed = 0;
  RunOptions opts;
  opts.maxInstructions = 10'000'000'000ull; // per block: minutes of work; ends endless loops
  bool quiet = false;
  app.add_option("image", image, "Linked image, or a .pto source file (reference interpreter)")
      ->required();
  app.add_option("--kernel", kernel,
                 "The entry kernel to run (may be omitted when the image has one)");
  app.add_option("--arg", argSpecs,
                 "NAME=file.npy | NAME=file.bin:SHAPE:DTYPE | NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--random", randomSpecs,
                 "NAME=SHAPE:DTYPE[:LO:HI]: a buffer of uniform random values in [LO, HI) (default "
                 "[-1, 1) for floats, "
                 "[-8, 8) / [0, 16) for integers) (repeatable)")
      ->allow_extra_args(false);
  std::string autoArgs, outDir;
  bool list = false;
  app.add_flag("--auto-args{random}", autoArgs,
               "Create every parameter not given: buffers sized from the extents the linker "
               "recorded (--list), random "
               "(default) or zeros (--auto-args=zeros); buffers whose values are used as indices "
               "get zeros; scalars get 0")
      ->check(CLI::IsMember({"random", "zeros"}));
  app.add_flag("--list", list,
               "Print every entry kernel's parameters with type and extent, and exit");
  app.add_option("--out-dir", outDir, "Write every buffer parameter after the run as DIR/NAME.npy");
  app.add_option("--zeros", zeroSpecs, "NAME=SHAPE:DTYPE: a buffer of zeros (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--out", outSpecs, "NAME=file.npy: write the buffer after the run (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--print", prints, "Print the buffer NAME after the run (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--seed", seed, "Seed of --random (default 0)");
  app.add_option("--blocks", opts.blocks,
                 "Blocks to launch (get_block_num); each is one simulated AI core")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", opts.threads, "Worker threads (default: hardware threads)");
  app.add_option("--max-instructions", opts.maxInstructions,
                 "Instructions a block may run before it is stopped as an endless loop (default "
                 "1e10; 0 = no limit)");
  app.add_option("--backend", backend, "cpu (default) or npu");
  app.add_option("--trace", tracePath,
                 "npu: write a Chrome trace-event file (open it in Perfetto)");
  bool profile = false;
  size_t profileTop = 20;
  app.add_flag("--profile", profile,
               "npu: print the costliest ops and the longest stalls, with their source lines");
  app.add_option("--profile-top", profileTop, "npu: how many rows --profile prints (default 20)")
      ->check(CLI::PositiveNumber);
  app.add_option("--arch", arch, "Require the image to be linked for this arch: a2a3 or a5");
  app.add_flag("-q,--quiet", quiet, "No summary line on stderr");
  CLI11_PARSE(app, argc, argv);

  if (app.count("--profile-top")) profile = true;
  if (!kernel.empty() && kernel[0] == '@') kernel = kernel.substr(1);
  for (std::string& p : prints)
    if (!p.empty() && p[0] == '%') p = p.substr(1);
  NamedSpecs args, randoms, zeros, outs;
  for (auto [specs, flag, out] : {std::tuple{&argSpecs, "--arg", &args},
                                  {&randomSpecs, "--random", &randoms},
                                  {&zeroSpecs, "--zeros", &zeros},
                                  {&outSpecs, "--out", &outs}})
    if (auto st = splitNamedSpecs(*specs, flag, *out)) return fail("pto-run: " + st->message);
  if (backend != "cpu" && backend != "npu")
    return fail("pto-run: error: unknown backend '" + backend + "' (cpu or npu)");
  opts.backend = backend == "npu" ? Backend::Npu : Backend::Cpu;
  if ((!tracePath.empty() || profile) && opts.backend != Backend::Npu)
    return fail("pto-run: error: --trace and --profile need --backend npu");
  opts.recordOps = !tracePath.empty() || profile;
  auto mod = Module::open(image);
  if (!mod) return fail(mod.error().message);
  if (!arch.empty()) {
    auto want = isa::parseArch(arch);
    if (!want) return fail("pto-run: error: unknown arch '" + arch + "' (a2a3 or a5)");
    if (*want != mod->arch())
      return fail("pto-run: error: '" + image + "' is linked for " +
                  std::string(isa::spelling(mod->arch())) + ", not " + arch);
  }
  if (list) {
    auto names = mod->kernelNames();
    if (!kernel.empty()) {
      if (!mod->params(kernel)) return fail("pto-run: error: no entry kernel @" + kernel);
      names = {kernel};
    }
    listKernels(mod.value(), names);
    return 0;
  }
  if (kernel.empty()) {
    auto names = mod->kernelNames();
    if (names.empty())
      return fail("pto-run: error: '" + image +
                  "' has no entry kernels (mark one pto.entry or link with --entry)");
    if (names.size() != 1) {
      std::string list;
      for (auto& n : names)
        list += " @" + n;
      return fail("pto-run: error: the image has several kernels; choose one with --kernel:" +
                  list);
    }
    kernel = names[0];
  }
  auto launch = mod->launch(kernel);
  if (!launch) return fail(launch.error().message);
  Launch& L = launch.value();
  const auto& params = L.params();
  std::map<std::string, Tensor> buffers; // by parameter name
  std::mt19937_64 rng(seed);
  auto paramOf = [&](const std::string& name) -> const Module::ParamInfo* {
    for (const auto& p : params)
      if (p.name == name) return &p;
    return nullptr;
  };
  auto noParam = [&](const std::string& name) {
    std::string list;
    for (const auto& p : params)
      list += " %" + p.name;
    return fail("pto-run: error: kernel @" + kernel + " has no parameter %" + name +
                " (parameters:" + list + ")");
  };
  for (auto& [name, spec] : randoms) {
    const auto* p = paramOf(name);
    if (!p) return noParam(name);
    auto st = randomSpec(spec);
    if (!st)
      return fail("pto-run: error: --random " + name + "=" + spec +
                  ": expected SHAPE:DTYPE or SHAPE:DTYPE:LO:HI with LO < HI, e.g. 64x64:f32 or "
                  "64:i32:0:64");
    auto x = makeTensor(st->dtype, st->shape, "--random " + name);
    if (!x) return fail("pto-run: " + x.error().message);
    buffers[name] = randomTensor(std::move(x.value()), rng, st->range);
  }
  for (auto& [name, spec] : zeros) {
    if (!paramOf(name)) return noParam(name);
    auto st = shapeAndType(spec);
    if (!st)
      return fail("pto-run: error: --zeros " + name + "=" + spec +
                  ": expected SHAPE:DTYPE, e.g. 64x64:f32");
    auto x = makeTensor(st->second, st->first, "--zeros " + name);
    if (!x) return fail("pto-run: " + x.error().message);
    buffers[name] = std::move(x.value());
  }
  std::set<std::string> scalarsGiven;
  std::vector<std::pair<std::string, int64_t>> intScalars; // for the extents
  for (auto& [name, spec] : args) {
    const auto* p = paramOf(name);
    if (!p) return noParam(name);
    bool isBuffer = p->kind == Module::ParamInfo::Kind::Pointer ||
                    p->kind == Module::ParamInfo::Kind::TensorView;
    if (!isBuffer) {
      Status st;
      char* end = nullptr;
      if (isa::isFloat(p->dtype)) {
        double d = strtod(spec.c_str(), &end);
        if (spec.empty() || *end)
          return fail("pto-run: error: --arg " + name + ": '" + spec + "' is not a number");
        st = L.bindScalar(name, d);
      } else {
        long long v = strtoll(spec.c_str(), &end, 0);
        if (spec.empty() || *end)
          return fail("pto-run: error: --arg " + name + ": '" + spec + "' is not an integer");
        st = L.bindScalar(name, static_cast<int64_t>(v));
        intScalars.push_back({name, static_cast<int64_t>(v)});
      }
      if (st) return fail("pto-run: " + st->message);
      scalarsGiven.insert(name);
      continue;
    }
    rt::Result<Tensor> t = Error{};
    if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0) {
      t = readNpy(spec);
    } else {
      // file.bin:SHAPE:DTYPE
      auto c2 = spec.rfind(':');
      auto c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : spec.rfind(':', c2 - 1);
      if (c1 == std::string::npos)
        return fail("pto-run: error: --arg " + name + "=" + spec +
                    ": expected file.npy or file.bin:SHAPE:DTYPE");
      auto st = shapeAndType(spec.substr(c1 + 1));
      if (!st) return fail("pto-run: error: --arg " + name + "=" + spec + ": bad SHAPE:DTYPE");
      t = readRaw(spec.substr(0, c1), st->second, st->first);
    }
    if (!t) return fail(t.error().message);
    buffers[name] = std::move(t.value());
  }
  // Parameters not given. Scalars: 0 with --auto-args. Tensor views: zeros of their static
  // shape. Pointers: with --auto-args, a 1-D buffer of the recorded extent. Everything still
  // missing is reported in one error.
  std::vector<std::string> missing;
  for (const auto& p : params) {
    if (p.kind == Module::ParamInfo::Kind::Scalar || p.kind == Module::ParamInfo::Kind::Index) {
      if (scalarsGiven.count(p.name)) continue;
      if (autoArgs.empty()) {
        missing.push_back("%" + p.name + " (" + typeText(p) + ": --arg " + p.name + "=VALUE)");
        continue;
      }
      if (auto st = L.bindScalar(p.name, int64_t{0})) return fail("pto-run: " + st->message);
      if (!isa::isFloat(p.dtype)) intScalars.push_back({p.name, 0});
    }
  }
  for (const auto& p : params) {
    bool isBuffer =
        p.kind == Module::ParamInfo::Kind::Pointer || p.kind == Module::ParamInfo::Kind::TensorView;
    if (!isBuffer || buffers.count(p.name)) continue;
    if (p.kind == Module::ParamInfo::Kind::TensorView) {
      auto x = makeTensor(p.dtype, p.shape, "parameter %" + p.name);
      if (!x) return fail("pto-run: " + x.error().message);
      buffers[p.name] =
          autoArgs == "random" ? randomTensor(std::move(x.value()), rng) : std::move(x.value());
      continue;
    }
    auto n = mod->pointerElements(kernel, p.name, intScalars);
    if (autoArgs.empty() || !n) {
      std::string why = n ? std::to_string(n.value()) + " elements" : n.error().message;
      missing.push_back("%" + p.name + " (" + typeText(p) + ", " + why + ")");
      continue;
    }
    auto ext = mod->pointerExtent(kernel, p.name);
    const int64_t elems = std::max<int64_t>(n.value(), 1);
    auto x = makeTensor(p.dtype, {elems}, "parameter %" + p.name);
    if (!x) return fail("pto-run: " + x.error().message);
    if (autoArgs == "zeros" || (ext && ext->indexValues))
      buffers[p.name] = std::move(x.value());
    else
      buffers[p.name] = randomTensor(std::move(x.value()), rng);
  }
  if (!missing.empty()) {
    std::string msg = "pto-run: error: @" + kernel + " needs " + std::to_string(missing.size()) +
                      " more parameter(s):";
    for (const std::string& m : missing)
      msg += "\n  " + m;
    return fail(msg + "\n(give buffers with --arg, --random or --zeros, or let --auto-args create "
                      "them; --list shows the extents)");
  }
  for (auto& [name, t] : buffers) {
    const auto* p = paramOf(name);
    if (auto st = adoptDType(t, p->dtype, name)) return fail("pto-run: " + st->message);
    if (auto st = L.bind(name, &t)) return fail("pto-run: " + st->message);
  }
  const std::vector<std::string> inputFiles = inputFilesOf(image, args);
  RunStats stats;
  const Status runError = L.run(opts, &stats);
  // The npu model's warnings, profile and trace are written even when the run fails (a race or
  // a deadlock): that is when they help most.
  if (opts.backend == Backend::Npu) {
    std::set<std::string> warned; // each block reports its own
    for (const NpuBlock& b : stats.npu)
      for (const std::string& w : b.warnings)
        if (warned.insert(w).second) fprintf(stderr, "%s\n", w.c_str());
    if (!tracePath.empty()) {
      const std::string json = npu::chromeTrace(mod.value(), stats);
      if (auto err = obj::writeOutputFile(tracePath, json, inputFiles))
        return fail("pto-run: error: " + *err);
    }
  }
  fputs(stats.output.c_str(), stdout); // TPRINT text, also when the run fails after it
  if (runError) {
    if (profile) printf("%s", npu::profile(mod.value(), stats, profileTop).c_str());
    fflush(stdout);
    return fail(runError->message);
  }
  for (auto& [name, path] : outs) {
    auto it = buffers.find(name);
    if (it == buffers.end()) {
      if (!paramOf(name)) return noParam(name);
      return fail("pto-run: error: --out " + name + ": parameter %" + name + " is not a buffer");
    }
    if (auto st = writeNpy(path, it->second, inputFiles)) return fail("pto-run: " + st->message);
  }
  if (!outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec) return fail("pto-run: error: --out-dir " + outDir + ": " + ec.message());
    for (auto& [name, t] : buffers)
      if (auto st =
              writeNpy((std::filesystem::path(outDir) / (name + ".npy")).string(), t, inputFiles))
        return fail("pto-run: " + st->message);
  }
  for (auto& name : prints) {
    auto it = buffers.find(name);
    if (it == buffers.end()) return noParam(name);
    printTensor(name, it->second);
  }
  if (opts.backend == Backend::Npu) {
    printf("%s", npu::summary(mod.value(), stats).c_str());
    if (profile) printf("%s", npu::profile(mod.value(), stats, profileTop).c_str());
  }
  if (!quiet)
    fprintf(stderr, "pto-run: @%s: %u block(s), %llu tile ops, %llu scalar ops, %.3f ms (%s)\n",
            kernel.c_str(), opts.blocks, static_cast<unsigned long long>(stats.tileOps),
            static_cast<unsigned long long>(stats.scalarOps), stats.seconds * 1e3, backend.c_str());
  return 0;
}
