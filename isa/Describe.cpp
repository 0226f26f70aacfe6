#include "isa/Describe.h"

namespace pto::isa {

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

std::string_view ruleText(TypeRule r) {
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
  case TypeRule::PartArg:
    return "values in the set, alike; indices alike: i16/u16/i32/u32 for f16, i32/u32 for f32";
  case TypeRule::Any:
    return "any";
  }
  return "?";
}

std::string_view roleKindSuffix(RoleKind k) {
  switch (k) {
  case RoleKind::Tile:
    return "";
  case RoleKind::View:
    return ":view";
  case RoleKind::Scalar:
    return ":scalar";
  case RoleKind::IntScalar:
    return ":int";
  case RoleKind::FloatScalar:
    return ":float";
  case RoleKind::Any:
    return ":any";
  }
  return "";
}

std::vector<std::string_view> flagTexts(uint32_t f) {
  static constexpr std::pair<uint32_t, std::string_view> kTexts[] = {
      {kA5Only, "A5 only"},
      {kA2A3Only, "A2/A3 only"},
      {kVecTiles, "vec tiles"},
      {kRowMajor, "row-major"},
      {kSameValid, "same valid shape"},
      {kReadsDst, "reads dst"},
      {kRowReduce, "row reduction"},
      {kColReduce, "column reduction"},
      {kRowExpand, "row broadcast"},
      {kColExpand, "column broadcast"},
      {kCubeLocs, "left/right/acc"},
  };
  std::vector<std::string_view> out;
  for (const auto& [bit, text] : kTexts)
    if (f & bit) out.push_back(text);
  return out;
}

} // namespace pto::isa
