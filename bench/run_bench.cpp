// pto-bench-run: the cpu backend on the tiled vector-add sample (1024x256 f32: 64 tile loops of
// TLOAD, TLOAD, TADD, TSTORE), next to a plain C++ loop doing the same additions in the same
// run (the reference: memory-bound host code).
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace pto;

std::optional<rt::Module> buildSample() {
  std::string path = std::string(PTO_SOURCE_DIR) + "/samples/vadd-tiled/vadd_tiled.pto";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  as::SourceFile src(path, ss.str());
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  if (!m || diags.errors()) return std::nullopt;
  isa::Arch arch = as::resolveArch(*m, std::nullopt);
  as::verifyModule(*m, arch, diags);
  auto o = as::lowerModule(*m, arch, diags);
  if (!o) return std::nullopt;
  link::LinkOptions opts;
  opts.autoSync = true;
  link::LinkResult r = link::link({{"vadd_tiled.o", *o}}, opts);
  if (!r.ok()) return std::nullopt;
  auto bytes = obj::writeImage(*r.image);
  if (bytes.index() != 0) return std::nullopt;
  auto mod = rt::Module::load(std::get<0>(bytes), path);
  if (!mod) return std::nullopt;
  return mod.value();
}

struct Fixture {
  rt::Module module;
  rt::Tensor x, y, z;
};

Fixture* fixture = nullptr;
constexpr int64_t kRows = 1024, kCols = 256;

void fill(rt::Tensor& t, float seed) {
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = seed + static_cast<float>(i % 97);
}

bool runKernel(uint32_t blocks) {
  auto launch = fixture->module.launch("vadd_tiled");
  if (!launch) return false;
  if (launch->bind("x", &fixture->x) || launch->bind("y", &fixture->y) || launch->bind("z", &fixture->z)) return false;
  rt::RunOptions opts;
  opts.blocks = blocks;
  return !launch->run(opts);
}

void reference() {
  const auto* x = reinterpret_cast<const float*>(fixture->x.data.data());
  const auto* y = reinterpret_cast<const float*>(fixture->y.data.data());
  auto* z = reinterpret_cast<float*>(fixture->z.data.data());
  for (int64_t i = 0; i < kRows * kCols; ++i) z[i] = x[i] + y[i];
  benchmark::ClobberMemory();
}

void BM_Reference(benchmark::State& state) {
  for (auto _ : state) reference();
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
}

void BM_CpuBackend(benchmark::State& state) {
  for (auto _ : state)
    if (!runKernel(static_cast<uint32_t>(state.range(0)))) state.SkipWithError("kernel failed");
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
  state.counters["tile ops/s"] = benchmark::Counter(double(4 * kRows / 16) * double(state.iterations()), benchmark::Counter::kIsRate);
}

template <typename F> double bestOf(int runs, F&& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto module = buildSample();
  if (!module) {
    std::cerr << "pto-bench-run: the sample does not build\n";
    return 1;
  }
  Fixture f{*module, rt::Tensor::zeros(isa::DType::F32, {kRows, kCols}), rt::Tensor::zeros(isa::DType::F32, {kRows, kCols}),
            rt::Tensor::zeros(isa::DType::F32, {kRows, kCols})};
  fixture = &f;
  fill(f.x, 1.0f);
  fill(f.y, 2.0f);
  if (!runKernel(1)) {
    std::cerr << "pto-bench-run: the kernel fails\n";
    return 1;
  }
  benchmark::RegisterBenchmark("BM_Reference", BM_Reference)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_CpuBackend", BM_CpuBackend)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  double ref = bestOf(20, reference);
  double one = bestOf(20, [] { runKernel(1); });
  std::cout << "cpu backend (1 block) / plain C++ loop: " << one / ref << "x  (" << one * 1e6 << " us vs " << ref * 1e6
            << " us)\n";
  benchmark::Shutdown();
  return 0;
}
