// The front end's replacements for parts of the ANTLR runtime (asm/Prediction.h's
// DfaFirstSimulator, asm/TokenStream.h's LexedTokenStream) against the runtime's own: the same
// parse trees and syntax errors, in the SLL and the LL prediction modes, on every .pto file of
// the repository and the corpus and on mutations of them, and the same answers from the token
// stream to every call. The reference is the generated lexer and parser with ANTLR's own
// simulator and CommonTokenStream. The inputs are deterministic (fixed seeds).
#include "PTOLexer.h"
#include "PTOParser.h"
#include "asm/Lexer.h"
#include "asm/Prediction.h"
#include "asm/TokenStream.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
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

} // namespace
} // namespace pto::test
