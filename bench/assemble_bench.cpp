// pto-bench-assemble: how fast pto-as turns a large module into an object (parse + verify +
// lower + encode + ELF write), next to parse-only time on the same text in the same run.
// Prints lines/s and command words/s, and the assemble / parse ratio.
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "bench/GenModule.h"
#include "obj/Object.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>

namespace {

struct Input {
  std::string text;
  size_t lines = 0;
  size_t words = 0; // command words in the produced object
};

/// Parse only (the reference).
bool parse(const std::string& text) {
  pto::as::SourceFile src("bench.pto", text);
  std::ostringstream sink;
  pto::as::DiagEngine diags(src, sink);
  auto m = pto::as::parseModule(src, diags, pto::isa::Arch::A2A3);
  benchmark::DoNotOptimize(m.get());
  return m && diags.errors() == 0;
}

/// The whole assembler: parse, verify, lower, encode, write the ELF image in memory.
size_t assemble(const std::string& text) {
  pto::as::SourceFile src("bench.pto", text);
  std::ostringstream sink;
  pto::as::DiagEngine diags(src, sink);
  auto m = pto::as::parseModule(src, diags, pto::isa::Arch::A2A3);
  if (!m || diags.errors()) return 0;
  pto::as::verifyModule(*m, pto::isa::Arch::A2A3, diags);
  if (diags.errors()) return 0;
  auto o = pto::as::lowerModule(*m, pto::isa::Arch::A2A3, diags);
  if (!o) return 0;
  auto bytes = pto::obj::writeObject(*o);
  if (!std::holds_alternative<std::vector<uint8_t>>(bytes)) return 0;
  benchmark::DoNotOptimize(std::get<std::vector<uint8_t>>(bytes).data());
  return o->text.size() / 4;
}

void setRates(benchmark::State& state, const Input& in, bool words) {
  state.counters["lines/s"] = benchmark::Counter(double(in.lines) * double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  if (words)
    state.counters["words/s"] = benchmark::Counter(double(in.words) * double(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}

void BM_ParseOnly(benchmark::State& state, const Input* in) {
  for (auto _ : state)
    if (!parse(in->text)) state.SkipWithError("parse failed");
  setRates(state, *in, false);
}

void BM_Assemble(benchmark::State& state, const Input* in) {
  for (auto _ : state)
    if (assemble(in->text) == 0) state.SkipWithError("assembly failed");
  setRates(state, *in, true);
}

template <typename F> double bestOf(int runs, F&& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Input in;
  in.text = pto::bench::generateLargeModule(200, 10, 1);
  in.lines = pto::bench::countLines(in.text);
  in.words = assemble(in.text);
  if (in.words == 0) {
    std::cerr << "pto-bench-assemble: the generated module does not assemble\n";
    return 1;
  }
  std::cout << "module: " << in.lines << " lines -> " << in.words << " command words\n";
  benchmark::RegisterBenchmark("BM_ParseOnly", BM_ParseOnly, &in)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Assemble", BM_Assemble, &in)->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  double p = bestOf(3, [&] { parse(in.text); });
  double a = bestOf(3, [&] { assemble(in.text); });
  std::cout << "assemble: " << double(in.lines) / a << " lines/s, " << double(in.words) / a
            << " words/s\n";
  std::cout << "assemble / parse-only ratio: " << a / p << "\n";
  benchmark::Shutdown();
  return 0;
}
