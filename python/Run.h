// Runs for the Python module (docs/python.md): an image's kernel on the cpu backend or the npu
// model, and a source's kernel on the reference interpreter, with host buffers in and out. The
// parameters not given are made as pto-run --auto-args makes them (runtime/Args.h). A run can
// be interrupted: `interrupted` is polled from the waiting thread while the run goes on in
// another, and a true answer stops it (RunOptions::cancel). Nothing here knows Python.
#pragma once

#include "python/Driver.h"
#include "runtime/Args.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace pto::python {

/// A scalar argument: an integer (any value a 64-bit signed or unsigned type holds) or a float.
struct ScalarArg {
  bool isFloat = false;
  obj::WideInt integer = 0;
  double real = 0;
};

struct RunRequest {
  std::string kernel; // "" = the only entry kernel
  rt::Backend backend = rt::Backend::Cpu;
  uint32_t blocks = 1;
  unsigned threads = 0;
  uint64_t seed = 0;
  uint64_t maxInstructions = 10'000'000'000ull; // pto-run's default
  rt::AutoArgs autoArgs = rt::AutoArgs::Random;
  std::map<std::string, rt::Tensor> buffers;
  std::map<std::string, ScalarArg> scalars;
};

struct RunOutcome {
  std::string kernel;
  std::map<std::string, rt::Tensor> buffers; // every buffer parameter after the run
  std::string output;                        // what TPRINT printed
  std::vector<std::string> warnings;         // npu: GM hazards no event orders
  rt::RunStats stats;
  bool cancelled = false; // `interrupted` said so: no results
};

/// Polled about every 20 ms while a run goes on; true stops the run.
using InterruptPoll = std::function<bool()>;

RunOutcome runImage(const rt::Module& mod, RunRequest req, const InterruptPoll& interrupted);

/// The reference interpreter (`pto-run kernel.pto`): every pointer must be given; tensor views
/// not given are zeros.
RunOutcome runSource(const ParsedSource& src, RunRequest req, const InterruptPoll& interrupted);

} // namespace pto::python
