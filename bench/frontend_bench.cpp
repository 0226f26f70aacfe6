// pto-bench-frontend: how fast the front end (parse + build IR + verify) eats a large module,
// next to the cost of just reading the same file, measured in the same run.
//
//   pto-bench-frontend [--functions=N] [--loops=N] [--seed=N] [--ratio-runs=N] [benchmark flags]
//
// Prints the Google Benchmark table (BM_ReadFile is the reference, BM_ParseVerify the subject),
// then "parse+verify / read ratio: X" from a best-of-N std::chrono timing of each, and memory
// figures for two module sizes, each parsed in a fresh child process, to show memory grows
// linearly with the input.
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "bench/GenModule.h"

#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Input {
  std::string path;
  size_t lines = 0;
  size_t bytes = 0;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  std::string text(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0, std::ios::beg);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

/// Parses and (if parsing succeeded) verifies for a2a3; returns the number of errors.
unsigned parseVerify(pto::as::SourceFile& src, std::ostream& diagOut) {
  pto::as::DiagEngine diags(src, diagOut);
  std::unique_ptr<pto::ir::Module> m = pto::as::parseModule(src, diags, pto::isa::Arch::A2A3);
  if (m && diags.errors() == 0) pto::as::verifyModule(*m, pto::isa::Arch::A2A3, diags);
  benchmark::DoNotOptimize(m.get());
  return diags.errors() + (m ? 0 : 1);
}

/// Read + parse + verify of the file at path.
unsigned readParseVerify(const std::string& path, std::ostream& diagOut) {
  pto::as::SourceFile src(path, readFile(path));
  return parseVerify(src, diagOut);
}

void setRates(benchmark::State& state, const Input& in) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(in.bytes));
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(in.lines) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_ReadFile(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    std::string text = readFile(in->path);
    if (text.size() != in->bytes) {
      state.SkipWithError("short read of the generated module");
      break;
    }
    benchmark::DoNotOptimize(text.data());
  }
  setRates(state, *in);
}

void BM_ParseVerify(benchmark::State& state, const Input* in) {
  std::ostream nullOut(nullptr); // badbit set: every write is dropped
  for (auto _ : state) {
    if (readParseVerify(in->path, nullOut) != 0) {
      state.SkipWithError("the front end reported errors on the generated module");
      break;
    }
  }
  setRates(state, *in);
}

long currentRssKiB() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// Peak RSS of this process (VmHWM), in KiB; falls back to getrusage's ru_maxrss.
long peakRssKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);)
    if (l.rfind("VmHWM:", 0) == 0) return std::strtol(l.c_str() + 6, nullptr, 10);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss; // KiB on Linux
}

/// Resets the peak RSS to the current RSS (Linux >= 4.0), so that a later peakRssKiB() measures
/// only what follows. Returns false where that is not possible.
bool resetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

struct MemSample {
  unsigned functions = 0;
  size_t lines = 0;
  size_t bytes = 0;
  long liveKiB = 0; // RSS growth with the IR alive (after malloc_trim), over the text-loaded RSS
  long peakKiB = 0; // peak RSS growth during parse + verify, over the same base
  unsigned errors = 0;
  bool peakReset = false; // false: the peak may include the text generation before the parse
  bool ok = false;
};

/// Generates, parses and verifies a module of `functions` functions in a forked child (a fresh
/// heap, so no sample reuses memory freed by another) and reports its RSS growth.
MemSample measureMemory(unsigned functions, unsigned loops, unsigned seed) {
  MemSample s;
  s.functions = functions;
  int fds[2];
  if (pipe(fds) != 0) return s;
  std::cout.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return s;
  }
  if (pid == 0) {
    close(fds[0]);
    MemSample r = s;
    {
      std::string text = pto::bench::generateLargeModule(functions, loops, seed);
      r.lines = pto::bench::countLines(text);
      r.bytes = text.size();
      pto::as::SourceFile src("mem.pto", std::move(text));
      r.peakReset = resetPeakRss();
      long base = currentRssKiB();
      std::ostream nullOut(nullptr);
      pto::as::DiagEngine diags(src, nullOut);
      std::unique_ptr<pto::ir::Module> m = pto::as::parseModule(src, diags, pto::isa::Arch::A2A3);
      if (m && diags.errors() == 0) pto::as::verifyModule(*m, pto::isa::Arch::A2A3, diags);
      r.peakKiB = peakRssKiB() - base;
      malloc_trim(0); // hand freed parse-tree memory back, so only what the IR holds remains
      r.liveKiB = currentRssKiB() - base;
      r.errors = diags.errors();
      r.ok = true;
      benchmark::DoNotOptimize(m.get());
    }
    ssize_t w = write(fds[1], &r, sizeof r);
    close(fds[1]);
    _exit(w == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  MemSample r;
  ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got == static_cast<ssize_t>(sizeof r) && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return r;
  return s;
}

/// Best of `runs` wall-clock timings of fn, in seconds.
template <typename Fn> double bestOf(unsigned runs, Fn&& fn) {
  double best = 1e300;
  for (unsigned i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

bool takeFlag(std::string_view arg, std::string_view name, unsigned& value) {
  if (arg.substr(0, name.size()) != name) return false;
  value = static_cast<unsigned>(
      std::strtoul(std::string(arg.substr(name.size())).c_str(), nullptr, 10));
  return true;
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  unsigned functions = 200, loops = 10, seed = 1, ratioRuns = 3;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (takeFlag(a, "--functions=", functions) || takeFlag(a, "--loops=", loops) ||
        takeFlag(a, "--seed=", seed) || takeFlag(a, "--ratio-runs=", ratioRuns))
      continue;
    argv[kept++] = argv[i];
  }
  argc = kept;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  functions = std::max(functions, 1u);
  ratioRuns = std::max(ratioRuns, 1u);

  // Memory first, in children forked while this process is still small.
  const unsigned smallFunctions = std::max(1u, functions / 4);
  MemSample memSmall = measureMemory(smallFunctions, loops, seed);
  MemSample memLarge = measureMemory(functions, loops, seed);

  Input in;
  {
    std::string text = pto::bench::generateLargeModule(functions, loops, seed);
    in.lines = pto::bench::countLines(text);
    in.bytes = text.size();
    in.path =
        (fs::temp_directory_path() / ("pto-bench-frontend-" + std::to_string(getpid()) + ".pto"))
            .string();
    std::ofstream out(in.path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) {
      std::cerr << "pto-bench-frontend: cannot write " << in.path << "\n";
      return 1;
    }
  }
  std::cout << "module: " << functions << " functions x " << loops << " loops, seed " << seed
            << ": " << in.lines << " lines, " << in.bytes << " bytes (" << in.path << ")\n";

  // Check the input once with real diagnostics, so a rejection is explained, not just counted.
  int rc = 0;
  {
    std::ostringstream diag;
    unsigned errors = readParseVerify(in.path, diag);
    if (errors != 0) {
      std::cerr << "pto-bench-frontend: the front end reported " << errors
                << " error(s) on the generated module; first diagnostics:\n";
      std::istringstream lines(diag.str());
      std::string l;
      for (int n = 0; n < 30 && std::getline(lines, l); ++n)
        std::cerr << l << "\n";
      rc = 1;
    }
  }

  benchmark::RegisterBenchmark("BM_ReadFile", BM_ReadFile, &in)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ParseVerify", BM_ParseVerify, &in)
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // The ratio, timed here in the same run (best of N each).
  std::ostream nullOut(nullptr);
  size_t sink = 0;
  double tRead = bestOf(ratioRuns, [&] { sink += readFile(in.path).size(); });
  double tParse = bestOf(ratioRuns, [&] { sink += readParseVerify(in.path, nullOut); });
  benchmark::DoNotOptimize(sink);
  std::printf("read:         %10.3f ms  (best of %u)\n", tRead * 1e3, ratioRuns);
  std::printf("parse+verify: %10.3f ms  (best of %u), %.0f lines/s, %.1f MiB/s\n", tParse * 1e3,
              ratioRuns, static_cast<double>(in.lines) / tParse,
              static_cast<double>(in.bytes) / tParse / (1024.0 * 1024.0));
  std::printf("parse+verify / read ratio: %.1f\n", tParse / tRead);

  for (const MemSample* s : {&memSmall, &memLarge}) {
    if (!s->ok) {
      std::printf("memory: %u functions -> measurement failed\n", s->functions);
      rc = 1;
      continue;
    }
    std::printf("memory: %zu lines -> %ld KiB peak during parse+verify (%.2f KiB/kline); "
                "IR alive afterwards: %ld KiB%s\n",
                s->lines, s->peakKiB,
                static_cast<double>(s->peakKiB) * 1000.0 / static_cast<double>(s->lines),
                s->liveKiB,
                s->errors ? "  [front end reported errors]"
                          : (s->peakReset ? "" : "  [peak not resettable: upper bound]"));
  }
  if (memSmall.ok && memLarge.ok && memSmall.peakKiB > 0)
    std::printf("memory growth: %.2fx the lines -> %.2fx the peak memory\n",
                static_cast<double>(memLarge.lines) / static_cast<double>(memSmall.lines),
                static_cast<double>(memLarge.peakKiB) / static_cast<double>(memSmall.peakKiB));
  std::printf("peak RSS (this process): %ld KiB\n", peakRssKiB());

  std::error_code ec;
  fs::remove(in.path, ec);
  return rc;
}
