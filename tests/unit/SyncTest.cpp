// Synchronisation tests (docs/sync.md): the pipe table refinement, inserting words into an
// object (branches, relocations and lines move with them), the race analysis, and --auto-sync
// on generated structured kernels, re-checked by the link itself.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Encoding.h"
#include "isa/Pipes.h"
#include "link/AutoSync.h"
#include "link/Cfg.h"
#include "link/Linker.h"
#include "link/Races.h"
#include "link/Rewrite.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

using namespace pto;

namespace {

/// A2A3 unless the module or `arch` says otherwise (pto-as's default).
obj::ObjectFile compile(const std::string& text, isa::Arch arch = isa::Arch::A2A3) {
  return test::assembleText(text, arch);
}

std::string diagsOf(const link::LinkResult& r) {
  std::string s;
  for (const auto& d : r.diags)
    s += std::string(link::severity(d)) + d.text + "\n";
  return s;
}

/// pto-ld with --auto-sync forced on one object.
link::LinkResult linkWithSync(const obj::ObjectFile& o) {
  link::LinkOptions opts;
  opts.sync = link::SyncMode::Insert;
  return link::link({{"k.o", o}}, opts);
}

/// A kernel in the light syntax: `body` between the tile declaration and the closing brace.
std::string kernel(const std::string& body, unsigned tiles = 4) {
  std::string s = "kernel @k(%x: !pto.tensor_view<64x64xf32>, %z: !pto.tensor_view<64x64xf32>, %f: "
                  "i1) {\n  tile ";
  for (unsigned t = 0; t < tiles; ++t)
    s += (t ? ", %t" : "%t") + std::to_string(t);
  return s + " : !pto.tile<f32, 16, 16>\n" + body + "}\n";
}

} // namespace

TEST(Pipes, RefinedByOperandLocations) {
  using isa::Loc;
  using isa::OpId;
  using isa::Pipe;
  const auto A3 = isa::Arch::A2A3, A5 = isa::Arch::A5;
  EXPECT_EQ(isa::pipeOf(OpId::TSTORE, Loc::Acc, std::nullopt, A3), Pipe::FIX);
  EXPECT_EQ(isa::pipeOf(OpId::TSTORE, Loc::Vec, std::nullopt, A3), Pipe::MTE3);
  EXPECT_EQ(isa::pipeOf(OpId::TMOV, Loc::Mat, Loc::Left, A3), Pipe::MTE1);
  EXPECT_EQ(isa::pipeOf(OpId::TMOV, Loc::Acc, Loc::Vec, A3), Pipe::FIX);
  EXPECT_EQ(isa::pipeOf(OpId::TMOV, Loc::Vec, Loc::Mat, A3), Pipe::FIX);
  EXPECT_EQ(isa::pipeOf(OpId::TMOV, Loc::Vec, Loc::Vec, A3), Pipe::V);
  EXPECT_EQ(isa::pipeOf(OpId::TINSERT, Loc::Vec, Loc::Mat, A5), Pipe::MTE3);
  EXPECT_EQ(isa::pipeOf(OpId::TSCATTER, Loc::Vec, Loc::Vec, A3), Pipe::S);
  EXPECT_EQ(isa::pipeOf(OpId::TLOAD, std::nullopt, Loc::Vec, A3), Pipe::MTE2);
  EXPECT_EQ(isa::pipeOf(OpId::TADD, Loc::Vec, Loc::Vec, A3), Pipe::V);
  EXPECT_TRUE(isa::needsIntraPipeBarrier(A3, Pipe::V));
  EXPECT_FALSE(isa::needsIntraPipeBarrier(A5, Pipe::V));
  EXPECT_FALSE(isa::needsIntraPipeBarrier(A3, Pipe::S));
}

TEST(Rewrite, OffsetMap) {
  link::OffsetMap m({{4, 8}, {4, 4}, {10, 2}});
  EXPECT_EQ(m.before(0), 0u);
  EXPECT_EQ(m.before(4), 4u);
  EXPECT_EQ(m.after(4), 16u);
  EXPECT_EQ(m.before(10), 22u);
  EXPECT_EQ(m.after(10), 24u);
  EXPECT_EQ(m.after(100), 114u);
}

// Inserting a barrier block in front of every block (for every path into it) keeps the control
// flow: the new CFG has the old blocks, each preceded by a barrier, with the same successors,
// and every relocation and line entry still names the same word.
TEST(Rewrite, InsertEverywhereKeepsControlFlow) {
  obj::ObjectFile o = compile(kernel("  scf.for %i = 0 to 64 step 16 {\n"
                                     "    tload %t0, %x[%i, 0]\n"
                                     "    scf.if %f {\n      tadd %t1, %t0, %t0\n    } else {\n"
                                     "      tsub %t1, %t0, %t0\n    }\n"
                                     "    tstore %z[%i, 0], %t1\n  }\n"));
  ASSERT_FALSE(o.functions.empty());
  auto before = link::buildCfg(o, 0);
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(before)) << std::get<std::string>(before);
  const auto& c0 = std::get<link::FunctionCfg>(before);
  std::vector<link::Insertion> ins;
  for (const link::Block& b : c0.blocks)
    ins.push_back({b.offset, true, link::barrierBlockBytes(isa::Pipe::All), {}, {}, {}});
  auto r = link::insertWords(o, ins);
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  const obj::ObjectFile& n = std::get<obj::ObjectFile>(r);
  EXPECT_EQ(n.text.size(), o.text.size() + 8 * c0.blocks.size());
  auto after = link::buildCfg(n, 0);
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(after)) << std::get<std::string>(after);
  const auto& c1 = std::get<link::FunctionCfg>(after);
  ASSERT_EQ(c1.blocks.size(), 2 * c0.blocks.size());
  for (size_t b = 0; b < c0.blocks.size(); ++b) {
    const link::Block& bar = c1.blocks[2 * b];
    const link::Block& old = c0.blocks[b];
    const link::Block& moved = c1.blocks[2 * b + 1];
    EXPECT_TRUE(link::isBarrier(bar));
    EXPECT_EQ(bar.succ[0], static_cast<int32_t>(2 * b + 1));
    EXPECT_EQ(moved.kind, old.kind);
    EXPECT_EQ(moved.transfer, old.transfer);
    for (int k = 0; k < 2; ++k) // a successor is now the barrier in front of the old target
      EXPECT_EQ(moved.succ[k], old.succ[k] < 0 ? -1 : 2 * old.succ[k]) << "block " << b;
    EXPECT_EQ(moved.numUses, old.numUses);
  }
  ASSERT_EQ(n.relocs.size(), o.relocs.size());
  for (size_t k = 0; k < o.relocs.size(); ++k) {
    int32_t ob = c0.blockAt(o.relocs[k].offset), nb = c1.blockAt(n.relocs[k].offset);
    ASSERT_GE(ob, 0);
    EXPECT_EQ(nb, 2 * ob + 1);
    EXPECT_EQ(n.relocs[k].offset - c1.blocks[static_cast<size_t>(nb)].offset,
              o.relocs[k].offset - c0.blocks[static_cast<size_t>(ob)].offset);
  }
  ASSERT_EQ(n.lines.size(), o.lines.size());
  EXPECT_EQ(n.functions[0].textSize, o.functions[0].textSize + 8 * c0.blocks.size());
}

TEST(Rewrite, FallThroughOnlyInsertionIsSkippedByBranches) {
  obj::ObjectFile o =
      compile(kernel("  scf.for %i = 0 to 64 step 16 {\n    tload %t0, %x[%i, 0]\n  }\n"));
  auto built0 = link::buildCfg(o, 0);
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(built0));
  const auto& c0 = std::get<link::FunctionCfg>(built0);
  // The loop header: the block a DIRECT branch targets.
  int32_t header = -1;
  for (const link::Block& b : c0.blocks)
    if (b.transfer == link::Transfer::Direct) header = b.succ[0];
  ASSERT_GE(header, 0);
  uint64_t at = c0.blocks[static_cast<size_t>(header)].offset;
  auto r = link::insertWords(o, {{at, false, link::barrierBlockBytes(isa::Pipe::All), {}, {}, {}}});
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r));
  const obj::ObjectFile& n = std::get<obj::ObjectFile>(r);
  auto built1 = link::buildCfg(n, 0);
  ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(built1));
  const auto& c1 = std::get<link::FunctionCfg>(built1);
  for (const link::Block& b : c1.blocks)
    if (b.transfer == link::Transfer::Direct) {
      const link::Block& t = c1.blocks[static_cast<size_t>(b.succ[0])];
      EXPECT_FALSE(link::isBarrier(t)); // the back edge skips the barrier
      EXPECT_TRUE(link::isBarrier(c1.blocks[static_cast<size_t>(b.succ[0]) - 1]));
    }
}

namespace {

/// A known read or write of `bytes` of parameter `param` of function 0 by the block at `at`.
obj::GmAccess gmAccess(uint64_t at, int32_t param, bool write, uint64_t bytes = 1024) {
  return test::gmAccessAt(at, param, write, 0, bytes);
}

/// The .text offsets of the tile blocks of function 0 of `o`.
std::vector<uint64_t> tileBlocks(const obj::ObjectFile& o) {
  auto built = link::buildCfg(o, 0);
  std::vector<uint64_t> at;
  if (auto* c = std::get_if<link::FunctionCfg>(&built))
    for (const link::Block& b : c->blocks)
      if (b.kind == link::BlockKind::Tile) at.push_back(b.offset);
  return at;
}

std::vector<uint64_t> gmOffsets(const obj::ObjectFile& o) {
  std::vector<uint64_t> at;
  for (const obj::GmAccess& g : o.gmAccesses)
    at.push_back(g.textOffset);
  return at;
}

} // namespace

// A GM access record names the block of its tile op: words inserted in front of that block (or
// of any block before it) move it with the block, whether the insertion is a list of Insertions
// or of patterns (--auto-sync); its other fields stay. The result still writes and reads back.
TEST(Rewrite, InsertionBeforeAGmAccessMovesIt) {
  obj::ObjectFile o =
      compile(kernel("  tload %t0, %x[0, 0]\n  tadd %t1, %t0, %t0\n  tstore %z[0, 0], %t1\n"));
  const std::vector<uint64_t> tile = tileBlocks(o);
  ASSERT_EQ(tile.size(), 3u);
  o.gmAccesses = {gmAccess(tile[0], 0, false), gmAccess(tile[2], 1, true)};
  o.gmAccesses[1].symbol = 0x1234;
  o.gmAccesses[1].offset = -16;
  const std::vector<uint8_t> bar = link::barrierBlockBytes(isa::Pipe::All);
  link::Insertion before;
  before.offset = tile[2]; // in front of the tstore: the load's record stays, the store's moves
  before.bytes = bar;
  auto r = link::insertWords(o, {before});
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  const obj::ObjectFile& n = std::get<obj::ObjectFile>(r);
  EXPECT_EQ(gmOffsets(n), (std::vector<uint64_t>{tile[0], tile[2] + bar.size()}));
  obj::GmAccess moved = n.gmAccesses[1];
  moved.textOffset = tile[2];
  EXPECT_EQ(moved, o.gmAccesses[1]); // only the offset changed
  // Held as patterns (one of them fall-through only): the same moves.
  link::PatternInsertions pi;
  pi.insertions.push_back({tile[2], pi.pattern(bar), 0, -1, true});
  pi.insertions.push_back({tile[0], pi.pattern(bar), 0, -1, false});
  auto rp = link::insertWords(o, pi, {});
  ASSERT_TRUE(std::holds_alternative<link::Relaid>(rp)) << std::get<std::string>(rp);
  EXPECT_EQ(gmOffsets(std::get<link::Relaid>(rp).obj),
            (std::vector<uint64_t>{tile[0] + bar.size(), tile[2] + 2 * bar.size()}));
  // Still inside the function: the object writes and reads back the same.
  auto bytes = obj::writeObject(n);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes)) << std::get<std::string>(bytes);
  const auto& b = std::get<std::vector<uint8_t>>(bytes);
  auto back = obj::readObject(b.data(), b.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(back)) << std::get<std::string>(back);
  EXPECT_EQ(std::get<obj::ObjectFile>(back).gmAccesses, n.gmAccesses);
}

// An insertion's own records (offsets relative to its bytes) land at the insertion's place, in
// offset order among the moved ones: in front of the record of the block they precede.
TEST(Rewrite, InsertedGmAccessesLandAtTheirOffsets) {
  obj::ObjectFile o =
      compile(kernel("  tload %t0, %x[0, 0]\n  tadd %t1, %t0, %t0\n  tstore %z[0, 0], %t1\n"));
  const std::vector<uint64_t> tile = tileBlocks(o);
  ASSERT_EQ(tile.size(), 3u);
  o.gmAccesses = {gmAccess(tile[0], 0, false), gmAccess(tile[1], -1, false),
                  gmAccess(tile[2], 1, true)};
  const std::vector<uint8_t> bar = link::barrierBlockBytes(isa::Pipe::All);
  link::Insertion first; // no records, in front of the load: everything after moves
  first.offset = tile[0];
  first.bytes = bar;
  link::Insertion two; // two blocks in front of the tadd, a record on each (given out of order)
  two.offset = tile[1];
  two.bytes = bar;
  two.bytes.insert(two.bytes.end(), bar.begin(), bar.end());
  two.gmAccesses = {gmAccess(bar.size(), 1, true, 64), gmAccess(0, 0, false, 32)};
  auto r = link::insertWords(o, {two, first});
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(r)) << std::get<std::string>(r);
  const obj::ObjectFile& n = std::get<obj::ObjectFile>(r);
  const uint64_t w = bar.size();
  EXPECT_EQ(gmOffsets(n), (std::vector<uint64_t>{tile[0] + w, tile[1] + w, tile[1] + 2 * w,
                                                 tile[1] + 3 * w, tile[2] + 3 * w}));
  ASSERT_EQ(n.gmAccesses.size(), 5u);
  EXPECT_EQ(n.gmAccesses[1].bytes, 32u); // the inserted record at relative offset 0
  EXPECT_EQ(n.gmAccesses[2].bytes, 64u); // ... and at relative offset 8
  EXPECT_EQ(n.gmAccesses[3].param, -1);  // the tadd's own record, after the inserted words
  auto bytes = obj::writeObject(n);
  EXPECT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes)) << std::get<std::string>(bytes);
}

TEST(Sync, RacesAndTheirFix) {
  obj::ObjectFile o =
      compile(kernel("  tload %t0, %x[0, 0]\n  tadd %t1, %t0, %t0\n  tstore %z[0, 0], %t1\n"));
  link::LinkOptions check;
  check.sync = link::SyncMode::Check;
  link::LinkResult r = link::link({{"k.o", o}}, check);
  EXPECT_FALSE(r.ok());
  std::string d = diagsOf(r);
  EXPECT_NE(d.find("race: tadd on PIPE_V reads %t0, which tload on PIPE_MTE2"), std::string::npos)
      << d;
  EXPECT_NE(d.find("race: tstore on PIPE_MTE3 reads %t1, which tadd on PIPE_V"), std::string::npos)
      << d;
  link::LinkOptions opts;
  opts.sync = link::SyncMode::Insert;
  r = link::link({{"k.o", o}}, opts);
  ASSERT_TRUE(r.ok()) << diagsOf(r);
  EXPECT_TRUE(r.diags.empty()) << diagsOf(r);
  EXPECT_EQ(r.syncLog.size(), 2u);
  // With the events written by hand there is nothing to report.
  obj::ObjectFile h =
      compile(kernel("  tload %t0, %x[0, 0] record(%a)\n  tadd %t1, %t0, %t0 wait(%a) record(%b)\n"
                     "  tstore %z[0, 0], %t1 wait(%b)\n"));
  r = link::link({{"k.o", h}}, {});
  EXPECT_TRUE(r.ok()) << diagsOf(r);
}

// Auto mode (the default): a function with no explicit sync gets it inserted; a function with
// some explicit sync is only checked, so the dependency its author left unordered is a race;
// --auto-sync inserts in both, --no-auto-sync in neither.
TEST(Sync, AutoModeChoosesPerFunction) {
  obj::ObjectFile bare =
      compile(kernel("  tload %t0, %x[0, 0]\n  tadd %t1, %t0, %t0\n  tstore %z[0, 0], %t1\n"));
  link::LinkResult r = link::link({{"k.o", bare}}, {});
  ASSERT_TRUE(r.ok()) << diagsOf(r);
  ASSERT_EQ(r.functionSync.size(), 1u);
  EXPECT_TRUE(r.functionSync[0].inserted);
  EXPECT_FALSE(r.functionSync[0].explicitSync);
  EXPECT_EQ(r.functionSync[0].pairs, 2u); // MTE2 -> V and V -> MTE3
  EXPECT_EQ(
      r.functionSync[0].describe(r.syncMode),
      "auto, sync inserted (no explicit sync in the source): 2 set/wait pair(s), 0 barrier(s)");
  EXPECT_NE(link::formatMap(r).find("Sync\n  @k  auto, sync inserted"), std::string::npos)
      << link::formatMap(r);

  obj::ObjectFile half =
      compile(kernel("  tload %t0, %x[0, 0] record(%a)\n  tadd %t1, %t0, %t0 wait(%a)\n"
                     "  tstore %z[0, 0], %t1\n"));
  r = link::link({{"k.o", half}}, {});
  EXPECT_FALSE(r.ok());
  std::string d = diagsOf(r);
  EXPECT_NE(d.find("race: tstore on PIPE_MTE3 reads %t1, which tadd on PIPE_V"), std::string::npos)
      << d;
  EXPECT_EQ(d.find("race: tadd"), std::string::npos) << d;
  ASSERT_EQ(r.functionSync.size(), 1u);
  EXPECT_FALSE(r.functionSync[0].inserted);
  EXPECT_TRUE(r.functionSync[0].explicitSync);

  link::LinkOptions insert;
  insert.sync = link::SyncMode::Insert;
  r = link::link({{"k.o", half}}, insert);
  ASSERT_TRUE(r.ok()) << diagsOf(r);
  EXPECT_EQ(r.functionSync[0].pairs, 1u); // only V -> MTE3 was missing
  EXPECT_EQ(r.functionSync[0].describe(r.syncMode),
            "auto, sync inserted (forced by --auto-sync): 1 set/wait pair(s), 0 barrier(s)");

  link::LinkOptions check;
  check.sync = link::SyncMode::Check;
  r = link::link({{"k.o", bare}}, check);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.functionSync[0].describe(r.syncMode), "checked (forced by --no-auto-sync)");
}

// A transitive chain orders the ends: the tload (MTE2) writes %t0 and the tstore (MTE3) reads it;
// no MTE2 -> MTE3 event exists, but MTE2 -> V followed by V -> MTE3 orders them.
TEST(Sync, TransitiveChainOrders) {
  obj::ObjectFile o =
      compile(kernel("  tload %t0, %x[0, 0] record(%a)\n  tabs %t1, %t1 wait(%a) record(%b)\n"
                     "  tstore %z[0, 0], %t0 wait(%b)\n"));
  link::LinkResult r = link::link({{"k.o", o}}, {});
  EXPECT_TRUE(r.ok()) << diagsOf(r); // tload writes %t0, tstore reads it: ordered through PIPE_V
}

/// A random structured kernel body: loops (some zero-trip), ifs on the %f parameter, loads,
/// vector ops and stores over four tiles, nested up to three deep.
std::string randomStructuredBody(std::mt19937& rng) {
  std::string body;
  int depth = 0;
  const char* vops[] = {"tadd", "tsub", "tmul", "tmax"};
  for (int k = 0, n = 6 + static_cast<int>(rng() % 18); k < n; ++k) {
    std::string ind(2 + 2 * static_cast<size_t>(depth), ' ');
    unsigned a = rng() % 4, b = rng() % 4, c = rng() % 4;
    switch (rng() % 7) {
    case 0:
      if (depth < 3) {
        body += ind + "scf.for %i" + std::to_string(k) + " = 0 to " + (rng() % 3 ? "64" : "0") +
                " step 16 {\n";
        ++depth;
      }
      break;
    case 1:
      if (depth < 3) {
        body += ind + "scf.if %f {\n";
        ++depth;
      }
      break;
    case 2:
      if (depth > 0) {
        --depth;
        body += std::string(2 + 2 * static_cast<size_t>(depth), ' ') + "}\n";
      }
      break;
    case 3:
      body += ind + "tload %t" + std::to_string(a) + ", %x[0, 0]\n";
      break;
    case 4:
      body += ind + "tstore %z[0, 0], %t" + std::to_string(a) + "\n";
      break;
    default:
      body += ind + vops[rng() % 4] + " %t" + std::to_string(a) + ", %t" + std::to_string(b) +
              ", %t" + std::to_string(c) + "\n";
    }
  }
  while (depth > 0)
    body += std::string(2 * static_cast<size_t>(depth--), ' ') + "}\n";
  return body;
}

// Random structured kernels: --auto-sync always links, with no race and no deadlock in the
// re-check.
TEST(Sync, AutoSyncRandomStructuredKernels) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 120; ++iter) {
    std::string text = randomStructuredBody(rng);
    obj::ObjectFile o = compile(kernel(text));
    if (o.functions.empty()) continue;
    link::LinkResult r = linkWithSync(o);
    ASSERT_TRUE(r.ok()) << text << diagsOf(r);
    for (const auto& d : r.diags)
      EXPECT_TRUE(d.warning || d.note) << text << d.text;
  }
}

/// Field by field: the graph derived by insertWords and the one decoded from its result.
void expectSameGraph(const link::FunctionCfg& x, const link::FunctionCfg& y,
                     const std::string& ctx) {
  ASSERT_EQ(x.blocks.size(), y.blocks.size()) << ctx;
  for (size_t i = 0; i < x.blocks.size(); ++i) {
    const link::Block &a = x.blocks[i], &b = y.blocks[i];
    auto fields = [](const link::Block& k) {
      return std::tuple(k.offset, k.end, k.transfer, k.kind, k.control, k.op, k.firstUse, k.numUses,
                        k.srcPipe, k.dstPipe, k.eventId, k.dynamicEvent, k.eventWord, k.target,
                        k.succ[0], k.succ[1]);
    };
    EXPECT_TRUE(fields(a) == fields(b)) << ctx << "block " << i;
  }
  ASSERT_EQ(x.uses.size(), y.uses.size()) << ctx;
  for (size_t i = 0; i < x.uses.size(); ++i) {
    const link::TileUse &a = x.uses[i], &b = y.uses[i];
    EXPECT_TRUE(std::tuple(a.tile, a.read, a.write, a.scratch) ==
                std::tuple(b.tile, b.read, b.write, b.scratch))
        << ctx << "use " << i;
  }
  EXPECT_EQ(x.predStart, y.predStart) << ctx;
  EXPECT_EQ(x.preds, y.preds) << ctx;
}

// The graphs insertWords derives from the old ones (sparing the re-check a second decode) are the
// graphs a decoder finds in the rewritten words: sync and barrier blocks in front of random blocks
// (the first and the last included), for every path or for the fall-through only.
TEST(Rewrite, RelaidGraphsMatchDecoding) {
  std::mt19937 rng(7);
  int derived = 0;
  for (int iter = 0; iter < 60; ++iter) {
    std::string text = randomStructuredBody(rng);
    obj::ObjectFile o = compile(kernel(text));
    if (o.functions.empty()) continue;
    auto built = link::buildCfg(o, 0);
    ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(built)) << text;
    const auto& c0 = std::get<link::FunctionCfg>(built);
    std::vector<link::Insertion> ins;
    const uint64_t end = o.functions[0].textOffset + o.functions[0].textSize;
    for (const link::Block& b : c0.blocks)
      for (unsigned n = rng() % 4; n > 0 && n < 3; --n) {
        const bool set = rng() % 2;
        std::vector<uint8_t> bytes =
            rng() % 3 ? link::syncBlockBytes(set, isa::Pipe::MTE2, isa::Pipe::V, rng() % 2)
                      : link::barrierBlockBytes(rng() % 2 ? isa::Pipe::V : isa::Pipe::All);
        ins.push_back({rng() % 8 ? b.offset : end, rng() % 2 == 0, bytes, {}, {}, {}});
      }
    const link::FunctionCfg* known[] = {&c0};
    auto r = link::insertWords(o, ins, known);
    ASSERT_TRUE(std::holds_alternative<link::Relaid>(r)) << std::get<std::string>(r);
    const link::Relaid& rl = std::get<link::Relaid>(r);
    EXPECT_EQ(rl.obj, std::get<obj::ObjectFile>(link::insertWords(o, ins))) << text;
    // The same insertions held as patterns (as --auto-sync plans them) give the same object.
    link::PatternInsertions pi;
    for (const link::Insertion& i : ins)
      pi.insertions.push_back({i.offset, pi.pattern(i.bytes), 0, -1, i.entry});
    auto rp = link::insertWords(o, pi, known);
    ASSERT_TRUE(std::holds_alternative<link::Relaid>(rp));
    EXPECT_EQ(std::get<link::Relaid>(rp).obj, rl.obj) << text;
    ASSERT_EQ(rl.cfgs.size(), 1u);
    if (!rl.cfgs[0]) continue;
    ++derived;
    auto decoded = link::buildCfg(rl.obj, 0);
    ASSERT_TRUE(std::holds_alternative<link::FunctionCfg>(decoded)) << text;
    expectSameGraph(*rl.cfgs[0], std::get<link::FunctionCfg>(decoded), text);
  }
  EXPECT_GT(derived, 50);
}

// A function whose set_flags and wait_flags use more than 64 (pipe pair, id) combinations: the
// analysis holds their signals in the wide set, and orders (or not) as with few.
TEST(Sync, ManySignalCodes) {
  const char* pipes[] = {"PIPE_MTE2", "PIPE_V", "PIPE_MTE3", "PIPE_M", "PIPE_MTE1", "PIPE_FIX"};
  std::string pairs; // 10 pairs other than MTE2 -> V, all 8 ids each, every set waited at once
  int n = 0;
  for (const char* a : pipes)
    for (const char* b : pipes)
      if (std::string(a) != b && !(std::string(a) == "PIPE_MTE2" && std::string(b) == "PIPE_V") &&
          n++ < 10)
        for (int k = 0; k < 8; ++k)
          for (const char* op : {"set_flag", "wait_flag"})
            pairs += std::string("  pto.") + op + "[<" + a + ">, <" + b + ">, <EVENT_ID" +
                     std::to_string(k) + ">]\n";
  const std::string order = "  pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n"
                            "  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n";
  link::LinkOptions check;
  check.sync = link::SyncMode::Check;
  for (bool ordered : {true, false}) {
    obj::ObjectFile o = compile(kernel("  tload %t0, %x[0, 0]\n" + pairs + (ordered ? order : "") +
                                       "  tadd %t1, %t0, %t0\n"));
    link::LinkResult r = link::link({{"k.o", o}}, check);
    EXPECT_EQ(r.ok(), ordered) << diagsOf(r);
    if (!ordered) {
      EXPECT_NE(diagsOf(r).find("race: tadd on PIPE_V reads %t0, which tload on PIPE_MTE2"),
                std::string::npos)
          << diagsOf(r);
    }
  }
}

/// Runs kernel @k of `mod` on the npu model with %f = `f` (inputs zero).
rt::Status runOnNpu(const rt::Module& mod, int64_t f) {
  auto l = mod.launch("k");
  EXPECT_TRUE(l.ok());
  if (!l.ok()) return std::nullopt;
  rt::Tensor x = rt::Tensor::zeros(isa::DType::F32, {64, 64});
  rt::Tensor z = rt::Tensor::zeros(isa::DType::F32, {64, 64});
  EXPECT_FALSE(l.value().bind("x", &x));
  EXPECT_FALSE(l.value().bind("z", &z));
  EXPECT_FALSE(l.value().bindScalar("f", f));
  rt::RunOptions ro;
  ro.backend = rt::Backend::Npu;
  ro.maxInstructions = 1000000;
  return l.value().run(ro, nullptr);
}

// The same kind of kernels, auto-synced, then run on the npu model for both values of %f: its
// own race detector (vector clocks over the pipes as they execute, a second implementation of
// "ordered") finds no cross-pipe race and no deadlock on the paths the runs take.
TEST(Sync, AutoSyncedKernelsRunRaceFreeOnTheNpuModel) {
  std::mt19937 rng(2026);
  int runs = 0, racesWithoutSync = 0;
  for (int iter = 0; iter < 150; ++iter) {
    std::string text = randomStructuredBody(rng);
    obj::ObjectFile o = compile(kernel(text));
    if (o.functions.empty()) continue;
    link::LinkResult r = linkWithSync(o);
    ASSERT_TRUE(r.ok()) << text << diagsOf(r);
    auto bytes = obj::writeImage(*r.image);
    ASSERT_EQ(bytes.index(), 0u);
    auto mod = rt::Module::load(std::get<0>(bytes), "k.img");
    ASSERT_TRUE(mod.ok()) << text;
    // The control: the same kernel without sync, which the detector must catch now and then.
    link::LinkOptions none;
    none.sync = link::SyncMode::Check;
    none.allowRaces = true;
    link::LinkResult unsynced = link::link({{"k.o", o}}, none);
    ASSERT_TRUE(unsynced.ok()) << text << diagsOf(unsynced);
    auto unsyncedBytes = obj::writeImage(*unsynced.image);
    auto unsyncedMod = rt::Module::load(std::get<0>(unsyncedBytes), "k.img");
    ASSERT_TRUE(unsyncedMod.ok());
    for (int64_t f : {0, 1}) {
      auto st = runOnNpu(unsyncedMod.value(), f);
      racesWithoutSync += st && st->message.find("race") != std::string::npos;
    }
    for (int64_t f : {0, 1}) {
      auto st = runOnNpu(mod.value(), f);
      EXPECT_FALSE(st) << "f=" << f << ": " << st->message << "\n" << text;
      ++runs;
    }
  }
  EXPECT_GE(runs, 250);
  EXPECT_GE(racesWithoutSync, 50);
}

/// The race analysis of function 0 of `o`, its tiles placed one after another in their buffer
/// (each 16x16 f32 tile of `kernel` at its own 1 KiB).
std::vector<link::Dependency> analyse(const obj::ObjectFile& o, link::RaceStats& stats) {
  auto built = link::buildCfg(o, 0);
  EXPECT_EQ(built.index(), 0u);
  const auto& cfg = std::get<link::FunctionCfg>(built);
  const obj::Function& fn = o.functions.at(0);
  std::vector<link::TileSpan> spans;
  for (size_t t = 0; t < fn.tiles.size(); ++t)
    spans.push_back({fn.tiles[t].loc, static_cast<int64_t>(1024 * t), 1024});
  auto pipes = link::blockPipes(cfg, fn.tiles, isa::Arch::A2A3);
  return link::unorderedDependencies(cfg, pipes, spans, isa::Arch::A2A3, &stats);
}

// A long straight function of loads and vector ops over four tiles: the accesses pending at any
// point stay bounded by the tiles and pipes, not by the length of the function.
TEST(Sync, LongFunctionKeepsFewAccessesPending) {
  std::string body;
  for (int k = 0; k < 3000; ++k)
    body += k % 3 == 0 ? "  tload %t" + std::to_string(k % 4) + ", %x[0, 0]\n"
                       : "  tadd %t" + std::to_string((k + 1) % 4) + ", %t" +
                             std::to_string(k % 4) + ", %t" + std::to_string((k + 2) % 4) + "\n";
  obj::ObjectFile o = compile(kernel(body));
  link::RaceStats stats;
  analyse(o, stats);
  EXPECT_LE(stats.peakPending, 4u * 2 * 3); // tiles x (read, write) x pipes
  link::LinkResult r = linkWithSync(o);
  ASSERT_TRUE(r.ok()) << diagsOf(r).substr(0, 2000);
}

// N loops in a row over the same tiles (load, vector op, store; each loop may run zero times).
// The zero-trip paths used to keep one pending access per earlier loop alive, and each loop
// reported a barrier dependency on every earlier one: 4x the work per doubling of N. Now every
// loop adds the same dependencies and visits, and the pending accesses do not grow.
TEST(Sync, SequentialLoopsStayLinear) {
  struct Cost {
    size_t deps, visits, pending;
  };
  auto cost = [](int loops) {
    std::string body;
    for (int k = 0; k < loops; ++k)
      body += "  scf.for %i" + std::to_string(k) +
              " = 0 to 64 step 16 {\n    tload %t0, %x[0, 0]\n    tadd %t1, %t0, %t0\n"
              "    tstore %z[0, 0], %t1\n  }\n";
    link::RaceStats stats;
    size_t deps = analyse(compile(kernel(body)), stats).size();
    return Cost{deps, stats.blockVisits, stats.peakPending};
  };
  Cost c16 = cost(16), c32 = cost(32), c64 = cost(64);
  EXPECT_EQ(c64.deps - c32.deps, 2 * (c32.deps - c16.deps)) << c16.deps << " " << c32.deps;
  EXPECT_EQ(c64.visits - c32.visits, 2 * (c32.visits - c16.visits));
  EXPECT_EQ(c64.pending, c16.pending);
  EXPECT_LE(c64.deps, 64u * 8);
}

namespace {

/// A loop over rows lb, lb + step, ... < ub of y = x + 1 (1 x cols f32 tiles), written as PTOAS
/// and PyPTO write multi-buffering (docs/sync.md 2a): %a and %c rebound each iteration to
/// (i mod n) * size and 0x8000 + (i mod n) * size, the events set_flag_dyn / wait_flag_dyn on
/// the slot i mod n. `sync` false: the same kernel with no sync at all.
std::string slotKernel(int n, int cols, int size, int lb, int step, int ub, bool sync) {
  std::ostringstream s;
  const std::string tile = "!pto.tile<f32, 1, " + std::to_string(cols) + ">";
  auto flag = [&](const char* what, const char* src, const char* dst, const std::string& id) {
    if (sync) s << "    pto." << what << "[<" << src << ">, <" << dst << ">, " << id << "]\n";
  };
  s << "kernel @k(%x: !pto.tensor_view<" << ub << "x" << cols << "xf32>, %y: !pto.tensor_view<"
    << ub << "x" << cols << "xf32>) {\n"
    << "  tile %a : " << tile << " addr = 0x0\n  tile %c : " << tile << " addr = 0x8000\n"
    << "  %lb = arith.constant " << lb << " : index\n  %ub = arith.constant " << ub
    << " : index\n  %st = arith.constant " << step << " : index\n  %n = arith.constant " << n
    << " : index\n  %bytes = arith.constant " << size << " : index\n"
    << "  %cBase = arith.constant 32768 : index\n  %f1 = arith.constant 1.0 : f32\n";
  for (int k = 0; k < n && sync; ++k)
    s << "  pto.set_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID" << k << ">]\n"
      << "  pto.set_flag[<PIPE_MTE3>, <PIPE_V>, <EVENT_ID" << k << ">]\n";
  s << "  scf.for %i = %lb to %ub step %st {\n    %k = arith.remui %i, %n : index\n"
    << "    %aAddr = arith.muli %k, %bytes : index\n"
    << "    %cAddr = arith.addi %aAddr, %cBase : index\n"
    << "    %as = pto.tassign %a, %aAddr : " << tile << ", index\n"
    << "    %cs = pto.tassign %c, %cAddr : " << tile << ", index\n";
  flag("wait_flag_dyn", "PIPE_V", "PIPE_MTE2", "%k");
  s << "    tload %as, %x[%i, 0]\n";
  flag("set_flag_dyn", "PIPE_MTE2", "PIPE_V", "%k");
  flag("wait_flag_dyn", "PIPE_MTE2", "PIPE_V", "%k");
  flag("wait_flag_dyn", "PIPE_MTE3", "PIPE_V", "%k");
  s << "    tadds %cs, %as, %f1\n";
  flag("set_flag_dyn", "PIPE_V", "PIPE_MTE2", "%k");
  flag("set_flag_dyn", "PIPE_V", "PIPE_MTE3", "%k");
  flag("wait_flag_dyn", "PIPE_V", "PIPE_MTE3", "%k");
  s << "    tstore %y[%i, 0], %cs\n";
  flag("set_flag_dyn", "PIPE_MTE3", "PIPE_V", "%k");
  s << "  }\n";
  for (int k = 0; k < n && sync; ++k)
    s << "  pto.wait_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID" << k << ">]\n"
      << "  pto.wait_flag[<PIPE_MTE3>, <PIPE_V>, <EVENT_ID" << k << ">]\n";
  return s.str() + "}\n";
}

/// Runs @k of image `img` on `backend` with x = `x` (ub x cols); returns y, or the error.
std::variant<std::vector<float>, std::string> runSlots(const obj::Image& img, rt::Backend backend,
                                                       const std::vector<float>& x, int ub,
                                                       int cols) {
  auto bytes = obj::writeImage(img);
  auto mod = rt::Module::load(std::get<0>(bytes), "k.img");
  if (!mod.ok()) return std::string("load");
  auto l = mod.value().launch("k");
  if (!l.ok()) return std::string("launch");
  rt::Tensor tx = rt::Tensor::zeros(isa::DType::F32, {ub, cols});
  rt::Tensor ty = rt::Tensor::zeros(isa::DType::F32, {ub, cols});
  std::memcpy(tx.data.data(), x.data(), x.size() * sizeof(float));
  EXPECT_FALSE(l.value().bind("x", &tx));
  EXPECT_FALSE(l.value().bind("y", &ty));
  rt::RunOptions ro;
  ro.backend = backend;
  ro.maxInstructions = 1000000;
  if (auto st = l.value().run(ro, nullptr)) return st->message;
  std::vector<float> y(x.size());
  std::memcpy(y.data(), ty.data.data(), y.size() * sizeof(float));
  return y;
}

} // namespace

// Random run-time slot kernels (docs/sync.md 2a): n slots `size` bytes apart, a random first
// iteration and step. With their hand-written dynamic events they link in checked mode exactly
// when no two slots the loop uses overlap (computed here from the slot numbers, the size and the
// tile's bytes), and then run race-free on the npu model with y = x + 1 in the rows the loop
// visits (0 elsewhere), computed here; stripped of their sync they link in auto mode and give
// the same y on both backends, overlapping slots or not.
TEST(Sync, RunTimeSlotKernels) {
  std::mt19937 rng(29);
  int linked = 0, refused = 0, unrolled = 0;
  for (int iter = 0; iter < 40; ++iter) {
    const int n = 2 + static_cast<int>(rng() % 3), cols = 8 << (rng() % 3), bytes = cols * 4;
    const int size = 32 * (1 + static_cast<int>(rng() % (2 * bytes / 32)));
    const int lb = static_cast<int>(rng() % 3), step = 1 + static_cast<int>(rng() % 3);
    const int ub = lb + step * (2 + static_cast<int>(rng() % 6));
    std::set<int> used;
    for (int i = lb; i < ub; i += step)
      used.insert(i % n);
    bool overlap = false;
    for (int s1 : used)
      for (int s2 : used)
        overlap |= s1 != s2 && std::abs(s1 - s2) * size < bytes;
    std::vector<float> x(static_cast<size_t>(ub * cols)), want(x.size(), 0.0f);
    for (float& v : x)
      v = static_cast<float>(rng() % 1000);
    for (int i = lb; i < ub; i += step)
      for (int c = 0; c < cols; ++c)
        want[static_cast<size_t>(i * cols + c)] = x[static_cast<size_t>(i * cols + c)] + 1.0f;
    const std::string hand = slotKernel(n, cols, size, lb, step, ub, true);
    link::LinkOptions checked;
    checked.sync = link::SyncMode::Check;
    link::LinkResult r = link::link({{"k.o", compile(hand)}}, checked);
    EXPECT_EQ(r.ok(), !overlap) << hand << diagsOf(r);
    if (r.ok() && !overlap) {
      ++linked;
      auto y = runSlots(*r.image, rt::Backend::Npu, x, ub, cols);
      ASSERT_EQ(y.index(), 0u) << std::get<1>(y) << "\n" << hand;
      EXPECT_EQ(std::get<0>(y), want) << hand;
    } else if (!r.ok()) {
      ++refused;
      EXPECT_NE(diagsOf(r).find("race"), std::string::npos) << diagsOf(r);
    }
    const std::string stripped = slotKernel(n, cols, size, lb, step, ub, false);
    link::LinkResult a = link::link({{"k.o", compile(stripped)}}, link::LinkOptions{});
    ASSERT_TRUE(a.ok()) << stripped << diagsOf(a);
    for (const std::string& line : a.multiBufferLog)
      unrolled += line.find("run-time slots repeat") != std::string::npos;
    for (rt::Backend b : {rt::Backend::Npu, rt::Backend::Cpu}) {
      auto y = runSlots(*a.image, b, x, ub, cols);
      ASSERT_EQ(y.index(), 0u) << std::get<1>(y) << "\n" << stripped;
      EXPECT_EQ(std::get<0>(y), want) << stripped;
    }
  }
  EXPECT_GE(linked, 10);
  EXPECT_GE(refused, 5);
  EXPECT_GE(unrolled, 10);
}
