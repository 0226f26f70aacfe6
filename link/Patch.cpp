#include "link/Patch.h"

#include "isa/Encoding.h"

#include <optional>
#include <vector>

namespace pto::link {

namespace enc = isa::enc;

namespace {

/// Patched words by (old bytes, field, value), per thread: a link patches the same few words over
/// and over (the event word of every inserted set and wait, with one of 8 ids), and a patch is a
/// decode and an encode. A patch is a function of those alone, so a hit is patchWord's own result.
/// Direct-mapped: a clash replaces. Only successful patches are kept.
struct PatchCache {
  static constexpr size_t kSize = 1024;
  struct Entry {
    uint64_t before = 0, after = 0;
    int64_t value = 0;
    uint8_t size = 0; // bytes; 0: empty
    PatchField field = PatchField::Label;
  };
  std::vector<Entry> entries;
  static size_t slot(uint64_t before, size_t size, PatchField field, int64_t value) {
    uint64_t h = before ^ (static_cast<uint64_t>(value) * 0xC2B2AE3D27D4EB4Full) ^
                 (static_cast<uint64_t>(size) << 58) ^ (static_cast<uint64_t>(field) << 62);
    return static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> 54) % kSize;
  }
};
thread_local PatchCache cache;

uint64_t valueOf(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

/// The size of the word at `bytes` as the decoder reads it, or 0 when it is truncated.
size_t wordSize(std::span<const uint8_t> bytes) {
  if (bytes.size() < 2) return 0;
  auto half = [&](size_t i) { return static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8); };
  std::optional<uint16_t> second;
  if (bytes.size() >= 4) second = half(1);
  const size_t n = enc::lengthOf(half(0), second) / 8;
  return n <= 8 && n <= bytes.size() ? n : 0;
}

PatchResult patchUncached(std::span<uint8_t> text, uint64_t at, PatchField field, int64_t value);

} // namespace

PatchResult patchWord(std::span<uint8_t> text, uint64_t at, PatchField field, int64_t value) {
  if (at >= text.size()) return {PatchStatus::NotDecodable, ""};
  const size_t n = wordSize(text.subspan(at));
  if (n == 0) return patchUncached(text, at, field, value);
  const uint64_t before = valueOf(text.data() + at, n);
  if (cache.entries.empty()) cache.entries.resize(PatchCache::kSize);
  PatchCache::Entry& e = cache.entries[PatchCache::slot(before, n, field, value)];
  if (e.size == n && e.before == before && e.field == field && e.value == value) {
    for (size_t k = 0; k < n; ++k)
      text[at + k] = static_cast<uint8_t>(e.after >> (8 * k));
    return {};
  }
  PatchResult r = patchUncached(text, at, field, value);
  if (r.ok()) e = {before, valueOf(text.data() + at, n), value, static_cast<uint8_t>(n), field};
  return r;
}

namespace {

PatchResult patchUncached(std::span<uint8_t> text, uint64_t at, PatchField field, int64_t value) {
  size_t used = 0;
  auto w = enc::decodeBytes(std::span<const uint8_t>(text.data() + at, text.size() - at), used,
                            enc::DecodeOptions{.extensions = true});
  if (!w) return {PatchStatus::NotDecodable, w.error().message};
  enc::Inst inst = *w;
  if (field == PatchField::Label) {
    const int label = w->formInfo().labelField;
    if (label < 0) return {PatchStatus::NoField, ""};
    inst.field[static_cast<size_t>(label)] = value;
  } else {
    if (!inst.set("uimm17", value)) return {PatchStatus::NoField, ""};
  }
  auto e = enc::encode(inst);
  if (!e) return {PatchStatus::DoesNotEncode, e.error().message};
  if (e->bits != used * 8) return {PatchStatus::SizeChanged, ""};
  for (size_t k = 0; k < used; ++k)
    text[at + k] = static_cast<uint8_t>(e->value >> (8 * k));
  return {};
}

} // namespace

} // namespace pto::link
