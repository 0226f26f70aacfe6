// The block assembler's driver (BlockAsmImpl.h): the listing line by line (header, labels,
// address and hex columns), the functions of the object and the checks that need the whole file,
// and the entry points of BlockAsm.h.
#include "asm/mc/BlockAsm.h"

#include "asm/mc/BlockAsmImpl.h"
#include "asm/mc/Disasm.h"
#include "isa/Encoding.h"
#include "support/Text.h"

#include <algorithm>
#include <set>

namespace pto::as {
namespace blockasm {

std::optional<obj::ObjectFile> Assembler::run() {
  unsigned before = diags_.errors();
  for (uint32_t ln = 1; ln <= src_.numLines(); ++ln)
    line(ln);
  finishFunction();
  resolve();
  checkGmAccesses();
  if (diags_.errors() != before) return std::nullopt;
  return std::move(obj_);
}

bool Assembler::needFunction(SrcLoc loc, const std::string& what) {
  if (cur_) return true;
  if (!reportedNoFunction_)
    error(loc, what + " before any .function directive (missing .function)");
  reportedNoFunction_ = true;
  return false;
}

void Assembler::line(uint32_t ln) {
  ln_ = ln;
  std::string_view full = src_.lineText(ln);
  std::string_view code = full.substr(0, codeEnd(full));
  size_t b = 0;
  while (b < code.size() && isSpace(code[b]))
    ++b;
  size_t e = code.size();
  while (e > b && isSpace(code[e - 1]))
    --e;
  if (b == e) return;
  std::string_view s = code.substr(b, e - b);
  if (isHeaderLine(s)) return;
  if (auto label = labelOf(s)) {
    if (needFunction(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())), "label"))
      if (*label != quoteName('@', cur_->fn.name).substr(1))
        error(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())),
              "label <" + std::string(*label) + "> does not name the current function " +
                  quoteName('@', cur_->fn.name));
    return;
  }
  if (s[0] == '.') {
    directive(code, b);
    return;
  }
  size_t textBegin = b;
  std::vector<uint8_t> hexBytes;
  uint32_t hexCol = 0, hexLen = 0;
  if (size_t a = addressPrefix(s)) {
    // Address column (ignored), then an optional hex column of 2/4/8-digit groups.
    size_t i = b + a;
    while (true) {
      while (i < e && isSpace(code[i]))
        ++i;
      size_t j = i;
      while (j < e && !isSpace(code[j]))
        ++j;
      std::string_view tok = code.substr(i, j - i);
      bool group = (tok.size() == 2 || tok.size() == 4 || tok.size() == 8) && j < e;
      for (char c : tok)
        group = group && isHex(c);
      if (!group) break;
      if (!hexCol) hexCol = static_cast<uint32_t>(i + 1);
      hexLen = static_cast<uint32_t>(j - hexCol + 1);
      uint32_t v = static_cast<uint32_t>(std::stoul(std::string(tok), nullptr, 16));
      for (size_t k = 0; k < tok.size() / 2; ++k)
        hexBytes.push_back(static_cast<uint8_t>(v >> (8 * k)));
      i = j;
    }
    textBegin = i;
    if (textBegin >= e) {
      error(at(static_cast<uint32_t>(b + 1), static_cast<uint32_t>(s.size())),
            "missing instruction text after the address");
      return;
    }
  }
  std::string_view text = code.substr(textBegin, e - textBegin);
  SrcLoc textLoc = at(static_cast<uint32_t>(textBegin + 1), static_cast<uint32_t>(text.size()));
  std::vector<uint8_t> bytes;
  if (text[0] == '.') {
    if (!data(code, textBegin, bytes)) return;
  } else if (!instruction(text, textBegin, bytes)) {
    return;
  }
  if (!needFunction(textLoc, "instruction")) return;
  if (hexCol && hexBytes != bytes) {
    // Show the encoding in the grouping of the hex column (little-endian groups).
    std::string want;
    size_t pos = 0;
    for (size_t g = hexCol - 1; g < hexCol - 1 + hexLen && pos < bytes.size();) {
      size_t j = g;
      while (j < code.size() && !isSpace(code[j]))
        ++j;
      size_t n = std::min((j - g) / 2, bytes.size() - pos);
      if (!want.empty()) want += ' ';
      for (size_t k = n; k-- > 0;)
        want += support::hexDigits(bytes[pos + k], 2);
      pos += n;
      g = j;
      while (g < code.size() && isSpace(code[g]))
        ++g;
    }
    for (; pos < bytes.size(); ++pos)
      want += " " + support::hexDigits(bytes[pos], 2);
    error(at(hexCol, hexLen), "hex column '" + std::string(code.substr(hexCol - 1, hexLen)) +
                                  "' disagrees with the encoding of '" + std::string(text) + "' (" +
                                  want + ")");
    return;
  }
  cur_->hasWords = true;
  obj_.text.insert(obj_.text.end(), bytes.begin(), bytes.end());
}

void Assembler::finishFunction() {
  if (!cur_) return;
  PendingFunction& pf = *cur_;
  obj::Function& f = pf.fn;
  if (pf.hasWords) {
    f.textOffset = pf.start;
    f.textSize = obj_.text.size() - pf.start;
    if (pf.explicitOffset)
      error(pf.offsetLoc, "offset= is only allowed on a function without words");
  } else {
    f.textOffset = pf.explicitOffset               ? *pf.explicitOffset
                   : (f.flags & obj::kDeclaration) ? 0
                                                   : pf.start;
    f.textSize = 0;
  }
  uint32_t next = 0;
  for (auto& [index, tile] : pf.tiles) {
    if (index != next) {
      error(pf.tileLocs[index], "tile table of " + quoteName('@', f.name) + " has no " +
                                    tileLabel(next) + " (tiles must be numbered without holes)");
      break;
    }
    f.tiles.push_back(tile);
    ++next;
  }
  for (size_t i = 0; i < f.tiles.size(); ++i)
    if (f.tiles[i].aliasOf >= static_cast<int32_t>(i))
      error(pf.tileLocs[static_cast<uint32_t>(i)],
            tileLabel(static_cast<uint32_t>(i)) +
                " is a view of a tile that does not come before it");
  obj_.functions.push_back(std::move(f));
  cur_.reset();
}

void Assembler::resolve() {
  for (const PendingReloc& pr : relocs_) {
    obj::Reloc& r = obj_.relocs[pr.index];
    ln_ = pr.loc.line;
    if (r.offset % 2 || r.offset + 4 > obj_.text.size() || r.offset > obj_.text.size())
      error(pr.loc, "relocation offset " + support::hex0x(r.offset) +
                        " is not the start of a word in .text (size " +
                        support::hex0x(obj_.text.size()) + ")");
    if (r.type == obj::RelocType::Tile) {
      if (r.function < obj_.functions.size() && r.index >= obj_.functions[r.function].tiles.size())
        error(pr.targetLoc, "relocation names " + tileLabel(r.index) + ", which " +
                                quoteName('@', obj_.functions[r.function].name) +
                                " does not define");
    } else if (r.type == obj::RelocType::Event) {
      if (pr.byName) {
        auto idx = findEventByName(obj_, r.function, pr.eventName);
        if (!idx)
          error(pr.targetLoc,
                "no event " + quoteName('@', pr.eventName) + " (or the name is ambiguous)");
        else
          r.index = *idx;
      } else if (r.index >= obj_.events.size()) {
        error(pr.targetLoc, "no event #" + std::to_string(r.index));
      }
    }
  }
}

} // namespace blockasm

bool looksLikeBlockAssembly(std::string_view text) {
  using namespace blockasm;
  namespace enc = isa::enc;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    line = line.substr(0, codeEnd(line));
    size_t b = 0;
    while (b < line.size() && isSpace(line[b]))
      ++b;
    size_t e = line.size();
    while (e > b && isSpace(line[e - 1]))
      --e;
    if (b == e) continue;
    std::string_view s = line.substr(b, e - b);
    if (isHeaderLine(s) || labelOf(s) || addressPrefix(s)) return true;
    if (s[0] == '.') {
      size_t sp = 0;
      while (sp < s.size() && !isSpace(s[sp]))
        ++sp;
      static const std::set<std::string_view> directives = {
          ".arch",  ".extensions", ".function", ".param", ".tile", ".event",
          ".reloc", ".loc",        ".word",     ".short", ".byte"};
      return directives.count(s.substr(0, sp)) != 0;
    }
    size_t sp = 0;
    while (sp < s.size() && !isSpace(s[sp]))
      ++sp;
    std::string head = upper(s.substr(0, sp));
    if (!isKnownMnemonic(head)) return false;
    for (std::string_view p : {"BSTART", "B.", "BSTOP", "C.", "L.", "HL."})
      if (istartsWith(head, p)) return true;
    return static_cast<bool>(enc::parse(s, enc::DecodeOptions{.extensions = true}));
  }
  return false;
}

std::optional<obj::ObjectFile> assembleBlockText(const SourceFile& src, DiagEngine& diags) {
  return blockasm::Assembler(src, diags).run();
}

} // namespace pto::as
