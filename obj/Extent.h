// Buffer extents of pointer parameters (docs/object-format.md, ".pto.extents"): how many
// elements a kernel may touch through each pointer parameter, as a small expression over the
// function's integer scalar parameters, so that a runtime can size the buffers itself.
//
//   extent := sum
//   sum    := product (('+' | '-') product)*
//   product:= factor ('*' factor)*
//   factor := INTEGER | '%' NAME | 'max' '(' sum (',' sum)* ')' | '(' sum ')'
//
// e.g. "8192", "64*%n+1", "max(128*%rows,4096)". The assembler writes the expression
// (asm/codegen/RecordExtents.cpp); objects and images carry it; pto-run evaluates it.
#pragma once

#include "obj/Object.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pto::obj {

/// Checks the syntax of an extent expression; returns the error or nothing. `names` gets the
/// parameter names it refers to (without '%').
std::optional<std::string> checkExtent(std::string_view expr,
                                       std::vector<std::string>* names = nullptr);

/// Evaluates an extent; `lookup` gives the value of a scalar parameter (nullopt: unknown).
/// Errors (syntax, an unknown parameter, overflow) are messages.
std::variant<int64_t, std::string>
evalExtent(std::string_view expr,
           const std::function<std::optional<int64_t>(const std::string&)>& lookup);

namespace detail {
class StrTab;
/// The .pto.extents section of a list of functions (empty when no parameter has an extent).
std::vector<uint8_t> writeExtents(const std::vector<Function>& fns, StrTab& strs);
/// Reads .pto.extents into the parameters of `fns`: every record must name a pointer parameter
/// of an existing function, and its expression must parse and name only integer scalar
/// parameters of that function.
Error readExtents(const std::vector<uint8_t>& section, const std::vector<uint8_t>& strtab,
                  std::vector<Function>& fns);
} // namespace detail

} // namespace pto::obj
