// pto-diff: differential testing of the tool chain with random kernels.
//
// For each seed: generate a well-formed kernel (tests/diff/Gen.cpp) together with its expected
// output buffers (the evaluator, tests/diff/Eval.cpp), run it through pto-as -> pto-ld
// --auto-sync -> runtime on the cpu and the npu backend, and compare every buffer bit for bit.
// On a failure: the seed, the program, expected vs actual, and a reduced reproducer.
#include "tests/diff/Check.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

using namespace pto::diff;

namespace pto::diff {
int selfTest(); // SelfTest.cpp
}

namespace {

const char* kUsage = R"(usage: pto-diff [options]
Generates random kernels, runs each through pto-as -> pto-ld --auto-sync -> runtime on both
backends and compares every output buffer bit for bit with the generator's own evaluation.
  --seeds N        programs to check (default 1000; 0 = no limit, use --seconds)
  --start S        first seed (default 1)
  --seconds T      stop after T seconds
  -j N             worker threads (default 1)
  --float          f32 scalar arithmetic, compares, casts and f32 buffers
  --f16            also f16 and bf16 (implies --float)
  --tiles          alloc_tile + tload/tadd/tsub/tmul/tadds/tmuls/tstore on 1xN f32 tiles
  --max-stmts N    statements per kernel body, roughly (default 40)
  --max-depth N    region nesting (default 3)
  --no-while, --no-if, --no-calls   leave a construct out
  --no-wide-consts                  64-bit integer constants only in the int32 range
  --exclude OP,...                  leave out ops (divsi, maxnumf, ...) and casts by source type
                                    (extsi-i1, sitofp-i64, ...), predicates (cmpf-true)
  --cpu-only, --npu-only            one backend
  --no-ref         do not run the reference interpreter of the Kernel IR (ref/)
  --keep-going     report every failing seed (default: stop at the first)
  --no-reduce      do not reduce a failing program
  --print          print each program (with --seeds 1 --start S: show one seed's kernel)
  --expected       with --print, also print the expected buffers
  --self-test      check the evaluator against hand-worked values and the harness itself
)";

struct Config {
  uint64_t seeds = 1000, start = 1;
  double seconds = 0;
  unsigned jobs = 1;
  GenOptions gen;
  CheckOptions check;
  bool keepGoing = false, reduce = true, print = false, expected = false, ref = true;
};

bool parse(int argc, char** argv, Config& c) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto num = [&](double& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtod(argv[++i], &end);
      return end && *end == 0 && out >= 0;
    };
    double v = 0;
    if (a.size() > 2 && a.rfind("-j", 0) == 0 && a[2] != '-') { // -jN
      c.jobs = unsigned(std::max(1, std::atoi(a.c_str() + 2)));
      continue;
    }
    if (a == "--seeds" && num(v))
      c.seeds = uint64_t(v);
    else if (a == "--start" && num(v))
      c.start = uint64_t(v);
    else if (a == "--seconds" && num(v))
      c.seconds = v;
    else if (a == "-j" && num(v))
      c.jobs = std::max(1u, unsigned(v));
    else if (a == "--max-stmts" && num(v))
      c.gen.maxStmts = std::max(1, int(v));
    else if (a == "--max-depth" && num(v))
      c.gen.maxDepth = std::max(1, int(v));
    else if (a == "--float")
      c.gen.floats = true;
    else if (a == "--f16")
      c.gen.halfs = c.gen.floats = true;
    else if (a == "--tiles")
      c.gen.tiles = true;
    else if (a == "--no-while")
      c.gen.noWhile = true;
    else if (a == "--no-if")
      c.gen.noIf = true;
    else if (a == "--no-calls")
      c.gen.noCalls = true;
    else if (a == "--no-wide-consts")
      c.gen.noWideConsts = true;
    else if (a == "--exclude" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) c.gen.exclude.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (a == "--cpu-only")
      c.check.npu = false;
    else if (a == "--npu-only")
      c.check.cpu = false;
    else if (a == "--keep-going")
      c.keepGoing = true;
    else if (a == "--no-ref")
      c.ref = false;
    else if (a == "--no-reduce")
      c.reduce = false;
    else if (a == "--print")
      c.print = true;
    else if (a == "--expected")
      c.expected = true;
    else if (a == "--self-test")
      std::exit(selfTest());
    else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      std::cerr << "pto-diff: bad option '" << a << "'\n" << kUsage;
      return false;
    }
  }
  return true;
}

std::string showBuffers(const Program& p, const std::vector<std::vector<uint64_t>>& bufs) {
  std::string s;
  for (size_t b = 0; b < bufs.size(); ++b) {
    s += "  %b" + std::to_string(b) + " " + tyName(p.buffers[b].elem) + ":";
    for (uint64_t x : bufs[b]) {
      char t[24];
      std::snprintf(t, sizeof t, " 0x%llx", static_cast<unsigned long long>(x));
      s += t;
    }
    s += "\n";
  }
  return s;
}

std::string showInputs(const Program& p) {
  std::string s = "inputs:\n";
  std::vector<std::vector<uint64_t>> init;
  for (const Buffer& b : p.buffers)
    init.push_back(b.init);
  s += showBuffers(p, init);
  for (size_t i = 0; i < p.scalars.size(); ++i)
    s += "  %v" + std::to_string(p.kernel().params[i]) + " = " +
         std::to_string(pto::diff::sem::sext(p.scalars[i].ty, p.scalars[i].value)) + "\n";
  return s;
}

} // namespace

int main(int argc, char** argv) {
  Config c;
  if (!parse(argc, argv, c)) return 2;
  if (c.seeds == 0 && c.seconds == 0) c.seeds = 1000;
  if (c.ref) c.check.extra.push_back(refInterpreter(c.check.maxInstructions));
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::atomic<uint64_t> next{c.start}, checked{0}, draws{0};
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::mutex out;

  const auto worker = [&] {
    for (;;) {
      if (stop) return;
      const uint64_t seed = next++;
      if (c.seeds && seed >= c.start + c.seeds) return;
      if (c.seconds > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= c.seconds)
        return;
      EvalResult want;
      int attempts = 0;
      const Program p = generate(seed, c.gen, want, &attempts);
      draws += uint64_t(attempts);
      if (c.print) {
        std::lock_guard<std::mutex> l(out);
        std::cout << "// seed " << seed << "\n" << print(p);
        if (c.expected) std::cout << showInputs(p) << "expected:\n" << showBuffers(p, want.buffers);
      }
      if (!want.ok) {
        std::lock_guard<std::mutex> l(out);
        std::cerr << "pto-diff: seed " << seed << ": no valid program in " << attempts << " draws ("
                  << want.why << ")\n";
        ++failures;
        continue;
      }
      std::string kind;
      const std::string diff = check(p, want, c.check, &kind);
      if (++checked % 10000 == 0) {
        std::lock_guard<std::mutex> l(out);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        std::cerr << "pto-diff: " << checked.load() << " programs, " << failures.load()
                  << " failing, " << int(double(checked.load()) / s) << " programs/s, next seed "
                  << next.load() << "\n";
      }
      if (diff.empty()) continue;
      if (!c.keepGoing) stop = true;
      std::string report = "=== MISMATCH seed " + std::to_string(seed) + " (after " +
                           std::to_string(checked.load()) + " programs) ===\n" + diff +
                           (diff.back() == '\n' ? "" : "\n") + showInputs(p) + "program:\n" +
                           print(p);
      if (c.reduce) {
        int steps = 0;
        const Program r = reduce(p, c.check, kind, &steps);
        const EvalResult rw = evaluate(r);
        report += "--- reduced (" + std::to_string(steps) + " candidates tried; " + kind +
                  ") ---\n" + check(r, rw, c.check) + showInputs(r) + "expected:\n" +
                  showBuffers(r, rw.buffers) + print(r);
      }
      std::lock_guard<std::mutex> l(out);
      ++failures;
      std::cout << report << std::flush;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < c.jobs; ++j)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const uint64_t n = checked.load();
  std::printf("pto-diff: %llu programs checked (%s%s%s), %d failing, %.1f s, %.0f programs/s, %.3f "
              "draws/program\n",
              static_cast<unsigned long long>(n),
              ((c.check.cpu && c.check.npu ? "cpu+npu" : (c.check.cpu ? "cpu" : "npu")) +
               std::string(c.ref ? "+ref" : ""))
                  .c_str(),
              c.gen.halfs ? ", f32/f16/bf16" : (c.gen.floats ? ", f32" : ""),
              c.gen.tiles ? ", tiles" : "", failures.load(), secs,
              secs > 0 ? double(n) / secs : 0.0, n ? double(draws.load()) / double(n) : 0.0);
  return failures.load() ? 1 : 0;
}
