// Interned strings: one stored copy per distinct text for the life of the process, and a handle
// of one pointer. Object and image records that repeat a few names a million times (a line
// entry's source file, a call relocation's callee) hold a handle instead of a std::string: 8
// bytes instead of 32 plus the text, and records copied between objects (the linker's merged
// line table) stay valid whichever object is freed first. Handles compare by pointer.
#pragma once

#include <compare>
#include <ostream>
#include <string>
#include <string_view>

namespace pto::support {

class InternedString {
public:
  InternedString() = default;
  InternedString(std::string_view text) : text_(intern(text)) {} // NOLINT: implicit by design
  InternedString(const std::string& text) : InternedString(std::string_view(text)) {}
  InternedString(const char* text) : InternedString(std::string_view(text)) {}

  const std::string& str() const { return text_ ? *text_ : emptyText(); }
  operator const std::string&() const { return str(); }
  operator std::string_view() const { return str(); }
  const char* c_str() const { return str().c_str(); }
  size_t size() const { return str().size(); }
  bool empty() const { return text_ == nullptr; }

  bool operator==(const InternedString& other) const { return text_ == other.text_; }
  bool operator==(std::string_view other) const { return str() == other; }
  std::strong_ordering operator<=>(const InternedString& other) const {
    return str().compare(other.str()) <=> 0;
  }

private:
  // The empty text is the null handle, so that a default record needs no look-up.
  static const std::string* intern(std::string_view text);
  static const std::string& emptyText();
  const std::string* text_ = nullptr;
};

inline std::string operator+(const InternedString& a, std::string_view b) {
  std::string s = a.str();
  s += b;
  return s;
}
inline std::string operator+(std::string_view a, const InternedString& b) {
  std::string s(a);
  s += b.str();
  return s;
}
inline std::ostream& operator<<(std::ostream& os, const InternedString& s) {
  return os << s.str();
}

} // namespace pto::support
