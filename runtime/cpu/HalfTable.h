// A unary op on 16-bit elements as a table of its results for all 65536 inputs.
//
// An f16 TEXP, TLOG, TSQRT, TRSQRT or TRECIP computes each element as the portable definition
// says (to float, the C library or an IEEE operation, back to f16): tens of cycles per element.
// The op is a pure function of the input's 16 bits, so its results for every input fit in a
// 128 KiB table, and a lookup gives the definition's bits by construction. Building the table
// costs 65536 evaluations; it is built only after the op has computed that many elements
// directly, so a program applying the op to a few elements never pays for it and one applying
// it to many pays at most twice the direct cost before lookups take over.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

namespace pto::rt::cpu {

class HalfTable {
public:
  static constexpr size_t kEntries = 65536;

  /// The finished table, or nullptr while the op is still computed directly.
  const uint16_t* ready() const { return table_.load(std::memory_order_acquire); }

  /// Counts `n` elements computed directly; true once the count reaches the table's size (the
  /// caller then builds it; more than one caller may see true, build() runs once).
  bool countDirect(size_t n) {
    return computed_.fetch_add(n, std::memory_order_relaxed) + n >= kEntries;
  }

  /// Builds the table from `f(bits)` for every 16-bit input, once; any thread may call it.
  template <class F> const uint16_t* build(F f) {
    std::call_once(once_, [&] {
      storage_ = std::make_unique<uint16_t[]>(kEntries);
      for (size_t x = 0; x < kEntries; ++x)
        storage_[x] = f(static_cast<uint16_t>(x));
      table_.store(storage_.get(), std::memory_order_release);
    });
    return ready();
  }

  /// d[j] = table[s[j]] for n elements. d may equal s; no other overlap.
  static void lookupRun(uint16_t* d, const uint16_t* s, size_t n, const uint16_t* table) {
    size_t j = 0;
    if constexpr (std::endian::native == std::endian::little)
      // Four inputs per 64-bit load and four results per store: a third of the memory
      // operations of the element loop, which they bound.
      for (; j + 4 <= n; j += 4) {
        uint64_t x;
        std::memcpy(&x, s + j, 8);
        const uint64_t y = table[x & 0xffff] | uint64_t{table[(x >> 16) & 0xffff]} << 16 |
                           uint64_t{table[(x >> 32) & 0xffff]} << 32 |
                           uint64_t{table[x >> 48]} << 48;
        std::memcpy(d + j, &y, 8);
      }
    for (; j < n; ++j)
      d[j] = table[s[j]];
  }

private:
  std::atomic<const uint16_t*> table_{nullptr};
  std::atomic<uint64_t> computed_{0};
  std::once_flag once_;
  std::unique_ptr<uint16_t[]> storage_;
};

} // namespace pto::rt::cpu
