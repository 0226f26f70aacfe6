// Attribute values read from their canonical text, once, by the parser: integers, the pipe ops'
// attributes and the tile-op attributes of isa/OpAttrs.def. Past the parser every layer reads
// the typed results (ir::PipeAttrs, ir::TileModes), never an attribute's name or text.
#pragma once

#include "asm/ir/IR.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace pto::as {

/// The integer an attribute spells ("1 : i32", "1"); nullopt when absent or not an integer.
/// attrValueInt also reads `true` / `false` as 1 / 0.
std::optional<int64_t> attrValueInt(std::span<const ir::NamedAttr> attrs, std::string_view key);
std::optional<int64_t> attrInt(const ir::Op& op, std::string_view key);

/// The typed PipeAttrs of a reserve / import / pipe init op's attribute text.
ir::PipeAttrs readPipeAttrs(std::span<const ir::NamedAttr> attrs);

/// A tile op's attributes of isa/OpAttrs.def (op.tileOp and op.attrs set): each read into
/// op.modes's readings by its row's domain, the Ior rows into the B.IOR scalars after the
/// operands (TTRI's upperOrLower is "B.IOR Diagonal, Orientation"; an absent or zero one is
/// left out, the block's default), TRANDOM's rounds into modes.rounds. The builder calls it for
/// every tile op it makes.
void readTileOpAttributes(ir::Op& op);

} // namespace pto::as
