// x86 vector building blocks for the cpu kernels' fast paths (AVX2 + F16C + FMA), compiled per
// function with a target attribute so the library itself keeps the baseline ISA: Kernels.cpp
// picks a fast kernel only when the running CPU has these extensions (simdAvailable()).
//
// Every fast path gives the bits of the portable kernel it replaces; tests/unit/RuntimeOpsTest.cpp
// runs both on the same tiles (all f16 / bf16 patterns against a spread of second operands).
// Why the results agree:
//   - f16 / bf16 values are widened to f32 exactly (F16C, a 16-bit shift), the op is the same
//     single f32 operation as the portable Op::f, and the f32 result is rounded once to nearest
//     even (F16C with an explicit RNE immediate; the bf16 integer rounding of f2b).
//   - NaNs: the portable f2h / f2b make every NaN the quiet NaN with its sign (0x7e00 / the top
//     half | 0x40); the hardware keeps payload bits, so the stores below clear them the same way.
#pragma once

#include "runtime/cpu/Elem.h"

#if defined(__x86_64__) || defined(__i386__)
#define PTO_X86_SIMD 1
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

// Functions using the intrinsics. Everything they call must carry it too (or be plain code the
// compiler may inline into it); lambdas would not inherit it, so helpers are static members.
#define PTO_SIMD __attribute__((target("avx2,f16c,fma")))

// A further tier for f16 elementwise ops where the CPU computes f16 natively (AVX512-FP16,
// Sapphire Rapids and later): F16C's conversions cap the AVX2 path at about 3 cycles per 8
// elements, several times slower than moving the bytes. Built when <immintrin.h> declares the
// intrinsics without -mavx512fp16 (GCC >= 12 does; clang 14 only with the flag): the header
// guards say so.
// AVX-512F: TMATMUL's fmas on 16 lanes, for CPUs that run them at twice the AVX2 rate.
#define PTO_SIMD512 __attribute__((target("avx2,f16c,fma,avx512f")))

#if defined(__AVX512FP16INTRIN_H_INCLUDED) || defined(__AVX512FP16INTRIN_H)
#define PTO_X86_FP16 1
#define PTO_SIMD_FP16 __attribute__((target("avx2,f16c,fma,avx512f,avx512bw,avx512vl,avx512fp16")))
#endif

namespace pto::rt::cpu::simd {

/// Eight lanes of element type D as f32: load (exact widening) and store (one rounding).
template <isa::DType D> struct V;

template <> struct V<isa::DType::F32> {
  using S = float;
  PTO_SIMD static __m256 ld(const S* p) { return _mm256_loadu_ps(p); }
  PTO_SIMD static void st(S* p, __m256 v) { _mm256_storeu_ps(p, v); }
  /// Sixteen lanes: v0 to p[0..8), v1 to p[8..16).
  PTO_SIMD static void st2(S* p, __m256 v0, __m256 v1) {
    st(p, v0);
    st(p + 8, v1);
  }
};

template <> struct V<isa::DType::F16> {
  using S = uint16_t;
  PTO_SIMD static __m256 ld(const S* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  /// f32 -> f16 bits, round to nearest even, NaN -> sign | 0x7e00 (as f2h).
  PTO_SIMD static __m128i cvt(__m256 v) {
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    // A NaN comes out as sign | 0x7e00 | payload bits; clear the payload (the low 9 bits).
    const __m128i nan =
        _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
    return _mm_andnot_si128(_mm_and_si128(nan, _mm_set1_epi16(0x01ff)), h);
  }
  PTO_SIMD static void st(S* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), cvt(v));
  }
  /// st on sixteen lanes, the NaN payloads cleared once on the 256-bit pair: the conversions
  /// (about 3 cycles per 8 elements on AVX2 machines) leave few slots for the fix-up.
  PTO_SIMD static void st2(S* p, __m256 v0, __m256 v1) {
    const __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT),
                                       _mm256_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT));
    const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                           _mm256_set1_epi16(0x7c00));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm256_andnot_si256(_mm256_and_si256(nan, _mm256_set1_epi16(0x01ff)), h));
  }
};

template <> struct V<isa::DType::BF16> {
  using S = uint16_t;
  PTO_SIMD static __m256 ld(const S* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  /// f2b on eight lanes: (x + 0x7fff + lsb) >> 16, NaN -> (x >> 16) | 0x40.
  PTO_SIMD static void st(S* p, __m256 v) {
    const __m256i x = _mm256_castps_si256(v), hi = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    const __m256i q = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
    // Every lane is <= 0xffff, so the unsigned-saturating pack is exact; it packs within 128-bit
    // halves, so gather qwords 0 and 2.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(q, q), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  PTO_SIMD static void st2(S* p, __m256 v0, __m256 v1) {
    st(p, v0);
    st(p + 8, v1);
  }
};

// The f32 operation of each portable Op (Kernels.cpp), lane by lane on 8 lanes (f) and on 16
// (g, AVX-512F), and the same on 32 f16 lanes (h, AVX512-FP16). max/min keep the portable
// `a < b ? b : a` / `b < a ? b : a`: maxps(x, y) is `x > y ? x : y` (likewise maxph), so the
// operands are swapped.
//
// When both operands are NaNs, x86 returns the first source operand's (quieted). The compiler
// may swap the operands of a commutative add or multiply, which would flip the sign of such a
// NaN result; the asm keeps `a` first, as the portable `a + b` compiles.
#define PTO_ASM_OP(INSN, REG) asm(INSN " %2, %1, %0" : "=" REG(r) : REG(a), REG(b))
struct VAdd {
  PTO_SIMD static __m256 f(__m256 a, __m256 b) {
    __m256 r;
    PTO_ASM_OP("vaddps", "x");
    return r;
  }
  PTO_SIMD512 static __m512 g(__m512 a, __m512 b) {
    __m512 r;
    PTO_ASM_OP("vaddps", "v");
    return r;
  }
#ifdef PTO_X86_FP16
  PTO_SIMD_FP16 static __m512h h(__m512h a, __m512h b) {
    __m512h r;
    PTO_ASM_OP("vaddph", "v");
    return r;
  }
#endif
};
struct VMul {
  PTO_SIMD static __m256 f(__m256 a, __m256 b) {
    __m256 r;
    PTO_ASM_OP("vmulps", "x");
    return r;
  }
  PTO_SIMD512 static __m512 g(__m512 a, __m512 b) {
    __m512 r;
    PTO_ASM_OP("vmulps", "v");
    return r;
  }
#ifdef PTO_X86_FP16
  PTO_SIMD_FP16 static __m512h h(__m512h a, __m512h b) {
    __m512h r;
    PTO_ASM_OP("vmulph", "v");
    return r;
  }
#endif
};
#undef PTO_ASM_OP
#ifdef PTO_X86_FP16
#define PTO_VOP(NAME, PS, PS512, PH, X, Y)                                                         \
  struct NAME {                                                                                    \
    PTO_SIMD static __m256 f(__m256 a, __m256 b) { return PS(X, Y); }                              \
    PTO_SIMD512 static __m512 g(__m512 a, __m512 b) { return PS512(X, Y); }                        \
    PTO_SIMD_FP16 static __m512h h(__m512h a, __m512h b) { return PH(X, Y); }                      \
  };
#else
#define PTO_VOP(NAME, PS, PS512, PH, X, Y)                                                         \
  struct NAME {                                                                                    \
    PTO_SIMD static __m256 f(__m256 a, __m256 b) { return PS(X, Y); }                              \
    PTO_SIMD512 static __m512 g(__m512 a, __m512 b) { return PS512(X, Y); }                        \
  };
#endif
// vmaxps / vminps on 16 lanes in their zero-masking forms with every lane selected (the same
// instructions): GCC 12 warns that the plain forms' undefined pass-through may be uninitialized.
PTO_SIMD512 inline __m512 max512(__m512 a, __m512 b) {
  return _mm512_maskz_max_ps(0xffff, a, b);
}
PTO_SIMD512 inline __m512 min512(__m512 a, __m512 b) {
  return _mm512_maskz_min_ps(0xffff, a, b);
}
PTO_VOP(VSub, _mm256_sub_ps, _mm512_sub_ps, _mm512_sub_ph, a, b)
PTO_VOP(VDiv, _mm256_div_ps, _mm512_div_ps, _mm512_div_ph, a, b)
PTO_VOP(VMax, _mm256_max_ps, max512, _mm512_max_ph, b, a)
PTO_VOP(VMin, _mm256_min_ps, min512, _mm512_min_ph, b, a)
#undef PTO_VOP

/// d[i] = op(a[i], b[i]) for n contiguous elements; the tail (< 8) through the portable Op.
/// d may be a or b itself (each lane is read before it is written), never a partial overlap.
template <isa::DType D, typename Op, typename VOp>
PTO_SIMD void binaryRun(typename Tr<D>::S* d, const typename Tr<D>::S* a,
                        const typename Tr<D>::S* b, size_t n) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16) { // two vectors per step: both loads issue before the stores
    const __m256 x0 = V<D>::ld(a + j), y0 = V<D>::ld(b + j), x1 = V<D>::ld(a + j + 8),
                 y1 = V<D>::ld(b + j + 8);
    V<D>::st2(d + j, VOp::f(x0, y0), VOp::f(x1, y1));
  }
  if (j + 8 <= n) {
    V<D>::st(d + j, VOp::f(V<D>::ld(a + j), V<D>::ld(b + j)));
    j += 8;
  }
  for (; j < n; ++j)
    d[j] = Tr<D>::st(Op::f(Tr<D>::ld(a[j]), Tr<D>::ld(b[j])));
}

/// The f32 operations of the unary ops with an f16 vector path: square root and 1/x, each one
/// IEEE operation (TSQRT's portable (float)sqrt((double)x) is the f32 square root: 53 >= 2*24+2).
struct VSqrt {
  PTO_SIMD static __m256 f(__m256 v) { return _mm256_sqrt_ps(v); }
};
struct VRecip {
  PTO_SIMD static __m256 f(__m256 v) { return _mm256_div_ps(_mm256_set1_ps(1.0f), v); }
};

/// d[i] = op(a[i]) for n contiguous elements; the tail (< 16) through the portable Op. d may be
/// a itself, never a partial overlap.
template <isa::DType D, typename Op, typename VOp>
PTO_SIMD void unaryRun(typename Tr<D>::S* d, const typename Tr<D>::S* a, size_t n) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16)
    V<D>::st2(d + j, VOp::f(V<D>::ld(a + j)), VOp::f(V<D>::ld(a + j + 8)));
  for (; j < n; ++j)
    d[j] = Tr<D>::st(Op::f(Tr<D>::ld(a[j])));
}

/// Transposes the 8x8 block of f32 in v (row k = v[k]): afterwards v[m] holds column m.
// The small fixed loops here and below are unrolled completely (GCC does not at -O2 by itself),
// so that their arrays of vectors live in registers rather than on the stack.
PTO_SIMD inline void transpose8(__m256 v[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(v[k], v[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(v[k], v[k + 1]);
  }
#pragma GCC unroll 8
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
  }
#pragma GCC unroll 8
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    v[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}

/// Column j of eight f32 rows `pitch` elements apart.
PTO_SIMD inline __m256 column8(const float* p, size_t pitch) {
  return _mm256_set_ps(p[7 * pitch], p[6 * pitch], p[5 * pitch], p[4 * pitch], p[3 * pitch],
                       p[2 * pitch], p[pitch], p[0]);
}

/// The reductions of 8 * G f32 rows of n >= 1 elements (row k at p + k * pitch), each in its own
/// row's order: out[k] = VOp(... VOp(VOp(row[0], row[1]), row[2]) ..., row[n-1]). Lane k of
/// vector g is row 8g + k's accumulator; eight columns at a time are transposed so that column
/// after column folds into it. Each accumulator is one chain of dependent steps, so G > 1 keeps
/// G chains in flight.
template <typename VOp, size_t G>
PTO_SIMD void rowReduce8(float* out, const float* p, size_t pitch, size_t n) {
  __m256 acc[G];
#pragma GCC unroll 8
  for (size_t g = 0; g < G; ++g)
    acc[g] = column8(p + 8 * g * pitch, pitch);
  size_t j = 1;
  for (; j + 8 <= n; j += 8)
#pragma GCC unroll 8
    for (size_t g = 0; g < G; ++g) {
      __m256 v[8];
#pragma GCC unroll 8
      for (size_t k = 0; k < 8; ++k)
        v[k] = _mm256_loadu_ps(p + (8 * g + k) * pitch + j);
      transpose8(v);
#pragma GCC unroll 8
      for (const __m256& column : v)
        acc[g] = VOp::f(acc[g], column);
    }
  for (; j < n; ++j)
#pragma GCC unroll 8
    for (size_t g = 0; g < G; ++g)
      acc[g] = VOp::f(acc[g], column8(p + 8 * g * pitch + j, pitch));
#pragma GCC unroll 8
  for (size_t g = 0; g < G; ++g)
    _mm256_storeu_ps(out + 8 * g, acc[g]);
}

/// The reductions of the n columns of `rows` f32 rows (row r at p + r * pitch), each down its
/// own column in row order: out[j] = VOp(... VOp(row0[j], row1[j]) ..., row_last[j]).
/// Eight vectors of columns at a time (eight chains in flight); the last columns (< 8) through
/// ScalarOp.
template <typename VOp, typename ScalarOp>
PTO_SIMD void colReduce(float* out, const float* p, size_t pitch, size_t rows, size_t n) {
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (size_t i = 0; i < 8; ++i)
      acc[i] = _mm256_loadu_ps(p + j + 8 * i);
    for (size_t r = 1; r < rows; ++r)
#pragma GCC unroll 8
      for (size_t i = 0; i < 8; ++i)
        acc[i] = VOp::f(acc[i], _mm256_loadu_ps(p + r * pitch + j + 8 * i));
#pragma GCC unroll 8
    for (size_t i = 0; i < 8; ++i)
      _mm256_storeu_ps(out + j + 8 * i, acc[i]);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 acc = _mm256_loadu_ps(p + j);
    for (size_t r = 1; r < rows; ++r)
      acc = VOp::f(acc, _mm256_loadu_ps(p + r * pitch + j));
    _mm256_storeu_ps(out + j, acc);
  }
  for (; j < n; ++j) {
    float acc = p[j];
    for (size_t r = 1; r < rows; ++r)
      acc = ScalarOp::f(acc, p[r * pitch + j]);
    out[j] = acc;
  }
}

/// d[i] = op(a[i], s) for n contiguous elements (s already in the compute type, as the portable
/// kernel has it).
template <isa::DType D, typename Op, typename VOp>
PTO_SIMD void scalarRun(typename Tr<D>::S* d, const typename Tr<D>::S* a, float s, size_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m256 x0 = V<D>::ld(a + j), x1 = V<D>::ld(a + j + 8);
    V<D>::st2(d + j, VOp::f(x0, vs), VOp::f(x1, vs));
  }
  if (j + 8 <= n) {
    V<D>::st(d + j, VOp::f(V<D>::ld(a + j), vs));
    j += 8;
  }
  for (; j < n; ++j)
    d[j] = Tr<D>::st(Op::f(Tr<D>::ld(a[j]), s));
}

/// Sixteen f16 lanes as f32 on AVX-512F. The conversions bound f16 elementwise ops without
/// AVX512-FP16, and their 512-bit forms convert twice the lanes per instruction at about the
/// 256-bit forms' cost (AMD Zen 4: the 16-lane loop takes 0.6x the 8-lane one's time).
/// The conversions are written in their zero-masking forms with every lane selected (the same
/// instructions): GCC 12 warns that the plain forms' undefined pass-through operand may be used
/// uninitialized.
struct F16x16 {
  PTO_SIMD512 static __m512 ld(const uint16_t* p) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  /// f32 -> f16 bits, round to nearest even, NaN -> sign | 0x7e00 (as f2h). The NaN payload is
  /// cleared before the conversion, in f32 (sign, exponent and quiet bit kept: vcvtps2ph makes
  /// that sign | 0x7e00): a compare into a mask and a masked and, cheaper than the 16-bit
  /// fix-up after it (V<F16>::st2), which cost a third of the loop's time.
  PTO_SIMD512 static void st(uint16_t* p, __m512 v) {
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i x = _mm512_castps_si512(v);
    const __m512i q =
        _mm512_mask_and_epi32(x, nan, x, _mm512_set1_epi32(static_cast<int>(0xffc00000u)));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(p),
        _mm512_maskz_cvtps_ph(0xffff, _mm512_castsi512_ps(q), _MM_FROUND_TO_NEAREST_INT));
  }
};

/// binaryRun for f16 on 16 lanes (AVX-512F); the tail (< 16) through binaryRun.
template <typename Op, typename VOp>
PTO_SIMD512 void binaryRunF16x16(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16)
    F16x16::st(d + j, VOp::g(F16x16::ld(a + j), F16x16::ld(b + j)));
  binaryRun<isa::DType::F16, Op, VOp>(d + j, a + j, b + j, n - j);
}

/// scalarRun for f16 on 16 lanes (AVX-512F); the tail (< 16) through scalarRun.
template <typename Op, typename VOp>
PTO_SIMD512 void scalarRunF16x16(uint16_t* d, const uint16_t* a, float s, size_t n) {
  const __m512 vs = _mm512_set1_ps(s);
  size_t j = 0;
  for (; j + 16 <= n; j += 16)
    F16x16::st(d + j, VOp::g(F16x16::ld(a + j), vs));
  scalarRun<isa::DType::F16, Op, VOp>(d + j, a + j, s, n - j);
}

#ifdef PTO_X86_FP16
// Native f16: one correctly rounded f16 +, -, *, / equals the f32 operation rounded once to f16
// (the double rounding is harmless since 24 >= 2 * 11 + 2), and f16 values lose nothing in f32,
// so these give the F16C path's bits. A NaN result keeps payload bits (and max / min pass a
// signalling NaN on unquieted): made sign | 0x7e00.
PTO_SIMD_FP16 inline __m512i fixNanH(__m512h r) {
  const __mmask32 nan = _mm512_cmp_ph_mask(r, r, _CMP_UNORD_Q);
  const __m512i x = _mm512_castph_si512(r);
  const __m512i q =
      _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi16(static_cast<short>(0x8000))),
                      _mm512_set1_epi16(0x7e00));
  return _mm512_mask_blend_epi16(nan, x, q);
}

/// binaryRun for f16 on AVX512-FP16, 32 lanes at a time; the tail with masked loads / stores.
template <typename VOp>
PTO_SIMD_FP16 void binaryRunH(uint16_t* d, const uint16_t* a, const uint16_t* b, size_t n) {
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m512h x = _mm512_castsi512_ph(_mm512_loadu_si512(a + j)),
                  y = _mm512_castsi512_ph(_mm512_loadu_si512(b + j));
    _mm512_storeu_si512(d + j, fixNanH(VOp::h(x, y)));
  }
  if (j < n) {
    const __mmask32 m = (uint32_t{1} << (n - j)) - 1;
    const __m512h x = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, a + j)),
                  y = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, b + j));
    _mm512_mask_storeu_epi16(d + j, m, fixNanH(VOp::h(x, y)));
  }
}

/// scalarRun for f16 on AVX512-FP16; s is the scalar's f16 bits.
template <typename VOp>
PTO_SIMD_FP16 void scalarRunH(uint16_t* d, const uint16_t* a, uint16_t s, size_t n) {
  const __m512h y = _mm512_castsi512_ph(_mm512_set1_epi16(static_cast<short>(s)));
  size_t j = 0;
  for (; j + 32 <= n; j += 32)
    _mm512_storeu_si512(d + j, fixNanH(VOp::h(_mm512_castsi512_ph(_mm512_loadu_si512(a + j)), y)));
  if (j < n) {
    const __mmask32 m = (uint32_t{1} << (n - j)) - 1;
    _mm512_mask_storeu_epi16(
        d + j, m, fixNanH(VOp::h(_mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, a + j)), y)));
  }
}
#endif

/// TCVT f32 -> f16 on eight lanes with everything vcvtps2ph leaves out: NaN payloads cleared
/// (as f2h), and with saturation +-inf become +-65504 (0x7bff).
PTO_SIMD inline __m128i cvtF32F16Careful(__m256 v, bool sat) {
  __m128i h = V<isa::DType::F16>::cvt(v);
  const __m128i inf = _mm_set1_epi16(0x7c00), mag = _mm_set1_epi16(0x7fff), one = _mm_set1_epi16(1);
  // 0x7c00 - 1 = 0x7bff with the sign bit untouched
  if (sat) h = _mm_sub_epi16(h, _mm_and_si128(_mm_cmpeq_epi16(_mm_and_si128(h, mag), inf), one));
  return h;
}

/// Lanes that need cvtF32F16Careful: NaNs and, with saturation, values that round to an
/// infinity (|x| >= 65520; `limit` is 65520 or +inf).
PTO_SIMD inline __m256 cvtF32F16Special(__m256 v, __m256 limit) {
  const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  return _mm256_cmp_ps(_mm256_and_ps(v, absMask), limit, _CMP_NLT_UQ);
}

/// TCVT f32 -> f16, round to nearest even; with saturation +-inf become +-65504 (0x7bff), as
/// the portable kernel does after f2h. Sixteen ordinary lanes take the plain vcvtps2ph at the
/// cost of one test; a group with a special lane takes the careful conversion.
PTO_SIMD inline void cvtF32F16Run(uint16_t* d, const float* a, size_t n, bool sat) {
  const __m256 limit = _mm256_set1_ps(sat ? 65520.0f : INFINITY);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m256 v0 = _mm256_loadu_ps(a + j), v1 = _mm256_loadu_ps(a + j + 8);
    const bool plain = _mm256_movemask_ps(_mm256_or_ps(cvtF32F16Special(v0, limit),
                                                       cvtF32F16Special(v1, limit))) == 0;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j),
                     plain ? _mm256_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT)
                           : cvtF32F16Careful(v0, sat));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j + 8),
                     plain ? _mm256_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT)
                           : cvtF32F16Careful(v1, sat));
  }
  for (; j + 8 <= n; j += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j),
                     cvtF32F16Careful(_mm256_loadu_ps(a + j), sat));
  for (; j < n; ++j) {
    uint16_t h = f2h(a[j]);
    if (sat && (h & 0x7fffu) == 0x7c00u) h = static_cast<uint16_t>((h & 0x8000u) | 0x7bffu);
    d[j] = h;
  }
}

/// cvtF32F16Run on sixteen lanes (AVX-512F): one vcvtps2ph per 16 floats and one mask test for
/// the special lanes; a group with one takes the 8-lane careful conversion on both halves.
PTO_SIMD512 inline void cvtF32F16Run512(uint16_t* d, const float* a, size_t n, bool sat) {
  const __m512 limit = _mm512_set1_ps(sat ? 65520.0f : INFINITY);
  const __m512i absMask = _mm512_set1_epi32(0x7fffffff);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 v = _mm512_loadu_ps(a + j);
    const __m512 mag = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), absMask));
    if (_mm512_cmp_ps_mask(mag, limit, _CMP_NLT_UQ) == 0) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + j),
                          _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT));
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j),
                     cvtF32F16Careful(_mm256_loadu_ps(a + j), sat));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j + 8),
                     cvtF32F16Careful(_mm256_loadu_ps(a + j + 8), sat));
  }
  cvtF32F16Run(d + j, a + j, n - j, sat);
}

// ------------------------------------------------------------------ TMATMUL, f32 accumulation
// C = A * B with each C element computed exactly as the portable kernel does: start at +0, one
// fma per k in increasing k. Only the grouping of elements changes: a block of R rows x V
// vectors of C stays in R * V accumulator registers for the whole k loop (each lane is one
// element's chain), so the fmas never wait on memory; independent chains cover the fma latency
// (4 cycles, 2 pipes: 8 chains needed, the blocks below have 12 or 16).
//
// B is packed once per call into panels two vectors wide, each a contiguous K x P array (P = 16
// or 32 floats, zero past N): a panel stays in L1 while every row block of A passes over it,
// and the packing pass also checks B for NaNs. A is read where it lies (row stride lda), C is
// written where it lies (row stride ldc): the last vector of a block is stored with a mask, so
// no column outside [0, N) is written and no tail kernel is needed.

/// Whether any of rows x cols floats (row stride ld) is a NaN.
PTO_SIMD inline bool anyNanRows(const float* p, size_t ld, uint32_t rows, uint32_t cols) {
  __m256 nan = _mm256_setzero_ps();
  bool tail = false;
  for (uint32_t r = 0; r < rows; ++r) {
    const float* row = p + size_t{r} * ld;
    uint32_t j = 0;
    for (; j + 8 <= cols; j += 8) {
      const __m256 x = _mm256_loadu_ps(row + j);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
    for (; j < cols; ++j)
      tail |= std::isnan(row[j]);
  }
  return tail || _mm256_movemask_ps(nan) != 0;
}

/// Packs B (K x N, row stride ldb) for the micro-kernels on L-lane vectors: panels of 2L
/// columns (the last one L wide when at most L columns are left), panel at column j0 starting
/// at out + j0 * K, each K rows of its width, zero past N. Returns false when B holds a NaN
/// (then the caller takes the reference kernel and `out` is unused).
PTO_SIMD inline bool packB(const float* B, size_t ldb, uint32_t K, uint32_t N, unsigned L,
                           float* out) {
  __m256 nan = _mm256_setzero_ps();
  bool tail = false;
  for (uint32_t j0 = 0; j0 < N; j0 += 2 * L) {
    const uint32_t w = std::min<uint32_t>(2 * L, N - j0), pw = w > L ? 2 * L : L;
    float* panel = out + size_t{j0} * K;
    for (uint32_t k = 0; k < K; ++k) {
      const float* src = B + size_t{k} * ldb + j0;
      float* dst = panel + size_t{k} * pw;
      uint32_t j = 0;
      for (; j + 8 <= w; j += 8) {
        const __m256 x = _mm256_loadu_ps(src + j);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        _mm256_storeu_ps(dst + j, x);
      }
      for (; j < w; ++j) {
        tail |= std::isnan(src[j]);
        dst[j] = src[j];
      }
      for (; j < pw; ++j)
        dst[j] = 0.0f;
    }
  }
  return !tail && _mm256_movemask_ps(nan) == 0;
}

/// Floats of packed B for an N-column matrix (packB's layout).
inline size_t packedBSize(uint32_t K, uint32_t N, unsigned L) {
  return size_t{K} * ((N + L - 1) / L * L);
}

/// The micro-kernels on 8 lanes (AVX2 + FMA): blocks of 6 rows x 2 vectors, twelve accumulators
/// (with the two B vectors and the broadcast A value, 15 of the 16 ymm registers).
struct Mk8 {
  static constexpr unsigned kLanes = 8, kRows = 6;
  /// Rows [0, R) of A against one packed panel of V vectors: C[r, 0 .. 8V) with the last
  /// vector's lanes [lastValid, 8) left unwritten.
  template <unsigned R, unsigned V>
  PTO_SIMD static void block(const float* A, size_t lda, const float* Bp, float* C, size_t ldc,
                             uint32_t K, unsigned lastValid) {
    __m256 acc[R][V];
#pragma GCC unroll 8
    for (unsigned r = 0; r < R; ++r)
#pragma GCC unroll 2
      for (unsigned v = 0; v < V; ++v)
        acc[r][v] = _mm256_setzero_ps();
    for (uint32_t k = 0; k < K; ++k) {
      __m256 b[V];
#pragma GCC unroll 2
      for (unsigned v = 0; v < V; ++v)
        b[v] = _mm256_loadu_ps(Bp + size_t{k} * (8 * V) + 8 * v);
#pragma GCC unroll 8
      for (unsigned r = 0; r < R; ++r) {
        const __m256 a = _mm256_broadcast_ss(A + size_t{r} * lda + k);
#pragma GCC unroll 2
        for (unsigned v = 0; v < V; ++v)
          acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
      }
    }
    // Lane i of the last vector is stored when i < lastValid.
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lastValid)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 8
    for (unsigned r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (unsigned v = 0; v + 1 < V; ++v)
        _mm256_storeu_ps(C + size_t{r} * ldc + 8 * v, acc[r][v]);
      _mm256_maskstore_ps(C + size_t{r} * ldc + 8 * (V - 1), mask, acc[r][V - 1]);
    }
  }
};

/// The micro-kernels on 16 lanes (AVX-512F): blocks of 8 rows x 2 vectors, sixteen
/// accumulators (a 128-row tile is 16 whole blocks).
struct Mk16 {
  static constexpr unsigned kLanes = 16, kRows = 8;
  template <unsigned R, unsigned V>
  PTO_SIMD512 static void block(const float* A, size_t lda, const float* Bp, float* C, size_t ldc,
                                uint32_t K, unsigned lastValid) {
    __m512 acc[R][V];
#pragma GCC unroll 8
    for (unsigned r = 0; r < R; ++r)
#pragma GCC unroll 2
      for (unsigned v = 0; v < V; ++v)
        acc[r][v] = _mm512_setzero_ps();
    for (uint32_t k = 0; k < K; ++k) {
      __m512 b[V];
#pragma GCC unroll 2
      for (unsigned v = 0; v < V; ++v)
        b[v] = _mm512_loadu_ps(Bp + size_t{k} * (16 * V) + 16 * v);
#pragma GCC unroll 8
      for (unsigned r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(A[size_t{r} * lda + k]);
#pragma GCC unroll 2
        for (unsigned v = 0; v < V; ++v)
          acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
      }
    }
    const __mmask16 mask = static_cast<__mmask16>((uint32_t{1} << lastValid) - 1);
#pragma GCC unroll 8
    for (unsigned r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (unsigned v = 0; v + 1 < V; ++v)
        _mm512_storeu_ps(C + size_t{r} * ldc + 16 * v, acc[r][v]);
      _mm512_mask_storeu_ps(C + size_t{r} * ldc + 16 * (V - 1), mask, acc[r][V - 1]);
    }
  }
};

/// The last `left` (< Mk::kRows) rows of C for one panel, as one block of that many rows.
template <class Mk, unsigned V, unsigned R = Mk::kRows - 1>
inline void lastRows(const float* A, size_t lda, const float* Bp, float* C, size_t ldc,
                     uint32_t left, uint32_t K, unsigned lastValid) {
  if constexpr (R > 0) {
    if (left == R) return Mk::template block<R, V>(A, lda, Bp, C, ldc, K, lastValid);
    lastRows<Mk, V, R - 1>(A, lda, Bp, C, ldc, left, K, lastValid);
  }
}

/// Every row of C for one panel: blocks of Mk::kRows rows, then one block of the rest. The
/// blocks carry their instruction set's target attribute; this loop needs none.
template <class Mk, unsigned V>
void panelRows(const float* A, size_t lda, const float* Bp, float* C, size_t ldc, uint32_t M,
               uint32_t K, unsigned lastValid) {
  uint32_t i = 0;
  for (; i + Mk::kRows <= M; i += Mk::kRows)
    Mk::template block<Mk::kRows, V>(A + size_t{i} * lda, lda, Bp, C + size_t{i} * ldc, ldc, K,
                                     lastValid);
  lastRows<Mk, V>(A + size_t{i} * lda, lda, Bp, C + size_t{i} * ldc, ldc, M - i, K, lastValid);
}

/// C (M x N, row stride ldc) = A (M x K, row stride lda) * B, B packed by packB for Mk::kLanes:
/// panel after panel, every row block of A against the panel while it is in L1.
template <class Mk>
void matmulPacked(const float* A, size_t lda, const float* Bp, float* C, size_t ldc, uint32_t M,
                  uint32_t N, uint32_t K) {
  constexpr unsigned L = Mk::kLanes;
  for (uint32_t j0 = 0; j0 < N; j0 += 2 * L) {
    const unsigned w = std::min<uint32_t>(2 * L, N - j0);
    const float* panel = Bp + size_t{j0} * K;
    if (w > L)
      panelRows<Mk, 2>(A, lda, panel, C + j0, ldc, M, K, w - L);
    else
      panelRows<Mk, 1>(A, lda, panel, C + j0, ldc, M, K, w);
  }
}

/// One row of TMATMUL's epilogue: d[j] = acc[j] + C[j], then + bias[j] (acc, bias optional), in
/// f32 as the portable kernel adds them (VAdd keeps its operand order). d may be acc itself.
PTO_SIMD inline void matmulAddRow(float* d, const float* acc, const float* C, const float* bias,
                                  uint32_t n) {
  uint32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 x = _mm256_loadu_ps(C + j);
    if (acc) x = VAdd::f(_mm256_loadu_ps(acc + j), x);
    if (bias) x = VAdd::f(x, _mm256_loadu_ps(bias + j));
    _mm256_storeu_ps(d + j, x);
  }
  for (; j < n; ++j) {
    float x = C[j];
    if (acc) x = acc[j] + x;
    if (bias) x = x + bias[j];
    d[j] = x;
  }
}

/// memcpy with non-temporal stores for the 32-byte aligned middle (head and tail by memcpy):
/// the destination's lines are written without being read first. The caller fences
/// (_mm_sfence) before anything else may read them.
PTO_SIMD inline void streamCopy(uint8_t* d, const uint8_t* s, size_t n) {
  const size_t head = std::min(n, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
  std::memcpy(d, s, head);
  size_t j = head;
  for (; j + 32 <= n; j += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + j),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + j)));
  std::memcpy(d + j, s + j, n - j);
}

/// n f16 values widened to f32 (exact: F16C's conversion, as h2f).
PTO_SIMD inline void widenF16(float* d, const uint16_t* s, size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(d + j,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j))));
  for (; j < n; ++j)
    d[j] = h2f(s[j]);
}

} // namespace pto::rt::cpu::simd
#endif
