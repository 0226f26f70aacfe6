// The reference interpreter: GM views, scalar memory, tiles and tile ops (docs/runtime.md,
// "The reference interpreter"). Tile ops run through the cpu backend's kernels: each op becomes
// an rt::TileInst built from the IR (operands by role, valid shape, GM address and scalars in
// registers of the interpreter's own rt::Core).
#include "isa/Encoding.h"
#include "isa/Numerics.h"
#include "isa/OpAttrs.h"
#include "isa/PrintFormat.h"
#include "isa/Random.h"
#include "isa/TileLayout.h"
#include "ref/Exec.h"
#include "ref/Scalar.h"
#include "support/Escape.h"
#include "support/Numbers.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>

namespace pto::ref {

using ir::Op;
using ir::OpKind;
using ir::TypeKind;
namespace enc = isa::enc;

bool Machine::constantOperand(const Frame& f, ir::ValueId v) const {
  auto it = defs_.find({f.fn, v});
  return it != defs_.end() && it->second->kind == OpKind::Constant;
}

rt::TileOperand Machine::operand(const TileVal& t, const std::string& name) const {
  rt::TileOperand o;
  o.loc = static_cast<uint8_t>(t.type.loc);
  o.dtype = t.type.dtype;
  o.blayout = t.type.blayout;
  o.slayout = t.type.slayout;
  o.offset = t.offset;
  o.rows = static_cast<uint32_t>(t.type.rows);
  o.cols = static_cast<uint32_t>(t.type.cols);
  o.validRows = static_cast<int32_t>(t.type.validRows);
  o.validCols = static_cast<int32_t>(t.type.validCols);
  o.pad = t.type.pad;
  o.name = name;
  const isa::InnerBox box = isa::innerBox(t.type.dtype, t.type.slayout, t.type.fractal);
  o.innerRows = box.rows; // the fractal box (reference 4.3)
  o.innerCols = box.cols;
  return o;
}

/// A dynamic valid row or column count as the core reads it from its register: the low 16 bits
/// ((GPR + imm)[15:0], asm/mc/ImageCode.h), so that -1 is 65535 and exceeds the tile on the
/// reference interpreter as on cpu and npu (it ran silently here).
static int64_t validExtent(uint64_t value) {
  return static_cast<int64_t>(value & 0xffff);
}

std::optional<Failure> Machine::tileAlloc(Frame& f, const Op& op) {
  const ir::TileType& t = f.fn->type(op.results[0]).tile;
  TileVal tv{t, 0, t.validRows, t.validCols};
  size_t k = 0;
  const unsigned l = static_cast<unsigned>(t.loc);
  if (op.ints[0]) { // addr = N: at that address of the physical buffer
    const uint64_t addr = scalar(f, op.operands[k++]);
    if (addr + t.byteSize() > isa::buffer(arch_, t.loc).capacity)
      return Failure{op.loc, "tile %" + f.fn->value(op.results[0]).name + " at address " +
                                 std::to_string(addr) + " does not fit the " +
                                 std::string(isa::spelling(t.loc)) + " buffer"};
    tv.offset = static_cast<uint32_t>(addr);
  } else {
    auto it = placed_.find(&op);
    if (it == placed_.end()) { // storage of its own, above every explicit address
      it = placed_.emplace(&op, static_cast<uint32_t>(nextFree_[l])).first;
      nextFree_[l] += (t.byteSize() + 63) / 64 * 64;
    }
    tv.offset = it->second;
  }
  if (op.ints[1]) tv.validRows = validExtent(scalar(f, op.operands[k++]));
  if (op.ints[2]) tv.validCols = validExtent(scalar(f, op.operands[k++]));
  f.v[op.results[0]] = tv;
  return std::nullopt;
}

namespace {
Failure unsupported(const Op& op, const std::string& what) {
  return Failure{op.loc, what + " is not supported by the reference interpreter"};
}
} // namespace

/// make_tensor_view: ptr, shape..., strides...; memref.reinterpret_cast: view, offset (in
/// elements from the view's base), sizes..., strides...
std::optional<Failure> Machine::makeView(Frame& f, const Op& op) {
  const bool cast = op.kind == OpKind::ReinterpretView;
  const size_t rank = static_cast<size_t>(op.ints[0]), at = cast ? 2 : 1;
  ViewVal v;
  v.elem = f.fn->type(op.results[0]).elem;
  if (cast) // the offset in exact arithmetic (rt::Core::offsetAddress)
    v.base = core_.offsetAddress(
        std::get<ViewVal>(f.v[op.operands[0]]).base,
        static_cast<obj::WideInt>(static_cast<int64_t>(scalar(f, op.operands[1]))) *
            (isa::bitWidth(v.elem) / 8),
        std::max(1u, isa::bitWidth(v.elem) / 8));
  else
    v.base = scalar(f, op.operands[0]);
  for (size_t i = 0; i < rank; ++i)
    v.shape.push_back(static_cast<int64_t>(scalar(f, op.operands[at + i])));
  for (size_t i = 0; i < rank; ++i)
    v.strides.push_back(static_cast<int64_t>(scalar(f, op.operands[at + rank + i])));
  if (op.layout == ir::ViewLayout::Unsupported)
    return unsupported(op, "a tensor view with layout " + op.attr("layout")->value);
  v.dn = op.layout == ir::ViewLayout::DN;
  // Without the attribute, constant strides with a unit outer stride mean DN (PTOAS's inference).
  if (op.layout == ir::ViewLayout::Inferred && rank >= 2 &&
      constantOperand(f, op.operands[at + 2 * rank - 1]) &&
      constantOperand(f, op.operands[at + 2 * rank - 2]))
    v.dn = v.strides[rank - 2] == 1 && v.strides[rank - 1] != 1;
  f.v[op.results[0]] = v;
  return std::nullopt;
}

std::optional<Failure> Machine::partitionView(Frame& f, const Op& op) {
  ViewVal v = std::get<ViewVal>(f.v[op.operands[0]]);
  const size_t rank = static_cast<size_t>(op.ints[0]);
  if (rank != v.shape.size())
    return unsupported(op, "a partition of rank " + std::to_string(rank) + " of a rank " +
                               std::to_string(v.shape.size()) + " view");
  // The offsets in exact arithmetic (each product fits 128 bits): an offset that leaves the
  // argument is an error at the access naming it, not a wrapped address (rt::Core).
  // Beyond +-2^125 elements (+-2^(126 - log2 bytes) once scaled) the value is clamped, as
  // the compiled code's (runtime/ScalarInterp.h): still outside any argument, never an
  // overflow of 128 bits.
  const unsigned bits = isa::bitWidth(v.elem);
  const obj::WideInt cap = obj::WideInt{1}
                           << std::min(125, 126 - std::countr_zero(std::max(1u, bits / 8)));
  auto clamp = [&](obj::WideInt x) { return x > cap ? cap : x < -cap ? -cap : x; };
  obj::WideInt elems = 0;
  for (size_t i = 0; i < rank; ++i)
    elems =
        clamp(elems +
              clamp(static_cast<obj::WideInt>(static_cast<int64_t>(scalar(f, op.operands[1 + i]))) *
                    static_cast<int64_t>(v.strides[i])));
  v.base = core_.offsetAddress(v.base, bits >= 8 ? elems * (bits / 8) : elems / (8 / bits),
                               std::max(1u, bits / 8));
  for (size_t i = 0; i < rank; ++i)
    v.shape[i] = static_cast<int64_t>(scalar(f, op.operands[1 + rank + i]));
  f.v[op.results[0]] = v;
  return std::nullopt;
}

/// load_scalar, store_scalar, addptr.
std::optional<Failure> Machine::scalarMemory(Frame& f, const Op& op) {
  const bool load = op.kind == OpKind::LoadScalar, store = op.kind == OpKind::StoreScalar;
  const ir::ValueId ptr = op.operands[store ? 1 : 0];
  const isa::DType elem = f.fn->type(ptr).elem;
  const unsigned bits = isa::bitWidth(elem);
  if (bits < 8)
    return unsupported(op,
                       "'" + op.name + "' on " + std::string(isa::spelling(elem)) + " elements");
  // The index in exact arithmetic, through the runtime's one check (rt::Core::access).
  const obj::WideInt offset =
      static_cast<obj::WideInt>(static_cast<int64_t>(scalar(f, op.operands[store ? 2 : 1]))) *
      (bits / 8);
  if (op.kind == OpKind::AddPtr) {
    f.v[op.results[0]] = core_.offsetAddress(scalar(f, ptr), offset, bits / 8);
    return std::nullopt;
  }
  // A 1-D view of GM or a partition of one (the verifier's rule) is its base pointer when its
  // stride is 1.
  uint64_t base = 0;
  if (f.fn->type(ptr).isView()) {
    const ViewVal& v = std::get<ViewVal>(f.v[ptr]);
    if (v.strides.size() != 1 || v.strides[0] != 1)
      return unsupported(op, "'" + op.name + "' through a view whose stride is not 1");
    base = v.base;
  } else {
    base = scalar(f, ptr);
  }
  uint8_t* p = core_.access(base, offset, bits / 8, load ? "scalar load" : "scalar store", store);
  if (!p) {
    Failure e{op.loc, core_.error};
    core_.error.clear();
    return e;
  }
  if (load) {
    uint64_t v = 0;
    std::memcpy(&v, p, bits / 8);
    const ir::Type& rt = f.fn->type(op.results[0]);
    f.v[op.results[0]] = rt.kind == TypeKind::Index ? v : truncBits(v, isa::bitWidth(rt.elem));
  } else {
    const uint64_t v = scalar(f, op.operands[0]);
    std::memcpy(p, &v, bits / 8);
  }
  return std::nullopt;
}

/// pto.multi_tile_get (a slot's view) and the valid-shape reads.
std::optional<Failure> Machine::tileQuery(Frame& f, const Op& op) {
  switch (op.kind) {
  case OpKind::MultiTileGet: {
    // Slot k of the storage: its own layout, k slots of bytes on, the valid shape of the alloc.
    const TileVal& src = std::get<TileVal>(f.v[op.operands[0]]);
    const ir::Type& mt = f.fn->type(op.operands[0]);
    const uint64_t k = scalar(f, op.operands[1]);
    if (k >= static_cast<uint64_t>(mt.shape.at(0)))
      return Failure{op.loc, "pto.multi_tile_get slot " + std::to_string(static_cast<int64_t>(k)) +
                                 " is out of range for " + ir::toString(mt)};
    TileVal t{mt.slotTile(), src.offset, src.validRows, src.validCols};
    t.offset += static_cast<uint32_t>(k * t.type.byteSize());
    f.v[op.results[0]] = t;
    return std::nullopt;
  }
  case OpKind::GetValidShape: {
    const TileVal& t = std::get<TileVal>(f.v[op.operands[0]]);
    const int64_t rows = t.validRows >= 0 ? t.validRows : t.type.rows;
    const int64_t cols = t.validCols >= 0 ? t.validCols : t.type.cols;
    if (op.name == "pto.tile_valid_cols") {
      f.v[op.results[0]] = static_cast<uint64_t>(cols);
    } else {
      f.v[op.results[0]] = static_cast<uint64_t>(rows);
      if (op.results.size() > 1) f.v[op.results[1]] = static_cast<uint64_t>(cols);
    }
    return std::nullopt;
  }
  default:
    return unsupported(op, "'" + op.name + "'");
  }
}

std::optional<Failure> Machine::viewOp(Frame& f, const Op& op) {
  switch (op.kind) {
  case OpKind::MakeTensorView:
  case OpKind::ReinterpretView:
    return makeView(f, op);
  case OpKind::PartitionView:
    return partitionView(f, op);
  case OpKind::GetTensorViewDim: {
    const ViewVal& v = std::get<ViewVal>(f.v[op.operands[0]]);
    const uint64_t d = scalar(f, op.operands[1]);
    if (d >= v.shape.size())
      return Failure{op.loc, "dimension " + std::to_string(d) +
                                 " is out of range for a view of rank " +
                                 std::to_string(v.shape.size())};
    // get_tensor_view_stride: the stride in elements (a partition keeps its view's).
    const bool stride = op.name == "pto.get_tensor_view_stride";
    f.v[op.results[0]] = static_cast<uint64_t>(stride ? v.strides[d] : v.shape[d]);
    return std::nullopt;
  }
  case OpKind::MultiTileGet:
  case OpKind::GetValidShape:
    return tileQuery(f, op);
  case OpKind::Subset:
  case OpKind::Reshape:
  case OpKind::Bitcast: {
    const TileVal& src = std::get<TileVal>(f.v[op.operands[0]]);
    TileVal t{f.fn->type(op.results[0]).tile, src.offset, 0, 0};
    t.validRows = t.type.validRows;
    t.validCols = t.type.validCols;
    if (op.kind == OpKind::Subset) {
      const uint64_t r = scalar(f, op.operands[1]), c = scalar(f, op.operands[2]);
      const isa::InnerBox box = isa::innerBox(src.type.dtype, src.type.slayout, src.type.fractal);
      if (src.type.slayout != isa::SLayout::NoneBox && (r % box.rows != 0 || c % box.cols != 0))
        return unsupported(op, ir::boxedSubsetOffsetError(op.name, r, c, box));
      if (!op.name.ends_with("subview")) {
        // pto.subset's dynamic valid extent: the parent's less the offset, within 0..size.
        auto extent = [](int64_t parent, int64_t phys, uint64_t off, int64_t size) {
          const int64_t p = parent == ir::kDynamic ? phys : parent;
          return off > static_cast<uint64_t>(p)
                     ? 0
                     : std::min<int64_t>(p - static_cast<int64_t>(off), size);
        };
        if (t.validRows == ir::kDynamic)
          t.validRows = extent(src.validRows, src.type.rows, r, op.ints[0]);
        if (t.validCols == ir::kDynamic)
          t.validCols = extent(src.validCols, src.type.cols, c, op.ints[1]);
      }
      // A view keeps its parent's pitch (rows per column for a column-major parent, the rows of
      // its box columns for a boxed one) and starts at (r, c)'s element.
      const bool colMajor = src.type.blayout == isa::BLayout::ColMajor;
      const uint64_t element = ir::subsetElement(src.type, r, c);
      // Its valid region must lie in the parent's storage (offsets known only at run time are
      // checked here; the backends check them where the view is bound and used).
      const uint64_t vr = t.validRows >= 0 ? static_cast<uint64_t>(t.validRows) : t.type.rows,
                     vc = t.validCols >= 0 ? static_cast<uint64_t>(t.validCols) : t.type.cols;
      // The elements up to its last valid one, laid out with its parent's pitch.
      const uint64_t viewRows = colMajor ? src.type.rows : t.type.rows,
                     viewCols = colMajor ? t.type.cols : src.type.cols;
      const uint64_t extent =
          vr == 0 || vc == 0 ? 0
          : vr > viewRows || vc > viewCols
              ? (colMajor ? (vc - 1) * viewRows + vr : (vr - 1) * viewCols + vc)
              : isa::elementOffset(src.type.blayout, src.type.slayout, box,
                                   static_cast<uint32_t>(viewRows), static_cast<uint32_t>(viewCols),
                                   static_cast<uint32_t>(vr - 1), static_cast<uint32_t>(vc - 1)) +
                    1;
      const uint64_t parentElems = static_cast<uint64_t>(src.type.rows) * src.type.cols;
      if (r >= parentElems || c >= parentElems || element + extent > parentElems)
        return Failure{op.loc, "'" + op.name + "' at (" + std::to_string(r) + ", " +
                                   std::to_string(c) + "): its valid region runs past the end " +
                                   "of its parent (" + std::to_string(parentElems) + " elements)"};
      t.offset += static_cast<uint32_t>(element * isa::bitWidth(src.type.dtype) / 8);
      if (colMajor)
        t.type.rows = src.type.rows;
      else
        t.type.cols = src.type.cols;
    }
    f.v[op.results[0]] = t;
    return std::nullopt;
  }
  case OpKind::SetValidShape: {
    TileVal& t = std::get<TileVal>(f.v[op.operands[0]]);
    t.validRows = validExtent(scalar(f, op.operands[1]));
    t.validCols = validExtent(scalar(f, op.operands[2]));
    return std::nullopt;
  }
  case OpKind::TAssign: {
    TileVal t = std::get<TileVal>(f.v[op.operands[0]]);
    const uint64_t addr = scalar(f, op.operands[1]);
    if (addr + t.type.byteSize() > isa::buffer(arch_, t.type.loc).capacity)
      return Failure{op.loc, "tile address " + std::to_string(addr) + " does not fit the " +
                                 std::string(isa::spelling(t.type.loc)) + " buffer"};
    t.offset = static_cast<uint32_t>(addr);
    f.v[op.results.empty() ? op.operands[0] : op.results[0]] = t;
    return std::nullopt;
  }
  case OpKind::LoadScalar:
  case OpKind::StoreScalar:
  case OpKind::AddPtr:
    return scalarMemory(f, op);
  default:
    return unsupported(op, "'" + op.name + "'");
  }
}

/// Op attributes the reference interpreter does not run (the rows of isa/OpAttrs.def whose Ref
/// column is Refused: every attribute pto-as refuses, and TGATHER's mask form): only their
/// default value runs.
std::optional<std::string> unrunnableAttribute(const Op& op) {
  if (op.kind != OpKind::TileOp) return std::nullopt;
  for (const ir::AttrReading& a : op.modes->readings) {
    const isa::OpAttr& x = isa::opAttr(a.id);
    if (x.ref == isa::AttrRef::Refused && !a.isDefault) return std::string(x.key) + " = " + a.text;
  }
  return std::nullopt;
}

/// pto.tgetval: the element at storage index `offset` of the tile, as its raw bits (a signed
/// integer sign-extended), written from the definition (docs/isa's TGETVAL) rather than through
/// the cpu kernel.
/// pto.print: its value through its format (isa/PrintFormat.h, checked by the verifier) on the
/// output TPRINT writes to, as the backends' PRINT kernel does.
void Machine::printScalar(const Frame& f, const Op& op) {
  const isa::DType t = ir::printedType(f.fn->type(op.operands[0]));
  core_.output += support::visibleText(
      isa::print::formatted(ir::printFormat(op).value_or(""), t, scalar(f, op.operands[0])),
      /*keepNewlines=*/true);
}

std::optional<Failure> Machine::tileGetVal(Frame& f, const Op& op) {
  const TileVal& t = std::get<TileVal>(f.v[op.operands[0]]);
  const uint64_t off = scalar(f, op.operands[1]);
  const uint64_t n = static_cast<uint64_t>(t.type.rows) * static_cast<uint64_t>(t.type.cols);
  if (off >= n)
    return Failure{op.loc, "pto.tgetval offset " + std::to_string(off) + " is outside the tile (" +
                               std::to_string(n) + " elements)"};
  const unsigned bits = isa::bitWidth(t.type.dtype);
  const uint8_t* base = core_.buf[static_cast<size_t>(t.type.loc)] + t.offset;
  uint64_t v = 0;
  if (bits < 8)
    v = (base[off / 2] >> (off % 2 * 4)) & 0xF;
  else
    for (unsigned b = 0; b < bits / 8; ++b)
      v |= uint64_t{base[off * (bits / 8) + b]} << (8 * b);
  if (isa::info(t.type.dtype).kind == isa::DTypeKind::SInt && bits < 64 && (v >> (bits - 1)) & 1)
    v |= ~uint64_t{0} << bits;
  f.v[op.results[0]] = v;
  return std::nullopt;
}

/// TGET_SCALE_ADDR: the scaling tile is bound at the source's address >> 4 (pto-isa's
/// SHIFT_MX_ADDR); no data moves.
std::optional<Failure> Machine::scaleAddress(Frame& f, const Op& op) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  ir::ValueId src = ir::kNoValue, dst = ir::kNoValue;
  for (size_t i = 0; i < op.operands.size(); ++i)
    (info.roles[static_cast<size_t>(op.operandRoles[i])].isOutput ? dst : src) = op.operands[i];
  TileVal t = std::get<TileVal>(f.v[dst]);
  const uint64_t addr = std::get<TileVal>(f.v[src]).offset >> 4;
  if (addr + t.type.byteSize() > isa::buffer(arch_, t.type.loc).capacity)
    return Failure{op.loc, "scale address " + std::to_string(addr) + " does not fit the " +
                               std::string(isa::spelling(t.type.loc)) + " buffer"};
  t.offset = static_cast<uint32_t>(addr);
  f.v[dst] = t;
  ++tileOps;
  return std::nullopt;
}

const std::string& Machine::instName(const Op& op, const isa::OpInfo& info) {
  std::string& name = names_[&op];
  if (name.empty()) {
    const enc::TileOpInfo* eop = enc::tileOpFor(op.tileOp);
    if (eop)
      name = std::string(enc::info(eop->op).name);
    else
      for (char ch : info.mnemonic)
        name += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return name;
}

Machine::TileOperands Machine::tileOperands(Frame& f, const Op& op, const isa::OpInfo& info) {
  TileOperands o;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const isa::Role& role = info.roles[static_cast<size_t>(op.operandRoles[i])];
    const ir::ValueId v = op.operands[i];
    if (role.kind == isa::RoleKind::Tile) {
      (role.isOutput ? o.outs : o.ins).push_back({v, op.operandRoles[i]});
      if (role.isOutput && o.dst == ir::kNoValue) o.dst = v;
      if (!role.isOutput && o.src == ir::kNoValue) o.src = v;
    } else if (role.kind == isa::RoleKind::View) {
      o.view = &std::get<ViewVal>(f.v[v]);
    } else if (role.isOutput) {
      o.scalarOut = true; // TMRGSORT's counts
    } else {
      o.scalars.push_back(scalar(f, v));
    }
  }
  for (uint64_t imm : op.modes->ior)
    o.scalars.push_back(imm);
  // MGATHER / MSCATTER: the mode word with the table's capacity, as the code generator has it.
  if ((info.id == isa::OpId::MGATHER || info.id == isa::OpId::MSCATTER) && !op.modes->ior.empty())
    if (auto word = ir::gmModeWord(*f.fn, op, op.modes->ior[0]);
        std::holds_alternative<uint64_t>(word))
      o.scalars.back() = std::get<uint64_t>(word);
  return o;
}

void Machine::setDatr(const Frame& f, const Op& op, const isa::OpInfo& info, const TileOperands& o,
                      rt::TileInst& t) const {
  auto code = [](isa::DType d) { return enc::dataTypeCode(d).value_or(0); };
  switch (info.id) {
  case isa::OpId::TCVT: {
    const isa::DType s = f.fn->type(o.src).tile.dtype, d = f.fn->type(o.dst).tile.dtype;
    enc::Datr datr{.dataType = code(d)};
    datr.rmode = enc::rmodeCode(op.modes->round.value_or(isa::RoundMode::CAST_RINT));
    datr.sat =
        op.modes->sat ? *op.modes->sat == isa::SatMode::ON : isa::cvtSaturatesByDefault(s, d);
    t.datr = datr;
    break;
  }
  case isa::OpId::TCMP:
  case isa::OpId::TCMPS:
  case isa::OpId::TGATHER_CMP:
    t.datr = enc::Datr{.dataType = code(f.fn->type(o.src).tile.dtype)};
    t.datr->cmode = enc::cmodeCode(op.modes->cmp.value_or(isa::CmpMode::EQ));
    break;
  case isa::OpId::TDEQUANT:
  case isa::OpId::TQUANT:
    t.datr = enc::Datr{.dataType = code(f.fn->type(o.dst).tile.dtype)};
    break;
  case isa::OpId::TRANDOM:
    if (const auto rounds = op.modes->rounds)
      if (const auto code = isa::trandom::roundsCode(static_cast<uint64_t>(*rounds)); code && *code)
        t.datr = enc::Datr{.rmode = *code};
    break;
  case isa::OpId::TLOAD:
  case isa::OpId::TPREFETCH:
  case isa::OpId::TSTORE:
    if (o.view) {
      // The GM element type (a converting store names it).
      t.datr = enc::Datr{.dataType = code(o.view->elem)};
      t.gmDn = o.view->dn;
    }
    break;
  default:
    break;
  }
}

std::optional<Failure> Machine::runKernel(const Op& op, const rt::TileInst& inst) {
  inst.kernel(core_, inst);
  if (core_.error.empty()) return std::nullopt;
  Failure e{op.loc, core_.error};
  core_.error.clear();
  return e;
}

std::optional<Failure> Machine::runSlices(const Op& op, const std::string& opName,
                                          const rt::TileInst& t, const ViewVal& view,
                                          const std::vector<size_t>& outerDims, bool scalars) {
  // Slices: the last two dimensions, into consecutive rows of a row-major tile.
  if (t.tiles.size() != 1 || scalars || t.tiles[0].blayout != isa::BLayout::RowMajor ||
      t.tiles[0].slayout != isa::SLayout::NoneBox)
    return Failure{op.loc, opName + " with a partition of more than two non-unit dimensions needs "
                                    "one row-major tile and no scalars"};
  const size_t rank = view.shape.size();
  const int64_t sliceRows = view.shape[rank - 2], sliceCols = view.shape[rank - 1];
  int64_t slices = 1;
  for (size_t d : outerDims)
    slices *= view.shape[d];
  const rt::TileOperand whole = t.tiles[0];
  if (slices * sliceRows > whole.rows || sliceCols > whole.cols)
    return Failure{op.loc, "the partition's " + std::to_string(slices) + " slices of " +
                               std::to_string(sliceRows) + "x" + std::to_string(sliceCols) +
                               " do not fit the tile"};
  const unsigned bits = isa::bitWidth(view.elem);
  for (int64_t s = 0; s < slices; ++s) {
    uint64_t addr = view.base;
    int64_t rest = s;
    for (size_t k = outerDims.size(); k-- > 0;) {
      const int64_t idx = rest % view.shape[outerDims[k]];
      rest /= view.shape[outerDims[k]];
      addr += static_cast<uint64_t>(idx * view.strides[outerDims[k]] * bits / 8);
    }
    rt::TileInst slice = t;
    rt::TileOperand& o = slice.tiles[0];
    o.offset = whole.offset +
               static_cast<uint32_t>(s * sliceRows * whole.cols * isa::bitWidth(whole.dtype) / 8);
    o.rows = static_cast<uint32_t>(sliceRows);
    o.validRows = static_cast<int32_t>(sliceRows);
    o.validCols = static_cast<int32_t>(sliceCols);
    o.name = whole.name + "." + std::to_string(s);
    core_.r[1] = static_cast<uint64_t>(sliceCols);
    core_.r[2] = static_cast<uint64_t>(sliceRows);
    core_.r[3] = whole.cols;
    slice.dim[2].present = sliceCols != static_cast<int64_t>(whole.cols);
    core_.r[4] = addr;
    if (auto e = runKernel(op, slice)) return e;
  }
  return std::nullopt;
}

std::optional<Failure> Machine::tileOp(Frame& f, const Op& op) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  const std::string opName = "'pto." + std::string(info.mnemonic) + "'";
  if (!info.supports(arch_))
    return Failure{op.loc, opName + " is not available on " + std::string(isa::spelling(arch_))};
  if (op.tileOp == isa::OpId::TGET_SCALE_ADDR) return scaleAddress(f, op);
  if (auto a = unrunnableAttribute(op))
    return Failure{op.loc, opName + " with " + *a + " is not supported by the cpu kernels"};
  ++tileOps;
  const std::string& name = instName(op, info);
  // Operands by role: tile outputs, tile inputs, the GM view, scalars.
  TileOperands o = tileOperands(f, op, info);
  const ViewVal* view = o.view;
  auto tileOf = [&](ir::ValueId v) -> const TileVal& { return std::get<TileVal>(f.v[v]); };
  rt::TileInst t;
  t.op = op.tileOp;
  if (o.scalarOut) t.iorDst = 7; // a register of their own, as the code generator gives them
  t.name = name.c_str();
  // The tile whose valid shape bounds the op: the destination, else (reductions, compares,
  // ops without a tile output: stores, TPRINT) the source.
  const ir::ValueId shapeTile =
      isa::shapeFrom(info, o.dst != ir::kNoValue) == isa::ShapeFrom::Source && o.src != ir::kNoValue
          ? o.src
          : o.dst;
  t.startType = f.fn->type(ir::startTypeTile(op, info, shapeTile, o.src)).tile.dtype;
  // B.DATR: destination type, rounding, saturation, compare mode, GM layout.
  setDatr(f, op, info, o, t);
  // Tiles, destination first (as B.IOT lists them), and their roles.
  std::vector<TileArg> order = o.outs;
  order.insert(order.end(), o.ins.begin(), o.ins.end());
  std::vector<int> roles;
  for (const TileArg& a : order) {
    t.tiles.push_back(operand(tileOf(a.v), f.fn->value(a.v).name));
    roles.push_back(a.role);
  }
  rt::assignSlots(t, roles);
  if (info.id == isa::OpId::TMRGSORT) { // (dst, src) or (dst, tmp, 2 to 4 sources)
    const int n = static_cast<int>(t.tiles.size());
    t.dst = 0;
    t.src0 = 1;
    t.src1 = t.src2 = t.src3 = t.tmp = -1;
    if (n >= 4 && n <= 6) {
      t.tmp = 1;
      t.src0 = 2;
      t.src1 = 3;
      t.src2 = n > 4 ? 4 : -1;
      t.src3 = n > 5 ? 5 : -1;
    } else if (n != 2) {
      return Failure{op.loc,
                     "TMRGSORT has " + std::to_string(n) +
                         " tile operands; it takes (dst, src) or (dst, tmp, 2 to 4 sources)"};
    }
  }
  t.fix = ir::fixpipeAttrs(*f.fn, op);
  if (auto e = rt::selectKernel(t)) return Failure{op.loc, *e};
  // Bounds and B.IOR values in the core's registers: r1 valid cols, r2 valid rows, r3 physical
  // cols (LB0..LB2), r4..r6 the GM address, GM row stride and scalars.
  auto setDim = [&](unsigned lb, uint64_t value) {
    core_.r[1 + lb] = value;
    t.dim[lb] = rt::Bound{static_cast<uint8_t>(1 + lb), 0, true};
  };
  auto validOf = [&](ir::ValueId v) {
    const TileVal& tv = tileOf(v);
    return std::pair<int64_t, int64_t>{tv.validRows == ir::kDynamic ? tv.type.rows : tv.validRows,
                                       tv.validCols == ir::kDynamic ? tv.type.cols : tv.validCols};
  };
  if (info.rule == isa::TypeRule::Matmul) {
    const auto l = validOf(ir::roleValue(op, isa::RoleId::Lhs)),
               r = validOf(ir::roleValue(op, isa::RoleId::Rhs));
    setDim(0, static_cast<uint64_t>(l.first));
    setDim(1, static_cast<uint64_t>(r.second));
    setDim(2, static_cast<uint64_t>(l.second));
  } else if (shapeTile != ir::kNoValue) {
    const auto v = validOf(shapeTile);
    const int64_t physCols = tileOf(shapeTile).type.cols;
    setDim(0, static_cast<uint64_t>(v.second));
    setDim(1, static_cast<uint64_t>(v.first));
    if (v.second != physCols) setDim(2, static_cast<uint64_t>(physCols));
  }
  std::vector<uint64_t> ior;
  size_t outer = 0; // a partition with more than two non-unit dimensions: one op per 2-D slice
  uint64_t rowStride = 0;
  std::vector<size_t> outerDims;
  if (view) {
    const size_t rank = view->shape.size();
    const unsigned bits = isa::bitWidth(view->elem);
    // The stride register as the core computes it: modulo 2^64 (a run-time stride may be huge;
    // the accesses themselves are checked in exact arithmetic).
    if (rank >= 2) {
      const auto s = static_cast<uint64_t>(view->strides[view->dn ? rank - 1 : rank - 2]);
      rowStride = bits >= 8 ? s * (bits / 8) : s * bits / 8;
    }
    for (size_t i = 0; i + 2 < rank; ++i)
      if (view->shape[i] != 1) outerDims.push_back(i);
    ior = {view->base, rowStride};
    outer = outerDims.size();
  }
  std::vector<uint64_t>& scalars = o.scalars;
  if (info.id == isa::OpId::TRANDOM && scalars.size() == 6) // key, counter: isa/Random.h
    scalars = {isa::trandom::pack(scalars[0], scalars[1]),
               isa::trandom::pack(scalars[2], scalars[3]),
               isa::trandom::pack(scalars[4], scalars[5])};
  for (uint64_t s : scalars)
    ior.push_back(s);
  if (ior.size() > 3)
    return Failure{op.loc, opName + " with more than three scalar operands is not supported"};
  t.numIor = 3;
  for (size_t i = 0; i < ior.size(); ++i) {
    core_.r[4 + i] = ior[i];
    t.ior[i] = static_cast<uint8_t>(4 + i);
  }
  if (outer == 0) return runKernel(op, t);
  return runSlices(op, opName, t, *view, outerDims, !scalars.empty());
}

} // namespace pto::ref
