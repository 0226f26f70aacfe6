// pto.print's format (PTOAS's `cce::printf(format, scalar)`): one rule for the verifier, the
// runtime's image reader and the backends. A format is text with `%%` and at most one conversion
// of the printed scalar, `%[flags][width][.precision][length]conv` with flags of "-+ 0#", width
// and precision up to 64, a C length modifier (accepted, ignored: the scalar's own type decides)
// and conv d i u x X o for integers, f F e E g G a A for floats. The runtime formats through a
// spec it rebuilds from these parts, never through the text itself.
#pragma once

#include "isa/Isa.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pto::isa::print {

inline constexpr size_t kMaxFormatBytes = 256;

/// Why `format` cannot print a scalar of type `t` (nothing when it can).
std::optional<std::string> formatError(std::string_view format, DType t);

/// The text `format` prints for the scalar whose raw bits (zero-extended from its width) are
/// `bits`; `format` must have passed formatError for `t`. An empty format prints the value alone
/// (PTOAS's empty format is "%f"; an integer's is "%d").
std::string formatted(std::string_view format, DType t, uint64_t bits);

} // namespace pto::isa::print
