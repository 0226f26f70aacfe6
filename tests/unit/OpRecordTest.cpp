// Each op one complete record (ARCHITECTURE.md 2.1): walks every row of isa/Ops.def and fails
// unless the op has an encoding, a cpu kernel, an npu cost entry and a C++ export form, or is in
// one of the explicit refusal lists below (each documented where the refusal lives), and unless
// each of its attributes (isa/OpAttrs.def) is handled by every layer as its row says: a verifier
// rule, its encoding or the lowering's refusal, the reference interpreter's run or refusal. A
// new row in Ops.def or OpAttrs.def therefore fails here until every layer knows it
// (docs/development.md, "Adding an op"). The builder, printer and lowering are table-driven.
#include "asm/ir/IR.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/AttrValues.h"
#include "export/CppExport.h"
#include "isa/Encoding.h"
#include "isa/Isa.h"
#include "isa/OpAttrs.h"
#include "ref/Interp.h"
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
    OpId::TRANDOM, OpId::TPACK, OpId::TTRI, OpId::THISTOGRAM, OpId::TQUANT,
    // the cross-core pipe ops (docs/pipes.md 5)
    OpId::TPIPE_INIT, OpId::TPIPE_PUSH, OpId::TPIPE_POP, OpId::TPIPE_FREE, OpId::TPIPE_ALLOC,
    OpId::TPIPE_COMMIT, OpId::TPIPE_TAKE,
    OpId::TGATHER_CMP,     // pto-isa's compare form takes a per-row threshold tile, not a scalar
    OpId::TGET_SCALE_ADDR, // pto-isa's CPU simulator aliases instead of shifting the address
    OpId::TDEINTERLEAVE,   // pto-isa's TDeInterleave takes (dst1, dst0, src1, src0)
    OpId::TGETVAL,         // its scalar result has no variable in the export (Spelling.cpp)
    OpId::PRINT,           // cce::printf's length modifiers from register bits (Spelling.cpp)
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

/// A tile op carrying one attribute, as the builder makes it (its value read by the parser).
ir::Op opWith(OpId id, std::string_view key, std::string_view value) {
  ir::Op op{};
  op.kind = ir::OpKind::TileOp;
  op.tileOp = id;
  if (!value.empty()) op.attrs.push_back({std::string(key), std::string(value)});
  as::readTileOpAttributes(op);
  return op;
}

/// Every layer handles the attribute `a` of its op as its row of isa/OpAttrs.def says; the
/// failures name the layer and the file that lacks it.
void checkAttribute(const isa::OpAttr& a) {
  using isa::AttrEncoding;
  using isa::AttrRef;
  const std::string what = std::string(a.key) + " = " + std::string(a.validValue);
  SCOPED_TRACE("attribute " + std::string(a.key) + " (isa/OpAttrs.def)");
  const ir::Op absent = opWith(a.op, a.key, "");
  const ir::Op dflt = opWith(a.op, a.key, a.defaultValue);
  const ir::Op valid = opWith(a.op, a.key, a.validValue);
  ASSERT_FALSE(a.validValue.empty()) << "the row needs a valid value other than the default";
  ASSERT_FALSE(isa::isDefaultAttrValue(a, a.validValue)) << "its valid value is the default";
  // Verifier (asm/ir/VerifyOpRules.cpp, as::verify::attributeValueError, on the parser's
  // reading by the row's domain): the default and the valid value pass, the invalid one is
  // refused; only an attribute pto-as refuses at lowering may go without a rule.
  const ir::AttrReading* read = ir::attrReading(valid, a.id);
  ASSERT_NE(read, nullptr) << "parser: as::readTileOpAttributes does not read " << what;
  EXPECT_EQ(read->isDefault, false) << "parser: reads " << what << " as the default";
  EXPECT_EQ(as::verify::attributeValueError(valid, a.id), std::nullopt)
      << "verifier: refuses " << what;
  EXPECT_EQ(as::verify::attributeValueError(dflt, a.id), std::nullopt)
      << "verifier: refuses the default " << a.defaultValue;
  if (!a.defaultValue.empty()) {
    EXPECT_TRUE(ir::attrReading(dflt, a.id)->isDefault)
        << "parser: does not read " << a.defaultValue << " as the default";
  }
  if (!a.invalidValue.empty()) {
    const ir::Op bad = opWith(a.op, a.key, a.invalidValue);
    const auto e = as::verify::attributeValueError(bad, a.id);
    EXPECT_TRUE(e) << "verifier: no rule refuses " << a.key << " = " << a.invalidValue
                   << " (the row's domain, isa/OpAttrs.def)";
    if (e) {
      EXPECT_NE(e->find(std::string(a.key)), std::string::npos) << *e;
    }
  } else {
    EXPECT_EQ(a.encoding, AttrEncoding::Refused)
        << "verifier: no rule for its values (asm/ir/VerifyOpRules.cpp attributeValueError), "
           "and pto-as does not refuse it at lowering";
  }
  // Encoding: a B.IOR scalar that depends on the value (as::readTileOpAttributes), or the
  // lowering's refusal of any value but the default (attributesEncodable, from the table),
  // which the reference interpreter must then refuse too.
  if (a.encoding == AttrEncoding::Ior) {
    EXPECT_NE(valid.modes->ior, absent.modes->ior)
        << "encoding: as::readTileOpAttributes (asm/parse/AttrValues.cpp) adds no B.IOR scalar "
           "for "
        << what;
    if (!a.defaultValue.empty()) {
      EXPECT_EQ(dflt.modes->ior, absent.modes->ior)
          << "encoding: the default " << a.defaultValue << " encodes unlike leaving it out";
    }
  }
  if (a.encoding == AttrEncoding::Refused) {
    EXPECT_EQ(a.ref, AttrRef::Refused)
        << "reference interpreter: runs " << what << ", which pto-as refuses to encode";
  }
  // Execution (ref/Tiles.cpp, ref::unrunnableAttribute): a value it runs is not refused; a
  // refused one is, with its name, and the default still runs.
  const auto refused = ref::unrunnableAttribute(valid);
  if (a.ref == AttrRef::Refused) {
    EXPECT_TRUE(refused) << "reference interpreter: does not refuse " << what
                         << " (ref/Tiles.cpp unrunnableAttribute)";
    if (refused) {
      EXPECT_NE(refused->find(std::string(a.key)), std::string::npos) << *refused;
    }
  } else {
    EXPECT_FALSE(refused) << "reference interpreter: refuses " << what << ": " << *refused;
  }
  if (!a.defaultValue.empty()) {
    EXPECT_FALSE(ref::unrunnableAttribute(dflt))
        << "reference interpreter: refuses the default " << a.defaultValue;
  }
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
    // Its attributes (isa/OpAttrs.def), each in every layer.
    for (const isa::OpAttr& a : isa::opAttrs())
      if (a.op == op.id) checkAttribute(a);
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
