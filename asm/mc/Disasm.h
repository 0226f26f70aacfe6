// The PTO disassembler: listings of an object (pto-objdump). `-d` prints canonical block
// assembly that the block assembler (asm/mc/BlockAsm.h) turns back into the same object; the
// other listings (-h, -t, -r, --tiles, --raw) describe the file. Formats: docs/object-format.md.
#pragma once

#include "obj/Object.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pto::as {

struct DisasmOptions {
  bool disassemble = false; // -d: block assembly with addresses and words
  bool source = false;      // -S: like -d, with the source lines of .loc interleaved
  bool headers = false;     // -h: section table
  bool symbols = false;     // -t: symbol table
  bool relocs = false;      // -r: relocations
  bool tiles = false;       // --tiles: per-function tile descriptor tables
  bool raw = false;         // --raw: the words of .text in hex, one instruction per line
  /// --blocks: with -d/-S, a comment line before each block of the one block decoder
  /// (asm/mc/Blocks.h): its range, kind, what happens at its end and its target. Comments only, so
  /// the listing still reassembles to the same object.
  bool blocks = false;
  /// Printed in the header line ("<fileName>:     file format elf64-pto (a2a3)").
  std::string fileName = "<object>";
  /// -S: returns the text of a source file, or nothing when it cannot be read. When unset,
  /// files are read from the file system (relative to the working directory).
  std::function<std::optional<std::string>(const std::string&)> readSource;
};

/// All requested listings, in the order -h, -t, -r, --tiles, -d/-S, --raw, after one header
/// line (none when --raw is the only listing: then the output is the words alone). `elfBytes` is
/// the file the object was read from (for -h and -t); when empty, the object is serialized with
/// obj::writeObject to list its sections and symbols.
std::string disassemble(const obj::ObjectFile& obj, const DisasmOptions& opts,
                        std::span<const uint8_t> elfBytes = {});

/// The single listings (no header line).
std::string blockListing(const obj::ObjectFile& obj, const DisasmOptions& opts); // -d / -S
std::string sectionListing(std::span<const uint8_t> elfBytes);                   // -h
std::string symbolListing(std::span<const uint8_t> elfBytes);                    // -t
std::string relocListing(const obj::ObjectFile& obj);                            // -r
std::string tileListing(const obj::ObjectFile& obj);                             // --tiles
std::string rawListing(const obj::ObjectFile& obj);                              // --raw

// ---------------------------------------------------------------- shared with BlockAsm
/// `sigil` + name, quoted with C escapes when the name is empty or has characters other than
/// [A-Za-z0-9_.$-]: @vadd, %a, @"my kernel".
std::string quoteName(char sigil, std::string_view name);
/// The operand label of tile-table index i: T#1..T#16, U#1.., M#1.., N#1..N#16; "#i" beyond 63.
std::string tileLabel(uint32_t index);
/// The inverse of tileLabel (T#1 -> 0, #70 -> 70).
std::optional<uint32_t> parseTileLabel(std::string_view text);
/// The event a `@name` reloc target names: the first event of `function` with that name, else
/// the only event of the object with that name.
std::optional<uint32_t> findEventByName(const obj::ObjectFile& obj, uint32_t function,
                                        std::string_view name);
std::string_view relocTypeName(obj::RelocType t); // R_PTO_TILE ...
/// The hex column of a -d line: the halfwords/words of one instruction in memory order, e.g.
/// "08019181", "123e 4567810d" (48-bit), "0000000f 00000001" (64-bit).
std::string hexColumn(uint64_t value, unsigned bits);

} // namespace pto::as
