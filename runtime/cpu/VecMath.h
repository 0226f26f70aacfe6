// Vectorised transcendental, square-root and division kernels of the cpu backend, bit-identical
// to the portable ones. Each op has its portable definition (`*Ref`, one element: exactly the
// expression the portable kernel in Kernels.cpp evaluates) and a run over n elements that takes
// the vector path when the CPU has AVX2 and FMA (and `vector` is true). d may equal a (or b).
//
// exp and log of f32 (TEXP, TLOG): the portable kernels compute (float)exp((double)x) and
// (float)log((double)x) with the C library. The fast paths evaluate the function in double on
// four lanes at a time with an error of a few double ulps, then round to float once, as the
// portable kernel does. The two agree whenever the double result is not within 2^10 double ulps
// of a midpoint between two floats: then the exact value, and the C library's result (within
// one double ulp of it), round to the same float. Lanes near a midpoint, and inputs outside the
// fast path's domain (exp: outside [-87, 88]; log: zero, negative, subnormal, infinite, NaN),
// take the portable computation.
//   - exp: range reduction by ln 2 in two parts to x = (8m + j) ln2/8 + r, a table of 2^(j/8),
//     a degree-8 polynomial of r, scaling by 2^m.
//   - log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m - 1) / (m + 1)) by its
//     series, plus e ln2 in two parts.
//
// sqrt, 1/sqrt, 1/x and x / y (TSQRT, TRSQRT, TRECIP, TDIV): IEEE operations, correctly rounded,
// so the vector instructions give the scalar ones' bits by definition. sqrt: (float)sqrt(double)
// equals the f32 square root (double rounding is harmless for sqrt since 53 >= 2 * 24 + 2), so
// the fast path is vsqrtps; rsqrt keeps the portable double sqrt and divide on four lanes; recip
// and div are vdivps.
//
// tests/unit/VecMathTest.cpp checks sampled inputs in CI and all 2^32 by hand
// (--gtest_also_run_disabled_tests).
#pragma once

#include <cstddef>

namespace pto::rt::cpu {

/// d[i] = (float)exp((double)a[i]).
void expF32(float* d, const float* a, size_t n, bool vector = true);
float expF32Ref(float x);

/// d[i] = (float)log((double)a[i]).
void logF32(float* d, const float* a, size_t n, bool vector = true);
float logF32Ref(float x);

/// d[i] = (float)sqrt((double)a[i]).
void sqrtF32(float* d, const float* a, size_t n, bool vector = true);
float sqrtF32Ref(float x);

/// d[i] = (float)(1.0 / sqrt((double)a[i])).
void rsqrtF32(float* d, const float* a, size_t n, bool vector = true);
float rsqrtF32Ref(float x);

/// d[i] = 1.0f / a[i].
void recipF32(float* d, const float* a, size_t n, bool vector = true);
float recipF32Ref(float x);

/// d[i] = a[i] / b[i]: the vector loop TDIV f32 runs (Simd.h binaryRun with VDiv).
void divF32(float* d, const float* a, const float* b, size_t n, bool vector = true);
float divF32Ref(float a, float b);

} // namespace pto::rt::cpu
