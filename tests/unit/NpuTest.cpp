// The npu model: calibration against the measured anchors (and the generated table in
// docs/npu-calibration.md), pipe overlap of the ping-pong sample, the trace, and the model's
// agreement with the cpu backend.
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"
#include "runtime/npu/Report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

using namespace pto;
using namespace pto::rt;

namespace {

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string sourcePath(const std::string& rel) { return std::string(PTO_SOURCE_DIR) + "/" + rel; }

/// .pto -> object -> image (with --auto-sync) -> Module, all in process.
Module buildKernel(const std::string& path) {
  as::SourceFile src(path, readText(path));
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  EXPECT_TRUE(m) << err.str();
  const isa::Arch arch = as::resolveArch(*m, std::nullopt);
  as::verifyModule(*m, arch, diags);
  auto o = as::lowerModule(*m, arch, diags);
  EXPECT_TRUE(o) << err.str();
  link::LinkOptions opts;
  opts.autoSync = true;
  link::LinkResult r = link::link({{"k.o", *o}}, opts);
  std::string msgs;
  for (const auto& d : r.diags) msgs += d.text + "\n";
  EXPECT_TRUE(r.ok()) << msgs;
  auto bytes = obj::writeImage(*r.image);
  EXPECT_EQ(bytes.index(), 0u);
  auto mod = Module::load(std::get<0>(bytes), std::filesystem::path(path).filename().string());
  EXPECT_TRUE(mod.ok()) << (mod.ok() ? "" : mod.error().message);
  return mod.value();
}

/// Runs the module's only kernel with every tensor_view parameter bound to values in [-1, 1).
RunStats runAll(const Module& mod, RunOptions opts, std::vector<Tensor>& buffers) {
  auto names = mod.kernelNames();
  EXPECT_EQ(names.size(), 1u);
  auto l = mod.launch(names.at(0));
  EXPECT_TRUE(l.ok());
  const auto& ps = l.value().params();
  buffers.assign(ps.size(), {});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1, 1);
  for (size_t i = 0; i < ps.size(); ++i) {
    buffers[i] = Tensor::zeros(ps[i].dtype, ps[i].shape);
    if (isa::isFloat(ps[i].dtype))
      for (int64_t k = 0; k < buffers[i].numel(); ++k)
        buffers[i].setBits(k, isa::encodeFromDouble(ps[i].dtype, d(rng), isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    EXPECT_FALSE(l.value().bind("#" + std::to_string(i), &buffers[i]));
  }
  RunStats stats;
  auto st = l.value().run(opts, &stats);
  EXPECT_FALSE(st) << (st ? st->message : "");
  return stats;
}

struct Anchor {
  std::string file, op;
  uint64_t cycles = 0;
};

std::vector<Anchor> calibrationSamples() {
  std::vector<Anchor> out;
  const std::regex anchor(R"(anchor: (\w+) (\d+))");
  for (const auto& e : std::filesystem::directory_iterator(sourcePath("samples/npu-calibration"))) {
    if (e.path().extension() != ".pto") continue;
    std::smatch m;
    const std::string text = readText(e.path().string());
    if (!std::regex_search(text, m, anchor)) continue;
    out.push_back({e.path().string(), m[1], std::stoull(m[2])});
  }
  std::sort(out.begin(), out.end(), [](const Anchor& a, const Anchor& b) { return a.file < b.file; });
  return out;
}

std::string calibrationTable() {
  std::string table = "| sample | op | anchor (cycles) | model (cycles) | error |\n|---|---|---:|---:|---:|\n";
  for (const Anchor& a : calibrationSamples()) {
    Module mod = buildKernel(a.file);
    std::vector<Tensor> bufs;
    RunOptions opts;
    opts.backend = Backend::Npu;
    opts.recordOps = true;
    RunStats stats = runAll(mod, opts, bufs);
    uint64_t model = 0;
    for (const NpuOp& r : stats.npu.at(0).records)
      if (a.op == r.name) model = r.end - r.start;
    const double err = (static_cast<double>(model) - static_cast<double>(a.cycles)) / static_cast<double>(a.cycles);
    EXPECT_LE(std::fabs(err), 0.10) << a.op << " in " << a.file << ": model " << model << ", anchor " << a.cycles;
    char row[256];
    snprintf(row, sizeof row, "| `%s` | %s | %llu | %llu | %+.1f%% |\n",
             std::filesystem::path(a.file).filename().string().c_str(), a.op.c_str(),
             static_cast<unsigned long long>(a.cycles), static_cast<unsigned long long>(model), 100 * err);
    table += row;
  }
  return table;
}

} // namespace

// Every single-op calibration sample reproduces its anchor within 10%, and the table in
// docs/npu-calibration.md is the one this test generates (PTO_UPDATE_DOCS=1 rewrites it).
TEST(Npu, CalibrationMatchesAnchorsAndDocs) {
  const std::string docPath = sourcePath("docs/npu-calibration.md");
  const std::string table = calibrationTable();
  ASSERT_GE(calibrationSamples().size(), 11u);
  const std::string header =
      "# npu model calibration\n\n"
      "Generated by the unit test `Npu.CalibrationMatchesAnchorsAndDocs` (regenerate with\n"
      "`PTO_UPDATE_DOCS=1 build/tests/pto-unit-tests --gtest_filter=Npu.Calib*`). Each row runs one\n"
      "single-op kernel of `samples/npu-calibration/` through pto-as, pto-ld --auto-sync and the npu\n"
      "model (A2/A3), and compares the op's own cycles with the whole-instruction anchor measured on\n"
      "910B3 (`../shared/reference/pto-isa-semantics.md` 7.2). The test fails beyond 10%.\n\n";
  const std::string doc = header + table;
  if (const char* u = std::getenv("PTO_UPDATE_DOCS"); u && std::string(u) == "1") {
    std::ofstream(docPath) << doc;
    return;
  }
  EXPECT_EQ(readText(docPath), doc) << "docs/npu-calibration.md is stale; regenerate it with PTO_UPDATE_DOCS=1";
}

// The double-buffered sample overlaps its pipes; the single-buffered twin does not; both give
// the cpu backend's bytes.
TEST(Npu, PingPongOverlapsSingleBufferDoesNot) {
  auto overlap = [](const std::string& file, std::vector<Tensor>& out) {
    Module mod = buildKernel(sourcePath("samples/pingpong/" + file));
    RunOptions opts;
    opts.backend = Backend::Npu;
    RunStats s = runAll(mod, opts, out);
    const NpuBlock& b = s.npu.at(0);
    uint64_t sum = 0;
    for (uint64_t busy : b.busy) sum += busy;
    std::vector<Tensor> cpu;
    runAll(mod, RunOptions{}, cpu);
    EXPECT_EQ(cpu.at(1).data, out.at(1).data) << file;
    return static_cast<double>(b.cycles) / static_cast<double>(sum);
  };
  std::vector<Tensor> pp, single;
  const double ppRatio = overlap("pingpong.pto", pp), singleRatio = overlap("single.pto", single);
  EXPECT_LT(ppRatio, 0.5) << "ping-pong: total cycles / sum of busy cycles";
  EXPECT_GT(singleRatio, 0.9) << "single buffer: total cycles / sum of busy cycles";
  EXPECT_EQ(pp.at(1).data, single.at(1).data);
}

// The trace is Chrome trace-event JSON: named pipe tracks, one slice per op with its source
// line, and every flow start (set_flag) has its finish (wait_flag).
TEST(Npu, TraceHasTracksSlicesAndFlows) {
  Module mod = buildKernel(sourcePath("samples/pingpong/pingpong.pto"));
  std::vector<Tensor> bufs;
  RunOptions opts;
  opts.backend = Backend::Npu;
  opts.recordOps = true;
  RunStats s = runAll(mod, opts, bufs);
  auto doc = nlohmann::json::parse(npu::chromeTrace(mod, s));
  std::set<std::string> tracks;
  std::map<int64_t, int> flows;
  size_t slices = 0, texp = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    if (ph == "X") {
      ++slices;
      EXPECT_NE(e["args"]["source"].get<std::string>().find("pingpong.pto:"), std::string::npos);
      texp += e["name"] == "TEXP";
    }
    if (ph == "s") ++flows[e["id"].get<int64_t>()];
    if (ph == "f") flows[e["id"].get<int64_t>()] += 100;
  }
  EXPECT_TRUE(tracks.count("PIPE_V") && tracks.count("PIPE_MTE2") && tracks.count("PIPE_MTE3"));
  EXPECT_EQ(texp, 64u);
  EXPECT_GT(slices, 300u);
  ASSERT_FALSE(flows.empty());
  for (auto& [id, n] : flows) EXPECT_EQ(n, 101) << "flow " << id;
  const std::string prof = npu::profile(mod, s, 3);
  EXPECT_NE(prof.find("TLOAD"), std::string::npos) << prof;
}

// Time only moves forward on every pipe, ops on one pipe never overlap, and a wait_flag never
// ends before the set_flag that released it.
TEST(Npu, PipesAreInOrderAndWaitsFollowSets) {
  Module mod = buildKernel(sourcePath("samples/pingpong/pingpong.pto"));
  std::vector<Tensor> bufs;
  RunOptions opts;
  opts.backend = Backend::Npu;
  opts.recordOps = true;
  RunStats s = runAll(mod, opts, bufs);
  std::array<uint64_t, 8> lastEnd{};
  std::map<int64_t, uint64_t> setEnd;
  std::vector<NpuOp> recs = s.npu.at(0).records;
  for (const NpuOp& r : recs) {
    if (r.pipe == static_cast<uint8_t>(isa::Pipe::S)) continue;
    EXPECT_GE(r.start, lastEnd[r.pipe]) << r.name;
    EXPECT_GE(r.end, r.start);
    lastEnd[r.pipe] = std::max(lastEnd[r.pipe], r.end);
    if (r.flowOut >= 0) setEnd[r.flowOut] = r.end;
  }
  for (const NpuOp& r : recs)
    if (r.flowIn >= 0) {
      ASSERT_TRUE(setEnd.count(r.flowIn));
      EXPECT_GT(r.end, setEnd[r.flowIn]);
    }
}

// samples/matmul: C = A x B over four K steps (tmatmul, then tmatmul.acc) with explicit events,
// on both backends, against a reference in the documented accumulation order (per step one f32
// fma per k from zero, the accumulator added at the end).
TEST(Npu, SampleMatmulMatchesReferenceOnBothBackends) {
  Module mod = buildKernel(sourcePath("samples/matmul/matmul.pto"));
  for (Backend backend : {Backend::Cpu, Backend::Npu}) {
    std::vector<Tensor> t;
    RunOptions opts;
    opts.backend = backend;
    runAll(mod, opts, t);
    const Tensor &a = t.at(0), &b = t.at(1), &c = t.at(2);
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 64; ++j) {
        float acc = 0;
        for (int k0 = 0; k0 < 128; k0 += 32) {
          float s = 0;
          for (int k = k0; k < k0 + 32; ++k)
            s = std::fma(static_cast<float>(a.at(i * 128 + k)), static_cast<float>(b.at(k * 64 + j)), s);
          acc = k0 == 0 ? s : acc + s;
        }
        ASSERT_EQ(static_cast<float>(c.at(i * 64 + j)), acc) << i << "," << j << (backend == Backend::Npu ? " npu" : " cpu");
      }
  }
}
