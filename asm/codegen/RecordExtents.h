// Buffer extents of pointer parameters (obj/Extent.h, docs/object-format.md): what a kernel may
// touch through each pointer parameter, computed from the IR where the views are still visible.
#pragma once

#include "asm/ir/IR.h"
#include "obj/Object.h"

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

} // namespace pto::as
