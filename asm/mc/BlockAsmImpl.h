// The block assembler's shared pieces (internal to asm/, behind BlockAsm.h): the line and token
// lexer of a listing, and the assembler class whose members are defined by job in BlockAsm.cpp
// (the driver: lines, address and hex columns, the object's functions and whole-file checks),
// BlockAsmWords.cpp (instruction text and data directives to bytes) and BlockAsmDirectives.cpp
// (.arch, .function, .param, .tile, .event, .reloc, .loc). BlockAsmLex.cpp defines the lexer.
#pragma once

#include "support/Text.h"

#include "obj/Object.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pto::as::blockasm {

// ---------------------------------------------------------------- lexer (BlockAsmLex.cpp)
using support::iequals;
bool istartsWith(std::string_view s, std::string_view p);
bool isHex(char c);
/// White space within a line (no newline).
bool isSpace(char c);
std::string upper(std::string_view v);

/// Unsigned integer: decimal or 0x hex.
std::optional<uint64_t> parseU64(std::string_view t);
/// Signed integer: an optional '-', then decimal or 0x hex.
std::optional<int64_t> parseI64(std::string_view t);

/// The end of the code part of a line: the first `;` or `//` outside a quoted string.
size_t codeEnd(std::string_view line);
/// Length of an address prefix "hex:" followed by white space or the end; 0 if none.
size_t addressPrefix(std::string_view s);
/// The header pto-objdump prints for each file: "<file>:     file format elf64-pto (<arch>)",
/// the whole line (a line that merely contains the words is code and is assembled).
bool isHeaderLine(std::string_view s);
/// "<name>:" optionally after an address ("0000000000000000 <vadd>:").
std::optional<std::string_view> labelOf(std::string_view s);
/// Whether `head` (upper-cased) names a form: a fixed mnemonic, or one whose mnemonic holds type
/// fields (`fadd.$SrcType` is `FADD.` followed by the type).
bool isKnownMnemonic(const std::string& head);

struct Token {
  std::string value; // unescaped; a quoted name keeps its sigil: @"a b" -> "@a b"
  uint32_t col = 0;  // 1-based
  uint32_t len = 0;
  bool quoted = false;
  std::string suffix; // text right after a closing quote (".loc "f":3:4" -> ":3:4")
};

/// Splits the code part of a line at white space; "..." strings (optionally after a sigil)
/// are one token. Returns false with `err` set on an unterminated string or a bad escape.
bool tokenize(std::string_view line, size_t begin, std::vector<Token>& out, std::string& err,
              uint32_t& errCol);

// ---------------------------------------------------------------- the assembler
/// A function between its .function directive and the next one (or the end of the file).
struct PendingFunction {
  obj::Function fn;
  uint64_t start = 0; // .text size at the directive
  bool hasWords = false;
  std::optional<uint64_t> explicitOffset;
  SrcLoc offsetLoc;
  std::map<uint32_t, obj::TileDesc> tiles;
  std::map<uint32_t, SrcLoc> tileLocs;
};

/// A relocation whose checks wait for the whole file.
struct PendingReloc {
  size_t index; // into obj.relocs
  SrcLoc loc;
  SrcLoc targetLoc;
  std::string eventName; // Event by name: resolved at the end
  bool byName = false;
};

class Assembler {
public:
  Assembler(const SourceFile& src, DiagEngine& diags) : src_(src), diags_(diags) {}

  std::optional<obj::ObjectFile> run();

private:
  const SourceFile& src_;
  DiagEngine& diags_;
  obj::ObjectFile obj_;
  std::optional<PendingFunction> cur_;
  std::set<std::string> names_;
  std::vector<PendingReloc> relocs_;
  bool reportedNoFunction_ = false;
  uint32_t ln_ = 0;

  SrcLoc at(uint32_t col, uint32_t len) const {
    return SrcLoc{ln_, col == 0 ? 1 : col, len == 0 ? 1 : len};
  }
  SrcLoc at(const Token& t) const { return at(t.col, t.len); }
  void error(SrcLoc loc, const std::string& msg) { diags_.error(loc, msg); }

  // ---- BlockAsm.cpp: the driver and the object
  /// True inside a function; otherwise reports (once) that `what` comes before any .function.
  bool needFunction(SrcLoc loc, const std::string& what);
  /// One line: header, label, directive, or an instruction/data line with optional address and
  /// hex columns (the hex column must agree with the encoding).
  void line(uint32_t ln);
  /// Closes the current function: its text range and its tile table (numbered without holes).
  void finishFunction();
  /// Checks that need the whole file: relocation offsets and targets.
  void resolve();

  // ---- BlockAsmWords.cpp: words and data
  /// Canonical instruction text to its little-endian bytes.
  bool instruction(std::string_view text, size_t col0, std::vector<uint8_t>& bytes);
  /// Explains why canonical text does not parse: the tile op or DataType of a tile start, else
  /// the expected operand shapes of the mnemonic.
  void operandError(std::string_view text, size_t col0, std::string_view head);
  /// .word / .short / .byte values (raw data in .text).
  bool data(std::string_view code, size_t begin, std::vector<uint8_t>& bytes);

  // ---- BlockAsmDirectives.cpp: directives
  void directive(std::string_view code, size_t begin);
  /// Reports "expected <usage>" after the last token when there are fewer than `min` tokens.
  bool expectCount(const std::vector<Token>& t, size_t min, const std::string& usage);
  /// A name token with the given sigil (@name, %name, @"quoted").
  std::optional<std::string> name(const Token& tok, char sigil);
  /// "[dims x]* dtype": 64x64xf32, ?x16xf16, f32.
  bool shapedType(const Token& tok, std::vector<int64_t>& shape, isa::DType& dtype);
  std::optional<uint32_t> u32(const Token& tok, std::string_view v, const char* what);
  void archDirective(const std::vector<Token>& t);
  void functionDirective(const std::vector<Token>& t);
  void paramDirective(const std::vector<Token>& t);
  void tileDirective(const std::vector<Token>& t);
  void eventDirective(const std::vector<Token>& t);
  void relocDirective(const std::vector<Token>& t);
  void locDirective(const std::vector<Token>& t);
  void gmAccessDirective(const std::vector<Token>& t);
  /// The .gmaccess records against the functions and words they name (obj::checkGmAccess).
  void checkGmAccesses();
  std::vector<SrcLoc> gmAccessLocs_; // per record of obj_.gmAccesses: its directive
};

} // namespace pto::as::blockasm
