// The scalar core's semantics for the toolchain: isa/ScalarSemantics.inc compiled in namespace
// pto::isa::scalar, and the ALU operations of isa/ScalarAlu.def with their dispatch. The runtime's
// interpreter, the FSU (isa/ScalarFp.h) and the C++ export's constant folding use these; the
// export embeds the same .inc text in every exported kernel, so both compute with one definition.
#pragma once

#include <cstdint>
#include <string_view>

namespace pto::isa {

/// The scalar ALU operations (isa/ScalarAlu.def).
enum class AluOp : uint8_t {
#define PTO_ALU_OP(Id, function, logical) Id,
#include "isa/ScalarAlu.def"
};

namespace scalar {
#define PTO_SCALAR_FN inline
#include "isa/ScalarSemantics.inc"
#undef PTO_SCALAR_FN

/// op(a, b), by the function isa/ScalarAlu.def names.
inline uint64_t alu(AluOp op, uint64_t a, uint64_t b) {
  switch (op) {
#define PTO_ALU_OP(Id, function, logical)                                                          \
  case AluOp::Id:                                                                                  \
    return function(a, b);
#include "isa/ScalarAlu.def"
  }
  return 0;
}
} // namespace scalar

/// The name of `op`'s function in ScalarSemantics.inc (what the C++ export calls).
constexpr std::string_view aluFunction(AluOp op) {
  switch (op) {
#define PTO_ALU_OP(Id, function, logical)                                                          \
  case AluOp::Id:                                                                                  \
    return #function;
#include "isa/ScalarAlu.def"
  }
  return "";
}

/// Whether `op` is logical: its SrcR transform 3 is .not rather than .neg.
constexpr bool isLogical(AluOp op) {
  switch (op) {
#define PTO_ALU_OP(Id, function, logical)                                                          \
  case AluOp::Id:                                                                                  \
    return logical;
#include "isa/ScalarAlu.def"
  }
  return false;
}

} // namespace pto::isa
