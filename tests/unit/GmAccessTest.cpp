// GM access records (docs/sync.md section 2b): what the code generator records of each tile
// op's GM bytes, and the linker's overlap test between two of them, against a second
// implementation written from the definition (every iteration distance tried).
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "link/Races.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

using namespace pto;

namespace {

std::optional<obj::ObjectFile> lower(const std::string& text) {
  as::SourceFile src("t.pto", text);
  std::ostringstream out;
  as::DiagEngine diags(src, out);
  auto m = as::parseModule(src, diags, isa::Arch::A2A3);
  std::optional<obj::ObjectFile> o;
  if (m && diags.errors() == 0) {
    as::verifyModule(*m, isa::Arch::A2A3, diags);
    if (diags.errors() == 0) o = as::lowerModule(*m, isa::Arch::A2A3, diags);
  }
  diags.flush();
  EXPECT_TRUE(o.has_value()) << out.str();
  return o;
}

/// A read of known bytes of parameter 0.
obj::GmAccess known(int64_t offset, uint64_t bytes, uint32_t loop = 0, int64_t stride = 0) {
  return test::gmAccessAt(0, 0, false, offset, bytes, loop, stride);
}

/// The definition: earlier's instance at iteration i, later's at i + d for every d the block
/// order allows (0 only when earlier's block comes first), up to far past any meeting point.
bool overlapByDefinition(const obj::GmAccess& e, uint32_t from, const obj::GmAccess& l,
                         uint32_t to) {
  for (int64_t d = from < to ? 0 : 1; d <= 2000; ++d) {
    const int64_t a = e.offset, b = l.offset + l.stride * d;
    if (a < b + static_cast<int64_t>(l.bytes) && b < a + static_cast<int64_t>(e.bytes)) return true;
  }
  return false;
}

// An in-place row loop (load row i, add, store row i), then the whole of x, then y.
const char* kInPlace = R"(module {
  func.func @inplace(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {pto.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %cst = arith.constant 1.0 : f32
    %b = pto.get_block_idx
    %bi = arith.index_cast %b : i64 to index
    %xv = pto.make_tensor_view %x, shape = [%c4, %c64], strides = [%c64, %c1] : !pto.tensor_view<4x64xf32>
    %yv = pto.make_tensor_view %y, shape = [%c4, %c64], strides = [%c64, %c1] : !pto.tensor_view<4x64xf32>
    %t = pto.alloc_tile : !pto.tile_buf<vec, 1x64xf32>
    %u = pto.alloc_tile : !pto.tile_buf<vec, 4x64xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %p = pto.partition_view %xv, offsets = [%i, %c0], sizes = [%c1, %c64] : !pto.tensor_view<4x64xf32> -> !pto.partition_tensor_view<1x64xf32>
      pto.tload ins(%p : !pto.partition_tensor_view<1x64xf32>) outs(%t : !pto.tile_buf<vec, 1x64xf32>)
      pto.tadds ins(%t, %cst : !pto.tile_buf<vec, 1x64xf32>, f32) outs(%t : !pto.tile_buf<vec, 1x64xf32>)
      pto.tstore ins(%t : !pto.tile_buf<vec, 1x64xf32>) outs(%p : !pto.partition_tensor_view<1x64xf32>)
      scf.for %j = %c0 to %c4 step %c1 {
        %q = pto.partition_view %yv, offsets = [%j, %c0], sizes = [%c1, %c64] : !pto.tensor_view<4x64xf32> -> !pto.partition_tensor_view<1x64xf32>
        pto.tload ins(%q : !pto.partition_tensor_view<1x64xf32>) outs(%t : !pto.tile_buf<vec, 1x64xf32>)
      }
    }
    %w = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c4, %c64] : !pto.tensor_view<4x64xf32> -> !pto.partition_tensor_view<4x64xf32>
    %v = pto.partition_view %yv, offsets = [%bi, %c0], sizes = [%c1, %c64] : !pto.tensor_view<4x64xf32> -> !pto.partition_tensor_view<1x64xf32>
    pto.tload ins(%w : !pto.partition_tensor_view<4x64xf32>) outs(%u : !pto.tile_buf<vec, 4x64xf32>)
    pto.tstore ins(%t : !pto.tile_buf<vec, 1x64xf32>) outs(%v : !pto.partition_tensor_view<1x64xf32>)
    return
  }
})";

} // namespace

// Values by hand: a row of 64 f32 is 256 bytes; the loop's step is 1 row.
TEST(GmAccess, RecordsOfAnInPlaceRowLoop) {
  auto o = lower(kInPlace);
  ASSERT_TRUE(o);
  ASSERT_EQ(o->gmAccesses.size(), 5u);
  const auto& r = o->gmAccesses;
  for (size_t k = 1; k < r.size(); ++k)
    EXPECT_LT(r[k - 1].textOffset, r[k].textOffset);
  // Row i of x, read then written: moves 256 bytes an iteration of the loop.
  for (size_t k : {0, 1}) {
    EXPECT_EQ(r[k].param, 0);
    EXPECT_TRUE(r[k].known);
    EXPECT_EQ(r[k].offset, 0);
    EXPECT_EQ(r[k].bytes, 256u);
    EXPECT_EQ(r[k].loop, 1u);
    EXPECT_EQ(r[k].stride, 256);
    EXPECT_EQ(r[k].symbol, 0u);
  }
  EXPECT_FALSE(r[0].write);
  EXPECT_TRUE(r[1].write);
  // Row j of y in a loop inside the loop: two loop variables, no one stride: any byte of y.
  EXPECT_EQ(r[2].param, 1);
  EXPECT_FALSE(r[2].known);
  // The whole of x after the loop: 4 rows.
  EXPECT_EQ(r[3].param, 0);
  EXPECT_TRUE(r[3].known);
  EXPECT_EQ(r[3].bytes, 1024u);
  EXPECT_EQ(r[3].loop, 0u);
  // Row %b of y: a run-time term, the same in each execution of the op.
  EXPECT_EQ(r[4].param, 1);
  EXPECT_TRUE(r[4].write);
  EXPECT_TRUE(r[4].known);
  EXPECT_NE(r[4].symbol, 0u);
  EXPECT_EQ(r[4].offset, 0);
  EXPECT_EQ(r[4].bytes, 256u);
}

TEST(GmAccess, OverlapByHand) {
  // In place: the store of row i (block 3) is pending at the next iteration's load of row
  // i + 1 (block 1): different rows. The load of row i (block 1) before the store of the same
  // row (block 3) in one iteration: the same bytes.
  const obj::GmAccess row = known(0, 256, 1, 256);
  EXPECT_FALSE(link::gmMayOverlap(row, 3, row, 1));
  EXPECT_TRUE(link::gmMayOverlap(row, 1, row, 3));
  // A loop that writes row i (block 3) and, at its top (block 1), reads row i - 1: the next
  // iteration reads the row this one wrote.
  EXPECT_TRUE(link::gmMayOverlap(known(0, 256, 1, 256), 3, known(-256, 256, 1, 256), 1));
  // ... reading row i + 1 instead, every later iteration reads a row not written yet.
  EXPECT_FALSE(link::gmMayOverlap(known(0, 256, 1, 256), 3, known(256, 256, 1, 256), 1));
  // Different parameters never; an unknown one always; other run-time terms always.
  obj::GmAccess other = row;
  other.param = 1;
  EXPECT_FALSE(link::gmMayOverlap(row, 1, other, 3));
  obj::GmAccess anyParam;
  EXPECT_TRUE(link::gmMayOverlap(row, 1, anyParam, 3));
  obj::GmAccess sym = row;
  sym.symbol = 7;
  EXPECT_TRUE(link::gmMayOverlap(row, 3, sym, 1));
  // Fixed addresses: the hulls.
  EXPECT_FALSE(link::gmMayOverlap(known(0, 256), 1, known(256, 256), 2));
  EXPECT_TRUE(link::gmMayOverlap(known(0, 257), 1, known(256, 256), 2));
  // One in a loop, one not: no relation known.
  EXPECT_TRUE(link::gmMayOverlap(known(0, 256, 1, 256), 1, known(4096, 256), 2));
}

TEST(GmAccess, OverlapAgreesWithTheDefinition) {
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<int64_t> off(-300, 300), stride(-70, 70);
  std::uniform_int_distribution<uint64_t> bytes(1, 96);
  std::uniform_int_distribution<uint32_t> block(0, 4);
  size_t checked = 0, meet = 0;
  for (int n = 0; n < 200000; ++n) {
    int64_t s = stride(rng);
    if (s == 0) s = 1;
    const obj::GmAccess e = known(off(rng), bytes(rng), 1, s),
                        l = known(off(rng), bytes(rng), 1, s);
    const uint32_t from = block(rng), to = block(rng);
    const bool want = overlapByDefinition(e, from, l, to);
    ASSERT_EQ(link::gmMayOverlap(e, from, l, to), want)
        << "offsets " << e.offset << ", " << l.offset << " bytes " << e.bytes << ", " << l.bytes
        << " stride " << s << " blocks " << from << " -> " << to;
    ++checked;
    meet += want;
  }
  // Both answers are common in the sample.
  EXPECT_GT(meet, checked / 10);
  EXPECT_LT(meet, checked - checked / 10);
}
