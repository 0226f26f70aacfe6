#include "obj/Object.h"

#include "obj/Binary.h"
#include "obj/Extent.h"
#include "obj/GmAccess.h"

#include "isa/Encoding.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace pto::obj {

namespace {

using namespace detail;

constexpr uint32_t kObjectEventsMagic = 0x45545450; // "PTTE"; tiles, kernels, lines: obj/Binary.cpp

} // namespace

/// "function @k has two parameters named %x": a kernel whose parameters cannot be told apart
/// by name can never be bound and run.
static std::optional<std::string> duplicateParameter(const ObjectFile& obj) {
  for (const Function& f : obj.functions) {
    std::unordered_set<std::string_view> seen;
    for (const Param& p : f.params)
      if (!seen.insert(p.name).second)
        return "function @" + f.name + " has two parameters named %" + p.name;
  }
  return std::nullopt;
}

std::variant<std::vector<uint8_t>, std::string> writeObject(const ObjectFile& obj) {
  if (!initLibelf()) return elfError("libelf initialisation failed");
  if (auto e = duplicateParameter(obj)) return *e;
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
  for (const Event& e : obj.events)
    if (e.function >= obj.functions.size())
      return std::string("event '" + e.name + "' names a missing function");
  secs.push_back({".pto.events", SHT_PROGBITS, 0, 8,
                  writeEvents(kObjectEventsMagic, kFormatVersion, obj.events, strs,
                              [](const Event&) { return uint8_t{0}; })});
  secs.push_back({".pto.lines", SHT_PROGBITS, 0, 8, writeLines(obj.lines, strs, kFormatVersion)});
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
  // Each defined name's final index, through its string offset (one hash look-up a symbol;
  // was a scan of every name for every symbol: 20k functions took 30 s).
  std::unordered_map<uint32_t, uint32_t*> indexOfName;
  indexOfName.reserve(symIndex.size());
  for (auto& [name, idx] : symIndex)
    indexOfName[strs.add(name)] = &idx;
  for (uint32_t i = 2; i < syms.size(); ++i)
    if (auto it = indexOfName.find(syms[i].st_name); it != indexOfName.end()) *it->second = i;
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
  // Optional, after the fixed sections (their indices are fixed): pointer extents (obj/Extent.h)
  // and the GM accesses of tile ops (obj/GmAccess.h).
  std::vector<uint8_t> extents = detail::writeExtents(obj.functions, strs);
  auto gm = detail::writeGmAccesses(obj);
  if (auto* e = std::get_if<std::string>(&gm)) return *e;
  std::vector<uint8_t>& gmAccesses = std::get<std::vector<uint8_t>>(gm);
  secs.push_back({".strtab", SHT_STRTAB, 0, 1, strs.data()});
  if (!extents.empty()) secs.push_back({".pto.extents", SHT_PROGBITS, 0, 8, std::move(extents)});
  if (!gmAccesses.empty())
    secs.push_back({".pto.gmaccess", SHT_PROGBITS, 0, 8, std::move(gmAccesses)});

  return writeElf({"object", ET_REL, archFlags(obj.arch), 0, std::nullopt}, secs);
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
  auto arch = detail::archOfFlags(eh.e_flags);
  if (auto* e = std::get_if<std::string>(&arch)) return *e;
  obj.arch = std::get<isa::Arch>(arch);
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
  if (auto e = detail::readFunctions(s.data[".pto.kernels"], s.data[".pto.tiles"], strtab,
                                     obj.text.size(), kFormatVersion, obj.functions))
    return *e;
  if (s.data.count(".pto.extents"))
    if (auto e = detail::readExtents(s.data[".pto.extents"], strtab, obj.functions)) return *e;
  if (s.data.count(".pto.gmaccess"))
    if (auto e = detail::readGmAccesses(s.data[".pto.gmaccess"], obj)) return *e;
  if (auto e = detail::readEvents(s.data[".pto.events"], kObjectEventsMagic, kFormatVersion, strtab,
                                  obj.functions.size(), obj.events,
                                  [](Event&, uint8_t, In&) {})) // objects carry no ids yet
    return *e;
  if (auto e = detail::readLines(s.data[".pto.lines"], strtab, obj.text.size(), kFormatVersion,
                                 obj.lines))
    return *e;
  // Symbols and relocations.
  {
    auto& d = s.data[".symtab"];
    if (d.size() % sizeof(Elf64_Sym) != 0)
      return std::string(".symtab: size is not a multiple of the entry size");
    std::vector<std::string> symNames;
    In in(d.data(), d.size(), ".symtab");
    for (size_t i = 0; i < d.size() / sizeof(Elf64_Sym); ++i) {
      auto name = detail::strAt(strtab, in.u32());
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
  if (auto e = duplicateParameter(obj)) return *e;
  return obj;
}

} // namespace pto::obj
