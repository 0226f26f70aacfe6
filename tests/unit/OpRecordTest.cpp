// Each op one complete record (ARCHITECTURE.md 2.1): walks every row of isa/Ops.def and fails
// unless the op has an encoding, a cpu kernel, an npu cost entry and a C++ export form, or is in
// one of the explicit refusal lists below (each documented where the refusal lives). A new row
// in Ops.def therefore fails here until every layer knows it (docs/development.md, "Adding an
// op"). The builder, verifier, printer and lowering are table-driven and need no entry.
#include "export/CppExport.h"
#include "isa/Encoding.h"
#include "isa/Isa.h"
#include "runtime/Program.h"
#include "runtime/npu/Cost.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using namespace pto;
using isa::DType;
using isa::OpId;

// Ops the cpu backend refuses with a reason (runtime/cpu/LayoutKernels.cpp, docs/runtime.md).
const std::set<OpId> kNoCpuKernel = {
    OpId::TMOV_FP, // the scaling tile's quantization format is implementation-defined
};

// Ops the C++ export refuses with a reason (export/Spelling.cpp intrinsicFor, docs/cpp-export.md).
const std::set<OpId> kNoExport = {
    OpId::TRANDOM,         OpId::TPACK,      OpId::TTRI,      OpId::THISTOGRAM, OpId::TQUANT,
    OpId::TPIPE_INIT,      OpId::TPIPE_PUSH, OpId::TPIPE_POP, OpId::TPIPE_FREE, // docs/pipes.md 5
    OpId::TGATHER_CMP,     // pto-isa's compare form takes a per-row threshold tile, not a scalar
    OpId::TGET_SCALE_ADDR, // pto-isa's CPU simulator aliases instead of shifting the address
    OpId::TDEINTERLEAVE,   // pto-isa's TDeInterleave takes (dst1, dst0, src1, src0)
};

// Ops without an encoding: none (EXT XOPs cover what 0.58.3 lacks; docs/encoding.md 5).
const std::set<OpId> kNoEncoding = {};

isa::Loc locFor(const isa::OpInfo& op, isa::RoleId role) {
  return (op.flags & isa::kCubeLocs) ? isa::cubeLocOf(role) : isa::Loc::Vec;
}

std::optional<std::string> tryDTypes(const isa::OpInfo& op, const std::vector<int>& roles,
                                     std::string& why);

/// Is there any (output dtype, input dtype, index dtype) for which the cpu backend selects a
/// kernel for `op`, with its required tile operands in B.IOT order (isa::tileOperandRoles)?
/// Returns the last refusal message otherwise.
std::optional<std::string> cpuKernel(const isa::OpInfo& op, std::string& why) {
  for (bool optional : {false, true}) {
    std::vector<int> roles; // tile roles, outputs first (B.IOT order)
    for (bool outputs : {true, false})
      for (size_t r = 0; r < op.roles.size(); ++r)
        if (op.roles[r].kind == isa::RoleKind::Tile && op.roles[r].isOutput == outputs &&
            (optional || !op.roles[r].optional))
          roles.push_back(static_cast<int>(r));
    if (op.id == OpId::TMRGSORT) roles.resize(2); // (dst, src) form
    if (!tryDTypes(op, roles, why)) return std::nullopt;
  }
  return why;
}

/// Parameter tiles (scale, offset) take the destination's type, index tiles `idx`, data tiles
/// `i`; destinations have a pad value (TFILLPAD needs one).
bool isParamRole(isa::RoleId r) {
  return r == isa::RoleId::Scale || r == isa::RoleId::Offset;
}

std::optional<std::string> tryDTypes(const isa::OpInfo& op, const std::vector<int>& roles,
                                     std::string& why) {
  for (unsigned o = 0; o < isa::kNumDTypes; ++o)
    for (unsigned i = 0; i < isa::kNumDTypes; ++i)
      for (DType idx : {DType::I32, DType::U32, DType::I16, DType::U16}) {
        rt::TileInst t;
        t.op = op.id;
        t.name = "op";
        for (int r : roles) {
          const isa::Role& role = op.roles[static_cast<size_t>(r)];
          rt::TileOperand x;
          x.dtype = isa::isIndexRole(role.id)               ? idx
                    : role.isOutput || isParamRole(role.id) ? static_cast<DType>(o)
                                                            : static_cast<DType>(i);
          if (role.isOutput) x.pad = isa::PadValue::Zero;
          x.loc = static_cast<uint8_t>(locFor(op, role.id));
          x.rows = 16;
          x.cols = 16;
          x.validRows = x.validCols = 16;
          x.name = std::string(role.name);
          t.tiles.push_back(x);
        }
        t.startType = static_cast<DType>(i);
        if (auto e = rt::assignTileRoles(t)) {
          why = *e;
          continue;
        }
        auto e = rt::selectKernel(t);
        if (!e) return std::nullopt;
        why = *e;
      }
  return why;
}

TEST(OpRecord, EveryOpHasEveryLayer) {
  unsigned checked = 0;
  for (const isa::OpInfo& op : isa::allOps()) {
    SCOPED_TRACE(std::string(op.mnemonic));
    // Encoding: a 0.58.3 selector or an extension XOP, and its start word encodes.
    const isa::enc::TileOpInfo* e = isa::enc::tileOpFor(op.id);
    EXPECT_EQ(e != nullptr, !kNoEncoding.count(op.id)) << "encoding (isa/Encoding.def)";
    if (e) {
      auto w = isa::enc::encode(isa::enc::tileStart(e->op, 1));
      EXPECT_TRUE(w) << "start word: " << w.error().message;
    }
    // cpu kernel (runtime/cpu), by the real role assignment and kernel selection.
    std::string why;
    const bool kernel = !cpuKernel(op, why);
    EXPECT_EQ(kernel, !kNoCpuKernel.count(op.id)) << "cpu kernel (runtime/cpu): " << why;
    if (!kernel && kNoCpuKernel.count(op.id)) {
      EXPECT_NE(why.find("is not supported by the cpu backend"), std::string::npos) << why;
    }
    // npu cost (runtime/npu/CostTable.def or Cost.cpp's transfer / cube model).
    EXPECT_TRUE(rt::npu::hasCostEntry(op.id)) << "npu cost (runtime/npu/CostTable.def)";
    // C++ export: the pto-isa intrinsic it calls.
    EXPECT_EQ(!cppexport::cppIntrinsic(op.id).empty(), !kNoExport.count(op.id))
        << "export intrinsic (export/Spelling.cpp: a kSpellings row, or intrinsicFor's refusal)";
    ++checked;
  }
  EXPECT_EQ(checked, isa::allOps().size());
}

// The worked example of docs/development.md: TPRINT, the last op added, in every layer.
TEST(OpRecord, TprintIsComplete) {
  const isa::OpInfo& op = isa::info(OpId::TPRINT);
  EXPECT_EQ(op.numOutputs(), 0u);
  EXPECT_EQ(op.pipe, isa::Pipe::S);
  const isa::enc::TileOpInfo* e = isa::enc::tileOpFor(OpId::TPRINT);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->family, isa::enc::TileFamily::EXT);
  EXPECT_EQ(e->function, 20u); // XOP 20
  std::string why;
  EXPECT_FALSE(cpuKernel(op, why)) << why;
  EXPECT_TRUE(rt::npu::hasCostEntry(OpId::TPRINT));
  EXPECT_EQ(cppexport::cppIntrinsic(OpId::TPRINT), "TPRINT");
}

} // namespace
