// Internal to ref/: the interpreter's values and per-block machine (ref/Interp.cpp runs scalar
// code and control flow, ref/Tiles.cpp tiles and views).
#pragma once

#include "asm/ir/IR.h"
#include "ref/Interp.h"
#include "runtime/Program.h"

#include <map>
#include <memory>
#include <variant>

namespace pto::ref {

/// A tile: its type, where it lives (buffer and byte offset) and its current valid shape.
struct TileVal {
  ir::TileType type;
  uint32_t offset = 0;
  int64_t validRows = 0, validCols = 0; // run-time values (kDynamic when unknown)
};

/// A tensor or partition view: GM address of element 0, shape and strides in elements.
struct ViewVal {
  isa::DType elem = isa::DType::F32;
  uint64_t base = 0;
  std::vector<int64_t> shape, strides;
  bool dn = false; // column-major GM (stride between columns), from the tensor view
};

using EventArray = std::shared_ptr<std::vector<uint64_t>>;
using Val = std::variant<uint64_t, TileVal, ViewVal, EventArray>;

/// A runtime error at a source location.
struct Failure {
  ir::SrcLoc loc;
  std::string message;
};

class Machine {
public:
  Machine(const ir::Module& m, isa::Arch arch, const std::vector<rt::GmRegion>& gm,
          uint64_t maxOps);
  /// One block: runs `fn` with the given argument values.
  std::optional<Failure> runBlock(const ir::Function& fn, std::vector<Val> args, uint32_t blockIdx,
                                  uint32_t blockNum);
  uint64_t tileOps = 0, scalarOps = 0;
  const std::atomic<bool>* cancel = nullptr; // Options::cancel
  /// What TPRINT printed so far, all blocks in order (the cpu kernel writes the core's output).
  const std::string& output() const { return core_.output; }

private:
  struct Frame {
    const ir::Function* fn;
    std::vector<Val> v;
  };
  enum class Flow { Next, Return };
  using Step = std::variant<Flow, Failure>;

  std::optional<Failure> call(const ir::Function& fn, std::vector<Val> args,
                              std::vector<Val>& results, ir::SrcLoc at);
  /// Runs the ops of a region; the terminator (yield / condition / return) is left in *term.
  Step runRegion(Frame& f, const ir::Region& r, const ir::Op** term);
  Step runOp(Frame& f, const ir::Op& op, const ir::Op** term);
  std::optional<Failure> arith(Frame& f, const ir::Op& op);
  Step structured(Frame& f, const ir::Op& op);
  std::optional<Failure> tileOp(Frame& f, const ir::Op& op);
  /// A tile op's operands by role: tile outputs, tile inputs, the GM view, scalars.
  struct TileArg {
    ir::ValueId v;
    int role; // index into the op's roles
  };
  struct TileOperands {
    std::vector<TileArg> outs, ins;
    std::vector<uint64_t> scalars; // scalar operands, then the op's B.IOR attributes
    const ViewVal* view = nullptr;
    ir::ValueId dst = ir::kNoValue, src = ir::kNoValue; // the first tile output and input
    bool scalarOut = false;                             // TMRGSORT's counts
  };
  TileOperands tileOperands(Frame& f, const ir::Op& op, const isa::OpInfo& info);
  /// The instruction's name for messages (its encoding's, else the mnemonic upper-cased).
  const std::string& instName(const ir::Op& op, const isa::OpInfo& info);
  /// B.DATR: destination type, rounding, saturation, compare mode, GM layout.
  void setDatr(const Frame& f, const ir::Op& op, const isa::OpInfo& info, const TileOperands& o,
               rt::TileInst& t) const;
  std::optional<Failure> runKernel(const ir::Op& op, const rt::TileInst& inst);
  /// A partition with more than two non-unit dimensions: one op per 2-D slice.
  std::optional<Failure> runSlices(const ir::Op& op, const std::string& opName,
                                   const rt::TileInst& t, const ViewVal& view,
                                   const std::vector<size_t>& outerDims, bool scalars);
  std::optional<Failure> scaleAddress(Frame& f, const ir::Op& op);
  std::optional<Failure> tileGetVal(Frame& f, const ir::Op& op);
  void printScalar(const Frame& f, const ir::Op& op);
  std::optional<Failure> coreSync(Frame& f, const ir::Op& op);
  std::optional<Failure> signal(Frame& f, const ir::Op& op);
  std::optional<Failure> viewOp(Frame& f, const ir::Op& op);
  std::optional<Failure> tileQuery(Frame& f, const ir::Op& op);
  std::optional<Failure> makeView(Frame& f, const ir::Op& op);
  std::optional<Failure> partitionView(Frame& f, const ir::Op& op);
  std::optional<Failure> scalarMemory(Frame& f, const ir::Op& op);
  std::optional<Failure> tileAlloc(Frame& f, const ir::Op& op);
  std::optional<Failure> countOp(const ir::Op& op);

  uint64_t scalar(const Frame& f, ir::ValueId v) const { return std::get<uint64_t>(f.v[v]); }
  std::optional<uint32_t> autoPlace(const ir::Op& op, const ir::TileType& t);
  rt::TileOperand operand(const TileVal& t, const std::string& name) const;
  bool constantOperand(const Frame& f, ir::ValueId v) const;

  const ir::Module& mod_;
  isa::Arch arch_;
  rt::Core core_;
  uint64_t maxOps_;
  unsigned depth_ = 0;
  std::map<const ir::Op*, uint32_t> placed_; // alloc_tile -> its own offset
  std::array<uint64_t, 7> nextFree_{};       // per location, above the physical buffer
  std::map<std::pair<const ir::Function*, ir::ValueId>, const ir::Op*>
      defs_;                                   // value -> defining op
  std::map<const ir::Op*, std::string> names_; // tile instruction names for messages
};

} // namespace pto::ref
