// pto-bench-npu: the npu model's simulation speed on long kernels — simulated ops per second and
// simulated cycles per second — beside the cpu backend running the same kernel in the same run.
// The kernels are two samples grown to 32768 rows: samples/pingpong/pingpong.pto (2048 loop
// iterations of two TLOADs, two TEXPs, two TSTOREs and sixteen set/wait flags, 32 MiB per
// tensor) and samples/softmax/softmax.pto (4096 iterations of a row softmax over 8x128 tiles,
// 16 MiB per tensor). Rates are per CPU second of this process (the machines are shared: other
// load stretches wall time, not CPU time); wall-clock rates are printed beside them.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>

namespace {

using namespace pto;

constexpr int64_t kRows = 32768;

/// A sample grown to kRows rows (each `from` -> `to` replacement applied to its text).
struct Grown {
  std::string name, file, kernel;
  int64_t cols;
  std::vector<std::pair<std::string, std::string>> edits;
};

std::optional<rt::Module> buildLongKernel(const Grown& g) {
  std::ifstream in(std::string(PTO_SOURCE_DIR) + "/" + g.file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [from, to] : g.edits)
    text = std::regex_replace(text, std::regex(from), to);
  as::SourceFile src(g.name + ".pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  if (!m) return std::nullopt;
  const isa::Arch arch = as::resolveArch(*m, std::nullopt);
  as::verifyModule(*m, arch, diags);
  auto o = as::lowerModule(*m, arch, diags);
  if (!o) return std::nullopt;
  link::LinkResult r = link::link({{"k.o", *o}}, {});
  if (!r.ok()) return std::nullopt;
  auto bytes = obj::writeImage(*r.image);
  if (bytes.index() != 0) return std::nullopt;
  auto mod = rt::Module::load(std::get<0>(bytes), g.name + ".pto");
  if (!mod) return std::nullopt;
  return mod.value();
}

struct Run {
  rt::Module mod;
  std::string kernel;
  rt::Tensor x, y;

  rt::RunStats go(rt::Backend backend) {
    auto l = mod.launch(kernel);
    l.value().bind("x", &x);
    l.value().bind("y", &y);
    rt::RunOptions opts;
    opts.backend = backend;
    rt::RunStats stats;
    if (auto st = l.value().run(opts, &stats)) {
      std::cerr << st->message << "\n";
      std::exit(1);
    }
    return stats;
  }
};

/// Ops the pipes ran (tile and sync ops); the scalar unit's instructions are not counted.
uint64_t pipeOps(const rt::RunStats& s) {
  uint64_t n = 0;
  for (unsigned p = 0; p < s.npu.at(0).ops.size(); ++p)
    if (p != static_cast<unsigned>(isa::Pipe::S)) n += s.npu.at(0).ops[p];
  return n;
}

void BM_Npu(benchmark::State& state, Run* run) {
  rt::RunStats s;
  for (auto _ : state)
    s = run->go(rt::Backend::Npu);
  const uint64_t ops = pipeOps(s);
  state.counters["sim_ops/s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["sim_cycles/s"] = benchmark::Counter(
      static_cast<double>(s.npu.at(0).cycles), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Cpu(benchmark::State& state, Run* run) {
  for (auto _ : state)
    run->go(rt::Backend::Cpu);
}

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Timing {
  double cpu = 1e30, wall = 1e30; // best of 3 each
};

Timing bestOf3(Run& run, rt::Backend b, rt::RunStats* last) {
  Timing best;
  for (int i = 0; i < 3; ++i) {
    const double c0 = processCpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    rt::RunStats s = run.go(b);
    best.wall = std::min(
        best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    best.cpu = std::min(best.cpu, processCpuSeconds() - c0);
    if (last) *last = s;
  }
  return best;
}

void sideBySide(const std::string& name, Run& run) {
  rt::RunStats s;
  const Timing npu = bestOf3(run, rt::Backend::Npu, &s);
  const Timing cpu = bestOf3(run, rt::Backend::Cpu, nullptr);
  const uint64_t ops = pipeOps(s);
  const double cycles = static_cast<double>(s.npu.at(0).cycles);
  std::cout << "\n"
            << name << " (best of 3, same run):\n"
            << "  npu model: " << npu.cpu * 1e3 << " ms CPU (" << npu.wall * 1e3 << " ms wall) for "
            << ops << " simulated pipe ops and " << cycles
            << " simulated cycles: " << cycles / npu.cpu / 1e6 << " M cycles per CPU second ("
            << cycles / npu.wall / 1e6 << " M per wall second; goal 10)\n"
            << "  cpu backend, same kernel: " << cpu.cpu * 1e3 << " ms CPU\n"
            << "  npu model / cpu backend: " << npu.cpu / cpu.cpu << "x the CPU time\n";
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::string rows = std::to_string(kRows);
  const std::vector<Grown> kernels = {
      {"pingpong_32768x256", "samples/pingpong/pingpong.pto", "pingpong", 256, {{"1024", rows}}},
      {"softmax_32768x128",
       "samples/softmax/softmax.pto",
       "softmax",
       128,
       {{"64x128", rows + "x128"}, {"constant 64 :", "constant " + rows + " :"}}},
  };
  std::vector<std::unique_ptr<Run>> runs;
  for (const Grown& g : kernels) {
    auto mod = buildLongKernel(g);
    if (!mod) {
      std::cerr << "pto-bench-npu: the long " << g.name << " kernel does not build\n";
      return 1;
    }
    runs.push_back(std::make_unique<Run>(Run{*mod, g.kernel,
                                             rt::Tensor::zeros(isa::DType::F32, {kRows, g.cols}),
                                             rt::Tensor::zeros(isa::DType::F32, {kRows, g.cols})}));
    benchmark::RegisterBenchmark(("npu_model/" + g.name).c_str(), BM_Npu, runs.back().get())
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("cpu_backend/" + g.name).c_str(), BM_Cpu, runs.back().get())
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  for (size_t i = 0; i < kernels.size(); ++i)
    sideBySide(kernels[i].name, *runs[i]);
  benchmark::Shutdown();
  return 0;
}
