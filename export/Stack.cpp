// Stack facts of the export (export/Emitter.h): which registers hold stack addresses at each
// block (a scalar load or store through one is a frame access, else a GM access), and the
// stack a kernel needs for its frames and those of the helpers it calls.
#include "export/Emitter.h"

#include <algorithm>

namespace pto::cppexport::detail {

namespace {

uint32_t blockStackOut(const Block& b, uint32_t in) {
  for (const ScalarInst& s : b.scalars)
    in = stackStep(in, s.op);
  if (b.kind == BlockKind::Control && b.control.result != kZeroReg) in &= ~(1u << b.control.result);
  if (b.transfer == Transfer::Call) in = 1u << kSpReg; // the callee may clobber every register
  return in;
}

/// The stack a kernel needs: the deepest chain of frames through its calls.
std::variant<uint64_t, std::string> stackDepth(const Image& img,
                                               const std::vector<FunctionCode>& code, uint32_t fn,
                                               std::vector<int>& state,
                                               std::vector<uint64_t>& memo) {
  if (state[fn] == 2) return memo[fn];
  if (state[fn] == 1)
    return "@" + img.functions[fn].name +
           " is recursive, which a C++ export cannot give a bounded stack";
  state[fn] = 1;
  uint64_t deepest = 0;
  for (const Block& b : code[fn].blocks) {
    if (b.transfer != Transfer::Call) continue;
    auto d = stackDepth(img, code, *functionAt(img, b.target), state, memo);
    if (auto* e = std::get_if<std::string>(&d)) return *e;
    deepest = std::max(deepest, std::get<uint64_t>(d));
  }
  state[fn] = 2;
  memo[fn] = img.functions[fn].frameSize + deepest;
  return memo[fn];
}

} // namespace

uint32_t stackStep(uint32_t mask, const ScalarOp& m) {
  auto bit = [](uint8_t r) { return 1u << r; };
  if (m.kind != ScalarKind::Alu && m.kind != ScalarKind::Load) return mask;
  if (m.rd == kZeroReg) return mask;
  bool derived = false;
  if (m.kind == ScalarKind::Alu && (m.op == AluOp::Add || m.op == AluOp::Sub))
    derived = (mask & bit(m.rs1)) || (m.op == AluOp::Add && !m.useImm && (mask & bit(m.rs2)));
  return derived ? (mask | bit(m.rd)) : (mask & ~bit(m.rd));
}

StackFlow stackFlow(const FunctionCode& fc, uint64_t end) {
  const size_t n = fc.blocks.size();
  StackFlow f{std::vector<uint32_t>(n + 1, ~0u), std::vector<uint32_t>(n + 1, 0)};
  std::vector<bool> reached(n + 1, false);
  if (n == 0) return f;
  f.must[0] = f.may[0] = 1u << kSpReg;
  reached[0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (!reached[i]) continue;
      const Block& b = fc.blocks[i];
      uint32_t must = blockStackOut(b, f.must[i]), may = blockStackOut(b, f.may[i]);
      std::vector<size_t> succ;
      if (b.transfer != Transfer::Direct && b.transfer != Transfer::Ret) succ.push_back(i + 1);
      if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond)
        succ.push_back(*fc.blockAt(b.target, end));
      for (size_t s : succ) {
        uint32_t nm = reached[s] ? (f.must[s] & must) : must,
                 ny = reached[s] ? (f.may[s] | may) : may;
        if (!reached[s] || nm != f.must[s] || ny != f.may[s]) changed = true;
        reached[s] = true;
        f.must[s] = nm;
        f.may[s] = ny;
      }
    }
  }
  return f;
}

std::variant<uint64_t, ExportError> kernelStack(const Image& img,
                                                const std::vector<FunctionCode>& code, uint32_t f) {
  std::vector<int> state(img.functions.size(), 0);
  std::vector<uint64_t> memo(img.functions.size(), 0);
  auto d = stackDepth(img, code, f, state, memo);
  if (auto* e = std::get_if<std::string>(&d)) return ExportError{*e};
  return std::get<uint64_t>(d);
}

} // namespace pto::cppexport::detail
