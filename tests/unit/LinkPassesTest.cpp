// The passes of pto-ld one at a time (link/Passes.h): each runs on a context that the passes
// before it filled, and the full list gives what link() gives.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Encoding.h"
#include "link/Passes.h"
#include "link/Patch.h"

#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace pto;
using namespace pto::link;

namespace {

/// A2A3 unless the module or `arch` says otherwise (pto-as's default).
obj::ObjectFile compile(const std::string& text, isa::Arch arch = isa::Arch::A2A3) {
  return test::assembleText(text, arch);
}

/// A kernel in the light syntax named `name`: a tload, a tadd reading it (a race without
/// sync), a tstore.
std::string kernel(const std::string& name = "k") {
  return "kernel @" + name +
         "(%x: !pto.tensor_view<64x64xf32>, %z: !pto.tensor_view<64x64xf32>) {\n"
         "  tile %t0, %t1 : !pto.tile<f32, 16, 16>\n"
         "  tload %t0, %x[0, 0]\n"
         "  tadd %t1, %t0, %t0\n"
         "  tstore %z[0, 0], %t1\n"
         "}\n";
}

std::string text(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const Diagnostic& d : ds)
    s += std::string(severity(d)) + d.text + "\n";
  return s;
}

/// The passes up to (and including) buildCfgs.
void front(LinkContext& ctx) {
  checkInputs(ctx);
  resolveSymbols(ctx);
  layOutText(ctx);
  selectEntries(ctx);
  patchCalls(ctx);
  buildCfgs(ctx);
}

} // namespace

TEST(LinkPasses, CheckInputsStopsWithoutInputs) {
  std::vector<InputObject> in;
  LinkOptions opts;
  LinkContext ctx(in, opts);
  checkInputs(ctx);
  EXPECT_TRUE(ctx.stop);
  ASSERT_EQ(ctx.result.diags.size(), 1u);
  EXPECT_EQ(ctx.result.diags[0].text, "no input files");
}

TEST(LinkPasses, CheckInputsRefusesMixedArches) {
  std::vector<InputObject> in{{"a.o", compile(kernel("a"))},
                              {"b.o", compile(kernel("b"), isa::Arch::A5)}};
  LinkOptions opts;
  LinkContext ctx(in, opts);
  checkInputs(ctx);
  EXPECT_FALSE(ctx.stop);
  EXPECT_EQ(ctx.arch, isa::Arch::A2A3);
  ASSERT_EQ(ctx.result.diags.size(), 1u);
  EXPECT_NE(ctx.result.diags[0].text.find("objects for different arches cannot be linked"),
            std::string::npos);
}

TEST(LinkPasses, ResolveSymbolsFindsDuplicates) {
  std::vector<InputObject> in{{"a.o", compile(kernel())}, {"b.o", compile(kernel())}};
  LinkOptions opts;
  LinkContext ctx(in, opts);
  checkInputs(ctx);
  resolveSymbols(ctx);
  ASSERT_EQ(ctx.result.diags.size(), 1u) << text(ctx.result.diags);
  EXPECT_NE(ctx.result.diags[0].text.find("duplicate symbol 'k': defined in 'a.o' and in 'b.o'"),
            std::string::npos);
  ASSERT_TRUE(ctx.resolve(1, "k"));
  EXPECT_EQ(ctx.resolve(1, "k")->object, 0u);
  EXPECT_FALSE(ctx.resolve(0, "nope"));
}

TEST(LinkPasses, LayOutTextPlacesObjectsOnWordBoundaries) {
  std::vector<InputObject> in{{"a.o", compile(kernel("a"))}, {"b.o", compile(kernel("b"))}};
  in[0].obj.text.push_back(0); // an odd-sized .text: the next object starts 4-byte aligned
  in[0].obj.text.push_back(0);
  LinkOptions opts;
  LinkContext ctx(in, opts);
  checkInputs(ctx);
  resolveSymbols(ctx);
  layOutText(ctx);
  ASSERT_EQ(ctx.base.size(), 2u);
  EXPECT_EQ(ctx.base[0], 0u);
  EXPECT_EQ(ctx.base[1] % 4, 0u);
  EXPECT_GE(ctx.base[1], in[0].obj.text.size());
  ASSERT_EQ(ctx.functions.size(), 2u);
  EXPECT_EQ(ctx.functions[1].object, 1u);
  EXPECT_EQ(ctx.image.functions[1].textOffset, ctx.base[1] + in[1].obj.functions[0].textOffset);
  EXPECT_EQ(ctx.result.functionOrigin, (std::vector<std::string>{"a.o", "b.o"}));
}

TEST(LinkPasses, SelectEntriesHonoursEntryOption) {
  std::vector<InputObject> in{{"a.o", compile(kernel("a"))}, {"b.o", compile(kernel("b"))}};
  LinkOptions opts;
  opts.entries = {"b", "missing"};
  LinkContext ctx(in, opts);
  checkInputs(ctx);
  resolveSymbols(ctx);
  layOutText(ctx);
  selectEntries(ctx);
  ASSERT_EQ(ctx.image.entries.size(), 1u);
  EXPECT_EQ(ctx.image.entries[0].name, "b");
  ASSERT_EQ(ctx.result.diags.size(), 1u);
  EXPECT_EQ(ctx.result.diags[0].text, "--entry 'missing': no such kernel in the inputs");
}

TEST(LinkPasses, BuildCfgsReusesKnownGraphs) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  auto known = buildFunctionCfg(in[0].obj, 0);
  ASSERT_TRUE(known->get());
  LinkOptions opts;
  LinkContext ctx(in, opts);
  ctx.knownCfgs = {{known}};
  front(ctx);
  ASSERT_EQ(ctx.functions.size(), 1u);
  EXPECT_EQ(ctx.functions[0].built.get(), known.get()); // not decoded again
  LinkContext fresh(in, opts);
  front(fresh);
  ASSERT_TRUE(fresh.functions[0].cfg());
  EXPECT_NE(fresh.functions[0].built.get(), known.get());
  EXPECT_EQ(fresh.functions[0].cfg()->blocks.size(), known->get()->blocks.size());
}

TEST(LinkPasses, PlaceTilesFillsPlacementsAndLayout) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  LinkOptions opts;
  LinkContext ctx(in, opts);
  front(ctx);
  placeTiles(ctx);
  const obj::Function& fn = ctx.image.functions[0];
  ASSERT_EQ(fn.tiles.size(), 2u);
  for (const obj::TileDesc& t : fn.tiles)
    EXPECT_GE(t.placement, 0);
  EXPECT_NE(fn.tiles[0].placement, fn.tiles[1].placement); // both live at the tadd
  EXPECT_EQ(ctx.result.tiles.size(), 2u);
  ASSERT_EQ(ctx.image.layout.size(), 1u);
  EXPECT_EQ(ctx.image.layout[0].loc, isa::Loc::Vec);
  EXPECT_TRUE(ctx.functions[0].diags.empty()) << text(ctx.functions[0].diags);
}

TEST(LinkPasses, CheckRacesReportsIntoTheFunction) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  LinkOptions opts;
  LinkContext ctx(in, opts);
  front(ctx);
  placeTiles(ctx);
  checkRaces(ctx);
  EXPECT_TRUE(ctx.result.diags.empty());
  const std::string s = text(ctx.functions[0].diags);
  EXPECT_NE(s.find("error: k.pto:4:3: race: tadd on PIPE_V reads %t0, which tload on PIPE_MTE2 at "
                   "k.pto:3:3 writes"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("note: k.pto:3:3: the tload is here"), std::string::npos) << s;
  // finishImage moves the function's diagnostics after the global ones, and keeps the image.
  collectEvents(ctx);
  allocateEventIds(ctx);
  patchEvents(ctx);
  finishImage(ctx);
  EXPECT_FALSE(ctx.result.ok());
  EXPECT_EQ(text(ctx.result.diags), s);
}

TEST(LinkPasses, FullListGivesWhatLinkGives) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  LinkOptions opts;
  opts.sync = SyncMode::Check;
  opts.allowRaces = true;
  LinkContext ctx(in, opts);
  runPasses(ctx);
  LinkResult r = link::link(in, opts);
  ASSERT_TRUE(ctx.result.ok()) << text(ctx.result.diags);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ctx.result.image->text, r.image->text);
  EXPECT_EQ(text(ctx.result.diags), text(r.diags));
  EXPECT_EQ(ctx.result.tiles.size(), r.tiles.size());
}

TEST(LinkPasses, AutoSyncEventsArePatched) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  LinkOptions opts;
  opts.sync = SyncMode::Insert;
  LinkResult r = link::link(in, opts);
  ASSERT_TRUE(r.ok()) << text(r.diags);
  EXPECT_FALSE(r.events.empty());
  for (const MapEvent& e : r.events)
    EXPECT_GE(e.id, 0);
}

TEST(Patch, SetsEventIdsAndRefusesWhatDoesNotFit) {
  std::vector<uint8_t> text = syncBlockBytes(true, isa::Pipe::MTE2, isa::Pipe::V, 0);
  PatchResult p =
      patchWord(text, 4, PatchField::EventId, 5); // the B.DIM after the 32-bit BSTART.EXT
  ASSERT_TRUE(p.ok()) << p.detail;
  size_t used = 0;
  auto w = isa::enc::decodeBytes(std::span<const uint8_t>(text.data() + 4, text.size() - 4), used,
                                 isa::enc::DecodeOptions{.extensions = true});
  ASSERT_TRUE(w);
  std::vector<uint8_t> again = syncBlockBytes(true, isa::Pipe::MTE2, isa::Pipe::V, 5);
  EXPECT_EQ(text, again);
  EXPECT_EQ(patchWord(text, 4, PatchField::Label, 1).status, PatchStatus::NoField);
  EXPECT_EQ(patchWord(text, text.size(), PatchField::EventId, 1).status, PatchStatus::NotDecodable);
  EXPECT_FALSE(patchWord(text, 4, PatchField::EventId, int64_t{1} << 40).ok());
}

TEST(LinkPasses, TheTableNamesEveryPassInOrder) {
  std::vector<std::string_view> names;
  for (const Pass& p : linkPasses())
    names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{
                       "check inputs", "resolve symbols", "lay out text", "select entries",
                       "patch calls", "build CFGs", "check recursion", "sync modes", "multi-buffer",
                       "plan tiles", "races", "auto-sync", "collect events", "allocate event ids",
                       "patch events", "finish image"}));
}

TEST(LinkPasses, AutoSyncConsumesTheRacePassAndRunsTheTableAgain) {
  std::vector<InputObject> in{{"k.o", compile(kernel())}};
  LinkOptions opts; // auto: the kernel has no explicit sync, so its sync is inserted
  LinkContext ctx(in, opts);
  runPasses(ctx);
  ASSERT_TRUE(ctx.result.ok()) << text(ctx.result.diags);
  EXPECT_EQ(ctx.sync.stage, AutoSyncState::Stage::Inserted);
  // The first round's race pass found the dependencies that auto-sync ordered.
  ASSERT_EQ(ctx.sync.fns.size(), 1u);
  EXPECT_FALSE(ctx.sync.fns[0][0].deps.empty());
  // The second round linked the objects with the sync inserted, and found no race in them.
  EXPECT_EQ(ctx.inputs.data(), ctx.sync.objects.data());
  EXPECT_TRUE(ctx.functions[0].deps.empty());
  for (const PassTime& t : ctx.timing)
    EXPECT_EQ(t.runs, t.name == "collect events" || t.name == "allocate event ids" ||
                              t.name == "patch events" || t.name == "finish image"
                          ? 1u
                          : 2u)
        << t.name;
  // Checked only: one round.
  opts.sync = SyncMode::Check;
  opts.allowRaces = true;
  LinkContext once(in, opts);
  runPasses(once);
  EXPECT_EQ(once.sync.stage, AutoSyncState::Stage::None);
  for (const PassTime& t : once.timing)
    EXPECT_EQ(t.runs, 1u) << t.name;
}

TEST(LinkPasses, CheckRecursionNamesEveryFunctionOnTheCycle) {
  // @a (a.o) calls @b (b.o), which calls @c (c.o), which calls @a: each module alone is fine.
  auto module = [](const std::string& self, const std::string& callee, bool entry) {
    return "module {\n  func.func private @" + callee + "(%x: index) -> index\n  func.func @" +
           self + "(%x: index) -> index" + (entry ? " attributes {pto.entry}" : "") +
           " {\n    %r = func.call @" + callee +
           "(%x) : (index) -> index\n    return %r : index\n  }\n}\n";
  };
  std::vector<InputObject> in{{"a.o", compile(module("a", "b", true))},
                              {"b.o", compile(module("b", "c", false))},
                              {"c.o", compile(module("c", "a", false))}};
  LinkOptions opts;
  LinkResult r = link::link(in, opts);
  ASSERT_FALSE(r.ok());
  const std::string s = text(r.diags);
  EXPECT_NE(s.find("recursive call to '@a' is not supported: @a calls @b calls @c calls @a"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("(in @c, 'c.o')"), std::string::npos) << s;
  EXPECT_NE(s.find("note: k.pto:4:10: @a calls @b here ('a.o')"), std::string::npos) << s;
  EXPECT_NE(s.find("@b calls @c here ('b.o')"), std::string::npos) << s;
  // Without the call back there is no cycle.
  in[2].obj =
      compile("module {\n  func.func @c(%x: index) -> index {\n    return %x : index\n  }\n}\n");
  EXPECT_TRUE(link::link(in, opts).ok()) << text(link::link(in, opts).diags);
}
