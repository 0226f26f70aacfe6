// The harness pto-bench-run's comparisons share: 64-byte aligned buffers, a tile op called
// directly on tiles resident in one buffer (TileBench), and compare(), which times an op beside
// its reference in the same run and records the ratio in gSummary.
#pragma once

#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/Runtime.h"
#include "runtime/cpu/Elem.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace pto::bench {

using isa::DType;

/// A zeroed byte buffer starting on a 64-byte boundary. Both the kernels' tiles and the memcpy
/// references live in these: a large std::vector's data sits 16 bytes past a page boundary,
/// which splits every other 32-byte access across cache lines and makes a run 2-3x slower or
/// not depending on where malloc put it.
struct Aligned {
  std::vector<uint8_t> v;
  uint8_t* p;
  explicit Aligned(size_t n, uint8_t fill = 0) : v(n + 64, fill) {
    p = v.data() + (64 - reinterpret_cast<uintptr_t>(v.data()) % 64) % 64;
  }
  // Moves keep the vector's heap block, so p stays valid; copies would not.
  Aligned(Aligned&&) = default;
  Aligned& operator=(Aligned&&) = default;
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  uint8_t* data() { return p; }
};

/// One TileInst over row-major vec tiles placed one after another (64-byte aligned) in a
/// private buffer.
struct TileBench {
  rt::Core core;
  rt::TileInst inst;
  Aligned vec{0};

  TileBench(isa::OpId op, std::vector<DType> types, uint32_t rows, uint32_t cols) {
    inst.op = op;
    inst.name = isa::info(op).mnemonic.data();
    size_t off = 0;
    for (DType t : types) {
      rt::TileOperand o;
      o.dtype = t;
      o.rows = rows;
      o.cols = cols;
      o.validRows = static_cast<int32_t>(rows);
      o.validCols = static_cast<int32_t>(cols);
      o.offset = static_cast<uint32_t>(off);
      o.name = "t" + std::to_string(inst.tiles.size());
      off += (o.bytes() + 63) / 64 * 64;
      inst.tiles.push_back(o);
    }
    vec = Aligned(off);
    for (const rt::TileOperand& o : inst.tiles) // ordinary finite values of each tile's type
      for (size_t i = 0; i < size_t{rows} * cols; ++i)
        rt::cpu::setBits(vec.data() + o.offset, isa::bitWidth(o.dtype), i,
                         isa::encodeFromDouble(o.dtype, 0.25 * static_cast<double>(i % 97) - 7.0,
                                               isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    core.buf[static_cast<unsigned>(isa::Loc::Vec)] = vec.data();
    inst.dim[0] = {0, cols, true};
    inst.dim[1] = {0, rows, true};
    inst.dst = 0;
    inst.src0 = types.size() > 1 ? 1 : -1;
    inst.src1 = types.size() > 2 ? 2 : -1;
  }
  bool ready() { return !rt::selectKernel(inst) && inst.kernel; }
  void run() { inst.kernel(core, inst); }
};

inline std::vector<std::string> gSummary;

/// The calling thread's CPU seconds: single-threaded figures are timed in CPU time, which other
/// load on a shared machine stretches far less than wall time.
inline double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}
inline double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Seconds per call of f (at least 0.2 s of calls), on `clock`. The clock is read once per
/// batch of calls, the batches doubling: reading the thread CPU clock is a system call, 1.6 us
/// in this machine's VM, which read after every call made a 1 us op and its 1 us reference
/// measure mostly the clock (and their ratio 1).
inline double secondsPer(const std::function<void()>& f, double (*clock)() = threadSeconds) {
  const double t0 = clock();
  long n = 0;
  double s = 0;
  for (long batch = 1;; batch *= 2) {
    for (long i = 0; i < batch; ++i)
      f();
    n += batch;
    s = clock() - t0;
    if (s >= 0.2) break;
  }
  return s / static_cast<double>(n);
}

/// Best of three timings of f and of ref (thread CPU time; wall time for multi-threaded runs);
/// records "what: ratio" and returns the ratio (reference time / f's time).
inline double compare(const std::string& what, const std::string& refName,
                      const std::function<void()>& f, const std::function<void()>& ref,
                      bool wall = false) {
  double a = 1e30, b = 1e30;
  for (int i = 0; i < 3; ++i) {
    a = std::min(a, secondsPer(f, wall ? wallSeconds : threadSeconds));
    b = std::min(b, secondsPer(ref, wall ? wallSeconds : threadSeconds));
  }
  std::ostringstream s;
  s.precision(3);
  s << what << ": " << a * 1e6 << " us, " << refName << ": " << b * 1e6 << " us, rate vs reference "
    << b / a;
  gSummary.push_back(s.str());
  return b / a;
}

/// The f32 and f16 math ops vs libmvec / plain vector loops, and the reductions and broadcasts
/// vs memcpy (math_bench.cpp; nothing on other CPUs than x86-64).
void compareExp();
void compareMath();
void compareF16Math();
void compareReduce();

} // namespace pto::bench
