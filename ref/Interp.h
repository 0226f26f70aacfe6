// The reference interpreter of the Kernel IR (docs/runtime.md, "The reference interpreter"):
// runs a verified ir::Module directly — structured control flow and scalar semantics written
// from the op definitions (ref/Scalar.h), tile ops through the cpu backend's tile kernels —
// with the runtime's buffer interface (rt::Tensor, raw scalar bits). It is the independent
// oracle for code generation and what `pto-run kernel.pto` runs.
//
//   auto k = pto::ref::Kernel::find(module, arch, "vadd");     // errors are values
//   k->bind("x", &x); k->bindScalar("n", int64_t{64});
//   if (auto err = k->run({.blocks = 4})) ...
#pragma once

#include "asm/ir/IR.h"
#include "runtime/Runtime.h"

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pto::ref {

struct Options {
  uint32_t blocks = 1;                // get_block_num(); blocks run one after another
  uint64_t maxOps = 1'000'000'000ull; // per block; 0 = no limit (endless loops then never end)
  /// Set from another thread to stop the run at its next operation ("the run was cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

struct Stats {
  uint64_t tileOps = 0, scalarOps = 0; // executed, all blocks together
  std::string output; // what the kernel printed (TPRINT), block by block, as pto-run shows it
};

/// The entry kernels of a module, as pto-ld picks them: the pto.entry functions, else the one
/// function a module defines (unless private).
std::vector<std::string> kernelNames(const ir::Module& m);

/// Why the reference interpreter refuses an op's attribute ("key = value"; the rows of
/// isa/OpAttrs.def whose Ref column is Refused, with a value other than the default), or nullopt.
std::optional<std::string> unrunnableAttribute(const ir::Op& op);

/// One kernel of a module, its parameters bound to host buffers and scalars.
class Kernel {
public:
  /// Fails when the module has no such function (or it has no body).
  static rt::Result<Kernel> find(const ir::Module& m, isa::Arch arch, std::string_view name);

  /// Parameters as the linked image describes them (pointer, tensor_view, scalar, index).
  const std::vector<rt::Module::ParamInfo>& params() const { return params_; }
  std::string_view name() const;

  /// As rt::Launch: buffers by parameter name (with or without '%'); the buffer must outlive run().
  rt::Status bind(std::string_view param, rt::Tensor* buffer);
  /// Integers are sign-extended raw bits; a double is rounded to the parameter's float type.
  rt::Status bindScalar(std::string_view param, int64_t value);
  rt::Status bindScalar(std::string_view param, double value);
  rt::Status bindScalarBits(std::string_view param, uint64_t bits);

  /// Runs every block (blockIdx 0..blocks-1) in order. Errors read
  /// "k.pto:12:5: runtime error: ..." (with " (block N)" when blocks > 1).
  rt::Status run(const Options& opts = {}, Stats* stats = nullptr) const;

private:
  const ir::Module* mod_ = nullptr;
  const ir::Function* fn_ = nullptr;
  isa::Arch arch_ = isa::Arch::A2A3;
  std::vector<rt::Module::ParamInfo> params_;
  struct Binding {
    rt::Tensor* buffer = nullptr;
    std::optional<uint64_t> bits;
  };
  std::vector<Binding> bindings_;
  std::optional<size_t> index(std::string_view param, rt::Status& err) const;
};

} // namespace pto::ref
