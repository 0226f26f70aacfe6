#include "runtime/Npy.h"

#include <fstream>
#include <sstream>

namespace pto::rt {

std::string npyDescr(isa::DType t) {
  using isa::DType;
  switch (t) {
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::F16: return "<f2";
  case DType::I8: return "|i1";
  case DType::I16: return "<i2";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::U8: return "|u1";
  case DType::U16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  case DType::I1: return "|b1";
  default: break;
  }
  switch (isa::bitWidth(t)) {
  case 16: return "<u2"; // bf16: raw bits
  case 32: return "<u4";
  case 64: return "<u8";
  default: return "|u1"; // 8-bit float formats and packed 4-bit types: raw bytes
  }
}

static std::optional<isa::DType> dtypeOfDescr(std::string d) {
  using isa::DType;
  if (d.size() == 3 && d[0] == '>' && d[2] == '1') d[0] = '|';
  if (d.size() == 3 && d[0] == '<' && d[2] == '1') d[0] = '|';
  static const std::pair<const char*, DType> table[] = {
      {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16}, {"|i1", DType::I8},  {"<i2", DType::I16},
      {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},  {"<u2", DType::U16}, {"<u4", DType::U32},
      {"<u8", DType::U64}, {"|b1", DType::I1}};
  for (auto& [s, t] : table)
    if (d == s) return t;
  return std::nullopt;
}

std::vector<uint8_t> toNpy(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
  if (isa::bitWidth(t.dtype) == 4) shape = "(" + std::to_string(t.data.size()) + ","; // packed 4-bit: bytes
  shape += ")";
  std::string header = "{'descr': '" + npyDescr(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
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
  auto bad = [&](const std::string& why) { return Error{name + ": error: not a supported .npy file: " + why}; };
  if (b.size() < 10 || b[0] != 0x93 || std::string(b.begin() + 1, b.begin() + 6) != "NUMPY") return bad("bad magic");
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
    while (s < h.size() && h[s] == ' ') ++s;
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
    if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos)
      return bad("shape '" + value("shape") + "'");
    int64_t d = std::stoll(digits);
    if (d > 0 && elements > (int64_t(1) << 40) / d) return bad("shape '" + value("shape") + "' is too large");
    elements *= d;
    t.shape.push_back(d);
  }
  size_t need = Tensor::bytesFor(t.dtype, t.numel());
  if (b.size() - hoff - hlen < need) return bad("truncated data (" + std::to_string(b.size() - hoff - hlen) + " of " + std::to_string(need) + " bytes)");
  t.data.assign(b.begin() + static_cast<long>(hoff + hlen), b.begin() + static_cast<long>(hoff + hlen + need));
  return t;
}

static std::optional<std::vector<uint8_t>> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<Tensor> readNpy(const std::string& path) {
  auto b = slurp(path);
  if (!b) return Error{path + ": error: cannot read the file"};
  return fromNpy(*b, path);
}

Status writeNpy(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  auto bytes = toNpy(t);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) return Error{path + ": error: cannot write the file"};
  return std::nullopt;
}

Result<Tensor> readRaw(const std::string& path, isa::DType t, std::vector<int64_t> shape) {
  auto b = slurp(path);
  if (!b) return Error{path + ": error: cannot read the file"};
  Tensor x = Tensor::zeros(t, std::move(shape));
  if (b->size() != x.data.size())
    return Error{path + ": error: holds " + std::to_string(b->size()) + " bytes, the shape and type need " + std::to_string(x.data.size())};
  x.data = std::move(*b);
  return x;
}

bool retag(Tensor& x, isa::DType t) {
  if (isa::bitWidth(x.dtype) != isa::bitWidth(t)) return false;
  x.dtype = t;
  return true;
}

std::optional<std::vector<int64_t>> parseShape(std::string_view s) {
  std::vector<int64_t> out;
  if (s.empty()) return out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find_first_of("x,", i);
    if (j == std::string_view::npos) j = s.size();
    std::string part(s.substr(i, j - i));
    if (part.empty()) return std::nullopt;
    for (char ch : part)
      if (ch < '0' || ch > '9') return std::nullopt;
    out.push_back(std::stoll(part));
    i = j + 1;
  }
  return out;
}

} // namespace pto::rt
