// Runtime tests: assemble + link kernels in process, run them on the cpu backend, and check
// the outputs against reference results computed here, independently of the runtime's
// kernels (plain loops; element rounding through isa::encodeFromDouble).
#include "runtime/Runtime.h"
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Npy.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace pto;
using namespace pto::rt;
using isa::DType;

namespace {

std::string corpus(const std::string& name) {
  return test::corpusPath(name);
}
using test::haveCorpus;
std::string sample(const std::string& name) {
  return test::sourcePath("samples/" + name);
}
Module build(const std::string& path) {
  return test::buildModule(path);
}

Tensor randomTensor(DType t, std::vector<int64_t> shape, uint64_t seed, double lo = -1,
                    double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  Tensor x = Tensor::zeros(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setBits(i, isa::encodeFromDouble(t, isa::isFloat(t) ? d(rng) : std::floor(d(rng)),
                                       isa::RoundMode::CAST_RINT, isa::SatMode::ON));
  return x;
}

/// Rounds to f16 (or another type) with a mode, through the numerics module.
double rnd(DType t, double v, isa::RoundMode m = isa::RoundMode::CAST_RINT) {
  return isa::decodeToDouble(t, isa::encodeFromDouble(t, v, m, isa::SatMode::OFF));
}
float f32(double v) {
  return static_cast<float>(v);
}

void run(Launch& l, uint32_t blocks = 1) {
  RunOptions o;
  o.blocks = blocks;
  auto st = l.run(o);
  ASSERT_FALSE(st) << st->message;
}

#define BIND(L, NAME, T) ASSERT_FALSE((L).bind(NAME, &(T)))

} // namespace

TEST(Runtime, VaddSample) {
  Module m = build(sample("vadd/vadd.pto"));
  auto l = m.launch("vadd");
  ASSERT_TRUE(l.ok());
  Tensor x = randomTensor(DType::F32, {64, 64}, 1), y = randomTensor(DType::F32, {64, 64}, 2),
         z = Tensor::zeros(DType::F32, {64, 64});
  BIND(l.value(), "x", x);
  BIND(l.value(), "y", y);
  BIND(l.value(), "%z", z);
  run(l.value());
  for (int64_t i = 0; i < z.numel(); ++i)
    ASSERT_EQ(z.at(i), f32(f32(x.at(i)) + f32(y.at(i)))) << i;
}

TEST(Runtime, VaddTiledBlocks) {
  Module m = build(sample("vadd-tiled/vadd_tiled.pto"));
  for (uint32_t blocks : {1u, 3u, 8u, 64u, 100u}) {
    auto l = m.launch("vadd_tiled");
    Tensor x = randomTensor(DType::F32, {1024, 256}, 3),
           y = randomTensor(DType::F32, {1024, 256}, 4);
    Tensor z = Tensor::zeros(DType::F32, {1024, 256});
    BIND(l.value(), "x", x);
    BIND(l.value(), "y", y);
    BIND(l.value(), "z", z);
    run(l.value(), blocks);
    for (int64_t i = 0; i < z.numel(); ++i)
      ASSERT_EQ(z.at(i), f32(f32(x.at(i)) + f32(y.at(i)))) << "blocks " << blocks << " elem " << i;
  }
}

TEST(Runtime, VaddTiledIntoABufferLargerThanTheCaches) {
  // A destination of 64 MiB takes the non-temporal TSTORE (runtime/cpu/MoveKernels.cpp, x86):
  // the same bits, rows that start off a 32-byte boundary included (a large buffer's data
  // starts 16 bytes into a page), and nothing written past the kernel's rows.
  Module m = build(sample("vadd-tiled/vadd_tiled.pto"));
  Tensor x = randomTensor(DType::F32, {1024, 256}, 5), y = randomTensor(DType::F32, {1024, 256}, 6);
  Tensor z = Tensor::zeros(DType::F32, {65536, 256});
  for (uint32_t blocks : {1u, 3u}) {
    auto l = m.launch("vadd_tiled");
    BIND(l.value(), "x", x);
    BIND(l.value(), "y", y);
    BIND(l.value(), "z", z);
    run(l.value(), blocks);
    for (int64_t i = 0; i < x.numel(); ++i)
      ASSERT_EQ(z.at(i), f32(f32(x.at(i)) + f32(y.at(i)))) << "blocks " << blocks << " elem " << i;
    for (int64_t i = x.numel(); i < z.numel(); ++i)
      ASSERT_EQ(z.bitsAt(i), 0u) << i;
  }
}

TEST(Runtime, SoftmaxSample) {
  Module m = build(sample("softmax/softmax.pto"));
  auto l = m.launch("softmax");
  Tensor x = randomTensor(DType::F32, {64, 128}, 5, -4, 4),
         y = Tensor::zeros(DType::F32, {64, 128});
  BIND(l.value(), "x", x);
  BIND(l.value(), "y", y);
  run(l.value());
  for (int r = 0; r < 64; ++r) {
    float mx = f32(x.at(r * 128));
    for (int j = 1; j < 128; ++j)
      mx = std::max(mx, f32(x.at(r * 128 + j)));
    float e[128], s = 0;
    for (int j = 0; j < 128; ++j)
      e[j] = f32(std::exp(static_cast<double>(f32(x.at(r * 128 + j)) - mx)));
    s = e[0];
    for (int j = 1; j < 128; ++j)
      s += e[j];
    for (int j = 0; j < 128; ++j)
      ASSERT_EQ(y.at(r * 128 + j), e[j] / s) << r << "," << j;
  }
}

// Corpus 1: f16 row softmax, rows split over blocks (dynamic valid columns).
TEST(Runtime, CorpusFlashAttentionSoftmax) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("attention__flash_attention_score__b1_n1_s64_d64__stage2_softmax.pto"));
  for (uint32_t blocks : {1u, 4u, 7u}) {
    auto l = m.launch("dense_attention_row_softmax");
    Tensor x = randomTensor(DType::F16, {64, 64}, 6, -3, 3);
    Tensor in = x;
    BIND(l.value(), "arg0", x);
    run(l.value(), blocks);
    for (int r = 0; r < 64; ++r) {
      double mx = in.at(r * 64);
      for (int j = 1; j < 64; ++j)
        mx = std::max(mx, in.at(r * 64 + j));
      double e[64];
      float s = 0;
      for (int j = 0; j < 64; ++j) {
        double d = rnd(DType::F16, in.at(r * 64 + j) - mx);
        e[j] = rnd(DType::F16, std::exp(f32(d)));
        s = j == 0 ? f32(e[0]) : s + f32(e[j]);
      }
      double sh = rnd(DType::F16, s);
      for (int j = 0; j < 64; ++j)
        ASSERT_EQ(x.at(r * 64 + j), rnd(DType::F16, e[j] / sh))
            << "blocks " << blocks << " " << r << "," << j;
    }
  }
}

// Corpus 2: layer norm with a Newton step on rsqrt, f16 in/out, f32 math, ROUND on output.
TEST(Runtime, CorpusLayerNorm) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("ffn__swin_transformer_ln_qkv__b4_s256_h128__stage1_layernorm.pto"));
  auto l = m.launch("_stage");
  Tensor out = Tensor::zeros(DType::F16, {1024, 128});
  Tensor x = randomTensor(DType::F16, {1024, 128}, 7, -2, 2),
         g = randomTensor(DType::F16, {1, 128}, 8), b = randomTensor(DType::F16, {1, 128}, 9);
  BIND(l.value(), "arg0", out);
  BIND(l.value(), "arg1", x);
  BIND(l.value(), "arg2", g);
  BIND(l.value(), "arg3", b);
  run(l.value(), 8);
  for (int r = 0; r < 1024; ++r) {
    float xs[128], sum = 0, sq = 0;
    for (int j = 0; j < 128; ++j)
      xs[j] = f32(x.at(r * 128 + j));
    sum = xs[0];
    for (int j = 1; j < 128; ++j)
      sum += xs[j];
    float mean = sum * 7.8125e-3f;
    float d[128];
    for (int j = 0; j < 128; ++j)
      d[j] = xs[j] - mean;
    sq = d[0] * d[0];
    for (int j = 1; j < 128; ++j)
      sq += d[j] * d[j];
    float var = sq * 7.8125e-3f + 9.99999974E-6f;
    float rs = f32(1.0 / std::sqrt(static_cast<double>(var)));
    float t = rs * rs;
    t = var * t;
    t = t * 0.5f;
    t = 1.5f - t;
    rs = rs * t;
    for (int j = 0; j < 128; ++j) {
      float y = d[j] * rs;
      y = y * f32(g.at(j));
      y = y + f32(b.at(j));
      ASSERT_EQ(out.at(r * 128 + j), rnd(DType::F16, y, isa::RoundMode::CAST_ROUND))
          << r << "," << j;
    }
  }
}

// Corpus 3: token permute = TGATHER with an i32 index tile.
TEST(Runtime, CorpusMoePermute) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("moe__moe_token_permute__t16_h32__stage1_permute.pto"));
  auto l = m.launch("moe_token_permute_seed");
  Tensor out = Tensor::zeros(DType::F16, {512}), src = randomTensor(DType::F16, {512}, 10),
         idx = Tensor::zeros(DType::I32, {512});
  std::vector<int> perm(512);
  for (int i = 0; i < 512; ++i)
    perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
  for (int i = 0; i < 512; ++i)
    idx.setBits(i, static_cast<uint32_t>(perm[i]));
  BIND(l.value(), "arg0", out);
  BIND(l.value(), "arg1", src);
  BIND(l.value(), "arg2", idx);
  run(l.value());
  for (int i = 0; i < 512; ++i)
    ASSERT_EQ(out.bitsAt(i), src.bitsAt(perm[i])) << i;
  // An index out of range is a located runtime error.
  idx.setBits(5, 512);
  auto st = l.value().run();
  ASSERT_TRUE(st);
  EXPECT_NE(st->message.find("moe__moe_token_permute__t16_h32__stage1_permute.pto:18:7: runtime "
                             "error: TGATHER index 512"),
            std::string::npos)
      << st->message;
}

// Corpus 4: TSCATTER into a 2x16 tile that was loaded first (untouched elements keep it).
TEST(Runtime, CorpusScatter) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("tmp_scatter_unit.pto"));
  auto l = m.launch("k");
  Tensor dst = randomTensor(DType::F16, {2, 16}, 12), src = randomTensor(DType::F16, {16}, 13),
         idx = Tensor::zeros(DType::I16, {16});
  int ix[16] = {31, 0, 5, 17, 2, 30, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1};
  for (int i = 0; i < 16; ++i)
    idx.setBits(i, static_cast<uint16_t>(ix[i]));
  Tensor before = dst;
  BIND(l.value(), "arg0", dst);
  BIND(l.value(), "arg1", src);
  BIND(l.value(), "arg2", idx);
  run(l.value());
  std::vector<uint64_t> expect(32);
  for (int i = 0; i < 32; ++i)
    expect[i] = before.bitsAt(i);
  for (int i = 0; i < 16; ++i)
    expect[ix[i]] = src.bitsAt(i);
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(dst.bitsAt(i), expect[i]) << i;
}

// Corpus 5: FFN: two f16 matmuls (K chunks of 32 with TMATMUL then TMATMUL.ACC, f32 acc stored
// as f16) around an in-place f16 ReLU.
TEST(Runtime, CorpusFfn) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("ffn__ffn__debug_probe2.pto"));
  auto l = m.launch("ffn_dense_relu_fp16");
  Tensor out = Tensor::zeros(DType::F16, {32, 128}), h = Tensor::zeros(DType::F16, {32, 256});
  Tensor x = randomTensor(DType::F16, {32, 128}, 14), w1 = randomTensor(DType::F16, {128, 256}, 15),
         w2 = randomTensor(DType::F16, {256, 128}, 16);
  BIND(l.value(), "arg0", out);
  BIND(l.value(), "arg1", h);
  BIND(l.value(), "arg2", x);
  BIND(l.value(), "arg3", w1);
  BIND(l.value(), "arg4", w2);
  run(l.value());
  auto matmul = [](const std::vector<float>& A, const std::vector<float>& B, int M, int K, int N) {
    std::vector<float> C(M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int k0 = 0; k0 < K; k0 += 32) {
          float part = 0;
          for (int k = k0; k < k0 + 32; ++k)
            part = std::fma(A[i * K + k], B[k * N + j], part);
          acc = k0 == 0 ? part : acc + part;
        }
        C[i * N + j] = acc;
      }
    return C;
  };
  std::vector<float> X(32 * 128), W1(128 * 256), W2(256 * 128);
  for (int i = 0; i < 32 * 128; ++i)
    X[i] = f32(x.at(i));
  for (int i = 0; i < 128 * 256; ++i)
    W1[i] = f32(w1.at(i));
  for (int i = 0; i < 256 * 128; ++i)
    W2[i] = f32(w2.at(i));
  auto H = matmul(X, W1, 32, 128, 256);
  for (float& v : H) {
    v = f32(rnd(DType::F16, v));
    if (v < 0) v = 0;
  }
  for (int i = 0; i < 32 * 256; ++i)
    ASSERT_EQ(h.at(i), H[i]) << "hidden " << i;
  auto O = matmul(H, W2, 32, 256, 128);
  for (int i = 0; i < 32 * 128; ++i)
    ASSERT_EQ(out.at(i), rnd(DType::F16, O[i])) << "out " << i;
}

// Corpus 6: ring attention update: the same result for every block count, and equal to the
// per-row formulas of the kernel with the valid regions it declares (f32 math, f16 ROUND on
// the f16 output).
TEST(Runtime, CorpusRingAttention) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("attention__ring_attention_update.pto"));
  std::vector<Tensor> first;
  for (uint32_t blocks : {1u, 3u, 8u}) {
    auto l = m.launch("ring_attention_update");
    std::vector<Tensor> t(9);
    for (int i : {0, 3, 6})
      t[i] = randomTensor(DType::F16, {8, 16}, 20 + i);
    for (int i : {1, 2, 4, 5, 7, 8})
      t[i] = randomTensor(DType::F32, {8, 8}, 20 + i);
    for (int i = 0; i < 9; ++i)
      BIND(l.value(), "#" + std::to_string(i), t[i]);
    run(l.value(), blocks);
    if (first.empty())
      first = t;
    else
      for (int i = 0; i < 9; ++i)
        ASSERT_EQ(t[i].data, first[i].data) << "blocks " << blocks << " arg" << i;
  }
  // Reference, row by row, in the kernel's order of f32 operations (TEXP f32 = exp in double,
  // rounded once; row sums left to right). Arguments: 3/6 the two partial outputs (f16), 4/7
  // their row maxima, 5/8 their row sums (f32, 8 per row); results: 0 the merged output (f16,
  // CAST_ROUND), 1 the new maximum, 2 the new sum.
  const std::vector<Tensor>& t = first;
  auto ex = [](float x) { return static_cast<float>(std::exp(static_cast<double>(x))); };
  for (int r = 0; r < 8; ++r) {
    float ma = f32(t[4].at(r * 8)), mb = f32(t[7].at(r * 8)), la = 0, lb = 0;
    for (int j = 1; j < 8; ++j)
      ma = std::max(ma, f32(t[4].at(r * 8 + j))), mb = std::max(mb, f32(t[7].at(r * 8 + j)));
    for (int j = 0; j < 8; ++j)
      la += f32(t[5].at(r * 8 + j)), lb += f32(t[8].at(r * 8 + j));
    const float m = std::max(ma, mb);
    la *= 0.125f;
    lb *= 0.125f;
    const float wa = ex(ma - m) * la, wb = ex(mb - m) * lb, w = wa + wb;
    const float sa = wa / w, sb = wb / w;
    for (int j = 0; j < 16; ++j) {
      const float o = f32(t[3].at(r * 16 + j)) * sa + f32(t[6].at(r * 16 + j)) * sb;
      ASSERT_EQ(t[0].at(r * 16 + j), rnd(DType::F16, o, isa::RoundMode::CAST_ROUND))
          << "out " << r << "," << j;
    }
    float eight = 0;
    for (int j = 0; j < 8; ++j)
      eight += w;
    for (int j = 0; j < 8; ++j) {
      ASSERT_EQ(f32(t[1].at(r * 8 + j)), m) << "max " << r;
      ASSERT_EQ(f32(t[2].at(r * 8 + j)), eight * 0.125f) << "sum " << r;
    }
  }
}

TEST(Runtime, SeedTdequant) {
  Module m = build(sample("tdequant/tdequant.pto"));
  auto l = m.launch("dequant");
  Tensor q = randomTensor(DType::I8, {16, 32}, 30, -128, 128),
         sc = randomTensor(DType::F32, {16, 8}, 31),
         of = randomTensor(DType::F32, {16, 8}, 32, -4, 4);
  Tensor out = Tensor::zeros(DType::F32, {16, 32});
  BIND(l.value(), "q", q);
  BIND(l.value(), "scale", sc);
  BIND(l.value(), "off", of);
  BIND(l.value(), "out", out);
  run(l.value());
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 32; ++j)
      ASSERT_EQ(out.at(i * 32 + j), (f32(q.at(i * 32 + j)) - f32(of.at(i * 8))) * f32(sc.at(i * 8)))
          << i << "," << j;
}

TEST(Runtime, SeedTaxpy) {
  Module m = build(sample("taxpy/taxpy.pto"));
  auto l = m.launch("axpy");
  Tensor x32 = randomTensor(DType::F32, {16, 16}, 40), y32 = randomTensor(DType::F32, {16, 16}, 41);
  Tensor x16 = randomTensor(DType::F16, {16, 16}, 42), y16 = randomTensor(DType::F16, {16, 16}, 43),
         w = randomTensor(DType::F32, {16, 16}, 44);
  Tensor y32in = y32, y16in = y16, win = w;
  BIND(l.value(), "x32", x32);
  BIND(l.value(), "y32", y32);
  BIND(l.value(), "x16", x16);
  BIND(l.value(), "y16", y16);
  BIND(l.value(), "w", w);
  ASSERT_FALSE(l.value().bindScalar("a32", 0.75));
  ASSERT_FALSE(l.value().bindScalar("a16", 3.0009765625)); // rounds to the f16 3.0
  run(l.value());
  const float a16 = f32(rnd(DType::F16, 3.0009765625));
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(y32.at(i), f32(y32in.at(i)) + f32(x32.at(i)) * 0.75f) << i;
    ASSERT_EQ(y16.at(i), rnd(DType::F16, y16in.at(i) + rnd(DType::F16, x16.at(i) * a16))) << i;
    ASSERT_EQ(w.at(i), f32(win.at(i)) + f32(x16.at(i)) * a16) << i;
  }
}

TEST(Runtime, SeedTcvtEveryRoundMode) {
  Module m = build(sample("tcvt/tcvt.pto"));
  auto l = m.launch("cvt");
  const double vals[] = {2.5, -2.5, 1.5,   -1.5,  0.5,   -0.5,  2.4, -2.6,
                         3.7, 1e10, -1e10, 65519, 65520, 70000, 0.1, -0.0};
  Tensor x = Tensor::zeros(DType::F32, {8, 16});
  for (int i = 0; i < 128; ++i)
    x.setBits(i, isa::f32Bits(f32(i < 16 ? vals[i] : (i - 64) * 0.75)));
  const char* names[] = {"rint", "round", "floor", "ceil", "trunc", "odd", "none"};
  std::vector<Tensor> outs(7, Tensor::zeros(DType::I32, {8, 16}));
  Tensor h = Tensor::zeros(DType::F16, {8, 16}), back = Tensor::zeros(DType::F32, {8, 16});
  BIND(l.value(), "x", x);
  for (int k = 0; k < 7; ++k)
    BIND(l.value(), names[k], outs[k]);
  BIND(l.value(), "h", h);
  BIND(l.value(), "back", back);
  run(l.value());
  // Expected integers, written out by hand for the first 9 values (odd: round to odd).
  const int64_t want[7][9] = {{2, -2, 2, -2, 0, 0, 2, -3, 4},  {3, -3, 2, -2, 1, -1, 2, -3, 4},
                              {2, -3, 1, -2, 0, -1, 2, -3, 3}, {3, -2, 2, -1, 1, 0, 3, -2, 4},
                              {2, -2, 1, -1, 0, 0, 2, -2, 3},  {3, -3, 1, -1, 1, -1, 3, -3, 3},
                              {2, -2, 1, -1, 0, 0, 2, -2, 3}};
  for (int k = 0; k < 7; ++k) {
    for (int i = 0; i < 9; ++i)
      EXPECT_EQ(static_cast<int32_t>(outs[k].bitsAt(i)), want[k][i]) << names[k] << " " << vals[i];
    EXPECT_EQ(static_cast<int32_t>(outs[k].bitsAt(9)), INT32_MAX)
        << names[k]; // saturates (default ON)
    EXPECT_EQ(static_cast<int32_t>(outs[k].bitsAt(10)), INT32_MIN) << names[k];
  }
  EXPECT_EQ(h.bitsAt(11), 0x7bffu); // 65519 -> 65504 (RINT)
  EXPECT_EQ(h.bitsAt(12), 0x7bffu); // 65520 would be inf; f32->f16 saturates by default
  EXPECT_EQ(h.bitsAt(15), 0x8000u); // -0 kept
  for (int i = 0; i < 128; ++i) {
    if (i == 9 || i == 10 || i == 12 || i == 13) continue;
    EXPECT_EQ(back.at(i), rnd(DType::F16, f32(x.at(i)))) << i;
  }
}

TEST(Runtime, SeedTsqrt) {
  Module m = build(sample("tsqrt/tsqrt.pto"));
  auto l = m.launch("sqrt");
  Tensor x = randomTensor(DType::F32, {16, 16}, 50, -0.5, 100),
         h = randomTensor(DType::F16, {16, 16}, 51, 0, 100);
  Tensor y = Tensor::zeros(DType::F32, {16, 16}), hy = Tensor::zeros(DType::F16, {16, 16}),
         ry = Tensor::zeros(DType::F32, {16, 16});
  BIND(l.value(), "x", x);
  BIND(l.value(), "h", h);
  BIND(l.value(), "y", y);
  BIND(l.value(), "hy", hy);
  BIND(l.value(), "ry", ry);
  run(l.value());
  for (int i = 0; i < 256; ++i) {
    double v = x.at(i);
    if (v < 0) {
      EXPECT_TRUE(std::isnan(y.at(i)));
      continue;
    }
    ASSERT_EQ(y.at(i), f32(std::sqrt(v))) << i;
    ASSERT_EQ(ry.at(i), f32(1.0 / std::sqrt(v))) << i;
    ASSERT_EQ(hy.at(i), rnd(DType::F16, std::sqrt(h.at(i)))) << i;
  }
}

TEST(Runtime, ErrorsCarryTheSourceLocation) {
  PTO_REQUIRE_SHARED(haveCorpus());
  Module m = build(corpus("attention__flash_attention_score__b1_n1_s64_d64__stage2_softmax.pto"));
  auto l = m.launch("dense_attention_row_softmax");
  Tensor small = Tensor::zeros(DType::F16, {32, 64});
  BIND(l.value(), "arg0", small);
  auto st = l.value().run();
  ASSERT_TRUE(st);
  EXPECT_NE(st->message.find("attention__flash_attention_score__b1_n1_s64_d64__stage2_softmax.pto:"
                             "23:9: runtime error: "
                             "TLOAD reads past the end of argument %arg0"),
            std::string::npos)
      << st->message;
  // Unbound parameters, unknown names and type mismatches are errors too.
  auto l2 = m.launch("dense_attention_row_softmax");
  EXPECT_TRUE(l2.value().run());
  Tensor wrong = Tensor::zeros(DType::F32, {64, 64});
  EXPECT_TRUE(l2.value().bind("arg0", &wrong));
  EXPECT_TRUE(l2.value().bind("nope", &small));
  EXPECT_FALSE(m.launch("nope").ok());
}

TEST(Runtime, NpyRoundTrip) {
  Tensor t = randomTensor(DType::BF16, {3, 5}, 60);
  auto back = fromNpy(toNpy(t), "t");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value().dtype, DType::U16); // bf16 travels as raw uint16
  EXPECT_TRUE(retag(back.value(), DType::BF16));
  EXPECT_EQ(back.value().shape, t.shape);
  EXPECT_EQ(back.value().data, t.data);
  Tensor h = randomTensor(DType::F16, {7}, 61);
  auto hb = fromNpy(toNpy(h), "h");
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(hb.value().dtype, DType::F16);
  EXPECT_EQ(hb.value().data, h.data);
  EXPECT_FALSE(fromNpy({1, 2, 3}, "bad").ok());
}

// The header is byte for byte what numpy.save writes (numpy.lib.format, version 1.0): the dict
// with the shape as Python's tuple repr, spaces up to a multiple of 64 bytes with the 10-byte
// preamble, then a newline. Written out by hand from that format.
TEST(Npy, HeaderIsNumpys) {
  auto header = [](const Tensor& t) {
    const std::vector<uint8_t> b = toNpy(t);
    const size_t len = b[8] | (b[9] << 8);
    return std::string(b.begin() + 10, b.begin() + 10 + static_cast<long>(len));
  };
  auto padded = [](std::string dict) {
    const size_t total = 10 + dict.size() + 1;
    return dict + std::string((64 - total % 64) % 64, ' ') + "\n";
  };
  EXPECT_EQ(header(Tensor::zeros(DType::F32, {64, 64})),
            padded("{'descr': '<f4', 'fortran_order': False, 'shape': (64, 64), }"));
  EXPECT_EQ(header(Tensor::zeros(DType::F16, {8})),
            padded("{'descr': '<f2', 'fortran_order': False, 'shape': (8,), }"));
  EXPECT_EQ(header(Tensor::zeros(DType::I32, {2, 3, 4})),
            padded("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3, 4), }"));
  EXPECT_EQ(header(Tensor::zeros(DType::F32, {64, 64})).size() + 10, 128u); // 118 + 10
}

// Found by the .npy fuzzer: a shape with stray characters was read leniently ("8@" as 8), and
// a bool tensor was written back as packed bytes.
TEST(Npy, StrictShapesAndBoolRoundTrip) {
  auto npy = [](const std::string& header, size_t payload) {
    std::string h = header;
    while ((10 + h.size() + 1) % 64)
      h += ' ';
    h += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size()) + '\0' +
                        h + std::string(payload, '\x01');
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  };
  EXPECT_FALSE(pto::rt::fromNpy(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 8@), }", 64), "x.npy"));
  EXPECT_FALSE(pto::rt::fromNpy(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 8), }", 64), "x.npy"));
  EXPECT_FALSE(pto::rt::fromNpy(
      npy("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 64),
      "x.npy"));
  auto b = pto::rt::fromNpy(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3),
                            "b.npy");
  ASSERT_TRUE(b);
  auto again = pto::rt::fromNpy(pto::rt::toNpy(b.value()), "again.npy");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->shape, b->shape);
  EXPECT_EQ(again->data, b->data);
}
