// Running a generated program through the implementations under test and comparing every output
// buffer, bit for bit, with the evaluator's expected contents.
#pragma once

#include "runtime/Runtime.h"
#include "tests/diff/Kernel.h"

#include <functional>
#include <string>
#include <vector>

namespace pto::diff {

/// What one implementation did with a program: an error (assembler, linker, load or run time),
/// or the final contents of every buffer (element bits, in Program::buffers order).
struct Outcome {
  std::string error;
  std::vector<std::vector<uint64_t>> buffers;
};

/// An implementation under test besides the tool chain, e.g. the reference IR interpreter:
/// it gets the .pto text and the program (buffers with their initial contents, scalar values).
struct Implementation {
  std::string name;
  std::function<Outcome(const std::string& text, const Program& p)> run;
};

struct CheckOptions {
  bool cpu = true, npu = true;
  std::vector<Implementation> extra; // more implementations: refInterpreter(), ...
  uint64_t maxInstructions = 50'000'000;
};

/// Empty when every implementation reproduced the expected buffers; otherwise the first
/// difference: "npu: buffer %b1[3]: expected 0x00000007, got 0x00000000" or an error text.
/// `kind` receives a short key for the failure ("npu:mismatch", "as:error: ..."): the reducer
/// keeps a candidate only while the key stays the same.
std::string check(const Program& p, const EvalResult& expected, const CheckOptions& opts,
                  std::string* kind = nullptr);

/// The reference interpreter of the Kernel IR (ref/), on the .pto text.
Implementation refInterpreter(uint64_t maxOps);

/// A buffer's initial contents as a runtime host tensor, and a tensor's elements back as bits.
rt::Tensor makeTensor(const Buffer& b);
std::vector<uint64_t> tensorBits(const rt::Tensor& t, const Buffer& b);

/// pto-as -> pto-ld --auto-sync -> runtime, in process.
Outcome runToolchain(const std::string& text, const Program& p, bool npu, uint64_t maxInstructions);

/// A smaller program that still fails `check` with the same kind (statements dropped, regions
/// inlined while the failure persists). `steps` receives the number of candidates tried.
Program reduce(const Program& p, const CheckOptions& opts, const std::string& kind,
               int* steps = nullptr);

} // namespace pto::diff
