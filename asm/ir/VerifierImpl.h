// The per-arch verifier (internal to asm/, behind Frontend.h's verifyModule). Op-specific
// knowledge comes from the op table in isa/ (operand roles, type rules, flags, per-arch dtype
// sets); the verifier only interprets it. Its members are defined by job in Verifier.cpp (the
// driver, module, entry and call checks, views, scalar memory, sync) and VerifyTiles.cpp (tile
// types and addresses, tile-op operand roles, locations, dtype rules, shapes, matmul).
#pragma once

#include "asm/ir/IR.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pto::as::verify {

using namespace pto::ir;

/// A dtype's spelling in messages ("f16").
inline std::string dt(isa::DType t) {
  return std::string(isa::spelling(t));
}

class Verifier {
public:
  Verifier(const Module& m, isa::Arch arch, DiagEngine& d) : mod_(m), arch_(arch), diags_(d) {}

  /// Checks every function; reports all errors found.
  void run();

private:
  /// A tile-op operand with the role the op table gives it.
  struct Operand {
    const isa::Role* role;
    ValueId value;
    SrcLoc loc;
  };

  const Module& mod_;
  isa::Arch arch_;
  DiagEngine& diags_;
  const Function* fn_ = nullptr;
  std::set<ValueId> checkedTiles_;
  mutable std::map<std::pair<const Function*, ValueId>, int64_t> constants_;

  std::string archName() const { return std::string(isa::profile(arch_).name); }
  const Type& type(ValueId v) const { return fn_->type(v); }
  const Value& value(ValueId v) const { return fn_->value(v); }
  const TileType& tileOf(const Operand& o) const { return type(o.value).tile; }

  // ---- Verifier.cpp: the module, values, views, scalar memory, sync
  /// Entry functions return nothing; pto.kernel_kind names vector or cube.
  void checkEntries();
  /// Calls may not form a cycle: a function's tiles have fixed addresses (planned once by the
  /// linker), so a recursive call would overwrite the tiles of the calls still running.
  void checkRecursion();
  static const NamedAttr* findAttr(std::span<const NamedAttr> attrs, std::string_view key);
  /// A note at the definition of v, unless the error already points there (fragment tiles are
  /// defined by their first use).
  void noteDef(ValueId v, SrcLoc errorAt = {});
  /// The value of v when a constant op defines it as an integer.
  std::optional<int64_t> constValue(ValueId v) const;
  /// Indexes the integer constant ops of every function by (function, result), lazily: walking
  /// for the defining op on every query would be costly.
  void indexConstants() const;
  /// The checks of one op: the types it defines, then its kind's rules.
  void checkOp(const Op& op, const std::set<std::string>& functionNames);
  void checkMakeView(const Op& op);
  void checkReinterpret(const Op& op);
  void checkPartition(const Op& op);
  void checkScalarMemory(const Op& op);
  void checkFlag(const Op& op);
  void checkBarrier(const Op& op);

  // ---- VerifyPipes.cpp: cross-core pipes and reserved buffers
  static std::string kernelKind(const Function& f); // "cube", "vector" or ""
  void checkReservedBuffers();
  void checkLocalAllocUses();
  void checkMultiTileGet(const Op& op);
  void checkPipeFlags(const Function& f);
  void checkPipePeers();
  void checkReserve(const Op& op);
  void checkManualReserveTiles(const Function& f, const Op& reserve);
  void checkPipeOp(const Op& op);
  void checkPipeEntry(const Op& op, const Op& init, bool cube);
  void checkPipeInit(const Op& op, const std::string& kind);
  const Op* definingOp(ValueId v) const;
  std::map<ValueId, const Op*> pipeInits_; // this function's pipes
  std::set<ValueId> unboundEntries_;       // declare_global results no talloc / tpop has bound yet
  void checkEntryBound(const Op& op);
  std::map<ValueId, std::set<int>> pipeSplits_; // split classes seen per pipe (0 / not 0)
  std::set<ValueId> reportedSplitMix_;

  // ---- VerifyTiles.cpp: tiles and tile ops
  void checkValueType(ValueId v);
  /// Tile type rules (pto::Tile static checks and the arch's buffer capacity).
  void checkTileType(const TileType& t, SrcLoc loc, ValueId v);
  void checkTileBoxes(const TileType& t, SrcLoc loc, const std::string& what);
  void checkAlloc(const Op& op);
  /// A constant tile address: not negative, aligned, and the tile inside its buffer.
  void checkAddress(const TileType& t, int64_t addr, SrcLoc loc, ValueId tile);
  void checkAssign(const Op& op);
  void checkSubset(const Op& op);
  void checkTGetVal(const Op& op);
  void checkPrint(const Op& op);
  void checkTileOp(const Op& op);
  /// tgather reads one index per destination element, tscatter one per source element: an
  /// index tile whose valid region is smaller than that would be read past its valid region at
  /// run time.
  /// Attributes the block carries as B.IOR scalars (TileModes::ior): their range.
  void checkAttributeScalars(const Op& op, const std::string& name);
  void checkGatherCompare(const Op& op, const std::string& name);
  void checkGatherIndexShape(const Op& op, const std::string& name);
  void checkGatherBlocks(const Op& op, const std::string& name);
  void checkConcatIdx(const Op& op, const std::string& name);
  void checkScaleAddr(const Op& op, const std::string& name);
  void checkGatherCompareTypes(const std::string& name, const std::vector<Operand>& ops);
  void checkDequantTypes(const std::string& name, const std::vector<Operand>& ops,
                         const Operand* dst);
  void checkPartArgTypes(const std::string& name, const std::vector<Operand>& ops,
                         const Operand* dst);
  /// MGATHER / MSCATTER: index type, coalesce mode against the shapes, per-arch modes
  /// (asm/ir/VerifyGmIndexed.cpp).
  void checkGmIndexed(const Op& op, const std::string& name, const std::vector<Operand>& ops);
  static const Operand* roleTile(const std::vector<Operand>& ops, isa::RoleId role);
  void checkInsertTypes(const std::string& name, const std::vector<Operand>& ops,
                        const Operand* dst);
  void checkGatherTypes(const std::string& name, const std::vector<Operand>& ops,
                        const Operand* dst);
  void checkQuantType(const Op& op, const std::string& name);
  void checkMergeLists(const Op& op, const std::string& name);
  void checkMaskPattern(const Op& op, const std::string& name);
  void checkStoreCount(const std::string& name, const std::vector<Operand>& ops);
  /// TMOV/TSTORE's fixpipe forms (relu, quant word or scaling tile, atomic add, store phase,
  /// acc-to-vector mode): PTOAS's and pto-isa's rules (docs/verifier.md).
  void checkFixpipe(const Op& op, const std::string& name, const std::vector<Operand>& ops);
  void checkIndexCoverage(const isa::OpInfo& info, const std::string& name,
                          const std::vector<Operand>& ops, const Operand* dst);
  /// The locations and layouts the op's flags require of its tiles.
  void checkLocations(const isa::OpInfo& info, const std::string& name,
                      const std::vector<const Operand*>& tiles);
  /// TEXTRACT/TINSERT: the location pairs of the arch (isa::windowPairSupported); vec->vec
  /// windows address plain row-major (ND) tiles only.
  void checkWindowMove(const isa::OpInfo& info, const std::string& name,
                       const std::vector<const Operand*>& tiles, const std::vector<Operand>& ops);
  void checkVecWindowA2A3(const isa::OpInfo& info, const std::string& name, const Operand& src,
                          const Operand& dst, const std::vector<Operand>& ops);
  void dtypeError(const Operand& o, const std::string& name, const std::string& why);
  /// The element types of the operands under the op's type rule and the arch's dtype set.
  void checkTypes(const isa::OpInfo& info, const std::string& name, const std::vector<Operand>& ops,
                  const Operand* dst);
  /// Matmul dtype triples (acc, left, right) and shapes [M,K] x [K,N] -> [M,N].
  void checkMatmul(const std::string& name, const std::vector<Operand>& ops, const Operand* dst);
  /// The valid shapes the op's flags tie to the destination's (same, row or column reduce...).
  void checkShapes(const isa::OpInfo& info, const std::string& name,
                   const std::vector<Operand>& ops, const Operand* dst);
  /// "16x?": the valid shape of a tile.
  static std::string vshape(const TileType& t);
};

} // namespace pto::as::verify
