#include "link/Patch.h"

#include "isa/Encoding.h"

namespace pto::link {

namespace enc = isa::enc;

PatchResult patchWord(std::span<uint8_t> text, uint64_t at, PatchField field, int64_t value) {
  if (at >= text.size()) return {PatchStatus::NotDecodable, ""};
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

} // namespace pto::link
