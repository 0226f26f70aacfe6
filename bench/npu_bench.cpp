// pto-bench-npu: the npu model's simulation speed on a long kernel — simulated ops per second and
// simulated cycles per second — beside the cpu backend running the same kernel in the same run.
// The kernel is samples/pingpong/pingpong.pto grown to 32768 rows: 2048 loop iterations of two
// TLOADs, two TEXPs, two TSTOREs and sixteen set/wait flags, 32 MiB per tensor.
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

namespace {

using namespace pto;

constexpr int64_t kRows = 32768, kCols = 256;

std::optional<rt::Module> buildLongKernel() {
  std::ifstream in(std::string(PTO_SOURCE_DIR) + "/samples/pingpong/pingpong.pto");
  std::stringstream ss;
  ss << in.rdbuf();
  // The sample's tensors are 1024 rows; the same kernel over 32768 rows runs 32x longer.
  const std::string text = std::regex_replace(ss.str(), std::regex("1024"), std::to_string(kRows));
  as::SourceFile src("pingpong_long.pto", text);
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
  auto mod = rt::Module::load(std::get<0>(bytes), "pingpong_long.pto");
  if (!mod) return std::nullopt;
  return mod.value();
}

struct Run {
  rt::Module mod;
  rt::Tensor x = rt::Tensor::zeros(isa::DType::F32, {kRows, kCols});
  rt::Tensor y = rt::Tensor::zeros(isa::DType::F32, {kRows, kCols});

  rt::RunStats go(rt::Backend backend) {
    auto l = mod.launch("pingpong");
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
Run* gRun = nullptr;

/// Ops the pipes ran (tile and sync ops); the scalar unit's instructions are not counted.
uint64_t pipeOps(const rt::RunStats& s) {
  uint64_t n = 0;
  for (unsigned p = 0; p < s.npu.at(0).ops.size(); ++p)
    if (p != static_cast<unsigned>(isa::Pipe::S)) n += s.npu.at(0).ops[p];
  return n;
}

void BM_Npu(benchmark::State& state) {
  rt::RunStats s;
  for (auto _ : state)
    s = gRun->go(rt::Backend::Npu);
  const uint64_t ops = pipeOps(s);
  state.counters["sim_ops/s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["sim_cycles/s"] = benchmark::Counter(
      static_cast<double>(s.npu.at(0).cycles), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Cpu(benchmark::State& state) {
  for (auto _ : state)
    gRun->go(rt::Backend::Cpu);
}

double bestOf3(rt::Backend b, rt::RunStats* last) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    rt::RunStats s = gRun->go(b);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (last) *last = s;
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto mod = buildLongKernel();
  if (!mod) {
    std::cerr << "pto-bench-npu: the long ping-pong kernel does not build\n";
    return 1;
  }
  Run run{*mod};
  gRun = &run;
  benchmark::RegisterBenchmark("npu_model/pingpong_32768x256", BM_Npu)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("cpu_backend/pingpong_32768x256", BM_Cpu)
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();

  rt::RunStats s;
  const double npu = bestOf3(rt::Backend::Npu, &s), cpu = bestOf3(rt::Backend::Cpu, nullptr);
  const uint64_t ops = pipeOps(s);
  const double cycles = static_cast<double>(s.npu.at(0).cycles);
  std::cout << "\nside by side (best of 3, same run):\n"
            << "  npu model: " << npu * 1e3 << " ms for " << ops << " simulated pipe ops ("
            << ops / npu / 1e6 << " M ops/s) and " << cycles << " simulated cycles ("
            << cycles / npu / 1e6 << " M cycles/s)\n"
            << "  cpu backend, same kernel: " << cpu * 1e3 << " ms\n"
            << "  npu model / cpu backend: " << npu / cpu << "x the time\n";
  benchmark::Shutdown();
  return 0;
}
