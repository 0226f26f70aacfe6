#include "isa/PrintFormat.h"

#include "isa/Numerics.h"

#include <cstdio>

namespace pto::isa::print {
namespace {

/// One conversion: its position in the format and its parts.
struct Spec {
  size_t begin = 0, end = 0; // [begin, end) in the format
  std::string flags;
  int width = -1, precision = -1;
  char conv = 0;
};

bool isIntConv(char c) {
  return std::string_view("diuxXo").find(c) != std::string_view::npos;
}
bool isFloatConv(char c) {
  return std::string_view("fFeEgGaA").find(c) != std::string_view::npos;
}

/// Reads the conversion at format[i] == '%' (not "%%"); nothing with `why` set when malformed.
std::optional<Spec> readSpec(std::string_view f, size_t i, std::string& why) {
  Spec s;
  s.begin = i++;
  while (i < f.size() && std::string_view("-+ 0#").find(f[i]) != std::string_view::npos)
    s.flags += f[i++];
  auto number = [&](int& out) {
    if (i >= f.size() || f[i] < '0' || f[i] > '9') return true;
    int v = 0;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
      v = v * 10 + (f[i++] - '0');
      if (v > 64) return false;
    }
    out = v;
    return true;
  };
  if (!number(s.width)) return why = "a width above 64", std::nullopt;
  if (i < f.size() && f[i] == '.') {
    ++i;
    s.precision = 0;
    if (!number(s.precision)) return why = "a precision above 64", std::nullopt;
  }
  for (std::string_view len : {"hh", "ll", "h", "l", "j", "z", "t", "L"})
    if (f.substr(i, len.size()) == len) {
      i += len.size();
      break;
    }
  if (i >= f.size()) return why = "a conversion without its letter", std::nullopt;
  s.conv = f[i++];
  if (!isIntConv(s.conv) && !isFloatConv(s.conv))
    return why = std::string("the conversion '%") + s.conv + "'", std::nullopt;
  s.end = i;
  return s;
}

/// The one conversion of a valid format, if any.
std::optional<Spec> conversionOf(std::string_view f, std::string& why, bool& bad) {
  std::optional<Spec> found;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') continue;
    if (i + 1 < f.size() && f[i + 1] == '%') {
      ++i;
      continue;
    }
    auto s = readSpec(f, i, why);
    if (!s) return bad = true, std::nullopt;
    if (found)
      return why = "more than one conversion (it prints one scalar)", bad = true, std::nullopt;
    found = s;
    i = s->end - 1;
  }
  return found;
}

/// The literal text of f[begin, end), "%%" as "%".
std::string literal(std::string_view f, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    out += f[i];
    if (f[i] == '%' && i + 1 < end && f[i + 1] == '%') ++i;
  }
  return out;
}

} // namespace

std::optional<std::string> formatError(std::string_view format, DType t) {
  if (format.size() > kMaxFormatBytes)
    return "a format of " + std::to_string(format.size()) + " bytes (at most " +
           std::to_string(kMaxFormatBytes) + ")";
  for (char c : format)
    if (c == '\0') return std::string("a format with a NUL byte");
  std::string why;
  bool bad = false;
  const auto spec = conversionOf(format, why, bad);
  if (bad) return "a format with " + why;
  if (!spec) return std::nullopt;
  const bool isFloatType = isFloat(t);
  if (isFloatType && !isFloatConv(spec->conv))
    return std::string("'%") + spec->conv + "' for a " + std::string(spelling(t)) +
           " value (a float prints with f, e, g or a)";
  if (!isFloatType && !isIntConv(spec->conv))
    return std::string("'%") + spec->conv + "' for a " + std::string(spelling(t)) +
           " value (an integer prints with d, i, u, x or o)";
  return std::nullopt;
}

std::string formatted(std::string_view format, DType t, uint64_t bits) {
  std::string why;
  bool bad = false;
  std::optional<Spec> spec = conversionOf(format, why, bad);
  if (bad) return std::string(format); // callers check formatError first
  const unsigned width = bitWidth(t);
  const bool floatType = isFloat(t);
  std::string fmt = std::string(format);
  if (format.empty()) {
    fmt = floatType ? "%f" : "%d";
    spec = conversionOf(fmt, why, bad);
  }
  if (!spec) return literal(fmt, 0, fmt.size());
  // The spec rebuilt from its validated parts, with the length the value is passed with.
  std::string c = "%" + spec->flags;
  if (spec->width >= 0) c += std::to_string(spec->width);
  if (spec->precision >= 0) c += "." + std::to_string(spec->precision);
  // Enough for any validated spec: %f of the largest double with precision 64 is 375 bytes.
  char buf[512];
  if (floatType) {
    c += spec->conv;
    const double v = decodeToDouble(t, bits);
    std::snprintf(buf, sizeof buf, c.c_str(), v);
  } else {
    c += "ll";
    c += spec->conv;
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    const uint64_t u = bits & mask;
    const bool signedConv = spec->conv == 'd' || spec->conv == 'i';
    if (signedConv && info(t).kind == DTypeKind::SInt && width < 64 && (u >> (width - 1)) & 1)
      std::snprintf(buf, sizeof buf, c.c_str(), static_cast<long long>(u | ~mask));
    else if (signedConv)
      std::snprintf(buf, sizeof buf, c.c_str(), static_cast<long long>(u));
    else
      std::snprintf(buf, sizeof buf, c.c_str(), static_cast<unsigned long long>(u));
  }
  return literal(fmt, 0, spec->begin) + buf + literal(fmt, spec->end, fmt.size());
}

} // namespace pto::isa::print
