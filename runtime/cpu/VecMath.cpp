#include "runtime/cpu/VecMath.h"

#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"

#include <cmath>
#include <cstdint>

namespace pto::rt::cpu {

float expF32Ref(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}
float logF32Ref(float x) {
  return static_cast<float>(std::log(static_cast<double>(x)));
}
float sqrtF32Ref(float x) {
  return static_cast<float>(std::sqrt(static_cast<double>(x)));
}
float rsqrtF32Ref(float x) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
}
float recipF32Ref(float x) {
  return 1.0f / x;
}
float divF32Ref(float a, float b) {
  return a / b;
}

namespace {

template <float (*F)(float)> void portable(float* d, const float* a, size_t n) {
  for (size_t i = 0; i < n; ++i)
    d[i] = F(a[i]);
}

#ifdef PTO_X86_SIMD
// The constants of the exp and log kernels, shared by the 4- and 8-lane forms. ln2 is split in
// a high part with 32 zero low bits (n * hi is exact for the n that occur) and the rest.
constexpr double kEightOverLn2 = 11.541560327111707;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1, kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kLn2Over8Hi = kLn2Hi / 8, kLn2Over8Lo = kLn2Lo / 8; // exact: powers of two

/// 2^(j/8) for j = 0..7, each within half a double ulp (the C library's exp2 of an exact
/// argument); their error is part of the fast path's error budget (far below 2^10 ulps).
struct Exp2Table {
  alignas(64) double v[8];
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
    const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(kEightOverLn2)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kLn2Over8Hi), x);
    r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kLn2Over8Lo), r);
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
    portable<expF32Ref>(d + i, a + i, n - i);
  }
};
struct LogSimd {
  PTO_SIMD static __m256d c(double v) { return _mm256_set1_pd(v); }

  /// log of four positive normal floats, given as their exponent e (int32 lanes) and mantissa
  /// m in [sqrt(1/2), sqrt(2)) (exact in double): log x = e ln2 + log m, and
  /// log m = 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.1716:
  /// the series to s^20/21 (the next term is below 2^-55 relative). m - 1 and m + 1 are exact,
  /// s carries one rounding; ln2 is split so that e * hi is exact for |e| < 2^21.
  PTO_SIMD static __m256d log4(__m128i e, __m256d m) {
    const __m256d one = c(1.0);
    const __m256d s = _mm256_div_pd(_mm256_sub_pd(m, one), _mm256_add_pd(m, one));
    const __m256d z = _mm256_mul_pd(s, s), z2 = _mm256_mul_pd(z, z), z4 = _mm256_mul_pd(z2, z2);
    const __m256d z8 = _mm256_mul_pd(z4, z4);
    // Estrin on q(z) = 1/3 + z/5 + ... + z^9/21, then log m = 2s + 2s * z * q(z).
    const __m256d q01 = _mm256_fmadd_pd(z, c(1.0 / 5), c(1.0 / 3));
    const __m256d q23 = _mm256_fmadd_pd(z, c(1.0 / 9), c(1.0 / 7));
    const __m256d q45 = _mm256_fmadd_pd(z, c(1.0 / 13), c(1.0 / 11));
    const __m256d q67 = _mm256_fmadd_pd(z, c(1.0 / 17), c(1.0 / 15));
    const __m256d q89 = _mm256_fmadd_pd(z, c(1.0 / 21), c(1.0 / 19));
    const __m256d q03 = _mm256_fmadd_pd(z2, q23, q01), q47 = _mm256_fmadd_pd(z2, q67, q45);
    const __m256d q = _mm256_fmadd_pd(z8, q89, _mm256_fmadd_pd(z4, q47, q03));
    const __m256d s2 = _mm256_add_pd(s, s);
    const __m256d logm = _mm256_fmadd_pd(_mm256_mul_pd(s2, z), q, s2);
    const __m256d ed = _mm256_cvtepi32_pd(e);
    return _mm256_fmadd_pd(ed, c(kLn2Hi), _mm256_fmadd_pd(ed, c(kLn2Lo), logm));
  }

  PTO_SIMD static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256i ix = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      // Positive normal finite: 0x00800000 <= bits < 0x7f800000 as signed integers.
      const __m256i ok = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), ix),
                                             _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), ix));
      // e = exponent of x relative to sqrt(1/2) (bits 0x3f3504f3), m = x / 2^e.
      const __m256i t = _mm256_sub_epi32(ix, _mm256_set1_epi32(0x3f3504f3));
      const __m256i e = _mm256_srai_epi32(t, 23);
      const __m256 m = _mm256_castsi256_ps(_mm256_sub_epi32(ix, _mm256_slli_epi32(e, 23)));
      const __m256d lo =
          log4(_mm256_castsi256_si128(e), _mm256_cvtps_pd(_mm256_castps256_ps128(m)));
      const __m256d hi =
          log4(_mm256_extracti128_si256(e, 1), _mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)));
      const int slow = (~_mm256_movemask_ps(_mm256_castsi256_ps(ok)) & 0xFF) |
                       ExpSimd::nearMidpoint(lo) | (ExpSimd::nearMidpoint(hi) << 4);
      float xs[8];
      if (slow) _mm256_storeu_si256(reinterpret_cast<__m256i*>(xs), ix); // d may alias a
      _mm256_storeu_ps(d + i, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
      for (int k = 0; k < 8; ++k)
        if (slow & (1 << k)) d[i + static_cast<size_t>(k)] = logF32Ref(xs[k]);
    }
    for (; i < n; ++i)
      d[i] = logF32Ref(a[i]);
  }
};

// GCC 12 reports the _mm512_undefined_*() operand inside its own AVX-512 intrinsics (shifts,
// conversions, extracts) as maybe uninitialized once they are inlined: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// ExpSimd and LogSimd on eight double lanes (AVX-512F): the same operations in the same order
/// (the same reduction, polynomial, table, fused multiply-adds and roundings), so every lane's
/// double is the AVX2 kernel's, and the same lanes fall back to the portable computation.
struct ExpSimd512 {
  PTO_SIMD512 static __m512d c(double v) { return _mm512_set1_pd(v); }

  PTO_SIMD512 static __m512d exp8(__m512d x) {
    const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(x, c(kEightOverLn2)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(n, c(kLn2Over8Hi), x);
    r = _mm512_fnmadd_pd(n, c(kLn2Over8Lo), r);
    const __m512d r2 = _mm512_mul_pd(r, r), r4 = _mm512_mul_pd(r2, r2), r8 = _mm512_mul_pd(r4, r4);
    const __m512d p01 = _mm512_fmadd_pd(r, c(1.0), c(1.0));
    const __m512d p23 = _mm512_fmadd_pd(r, c(1.0 / 6), c(1.0 / 2));
    const __m512d p45 = _mm512_fmadd_pd(r, c(1.0 / 120), c(1.0 / 24));
    const __m512d p67 = _mm512_fmadd_pd(r, c(1.0 / 5040), c(1.0 / 720));
    const __m512d p03 = _mm512_fmadd_pd(r2, p23, p01), p47 = _mm512_fmadd_pd(r2, p67, p45);
    const __m512d p = _mm512_fmadd_pd(r8, c(1.0 / 40320), _mm512_fmadd_pd(r4, p47, p03));
    const __m256i ni = _mm512_cvtpd_epi32(n);
    // The whole 2^(j/8) table is one register: entry j = n & 7 by a permute.
    const __m512i j = _mm512_cvtepi32_epi64(_mm256_and_si256(ni, _mm256_set1_epi32(7)));
    const __m512d t = _mm512_permutexvar_pd(j, _mm512_load_pd(kExp2.v));
    const __m512i m = _mm512_cvtepi32_epi64(_mm256_srai_epi32(ni, 3));
    const __m512d scale =
        _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(m, _mm512_set1_epi64(1023)), 52));
    return _mm512_mul_pd(_mm512_mul_pd(t, p), scale);
  }

  /// ExpSimd::nearMidpoint on eight lanes.
  PTO_SIMD512 static __mmask8 nearMidpoint(__m512d y) {
    const __m512i low =
        _mm512_and_si512(_mm512_castpd_si512(y), _mm512_set1_epi64((int64_t{1} << 29) - 1));
    const __m512i dist = _mm512_abs_epi64(_mm512_sub_epi64(low, _mm512_set1_epi64(1 << 28)));
    return _mm512_cmplt_epi64_mask(dist, _mm512_set1_epi64(1 << 10));
  }

  /// Sixteen floats: their doubles' exp rounded to float; `slow` gets the lanes to recompute.
  PTO_SIMD512 static __m512 exp16(__m512 x, unsigned& slow) {
    const __mmask16 inRange = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_GE_OQ) &
                              _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.0f), _CMP_LE_OQ);
    const __m512d lo = exp8(_mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    const __m512d hi =
        exp8(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))));
    slow = (~static_cast<unsigned>(inRange) & 0xFFFFu) | nearMidpoint(lo) |
           (static_cast<unsigned>(nearMidpoint(hi)) << 8);
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo))),
                           _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
  }

  PTO_SIMD512 static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m512 x = _mm512_loadu_ps(a + i);
      unsigned slow = 0;
      const __m512 y = exp16(x, slow);
      float xs[16];
      if (slow) _mm512_storeu_ps(xs, x); // d may alias a
      _mm512_storeu_ps(d + i, y);
      for (int k = 0; slow != 0; ++k, slow >>= 1)
        if (slow & 1) d[i + static_cast<size_t>(k)] = expF32Ref(xs[k]);
    }
    ExpSimd::run(d + i, a + i, n - i);
  }
};

struct LogSimd512 {
  PTO_SIMD512 static __m512d c(double v) { return _mm512_set1_pd(v); }

  /// LogSimd::log4 on eight lanes.
  PTO_SIMD512 static __m512d log8(__m256i e, __m512d m) {
    const __m512d one = c(1.0);
    const __m512d s = _mm512_div_pd(_mm512_sub_pd(m, one), _mm512_add_pd(m, one));
    const __m512d z = _mm512_mul_pd(s, s), z2 = _mm512_mul_pd(z, z), z4 = _mm512_mul_pd(z2, z2);
    const __m512d z8 = _mm512_mul_pd(z4, z4);
    const __m512d q01 = _mm512_fmadd_pd(z, c(1.0 / 5), c(1.0 / 3));
    const __m512d q23 = _mm512_fmadd_pd(z, c(1.0 / 9), c(1.0 / 7));
    const __m512d q45 = _mm512_fmadd_pd(z, c(1.0 / 13), c(1.0 / 11));
    const __m512d q67 = _mm512_fmadd_pd(z, c(1.0 / 17), c(1.0 / 15));
    const __m512d q89 = _mm512_fmadd_pd(z, c(1.0 / 21), c(1.0 / 19));
    const __m512d q03 = _mm512_fmadd_pd(z2, q23, q01), q47 = _mm512_fmadd_pd(z2, q67, q45);
    const __m512d q = _mm512_fmadd_pd(z8, q89, _mm512_fmadd_pd(z4, q47, q03));
    const __m512d s2 = _mm512_add_pd(s, s);
    const __m512d logm = _mm512_fmadd_pd(_mm512_mul_pd(s2, z), q, s2);
    const __m512d ed = _mm512_cvtepi32_pd(e);
    return _mm512_fmadd_pd(ed, c(kLn2Hi), _mm512_fmadd_pd(ed, c(kLn2Lo), logm));
  }

  PTO_SIMD512 static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m512i ix = _mm512_loadu_si512(a + i);
      // Positive normal finite: 0x00800000 <= bits < 0x7f800000 as signed integers.
      const __mmask16 ok = _mm512_cmpge_epi32_mask(ix, _mm512_set1_epi32(0x00800000)) &
                           _mm512_cmplt_epi32_mask(ix, _mm512_set1_epi32(0x7f800000));
      const __m512i t = _mm512_sub_epi32(ix, _mm512_set1_epi32(0x3f3504f3));
      const __m512i e = _mm512_srai_epi32(t, 23);
      const __m512 m = _mm512_castsi512_ps(_mm512_sub_epi32(ix, _mm512_slli_epi32(e, 23)));
      const __m512d lo =
          log8(_mm512_castsi512_si256(e), _mm512_cvtps_pd(_mm512_castps512_ps256(m)));
      const __m512d hi =
          log8(_mm512_extracti64x4_epi64(e, 1),
               _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1))));
      unsigned slow = (~static_cast<unsigned>(ok) & 0xFFFFu) | ExpSimd512::nearMidpoint(lo) |
                      (static_cast<unsigned>(ExpSimd512::nearMidpoint(hi)) << 8);
      float xs[16];
      if (slow) _mm512_storeu_si512(xs, ix); // d may alias a
      _mm512_storeu_ps(d + i, _mm512_castpd_ps(_mm512_insertf64x4(
                                  _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo))),
                                  _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1)));
      for (int k = 0; slow != 0; ++k, slow >>= 1)
        if (slow & 1) d[i + static_cast<size_t>(k)] = logF32Ref(xs[k]);
    }
    LogSimd::run(d + i, a + i, n - i);
  }
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// 1/sqrt(x) as the portable kernel computes it, in double: widen (exact), sqrt, divide, round
/// to float; each step is an IEEE operation, so four lanes give the scalar bits.
struct RsqrtSimd {
  PTO_SIMD static __m128 rsqrt4(__m128 x) {
    return _mm256_cvtpd_ps(_mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(_mm256_cvtps_pd(x))));
  }
  PTO_SIMD static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 x = _mm256_loadu_ps(a + i);
      _mm256_storeu_ps(d + i, _mm256_set_m128(rsqrt4(_mm256_extractf128_ps(x, 1)),
                                              rsqrt4(_mm256_castps256_ps128(x))));
    }
    portable<rsqrtF32Ref>(d + i, a + i, n - i);
  }
};

/// RsqrtSimd on sixteen lanes, as two groups of eight doubles (AVX-512F): the same IEEE steps.
struct RsqrtSimd512 {
  PTO_SIMD512 static __m256 rsqrt8(__m256 x) {
    return _mm512_maskz_cvtpd_ps(
        0xff, _mm512_maskz_div_pd(0xff, _mm512_set1_pd(1.0),
                                  _mm512_maskz_sqrt_pd(0xff, _mm512_maskz_cvtps_pd(0xff, x))));
  }
  PTO_SIMD512 static void run(float* d, const float* a, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256 lo = rsqrt8(_mm256_loadu_ps(a + i)), hi = rsqrt8(_mm256_loadu_ps(a + i + 8));
      _mm256_storeu_ps(d + i, lo);
      _mm256_storeu_ps(d + i + 8, hi);
    }
    RsqrtSimd::run(d + i, a + i, n - i);
  }
};

PTO_SIMD void sqrtRun(float* d, const float* a, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_sqrt_ps(_mm256_loadu_ps(a + i)));
  portable<sqrtF32Ref>(d + i, a + i, n - i);
}

PTO_SIMD void recipRun(float* d, const float* a, size_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_div_ps(one, _mm256_loadu_ps(a + i)));
  portable<recipF32Ref>(d + i, a + i, n - i);
}

/// The scalar op binaryRun finishes its tail with (Kernels.cpp's ODiv on floats).
struct ODivF32 {
  static float f(float a, float b) { return divF32Ref(a, b); }
};
#endif

} // namespace

void expF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx512) return ExpSimd512::run(d, a, n);
  if (vector && simdLevel() >= SimdLevel::Avx2) return ExpSimd::run(d, a, n);
#endif
  (void)vector;
  portable<expF32Ref>(d, a, n);
}

void logF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx512) return LogSimd512::run(d, a, n);
  if (vector && simdLevel() >= SimdLevel::Avx2) return LogSimd::run(d, a, n);
#endif
  (void)vector;
  portable<logF32Ref>(d, a, n);
}

void sqrtF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx2) return sqrtRun(d, a, n);
#endif
  (void)vector;
  portable<sqrtF32Ref>(d, a, n);
}

void rsqrtF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx512) return RsqrtSimd512::run(d, a, n);
  if (vector && simdLevel() >= SimdLevel::Avx2) return RsqrtSimd::run(d, a, n);
#endif
  (void)vector;
  portable<rsqrtF32Ref>(d, a, n);
}

void recipF32(float* d, const float* a, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx2) return recipRun(d, a, n);
#endif
  (void)vector;
  portable<recipF32Ref>(d, a, n);
}

void divF32(float* d, const float* a, const float* b, size_t n, bool vector) {
#ifdef PTO_X86_SIMD
  if (vector && simdLevel() >= SimdLevel::Avx2)
    return simd::binaryRun<isa::DType::F32, ODivF32, simd::VDiv>(d, a, b, n);
#endif
  (void)vector;
  for (size_t i = 0; i < n; ++i)
    d[i] = divF32Ref(a[i], b[i]);
}

} // namespace pto::rt::cpu
