#include "obj/Binary.h"

#include "isa/Encoding.h"
#include "support/Numbers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <unordered_set>

namespace pto::obj::detail {

// The descriptor limit is the one B.TBANK and B.IOT can address (docs/encoding.md 5.4).
static_assert(kMaxTilesPerFunction == isa::enc::kTilesPerBank * isa::enc::kTileBanks);

namespace {
constexpr uint32_t kTilesMagic = 0x4c545450;   // "PTTL"
constexpr uint32_t kKernelsMagic = 0x4b545450; // "PTTK"
constexpr uint32_t kParamsMagic = 0x50545450;  // "PTTP"
constexpr uint32_t kTileRecord = 48, kFunctionRecord = 48, kParamRecord = 56;
} // namespace

namespace {
/// What is wrong with a tensor_view parameter's shape (static dimensions or kDynamicDim), or
/// nothing.
std::optional<std::string> checkParamShape(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == kDynamicDim) continue; // '?': given at run time
    if (d < 0) return "has a negative dimension " + std::to_string(d);
    auto m = checkedMul(n, d);
    if (!m || *m > kMaxParamElements || d > kMaxParamElements)
      return "has a shape of more than 2^40 elements";
    n = *m;
  }
  return std::nullopt;
}
} // namespace

std::vector<uint8_t> writeTiles(const std::vector<Function>& functions, StrTab& strs,
                                uint16_t version) {
  Out o;
  size_t count = 0;
  for (const Function& f : functions)
    count += f.tiles.size();
  o.header(kTilesMagic, kTileRecord, count, version);
  for (uint32_t fi = 0; fi < functions.size(); ++fi)
    for (const TileDesc& t : functions[fi].tiles) {
      o.u32(fi);
      o.u32(strs.add(t.name));
      o.u8(static_cast<uint8_t>(t.loc));
      o.u8(static_cast<uint8_t>(t.dtype));
      o.u8(static_cast<uint8_t>(t.blayout));
      o.u8(static_cast<uint8_t>(t.slayout));
      o.u8(static_cast<uint8_t>(t.pad));
      o.u8(static_cast<uint8_t>(t.compact));
      o.u16(t.fractal);
      o.u32(t.rows);
      o.u32(t.cols);
      o.i32(t.validRows);
      o.i32(t.validCols);
      o.i64(t.placement);
      o.u32(static_cast<uint32_t>(t.aliasOf + 1)); // 0: not a view
      o.u32(t.aliasOffset);
    }
  return o.bytes;
}

std::variant<std::vector<uint8_t>, std::string> writeKernels(const std::vector<Function>& functions,
                                                             StrTab& strs, uint16_t version) {
  Out o;
  o.header(kKernelsMagic, kFunctionRecord, functions.size(), version);
  uint32_t firstParam = 0, firstTile = 0;
  for (const Function& f : functions) {
    if (f.frameSize > kMaxFrameSize)
      return "function '" + f.name + "' has a frame of " + std::to_string(f.frameSize) +
             " bytes (at most " + std::to_string(kMaxFrameSize) + ")";
    o.u32(strs.add(f.name));
    o.u32(f.flags);
    o.u64(f.textOffset);
    o.u64(f.textSize);
    o.u32(firstParam);
    o.u32(static_cast<uint32_t>(f.params.size()));
    o.u32(firstTile);
    o.u32(static_cast<uint32_t>(f.tiles.size()));
    o.u32(f.frameSize);
    o.u32(0);
    firstParam += static_cast<uint32_t>(f.params.size());
    firstTile += static_cast<uint32_t>(f.tiles.size());
  }
  o.header(kParamsMagic, kParamRecord, firstParam, version);
  for (const Function& f : functions)
    for (const Param& p : f.params) {
      if (p.shape.size() > 5)
        return "parameter '" + p.name + "' has rank " + std::to_string(p.shape.size());
      if (auto bad = checkParamShape(p.shape)) return "parameter '" + p.name + "' " + *bad;
      o.u32(strs.add(p.name));
      o.u8(static_cast<uint8_t>(p.kind));
      o.u8(static_cast<uint8_t>(p.dtype));
      o.u8(static_cast<uint8_t>(p.shape.size()));
      o.u8(0);
      for (size_t i = 0; i < 5; ++i)
        o.i64(i < p.shape.size() ? p.shape[i] : 0);
      o.u64(0);
    }
  return o.bytes;
}

namespace {
/// One record of the parameter table (`i` its index, for messages); errors through `in`.
Param readParam(In& in, const std::vector<uint8_t>& strtab, uint32_t i) {
  Param p;
  auto name = strAt(strtab, in.u32());
  uint8_t kind = in.u8(), dtype = in.u8(), rank = in.u8();
  in.u8();
  int64_t shape[5];
  for (auto& v : shape)
    v = in.i64();
  in.u64();
  if (!name)
    in.fail("parameter " + std::to_string(i) + " has a bad name offset");
  else
    p.name = *name;
  if (kind > static_cast<uint8_t>(ParamKind::Index))
    in.fail("parameter '" + p.name + "' has a bad kind");
  if (dtype >= isa::kNumDTypes) in.fail("parameter '" + p.name + "' has a bad dtype");
  if (rank > 5) in.fail("parameter '" + p.name + "' has rank " + std::to_string(rank));
  p.kind = static_cast<ParamKind>(kind);
  p.dtype = static_cast<isa::DType>(dtype);
  for (uint8_t k = 0; k < rank && k < 5; ++k)
    p.shape.push_back(shape[k]);
  if (auto bad = checkParamShape(p.shape)) in.fail("parameter '" + p.name + "' " + *bad);
  return p;
}

/// One record of .pto.tiles with the function it belongs to (`i` its index, for messages);
/// errors through `in`.
std::pair<uint32_t, TileDesc> readTileDesc(In& in, const std::vector<uint8_t>& strtab, uint32_t i,
                                           size_t numFunctions) {
  uint32_t fn = in.u32();
  TileDesc t;
  auto name = strAt(strtab, in.u32());
  uint8_t loc = in.u8(), dtype = in.u8(), bl = in.u8(), sl = in.u8(), pad = in.u8(),
          compact = in.u8();
  t.fractal = in.u16();
  t.rows = in.u32();
  t.cols = in.u32();
  t.validRows = in.i32();
  t.validCols = in.i32();
  t.placement = in.i64();
  t.aliasOf = static_cast<int32_t>(in.u32() - 1u); // 0 (not a view) -> -1, without signed overflow
  t.aliasOffset = in.u32();
  std::string what = "tile " + std::to_string(i);
  if (!name)
    in.fail(what + " has a bad name offset");
  else
    t.name = *name;
  if (fn >= numFunctions) in.fail(what + " belongs to missing function " + std::to_string(fn));
  if (loc >= isa::spellingsLoc().size() || dtype >= isa::kNumDTypes ||
      bl >= isa::spellingsBLayout().size() || sl >= isa::spellingsSLayout().size() ||
      pad >= isa::spellingsPadValue().size() || compact >= isa::spellingsCompactMode().size())
    in.fail(what + " has an out-of-range enum field");
  if ((t.validRows < 0 && t.validRows != kDynamicDim) ||
      (t.validCols < 0 && t.validCols != kDynamicDim) ||
      t.validRows > static_cast<int64_t>(t.rows) || t.validCols > static_cast<int64_t>(t.cols))
    in.fail(what + " has a bad valid shape");
  if (t.placement < kRuntimePlaced) in.fail(what + " has a bad placement");
  if (t.aliasOf < -1) in.fail(what + " is a view of a missing tile");
  t.loc = static_cast<isa::Loc>(loc);
  t.dtype = static_cast<isa::DType>(dtype);
  t.blayout = static_cast<isa::BLayout>(bl);
  t.slayout = static_cast<isa::SLayout>(sl);
  t.pad = static_cast<isa::PadValue>(pad);
  t.compact = static_cast<isa::CompactMode>(compact);
  return {fn, std::move(t)};
}
} // namespace

std::optional<std::string> readFunctions(const std::vector<uint8_t>& kernels,
                                         const std::vector<uint8_t>& tiles,
                                         const std::vector<uint8_t>& strtab, size_t textSize,
                                         uint16_t version, std::vector<Function>& functions) {
  auto str = [&](uint32_t off, const char*) { return strAt(strtab, off); };
  struct FnRange {
    uint32_t firstParam, numParams, firstTile, numTiles;
  };
  std::vector<FnRange> ranges;
  std::vector<Param> params;
  {
    In in(kernels.data(), kernels.size(), ".pto.kernels");
    uint32_t count = in.header(kKernelsMagic, kFunctionRecord, version);
    std::unordered_set<std::string> names; // a hash look-up a function (was a scan of the others)
    for (uint32_t i = 0; i < count && in.ok(); ++i) {
      Function f;
      auto name = str(in.u32(), "function");
      f.flags = in.u32();
      f.textOffset = in.u64();
      f.textSize = in.u64();
      FnRange r{in.u32(), in.u32(), in.u32(), in.u32()};
      f.frameSize = in.u32();
      in.u32();
      if (!name)
        in.fail("function " + std::to_string(i) + " has a bad name offset");
      else
        f.name = *name;
      if (f.frameSize > kMaxFrameSize)
        in.fail("function '" + f.name + "' has a frame of " + std::to_string(f.frameSize) +
                " bytes (at most " + std::to_string(kMaxFrameSize) + ")");
      if (r.numTiles > kMaxTilesPerFunction)
        in.fail("function '" + f.name + "' has " + std::to_string(r.numTiles) +
                " tile descriptors (at most " + std::to_string(kMaxTilesPerFunction) + ")");
      if (!f.name.empty() && !names.insert(f.name).second)
        in.fail("duplicate function '" + f.name + "'");
      if (f.textOffset > textSize || f.textSize > textSize - f.textOffset)
        in.fail("function '" + f.name + "' extends past the end of .text");
      functions.push_back(std::move(f));
      ranges.push_back(r);
    }
    uint32_t nparams = in.ok() ? in.header(kParamsMagic, kParamRecord, version) : 0;
    for (uint32_t i = 0; i < nparams && in.ok(); ++i)
      params.push_back(readParam(in, strtab, i));
    if (!in.ok()) return in.error();
    for (size_t i = 0; i < ranges.size(); ++i) {
      const FnRange& r = ranges[i];
      if (r.firstParam > params.size() || r.numParams > params.size() - r.firstParam)
        return "function '" + functions[i].name + "' has a parameter range past the table";
      functions[i].params.assign(params.begin() + r.firstParam,
                                 params.begin() + r.firstParam + r.numParams);
    }
  }
  // Tiles.
  {
    In in(tiles.data(), tiles.size(), ".pto.tiles");
    uint32_t count = in.header(kTilesMagic, kTileRecord, version);
    std::vector<std::pair<uint32_t, TileDesc>> tiles;
    for (uint32_t i = 0; i < count && in.ok(); ++i)
      tiles.push_back(readTileDesc(in, strtab, i, functions.size()));
    if (!in.ok()) return in.error();
    size_t next = 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
      const FnRange& r = ranges[i];
      if (r.firstTile != next || r.numTiles > tiles.size() - next)
        return "function '" + functions[i].name +
               "' has a tile range that does not match .pto.tiles";
      for (uint32_t k = 0; k < r.numTiles; ++k) {
        if (tiles[next + k].first != i) return "tile table is not grouped by function";
        const TileDesc& t = tiles[next + k].second;
        // A view names an earlier tile of the same function (indices are per function).
        if (t.aliasOf >= static_cast<int32_t>(k))
          return "tile '" + t.name + "' of '" + functions[i].name +
                 "' is a view of a later or missing tile";
        functions[i].tiles.push_back(t);
      }
      next += r.numTiles;
    }
    if (next != tiles.size()) return std::string("tiles belong to no function");
  }
  return std::nullopt;
}

std::vector<uint8_t> noteBytes(uint32_t type, const std::string& desc) {
  Out o;
  o.u32(4); // "PTO\0"
  o.u32(static_cast<uint32_t>(desc.size()));
  o.u32(type);
  for (char c : std::string("PTO"))
    o.u8(static_cast<uint8_t>(c));
  o.u8(0);
  for (char c : desc)
    o.u8(static_cast<uint8_t>(c));
  while (o.bytes.size() % 4)
    o.u8(0);
  return o.bytes;
}

std::variant<isa::Arch, std::string> archOfFlags(uint32_t flags) {
  if (flags == kArchFlagA2A3) return isa::Arch::A2A3;
  if (flags == kArchFlagA5) return isa::Arch::A5;
  return "unknown arch flags " + std::to_string(flags);
}

namespace {
constexpr uint32_t kLinesMagic = 0x4e4c5450; // "PTLN"
constexpr uint32_t kLineRecord = 24;
} // namespace

std::vector<uint8_t> writeLines(const std::vector<LineEntry>& lines, StrTab& strs,
                                uint16_t version) {
  Out o;
  o.header(kLinesMagic, kLineRecord, lines.size(), version);
  for (const LineEntry& l : lines) {
    o.u64(l.textOffset);
    o.u32(strs.add(l.file));
    o.u32(l.line);
    o.u32(l.col);
    o.u32(l.frontend.empty() ? 0 : strs.add(l.frontend));
  }
  return std::move(o.bytes);
}

std::optional<std::string> readLines(const std::vector<uint8_t>& section,
                                     const std::vector<uint8_t>& strtab, size_t textSize,
                                     uint16_t version, std::vector<LineEntry>& lines) {
  In in(section.data(), section.size(), ".pto.lines");
  uint32_t count = in.header(kLinesMagic, kLineRecord, version);
  lines.reserve(count);
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    LineEntry l;
    l.textOffset = in.u64();
    auto file = strAt(strtab, in.u32());
    l.line = in.u32();
    l.col = in.u32();
    auto frontend = strAt(strtab, in.u32());
    if (!file)
      in.fail("line entry " + std::to_string(i) + " has a bad file name offset");
    else
      l.file = *file;
    if (!frontend)
      in.fail("line entry " + std::to_string(i) + " has a bad frontend location offset");
    else
      l.frontend = *frontend;
    if (l.textOffset > textSize) in.fail("line entry " + std::to_string(i) + " points past .text");
    lines.push_back(std::move(l));
  }
  if (!in.ok()) return in.error();
  return std::nullopt;
}

std::variant<bool, std::string> readIdentityNote(const std::vector<uint8_t>& note,
                                                 const char* what) {
  In in(note.data(), note.size(), ".note.pto.isa");
  std::optional<bool> extensions;
  while (in.ok() && in.remaining() > 0) {
    uint32_t namesz = in.u32(), descsz = in.u32(), type = in.u32();
    if (!in.ok()) break;
    if (namesz > in.remaining()) {
      in.fail("note name extends past the section");
      break;
    }
    std::string name;
    for (uint32_t i = 0; i < ((namesz + 3) & ~3u) && in.ok(); ++i) {
      uint8_t c = in.u8();
      if (i + 1 < namesz) name += static_cast<char>(c);
    }
    if (descsz > in.remaining()) {
      in.fail("note descriptor extends past the section");
      break;
    }
    std::string desc;
    for (uint32_t i = 0; i < ((descsz + 3) & ~3u) && in.ok(); ++i) {
      uint8_t c = in.u8();
      if (i < descsz) desc += static_cast<char>(c);
    }
    if (name != "PTO" || type != kNoteIdentity) continue;
    if (desc == isa::enc::isaNoteDescriptor(false))
      extensions = false;
    else if (desc == isa::enc::isaNoteDescriptor(true))
      extensions = true;
    else
      return std::string("ISA identity mismatch: the ") + what + " declares " + desc;
  }
  if (!in.ok()) return in.error();
  if (!extensions) return std::string("missing PTO ISA identity note");
  return *extensions;
}

std::variant<Sections, std::string> loadSections(const uint8_t* data, size_t size,
                                                 const char* what) {
  if (size < sizeof(Elf64_Ehdr)) return std::string("file too small to be an ELF ") + what;
  if (std::memcmp(data, ELFMAG, SELFMAG) != 0) return std::string("not an ELF file (bad magic)");
  if (data[EI_CLASS] != ELFCLASS64) return std::string("not a 64-bit ELF file");
  if (data[EI_DATA] != ELFDATA2LSB) return std::string("not a little-endian ELF file");
  if (!initLibelf()) return elfError("libelf initialisation failed");
  // Validate the section header table ourselves before libelf walks it.
  Sections out;
  Elf64_Ehdr& eh = out.ehdr;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return std::string("bad section header entry size");
  if (eh.e_shoff > size ||
      static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > size - eh.e_shoff)
    return std::string("section header table extends past the end of the file");
  if (eh.e_shstrndx >= eh.e_shnum) return std::string("bad section name table index");
  if (eh.e_phnum > 0 &&
      (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
       static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr) > size - eh.e_phoff))
    return std::string("program header table extends past the end of the file");
  std::vector<Elf64_Shdr> shdrs(eh.e_shnum);
  std::memcpy(shdrs.data(), data + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  for (size_t i = 1; i < shdrs.size(); ++i) {
    const Elf64_Shdr& sh = shdrs[i];
    if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
      return "section " + std::to_string(i) + " extends past the end of the file";
  }
  // The section-name table is read before anything else: check it whatever its index or type.
  const Elf64_Shdr& shstr = shdrs[eh.e_shstrndx];
  if (eh.e_shstrndx == 0 || shstr.sh_type != SHT_STRTAB || shstr.sh_offset > size ||
      shstr.sh_size > size - shstr.sh_offset)
    return std::string("bad section name table");
  std::vector<uint8_t> names(data + shstr.sh_offset, data + shstr.sh_offset + shstr.sh_size);
  for (size_t i = 1; i < shdrs.size(); ++i) {
    auto name = strAt(names, shdrs[i].sh_name);
    if (!name) return "section " + std::to_string(i) + " has a bad name offset";
    if (out.data.count(*name)) return "duplicate section '" + *name + "'";
    out.headers[*name] = shdrs[i];
    if (shdrs[i].sh_type != SHT_NOBITS)
      out.data[*name].assign(data + shdrs[i].sh_offset,
                             data + shdrs[i].sh_offset + shdrs[i].sh_size);
  }
  // libelf must agree that the file is well formed.
  std::vector<uint8_t> copy(data, data + size);
  ElfPtr elf(elf_memory(reinterpret_cast<char*>(copy.data()), copy.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return elfError("libelf rejects the file");
  size_t n = 0;
  if (elf_getshdrnum(elf.get(), &n) != 0 || n != shdrs.size())
    return elfError("libelf rejects the section table");
  return out;
}

namespace {

/// Appends one section to `elf`; its data stays owned by the caller until elf_update.
Error addSection(Elf* elf, const Section& s, uint32_t nameOff, Elf_Scn** scnOut = nullptr) {
  Elf_Scn* scn = elf_newscn(elf);
  if (!scn) return elfError("elf_newscn");
  if (scnOut) *scnOut = scn;
  Elf_Data* d = elf_newdata(scn);
  if (!d) return elfError("elf_newdata");
  d->d_buf = const_cast<uint8_t*>(s.data.data());
  d->d_size = s.data.size();
  d->d_type = ELF_T_BYTE;
  d->d_align = s.align;
  d->d_version = EV_CURRENT;
  Elf64_Shdr* sh = elf64_getshdr(scn);
  if (!sh) return elfError("elf64_getshdr");
  sh->sh_name = nameOff;
  sh->sh_type = s.type;
  sh->sh_flags = s.flags;
  sh->sh_addralign = s.align;
  sh->sh_link = s.link;
  sh->sh_info = s.info;
  sh->sh_entsize = s.entsize;
  return std::nullopt;
}

/// Lays the file out, then points the one PT_LOAD segment at .text.
Error loadSegment(Elf* elf, Elf_Scn* text, uint64_t bytes) {
  if (elf_update(elf, ELF_C_NULL) < 0) return elfError("elf_update");
  Elf64_Shdr* tsh = elf64_getshdr(text);
  if (!tsh) return elfError("elf64_getshdr");
  Elf64_Phdr* ph = elf64_getphdr(elf);
  if (!ph) return elfError("elf64_getphdr");
  ph->p_type = PT_LOAD;
  ph->p_flags = PF_R | PF_X;
  ph->p_offset = tsh->sh_offset;
  ph->p_vaddr = ph->p_paddr = 0;
  ph->p_filesz = ph->p_memsz = bytes;
  ph->p_align = 4;
  elf_flagphdr(elf, ELF_C_SET, ELF_F_DIRTY);
  return std::nullopt;
}

/// The whole of the in-memory file `fd`.
std::variant<std::vector<uint8_t>, std::string> readBack(int fd, const char* what) {
  const std::string fail = std::string("cannot read back the ") + what;
  off_t size = lseek(fd, 0, SEEK_END);
  if (size < 0 || lseek(fd, 0, SEEK_SET) < 0) return fail;
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n <= 0) return fail;
    got += static_cast<size_t>(n);
  }
  return bytes;
}

} // namespace

std::variant<std::vector<uint8_t>, std::string> writeElf(const ElfKind& kind,
                                                         const std::vector<Section>& secs) {
  // libelf writes to a file descriptor; an anonymous memory file keeps this in memory.
  int fd = memfd_create((std::string("pto-") + kind.what).c_str(), 0);
  if (fd < 0) return std::string("cannot create an in-memory file");
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  ElfPtr elf(elf_begin(fd, ELF_C_WRITE, nullptr));
  if (!elf) return elfError("elf_begin");
  Elf64_Ehdr* eh = elf64_newehdr(elf.get());
  if (!eh) return elfError("elf64_newehdr");
  eh->e_ident[EI_DATA] = ELFDATA2LSB;
  eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
  eh->e_type = kind.type;
  eh->e_machine = EM_NONE;
  eh->e_version = EV_CURRENT;
  eh->e_flags = kind.flags;
  eh->e_entry = kind.entry;
  if (kind.loadBytes && !elf64_newphdr(elf.get(), 1)) return elfError("elf64_newphdr");
  StrTab shstrs;
  std::vector<uint32_t> shNames;
  for (const Section& s : secs)
    shNames.push_back(shstrs.add(s.name));
  const uint32_t shstrName = shstrs.add(".shstrtab");
  Elf_Scn* text = nullptr;
  for (size_t i = 0; i < secs.size(); ++i)
    if (Error e = addSection(elf.get(), secs[i], shNames[i], i == 0 ? &text : nullptr)) return *e;
  const Section shstrtab{".shstrtab", SHT_STRTAB, 0, 1, shstrs.data()};
  if (Error e = addSection(elf.get(), shstrtab, shstrName)) return *e;
  eh->e_shstrndx = static_cast<Elf64_Half>(secs.size() + 1);
  if (kind.loadBytes && text)
    if (Error e = loadSegment(elf.get(), text, *kind.loadBytes)) return *e;
  if (elf_update(elf.get(), ELF_C_WRITE) < 0) return elfError("elf_update");
  elf.reset();
  return readBack(fd, kind.what);
}

} // namespace pto::obj::detail
