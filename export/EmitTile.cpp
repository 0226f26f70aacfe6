// FunctionEmitter (export/Emitter.h): a tile block as one pto-isa intrinsic call: operands
// matched to the op's roles, GlobalTensor views for the GM operands, scalar operands, trailing
// attributes (TCVT's rounding, compare modes), scratch tmp tiles, and the dynamic valid shapes
// set before the call.
#include "export/Emitter.h"
#include "export/Spelling.h"

#include "isa/Encoding.h"
#include "isa/Fixpipe.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>

namespace pto::cppexport::detail {

namespace enc = isa::enc;

namespace {
/// The algorithm template argument of a precision form, as PTOAS's EmitC writes it: the
/// high-precision forms name HIGH_PRECISION; TSQRT names its default (pto-isa's TSQRT needs one).
std::string precisionTemplate(isa::OpId op) {
  if (op == isa::OpId::TSQRT) return "<SqrtAlgorithm::DEFAULT>";
  if (isa::defaultPrecisionForm(op) == op) return "";
  std::string family(isa::precisionFamily(op)); // "rsqrt" -> RsqrtAlgorithm
  family[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(family[0])));
  return "<" + family + "Algorithm::HIGH_PRECISION>";
}

/// Matches B.IOT operands to the op's tile roles (docs/linking.md, section 2).
/// The operand index of each role (-1: absent), by isa::tileOperandRoles.
std::vector<int> matchTiles(const isa::OpInfo& oi, size_t n) {
  std::vector<int> at(oi.roles.size(), -1);
  const std::vector<int> roles = isa::tileOperandRoles(oi, n);
  for (size_t k = 0; k < n; ++k)
    if (roles[k] >= 0 && at[static_cast<size_t>(roles[k])] < 0)
      at[static_cast<size_t>(roles[k])] = static_cast<int>(k);
  return at;
}

/// Whether pto-isa declares the op with a tmp tile only (pto_instr.hpp).
bool needsTmp(const TileBlock& t, const isa::OpInfo& oi, const std::vector<int>& at) {
  using enum isa::OpId;
  switch (t.op) {
  case TGATHER: // the index form; the mask-pattern form has no tmp
    for (size_t k = 0; k < oi.roles.size(); ++k)
      if (oi.roles[k].id == isa::RoleId::Indices) return at[k] >= 0;
    return false;
  case TROWSUM:
  case TROWMAX:
  case TROWMIN:
  case TROWPROD:
  case TROWARGMAX:
  case TROWARGMIN:
  case TCOLARGMAX:
  case TCOLARGMIN:
  case TREM:
  case TXOR:
  case TPRELU:
  case TSEL:
  case TREMS:
  case TXORS:
  case TSELS:
    return true;
  default:
    return false;
  }
}

} // namespace

isa::DType FunctionEmitter::scalarType(const isa::OpInfo& oi, const TileBlock& t,
                                       const std::vector<int>& at) const {
  for (isa::RoleId want : {isa::RoleId::Src, isa::RoleId::Src0})
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (oi.roles[r].id == want && at[r] >= 0)
        return fn_.tiles[t.tiles[static_cast<size_t>(at[r])]].dtype;
  for (size_t r = 0; r < oi.roles.size(); ++r)
    if (at[r] >= 0 && !oi.roles[r].isOutput && oi.roles[r].id != isa::RoleId::Tmp)
      return fn_.tiles[t.tiles[static_cast<size_t>(at[r])]].dtype;
  // No data source (TCI, TEXPANDS): the scalar has the destination's type; a tmp tile's
  // element type is pto-isa's scratch, not the data's.
  for (size_t r = 0; r < oi.roles.size(); ++r)
    if (at[r] >= 0 && oi.roles[r].isOutput)
      return fn_.tiles[t.tiles[static_cast<size_t>(at[r])]].dtype;
  return t.tiles.empty() ? t.startType : fn_.tiles[t.tiles[0]].dtype;
}

std::optional<std::string> FunctionEmitter::globalTensor(const Block& b, isa::DType elem,
                                                         std::string& decl) {
  const TileBlock& t = b.tile;
  if (!t.ior) return std::string("a GM operand without B.IOR");
  unsigned bits = isa::bitWidth(elem);
  if (bits < 8) return "GM tensors of " + std::string(isa::spelling(elem)) + " (sub-byte elements)";
  const unsigned bytes = bits / 8;
  const uint8_t addr = (*t.ior)[0], strideReg = (*t.ior)[1];
  std::string rows = bound(t.dim[1], 1), cols = bound(t.dim[0], 1);
  bool rowsDyn = t.dim[1].present && !t.dim[1].isConstant(),
       colsDyn = t.dim[0].present && !t.dim[0].isConstant();
  std::optional<uint64_t> stride = known_[strideReg];
  std::string shape = "Shape<1, 1, 1, " + (rowsDyn ? std::string("-1") : rows) + ", " +
                      (colsDyn ? std::string("-1") : cols) + ">";
  // The GM side of the B.DATR layout: ND, or DN (column-major: the stride is between columns).
  bool dn = false;
  if (t.datr && t.datr->layout != 0) {
    const bool load = t.op == isa::OpId::TLOAD || t.op == isa::OpId::TPREFETCH;
    const std::string_view name = isa::enc::layoutName(t.datr->layout);
    const std::string_view gm =
        load ? name.substr(0, name.find('2')) : name.substr(name.rfind('2') + 1);
    if (gm != "ND" && gm != "DN") return "GM layout " + std::string(name);
    dn = gm == "DN";
  }
  const std::string outer = stride ? std::to_string(*stride / bytes) : std::string("-1");
  std::string strideT =
      dn ? "Stride<1, 1, 1, 1, " + outer + ">" : "Stride<1, 1, 1, " + outer + ", 1>";
  std::string type = cppType(elem);
  decl = "    using GT = GlobalTensor<" + type + ", " + shape + ", " + strideT +
         (dn ? ", Layout::DN" : "") + ">;\n";
  decl += "    GT gm(reinterpret_cast<__gm__ " + type + "*>(" + reg(addr) + ")";
  if (rowsDyn || colsDyn || !stride) {
    std::vector<std::string> dyn;
    if (rowsDyn) dyn.push_back(rows);
    if (colsDyn) dyn.push_back(cols);
    decl += ", GT::Shape(";
    for (size_t i = 0; i < dyn.size(); ++i)
      decl += (i ? ", " : "") + dyn[i];
    decl += "), GT::Stride(";
    if (!stride)
      decl += "static_cast<int64_t>(" + reg(strideReg) + " / " + std::to_string(bytes) + ")";
    decl += ")";
  }
  decl += ");\n";
  return std::nullopt;
}

std::variant<std::string, FunctionEmitter::Why>
FunctionEmitter::callText(const TileBlock& t, const std::string& intrinsic,
                          const std::vector<std::string>& args) {
  const std::array<uint8_t, 3> iorRegs = t.ior.value_or(std::array<uint8_t, 3>{0, 0, 0});
  std::string call;
  if (t.op == isa::OpId::TSETVAL && args.size() < 3)
    return Why{"it needs a tile, an offset and a value"};
  if (t.op == isa::OpId::TSETVAL) {
    // dst.SetValue(offset, value): the destination is args[0].
    call = args[0] + ".SetValue(" + args[1] + ", " + args[2] + ")";
  } else {
    std::string targs = precisionTemplate(t.op), name = intrinsic;
    if (t.fix != isa::fix::Attrs{} || (t.op == isa::OpId::TMOV && t.tiles.size() > 2)) {
      const auto kind = isa::fix::kindOf(t.fix.quant);
      auto f = fixpipeTemplate(t, args, kind == isa::fix::QuantKind::Scalar,
                               kind == isa::fix::QuantKind::Vector);
      if (f.index() == 1) return Why{std::get<1>(f)};
      targs = std::get<0>(f);
      // pto-isa names the store with a scaling tile TSTORE_FP.
      if (t.op == isa::OpId::TSTORE && kind == isa::fix::QuantKind::Vector) name = "TSTORE_FP";
    }
    auto callWith = [&](const std::string& templateArgs) {
      std::string c = name + templateArgs + "(";
      for (size_t i = 0; i < args.size(); ++i)
        c += (i ? ", " : "") + args[i];
      return c + ")";
    };
    if (t.op == isa::OpId::TCI && !t.tiles.empty()) {
      // pto-isa's TCI<TileData, T, descending>: nothing deduces the last two, and the direction
      // is a template argument where the image has a register (B.IOR Direction), so a block
      // with one calls both instantiations under a run-time test.
      auto tci = [&](int descending) {
        return callWith("<decltype(" + args[0] + "), " + cppType(fn_.tiles[t.tiles[0]].dtype) +
                        ", " + std::to_string(descending) + ">");
      };
      call = iorRegs[1] == kZeroReg ? tci(0)
                                    : "if (" + reg(iorRegs[1]) + ") " + tci(1) + "; else " + tci(0);
    } else {
      call = callWith(targs);
    }
  }
  return call;
}

/// The order of an intrinsic's arguments by role: outputs, then inputs, each in signature order,
/// except where pto-isa's intrinsic interleaves them (TPARTARGMAX(dstVal, src0Val, src1Val,
/// dstIdx, src0Idx, src1Idx)).
static std::vector<size_t> argumentOrder(const isa::OpInfo& oi) {
  using R = isa::RoleId;
  std::vector<isa::RoleId> wanted;
  if (oi.id == isa::OpId::TPARTARGMAX || oi.id == isa::OpId::TPARTARGMIN)
    wanted = {R::Dst, R::Src0, R::Src1, R::DstIdx, R::Src0Idx, R::Src1Idx};
  std::vector<size_t> order;
  for (R id : wanted)
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (oi.roles[r].id == id) order.push_back(r);
  if (!order.empty()) return order;
  for (bool outputs : {true, false})
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (oi.roles[r].isOutput == outputs) order.push_back(r);
  return order;
}

std::optional<ExportError> FunctionEmitter::tile(const Block& b) {
  const TileBlock& t = b.tile;
  const isa::OpInfo& oi = isa::info(t.op);
  Intrinsic in = intrinsicFor(t.op);
  const std::string shown = t.op == isa::OpId::PRINT ? "print" : std::string(oi.mnemonic);
  auto fail = [&](const std::string& why) {
    return error(b.offset, "'pto." + shown + "' cannot be exported: " + why);
  };
  if (in.name.empty()) return fail(in.why);
  if (t.op == isa::OpId::TASSIGN) return assign(b);
  if (t.op == isa::OpId::TGATHER && t.ior)
    return fail("pto-isa's TGATHER takes its mask pattern as a template argument, and the image "
                "carries it in a register (B.IOR)");
  if ((t.op == isa::OpId::MGATHER || t.op == isa::OpId::MSCATTER) && t.ior &&
      (*t.ior)[2] != kZeroReg)
    return fail("pto-isa's " + std::string(t.op == isa::OpId::MGATHER ? "MGATHER" : "MSCATTER") +
                " takes its coalesce, out-of-bounds and atomic modes as template arguments, and "
                "the image carries them in a register (B.IOR RegSrc2, docs/encoding.md 5.5)");
  for (const isa::Role& r : oi.roles)
    if (r.variadic) return fail("variadic operands have no fixed pto-isa signature");
  std::vector<int> at = matchTiles(oi, t.tiles.size());
  for (uint32_t idx : t.tiles)
    tileUsed_.insert(idx);
  std::vector<std::string> args;
  std::string gmDecl;
  unsigned ior = 0;
  const std::array<uint8_t, 3> iorRegs = t.ior.value_or(std::array<uint8_t, 3>{0, 0, 0});
  auto addRole = [&](size_t r) -> std::optional<ExportError> {
    const isa::Role& role = oi.roles[r];
    switch (role.kind) {
    case isa::RoleKind::Tile:
      if (at[r] >= 0) {
        // pto-isa's TCOLSUM with a tmp also takes isBinary; without it, it sums in order.
        if (!(t.op == isa::OpId::TCOLSUM && role.id == isa::RoleId::Tmp))
          args.push_back(tileNames_[t.tiles[static_cast<size_t>(at[r])]]);
      } else if (role.id == isa::RoleId::Tmp && needsTmp(t, oi, at)) {
        // pto-isa declares these with a tmp tile only; the image has none, so a scratch tile
        // like the one pto-isa sizes it by (TGATHER: the indices; otherwise the source).
        int like = 0;
        for (isa::RoleId want : {isa::RoleId::Indices, isa::RoleId::Src, isa::RoleId::Src0})
          for (size_t k = 0; k < oi.roles.size() && !like; ++k)
            if (oi.roles[k].id == want && at[k] >= 0) like = at[k];
        auto tmp = scratchLike(t.tiles[static_cast<size_t>(like)]);
        if (!tmp) return fail("no room in the vector buffer for the tmp tile pto-isa needs");
        args.push_back(*tmp);
      } else if (!role.optional) {
        return fail("its tile operand '" + std::string(role.name) + "' is missing");
      }
      return std::nullopt;
    case isa::RoleKind::View: {
      // A load's GM type is its destination's; a store's is its source's, or the type
      // B.DATR names when the store converts (acc f32 -> f16 through the fixpipe).
      isa::DType elem = t.tiles.empty() ? t.startType : fn_.tiles[t.tiles[0]].dtype;
      if (role.isOutput && t.datr) elem = enc::dtypeOfCode(t.datr->dataType).value_or(elem);
      if (auto e = globalTensor(b, elem, gmDecl)) return fail(*e);
      ior = 2;
      args.push_back("gm");
      return std::nullopt;
    }
    default: {
      if (ior >= 3) return fail("more than three scalar operands");
      uint8_t r0 = iorRegs[ior++];
      if (role.id == isa::RoleId::Pre &&
          isa::fix::kindOf(t.fix.quant) == isa::fix::QuantKind::Scalar) {
        args.push_back("static_cast<uint64_t>(" + reg(r0) + ")");
        return std::nullopt;
      }
      if (role.optional) {
        if (r0 == kZeroReg) return std::nullopt;
        return fail("the optional scalar operand '" + std::string(role.name) + "'");
      }
      args.push_back(scalarArg(role, r0, scalarType(oi, t, at)));
      return std::nullopt;
    }
    }
  };
  for (size_t r : argumentOrder(oi))
    if (auto e = addRole(r)) return e;
  auto extra = trailing(b, oi);
  if (auto* e = std::get_if<std::string>(&extra)) return fail(*e);
  for (const std::string& a : std::get<std::vector<std::string>>(extra))
    args.push_back(a);
  setValidShapes(b, oi, at);
  auto made = callText(t, in.name, args);
  if (auto* why = std::get_if<1>(&made)) return fail(why->text);
  const std::string& call = std::get<0>(made);
  if (gmDecl.empty())
    body_ << "  " << call << ";\n";
  else
    body_ << "  {\n" << gmDecl << "    " << call << ";\n  }\n";
  return std::nullopt;
}

namespace {
std::string cppName(isa::ReluPreMode m) {
  return m == isa::ReluPreMode::NormalRelu ? "ReluPreMode::NormalRelu" : "ReluPreMode::NoRelu";
}
std::string cppName(isa::AtomicType a) {
  return a == isa::AtomicType::Add ? "AtomicType::AtomicAdd" : "AtomicType::AtomicNone";
}
std::string cppName(isa::StPhase p) {
  return p == isa::StPhase::Final ? "STPhase::Final" : "STPhase::Partial";
}
std::string cppName(isa::AccToVecMode m) {
  switch (m) {
  case isa::AccToVecMode::SingleVec0:
    return "AccToVecMode::SingleModeVec0";
  case isa::AccToVecMode::SingleVec1:
    return "AccToVecMode::SingleModeVec1";
  case isa::AccToVecMode::DualSplitM:
    return "AccToVecMode::DualModeSplitM";
  case isa::AccToVecMode::DualSplitN:
    return "AccToVecMode::DualModeSplitN";
  }
  return "";
}
} // namespace

std::variant<std::string, std::string>
FunctionEmitter::fixpipeTemplate(const TileBlock& t, const std::vector<std::string>& args, bool pre,
                                 bool fp) {
  using R = std::variant<std::string, std::string>;
  const isa::fix::Attrs& a = t.fix;
  const bool phase = a.phase != isa::StPhase::Unspecified;
  std::string s = "<" + (phase ? cppName(a.phase) + ", " : std::string());
  if (t.op == isa::OpId::TSTORE && fp) {
    // TSTORE_FP<TileData, GlobalData, FpTileData, AtomicType, ReluPreMode>(gm, src, fp)
    if (phase)
      return R{std::in_place_index<1>, "pto-isa's TSTORE_FP takes no unit-flag phase (stPhase)"};
    return R{std::in_place_index<0>, "<decltype(" + args[1] + "), GT, decltype(" + args[2] + "), " +
                                         cppName(a.atomic) + ", " + cppName(a.relu) + ">"};
  }
  if (t.op == isa::OpId::TSTORE) {
    // TSTORE<[Phase,] TileData, GlobalData, AtomicType[, ReluPreMode]>(gm, src[, pre])
    s += "decltype(" + args[1] + "), GT, " + cppName(a.atomic);
    if (a.relu != isa::ReluPreMode::NoRelu || pre) s += ", " + cppName(a.relu);
    return R{std::in_place_index<0>, s + ">"};
  }
  // TMOV<[Phase,] Dst, Src, [Fp,] [AccToVecMode,] [ReluPreMode]>(dst, src[, fp | pre])
  s += "decltype(" + args[0] + "), decltype(" + args[1] + ")";
  const bool mode = a.accToVec != isa::AccToVecMode::SingleVec0;
  if (fp) s += ", decltype(" + args[2] + "), " + cppName(a.accToVec);
  if (!fp && mode) s += ", " + cppName(a.accToVec);
  if (fp || mode || pre || a.relu != isa::ReluPreMode::NoRelu) s += ", " + cppName(a.relu);
  return R{std::in_place_index<0>, s + ">"};
}

/// TASSIGN(tile, addr) with the run-time address: a root's is the register; a view's is its
/// parent's static address plus the register (a view of a run-time tile is refused).
std::optional<ExportError> FunctionEmitter::assign(const Block& b) {
  const TileBlock& t = b.tile;
  if (t.tiles.size() != 1 || !t.ior)
    return error(b.offset, "TASSIGN needs one tile and its address in B.IOR");
  const uint32_t idx = t.tiles[0];
  tileUsed_.insert(idx);
  const TileDesc& d = fn_.tiles[idx];
  std::string addr = reg((*t.ior)[0]);
  if (d.aliasOf >= 0) {
    const TileDesc& p = fn_.tiles[static_cast<size_t>(d.aliasOf)];
    if (p.placement < 0)
      return error(b.offset, "'pto.tassign' cannot be exported: tile %" + d.name +
                                 " is bound at run time inside %" + p.name +
                                 ", which is placed at run time too");
    addr = support::hex0x(static_cast<uint64_t>(p.placement)) + " + " + addr;
  }
  body_ << "  TASSIGN(" << tileNames_[idx] << ", " << addr << ");\n";
  return std::nullopt;
}

std::string FunctionEmitter::scalarArg(const isa::Role& role, uint8_t r, isa::DType type) {
  using enum isa::RoleId;
  static const std::set<isa::RoleId> counts = {Row, Col, Diagonal, Offset, Blocklen, Pre};
  if (role.kind == isa::RoleKind::IntScalar && counts.count(role.id))
    return "static_cast<int32_t>(" + reg(r) + ")";
  return "pto_export::bits<" + cppType(type) + ">(" + reg(r) + ")";
}

std::variant<std::vector<std::string>, std::string>
FunctionEmitter::trailing(const Block& b, const isa::OpInfo& oi) {
  const TileBlock& t = b.tile;
  if (t.op == isa::OpId::TCVT) {
    if (!t.datr) return std::string("TCVT without B.DATR");
    auto rm = roundModeOfCode(t.datr->rmode);
    if (!rm)
      return "rounding mode " + std::string(enc::rmodeName(t.datr->rmode)) +
             " has no pto-isa RoundMode";
    return std::vector<std::string>{"RoundMode::" + std::string(isa::spelling(*rm)),
                                    std::string("SaturationMode::") + (t.datr->sat ? "ON" : "OFF")};
  }
  if (t.op == isa::OpId::TCMP || t.op == isa::OpId::TCMPS) {
    auto cm = cmpModeOfCode(t.datr ? t.datr->cmode : 0);
    if (!cm) return std::string("unknown compare mode");
    std::string s(isa::spelling(*cm));
    for (char& c : s)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return std::vector<std::string>{"CmpMode::" + s};
  }
  (void)oi;
  return std::vector<std::string>{};
}

void FunctionEmitter::setValidShapes(const Block& b, const isa::OpInfo& oi,
                                     const std::vector<int>& at) {
  const TileBlock& t = b.tile;
  if (oi.rule == isa::TypeRule::Matmul || t.tiles.empty()) return;
  bool hasTileOut = false;
  for (size_t r = 0; r < oi.roles.size(); ++r)
    hasTileOut |= oi.roles[r].kind == isa::RoleKind::Tile && oi.roles[r].isOutput && at[r] >= 0;
  const bool fromSource = isa::shapeFrom(oi, hasTileOut) == isa::ShapeFrom::Source;
  std::set<uint32_t> shaped;
  size_t shapeOperand = fromSource && hasTileOut ? 1 : 0;
  if (shapeOperand < t.tiles.size()) shaped.insert(t.tiles[shapeOperand]);
  if (oi.flags & isa::kSameValid) shaped.insert(t.tiles.begin(), t.tiles.end());
  // A reduction's destination has the source's rows (TROW*) or columns (TCOL*) and one column
  // or row: pto-isa's later readers (TROWEXPAND*...) read it by its valid shape.
  const bool rowReduce = oi.flags & isa::kRowReduce, colReduce = oi.flags & isa::kColReduce;
  if ((rowReduce || colReduce) && hasTileOut && !shaped.count(t.tiles[0])) {
    const TileDesc& d = fn_.tiles[t.tiles[0]];
    const std::string& n = tileNames_[t.tiles[0]];
    const bool r = d.validRows == kDynamicDim, c = d.validCols == kDynamicDim;
    const std::string rows = rowReduce ? bound(t.dim[1], 1) : "1",
                      cols = rowReduce ? "1" : bound(t.dim[0], 1);
    if (r && c)
      body_ << "  " << n << ".SetValidShape(" << rows << ", " << cols << ");\n";
    else if (r)
      body_ << "  " << n << ".SetValidRow(" << rows << ");\n";
    else if (c)
      body_ << "  " << n << ".SetValidCol(" << cols << ");\n";
  }
  for (uint32_t idx : shaped) {
    const TileDesc& d = fn_.tiles[idx];
    bool r = d.validRows == kDynamicDim, c = d.validCols == kDynamicDim;
    if (!r && !c) continue;
    const std::string& n = tileNames_[idx];
    std::string rows = bound(t.dim[1], 1), cols = bound(t.dim[0], 1);
    if (r && c)
      body_ << "  " << n << ".SetValidShape(" << rows << ", " << cols << ");\n";
    else if (r)
      body_ << "  " << n << ".SetValidRow(" << rows << ");\n";
    else
      body_ << "  " << n << ".SetValidCol(" << cols << ");\n";
  }
}

} // namespace pto::cppexport::detail
