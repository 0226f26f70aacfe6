#include "obj/Binary.h"

#include <cstring>

namespace pto::obj::detail {

std::vector<uint8_t> noteBytes(uint32_t type, const std::string& desc) {
  Out o;
  o.u32(4); // "PTO\0"
  o.u32(static_cast<uint32_t>(desc.size()));
  o.u32(type);
  for (char c : std::string("PTO")) o.u8(static_cast<uint8_t>(c));
  o.u8(0);
  for (char c : desc) o.u8(static_cast<uint8_t>(c));
  while (o.bytes.size() % 4) o.u8(0);
  return o.bytes;
}

std::variant<Sections, std::string> loadSections(const uint8_t* data, size_t size, const char* what) {
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
  if (eh.e_shoff > size || static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > size - eh.e_shoff)
    return std::string("section header table extends past the end of the file");
  if (eh.e_shstrndx >= eh.e_shnum) return std::string("bad section name table index");
  if (eh.e_phnum > 0 && (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
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
  if (eh.e_shstrndx == 0 || shstr.sh_type != SHT_STRTAB || shstr.sh_offset > size || shstr.sh_size > size - shstr.sh_offset)
    return std::string("bad section name table");
  std::vector<uint8_t> names(data + shstr.sh_offset, data + shstr.sh_offset + shstr.sh_size);
  for (size_t i = 1; i < shdrs.size(); ++i) {
    auto name = strAt(names, shdrs[i].sh_name);
    if (!name) return "section " + std::to_string(i) + " has a bad name offset";
    if (out.data.count(*name)) return "duplicate section '" + *name + "'";
    out.headers[*name] = shdrs[i];
    if (shdrs[i].sh_type != SHT_NOBITS)
      out.data[*name].assign(data + shdrs[i].sh_offset, data + shdrs[i].sh_offset + shdrs[i].sh_size);
  }
  // libelf must agree that the file is well formed.
  std::vector<uint8_t> copy(data, data + size);
  ElfPtr elf(elf_memory(reinterpret_cast<char*>(copy.data()), copy.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return elfError("libelf rejects the file");
  size_t n = 0;
  if (elf_getshdrnum(elf.get(), &n) != 0 || n != shdrs.size()) return elfError("libelf rejects the section table");
  return out;
}


} // namespace pto::obj::detail
