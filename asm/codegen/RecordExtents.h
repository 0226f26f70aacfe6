// Buffer extents of pointer parameters (obj/Extent.h, docs/object-format.md): what a kernel may
// touch through each pointer parameter, computed from the IR where the views are still visible.
#pragma once

#include "asm/ir/IR.h"
#include "obj/Object.h"

#include <map>

namespace pto::as {

/// For each pointer parameter of function `fn`: the element extent as an obj/Extent.h expression
/// over the integer scalar parameters ("" when some access cannot be bounded), and whether its
/// values are used as indices or offsets. Indexed like fn.body.args (non-pointers get {"", false}).
struct PointerUse {
  std::string extent;
  bool indexValues = false;
};
std::vector<PointerUse> pointerUses(const ir::Function& fn);

/// Fills Param::extent / Param::indexValues of every pointer parameter of the object's
/// functions from the module they were lowered from (matched by name).
void recordExtents(const ir::Module& m, obj::ObjectFile& object);

/// recordExtents in two steps, for a module whose bodies go before the object is made
/// (lowerModuleReleasing): the pointer uses of every defined function by name, then their
/// extents filled in (from the functions' signatures only).
using ModuleExtents = std::map<std::string, std::vector<PointerUse>>;
ModuleExtents collectExtents(const ir::Module& m);
void applyExtents(const ir::Module& m, const ModuleExtents& extents, obj::ObjectFile& object);

} // namespace pto::as
