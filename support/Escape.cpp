#include "support/Escape.h"

#include <cstdint>
#include <filesystem>

namespace pto::support {

/// One character of `s` at `i` as a terminal may safely show it, and its length in bytes: C0
/// controls, DEL, the C1 controls (U+0080..U+009F, U+009B among them: a one-character CSI) and
/// bytes that are not UTF-8 become escapes ("\x1b", "\u009b"), so a diagnostic never sends
/// escape sequences from the input to the terminal. Tabs stay (the caret line copies them).
std::pair<std::string, size_t> visibleChar(std::string_view s, size_t i) {
  static const char* hex = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(s[i]);
  auto byteEscape = [&] { return std::string("\\x") + hex[u >> 4] + hex[u & 15]; };
  if (u < 0x80) {
    if ((u < 0x20 && u != '\t') || u == 0x7f) return {byteEscape(), 1};
    return {std::string(1, s[i]), 1};
  }
  // A UTF-8 sequence: its length from the lead byte, continuation bytes, no overlong form, no
  // surrogate, at most U+10FFFF.
  const size_t n = u >= 0xf0 ? 4 : u >= 0xe0 ? 3 : u >= 0xc0 ? 2 : 0;
  if (n == 0 || i + n > s.size() || u > 0xf4) return {byteEscape(), 1};
  uint32_t cp = u & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return {byteEscape(), 1};
    cp = (cp << 6) | (c & 0x3f);
  }
  static const uint32_t minimum[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < minimum[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {byteEscape(), 1};
  if (cp <= 0x9f) {
    std::string e = "\\u00";
    e += hex[cp >> 4];
    e += hex[cp & 15];
    return {e, n};
  }
  return {std::string(s.substr(i, n)), n};
}

std::string visibleText(std::string_view s, bool keepNewlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (keepNewlines && s[i] == '\n') {
      out += '\n';
      ++i;
      continue;
    }
    auto [v, n] = visibleChar(s, i);
    out += v;
    i += n;
  }
  return out;
}

std::string cppStringLiteral(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '"' && c != '\\' && c != '?') {
      out += c;
      continue;
    }
    // Three octal digits always: a digit after the escape cannot extend it.
    out += '\\';
    out += static_cast<char>('0' + (u >> 6));
    out += static_cast<char>('0' + ((u >> 3) & 7));
    out += static_cast<char>('0' + (u & 7));
  }
  return out + "\"";
}

std::string cppCommentText(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    const bool trigraph = s[i] == '?' && i > 0 && s[i - 1] == '?';
    if (u >= 0x20 && u < 0x7f && s[i] != '\\' && !trigraph) {
      out += s[i];
      continue;
    }
    out += "\\x";
    out += hex[u >> 4];
    out += hex[u & 15];
  }
  return out;
}

bool isSafeFileName(std::string_view name) {
  if (name.empty() || name.size() > 200 || name[0] == '.' || name[0] == '-') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '-' || c == '+'))
      return false;
  return true;
}

std::optional<std::string> safePathIn(const std::string& dir, std::string_view name,
                                      std::string_view ext, const std::string& what,
                                      std::string& err) {
  namespace fs = std::filesystem;
  if (!isSafeFileName(name)) {
    err = what + " is not a safe file name (1 to 200 letters, digits, '_', '.', '+' or '-', not "
                 "starting with '.' or '-')";
    return std::nullopt;
  }
  const fs::path path = fs::path(dir) / (std::string(name) + std::string(ext));
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) {
    err = "--out-dir '" + visibleText(dir) + "': " + ec.message();
    return std::nullopt;
  }
  // An entry already there that is a symbolic link (or a link chain) must resolve inside too.
  const fs::path real = fs::weakly_canonical(path, ec);
  if (ec || real.parent_path() != root) {
    err = what + ": '" + visibleText(path.string()) + "' leads outside the directory '" +
          visibleText(dir) + "'";
    return std::nullopt;
  }
  return path.string();
}

std::optional<std::string> mlirStringValue(std::string_view q) {
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') return std::nullopt;
  std::string out;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 1; i + 1 < q.size(); ++i) {
    if (q[i] != '\\') {
      out += q[i];
      continue;
    }
    if (i + 2 >= q.size()) return std::nullopt; // a backslash before the closing quote
    const char e = q[++i];
    if (e == '"' || e == '\\')
      out += e;
    else if (e == 'n')
      out += '\n';
    else if (e == 't')
      out += '\t';
    else if (i + 2 < q.size() && hex(e) >= 0 && hex(q[i + 1]) >= 0)
      out += static_cast<char>(hex(e) * 16 + hex(q[++i]));
    else
      return std::nullopt;
  }
  return out;
}

} // namespace pto::support
