// The op table's enums as text, for the readers of the table outside the assembler: the
// generated docs/ops.md (pto-isa-tables) and the Python module's pto.ops(). One spelling each.
#pragma once

#include "isa/Isa.h"

#include <string_view>
#include <vector>

namespace pto::isa {

/// "vector", "cube", "mte", "scalar".
std::string_view engineName(Engine e);
/// What the type rule requires, in words ("all tiles share the dst dtype", ...).
std::string_view ruleText(TypeRule r);
/// The suffix a role kind gets in an operand list: "" (tile), ":view", ":scalar", ":int",
/// ":float", ":any".
std::string_view roleKindSuffix(RoleKind k);
/// The op flags that constrain operands, in words ("A5 only", "vec tiles", ...), in table order.
std::vector<std::string_view> flagTexts(uint32_t flags);

} // namespace pto::isa
