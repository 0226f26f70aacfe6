// The npu model's instruction count for A2/A3 tile-scalar ops (runtime/npu/Cost.h,
// scalarOpInstructions). Expected counts worked by hand from pto-isa's TBinSOp.hpp (TBinSInstr):
// a static valid shape equal to the tile's runs as one instruction (count mode when the columns
// are not whole repeats or the repeats pass 255, else a head plus a masked tail); a run-time valid
// shape takes the 2-D path by the tile's static shape.
#include "runtime/npu/Cost.h"

#include <gtest/gtest.h>

namespace pto::rt::npu {
namespace {

VecShape shape(uint64_t rows, uint64_t cols, unsigned bits, bool staticRun, uint64_t tileRows = 0,
               uint64_t tileCols = 0) {
  VecShape s;
  s.rows = rows, s.cols = cols, s.bits = bits, s.staticRun = staticRun;
  s.tileRows = tileRows ? tileRows : rows;
  s.tileCols = tileCols ? tileCols : cols;
  return s;
}

TEST(NpuCost, TileScalarStaticRunIsOneInstruction) {
  // 64x64 f32: 64 repeats, no tail -> norm mode, one instruction.
  EXPECT_EQ(scalarOpInstructions(shape(64, 64, 32, true)), 1u);
  // 15x192 i16: 192 columns are 1.5 repeats of 128 -> count mode, one instruction.
  EXPECT_EQ(scalarOpInstructions(shape(15, 192, 16, true)), 1u);
  // 3x40 f32: 120 elements = one repeat of 64 and a tail of 56 -> head and tail.
  EXPECT_EQ(scalarOpInstructions(shape(3, 40, 32, true)), 2u);
  // 512x64 f32: 512 repeats > 255 -> count mode.
  EXPECT_EQ(scalarOpInstructions(shape(512, 64, 32, true)), 1u);
  // 5 valid rows of a 1024x16 f32 tile: count mode is chosen from the tile's 256 repeats.
  EXPECT_EQ(scalarOpInstructions(shape(5, 16, 32, true, 1024, 16)), 1u);
}

TEST(NpuCost, TileScalarRunTimeShapeGoesByColumnChunks) {
  // pto-isa's A2/A3 cost-model points (tests/costmodel/st/testcase/tadds), all Tile<..., -1, -1>:
  EXPECT_EQ(scalarOpInstructions(shape(32, 64, 32, false)), 1u);  // one chunk of 32 repeats
  EXPECT_EQ(scalarOpInstructions(shape(63, 64, 16, false)), 1u);  // a masked tail chunk
  EXPECT_EQ(scalarOpInstructions(shape(31, 128, 32, false)), 2u); // two chunks
  EXPECT_EQ(scalarOpInstructions(shape(15, 192, 16, false)), 2u); // a chunk and a masked tail
  EXPECT_EQ(scalarOpInstructions(shape(7, 448, 32, false)), 7u);  // seven chunks
  // 256x16 f32: 256 rows > 255, no whole repeat a row: the tail in 255 + 1 rows.
  EXPECT_EQ(scalarOpInstructions(shape(256, 16, 32, false)), 2u);
}

TEST(NpuCost, TileScalarRunTimeShapeOtherPaths) {
  // 2x1024 f32: 16 repeats a row over 2 rows (rows < repeats + 1) -> one instruction a row.
  EXPECT_EQ(scalarOpInstructions(shape(2, 1024, 32, false)), 2u);
  // 300x64 f32: 300 rows > 255 and > 64 -> a head instruction each row, no tail.
  EXPECT_EQ(scalarOpInstructions(shape(300, 64, 32, false)), 300u);
  // 300x96 f32: heads each row plus the 32-column tail over 255 + 45 rows.
  EXPECT_EQ(scalarOpInstructions(shape(300, 96, 32, false)), 302u);
  // Valid 10x64 in a 16x128 f32 tile: the tile's two chunks decide nothing; one valid chunk.
  EXPECT_EQ(scalarOpInstructions(shape(10, 64, 32, false, 16, 128)), 1u);
}

} // namespace
} // namespace pto::rt::npu
