#include "obj/Object.h"

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

constexpr uint32_t kEventsMagic = 0x45545450;           // "PTTE"
constexpr uint32_t kLinesMagic = 0x4e4c5450;            // "PTLN"
constexpr uint32_t kEventRecord = 16, kLineRecord = 24; // tiles and kernels: obj/Binary.cpp
constexpr uint32_t kArchFlagA2A3 = 1, kArchFlagA5 = 2;

} // namespace

std::variant<std::vector<uint8_t>, std::string> writeObject(const ObjectFile& obj) {
  if (!initLibelf()) return elfError("libelf initialisation failed");
  if (obj.text.size() % 2 != 0) return std::string("text size must be a multiple of 2 bytes");
  if (obj.functions.size() > UINT32_MAX / 2) return std::string("too many functions");
  StrTab strs; // .strtab: symbol names and every name the .pto.* tables refer to
  std::vector<Section> secs;
  // Index 1..: the order below fixes the section indices used by links.
  enum { kText = 1, kTiles, kKernels, kEvents, kLines, kNote, kRela, kSymtab, kStrtab };
  secs.push_back({".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 4, obj.text});
  secs.push_back(
      {".pto.tiles", SHT_PROGBITS, 0, 8, writeTiles(obj.functions, strs, kFormatVersion)});
  auto kernels = writeKernels(obj.functions, strs, kFormatVersion);
  if (auto* e = std::get_if<std::string>(&kernels)) return *e;
  secs.push_back({".pto.kernels", SHT_PROGBITS, 0, 8, std::get<std::vector<uint8_t>>(kernels)});
  {
    Out o;
    o.header(kEventsMagic, kEventRecord, obj.events.size());
    for (const Event& e : obj.events) {
      if (e.function >= obj.functions.size())
        return std::string("event '" + e.name + "' names a missing function");
      o.u32(e.function);
      o.u32(strs.add(e.name));
      o.u8(static_cast<uint8_t>(e.srcPipe));
      o.u8(static_cast<uint8_t>(e.dstPipe));
      o.u16(0);
      o.u32(0);
    }
    secs.push_back({".pto.events", SHT_PROGBITS, 0, 8, o.bytes});
  }
  {
    Out o;
    o.header(kLinesMagic, kLineRecord, obj.lines.size());
    for (const LineEntry& l : obj.lines) {
      o.u64(l.textOffset);
      o.u32(strs.add(l.file));
      o.u32(l.line);
      o.u32(l.col);
      o.u32(0);
    }
    secs.push_back({".pto.lines", SHT_PROGBITS, 0, 8, o.bytes});
  }
  {
    secs.push_back({".note.pto.isa", SHT_NOTE, 0, 4,
                    noteBytes(kNoteIdentity, isa::enc::isaNoteDescriptor(obj.usesExtensions))});
  }
  // Symbols: null, the .text section symbol, then one global per function and undefined callees.
  std::vector<Elf64_Sym> syms(2);
  syms[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
  syms[1].st_shndx = kText;
  std::map<std::string, uint32_t> symIndex;
  for (const Function& f : obj.functions) {
    Elf64_Sym s{};
    s.st_name = strs.add(f.name);
    s.st_info = ELF64_ST_INFO((f.flags & kPrivate) ? STB_LOCAL : STB_GLOBAL, STT_FUNC);
    s.st_shndx = (f.flags & kDeclaration) ? SHN_UNDEF : kText;
    s.st_value = f.textOffset;
    s.st_size = f.textSize;
    if (symIndex.count(f.name)) return std::string("duplicate function '" + f.name + "'");
    symIndex[f.name] = 0;
    syms.push_back(s);
  }
  // ELF wants locals first: stable-partition, then record final indices.
  std::stable_partition(syms.begin() + 2, syms.end(),
                        [](const Elf64_Sym& s) { return ELF64_ST_BIND(s.st_info) == STB_LOCAL; });
  for (uint32_t i = 2; i < syms.size(); ++i)
    for (auto& [name, idx] : symIndex)
      if (strs.add(name) == syms[i].st_name) idx = i;
  for (const Reloc& r : obj.relocs)
    if (r.type == RelocType::Call && !symIndex.count(r.symbol)) {
      Elf64_Sym s{};
      s.st_name = strs.add(r.symbol);
      s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
      s.st_shndx = SHN_UNDEF;
      symIndex[r.symbol] = static_cast<uint32_t>(syms.size());
      syms.push_back(s);
    }
  uint32_t firstGlobal = 2;
  while (firstGlobal < syms.size() && ELF64_ST_BIND(syms[firstGlobal].st_info) == STB_LOCAL)
    ++firstGlobal;
  {
    Out o;
    for (const Reloc& r : obj.relocs) {
      if (r.offset + 4 > obj.text.size() || r.offset % 2)
        return std::string("relocation offset past the end of .text or odd");
      uint32_t sym = 1;
      int64_t addend = 0;
      if (r.type == RelocType::Call)
        sym = symIndex[r.symbol];
      else
        addend = (static_cast<int64_t>(r.function) << 32) | r.index;
      o.u64(r.offset);
      o.u64(ELF64_R_INFO(sym, static_cast<uint32_t>(r.type)));
      o.i64(addend);
    }
    secs.push_back(
        {".rela.text", SHT_RELA, SHF_INFO_LINK, 8, o.bytes, kSymtab, kText, sizeof(Elf64_Rela)});
  }
  {
    Out o;
    for (const Elf64_Sym& s : syms) {
      o.u32(s.st_name);
      o.u8(s.st_info);
      o.u8(s.st_other);
      o.u16(s.st_shndx);
      o.u64(s.st_value);
      o.u64(s.st_size);
    }
    secs.push_back({".symtab", SHT_SYMTAB, 0, 8, o.bytes, kStrtab, firstGlobal, sizeof(Elf64_Sym)});
  }
  // Optional, after the fixed sections (their indices are fixed): pointer extents (obj/Extent.h).
  std::vector<uint8_t> extents = detail::writeExtents(obj.functions, strs);
  secs.push_back({".strtab", SHT_STRTAB, 0, 1, strs.data()});
  if (!extents.empty()) secs.push_back({".pto.extents", SHT_PROGBITS, 0, 8, std::move(extents)});

  return writeElf(
      {"object", ET_REL, obj.arch == isa::Arch::A5 ? kArchFlagA5 : kArchFlagA2A3, 0, std::nullopt},
      secs);
}

// ---------------------------------------------------------------- reader
std::variant<ObjectFile, std::string> readObject(const uint8_t* data, size_t size) {
  auto loaded = detail::loadSections(data, size, "object");
  if (auto* err = std::get_if<std::string>(&loaded)) return *err;
  detail::Sections& s = std::get<detail::Sections>(loaded);
  const Elf64_Ehdr& eh = s.ehdr;
  if (eh.e_type != ET_REL)
    return std::string("not a relocatable object (e_type " + std::to_string(eh.e_type) + ")");
  if (eh.e_machine != EM_NONE)
    return std::string("not a PTO object (e_machine " + std::to_string(eh.e_machine) + ")");
  ObjectFile obj;
  if (eh.e_flags == kArchFlagA2A3)
    obj.arch = isa::Arch::A2A3;
  else if (eh.e_flags == kArchFlagA5)
    obj.arch = isa::Arch::A5;
  else
    return std::string("unknown arch flags 0x" + std::to_string(eh.e_flags));
  for (const char* need : {".text", ".pto.tiles", ".pto.kernels", ".pto.events", ".pto.lines",
                           ".note.pto.isa", ".rela.text", ".symtab", ".strtab"})
    if (!s.headers.count(need)) return std::string("missing section '") + need + "'";
  // The ISA identity note must match exactly.
  {
    auto identity = detail::readIdentityNote(s.data[".note.pto.isa"], "object");
    if (auto* e = std::get_if<std::string>(&identity)) return *e;
    obj.usesExtensions = std::get<bool>(identity);
  }
  obj.text = s.data[".text"];
  const std::vector<uint8_t>& strtab = s.data[".strtab"];
  auto str = [&](uint32_t off, const char* what) -> std::optional<std::string> {
    auto v = detail::strAt(strtab, off);
    if (!v) return std::nullopt;
    (void)what;
    return v;
  };
  if (auto e = detail::readFunctions(s.data[".pto.kernels"], s.data[".pto.tiles"], strtab,
                                     obj.text.size(), kFormatVersion, obj.functions))
    return *e;
  if (s.data.count(".pto.extents"))
    if (auto e = detail::readExtents(s.data[".pto.extents"], strtab, obj.functions)) return *e;
  // Events.
  {
    auto& d = s.data[".pto.events"];
    In in(d.data(), d.size(), ".pto.events");
    uint32_t count = in.header(kEventsMagic, kEventRecord);
    for (uint32_t i = 0; i < count && in.ok(); ++i) {
      Event e;
      e.function = in.u32();
      auto name = str(in.u32(), "event");
      uint8_t sp = in.u8(), dp = in.u8();
      in.u16();
      in.u32();
      if (!name)
        in.fail("event " + std::to_string(i) + " has a bad name offset");
      else
        e.name = *name;
      if (e.function >= obj.functions.size())
        in.fail("event '" + e.name + "' belongs to a missing function");
      if (sp >= isa::spellingsPipe().size() || dp >= isa::spellingsPipe().size())
        in.fail("event '" + e.name + "' has a bad pipe");
      e.srcPipe = static_cast<isa::Pipe>(sp);
      e.dstPipe = static_cast<isa::Pipe>(dp);
      obj.events.push_back(std::move(e));
    }
    if (!in.ok()) return in.error();
  }
  // Lines.
  {
    auto& d = s.data[".pto.lines"];
    In in(d.data(), d.size(), ".pto.lines");
    uint32_t count = in.header(kLinesMagic, kLineRecord);
    obj.lines.reserve(count);
    for (uint32_t i = 0; i < count && in.ok(); ++i) {
      LineEntry l;
      l.textOffset = in.u64();
      auto file = str(in.u32(), "line");
      l.line = in.u32();
      l.col = in.u32();
      in.u32();
      if (!file)
        in.fail("line entry " + std::to_string(i) + " has a bad file name offset");
      else
        l.file = *file;
      if (l.textOffset > obj.text.size())
        in.fail("line entry " + std::to_string(i) + " points past .text");
      obj.lines.push_back(std::move(l));
    }
    if (!in.ok()) return in.error();
  }
  // Symbols and relocations.
  {
    auto& d = s.data[".symtab"];
    if (d.size() % sizeof(Elf64_Sym) != 0)
      return std::string(".symtab: size is not a multiple of the entry size");
    std::vector<std::string> symNames;
    In in(d.data(), d.size(), ".symtab");
    for (size_t i = 0; i < d.size() / sizeof(Elf64_Sym); ++i) {
      auto name = str(in.u32(), "symbol");
      in.u8();
      in.u8();
      in.u16();
      in.u64();
      in.u64();
      if (!name) return ".symtab: symbol " + std::to_string(i) + " has a bad name offset";
      symNames.push_back(*name);
    }
    auto& r = s.data[".rela.text"];
    if (r.size() % sizeof(Elf64_Rela) != 0)
      return std::string(".rela.text: size is not a multiple of the entry size");
    In rin(r.data(), r.size(), ".rela.text");
    obj.relocs.reserve(r.size() / sizeof(Elf64_Rela));
    for (size_t i = 0; i < r.size() / sizeof(Elf64_Rela) && rin.ok(); ++i) {
      Reloc rel;
      rel.offset = rin.u64();
      uint64_t info = rin.u64();
      int64_t addend = rin.i64();
      uint32_t sym = static_cast<uint32_t>(ELF64_R_SYM(info));
      uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(info));
      // Spelled only for a message (an object has a relocation per event word and call).
      auto what = [&] { return "relocation " + std::to_string(i); };
      if (rel.offset + 4 > obj.text.size() || rel.offset % 2)
        rin.fail(what() + " has a bad offset");
      if (sym >= symNames.size()) rin.fail(what() + " names a missing symbol");
      if (type < 1 || type > 3) rin.fail(what() + " has unknown type " + std::to_string(type));
      if (!rin.ok()) break;
      rel.type = static_cast<RelocType>(type);
      if (rel.type == RelocType::Call) {
        rel.symbol = symNames[sym];
        if (rel.symbol.empty()) rin.fail(what() + " calls an unnamed symbol");
      } else {
        rel.function = static_cast<uint32_t>(static_cast<uint64_t>(addend) >> 32);
        rel.index = static_cast<uint32_t>(addend);
        if (rel.function >= obj.functions.size())
          rin.fail(what() + " names a missing function");
        else if (rel.type == RelocType::Tile &&
                 rel.index >= obj.functions[rel.function].tiles.size())
          rin.fail(what() + " names a missing tile");
        else if (rel.type == RelocType::Event && rel.index >= obj.events.size())
          rin.fail(what() + " names a missing event");
      }
      obj.relocs.push_back(std::move(rel));
    }
    if (!rin.ok()) return rin.error();
  }
  return obj;
}

} // namespace pto::obj
