// Control-flow graphs of linked functions: the command words of one function decoded into
// blocks (docs/abi.md), their successors (FALL, BSTART DIRECT/COND, RET), the tile operands of
// each tile block (B.IOT, destination first) classified by the op's roles, and the sync blocks
// (SET_FLAG / WAIT_FLAG with their event id). The planner and the event allocator work on this.
#pragma once

#include "asm/mc/Blocks.h"
#include "obj/Object.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace pto::link {

// The one block decoder's (asm/mc/Blocks.h): a block is scalar code, one tile op, or one extension
// control op, whose op (ExtCtl) tells a sync block (SET_FLAG, WAIT_FLAG, PIPE_BARRIER) apart.
using Transfer = obj::code::Transfer;
using BlockKind = obj::code::BlockKind;
using ExtCtl = isa::enc::ExtCtl;

/// One tile operand of a tile block: a descriptor index of the function's tile table.
struct TileUse {
  uint32_t tile = 0;
  bool read = false;    // the op reads the tile (sources, accumulators, in-place destinations)
  bool write = false;   // the op writes the tile (destinations, scratch)
  bool scratch = false; // the op's `tmp` operand: clobbered, never holds a value across the op
};

struct Block {
  // Wide fields first, then the narrow ones: a block is 64 bytes (a graph has one per few words).
  uint64_t offset = 0, end = 0;    // byte offsets into .text: [offset, end)
  uint64_t eventWord = UINT64_MAX; // .text offset of the B.DIM ->LB0 word, UINT64_MAX when absent
  int64_t target = -1; // Direct, Cond, Call: the branch target's .text offset (-1: none)
  uint32_t firstUse = 0, numUses = 0; // TileUse range in FunctionCfg::uses
  int32_t succ[2] = {-1, -1};         // successor block indices (-1: none)
  int32_t eventId = 0; // constant event id (GPR zero + uimm17); meaningful when !dynamicEvent
  std::optional<isa::OpId> op; // Tile blocks with a known op
  Transfer transfer = Transfer::Fall;
  BlockKind kind = BlockKind::Scalar;
  ExtCtl control = ExtCtl::None; // Control blocks: the op (obj::code::BlockWords::control)
  isa::Pipe srcPipe = isa::Pipe::S,
            dstPipe = isa::Pipe::S; // set_flag / wait_flag; pipe_barrier: its pipe (both)
  bool dynamicEvent = false;        // the id comes from a GPR
};
static_assert(sizeof(Block) <= 64);

/// The sync blocks: a control block of that op.
inline bool isControl(const Block& b, ExtCtl c) {
  return b.kind == BlockKind::Control && b.control == c;
}
inline bool isSetFlag(const Block& b) {
  return isControl(b, ExtCtl::SET_FLAG);
}
inline bool isWaitFlag(const Block& b) {
  return isControl(b, ExtCtl::WAIT_FLAG);
}
/// set_flag or wait_flag: the blocks with an event.
inline bool isFlag(const Block& b) {
  return isSetFlag(b) || isWaitFlag(b);
}
inline bool isBarrier(const Block& b) {
  return isControl(b, ExtCtl::PIPE_BARRIER);
}

struct FunctionCfg {
  std::vector<Block> blocks; // in address order; block 0 is the entry
  std::vector<TileUse> uses;
  std::vector<uint32_t> predStart, preds; // CSR: preds of b are preds[predStart[b]..predStart[b+1])

  std::span<const TileUse> usesOf(const Block& b) const {
    return {uses.data() + b.firstUse, b.numUses};
  }
  std::span<const uint32_t> predsOf(uint32_t b) const {
    return {preds.data() + predStart[b], predStart[b + 1] - predStart[b]};
  }
  /// Fills predStart/preds from the successors.
  void computePreds();
  /// The block containing .text offset `off`, or -1.
  int32_t blockAt(uint64_t off) const;
};

/// Classifies the B.IOT operands of an op (destination first) by the op's roles: how many
/// tile operands are outputs, which optional roles are present, which one is the scratch.
std::vector<TileUse> classifyOperands(std::optional<isa::OpId> op, std::span<const uint32_t> tiles);

/// Decodes function `function` of `obj` into blocks. Errors name the offending word, whose
/// .text offset goes to `errorOffset` when given.
std::variant<FunctionCfg, std::string> buildCfg(const obj::ObjectFile& obj, uint32_t function,
                                                uint64_t* errorOffset = nullptr);

/// buildCfg on [begin, end) of `text`, for a function named `name` with `numTiles` tiles (the
/// words of a function, or whole blocks about to be inserted into one, link/Rewrite.h).
std::variant<FunctionCfg, std::string> decodeCfg(std::span<const uint8_t> text, uint64_t begin,
                                                 uint64_t end, const std::string& name,
                                                 size_t numTiles, uint64_t* errorOffset = nullptr);

/// The successors (and predecessors) of `cfg`'s blocks from their transfers and targets, as
/// buildCfg sets them; an error (naming the function as `where`, "@k") when a branch target is
/// not a block start.
std::optional<std::string> connectBlocks(FunctionCfg& cfg, const std::string& where,
                                         uint64_t* errorOffset = nullptr);

} // namespace pto::link
