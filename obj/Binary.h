// Internal to obj/: little-endian record streams, string tables and the libelf plumbing that
// the object and image formats share (obj/Object.cpp, obj/Image.cpp).
#pragma once

#include "obj/Object.h"

#include <gelf.h>
#include <libelf.h>

#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace pto::obj::detail {

inline constexpr uint32_t kTableHeader = 16; // magic, version, record size, count, reserved
inline constexpr uint32_t kNoteIdentity = 1; // PTO_NT_ISA_IDENTITY (owner "PTO")

// ---------------------------------------------------------------- byte streams
class Out {
public:
  void u8(uint8_t v) { bytes.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void header(uint32_t magic, uint32_t recordSize, size_t count,
              uint16_t version = kFormatVersion) {
    u32(magic);
    u16(version);
    u16(static_cast<uint16_t>(recordSize));
    u32(static_cast<uint32_t>(count));
    u32(0);
  }
  std::vector<uint8_t> bytes;

private:
  void le(uint64_t v, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; ++i)
      b[i] = static_cast<uint8_t>(v >> (8 * i));
    bytes.insert(bytes.end(), b, b + n); // one insert, not a push_back per byte
  }
};

class In {
public:
  In(const uint8_t* p, size_t n, std::string what) : p_(p), n_(n), what_(std::move(what)) {}
  bool ok() const { return !err_; }
  const std::string& error() const { return *err_; }
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  void fail(const std::string& msg) {
    if (!err_) err_ = what_ + ": " + msg;
  }
  /// Reads a table header; returns the record count, checking magic, version, record size and
  /// that the records fit in what remains.
  uint32_t header(uint32_t magic, uint32_t recordSize, uint16_t expectVersion = kFormatVersion) {
    if (n_ - pos_ < kTableHeader) {
      fail("truncated table header");
      return 0;
    }
    uint32_t m = u32();
    uint16_t version = u16(), size = u16();
    uint32_t count = u32();
    u32();
    if (m != magic)
      fail("bad table magic");
    else if (version != expectVersion)
      fail("unsupported format version " + std::to_string(version) + " (this reader handles " +
           std::to_string(expectVersion) + ")");
    else if (size != recordSize)
      fail("bad record size " + std::to_string(size));
    else if (static_cast<uint64_t>(count) * recordSize > n_ - pos_)
      fail("records extend past the end of the section");
    return ok() ? count : 0;
  }
  size_t remaining() const { return n_ - pos_; }

private:
  uint64_t le(int n) {
    if (err_ || n_ - pos_ < static_cast<size_t>(n)) {
      fail("truncated");
      return 0;
    }
    uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&v, p_ + pos_, static_cast<size_t>(n)); // n <= 8: the value as stored
    } else {
      for (int i = 0; i < n; ++i)
        v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    }
    pos_ += n;
    return v;
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  std::string what_;
  std::optional<std::string> err_;
};

// ---------------------------------------------------------------- string table
class StrTab {
public:
  StrTab() { data_.push_back(0); }
  StrTab(const StrTab&) = delete; // last_ points into index_
  StrTab& operator=(const StrTab&) = delete;
  uint32_t add(const std::string& s) {
    if (s.empty()) return 0;
    // Runs of one name (the file of consecutive line entries) skip the hashing.
    if (last_ && *last_ == s) return lastOff_;
    auto [it, fresh] = index_.try_emplace(s, static_cast<uint32_t>(data_.size()));
    if (fresh) {
      data_.insert(data_.end(), s.begin(), s.end());
      data_.push_back(0);
    }
    last_ = &it->first;
    lastOff_ = it->second;
    return it->second;
  }
  std::vector<uint8_t>& data() { return data_; }

private:
  std::vector<uint8_t> data_;
  std::unordered_map<std::string, uint32_t> index_; // only looked up: no order needed
  const std::string* last_ = nullptr;               // the key last added (node keys do not move)
  uint32_t lastOff_ = 0;
};

inline std::optional<std::string> strAt(const std::vector<uint8_t>& tab, uint32_t off) {
  if (off >= tab.size()) return std::nullopt;
  const void* end = std::memchr(tab.data() + off, 0, tab.size() - off);
  if (!end) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(tab.data() + off));
}

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

inline bool initLibelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

inline std::string elfError(const std::string& what) {
  return what + ": " + elf_errmsg(-1);
}

/// The .pto.tiles and .pto.kernels (function and parameter) tables, the same in objects and
/// images (which carry their own format version).
std::vector<uint8_t> writeTiles(const std::vector<Function>& functions, StrTab& strs,
                                uint16_t version);
std::variant<std::vector<uint8_t>, std::string> writeKernels(const std::vector<Function>& functions,
                                                             StrTab& strs, uint16_t version);
/// Reads both tables into `functions`, checking every record, name, range and index; returns an
/// error message for corrupt input.
std::optional<std::string> readFunctions(const std::vector<uint8_t>& kernels,
                                         const std::vector<uint8_t>& tiles,
                                         const std::vector<uint8_t>& strtab, size_t textSize,
                                         uint16_t version, std::vector<Function>& functions);

/// Reads the .note.pto.isa section: whether the identity declares the toolchain's extension
/// space, or an error (missing, mismatching or malformed note). `what` is "object" or "image".
std::variant<bool, std::string> readIdentityNote(const std::vector<uint8_t>& note,
                                                 const char* what);

/// The ELF e_flags value of each arch (objects and images).
inline constexpr uint32_t kArchFlagA2A3 = 1, kArchFlagA5 = 2;
inline uint32_t archFlags(isa::Arch arch) {
  return arch == isa::Arch::A5 ? kArchFlagA5 : kArchFlagA2A3;
}
/// The arch an ELF header's e_flags names, or an error.
std::variant<isa::Arch, std::string> archOfFlags(uint32_t flags);

/// The .pto.lines table, the same in objects and images (each with its own format version).
std::vector<uint8_t> writeLines(const std::vector<LineEntry>& lines, StrTab& strs,
                                uint16_t version);
/// Reads a .pto.lines table into `lines`, checking names and that offsets stay inside .text.
std::optional<std::string> readLines(const std::vector<uint8_t>& section,
                                     const std::vector<uint8_t>& strtab, size_t textSize,
                                     uint16_t version, std::vector<LineEntry>& lines);

/// The .pto.events table: function, name, pipes, then one id byte that an image fills with the
/// event's hardware id and an object leaves 0 (magic and version tell the two apart).
inline constexpr uint32_t kEventRecord = 16;
template <class E, class IdOf>
std::vector<uint8_t> writeEvents(uint32_t magic, uint16_t version, const std::vector<E>& events,
                                 StrTab& strs, IdOf idOf) {
  Out o;
  o.header(magic, kEventRecord, events.size(), version);
  for (const E& e : events) {
    o.u32(e.function);
    o.u32(strs.add(e.name));
    o.u8(static_cast<uint8_t>(e.srcPipe));
    o.u8(static_cast<uint8_t>(e.dstPipe));
    o.u8(idOf(e));
    o.u8(0);
    o.u32(0);
  }
  return std::move(o.bytes);
}
/// Reads an event table into `events`, checking names, functions and pipes; `takeId(e, id, in)`
/// stores or checks the id byte (failing `in` when it is out of range).
template <class E, class TakeId>
std::optional<std::string> readEvents(const std::vector<uint8_t>& section, uint32_t magic,
                                      uint16_t version, const std::vector<uint8_t>& strtab,
                                      size_t functionCount, std::vector<E>& events, TakeId takeId) {
  In in(section.data(), section.size(), ".pto.events");
  uint32_t count = in.header(magic, kEventRecord, version);
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    E e;
    e.function = in.u32();
    auto name = strAt(strtab, in.u32());
    uint8_t sp = in.u8(), dp = in.u8(), id = in.u8();
    in.u8();
    in.u32();
    if (!name)
      in.fail("event " + std::to_string(i) + " has a bad name offset");
    else
      e.name = *name;
    if (e.function >= functionCount)
      in.fail("event '" + e.name + "' belongs to a missing function");
    if (sp >= isa::spellingsPipe().size() || dp >= isa::spellingsPipe().size())
      in.fail("event '" + e.name + "' has a bad pipe");
    takeId(e, id, in);
    e.srcPipe = static_cast<isa::Pipe>(sp);
    e.dstPipe = static_cast<isa::Pipe>(dp);
    events.push_back(std::move(e));
  }
  if (!in.ok()) return in.error();
  return std::nullopt;
}

/// A note record (owner "PTO"), padded to 4 bytes.
std::vector<uint8_t> noteBytes(uint32_t type, const std::string& desc);

/// One section of a file being written: its name, header fields and contents.
struct Section {
  const char* name;
  Elf64_Word type;
  Elf64_Xword flags;
  Elf64_Xword align;
  std::vector<uint8_t> data;
  Elf64_Word link = 0, info = 0;
  Elf64_Xword entsize = 0;
};

/// What the ELF header of a file being written says (the rest is the same for every file).
struct ElfKind {
  const char* what;     // "object" or "image": the in-memory file's name and the messages
  Elf64_Half type;      // ET_REL, ET_EXEC
  Elf64_Word flags;     // the arch flag
  Elf64_Addr entry = 0; // e_entry
  /// One PT_LOAD segment over the first section (.text, `loadBytes` long), for images.
  std::optional<uint64_t> loadBytes;
};

/// An ELF64 little-endian file of `secs` (section indices from 1, in order) and .shstrtab.
std::variant<std::vector<uint8_t>, std::string> writeElf(const ElfKind& kind,
                                                         const std::vector<Section>& secs);

/// The sections of an ELF64 little-endian file by name, after checking every header, offset
/// and size (and that libelf accepts the file); `what` names the kind of file in messages.
struct Sections {
  Elf64_Ehdr ehdr;
  std::map<std::string, std::vector<uint8_t>> data;
  std::map<std::string, Elf64_Shdr> headers;
};

std::variant<Sections, std::string> loadSections(const uint8_t* data, size_t size,
                                                 const char* what);

} // namespace pto::obj::detail
