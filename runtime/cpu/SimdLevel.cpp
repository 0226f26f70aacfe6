// The x86 kernel tier the running CPU has (runtime/cpu/KernelUtil.h), detected once, and the
// cap tests and benchmarks put on it to run the lower tiers' kernels.
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/Simd.h"

#include <algorithm>
#include <atomic>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace pto::rt {
namespace {
std::atomic<cpu::SimdLevel> gSimdLimit{cpu::SimdLevel::Avx512Fp16};
} // namespace

namespace cpu {
SimdLevel simdSupported() {
#ifdef PTO_X86_SIMD
  static const SimdLevel level = [] {
    // __builtin_cpu_supports("avx2") also says the OS saves the AVX state (avx512bw: the AVX-512
    // state). F16C (CPUID.1:ECX[29]) and AVX512-FP16 (CPUID.7.0:EDX[23]) are read directly:
    // clang 14's __builtin_cpu_supports knows neither name.
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1);
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !f16c)
      return SimdLevel::Portable;
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl");
#ifdef PTO_X86_FP16
    if (avx512 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((d >> 23) & 1))
      return SimdLevel::Avx512Fp16;
#endif
    return avx512 ? SimdLevel::Avx512 : SimdLevel::Avx2;
  }();
  return level;
#else
  return SimdLevel::Portable;
#endif
}
SimdLevel simdLevel() {
  return std::min(simdSupported(), gSimdLimit.load(std::memory_order_relaxed));
}
void setSimdLimit(SimdLevel limit) {
  gSimdLimit.store(limit, std::memory_order_relaxed);
}
} // namespace cpu

} // namespace pto::rt
