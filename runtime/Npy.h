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
/// Writes through obj::writeOutputFile (atomic, checked); `inputs` are files the output must
/// not replace.
Status writeNpy(const std::string& path, const Tensor& t,
                const std::vector<std::string>& inputs = {});
/// Raw little-endian element data with a given shape and type.
Result<Tensor> readRaw(const std::string& path, isa::DType t, std::vector<int64_t> shape);

/// Reinterprets the elements as `t` when the element widths agree (bits unchanged). Only for an
/// explicit request (pto-npy print --dtype); data for a kernel goes through adoptDType.
bool retag(Tensor& x, isa::DType t);

/// Gives data read for a parameter of element type `t` that type: it must hold `t` already, or
/// be the raw-bits carrier .npy files use for `t` (<u2 for bf16, |u1 for the 8-bit float and
/// packed 4-bit types). Anything else (i32 data for an f32 parameter) is an error that says how
/// to convert; the bits are never reinterpreted silently. `param` names the parameter.
Status adoptDType(Tensor& x, isa::DType t, const std::string& param);

/// The largest host buffer a tool makes (4 GiB).
inline constexpr uint64_t kMaxTensorBytes = uint64_t{4} << 30;

/// A zero tensor, after checking the shape: no negative dimension, no overflow, at most
/// kMaxTensorBytes. `what` names the tensor in the message.
Result<Tensor> makeTensor(isa::DType t, std::vector<int64_t> shape, const std::string& what);

/// Parses "64x64" (or "64,64"; "" or "1" for a single element). `why`, when given, says what
/// is wrong (a dimension too large, a bad character).
std::optional<std::vector<int64_t>> parseShape(std::string_view s, std::string* why = nullptr);

} // namespace pto::rt
