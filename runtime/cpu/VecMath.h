// Vectorised transcendental kernels of the cpu backend, bit-identical to the portable ones.
//
// exp of f32 (TEXP): the portable kernel computes (float)exp((double)x) with the C library's
// exp. The fast path evaluates exp in double on four lanes at a time (range reduction by ln 2 in
// two parts to x = (8m + j) ln2/8 + r, a table of 2^(j/8), a degree-8 polynomial of r,
// scaling by 2^m) with an error of a few double ulps, then rounds to float once, as the portable
// kernel does. The two agree whenever the double result
// is not within 2^10 double ulps of a midpoint between two floats: then the exact value, and the
// C library's result (within one double ulp of it), round to the same float. Lanes near a
// midpoint, and every input outside [-87, 88] (overflow, subnormal results, infinities, NaN),
// take the portable computation. tests/unit/VecMathTest.cpp checks sampled inputs in CI and all
// 2^32 by hand (--gtest_also_run_disabled_tests).
#pragma once

#include <cstddef>

namespace pto::rt::cpu {

/// d[i] = (float)exp((double)a[i]) for n elements: the vector path when the CPU has AVX2 and FMA
/// (and `vector` is true), else the portable loop. d may equal a.
void expF32(float* d, const float* a, size_t n, bool vector = true);

/// The portable definition, one element.
float expF32Ref(float x);

} // namespace pto::rt::cpu
