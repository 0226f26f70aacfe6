// The hand-written lexer (asm/parse/Lexer.h) against the one ANTLR generates from grammar/PTO.g4:
// identical token streams and lexer errors on every .pto/.test/.s file of the repository and of
// the shared corpus, on the edge cases of every token kind, and on random and mutated inputs.
// The inputs are deterministic (fixed seeds), so a failure reproduces.
#include "tests/unit/LexerDiff.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace pto::test {
namespace {

/// Compares the lexers on `text`; a failure shows the input (escaped) and the first difference.
::testing::AssertionResult sameTokens(const std::string& text) {
  std::string diff = lexerDifference(text);
  if (diff.empty()) return ::testing::AssertionSuccess();
  std::string shown;
  for (unsigned char c : text.substr(0, 400)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      shown.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      shown += buf;
    }
  }
  return ::testing::AssertionFailure() << diff << "\ninput: \"" << shown << "\"";
}

std::vector<std::string> repositoryFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"samples", "tests/lit", "tests/fuzz/corpus"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(sourcePath(dir))) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".pto" || ext == ".test" || ext == ".s"))
        files.push_back(e.path().string());
    }
  }
  return files;
}

std::vector<std::string> corpusTexts() {
  std::vector<std::string> texts;
  for (const std::string& f : repositoryFiles())
    texts.push_back(readText(f));
  if (haveCorpus())
    for (const auto& e : std::filesystem::directory_iterator(corpusPath("")))
      if (e.path().extension() == ".pto") texts.push_back(readText(e.path().string()));
  return texts;
}

/// Pieces that exercise each token kind's edges: prefixes that match a rule only in part,
/// ties between rules, and characters no rule but ANY takes.
const std::vector<std::string>& fragments() {
  static const std::vector<std::string> f = {"0",
                                             "0x",
                                             "0x1F",
                                             "0xg",
                                             "0x?",
                                             "1e5",
                                             "1E+5",
                                             "1e-",
                                             "1e",
                                             "1.e3",
                                             "1.",
                                             ".5",
                                             "1.5e",
                                             "1.5e+7",
                                             "12x",
                                             "16x16x",
                                             "16x16",
                                             "?x",
                                             "?x?x",
                                             "?",
                                             "x",
                                             "3xx",
                                             "007",
                                             "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16>",
                                             "!pto.ptr<f32>",
                                             "!pto.tile_buf<",
                                             "!pto.tile_buf<a<b>>",
                                             "!a<-x>",
                                             "!a<b->",
                                             "!a<--->",
                                             "!a<-",
                                             "!a<",
                                             "!a",
                                             "!",
                                             "!9",
                                             "<",
                                             ">",
                                             "->",
                                             "-",
                                             "--",
                                             "-<",
                                             "\"",
                                             "\"abc\"",
                                             "\"a\\\"b\"",
                                             "\"a\\\\\"",
                                             "\"a\\\n\"",
                                             "\"\\",
                                             "\"a\nb\"",
                                             "\\",
                                             "\n",
                                             "\r",
                                             "\r\n",
                                             "\t",
                                             " ",
                                             "  ",
                                             "#",
                                             "# c",
                                             "#\tc",
                                             "#1",
                                             "#12a",
                                             "#a.b",
                                             "#map",
                                             "#_",
                                             "#$",
                                             "//",
                                             "// c",
                                             "/",
                                             ";",
                                             "; c",
                                             "@",
                                             "@k",
                                             "@\"s\"",
                                             "@\"",
                                             "@\"a\\\"\"",
                                             "%",
                                             "%a",
                                             "%0",
                                             "%$",
                                             "%.",
                                             "^bb0",
                                             "^",
                                             "^x:",
                                             "T#",
                                             "T#3",
                                             "T#x",
                                             "T",
                                             "BSTART",
                                             "BSTOP",
                                             "BSTART.VEC",
                                             "BSTOP.",
                                             "BSTARTX",
                                             "B.",
                                             "B.ADD",
                                             "B.add",
                                             ".F32",
                                             ".",
                                             "B.ADD.X_1",
                                             "B.ADD..F",
                                             "B.ADD.x",
                                             "module",
                                             "func.func",
                                             "func.funcx",
                                             "func.",
                                             "scf.for",
                                             "scf.if",
                                             "scf.while",
                                             "pto.section.vector",
                                             "pto.section.cube",
                                             "tile",
                                             "wait",
                                             "record",
                                             "ins",
                                             "outs",
                                             "to",
                                             "step",
                                             "dense",
                                             "true",
                                             "false",
                                             "kernel",
                                             "attributes",
                                             "private",
                                             "iter_args",
                                             "sizes",
                                             "{",
                                             "}",
                                             "(",
                                             ")",
                                             "[",
                                             "]",
                                             ",",
                                             ":",
                                             "=",
                                             "$",
                                             "*",
                                             "\xC3\xA9",
                                             "\xE2\x82\xAC",
                                             "\xF0\x9F\x98\x80",
                                             "\xC2\xA0",
                                             "\xEF\xBB\xBF",
                                             std::string(1, '\0'),
                                             "\x7F",
                                             "\x01",
                                             "_",
                                             "a",
                                             "Z9",
                                             "a$b.c"};
  return f;
}

/// Arbitrary bytes made into text parseModule would accept: each byte that does not start a
/// valid UTF-8 sequence becomes U+FFFD.
std::string repairUtf8(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    size_t len = 0;
    for (size_t k = 1; k <= 4 && i + k <= bytes.size(); ++k) {
      if (validUtf8(bytes.substr(i, k))) {
        len = k;
        break;
      }
    }
    if (len) {
      out += bytes.substr(i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

/// Records how many inputs a test compared (printed, and in the XML report).
void report(size_t n) {
  std::cout << "lexer differential: " << n << " inputs compared\n";
  ::testing::Test::RecordProperty("inputs_compared", std::to_string(n));
}

TEST(Lexer, MatchesAntlrOnRepositoryFiles) {
  size_t n = 0;
  for (const std::string& f : repositoryFiles()) {
    EXPECT_TRUE(sameTokens(readText(f))) << f;
    ++n;
  }
  report(n);
  EXPECT_GE(n, 100u); // the lit tests and samples are found
}

TEST(Lexer, MatchesAntlrOnCorpusKernels) {
  PTO_REQUIRE_SHARED(haveCorpus());
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(corpusPath(""))) {
    if (e.path().extension() != ".pto") continue;
    EXPECT_TRUE(sameTokens(readText(e.path().string()))) << e.path();
    ++n;
  }
  report(n);
  EXPECT_GE(n, 24u);
}

TEST(Lexer, MatchesAntlrOnFragmentSequences) {
  const auto& f = fragments();
  size_t n = 0;
  // Every fragment alone and every ordered pair: each rule's edges against each neighbour.
  for (const std::string& a : f) {
    ASSERT_TRUE(sameTokens(a));
    for (const std::string& b : f)
      ASSERT_TRUE(sameTokens(a + b));
    n += 1 + f.size();
  }
  std::mt19937 rng(14);
  for (int i = 0; i < 20000; ++i, ++n) {
    std::string text;
    const size_t count = 1 + rng() % 12;
    for (size_t k = 0; k < count; ++k)
      text += f[rng() % f.size()];
    ASSERT_TRUE(sameTokens(text));
  }
  report(n);
}

TEST(Lexer, MatchesAntlrOnRandomBytes) {
  std::mt19937 rng(1401);
  // Mostly the characters the rules care about, sometimes any byte.
  const std::string common = "0123456789xXeE.+-?<>!#%@^\"\\/;: \t\r\n{}()[],=TBSax_$";
  size_t n = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes)
      c = rng() % 4 == 0 ? static_cast<char>(rng() % 256) : common[rng() % common.size()];
    if (validUtf8(bytes)) {
      ASSERT_TRUE(sameTokens(bytes));
      ++n;
    }
    ASSERT_TRUE(sameTokens(repairUtf8(bytes)));
    ++n;
  }
  report(n);
}

TEST(Lexer, MatchesAntlrOnSplicedAndMutatedModules) {
  const std::vector<std::string> texts = corpusTexts();
  ASSERT_FALSE(texts.empty());
  const auto& f = fragments();
  std::mt19937 rng(1402);
  auto slice = [&](size_t maxLen) {
    const std::string& t = texts[rng() % texts.size()];
    if (t.empty()) return std::string();
    const size_t start = rng() % t.size();
    return t.substr(start, 1 + rng() % maxLen);
  };
  size_t n = 0;
  for (int i = 0; i < 4000; ++i) {
    // Splices: pieces of valid modules, joined anywhere.
    std::string text;
    for (size_t k = 1 + rng() % 4; k-- > 0;)
      text += slice(300);
    ASSERT_TRUE(sameTokens(repairUtf8(text)));
    // Mutations: a piece of a module with edits at random places.
    text = slice(2000);
    for (size_t k = 1 + rng() % 8; k-- > 0;) {
      const size_t at = text.empty() ? 0 : rng() % text.size();
      switch (rng() % 4) {
      case 0:
        text.insert(at, f[rng() % f.size()]);
        break;
      case 1:
        text.erase(at, rng() % 16);
        break;
      case 2:
        if (!text.empty()) text[at] = static_cast<char>(rng() % 128);
        break;
      default:
        text.insert(at, text.substr(at, rng() % 64));
        break;
      }
    }
    ASSERT_TRUE(sameTokens(repairUtf8(text)));
    n += 2;
  }
  report(n);
}

TEST(Lexer, InputStreamTextMatchesAntlr) {
  // Token text comes from CompactInputStream::getText, which replaces ANTLRInputStream's: the
  // same text for any interval, in bounds or not.
  std::mt19937 rng(1403);
  const auto& f = fragments();
  size_t n = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    for (size_t k = rng() % 8; k-- > 0;)
      text += f[rng() % f.size()];
    as::CompactInputStream in(text);
    antlr4::ANTLRInputStream ref(text);
    const auto size = static_cast<ssize_t>(in.size());
    for (int k = 0; k < 20; ++k, ++n) {
      const antlr4::misc::Interval iv(static_cast<ssize_t>(rng() % (size + 3)) - 1,
                                      static_cast<ssize_t>(rng() % (size + 3)) - 1);
      ASSERT_EQ(in.getText(iv), ref.getText(iv)) << text;
    }
  }
  report(n);
}

TEST(Lexer, InputStreamAnswersAsAntlr) {
  // CompactInputStream reads an ASCII input in place and decodes any other: every CharStream
  // call must answer as ANTLRInputStream's over the same text (the generated lexer, which the
  // tests compare HandLexer with, reads it through them). Random walks of LA, LT, consume, seek,
  // index, size and toString, on ASCII texts and on texts with other characters (and a BOM).
  std::mt19937 rng(1404);
  const auto& f = fragments();
  size_t n = 0, nonAscii = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text = i % 7 == 0 ? "\xEF\xBB\xBF" : "";
    for (size_t k = rng() % 8; k-- > 0;)
      text += f[rng() % f.size()];
    if (i % 3 == 0) text += i % 2 ? "\xC3\xA9" : "\xE2\x82\xAC"; // é, €
    as::CompactInputStream in(text);
    antlr4::ANTLRInputStream ref(text);
    nonAscii += !in.ascii();
    ASSERT_EQ(in.size(), ref.size()) << text;
    ASSERT_EQ(in.toString(), ref.toString()) << text;
    for (int step = 0; step < 40; ++step, ++n) {
      const ssize_t k = static_cast<ssize_t>(rng() % 7) - 3;
      switch (rng() % 4) {
      case 0:
        ASSERT_EQ(in.LA(k), ref.LA(k)) << "LA(" << k << ") at " << ref.index() << ": " << text;
        break;
      case 1:
        ASSERT_EQ(in.LT(k), ref.LT(k)) << "LT(" << k << ") at " << ref.index() << ": " << text;
        break;
      case 2:
        if (ref.LA(1) == antlr4::IntStream::EOF) {
          EXPECT_THROW(in.consume(), antlr4::IllegalStateException);
        } else {
          in.consume();
          ref.consume();
        }
        break;
      default: {
        const size_t to = rng() % (ref.size() + 3);
        in.seek(to);
        ref.seek(to);
        break;
      }
      }
      ASSERT_EQ(in.index(), ref.index()) << text;
    }
  }
  EXPECT_GT(nonAscii, 0u);
  report(n);
}

} // namespace
} // namespace pto::test
