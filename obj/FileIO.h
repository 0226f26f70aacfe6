// Writing tool outputs: through a temporary file renamed into place, so that a failed run
// never leaves a partial or stale output behind (pto-as, pto-ld).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pto::obj {

/// Writes `data` to `path` atomically ("-" is standard output). Returns an error message on
/// failure, and then `path` is untouched.
std::optional<std::string> writeFileAtomically(const std::string& path, std::string_view data);

} // namespace pto::obj
