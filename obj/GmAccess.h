// The GM accesses of an object's tile ops (obj::GmAccess) in the optional .pto.gmaccess table
// (docs/object-format.md section 2.10): written by the assembler, read by the linker's race
// analysis and auto-sync (docs/sync.md), moved with the words by every rewrite (link/Rewrite.h).
#pragma once

#include "obj/Object.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace pto::obj {

/// What is wrong with record `i` of `obj.gmAccesses` (`prev`: the text offset of record i - 1,
/// 0 for the first), or nothing: its function, offset and parameter exist, its fields agree
/// with `known` and `loop`, and the records are sorted by text offset. The message names the
/// record ("gm access record 3 ...").
Error checkGmAccess(const ObjectFile& obj, size_t i, uint64_t prev);

/// One line of `pto-objdump --gm-access`:
/// "gm 0x40 @k %x write known: offset +128 bytes 256 symbol 0x9e3779b9 loop 1 stride 512"
/// (symbol only when there is one, loop and stride only when it moves with a loop; an access of
/// unknown bytes ends after read/write; "(any parameter)" for param -1).
std::string gmAccessText(const ObjectFile& obj, const GmAccess& a);
/// "GM ACCESSES (n):" and one gmAccessText line per record.
std::string gmAccessListing(const ObjectFile& obj);

namespace detail {
/// The .pto.gmaccess section of `obj` (empty when it has no records), or the first bad record.
std::variant<std::vector<uint8_t>, std::string> writeGmAccesses(const ObjectFile& obj);
/// Reads .pto.gmaccess into `obj.gmAccesses`; `obj.text` and `obj.functions` must be read
/// already. Every record is checked (checkGmAccess).
Error readGmAccesses(const std::vector<uint8_t>& section, ObjectFile& obj);
} // namespace detail

} // namespace pto::obj
