// `pto-run kernel.pto ...`: runs a source file with the reference interpreter, without
// assembling or linking (docs/runtime.md, "pto-run kernel.pto").
#pragma once

namespace pto::ref {

/// True when pto-run's input (its first positional argument) is a file that is not an ELF image.
bool isSourceInput(int argc, char** argv);

/// pto-run's main for a source input: parse and verify (as pto-as does), then run one kernel on
/// the reference interpreter with pto-run's options. Returns the process exit code.
int runSourceMain(int argc, char** argv);

} // namespace pto::ref
