// What the code generator knows of the GM addresses its tile ops touch (internal to asm/), for
// the object's GM access records (obj::GmAccess, docs/object-format.md) that let the linker
// order a store and a later load of the same bytes (docs/sync.md section 2b).
//
// The tracker follows the function in the order the code generator lowers it. An integer value
// is kept as an affine form, constant + sum of coefficient x atom, where an atom is a value it
// cannot see through (a parameter, a block index, a loop variable, a loaded scalar). A pointer or
// view is a parameter plus such a form in bytes. An access's record is known when every atom of
// its address is the same in every execution of the op (defined outside every loop, or outside
// the loop the op is in) except the variable of the op's only enclosing scf.for, whose
// coefficient times the constant step is the record's stride per iteration.
#pragma once

#include "asm/ir/IR.h"
#include "obj/Object.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace pto::as::lower {

/// constant + sum of coefficient x atom, terms sorted by atom, no zero coefficient.
struct Affine {
  int64_t constant = 0;
  std::vector<std::pair<ir::ValueId, int64_t>> terms;
};

class GmAddressTracker {
public:
  using ConstantOf = std::function<std::optional<int64_t>(ir::ValueId)>;
  GmAddressTracker(const ir::Function& fn, ConstantOf constantOf);

  /// Before `op` is lowered (its operands are known, its results not yet).
  void before(const ir::Op& op);
  /// Around a loop's body: scf.for (its variable and constant step) or scf.while.
  void enterLoop(const ir::Op& op);
  void exitLoop();

  /// The record of a tile op that reads (or writes, `write`) GM through `view`, textOffset and
  /// function left for the caller.
  obj::GmAccess access(ir::ValueId view, bool write) const;

private:
  /// A pointer or view: the parameter it reaches and the byte offset from it; a view also has
  /// its strides in bytes (unknown: empty) and its element bytes.
  struct Place {
    int32_t param = -1;
    std::optional<Affine> offset; // bytes; nothing: unknown
    std::vector<int64_t> strides; // bytes per step of each dimension (views)
    bool stridesKnown = false;
    unsigned elemBits = 8;
  };
  struct Loop {
    uint32_t id = 0;
    ir::ValueId iv = ir::kNoValue;
    std::optional<int64_t> step;
  };

  std::optional<Affine> affineOf(ir::ValueId v) const;
  void arith(const ir::Op& op);
  void view(const ir::Op& op);
  void markVariant(const ir::Op& op);
  std::optional<Place> placeOf(ir::ValueId v) const;

  const ir::Function& fn_;
  ConstantOf constantOf_;
  std::unordered_map<ir::ValueId, Affine> affine_;
  std::unordered_map<ir::ValueId, Place> places_;
  std::unordered_set<ir::ValueId> variant_; // differ from one iteration of a loop to the next
  std::vector<Loop> loops_;
  uint32_t nextLoop_ = 1;
};

} // namespace pto::as::lower
