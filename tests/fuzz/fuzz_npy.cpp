// libFuzzer target: arbitrary bytes as a .npy file, as pto-run --arg x=file.npy reads it.
// rt::fromNpy must never crash, hang or leak; what it accepts must write back and read again
// to the same tensor. The bytes are also a command-line number for the strict integer parser.
#include "runtime/Npy.h"
#include "support/Numbers.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The same bytes as a command-line number (issue 34): the strict integer parser reads back its
  // own text; a value it accepts is exact.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto v = pto::obj::parseWideInteger(text)) {
    auto again = pto::obj::parseWideInteger(pto::obj::wideText(*v));
    if (!again || *again != *v) __builtin_trap();
  }
  std::vector<uint8_t> bytes(data, data + size);
  auto t = pto::rt::fromNpy(bytes, "fuzz.npy");
  if (!t) return 0;
  auto again = pto::rt::fromNpy(pto::rt::toNpy(t.value()), "again.npy");
  if (!again || again->dtype != t->dtype || again->shape != t->shape || again->data != t->data)
    __builtin_trap();
  return 0;
}
