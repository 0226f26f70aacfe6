// The reference interpreter (ref/): scalar semantics pinned by hand-computed values, structured
// control flow, errors, and the differential check against the linked cpu path on every sample
// and corpus kernel.
#include "ref/Interp.h"
#include "ref/Scalar.h"

#include "TestSupport.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>

using namespace pto;
using isa::DType;

namespace {

// ------------------------------------------------------------------ scalar semantics
constexpr uint64_t kI32Min = 0x80000000u;
uint64_t i32(int32_t v) {
  return static_cast<uint32_t>(v);
}
uint64_t f32(float v) {
  return std::bit_cast<uint32_t>(v);
}
uint64_t f64(double v) {
  return std::bit_cast<uint64_t>(v);
}

TEST(RefScalar, IntegerDivisionEdges) {
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::DivSI, kI32Min, i32(-1), 32), kI32Min);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::RemSI, kI32Min, i32(-1), 32), 0u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::DivSI, 7, 0, 32), 0xFFFFFFFFu);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::RemSI, i32(-7), 0, 32), i32(-7));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::DivUI, 0xFFFFFFFFu, 2, 32),
            0x7FFFFFFFu); // not the sign-extended 64-bit quotient
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::RemUI, 0xFFFFFFFFu, 10, 32), 5u); // 4294967295 % 10
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::DivSI, i32(-7), 2, 32), i32(-3));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::RemSI, i32(-7), 2, 32), i32(-1));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::CeilDivSI, 7, 2, 32), 4u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::CeilDivSI, i32(-7), 2, 32), i32(-3));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::FloorDivSI, i32(-7), 2, 32), i32(-4));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::FloorDivSI, 7, i32(-2), 32), i32(-4));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::CeilDivSI, 7, i32(-2), 32), i32(-3));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::FloorDivSI, 6, i32(-2), 32), i32(-3));
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::CeilDivUI, 7, 2, 32), 4u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::CeilDivUI, 0xFFFFFFFFu, 0xFFFFFFFEu, 32), 2u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::DivSI, uint64_t{1} << 63, ~uint64_t{0}, 64),
            uint64_t{1} << 63);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::AddI, 0x7FFFFFFFu, 1, 32), kI32Min);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::MulI, 0x10000u, 0x10000u, 32), 0u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::AddI, 1, 1, 1), 0u); // i1 wraps
}

TEST(RefScalar, Shifts) {
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShLI, 1, 31, 32), kI32Min);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShLI, 1, 32, 32), 0u); // the width or more: all bits out
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShRSI, kI32Min, 40, 32), 0xFFFFFFFFu);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShRSI, 0x40000000u, 40, 32), 0u);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShRUI, kI32Min, 31, 32), 1u); // zeros shifted in at bit 31
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShRUI, 0xFFu, 4, 8), 0x0Fu);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShRSI, 0x80u, 7, 8), 0xFFu);
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShLI, 5, 64, 64), 5u); // amounts are taken modulo 64
  EXPECT_EQ(*ref::intBinary(ir::ArithOp::ShLI, 5, 65, 64), 10u);
}

TEST(RefScalar, Compares) {
  EXPECT_FALSE(*ref::intCompare(ir::CmpPredicate::IUlt, 0xFFFFFFFFu, 1, 32));
  EXPECT_TRUE(*ref::intCompare(ir::CmpPredicate::ISlt, 0xFFFFFFFFu, 1, 32));
  EXPECT_TRUE(*ref::intCompare(ir::CmpPredicate::IUgt, kI32Min, 0x7FFFFFFFu, 32));
  EXPECT_TRUE(*ref::intCompare(ir::CmpPredicate::ISle, kI32Min, 0x7FFFFFFFu, 32));
  const uint64_t nan = 0x7FC00000u, one = f32(1.0f);
  for (auto [p, want] :
       std::vector<std::pair<ir::CmpPredicate, bool>>{{ir::CmpPredicate::FOeq, false},
                                                      {ir::CmpPredicate::FOne, false},
                                                      {ir::CmpPredicate::FOlt, false},
                                                      {ir::CmpPredicate::FOrd, false},
                                                      {ir::CmpPredicate::FUeq, true},
                                                      {ir::CmpPredicate::FUne, true},
                                                      {ir::CmpPredicate::FUlt, true},
                                                      {ir::CmpPredicate::FUno, true},
                                                      {ir::CmpPredicate::FTrue, true},
                                                      {ir::CmpPredicate::FFalse, false}})
    EXPECT_EQ(*ref::floatCompare(p, DType::F32, nan, one), want) << ir::spelling(p);
  EXPECT_TRUE(*ref::floatCompare(ir::CmpPredicate::FOeq, DType::F32, f32(-0.0f), f32(0.0f)));
  EXPECT_FALSE(*ref::floatCompare(ir::CmpPredicate::FOlt, DType::F32, f32(-0.0f), f32(0.0f)));
  EXPECT_TRUE(*ref::floatCompare(ir::CmpPredicate::FOne, DType::F32, one, f32(2.0f)));
  EXPECT_FALSE(
      ref::floatCompare(ir::CmpPredicate::IEq, DType::F32, one, one).has_value()); // cmpi's
}

TEST(RefScalar, FloatMinMaxAndZeros) {
  const uint64_t pz = f32(0.0f), nz = f32(-0.0f), nan = 0x7FC00001u, one = f32(1.0f);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MaximumF, DType::F32, nz, pz), pz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MaximumF, DType::F32, pz, nz), pz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MinimumF, DType::F32, pz, nz), nz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MaximumF, DType::F32, one, nan),
            0x7FC00000u); // the canonical NaN
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MinimumF, DType::F32, 0x7F800001u, one),
            0x7FC00000u); // signalling too
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MaxNumF, DType::F32, nan, one), one);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MinNumF, DType::F32, one, nan), one);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::AddF, DType::F32, nz, nz), nz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::AddF, DType::F32, nz, pz), pz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::SubF, DType::F32, pz, pz), pz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MulF, DType::F32, nz, f32(5.0f)), nz);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::DivF, DType::F32, one, nz), f32(-INFINITY));
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::AddF, DType::F64, f64(0.1), f64(0.2)), f64(0.1 + 0.2));
}

TEST(RefScalar, HalfAndBfloatRounding) {
  // f16: 11 significant bits.
  EXPECT_EQ(ref::doubleToFloat(DType::F16, 2049.0), 0x6800u); // tie -> even (2048)
  EXPECT_EQ(ref::doubleToFloat(DType::F16, 2051.0), 0x6802u); // tie -> even (2052)
  EXPECT_EQ(ref::doubleToFloat(DType::F16, 65504.0), 0x7BFFu);
  EXPECT_EQ(ref::doubleToFloat(DType::F16, 65519.0), 0x7BFFu);
  EXPECT_EQ(ref::doubleToFloat(DType::F16, 65520.0), 0x7C00u); // overflow -> inf
  EXPECT_EQ(ref::doubleToFloat(DType::F16, std::ldexp(1.0, -24)), 0x0001u);
  EXPECT_EQ(ref::doubleToFloat(DType::F16, std::ldexp(1.0, -25)), 0x0000u); // tie -> even (0)
  EXPECT_EQ(ref::doubleToFloat(DType::F16, std::ldexp(3.0, -26)), 0x0001u);
  EXPECT_EQ(ref::doubleToFloat(DType::F16, -std::ldexp(3.0, -25)), 0x8002u); // 1.5 ulp -> 2
  EXPECT_EQ(ref::doubleToFloat(DType::F16, std::ldexp(1023.5, -24)),
            0x0400u); // rounds up to the smallest normal
  EXPECT_EQ(ref::doubleToFloat(DType::F16, -0.0), 0x8000u);
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1. In f16 arithmetic too.
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::AddF, DType::F16, 0x3C00, 0x1000), 0x3C00u);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::AddF, DType::F16, 0x3C01, 0x1000), 0x3C02u);
  EXPECT_EQ(*ref::floatBinary(ir::ArithOp::MulF, DType::F16, 0x7BFF, 0x4000), 0x7C00u); // 65504 * 2
  // bf16: 8 significant bits.
  EXPECT_EQ(ref::doubleToFloat(DType::BF16, 1.0 + std::ldexp(1.0, -8)), 0x3F80u);
  EXPECT_EQ(ref::doubleToFloat(DType::BF16, 1.0 + std::ldexp(3.0, -8)), 0x3F82u);
  EXPECT_DOUBLE_EQ(ref::floatToDouble(DType::BF16, 0x3FC0), 1.5);
  EXPECT_DOUBLE_EQ(ref::floatToDouble(DType::F16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isnan(ref::floatToDouble(DType::F16, 0x7E00)));
  EXPECT_EQ(ref::doubleToFloat(DType::F16, ref::floatToDouble(DType::F16, 0xFE01)),
            0x7E00u); // canonical NaN
}

TEST(RefScalar, Conversions) {
  EXPECT_EQ(ref::floatToInt(DType::F32, 0x7FC00000u, 32, true), 0u); // NaN -> 0
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(1e10f), 32, true), 0x7FFFFFFFu);
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(-1e10f), 32, true), kI32Min);
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(-1.5f), 32, true), i32(-1)); // toward zero
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(-1.0f), 32, false), 0u);
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(300.0f), 8, false), 0xFFu);
  EXPECT_EQ(ref::floatToInt(DType::F32, f32(INFINITY), 64, true), 0x7FFFFFFFFFFFFFFFu);
  EXPECT_EQ(ref::intToFloat(DType::F32, (1u << 24) + 1, true), f32(16777216.0f)); // tie -> even
  EXPECT_EQ(ref::intToFloat(DType::F32, (1u << 24) + 3, true), f32(16777220.0f));
  EXPECT_EQ(ref::intToFloat(DType::F16, 70000, true), 0x7C00u);
  EXPECT_EQ(ref::intToFloat(DType::F16, static_cast<uint64_t>(-3), true), 0xC200u);
  EXPECT_EQ(ref::intToFloat(DType::F32, ~uint64_t{0}, false), f32(18446744073709551616.0f));
  EXPECT_EQ(ref::intToFloat(DType::F64, (uint64_t{1} << 53) + 1, false), f64(9007199254740992.0));
}

// ------------------------------------------------------------------ kernels from text
struct Parsed {
  std::unique_ptr<as::SourceFile> src;
  std::unique_ptr<ir::Module> mod;
  std::string diags;
};

Parsed parse(const std::string& text, const std::string& name = "k.pto") {
  Parsed p;
  p.src = std::make_unique<as::SourceFile>(name, text);
  std::ostringstream err;
  {
    as::DiagEngine diags(*p.src, err);
    p.mod = as::parseModule(*p.src, diags);
    if (p.mod && !diags.failed())
      as::verifyModule(*p.mod, as::resolveArch(*p.mod, std::nullopt), diags);
    if (diags.failed()) p.mod.reset();
  }
  p.diags = err.str();
  return p;
}

/// Runs kernel @k of `text` with i64 buffer %out (n elements, zeros) and the given extra
/// buffers; returns the error text ("" on success).
std::string runText(const std::string& text, std::map<std::string, rt::Tensor*> buffers,
                    std::map<std::string, int64_t> scalars = {}, uint64_t maxOps = 1'000'000) {
  Parsed p = parse(text);
  if (!p.mod) return "parse: " + p.diags;
  auto k = ref::Kernel::find(*p.mod, isa::Arch::A2A3, "k");
  if (!k) return k.error().message;
  for (auto& [n, t] : buffers)
    if (auto e = k->bind(n, t)) return e->message;
  for (auto& [n, v] : scalars)
    if (auto e = k->bindScalar(n, v)) return e->message;
  auto e = k->run({.blocks = 1, .maxOps = maxOps});
  return e ? e->message : "";
}

int64_t at(const rt::Tensor& t, int64_t i) {
  return static_cast<int64_t>(t.bitsAt(i));
}

TEST(RefInterp, GuardedStoreUnderFalseConditionDoesNothing) {
  rt::Tensor out = rt::Tensor::zeros(DType::I64, {2});
  const std::string text = R"(func.func @k(%out: !pto.ptr<i64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seven = arith.constant 7 : i64
  %nine = arith.constant 9 : i64
  %f = arith.cmpi sgt, %n, %c1 : index
  scf.if %f {
    pto.store_scalar %seven, %out[%c0] : !pto.ptr<i64>, i64
  }
  scf.if %f {
    pto.store_scalar %seven, %out[%c1] : !pto.ptr<i64>, i64
  } else {
    pto.store_scalar %nine, %out[%c1] : !pto.ptr<i64>, i64
  }
  return
})";
  ASSERT_EQ(runText(text, {{"out", &out}}, {{"n", 1}}), "");
  EXPECT_EQ(at(out, 0), 0);
  EXPECT_EQ(at(out, 1), 9);
  ASSERT_EQ(runText(text, {{"out", &out}}, {{"n", 2}}), "");
  EXPECT_EQ(at(out, 0), 7);
  EXPECT_EQ(at(out, 1), 7);
}

TEST(RefInterp, LoopTouchesOnlyItsRangeAndZeroTripKeepsInit) {
  rt::Tensor in = rt::Tensor::zeros(DType::I64, {5}), out = rt::Tensor::zeros(DType::I64, {1});
  for (int i = 0; i < 5; ++i)
    in.setBits(i, static_cast<uint64_t>(i + 1));
  const std::string text =
      R"(func.func @k(%in: !pto.ptr<i64>, %out: !pto.ptr<i64>, %lo: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 100 : i64
  %s = scf.for %i = %lo to %n step %c1 iter_args(%acc = %init) -> (i64) {
    %v = pto.load_scalar %in[%i] : !pto.ptr<i64> -> i64
    %a = arith.addi %acc, %v : i64
    scf.yield %a : i64
  }
  pto.store_scalar %s, %out[%c0] : !pto.ptr<i64>, i64
  return
})";
  ASSERT_EQ(runText(text, {{"in", &in}, {"out", &out}}, {{"lo", 0}, {"n", 5}}),
            ""); // exactly 5 elements: no read of in[5]
  EXPECT_EQ(at(out, 0), 115);
  ASSERT_EQ(runText(text, {{"in", &in}, {"out", &out}}, {{"lo", 5}, {"n", 5}}), "");
  EXPECT_EQ(at(out, 0), 100);
  ASSERT_EQ(runText(text, {{"in", &in}, {"out", &out}}, {{"lo", 3}, {"n", -2}}),
            ""); // signed compare: zero trips
  EXPECT_EQ(at(out, 0), 100);
  const std::string err = runText(text, {{"in", &in}, {"out", &out}}, {{"lo", 0}, {"n", 6}});
  EXPECT_NE(err.find("k.pto:6:10: runtime error: scalar load reads past the end of argument %in"),
            std::string::npos)
      << err;
}

TEST(RefInterp, IfResultsTakeTheRightBranch) {
  rt::Tensor in = rt::Tensor::zeros(DType::I32, {2}), out = rt::Tensor::zeros(DType::I32, {1});
  in.setBits(0, 11);
  in.setBits(1, 22);
  const std::string text = R"(func.func @k(%in: !pto.ptr<i32>, %out: !pto.ptr<i32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.if %c -> (i32) {
    %a = pto.load_scalar %in[%c0] : !pto.ptr<i32> -> i32
    scf.yield %a : i32
  } else {
    %b = pto.load_scalar %in[%c1] : !pto.ptr<i32> -> i32
    scf.yield %b : i32
  }
  pto.store_scalar %r, %out[%c0] : !pto.ptr<i32>, i32
  return
})";
  ASSERT_EQ(runText(text, {{"in", &in}, {"out", &out}}, {{"c", 1}}), "");
  EXPECT_EQ(at(out, 0), 11);
  ASSERT_EQ(runText(text, {{"in", &in}, {"out", &out}}, {{"c", 0}}), "");
  EXPECT_EQ(at(out, 0), 22);
}

TEST(RefInterp, WhileLoopAndFloatScalarsInALoop) {
  rt::Tensor out = rt::Tensor::zeros(DType::I64, {1}), fout = rt::Tensor::zeros(DType::F32, {4});
  const std::string text = R"(func.func @k(%out: !pto.ptr<i64>, %fout: !pto.ptr<f32>, %limit: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %r = scf.while (%x = %one) : (i64) -> (i64) {
    %go = arith.cmpi slt, %x, %limit : i64
    scf.condition(%go) %x : i64
  } do {
  ^bb0(%y: i64):
    %d = arith.muli %y, %two : i64
    scf.yield %d : i64
  }
  pto.store_scalar %r, %out[%c0] : !pto.ptr<i64>, i64
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %fi, %half : f32
    %big = arith.cmpf ogt, %m, %half : f32
    %neg = arith.negf %m : f32
    %v = arith.select %big, %neg, %zero : f32
    pto.store_scalar %v, %fout[%i] : !pto.ptr<f32>, f32
  }
  return
})";
  ASSERT_EQ(runText(text, {{"out", &out}, {"fout", &fout}}, {{"limit", 100}}), "");
  EXPECT_EQ(at(out, 0), 128);
  EXPECT_EQ(fout.bitsAt(0), f32(0.0f));
  EXPECT_EQ(fout.bitsAt(1), f32(0.0f));
  EXPECT_EQ(fout.bitsAt(2), f32(-1.0f));
  EXPECT_EQ(fout.bitsAt(3), f32(-1.5f));
  ASSERT_EQ(runText(text, {{"out", &out}, {"fout", &fout}}, {{"limit", 1}}),
            ""); // the after region never runs
  EXPECT_EQ(at(out, 0), 1);
}

TEST(RefInterp, EndlessLoopEndsWithAnError) {
  rt::Tensor out = rt::Tensor::zeros(DType::I64, {1});
  const std::string text = R"(func.func @k(%out: !pto.ptr<i64>) {
  %t = arith.constant true
  %z = arith.constant 0 : i64
  %r = scf.while (%x = %z) : (i64) -> (i64) {
    scf.condition(%t) %x : i64
  } do {
  ^bb0(%y: i64):
    scf.yield %y : i64
  }
  return
})";
  const std::string err = runText(text, {{"out", &out}}, {}, 10'000);
  EXPECT_NE(err.find("runtime error: the kernel ran more than 10000 operations"), std::string::npos)
      << err;
}

TEST(RefInterp, CallsAndBlocks) {
  rt::Tensor out = rt::Tensor::zeros(DType::I64, {4});
  const std::string text = R"(func.func private @twice(%v: i64) -> i64 {
  %r = arith.addi %v, %v : i64
  return %r : i64
}
func.func @k(%out: !pto.ptr<i64>) attributes {pto.entry} {
  %b = pto.get_block_idx
  %bi = arith.index_cast %b : i64 to index
  %t = func.call @twice(%b) : (i64) -> i64
  pto.store_scalar %t, %out[%bi] : !pto.ptr<i64>, i64
  return
})";
  Parsed p = parse(text);
  ASSERT_TRUE(p.mod) << p.diags;
  EXPECT_EQ(ref::kernelNames(*p.mod), std::vector<std::string>{"k"});
  auto k = ref::Kernel::find(*p.mod, isa::Arch::A2A3, "k");
  ASSERT_TRUE(k.ok());
  ASSERT_FALSE(k->bind("out", &out));
  auto e = k->run({.blocks = 4});
  ASSERT_FALSE(e) << e->message;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(at(out, i), 2 * i);
  EXPECT_TRUE(k->bindScalar("nope", int64_t{1}).has_value());
  EXPECT_FALSE(ref::Kernel::find(*p.mod, isa::Arch::A2A3, "missing").ok());
}

TEST(RefInterp, UnsupportedOpIsALocatedError) {
  rt::Tensor out = rt::Tensor::zeros(DType::F32, {1});
  const std::string text = R"(func.func @k(%out: !pto.ptr<f32>) {
  %c0 = arith.constant 0 : index
  %a = arith.constant 1.0 : f32
  %r = arith.remf %a, %a : f32
  pto.store_scalar %r, %out[%c0] : !pto.ptr<f32>, f32
  return
})";
  const std::string err = runText(text, {{"out", &out}});
  if (err.rfind("parse: ", 0) == 0) GTEST_SKIP() << "the verifier refuses arith.remf";
  EXPECT_NE(
      err.find(
          "k.pto:4:8: runtime error: 'arith.remf' is not supported by the reference interpreter"),
      std::string::npos)
      << err;
}

} // namespace

// ------------------------------------------------------------------ differential: ref vs linked
// cpu
namespace diff {

/// .pto -> object -> image -> runtime Module, every stage's diagnostics as the error.
rt::Result<rt::Module> linked(const std::string& path) {
  as::SourceFile src(path, test::readText(path));
  std::ostringstream err;
  std::optional<obj::ObjectFile> o;
  {
    as::DiagEngine diags(src, err);
    auto m = as::parseModule(src, diags);
    if (!m || diags.failed()) return rt::Error{"parse: " + err.str()};
    const isa::Arch a = as::resolveArch(*m, std::nullopt);
    as::verifyModule(*m, a, diags);
    if (!diags.failed()) o = as::lowerModule(*m, a, diags);
    if (diags.failed() || !o) {
      diags.flush();
      return rt::Error{"pto-as: " + err.str()};
    }
  }
  link::LinkOptions opts;
  opts.sync = link::SyncMode::Insert;
  link::LinkResult r = link::link({{"k.o", *o}}, opts);
  if (!r.ok()) {
    std::string msgs;
    for (const auto& d : r.diags)
      msgs += d.text + "\n";
    return rt::Error{"pto-ld: " + msgs};
  }
  auto bytes = obj::writeImage(*r.image);
  if (bytes.index() != 0) return rt::Error{"writeImage failed"};
  return rt::Module::load(std::get<0>(bytes), path);
}

constexpr int64_t kPointerElems = 1 << 18;

/// The inputs of one kernel, the same for both runs: random buffers and small scalars.
struct Inputs {
  std::vector<rt::Tensor> buffers; // by parameter index (empty tensors for scalars)
  std::vector<uint64_t> scalars;
};

Inputs makeInputs(const std::vector<rt::Module::ParamInfo>& params, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> fd(-1.0, 1.0);
  std::uniform_int_distribution<int> id(-8, 7);
  Inputs in;
  using K = rt::Module::ParamInfo::Kind;
  for (const auto& p : params) {
    rt::Tensor t;
    uint64_t s = 0;
    if (p.kind == K::Pointer || p.kind == K::TensorView) {
      int64_t n = 1;
      for (int64_t d : p.shape)
        n *= d;
      t = rt::Tensor::zeros(p.dtype,
                            {std::max<int64_t>(p.kind == K::Pointer ? kPointerElems : n, 1)});
      const int64_t count =
          isa::bitWidth(p.dtype) < 8 ? static_cast<int64_t>(t.data.size()) * 2 : t.numel();
      for (int64_t i = 0; i < count; ++i) {
        uint64_t bits = isa::isFloat(p.dtype)
                            ? ref::doubleToFloat(p.dtype == DType::F64 || p.dtype == DType::F16 ||
                                                         p.dtype == DType::BF16
                                                     ? p.dtype
                                                     : DType::F32,
                                                 fd(rng))
                            : static_cast<uint64_t>(static_cast<int64_t>(id(rng)));
        if (isa::isFloat(p.dtype) && !ref::isScalarFloat(p.dtype))
          bits = static_cast<uint64_t>(id(rng) & 0x3F); // small fp8 codes
        t.setBits(i, ref::truncBits(bits, isa::bitWidth(p.dtype)));
      }
    } else {
      s = p.kind == K::Scalar && isa::isFloat(p.dtype)
              ? ref::doubleToFloat(ref::isScalarFloat(p.dtype) ? p.dtype : DType::F32, 0.5)
              : 4;
    }
    in.buffers.push_back(std::move(t));
    in.scalars.push_back(s);
  }
  return in;
}

/// Runs every kernel of `path` both ways; "" when every output buffer agrees bit for bit (or
/// both runs fail), else what differs.
std::string compare(const std::string& path) {
  Parsed p = parse(test::readText(path), path);
  if (!p.mod) return "ref: parse/verify failed: " + p.diags;
  auto img = linked(path);
  const isa::Arch arch = as::resolveArch(*p.mod, std::nullopt);
  std::string report;
  for (const std::string& name : ref::kernelNames(*p.mod)) {
    auto k = ref::Kernel::find(*p.mod, arch, name);
    if (!k) return k.error().message;
    Inputs a = makeInputs(k->params(), std::hash<std::string>{}(path + name));
    const Inputs initial = a;
    std::string refErr;
    for (size_t i = 0; i < k->params().size(); ++i) {
      const std::string& pn = k->params()[i].name;
      auto st = a.buffers[i].data.empty() ? k->bindScalarBits(pn, a.scalars[i])
                                          : k->bind(pn, &a.buffers[i]);
      if (st) refErr = st->message;
    }
    if (refErr.empty())
      if (auto e = k->run({.blocks = 2, .maxOps = 200'000'000})) refErr = e->message;
    // The linked image on both backends, each from the same initial buffers.
    for (rt::Backend backend : {rt::Backend::Cpu, rt::Backend::Npu}) {
      const char* bname = backend == rt::Backend::Cpu ? "cpu" : "npu";
      Inputs b = initial;
      std::string linkErr;
      if (!img) {
        linkErr = img.error().message;
      } else {
        auto l = img->launch(name);
        if (!l) {
          linkErr = l.error().message;
        } else {
          for (size_t i = 0; i < k->params().size(); ++i) {
            const std::string& pn = k->params()[i].name;
            auto st = b.buffers[i].data.empty() ? l->bindScalarBits(pn, b.scalars[i])
                                                : l->bind(pn, &b.buffers[i]);
            if (st) linkErr = st->message;
          }
          if (linkErr.empty())
            if (auto e = l->run({.blocks = 2,
                                 .threads = 1,
                                 .maxInstructions = 2'000'000'000,
                                 .backend = backend}))
              linkErr = e->message;
        }
      }
      if (!refErr.empty() || !linkErr.empty()) {
        if (refErr.empty() != linkErr.empty())
          report += "@" + name + ": ref: " + (refErr.empty() ? "ok" : refErr) + " | linked " +
                    bname + ": " + (linkErr.empty() ? "ok" : linkErr) + "\n";
        continue;
      }
      for (size_t i = 0; i < a.buffers.size(); ++i)
        if (a.buffers[i].data != b.buffers[i].data) {
          int64_t first = 0;
          while (first < a.buffers[i].numel() &&
                 a.buffers[i].bitsAt(first) == b.buffers[i].bitsAt(first))
            ++first;
          report += "@" + name + ": %" + k->params()[i].name + " differs (" + bname +
                    ") first at element " + std::to_string(first) + "\n";
        }
    }
  }
  return report;
}

std::vector<std::string> ptoFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".pto") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Kernels whose linked run disagrees with the reference interpreter because of code
/// generation bugs being fixed (issue #11 items 1-2). The test fails when one starts to agree:
/// remove it from the list then.
const std::map<std::string, std::string> kExpectedMismatch = {};

void runAll(const std::vector<std::string>& files, const std::string& what) {
  size_t agree = 0;
  for (const std::string& f : files) {
    const std::string name = std::filesystem::path(f).filename().string();
    const std::string r = compare(f);
    auto expected = kExpectedMismatch.find(name);
    if (expected != kExpectedMismatch.end())
      EXPECT_FALSE(r.empty()) << name
                              << " now agrees bit for bit: remove it from kExpectedMismatch ("
                              << expected->second << ")";
    else
      EXPECT_TRUE(r.empty()) << name << ":\n" << r;
    agree += r.empty();
  }
  printf("[ref] %s: %zu of %zu files agree bit for bit between the reference interpreter and the "
         "linked image on the cpu and npu backends\n",
         what.c_str(), agree, files.size());
}

} // namespace diff

TEST(RefDiff, SamplesAgreeWithTheLinkedImageOnBothBackends) {
  auto files = diff::ptoFiles(test::sourcePath("samples"));
  ASSERT_FALSE(files.empty());
  diff::runAll(files, "samples");
}

TEST(RefDiff, CorpusAgreesWithTheLinkedImageOnBothBackends) {
  PTO_REQUIRE_SHARED(test::haveCorpus());
  diff::runAll(diff::ptoFiles(test::corpusPath("")), "corpus");
}

// Every constant as the reference interpreter and the compiled code read it (both from the
// front end's typed value, ir::ConstantValue): the bits expected, the same on both backends.
TEST(RefDiff, ConstantsAgreeWithTheLinkedImage) {
  const std::string text =
      R"(func.func @k(%l: !pto.ptr<i64>, %w: !pto.ptr<i32>, %f: !pto.ptr<f32>, %d: !pto.ptr<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %l0 = arith.constant 0xFFFFFFFFFFFFFFFE : i64
  %l1 = arith.constant 9223372036854775807 : i64
  %l2 = arith.constant -9223372036854775808 : i64
  %l3 = arith.constant 040 : i64
  %l4 = arith.constant -0x10 : i64
  pto.store_scalar %l0, %l[%c0] : !pto.ptr<i64>, i64
  pto.store_scalar %l1, %l[%c1] : !pto.ptr<i64>, i64
  pto.store_scalar %l2, %l[%c2] : !pto.ptr<i64>, i64
  pto.store_scalar %l3, %l[%c3] : !pto.ptr<i64>, i64
  pto.store_scalar %l4, %l[%c4] : !pto.ptr<i64>, i64
  %w0 = arith.constant -42 : i32
  %w1 = arith.constant 0xFFFFFFF0 : i32
  %w2 = arith.constant 2147483647 : i32
  pto.store_scalar %w0, %w[%c0] : !pto.ptr<i32>, i32
  pto.store_scalar %w1, %w[%c1] : !pto.ptr<i32>, i32
  pto.store_scalar %w2, %w[%c2] : !pto.ptr<i32>, i32
  %f0 = arith.constant 1.5e-3 : f32
  %f1 = arith.constant -2.5E+2 : f32
  %f2 = arith.constant 0x7FC00001 : f32
  %f3 = arith.constant 3 : f32
  pto.store_scalar %f0, %f[%c0] : !pto.ptr<f32>, f32
  pto.store_scalar %f1, %f[%c1] : !pto.ptr<f32>, f32
  pto.store_scalar %f2, %f[%c2] : !pto.ptr<f32>, f32
  pto.store_scalar %f3, %f[%c3] : !pto.ptr<f32>, f32
  %d0 = arith.constant 6.02214076e23 : f64
  %d1 = arith.constant 0x3FF0000000000001 : f64
  pto.store_scalar %d0, %d[%c0] : !pto.ptr<f64>, f64
  pto.store_scalar %d1, %d[%c1] : !pto.ptr<f64>, f64
  return
})";
  const std::string path = testing::TempDir() + "/constants.pto";
  { std::ofstream(path) << text; }
  EXPECT_EQ(diff::compare(path), "");
  rt::Tensor l = rt::Tensor::zeros(DType::I64, {5}), w = rt::Tensor::zeros(DType::I32, {3});
  rt::Tensor f = rt::Tensor::zeros(DType::F32, {4}), d = rt::Tensor::zeros(DType::F64, {2});
  ASSERT_EQ(runText(text, {{"l", &l}, {"w", &w}, {"f", &f}, {"d", &d}}), "");
  EXPECT_EQ(l.bitsAt(0), 0xFFFFFFFFFFFFFFFEu);
  EXPECT_EQ(l.bitsAt(1), 0x7FFFFFFFFFFFFFFFu);
  EXPECT_EQ(l.bitsAt(2), 0x8000000000000000u);
  EXPECT_EQ(l.bitsAt(3), 40u); // never octal
  EXPECT_EQ(l.bitsAt(4), static_cast<uint64_t>(int64_t{-16}));
  EXPECT_EQ(w.bitsAt(0), 0xFFFFFFD6u);
  EXPECT_EQ(w.bitsAt(1), 0xFFFFFFF0u);
  EXPECT_EQ(w.bitsAt(2), 0x7FFFFFFFu);
  EXPECT_EQ(f.bitsAt(0), std::bit_cast<uint32_t>(1.5e-3f));
  EXPECT_EQ(f.bitsAt(1), std::bit_cast<uint32_t>(-250.0f));
  EXPECT_EQ(f.bitsAt(2), 0x7FC00001u);
  EXPECT_EQ(f.bitsAt(3), std::bit_cast<uint32_t>(3.0f));
  EXPECT_EQ(d.bitsAt(0), std::bit_cast<uint64_t>(6.02214076e23));
  EXPECT_EQ(d.bitsAt(1), 0x3FF0000000000001u);
}
