// pto-toolchain runtime: the host API (usable without pto-run).
//
//   auto mod = pto::rt::Module::open("k.img");            // load, validate, decode once
//   pto::rt::Launch l = mod.value().launch("vadd");       // one kernel
//   l.bind("x", &x); l.bind("y", &y); l.bind("z", &z);    // typed host buffers (Tensor)
//   l.bindScalar("n", int64_t{64});                      // scalars
//   if (auto err = l.run({.blocks = 8})) ...             // errors are values
//
// The cpu backend runs the decoded program in program order, one simulated AI core per block,
// blocks in parallel on a thread pool. See docs/runtime.md.
#pragma once

#include "isa/Isa.h"
#include "support/Result.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pto::obj {
struct Image;
}

namespace pto::rt {

/// A runtime or load error (support/Result.h). `message` is complete, e.g.
/// "softmax.pto:31:9: runtime error: TLOAD reads past the end of argument %arg0".
using Error = pto::Error;
using Status = std::optional<Error>; // nullopt = success
template <typename T> using Result = pto::Result<T>;

/// A typed host buffer: element type, shape (row-major), raw little-endian element bits.
/// Packed 4-bit types hold two elements per byte (element 2k in the low nibble).
struct Tensor {
  isa::DType dtype = isa::DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numel() const;
  static size_t bytesFor(isa::DType t, int64_t numel);
  static Tensor zeros(isa::DType t, std::vector<int64_t> shape);
  /// Element i as a double (isa::decodeToDouble).
  double at(int64_t i) const;
  uint64_t bitsAt(int64_t i) const;
  void setBits(int64_t i, uint64_t bits);
};

enum class Backend : uint8_t {
  Cpu, // functional, program order, fast
  Npu, // the AI-core model: pipes, events, cycles, races, deadlocks (docs/npu-model.md)
};

struct RunOptions {
  uint32_t blocks = 1;          // get_block_num(); each block is one simulated core
  unsigned threads = 0;         // 0 = hardware concurrency (capped at blocks)
  uint64_t maxInstructions = 0; // per block; 0 = no limit (an endless loop then never ends)
  Backend backend = Backend::Cpu;
  bool recordOps = false; // npu: keep every executed op (for a trace or a profile)
  /// Set from another thread (the Python module on Ctrl-C) to stop the run: each block stops at
  /// its next branch with the error "the run was cancelled".
  const std::atomic<bool>* cancel = nullptr;
  // A multi-device run (runtime/Comm.h, docs/multi-device.md): the world the ranks share and
  // this launch's rank in it; null = one device.
  class World* world = nullptr;
  uint32_t rank = 0;
};

/// npu backend: one executed op on one pipe, in cycles from the start of its block.
struct NpuOp {
  uint32_t textOffset = 0; // of the op's word in .text (Module::location gives its source line)
  const char* name = "";   // TADD, set_flag, wait_flag, ...
  uint8_t pipe = 0;        // isa::Pipe
  uint64_t start = 0, end = 0;
  int64_t flowOut = -1, flowIn = -1; // a set_flag and the wait_flag it released share an id
};

/// npu backend: what one block (one AI core) did.
struct NpuBlock {
  uint64_t cycles = 0;            // from the first issue to the last pipe going idle
  std::array<uint64_t, 8> busy{}; // cycles each pipe (by isa::Pipe) was executing
  std::array<uint64_t, 8> ops{};  // ops each pipe executed
  std::vector<NpuOp> records;     // with RunOptions::recordOps
  bool recordsTruncated = false;
  std::vector<std::string> warnings; // GM hazards no event orders (complete messages)
};

struct RunStats {
  double seconds = 0;        // wall time of the launch
  uint64_t tileOps = 0;      // executed tile blocks, all blocks together
  uint64_t scalarOps = 0;    // executed scalar instructions
  std::vector<NpuBlock> npu; // npu backend: one per block
  std::string output;        // what the kernel printed (TPRINT), block by block in block order
};

/// One element as pto-run --print and TPRINT show it: integers in decimal (signed types
/// sign-extended), floating-point types with %.9g.
std::string elementText(isa::DType t, uint64_t bits);

struct Program; // the decoded image (runtime/Program.h)

class Launch;

/// A loaded, validated and decoded image.
class Module {
public:
  static Result<Module> open(const std::string& path);
  static Result<Module> load(const std::vector<uint8_t>& bytes, std::string name = "<memory>");

  const obj::Image& image() const;
  isa::Arch arch() const;
  std::vector<std::string> kernelNames() const;
  /// Parameters of an entry kernel (name, kind, dtype, shape), or null if there is no such entry.
  struct ParamInfo {
    std::string name;
    enum class Kind { Pointer, Scalar, TensorView, Index } kind;
    isa::DType dtype;
    std::vector<int64_t> shape;
  };
  const std::vector<ParamInfo>* params(std::string_view kernel) const;

  /// Buffer sizing (docs/runtime.md, "Sizing buffers"): what the linker recorded for a pointer
  /// parameter of an entry kernel (docs/object-format.md, ".pto.extents"). `expr` is the element
  /// extent over the kernel's integer scalar parameters ("" = unknown); `indexValues` says that
  /// the values it holds are used as indices or offsets.
  struct PointerExtent {
    std::string expr;
    bool indexValues = false;
  };
  std::optional<PointerExtent> pointerExtent(std::string_view kernel, std::string_view param) const;
  /// The extent in elements, with the scalar parameters' values from `scalars` (by name,
  /// without '%'); an error says what is missing (an unknown extent, a scalar not given).
  Result<int64_t>
  pointerElements(std::string_view kernel, std::string_view param,
                  const std::vector<std::pair<std::string, int64_t>>& scalars) const;

  /// A launch of one entry kernel; fails when there is no entry of that name.
  Result<Launch> launch(std::string_view kernel) const;

  std::shared_ptr<const Program> program() const { return prog_; }
  /// "file:line:col" of the source op of a .text offset (or "@function+0x..").
  std::string location(uint64_t textOffset) const;

private:
  std::shared_ptr<const Program> prog_;
};

class Launch {
public:
  /// Binds a pointer / tensor_view parameter to a host buffer (by name, with or without '%',
  /// or "#index"). The buffer must outlive run(); the kernel reads and writes it in place.
  Status bind(std::string_view param, Tensor* buffer);
  /// Binds a scalar or index parameter. Integers are sign-extended raw bits; a double is
  /// converted to the parameter's element type (round to nearest even).
  Status bindScalar(std::string_view param, int64_t value);
  Status bindScalar(std::string_view param, double value);
  Status bindScalarBits(std::string_view param, uint64_t bits);

  /// Runs the kernel. Errors carry the kernel's source location.
  Status run(const RunOptions& opts = {}, RunStats* stats = nullptr);

  const std::vector<Module::ParamInfo>& params() const;
  std::string_view kernel() const;

private:
  friend class Module;
  std::shared_ptr<const Program> prog_;
  uint32_t function_ = 0;
  struct Binding {
    Tensor* buffer = nullptr;
    std::optional<uint64_t> bits;
  };
  std::vector<Binding> bindings_;
  std::optional<size_t> find(std::string_view param, Status& err) const;
  Status runIn(const RunOptions& opts, RunStats* stats);
};

} // namespace pto::rt
