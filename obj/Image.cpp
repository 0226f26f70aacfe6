#include "obj/Image.h"

#include "obj/Binary.h"
#include "obj/Extent.h"

#include "isa/Encoding.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

namespace pto::obj {

namespace {

using namespace detail;

constexpr uint32_t kImageEventsMagic = 0x45495450;        // "PTIE": image events (with ids)
constexpr uint32_t kEntriesMagic = 0x4e495450;            // "PTIN"
constexpr uint32_t kLayoutMagic = 0x4c495450;             // "PTIL"
constexpr uint32_t kEntryRecord = 16, kLayoutRecord = 24; // tiles, kernels, lines: obj/Binary.cpp

// ---------------------------------------------------------------- byte streams
uint64_t descBytes(const TileDesc& t) {
  return (static_cast<uint64_t>(t.rows) * t.cols * isa::bitWidth(t.dtype) + 7) / 8;
}

} // namespace

std::variant<std::vector<uint8_t>, std::string> writeImage(const Image& img) {
  if (!initLibelf()) return elfError("libelf initialisation failed");
  if (img.text.size() % 2 != 0) return std::string("text size must be a multiple of 2 bytes");
  StrTab strs;
  enum { kText = 1, kTiles, kKernels, kEvents, kEntries, kLayout, kLines, kNote, kSymtab, kStrtab };
  std::vector<Section> secs;
  secs.push_back({".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 4, img.text});
  secs.push_back(
      {".pto.tiles", SHT_PROGBITS, 0, 8, writeTiles(img.functions, strs, kImageVersion)});
  {
    auto kernels = writeKernels(img.functions, strs, kImageVersion);
    if (auto* e = std::get_if<std::string>(&kernels)) return *e;
    secs.push_back({".pto.kernels", SHT_PROGBITS, 0, 8, std::get<std::vector<uint8_t>>(kernels)});
  }
  secs.push_back({".pto.events", SHT_PROGBITS, 0, 8,
                  writeEvents(kImageEventsMagic, kImageVersion, img.events, strs,
                              [](const ImageEvent& e) { return e.id; })});
  {
    Out o;
    o.header(kEntriesMagic, kEntryRecord, img.entries.size(), kImageVersion);
    for (const ImageEntry& e : img.entries) {
      o.u32(e.function);
      o.u32(strs.add(e.name));
      o.u64(e.function < img.functions.size() ? img.functions[e.function].textOffset : 0);
    }
    secs.push_back({".pto.entries", SHT_PROGBITS, 0, 8, o.bytes});
  }
  {
    Out o;
    o.header(kLayoutMagic, kLayoutRecord, img.layout.size(), kImageVersion);
    for (const BufferUse& b : img.layout) {
      o.u32(b.function);
      o.u8(static_cast<uint8_t>(b.loc));
      o.u8(0);
      o.u16(0);
      o.u32(b.capacity);
      o.u32(b.alignment);
      o.u64(b.used);
    }
    secs.push_back({".pto.layout", SHT_PROGBITS, 0, 8, o.bytes});
  }
  secs.push_back({".pto.lines", SHT_PROGBITS, 0, 8, writeLines(img.lines, strs, kImageVersion)});
  secs.push_back({".note.pto.isa", SHT_NOTE, 0, 4,
                  noteBytes(kNoteIdentity, isa::enc::isaNoteDescriptor(img.usesExtensions))});
  {
    // Symbols: null, .text section, then functions (locals first: non-entries are local).
    std::vector<bool> isEntry(img.functions.size(), false);
    for (const ImageEntry& e : img.entries)
      if (e.function < isEntry.size()) isEntry[e.function] = true;
    Out o;
    auto sym = [&](uint32_t name, uint8_t info, uint16_t shndx, uint64_t value, uint64_t size) {
      o.u32(name);
      o.u8(info);
      o.u8(0);
      o.u16(shndx);
      o.u64(value);
      o.u64(size);
    };
    sym(0, 0, 0, 0, 0);
    sym(0, ELF64_ST_INFO(STB_LOCAL, STT_SECTION), kText, 0, 0);
    uint32_t firstGlobal = 2;
    for (bool global : {false, true})
      for (size_t i = 0; i < img.functions.size(); ++i)
        if (isEntry[i] == global) {
          const Function& f = img.functions[i];
          sym(strs.add(f.name), ELF64_ST_INFO(global ? STB_GLOBAL : STB_LOCAL, STT_FUNC), kText,
              f.textOffset, f.textSize);
          if (!global) ++firstGlobal;
        }
    secs.push_back({".symtab", SHT_SYMTAB, 0, 8, o.bytes, kStrtab, firstGlobal, sizeof(Elf64_Sym)});
  }
  // Optional, after the fixed sections (their indices are fixed): pointer extents (obj/Extent.h).
  std::vector<uint8_t> extents = detail::writeExtents(img.functions, strs);
  secs.push_back({".strtab", SHT_STRTAB, 0, 1, strs.data()});
  if (!extents.empty()) secs.push_back({".pto.extents", SHT_PROGBITS, 0, 8, std::move(extents)});

  const Elf64_Addr entry = !img.entries.empty() && img.entries[0].function < img.functions.size()
                               ? img.functions[img.entries[0].function].textOffset
                               : 0;
  return writeElf({"image", ET_EXEC, archFlags(img.arch), entry, img.text.size()}, secs);
}

// ---------------------------------------------------------------- reader

std::variant<Image, std::string> readImage(const uint8_t* data, size_t size) {
  auto loaded = detail::loadSections(data, size, "image");
  if (auto* err = std::get_if<std::string>(&loaded)) return *err;
  detail::Sections& s = std::get<detail::Sections>(loaded);
  const Elf64_Ehdr& eh = s.ehdr;
  if (eh.e_type == ET_REL)
    return std::string("this is a relocatable object, not a linked image (run pto-ld)");
  if (eh.e_type != ET_EXEC)
    return std::string("not a PTO image (e_type " + std::to_string(eh.e_type) + ")");
  if (eh.e_machine != EM_NONE)
    return std::string("not a PTO image (e_machine " + std::to_string(eh.e_machine) + ")");
  Image img;
  auto arch = detail::archOfFlags(eh.e_flags);
  if (auto* e = std::get_if<std::string>(&arch)) return *e;
  img.arch = std::get<isa::Arch>(arch);
  for (const char* need : {".text", ".pto.tiles", ".pto.kernels", ".pto.events", ".pto.entries",
                           ".pto.layout", ".pto.lines", ".note.pto.isa", ".symtab", ".strtab"})
    if (!s.data.count(need)) return std::string("missing section '") + need + "'";
  {
    auto identity = detail::readIdentityNote(s.data[".note.pto.isa"], "image");
    if (auto* e = std::get_if<std::string>(&identity)) return *e;
    img.usesExtensions = std::get<bool>(identity);
  }
  img.text = s.data[".text"];
  const std::vector<uint8_t>& strtab = s.data[".strtab"];
  auto str = [&](uint32_t off) { return strAt(strtab, off); };
  if (auto e = detail::readFunctions(s.data[".pto.kernels"], s.data[".pto.tiles"], strtab,
                                     img.text.size(), kImageVersion, img.functions))
    return *e;
  if (s.data.count(".pto.extents"))
    if (auto e = detail::readExtents(s.data[".pto.extents"], strtab, img.functions)) return *e;
  // A linked image resolves every declaration and places every tile inside its buffer.
  for (const Function& f : img.functions) {
    if (f.flags & kDeclaration) return "function '" + f.name + "' is an unresolved declaration";
    for (const TileDesc& t : f.tiles) {
      std::string what = "tile '" + t.name + "' of '" + f.name + "'";
      const isa::BufferSpec& spec = isa::buffer(img.arch, t.loc);
      if (t.placement == kRuntimePlaced) continue; // bound and checked at run time
      if (t.placement < 0) return what + " is not placed";
      if (static_cast<uint64_t>(t.placement) + descBytes(t) > spec.capacity)
        return what + " is placed past the end of its buffer";
      if (t.aliasOf < 0 && spec.alignment && static_cast<uint64_t>(t.placement) % spec.alignment)
        return what + " is misaligned";
    }
  }
  const unsigned hw = isa::profile(img.arch).eventIdsPerPipePair;
  auto takeId = [hw](ImageEvent& e, uint8_t id, In& in) {
    e.id = id;
    if (id >= hw)
      in.fail("event '" + e.name + "' has id " + std::to_string(id) + " (at most " +
              std::to_string(hw - 1) + ")");
  };
  if (auto e = detail::readEvents(s.data[".pto.events"], kImageEventsMagic, kImageVersion, strtab,
                                  img.functions.size(), img.events, takeId))
    return *e;
  {
    auto& d = s.data[".pto.entries"];
    In in(d.data(), d.size(), ".pto.entries");
    uint32_t count = in.header(kEntriesMagic, kEntryRecord, kImageVersion);
    for (uint32_t i = 0; i < count && in.ok(); ++i) {
      ImageEntry e;
      e.function = in.u32();
      auto name = str(in.u32());
      uint64_t off = in.u64();
      if (!name)
        in.fail("entry " + std::to_string(i) + " has a bad name offset");
      else
        e.name = *name;
      if (e.function >= img.functions.size())
        in.fail("entry '" + e.name + "' names a missing function");
      else if (img.functions[e.function].name != e.name ||
               img.functions[e.function].textOffset != off)
        in.fail("entry '" + e.name + "' does not match its function");
      img.entries.push_back(std::move(e));
    }
    if (!in.ok()) return in.error();
  }
  {
    auto& d = s.data[".pto.layout"];
    In in(d.data(), d.size(), ".pto.layout");
    uint32_t count = in.header(kLayoutMagic, kLayoutRecord, kImageVersion);
    for (uint32_t i = 0; i < count && in.ok(); ++i) {
      BufferUse b;
      b.function = in.u32();
      uint8_t loc = in.u8();
      in.u8();
      in.u16();
      b.capacity = in.u32();
      b.alignment = in.u32();
      b.used = in.u64();
      std::string what = "buffer record " + std::to_string(i);
      if (b.function >= img.functions.size()) in.fail(what + " names a missing function");
      if (loc >= isa::spellingsLoc().size()) {
        in.fail(what + " has a bad buffer");
        break;
      }
      b.loc = static_cast<isa::Loc>(loc);
      const isa::BufferSpec& spec = isa::buffer(img.arch, b.loc);
      if (b.capacity != spec.capacity || b.alignment != spec.alignment)
        in.fail(what + " does not match the " + std::string(isa::profile(img.arch).name) +
                " buffer " + std::string(isa::spelling(b.loc)));
      if (b.used > b.capacity) in.fail(what + " uses more than the capacity");
      img.layout.push_back(b);
    }
    if (!in.ok()) return in.error();
  }
  if (auto e = detail::readLines(s.data[".pto.lines"], strtab, img.text.size(), kImageVersion,
                                 img.lines))
    return *e;
  return img;
}

} // namespace pto::obj
