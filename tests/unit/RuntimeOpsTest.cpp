// Runtime tests for the intricate cpu kernels (sorts, argmax ties, TPACK, TQUANT rounding): a
// kernel is assembled and linked in process, run on random data, and checked against a
// reference written here in a different way (ranks instead of sorting, bit masks, integer
// rounding arithmetic).
#include "asm/Frontend.h"
#include "asm/Lower.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

using namespace pto;
using namespace pto::rt;
using isa::DType;

namespace {

/// PTO text -> object -> image (auto-sync) -> Module.
Module build(const std::string& text, std::optional<isa::Arch> arch = std::nullopt) {
  as::SourceFile src("ops.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags);
  EXPECT_TRUE(m) << err.str();
  isa::Arch a = as::resolveArch(*m, arch);
  as::verifyModule(*m, a, diags);
  auto o = as::lowerModule(*m, a, diags);
  EXPECT_TRUE(o) << err.str();
  link::LinkOptions opts;
  opts.autoSync = true;
  link::LinkResult r = link::link({{"ops.o", *o}}, opts);
  EXPECT_TRUE(r.ok());
  auto bytes = obj::writeImage(*r.image);
  EXPECT_EQ(bytes.index(), 0u);
  auto mod = Module::load(std::get<0>(bytes), "ops.pto");
  EXPECT_TRUE(mod.ok()) << (mod.ok() ? "" : mod.error().message);
  return mod.value();
}

void runWith(Module& m, const std::string& kernel, std::vector<std::pair<std::string, Tensor*>> args) {
  auto l = m.launch(kernel);
  ASSERT_TRUE(l.ok());
  for (auto& [name, t] : args) ASSERT_FALSE(l.value().bind(name, t)) << name;
  auto st = l.value().run({});
  ASSERT_FALSE(st) << st->message;
}

uint32_t u32At(const Tensor& t, int64_t i) {
  uint32_t v;
  std::memcpy(&v, t.data.data() + i * 4, 4);
  return v;
}

/// Where element i of a 32-block goes in descending order with ties by position: the number of
/// greater elements plus the number of equal elements before it.
std::vector<int> ranks(const std::vector<double>& v) {
  std::vector<int> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int k = 0;
    for (size_t j = 0; j < v.size(); ++j) k += v[j] > v[i] || (v[j] == v[i] && j < i);
    r[i] = k;
  }
  return r;
}

void checkSort32(DType dt, const char* ty, uint64_t seed) {
  const int cols = 64, rows = 2, coef = dt == DType::F32 ? 2 : 4;
  std::string tile = std::string("!pto.tile_buf<vec, 2x64x") + ty + ">";
  std::string text = std::string("kernel @s(%x: !pto.tensor_view<2x64x") + ty + ">, %i: !pto.tensor_view<2x64xui32>, %o: !pto.tensor_view<2x" +
                     std::to_string(64 * coef) + "x" + ty + ">) {\n  tile %v : " + tile + "\n  tile %ix : !pto.tile_buf<vec, 2x64xui32>\n" +
                     "  tile %d : !pto.tile_buf<vec, 2x" + std::to_string(64 * coef) + "x" + ty + ">\n" +
                     "  tload %v, %x[0, 0]\n  tload %ix, %i[0, 0]\n  tsort32 %d, %v, %ix\n  tstore %o[0, 0], %d\n}\n";
  Module m = build(text);
  std::mt19937_64 rng(seed);
  Tensor x = Tensor::zeros(dt, {rows, cols}), idx = Tensor::zeros(DType::U32, {rows, cols}), out = Tensor::zeros(dt, {rows, cols * coef});
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.setBits(i, isa::encodeFromDouble(dt, static_cast<double>(static_cast<int>(rng() % 9) - 4) / 2, isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    idx.setBits(i, 1000 + i);
  }
  runWith(m, "s", {{"x", &x}, {"i", &idx}, {"o", &out}});
  const size_t eb = dt == DType::F32 ? 4 : 2;
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < cols; b += 32) {
      std::vector<double> v;
      for (int j = b; j < b + 32; ++j) v.push_back(x.at(r * cols + j));
      std::vector<int> rk = ranks(v);
      for (int j = 0; j < 32; ++j) {
        const uint8_t* pair = out.data.data() + (static_cast<size_t>(r) * cols * coef * eb) + static_cast<size_t>(b + rk[j]) * 8;
        uint32_t ix;
        std::memcpy(&ix, pair + 4, 4);
        EXPECT_EQ(ix, uint32_t(1000 + r * cols + b + j)) << "row " << r << " element " << b + j;
        uint64_t bits = 0;
        std::memcpy(&bits, pair, eb);
        EXPECT_EQ(isa::decodeToDouble(dt, bits), v[j]);
        if (dt == DType::F16) {
          EXPECT_EQ(pair[2] | pair[3], 0) << "f16 value padding";
        }
      }
    }
}

TEST(RuntimeOps, Sort32OrdersEachBlockWithItsIndices) {
  checkSort32(DType::F32, "f32", 1);
  checkSort32(DType::F16, "f16", 2);
}

TEST(RuntimeOps, MergeSortOfListsMatchesRanks) {
  // Two lists of 8 pairs, each sorted descending; values with many ties across the lists.
  const char* text = R"(kernel @m(%a: !pto.tensor_view<1x16xf32>, %b: !pto.tensor_view<1x16xf32>, %o: !pto.tensor_view<1x32xf32>) {
  tile %x, %y : !pto.tile_buf<vec, 1x16xf32>
  tile %d, %tmp : !pto.tile_buf<vec, 1x32xf32>
  tload %x, %a[0, 0]
  tload %y, %b[0, 0]
  pto.tmrgsort ins(%x, %y : !pto.tile_buf<vec, 1x16xf32>, !pto.tile_buf<vec, 1x16xf32>) outs(%d, %tmp : !pto.tile_buf<vec, 1x32xf32>, !pto.tile_buf<vec, 1x32xf32>)
  tstore %o[0, 0], %d
})";
  Module m = build(text);
  std::mt19937_64 rng(5);
  Tensor a = Tensor::zeros(DType::F32, {1, 16}), b = Tensor::zeros(DType::F32, {1, 16}), o = Tensor::zeros(DType::F32, {1, 32});
  std::vector<double> all; // list 0's values then list 1's
  for (Tensor* t : {&a, &b}) {
    std::vector<double> v(8);
    for (double& e : v) e = static_cast<double>(rng() % 5);
    std::sort(v.rbegin(), v.rend());
    for (int k = 0; k < 8; ++k) {
      t->setBits(2 * k, isa::encodeFromDouble(DType::F32, v[k], isa::RoundMode::CAST_RINT, isa::SatMode::ON));
      t->setBits(2 * k + 1, static_cast<uint64_t>(all.size())); // the pair's index: its place in `all`
      all.push_back(v[k]);
    }
  }
  runWith(m, "m", {{"a", &a}, {"b", &b}, {"o", &o}});
  std::vector<int> rk = ranks(all); // ties: list 0 first, then position
  for (size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(o.at(2 * rk[k]), all[k]) << k;
    EXPECT_EQ(u32At(o, 2 * rk[k] + 1), k) << k;
  }
}

TEST(RuntimeOps, ArgMaxAndArgMinTakeTheFirstOfTies) {
  const char* text = R"(kernel @a(%x: !pto.tensor_view<16x32xi16>, %rmax: !pto.tensor_view<16x1xi32>, %cmin: !pto.tensor_view<1x32xi32>) {
  tile %v : !pto.tile_buf<vec, 16x32xi16>
  tile %r : !pto.tile_buf<vec, 16x8xi32, valid=16x1>
  tile %c : !pto.tile_buf<vec, 1x32xi32>
  tload %v, %x[0, 0]
  trowargmax %r, %v
  tstore %rmax[0, 0], %r
  tcolargmin %c, %v
  tstore %cmin[0, 0], %c
})";
  Module m = build(text);
  std::mt19937_64 rng(9);
  Tensor x = Tensor::zeros(DType::I16, {16, 32}), rmax = Tensor::zeros(DType::I32, {16, 1}), cmin = Tensor::zeros(DType::I32, {1, 32});
  for (int64_t i = 0; i < x.numel(); ++i) x.setBits(i, static_cast<uint64_t>(static_cast<int64_t>(rng() % 4) - 2)); // few values: many ties
  runWith(m, "a", {{"x", &x}, {"rmax", &rmax}, {"cmin", &cmin}});
  for (int r = 0; r < 16; ++r) {
    // Scan from the right, keeping ties: the last update is the leftmost maximum.
    int best = 31;
    for (int j = 31; j >= 0; --j)
      if (x.at(r * 32 + j) >= x.at(r * 32 + best)) best = j;
    EXPECT_EQ(rmax.at(r), best) << "row " << r;
  }
  for (int j = 0; j < 32; ++j) {
    int best = 15;
    for (int r = 15; r >= 0; --r)
      if (x.at(r * 32 + j) <= x.at(best * 32 + j)) best = r;
    EXPECT_EQ(cmin.at(j), best) << "column " << j;
  }
}

TEST(RuntimeOps, PackKeepsTheLowBits) {
  const char* text = R"(kernel @p(%x: !pto.tensor_view<4x16xui32>, %h: !pto.tensor_view<4x16xui16>, %b: !pto.tensor_view<4x16xui8>) {
  tile %v : !pto.tile_buf<vec, 4x16xui32>
  tile %w : !pto.tile_buf<vec, 4x16xui16>
  tile %y : !pto.tile_buf<vec, 4x32xui8, valid=4x16>
  tload %v, %x[0, 0]
  tpack %w, %v : !pto.tile_buf<vec, 4x16xui16>, !pto.tile_buf<vec, 4x16xui32>
  tstore %h[0, 0], %w
  tpack %y, %v : !pto.tile_buf<vec, 4x32xui8, valid=4x16>, !pto.tile_buf<vec, 4x16xui32>
  tstore %b[0, 0], %y
})";
  Module m = build(text, isa::Arch::A5);
  std::mt19937_64 rng(11);
  Tensor x = Tensor::zeros(DType::U32, {4, 16}), h = Tensor::zeros(DType::U16, {4, 16}), b = Tensor::zeros(DType::U8, {4, 16});
  for (int64_t i = 0; i < x.numel(); ++i) x.setBits(i, rng() & 0xFFFFFFFFu);
  runWith(m, "p", {{"x", &x}, {"h", &h}, {"b", &b}});
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(static_cast<uint32_t>(h.at(i)), u32At(x, i) % 65536) << i;
    EXPECT_EQ(static_cast<uint32_t>(b.at(i)), u32At(x, i) % 256) << i;
  }
}

/// Nearest integer, ties to even, with integer arithmetic on the value scaled by 2^k.
int64_t roundHalfEven(double v) {
  const double f = std::floor(v), frac = v - f;
  const int64_t lo = static_cast<int64_t>(f);
  if (frac > 0.5) return lo + 1;
  if (frac < 0.5) return lo;
  return lo % 2 == 0 ? lo : lo + 1;
}

TEST(RuntimeOps, QuantRoundsTiesToEvenAndSaturates) {
  const char* text = R"(kernel @q(%x: !pto.tensor_view<8x16xf32>, %s: !pto.tensor_view<8x1xf32>, %z: !pto.tensor_view<8x1xf32>,
          %sym: !pto.tensor_view<8x16xi8>, %asym: !pto.tensor_view<8x16xui8>) {
  tile %v : !pto.tile_buf<vec, 8x16xf32>
  tile %sc, %zp : !pto.tile_buf<vec, 8x8xf32, valid=8x1>
  tile %a : !pto.tile_buf<vec, 8x32xi8, valid=8x16>
  tile %b : !pto.tile_buf<vec, 8x32xui8, valid=8x16>
  tload %v, %x[0, 0]
  tload %sc, %s[0, 0]
  tload %zp, %z[0, 0]
  tquant %a, %v, %sc
  tstore %sym[0, 0], %a
  tquant %b, %v, %sc, %zp
  tstore %asym[0, 0], %b
})";
  Module m = build(text);
  std::mt19937_64 rng(13);
  Tensor x = Tensor::zeros(DType::F32, {8, 16}), s = Tensor::zeros(DType::F32, {8, 1}), z = Tensor::zeros(DType::F32, {8, 1});
  Tensor sym = Tensor::zeros(DType::I8, {8, 16}), asym = Tensor::zeros(DType::U8, {8, 16});
  // Half-integers and values far out of range after scaling by 0.5, 1, 2, 4, ...: ties and saturation.
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setBits(i, isa::encodeFromDouble(DType::F32, static_cast<double>(static_cast<int64_t>(rng() % 601) - 300) / 2, isa::RoundMode::CAST_RINT,
                                       isa::SatMode::ON));
  for (int r = 0; r < 8; ++r) {
    s.setBits(r, isa::encodeFromDouble(DType::F32, std::ldexp(1.0, r - 2), isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    z.setBits(r, isa::encodeFromDouble(DType::F32, 16.0 * r, isa::RoundMode::CAST_RINT, isa::SatMode::ON));
  }
  runWith(m, "q", {{"x", &x}, {"s", &s}, {"z", &z}, {"sym", &sym}, {"asym", &asym}});
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 16; ++j) {
      const double p = x.at(r * 16 + j) * s.at(r); // exact: a power-of-two scale
      const int64_t q = roundHalfEven(p), qa = roundHalfEven(p + z.at(r));
      EXPECT_EQ(sym.at(r * 16 + j), static_cast<double>(std::min<int64_t>(127, std::max<int64_t>(-128, q)))) << r << "," << j;
      EXPECT_EQ(asym.at(r * 16 + j), static_cast<double>(std::min<int64_t>(255, std::max<int64_t>(0, qa)))) << r << "," << j;
    }
}

} // namespace
