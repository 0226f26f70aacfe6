// pto-diff --self-test: the oracle and the harness checked on their own. Expected values are
// worked out by hand from the definitions (MLIR arith, IEEE-754 round to nearest even), so a
// regression in Values.cpp, the generator's determinism or the comparison shows up here.
#include "tests/diff/Check.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace pto::diff {
namespace {

int failures = 0;

void expectEq(const char* what, uint64_t got, uint64_t want) {
  if (got == want) return;
  std::printf("self-test: %s: got 0x%llx, want 0x%llx\n", what,
              static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
  ++failures;
}

uint64_t bin(const char* op, Ty t, int64_t a, int64_t b) {
  uint64_t r = 0;
  if (!sem::intBinary(op, t, uint64_t(a), uint64_t(b), r)) return 0xBADBADBAD;
  return r;
}
bool defined(const char* op, Ty t, int64_t a, int64_t b) {
  uint64_t r = 0;
  return sem::intBinary(op, t, uint64_t(a), uint64_t(b), r);
}
uint64_t cast(const char* op, Ty from, Ty to, uint64_t a) {
  uint64_t r = 0;
  if (!sem::cast(op, from, to, a, r)) return 0xBADBADBAD;
  return r;
}

void integers() {
  expectEq("divsi -7/2", bin("divsi", Ty::I32, -7, 2), 0xFFFFFFFD);
  expectEq("remsi -7%2", bin("remsi", Ty::I32, -7, 2), 0xFFFFFFFF);
  expectEq("ceildivsi -7/2", bin("ceildivsi", Ty::I32, -7, 2), 0xFFFFFFFD);
  expectEq("ceildivsi 7/2", bin("ceildivsi", Ty::I32, 7, 2), 4);
  expectEq("floordivsi -7/2", bin("floordivsi", Ty::I32, -7, 2), 0xFFFFFFFC);
  expectEq("floordivsi 7/-2", bin("floordivsi", Ty::I64, 7, -2), uint64_t(-4));
  expectEq("floordivsi -8/2", bin("floordivsi", Ty::I64, -8, 2), uint64_t(-4));
  expectEq("divui -1/2 i32", bin("divui", Ty::I32, -1, 2), 0x7FFFFFFF);
  expectEq("ceildivui 7/2", bin("ceildivui", Ty::Index, 7, 2), 4);
  expectEq("remui -1%10 index", bin("remui", Ty::Index, -1, 10),
           5); // 2^64-1 = 18446744073709551615
  expectEq("shli 1<<31 i32", bin("shli", Ty::I32, 1, 31), 0x80000000);
  expectEq("shrsi i32", bin("shrsi", Ty::I32, int64_t(0x80000000), 31), 0xFFFFFFFF);
  expectEq("shrui i32", bin("shrui", Ty::I32, int64_t(0x80000000), 31), 1);
  expectEq("minui", bin("minui", Ty::I32, -1, 1), 1);
  expectEq("maxsi", bin("maxsi", Ty::I64, -1, 1), 1);
  expectEq("muli wraps", bin("muli", Ty::I32, 0x10000, 0x10000), 0);
  expectEq("addi wraps", bin("addi", Ty::I32, 0x7FFFFFFF, 1), 0x80000000);
  expectEq("divsi INT_MIN/-1 undefined", defined("divsi", Ty::I32, int64_t(0x80000000), -1), 0);
  expectEq("remsi x%0 undefined", defined("remsi", Ty::I64, 5, 0), 0);
  expectEq("shli by 32 undefined", defined("shli", Ty::I32, 1, 32), 0);
  expectEq("slt -1 0", sem::intCmp("slt", Ty::I32, 0xFFFFFFFF, 0), 1);
  expectEq("ult -1 0", sem::intCmp("ult", Ty::I32, 0xFFFFFFFF, 0), 0);
  expectEq("index_cast i32 -1", cast("index_cast", Ty::I32, Ty::Index, 0xFFFFFFFF), ~uint64_t{0});
  expectEq("index_castui i32 -1", cast("index_castui", Ty::I32, Ty::Index, 0xFFFFFFFF), 0xFFFFFFFF);
  expectEq("trunci", cast("trunci", Ty::I64, Ty::I32, 0x100000005), 5);
  expectEq("extui i1", cast("extui", Ty::I1, Ty::I32, 1), 1);
  expectEq("extsi i1", cast("extsi", Ty::I1, Ty::I64, 1), ~uint64_t{0});
}

void floats() {
  const auto f16 = [](double v) { return sem::fromDouble(Ty::F16, v); };
  expectEq("f16 1+2^-11 ties to even", f16(1 + std::ldexp(1, -11)), 0x3C00);
  expectEq("f16 1+3*2^-11 ties to even", f16(1 + 3 * std::ldexp(1, -11)), 0x3C02);
  expectEq("f16 65519", f16(65519), 0x7BFF);
  expectEq("f16 65520 -> inf", f16(65520), 0x7C00);
  expectEq("f16 2^-24", f16(std::ldexp(1, -24)), 0x0001);
  expectEq("f16 2^-25 ties to 0", f16(std::ldexp(1, -25)), 0x0000);
  expectEq("f16 3*2^-26 -> min subnormal", f16(3 * std::ldexp(1, -26)), 0x0001);
  expectEq("f16 -0", f16(-0.0), 0x8000);
  expectEq("f16 max subnormal + half ulp -> min normal", f16(std::ldexp(1023.5, -24)), 0x0400);
  expectEq("bf16 1+2^-8", sem::fromDouble(Ty::BF16, 1 + std::ldexp(1, -8)), 0x3F80);
  expectEq("bf16 1+3*2^-8", sem::fromDouble(Ty::BF16, 1 + 3 * std::ldexp(1, -8)), 0x3F82);
  expectEq("f32 1+2^-24", sem::fromDouble(Ty::F32, 1 + std::ldexp(1, -24)), 0x3F800000);
  expectEq("f32 min subnormal", sem::fromDouble(Ty::F32, std::ldexp(1, -149)), 0x00000001);
  expectEq("maximumf +0 -0", sem::floatBinary("maximumf", Ty::F32, 0x00000000, 0x80000000),
           0x00000000);
  expectEq("minimumf +0 -0", sem::floatBinary("minimumf", Ty::F32, 0x00000000, 0x80000000),
           0x80000000);
  expectEq("maximumf NaN",
           sem::isNaN(Ty::F32, sem::floatBinary("maximumf", Ty::F32, 0x7FC00000, 0x3F800000)), 1);
  expectEq("maxnumf NaN", sem::floatBinary("maxnumf", Ty::F32, 0x7FC00000, 0x3F800000), 0x3F800000);
  expectEq("addf f16 1+2^-10 rounds", sem::floatBinary("addf", Ty::F16, 0x3C00, 0x1400), 0x3C01);
  expectEq("addf f16 1+2^-11 ties", sem::floatBinary("addf", Ty::F16, 0x3C00, 0x1000), 0x3C00);
  expectEq("mulf f32 overflow", sem::floatBinary("mulf", Ty::F32, 0x7F7FFFFF, 0x40000000),
           0x7F800000);
  expectEq("negf", sem::floatNeg(Ty::F32, 0x00000000), 0x80000000);
  expectEq("cmpf ueq NaN", sem::floatCmp("ueq", Ty::F32, 0x7FC00000, 0x3F800000), 1);
  expectEq("cmpf oeq NaN NaN", sem::floatCmp("oeq", Ty::F32, 0x7FC00000, 0x7FC00000), 0);
  expectEq("cmpf une NaN NaN", sem::floatCmp("une", Ty::F32, 0x7FC00000, 0x7FC00000), 1);
  expectEq("cmpf oeq +0 -0", sem::floatCmp("oeq", Ty::F32, 0x00000000, 0x80000000), 1);
  expectEq("fptosi 3e9 saturates", cast("fptosi", Ty::F32, Ty::I32, 0x4F32D05E), 0x7FFFFFFF);
  expectEq("fptosi -3e9 saturates", cast("fptosi", Ty::F32, Ty::I32, 0xCF32D05E), 0x80000000);
  expectEq("fptosi NaN", cast("fptosi", Ty::F32, Ty::I64, 0x7FC00000), 0);
  expectEq("fptosi -1.9", cast("fptosi", Ty::F32, Ty::I32, 0xBFF33333), 0xFFFFFFFF);
  expectEq("fptoui -1.5", cast("fptoui", Ty::F32, Ty::I32, 0xBFC00000), 0);
  expectEq("fptoui inf", cast("fptoui", Ty::F32, Ty::I64, 0x7F800000), ~uint64_t{0});
  expectEq("sitofp 2^24+1", cast("sitofp", Ty::I32, Ty::F32, 16777217), 0x4B800000);
  expectEq("sitofp 2^24+3", cast("sitofp", Ty::I32, Ty::F32, 16777219), 0x4B800002);
  expectEq("sitofp i64 2^53+1", cast("sitofp", Ty::I64, Ty::F32, (uint64_t{1} << 53) + 1),
           0x5A000000);
  expectEq("sitofp i64 -(2^63)", cast("sitofp", Ty::I64, Ty::F32, uint64_t{1} << 63), 0xDF000000);
  expectEq("uitofp -1 i32", cast("uitofp", Ty::I32, Ty::F32, 0xFFFFFFFF), 0x4F800000);
  expectEq("uitofp i64 2^64-1 -> f16 inf", cast("uitofp", Ty::I64, Ty::F16, ~uint64_t{0}), 0x7C00);
  // 2^62 + 2^54 + 1: a tie in the 8-bit bf16 significand without the last bit, above it with it.
  expectEq("sitofp i64 -> bf16 sticky",
           cast("sitofp", Ty::I64, Ty::BF16, (uint64_t{1} << 62) + (uint64_t{1} << 54) + 1),
           0x5E81);
  expectEq("truncf 1+2^-11 -> f16", cast("truncf", Ty::F32, Ty::F16, 0x3F801000), 0x3C00);
  expectEq("extf f16 min subnormal", cast("extf", Ty::F16, Ty::F32, 0x0001), 0x33800000);
  expectEq("extf bf16", cast("extf", Ty::BF16, Ty::F32, 0x3F81), 0x3F810000);
}

// The generator is deterministic, and the harness reports a planted difference.
void harness() {
  GenOptions o;
  EvalResult e1, e2;
  const std::string a = print(generate(7, o, e1)), b = print(generate(7, o, e2));
  expectEq("same seed, same program", a == b && e1.buffers == e2.buffers, 1);
  expectEq("different seeds, different programs", a != print(generate(8, o, e2)), 1);
  CheckOptions co;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    EvalResult want;
    const Program p = generate(seed, o, want);
    if (!check(p, want, co).empty()) continue;
    want.buffers[0][0] ^= 1;
    std::string kind;
    const std::string d = check(p, want, co, &kind);
    expectEq("a flipped expected bit is reported", kind == "cpu:mismatch", 1);
    if (d.empty())
      std::printf("self-test: seed %llu: no difference reported\n",
                  static_cast<unsigned long long>(seed));
    return;
  }
  std::printf("self-test: no seed in 1..200 passes the tool chain\n");
  ++failures;
}

} // namespace

int selfTest() {
  integers();
  floats();
  harness();
  std::printf("pto-diff self-test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

} // namespace pto::diff
