// The fixpipe post-processing of TMOV/TSTORE from an acc tile (docs/language.md "Fixpipe
// attributes", docs/encoding.md 5.3): pre-quantisation, pre-ReLU, atomic add, store phase and
// the acc-to-vector mode. One definition of the quant modes and of the element computation,
// used by the assembler (which mode a block names), the runtime and the reference interpreter.
#pragma once

#include "isa/Isa.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace pto::isa::fix {

/// pto-isa's QuantMode_t codes (include/pto/npu/*/common.hpp), which are also the values of the
/// 0.58.3 B.FPATR PreQuantMode field. Cast modes convert only; scalar modes take the quant word
/// from a register; vector modes take one word per column from the fp (scaling) tile.
enum class QuantPre : uint8_t {
  None = 0,
  F322F16 = 1,     // cast f32 -> f16
  VReq8 = 2,       // i32 -> i8/u8, vector
  Req8 = 3,        // i32 -> i8/u8, scalar
  VDeqF16 = 4,     // i32 -> f16, vector
  DeqF16 = 5,      // i32 -> f16, scalar
  F322BF16 = 16,   // cast f32 -> bf16
  VQF322B8 = 23,   // f32 -> i8/u8, vector
  QF322B8 = 24,    // f32 -> i8/u8, scalar
  QF322F16 = 32,   // f32 -> f16, scalar
  VQF322F16 = 33,  // f32 -> f16, vector (A5)
  QF322BF16 = 34,  // f32 -> bf16, scalar
  QS322BF16 = 35,  // i32 -> bf16, scalar
  VQS322BF16 = 36, // i32 -> bf16, vector
};

enum class QuantKind : uint8_t { None, Scalar, Vector };

/// The mode pto-isa's NPU code picks for a source/destination pair (GetCastPreQuantMode,
/// GetScalarPreQuantMode, GetVectorPreQuantMode); nullopt when the pair has none of that kind
/// (a cast pair without conversion gives None).
std::optional<QuantPre> quantPreFor(DType src, DType dst, QuantKind kind);
/// The mode of a B.FPATR PreQuantMode code, and its kind; nullopt for codes not executed here.
std::optional<QuantPre> quantPreOfCode(unsigned code);
QuantKind kindOf(QuantPre q);
std::string_view name(QuantPre q); // "REQ8", "QF322B8_PRE", ...

/// The attributes of one TMOV/TSTORE block.
struct Attrs {
  QuantPre quant = QuantPre::None;
  ReluPreMode relu = ReluPreMode::NoRelu;
  AtomicType atomic = AtomicType::None;
  StPhase phase = StPhase::Unspecified;
  AccToVecMode accToVec = AccToVecMode::SingleVec0;
  bool operator==(const Attrs&) const = default;
  /// Whether B.FPATR / B.XATR carry anything (the default block has neither word).
  bool needsFpatr() const { return quant != QuantPre::None || relu != ReluPreMode::NoRelu; }
  bool needsXatr() const {
    return atomic != AtomicType::None || phase != StPhase::Unspecified ||
           accToVec != AccToVecMode::SingleVec0;
  }
};

/// B.XATR StPhase field: pto-isa's unit-flag control values (0, 2, 3).
unsigned stPhaseCode(StPhase p);
std::optional<StPhase> stPhaseOfCode(unsigned code);

/// The quant word (QUANT_PRE register, or one 64-bit element of the fp tile), as read here:
/// scale = the f32 whose bits are word[31:13] followed by 13 zero bits; offset = word[45:37]
/// (unsigned, added before rounding in the 8-bit modes); signed = word[46] (8-bit modes: the
/// result range is -128..127 when set, 0..255 when clear).
struct QuantWord {
  float scale = 1.0f;
  uint32_t offset = 0;
  bool isSigned = false;
};
QuantWord decodeQuantWord(uint64_t word);

/// One element through the fixpipe: the acc element `srcBits` (f32 or i32) converted to `dst`
/// by `q` with the quant word `word` (ignored by cast modes and None), then the ReLU when
/// `relu`. Returns the destination's bits.
uint64_t apply(QuantPre q, DType src, DType dst, uint64_t srcBits, uint64_t word, bool relu);

/// Atomic add of the stored value into the GM element, both of type `t`: floats add with one
/// rounding to nearest even, integers wrap modulo 2^bits.
uint64_t atomicAdd(DType t, uint64_t gmBits, uint64_t valueBits);
/// The GM element types atomic add takes (pto-isa's SetAtomicAdd): f32 f16 bf16 i32 i16 i8.
bool atomicAddType(DType t);

} // namespace pto::isa::fix
