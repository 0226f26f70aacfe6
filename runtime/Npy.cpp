#include "runtime/Npy.h"

#include "support/FileIO.h"
#include "support/Numbers.h"

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

Result<Tensor> fromNpy(const std::vector<uint8_t>& b, const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Error{name + ": error: not a supported .npy file: " + why};
  };
  if (b.size() < 10 || b[0] != 0x93 || std::string(b.begin() + 1, b.begin() + 6) != "NUMPY")
    return bad("bad magic");
  size_t hlen, hoff;
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
  std::string h(b.begin() + static_cast<long>(hoff), b.begin() + static_cast<long>(hoff + hlen));
  auto value = [&](const std::string& key) -> std::string {
    auto k = h.find("'" + key + "'");
    if (k == std::string::npos) return "";
    auto colon = h.find(':', k);
    if (colon == std::string::npos) return "";
    size_t s = colon + 1;
    while (s < h.size() && h[s] == ' ')
      ++s;
    if (s < h.size() && h[s] == '(') return h.substr(s + 1, h.find(')', s) - s - 1);
    if (s < h.size() && h[s] == '\'') return h.substr(s + 1, h.find('\'', s + 1) - s - 1);
    size_t e = h.find_first_of(",}", s);
    return h.substr(s, e - s);
  };
  auto descr = dtypeOfDescr(value("descr"));
  if (!descr) return bad("element type '" + value("descr") + "'");
  if (value("fortran_order").find("True") != std::string::npos) return bad("Fortran order");
  Tensor t;
  t.dtype = *descr;
  std::stringstream ss(value("shape"));
  std::string item;
  // Each dimension is a plain non-negative integer (a trailing comma is allowed), and the
  // element count must stay far from overflow (found by the .npy fuzzer).
  int64_t elements = 1;
  while (std::getline(ss, item, ',')) {
    size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    if (first == std::string::npos) continue;
    std::string digits = item.substr(first, last - first + 1);
    auto parsed = obj::parseUnsigned(digits);
    if (!parsed || digits.size() > 12) return bad("shape '" + value("shape") + "'");
    int64_t d = static_cast<int64_t>(*parsed);
    if (d > 0 && elements > (int64_t(1) << 40) / d)
      return bad("shape '" + value("shape") + "' is too large");
    elements *= d;
    t.shape.push_back(d);
  }
  size_t need = Tensor::bytesFor(t.dtype, t.numel());
  if (b.size() - hoff - hlen < need)
    return bad("truncated data (" + std::to_string(b.size() - hoff - hlen) + " of " +
               std::to_string(need) + " bytes)");
  t.data.assign(b.begin() + static_cast<long>(hoff + hlen),
                b.begin() + static_cast<long>(hoff + hlen + need));
  return t;
}

Result<Tensor> readNpy(const std::string& path) {
  std::vector<uint8_t> b;
  if (auto e = obj::readInputFile(path, b)) return Error{"error: " + *e};
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
  if (auto e = obj::readInputFile(path, b)) return Error{"error: " + *e};
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
