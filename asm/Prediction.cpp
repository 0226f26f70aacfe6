// DfaFirstSimulator: see Prediction.h.
#include "asm/Prediction.h"

namespace pto::as {

using antlr4::atn::ParserATNSimulator;

DfaFirstSimulator::DfaFirstSimulator(antlr4::Parser* parser, ParserATNSimulator& replaced)
    : ParserATNSimulator(parser, replaced.atn, replaced.decisionToDFA,
                         replaced.getSharedContextCache()) {
  setPredictionMode(replaced.getPredictionMode());
}

void DfaFirstSimulator::install(antlr4::Parser& parser) {
  // The DFA cache and the context cache belong to the generated parser class, not to the
  // simulator, which setInterpreter deletes.
  parser.setInterpreter(
      new DfaFirstSimulator(&parser, *parser.getInterpreter<ParserATNSimulator>()));
}

size_t DfaFirstSimulator::adaptivePredict(antlr4::TokenStream* input, size_t decision,
                                          antlr4::ParserRuleContext* outerContext) {
  antlr4::dfa::DFA& dfa = decisionToDFA[decision];
  // A precedence DFA (left-recursive rules; the grammar has none) has one start state per
  // precedence level: ANTLR picks it.
  if (dfa.s0 != nullptr && !dfa.isPrecedenceDfa()) {
    if (const size_t alt = fromDfa(input, dfa, outerContext); alt != 0) {
      ++cachedAnswers_;
      return alt;
    }
  }
  return ParserATNSimulator::adaptivePredict(input, decision, outerContext);
}

// The DFA walk of ParserATNSimulator::execATN, on the cached states only and without moving
// the input: the same states are visited on the same lookahead tokens, so the same answer
// results. Only the cases that end in a cached answer are taken here; for every other one
// ANTLR's adaptivePredict runs from the start, as if this walk had not happened (it changed
// nothing: LA() only reads ahead, and predicates only read the input).
size_t DfaFirstSimulator::fromDfa(antlr4::TokenStream* input, antlr4::dfa::DFA& dfa,
                                  antlr4::ParserRuleContext* outerContext) {
  const bool sllOnly = getPredictionMode() == antlr4::atn::PredictionMode::SLL;
  antlr4::dfa::DFAState* state = dfa.s0;
  for (ssize_t k = 1;; ++k) {
    const auto edge = state->edges.find(input->LA(k)); // EOF edges are never cached
    if (edge == state->edges.end() || edge->second == ERROR.get()) return 0;
    state = edge->second;
    if (state->requiresFullContext && !sllOnly) return 0;
    if (!state->isAcceptState) continue;
    if (state->predicates.empty()) return state->prediction;
    // A state whose alternatives are told apart by the grammar's predicates: they read the
    // input from the decision's start, where it still is. None or several true alternatives
    // are ANTLR's to report.
    antlrcpp::BitSet alts = evalSemanticContext(
        state->predicates,
        outerContext != nullptr ? outerContext : &antlr4::ParserRuleContext::EMPTY, true);
    // Whether exactly one bit is set, without BitSet::count (a library call per word of its
    // 2048 bits: 2% of all instructions when it was used here).
    const size_t alt = alts.nextSetBit(0);
    if (alt == INVALID_INDEX) return 0; // ANTLR's macro
    alts.reset(alt);
    return alts.none() ? alt : 0;
  }
}

} // namespace pto::as
