#include "asm/mc/Disasm.h"
#include "asm/mc/DisasmImpl.h"

#include "isa/Encoding.h"
#include "support/Text.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace pto::as {

namespace enc = isa::enc;

// ================================================================ shared helpers
namespace {
std::string quoted(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}
} // namespace

std::string quoteName(char sigil, std::string_view name) {
  bool plain = !name.empty();
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
          c == '-'))
      plain = false;
  return std::string(1, sigil) + (plain ? std::string(name) : quoted(name));
}

std::string tileLabel(uint32_t index) {
  static const char hands[4] = {'T', 'U', 'M', 'N'};
  if (index >= 64) return "#" + std::to_string(index);
  return std::string(1, hands[index / 16]) + "#" + std::to_string(index % 16 + 1);
}

std::optional<uint32_t> parseTileLabel(std::string_view t) {
  auto number = [](std::string_view s) -> std::optional<uint32_t> {
    if (s.empty() || s.size() > 9) return std::nullopt;
    uint32_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v;
  };
  if (t.size() >= 2 && t[0] == '#') return number(t.substr(1));
  if (t.size() < 3 || t[1] != '#') return std::nullopt;
  static const std::string_view hands = "TUMN";
  size_t hand = hands.find(static_cast<char>(std::toupper(static_cast<unsigned char>(t[0]))));
  if (hand == std::string_view::npos) return std::nullopt;
  auto n = number(t.substr(2));
  if (!n || *n < 1 || *n > 16) return std::nullopt;
  return static_cast<uint32_t>(hand * 16 + *n - 1);
}

std::optional<uint32_t> findEventByName(const obj::ObjectFile& obj, uint32_t function,
                                        std::string_view name) {
  for (uint32_t i = 0; i < obj.events.size(); ++i)
    if (obj.events[i].function == function && obj.events[i].name == name) return i;
  std::optional<uint32_t> found;
  for (uint32_t i = 0; i < obj.events.size(); ++i)
    if (obj.events[i].name == name) {
      if (found) return std::nullopt;
      found = i;
    }
  return found;
}

std::string_view relocTypeName(obj::RelocType t) {
  switch (t) {
  case obj::RelocType::None:
    return "R_PTO_NONE";
  case obj::RelocType::Tile:
    return "R_PTO_TILE";
  case obj::RelocType::Call:
    return "R_PTO_CALL";
  case obj::RelocType::Event:
    return "R_PTO_EVENT";
  }
  return "R_PTO_UNKNOWN";
}

namespace {

using support::hex0x;
std::string hex(uint64_t v, int digits) {
  return support::hexDigits(v, digits);
}

} // namespace

std::string hexColumn(uint64_t value, unsigned bits) {
  switch (bits) {
  case 16:
    return hex(value & 0xffff, 4);
  case 48:
    return hex(value & 0xffff, 4) + " " + hex((value >> 16) & 0xffffffffu, 8);
  case 64:
    return hex(value & 0xffffffffu, 8) + " " + hex(value >> 32, 8);
  default:
    return hex(value & 0xffffffffu, 8);
  }
}

namespace {

using dis::Word;
using dis::wordHex;

std::string archName(isa::Arch a) {
  return std::string(isa::spelling(a));
}

std::string dims(int64_t v) {
  return v == obj::kDynamicDim ? "?" : std::to_string(v);
}

std::string paramText(const obj::Param& p) {
  std::string kind;
  switch (p.kind) {
  case obj::ParamKind::Pointer:
    kind = "ptr";
    break;
  case obj::ParamKind::Scalar:
    kind = "scalar";
    break;
  case obj::ParamKind::TensorView:
    kind = "tensor_view";
    break;
  case obj::ParamKind::Index:
    kind = "index";
    break;
  }
  std::string type;
  for (int64_t d : p.shape)
    type += (d == -1 ? std::string("?") : std::to_string(d)) + "x";
  type += isa::spelling(p.dtype);
  std::string extra; // pointer extents (docs/object-format.md section 2.9): one token each
  if (!p.extent.empty()) extra += " extent=" + p.extent;
  if (p.indexValues) extra += " index";
  return ".param " + quoteName('%', p.name) + " " + kind + " " + type + extra;
}

std::string tileText(const obj::TileDesc& t, uint32_t index) {
  std::string s = ".tile " + tileLabel(index) + " " + quoteName('%', t.name) + " " +
                  std::string(isa::spelling(t.loc)) + " " + std::to_string(t.rows) + "x" +
                  std::to_string(t.cols) + "x" + std::string(isa::spelling(t.dtype));
  s += " valid=" + dims(t.validRows) + "x" + dims(t.validCols);
  if (t.blayout != isa::BLayout::RowMajor) s += " blayout=" + std::string(isa::spelling(t.blayout));
  if (t.slayout != isa::SLayout::NoneBox) s += " slayout=" + std::string(isa::spelling(t.slayout));
  if (t.fractal != 512) s += " fractal=" + std::to_string(t.fractal);
  if (t.pad != isa::PadValue::Null) s += " pad=" + std::string(isa::spelling(t.pad));
  if (t.compact != isa::CompactMode::Null) s += " compact=" + std::string(isa::spelling(t.compact));
  if (t.placement == obj::kRuntimePlaced)
    s += " addr=runtime";
  else if (t.placement != obj::kUnplaced)
    s += " addr=" + hex0x(static_cast<uint64_t>(t.placement));
  if (t.aliasOf >= 0) {
    s += " view=" + tileLabel(static_cast<uint32_t>(t.aliasOf));
    if (t.aliasOffset) s += "+" + std::to_string(t.aliasOffset);
  } else if (t.aliasOffset) {
    s += " view_offset=" + std::to_string(t.aliasOffset);
  }
  return s;
}

std::string flagsText(const obj::Function& f) {
  std::string s;
  uint32_t rest = f.flags;
  auto take = [&](uint32_t bit, const char* word) {
    if (f.flags & bit) s += std::string(" ") + word;
    rest &= ~bit;
  };
  take(obj::kEntry, "entry");
  take(obj::kPrivate, "private");
  take(obj::kDeclaration, "declaration");
  take(obj::kKernelVector, "kernel=vector");
  take(obj::kKernelCube, "kernel=cube");
  take(obj::kSubblockZeroOnly, "subblock0");
  take(obj::kReturnsValues, "returns");
  if (rest) s += " flags=" + hex0x(rest);
  return s;
}

std::string eventText(const obj::Event& e) {
  return ".event " + quoteName('@', e.name) + " " + std::string(isa::spelling(e.srcPipe)) + " " +
         std::string(isa::spelling(e.dstPipe));
}

/// The reloc target as a -d directive operand (the function is implied by the block).
std::string relocTarget(const obj::ObjectFile& obj, const obj::Reloc& r) {
  switch (r.type) {
  case obj::RelocType::Tile:
    return "tile " + tileLabel(r.index);
  case obj::RelocType::Event: {
    if (r.index < obj.events.size()) {
      const std::string& name = obj.events[r.index].name;
      if (findEventByName(obj, r.function, name) == r.index) return "event " + quoteName('@', name);
    }
    return "event #" + std::to_string(r.index);
  }
  case obj::RelocType::Call:
    return "call " + quoteName('@', r.symbol);
  case obj::RelocType::None:
    break;
  }
  return "none";
}

/// The human-readable reloc target for -r and the -d comments.
std::string relocDescription(const obj::ObjectFile& obj, const obj::Reloc& r) {
  std::string fn = r.function < obj.functions.size()
                       ? quoteName('@', obj.functions[r.function].name).substr(1)
                       : "#" + std::to_string(r.function);
  switch (r.type) {
  case obj::RelocType::Tile: {
    std::string s = fn + ":" + tileLabel(r.index);
    if (r.function < obj.functions.size() && r.index < obj.functions[r.function].tiles.size())
      s += " (" + quoteName('%', obj.functions[r.function].tiles[r.index].name) + ")";
    return s;
  }
  case obj::RelocType::Event:
    if (r.index < obj.events.size()) return fn + ":" + quoteName('@', obj.events[r.index].name);
    return fn + ":#" + std::to_string(r.index);
  case obj::RelocType::Call:
    return quoteName('@', r.symbol).substr(1);
  case obj::RelocType::None:
    break;
  }
  return "";
}

std::string addrLine(uint64_t off) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%8llx:", static_cast<unsigned long long>(off));
  return buf;
}

std::string locText(const obj::LineEntry& l) {
  const std::string& name = l.file;
  bool plain = !name.empty();
  for (char c : name)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == ';' || c == '\\' ||
        static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      plain = false;
  if (name.find("//") != std::string::npos) plain = false; // would start a comment
  std::string file = plain ? name : quoted(name);
  std::string text = ".loc " + file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
  // The frontend's location (MLIR debug info), always quoted: pto-as reads it back.
  if (!l.frontend.empty()) text += " " + quoted(l.frontend);
  return text;
}

class SourceCache {
public:
  explicit SourceCache(const DisasmOptions& o) : opts_(o) {}
  std::optional<std::string> line(const std::string& file, uint32_t n) {
    auto it = files_.find(file);
    if (it == files_.end()) {
      std::optional<std::string> text;
      if (opts_.readSource)
        text = opts_.readSource(file);
      else {
        std::ifstream in(file, std::ios::binary);
        if (in) text = std::string(std::istreambuf_iterator<char>(in), {});
      }
      std::vector<std::string> lines;
      if (text) {
        std::istringstream ss(*text);
        for (std::string l; std::getline(ss, l);) {
          if (!l.empty() && l.back() == '\r') l.pop_back();
          lines.push_back(std::move(l));
        }
      }
      it = files_.emplace(file, std::make_pair(text.has_value(), std::move(lines))).first;
    }
    if (!it->second.first || n == 0 || n > it->second.second.size()) return std::nullopt;
    return it->second.second[n - 1];
  }

private:
  const DisasmOptions& opts_;
  std::map<std::string, std::pair<bool, std::vector<std::string>>> files_;
};

// ================================================================ ELF views for -h / -t
struct ElfView {
  std::vector<Elf64_Shdr> shdrs;
  std::vector<std::string> names;
  std::span<const uint8_t> bytes;
  std::string error;

  std::span<const uint8_t> data(size_t i) const {
    const Elf64_Shdr& s = shdrs[i];
    if (s.sh_type == SHT_NOBITS || s.sh_offset > bytes.size() ||
        s.sh_size > bytes.size() - s.sh_offset)
      return {};
    return bytes.subspan(s.sh_offset, s.sh_size);
  }
  static std::string cstr(std::span<const uint8_t> tab, uint64_t off) {
    if (off >= tab.size()) return "<bad name>";
    const void* end = std::memchr(tab.data() + off, 0, tab.size() - off);
    if (!end) return "<bad name>";
    return std::string(reinterpret_cast<const char*>(tab.data() + off));
  }
};

ElfView viewOf(std::span<const uint8_t> bytes) {
  ElfView v;
  v.bytes = bytes;
  Elf64_Ehdr eh;
  if (bytes.size() < sizeof eh || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    v.error = "not an ELF file";
    return v;
  }
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > bytes.size() ||
      static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > bytes.size() - eh.e_shoff) {
    v.error = "bad section header table";
    return v;
  }
  v.shdrs.resize(eh.e_shnum);
  if (eh.e_shnum)
    std::memcpy(v.shdrs.data(), bytes.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  std::span<const uint8_t> shstr =
      eh.e_shstrndx < v.shdrs.size() ? v.data(eh.e_shstrndx) : std::span<const uint8_t>{};
  for (const Elf64_Shdr& s : v.shdrs)
    v.names.push_back(ElfView::cstr(shstr, s.sh_name));
  return v;
}

std::string sectionType(uint32_t t) {
  switch (t) {
  case SHT_NULL:
    return "NULL";
  case SHT_PROGBITS:
    return "PROGBITS";
  case SHT_SYMTAB:
    return "SYMTAB";
  case SHT_STRTAB:
    return "STRTAB";
  case SHT_RELA:
    return "RELA";
  case SHT_NOTE:
    return "NOTE";
  case SHT_NOBITS:
    return "NOBITS";
  case SHT_REL:
    return "REL";
  default:
    return hex0x(t);
  }
}

std::vector<uint8_t> serialized(const obj::ObjectFile& obj, std::string& err) {
  auto r = obj::writeObject(obj);
  if (auto* e = std::get_if<std::string>(&r)) {
    err = *e;
    return {};
  }
  return std::get<std::vector<uint8_t>>(std::move(r));
}

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

} // namespace

// ================================================================ listings
std::string sectionListing(std::span<const uint8_t> bytes) {
  ElfView v = viewOf(bytes);
  if (!v.error.empty()) return "; error: " + v.error + "\n";
  std::string out = "Sections:\nIdx Name            Size      Offset    Align  Type\n";
  for (size_t i = 1; i < v.shdrs.size(); ++i) {
    const Elf64_Shdr& s = v.shdrs[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%3zu ", i);
    out += buf + pad(v.names[i], 15) + " " + hex(s.sh_size, 8) + "  " + hex(s.sh_offset, 8) + "  " +
           pad(std::to_string(s.sh_addralign), 5) + "  " + sectionType(s.sh_type) + "\n";
  }
  return out;
}

std::string symbolListing(std::span<const uint8_t> bytes) {
  ElfView v = viewOf(bytes);
  if (!v.error.empty()) return "; error: " + v.error + "\n";
  std::string out = "SYMBOL TABLE:\n";
  for (size_t i = 1; i < v.shdrs.size(); ++i) {
    if (v.shdrs[i].sh_type != SHT_SYMTAB) continue;
    std::span<const uint8_t> syms = v.data(i);
    std::span<const uint8_t> strs = v.shdrs[i].sh_link < v.shdrs.size()
                                        ? v.data(v.shdrs[i].sh_link)
                                        : std::span<const uint8_t>{};
    for (size_t k = 1; k < syms.size() / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym s;
      std::memcpy(&s, syms.data() + k * sizeof s, sizeof s);
      unsigned bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
      std::string flags = bind == STB_LOCAL    ? "l"
                          : bind == STB_GLOBAL ? "g"
                          : bind == STB_WEAK   ? "w"
                                               : "?";
      flags += type == STT_FUNC ? "     F " : type == STT_SECTION ? "    d  " : "       ";
      std::string sec = s.st_shndx == SHN_UNDEF       ? "*UND*"
                        : s.st_shndx == SHN_ABS       ? "*ABS*"
                        : s.st_shndx < v.names.size() ? v.names[s.st_shndx]
                                                      : "<bad section>";
      std::string name =
          type == STT_SECTION && s.st_name == 0 ? sec : ElfView::cstr(strs, s.st_name);
      out += hex(s.st_value, 16) + " " + flags + pad(sec, 8) + "\t" + hex(s.st_size, 16) + " " +
             name + "\n";
    }
  }
  return out;
}

std::string relocListing(const obj::ObjectFile& obj) {
  std::string out = "RELOCATION RECORDS FOR [.text]:\nOFFSET           TYPE              VALUE\n";
  for (const obj::Reloc& r : obj.relocs)
    out += hex(r.offset, 16) + " " + pad(std::string(relocTypeName(r.type)), 17) + " " +
           relocDescription(obj, r) + "\n";
  return out;
}

std::string tileListing(const obj::ObjectFile& obj) {
  std::string out;
  for (const obj::Function& f : obj.functions) {
    if (!out.empty()) out += "\n";
    out += "TILES FOR " + quoteName('@', f.name) + " (" + std::to_string(f.tiles.size()) + "):\n";
    if (f.tiles.empty()) continue;
    out += "Idx   Name         Loc      Shape          Valid      BLayout    SLayout    Fractal "
           "Pad   Compact       Addr\n";
    for (uint32_t i = 0; i < f.tiles.size(); ++i) {
      const obj::TileDesc& t = f.tiles[i];
      std::string shape = std::to_string(t.rows) + "x" + std::to_string(t.cols) + "x" +
                          std::string(isa::spelling(t.dtype));
      std::string addr = t.placement == obj::kUnplaced ? "unplaced"
                         : t.placement == obj::kRuntimePlaced
                             ? "run-time"
                             : hex0x(static_cast<uint64_t>(t.placement));
      if (t.aliasOf >= 0)
        addr += " view of " + tileLabel(static_cast<uint32_t>(t.aliasOf)) + "+" +
                std::to_string(t.aliasOffset);
      out += pad(tileLabel(i), 5) + " " + pad(quoteName('%', t.name), 12) + " " +
             pad(std::string(isa::spelling(t.loc)), 8) + " " + pad(shape, 14) + " " +
             pad(dims(t.validRows) + "x" + dims(t.validCols), 10) + " " +
             pad(std::string(isa::spelling(t.blayout)), 10) + " " +
             pad(std::string(isa::spelling(t.slayout)), 10) + " " +
             pad(std::to_string(t.fractal), 7) + " " + pad(std::string(isa::spelling(t.pad)), 5) +
             " " + pad(std::string(isa::spelling(t.compact)), 13) + " " + addr + "\n";
    }
  }
  return out;
}

std::string rawListing(const obj::ObjectFile& obj) {
  std::string out;
  for (const Word& w : dis::listText(obj.text, 0, obj.text.size()).words)
    out += wordHex(w) + "\n";
  return out;
}

namespace {

/// The canonical block assembly of an object (pto-as reads it back to the same bytes), step by
/// step: the header and the checks of what a reassembly would change, then each function (its
/// directives, then its words with the line entries and relocations among them), then what lies
/// outside every function.
class BlockLister {
public:
  BlockLister(const obj::ObjectFile& obj, const DisasmOptions& opts)
      : obj_(obj), opts_(opts), sources_(opts), nf_(obj.functions.size()) {}

  std::string run() {
    out_ += ".arch " + archName(obj_.arch) + "\n";
    if (obj_.usesExtensions) out_ += ".extensions " + std::string(enc::kExtensionName) + "\n";
    checkNames();
    groupEvents();
    groupRelocs();
    indexLines();
    indexGmAccesses();
    for (size_t i : topRelocs_)
      relocLine(i);
    checkExtensions();
    size_t lastWithWords = nf_;
    for (size_t i = 0; i < nf_; ++i)
      if (obj_.functions[i].textSize) lastWithWords = i;
    for (size_t fi = 0; fi < nf_; ++fi)
      function(fi, fi == lastWithWords);
    trailer(lastWithWords == nf_);
    return std::move(out_);
  }

private:
  void warn(const std::string& msg) { out_ += "; warning: " + msg + "\n"; }

  void checkNames() {
    std::map<std::string, int> seen;
    for (size_t i = 0; i < nf_; ++i) {
      const obj::Function& f = obj_.functions[i];
      if (seen[f.name]++ == 1)
        warn("function name " + quoteName('@', f.name) + " is defined more than once");
      for (size_t t = 0; t < f.tiles.size(); ++t)
        if (f.tiles[t].aliasOf >= static_cast<int64_t>(t))
          warn(quoteName('@', f.name) + " " + tileLabel(static_cast<uint32_t>(t)) +
               " is a view of a later tile");
    }
  }

  /// The function whose words hold `off`, or nf_.
  size_t containing(uint64_t off) const {
    for (size_t i = 0; i < nf_; ++i) {
      const obj::Function& f = obj_.functions[i];
      if (off >= f.textOffset && off < f.textOffset + f.textSize) return i;
    }
    return nf_;
  }

  /// Which function each event is listed in.
  void groupEvents() {
    fnEvents_.assign(nf_, {});
    size_t last = 0;
    bool ordered = true;
    for (size_t i = 0; i < obj_.events.size(); ++i) {
      size_t fi = obj_.events[i].function;
      if (fi >= nf_) {
        warn("event " + std::to_string(i) + " belongs to missing function " + std::to_string(fi) +
             "; not listed");
        continue;
      }
      if (fi < last) ordered = false;
      last = fi;
      fnEvents_[fi].push_back(i);
    }
    if (!ordered)
      warn("events are not grouped by function; reassembly lists them in function order");
  }

  /// Which block each relocation is listed in (tile/event relocs: their function; call relocs:
  /// the function whose words hold them, else the first block).
  void groupRelocs() {
    fnRelocs_.assign(nf_, {});
    size_t last = 0;
    bool ordered = true;
    for (size_t i = 0; i < obj_.relocs.size(); ++i) {
      const obj::Reloc& r = obj_.relocs[i];
      size_t fi = r.type == obj::RelocType::Call ? containing(r.offset) : r.function;
      if (r.type == obj::RelocType::Call && fi >= nf_) fi = nf_ ? 0 : nf_;
      if (r.type == obj::RelocType::None || (r.type != obj::RelocType::Call && fi >= nf_)) {
        warn("relocation " + std::to_string(i) + " cannot be listed (" +
             std::string(relocTypeName(r.type)) + ", function " + std::to_string(r.function) + ")");
        continue;
      }
      if (fi >= nf_) {
        topRelocs_.push_back(i);
        continue;
      }
      if (fi < last) ordered = false;
      last = fi;
      fnRelocs_[fi].push_back(i);
    }
    if (!ordered)
      warn("relocations are not grouped by function; reassembly lists them in function order");
    // Relocations by offset, for the comments on the words.
    for (size_t i = 0; i < obj_.relocs.size(); ++i)
      relocAt_.emplace(obj_.relocs[i].offset, i);
  }

  /// Line entries, in offset order.
  void indexLines() {
    lineOrder_.resize(obj_.lines.size());
    for (size_t i = 0; i < lineOrder_.size(); ++i)
      lineOrder_[i] = i;
    if (!std::is_sorted(obj_.lines.begin(), obj_.lines.end(),
                        [](const obj::LineEntry& a, const obj::LineEntry& b) {
                          return a.textOffset < b.textOffset;
                        }))
      warn("line entries are not in address order; reassembly sorts them");
    std::stable_sort(lineOrder_.begin(), lineOrder_.end(), [&](size_t a, size_t b) {
      return obj_.lines[a].textOffset < obj_.lines[b].textOffset;
    });
  }

  /// GM access records (.gmaccess directives), in offset order.
  void indexGmAccesses() {
    gmOrder_.resize(obj_.gmAccesses.size());
    for (size_t i = 0; i < gmOrder_.size(); ++i)
      gmOrder_[i] = i;
    std::stable_sort(gmOrder_.begin(), gmOrder_.end(), [&](size_t a, size_t b) {
      return obj_.gmAccesses[a].textOffset < obj_.gmAccesses[b].textOffset;
    });
  }

  static std::string gmAccessDirective(const obj::GmAccess& a) {
    std::string s = std::string(".gmaccess ") + (a.write ? "write" : "read");
    if (a.param >= 0) s += " param=" + std::to_string(a.param);
    if (!a.known) return s;
    s += " offset=" + std::to_string(a.offset) + " bytes=" + std::to_string(a.bytes);
    if (a.symbol) s += " symbol=" + hex0x(a.symbol);
    if (a.loop) s += " loop=" + std::to_string(a.loop) + " stride=" + std::to_string(a.stride);
    return s;
  }

  /// The records before the word at `off` (they name the block it starts).
  void emitGmAccessesUpTo(uint64_t off) {
    while (nextGm_ < gmOrder_.size()) {
      const obj::GmAccess& a = obj_.gmAccesses[gmOrder_[nextGm_]];
      if (a.textOffset > off) break;
      if (a.textOffset != off)
        warn("GM access record at " + hex0x(a.textOffset) +
             " is not at an instruction boundary; reassembly drops it");
      else
        out_ += gmAccessDirective(a) + "\n";
      ++nextGm_;
    }
  }

  void emitLinesUpTo(uint64_t off, bool inclusive) {
    while (nextLine_ < lineOrder_.size()) {
      const obj::LineEntry& l = obj_.lines[lineOrder_[nextLine_]];
      if (inclusive ? l.textOffset > off : l.textOffset >= off) break;
      if (l.textOffset != off)
        warn("line entry at " + hex0x(l.textOffset) + " is not at an instruction boundary");
      if (opts_.source && !l.frontend.empty()) out_ += "; from " + quoted(l.frontend) + "\n";
      if (opts_.source)
        if (auto text = sources_.line(l.file, l.line))
          out_ += "; " + quoteName('@', l.file).substr(1) + ":" + std::to_string(l.line) + ": " +
                  *text + "\n";
      out_ += locText(l) + "\n";
      ++nextLine_;
    }
  }

  void relocLine(size_t i) {
    const obj::Reloc& r = obj_.relocs[i];
    out_ += ".reloc " + hex0x(r.offset) + " " + relocTarget(obj_, r) + "\n";
  }

  void checkExtensions() {
    if (obj_.usesExtensions) return;
    for (const Word& w : dis::listText(obj_.text, 0, obj_.text.size()).words)
      if (w.ext) {
        warn("the object uses extension words (at " + hex0x(w.offset) +
             ") but its ISA note does not declare them");
        break;
      }
  }

  /// Function fi: its directives, then its words (the last function with words also lists the
  /// bytes after it).
  void function(size_t fi, bool lastWithWords) {
    const obj::Function& f = obj_.functions[fi];
    out_ += "\n.function " + quoteName('@', f.name) + flagsText(f);
    if (f.frameSize) out_ += " frame=" + std::to_string(f.frameSize);
    uint64_t defaultOffset = (f.flags & obj::kDeclaration) ? 0 : pos_;
    if (f.textSize == 0 && f.textOffset != defaultOffset) out_ += " offset=" + hex0x(f.textOffset);
    out_ += "\n";
    for (const obj::Param& p : f.params)
      out_ += paramText(p) + "\n";
    for (uint32_t t = 0; t < f.tiles.size(); ++t)
      out_ += tileText(f.tiles[t], t) + "\n";
    for (size_t e : fnEvents_[fi])
      out_ += eventText(obj_.events[e]) + "\n";
    for (size_t r : fnRelocs_[fi])
      relocLine(r);
    if (f.textSize == 0) return;
    if (f.textOffset != pos_)
      warn("function " + quoteName('@', f.name) + " at " + hex0x(f.textOffset) +
           " does not follow the previous one (" + hex0x(pos_) + "); reassembly places it there");
    uint64_t end = f.textOffset + f.textSize;
    if (lastWithWords && end < obj_.text.size()) {
      warn(".text has " + std::to_string(obj_.text.size() - end) +
           " bytes after the last function; listed in " + quoteName('@', f.name));
      end = obj_.text.size();
    }
    out_ += hex(f.textOffset, 16) + " <" + quoteName('@', f.name).substr(1) + ">:\n";
    words(f.textOffset, end);
    pos_ += end - f.textOffset;
    // Line entries that point at the end of these words belong here.
    emitLinesUpTo(end, true);
  }

  /// The words of [begin, end) with their block notes, line entries and relocation comments.
  void words(uint64_t begin, uint64_t end) {
    const dis::TextListing listing = dis::listText(obj_.text, begin, end);
    auto nextBlock = listing.blocks.begin();
    for (size_t wi = 0; wi < listing.words.size(); ++wi) {
      const Word& w = listing.words[wi];
      if (nextBlock != listing.blocks.end() && nextBlock->firstWord == wi) {
        if (opts_.blocks) out_ += dis::blockNote(obj_, listing, *nextBlock) + "\n";
        ++nextBlock;
      }
      emitLinesUpTo(w.offset, true);
      emitGmAccessesUpTo(w.offset);
      out_ += addrLine(w.offset) + "\t" + wordHex(w) + "\t" + w.text;
      std::string comment = w.comment;
      for (auto [it, stop] = relocAt_.equal_range(w.offset); it != stop; ++it) {
        const obj::Reloc& r = obj_.relocs[it->second];
        comment += (comment.empty() ? "" : "; ") + std::string(relocTypeName(r.type)) + " " +
                   relocDescription(obj_, r);
      }
      if (!comment.empty()) out_ += "\t; " + comment;
      out_ += "\n";
    }
  }

  /// What lies outside every function: words (when no function has any) and line entries.
  void trailer(bool noFunctionHasWords) {
    if (noFunctionHasWords && !obj_.text.empty()) {
      warn(".text has " + std::to_string(obj_.text.size()) +
           " bytes outside any function; they cannot be reassembled:");
      for (const Word& w : dis::listText(obj_.text, 0, obj_.text.size()).words)
        out_ += ";" + addrLine(w.offset) + "\t" + wordHex(w) + "\t" + w.text + "\n";
    }
    // Entries at the end of .text (also: an object without words) go last.
    while (nextLine_ < lineOrder_.size() && obj_.lines[lineOrder_[nextLine_]].textOffset == pos_ &&
           pos_ == obj_.text.size())
      out_ += locText(obj_.lines[lineOrder_[nextLine_++]]) + "\n";
    for (; nextLine_ < lineOrder_.size(); ++nextLine_)
      warn("line entry at " + hex0x(obj_.lines[lineOrder_[nextLine_]].textOffset) +
           " is outside every function: " + locText(obj_.lines[lineOrder_[nextLine_]]));
    for (; nextGm_ < gmOrder_.size(); ++nextGm_)
      warn("GM access record at " + hex0x(obj_.gmAccesses[gmOrder_[nextGm_]].textOffset) +
           " is not on a word of a function; reassembly drops it");
  }

  const obj::ObjectFile& obj_;
  const DisasmOptions& opts_;
  SourceCache sources_;
  const size_t nf_;
  std::string out_;
  std::vector<std::vector<size_t>> fnEvents_, fnRelocs_;
  std::vector<size_t> topRelocs_;
  std::multimap<uint64_t, size_t> relocAt_;
  std::vector<size_t> lineOrder_;
  size_t nextLine_ = 0;
  std::vector<size_t> gmOrder_;
  size_t nextGm_ = 0;
  uint64_t pos_ = 0; // where the block assembler will put the next word
};

} // namespace

std::string blockListing(const obj::ObjectFile& obj, const DisasmOptions& opts) {
  return BlockLister(obj, opts).run();
}

std::string disassemble(const obj::ObjectFile& obj, const DisasmOptions& opts,
                        std::span<const uint8_t> elfBytes) {
  bool rawOnly = opts.raw && !(opts.disassemble || opts.source || opts.blocks || opts.headers ||
                               opts.symbols || opts.relocs || opts.tiles);
  if (rawOnly) return rawListing(obj); // words only: diffable between files
  std::string out = opts.fileName + ":     file format elf64-pto (" + archName(obj.arch) + ")\n";
  std::vector<uint8_t> own;
  if ((opts.headers || opts.symbols) && elfBytes.empty()) {
    std::string err;
    own = serialized(obj, err);
    if (!err.empty()) out += "; error: cannot serialize the object: " + err + "\n";
    elfBytes = own;
  }
  if (opts.headers) out += "\n" + sectionListing(elfBytes);
  if (opts.symbols) out += "\n" + symbolListing(elfBytes);
  if (opts.relocs) out += "\n" + relocListing(obj);
  if (opts.tiles) out += "\n" + tileListing(obj);
  if (opts.disassemble || opts.source || opts.blocks) out += "\n" + blockListing(obj, opts);
  if (opts.raw) out += "\n" + rawListing(obj);
  return out;
}

} // namespace pto::as
