// The npu model: pipe overlap of the ping-pong sample, the trace, and the model's agreement with
// the cpu backend (its calibration against hardware is NpuCalibrationTest.cpp).
#include "isa/Numerics.h"
#include "runtime/Runtime.h"
#include "runtime/npu/Report.h"
#include "tests/unit/TestSupport.h"

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

using test::readText;
using test::sourcePath;

Module buildKernel(const std::string& path) {
  return test::buildModule(path);
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
        buffers[i].setBits(k, isa::encodeFromDouble(ps[i].dtype, d(rng), isa::RoundMode::CAST_RINT,
                                                    isa::SatMode::ON));
    EXPECT_FALSE(l.value().bind("#" + std::to_string(i), &buffers[i]));
  }
  RunStats stats;
  auto st = l.value().run(opts, &stats);
  EXPECT_FALSE(st) << (st ? st->message : "");
  return stats;
}

/// The module's kernel on the npu model with every op recorded (for the trace and profile).
RunStats runRecorded(const Module& mod) {
  std::vector<Tensor> bufs;
  RunOptions opts;
  opts.backend = Backend::Npu;
  opts.recordOps = true;
  return runAll(mod, opts, bufs);
}

} // namespace

// The double-buffered sample overlaps its pipes (its time is close to its busiest pipe's); the
// single-buffered twin does not when it is linked without multi-buffering (--no-multibuf: its time
// is the pipes' busy cycles added up), and does when the linker rotates its tile over copies
// (docs/sync.md 5a, the default); all give the cpu backend's bytes.
TEST(Npu, PingPongOverlapsSingleBufferDoesNot) {
  struct Ratios {
    double toSum, toBusiest;
  };
  auto overlap = [](const std::string& file, bool multiBuffer, std::vector<Tensor>& out) {
    const std::string path = sourcePath("samples/pingpong/" + file);
    link::LinkOptions lo;
    lo.sync = link::SyncMode::Insert;
    lo.multiBuffer = multiBuffer;
    link::LinkResult lr = link::link({{"k.o", test::assembleFile(path)}}, lo);
    EXPECT_TRUE(lr.ok()) << file;
    auto bytes = obj::writeImage(lr.ok() ? *lr.image : obj::Image{});
    EXPECT_EQ(bytes.index(), 0u);
    auto loaded = Module::load(std::get<0>(bytes), path);
    EXPECT_TRUE(loaded.ok());
    Module mod = std::move(loaded.value());
    RunOptions opts;
    opts.backend = Backend::Npu;
    RunStats s = runAll(mod, opts, out);
    const NpuBlock& b = s.npu.at(0);
    uint64_t sum = 0, busiest = 0;
    for (uint64_t busy : b.busy)
      sum += busy, busiest = std::max(busiest, busy);
    std::vector<Tensor> cpu;
    runAll(mod, RunOptions{}, cpu);
    EXPECT_EQ(cpu.at(1).data, out.at(1).data) << file;
    const double cycles = static_cast<double>(b.cycles);
    return Ratios{cycles / static_cast<double>(sum), cycles / static_cast<double>(busiest)};
  };
  std::vector<Tensor> pp, single, rotated;
  const Ratios ppRatio = overlap("pingpong.pto", true, pp);
  const Ratios singleRatio = overlap("single.pto", false, single);
  const Ratios rotatedRatio = overlap("single.pto", true, rotated);
  EXPECT_LT(ppRatio.toBusiest, 1.1) << "ping-pong: total cycles / busiest pipe's busy cycles";
  EXPECT_LT(ppRatio.toSum, 0.6) << "ping-pong: total cycles / sum of busy cycles";
  EXPECT_GT(singleRatio.toSum, 0.9) << "single buffer: total cycles / sum of busy cycles";
  EXPECT_LT(rotatedRatio.toBusiest, 1.1) << "single buffer, multi-buffered by the linker";
  EXPECT_LT(rotatedRatio.toSum, 0.6) << "single buffer, multi-buffered by the linker";
  EXPECT_EQ(pp.at(1).data, single.at(1).data);
  EXPECT_EQ(pp.at(1).data, rotated.at(1).data);
}

// The trace is Chrome trace-event JSON: named pipe tracks, one slice per op with its source
// line, and every flow start (set_flag) has its finish (wait_flag).
TEST(Npu, TraceHasTracksSlicesAndFlows) {
  Module mod = buildKernel(sourcePath("samples/pingpong/pingpong.pto"));
  RunStats s = runRecorded(mod);
  auto doc = nlohmann::json::parse(npu::chromeTrace(mod, s));
  std::set<std::string> tracks;
  std::map<int64_t, int> flows;
  size_t slices = 0, texp = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name")
      tracks.insert(e["args"]["name"].get<std::string>());
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
  for (auto& [id, n] : flows)
    EXPECT_EQ(n, 101) << "flow " << id;
  const std::string prof = npu::profile(mod, s, 3);
  EXPECT_NE(prof.find("TLOAD"), std::string::npos) << prof;
}

// Time only moves forward on every pipe, ops on one pipe never overlap, and a wait_flag never
// ends before the set_flag that released it.
TEST(Npu, PipesAreInOrderAndWaitsFollowSets) {
  Module mod = buildKernel(sourcePath("samples/pingpong/pingpong.pto"));
  RunStats s = runRecorded(mod);
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
            s = std::fma(static_cast<float>(a.at(i * 128 + k)),
                         static_cast<float>(b.at(k * 64 + j)), s);
          acc = k0 == 0 ? s : acc + s;
        }
        ASSERT_EQ(static_cast<float>(c.at(i * 64 + j)), acc)
            << i << "," << j << (backend == Backend::Npu ? " npu" : " cpu");
      }
  }
}
