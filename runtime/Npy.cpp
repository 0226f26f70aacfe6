#include "runtime/Npy.h"

#include "support/FileIO.h"
#include "support/Numbers.h"

#include <cctype>
#include <sstream>

namespace pto::rt {

std::string npyDescr(isa::DType t) {
  using isa::DType;
  switch (t) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::I1:
    return "|b1";
  default:
    break;
  }
  switch (isa::bitWidth(t)) {
  case 16:
    return "<u2"; // bf16: raw bits
  case 32:
    return "<u4";
  case 64:
    return "<u8";
  default:
    return "|u1"; // 8-bit float formats and packed 4-bit types: raw bytes
  }
}

static std::optional<isa::DType> dtypeOfDescr(std::string d) {
  using isa::DType;
  if (d.size() == 3 && d[0] == '>' && d[2] == '1') d[0] = '|';
  if (d.size() == 3 && d[0] == '<' && d[2] == '1') d[0] = '|';
  static const std::pair<const char*, DType> table[] = {
      {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16}, {"|i1", DType::I8},
      {"<i2", DType::I16}, {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},
      {"<u2", DType::U16}, {"<u4", DType::U32}, {"<u8", DType::U64}, {"|b1", DType::I1}};
  for (auto& [s, t] : table)
    if (d == s) return t;
  return std::nullopt;
}

std::vector<uint8_t> toNpy(const Tensor& t) {
  // The shape as Python's repr of a tuple, as numpy.save writes it: (64, 64), (8,), ().
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1) shape += ",";
  if (isa::bitWidth(t.dtype) == 4)
    shape = "(" + std::to_string(t.data.size()) + ","; // packed 4-bit: bytes
  shape += ")";
  std::string header =
      "{'descr': '" + npyDescr(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

namespace {

/// The header dictionary of a .npy file, read as numpy's format specifies it
/// (numpy.lib.format): a Python dict literal with exactly the keys 'descr' (a string),
/// 'fortran_order' (True or False) and 'shape' (a tuple of non-negative integers), then only
/// spaces and the final '\n'. Anything else is an error saying what.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

class HeaderReader {
public:
  explicit HeaderReader(std::string_view h) : h_(h) {}

  std::optional<std::string> read(NpyHeader& out) {
    skip();
    if (!eat('{')) return "the header is not a dict";
    bool descr = false, fortran = false, shape = false;
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!string(key)) return "expected a quoted key in the header dict";
      skip();
      if (!eat(':')) return "expected ':' after '" + key + "'";
      skip();
      if (key == "descr" && !descr) {
        descr = true;
        if (!string(out.descr)) return "'descr' is not a string";
      } else if (key == "fortran_order" && !fortran) {
        fortran = true;
        if (word("True"))
          out.fortran = true;
        else if (!word("False"))
          return "'fortran_order' is not True or False";
      } else if (key == "shape" && !shape) {
        shape = true;
        if (auto e = tuple(out.shape)) return e;
      } else {
        return (descr && key == "descr") || (fortran && key == "fortran_order") ||
                       (shape && key == "shape")
                   ? "the key '" + key + "' appears twice"
                   : "unexpected key '" + key + "' (numpy writes descr, fortran_order, shape)";
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return "expected ',' or '}' in the header dict";
    }
    if (!descr || !fortran || !shape)
      return std::string("the header has no '") +
             (!descr     ? "descr"
              : !fortran ? "fortran_order"
                         : "shape") +
             "'";
    while (i_ < h_.size() && h_[i_] == ' ')
      ++i_;
    if (i_ + 1 != h_.size() || h_[i_] != '\n')
      return "the header does not end in spaces and a newline after the dict";
    return std::nullopt;
  }

private:
  void skip() {
    while (i_ < h_.size() && (h_[i_] == ' ' || h_[i_] == '\t' || h_[i_] == '\n'))
      ++i_;
  }
  bool eat(char c) {
    if (i_ < h_.size() && h_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (h_.substr(i_, w.size()) != w) return false;
    const size_t end = i_ + w.size();
    if (end < h_.size() && (std::isalnum(static_cast<unsigned char>(h_[end])) || h_[end] == '_'))
      return false;
    i_ = end;
    return true;
  }
  /// A Python string literal in ' or " of printable characters without escapes.
  bool string(std::string& out) {
    if (i_ >= h_.size() || (h_[i_] != '\'' && h_[i_] != '"')) return false;
    const char q = h_[i_];
    const size_t end = h_.find(q, i_ + 1);
    if (end == std::string_view::npos) return false;
    out.assign(h_.substr(i_ + 1, end - i_ - 1));
    for (char c : out)
      if (c == '\\' || c < 0x20 || c == 0x7f) return false;
    i_ = end + 1;
    return true;
  }
  /// (), (n,), (a, b), (a, b,): non-negative decimal integers, at most 12 digits each.
  std::optional<std::string> tuple(std::vector<int64_t>& out) {
    const std::string bad = "'shape' is not a tuple of non-negative integers";
    if (!eat('(')) return bad;
    skip();
    if (eat(')')) return std::nullopt;
    for (;;) {
      skip();
      const size_t start = i_;
      while (i_ < h_.size() && h_[i_] >= '0' && h_[i_] <= '9')
        ++i_;
      if (i_ == start || i_ - start > 12) return bad;
      out.push_back(static_cast<int64_t>(*obj::parseUnsigned(h_.substr(start, i_ - start))));
      skip();
      const bool comma = eat(',');
      skip();
      if (eat(')')) {
        if (out.size() == 1 && !comma) return bad; // (4) is an int, not a tuple
        return std::nullopt;
      }
      if (!comma) return bad;
    }
  }

  std::string_view h_;
  size_t i_ = 0;
};

} // namespace

Result<Tensor> fromNpy(const std::vector<uint8_t>& b, const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Error{name + ": error: not a supported .npy file: " + why};
  };
  if (b.size() < 10 || b[0] != 0x93 || std::string(b.begin() + 1, b.begin() + 6) != "NUMPY")
    return bad("bad magic");
  size_t hlen, hoff;
  if (b[7] != 0) return bad("unknown version " + std::to_string(b[6]) + "." + std::to_string(b[7]));
  if (b[6] == 1) {
    hlen = b[8] | (size_t{b[9]} << 8);
    hoff = 10;
  } else if (b[6] == 2 || b[6] == 3) {
    if (b.size() < 12) return bad("truncated header");
    hlen = b[8] | (size_t{b[9]} << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24);
    hoff = 12;
  } else {
    return bad("unknown version " + std::to_string(b[6]));
  }
  if (hoff + hlen > b.size()) return bad("truncated header");
  const std::string h(b.begin() + static_cast<long>(hoff),
                      b.begin() + static_cast<long>(hoff + hlen));
  NpyHeader header;
  if (auto e = HeaderReader(h).read(header)) return bad(*e);
  auto descr = dtypeOfDescr(header.descr);
  if (!descr) return bad("element type '" + header.descr + "'");
  if (header.fortran) return bad("Fortran order");
  Tensor t;
  t.dtype = *descr;
  // The element count must stay far from overflow (found by the .npy fuzzer).
  int64_t elements = 1;
  for (int64_t d : header.shape) {
    if (d > 0 && elements > (int64_t(1) << 40) / d) return bad("the shape is too large");
    elements *= d;
  }
  t.shape = header.shape;
  const size_t need = Tensor::bytesFor(t.dtype, t.numel());
  const size_t have = b.size() - hoff - hlen;
  if (have < need)
    return bad("truncated data (" + std::to_string(have) + " of " + std::to_string(need) +
               " bytes)");
  if (have > need)
    return bad(std::to_string(have - need) + " bytes after the data (" + std::to_string(need) +
               " bytes for the shape and type)");
  t.data.assign(b.begin() + static_cast<long>(hoff + hlen), b.end());
  return t;
}

Result<Tensor> readNpy(const std::string& path) {
  std::vector<uint8_t> b;
  // pto-run writes buffers up to kMaxTensorBytes: it reads them back (the header is far
  // smaller than the 1 MiB allowed for it).
  if (auto e = obj::readInputFile(path, b, kMaxTensorBytes + (uint64_t{1} << 20)))
    return Error{"error: " + *e};
  return fromNpy(b, path);
}

Status writeNpy(const std::string& path, const Tensor& t, const std::vector<std::string>& inputs) {
  auto bytes = toNpy(t);
  if (auto e = obj::writeOutputFile(
          path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
          inputs))
    return Error{"error: " + *e};
  return std::nullopt;
}

Result<Tensor> readRaw(const std::string& path, isa::DType t, std::vector<int64_t> shape) {
  auto x = makeTensor(t, std::move(shape), "'" + path + "'");
  if (!x) return x.error();
  std::vector<uint8_t> b;
  if (auto e = obj::readInputFile(path, b, kMaxTensorBytes)) return Error{"error: " + *e};
  if (b.size() != x->data.size())
    return Error{path + ": error: holds " + std::to_string(b.size()) +
                 " bytes, the shape and type need " + std::to_string(x->data.size())};
  x->data = std::move(b);
  return x;
}

Result<Tensor> makeTensor(isa::DType t, std::vector<int64_t> shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return Error{"error: " + what + ": negative dimension " + std::to_string(d)};
    auto m = obj::checkedMul(n, d);
    if (!m) return Error{"error: " + what + ": the shape has too many elements"};
    n = *m;
  }
  const unsigned bits = t == isa::DType::I1 ? 8 : isa::bitWidth(t); // as Tensor::bytesFor
  const uint64_t bytes =
      (static_cast<uint64_t>(n) / 8) * bits + ((static_cast<uint64_t>(n) % 8) * bits + 7) / 8;
  if (bytes > kMaxTensorBytes)
    return Error{"error: " + what + ": " + std::to_string(bytes) + " bytes is more than the " +
                 std::to_string(kMaxTensorBytes >> 30) + " GiB buffer limit"};
  try {
    return Tensor::zeros(t, std::move(shape));
  } catch (const std::bad_alloc&) {
    return Error{"error: " + what + ": cannot allocate " + std::to_string(bytes) + " bytes"};
  }
}

Status adoptDType(Tensor& x, isa::DType t, const std::string& param) {
  if (x.dtype == t) return std::nullopt;
  if (dtypeOfDescr(npyDescr(t)) == x.dtype) {
    x.dtype = t; // the raw bits of a type numpy lacks
    return std::nullopt;
  }
  const std::string want(isa::spelling(t));
  return Error{"error: parameter %" + param + " has element type " + want + " but the data is " +
               std::string(isa::spelling(x.dtype)) +
               "; convert it first (pto-npy convert IN.npy OUT.npy " + want + ")"};
}

bool retag(Tensor& x, isa::DType t) {
  if (isa::bitWidth(x.dtype) != isa::bitWidth(t)) return false;
  x.dtype = t;
  return true;
}

std::optional<std::vector<int64_t>> parseShape(std::string_view s, std::string* why) {
  std::vector<int64_t> out;
  if (s.empty()) return out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find_first_of("x,", i);
    if (j == std::string_view::npos) j = s.size();
    std::string_view part = s.substr(i, j - i);
    auto v = obj::parseUnsigned(part);
    if (!v) {
      if (why) {
        bool digits =
            !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
        *why = digits ? "dimension '" + std::string(part) + "' is too large"
                      : "bad dimension '" + std::string(part) + "'";
      }
      return std::nullopt;
    }
    if (*v > (uint64_t{1} << 40)) {
      if (why) *why = "dimension '" + std::string(part) + "' is too large";
      return std::nullopt;
    }
    out.push_back(static_cast<int64_t>(*v));
    i = j + 1;
  }
  return out;
}

} // namespace pto::rt
