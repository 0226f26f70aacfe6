// cpu kernels of TMOV/TSTORE through the fixpipe (isa/Fixpipe.h, docs/runtime.md "Fixpipe"):
// pre-quantisation with a quant word (a register) or a scaling tile of words, pre-ReLU, atomic
// add into GM, and the acc-to-vector modes. The element computation is isa::fix::apply.
#include "isa/Fixpipe.h"
#include "runtime/Program.h"
#include "runtime/cpu/Elem.h"
#include "runtime/cpu/KernelUtil.h"

#include <mutex>

namespace pto::rt::cpu {
namespace {

namespace fix = isa::fix;
using isa::DType;
namespace enc = isa::enc;

/// The quant word of column j: the register after the GM address and stride (TSTORE) or the
/// first (TMOV) for the scalar modes; element j of the scaling tile for the vector modes.
struct Words {
  const TileInst& t;
  const Core& c;
  uint64_t operator()(uint32_t j) const {
    switch (fix::kindOf(t.fix.quant)) {
    case fix::QuantKind::Scalar:
      return c.r[t.ior[t.op == isa::OpId::TSTORE ? 2 : 0]];
    case fix::QuantKind::Vector: {
      const TileOperand& fp = t.tiles[t.src1];
      return getBits(c.buf[fp.loc] + fp.offset, 64, fp.elemOffset(0, j));
    }
    case fix::QuantKind::None:
      break;
    }
    return 0;
  }
};

/// Atomic adds of every block (blocks run on threads of their own) go one at a time.
std::mutex& atomicMutex() {
  static std::mutex m;
  return m;
}

/// TSTORE from a tile through the fixpipe: element (r, j) = relu(quant(src)) [+ GM (r, j)].
void kStoreFix(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand& os = t.tiles[t.src0];
  if (!fits(c, t, os, vr, vc) || vr == 0 || vc == 0) return;
  if (fix::kindOf(t.fix.quant) == fix::QuantKind::Vector && !fits(c, t, t.tiles[t.src1], 1, vc))
    return;
  const uint64_t addr = t.scalar(c, 0), stride = t.scalar(c, 1);
  const GmRegion* g = c.regionOf(addr);
  DType gm = g && isa::bitWidth(g->dtype) != isa::bitWidth(os.dtype) ? g->dtype : os.dtype;
  if (t.datr && t.datr->dataType != enc::kDataTypeNone && t.datr->dataType != 0)
    if (auto d = enc::dtypeOfCode(t.datr->dataType)) gm = *d;
  const unsigned sbits = isa::bitWidth(os.dtype), gbits = isa::bitWidth(gm);
  const bool atomic = t.fix.atomic == isa::AtomicType::Add;
  const GmRows rows{vr, uint64_t{vc} * gbits / 8, stride, atomic, gm};
  uint8_t* dst =
      c.translate(addr, (vr - 1) * stride + uint64_t{vc} * gbits / 8, "TSTORE", true, &rows);
  if (!dst) return;
  const uint8_t* sb = c.buf[os.loc] + os.offset;
  const bool relu = t.fix.relu == isa::ReluPreMode::NormalRelu;
  const Words word{t, c};
  // Staged for a remote atomic add (World::remote): the addends go there, the rank adds them.
  const bool addHere = atomic && !rows.staged;
  std::unique_lock<std::mutex> lock(atomicMutex(), std::defer_lock);
  if (addHere) lock.lock();
  for (uint32_t r = 0; r < vr; ++r)
    for (uint32_t j = 0; j < vc; ++j) {
      uint64_t v = fix::apply(t.fix.quant, os.dtype, gm, getBits(sb, sbits, os.elemOffset(r, j)),
                              word(j), relu);
      if (addHere) v = fix::atomicAdd(gm, getBits(dst + r * stride, gbits, j), v);
      setBits(dst + r * stride, gbits, j, v);
    }
}

/// What this core receives of an acc-to-vector TMOV (docs/runtime.md): source rows
/// [row0, row0 + rows) and columns [col0, col0 + cols), written from the destination's (0, 0).
/// The core without a cluster is AIV0.
struct AccPart {
  uint32_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};
std::optional<AccPart> partOf(const Core& c, const TileInst& t, uint32_t vr, uint32_t vc) {
  const bool vec1 = c.cluster && c.lane == 2;
  AccPart p{0, vr, 0, vc};
  switch (t.fix.accToVec) {
  case isa::AccToVecMode::SingleVec0:
    if (vec1) p.rows = 0;
    break;
  case isa::AccToVecMode::SingleVec1:
    if (!vec1) p.rows = 0;
    break;
  case isa::AccToVecMode::DualSplitM:
    if (vr % 2) return std::nullopt;
    p.rows = vr / 2;
    p.row0 = vec1 ? vr / 2 : 0;
    break;
  case isa::AccToVecMode::DualSplitN:
    if (vc % 2) return std::nullopt;
    p.cols = vc / 2;
    p.col0 = vec1 ? vc / 2 : 0;
    break;
  }
  return p;
}

/// TMOV from acc through the fixpipe (to mat or vec).
void kMovFix(Core& c, const TileInst& t) {
  const uint32_t vr = t.validRows(c), vc = t.validCols(c);
  const TileOperand &od = t.tiles[t.dst], &os = t.tiles[t.src0];
  if (!fits(c, t, os, vr, vc)) return;
  if (fix::kindOf(t.fix.quant) == fix::QuantKind::Vector && !fits(c, t, t.tiles[t.src1], 1, vc))
    return;
  AccPart p{0, vr, 0, vc};
  if (od.loc == static_cast<uint8_t>(isa::Loc::Vec) &&
      os.loc == static_cast<uint8_t>(isa::Loc::Acc)) {
    // In a cluster the acc is the cube core's and the destination the vector cores' UB: that
    // cross-core write is not modelled (the pipes are the cluster's way between the cores).
    if (c.cluster && c.lane == 0)
      return fail(c, std::string(t.name) + " from acc to vec on the cube core of a cluster "
                                           "(a kernel with cross-core pipes) is not supported");
    auto part = partOf(c, t, vr, vc);
    if (!part)
      return fail(c, std::string(t.name) + ": " + std::string(isa::spelling(t.fix.accToVec)) +
                         " splits " + std::to_string(vr) + "x" + std::to_string(vc) +
                         " in two halves; the split dimension must be even");
    p = *part;
  }
  if (!fits(c, t, od, p.rows, p.cols)) return;
  const uint8_t* sb = c.buf[os.loc] + os.offset;
  uint8_t* db = c.buf[od.loc] + od.offset;
  const unsigned sbits = isa::bitWidth(os.dtype), dbits = isa::bitWidth(od.dtype);
  const bool relu = t.fix.relu == isa::ReluPreMode::NormalRelu;
  const Words word{t, c};
  for (uint32_t r = 0; r < p.rows; ++r)
    for (uint32_t j = 0; j < p.cols; ++j) {
      const uint32_t sr = p.row0 + r, sj = p.col0 + j;
      setBits(db, dbits, od.elemOffset(r, j),
              fix::apply(t.fix.quant, os.dtype, od.dtype, getBits(sb, sbits, os.elemOffset(sr, sj)),
                         word(sj), relu));
    }
}

} // namespace

bool selectFixpipeKernel(TileInst& t, std::optional<std::string>& err) {
  Selection sel(t, err);
  if (sel.missing({t.src0}) || (t.op == isa::OpId::TMOV && sel.missing({t.dst}))) return true;
  const fix::QuantKind kind = fix::kindOf(t.fix.quant);
  if ((kind == fix::QuantKind::Vector) != (t.src1 >= 0))
    return sel.fail(std::string(t.name) + ": B.FPATR PreQuantMode " +
                    std::string(fix::name(t.fix.quant)) +
                    (t.src1 >= 0 ? " with a scaling tile (only the vector modes take one)"
                                 : " needs a scaling tile"));
  if (kind == fix::QuantKind::Vector && isa::bitWidth(t.tiles[t.src1].dtype) != 64)
    return sel.fail(std::string(t.name) +
                    ": the scaling tile holds one 64-bit quant word per "
                    "column (i64 or ui64 elements), found " +
                    std::string(isa::spelling(t.tiles[t.src1].dtype)));
  if (t.op == isa::OpId::TSTORE && t.gmDn)
    return sel.fail("TSTORE through the fixpipe to a DN view is not supported by the cpu backend");
  const DType s = t.tiles[t.src0].dtype;
  if (kind != fix::QuantKind::None || t.fix.relu != isa::ReluPreMode::NoRelu)
    if (s != DType::F32 && s != DType::I32)
      return sel.fail(std::string(t.name) +
                      ": the fixpipe converts f32 or i32 acc elements, found " +
                      std::string(isa::spelling(s)));
  t.kernel = t.op == isa::OpId::TSTORE ? &kStoreFix : &kMovFix;
  return true;
}

} // namespace pto::rt::cpu
