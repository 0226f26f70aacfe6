// Memory planner tests: the PTOAS planning cases (exact capacity, hole fitting, nested loops,
// loop-carried values, scf.if joins, aliases, scratch vs destination) and random programs
// checked by an independent liveness oracle and the plan checker.
#include "link/Planner.h"
#include "link/Events.h"

#include <gtest/gtest.h>

#include <random>

using namespace pto;
using namespace pto::link;

namespace {

/// Builds a FunctionCfg by hand: blocks fall through unless given explicit successors.
struct Prog {
  FunctionCfg cfg;
  std::vector<bool> explicitSucc;
  uint32_t op(std::vector<TileUse> uses) {
    Block b;
    b.kind = BlockKind::Tile;
    b.offset = cfg.blocks.size() * 16;
    b.end = b.offset + 16;
    b.firstUse = static_cast<uint32_t>(cfg.uses.size());
    b.numUses = static_cast<uint32_t>(uses.size());
    cfg.uses.insert(cfg.uses.end(), uses.begin(), uses.end());
    cfg.blocks.push_back(b);
    explicitSucc.push_back(false);
    return static_cast<uint32_t>(cfg.blocks.size() - 1);
  }
  uint32_t def(uint32_t t) { return op({{t, false, true, false}}); }
  uint32_t use(uint32_t t) { return op({{t, true, false, false}}); }
  uint32_t upd(uint32_t dst, uint32_t src) {
    return op({{dst, true, true, false}, {src, true, false, false}});
  }
  uint32_t scalar() { return op({}); }
  void edges(uint32_t b, int32_t s0, int32_t s1 = -1) {
    cfg.blocks[b].succ[0] = s0;
    cfg.blocks[b].succ[1] = s1;
    explicitSucc[b] = true;
  }
  /// Loop header `h` (exit when done -> `exit`), latch `l` back to `h`.
  void loop(uint32_t h, uint32_t l) {
    edges(h, static_cast<int32_t>(h + 1), static_cast<int32_t>(l + 1));
    edges(l, static_cast<int32_t>(h));
  }
  FunctionCfg& done() {
    for (uint32_t i = 0; i < cfg.blocks.size(); ++i) {
      cfg.blocks[i].kind = cfg.blocks[i].numUses ? BlockKind::Tile : BlockKind::Scalar;
      if (!explicitSucc[i])
        cfg.blocks[i].succ[0] = i + 1 < cfg.blocks.size() ? static_cast<int32_t>(i + 1) : -1;
    }
    cfg.computePreds();
    return cfg;
  }
};

std::vector<PlanTile> vecTiles(size_t n, uint64_t bytes) {
  std::vector<PlanTile> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = {"t" + std::to_string(i), isa::Loc::Vec, bytes, -1, -1, 0};
  return t;
}

constexpr isa::Arch A3 = isa::Arch::A2A3;

} // namespace

TEST(Planner, ReuseSequential) {
  Prog p;
  p.def(0), p.use(0), p.def(1), p.use(1);
  auto tiles = vecTiles(2, 8192);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[0], r.offset[1]);
  EXPECT_EQ(r.used[0], 8192u);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, NoReuseWhenOverlapping) {
  Prog p;
  p.def(0), p.def(1), p.upd(0, 1), p.use(0);
  auto tiles = vecTiles(2, 8192);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.offset[0], r.offset[1]);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, PeakExactCapacity) {
  // PTOAS plan_memory_peak_exact_capacity: 24 x 8 KiB live together fill 192 KiB exactly.
  for (size_t n : {24u, 25u}) {
    Prog p;
    for (uint32_t i = 0; i < n; ++i)
      p.def(i);
    for (uint32_t i = 1; i < n; ++i)
      p.upd(0, i);
    p.use(0);
    auto tiles = vecTiles(n, 8192);
    PlanResult r = plan(p.done(), tiles, A3);
    if (n == 24) {
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r.used[0], 196608u);
      EXPECT_EQ(*std::max_element(r.offset.begin(), r.offset.end()), 188416);
      EXPECT_FALSE(checkPlan(tiles, r, A3));
    } else {
      ASSERT_EQ(r.errors.size(), 1u);
      EXPECT_EQ(r.errors[0].kind, PlanError::Kind::Overflow);
      EXPECT_EQ(r.errors[0].needed, 204800u);
      EXPECT_EQ(r.errors[0].available, 196608u);
      EXPECT_EQ(r.errors[0].peak.size(), 25u);
      EXPECT_NE(
          r.errors[0].message.find("buffer vec overflows: needs 204800 bytes, 196608 available"),
          std::string::npos);
    }
  }
}

TEST(Planner, HoleFitAndBestFit) {
  // t0 16K, t1 8K, t2 8K, t3 8K live; t0 and t2 die, leaving a 16K and an 8K hole; an 8K tile
  // goes into the 8K hole (best fit), a 16K one into the 16K hole, nothing grows.
  Prog p;
  p.def(0), p.def(1), p.def(2), p.def(3);
  p.use(0), p.use(2);
  p.def(4), p.def(5);
  p.upd(1, 3), p.upd(1, 4), p.upd(1, 5), p.use(1);
  std::vector<PlanTile> tiles = vecTiles(6, 8192);
  tiles[0].bytes = tiles[5].bytes = 16384;
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[4], r.offset[2]);
  EXPECT_EQ(r.offset[5], r.offset[0]);
  EXPECT_EQ(r.used[0], 16384u + 3 * 8192u);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, LoopCarriedValueLivesAcrossTheBackEdge) {
  // acc = 0; for { t = load; acc += t }; store acc.  `u` is local to the iteration and defined
  // after acc's last use in the body: it must still not share with acc (live around the loop).
  Prog p;
  p.def(0);                // 0: acc
  uint32_t h = p.scalar(); // 1: header
  p.def(1);                // 2: t
  p.upd(0, 1);             // 3: acc += t
  p.def(2);                // 4: u
  uint32_t l = p.use(2);   // 5: latch uses u
  p.use(0);                // 6: after the loop
  p.loop(h, l);
  auto tiles = vecTiles(3, 4096);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.offset[0], r.offset[2]);
  EXPECT_NE(r.offset[0], r.offset[1]);
  EXPECT_EQ(r.offset[1], r.offset[2]); // t and u never live together: they share
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, NestedLoops) {
  // x before the loops, read in the inner body; z local to the outer body after the inner
  // loop: x is live across the outer back edge, so z cannot take its bytes; y after the loops
  // can.
  Prog p;
  p.def(0);                 // 0: x
  uint32_t ho = p.scalar(); // 1: outer header
  uint32_t hi = p.scalar(); // 2: inner header
  uint32_t li = p.use(0);   // 3: inner body/latch reads x
  p.def(2);                 // 4: z
  uint32_t lo = p.use(2);   // 5: outer latch
  p.def(1);                 // 6: y
  p.use(1);                 // 7
  p.loop(hi, li);
  p.loop(ho, lo);
  auto tiles = vecTiles(3, 4096);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.offset[0], r.offset[2]);
  EXPECT_EQ(r.offset[0], r.offset[1]);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, IfJoinKeepsBothPathsLive) {
  // a defined before an if, read only in the else branch; b defined in the then branch and read
  // after the join: a is live through the then branch too.
  Prog p;
  p.def(0);                // 0: a
  uint32_t c = p.scalar(); // 1: if (cond) -> then at 2, else at 4
  p.def(1);                // 2: then: b
  uint32_t j = p.scalar(); // 3: jump to join (5)
  p.use(0);                // 4: else: read a
  p.use(1);                // 5: join: read b
  p.edges(c, 2, 4);
  p.edges(j, 5);
  auto tiles = vecTiles(2, 4096);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.offset[0], r.offset[1]);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, ViewsExtendTheirRootsLifetime) {
  // v is a subset of a at +1024; a's last direct use is early but v is used later.
  Prog p;
  p.def(0), p.use(0);
  p.def(2);
  p.op({{1, false, true, false}}); // write through the view
  p.upd(2, 1);
  p.use(2);
  std::vector<PlanTile> tiles = vecTiles(3, 4096);
  tiles[1] = {"v", isa::Loc::Vec, 1024, -1, 0, 1024};
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[1], r.offset[0] + 1024);
  EXPECT_NE(r.offset[0], r.offset[2]);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, ScratchNeverSharesWithDestination) {
  Prog p;
  p.def(1);
  p.op({{0, false, true, false}, {1, true, false, false}, {2, false, true, true}}); // dst, src, tmp
  p.use(0);
  auto tiles = vecTiles(3, 4096);
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.offset[0], r.offset[2]);
  EXPECT_NE(r.offset[1], r.offset[2]);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
}

TEST(Planner, ManualPlacementsAreKeptAndAvoided) {
  Prog p;
  p.def(0), p.def(1), p.upd(0, 1), p.use(0);
  auto tiles = vecTiles(2, 4096);
  tiles[0].manual = 0;
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[0], 0);
  EXPECT_EQ(r.offset[1], 4096);
  EXPECT_FALSE(checkPlan(tiles, r, A3));
  tiles[0].manual = 100; // misaligned
  r = plan(p.done(), tiles, A3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].kind, PlanError::Kind::Misaligned);
  tiles[0].manual = 196608 - 2048; // out of bounds
  r = plan(p.done(), tiles, A3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].kind, PlanError::Kind::OutOfBounds);
  tiles[0].manual = 0;
  tiles[1].manual = 2048; // overlapping while both live: views of the same bytes
  r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[1], 2048);
  // Block 1 writes t1 over the second half of t0, whose value (block 0) block 2 reads; block 2
  // writes t0 after reading t1, which nothing reads again: one clobber.
  ASSERT_EQ(r.clobbers.size(), 1u);
  EXPECT_EQ(r.clobbers[0].writer, 1u);
  EXPECT_EQ(r.clobbers[0].victim, 0u);
  EXPECT_EQ(r.clobbers[0].writeBlock, 1u);
  EXPECT_EQ(r.clobbers[0].readBlock, 2u);
}

TEST(Planner, ManualViewsOfTheSameBytesInPlace) {
  // t0 loaded, t1 = f(t0) written over it (both at 0, the op reads before it writes), t1 stored;
  // then t2 (at 0 too) re-reads the bytes as another shape: no clobber. Reading t0 after t1's
  // write is one.
  Prog p;
  p.def(0);
  p.op({{1, false, true, false}, {0, true, false, false}});
  p.use(1);
  p.use(2);
  auto tiles = vecTiles(3, 1024);
  for (auto& t : tiles)
    t.manual = 0;
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.clobbers.empty());
  Prog q;
  q.def(0);
  q.op({{1, false, true, false}, {0, true, false, false}});
  q.use(0);
  r = plan(q.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.clobbers.size(), 1u);
  EXPECT_EQ(r.clobbers[0].writer, 1u);
  EXPECT_EQ(r.clobbers[0].writeBlock, 1u);
  EXPECT_EQ(r.clobbers[0].readBlock, 2u);
}

TEST(Planner, BuffersAreSeparateWithTheirOwnAlignment) {
  Prog p;
  p.def(0), p.def(1), p.upd(0, 1), p.use(0);
  std::vector<PlanTile> tiles = {{"l", isa::Loc::Left, 100, -1, -1, 0},
                                 {"r", isa::Loc::Left, 100, -1, -1, 0}};
  PlanResult r = plan(p.done(), tiles, A3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset[1] % 512, 0);
  EXPECT_NE(r.offset[0], r.offset[1]);
  EXPECT_EQ(r.used[0], 0u);
}

// ---------------------------------------------------------------- random programs
namespace {

/// Structured random program: sequences, loops (with loop-carried updates) and if/else.
void genRegion(Prog& p, std::mt19937& rng, uint32_t numTiles, int depth, int& budget) {
  std::uniform_int_distribution<uint32_t> tile(0, numTiles - 1);
  while (budget > 0 && rng() % 8 != 0) {
    --budget;
    unsigned k = rng() % 10;
    if (k < 5 || depth > 3) {
      uint32_t d = tile(rng), s = tile(rng);
      switch (rng() % 4) {
      case 0:
        p.def(d);
        break;
      case 1:
        p.use(s);
        break;
      case 2:
        p.upd(d, s);
        break;
      default:
        p.op({{d, false, true, false}, {s, true, false, false}, {tile(rng), false, true, true}});
        break;
      }
    } else if (k < 8) {
      uint32_t h = p.scalar();
      genRegion(p, rng, numTiles, depth + 1, budget);
      uint32_t l = p.scalar();
      p.loop(h, l);
    } else {
      uint32_t c = p.scalar();
      genRegion(p, rng, numTiles, depth + 1, budget);
      uint32_t j = p.scalar();
      uint32_t elseStart = static_cast<uint32_t>(p.cfg.blocks.size());
      genRegion(p, rng, numTiles, depth + 1, budget);
      uint32_t join = p.scalar();
      p.edges(c, static_cast<int32_t>(c + 1), static_cast<int32_t>(elseStart));
      p.edges(j, static_cast<int32_t>(join));
    }
  }
}

/// Textbook iterative liveness (bit vectors), per block: live-in and live-out.
std::vector<std::vector<bool>> oracleLive(const FunctionCfg& cfg, std::span<const PlanTile> tiles) {
  size_t n = tiles.size(), nb = cfg.blocks.size();
  std::vector<uint32_t> root(n);
  for (uint32_t i = 0; i < n; ++i)
    root[i] = tiles[i].aliasOf >= 0 ? root[static_cast<size_t>(tiles[i].aliasOf)] : i;
  std::vector<std::vector<bool>> gen(nb, std::vector<bool>(n)), kill(nb, std::vector<bool>(n)),
      in(nb, std::vector<bool>(n)), out(nb, std::vector<bool>(n));
  for (size_t b = 0; b < nb; ++b)
    for (const TileUse& u : cfg.usesOf(cfg.blocks[b])) {
      uint32_t r = root[u.tile];
      if (u.read || (u.write && r != u.tile)) gen[b][r] = true;
    }
  for (size_t b = 0; b < nb; ++b)
    for (const TileUse& u : cfg.usesOf(cfg.blocks[b]))
      if (u.write && root[u.tile] == u.tile && !gen[b][u.tile]) kill[b][u.tile] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = nb; b-- > 0;) {
      std::vector<bool> o(n);
      for (int32_t s : cfg.blocks[b].succ)
        if (s >= 0)
          for (size_t v = 0; v < n; ++v)
            o[v] = o[v] || in[static_cast<size_t>(s)][v];
      std::vector<bool> i(n);
      for (size_t v = 0; v < n; ++v)
        i[v] = gen[b][v] || (o[v] && !kill[b][v]);
      if (o != out[b] || i != in[b]) changed = true, out[b] = o, in[b] = i;
    }
  }
  std::vector<std::vector<bool>> any(nb, std::vector<bool>(n));
  for (size_t b = 0; b < nb; ++b)
    for (size_t v = 0; v < n; ++v)
      any[b][v] = in[b][v] || out[b][v];
  return any;
}

} // namespace

TEST(Planner, RandomProgramsAreSound) {
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Prog p;
    uint32_t numTiles = 4 + rng() % 40;
    int budget = 20 + static_cast<int>(rng() % 200);
    p.scalar();
    genRegion(p, rng, numTiles, 0, budget);
    p.scalar();
    std::vector<PlanTile> tiles;
    for (uint32_t i = 0; i < numTiles; ++i) {
      PlanTile t{"t" + std::to_string(i),
                 rng() % 5 ? isa::Loc::Vec : isa::Loc::Mat,
                 32u * (1 + rng() % 256),
                 -1,
                 -1,
                 0};
      if (i > 0 && rng() % 6 == 0) { // a view of an earlier tile
        uint32_t parent = rng() % i;
        t.loc = tiles[parent].loc;
        t.aliasOf = static_cast<int32_t>(parent);
        t.bytes = std::max<uint64_t>(32, tiles[parent].bytes / 2);
        t.aliasOffset = tiles[parent].bytes - t.bytes;
      }
      tiles.push_back(t);
    }
    FunctionCfg& cfg = p.done();
    PlanResult r = plan(cfg, tiles, A3);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.errors[0].message;
    auto bad = checkPlan(tiles, r, A3);
    ASSERT_FALSE(bad) << "seed " << seed << ": " << *bad;
    // Every block where the oracle finds a tile live lies inside the planner's live range.
    auto live = oracleLive(cfg, tiles);
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b)
      for (uint32_t v = 0; v < tiles.size(); ++v)
        if (live[b][v]) {
          ASSERT_FALSE(r.live[v].empty()) << "seed " << seed << " tile " << v;
          ASSERT_LE(r.live[v].start, b) << "seed " << seed << " tile " << v;
          ASSERT_GE(r.live[v].end, b) << "seed " << seed << " tile " << v;
        }
  }
}

// ---------------------------------------------------------------- events
TEST(Events, ColouringReusesIdsAndReportsExhaustion) {
  // Event k: set at block 2k, wait at block 2k+1 -> never pending together: all get id 0.
  Prog p;
  for (int i = 0; i < 20; ++i)
    p.scalar();
  FunctionCfg& cfg = p.done();
  std::vector<int32_t> blockEvent(cfg.blocks.size(), -1);
  std::vector<std::pair<isa::Pipe, isa::Pipe>> pipes;
  std::vector<std::string> names;
  for (uint32_t k = 0; k < 10; ++k) {
    cfg.blocks[2 * k].kind = cfg.blocks[2 * k + 1].kind = BlockKind::Control;
    cfg.blocks[2 * k].control = ExtCtl::SET_FLAG;
    cfg.blocks[2 * k + 1].control = ExtCtl::WAIT_FLAG;
    for (uint32_t b : {2 * k, 2 * k + 1})
      cfg.blocks[b].srcPipe = isa::Pipe::MTE2, cfg.blocks[b].dstPipe = isa::Pipe::MTE3;
    blockEvent[2 * k] = blockEvent[2 * k + 1] = static_cast<int32_t>(k);
    pipes.push_back({isa::Pipe::MTE2, isa::Pipe::MTE3});
    names.push_back("e" + std::to_string(k));
  }
  EventPlan ep = allocateEvents(cfg, blockEvent, pipes, names, A3);
  ASSERT_TRUE(ep.errors.empty());
  for (int32_t id : ep.id)
    EXPECT_EQ(id, 0);
  // Now nine sets first, then nine waits: 9 > 8 ids.
  Prog q;
  for (int i = 0; i < 18; ++i)
    q.scalar();
  FunctionCfg& c2 = q.done();
  std::vector<int32_t> be(18, -1);
  for (uint32_t k = 0; k < 9; ++k) {
    c2.blocks[k].kind = c2.blocks[9 + k].kind = BlockKind::Control;
    c2.blocks[k].control = ExtCtl::SET_FLAG;
    c2.blocks[9 + k].control = ExtCtl::WAIT_FLAG;
    for (uint32_t b : {k, 9 + k})
      c2.blocks[b].srcPipe = isa::Pipe::MTE2, c2.blocks[b].dstPipe = isa::Pipe::MTE3;
    be[k] = be[9 + k] = static_cast<int32_t>(k);
  }
  pipes.resize(9);
  names.resize(9);
  ep = allocateEvents(c2, be, pipes, names, A3);
  ASSERT_EQ(ep.errors.size(), 1u);
  EXPECT_NE(ep.errors[0].message.find("event ids exhausted for PIPE_MTE2 -> PIPE_MTE3"),
            std::string::npos);
  for (uint32_t k = 0; k < 8; ++k)
    EXPECT_EQ(ep.id[k], static_cast<int32_t>(k));
  EXPECT_EQ(usableEventIds(A3, isa::Pipe::MTE2, isa::Pipe::V), 7u);
  EXPECT_EQ(usableEventIds(A3, isa::Pipe::MTE2, isa::Pipe::MTE3), 8u);
}
