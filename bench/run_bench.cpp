// pto-bench-run: the cpu backend's tile kernels and whole kernels, each figure printed beside a
// reference measured in the same run, as a ratio:
//   - elementwise TADD (f32, f16) on 64x64 and 128x256 tiles vs memcpy of one tile's bytes;
//   - TCVT f32 -> f16 (RINT) vs the same memcpy;
//   - TMATMUL 128x128x128 (f32) vs a naive triple loop;
//   - the tiled vector add over 64 MiB tensors with 1 and 2 blocks vs a plain C++ loop.
// The tile kernels are called directly (decoded TileInst, kernel picked by selectKernel), so
// the figures are the kernels' own cost.
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "isa/Numerics.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <vector>

namespace {

using namespace pto;
using isa::DType;

// ------------------------------------------------------------------ single tile ops
/// One TileInst over row-major vec tiles placed one after another in a private buffer.
struct TileBench {
  rt::Core core;
  rt::TileInst inst;
  std::vector<uint8_t> vec;

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
    vec.assign(off, 0);
    for (const rt::TileOperand& o : inst.tiles) // ordinary finite values of each tile's type
      for (size_t i = 0; i < size_t{rows} * cols; ++i)
        rt::cpu::setBits(vec.data() + o.offset, isa::bitWidth(o.dtype), i,
                         isa::encodeFromDouble(o.dtype, 0.25 * static_cast<double>(i % 97) - 7.0, isa::RoundMode::CAST_RINT, isa::SatMode::ON));
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

std::vector<std::string> gSummary;

double secondsPer(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  int n = 0;
  double s = 0;
  do {
    f();
    ++n;
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (s < 0.2);
  return s / n;
}

/// Best of three timings of f and of ref; records "what: ratio".
void compare(const std::string& what, const std::string& refName, const std::function<void()>& f, const std::function<void()>& ref) {
  double a = 1e30, b = 1e30;
  for (int i = 0; i < 3; ++i) {
    a = std::min(a, secondsPer(f));
    b = std::min(b, secondsPer(ref));
  }
  std::ostringstream s;
  s.precision(3);
  s << what << ": " << a * 1e6 << " us, " << refName << ": " << b * 1e6 << " us, rate vs reference " << b / a;
  gSummary.push_back(s.str());
}

void BM_Tile(benchmark::State& state, isa::OpId op, std::vector<DType> types, uint32_t rows, uint32_t cols) {
  TileBench b(op, types, rows, cols);
  if (!b.ready()) return state.SkipWithError("no kernel");
  for (auto _ : state) {
    b.run();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * int64_t{rows} * cols * isa::bitWidth(types[0]) / 8);
}

void BM_Memcpy(benchmark::State& state, size_t bytes) {
  std::vector<uint8_t> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

void compareTile(const std::string& what, isa::OpId op, std::vector<DType> types, uint32_t rows, uint32_t cols) {
  TileBench b(op, types, rows, cols);
  if (!b.ready()) return gSummary.push_back(what + ": no kernel");
  const size_t bytes = size_t{rows} * cols * isa::bitWidth(types[0]) / 8;
  std::vector<uint8_t> x(bytes, 1), y(bytes);
  compare(what, "memcpy of " + std::to_string(bytes) + " bytes", [&] { b.run(); }, [&] {
    std::memcpy(y.data(), x.data(), bytes);
    benchmark::ClobberMemory();
  });
}

// ------------------------------------------------------------------ matmul
constexpr uint32_t kMM = 128;

void naiveMatmul(const std::vector<float>& A, const std::vector<float>& B, std::vector<float>& C) {
  for (uint32_t i = 0; i < kMM; ++i)
    for (uint32_t j = 0; j < kMM; ++j) {
      float acc = 0;
      for (uint32_t k = 0; k < kMM; ++k) acc += A[i * kMM + k] * B[k * kMM + j];
      C[i * kMM + j] = acc;
    }
  benchmark::ClobberMemory();
}

TileBench matmulBench() {
  TileBench b(isa::OpId::TMATMUL, {DType::F32, DType::F32, DType::F32}, kMM, kMM);
  b.inst.dim[0] = {0, kMM, true}; // M
  b.inst.dim[1] = {0, kMM, true}; // N
  b.inst.dim[2] = {0, kMM, true}; // K
  return b;
}

void BM_Matmul(benchmark::State& state) {
  TileBench b = matmulBench();
  if (!b.ready()) return state.SkipWithError("no kernel");
  for (auto _ : state) b.run();
  state.counters["flop/s"] = benchmark::Counter(2.0 * kMM * kMM * kMM * double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_NaiveMatmul(benchmark::State& state) {
  std::vector<float> A(kMM * kMM, 0.5f), B(kMM * kMM, 0.25f), C(kMM * kMM);
  for (auto _ : state) naiveMatmul(A, B, C);
  state.counters["flop/s"] = benchmark::Counter(2.0 * kMM * kMM * kMM * double(state.iterations()), benchmark::Counter::kIsRate);
}

// ------------------------------------------------------------------ whole tiled vector add
constexpr int64_t kRows = 65536, kCols = 256; // 64 MiB per f32 tensor

std::optional<rt::Module> buildVadd() {
  std::string path = std::string(PTO_SOURCE_DIR) + "/samples/vadd-tiled/vadd_tiled.pto";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // The sample's 1024 rows become 65536: the same kernel over 64 MiB tensors.
  for (auto [from, to] : {std::pair<std::string, std::string>{"1024x256", "65536x256"}, {"1024 : index", "65536 : index"}})
    for (size_t p; (p = text.find(from)) != std::string::npos;) text.replace(p, from.size(), to);
  as::SourceFile src(path, text);
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

struct Vadd {
  rt::Module module;
  rt::Tensor x, y, z;
};
Vadd* gVadd = nullptr;

bool runVadd(uint32_t blocks) {
  auto launch = gVadd->module.launch("vadd_tiled");
  if (!launch) return false;
  if (launch->bind("x", &gVadd->x) || launch->bind("y", &gVadd->y) || launch->bind("z", &gVadd->z)) return false;
  rt::RunOptions opts;
  opts.blocks = blocks;
  return !launch->run(opts);
}

void plainAdd() {
  const auto* x = reinterpret_cast<const float*>(gVadd->x.data.data());
  const auto* y = reinterpret_cast<const float*>(gVadd->y.data.data());
  auto* z = reinterpret_cast<float*>(gVadd->z.data.data());
  for (int64_t i = 0; i < kRows * kCols; ++i) z[i] = x[i] + y[i];
  benchmark::ClobberMemory();
}

void BM_PlainAdd64MiB(benchmark::State& state) {
  for (auto _ : state) plainAdd();
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
}

void BM_VaddTiled64MiB(benchmark::State& state) {
  for (auto _ : state)
    if (!runVadd(static_cast<uint32_t>(state.range(0)))) state.SkipWithError("kernel failed");
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 12);
}

void registerTileBenchmarks() {
  using isa::OpId;
  for (auto [r, c] : {std::pair<uint32_t, uint32_t>{64, 64}, {128, 256}}) {
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    benchmark::RegisterBenchmark(("TADD_f32/" + shape).c_str(), BM_Tile, OpId::TADD, std::vector{DType::F32, DType::F32, DType::F32}, r, c);
    benchmark::RegisterBenchmark(("memcpy_f32/" + shape).c_str(), BM_Memcpy, size_t{r} * c * 4);
    benchmark::RegisterBenchmark(("TADD_f16/" + shape).c_str(), BM_Tile, OpId::TADD, std::vector{DType::F16, DType::F16, DType::F16}, r, c);
    benchmark::RegisterBenchmark(("memcpy_f16/" + shape).c_str(), BM_Memcpy, size_t{r} * c * 2);
  }
  benchmark::RegisterBenchmark("TCVT_f32_f16/128x256", BM_Tile, OpId::TCVT, std::vector{DType::F16, DType::F32}, 128u, 256u);
  benchmark::RegisterBenchmark("TMATMUL_f32/128x128x128", BM_Matmul);
  benchmark::RegisterBenchmark("naive_matmul/128x128x128", BM_NaiveMatmul);
}

void summarizeTiles() {
  using isa::OpId;
  for (auto [r, c] : {std::pair<uint32_t, uint32_t>{64, 64}, {128, 256}}) {
    const std::string shape = std::to_string(r) + "x" + std::to_string(c);
    compareTile("TADD f32 " + shape, OpId::TADD, {DType::F32, DType::F32, DType::F32}, r, c);
    compareTile("TADD f16 " + shape, OpId::TADD, {DType::F16, DType::F16, DType::F16}, r, c);
  }
  // TCVT: the memcpy reference moves the f16 result's bytes.
  {
    TileBench b(OpId::TCVT, {DType::F16, DType::F32}, 128, 256);
    if (b.ready()) {
      std::vector<uint8_t> x(128 * 256 * 2, 1), y(x.size());
      compare("TCVT f32->f16 128x256", "memcpy of the f16 bytes", [&] { b.run(); }, [&] {
        std::memcpy(y.data(), x.data(), x.size());
        benchmark::ClobberMemory();
      });
    }
  }
  TileBench mm = matmulBench();
  std::vector<float> A(kMM * kMM, 0.5f), B(kMM * kMM, 0.25f), C(kMM * kMM);
  if (mm.ready()) compare("TMATMUL f32 128x128x128", "naive triple loop", [&] { mm.run(); }, [&] { naiveMatmul(A, B, C); });
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto module = buildVadd();
  if (!module) {
    std::cerr << "pto-bench-run: the 64 MiB vector-add kernel does not build\n";
    return 1;
  }
  Vadd v{*module, rt::Tensor::zeros(DType::F32, {kRows, kCols}), rt::Tensor::zeros(DType::F32, {kRows, kCols}),
         rt::Tensor::zeros(DType::F32, {kRows, kCols})};
  gVadd = &v;
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    reinterpret_cast<float*>(v.x.data.data())[i] = static_cast<float>(i % 97);
    reinterpret_cast<float*>(v.y.data.data())[i] = 2.0f;
  }
  if (!runVadd(1)) {
    std::cerr << "pto-bench-run: the vector-add kernel fails\n";
    return 1;
  }
  registerTileBenchmarks();
  benchmark::RegisterBenchmark("plain_add/64MiB", BM_PlainAdd64MiB)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("vadd_tiled/64MiB", BM_VaddTiled64MiB)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();

  summarizeTiles();
  compare("vadd_tiled 64 MiB, 1 block", "plain C++ loop", [] { runVadd(1); }, plainAdd);
  compare("vadd_tiled 64 MiB, 2 blocks", "plain C++ loop", [] { runVadd(2); }, plainAdd);
  compare("vadd_tiled 64 MiB, 2 blocks", "1 block (scaling)", [] { runVadd(2); }, [] { runVadd(1); });
  std::cout << "\nside by side (best of 3, same run):\n";
  for (const std::string& s : gSummary) std::cout << "  " << s << "\n";
  benchmark::Shutdown();
  return 0;
}
