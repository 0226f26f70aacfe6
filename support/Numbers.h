// Checked number text: whole-string parsing with overflow detection, for every number a tool
// reads from a command line, a file header or source text (no std::stoll: it throws).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace pto::obj {

/// Decimal digits only ("0".."18446744073709551615"); nullopt for anything else or overflow.
inline std::optional<uint64_t> parseUnsigned(std::string_view s, int base = 10) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/// An optional '-' or '+' then decimal digits; nullopt for anything else or overflow.
inline std::optional<int64_t> parseSigned(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/// A whole decimal floating-point number (strtod syntax, also "inf" and "nan"); nullopt for
/// trailing characters, an empty string or a value out of the double range.
inline std::optional<double> parseDouble(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.front() == '\t' || s.front() == '\n') return std::nullopt;
  std::string text(s);
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  if (std::isinf(d) && text.find_first_of("iI") == std::string::npos) return std::nullopt; // 1e999
  return d;
}

/// Integers wider than 64 bits, so that every range from INT64_MIN to UINT64_MAX is exact.
__extension__ typedef __int128 WideInt;
__extension__ typedef unsigned __int128 WideUInt;

/// The one strict parser of integer command-line values (every tool's numeric options, --arg
/// integer scalars): an optional '+' or '-', then decimal digits or "0x" and hex digits; the
/// whole text (no space, '_', exponent or fraction), exact (never through a double), a
/// magnitude of at most 2^64 - 1. nullopt for anything else.
inline std::optional<WideInt> parseWideInteger(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  auto magnitude = parseUnsigned(s, base);
  if (!magnitude) return std::nullopt;
  const WideInt v = static_cast<WideInt>(*magnitude);
  return negative ? -v : v;
}

/// parseWideInteger within [lo, hi], else nullopt.
inline std::optional<WideInt> parseIntegerIn(std::string_view s, WideInt lo, WideInt hi) {
  auto v = parseWideInteger(s);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}

/// The decimal text of a WideInt (range messages).
inline std::string wideText(WideInt v) {
  const bool negative = v < 0;
  WideUInt m = negative ? static_cast<WideUInt>(-(v + 1)) + 1 : static_cast<WideUInt>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  return negative ? "-" + digits : digits;
}

/// a * b, or nullopt on signed overflow.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

} // namespace pto::obj
