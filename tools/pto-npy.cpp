// pto-npy: small .npy utility for tests and samples (no numpy needed).
//   pto-npy write OUT.npy DTYPE SHAPE V0 V1 ...      (values as decimal numbers or 0x raw bits;
//                                                     one value fills the tensor)
//   pto-npy range OUT.npy DTYPE SHAPE START STEP     (element i = START + i * STEP, rounded to
//   DTYPE;
//                                                     toward zero for integer types; out of range:
//                                                     error)
//   pto-npy convert IN.npy OUT.npy DTYPE            (each value converted to DTYPE, rounded,
//   range-checked) pto-npy print FILE.npy [--dtype T]               (one value per element:
//   integers exactly, floats %.9g, f64 %.17g)
//   pto-npy compare A.npy B.npy [--atol X] [--rtol Y] (exit 1 and a report when they differ:
//   the element types must be the same; integers compared exactly, floats as numbers)
#include "isa/Numerics.h"
#include "runtime/Npy.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace pto;
using namespace pto::rt;

static int fail(const std::string& m) {
  fprintf(stderr, "pto-npy: %s\n", m.c_str());
  return 2;
}

namespace {

/// The bits of `v` as an element of `t`, or an error when `v` does not fit: integers must lie in
/// the type's range, finite floats must stay finite (no silent wrap, clamp or overflow to inf).
/// `shown` is the value as the user wrote it (for messages), when there is such a text.
std::optional<uint64_t> encodeChecked(isa::DType t, double v, std::string& err,
                                      const char* shown = nullptr) {
  const unsigned w = isa::bitWidth(t);
  const isa::DTypeKind kind = isa::info(t).kind;
  const std::string ty(isa::spelling(t));
  char text[64];
  snprintf(text, sizeof text, "%.17g", v);
  if (shown) snprintf(text, sizeof text, "%s", shown);
  if (kind == isa::DTypeKind::Float) {
    uint64_t bits = isa::encodeFromDouble(t, v, isa::RoundMode::CAST_RINT, isa::SatMode::OFF);
    if (std::isfinite(v) && !std::isfinite(isa::decodeToDouble(t, bits))) {
      err = std::string(text) + " is out of range for " + ty;
      return std::nullopt;
    }
    return bits;
  }
  if (std::isnan(v) || v != std::trunc(v)) {
    err = std::string(text) + " is not an integer (" + ty + ")";
    return std::nullopt;
  }
  // The range is [lo, end): both bounds are powers of two, exact as doubles also for 64 bits.
  double lo = 0, end = 2;
  if (kind == isa::DTypeKind::SInt)
    lo = -std::ldexp(1.0, static_cast<int>(w) - 1), end = std::ldexp(1.0, static_cast<int>(w) - 1);
  else if (kind == isa::DTypeKind::UInt)
    end = std::ldexp(1.0, static_cast<int>(w));
  if (v < lo || v >= end) {
    err = std::string(text) + " is out of range for " + ty;
    return std::nullopt;
  }
  uint64_t bits = v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
  return w < 64 ? bits & ((uint64_t{1} << w) - 1) : bits;
}

/// One value of `pto-npy write`: 0x raw bits (must fit the element width), an integer for the
/// integer types (checked, exact up to 64 bits) or a number for the float types.
std::optional<uint64_t> valueBits(isa::DType t, const char* v, std::string& err) {
  const unsigned w = isa::bitWidth(t);
  const std::string_view text(v);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    auto bits = obj::parseUnsigned(text.substr(2), 16);
    if (!bits) {
      err = "'" + std::string(text) + "' is not a hexadecimal number of at most 64 bits";
      return std::nullopt;
    }
    if (w < 64 && (*bits >> w) != 0) {
      err = "'" + std::string(text) + "' does not fit in " + std::to_string(w) + " bits (" +
            std::string(isa::spelling(t)) + ")";
      return std::nullopt;
    }
    return *bits;
  }
  const isa::DTypeKind kind = isa::info(t).kind;
  if (kind == isa::DTypeKind::SInt || kind == isa::DTypeKind::UInt) {
    // Integers of 64 bits are exact: parse them as integers, not through a double.
    if (auto i = obj::parseSigned(text)) {
      if (w == 64 && kind == isa::DTypeKind::SInt) return static_cast<uint64_t>(*i);
      if (w == 64 && *i < 0) {
        err = std::string(text) + " is out of range for " + std::string(isa::spelling(t));
        return std::nullopt;
      }
      if (w == 64) return static_cast<uint64_t>(*i);
      return encodeChecked(t, static_cast<double>(*i), err, v);
    }
    if (auto u = obj::parseUnsigned(text); u && w == 64 && kind == isa::DTypeKind::UInt) return *u;
  }
  auto d = obj::parseDouble(text);
  if (!d) {
    err = "'" + std::string(text) + "' is not a number";
    return std::nullopt;
  }
  return encodeChecked(t, *d, err, v);
}

/// DTYPE and SHAPE arguments, and the zero tensor they describe.
std::optional<Tensor> tensorOf(const char* dtype, const char* shapeText, std::string& err) {
  auto t = isa::parseDType(dtype);
  if (!t) {
    err = std::string("unknown element type '") + dtype + "'";
    return std::nullopt;
  }
  std::string why;
  auto shape = parseShape(shapeText, &why);
  if (!shape) {
    err = std::string("bad shape '") + shapeText + "'" + (why.empty() ? "" : ": " + why);
    return std::nullopt;
  }
  auto x = makeTensor(*t, *shape, std::string("shape ") + shapeText);
  if (!x) {
    err = x.error().message;
    return std::nullopt;
  }
  return std::move(x.value());
}

/// A number option value (--atol, --rtol): finite and not negative.
std::optional<double> tolerance(const char* flag, const char* v, std::string& err) {
  auto d = obj::parseDouble(v);
  if (!d || !std::isfinite(*d) || *d < 0) {
    err = std::string(flag) + " needs a non-negative number, not '" + v + "'";
    return std::nullopt;
  }
  return d;
}

/// An element as text: integers exactly, floats with the digits that round-trip their type
/// (%.9g up to 32 bits, %.17g for f64).
std::string valueText(isa::DType t, uint64_t bits) {
  if (t != isa::DType::F64) return elementText(t, bits);
  char text[40];
  snprintf(text, sizeof text, "%.17g", isa::decodeToDouble(t, bits));
  return text;
}

/// An integer element's value, exactly.
obj::WideInt integerValue(isa::DType t, uint64_t bits) {
  const unsigned w = isa::bitWidth(t);
  if (w < 64) bits &= (uint64_t{1} << w) - 1;
  if (isa::info(t).kind == isa::DTypeKind::SInt && w < 64 && (bits >> (w - 1)) & 1)
    return static_cast<obj::WideInt>(bits) - (obj::WideInt{1} << w);
  if (isa::info(t).kind == isa::DTypeKind::SInt && w == 64)
    return static_cast<obj::WideInt>(static_cast<int64_t>(bits));
  return static_cast<obj::WideInt>(bits);
}

/// Whether two elements of type `t` agree: integers exactly (within atol + rtol * |y| when a
/// tolerance is given, computed without rounding the values), floats as numbers (two NaNs
/// agree, 0 and -0 too) or within the tolerance.
bool close(isa::DType t, uint64_t xb, uint64_t yb, double atol, double rtol) {
  if (!isa::isFloat(t)) {
    const obj::WideInt x = integerValue(t, xb), y = integerValue(t, yb);
    if (x == y) return true;
    const obj::WideInt d = x > y ? x - y : y - x, ay = y < 0 ? -y : y;
    return static_cast<long double>(d) <=
           static_cast<long double>(atol) +
               static_cast<long double>(rtol) * static_cast<long double>(ay);
  }
  const double x = isa::decodeToDouble(t, xb), y = isa::decodeToDouble(t, yb);
  return (std::isnan(x) && std::isnan(y)) || x == y ||
         std::fabs(x - y) <= atol + rtol * std::fabs(y);
}

/// The exit status, 2 when standard output lost some of what was printed.
int finish(int status = 0) {
  if (auto e = obj::flushStandardOutput()) return fail("error: " + *e);
  return status;
}

int writeCommand(int argc, char** argv) {
  std::string err;
  if (argc < 5) return fail("write needs OUT.npy DTYPE SHAPE values");
  auto made = tensorOf(argv[3], argv[4], err);
  if (!made) return fail(err);
  Tensor& x = *made;
  const auto t = x.dtype;
  int64_t n = x.numel();
  if (argc - 5 != n && argc - 5 != 1)
    return fail("expected " + std::to_string(n) + " values, got " + std::to_string(argc - 5));
  for (int64_t i = 0; i < n; ++i) {
    const char* v = argv[5 + (argc - 5 == 1 ? 0 : i)];
    auto bits = valueBits(t, v, err);
    if (!bits) return fail(err);
    x.setBits(i, *bits);
  }
  if (auto e = writeNpy(argv[2], x)) return fail(e->message);
  return 0;
}

int rangeCommand(int argc, char** argv) {
  std::string err;
  if (argc != 7) return fail("range needs OUT.npy DTYPE SHAPE START STEP");
  auto start = obj::parseDouble(argv[5]), step = obj::parseDouble(argv[6]);
  if (!start || !step || !std::isfinite(*start) || !std::isfinite(*step))
    return fail("START and STEP must be finite numbers");
  auto made = tensorOf(argv[3], argv[4], err);
  if (!made) return fail(err);
  Tensor& x = *made;
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = *start + static_cast<double>(i) * *step;
    // Integer types take the value rounded toward zero (as documented); the range is checked.
    if (isa::info(x.dtype).kind != isa::DTypeKind::Float) v = std::trunc(v);
    auto bits = encodeChecked(x.dtype, v, err);
    if (!bits) return fail("element " + std::to_string(i) + ": " + err);
    x.setBits(i, *bits);
  }
  if (auto e = writeNpy(argv[2], x)) return fail(e->message);
  return 0;
}

int convertCommand(int argc, char** argv) {
  std::string err;
  // The explicit conversion a kernel parameter of another element type needs (pto-run refuses
  // to reinterpret the bits): each value converted, rounded to nearest even, range-checked.
  if (argc != 5) return fail("convert needs IN.npy OUT.npy DTYPE");
  auto in = readNpy(argv[2]);
  if (!in) return fail(in.error().message);
  auto t = isa::parseDType(argv[4]);
  if (!t) return fail(std::string("unknown element type '") + argv[4] + "'");
  auto out = makeTensor(*t, in->shape, argv[2]);
  if (!out) return fail(out.error().message);
  for (int64_t i = 0; i < in->numel(); ++i) {
    const uint64_t b = in->bitsAt(i);
    const unsigned w = isa::bitWidth(in->dtype);
    std::optional<uint64_t> bits;
    if (isa::info(in->dtype).kind == isa::DTypeKind::SInt && w == 64 && *t == isa::DType::I64)
      bits = b;
    else if (isa::info(in->dtype).kind == isa::DTypeKind::UInt && w == 64 && *t == isa::DType::U64)
      bits = b;
    else
      bits = encodeChecked(*t, in->at(i), err);
    if (!bits) return fail("element " + std::to_string(i) + ": " + err);
    out->setBits(i, *bits);
  }
  if (auto e = writeNpy(argv[3], out.value(), {argv[2]})) return fail(e->message);
  return 0;
}

int printCommand(int argc, char** argv) {
  auto x = readNpy(argv[2]);
  if (!x) return fail(x.error().message);
  if (argc >= 5 && std::string(argv[3]) == "--dtype") {
    auto t = isa::parseDType(argv[4]);
    if (!t || !retag(x.value(), *t)) return fail("cannot view the data as " + std::string(argv[4]));
  }
  for (int64_t i = 0; i < x->numel(); ++i)
    printf("%s\n", valueText(x->dtype, x->bitsAt(i)).c_str());
  return finish();
}

int compareCommand(int argc, char** argv) {
  std::string err;
  if (argc < 4) return fail("compare needs two files");
  double atol = 0, rtol = 0;
  for (int i = 4; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag != "--atol" && flag != "--rtol") return fail("unknown option " + flag);
    if (i + 1 >= argc) return fail(flag + " needs a value");
    auto v = tolerance(argv[i], argv[i + 1], err);
    if (!v) return fail(err);
    (flag == "--atol" ? atol : rtol) = *v;
  }
  auto a = readNpy(argv[2]), b = readNpy(argv[3]);
  if (!a) return fail(a.error().message);
  if (!b) return fail(b.error().message);
  if (a->dtype != b->dtype) {
    printf("element type mismatch: %s and %s\n", std::string(isa::spelling(a->dtype)).c_str(),
           std::string(isa::spelling(b->dtype)).c_str());
    return finish(1);
  }
  if (a->shape != b->shape || a->numel() != b->numel()) {
    printf("shape mismatch\n");
    return finish(1);
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < a->numel(); ++i) {
    const uint64_t x = a->bitsAt(i), y = b->bitsAt(i);
    if (!close(a->dtype, x, y, atol, rtol) && bad++ < 10)
      printf("element %lld: %s != %s\n", static_cast<long long>(i), valueText(a->dtype, x).c_str(),
             valueText(a->dtype, y).c_str());
  }
  if (bad) {
    printf("%lld of %lld elements differ\n", static_cast<long long>(bad),
           static_cast<long long>(a->numel()));
    return finish(1);
  }
  printf("equal (%lld elements)\n", static_cast<long long>(a->numel()));
  return finish(0);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pto-npy write OUT.npy DTYPE SHAPE V...\n       pto-npy range OUT.npy "
                    "DTYPE SHAPE START STEP\n"
                    "       pto-npy convert IN.npy OUT.npy DTYPE\n"
                    "       pto-npy print FILE.npy [--dtype T]\n"
                    "       pto-npy compare A.npy B.npy [--atol X] [--rtol Y]\n");
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "write") return writeCommand(argc, argv);
  if (cmd == "range") return rangeCommand(argc, argv);
  if (cmd == "convert") return convertCommand(argc, argv);
  if (cmd == "print") return printCommand(argc, argv);
  if (cmd == "compare") return compareCommand(argc, argv);
  return fail("unknown command '" + cmd + "'");
}
