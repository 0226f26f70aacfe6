// ANTLR's adaptive prediction with a fast path for what it has already learned.
//
// Every decision of the generated parser that needs more than one token of lookahead calls
// ParserATNSimulator::adaptivePredict. ANTLR 4.9 caches what prediction learns in one DFA per
// decision, but even when the answer is in that cache a call costs over two thousand
// instructions (a std::function, two heap allocations, locks, hash lookups, stream marks):
// a fifth of all instructions of assembling a large module went into answers already known.
// DfaFirstSimulator walks the cached DFA itself and returns the cached answer; whenever the cache
// does not hold the whole answer (an edge not learned yet, the error state, a state that needs
// full-context prediction, predicates that do not leave exactly one alternative) it calls ANTLR's
// own adaptivePredict, which then does exactly what it always did. The answers are therefore
// ANTLR's, and the grammar remains the one definition of the syntax.
#pragma once

#include "antlr4-runtime.h"

#include <cstddef>

namespace pto::as {

class DfaFirstSimulator final : public antlr4::atn::ParserATNSimulator {
public:
  /// Takes over `parser`'s DFA cache; see install().
  DfaFirstSimulator(antlr4::Parser* parser, antlr4::atn::ParserATNSimulator& replaced);

  /// Replaces `parser`'s simulator with a DfaFirstSimulator sharing its caches and mode. The
  /// parser owns (and deletes) its simulator.
  static void install(antlr4::Parser& parser);

  size_t adaptivePredict(antlr4::TokenStream* input, size_t decision,
                         antlr4::ParserRuleContext* outerContext) override;

  /// A promise that from now on this process parses on one thread only (pto-as's main does
  /// this): the DFA walk then reads the cache without taking ANTLR's state and edge locks, which
  /// were 6% of pto-as's instructions on a large module (a mutex and a condition variable per
  /// lock). The default, `false`, locks: right for processes that parse on several threads
  /// (pto-diff, the tests). Call it before the first parse, never while other threads parse.
  static void assumeOneParserThread(bool one);

  /// Predictions answered from the DFA without calling ANTLR's adaptivePredict (for tests).
  size_t cachedAnswers() const { return cachedAnswers_; }

private:
  /// The alternative the cached DFA predicts at the input's position, or 0 when ANTLR must
  /// decide (see above).
  size_t fromDfa(antlr4::TokenStream* input, antlr4::dfa::DFAState* s0,
                 antlr4::ParserRuleContext* outerContext);
  size_t cachedAnswers_ = 0;
};

} // namespace pto::as
