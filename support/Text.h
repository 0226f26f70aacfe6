// Number text shared by every room: the hex spellings of tools and diagnostics, and the integer
// literals of the assembly syntaxes. Header-only, below isa/ in the room graph
// (docs/development.md).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace pto::support {

/// "0x1f": lower-case hex with the prefix (addresses and offsets in messages and listings).
inline std::string hex0x(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

/// "001f" for digits = 4: lower-case hex, zero-padded, no prefix (listing columns).
inline std::string hexDigits(uint64_t v, int digits) {
  char b[40];
  std::snprintf(b, sizeof b, "%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

/// The length of the leading run of ASCII bytes of `s`: all of it for most sources. Eight
/// bytes are tested at once, a few instructions for what byte by byte took forty.
inline size_t asciiPrefix(std::string_view s) {
  size_t i = 0;
  for (uint64_t word; i + 8 <= s.size(); i += 8) {
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080u) break;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80)
    ++i;
  return i;
}

/// ASCII case-insensitive equality (mnemonics and enum words).
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

/// An integer literal of the assembly syntaxes: optional sign, decimal or 0x-hex, the whole
/// text. Hex literals are bit patterns (0xFFFFFFFFFFFFFFFF is -1); decimals must fit in int64
/// (-9223372036854775808 included).
inline std::optional<int64_t> parseInt(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  // A decimal fits in int64: up to 2^63 - 1, or 2^63 itself when negative (INT64_MIN).
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (neg ? 1 : 0);
  if (base == 10 && v > limit) return std::nullopt;
  const int64_t r = static_cast<int64_t>(v);
  return neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(r)) : r;
}

} // namespace pto::support
