// Automatic multi-buffering (docs/sync.md section 5a): the choice of N from the bytes per pipe,
// the planner keeping a rotation group on distinct bytes, which loops and tiles qualify, and the
// unrolled loop linked and checked (no race left, the same link without it).
#include "link/MultiBuffer.h"
#include "link/Cfg.h"
#include "link/Linker.h"
#include "link/Planner.h"

#include "obj/Image.h"
#include "runtime/Runtime.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>

using namespace pto;
using namespace pto::link;

namespace {

TEST(MultiBuffer, CopiesFollowTheBusiestPipe) {
  using P = isa::Pipe;
  // Load 2 x 4 KiB, compute 2 x 4 KiB, store 4 KiB: 20 / 8 rounded up = 3 stages.
  EXPECT_EQ(copiesForWork({{P::MTE2, 8192}, {P::V, 8192}, {P::MTE3, 4096}}), 3u);
  // Two equal stages: double buffering.
  EXPECT_EQ(copiesForWork({{P::MTE2, 1000}, {P::V, 1000}}), 2u);
  // Six equal stages: at most 4 copies.
  EXPECT_EQ(
      copiesForWork({{P::MTE2, 1}, {P::V, 1}, {P::MTE3, 1}, {P::M, 1}, {P::MTE1, 1}, {P::FIX, 1}}),
      4u);
  // One pipe with 80% of the work or more, or a single pipe: none.
  EXPECT_EQ(copiesForWork({{P::MTE2, 200}, {P::V, 800}}), 1u);
  EXPECT_EQ(copiesForWork({{P::V, 4096}}), 1u);
  EXPECT_EQ(copiesForWork({}), 1u);
  // Just under 80%: two copies.
  EXPECT_EQ(copiesForWork({{P::MTE2, 201}, {P::V, 799}}), 2u);
}

/// Blocks 0..3: def t0, use t0, def t1, use t1 (straight line).
FunctionCfg twoSequentialTiles() {
  FunctionCfg cfg;
  const std::vector<std::pair<uint32_t, bool>> ops = {{0, true}, {0, false}, {1, true}, {1, false}};
  for (const auto& [tile, write] : ops) {
    Block b;
    b.kind = BlockKind::Tile;
    b.offset = cfg.blocks.size() * 16;
    b.end = b.offset + 16;
    b.firstUse = static_cast<uint32_t>(cfg.uses.size());
    b.numUses = 1;
    cfg.uses.push_back({tile, !write, write, false});
    cfg.blocks.push_back(b);
  }
  for (uint32_t i = 0; i < cfg.blocks.size(); ++i)
    cfg.blocks[i].succ[0] = i + 1 < cfg.blocks.size() ? static_cast<int32_t>(i + 1) : -1;
  cfg.computePreds();
  return cfg;
}

TEST(MultiBuffer, PlannerKeepsARotationGroupApart) {
  const FunctionCfg cfg = twoSequentialTiles();
  std::vector<PlanTile> tiles(2);
  for (size_t i = 0; i < 2; ++i) {
    tiles[i].name = "t" + std::to_string(i);
    tiles[i].bytes = 4096;
  }
  // Without a group the second tile takes the bytes the first one left (hole reuse).
  PlanResult apart = plan(cfg, tiles, isa::Arch::A2A3);
  ASSERT_TRUE(apart.ok());
  EXPECT_EQ(apart.offset[0], apart.offset[1]);
  // In one group both live over the hull of their ranges: distinct bytes.
  tiles[0].group = tiles[1].group = 0;
  PlanResult grouped = plan(cfg, tiles, isa::Arch::A2A3);
  ASSERT_TRUE(grouped.ok());
  EXPECT_NE(grouped.offset[0], grouped.offset[1]);
  EXPECT_EQ(grouped.live[0].start, 0u);
  EXPECT_EQ(grouped.live[0].end, 3u);
  EXPECT_EQ(grouped.live[1].start, 0u);
  EXPECT_FALSE(checkPlan(tiles, grouped, isa::Arch::A2A3).has_value());
}

const char* kRows = R"(
kernel @rows(%x: !pto.tensor_view<7x64xf32>, %z: !pto.tensor_view<7x64xf32>,
             %y: !pto.tensor_view<7x64xf32>) {
  tile %a, %b, %c, %k : !pto.tile<f32, 1, 64>
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = arith.constant 7 : index
  tload %k, %z[%zero, 0]
  scf.for %r = %zero to %n step %one {
    tload %a, %x[%r, 0]
    tadd %b, %a, %k
    tmul %c, %b, %a
    tstore %y[%r, 0], %c
  }
}
)";

TEST(MultiBuffer, RotatesTheTilesWrittenAfreshInEachIteration) {
  const obj::ObjectFile ob = test::assembleText(kRows, isa::Arch::A2A3);
  auto built = buildCfg(ob, 0);
  ASSERT_TRUE(std::holds_alternative<FunctionCfg>(built));
  const FunctionCfg& cfg = std::get<FunctionCfg>(built);
  FunctionMultiBuffer fm = planMultiBuffer(ob, 0, cfg, isa::Arch::A2A3);
  ASSERT_EQ(fm.loops.size(), 1u);
  const RotatedLoop& l = fm.loops[0];
  // %k is loaded before the loop and only read in it: it stays. 256 B through MTE2, 512 B
  // through V, 256 B through MTE3: 4 / 2 = 2 copies.
  const auto& tiles = ob.functions[0].tiles;
  std::vector<std::string> names;
  for (uint32_t t : l.tiles)
    names.push_back(tiles[t].name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(l.copies, 2u);
  ASSERT_EQ(fm.insertions.size(), 1u);
  const uint64_t loopBytes = cfg.blocks[l.latch].end - cfg.blocks[l.header].offset;
  EXPECT_EQ(fm.insertions[0].bytes.size(), loopBytes); // one copy in front of the original
  EXPECT_EQ(fm.insertions[0].offset, cfg.blocks[l.header].offset);
  ASSERT_EQ(fm.added.size(), 3u);
  EXPECT_EQ(fm.added[0].name, "a.mb0");
  ASSERT_EQ(fm.groups.size(), tiles.size() + 3);
  for (uint32_t t : l.tiles)
    EXPECT_EQ(fm.groups[t], static_cast<int32_t>(t));
  EXPECT_EQ(fm.groups[tiles.size()], static_cast<int32_t>(l.tiles[0]));
}

// The copies of the loop carry the GM access records of its body, at their place in each copy:
// copy k of N stands for iterations N x t + k, so it starts k strides on and moves N strides an
// iteration (the pass adjusts the original body, copy N - 1, the same way after the rewrite); a
// record before the loop is not copied. After the rewrite the original body's records follow the
// copies'.
TEST(MultiBuffer, CopiesCarryTheBodysGmAccesses) {
  obj::ObjectFile ob = test::assembleText(kRows, isa::Arch::A2A3);
  auto built = buildCfg(ob, 0);
  ASSERT_TRUE(std::holds_alternative<FunctionCfg>(built));
  const FunctionCfg& cfg = std::get<FunctionCfg>(built);
  ob.gmAccesses.clear();
  for (const Block& b : cfg.blocks)
    if (b.op == isa::OpId::TLOAD || b.op == isa::OpId::TSTORE) {
      obj::GmAccess g;
      g.textOffset = b.offset;
      g.param = b.op == isa::OpId::TSTORE ? 2 : ob.gmAccesses.empty() ? 1 : 0;
      g.write = b.op == isa::OpId::TSTORE;
      g.known = true;
      g.bytes = 256;
      g.offset = static_cast<int64_t>(ob.gmAccesses.size()) * 4;
      g.symbol = 0xabc;
      g.loop = ob.gmAccesses.empty() ? 0 : 1;
      g.stride = ob.gmAccesses.empty() ? 0 : 256;
      ob.gmAccesses.push_back(g);
    }
  ASSERT_EQ(ob.gmAccesses.size(), 3u); // %k before the loop, %x and %y in it
  FunctionMultiBuffer fm = planMultiBuffer(ob, 0, cfg, isa::Arch::A2A3);
  ASSERT_EQ(fm.loops.size(), 1u);
  ASSERT_EQ(fm.loops[0].copies, 2u);
  ASSERT_EQ(fm.insertions.size(), 1u);
  const Insertion& ins = fm.insertions[0];
  const uint64_t head = ins.offset;
  ASSERT_EQ(ins.gmAccesses.size(), 2u); // one copy of the body's two records
  for (size_t k = 0; k < 2; ++k) {
    // Copy 0 of 2 stands for the even iterations: from the same offset, 2 strides a step.
    obj::GmAccess want = ob.gmAccesses[k + 1];
    want.textOffset -= head;
    want.stride *= 2;
    EXPECT_EQ(ins.gmAccesses[k], want) << "record " << k;
  }
  auto r = insertWords(ob, fm.insertions);
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  const obj::ObjectFile& n = std::get<obj::ObjectFile>(r);
  const uint64_t len = ins.bytes.size();
  ASSERT_EQ(n.gmAccesses.size(), 5u);
  EXPECT_EQ(n.gmAccesses[0], ob.gmAccesses[0]);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(n.gmAccesses[1 + k].textOffset, ob.gmAccesses[1 + k].textOffset) << k; // the copy
    EXPECT_EQ(n.gmAccesses[3 + k].textOffset, ob.gmAccesses[1 + k].textOffset + len) << k;
    EXPECT_EQ(n.gmAccesses[3 + k].stride, 256);
  }
}

TEST(MultiBuffer, TheUnrolledLoopLinksWithoutARaceAndNamesEveryCopy) {
  const obj::ObjectFile ob = test::assembleText(kRows, isa::Arch::A2A3);
  LinkOptions on, off;
  off.multiBuffer = false;
  LinkResult with = link::link({{"k.o", ob}}, on);
  LinkResult without = link::link({{"k.o", ob}}, off);
  ASSERT_TRUE(with.ok());
  ASSERT_TRUE(without.ok());
  ASSERT_EQ(with.multiBufferLog.size(), 1u);
  EXPECT_NE(with.multiBufferLog[0].find("2 copies of %a %b %c"), std::string::npos);
  EXPECT_TRUE(without.multiBufferLog.empty());
  // One copy more of the loop's words, and three descriptors more.
  EXPECT_GT(with.image->text.size(), without.image->text.size());
  EXPECT_EQ(with.image->functions[0].tiles.size(), without.image->functions[0].tiles.size() + 3);
  // Checked mode links the same object without touching it (and finds its races).
  LinkOptions checked;
  checked.sync = SyncMode::Check;
  EXPECT_TRUE(link::link({{"k.o", ob}}, checked).multiBufferLog.empty());
}

/// A random load-compute-store loop over `rows` rows of 16 f32 (fresh tiles each iteration, so
/// every one rotates), with the values it must write computed here from the ops' definitions.
struct RandomLoop {
  std::string source;
  std::vector<float> x, z, want; // rows x 16
  uint32_t rows = 0;
};

RandomLoop randomLoop(std::mt19937& rng) {
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  RandomLoop l;
  l.rows = pick(8); // 0..7 iterations: zero, fewer than the copies, several rounds
  const uint32_t tiles = 3 + pick(4);
  std::ostringstream body;
  // Per row: the value of each tile, by element (evaluated per row below).
  struct Op {
    std::string kind;
    uint32_t dst = 0, a = 0, b = 0;
    float k = 0;
  };
  std::vector<Op> ops;
  // Two loads, then compute ops writing the other tiles from the ones written before them.
  ops.push_back({"load_x", 0});
  ops.push_back({"load_z", 1});
  for (uint32_t t = 2; t < tiles; ++t) {
    const char* kinds[] = {"tadd", "tsub", "tmul", "tadds"};
    ops.push_back({kinds[pick(4)], t, pick(t), pick(t), static_cast<float>(pick(5)) - 2.0f});
  }
  const uint32_t stored = tiles - 1;
  std::ostringstream src;
  src << "kernel @k(%x: !pto.tensor_view<8x16xf32>, %z: !pto.tensor_view<8x16xf32>, "
         "%y: !pto.tensor_view<8x16xf32>) {\n  tile ";
  for (uint32_t t = 0; t < tiles; ++t)
    src << (t ? ", " : "") << "%t" << t;
  src << " : !pto.tile<f32, 1, 16>\n  %zero = arith.constant 0 : index\n"
      << "  %one = arith.constant 1 : index\n  %n = arith.constant " << l.rows << " : index\n";
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == "tadds")
      src << "  %k" << i << " = arith.constant " << ops[i].k << " : f32\n";
  src << "  scf.for %r = %zero to %n step %one {\n";
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& o = ops[i];
    if (o.kind == "load_x" || o.kind == "load_z")
      src << "    tload %t" << o.dst << ", %" << o.kind.back() << "[%r, 0]\n";
    else if (o.kind == "tadds")
      src << "    tadds %t" << o.dst << ", %t" << o.a << ", %k" << i << "\n";
    else
      src << "    " << o.kind << " %t" << o.dst << ", %t" << o.a << ", %t" << o.b << "\n";
  }
  src << "    tstore %y[%r, 0], %t" << stored << "\n  }\n}\n";
  l.source = src.str();
  l.x.resize(128);
  l.z.resize(128);
  l.want.assign(128, 0.0f);
  for (uint32_t i = 0; i < 128; ++i) {
    l.x[i] = static_cast<float>(static_cast<int>(pick(7)) - 3);
    l.z[i] = static_cast<float>(static_cast<int>(pick(7)) - 3);
  }
  for (uint32_t r = 0; r < l.rows; ++r)
    for (uint32_t c = 0; c < 16; ++c) {
      std::vector<float> v(tiles, 0.0f);
      for (const Op& o : ops) {
        if (o.kind == "load_x")
          v[o.dst] = l.x[r * 16 + c];
        else if (o.kind == "load_z")
          v[o.dst] = l.z[r * 16 + c];
        else if (o.kind == "tadd")
          v[o.dst] = v[o.a] + v[o.b];
        else if (o.kind == "tsub")
          v[o.dst] = v[o.a] - v[o.b];
        else if (o.kind == "tmul")
          v[o.dst] = v[o.a] * v[o.b];
        else
          v[o.dst] = v[o.a] + o.k;
      }
      l.want[r * 16 + c] = v[stored];
    }
  return l;
}

/// Runs kernel @k of `img` on `backend` with x, z bound and returns y; an empty vector on error.
std::vector<float> runLoop(const obj::Image& img, const RandomLoop& l, rt::Backend backend) {
  auto bytes = obj::writeImage(img);
  if (bytes.index() != 0) return {};
  auto mod = rt::Module::load(std::get<0>(bytes), "k.img");
  if (!mod.ok()) return {};
  auto launch = mod.value().launch("k");
  if (!launch.ok()) return {};
  std::vector<rt::Tensor> t(3, rt::Tensor::zeros(isa::DType::F32, {8, 16}));
  for (int64_t i = 0; i < 128; ++i) {
    uint32_t bx, bz;
    std::memcpy(&bx, &l.x[static_cast<size_t>(i)], 4);
    std::memcpy(&bz, &l.z[static_cast<size_t>(i)], 4);
    t[0].setBits(i, bx);
    t[1].setBits(i, bz);
  }
  for (const char* name : {"x", "z", "y"})
    if (launch.value().bind(name, &t[static_cast<size_t>(name[0] == 'x'   ? 0
                                                         : name[0] == 'z' ? 1
                                                                          : 2)]))
      return {};
  rt::RunOptions opts;
  opts.backend = backend;
  if (launch.value().run(opts)) return {};
  std::vector<float> y(128);
  for (int64_t i = 0; i < 128; ++i) {
    const auto bits = static_cast<uint32_t>(t[2].bitsAt(i));
    std::memcpy(&y[static_cast<size_t>(i)], &bits, 4);
  }
  return y;
}

// 60 random load-compute-store loops of 0..7 iterations over 3..6 fresh tiles: multi-buffered
// (the link says so), they write exactly what the ops compute, evaluated here, on the cpu
// backend and on the npu model (whose own race and deadlock detection runs too).
TEST(MultiBuffer, RandomLoopsComputeWhatTheirOpsDefine) {
  std::mt19937 rng(2029);
  for (int round = 0; round < 60; ++round) {
    const RandomLoop l = randomLoop(rng);
    SCOPED_TRACE(l.source);
    const obj::ObjectFile ob = test::assembleText(l.source, isa::Arch::A2A3);
    LinkResult r = link::link({{"k.o", ob}}, LinkOptions{});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.multiBufferLog.size(), 1u);
    EXPECT_NE(r.multiBufferLog[0].find(" copies of %t0 %t1"), std::string::npos)
        << r.multiBufferLog[0];
    for (rt::Backend b : {rt::Backend::Cpu, rt::Backend::Npu}) {
      const std::vector<float> y = runLoop(*r.image, l, b);
      ASSERT_EQ(y.size(), 128u) << "the run failed";
      for (size_t i = 0; i < 128; ++i)
        ASSERT_EQ(y[i], l.want[i])
            << "element " << i << (b == rt::Backend::Npu ? " (npu)" : " (cpu)");
    }
  }
}

} // namespace
