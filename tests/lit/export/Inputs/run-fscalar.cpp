// Runs the exported @fscalar (tests/lit/run/float-scalar.pto) on the host with the declarations-
// only header: the kernel is scalar code, so its FSU helpers are the whole computation. Inputs
// are the f16/f32 bit patterns of that test's values; the outputs are printed as bits.
#include EXPORTED_FILE

#include <cstdio>
#include <cstring>

int main() {
  const uint16_t aBits[6] = {0x3e00, 0x2e66, 0x7b53, 0xc000, 0x03ff, 0x4200};
  const uint16_t bBits[6] = {0x3400, 0x3266, 0x7b53, 0x4000, 0x0002, 0x8000};
  const float x[6] = {0.25f, 0.75f, -1.5f, 2.5f, 0.5f, 100.0f};
  half a[6], b[6], out[6] = {};
  for (int i = 0; i < 6; ++i) {
    a[i].storage = aBits[i];
    b[i].storage = bBits[i];
  }
  float xs[6], o32[6] = {};
  std::memcpy(xs, x, sizeof xs);
  int32_t oi[6] = {};
  fscalar(a, b, xs, out, o32, oi, 6);
  std::printf("out:");
  for (const half& h : out)
    std::printf(" %04x", h.storage);
  std::printf("\no32:");
  for (float f : o32) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    std::printf(" %08x", u);
  }
  std::printf("\noi:");
  for (int32_t v : oi)
    std::printf(" %d", v);
  std::printf("\n");
}
