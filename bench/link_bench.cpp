// Linker benchmark: memory planning and event-id allocation for a generated function
// (tiles = ops / 10, loops every 40 ops, a few accumulators live across the whole function,
// a symbolic set/wait pair every 8 ops). Prints 1k -> 10k -> 100k ops (100 -> 1k -> 10k tiles)
// and the growth ratios: ~10x per step is linear, ~100x would be quadratic.
//
// Then the whole of pto-ld (link::link, auto mode: the dependency analysis, sync insertion and
// the re-check) on a generated straight-line kernel of N tile ops over 32 tiles, N = 1k, 10k and
// 100k: the time per op at each size and the ratio of the 100k per-op time to the 1k one
// (1.0 is linear; a quadratic analysis gives ~100).
//
// Then loops: a function of N sequential loops (load, vector op, store; zero-trip paths make
// every earlier loop's accesses reach every later one), N = 500 .. 4000: the time per doubling
// (2.0 is linear, 4.0 quadratic). Last, the pto-ld executable on such a function of ~0.7 MB
// beside ld.lld linking an x86-64 object of the same size (both as processes, CPU time, best
// of 5; the shell that starts each is counted for both).
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "link/Events.h"
#include "link/Linker.h"
#include "link/Planner.h"
#include "obj/Object.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace pto;
using namespace pto::link;

namespace {

struct Generated {
  FunctionCfg cfg;
  std::vector<PlanTile> tiles;
  std::vector<int32_t> blockEvent;
  std::vector<std::pair<isa::Pipe, isa::Pipe>> pipes;
  std::vector<std::string> names;
};

Generated generate(size_t ops) {
  Generated g;
  std::mt19937 rng(42);
  const size_t numTiles = std::max<size_t>(ops / 10, 16);
  for (size_t i = 0; i < numTiles; ++i)
    g.tiles.push_back({"t" + std::to_string(i), isa::Loc::Vec, 256u * (1 + rng() % 8), -1, -1, 0});
  std::vector<bool> fixedSucc;
  auto add = [&](Block b, std::vector<TileUse> uses) {
    b.offset = g.cfg.blocks.size() * 16;
    b.end = b.offset + 16;
    b.firstUse = static_cast<uint32_t>(g.cfg.uses.size());
    b.numUses = static_cast<uint32_t>(uses.size());
    g.cfg.uses.insert(g.cfg.uses.end(), uses.begin(), uses.end());
    g.cfg.blocks.push_back(b);
    fixedSucc.push_back(false);
    g.blockEvent.push_back(-1);
    return static_cast<uint32_t>(g.cfg.blocks.size() - 1);
  };
  const isa::Pipe pairs[][2] = {{isa::Pipe::MTE2, isa::Pipe::V},
                                {isa::Pipe::V, isa::Pipe::MTE3},
                                {isa::Pipe::MTE3, isa::Pipe::MTE2}};
  uint32_t header = add(Block{}, {});
  int32_t pendingEvent = -1;
  for (size_t i = 0; i < ops; ++i) {
    uint32_t cur = static_cast<uint32_t>((i / 10) % numTiles);
    // The previous group's tile, within the same loop body (a value defined in a loop and read
    // after it is live from the function entry on the zero-trip path).
    uint32_t prev = i % 40 < 10 ? cur : static_cast<uint32_t>((i / 10 + numTiles - 1) % numTiles);
    uint32_t acc = static_cast<uint32_t>((i / 10000) * 10000 % numTiles); // long-lived accumulator
    Block b;
    b.kind = BlockKind::Tile;
    if (i % 10 == 0)
      add(b, {{cur, false, true, false}});
    else if (i % 10 == 9)
      add(b, {{acc, true, true, false}, {cur, true, false, false}});
    else
      add(b, {{cur, true, true, false}, {prev, true, false, false}});
    if (i % 8 == 3) { // set
      Block s;
      s.kind = BlockKind::Control;
      s.control = ExtCtl::SET_FLAG;
      const auto* p = pairs[(i / 8) % 3];
      s.srcPipe = p[0], s.dstPipe = p[1];
      pendingEvent = static_cast<int32_t>(g.pipes.size());
      g.pipes.push_back({p[0], p[1]});
      g.names.push_back("e" + std::to_string(i));
      g.blockEvent[add(s, {})] = pendingEvent;
    } else if (i % 8 == 6 && pendingEvent >= 0) { // wait
      Block w;
      w.kind = BlockKind::Control;
      w.control = ExtCtl::WAIT_FLAG;
      w.srcPipe = g.pipes[static_cast<size_t>(pendingEvent)].first,
      w.dstPipe = g.pipes[static_cast<size_t>(pendingEvent)].second;
      g.blockEvent[add(w, {})] = pendingEvent;
      pendingEvent = -1;
    }
    if (i % 40 == 39) { // close a loop: latch back to the header, then a new header
      uint32_t latch = add(Block{}, {});
      g.cfg.blocks[latch].succ[0] = static_cast<int32_t>(header);
      fixedSucc[latch] = true;
      g.cfg.blocks[header].succ[0] = static_cast<int32_t>(header + 1);
      g.cfg.blocks[header].succ[1] = static_cast<int32_t>(latch + 1);
      fixedSucc[header] = true;
      header = add(Block{}, {});
    }
  }
  add(Block{}, {});
  for (size_t i = 0; i < g.cfg.blocks.size(); ++i)
    if (!fixedSucc[i])
      g.cfg.blocks[i].succ[0] = i + 1 < g.cfg.blocks.size() ? static_cast<int32_t>(i + 1) : -1;
  g.cfg.computePreds();
  return g;
}

void run(const Generated& g) {
  PlanResult r = plan(g.cfg, g.tiles, isa::Arch::A2A3);
  EventPlan e = allocateEvents(g.cfg, g.blockEvent, g.pipes, g.names, isa::Arch::A2A3);
  benchmark::DoNotOptimize(r);
  benchmark::DoNotOptimize(e);
  if (!r.ok() || !e.errors.empty()) {
    static bool once = false;
    if (!once)
      std::fprintf(stderr, "unexpected error: %s\n",
                   !r.ok() ? r.errors[0].message.c_str() : e.errors[0].message.c_str());
    once = true;
  }
}

void BM_PlanAndEvents(benchmark::State& state) {
  Generated g = generate(static_cast<size_t>(state.range(0)));
  for (auto _ : state)
    run(g);
  state.counters["tiles"] = static_cast<double>(g.tiles.size());
  state.counters["blocks"] = static_cast<double>(g.cfg.blocks.size());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PlanAndEvents)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

double secondsFor(size_t ops) {
  Generated g = generate(ops);
  int reps = ops <= 1000 ? 200 : ops <= 10000 ? 20 : 3;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    run(g);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

/// A kernel of `ops` tile ops over 32 tiles: tload, tadd, tmul, tstore in turn, no sync (pto-ld
/// inserts it).
obj::ObjectFile syntheticKernel(size_t ops) {
  const unsigned tiles = 32;
  std::string text =
      "kernel @k(%x: !pto.tensor_view<64x64xf32>, %z: !pto.tensor_view<64x64xf32>) {\n  tile ";
  for (unsigned t = 0; t < tiles; ++t)
    text += (t ? ", %t" : "%t") + std::to_string(t);
  text += " : !pto.tile<f32, 16, 16>\n";
  auto t = [&](size_t k) { return "%t" + std::to_string(k % tiles); };
  for (size_t k = 0; k < ops; ++k) {
    const size_t g = k / 4;
    switch (k % 4) {
    case 0:
      text += "  tload " + t(g) + ", %x[0, 0]\n";
      break;
    case 1:
      text += "  tadd " + t(g + 1) + ", " + t(g) + ", " + t(g + 7) + "\n";
      break;
    case 2:
      text += "  tmul " + t(g + 2) + ", " + t(g + 1) + ", " + t(g) + "\n";
      break;
    default:
      text += "  tstore %z[0, 0], " + t(g + 2) + "\n";
      break;
    }
  }
  text += "}\n";
  as::SourceFile src("synthetic.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags, isa::Arch::A2A3);
  std::optional<obj::ObjectFile> o;
  if (m) {
    as::verifyModule(*m, isa::Arch::A2A3, diags);
    o = as::lowerModule(*m, isa::Arch::A2A3, diags);
  }
  if (!o) {
    std::fprintf(stderr, "synthetic kernel does not assemble: %s\n", err.str().c_str());
    std::exit(1);
  }
  return *o;
}

void linkOnce(const std::vector<link::InputObject>& in) {
  link::LinkResult r = link::link(in, link::LinkOptions{});
  if (!r.ok()) {
    std::fprintf(stderr, "synthetic kernel does not link: %s\n",
                 r.diags.empty() ? "?" : r.diags[0].text.c_str());
    std::exit(1);
  }
  benchmark::DoNotOptimize(r);
}

void BM_LinkAutoSync(benchmark::State& state) {
  std::vector<link::InputObject> in{
      {"synthetic.o", syntheticKernel(static_cast<size_t>(state.range(0)))}};
  for (auto _ : state)
    linkOnce(in);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_LinkAutoSync)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

double linkSecondsPerOp(size_t ops) {
  std::vector<link::InputObject> in{{"synthetic.o", syntheticKernel(ops)}};
  int reps = ops <= 1000 ? 50 : ops <= 10000 ? 5 : 1;
  linkOnce(in); // warm up
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    linkOnce(in);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps /
         static_cast<double>(ops);
}

/// A kernel of `loops` sequential loops over the same two tiles, no sync (pto-ld inserts it).
std::string loopsKernelText(size_t loops) {
  std::string text =
      "kernel @k(%x: !pto.tensor_view<64x64xf32>, %z: !pto.tensor_view<64x64xf32>) {\n"
      "  tile %a, %b : !pto.tile<f32, 16, 16>\n";
  for (size_t k = 0; k < loops; ++k)
    text += "  scf.for %i" + std::to_string(k) +
            " = 0 to 64 step 16 {\n    tload %a, %x[0, 0]\n    tadd %b, %a, %a\n"
            "    tstore %z[0, 0], %b\n  }\n";
  return text + "}\n";
}

obj::ObjectFile assembleText(const std::string& text) {
  as::SourceFile src("loops.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags, isa::Arch::A2A3);
  std::optional<obj::ObjectFile> o;
  if (m) {
    as::verifyModule(*m, isa::Arch::A2A3, diags);
    o = as::lowerModule(*m, isa::Arch::A2A3, diags);
  }
  if (!o) {
    std::fprintf(stderr, "loops kernel does not assemble: %s\n", err.str().c_str());
    std::exit(1);
  }
  return *o;
}

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

/// CPU seconds per link (the link is single-threaded; CPU time is steadier than wall time on a
/// shared machine).
double linkSeconds(const std::vector<link::InputObject>& in, int reps) {
  linkOnce(in);
  const double t0 = processCpuSeconds();
  for (int i = 0; i < reps; ++i)
    linkOnce(in);
  return (processCpuSeconds() - t0) / reps;
}

/// CPU seconds (user + system) the finished child processes have used so far.
double childCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

/// Best of `reps` CPU times of a shell command (which must succeed). CPU time, not wall time:
/// on a shared machine the other load changes wall times far more than CPU times.
double commandSeconds(const std::string& cmd, int reps) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const double t0 = childCpuSeconds();
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "failed: %s\n", cmd.c_str());
      return -1;
    }
    best = std::min(best, childCpuSeconds() - t0);
  }
  return best;
}

/// x86-64 assembly of one function with `loops` loops (a load, an add, a store, a call with a
/// PLT32 relocation and a compare-and-branch each) and a second function the calls reach.
std::string x86Loops(size_t loops) {
  std::string s = ".text\n.globl _start\n_start:\n";
  for (size_t k = 0; k < loops; ++k) {
    const std::string l = std::to_string(k);
    s += "  xorl %ecx, %ecx\n.Ll" + l + ":\n  movq (%rdi,%rcx,8), %rax\n  addq %rax, %rax\n" +
         "  movq %rax, (%rsi,%rcx,8)\n  call helper\n  addq $16, %rcx\n  cmpq $64, %rcx\n" +
         "  jb .Ll" + l + "\n";
  }
  return s + "  ret\n.globl helper\nhelper:\n  ret\n";
}

void versusLld() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("pto-bench-link-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const size_t loops = 2000;
  auto bytes = obj::writeObject(assembleText(loopsKernelText(loops)));
  const auto& data = std::get<std::vector<uint8_t>>(bytes);
  std::ofstream(dir / "k.o", std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  // The x86 object sized to match: assemble once to learn the bytes per loop, then scale.
  auto x86Object = [&](size_t n) {
    std::ofstream(dir / "x.s") << x86Loops(n);
    std::string cmd = std::string(PTO_LLVM_MC) + " -filetype=obj -triple=x86_64-linux-gnu " +
                      (dir / "x.s").string() + " -o " + (dir / "x.o").string();
    if (std::system(cmd.c_str()) != 0) return uint64_t{0};
    return static_cast<uint64_t>(fs::file_size(dir / "x.o"));
  };
  const uint64_t probe = x86Object(1000);
  if (probe == 0) {
    std::printf("\nld.lld reference: llvm-mc failed, not measured\n");
    return;
  }
  const uint64_t xBytes = x86Object(std::max<size_t>(1, data.size() * 1000 / probe));
  const double ld = commandSeconds(std::string(PTO_LD_PATH) + " " + (dir / "k.o").string() +
                                       " -o " + (dir / "k.img").string(),
                                   5);
  const double lld = commandSeconds(std::string(PTO_LD_LLD) + " " + (dir / "x.o").string() +
                                        " -o " + (dir / "x.out").string(),
                                    5);
  std::printf("\npto-ld (auto-sync) on %zu loops, %.2f MB object: %8.2f ms CPU\n", loops,
              static_cast<double>(data.size()) / 1e6, ld * 1e3);
  std::printf("ld.lld on an x86-64 object of %.2f MB:          %8.2f ms CPU\n",
              static_cast<double>(xBytes) / 1e6, lld * 1e3);
  std::printf("ratio pto-ld / ld.lld: %.2f (goal: at most 2)\n", ld / lld);
  fs::remove_all(dir);
}

void loopsScaling() {
  std::printf("\npto-ld in process, one function of N sequential loops (auto-sync), CPU time:\n");
  double prev = 0;
  for (size_t loops : {500, 1000, 2000, 4000}) {
    std::vector<link::InputObject> in{{"loops.o", assembleText(loopsKernelText(loops))}};
    const double t = linkSeconds(in, loops <= 1000 ? 10 : 3);
    if (prev > 0)
      std::printf("  %5zu loops: %8.2f ms  (x%.2f per doubling; linear = 2)\n", loops, t * 1e3,
                  t / prev);
    else
      std::printf("  %5zu loops: %8.2f ms\n", loops, t * 1e3);
    prev = t;
  }
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  double t1 = secondsFor(1000), t10 = secondsFor(10000), t100 = secondsFor(100000);
  std::printf("\nplanning + event allocation (one function):\n");
  std::printf("  %7s ops %6s tiles: %9.3f ms\n", "1k", "100", t1 * 1e3);
  std::printf("  %7s ops %6s tiles: %9.3f ms  (x%.1f)\n", "10k", "1k", t10 * 1e3, t10 / t1);
  std::printf("  %7s ops %6s tiles: %9.3f ms  (x%.1f)\n", "100k", "10k", t100 * 1e3, t100 / t10);
  std::printf("  growth per 10x: %.1f then %.1f (linear = 10, quadratic = 100)\n", t10 / t1,
              t100 / t10);
  double p1 = linkSecondsPerOp(1000), p10 = linkSecondsPerOp(10000),
         p100 = linkSecondsPerOp(100000);
  std::printf(
      "\npto-ld, auto mode (analysis, sync insertion, re-check), one function of N tile ops:\n");
  std::printf("  %7s ops: %8.3f us/op\n", "1k", p1 * 1e6);
  std::printf("  %7s ops: %8.3f us/op\n", "10k", p10 * 1e6);
  std::printf("  %7s ops: %8.3f us/op\n", "100k", p100 * 1e6);
  std::printf("  per-op ratio 100k/1k: %.2f (linear = 1.0)\n", p100 / p1);
  loopsScaling();
  versusLld();
  benchmark::Shutdown();
  return 0;
}
