// The one relocation patcher of pto-ld: decode the word at a .text offset, set one field, encode
// it again in place. Call relocations (branch offsets), event relocations (event ids) and the
// branches that inserted sync moves (link/Rewrite.*) all go through it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace pto::link {

/// The field a relocation sets.
enum class PatchField : uint8_t {
  Label,   // the branch offset of BSTART DIRECT/COND/CALL (half-words from the word)
  EventId, // the uimm17 of the B.DIM word of a set_flag/wait_flag
};

enum class PatchStatus : uint8_t {
  Ok,
  NotDecodable,  // no word decodes at the offset
  NoField,       // the word has no such field
  DoesNotEncode, // the encoder refuses the value (detail: its message)
  SizeChanged,   // the value needs a longer encoding than the word has
};

struct PatchResult {
  PatchStatus status = PatchStatus::Ok;
  std::string detail; // NotDecodable, DoesNotEncode: the decoder's or encoder's message
  bool ok() const { return status == PatchStatus::Ok; }
};

/// Sets `field` of the word at `text[at]` to `value` (decoding with the extension space).
PatchResult patchWord(std::span<uint8_t> text, uint64_t at, PatchField field, int64_t value);

} // namespace pto::link
