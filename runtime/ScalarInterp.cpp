// The scalar interpreter: runs one block (one simulated core) of a decoded function.
#include "runtime/ScalarInterp.h"

#include <cstring>

namespace pto::rt {

const GmRegion* Core::regionOf(uint64_t addr) const {
  uint64_t region = addr >> kRegionShift;
  if (region == 0 || region > gm->size()) return nullptr;
  return &(*gm)[region - 1];
}

uint8_t* Core::translate(uint64_t addr, uint64_t bytes, const char* what, bool write) {
  const uint64_t region = addr >> kRegionShift, off = addr & kRegionMask;
  if (region == kStackRegion) {
    if (off + bytes <= stack.size() && off + bytes >= off) return stack.data() + off;
    if (error.empty())
      error = std::string(what) + (write ? " writes" : " reads") + " outside the stack frame";
    return nullptr;
  }
  // An offset in the upper half of a region's address space is a negative offset from the next
  // region's base (argument i + 1): name that argument, not the one before it.
  constexpr uint64_t kHalf = uint64_t{1} << (kRegionShift - 1);
  if (off >= kHalf && region < gm->size()) {
    if (error.empty()) {
      const GmRegion& next = (*gm)[region];
      const uint64_t before = (uint64_t{1} << kRegionShift) - off;
      error = std::string(what) + (write ? " writes" : " reads") +
              " before the start of argument %" + next.name + " (byte offset -" +
              std::to_string(before) + ")";
    }
    return nullptr;
  }
  if (region == 0 || region > gm->size()) {
    if (error.empty()) {
      char b[64];
      snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(addr));
      error = std::string(what) + (write ? " writes" : " reads") + " address " + b +
              ", which is not in any argument";
    }
    return nullptr;
  }
  const GmRegion& g = (*gm)[region - 1];
  if (off > g.size || bytes > g.size - off) {
    if (error.empty())
      error = std::string(what) + (write ? " writes" : " reads") + " past the end of argument %" +
              g.name + " (bytes " + std::to_string(off) + ".." + std::to_string(off + bytes) +
              " of " + std::to_string(g.size) + ")";
    return nullptr;
  }
  return g.data + off;
}

bool runBlock(const DecodedFunction& fn, Core& c, uint32_t& failedAt) {
  CpuExec exec;
  return interpret(fn, c, failedAt, exec);
}

} // namespace pto::rt
