// The front end's replacements for parts of the ANTLR runtime (asm/parse/Prediction.h's
// DfaFirstSimulator, asm/parse/TokenStream.h's LexedTokenStream) against the runtime's own: the
// same parse trees and syntax errors, in the SLL and the LL prediction modes, on every .pto file of
// the repository and the corpus and on mutations of them, and the same answers from the token
// stream to every call. The reference is the generated lexer and parser with ANTLR's own
// simulator and CommonTokenStream. The inputs are deterministic (fixed seeds).
#include "asm/parse/Parser.h"
#include "PTOLexer.h"
#include "PTOParser.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Lexer.h"
#include "asm/parse/Prediction.h"
#include "asm/parse/TokenStream.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace pto::test {
namespace {

using antlr4::atn::PredictionMode;

/// Records syntax errors as "line:col: message".
class Errors : public antlr4::BaseErrorListener {
public:
  void syntaxError(antlr4::Recognizer*, antlr4::Token*, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    text += std::to_string(line) + ":" + std::to_string(col) + ": " + msg + "\n";
  }
  std::string text;
};

/// What a parse produced: the tree as text (or what stopped it) and the syntax errors.
struct Parsed {
  std::string tree;
  std::string errors;
  bool operator==(const Parsed&) const = default;
};

Parsed parseWith(ptogen::PTOParser& parser, PredictionMode mode) {
  Errors errors;
  parser.removeErrorListeners();
  parser.addErrorListener(&errors);
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(mode);
  if (mode == PredictionMode::SLL)
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  Parsed out;
  try {
    out.tree = parser.file()->toStringTree(&parser);
  } catch (antlr4::ParseCancellationException&) {
    out.tree =
        "(cancelled at token " + std::to_string(parser.getCurrentToken()->getTokenIndex()) + ")";
  }
  out.errors = errors.text;
  return out;
}

/// The reference: the generated lexer and parser as ANTLR made them.
Parsed parseByAntlr(const std::string& text, PredictionMode mode) {
  antlr4::ANTLRInputStream input(text);
  ptogen::PTOLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  ptogen::PTOParser parser(&tokens);
  return parseWith(parser, mode);
}

/// pto-as's way: HandLexer, LexedTokenStream, DfaFirstSimulator. `cached` counts the predictions
/// the simulator answered from the DFA.
Parsed parseOurWay(const std::string& text, PredictionMode mode, size_t* cached = nullptr) {
  as::CompactInputStream input(text);
  as::HandLexer lexer(input);
  as::LexedTokenStream tokens(lexer);
  ptogen::PTOParser parser(&tokens);
  as::DfaFirstSimulator::install(parser);
  Parsed out = parseWith(parser, mode);
  if (cached)
    *cached += static_cast<as::DfaFirstSimulator*>(
                   parser.getInterpreter<antlr4::atn::ParserATNSimulator>())
                   ->cachedAnswers();
  return out;
}

std::vector<std::string> inputs() {
  std::vector<std::string> texts;
  std::vector<std::string> dirs = {sourcePath("samples"), sourcePath("tests/lit")};
  if (haveCorpus()) dirs.push_back(corpusPath(""));
  for (const std::string& dir : dirs)
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".pto")
        texts.push_back(readText(e.path().string()));
  return texts;
}

/// `text` with a few tokens' worth of edits: deletions, doublings, truncation.
std::string mutate(std::string text, std::mt19937& rng) {
  for (size_t k = 1 + rng() % 3; k-- > 0 && !text.empty();) {
    const size_t at = rng() % text.size();
    switch (rng() % 3) {
    case 0:
      text.erase(at, 1 + rng() % 8);
      break;
    case 1:
      text.insert(at, text.substr(at, 1 + rng() % 8));
      break;
    default:
      text.resize(at);
      break;
    }
  }
  return text;
}

TEST(Parser, SameTreesAndErrorsAsAntlr) {
  const std::vector<std::string> texts = inputs();
  ASSERT_FALSE(texts.empty());
  std::mt19937 rng(1414);
  size_t cached = 0, runs = 0;
  for (const std::string& original : texts) {
    const std::string mutated = mutate(original, rng);
    for (const std::string* text : {&original, &mutated})
      for (PredictionMode mode : {PredictionMode::SLL, PredictionMode::LL}) {
        ASSERT_EQ(parseOurWay(*text, mode, &cached), parseByAntlr(*text, mode)) << "input:\n"
                                                                                << *text;
        ++runs;
      }
  }
  std::cout << runs << " parses compared; " << cached << " predictions answered from the DFA\n";
  EXPECT_GT(cached, runs); // the fast path is taken, several times per parse
}

TEST(Parser, SameTreesWithoutLocksOnOneThread) {
  // pto-as promises one parsing thread (assumeOneParserThread) and the DFA walk skips ANTLR's
  // locks: the trees and errors must not change, from cold and from warm caches.
  struct OneThread {
    OneThread() { as::DfaFirstSimulator::assumeOneParserThread(true); }
    ~OneThread() { as::DfaFirstSimulator::assumeOneParserThread(false); }
  } oneThread;
  const std::vector<std::string> texts = inputs();
  std::mt19937 rng(2718);
  size_t cached = 0, runs = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i % 10 == 0) { // every tenth parse from emptied caches
      antlr4::ANTLRInputStream none;
      ptogen::PTOLexer lexer(&none);
      antlr4::CommonTokenStream tokens(&lexer);
      ptogen::PTOParser(&tokens).getInterpreter<antlr4::atn::ParserATNSimulator>()->clearDFA();
    }
    const std::string mutated = mutate(texts[i], rng);
    for (const std::string* text : {&texts[i], &mutated})
      for (PredictionMode mode : {PredictionMode::SLL, PredictionMode::LL}) {
        ASSERT_EQ(parseOurWay(*text, mode, &cached), parseByAntlr(*text, mode)) << "input:\n"
                                                                                << *text;
        ++runs;
      }
  }
  std::cout << runs << " parses compared without locks; " << cached << " cached predictions\n";
  EXPECT_GT(cached, runs);
}

TEST(Parser, SameTreesFromColdCaches) {
  // Each parse starts from empty prediction caches, so DfaFirstSimulator meets every DFA state
  // while it is being built (ANTLR's fallback fills it) rather than all of them cached.
  const std::vector<std::string> texts = inputs();
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    const std::string& text = texts[rng() % texts.size()];
    for (PredictionMode mode : {PredictionMode::SLL, PredictionMode::LL}) {
      antlr4::ANTLRInputStream none;
      ptogen::PTOLexer lexer(&none);
      antlr4::CommonTokenStream tokens(&lexer);
      ptogen::PTOParser(&tokens).getInterpreter<antlr4::atn::ParserATNSimulator>()->clearDFA();
      const Parsed ours = parseOurWay(text, mode);
      ptogen::PTOParser(&tokens).getInterpreter<antlr4::atn::ParserATNSimulator>()->clearDFA();
      ASSERT_EQ(ours, parseByAntlr(text, mode)) << "input:\n" << text;
    }
  }
}

TEST(Parser, ConcurrentParsesFromColdCachesAgree) {
  // The DFA cache is shared by every parser of the process (pto-diff parses on several threads):
  // with the caches emptied, four threads parse while ANTLR's fallback fills the DFA that the
  // others walk, and each tree must equal the one parsed alone. Under ASan (scripts/
  // sanitize-test.sh) a read of an edge map while it is rehashed would show.
  const std::vector<std::string> texts = inputs();
  std::vector<Parsed> alone;
  for (const std::string& text : texts)
    alone.push_back(parseByAntlr(text, PredictionMode::LL));
  for (int round = 0; round < 3; ++round) {
    {
      antlr4::ANTLRInputStream none;
      ptogen::PTOLexer lexer(&none);
      antlr4::CommonTokenStream tokens(&lexer);
      ptogen::PTOParser(&tokens).getInterpreter<antlr4::atn::ParserATNSimulator>()->clearDFA();
    }
    std::atomic<size_t> mismatches{0}, parses{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (size_t i = t; i < texts.size() + t; ++i) {
          const size_t k = (i * 7 + t) % texts.size(); // each thread in its own order
          if (!(parseOurWay(texts[k], PredictionMode::LL) == alone[k])) ++mismatches;
          ++parses;
        }
      });
    for (std::thread& th : threads)
      th.join();
    EXPECT_EQ(mismatches.load(), 0u) << "round " << round << ", " << parses.load() << " parses";
  }
}

/// One token as the comparison sees it.
std::string show(antlr4::Token* t) {
  return t ? std::to_string(t->getTokenIndex()) + ":" + t->getText() : "null";
}

TEST(Parser, TokenStreamAnswersAsCommonTokenStream) {
  // Random walks of every call the parser and its error recovery make, on both streams over
  // the same lexer's tokens; lookahead runs past the end and behind the start.
  const std::vector<std::string> texts = inputs();
  std::mt19937 rng(2026);
  for (int walk = 0; walk < 200; ++walk) {
    const std::string text = mutate(texts[rng() % texts.size()], rng);
    as::CompactInputStream inA(text), inB(text);
    as::HandLexer lexA(inA), lexB(inB);
    antlr4::CommonTokenStream ref(&lexA);
    as::LexedTokenStream ours(lexB);
    for (int step = 0; step < 300; ++step) {
      const int op = static_cast<int>(rng() % 8);
      const ssize_t k = static_cast<ssize_t>(rng() % 8) - 2;
      if (op <= 2) {
        ASSERT_EQ(show(ours.LT(k)), show(ref.LT(k))) << "LT(" << k << ")";
      } else if (op <= 4) {
        // LA(k) for k < 1 reads a token behind the start, which ANTLR's streams dereference
        // without a check; the parser only looks ahead with LA.
        if (k >= 1) {
          ASSERT_EQ(ours.LA(k), ref.LA(k)) << "LA(" << k << ")";
        }
      } else if (op == 5) {
        if (ref.LA(1) == antlr4::Token::EOF) {
          EXPECT_THROW(ours.consume(), antlr4::IllegalStateException);
          EXPECT_THROW(ref.consume(), antlr4::IllegalStateException);
        } else {
          ours.consume();
          ref.consume();
        }
      } else if (op == 6) {
        const size_t to = rng() % (text.size() / 4 + 2);
        ours.seek(to);
        ref.seek(to);
      } else {
        const antlr4::misc::Interval span(ssize_t(rng() % 20), ssize_t(rng() % 40));
        ASSERT_EQ(ours.getText(span), ref.getText(span));
      }
      ASSERT_EQ(ours.index(), ref.index());
      ASSERT_EQ(ours.size(), ref.size());
    }
  }
}

/// What a token says, to compare tokens made at different times or places.
std::string fields(antlr4::Token* t) {
  return std::to_string(t->getType()) + " " + std::to_string(t->getTokenIndex()) + " " +
         std::to_string(t->getStartIndex()) + ".." + std::to_string(t->getStopIndex()) + " @" +
         std::to_string(t->getLine()) + ":" + std::to_string(t->getCharPositionInLine()) + " " +
         t->getText();
}

TEST(Parser, ReleasedTokensAreReusedAndKeptTokensUnchanged) {
  // The front end releases the tokens inside each function it has built (FunctionStreamer):
  // their storage is reused for later tokens. Over every input and one long one (all inputs
  // in a row), random runs of fetched tokens are released while some tokens are kept. Every
  // token fetched must read as the same token from a stream that releases nothing, every kept
  // token must still read as itself at the end (reuse never overwrote it), the storage must
  // stay bounded, and a stream started over (relexFromStart) must give the whole sequence again.
  std::vector<std::string> texts = inputs();
  std::string all;
  for (const std::string& t : texts)
    all += t + "\n";
  texts.push_back(all);
  std::mt19937 rng(4242);
  size_t checked = 0, released = 0;
  for (const std::string& text : texts) {
    as::CompactInputStream inRef(text), in(text);
    as::HandLexer lexRef(inRef), lex(in);
    as::LexedTokenStream ref(lexRef), ours(lex);
    ref.fill();
    std::vector<std::pair<antlr4::Token*, std::string>> kept;
    size_t releasedUpTo = 0; // tokens [0, releasedUpTo) are released or kept
    // Functions of 1-60 tokens (a fifth of them) or of 2,000-8,000 (a real module's).
    auto functionLength = [&] { return rng() % 5 == 0 ? 1 + rng() % 60 : 2000 + rng() % 6000; };
    size_t functionEnd = functionLength();
    for (size_t i = 0;; ++i) {
      antlr4::Token* t = ours.LT(1);
      ASSERT_EQ(fields(t), fields(ref.get(i))) << "token " << i;
      ++checked;
      if (t->getType() == antlr4::Token::EOF) break;
      ours.consume();
      if (i == functionEnd) { // a "function" ends: release the run before it, keep its ends
        kept.emplace_back(ours.get(releasedUpTo), fields(ours.get(releasedUpTo)));
        if (i > releasedUpTo + 1) {
          ours.releaseTokens(releasedUpTo + 1, i - 1);
          released += i - 1 - releasedUpTo;
        }
        kept.emplace_back(ours.get(i), fields(ours.get(i)));
        releasedUpTo = i + 1;
        functionEnd = i + functionLength();
      }
    }
    for (const auto& [token, was] : kept)
      ASSERT_EQ(fields(token), was);
    // Storage: all but a few chunks' worth of tokens were released and their room reused.
    const size_t tokens = ref.size();
    if (tokens > 20000) {
      EXPECT_LT(lex.chunksAllocated(), lexRef.chunksAllocated() / 2) << tokens << " tokens";
    }
    ours.relexFromStart();
    ours.fill();
    ASSERT_EQ(ours.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_EQ(fields(ours.get(i)), fields(ref.get(i))) << "after relexFromStart, token " << i;
    checked += ref.size();
  }
  std::cout << checked << " tokens compared, " << released << " released\n";
}

TEST(Parser, SyntaxErrorAfterBuiltFunctionsIsReportedOnce) {
  // Forty functions are built and their tokens released (and reused) before the syntax error
  // at the end stops the fast parse: the parse starts over on tokens lexed again and reports
  // the error once, where it is.
  std::string text = "module {\n";
  for (int f = 0; f < 40; ++f) {
    text += "  func.func @k" + std::to_string(f) + "(%a: i32) -> i32 {\n";
    for (int s = 0; s < 20; ++s)
      text += "    %v" + std::to_string(s) + " = arith.addi %a, %a : i32\n";
    text += "    return %v19 : i32\n  }\n";
  }
  text += "}\n}\n";
  const size_t errorLine = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  as::SourceFile src("many.pto", text);
  std::ostringstream out;
  as::DiagEngine diags(src, out);
  EXPECT_EQ(as::parseModule(src, diags), nullptr);
  EXPECT_EQ(diags.errors(), 1u);
  EXPECT_NE(out.str().find("many.pto:" + std::to_string(errorLine) + ":1: error: unexpected '}'"),
            std::string::npos)
      << out.str();
  // Without the stray brace the same text builds, all forty functions.
  text.resize(text.size() - 2);
  as::SourceFile good("many.pto", text);
  as::DiagEngine quiet(good, out);
  auto m = as::parseModule(good, quiet);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->functions.size(), 40u);
}

/// What parseModule makes of `text`: the printed module, or "(none)" (also for a module with
/// errors, which no tool goes on with), then every diagnostic.
std::string built(const std::string& text) {
  const ParsedText p = parseText(text, std::nullopt, false, "in.pto");
  return (p.module && p.errors == 0 ? ir::print(*p.module) : std::string("(none)")) + "\n--\n" +
         p.diagnostics;
}

TEST(Parser, StreamedBodiesBuildAsWholeTrees) {
  // A function body of one block is built a statement at a time as the parser reads it; with a
  // `^` anywhere in the text (a comment here) every body is built from its whole parse tree. The
  // two must make the same module and the same diagnostics, on every input and on damaged
  // copies of them (which reach the builder's errors and the parser's).
  std::mt19937 rng(20261205);
  size_t compared = 0, modules = 0;
  for (const std::string& text : inputs()) {
    for (int variant = 0; variant < 4; ++variant) {
      const std::string in = variant == 0 ? text : mutate(text, rng);
      if (in.find('^') != std::string::npos) continue; // built whole either way
      const std::string streamed = built(in);
      ASSERT_EQ(streamed, built(in + "\n// ^ makes every body built whole\n")) << in;
      ++compared;
      modules += !streamed.starts_with("(none)");
    }
  }
  std::cout << compared << " inputs compared, " << modules << " of them built\n";
  EXPECT_GT(modules, 500u);
}

} // namespace
} // namespace pto::test
