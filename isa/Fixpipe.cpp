// The fixpipe's quant modes and element computation (isa/Fixpipe.h).
#include "isa/Fixpipe.h"

#include "isa/Numerics.h"

#include <algorithm>
#include <cmath>

namespace pto::isa::fix {
namespace {

bool isB8(DType t) {
  return t == DType::I8 || t == DType::U8;
}

struct ModeRow {
  QuantPre q;
  QuantKind kind;
  std::string_view name;
};
constexpr ModeRow kModes[] = {
    {QuantPre::None, QuantKind::None, "NoQuant"},
    {QuantPre::F322F16, QuantKind::None, "F322F16"},
    {QuantPre::VReq8, QuantKind::Vector, "VREQ8"},
    {QuantPre::Req8, QuantKind::Scalar, "REQ8"},
    {QuantPre::VDeqF16, QuantKind::Vector, "VDEQF16"},
    {QuantPre::DeqF16, QuantKind::Scalar, "DEQF16"},
    {QuantPre::F322BF16, QuantKind::None, "F322BF16"},
    {QuantPre::VQF322B8, QuantKind::Vector, "VQF322B8_PRE"},
    {QuantPre::QF322B8, QuantKind::Scalar, "QF322B8_PRE"},
    {QuantPre::QF322F16, QuantKind::Scalar, "QF322F16_PRE"},
    {QuantPre::VQF322F16, QuantKind::Vector, "VQF322F16_PRE"},
    {QuantPre::QF322BF16, QuantKind::Scalar, "QF322BF16_PRE"},
    {QuantPre::QS322BF16, QuantKind::Scalar, "QS322BF16_PRE"},
    {QuantPre::VQS322BF16, QuantKind::Vector, "VQS322BF16_PRE"},
};

const ModeRow* row(QuantPre q) {
  for (const ModeRow& r : kModes)
    if (r.q == q) return &r;
  return nullptr;
}

/// ReLU as pto-isa defines it (x > 0 ? x : 0): NaN and -0 give +0.
double relu(double v) {
  return v > 0 ? v : 0.0;
}

/// The 8-bit modes: round (to nearest even) after adding the offset, clamp to the word's range.
uint64_t toB8(float r, const QuantWord& w, bool applyRelu) {
  float v = std::nearbyint(r + static_cast<float>(w.offset));
  if (std::isnan(v)) v = 0;
  v = std::clamp(v, w.isSigned ? -128.0f : 0.0f, w.isSigned ? 127.0f : 255.0f);
  if (applyRelu) v = static_cast<float>(relu(v));
  return static_cast<uint64_t>(static_cast<int64_t>(v)) & 0xFF;
}

} // namespace

std::optional<QuantPre> quantPreFor(DType src, DType dst, QuantKind kind) {
  const bool f32 = src == DType::F32, i32 = src == DType::I32;
  switch (kind) {
  case QuantKind::None:
    if (f32 && dst == DType::F16) return QuantPre::F322F16;
    if (f32 && dst == DType::BF16) return QuantPre::F322BF16;
    return QuantPre::None;
  case QuantKind::Scalar:
    if (f32 && isB8(dst)) return QuantPre::QF322B8;
    if (f32 && dst == DType::F16) return QuantPre::QF322F16;
    if (f32 && dst == DType::BF16) return QuantPre::QF322BF16;
    if (i32 && isB8(dst)) return QuantPre::Req8;
    if (i32 && dst == DType::F16) return QuantPre::DeqF16;
    if (i32 && dst == DType::BF16) return QuantPre::QS322BF16;
    return std::nullopt;
  case QuantKind::Vector:
    if (f32 && isB8(dst)) return QuantPre::VQF322B8;
    if (f32 && dst == DType::F16)
      return QuantPre::VQF322F16; // A5 (pto-isa's GetVectorPreQuantMode)
    if (i32 && isB8(dst)) return QuantPre::VReq8;
    if (i32 && dst == DType::F16) return QuantPre::VDeqF16;
    if (i32 && dst == DType::BF16) return QuantPre::VQS322BF16;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<QuantPre> quantPreOfCode(unsigned code) {
  for (const ModeRow& r : kModes)
    if (static_cast<unsigned>(r.q) == code) return r.q;
  return std::nullopt;
}

QuantKind kindOf(QuantPre q) {
  return row(q) ? row(q)->kind : QuantKind::None;
}
std::string_view name(QuantPre q) {
  return row(q) ? row(q)->name : "?";
}

unsigned stPhaseCode(StPhase p) {
  switch (p) {
  case StPhase::Unspecified:
    return 0;
  case StPhase::Partial:
    return 2;
  case StPhase::Final:
    return 3;
  }
  return 0;
}

std::optional<StPhase> stPhaseOfCode(unsigned code) {
  for (StPhase p : {StPhase::Unspecified, StPhase::Partial, StPhase::Final})
    if (stPhaseCode(p) == code) return p;
  return std::nullopt;
}

QuantWord decodeQuantWord(uint64_t word) {
  QuantWord w;
  w.scale = f32FromBits(static_cast<uint32_t>(word & 0xFFFFE000u));
  w.offset = static_cast<uint32_t>((word >> 37) & 0x1FF);
  w.isSigned = ((word >> 46) & 1) != 0;
  return w;
}

uint64_t apply(QuantPre q, DType src, DType dst, uint64_t srcBits, uint64_t word, bool applyRelu) {
  if (kindOf(q) == QuantKind::None) {
    // A plain move or cast: ReLU commutes with the (monotone) conversion, so it is applied to
    // the source and the conversion is TMOV/TSTORE's usual one.
    if (applyRelu && !(decodeToDouble(src, srcBits) > 0)) srcBits = 0;
    return src == dst ? srcBits : convert(src, dst, srcBits, RoundMode::CAST_RINT);
  }
  const QuantWord w = decodeQuantWord(word);
  // The acc element as f32 (an i32 rounds to nearest even), times the scale in f32.
  const float x = src == DType::I32
                      ? static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(srcBits)))
                      : f32FromBits(static_cast<uint32_t>(srcBits));
  float r = x * w.scale;
  if (isB8(dst)) return toB8(r, w, applyRelu);
  if (dst == DType::F16 && (q == QuantPre::DeqF16 || q == QuantPre::VDeqF16 || std::isfinite(r)))
    r = std::clamp(r, -65504.0f, 65504.0f); // DEQF16 always; QF322F16 keeps inf and NaN
  double v = r;
  if (applyRelu) v = relu(v);
  return encodeFromDouble(dst, v, RoundMode::CAST_RINT, SatMode::OFF);
}

uint64_t atomicAdd(DType t, uint64_t gmBits, uint64_t valueBits) {
  const unsigned bits = bitWidth(t);
  if (isFloat(t)) {
    if (t == DType::F32)
      return f32Bits(f32FromBits(static_cast<uint32_t>(gmBits)) +
                     f32FromBits(static_cast<uint32_t>(valueBits)));
    // f16/bf16: the sum of two such values is exact in a double; one rounding follows.
    return encodeFromDouble(t, decodeToDouble(t, gmBits) + decodeToDouble(t, valueBits),
                            RoundMode::CAST_RINT, SatMode::OFF);
  }
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return (gmBits + valueBits) & mask;
}

bool atomicAddType(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::I32:
  case DType::I16:
  case DType::I8:
    return true;
  default:
    return false;
  }
}

} // namespace pto::isa::fix
