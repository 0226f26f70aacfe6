// libFuzzer target: arbitrary bytes as a .npy file, as pto-run --arg x=file.npy reads it.
// rt::fromNpy must never crash, hang or leak; what it accepts must write back and read again
// to the same tensor.
#include "runtime/Npy.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto t = pto::rt::fromNpy(bytes, "fuzz.npy");
  if (!t) return 0;
  auto again = pto::rt::fromNpy(pto::rt::toNpy(t.value()), "again.npy");
  if (!again || again->dtype != t->dtype || again->shape != t->shape || again->data != t->data)
    __builtin_trap();
  return 0;
}
