// The verifier's tile checks (VerifierImpl.h): tile types and addresses, then each tile op
// against its op-table entry: operand roles, locations, dtype rules, valid shapes, matmul.
#include "asm/ir/VerifierImpl.h"
#include "isa/Fixpipe.h"
#include "isa/Pipes.h"
#include "isa/Random.h"
#include "isa/TileLayout.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>

namespace pto::as::verify {

using isa::DType;
using isa::Loc;

namespace {

/// "an acc", "a vec", "an f16", "an i8", "a ui8", "a bf16".
std::string article(std::string_view word) {
  bool an =
      !word.empty() &&
      (std::string_view("aeio").find(word[0]) != std::string_view::npos ||
       (word[0] == 'f' && word.size() > 1 && std::isdigit(static_cast<unsigned char>(word[1]))));
  return std::string(an ? "an " : "a ") + std::string(word);
}

} // namespace

void Verifier::checkValueType(ValueId v) {
  const Type& t = type(v);
  if (t.kind == TypeKind::Tile) checkTileType(t.tile, value(v).loc, v);
}

void Verifier::checkTileType(const TileType& t, SrcLoc loc, ValueId v) {
  if (!checkedTiles_.insert(v).second) return;
  std::string what = "tile '%" + value(v).name + "'";
  if (t.rows <= 0 || t.cols <= 0) {
    diags_.error(loc, what + " has an empty shape " + std::to_string(t.rows) + "x" +
                          std::to_string(t.cols));
    return;
  }
  if (t.validRows != kDynamic && t.validRows > t.rows)
    diags_.error(loc, what + " has valid rows " + std::to_string(t.validRows) + " > rows " +
                          std::to_string(t.rows));
  if (t.validCols != kDynamic && t.validCols > t.cols)
    diags_.error(loc, what + " has valid cols " + std::to_string(t.validCols) + " > cols " +
                          std::to_string(t.cols));
  if (t.fractal != 16 && t.fractal != 32 && t.fractal != 512 && t.fractal != 1024)
    diags_.error(loc, what + " has fractal size " + std::to_string(t.fractal) +
                          " (expected 16, 32, 512 or 1024)");
  if (t.dtype == DType::I1 || t.dtype == DType::F64)
    diags_.error(loc, what + " has element type " + std::string(isa::spelling(t.dtype)) +
                          ", which tiles cannot hold");
  checkTileBoxes(t, loc, what);
  const isa::BufferSpec& buf = isa::buffer(arch_, t.loc);
  if (t.byteSize() > buf.capacity)
    diags_.error(loc, what + " needs " + std::to_string(t.byteSize()) + " bytes but the " +
                          std::string(isa::spelling(t.loc)) + " buffer holds " +
                          std::to_string(buf.capacity) + " bytes on " + archName());
}

/// pto::Tile's static_asserts on the layout (include/pto/common/pto_tile.hpp at pto-isa HEAD,
/// whose messages the errors quote): an ND row (a DN column) of whole 32-byte units; a boxed
/// tile of whole inner boxes across its columns, and down its rows too except for Vec tiles,
/// one-row tiles and MX (fractal 32) tiles.
void Verifier::checkTileBoxes(const TileType& t, SrcLoc loc, const std::string& what) {
  const unsigned bits = isa::bitWidth(t.dtype);
  if (t.slayout == isa::SLayout::NoneBox) {
    // A one-column row-major tile (PTOAS writes them for per-row scalars: tquant's scales and
    // exponents, row-reduction results) is stored exactly as the column vector of its rows; the
    // linker places every tile at the buffer's alignment, so no row rule applies, and the C++
    // export spells it as pto-isa's column vector (export/Spelling.cpp, exportedBLayout).
    if (t.blayout == isa::BLayout::RowMajor && t.cols == 1 && t.rows > 1) return;
    if (t.blayout == isa::BLayout::RowMajor && (t.cols * bits / 8) % 32 != 0)
      diags_.error(loc, what + ": a row-major tile row must be a multiple of 32 bytes (" +
                            std::to_string(t.cols) + " x " + std::string(isa::spelling(t.dtype)) +
                            " = " + std::to_string(t.cols * bits / 8) +
                            " bytes; pto-isa: \"BFractal_ is RowMajor and SFractal_ is NoneBox: "
                            "Rows must be 32 bytes align\")");
    if (t.blayout == isa::BLayout::ColMajor && (t.rows * bits / 8) % 32 != 0)
      diags_.error(loc, what + ": a column-major tile column must be a multiple of 32 bytes (" +
                            std::to_string(t.rows) + " x " + std::string(isa::spelling(t.dtype)) +
                            " = " + std::to_string(t.rows * bits / 8) +
                            " bytes; pto-isa: \"BFractal_ is ColMajor and SFractal_ is NoneBox: "
                            "Cols must be 32 bytes align\")");
    return;
  }
  if (bits < 8 || t.fractal == 16) return;
  // Inner boxes (pto-isa's getInnerRow / getInnerCol).
  const isa::InnerBox box = isa::innerBox(t.dtype, t.slayout, t.fractal);
  const int64_t innerRows = box.rows, innerCols = box.cols;
  const bool rowsExempt = t.loc == isa::Loc::Vec || t.fractal == 32 || t.rows == 1;
  if (!rowsExempt && t.rows % innerRows != 0)
    diags_.error(loc, what + ": its rows (" + std::to_string(t.rows) +
                          ") must be a multiple of the inner box rows (" +
                          std::to_string(innerRows) +
                          "; pto-isa: \"Layout rows must be divisible by inner box rows\")");
  if (t.cols % innerCols != 0)
    diags_.error(loc, what + ": its cols (" + std::to_string(t.cols) +
                          ") must be a multiple of the inner box cols (" +
                          std::to_string(innerCols) +
                          "; pto-isa: \"Layout cols must be divisible by inner box cols\")");
}

void Verifier::checkAlloc(const Op& op) {
  const TileType& t = type(op.results[0]).tile; // a multi_tile_buf's: the storage of its slots
  if (type(op.results[0]).kind == TypeKind::MultiTile) {
    const isa::BufferSpec& buf = isa::buffer(arch_, t.loc);
    if (t.byteSize() > buf.capacity)
      diags_.error(op.loc, "'%" + value(op.results[0]).name + "' needs " +
                               std::to_string(t.byteSize()) + " bytes for its " +
                               std::to_string(type(op.results[0]).shape[0]) + " slots but the " +
                               std::string(isa::spelling(t.loc)) + " buffer holds " +
                               std::to_string(buf.capacity) + " bytes on " + archName());
  }
  size_t k = 0;
  if (op.ints[0]) {
    ValueId addr = op.operands[k++];
    if (auto a = constValue(addr)) checkAddress(t, *a, op.operandLocs[k - 1], op.results[0]);
  }
  bool hasVR = op.ints[1], hasVC = op.ints[2];
  if ((t.validRows == kDynamic) != hasVR)
    diags_.error(op.loc,
                 hasVR ? "'valid_row' given but the tile type has a static v_row"
                       : "the tile type has a dynamic v_row ('?'): pass 'valid_row = %value'");
  if ((t.validCols == kDynamic) != hasVC)
    diags_.error(op.loc,
                 hasVC ? "'valid_col' given but the tile type has a static v_col"
                       : "the tile type has a dynamic v_col ('?'): pass 'valid_col = %value'");
}

/// pto.multi_tile_get: a constant slot lies in [0, count); a slot known only at run time is
/// checked where its view is bound.
void Verifier::checkMultiTileGet(const Op& op) {
  const Type& mt = type(op.operands[0]);
  if (mt.kind != TypeKind::MultiTile || mt.shape.empty()) return; // the builder's error
  if (auto k = constValue(op.operands[1]); k && (*k < 0 || *k >= mt.shape[0]))
    diags_.error(op.operandLocs[1], "'pto.multi_tile_get' slot " + std::to_string(*k) +
                                        " is out of range for " + toString(mt) + " (0.." +
                                        std::to_string(mt.shape[0] - 1) + ")");
}

void Verifier::checkAddress(const TileType& t, int64_t addr, SrcLoc loc, ValueId tile) {
  const isa::BufferSpec& buf = isa::buffer(arch_, t.loc);
  std::string where = std::string(isa::spelling(t.loc)) + " buffer";
  if (addr < 0) {
    diags_.error(loc, "tile address " + std::to_string(addr) + " is negative");
    return;
  }
  if (addr % buf.alignment != 0)
    diags_.error(loc, "tile address " + support::hex0x(static_cast<uint64_t>(addr)) + " is not " +
                          std::to_string(buf.alignment) + "-byte aligned, as the " + where +
                          " requires");
  if (static_cast<uint64_t>(addr) + t.byteSize() > buf.capacity) {
    diags_.error(
        loc, "tile '%" + value(tile).name + "' at " + support::hex0x(static_cast<uint64_t>(addr)) +
                 " (" + std::to_string(t.byteSize()) + " bytes) ends past the " + where +
                 " capacity of " + std::to_string(buf.capacity) + " bytes on " + archName());
  }
}

void Verifier::checkAssign(const Op& op) {
  if (op.operands.size() < 2 || !type(op.operands[0]).isTile()) return;
  if (auto a = constValue(op.operands[1]))
    checkAddress(type(op.operands[0]).tile, *a, op.operandLocs[1], op.operands[0]);
}

/// pto.tgetval reads one element of a tile into a scalar of the tile's element type, at an
/// index or integer storage index (PTOAS's verifier).
void Verifier::checkTGetVal(const Op& op) {
  if (op.operands.size() != 2 || op.results.size() != 1) return;
  const Type& t = type(op.operands[0]);
  if (!t.isTile())
    return diags_.error(op.operandLocs[0], "'pto.tgetval' reads a tile, found " + toString(t));
  if (!type(op.operands[1]).isIntLike())
    return diags_.error(op.operandLocs[1], "'pto.tgetval' takes an integer offset, found " +
                                               toString(type(op.operands[1])));
  const Type& r = type(op.results[0]);
  if (!(r == Type::scalar(t.tile.dtype)))
    diags_.error(op.loc, "'pto.tgetval' produces the tile's element type " +
                             std::string(isa::spelling(t.tile.dtype)) + ", found " + toString(r));
}

void Verifier::checkSubset(const Op& op) {
  const TileType& src = type(op.operands[0]).tile;
  if (op.ints[0] > src.rows || op.ints[1] > src.cols)
    diags_.error(op.loc, "subset " + std::to_string(op.ints[0]) + "x" + std::to_string(op.ints[1]) +
                             " does not fit in the " + std::to_string(src.rows) + "x" +
                             std::to_string(src.cols) + " tile");
  // A subview at constant offsets must lie inside its parent, as PTOAS checks (offset + size
  // <= dim). A subset may run on into the parent's next rows: the linker checks its bytes.
  if (!op.name.ends_with("subview") || op.ints[0] > src.rows || op.ints[1] > src.cols) return;
  const std::optional<int64_t> at[2] = {constValue(op.operands[1]), constValue(op.operands[2])};
  const int64_t dims[2] = {src.rows, src.cols};
  for (int i = 0; i < 2; ++i)
    if (at[i] && (*at[i] < 0 || *at[i] + op.ints[i] > dims[i]))
      diags_.error(op.operandLocs[1 + i],
                   std::string(i == 0 ? "row" : "column") + " offset " + std::to_string(*at[i]) +
                       " with size " + std::to_string(op.ints[i]) + " does not fit in the " +
                       std::to_string(dims[i]) + (i == 0 ? " rows" : " columns") + " of the tile");
}

void Verifier::checkTileOp(const Op& op) {
  const isa::OpInfo& info = isa::info(op.tileOp);
  std::string name = "pto." + std::string(info.mnemonic);
  if (!info.supports(arch_)) {
    diags_.error(op.loc, "'" + name + "' is not available on " + archName() +
                             ((info.flags & isa::kA5Only) ? " (A5 only)" : " (A2/A3 only)"));
    return;
  }
  std::vector<Operand> ops;
  for (size_t i = 0; i < op.operands.size(); ++i)
    ops.push_back({&info.roles[op.operandRoles[i]], op.operands[i], op.operandLocs[i]});
  const Operand* dst = nullptr;
  std::vector<const Operand*> tiles;
  bool ok = true;
  for (const Operand& o : ops) {
    const Type& t = type(o.value);
    switch (o.role->kind) {
    case isa::RoleKind::Tile:
      if (!t.isTile()) {
        diags_.error(o.loc, "operand '" + std::string(o.role->name) + "' of '" + name +
                                "' must be a tile, found " + toString(t));
        ok = false;
      } else {
        tiles.push_back(&o);
      }
      break;
    case isa::RoleKind::View:
      if (!t.isView()) {
        diags_.error(o.loc, "operand '" + std::string(o.role->name) + "' of '" + name +
                                "' must be a tensor view or partition, found " + toString(t));
        ok = false;
      }
      break;
    case isa::RoleKind::IntScalar:
      if (!t.isIntLike()) {
        diags_.error(o.loc, "operand '" + std::string(o.role->name) + "' of '" + name +
                                "' must be an integer, found " + toString(t));
        ok = false;
      }
      break;
    case isa::RoleKind::FloatScalar:
    case isa::RoleKind::Scalar:
      if (!t.isScalarLike()) {
        diags_.error(o.loc, "operand '" + std::string(o.role->name) + "' of '" + name +
                                "' must be a scalar, found " + toString(t));
        ok = false;
      }
      break;
    case isa::RoleKind::Any:
      break;
    }
    if (o.role->isOutput && o.role->kind == isa::RoleKind::Tile && !dst) dst = &o;
  }
  if (!ok) return;
  checkAttributeScalars(op, name);
  checkLocations(info, name, tiles);
  if (info.id == isa::OpId::TEXTRACT || info.id == isa::OpId::TINSERT)
    checkWindowMove(info, name, tiles, ops);
  checkTypes(info, name, ops, dst);
  checkShapes(info, name, ops, dst);
  checkIndexCoverage(info, name, ops, dst);
  if (info.id == isa::OpId::TSTORE) checkStoreCount(name, ops);
  if (info.id == isa::OpId::TSTORE || info.id == isa::OpId::TMOV) checkFixpipe(op, name, ops);
  if (info.id == isa::OpId::MGATHER || info.id == isa::OpId::MSCATTER)
    checkGmIndexed(op, name, ops);
}

void Verifier::checkIndexCoverage(const isa::OpInfo& info, const std::string& name,
                                  const std::vector<Operand>& ops, const Operand* dst) {
  if (info.id != isa::OpId::TGATHER && info.id != isa::OpId::TSCATTER) return;
  const isa::RoleId idxRole =
      info.id == isa::OpId::TGATHER ? isa::RoleId::Indices : isa::RoleId::Indexes;
  const Operand* idx = nullptr;
  const Operand* covered = info.id == isa::OpId::TGATHER ? dst : nullptr;
  for (const Operand& o : ops) {
    if (o.role->id == idxRole) idx = &o;
    if (info.id == isa::OpId::TSCATTER && o.role->id == isa::RoleId::Src) covered = &o;
  }
  if (!idx || !covered) return;
  const TileType& it = tileOf(*idx);
  const TileType& ct = tileOf(*covered);
  bool rowsShort =
      it.validRows != kDynamic && ct.validRows != kDynamic && it.validRows < ct.validRows;
  bool colsShort =
      it.validCols != kDynamic && ct.validCols != kDynamic && it.validCols < ct.validCols;
  if (!rowsShort && !colsShort) return;
  diags_.error(idx->loc, "'" + name + "' index tile '" + std::string(idx->role->name) +
                             "' (valid " + vshape(it) + ") does not cover its " +
                             (info.id == isa::OpId::TGATHER ? "destination" : "source") +
                             " (valid " + vshape(ct) + "): every " +
                             (info.id == isa::OpId::TGATHER ? "destination" : "source") +
                             " element needs an index");
  noteDef(idx->value, idx->loc);
}

void Verifier::checkLocations(const isa::OpInfo& info, const std::string& name,
                              const std::vector<const Operand*>& tiles) {
  for (const Operand* o : tiles) {
    const TileType& t = tileOf(*o);
    if ((info.flags & isa::kVecTiles) && t.loc != Loc::Vec) {
      diags_.error(
          o->loc, "'" + name + "' runs on the vector pipe: operand '" + std::string(o->role->name) +
                      "' must be a vec tile, found loc=" + std::string(isa::spelling(t.loc)));
      noteDef(o->value, o->loc);
    }
    bool rowMajorNeeded =
        (info.flags & isa::kRowMajor) && !(o->role->isOutput && (info.flags & (isa::kRowReduce)));
    // A one-column tile is the same column vector in either layout (element r at r): PTOAS
    // writes tquant's per-row scales as Nx1 col_major.
    const bool columnVector = t.cols == 1 && t.slayout == isa::SLayout::NoneBox;
    if (rowMajorNeeded && t.blayout != isa::BLayout::RowMajor && !columnVector) {
      diags_.error(o->loc, "'" + name + "' needs row-major tiles: operand '" +
                               std::string(o->role->name) + "' has blayout=col_major");
      noteDef(o->value, o->loc);
    }
  }
  if (info.flags & isa::kCubeLocs) {
    for (const Operand* o : tiles) {
      const Loc want = isa::cubeLocOf(o->role->id);
      if (tileOf(*o).loc != want) {
        diags_.error(o->loc, "'" + name + "' operand '" + std::string(o->role->name) +
                                 "' must be " + article(isa::spelling(want)) +
                                 " tile, found loc=" + std::string(isa::spelling(tileOf(*o).loc)));
        noteDef(o->value, o->loc);
      }
    }
  }
  if (info.id == isa::OpId::TLOAD || info.id == isa::OpId::TPREFETCH) {
    for (const Operand* o : tiles)
      if (o->role->isOutput && tileOf(*o).loc != Loc::Vec && tileOf(*o).loc != Loc::Mat)
        diags_.error(o->loc, "'" + name + "' loads into vec or mat tiles, found loc=" +
                                 std::string(isa::spelling(tileOf(*o).loc)));
  }
}

void Verifier::checkWindowMove(const isa::OpInfo& info, const std::string& name,
                               const std::vector<const Operand*>& tiles,
                               const std::vector<Operand>& ops) {
  const Operand* src = nullptr;
  const Operand* dst = nullptr;
  for (const Operand* o : tiles)
    (o->role->isOutput ? dst : src) = o;
  if (!src || !dst) return;
  const TileType &s = tileOf(*src), &d = tileOf(*dst);
  if (!isa::windowPairSupported(info.id, s.loc, d.loc, arch_)) {
    diags_.error(dst->loc, "'" + name + "' on " + archName() + " moves " +
                               isa::windowPairs(info.id, arch_) + ", found " +
                               std::string(isa::spelling(s.loc)) + "->" +
                               std::string(isa::spelling(d.loc)));
    noteDef(dst->value, dst->loc);
    return;
  }
  auto nd = [](const TileType& t) {
    return t.blayout == isa::BLayout::RowMajor && t.slayout == isa::SLayout::NoneBox;
  };
  if (s.loc == Loc::Vec && d.loc == Loc::Vec && (!nd(s) || !nd(d))) {
    const Operand& bad = nd(s) ? *dst : *src;
    diags_.error(
        bad.loc,
        "'" + name +
            "' from vec to vec needs ND tiles (blayout=row_major, slayout=none_box): operand '" +
            std::string(bad.role->name) + "' is " +
            std::string(isa::spelling(tileOf(bad).blayout)) + "/" +
            std::string(isa::spelling(tileOf(bad).slayout)));
    noteDef(bad.value, bad.loc);
    return;
  }
  if (s.loc == Loc::Vec && d.loc == Loc::Vec && arch_ != isa::Arch::A5)
    checkVecWindowA2A3(info, name, *src, *dst, ops);
}

/// TEXTRACT / TINSERT vec -> vec on A2/A3 (pto-isa's CheckT{Extract,Insert}VecToVecCommon and its
/// ND dispatch): nine element types, and a column index whose byte offset is a whole 32-byte
/// block unless the window is one element (the scalar path). A run-time index is the kernel's
/// to keep aligned, as pto-isa's PTO_ASSERT leaves it.
void Verifier::checkVecWindowA2A3(const isa::OpInfo& info, const std::string& name,
                                  const Operand& src, const Operand& dst,
                                  const std::vector<Operand>& ops) {
  using isa::DType;
  const isa::DTypeSet types{DType::I8,   DType::U8,  DType::I16, DType::U16, DType::F16,
                            DType::BF16, DType::F32, DType::I32, DType::U32};
  const TileType& d = tileOf(dst);
  if (!types.contains(d.dtype))
    return dtypeError(dst, name,
                      "from vec to vec on a2a3 moves " + types.describe() + " data, found " +
                          dt(d.dtype));
  const TileType& window = tileOf(info.id == isa::OpId::TEXTRACT ? dst : src);
  if (window.validRows == 1 && window.validCols == 1) return;
  for (const Operand& o : ops) {
    if (o.role->id != isa::RoleId::Col) continue;
    const std::optional<int64_t> col = constValue(o.value);
    const int64_t bytes = col ? *col * isa::bitWidth(d.dtype) / 8 : 0;
    if (bytes % 32 != 0)
      diags_.error(o.loc, "'" + name + "' from vec to vec on a2a3 needs a column index of whole " +
                              "32-byte blocks (pto-isa: \"indexCol bytes must be 32-byte " +
                              "aligned (A3 limitation)\"), found column " + std::to_string(*col) +
                              " of " + dt(d.dtype) + " (" + std::to_string(bytes) + " bytes)");
  }
}

void Verifier::dtypeError(const Operand& o, const std::string& name, const std::string& why) {
  diags_.error(o.loc, "'" + name + "' " + why);
  noteDef(o.value, o.loc);
}

/// The operand of a tile role, or null.
const Verifier::Operand* Verifier::roleTile(const std::vector<Operand>& ops, isa::RoleId role) {
  for (const Operand& o : ops)
    if (o.role->id == role && o.role->kind == isa::RoleKind::Tile) return &o;
  return nullptr;
}

void Verifier::checkTypes(const isa::OpInfo& info, const std::string& name,
                          const std::vector<Operand>& ops, const Operand* dst) {
  const isa::DTypeSet& allowed = info.types(arch_);
  using enum isa::RoleId;
  auto tile = [&](isa::RoleId role) { return roleTile(ops, role); };
  auto inSet = [&](const Operand& o) {
    DType t = tileOf(o).dtype;
    if (!allowed.contains(t))
      dtypeError(o, name,
                 "does not support " + dt(t) + " on " + archName() +
                     " (supported: " + allowed.describe() + ")");
  };
  switch (info.rule) {
  case isa::TypeRule::SameAll: {
    if (!dst) return;
    inSet(*dst);
    for (const Operand& o : ops) {
      if (o.role->kind != isa::RoleKind::Tile || &o == dst) continue;
      if (o.role->id == Tmp || o.role->id == Mask || o.role->id == Idx || o.role->id == Idx0 ||
          o.role->id == Idx1)
        continue;
      if (tileOf(o).dtype != tileOf(*dst).dtype)
        dtypeError(o, name,
                   "operand '" + std::string(o.role->name) + "' is " + dt(tileOf(o).dtype) +
                       " but the destination is " + dt(tileOf(*dst).dtype));
    }
    break;
  }
  case isa::TypeRule::SrcSet:
    for (const Operand& o : ops)
      if (o.role->kind == isa::RoleKind::Tile && !o.role->isOutput && o.role->id != Tmp) inSet(o);
    break;
  case isa::TypeRule::Cvt: {
    const Operand* src = tile(Src);
    if (!src || !dst) return;
    DType s = tileOf(*src).dtype, d = tileOf(*dst).dtype;
    if (!isa::cvtSupported(arch_, s, d))
      dtypeError(*dst, name, "cannot convert " + dt(s) + " to " + dt(d) + " on " + archName());
    break;
  }
  case isa::TypeRule::Axpy: {
    const Operand* src = tile(Src);
    if (!src || !dst) return;
    DType s = tileOf(*src).dtype, d = tileOf(*dst).dtype;
    if (!isa::axpyPairSupported(d, s))
      dtypeError(*dst, name,
                 "supports (dst, src) = (f16, f16), (f32, f32) or (f32, f16), found (" + dt(d) +
                     ", " + dt(s) + ")");
    break;
  }
  case isa::TypeRule::Dequant:
    checkDequantTypes(name, ops, dst);
    break;
  case isa::TypeRule::Quant: {
    const Operand* src = tile(Src);
    if (src && tileOf(*src).dtype != DType::F32)
      dtypeError(*src, name, "quantizes f32 sources, found " + dt(tileOf(*src).dtype));
    if (dst && tileOf(*dst).dtype != DType::I8 && tileOf(*dst).dtype != DType::U8)
      dtypeError(*dst, name, "produces i8 or ui8, found " + dt(tileOf(*dst).dtype));
    if (const Operand* offset = tile(Offset); offset && tileOf(*offset).dtype != DType::F32)
      dtypeError(*offset, name, "takes an f32 offset tile, found " + dt(tileOf(*offset).dtype));
    break;
  }
  case isa::TypeRule::Insert:
    checkInsertTypes(name, ops, dst);
    break;
  case isa::TypeRule::Matmul:
    checkMatmul(name, ops, dst);
    break;
  case isa::TypeRule::Mov: {
    const Operand* src = tile(Src);
    if (!src || !dst) return;
    DType s = tileOf(*src).dtype, d = tileOf(*dst).dtype;
    bool accOut = tileOf(*src).loc == Loc::Acc; // the fixpipe may convert on the way out of L0C
    if (s != d && !accOut)
      dtypeError(*dst, name,
                 "copies " + dt(s) + " into " + article(dt(d)) + " tile; use pto.tcvt to convert");
    break;
  }
  case isa::TypeRule::Load:
  case isa::TypeRule::Store: {
    const Operand* t = nullptr;
    const Operand* view = nullptr;
    for (const Operand& o : ops) {
      if (o.role->kind == isa::RoleKind::Tile && !t) t = &o;
      if (o.role->kind == isa::RoleKind::View) view = &o;
    }
    if (!t || !view) return;
    DType td = tileOf(*t).dtype, vd = type(view->value).elem;
    bool accSource = info.rule == isa::TypeRule::Store && tileOf(*t).loc == Loc::Acc;
    if (!accSource) inSet(*t);
    if (!accSource && isa::bitWidth(td) != isa::bitWidth(vd))
      dtypeError(*t, name,
                 "moves " + dt(vd) + " data into/out of " + article(dt(td)) +
                     " tile: element sizes must match");
    break;
  }
  case isa::TypeRule::Gather:
    checkGatherTypes(name, ops, dst);
    break;
  case isa::TypeRule::GatherCmp:
    checkGatherCompareTypes(name, ops);
    break;
  case isa::TypeRule::PartArg:
    checkPartArgTypes(name, ops, dst);
    break;
  case isa::TypeRule::Any:
    break;
  }
}

/// TINSERT's element types: a conversion only out of acc (the fixpipe), else the same type of
/// the widths pto-isa's TInsert moves.
void Verifier::checkInsertTypes(const std::string& name, const std::vector<Operand>& ops,
                                const Operand* dst) {
  const Operand* src = roleTile(ops, isa::RoleId::Src);
  if (!src || !dst) return;
  DType s = tileOf(*src).dtype, d = tileOf(*dst).dtype;
  if (tileOf(*src).loc == Loc::Acc) {
    // The fixpipe converts on the way out of L0C: A2/A3 only narrows f32 to f16/bf16.
    bool narrow = s == DType::F32 && (d == DType::F16 || d == DType::BF16);
    bool keep = arch_ == isa::Arch::A5 &&
                ((s == DType::F32 && d == DType::F32) || (s == DType::I32 && d == DType::I32));
    if (!narrow && !keep)
      dtypeError(*dst, name,
                 "from acc on " + archName() + " converts " +
                     (arch_ == isa::Arch::A5 ? "f32 to f16/bf16/f32 or i32 to i32"
                                             : "f32 to f16 or bf16") +
                     ", found " + dt(s) + " to " + dt(d));
    return;
  }
  bool supported = d == DType::F16 || d == DType::BF16 || d == DType::F32 ||
                   isa::bitWidth(d) == 8 || d == DType::I32 || d == DType::U32;
  if (s != d)
    dtypeError(*dst, name,
               "copies " + dt(s) + " into " + article(dt(d)) + " tile; only acc sources convert");
  else if (!supported && arch_ == isa::Arch::A5) // A2/A3's vec -> vec set: checkVecWindowA2A3
    dtypeError(*dst, name,
               "moves fp8, f16, bf16, f32, 8-bit or 32-bit integer elements, found " + dt(d));
}

/// Gathers: index tiles of 16- or 32-bit integers, data of the destination's type.
void Verifier::checkGatherTypes(const std::string& name, const std::vector<Operand>& ops,
                                const Operand* dst) {
  using enum isa::RoleId;
  for (const Operand& o : ops) {
    if (o.role->kind != isa::RoleKind::Tile) continue;
    std::string_view r = o.role->name;
    if (isa::isIndexRole(o.role->id)) {
      DType i = tileOf(o).dtype;
      if (i != DType::I32 && i != DType::I16 && i != DType::U32 && i != DType::U16)
        dtypeError(o, name, "index tile must be i16, i32, ui16 or ui32, found " + dt(i));
    } else if (dst && &o != dst && o.role->id != Tmp && tileOf(o).dtype != tileOf(*dst).dtype) {
      dtypeError(o, name,
                 "operand '" + std::string(r) + "' is " + dt(tileOf(o).dtype) +
                     " but the destination is " + dt(tileOf(*dst).dtype));
    }
  }
}

/// TGATHER's compare form (PTOAS's verifier, pto-isa's static_asserts): indices into i32 (or
/// ui32) dst and cdst alike, the compared scalar of src's element type, and on A2/A3 an i32
/// source only for cmpMode eq.
void Verifier::checkGatherCompareTypes(const std::string& name, const std::vector<Operand>& ops) {
  const Operand *src = nullptr, *dst = nullptr, *cdst = nullptr, *scalar = nullptr;
  for (const Operand& o : ops) {
    if (o.role->id == isa::RoleId::Src) src = &o;
    if (o.role->id == isa::RoleId::Dst) dst = &o;
    if (o.role->id == isa::RoleId::Cdst) cdst = &o;
    if (o.role->id == isa::RoleId::Scalar) scalar = &o;
  }
  if (!src || !dst || !cdst || !scalar) return;
  const isa::DTypeSet& allowed = isa::info(isa::OpId::TGATHER_CMP).types(arch_);
  const DType s = tileOf(*src).dtype, d = tileOf(*dst).dtype;
  if (!allowed.contains(s))
    return dtypeError(*src, name,
                      "compare form does not support " + dt(s) + " sources on " + archName() +
                          " (supported: " + allowed.describe() + ")");
  if (d != DType::I32 && d != DType::U32)
    return dtypeError(*dst, name,
                      "compare form writes indices into an i32 or ui32 tile, found " + dt(d));
  if (tileOf(*cdst).dtype != d)
    return dtypeError(*cdst, name,
                      "compare form's cdst must have the destination's element type (" + dt(d) +
                          "), found " + dt(tileOf(*cdst).dtype));
  const Type& k = type(scalar->value);
  if (k.elem != s && k.kind == ir::TypeKind::Scalar)
    diags_.error(scalar->loc, "'" + name + "' compares against a scalar of the source's type (" +
                                  dt(s) + "), found " + toString(k));
}

/// TDEQUANT: i8 or i16 sources to f32, with f32 scale and offset tiles.
void Verifier::checkDequantTypes(const std::string& name, const std::vector<Operand>& ops,
                                 const Operand* dst) {
  const Operand* src = roleTile(ops, isa::RoleId::Src);
  if (!src || !dst) return;
  if (tileOf(*dst).dtype != DType::F32)
    dtypeError(*dst, name, "produces f32, found " + dt(tileOf(*dst).dtype));
  const DType s = tileOf(*src).dtype;
  if (s != DType::I8 && s != DType::I16)
    dtypeError(*src, name, "dequantizes i8 or i16 sources, found " + dt(s));
  for (isa::RoleId p : {isa::RoleId::Scale, isa::RoleId::Offset})
    if (const Operand* o = roleTile(ops, p); o && tileOf(*o).dtype != DType::F32)
      dtypeError(*o, name,
                 "'" + std::string(o->role->name) + "' must be f32, found " + dt(tileOf(*o).dtype));
}

/// TPARTARGMAX / TPARTARGMIN: the values one type of the arch set, the indices one type that
/// pto-isa pairs with it (its static_asserts: half with int16/uint16/int32/uint32, float with
/// int32/uint32); each index tile has its value tile's valid shape.
void Verifier::checkPartArgTypes(const std::string& name, const std::vector<Operand>& ops,
                                 const Operand* dst) {
  using isa::RoleId;
  const Operand* idx = roleTile(ops, RoleId::DstIdx);
  if (!dst || !idx) return;
  const isa::DTypeSet& allowed = isa::info(isa::OpId::TPARTARGMAX).types(arch_);
  const DType v = tileOf(*dst).dtype, i = tileOf(*idx).dtype;
  if (!allowed.contains(v))
    return dtypeError(*dst, name,
                      "does not support " + dt(v) + " values on " + archName() +
                          " (supported: " + allowed.describe() + ")");
  const bool indexOk = i == DType::I32 || i == DType::U32 ||
                       (v == DType::F16 && (i == DType::I16 || i == DType::U16));
  if (!indexOk)
    return dtypeError(*idx, name,
                      "pairs " + dt(v) + " values with " +
                          (v == DType::F16 ? "i16, ui16, i32 or ui32" : "i32 or ui32") +
                          " indices, found " + dt(i));
  const std::pair<RoleId, RoleId> pairs[] = {{RoleId::Src0, RoleId::Src0Idx},
                                             {RoleId::Src1, RoleId::Src1Idx},
                                             {RoleId::Dst, RoleId::DstIdx}};
  for (const auto& [valueRole, indexRole] : pairs) {
    const Operand *value = roleTile(ops, valueRole), *index = roleTile(ops, indexRole);
    if (!value || !index) continue;
    if (tileOf(*value).dtype != v)
      return dtypeError(*value, name,
                        "operand '" + std::string(value->role->name) + "' is " +
                            dt(tileOf(*value).dtype) + " but the destination is " + dt(v));
    if (tileOf(*index).dtype != i)
      return dtypeError(*index, name,
                        "operand '" + std::string(index->role->name) + "' is " +
                            dt(tileOf(*index).dtype) + " but 'dstIdx' is " + dt(i));
    const ir::TileType &vt = tileOf(*value), &it = tileOf(*index);
    if (vt.validRows != it.validRows || vt.validCols != it.validCols)
      diags_.error(index->loc, "'" + name + "' operand '" + std::string(index->role->name) +
                                   "' must have the valid shape of '" +
                                   std::string(value->role->name) + "'");
  }
  // pto-isa: the destination's valid region is exactly one source's.
  const Operand *s0 = roleTile(ops, RoleId::Src0), *s1 = roleTile(ops, RoleId::Src1);
  if (!s0 || !s1) return;
  const ir::TileType &d = tileOf(*dst), &a = tileOf(*s0), &b = tileOf(*s1);
  auto same = [](const ir::TileType& x, const ir::TileType& y) {
    return x.validRows == y.validRows && x.validCols == y.validCols;
  };
  auto known = [](const ir::TileType& x) {
    return x.validRows != ir::kDynamic && x.validCols != ir::kDynamic;
  };
  if (known(d) && known(a) && known(b) && !same(d, a) && !same(d, b))
    diags_.error(dst->loc, "'" + name + "' destination valid shape " + vshape(d) +
                               " must be src0's (" + vshape(a) + ") or src1's (" + vshape(b) + ")");
}

void Verifier::checkMatmul(const std::string& name, const std::vector<Operand>& ops,
                           const Operand* dst) {
  const Operand *lhs = nullptr, *rhs = nullptr, *acc = nullptr;
  for (const Operand& o : ops) {
    if (o.role->id == isa::RoleId::Lhs) lhs = &o;
    if (o.role->id == isa::RoleId::Rhs) rhs = &o;
    if (o.role->id == isa::RoleId::Acc) acc = &o;
  }
  if (!lhs || !rhs || !dst) return;
  DType a = tileOf(*lhs).dtype, b = tileOf(*rhs).dtype, c = tileOf(*dst).dtype;
  struct Triple {
    DType c, a, b;
    bool a5Only;
  };
  static const Triple kTriples[] = {
      {DType::I32, DType::I8, DType::I8, false},
      {DType::F32, DType::F16, DType::F16, false},
      {DType::F32, DType::BF16, DType::BF16, false},
      {DType::F32, DType::F32, DType::F32, false},
      {DType::F32, DType::F8E4M3, DType::F8E4M3, true},
      {DType::F32, DType::F8E5M2, DType::F8E5M2, true},
      {DType::F32, DType::F8E4M3, DType::F8E5M2, true},
      {DType::F32, DType::F8E5M2, DType::F8E4M3, true},
      {DType::F32, DType::HIF8, DType::HIF8, true},
  };
  bool ok = false;
  for (const Triple& t : kTriples)
    ok |= t.c == c && t.a == a && t.b == b && (!t.a5Only || arch_ == isa::Arch::A5);
  if (!ok)
    dtypeError(
        *dst, name,
        "does not support (acc, left, right) = (" + dt(c) + ", " + dt(a) + ", " + dt(b) + ") on " +
            archName() +
            " (supported: (i32, i8, i8), (f32, f16, f16), (f32, bf16, bf16), (f32, f32, f32)" +
            (arch_ == isa::Arch::A5 ? ", fp8/hif8 pairs" : "") + ")");
  if (acc && tileOf(*acc).dtype != c)
    dtypeError(*acc, name, "accumulator input must match the destination dtype");
  // Shapes: [M,K] x [K,N] -> [M,N], each in 1..4095.
  const TileType &L = tileOf(*lhs), &R = tileOf(*rhs), &C = tileOf(*dst);
  auto v = [](int64_t valid, int64_t phys) { return valid == kDynamic ? phys : valid; };
  int64_t M = v(L.validRows, L.rows), K = v(L.validCols, L.cols), K2 = v(R.validRows, R.rows),
          N = v(R.validCols, R.cols);
  if (K != K2)
    diags_.error(rhs->loc, "'" + name + "' inner dimensions differ: left is " + std::to_string(M) +
                               "x" + std::to_string(K) + ", right is " + std::to_string(K2) + "x" +
                               std::to_string(N));
  if (v(C.validRows, C.rows) != M || v(C.validCols, C.cols) != N)
    diags_.error(dst->loc, "'" + name + "' result must be " + std::to_string(M) + "x" +
                               std::to_string(N) + ", found " +
                               std::to_string(v(C.validRows, C.rows)) + "x" +
                               std::to_string(v(C.validCols, C.cols)));
  for (auto [dim, label] : {std::pair{M, "M"}, std::pair{K, "K"}, std::pair{N, "N"}})
    if (dim < 1 || dim > 4095)
      diags_.error(dst->loc,
                   "'" + name + "' " + label + " = " + std::to_string(dim) + " is outside 1..4095");
}

void Verifier::checkShapes(const isa::OpInfo& info, const std::string& name,
                           const std::vector<Operand>& ops, const Operand* dst) {
  if (!dst) return;
  const TileType& d = tileOf(*dst);
  auto sameValid = [&](const Operand& o, bool rows, bool cols) {
    const TileType& s = tileOf(o);
    auto differs = [](int64_t a, int64_t b) { return a != kDynamic && b != kDynamic && a != b; };
    if ((rows && differs(s.validRows, d.validRows)) ||
        (cols && differs(s.validCols, d.validCols))) {
      diags_.error(o.loc, "'" + name + "' operand '" + std::string(o.role->name) +
                              "' has valid shape " + vshape(s) + " but the destination has " +
                              vshape(d));
      noteDef(o.value, o.loc);
    }
  };
  for (const Operand& o : ops) {
    if (o.role->kind != isa::RoleKind::Tile || &o == dst) continue;
    using enum isa::RoleId;
    const isa::RoleId r = o.role->id;
    if (r == Tmp || isa::isIndexRole(r)) continue;
    if (info.flags & isa::kSameValid)
      sameValid(o, true, true);
    else if (info.flags & isa::kRowReduce)
      sameValid(o, true, false);
    else if (info.flags & isa::kColReduce)
      sameValid(o, false, true);
    else if ((info.flags & isa::kRowExpand))
      sameValid(o, true, r == Src0);
    else if ((info.flags & isa::kColExpand))
      sameValid(o, r == Src0, true);
    else if (info.rule == isa::TypeRule::Dequant && r == Src)
      sameValid(o, true, true);
    else if (info.rule == isa::TypeRule::Dequant)
      sameValid(o, true, false);
  }
  if ((info.flags & isa::kRowReduce) && d.validCols != kDynamic && d.validCols != 1)
    diags_.error(
        dst->loc,
        "'" + name +
            "' produces one value per row: the destination must have 1 valid column, found " +
            std::to_string(d.validCols));
  if ((info.flags & isa::kColReduce) && d.validRows != kDynamic && d.validRows != 1)
    diags_.error(
        dst->loc,
        "'" + name +
            "' produces one value per column: the destination must have 1 valid row, found " +
            std::to_string(d.validRows));
}

std::string Verifier::vshape(const TileType& t) {
  auto d = [](int64_t v) { return v == kDynamic ? std::string("?") : std::to_string(v); };
  return d(t.validRows) + "x" + d(t.validCols);
}

} // namespace pto::as::verify
