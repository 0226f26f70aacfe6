// Numeric command-line options of every tool, read by the one strict parser of support/Numbers.h
// (parseIntegerIn): decimal or 0x-hex integers, the whole text, exact, within the option's range.
// CLI11's own conversion accepted "-1" for an unsigned (wrapping it), " 2" and numbers beyond
// the type's range (saturating them).
#pragma once

#include "support/Numbers.h"

#include <CLI/CLI.hpp>

#include <limits>
#include <string>

namespace pto::tools {

/// The message of a value outside [lo, hi]: "--blocks: '0' is not an integer from 1 to 4294967295".
inline std::string integerOptionError(const std::string& flag, const std::string& text,
                                      obj::WideInt lo, obj::WideInt hi) {
  return flag + ": '" + text + "' is not an integer from " + obj::wideText(lo) + " to " +
         obj::wideText(hi);
}

/// Adds the option `names` (CLI11 spelling, e.g. "--blocks") storing an integer of type T in
/// [lo, hi] (default: T's range) into `value`; anything else is a parse error naming the option.
template <typename T>
CLI::Option* addIntegerOption(CLI::App& app, const std::string& names, T& value,
                              const std::string& description,
                              obj::WideInt lo = std::numeric_limits<T>::min(),
                              obj::WideInt hi = std::numeric_limits<T>::max()) {
  const std::string flag =
      names.substr(names.rfind(',') == std::string::npos ? 0 : names.rfind(',') + 1);
  return app.add_option_function<std::string>(
      names,
      [&value, flag, lo, hi](const std::string& text) {
        auto v = obj::parseIntegerIn(text, lo, hi);
        if (!v) throw CLI::ValidationError(integerOptionError(flag, text, lo, hi));
        value = static_cast<T>(*v);
      },
      description);
}

} // namespace pto::tools
