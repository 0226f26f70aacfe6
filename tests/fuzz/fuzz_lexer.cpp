// libFuzzer target: the hand-written lexer (asm/parse/Lexer.h) and the lexer ANTLR generates from
// grammar/PTO.g4 must produce the same tokens and errors for any input parseModule would lex,
// i.e. any valid UTF-8 (anything else is rejected before lexing). A difference aborts with the
// first differing token.
#include "tests/unit/LexerDiff.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!pto::test::validUtf8(text)) return 0;
  const std::string diff = pto::test::lexerDifference(text);
  if (!diff.empty()) {
    std::fprintf(stderr, "lexers differ: %s\n", diff.c_str());
    std::abort();
  }
  return 0;
}
