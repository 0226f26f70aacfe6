// Extent expressions of pointer parameters and the .pto.extents table (obj/Extent.h).
#include "obj/Extent.h"

#include "obj/Binary.h"

#include <cctype>
#include <limits>

namespace pto::obj {

namespace {

constexpr uint32_t kExtentsMagic = 0x58495450; // "PTIX"
constexpr uint32_t kExtentRecord = 16;         // function, parameter, flags, expression
constexpr uint32_t kExtentIndexValues = 1;

using Lookup = std::function<std::optional<int64_t>(const std::string&)>;

/// Recursive-descent parser and evaluator; with no lookup it only checks the syntax.
class Parser {
public:
  Parser(std::string_view s, const Lookup* lookup, std::vector<std::string>* names)
      : s_(s), lookup_(lookup), names_(names) {}

  std::optional<int64_t> parse() {
    auto v = sum();
    skip();
    if (v && pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return v;
  }
  const std::string& error() const { return err_; }

private:
  std::string_view s_;
  size_t pos_ = 0;
  const Lookup* lookup_;
  std::vector<std::string>* names_;
  std::string err_;
  int depth_ = 0;

  std::nullopt_t fail(const std::string& m) {
    if (err_.empty()) err_ = "extent '" + std::string(s_) + "': " + m;
    return std::nullopt;
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ')
      ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> checked(__int128 v) {
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
      return fail("overflow");
    return static_cast<int64_t>(v);
  }
  std::optional<int64_t> sum() {
    auto v = product();
    while (v) {
      if (eat('+')) {
        auto r = product();
        if (!r) return std::nullopt;
        v = checked(static_cast<__int128>(*v) + *r);
      } else if (eat('-')) {
        auto r = product();
        if (!r) return std::nullopt;
        v = checked(static_cast<__int128>(*v) - *r);
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<int64_t> product() {
    auto v = factor();
    while (v && eat('*')) {
      auto r = factor();
      if (!r) return std::nullopt;
      v = checked(static_cast<__int128>(*v) * *r);
    }
    return v;
  }
  std::optional<int64_t> factor() {
    if (++depth_ > 64) return fail("nested too deeply");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    skip();
    if (pos_ >= s_.size()) return fail("unexpected end");
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      __int128 v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + (s_[pos_++] - '0');
        if (v > std::numeric_limits<int64_t>::max()) return fail("overflow");
      }
      return static_cast<int64_t>(v);
    }
    if (c == '%') {
      size_t start = ++pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                  s_[pos_] == '_' || s_[pos_] == '.'))
        ++pos_;
      if (start == pos_) return fail("a parameter name must follow '%'");
      std::string name(s_.substr(start, pos_ - start));
      if (names_) names_->push_back(name);
      if (!lookup_) return 0;
      auto v = (*lookup_)(name);
      if (!v) return fail("the value of %" + name + " is not known");
      return v;
    }
    if (c == '(') {
      ++pos_;
      auto v = sum();
      if (v && !eat(')')) return fail("expected ')'");
      return v;
    }
    if (s_.substr(pos_, 3) == "max") {
      pos_ += 3;
      if (!eat('(')) return fail("expected '(' after max");
      auto v = sum();
      while (v && eat(',')) {
        auto r = sum();
        if (!r) return std::nullopt;
        v = std::max(*v, *r);
      }
      if (v && !eat(')')) return fail("expected ')'");
      return v;
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }
};

} // namespace

std::optional<std::string> checkExtent(std::string_view expr, std::vector<std::string>* names) {
  Parser p(expr, nullptr, names);
  if (!p.parse()) return p.error();
  return std::nullopt;
}

std::variant<int64_t, std::string> evalExtent(std::string_view expr, const Lookup& lookup) {
  Parser p(expr, &lookup, nullptr);
  auto v = p.parse();
  if (!v) return p.error();
  return *v;
}

namespace detail {

std::vector<uint8_t> writeExtents(const std::vector<Function>& fns, StrTab& strs) {
  size_t count = 0;
  for (const Function& f : fns)
    for (const Param& p : f.params)
      count += !p.extent.empty() || p.indexValues;
  if (count == 0) return {};
  Out o;
  o.header(kExtentsMagic, kExtentRecord, count);
  for (size_t f = 0; f < fns.size(); ++f)
    for (size_t i = 0; i < fns[f].params.size(); ++i) {
      const Param& p = fns[f].params[i];
      if (p.extent.empty() && !p.indexValues) continue;
      o.u32(static_cast<uint32_t>(f));
      o.u32(static_cast<uint32_t>(i));
      o.u32(p.indexValues ? kExtentIndexValues : 0);
      o.u32(strs.add(p.extent));
    }
  return o.bytes;
}

Error readExtents(const std::vector<uint8_t>& section, const std::vector<uint8_t>& strtab,
                  std::vector<Function>& fns) {
  In in(section.data(), section.size(), ".pto.extents");
  uint32_t count = in.header(kExtentsMagic, kExtentRecord);
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    uint32_t f = in.u32(), k = in.u32(), flags = in.u32();
    auto expr = strAt(strtab, in.u32());
    std::string what = "extent record " + std::to_string(i);
    if (!expr)
      in.fail(what + " has a bad expression offset");
    else if (f >= fns.size())
      in.fail(what + " names a missing function");
    else if (k >= fns[f].params.size())
      in.fail(what + " names a missing parameter of '" + fns[f].name + "'");
    else if (fns[f].params[k].kind != ParamKind::Pointer)
      in.fail(what + ": parameter '" + fns[f].params[k].name + "' of '" + fns[f].name +
              "' is not a pointer");
    else if (flags & ~kExtentIndexValues)
      in.fail(what + " has unknown flags");
    if (!in.ok()) break;
    std::vector<std::string> names;
    if (!expr->empty()) {
      if (auto e = checkExtent(*expr, &names)) {
        in.fail(what + ": " + *e);
        break;
      }
    }
    for (const std::string& n : names) {
      bool found = false;
      for (const Param& p : fns[f].params)
        found |= p.name == n && (p.kind == ParamKind::Index ||
                                 (p.kind == ParamKind::Scalar && isa::isInteger(p.dtype)));
      if (!found)
        in.fail(what + ": %" + n + " is not an integer scalar parameter of '" + fns[f].name + "'");
    }
    fns[f].params[k].extent = *expr;
    fns[f].params[k].indexValues = flags & kExtentIndexValues;
  }
  if (!in.ok()) return in.error();
  return std::nullopt;
}

} // namespace detail

} // namespace pto::obj
