// Prints docs/ops.md from the op table, so the documentation cannot drift from isa/Ops.def.
// A test compares its output with the committed file.
#include "isa/Isa.h"

#include <iostream>

using namespace pto::isa;

namespace {

std::string_view engineName(Engine e) {
  switch (e) {
  case Engine::Vector:
    return "vector";
  case Engine::Cube:
    return "cube";
  case Engine::Mte:
    return "mte";
  case Engine::Scalar:
    return "scalar";
  }
  return "?";
}

std::string_view ruleName(TypeRule r) {
  switch (r) {
  case TypeRule::SameAll:
    return "all tiles share the dst dtype";
  case TypeRule::SrcSet:
    return "sources in the set";
  case TypeRule::Cvt:
    return "TCVT conversion table";
  case TypeRule::Axpy:
    return "(dst, src): (f16,f16) (f32,f32) (f32,f16)";
  case TypeRule::Dequant:
    return "src i8/i16, dst/scale/offset f32";
  case TypeRule::Quant:
    return "src f32, dst i8/ui8";
  case TypeRule::Matmul:
    return "(acc, left, right) triples";
  case TypeRule::Mov:
    return "same dtype (acc sources may convert)";
  case TypeRule::Insert:
    return "acc->mat: f32 -> f16/bf16 (A5 also f32->f32, i32->i32); vec: same dtype";
  case TypeRule::Load:
    return "element sizes of tile and view match";
  case TypeRule::Store:
    return "element sizes match (acc sources may narrow)";
  case TypeRule::Gather:
    return "data in the set, indices i16/i32";
  case TypeRule::GatherCmp:
    return "src in the set (A2/A3 i32: cmpMode eq), dst/cdst i32 or ui32, scalar of src's type";
  case TypeRule::Any:
    return "any";
  }
  return "?";
}

std::string operands(const OpInfo& op, bool outputs) {
  std::string s;
  for (const Role& r : op.roles) {
    if (r.isOutput != outputs) continue;
    if (!s.empty()) s += ", ";
    s += std::string(r.name);
    switch (r.kind) {
    case RoleKind::Tile:
      break;
    case RoleKind::View:
      s += ":view";
      break;
    case RoleKind::Scalar:
      s += ":scalar";
      break;
    case RoleKind::IntScalar:
      s += ":int";
      break;
    case RoleKind::FloatScalar:
      s += ":float";
      break;
    case RoleKind::Any:
      s += ":any";
      break;
    }
    if (r.optional) s += "?";
    if (r.variadic) s += "...";
  }
  return s;
}

std::string flags(uint32_t f) {
  std::string s;
  auto add = [&](uint32_t bit, const char* text) {
    if (!(f & bit)) return;
    if (!s.empty()) s += ", ";
    s += text;
  };
  add(kA5Only, "A5 only");
  add(kA2A3Only, "A2/A3 only");
  add(kVecTiles, "vec tiles");
  add(kRowMajor, "row-major");
  add(kSameValid, "same valid shape");
  add(kReadsDst, "reads dst");
  add(kRowReduce, "row reduction");
  add(kColReduce, "column reduction");
  add(kRowExpand, "row broadcast");
  add(kColExpand, "column broadcast");
  add(kCubeLocs, "left/right/acc");
  return s;
}

} // namespace

int main() {
  std::cout
      << "# PTO tile operations\n\n"
         "Generated from `isa/Ops.def` by `pto-isa-tables` (a test keeps this file in sync).\n"
         "Operands are listed in DPS order: `pto.OP ins(inputs) outs(outputs)`; in the PTO-AS\n"
         "assembly form the outputs come first. `?` marks an optional operand.\n\n"
         "| op | pipe | engine | ins | outs | dtypes A2/A3 | dtypes A5 | type rule | constraints "
         "|\n"
         "|---|---|---|---|---|---|---|---|---|\n";
  for (const OpInfo& op : allOps()) {
    std::cout << "| `pto." << op.mnemonic << "` | " << spelling(op.pipe) << " | "
              << engineName(op.engine) << " | " << operands(op, false) << " | "
              << operands(op, true) << " | " << op.a2a3Types.describe() << " | "
              << op.a5Types.describe() << " | " << ruleName(op.rule) << " | " << flags(op.flags)
              << " |\n";
  }
  std::cout
      << "\n## TCVT conversions\n\n| src | A2/A3 destinations | A5 destinations |\n|---|---|---|\n";
  for (unsigned s = 0; s < kNumDTypes; ++s) {
    std::string a, b;
    for (unsigned d = 0; d < kNumDTypes; ++d) {
      DType src = static_cast<DType>(s), dst = static_cast<DType>(d);
      if (cvtSupported(Arch::A2A3, src, dst))
        a += (a.empty() ? "" : ", ") + std::string(spelling(dst));
      if (cvtSupported(Arch::A5, src, dst))
        b += (b.empty() ? "" : ", ") + std::string(spelling(dst));
    }
    if (a.empty() && b.empty()) continue;
    std::cout << "| " << spelling(static_cast<DType>(s)) << " | " << (a.empty() ? "—" : a) << " | "
              << (b.empty() ? "—" : b) << " |\n";
  }
  std::cout << "\n## Buffers\n\n| loc | A2/A3 bytes | A5 bytes | address alignment "
               "|\n|---|---|---|---|\n";
  for (auto name : spellingsLoc()) {
    Loc l = *parseLoc(name);
    std::cout << "| " << name << " | " << buffer(Arch::A2A3, l).capacity << " | "
              << buffer(Arch::A5, l).capacity << " | " << buffer(Arch::A2A3, l).alignment << " |\n";
  }
  return 0;
}
