// The words of .text for the disassembler's listings: decoded into blocks by the one block
// decoder (asm/mc/Blocks.h), each word checked to spell every bit of itself (else listed as data),
// and the words that do not decode listed as data with the decoder's reason.
#include "asm/mc/Disasm.h"
#include "asm/mc/DisasmImpl.h"

#include "support/Escape.h"
#include "support/Text.h"

namespace pto::as::dis {
namespace {

namespace enc = isa::enc;
namespace code = obj::code;
using support::hex0x;

uint64_t loadLE(std::span<const uint8_t> text, uint64_t off, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= static_cast<uint64_t>(text[off + i]) << (8 * i);
  return v;
}

void rawWords(std::span<const uint8_t> text, uint64_t off, uint64_t end, const std::string& why,
              std::vector<Word>& out) {
  while (off < end) {
    Word w;
    w.offset = off;
    w.comment = why;
    if (end - off >= 4 && why.rfind("truncated", 0) != 0) {
      // 32-bit pieces where they fit, 16-bit otherwise: the bytes are what matters.
      w.size = 4;
      w.bits = 32;
      w.value = loadLE(text, off, 4);
      w.text = ".word 0x" + support::hexDigits(w.value, 8);
    } else if (end - off >= 2) {
      w.size = 2;
      w.bits = 16;
      w.value = loadLE(text, off, 2);
      w.text = ".short 0x" + support::hexDigits(w.value, 4);
    } else {
      w.size = 1;
      w.bits = 8;
      w.value = text[off];
      w.text = ".byte 0x" + support::hexDigits(w.value, 2);
    }
    off += w.size;
    out.push_back(std::move(w));
  }
}

/// The `size` bytes at `off` as data, with the reason: a 48-bit word as its prefix halfword and
/// its word, a 64-bit one as two words.
void dataWords(std::span<const uint8_t> text, uint64_t off, size_t size, const std::string& why,
               std::vector<Word>& out) {
  if (size == 6) {
    rawWords(text, off, off + 2, why, out);
    rawWords(text, off + 2, off + 6, why, out);
  } else {
    rawWords(text, off, off + size, why, out);
  }
}

/// One decoded word: its canonical text, or data when the text would not give back its bits.
void listWord(std::span<const uint8_t> text, const code::Word& cw, std::vector<Word>& out) {
  const unsigned bits = cw.size * 8;
  uint64_t value = 0;
  for (unsigned i = 0; i < cw.size / 2; ++i)
    value |= loadLE(text, cw.offset + 2 * i, 2) << (16 * i);
  std::string why;
  auto e = enc::encode(cw.inst);
  if (!e || e->value != value || e->bits != bits) {
    why = "non-canonical encoding of '" + enc::format(cw.inst) + "'";
  } else {
    // The listing is reassembled from text, so the text itself must carry every bit.
    auto p = enc::parse(enc::format(cw.inst), enc::DecodeOptions{.extensions = true});
    auto pe = p ? enc::encode(*p) : e;
    if (!p || !pe || pe->value != value)
      why = "'" + enc::format(cw.inst) + "' does not spell every bit of the word";
  }
  if (!why.empty()) return dataWords(text, cw.offset, cw.size, why, out);
  Word w;
  w.offset = cw.offset;
  w.size = cw.size;
  w.value = value;
  w.bits = bits;
  w.text = enc::format(cw.inst);
  w.ext = cw.inst.formInfo().group == enc::FormGroup::Ext;
  out.push_back(std::move(w));
}

/// The function whose words hold `off`, or nullptr.
const obj::Function* functionAt(const obj::ObjectFile& obj, uint64_t off) {
  for (const obj::Function& f : obj.functions)
    if (f.textSize && off >= f.textOffset && off - f.textOffset < f.textSize) return &f;
  return nullptr;
}

/// `0x16 <vadd+0x16>`: a .text offset and where it is.
std::string place(const obj::ObjectFile& obj, uint64_t off) {
  std::string s = hex0x(off);
  if (const obj::Function* f = functionAt(obj, off)) {
    s += " <" + quoteName('@', f->name).substr(1);
    if (off != f->textOffset) s += "+" + hex0x(off - f->textOffset);
    s += ">";
  }
  return s;
}

bool isPrint(const enc::Inst& start) {
  const auto op = enc::tileOpOf(start);
  const enc::TileOpInfo* print = enc::tileOpFor(isa::OpId::PRINT);
  return op && print && *op == print->op;
}

/// A PRINT block's format (docs/encoding.md 5.6: B.DIM ->LB1 its length, ->LB0 two bytes each,
/// low byte first) as a C string on its start word, so the listing shows what it prints.
void notePrintFormat(std::span<const code::Word> words, Word& start) {
  std::string bytes;
  std::optional<uint32_t> length;
  for (const code::Word& w : words) {
    const auto imm = w.inst.get(enc::Field::uimm17);
    if (!imm) continue;
    if (w.inst.form == enc::FormId::B_DIM_LB1) length = static_cast<uint32_t>(*imm);
    if (w.inst.form == enc::FormId::B_DIM_LB0) {
      bytes += static_cast<char>(*imm & 0xff);
      bytes += static_cast<char>((*imm >> 8) & 0xff);
    }
  }
  const bool whole = length && *length <= bytes.size() && bytes.size() - *length < 2;
  const std::string note =
      whole ? "format " + support::cppStringLiteral(std::string_view(bytes).substr(0, *length))
            : std::string("format words do not match its length");
  start.comment += (start.comment.empty() ? "" : "; ") + note;
}

std::string kindText(const ListedBlock& lb) {
  switch (lb.block.kind) {
  case code::BlockKind::Tile:
    if (auto op = enc::tileOpOf(lb.start)) return "tile " + std::string(enc::info(*op).name);
    return "tile";
  case code::BlockKind::Control:
    return "control " + std::string(enc::name(lb.block.control));
  case code::BlockKind::Scalar:
    break;
  }
  return lb.block.hasStart ? "scalar" : "scalar (no start word)";
}

} // namespace

TextListing listText(std::span<const uint8_t> text, uint64_t begin, uint64_t end) {
  TextListing out;
  for (uint64_t pos = begin; pos < end;) {
    const code::DecodedBlocks d = code::decodeBlocks(text, pos, end);
    for (const code::BlockWords& b : d.code.blocks) {
      const code::Word* s = d.code.startOf(b);
      const size_t first = out.words.size();
      out.blocks.push_back({first, b, s ? s->inst : enc::Inst{}});
      for (const code::Word& w : d.code.wordsOf(b))
        listWord(text, w, out.words);
      if (s && first < out.words.size() && isPrint(s->inst))
        notePrintFormat(d.code.wordsOf(b), out.words[first]);
    }
    if (!d.error) break;
    // The word that does not decode: data, with the decoder's reason; decoding goes on after it.
    const uint64_t at = d.error->offset;
    size_t consumed = 0;
    (void)enc::decodeBytes(text.subspan(at, end - at), consumed, {.extensions = true});
    if (consumed == 0) {
      rawWords(text, at, end, "truncated instruction", out.words);
      break;
    }
    dataWords(text, at, consumed, d.error->message, out.words);
    pos = at + consumed;
  }
  return out;
}

std::string wordHex(const Word& w) {
  if (w.bits == 8) return support::hexDigits(w.value, 2);
  return hexColumn(w.value, w.bits);
}

std::string blockNote(const obj::ObjectFile& obj, const TextListing& listing,
                      const ListedBlock& lb) {
  const code::BlockWords& b = lb.block;
  std::string s = "; block " + hex0x(b.offset) + ".." + hex0x(b.end) + ": " + kindText(lb);
  auto target = [&] { return b.target ? place(obj, *b.target) : std::string("?"); };
  auto blockStart = [&](uint64_t t) {
    for (const ListedBlock& o : listing.blocks)
      if (o.block.offset == t) return true;
    return false;
  };
  switch (b.transfer) {
  case code::Transfer::Fall:
    return s + ", falls through";
  case code::Transfer::Direct:
  case code::Transfer::Cond:
    s += ", branches to " + target();
    if (b.transfer == code::Transfer::Cond) s += " if its condition holds";
    if (b.target && !blockStart(*b.target)) s += " (not a block start)";
    return s;
  case code::Transfer::Ret:
    return s + ", returns";
  case code::Transfer::Call:
    for (const obj::Reloc& r : obj.relocs)
      if (r.type == obj::RelocType::Call && r.offset == b.offset)
        return s + ", calls " + quoteName('@', r.symbol) + " (relocated), then falls through";
    s += ", calls " + target();
    if (b.target &&
        !(functionAt(obj, *b.target) && functionAt(obj, *b.target)->textOffset == *b.target))
      s += " (not a function start)";
    return s + ", then falls through";
  case code::Transfer::Indirect:
    return s + ", branches or calls through a register";
  }
  return s;
}

} // namespace pto::as::dis
