// pto-run: load a linked PTO image and run one kernel on the cpu backend or the npu model
// (docs/runtime.md; `pto-run --help` lists the options).
#include "isa/Numerics.h"
#include "runtime/Args.h"
#include "runtime/Comm.h"
#include "runtime/Npy.h"
#include "runtime/Runtime.h"
#include "runtime/npu/Report.h"
#include "support/Escape.h"
#include "support/FileIO.h"
#include "tools/NumberOption.h"
#include "tools/RunSource.h"
#include "tools/ToolArgs.h"
#ifdef PTO_HAVE_MPI
#include "runtime/MpiWorld.h"
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace pto;
using namespace pto::rt;

namespace {

/// Reports `msg` on stderr, escaped for the terminal (names come from the image or the source);
/// a message of a library without its tool's name ("error: ...") gets it.
int fail(const std::string& msg) {
  const std::string text = support::visibleText(msg, true);
  fprintf(stderr, "%s%s\n", text.starts_with("error: ") ? "pto-run: " : "", text.c_str());
  return 1;
}

/// --list: every entry kernel's parameters with their type and extent.
void listKernels(const Module& mod, const std::vector<std::string>& names) {
  for (const std::string& k : names) {
    printf("@%s\n", support::visibleText(k).c_str());
    for (const ParamDescription& d : describeParams(mod, k))
      printf("  %%%-12s %-22s %s\n", support::visibleText(d.param->name).c_str(), d.type.c_str(),
             d.extent.c_str());
  }
}

/// What the command line says.
struct Options {
  std::string image, kernel, backend = "cpu", arch, tracePath, autoArgs, outDir;
  std::vector<std::string> argSpecs, randomSpecs, zeroSpecs, outSpecs, prints;
  uint64_t seed = 0;
  uint32_t ranks = 0; // --ranks N: a multi-device run (docs/multi-device.md); 0 = one device
  RunOptions run;
  bool quiet = false, list = false, profile = false;
  size_t profileTop = 20;
  NamedSpecs args, randoms, zeros, outs; // the NAME=VALUE options split
};

void addOptions(CLI::App& app, Options& o) {
  o.run.maxInstructions = 10'000'000'000ull; // per block: minutes of work; ends endless loops
  app.set_version_flag("--version", std::string("pto-run (pto-toolchain) ") + PTO_VERSION);
  app.add_option("image", o.image, "Linked image, or a .pto source file (reference interpreter)")
      ->required();
  app.add_option("--kernel", o.kernel,
                 "The entry kernel to run (may be omitted when the image has one)");
  app.add_option("--arg", o.argSpecs,
                 "NAME=file.npy | NAME=file.bin:SHAPE:DTYPE | NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--random", o.randomSpecs,
                 "NAME=SHAPE:DTYPE[:LO:HI]: a buffer of uniform random values in [LO, HI) (default "
                 "[-1, 1) for floats, "
                 "[-8, 8) / [0, 16) for integers) (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--auto-args{random}", o.autoArgs,
               "Create every parameter not given: buffers sized from the extents the linker "
               "recorded (--list), random "
               "(default) or zeros (--auto-args=zeros); buffers whose values are used as indices "
               "get zeros; scalars get 0")
      ->check(CLI::IsMember({"random", "zeros"}));
  app.add_flag("--list", o.list,
               "Print every entry kernel's parameters with type and extent, and exit");
  app.add_option("--out-dir", o.outDir,
                 "Write every buffer parameter after the run as DIR/NAME.npy (NAME a safe file "
                 "name: letters, digits, '_', '.', '+', '-')");
  app.add_option("--zeros", o.zeroSpecs, "NAME=SHAPE:DTYPE: a buffer of zeros (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--out", o.outSpecs, "NAME=file.npy: write the buffer after the run (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--print", o.prints, "Print the buffer NAME after the run (repeatable)")
      ->allow_extra_args(false);
  tools::addIntegerOption(app, "--seed", o.seed, "Seed of --random (default 0)");
  tools::addIntegerOption(app, "--blocks", o.run.blocks,
                          "Blocks to launch (get_block_num); each is one simulated AI core", 1);
  tools::addIntegerOption(app, "--ranks", o.ranks,
                          "Run on N simulated devices in this process, one thread each, with "
                          "symmetric windows (docs/multi-device.md); '{rank}' in --arg and --out "
                          "file names is the rank, --out-dir writes DIR/rankR/",
                          1, kMaxRanks);
  tools::addIntegerOption(app, "--threads", o.run.threads,
                          "Worker threads (default: hardware threads)");
  tools::addIntegerOption(app, "--max-instructions", o.run.maxInstructions,
                          "Instructions a block may run before it is stopped as an endless loop "
                          "(default 1e10; 0 = no limit)");
  app.add_option("--backend", o.backend, "cpu (default) or npu");
  app.add_option("--trace", o.tracePath,
                 "npu: write a Chrome trace-event file (open it in Perfetto)");
  app.add_flag("--profile", o.profile,
               "npu: print the costliest ops and the longest stalls, with their source lines");
  tools::addIntegerOption(app, "--profile-top", o.profileTop,
                          "npu: how many rows --profile prints (default 20)", 1);
  app.add_option("--arch", o.arch, "Require the image to be linked for this arch: a2a3 or a5");
  app.add_flag("-q,--quiet", o.quiet, "No summary line on stderr");
}

/// The options that need no image: their syntax and how they combine.
Status checkOptions(const CLI::App& app, Options& o) {
  if (app.count("--profile-top")) o.profile = true;
  if (!o.kernel.empty() && o.kernel[0] == '@') o.kernel = o.kernel.substr(1);
  for (std::string& p : o.prints)
    if (!p.empty() && p[0] == '%') p = p.substr(1);
  for (auto [specs, flag, out] : {std::tuple{&o.argSpecs, "--arg", &o.args},
                                  {&o.randomSpecs, "--random", &o.randoms},
                                  {&o.zeroSpecs, "--zeros", &o.zeros},
                                  {&o.outSpecs, "--out", &o.outs}})
    if (auto st = splitNamedSpecs(*specs, flag, *out)) return st;
  if (o.backend != "cpu" && o.backend != "npu")
    return Error{"error: unknown backend '" + o.backend + "' (cpu or npu)"};
  o.run.backend = o.backend == "npu" ? Backend::Npu : Backend::Cpu;
  if ((app.count("--trace") || o.profile) && o.run.backend != Backend::Npu)
    return Error{"error: --trace and --profile need --backend npu"};
  o.run.recordOps = app.count("--trace") || o.profile;
  return std::nullopt;
}

/// The kernel to run: --kernel, or the image's only entry kernel.
Status chooseKernel(const Module& mod, Options& o) {
  if (!o.kernel.empty()) return std::nullopt;
  auto names = mod.kernelNames();
  if (names.empty())
    return Error{"error: '" + o.image +
                 "' has no entry kernels (mark one pto.entry or link with --entry)"};
  if (names.size() != 1) {
    std::string list;
    for (auto& n : names)
      list += " @" + support::visibleText(n);
    return Error{"error: the image has several kernels; choose one with --kernel:" + list};
  }
  o.kernel = names[0];
  return std::nullopt;
}

/// Parameters not given (runtime/Args.h): with --auto-args, as it says; everything still
/// missing is reported in one error.
Status createMissing(const Module& mod, Launch& L, const Options& o, std::mt19937_64& rng,
                     GivenArgs& given) {
  const AutoArgs mode = o.autoArgs.empty()      ? AutoArgs::None
                        : o.autoArgs == "zeros" ? AutoArgs::Zeros
                                                : AutoArgs::Random;
  auto missing = createMissingArgs(mod, L, o.kernel, mode, rng, given);
  if (!missing) return missing.error();
  if (missing->empty()) return std::nullopt;
  std::string msg =
      "error: @" + o.kernel + " needs " + std::to_string(missing->size()) + " more parameter(s):";
  for (const MissingParam& m : *missing) {
    const auto& p = *m.param;
    if (p.kind == Module::ParamInfo::Kind::Scalar || p.kind == Module::ParamInfo::Kind::Index)
      msg += "\n  %" + p.name + " (" + paramTypeText(p) + ": --arg " + p.name + "=VALUE)";
    else
      msg += "\n  %" + p.name + " (" + paramTypeText(p) + ", " + m.why + ")";
  }
  return Error{msg + "\n(give buffers with --arg, --random or --zeros, or let --auto-args create "
                     "them; --list shows the extents)"};
}

/// The run's results: the npu warnings and trace (also after a failed run), TPRINT text, the
/// outputs, --print, the npu summary and profile, and the summary line.
int report(const Module& mod, const Options& o, const OutputPlan& plan, GivenArgs& given,
           const RunStats& stats, const Status& runError, const std::vector<std::string>& inputs) {
  if (o.run.backend == Backend::Npu) {
    std::set<std::string> warned; // each block reports its own
    for (const NpuBlock& b : stats.npu)
      for (const std::string& w : b.warnings)
        if (warned.insert(w).second) fprintf(stderr, "%s\n", w.c_str());
    if (!plan.trace.empty())
      if (auto err = obj::writeOutputFile(plan.trace, npu::chromeTrace(mod, stats), inputs))
        return fail("pto-run: error: " + *err);
  }
  fputs(stats.output.c_str(), stdout); // TPRINT text, also when the run fails after it
  if (runError) {
    if (o.profile) printf("%s", npu::profile(mod, stats, o.profileTop).c_str());
    fflush(stdout);
    return fail(runError->message);
  }
  for (auto& [name, path] : plan.npy)
    if (auto st = writeNpy(path, given.buffers.at(name), inputs))
      return fail("pto-run: " + st->message);
  for (auto& name : o.prints)
    printTensor(name, given.buffers.at(name));
  if (o.run.backend == Backend::Npu) {
    printf("%s", npu::summary(mod, stats).c_str());
    if (o.profile) printf("%s", npu::profile(mod, stats, o.profileTop).c_str());
  }
  if (auto e = obj::flushStandardOutput()) return fail("pto-run: error: " + *e);
  if (!o.quiet)
    fprintf(stderr, "pto-run: @%s: %u block(s), %llu tile ops, %llu scalar ops, %.3f ms (%s)\n",
            support::visibleText(o.kernel).c_str(), o.run.blocks,
            static_cast<unsigned long long>(stats.tileOps),
            static_cast<unsigned long long>(stats.scalarOps), stats.seconds * 1e3,
            o.backend.c_str());
  return 0;
}

/// --list: the kernels' parameters, or the one --kernel names.
int listMain(const Module& mod, const Options& o) {
  auto names = mod.kernelNames();
  if (!o.kernel.empty()) {
    if (!mod.params(o.kernel))
      return fail("pto-run: error: no entry kernel @" + support::visibleText(o.kernel));
    names = {o.kernel};
  }
  listKernels(mod, names);
  if (auto e = obj::flushStandardOutput()) return fail("pto-run: error: " + *e);
  return 0;
}

/// One launch of the kernel: on one device, or one rank of a --ranks run.
struct RankRun {
  std::optional<Launch> launch;
  GivenArgs given;
  OutputPlan plan;
  RunStats stats;
  Status error;
};

/// `text` with every "{rank}" replaced by the rank (per-rank input and output files).
std::string withRank(std::string text, uint32_t rank) {
  for (size_t at = text.find("{rank}"); at != std::string::npos; at = text.find("{rank}", at))
    text.replace(at, 6, std::to_string(rank));
  return text;
}

/// A --ranks run binds the scalar parameters %rank, %nranks and %rank_stride (the bytes
/// between two ranks' copies of an address) when the command line does not
/// (docs/multi-device.md).
Status bindRankScalars(Launch& L, uint32_t rank, uint32_t ranks, GivenArgs& given) {
  for (const auto& p : L.params()) {
    if (p.kind != Module::ParamInfo::Kind::Scalar && p.kind != Module::ParamInfo::Kind::Index)
      continue;
    const int64_t value = p.name == "rank"          ? int64_t{rank}
                          : p.name == "nranks"      ? int64_t{ranks}
                          : p.name == "rank_stride" ? static_cast<int64_t>(kRankStride)
                                                    : -1;
    if (value < 0 || given.scalars.count(p.name)) continue;
    if (auto st = L.bindScalar(p.name, value)) return st;
    given.scalars.insert(p.name);
    given.intScalars.push_back({p.name, value});
  }
  return std::nullopt;
}

/// The launch of rank `rank` (0 on one device): its outputs, its given and created arguments.
Status prepareRank(const Module& mod, const CLI::App& app, const Options& o, uint32_t rank,
                   RankRun& rr) {
  auto launch = mod.launch(o.kernel);
  if (!launch) return launch.error();
  Launch& L = rr.launch.emplace(std::move(launch.value()));
  const auto& params = L.params();
  NamedSpecs args = o.args, outs = o.outs;
  std::optional<std::string> outDir =
      app.count("--out-dir") ? std::optional(o.outDir) : std::nullopt;
  std::optional<std::string> trace =
      app.count("--trace") ? std::optional(o.tracePath) : std::nullopt;
  if (o.ranks > 0) {
    for (auto* specs : {&args, &outs})
      for (auto& spec : *specs)
        spec.second = withRank(spec.second, rank);
    if (outDir) *outDir += "/rank" + std::to_string(rank);
    if (trace) *trace = withRank(*trace, rank);
  }
  if (auto st = planOutputs(o.kernel, params, outs, outDir, trace, rr.plan))
    return Error{"pto-run: " + st->message};
  if (auto st = checkPrints(o.kernel, params, o.prints)) return Error{"pto-run: " + st->message};
  std::mt19937_64 rng(o.seed + rank); // each rank its own random inputs
  auto bindBits = [&](const std::string& n, uint64_t bits) { return L.bindScalarBits(n, bits); };
  if (auto st = readGivenArgs(o.kernel, params, args, o.randoms, o.zeros, rng, bindBits, rr.given))
    return Error{"pto-run: " + st->message};
  if (o.ranks > 0)
    if (auto st = bindRankScalars(L, rank, o.ranks, rr.given))
      return Error{"pto-run: " + st->message};
  if (auto st = createMissing(mod, L, o, rng, rr.given)) return Error{"pto-run: " + st->message};
  for (auto& [name, t] : rr.given.buffers) {
    const std::string& key = name; // a lambda cannot capture a structured binding (clang 14)
    const auto& p =
        *std::find_if(params.begin(), params.end(), [&](auto& q) { return q.name == key; });
    if (auto st = adoptDType(t, p.dtype, name)) return Error{"pto-run: " + st->message};
    if (auto st = L.bind(name, &t)) return Error{"pto-run: " + st->message};
  }
  return std::nullopt;
}

/// --ranks N: every rank's launch on a thread of its own in one world; the error reported is
/// the first rank's own failure (not a peer's "stopped: ..."), else each rank's results.
int ranksMain(const Module& mod, const CLI::App& app, const Options& o) {
  std::vector<RankRun> runs(o.ranks);
  for (uint32_t r = 0; r < o.ranks; ++r)
    if (auto st = prepareRank(mod, app, o, r, runs[r]))
      return fail(st->message + " (rank " + std::to_string(r) + ")");
  LocalWorld world(o.ranks);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < o.ranks; ++r)
    threads.emplace_back([&, r] {
      RunOptions opts = o.run;
      opts.world = &world;
      opts.rank = r;
      runs[r].error = runs[r].launch->run(opts, &runs[r].stats);
    });
  for (auto& t : threads)
    t.join();
  const RankRun* culprit = nullptr;
  for (const RankRun& rr : runs)
    if (rr.error && (!culprit || (culprit->error->message.find("stopped: ") != std::string::npos &&
                                  rr.error->message.find("stopped: ") == std::string::npos)))
      culprit = &rr;
  if (culprit) {
    const auto r = static_cast<uint32_t>(culprit - runs.data());
    return fail(culprit->error->message + " (rank " + std::to_string(r) + ")");
  }
  for (uint32_t r = 0; r < o.ranks; ++r) {
    if (o.run.backend == Backend::Npu || !o.prints.empty()) printf("rank %u:\n", r);
    const std::vector<std::string> inputs = inputFilesOf(o.image, o.args);
    if (int rc = report(mod, o, runs[r].plan, runs[r].given, runs[r].stats, std::nullopt, inputs))
      return rc;
  }
  return 0;
}
/// The number of processes of the mpirun job this process is one of (Open MPI's
/// OMPI_COMM_WORLD_SIZE), or 0 when mpirun did not start it.
uint32_t mpirunSize() {
  const char* size = getenv("OMPI_COMM_WORLD_SIZE");
  return size && *size ? static_cast<uint32_t>(std::max(1, atoi(size))) : 0;
}

/// This process's rank in the mpirun job (before MPI starts), 0 when it is not in one.
[[maybe_unused]] uint32_t mpirunRank() {
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  return rank && *rank ? static_cast<uint32_t>(std::max(0, atoi(rank))) : 0;
}

#ifdef PTO_HAVE_MPI
/// What `print` writes to standard output, kept (in a temporary file under descriptor 1) rather
/// than written; its return value in `rc`.
std::string captureStdout(const std::function<int()>& print, int& rc) {
  fflush(stdout);
  FILE* tmp = tmpfile();
  const int saved = tmp ? dup(fileno(stdout)) : -1;
  if (saved < 0 || dup2(fileno(tmp), fileno(stdout)) < 0) {
    if (tmp) fclose(tmp);
    if (saved >= 0) close(saved);
    rc = print(); // written at once: the order of the ranks' output is then mpirun's
    return {};
  }
  rc = print();
  fflush(stdout);
  dup2(saved, fileno(stdout));
  close(saved);
  std::string text;
  rewind(tmp);
  char chunk[4096];
  for (size_t n; (n = fread(chunk, 1, sizeof chunk, tmp)) > 0;)
    text.append(chunk, n);
  fclose(tmp);
  return text;
}

/// What every rank of an mpirun job checks before the ranks start: the options, the image, the
/// kernel, and that --ranks (when given) is the job's size.
Status mpiSetup(const CLI::App& app, Options& o, uint32_t size, std::optional<Module>& mod) {
  if (auto st = checkOptions(app, o)) return st;
  if (o.ranks > 0 && o.ranks != size)
    return Error{"error: --ranks " + std::to_string(o.ranks) + ", but mpirun started " +
                 std::to_string(size) + " process(es): under mpirun each process is one rank"};
  if (o.list) return Error{"error: --list under mpirun: run it without mpirun"};
  auto m = Module::open(o.image);
  if (!m) return m.error();
  if (!o.arch.empty()) {
    auto want = isa::parseArch(o.arch);
    if (!want) return Error{"error: unknown arch '" + o.arch + "' (a2a3 or a5)"};
    if (*want != m->arch())
      return Error{"error: '" + o.image + "' is linked for " +
                   std::string(isa::spelling(m->arch())) + ", not " + o.arch};
  }
  if (auto st = chooseKernel(m.value(), o)) return st;
  o.ranks = size;
  mod.emplace(std::move(m.value()));
  return std::nullopt;
}

/// Under mpirun (docs/multi-device.md, "Under mpirun"): this process is rank R of the job; its
/// peers' memory is reached with MPI one-sided operations (runtime/MpiWorld.h). An error of one
/// rank stops every rank; the rank whose failure stopped the run reports it, and every rank
/// exits 1.
int mpiMain(CLI::App& app, Options& o, int argc, char** argv) {
  std::string why;
  auto world = MpiWorld::start(&argc, &argv, why);
  if (!world) return fail("pto-run: error: MPI did not start: " + why);
  const uint32_t me = world->rank();
  std::optional<Module> mod;
  Status setup = mpiSetup(app, o, world->ranks(), mod);
  if (setup && setup->message.starts_with("error: ")) setup->message = "pto-run: " + setup->message;
  if (const uint32_t first = world->firstFailing(setup.has_value()); first < world->ranks())
    return first == me ? fail(setup->message) : 1;
  world->open(mod->params(o.kernel)->size(), std::max<uint32_t>(1, o.run.blocks));
  RankRun rr;
  Status error = prepareRank(*mod, app, o, me, rr);
  if (const uint32_t first = world->firstFailing(error.has_value()); first < world->ranks())
    return first == me ? fail(error->message + " (rank " + std::to_string(me) + ")") : 1;
  RunOptions opts = o.run;
  opts.world = world.get();
  opts.rank = me;
  error = rr.launch->run(opts, &rr.stats);
  if (auto culprit = world->finish()) {
    if (*culprit == me && error) fail(error->message + " (rank " + std::to_string(me) + ")");
    return 1;
  }
  // Each rank's results; rank 0 prints them all, in rank order.
  int rc = 0;
  const std::string text = captureStdout(
      [&] {
        if (o.run.backend == Backend::Npu || !o.prints.empty()) printf("rank %u:\n", me);
        return report(*mod, o, rr.plan, rr.given, rr.stats, std::nullopt,
                      inputFilesOf(o.image, o.args));
      },
      rc);
  world->printInRankOrder(text);
  fflush(stdout);
  return world->firstFailing(rc != 0) < world->ranks() ? 1 : 0;
}
#endif
} // namespace

int main(int argc, char** argv) {
  // A source file (not an ELF image) runs on the reference interpreter of the Kernel IR.
  if (ref::isSourceInput(argc, argv)) {
    if (mpirunSize())
      return mpirunRank() == 0
                 ? fail("pto-run: error: under mpirun pto-run runs a linked image: the reference "
                        "interpreter (a .pto source) runs one device; assemble and link the "
                        "kernel first (docs/multi-device.md)")
                 : 1;
    for (int i = 1; i < argc; ++i)
      if (std::string_view(argv[i]).starts_with("--ranks"))
        return fail("pto-run: error: --ranks runs a linked image: the reference interpreter (a "
                    ".pto source) runs one device; assemble and link the kernel first "
                    "(docs/multi-device.md)");
    return ref::runSourceMain(argc, argv);
  }
  CLI::App app{
      "pto-run: load a linked PTO image (pto-ld output) and run one kernel on the cpu backend "
      "(exact PTO semantics) or the npu model (pipes, events, cycles, races, deadlocks). "
      "A source file (pto-run kernel.pto ...) runs without assembling or linking, on the reference "
      "interpreter of the Kernel IR, with the same options (--backend npu excepted). "
      "docs/runtime.md, docs/npu-model.md."};
  Options o;
  addOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  if (const uint32_t size = mpirunSize()) {
#ifdef PTO_HAVE_MPI
    return mpiMain(app, o, argc, argv);
#else
    // Every process of the job says the same: rank 0 alone prints it.
    (void)size;
    if (mpirunRank() != 0) return 1;
    return fail("pto-run: error: this pto-run was built without MPI, so it cannot run as a rank "
                "of an mpirun job (build it with MPI installed: Debian's libopenmpi-dev), or run "
                "the ranks in one process with --ranks N (docs/multi-device.md)");
#endif
  }
  if (auto st = checkOptions(app, o)) return fail("pto-run: " + st->message);
  auto mod = Module::open(o.image);
  if (!mod) return fail(mod.error().message);
  if (!o.arch.empty()) {
    auto want = isa::parseArch(o.arch);
    if (!want) return fail("pto-run: error: unknown arch '" + o.arch + "' (a2a3 or a5)");
    if (*want != mod->arch())
      return fail("pto-run: error: '" + o.image + "' is linked for " +
                  std::string(isa::spelling(mod->arch())) + ", not " + o.arch);
  }
  if (o.list) return listMain(mod.value(), o);
  if (auto st = chooseKernel(mod.value(), o)) return fail("pto-run: " + st->message);
  if (o.ranks > 0) return ranksMain(mod.value(), app, o);
  RankRun one;
  if (auto st = prepareRank(mod.value(), app, o, 0, one)) return fail(st->message);
  const Status runError = one.launch->run(o.run, &one.stats);
  return report(mod.value(), o, one.plan, one.given, one.stats, runError,
                inputFilesOf(o.image, o.args));
}
