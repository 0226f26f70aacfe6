// DfaFirstSimulator: see Prediction.h.
#include "asm/parse/Prediction.h"

#include <atomic>

namespace pto::as {

using antlr4::atn::ParserATNSimulator;

namespace {
/// See assumeOneParserThread. Relaxed: it is set before any parse and read by the parsing thread.
std::atomic<bool> oneParserThread{false};

/// ANTLR's read lock on one of its shared locks, or nothing when one thread parses.
class ReadLock {
public:
  explicit ReadLock(antlrcpp::SingleWriteMultipleReadLock& lock)
      : lock_(oneParserThread.load(std::memory_order_relaxed) ? nullptr : &lock) {
    if (lock_) lock_->readLock();
  }
  ~ReadLock() {
    if (lock_) lock_->readUnlock();
  }
  ReadLock(const ReadLock&) = delete;
  ReadLock& operator=(const ReadLock&) = delete;

private:
  antlrcpp::SingleWriteMultipleReadLock* lock_;
};
} // namespace

void DfaFirstSimulator::assumeOneParserThread(bool one) {
  oneParserThread.store(one, std::memory_order_relaxed);
}

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
  // The DFA cache is shared by every parser in the process (pto-diff parses on several threads):
  // it is read under the same locks ANTLR's own prediction takes while another thread may add
  // states and edges (skipped when the process promised one parsing thread).
  antlr4::dfa::DFAState* s0 = nullptr;
  {
    ReadLock lock(_stateLock);
    s0 = dfa.isPrecedenceDfa() ? nullptr : dfa.s0;
  }
  // A precedence DFA (left-recursive rules; the grammar has none) has one start state per
  // precedence level: ANTLR picks it.
  if (s0 != nullptr) {
    if (const size_t alt = fromDfa(input, s0, outerContext); alt != 0) {
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
size_t DfaFirstSimulator::fromDfa(antlr4::TokenStream* input, antlr4::dfa::DFAState* state,
                                  antlr4::ParserRuleContext* outerContext) {
  const bool sllOnly = getPredictionMode() == antlr4::atn::PredictionMode::SLL;
  // The walk holds ANTLR's edge lock once (LA() only reads our token stream); the predicates,
  // which call into the parser, are evaluated after it is released.
  {
    ReadLock lock(_edgeLock);
    for (ssize_t k = 1; state != nullptr; ++k) {
      const auto edge = state->edges.find(input->LA(k)); // EOF edges are never cached
      state = edge == state->edges.end() || edge->second == ERROR.get() ? nullptr : edge->second;
      if (state != nullptr && (state->isAcceptState || (state->requiresFullContext && !sllOnly)))
        break;
    }
  }
  if (state == nullptr || (state->requiresFullContext && !sllOnly)) return 0;
  if (state->predicates.empty()) return state->prediction;
  // A state whose alternatives are told apart by the grammar's predicates: they read the
  // input from the decision's start, where it still is. None or several true alternatives
  // are ANTLR's to report.
  antlrcpp::BitSet alts = evalSemanticContext(
      state->predicates, outerContext != nullptr ? outerContext : &antlr4::ParserRuleContext::EMPTY,
      true);
  // Whether exactly one bit is set, without BitSet::count (a library call per word of its
  // 2048 bits: 2% of all instructions when it was used here).
  const size_t alt = alts.nextSetBit(0);
  if (alt == INVALID_INDEX) return 0; // ANTLR's macro
  alts.reset(alt);
  return alts.none() ? alt : 0;
}

} // namespace pto::as
