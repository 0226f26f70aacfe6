// .npy (NumPy format 1.0/2.0/3.0) and raw binary I/O for runtime tensors.
// Element types map to numpy dtypes as follows (docs/runtime.md, ".npy files"):
//   f32 <f4, f64 <f8, f16 <f2 (numpy float16), bf16 <u2 (raw bits: numpy has no bfloat16),
//   i8..i64 |i1 <i2 <i4 <i8, u8..u64 |u1 <u2 <u4 <u8, i1 |b1, fp8/hif8/e8m0 |u1 (raw bits),
//   packed 4-bit types |u1 (two elements per byte, element 2k in the low nibble).
// Reading accepts little-endian C-order arrays of those dtypes (and '>' for 1-byte types).
#pragma once

#include "runtime/Runtime.h"

#include <string>

namespace pto::rt {

/// The numpy descr for an element type ("<f4", "<u2" for bf16...).
std::string npyDescr(isa::DType t);
/// Serializes a tensor as .npy bytes.
std::vector<uint8_t> toNpy(const Tensor& t);
/// Parses .npy bytes. The tensor's dtype follows the descr (<u2 reads as ui16, <f2 as f16);
/// callers retag it when the element width matches (see retag()).
Result<Tensor> fromNpy(const std::vector<uint8_t>& bytes, const std::string& name);

Result<Tensor> readNpy(const std::string& path);
Status writeNpy(const std::string& path, const Tensor& t);
/// Raw little-endian element data with a given shape and type.
Result<Tensor> readRaw(const std::string& path, isa::DType t, std::vector<int64_t> shape);

/// Reinterprets the elements as `t` when the element widths agree (bits unchanged).
bool retag(Tensor& x, isa::DType t);

/// Parses "64x64" (or "64,64"; "" or "1" for a single element).
std::optional<std::vector<int64_t>> parseShape(std::string_view s);

} // namespace pto::rt
