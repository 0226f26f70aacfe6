// Where an element of a tile lives in its buffer (PTO ISA reference 4.3, pto-isa's
// GetTileElementOffset): the inner box (fractal) of a boxed layout and the element offset of
// (r, c). One rule for the verifier, the code generator, the backends and the reference.
#pragma once

#include "isa/Isa.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pto::isa {

/// The inner box of a tile's layout: 1x1 without boxes; fractal 512 row-major boxes are 16 rows
/// x 32 bytes, column-major ones 32 bytes x 16 columns; fractal 1024 boxes 16x16; MX fractal 32
/// boxes 16x2 (row-major) or 2x16 (column-major). Sub-byte elements count as bytes.
struct InnerBox {
  uint32_t rows = 1, cols = 1;
};
inline InnerBox innerBox(DType t, SLayout s, unsigned fractal) {
  if (s == SLayout::NoneBox) return {};
  const bool rowBox = s == SLayout::RowMajor;
  if (fractal == 1024) return {16, 16};
  if (fractal == 32) return rowBox ? InnerBox{16, 2} : InnerBox{2, 16};
  const uint32_t c0 = 32 / std::max(1u, bitWidth(t) / 8);
  return rowBox ? InnerBox{16, c0} : InnerBox{c0, 16};
}

/// Element offset of (r, c) in a rows x cols tile of this layout.
constexpr size_t elementOffset(BLayout b, SLayout s, InnerBox box, uint32_t rows, uint32_t cols,
                               uint32_t r, uint32_t c) {
  if (s == SLayout::NoneBox)
    return b == BLayout::RowMajor ? size_t{r} * cols + c : size_t{c} * rows + r;
  const uint32_t IR = box.rows, IC = box.cols, sr = r / IR, ir = r % IR, sc = c / IC, ic = c % IC;
  const size_t inumel = size_t{IR} * IC;
  if (b == BLayout::ColMajor && s == SLayout::RowMajor) // Nz
    return size_t{sc} * rows * IC + sr * inumel + ir * IC + ic;
  if (b == BLayout::RowMajor && s == SLayout::ColMajor) // Zn
    return size_t{sr} * cols * IR + sc * inumel + ic * IR + ir;
  if (b == BLayout::RowMajor && s == SLayout::RowMajor) // Zz
    return size_t{sr} * cols * IR + sc * inumel + ir * IC + ic;
  return size_t{sc} * rows * IC + sr * inumel + ic * IR + ir; // Nn
}

} // namespace pto::isa
