#include "runtime/cpu/VecMath.h"

#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"

#include <cmath>
#include <cstdint>

namespace pto::rt::cpu {

float expF32Ref(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

namespace {

void expPortable(float* d, const float* a, size_t n) {
  for (size_t i = 0; i < n; ++i)
    d[i] = expF32Ref(a[i]);
}

#ifdef PTO_X86_SIMD
/// 2^(j/8) for j = 0..7, each within half a double ulp (the C library's exp2 of an exact
/// argument); their error is part of the fast path's error budget (far below 2^10 ulps).
struct Exp2Table {
  alignas(32) double v[8];
  Exp2Table() {
    for (int j = 0; j < 8; ++j)
      v[j] = std::exp2(j / 8.0);
  }
};
const Exp2Table kExp2;

struct ExpSimd {
  PTO_SIMD static __m256d c(double v) { return _mm256_set1_pd(v); }

  /// exp of four doubles in [-87, 88]: x = (8m + j) ln2/8 + r with |r| <= ln2/16, so
  /// exp(x) = 2^m * 2^(j/8) * exp(r); exp(r) by its Taylor polynomial to degree 8 (the next term
  /// is below 2^-58 relative). n * ln2/8 is split in two parts: the high part has 32 zero low
  /// bits, so n * hi is exact for |n| < 2^20. The table is two registers, indexed by a permute.
  PTO_SIMD static __m256d exp4(__m256d x) {
    const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(11.541560327111707)), // 8/ln2
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(0x1.62e42fee00000p-4), x);
    r = _mm256_fnmadd_pd(n, _mm256_set1_pd(0x1.a39ef35793c76p-36), r);
    // Estrin: p = sum r^k / k!, k = 0..8.
    const __m256d r2 = _mm256_mul_pd(r, r), r4 = _mm256_mul_pd(r2, r2), r8 = _mm256_mul_pd(r4, r4);
    const __m256d p01 = _mm256_fmadd_pd(r, c(1.0), c(1.0));
    const __m256d p23 = _mm256_fmadd_pd(r, c(1.0 / 6), c(1.0 / 2));
    const __m256d p45 = _mm256_fmadd_pd(r, c(1.0 / 120), c(1.0 / 24));
    const __m256d p67 = _mm256_fmadd_pd(r, c(1.0 / 5040), c(1.0 / 720));
    const __m256d p03 = _mm256_fmadd_pd(r2, p23, p01), p47 = _mm256_fmadd_pd(r2, p67, p45);
    const __m256d p = _mm256_fmadd_pd(r8, c(1.0 / 40320), _mm256_fmadd_pd(r4, p47, p03));
    const __m128i ni = _mm256_cvtpd_epi32(n);
    // Table entry j = n & 7: the doubles' 32-bit halves 2j, 2j+1 of the low (j < 4) or high table.
    const __m256i j = _mm256_cvtepi32_epi64(_mm_and_si128(ni, _mm_set1_epi32(7)));
    const __m256i idx = _mm256_or_si256(
        _mm256_slli_epi64(_mm256_and_si256(j, _mm256_set1_epi64x(3)), 1),
        _mm256_slli_epi64(
            _mm256_or_si256(_mm256_slli_epi64(_mm256_and_si256(j, _mm256_set1_epi64x(3)), 1),
                            _mm256_set1_epi64x(1)),
            32));
    const __m256 lo =
        _mm256_permutevar8x32_ps(_mm256_load_ps(reinterpret_cast<const float*>(kExp2.v)), idx);
    const __m256 hi =
        _mm256_permutevar8x32_ps(_mm256_load_ps(reinterpret_cast<const float*>(kExp2.v + 4)), idx);
    const __m256d upper = _mm256_castsi256_pd(_mm256_slli_epi64(j, 61)); // bit 2 of j to the sign
    const __m256d t = _mm256_blendv_pd(_mm256_castps_pd(lo), _mm256_castps_pd(hi), upper);
    // 2^m with m = n >> 3 (arithmetic) in the exponent field.
    const __m256i m = _mm256_cvtepi32_epi64(_mm_srai_epi32(ni, 3));
    const __m256d scale =
        _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(m, _mm256_set1_epi64x(1023)), 52));
    return _mm256_mul_pd(_mm256_mul_pd(t, p), scale);
  }

  /// Lanes whose double result is within 2^10 ulps of a float midpoint (low 29 mantissa bits
  /// near 2^28): their rounding is decided by the portable computation.
  PTO_SIMD static int nearMidpoint(__m256d y) {
    const __m256i low = _mm256_and_si256(_mm256_castpd_si256(y), _mm256_set1_epi64x((1 << 29) - 1));
    const __m256i dist = _mm256_sub_epi64(low, _mm256_set1_epi64x(1 << 28));
    const __m256i absd =
        _mm256_blendv_epi8(dist, _mm256_sub_epi64(_mm256_setzero_si256(), dist), dist);
    const __m256i near = _mm256_cmpgt_epi64(_mm256_set1_epi64x(1 << 10), absd);
    return _mm256_movemask_pd(_mm256_castsi256_pd(near));
  }

  PTO_SIMD static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 x = _mm256_loadu_ps(a + i);
      // In range: -87 <= x <= 88 (false for NaN), so the result is a normal float.
      const __m256 inRange = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ),
                                           _mm256_cmp_ps(x, _mm256_set1_ps(88.0f), _CMP_LE_OQ));
      const __m256d lo = exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(x)));
      const __m256d hi = exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
      const int slow =
          (~_mm256_movemask_ps(inRange) & 0xFF) | nearMidpoint(lo) | (nearMidpoint(hi) << 4);
      float xs[8];
      if (slow) _mm256_storeu_ps(xs, x); // d may alias a
      const __m256 y = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
      _mm256_storeu_ps(d + i, y);
      for (int k = 0; k < 8; ++k)
        if (slow & (1 << k)) d[i + static_cast<size_t>(k)] = expF32Ref(xs[k]);
    }
    expPortable(d + i, a + i, n - i);
  }
};
#endif

} // namespace

void expF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx2) return ExpSimd::run(d, a, n);
#endif
  (void)vector;
  expPortable(d, a, n);
}

} // namespace pto::rt::cpu
