// pto-npy: small .npy utility for tests and samples (no numpy needed).
//   pto-npy write OUT.npy DTYPE SHAPE V0 V1 ...      (values as decimal numbers or 0x raw bits;
//                                                     one value fills the tensor)
//   pto-npy range OUT.npy DTYPE SHAPE START STEP     (element i = START + i * STEP, rounded to DTYPE)
//   pto-npy print FILE.npy [--dtype T]               (one value per element, %.9g)
//   pto-npy compare A.npy B.npy [--atol X] [--rtol Y] (exit 1 and a report when they differ)
#include "isa/Numerics.h"
#include "runtime/Npy.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace pto;
using namespace pto::rt;

static int fail(const std::string& m) {
  fprintf(stderr, "pto-npy: %s\n", m.c_str());
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pto-npy write OUT.npy DTYPE SHAPE V...\n       pto-npy range OUT.npy DTYPE SHAPE START STEP\n"
                    "       pto-npy print FILE.npy [--dtype T]\n"
                    "       pto-npy compare A.npy B.npy [--atol X] [--rtol Y]\n");
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "write") {
    if (argc < 5) return fail("write needs OUT.npy DTYPE SHAPE values");
    auto t = isa::parseDType(argv[3]);
    auto shape = parseShape(argv[4]);
    if (!t || !shape) return fail("bad dtype or shape");
    Tensor x = Tensor::zeros(*t, *shape);
    int64_t n = x.numel();
    if (argc - 5 != n && argc - 5 != 1) return fail("expected " + std::to_string(n) + " values, got " + std::to_string(argc - 5));
    for (int64_t i = 0; i < n; ++i) {
      const char* v = argv[5 + (argc - 5 == 1 ? 0 : i)];
      char* end = nullptr;
      uint64_t bits;
      if (strncmp(v, "0x", 2) == 0) bits = strtoull(v, &end, 16);
      else if (isa::isFloat(*t)) bits = isa::encodeFromDouble(*t, strtod(v, &end), isa::RoundMode::CAST_RINT, isa::SatMode::OFF);
      else bits = static_cast<uint64_t>(strtoll(v, &end, 10));
      if (end == v || *end) return fail(std::string("'") + v + "' is not a number");
      if (isa::bitWidth(*t) < 64) bits &= (uint64_t{1} << isa::bitWidth(*t)) - 1;
      x.setBits(i, bits);
    }
    if (auto e = writeNpy(argv[2], x)) return fail(e->message);
    return 0;
  }
  if (cmd == "range") {
    if (argc != 7) return fail("range needs OUT.npy DTYPE SHAPE START STEP");
    auto t = isa::parseDType(argv[3]);
    auto shape = parseShape(argv[4]);
    if (!t || !shape) return fail("bad dtype or shape");
    char *e1 = nullptr, *e2 = nullptr;
    const double start = strtod(argv[5], &e1), step = strtod(argv[6], &e2);
    if (e1 == argv[5] || *e1 || e2 == argv[6] || *e2) return fail("START and STEP must be numbers");
    Tensor x = Tensor::zeros(*t, *shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = start + static_cast<double>(i) * step;
      uint64_t bits = isa::isFloat(*t) ? isa::encodeFromDouble(*t, v, isa::RoundMode::CAST_RINT, isa::SatMode::OFF)
                                       : static_cast<uint64_t>(static_cast<int64_t>(v));
      if (isa::bitWidth(*t) < 64) bits &= (uint64_t{1} << isa::bitWidth(*t)) - 1;
      x.setBits(i, bits);
    }
    if (auto e = writeNpy(argv[2], x)) return fail(e->message);
    return 0;
  }
  if (cmd == "print") {
    auto x = readNpy(argv[2]);
    if (!x) return fail(x.error().message);
    if (argc >= 5 && std::string(argv[3]) == "--dtype") {
      auto t = isa::parseDType(argv[4]);
      if (!t || !retag(x.value(), *t)) return fail("cannot view the data as " + std::string(argv[4]));
    }
    for (int64_t i = 0; i < x->numel(); ++i) printf("%.9g\n", x->at(i));
    return 0;
  }
  if (cmd == "compare") {
    if (argc < 4) return fail("compare needs two files");
    double atol = 0, rtol = 0;
    for (int i = 4; i + 1 < argc; i += 2) {
      if (std::string(argv[i]) == "--atol") atol = strtod(argv[i + 1], nullptr);
      else if (std::string(argv[i]) == "--rtol") rtol = strtod(argv[i + 1], nullptr);
      else return fail(std::string("unknown option ") + argv[i]);
    }
    auto a = readNpy(argv[2]), b = readNpy(argv[3]);
    if (!a) return fail(a.error().message);
    if (!b) return fail(b.error().message);
    if (a->shape != b->shape || a->numel() != b->numel()) {
      printf("shape mismatch\n");
      return 1;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < a->numel(); ++i) {
      double x = a->at(i), y = b->at(i);
      bool ok = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= atol + rtol * std::fabs(y);
      if (!ok && bad++ < 10) printf("element %lld: %.9g != %.9g\n", static_cast<long long>(i), x, y);
    }
    if (bad) {
      printf("%lld of %lld elements differ\n", static_cast<long long>(bad), static_cast<long long>(a->numel()));
      return 1;
    }
    printf("equal (%lld elements)\n", static_cast<long long>(a->numel()));
    return 0;
  }
  return fail("unknown command '" + cmd + "'");
}
