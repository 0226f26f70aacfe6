// Zeroed memory that costs nothing until it is touched: an anonymous private mapping, whose
// pages the kernel supplies (zeroed) on first access. For the simulated cores' buffers
// (runtime/Program.h): a launch maps 1-2 MB per core and a small kernel touches a few KB.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace pto::support {

class ZeroedPages {
public:
  ZeroedPages() = default;
  /// `bytes` zeroed bytes, page-aligned; std::bad_alloc when the mapping fails.
  explicit ZeroedPages(size_t bytes) : size_(bytes == 0 ? 1 : bytes) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
  }
  ZeroedPages(ZeroedPages&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroedPages& operator=(ZeroedPages&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ~ZeroedPages() { release(); }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

private:
  void release() {
    if (data_) ::munmap(data_, size_);
    data_ = nullptr;
  }
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

} // namespace pto::support
