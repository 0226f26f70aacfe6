// The arguments the host makes (runtime/Args.h: pto-run --auto-args and --list, the Python
// module's Image.run) and the cancellation of a run (RunOptions::cancel, ref::Options::cancel).
// Expected values come from the kernels' definitions: a [%n, 16] view spans 16 * n elements.
#include "runtime/Args.h"

#include "asm/codegen/RecordExtents.h"
#include "ref/Interp.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

using namespace pto;
using namespace pto::rt;

namespace {

// %y = |%x| over n rows of 16 f32.
const char* kAbs = R"(module {
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %vx = pto.make_tensor_view %x, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vy = pto.make_tensor_view %y, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    pto.section.vector {
      %t = pto.alloc_tile : !pto.tile_buf<vec, 1x16xf32>
      %u = pto.alloc_tile : !pto.tile_buf<vec, 1x16xf32>
      scf.for %i = %c0 to %n step %c1 {
        %px = pto.partition_view %vx, offsets = [%i, %c0], sizes = [%c1, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x16xf32>
        %py = pto.partition_view %vy, offsets = [%i, %c0], sizes = [%c1, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x16xf32>
        pto.tload ins(%px : !pto.partition_tensor_view<1x16xf32>) outs(%t : !pto.tile_buf<vec, 1x16xf32>)
        pto.tabs ins(%t : !pto.tile_buf<vec, 1x16xf32>) outs(%u : !pto.tile_buf<vec, 1x16xf32>)
        pto.tstore ins(%u : !pto.tile_buf<vec, 1x16xf32>) outs(%py : !pto.partition_tensor_view<1x16xf32>)
      }
    }
    return
  }
})";

// Three nested loops of %n iterations each: long enough to be cancelled (the kernel the Python
// tests cancel too).
std::string spinKernel() {
  std::ifstream in(std::string(PTO_SOURCE_DIR) + "/tests/inputs/spin.pto");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "tests/inputs/spin.pto is missing";
  return text.str();
}

/// pto-as (with the extents pto-as records) and pto-ld in process.
Module build(const char* text) {
  as::SourceFile src("k.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  EXPECT_TRUE(m) << err.str();
  obj::ObjectFile o = test::assembleText(text, std::nullopt, "k.pto");
  as::recordExtents(*m, o);
  auto bytes = obj::writeImage(test::linkOne(o));
  auto mod = Module::load(std::get<0>(bytes), "k.img");
  EXPECT_TRUE(mod.ok()) << (mod.ok() ? "" : mod.error().message);
  return mod.value();
}

} // namespace

TEST(HostArgs, DescribeParamsAsList) {
  Module m = build(kAbs);
  auto d = describeParams(m, "k");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].param->name, "x");
  EXPECT_EQ(d[0].type, "ptr<f32>");
  EXPECT_EQ(d[0].extentExpr, "16*%n");
  EXPECT_EQ(d[0].extent, "extent 16*%n elements");
  EXPECT_EQ(d[2].type, "index");
  EXPECT_EQ(d[2].extent, "scalar");
  EXPECT_TRUE(describeParams(m, "nope").empty());
}

TEST(HostArgs, MissingArgsAreMadeFromTheExtents) {
  Module m = build(kAbs);
  auto L = m.launch("k");
  ASSERT_TRUE(L.ok());
  GivenArgs given;
  ASSERT_FALSE(L->bindScalar("n", int64_t{3}));
  given.scalars.insert("n");
  given.intScalars.push_back({"n", 3});
  std::mt19937_64 rng(5);
  auto missing = createMissingArgs(m, *L, "k", AutoArgs::Random, rng, given);
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
  ASSERT_EQ(given.buffers.count("x"), 1u);
  const Tensor& x = given.buffers["x"];
  EXPECT_EQ(x.shape, std::vector<int64_t>{48}); // 16 * n
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_GE(x.at(i), -1.0);
    EXPECT_LT(x.at(i), 1.0);
  }
  // The same seed makes the same values; zeros mode makes zeros.
  GivenArgs again = {{}, {"n"}, {{"n", 3}}};
  std::mt19937_64 rng2(5);
  ASSERT_TRUE(createMissingArgs(m, *L, "k", AutoArgs::Random, rng2, again).ok());
  EXPECT_EQ(again.buffers["x"].data, x.data);
  GivenArgs zeros = {{}, {"n"}, {{"n", 3}}};
  ASSERT_TRUE(createMissingArgs(m, *L, "k", AutoArgs::Zeros, rng2, zeros).ok());
  EXPECT_EQ(zeros.buffers["y"].data, std::vector<uint8_t>(48 * 4, 0));
  // The run over made buffers: y = |x|.
  for (auto& [name, t] : given.buffers)
    ASSERT_FALSE(L->bind(name, &t));
  ASSERT_FALSE(L->run());
  for (int64_t i = 0; i < 48; ++i)
    EXPECT_EQ(given.buffers["y"].at(i), std::fabs(x.at(i)));
}

TEST(HostArgs, WhatCannotBeMadeIsReported) {
  Module m = build(kAbs);
  auto L = m.launch("k");
  ASSERT_TRUE(L.ok());
  GivenArgs given;
  std::mt19937_64 rng(0);
  auto none = createMissingArgs(m, *L, "k", AutoArgs::None, rng, given);
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->size(), 3u);
  EXPECT_EQ((*none)[0].param->name, "n");
  EXPECT_EQ((*none)[1].why, "extent '16*%n': the value of %n is not known");
  // Random mode binds %n = 0 and sizes x and y at one element (an empty buffer is not made).
  GivenArgs made;
  auto random = createMissingArgs(m, *L, "k", AutoArgs::Random, rng, made);
  ASSERT_TRUE(random.ok());
  EXPECT_TRUE(random->empty());
  EXPECT_EQ(made.buffers["x"].numel(), 1);
  EXPECT_EQ(noParameter("k", *m.params("k"), "q").message,
            "error: kernel @k has no parameter %q (parameters: %x %y %n)");
}

namespace {

/// Runs @spin(n) with a cancel flag set from another thread after `after`.
Status runCancelled(const Module& m, Backend backend, std::chrono::milliseconds after) {
  auto L = m.launch("spin");
  EXPECT_TRUE(L.ok());
  EXPECT_FALSE(L->bindScalar("n", int64_t{100000}));
  std::atomic<bool> cancel{false};
  RunOptions o;
  o.backend = backend;
  o.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(after);
    cancel = true;
  });
  Status st = L->run(o);
  stopper.join();
  return st;
}

} // namespace

TEST(HostArgs, CancelStopsARunOnBothBackends) {
  const std::string spin = spinKernel();
  Module m = build(spin.c_str());
  for (Backend b : {Backend::Cpu, Backend::Npu}) {
    const auto start = std::chrono::steady_clock::now();
    Status st = runCancelled(m, b, std::chrono::milliseconds(50));
    ASSERT_TRUE(st);
    EXPECT_NE(st->message.find("runtime error: the run was cancelled"), std::string::npos)
        << st->message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  }
}

TEST(HostArgs, CancelStopsTheReferenceInterpreter) {
  const std::string spin = spinKernel();
  as::SourceFile src("spin.pto", spin);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto mod = as::parseModule(src, diags);
  ASSERT_TRUE(mod) << err.str();
  auto k = ref::Kernel::find(*mod, isa::Arch::A2A3, "spin");
  ASSERT_TRUE(k.ok());
  ASSERT_FALSE(k->bindScalar("n", int64_t{100000}));
  std::atomic<bool> cancel{true};
  ref::Options o;
  o.cancel = &cancel;
  auto st = k->run(o);
  ASSERT_TRUE(st);
  EXPECT_NE(st->message.find("spin.pto:"), std::string::npos) << st->message;
  EXPECT_NE(st->message.find("the run was cancelled"), std::string::npos) << st->message;
}
