// Runtime tests for the intricate cpu kernels (sorts, argmax ties, TPACK, TQUANT rounding): a
// kernel is assembled and linked in process, run on random data, and checked against a
// reference written here in a different way (ranks instead of sorting, bit masks, integer
// rounding arithmetic).
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Program.h"
#include "runtime/Runtime.h"
#include "runtime/cpu/KernelUtil.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <tuple>

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
  opts.sync = link::SyncMode::Insert;
  link::LinkResult r = link::link({{"ops.o", *o}}, opts);
  EXPECT_TRUE(r.ok());
  auto bytes = obj::writeImage(*r.image);
  EXPECT_EQ(bytes.index(), 0u);
  auto mod = Module::load(std::get<0>(bytes), "ops.pto");
  EXPECT_TRUE(mod.ok()) << (mod.ok() ? "" : mod.error().message);
  return mod.value();
}

void runWith(Module& m, const std::string& kernel,
             std::vector<std::pair<std::string, Tensor*>> args) {
  auto l = m.launch(kernel);
  ASSERT_TRUE(l.ok());
  for (auto& [name, t] : args)
    ASSERT_FALSE(l.value().bind(name, t)) << name;
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
    for (size_t j = 0; j < v.size(); ++j)
      k += v[j] > v[i] || (v[j] == v[i] && j < i);
    r[i] = k;
  }
  return r;
}

void checkSort32(DType dt, const char* ty, uint64_t seed) {
  const int cols = 64, rows = 2, coef = dt == DType::F32 ? 2 : 4;
  std::string tile = std::string("!pto.tile_buf<vec, 2x64x") + ty + ">";
  std::string text =
      std::string("kernel @s(%x: !pto.tensor_view<2x64x") + ty +
      ">, %i: !pto.tensor_view<2x64xui32>, %o: !pto.tensor_view<2x" + std::to_string(64 * coef) +
      "x" + ty + ">) {\n  tile %v : " + tile + "\n  tile %ix : !pto.tile_buf<vec, 2x64xui32>\n" +
      "  tile %d : !pto.tile_buf<vec, 2x" + std::to_string(64 * coef) + "x" + ty + ">\n" +
      "  tload %v, %x[0, 0]\n  tload %ix, %i[0, 0]\n  tsort32 %d, %v, %ix\n  tstore %o[0, 0], "
      "%d\n}\n";
  Module m = build(text);
  std::mt19937_64 rng(seed);
  Tensor x = Tensor::zeros(dt, {rows, cols}), idx = Tensor::zeros(DType::U32, {rows, cols}),
         out = Tensor::zeros(dt, {rows, cols * coef});
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.setBits(i, isa::encodeFromDouble(dt, static_cast<double>(static_cast<int>(rng() % 9) - 4) / 2,
                                       isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    idx.setBits(i, 1000 + i);
  }
  runWith(m, "s", {{"x", &x}, {"i", &idx}, {"o", &out}});
  const size_t eb = dt == DType::F32 ? 4 : 2;
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < cols; b += 32) {
      std::vector<double> v;
      for (int j = b; j < b + 32; ++j)
        v.push_back(x.at(r * cols + j));
      std::vector<int> rk = ranks(v);
      for (int j = 0; j < 32; ++j) {
        const uint8_t* pair = out.data.data() + (static_cast<size_t>(r) * cols * coef * eb) +
                              static_cast<size_t>(b + rk[j]) * 8;
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
  const char* text =
      R"(kernel @m(%a: !pto.tensor_view<1x16xf32>, %b: !pto.tensor_view<1x16xf32>, %o: !pto.tensor_view<1x32xf32>) {
  tile %x, %y : !pto.tile_buf<vec, 1x16xf32>
  tile %d, %tmp : !pto.tile_buf<vec, 1x32xf32>
  tload %x, %a[0, 0]
  tload %y, %b[0, 0]
  pto.tmrgsort ins(%x, %y : !pto.tile_buf<vec, 1x16xf32>, !pto.tile_buf<vec, 1x16xf32>) outs(%d, %tmp : !pto.tile_buf<vec, 1x32xf32>, !pto.tile_buf<vec, 1x32xf32>)
  tstore %o[0, 0], %d
})";
  Module m = build(text);
  std::mt19937_64 rng(5);
  Tensor a = Tensor::zeros(DType::F32, {1, 16}), b = Tensor::zeros(DType::F32, {1, 16}),
         o = Tensor::zeros(DType::F32, {1, 32});
  std::vector<double> all; // list 0's values then list 1's
  for (Tensor* t : {&a, &b}) {
    std::vector<double> v(8);
    for (double& e : v)
      e = static_cast<double>(rng() % 5);
    std::sort(v.rbegin(), v.rend());
    for (int k = 0; k < 8; ++k) {
      t->setBits(2 * k, isa::encodeFromDouble(DType::F32, v[k], isa::RoundMode::CAST_RINT,
                                              isa::SatMode::ON));
      t->setBits(2 * k + 1,
                 static_cast<uint64_t>(all.size())); // the pair's index: its place in `all`
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
  const char* text =
      R"(kernel @a(%x: !pto.tensor_view<16x32xi16>, %rmax: !pto.tensor_view<16x1xi32>, %cmin: !pto.tensor_view<1x32xi32>) {
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
  Tensor x = Tensor::zeros(DType::I16, {16, 32}), rmax = Tensor::zeros(DType::I32, {16, 1}),
         cmin = Tensor::zeros(DType::I32, {1, 32});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setBits(i,
              static_cast<uint64_t>(static_cast<int64_t>(rng() % 4) - 2)); // few values: many ties
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
  const char* text =
      R"(kernel @p(%x: !pto.tensor_view<4x16xui32>, %h: !pto.tensor_view<4x16xui16>, %b: !pto.tensor_view<4x16xui8>) {
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
  Tensor x = Tensor::zeros(DType::U32, {4, 16}), h = Tensor::zeros(DType::U16, {4, 16}),
         b = Tensor::zeros(DType::U8, {4, 16});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setBits(i, rng() & 0xFFFFFFFFu);
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
  const char* text =
      R"(kernel @q(%x: !pto.tensor_view<8x16xf32>, %s: !pto.tensor_view<8x1xf32>, %z: !pto.tensor_view<8x1xf32>,
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
  Tensor x = Tensor::zeros(DType::F32, {8, 16}), s = Tensor::zeros(DType::F32, {8, 1}),
         z = Tensor::zeros(DType::F32, {8, 1});
  Tensor sym = Tensor::zeros(DType::I8, {8, 16}), asym = Tensor::zeros(DType::U8, {8, 16});
  // Half-integers and values far out of range after scaling by 0.5, 1, 2, 4, ...: ties and
  // saturation.
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setBits(i, isa::encodeFromDouble(
                     DType::F32, static_cast<double>(static_cast<int64_t>(rng() % 601) - 300) / 2,
                     isa::RoundMode::CAST_RINT, isa::SatMode::ON));
  for (int r = 0; r < 8; ++r) {
    s.setBits(r, isa::encodeFromDouble(DType::F32, std::ldexp(1.0, r - 2),
                                       isa::RoundMode::CAST_RINT, isa::SatMode::ON));
    z.setBits(r, isa::encodeFromDouble(DType::F32, 16.0 * r, isa::RoundMode::CAST_RINT,
                                       isa::SatMode::ON));
  }
  runWith(m, "q", {{"x", &x}, {"s", &s}, {"z", &z}, {"sym", &sym}, {"asym", &asym}});
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 16; ++j) {
      const double p = x.at(r * 16 + j) * s.at(r); // exact: a power-of-two scale
      const int64_t q = roundHalfEven(p), qa = roundHalfEven(p + z.at(r));
      EXPECT_EQ(sym.at(r * 16 + j),
                static_cast<double>(std::min<int64_t>(127, std::max<int64_t>(-128, q))))
          << r << "," << j;
      EXPECT_EQ(asym.at(r * 16 + j),
                static_cast<double>(std::min<int64_t>(255, std::max<int64_t>(0, qa))))
          << r << "," << j;
    }
}

} // namespace

// ------------------------------------------------------------------ fast paths vs portable kernels
// The cpu backend picks x86 kernels by CPU tier (runtime/cpu/Simd.h): AVX2 + F16C + FMA, then
// AVX-512F (f16 elementwise through F16C on 16 lanes, TMATMUL on 16 lanes), then AVX512-FP16.
// Each must give the portable kernel's bits. These tests build a TileInst over tiles in one
// buffer (as bench/run_bench.cpp does), select its kernel at every tier this CPU has, run each
// on the same bytes and compare. On a CPU without the tiers they only run the
// portable kernels (and say so).
namespace {

using cpu::SimdLevel;

/// Operand tiles laid out one after another in a private buffer, all at buffer 0.
struct TileCase {
  std::vector<uint8_t> buf;
  TileInst inst;
  uint64_t scalar = 0; // B.IOR src0 (register 5)

  /// One tile per dtype (rows x cols each unless `shapes` says otherwise); valid region vr x vc.
  TileCase(isa::OpId op, std::vector<DType> types, uint32_t rows, uint32_t cols, uint32_t vr,
           uint32_t vc, std::vector<std::pair<uint32_t, uint32_t>> shapes = {}) {
    inst.op = op;
    inst.name = isa::info(op).mnemonic.data();
    size_t off = 0;
    for (size_t i = 0; i < types.size(); ++i) {
      TileOperand o;
      o.dtype = types[i];
      o.rows = shapes.empty() ? rows : shapes[i].first;
      o.cols = shapes.empty() ? cols : shapes[i].second;
      o.validRows = static_cast<int32_t>(vr);
      o.validCols = static_cast<int32_t>(vc);
      o.offset = static_cast<uint32_t>(off);
      o.name = "t" + std::to_string(i);
      off += (o.bytes() + 63) / 64 * 64;
      inst.tiles.push_back(o);
    }
    buf.assign(off, 0);
    inst.dim[0] = {0, vc, true};
    inst.dim[1] = {0, vr, true};
    inst.dst = 0;
    inst.src0 = types.size() > 1 ? 1 : -1;
    inst.src1 = types.size() > 2 ? 2 : -1;
    inst.ior[0] = 5;
  }
  uint8_t* tile(int i) { return buf.data() + inst.tiles[static_cast<size_t>(i)].offset; }
  template <typename T> void set(int i, size_t k, T v) {
    std::memcpy(tile(i) + k * sizeof(T), &v, sizeof(T));
  }

  /// The buffer after running the kernel selectKernel picks at `level`.
  std::vector<uint8_t> runAt(SimdLevel level) const {
    TileInst t = inst;
    cpu::setSimdLimit(level);
    auto err = selectKernel(t);
    cpu::setSimdLimit(SimdLevel::Avx512Fp16);
    EXPECT_FALSE(err) << *err;
    std::vector<uint8_t> out = buf;
    Core core;
    core.buf[0] = out.data();
    core.r[5] = scalar;
    if (t.kernel) t.kernel(core, t);
    EXPECT_EQ(core.error, "");
    return out;
  }
};

/// TAXPY's kernels follow isa::axpyPairSupported over every float (dst, src) pair: a supported
/// pair computes dst = src * scalar + dst (1 + 2 * 3 = 7, by hand), any other is refused.
TEST(RuntimeOps, AxpyKernelForEverySupportedPairOnly) {
  struct Bits {
    DType t;
    uint32_t one, two, three, seven;
  };
  const Bits kinds[] = {{DType::F32, 0x3F800000u, 0x40000000u, 0x40400000u, 0x40E00000u},
                        {DType::F16, 0x3C00, 0x4000, 0x4200, 0x4700},
                        {DType::BF16, 0x3F80, 0x4000, 0x4040, 0x40E0}};
  int supported = 0;
  for (const Bits& d : kinds)
    for (const Bits& s : kinds) {
      TileCase c(isa::OpId::TAXPY, {d.t, s.t}, 1, 16, 1, 16);
      const unsigned db = isa::bitWidth(d.t) / 8, sb = isa::bitWidth(s.t) / 8;
      for (size_t k = 0; k < 16; ++k) {
        std::memcpy(c.tile(0) + k * db, &d.one, db);
        std::memcpy(c.tile(1) + k * sb, &s.two, sb);
      }
      c.scalar = s.three;
      TileInst t = c.inst;
      auto err = selectKernel(t);
      const bool ok = isa::axpyPairSupported(d.t, s.t);
      ASSERT_EQ(!err, ok) << isa::spelling(d.t) << " " << isa::spelling(s.t);
      if (!ok) continue;
      ++supported;
      std::vector<uint8_t> out = c.runAt(SimdLevel::Portable);
      for (size_t k = 0; k < 16; ++k) {
        uint32_t v = 0;
        std::memcpy(&v, out.data() + c.inst.tiles[0].offset + k * db, db);
        EXPECT_EQ(v, d.seven) << isa::spelling(d.t) << " " << isa::spelling(s.t) << " " << k;
      }
    }
  EXPECT_EQ(supported, 3);
}

/// The tiers above the portable one this CPU runs.
std::vector<SimdLevel> fastTiers() {
  std::vector<SimdLevel> v;
  if (cpu::simdSupported() >= SimdLevel::Avx2) v.push_back(SimdLevel::Avx2);
  if (cpu::simdSupported() >= SimdLevel::Avx512) v.push_back(SimdLevel::Avx512);
  if (cpu::simdSupported() >= SimdLevel::Avx512Fp16) v.push_back(SimdLevel::Avx512Fp16);
  if (v.empty())
    std::cout << "[ note     ] this CPU has no AVX2 + F16C + FMA: only the portable kernels ran\n";
  return v;
}

/// Compares the destination tile of every fast tier against the portable kernel, element by
/// element unless `allowed(k, got, portable)` accepts the difference; reports the first few
/// differences with the operands that produced them (`describe(k)`).
void expectSameAsPortable(const TileCase& c, const std::string& what,
                          const std::function<std::string(size_t)>& describe = {},
                          const std::function<bool(size_t, uint64_t, uint64_t)>& allowed = {}) {
  const std::vector<uint8_t> ref = c.runAt(SimdLevel::Portable);
  const TileOperand& d = c.inst.tiles[0];
  const size_t eb = isa::bitWidth(d.dtype) / 8, n = size_t{d.rows} * d.cols;
  for (SimdLevel l : fastTiers()) {
    const std::vector<uint8_t> got = c.runAt(l);
    EXPECT_EQ(0,
              std::memcmp(got.data() + d.bytes(), ref.data() + d.bytes(), ref.size() - d.bytes()))
        << what << ": bytes outside the destination differ";
    int shown = 0;
    for (size_t k = 0; k < n && shown < 5; ++k)
      if (std::memcmp(got.data() + d.offset + k * eb, ref.data() + d.offset + k * eb, eb) != 0) {
        uint64_t g = 0, r = 0;
        std::memcpy(&g, got.data() + d.offset + k * eb, eb);
        std::memcpy(&r, ref.data() + d.offset + k * eb, eb);
        if (allowed && allowed(k, g, r)) continue;
        ADD_FAILURE() << what << " tier " << int(l) << " element " << k << ": 0x" << std::hex << g
                      << " vs portable 0x" << r << std::dec
                      << (describe ? " (" + describe(k) + ")" : "");
        ++shown;
      }
  }
}

constexpr isa::OpId kBinaryOps[] = {isa::OpId::TADD, isa::OpId::TSUB, isa::OpId::TMUL,
                                    isa::OpId::TDIV, isa::OpId::TMAX, isa::OpId::TMIN};
constexpr isa::OpId kScalarOps[] = {isa::OpId::TADDS, isa::OpId::TSUBS, isa::OpId::TMULS,
                                    isa::OpId::TDIVS, isa::OpId::TMAXS, isa::OpId::TMINS};

/// Second operands worth every first one: zeros, infinities, quiet and signalling NaNs of both
/// signs, the extremes, one.
std::vector<uint16_t> specials16(DType d) {
  if (d == DType::F16)
    return {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55,
            0x7bff, 0xfbff, 0x0001, 0x8001, 0x0400, 0x3c00, 0xbc00, 0x3555};
  return {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xff95,
          0x7f7f, 0xff7f, 0x0001, 0x8001, 0x0080, 0x3f80, 0xbf80, 0x3eab};
}

} // namespace

TEST(RuntimeFastPaths, F16AndBf16ElementwiseMatchPortableOnAllPatterns) {
  // a = every 16-bit pattern; b = a permutation of them per round (so 65536 x 24 pairs, a
  // strided subset of all pairs) plus each special value against every a.
  //
  // Bits must agree except when both operands are NaNs: then the result is either operand as
  // the quiet NaN the rounding makes of it, and which one is not specified: x86 passes the
  // first source operand on and the compiler may swap the operands of a commutative op (the
  // portable bf16 add does in GCC 12 builds, the f16 one does not).
  for (DType dt : {DType::F16, DType::BF16}) {
    auto isNan = [&](uint16_t x) {
      return dt == DType::F16 ? (x & 0x7fff) > 0x7c00 : (x & 0x7fff) > 0x7f80;
    };
    auto quiet = [&](uint16_t x) {
      return static_cast<uint16_t>(dt == DType::F16 ? (x & 0x8000) | 0x7e00 : x | 0x40);
    };
    std::vector<std::vector<uint16_t>> bs;
    for (uint32_t r = 0; r < 24; ++r) {
      std::vector<uint16_t> b(65536);
      for (uint32_t i = 0; i < 65536; ++i)
        b[i] = static_cast<uint16_t>(i * 40503u + r * 7919u);
      bs.push_back(b);
    }
    for (uint16_t s : specials16(dt))
      bs.push_back(std::vector<uint16_t>(65536, s));
    for (isa::OpId op : kBinaryOps) {
      TileCase c(op, {dt, dt, dt}, 256, 256, 256, 256);
      for (uint32_t i = 0; i < 65536; ++i)
        c.set<uint16_t>(1, i, static_cast<uint16_t>(i));
      for (const auto& b : bs) {
        for (uint32_t i = 0; i < 65536; ++i)
          c.set<uint16_t>(2, i, b[i]);
        expectSameAsPortable(
            c, std::string(isa::spelling(dt)) + " " + c.inst.name,
            [&](size_t k) {
              std::ostringstream s;
              s << std::hex << "a 0x" << k << ", b 0x" << b[k];
              return s.str();
            },
            [&](size_t k, uint64_t got, uint64_t) {
              const auto a = static_cast<uint16_t>(k);
              return isNan(a) && isNan(b[k]) && (got == quiet(a) || got == quiet(b[k]));
            });
        if (::testing::Test::HasFailure()) return;
      }
    }
    for (isa::OpId op : kScalarOps)
      for (uint16_t s : specials16(dt)) {
        TileCase c(op, {dt, dt}, 256, 256, 256, 256);
        for (uint32_t i = 0; i < 65536; ++i)
          c.set<uint16_t>(1, i, static_cast<uint16_t>(i));
        c.scalar = s;
        expectSameAsPortable(
            c, std::string(isa::spelling(dt)) + " " + c.inst.name + " scalar " + std::to_string(s),
            {}, [&](size_t k, uint64_t got, uint64_t) {
              const auto a = static_cast<uint16_t>(k);
              return isNan(a) && isNan(s) && (got == quiet(a) || got == quiet(s));
            });
        if (::testing::Test::HasFailure()) return;
      }
  }
}

TEST(RuntimeFastPaths, F16ElementwiseRunsOfEveryLengthMatchPortable) {
  // Every run length from 1 to 80 elements (one row of that many valid columns): the 16-lane
  // loop of the AVX-512F tier, its 8-lane and scalar tails, each tier against the portable
  // kernel, on random bit patterns (NaNs, infinities and subnormals among them) with one in
  // eight a special value.
  std::mt19937 rng(16);
  const std::vector<uint16_t> specials = specials16(DType::F16);
  auto pick = [&] {
    return rng() % 8 == 0 ? specials[rng() % specials.size()] : static_cast<uint16_t>(rng());
  };
  auto isNan = [](uint64_t x) { return (x & 0x7fff) > 0x7c00; };
  auto quiet = [](uint64_t x) { return (x & 0x8000) | 0x7e00; };
  size_t inputs = 0;
  for (uint32_t vc = 1; vc <= 80; ++vc) {
    for (isa::OpId op : kBinaryOps) {
      TileCase c(op, {DType::F16, DType::F16, DType::F16}, 1, 80, 1, vc);
      std::vector<uint16_t> a(80), b(80);
      for (uint32_t i = 0; i < 80; ++i) {
        c.set<uint16_t>(1, i, a[i] = pick());
        c.set<uint16_t>(2, i, b[i] = pick());
      }
      inputs += vc;
      expectSameAsPortable(c, std::string("f16 ") + c.inst.name + " of " + std::to_string(vc), {},
                           [&](size_t k, uint64_t got, uint64_t) {
                             return isNan(a[k]) && isNan(b[k]) &&
                                    (got == quiet(a[k]) || got == quiet(b[k]));
                           });
    }
    for (isa::OpId op : kScalarOps) {
      TileCase c(op, {DType::F16, DType::F16}, 1, 80, 1, vc);
      std::vector<uint16_t> a(80);
      for (uint32_t i = 0; i < 80; ++i)
        c.set<uint16_t>(1, i, a[i] = pick());
      c.scalar = pick();
      inputs += vc;
      expectSameAsPortable(c, std::string("f16 ") + c.inst.name + " of " + std::to_string(vc), {},
                           [&](size_t k, uint64_t got, uint64_t) {
                             return isNan(a[k]) && isNan(c.scalar) &&
                                    (got == quiet(a[k]) || got == quiet(c.scalar));
                           });
    }
  }
  EXPECT_EQ(inputs, size_t{12} * 80 * 81 / 2);
}

TEST(RuntimeFastPaths, F32ElementwiseMatchesPortable) {
  std::mt19937 rng(7);
  const uint32_t specials[] = {0,           0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                               0xffc00001u, 0x7f800001u, 0x00000001u, 0x7f7fffffu, 0x3f800000u};
  for (isa::OpId op : kBinaryOps) {
    TileCase c(op, {DType::F32, DType::F32, DType::F32}, 64, 64, 64, 64);
    std::vector<uint32_t> a(4096), b(4096);
    for (uint32_t i = 0; i < 4096; ++i) {
      a[i] = i < 100 ? specials[i % 10] : rng();
      b[i] = i < 100 ? specials[i / 10] : rng() % 4 == 0 ? specials[rng() % 10] : rng();
      c.set<uint32_t>(1, i, a[i]);
      c.set<uint32_t>(2, i, b[i]);
    }
    // Two NaN operands: either one, quieted (see the f16 test).
    auto isNan = [](uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u; };
    expectSameAsPortable(c, std::string("f32 ") + c.inst.name, {},
                         [&](size_t k, uint64_t got, uint64_t) {
                           return isNan(a[k]) && isNan(b[k]) &&
                                  (got == (a[k] | 0x400000u) || got == (b[k] | 0x400000u));
                         });
  }
}

TEST(RuntimeFastPaths, F32UnaryMathMatchesPortable) {
  // The tile kernels around VecMath.h's runs (tests/unit/VecMathTest.cpp checks the runs on
  // every 61st pattern): whole tiles, a valid region narrower than the rows, in place.
  std::mt19937 rng(9);
  for (isa::OpId op :
       {isa::OpId::TEXP, isa::OpId::TLOG, isa::OpId::TSQRT, isa::OpId::TRSQRT, isa::OpId::TRECIP})
    for (int form = 0; form < 3; ++form) {
      const uint32_t vc = form == 1 ? 45 : 64;
      TileCase c(op, {DType::F32, DType::F32}, 64, 64, 64, vc);
      if (form == 2) c.inst.src0 = 0; // in place
      for (int t = 0; t < 2; ++t)
        for (uint32_t i = 0; i < 4096; ++i) // positive values of every binade, then any pattern
          c.set<uint32_t>(t, i, i < 2048 ? rng() % 0x7f800000u : static_cast<uint32_t>(rng()));
      expectSameAsPortable(c, std::string("f32 ") + c.inst.name + " form " + std::to_string(form));
    }
}

TEST(RuntimeFastPaths, F16UnaryMathMatchesItsDefinitionOnAllPatterns) {
  // Every f16 input of TEXP, TLOG, TSQRT, TRSQRT and TRECIP against the definition written
  // here (f16 to float, the C library or an IEEE operation, round to f16), through the kernel
  // selectKernel picks: the first whole-tile run is computed directly and builds the op's table
  // of results (runtime/cpu/HalfTable.h), the runs after it look up the table (TSQRT and TRECIP:
  // the F16C vector path on AVX2 and up): whole tile, in place, a valid region narrower than the
  // rows (tails shorter than a vector step), and the whole tile again on the portable tier (the
  // table). 65536 x 4 inputs per op.
  auto viaFloat = [](float (*f)(float)) {
    return [f](uint16_t x) { return cpu::f2h(f(cpu::h2f(x))); };
  };
  const std::pair<isa::OpId, std::function<uint16_t(uint16_t)>> ops[] = {
      {isa::OpId::TEXP, viaFloat([](float x) { return std::exp(x); })},
      {isa::OpId::TLOG, viaFloat([](float x) { return std::log(x); })},
      {isa::OpId::TSQRT,
       viaFloat([](float x) { return static_cast<float>(std::sqrt(static_cast<double>(x))); })},
      {isa::OpId::TRSQRT, viaFloat([](float x) {
         return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
       })},
      {isa::OpId::TRECIP, viaFloat([](float x) { return 1.0f / x; })}};
  size_t checked = 0;
  for (const auto& [op, def] : ops)
    for (int form = 0; form < 4; ++form) {
      const uint32_t vc = form == 2 ? 203 : 256;
      TileCase c(op, {DType::F16, DType::F16}, 256, 256, 256, vc);
      if (form == 1) c.inst.src0 = 0; // in place
      for (uint32_t i = 0; i < 65536; ++i) {
        c.set<uint16_t>(0, i, static_cast<uint16_t>(~i));
        c.set<uint16_t>(c.inst.src0, i, static_cast<uint16_t>(i * 40503u));
      }
      const std::vector<uint8_t> got =
          c.runAt(form == 3 ? SimdLevel::Portable : cpu::simdSupported());
      const auto* d = reinterpret_cast<const uint16_t*>(got.data() + c.inst.tiles[0].offset);
      int shown = 0;
      for (uint32_t i = 0; i < 65536 && shown < 5; ++i) {
        const auto x = static_cast<uint16_t>(i * 40503u);
        const bool valid = i % 256 < vc;
        const uint16_t want = valid ? def(x) : static_cast<uint16_t>(~i);
        checked += valid;
        if (d[i] != want) {
          ADD_FAILURE() << c.inst.name << " form " << form << " f16 0x" << std::hex << x << ": 0x"
                        << d[i] << ", want 0x" << want << std::dec;
          ++shown;
        }
      }
    }
  EXPECT_EQ(checked, size_t{5} * (65536 * 3 + 256 * 203));
}

TEST(RuntimeFastPaths, RowAndColumnReductionsKeepTheirOrder) {
  // Row reductions fold each row from column 0 up, column reductions each column from row 0
  // down (docs/runtime.md); the kernels group rows or columns (eight rows transposed into
  // lanes, blocks of columns down the rows), which must not change any result. The expected
  // values are the sequential folds written here, on values whose sums depend on the order
  // (magnitudes from 2^-20 to 2^40, both signs) with infinities and NaNs sprinkled in, over
  // shapes with every kind of tail, on the portable tier and the best one, f32 and f16.
  std::mt19937 rng(21);
  auto value = [&] {
    const uint32_t k = rng() % 64;
    if (k == 0) return std::numeric_limits<float>::infinity() * (rng() % 2 ? 1.0f : -1.0f);
    if (k == 1) return std::numeric_limits<float>::quiet_NaN();
    const float m = 1.0f + static_cast<float>(rng() % 1024) / 1024.0f;
    return (rng() % 2 ? m : -m) * std::ldexp(1.0f, static_cast<int>(rng() % 61) - 20);
  };
  auto fold = [](isa::OpId op, float acc, float x) {
    switch (op) {
    case isa::OpId::TROWSUM:
    case isa::OpId::TCOLSUM:
      return acc + x;
    case isa::OpId::TROWPROD:
    case isa::OpId::TCOLPROD:
      return acc * x;
    case isa::OpId::TROWMAX:
    case isa::OpId::TCOLMAX:
      return acc < x ? x : acc;
    default:
      return x < acc ? x : acc;
    }
  };
  const isa::OpId ops[] = {isa::OpId::TROWSUM,  isa::OpId::TROWMAX, isa::OpId::TROWMIN,
                           isa::OpId::TROWPROD, isa::OpId::TCOLSUM, isa::OpId::TCOLMAX,
                           isa::OpId::TCOLMIN,  isa::OpId::TCOLPROD};
  const std::pair<uint32_t, uint32_t> shapes[] = {{128, 256}, {37, 203}, {16, 1}, {1, 9},
                                                  {25, 71},   {8, 8},    {17, 64}};
  size_t results = 0;
  for (DType dt : {DType::F32, DType::F16})
    for (isa::OpId op : ops)
      for (auto [vr, vc] : shapes)
        for (SimdLevel level : {SimdLevel::Portable, cpu::simdSupported()}) {
          const bool row = op == isa::OpId::TROWSUM || op == isa::OpId::TROWMAX ||
                           op == isa::OpId::TROWMIN || op == isa::OpId::TROWPROD;
          TileCase c(op, {dt, dt}, 128, 256, vr, vc);
          std::vector<float> a(size_t{128} * 256); // the source as the kernel reads it
          for (size_t i = 0; i < a.size(); ++i) {
            const float v = value();
            if (dt == DType::F32) {
              c.set<float>(1, i, a[i] = v);
            } else {
              const uint16_t h = cpu::f2h(v);
              c.set<uint16_t>(1, i, h);
              a[i] = cpu::h2f(h);
            }
          }
          const std::vector<uint8_t> got = c.runAt(level);
          const uint32_t outs = row ? vr : vc;
          for (uint32_t o = 0; o < outs; ++o) {
            float want = row ? a[size_t{o} * 256] : a[o];
            for (uint32_t k = 1; k < (row ? vc : vr); ++k)
              want = fold(op, want, row ? a[size_t{o} * 256 + k] : a[size_t{k} * 256 + o]);
            const size_t at = row ? size_t{o} * 256 : o;
            float g;
            if (dt == DType::F32) {
              std::memcpy(&g, got.data() + c.inst.tiles[0].offset + at * 4, 4);
            } else {
              uint16_t h;
              std::memcpy(&h, got.data() + c.inst.tiles[0].offset + at * 2, 2);
              g = cpu::h2f(h);
              want = cpu::h2f(cpu::f2h(want));
            }
            ++results;
            // Two NaN operands may give either one (the unpinned case in docs/runtime.md).
            if (std::isnan(want) && std::isnan(g)) continue;
            ASSERT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(want))
                << c.inst.name << " " << isa::spelling(dt) << " " << vr << "x" << vc << " tier "
                << int(level) << " output " << o << ": " << g << " vs " << want;
          }
        }
  std::cout << "[ note     ] " << results << " reduction results checked\n";
}

TEST(RuntimeFastPaths, RowAndColumnExpandOpsMatchPortable) {
  // TROWEXPAND{ADD,SUB,MUL,DIV,MAX,MIN} and the TCOLEXPAND forms on f32, f16 and bf16: each fast
  // tier against the portable kernel, whole tiles and valid regions with short tails, in place
  // (dst = src0), src1 of another row length; random bit patterns with one in eight a special
  // value (so NaNs, infinities, zeros of both signs and subnormals meet every op).
  std::mt19937 rng(33);
  const isa::OpId ops[] = {
      isa::OpId::TROWEXPANDADD, isa::OpId::TROWEXPANDSUB, isa::OpId::TROWEXPANDMUL,
      isa::OpId::TROWEXPANDDIV, isa::OpId::TROWEXPANDMAX, isa::OpId::TROWEXPANDMIN,
      isa::OpId::TCOLEXPANDADD, isa::OpId::TCOLEXPANDSUB, isa::OpId::TCOLEXPANDMUL,
      isa::OpId::TCOLEXPANDDIV, isa::OpId::TCOLEXPANDMAX, isa::OpId::TCOLEXPANDMIN};
  size_t elements = 0;
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (isa::OpId op : ops)
      for (int form = 0; form < 3; ++form) {
        const bool row = std::string(isa::info(op).mnemonic).rfind("trow", 0) == 0;
        const uint32_t vr = form == 1 ? 13 : 16, vc = form == 1 ? 45 : 64;
        TileCase c(
            op, {dt, dt, dt}, 16, 64, vr, vc,
            {{16, 64},
             {16, 64},
             row ? std::pair<uint32_t, uint32_t>{16, 8} : std::pair<uint32_t, uint32_t>{2, 64}});
        if (form == 2) c.inst.src0 = 0; // in place
        const std::vector<uint16_t> sp = specials16(dt == DType::F32 ? DType::BF16 : dt);
        for (int tile = 0; tile < 3; ++tile) {
          const size_t n = size_t{c.inst.tiles[static_cast<size_t>(tile)].rows} *
                           c.inst.tiles[static_cast<size_t>(tile)].cols;
          for (size_t i = 0; i < n; ++i) {
            const bool special = rng() % 8 == 0;
            if (dt == DType::F32)
              c.set<uint32_t>(tile, i,
                              special ? uint32_t{sp[rng() % sp.size()]} << 16
                                      : static_cast<uint32_t>(rng()));
            else
              c.set<uint16_t>(tile, i,
                              special ? sp[rng() % sp.size()] : static_cast<uint16_t>(rng()));
          }
        }
        elements += size_t{vr} * vc;
        // Both operands NaN: either one, quieted (see
        // F16AndBf16ElementwiseMatchPortableOnAllPatterns).
        expectSameAsPortable(
            c, std::string(isa::spelling(dt)) + " " + c.inst.name + " form " + std::to_string(form),
            {}, [&](size_t, uint64_t got, uint64_t want) {
              auto isNan = [&](uint64_t x) {
                return dt == DType::F32   ? (x & 0x7fffffffu) > 0x7f800000u
                       : dt == DType::F16 ? (x & 0x7fff) > 0x7c00
                                          : (x & 0x7fff) > 0x7f80;
              };
              return isNan(got) && isNan(want);
            });
      }
  EXPECT_EQ(elements, size_t{3} * 12 * (16 * 64 * 2 + 13 * 45));
}

TEST(RuntimeFastPaths, ValidRegionsRowsAndInPlace) {
  // Valid regions narrower than the tiles (row by row, tails shorter than a vector), sources
  // with a different row length, and the destination being a source: elements outside the
  // valid region keep their bytes and everything matches the portable kernels.
  std::mt19937 rng(3);
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (isa::OpId op : {isa::OpId::TADD, isa::OpId::TMAX, isa::OpId::TMULS}) {
      const bool scalar = op == isa::OpId::TMULS;
      std::vector<DType> types = scalar ? std::vector{dt, dt} : std::vector{dt, dt, dt};
      for (auto [vr, vc] : {std::pair<uint32_t, uint32_t>{7, 37}, {16, 40}, {3, 5}, {16, 33}}) {
        std::vector<std::pair<uint32_t, uint32_t>> shapes(types.size(), {16, 40});
        shapes.back() = {16, 48}; // the last source is wider
        TileCase c(op, types, 16, 40, vr, vc, shapes);
        for (uint8_t& b : c.buf)
          b = static_cast<uint8_t>(rng() % 61); // small finite values
        c.scalar = dt == DType::F32 ? 0x3fc00000u : dt == DType::F16 ? 0x3e00u : 0x3fc0u;
        const std::vector<uint8_t> before = c.buf;
        const std::vector<uint8_t> ref = c.runAt(SimdLevel::Portable);
        const TileOperand& d = c.inst.tiles[0];
        const size_t eb = isa::bitWidth(dt) / 8;
        for (uint32_t r = 0; r < d.rows; ++r)
          for (uint32_t j = 0; j < d.cols; ++j)
            if (r >= vr || j >= vc) {
              ASSERT_EQ(0, std::memcmp(ref.data() + (size_t{r} * d.cols + j) * eb,
                                       before.data() + (size_t{r} * d.cols + j) * eb, eb));
            }
        expectSameAsPortable(c, std::string(isa::spelling(dt)) + " " + c.inst.name + " " +
                                    std::to_string(vr) + "x" + std::to_string(vc));
        // In place: the destination is the first source.
        TileCase in = c;
        in.inst.tiles[0].offset = in.inst.tiles[1].offset;
        expectSameAsPortable(in, std::string("in place ") + isa::spelling(dt).data() + " " +
                                     c.inst.name);
      }
    }
}

TEST(RuntimeFastPaths, CvtF32ToF16MatchesPortable) {
  // Around every f16 value: the f32 itself, its neighbours, the halfway points to the next f16
  // and their neighbours (ties to even, overflow to inf at 65520, subnormals), NaNs, infinities.
  std::vector<uint32_t> xs;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t f = isa::f32Bits(static_cast<float>(isa::decodeToDouble(DType::F16, h)));
    for (int32_t delta : {-1, 0, 1, 0xfff, 0x1000, 0x1001})
      xs.push_back(f + static_cast<uint32_t>(delta));
  }
  std::mt19937 rng(11);
  while (xs.size() % 1024)
    xs.push_back(rng());
  const uint32_t rows = static_cast<uint32_t>(xs.size() / 1024);
  for (bool sat : {false, true}) {
    TileCase c(isa::OpId::TCVT, {DType::F16, DType::F32}, rows, 1024, rows, 1024);
    c.inst.datr = isa::enc::Datr{.sat = sat};
    for (size_t i = 0; i < xs.size(); ++i)
      c.set<uint32_t>(1, i, xs[i]);
    expectSameAsPortable(c, sat ? "tcvt sat" : "tcvt", [&](size_t k) {
      std::ostringstream s;
      s << std::hex << "f32 0x" << xs[k];
      return s.str();
    });
    // Row by row with a tail: 5 x 1021 of the same tiles.
    c.inst.dim[0] = {0, 1021, true};
    c.inst.dim[1] = {0, 5, true};
    expectSameAsPortable(c, sat ? "tcvt sat rows" : "tcvt rows");
  }
}

TEST(RuntimeFastPaths, MatmulKeepsTheFmaOrder) {
  // C[i,j] = fma chain over k in increasing k from +0 (then + acc): checked against that
  // formula written here, at every tier, for f32 and f16 inputs, shapes with vector tails:
  // every remainder of the 6- and 8-row blocks, last panels of 1..16 and 17..31 columns.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (DType in : {DType::F32, DType::F16})
    for (auto [M, N, K] : {std::tuple<uint32_t, uint32_t, uint32_t>{37, 45, 29},
                           {64, 64, 64},
                           {1, 16, 8},
                           {23, 59, 64},
                           {7, 1, 3},
                           {62, 17, 40},
                           {5, 31, 1}})
      for (bool withAcc : {false, true}) {
        const uint32_t S = 64;
        std::vector<DType> types{DType::F32, in, in};
        if (withAcc) types.push_back(DType::F32);
        TileCase c(withAcc ? isa::OpId::TMATMUL_ACC : isa::OpId::TMATMUL, types, S, S, S, S);
        if (withAcc) c.inst.acc = 3;
        c.inst.dim[0] = {0, M, true};
        c.inst.dim[1] = {0, N, true};
        c.inst.dim[2] = {0, K, true};
        auto val = [&](int t, uint32_t r, uint32_t j) {
          const DType d = c.inst.tiles[static_cast<size_t>(t)].dtype;
          return static_cast<float>(
              isa::decodeToDouble(d, cpu::getBits(c.tile(t), isa::bitWidth(d), size_t{r} * S + j)));
        };
        for (int t = 1; t < static_cast<int>(types.size()); ++t)
          for (uint32_t k = 0; k < S * S; ++k) {
            float v = u(rng);
            if (k == 5) v = INFINITY;
            if (k == 77) v = -0.0f;
            cpu::setBits(c.tile(t), isa::bitWidth(types[static_cast<size_t>(t)]), k,
                         isa::encodeFromDouble(types[static_cast<size_t>(t)], v,
                                               isa::RoundMode::CAST_RINT, isa::SatMode::ON));
          }
        for (SimdLevel l : {SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512}) {
          const std::vector<uint8_t> out = c.runAt(l);
          for (uint32_t i = 0; i < M; ++i)
            for (uint32_t j = 0; j < N; ++j) {
              float acc = 0;
              for (uint32_t k = 0; k < K; ++k)
                acc = std::fma(val(1, i, k), val(2, k, j), acc);
              if (withAcc) acc = val(3, i, j) + acc;
              uint32_t got;
              std::memcpy(&got, out.data() + (size_t{i} * S + j) * 4, 4);
              ASSERT_EQ(got, isa::f32Bits(acc)) << "tier " << int(l) << " " << M << "x" << N << "x"
                                                << K << " at " << i << "," << j;
            }
        }
      }
}

TEST(RuntimeFastPaths, MatmulAccInPlaceAndBiasMatchPortable) {
  // The vector epilogue: the accumulator being the destination itself (read before written),
  // a bias row, both; every tier's whole buffer against the portable tier's.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (auto [M, N, K] : {std::tuple<uint32_t, uint32_t, uint32_t>{37, 45, 29}, {64, 64, 64}})
    for (int form = 0; form < 3; ++form) {
      const uint32_t S = 64;
      const isa::OpId op = form == 0   ? isa::OpId::TMATMUL_ACC
                           : form == 1 ? isa::OpId::TMATMUL_BIAS
                                       : isa::OpId::TMATMUL_ACC;
      TileCase c(op, {DType::F32, DType::F32, DType::F32, DType::F32}, S, S, S, S);
      if (form == 0) c.inst.acc = 0; // in place
      if (form == 1) c.inst.bias = 3;
      if (form == 2) c.inst.acc = 3;
      c.inst.dim[0] = {0, M, true};
      c.inst.dim[1] = {0, N, true};
      c.inst.dim[2] = {0, K, true};
      for (int t = 0; t < 4; ++t)
        for (uint32_t k = 0; k < S * S; ++k)
          c.set<float>(t, k, u(rng));
      const std::vector<uint8_t> want = c.runAt(SimdLevel::Portable);
      for (SimdLevel l : {SimdLevel::Avx2, SimdLevel::Avx512})
        EXPECT_EQ(c.runAt(l), want)
            << "tier " << int(l) << " form " << form << " " << M << "x" << N << "x" << K;
    }
}

TEST(RuntimeFastPaths, MatmulWithNanInputsGivesNans) {
  // NaN inputs take the reference kernel; the NaNs land where they must, the rest is exact.
  TileCase c(isa::OpId::TMATMUL, {DType::F32, DType::F32, DType::F32}, 16, 16, 16, 16);
  c.inst.dim[2] = {0, 16, true};
  for (uint32_t k = 0; k < 256; ++k) {
    c.set<float>(1, k, static_cast<float>(k % 7) - 3);
    c.set<float>(2, k, static_cast<float>(k % 5) - 2);
  }
  c.set<float>(1, 3 * 16 + 4, NAN); // A[3,4]: row 3 of C is NaN
  for (SimdLevel l : {SimdLevel::Portable, SimdLevel::Avx2}) {
    const std::vector<uint8_t> out = c.runAt(l);
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 16; ++j) {
        float got;
        std::memcpy(&got, out.data() + (size_t{i} * 16 + j) * 4, 4);
        EXPECT_EQ(std::isnan(got), i == 3) << i << "," << j;
      }
  }
}
