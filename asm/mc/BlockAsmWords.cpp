// Block assembly words (BlockAsmImpl.h): canonical instruction text to its encoding, with the
// reasons text does not parse, and the raw data directives (.word, .short, .byte).
#include "asm/mc/BlockAsmImpl.h"
#include "isa/Encoding.h"

namespace pto::as::blockasm {

namespace enc = isa::enc;

bool Assembler::instruction(std::string_view text, size_t col0, std::vector<uint8_t>& bytes) {
  size_t sp = 0;
  while (sp < text.size() && !isSpace(text[sp]))
    ++sp;
  std::string_view head = text.substr(0, sp);
  SrcLoc headLoc = at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(head.size()));
  if (!isKnownMnemonic(upper(head))) {
    error(headLoc, "unknown mnemonic '" + std::string(head) + "'");
    return false;
  }
  auto inst = enc::parse(text, enc::DecodeOptions{.extensions = true});
  if (!inst) {
    operandError(text, col0, head);
    return false;
  }
  auto word = enc::encode(*inst);
  if (!word) {
    error(at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(text.size())),
          "bad field value: " + word.error().message);
    return false;
  }
  if (inst->formInfo().group == enc::FormGroup::Ext) obj_.usesExtensions = true;
  for (unsigned k = 0; k < word->bits / 8; ++k)
    bytes.push_back(static_cast<uint8_t>(word->value >> (8 * k)));
  return true;
}

void Assembler::operandError(std::string_view text, size_t col0, std::string_view head) {
  SrcLoc whole = at(static_cast<uint32_t>(col0 + 1), static_cast<uint32_t>(text.size()));
  // Operands: comma-separated after the mnemonic.
  struct Operand {
    std::string_view text;
    size_t col;
  };
  std::vector<Operand> ops;
  size_t i = head.size();
  while (i < text.size()) {
    while (i < text.size() && (isSpace(text[i]) || text[i] == ','))
      ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ',')
      ++j;
    size_t k = j;
    while (k > i && isSpace(text[k - 1]))
      --k;
    if (k > i) ops.push_back({text.substr(i, k - i), col0 + i + 1});
    i = j;
  }
  auto opLoc = [&](const Operand& o) {
    return at(static_cast<uint32_t>(o.col), static_cast<uint32_t>(o.text.size()));
  };
  std::string h = upper(head);
  if (h == "BSTART.VEC" || h == "BSTART.SFU" || h == "BSTART.EXT") {
    if (ops.empty())
      return error(whole, "'" + std::string(head) + "' needs a tile op and a DataType");
    bool control = h == "BSTART.EXT" &&
                   (isa::parsePipe(ops.size() > 1 ? ops[1].text : "PIPE_S") || ops.size() == 1);
    if (!control && !enc::findTileOp(ops[0].text))
      return error(opLoc(ops[0]), "unknown tile op '" + std::string(ops[0].text) + "'");
    if (!control && ops.size() > 1 && !enc::parseDataType(ops[1].text))
      return error(opLoc(ops[1]), "unknown DataType '" + std::string(ops[1].text) + "'");
    if (!control && ops.size() < 2)
      return error(whole, "'" + std::string(head) + "' needs a DataType after the tile op");
    return error(whole, "invalid operands for '" + std::string(head) +
                            "' (wrong engine for the op, or a reserved "
                            "selector/DataType)");
  }
  std::string expected;
  for (const enc::FormInfo& f : enc::allForms())
    if (iequals(f.mnemonic(), head) && !f.syntax.empty() && f.syntax[0] != '@') {
      if (expected.size() > 300) break;
      expected += (expected.empty() ? "" : " or ") + ("'" + std::string(f.syntax) + "'");
    }
  error(whole, "invalid operands for '" + std::string(head) + "'" +
                   (expected.empty() ? "" : "; expected " + expected));
}

bool Assembler::data(std::string_view code, size_t begin, std::vector<uint8_t>& bytes) {
  std::vector<Token> toks;
  std::string err;
  uint32_t errCol = 0;
  if (!tokenize(code, begin, toks, err, errCol)) {
    error(at(errCol, 1), err);
    return false;
  }
  const Token& d = toks[0];
  unsigned size = d.value == ".word"                          ? 4
                  : d.value == ".short" || d.value == ".half" ? 2
                  : d.value == ".byte"                        ? 1
                                                              : 0;
  if (!size) {
    error(at(d), "unknown data directive '" + d.value + "' (expected .word, .short or .byte)");
    return false;
  }
  if (toks.size() < 2) {
    error(at(d), "'" + d.value + "' needs a value");
    return false;
  }
  for (size_t i = 1; i < toks.size(); ++i) {
    std::string v = toks[i].value;
    if (i + 1 < toks.size() && !v.empty() && v.back() == ',') v.pop_back();
    auto n = parseU64(v);
    if (!n || (size < 8 && *n >> (8 * size))) {
      error(at(toks[i]), "bad " + d.value + " value '" + toks[i].value + "'");
      return false;
    }
    for (unsigned k = 0; k < size; ++k)
      bytes.push_back(static_cast<uint8_t>(*n >> (8 * k)));
  }
  return true;
}

} // namespace pto::as::blockasm
