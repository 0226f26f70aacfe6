// PTO images (.img): the in-memory model of a linked, loadable ELF64 ET_EXEC file and its
// writer and fully validating reader (through libelf). Every tile placement and event id is
// resolved; the entry table names the exported kernels; .pto.layout is the final buffer map.
// Layouts: docs/linking.md, section "The image".
#pragma once

#include "obj/Object.h"

namespace pto::obj {

inline constexpr uint16_t kImageVersion = 1;

struct ImageEvent {
  uint32_t function = 0;
  std::string name;
  isa::Pipe srcPipe = isa::Pipe::MTE2, dstPipe = isa::Pipe::V;
  uint8_t id = 0; // the hardware event id patched into every set/wait of this event
  bool operator==(const ImageEvent&) const = default;
};

struct ImageEntry {
  uint32_t function = 0; // index into Image::functions
  std::string name;
  bool operator==(const ImageEntry&) const = default;
};

/// One line of the buffer map: how much of a buffer one function uses.
struct BufferUse {
  uint32_t function = 0;
  isa::Loc loc = isa::Loc::Vec;
  uint32_t capacity = 0, alignment = 0; // of the arch
  uint64_t used = 0;                    // highest byte in use + 1
  bool operator==(const BufferUse&) const = default;
};

struct Image {
  isa::Arch arch = isa::Arch::A2A3;
  bool usesExtensions = false;
  std::vector<uint8_t> text;       // patched command words of every function
  std::vector<Function> functions; // tiles all placed (placement >= 0)
  std::vector<ImageEvent> events;
  std::vector<ImageEntry> entries;
  std::vector<BufferUse> layout;
  std::vector<LineEntry> lines;
  bool operator==(const Image&) const = default;
};

/// Serializes the image as an ELF64 ET_EXEC file.
std::variant<std::vector<uint8_t>, std::string> writeImage(const Image& img);
/// Parses and validates an image: every record is bounds-checked, every placement is inside
/// its buffer and aligned, every event id and entry is in range. Never crashes on bad input.
std::variant<Image, std::string> readImage(const uint8_t* data, size_t size);

} // namespace pto::obj
