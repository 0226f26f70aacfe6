#include "isa/Isa.h"

#include <gtest/gtest.h>

#include <set>

using namespace pto::isa;

TEST(DType, CanonicalSpellingsRoundTrip) {
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    auto parsed = parseDType(spelling(t));
    ASSERT_TRUE(parsed.has_value()) << spelling(t);
    EXPECT_EQ(*parsed, t);
  }
}

TEST(DType, AliasesUsersWrite) {
  EXPECT_EQ(parseDType("half"), DType::F16);
  EXPECT_EQ(parseDType("float"), DType::F32);
  EXPECT_EQ(parseDType("f8E4M3FN"), DType::F8E4M3);
  EXPECT_EQ(parseDType("u8"), DType::U8);
  EXPECT_EQ(parseDType("int8"), DType::I8);
  EXPECT_FALSE(parseDType("f33").has_value());
  EXPECT_EQ(bitWidth(DType::BF16), 16u);
  EXPECT_EQ(bitWidth(DType::F4E2M1X2), 4u);
}

TEST(Enums, SpellingsAndAliases) {
  EXPECT_EQ(parseRoundMode("ROUND"), RoundMode::CAST_ROUND);
  EXPECT_EQ(parseRoundMode("CAST_RINT"), RoundMode::CAST_RINT);
  EXPECT_EQ(spelling(RoundMode::CAST_TRUNC), "CAST_TRUNC");
  EXPECT_EQ(parsePipe("PIPE_MTE2"), Pipe::MTE2);
  EXPECT_FALSE(parsePipe("PIPE_X").has_value());
  EXPECT_EQ(parseLoc("ub"), Loc::Vec);
  EXPECT_EQ(parseArch("a3"), Arch::A2A3);
  EXPECT_EQ(parseArch("a5"), Arch::A5);
}

// A high-precision form replaces its base op after the operands are bound to the base op's
// roles (Builder::resolvePrecision), so its roles must be the same, in the same order; it is an
// A5 op whose types are its base op's float types, and defaultPrecisionForm undoes it.
TEST(OpTable, HighPrecisionFormsMirrorTheirBaseOps) {
  unsigned forms = 0;
  for (const OpInfo& base : allOps()) {
    const std::optional<OpId> hp = highPrecisionForm(base.id);
    if (!hp) {
      // Either a high-precision form itself, which names its base op, or an op of one form.
      const OpId d = defaultPrecisionForm(base.id);
      EXPECT_TRUE(d == base.id || highPrecisionForm(d) == base.id) << base.mnemonic;
      continue;
    }
    ++forms;
    const OpInfo& h = info(*hp);
    SCOPED_TRACE(std::string(h.mnemonic));
    EXPECT_EQ(defaultPrecisionForm(*hp), base.id);
    EXPECT_EQ(std::string(h.mnemonic), std::string(base.mnemonic) + ".hp");
    ASSERT_EQ(h.roles.size(), base.roles.size());
    for (size_t r = 0; r < h.roles.size(); ++r) {
      EXPECT_EQ(h.roles[r].name, base.roles[r].name);
      EXPECT_EQ(h.roles[r].kind, base.roles[r].kind);
      EXPECT_EQ(h.roles[r].isOutput, base.roles[r].isOutput);
    }
    EXPECT_TRUE(h.flags & kA5Only);
    EXPECT_EQ(h.pipe, base.pipe);
  }
  EXPECT_EQ(forms, 4u); // tsqrt, trsqrt, trecip, tdiv
}

TEST(Arch, BufferCapacities) {
  EXPECT_EQ(buffer(Arch::A2A3, Loc::Vec).capacity, 192u * 1024);
  EXPECT_EQ(buffer(Arch::A5, Loc::Vec).capacity, 256u * 1024);
  EXPECT_EQ(buffer(Arch::A5, Loc::Acc).capacity, 256u * 1024);
  EXPECT_EQ(buffer(Arch::A2A3, Loc::Left).alignment, 512u);
  EXPECT_EQ(profile(Arch::A2A3).eventIdsPerPipePair, 8u);
}

TEST(SyncOpType, PipesFollowPtoas) {
  EXPECT_EQ(pipeOf(SyncOpType::TLOAD), Pipe::MTE2);
  EXPECT_EQ(pipeOf(SyncOpType::TSTORE_VEC), Pipe::MTE3);
  EXPECT_EQ(pipeOf(SyncOpType::TSTORE_ACC), Pipe::FIX);
  EXPECT_EQ(pipeOf(SyncOpType::TMOV_M2L), Pipe::MTE1);
  EXPECT_EQ(pipeOf(SyncOpType::TMATMUL), Pipe::M);
  EXPECT_EQ(pipeOf(SyncOpType::TVEC), Pipe::V);
}

TEST(OpTable, EveryRowIsWellFormed) {
  std::set<std::string_view> names;
  for (const OpInfo& op : allOps()) {
    EXPECT_TRUE(names.insert(op.mnemonic).second) << "duplicate " << op.mnemonic;
    // Every op writes something, except TPRINT and PRINT, which only observe their input, and the
    // pipe ops whose effect is on the cross-core pipe (init, push, free).
    const bool noTileOutput = op.id == OpId::TPRINT || op.id == OpId::PRINT ||
                              op.id == OpId::TPIPE_INIT || op.id == OpId::TPIPE_PUSH ||
                              op.id == OpId::TPIPE_FREE || op.id == OpId::TPIPE_COMMIT;
    EXPECT_GE(op.numOutputs() + noTileOutput, 1u) << op.mnemonic;
    EXPECT_GE(op.numInputs() + op.numOutputs(), 1u) << op.mnemonic;
    EXPECT_EQ(&info(op.id), &op) << op.mnemonic;
    EXPECT_EQ(findOp(op.mnemonic), &op) << op.mnemonic;
    EXPECT_FALSE(op.a2a3Types.empty() && op.a5Types.empty()) << op.mnemonic;
    for (const Role& r : op.roles)
      EXPECT_FALSE(r.name.empty()) << op.mnemonic;
  }
  EXPECT_GE(allOps().size(), 100u);
}

TEST(OpTable, LookupSpellings) {
  ASSERT_NE(findOp("pto.tadd"), nullptr);
  EXPECT_EQ(findOp("pto.tadd")->id, OpId::TADD);
  EXPECT_EQ(findOp("TADD")->id, OpId::TADD);
  EXPECT_EQ(findOp("tmatmul_acc")->id, OpId::TMATMUL_ACC);
  EXPECT_EQ(findOp("pto.tmatmul.acc")->id, OpId::TMATMUL_ACC);
  EXPECT_EQ(findOp("pto.nosuchop"), nullptr);
}

TEST(OpTable, SignaturesSplitInputsAndOutputs) {
  const OpInfo& dq = info(OpId::TDEQUANT);
  ASSERT_EQ(dq.roles.size(), 4u);
  EXPECT_EQ(dq.roles[0].name, "src");
  EXPECT_EQ(dq.roles[3].name, "dst");
  EXPECT_TRUE(dq.roles[3].isOutput);
  const OpInfo& cvt = info(OpId::TCVT);
  EXPECT_TRUE(cvt.roles[1].optional);
  EXPECT_EQ(info(OpId::TLOAD).roles[0].kind, RoleKind::View);
  EXPECT_TRUE(info(OpId::TMRGSORT).roles[0].variadic);
}

TEST(OpTable, PerArchRules) {
  EXPECT_TRUE(info(OpId::TADD).types(Arch::A5).contains(DType::BF16));
  EXPECT_FALSE(info(OpId::TADD).types(Arch::A2A3).contains(DType::BF16));
  EXPECT_TRUE(info(OpId::TSQRT).types(Arch::A2A3).contains(DType::F16));
  EXPECT_FALSE(info(OpId::TSQRT).types(Arch::A2A3).contains(DType::BF16));
  EXPECT_FALSE(info(OpId::THISTOGRAM).supports(Arch::A2A3));
  EXPECT_TRUE(info(OpId::THISTOGRAM).supports(Arch::A5));
}

TEST(Cvt, SeedConversionTable) {
  // Seed 003: A2/A3 has I32 -> F16 (deq path), A5 does not; A5 adds FP8/HIF8 targets.
  EXPECT_TRUE(cvtSupported(Arch::A2A3, DType::I32, DType::F16));
  EXPECT_FALSE(cvtSupported(Arch::A5, DType::I32, DType::F16));
  EXPECT_TRUE(cvtSupported(Arch::A5, DType::F32, DType::F8E4M3));
  EXPECT_FALSE(cvtSupported(Arch::A2A3, DType::F32, DType::F8E4M3));
  EXPECT_TRUE(cvtSupported(Arch::A2A3, DType::F16, DType::I4));
  EXPECT_FALSE(cvtSupported(Arch::A5, DType::F16, DType::F8E4M3));
  EXPECT_TRUE(cvtSupported(Arch::A5, DType::BF16, DType::F4E2M1X2));
  EXPECT_TRUE(cvtSupported(Arch::A2A3, DType::F32, DType::F32));
  EXPECT_FALSE(cvtSupported(Arch::A2A3, DType::U32, DType::U8));
  EXPECT_TRUE(cvtSupported(Arch::A5, DType::U32, DType::U8));
}

// The one operand-role rule the linker, the runtime, the npu model and the C++ export share.
TEST(IsaOps, TileOperandRoles) {
  auto names = [](OpId id, size_t n) {
    const OpInfo& oi = info(id);
    std::vector<std::string> out;
    for (int r : tileOperandRoles(oi, n))
      out.push_back(r < 0 ? "-" : std::string(oi.roles[static_cast<size_t>(r)].name));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(OpId::TADD, 3), (V{"dst", "src0", "src1"}));
  EXPECT_EQ(names(OpId::TADD, 4), (V{"dst", "src0", "src1", "-"})); // surplus
  EXPECT_EQ(names(OpId::TMOV, 2), (V{"dst", "src"}));               // optional fp absent
  EXPECT_EQ(names(OpId::TMOV, 3), (V{"dst", "src", "fp"}));         // ... and present
  EXPECT_EQ(names(OpId::TMATMUL_ACC, 4), (V{"dst", "acc", "lhs", "rhs"}));
  EXPECT_EQ(names(OpId::TMRGSORT, 3),
            (V{"dsts", "dsts", "dsts"})); // the variadic output takes them
}

// Every role a signature names is typed (Roles.def): an unknown name would have thrown while the
// table was built, and each role's id spells back to its name.
TEST(Roles, EverySignatureRoleIsTyped) {
  ASSERT_NO_THROW(allOps());
  for (const OpInfo& op : allOps())
    for (const Role& r : op.roles) {
      EXPECT_EQ(spelling(r.id), r.name) << op.mnemonic;
      EXPECT_EQ(parseRoleId(r.name), r.id) << op.mnemonic;
    }
  EXPECT_FALSE(parseRoleId("bogus").has_value());
  EXPECT_FALSE(parseRoleId("Dst").has_value());
}

// One kernel slot per role and op: the first operand of a slot is then its only role's, so the
// binding does not depend on the order the roles are looked up in.
TEST(Roles, NoTwoRolesShareAKernelSlot) {
  for (const OpInfo& op : allOps()) {
    std::set<Slot> seen;
    for (const Role& r : op.roles) {
      if (r.kind != RoleKind::Tile) {
        EXPECT_EQ(r.slot, Slot::None) << op.mnemonic << " " << r.name;
        continue;
      }
      if (r.slot != Slot::None) {
        EXPECT_TRUE(seen.insert(r.slot).second) << op.mnemonic;
      }
    }
  }
}

namespace {
/// The slot operands of `op` with `n` tile operands in B.IOT order.
SlotOperands slotsOf(OpId id, size_t n) {
  const OpInfo& op = info(id);
  return slotOperands(op, tileOperandRoles(op, n));
}
} // namespace

TEST(Roles, KernelSlotsByHand) {
  // TMATMUL.acc: B.IOT (dst, acc, lhs, rhs).
  SlotOperands mm = slotsOf(OpId::TMATMUL_ACC, 4);
  EXPECT_EQ(slotOperand(mm, Slot::Dst), 0);
  EXPECT_EQ(slotOperand(mm, Slot::Acc), 1);
  EXPECT_EQ(slotOperand(mm, Slot::Src0), 2);
  EXPECT_EQ(slotOperand(mm, Slot::Src1), 3);
  EXPECT_EQ(slotOperand(mm, Slot::Bias), -1);
  EXPECT_EQ(slotOperand(mm, Slot::Tmp), -1);
  // TCOLSUM: (dst, src[, tmp]).
  EXPECT_EQ(slotOperand(slotsOf(OpId::TCOLSUM, 3), Slot::Tmp), 2);
  EXPECT_EQ(slotOperand(slotsOf(OpId::TCOLSUM, 3), Slot::Src0), 1);
  EXPECT_EQ(slotOperand(slotsOf(OpId::TCOLSUM, 2), Slot::Tmp), -1);
  // TSEL passes its mask first: (dst, mask, src0, src1, tmp) -> src0 mask, src1 src0, src2 src1.
  SlotOperands sel = slotsOf(OpId::TSEL, 5);
  EXPECT_EQ(slotOperand(sel, Slot::Src0), 1);
  EXPECT_EQ(slotOperand(sel, Slot::Src1), 2);
  EXPECT_EQ(slotOperand(sel, Slot::Src2), 3);
  EXPECT_EQ(slotOperand(sel, Slot::Tmp), 4);
  // TMATMUL.mx: (dst, lhs, lscale, rhs, rscale).
  SlotOperands mx = slotsOf(OpId::TMATMUL_MX, 5);
  EXPECT_EQ(slotOperand(mx, Slot::LScale), 2);
  EXPECT_EQ(slotOperand(mx, Slot::RScale), 4);
  // TDEQUANT: (dst, src, scale, offset); TGATHER's indices are its second source.
  SlotOperands dq = slotsOf(OpId::TDEQUANT, 4);
  EXPECT_EQ(slotOperand(dq, Slot::Src1), 2);
  EXPECT_EQ(slotOperand(dq, Slot::Src2), 3);
  EXPECT_EQ(slotOperand(slotsOf(OpId::TGATHER, 3), Slot::Src1), 2);
  EXPECT_EQ(cubeLocOf(RoleId::Acc), Loc::Acc);
  EXPECT_EQ(cubeLocOf(RoleId::LScale), Loc::Scaling);
}

namespace pto::isa {
namespace {
// The block-shape and start-type rules, by hand from docs/encoding.md: element-wise ops are
// bounded by their destination; reductions, compares and stores by their source.
TEST(BlockRules, ShapeAndStartTypeByHand) {
  EXPECT_EQ(shapeFrom(info(OpId::TADD), true), ShapeFrom::Destination);
  EXPECT_EQ(shapeFrom(info(OpId::TROWSUM), true), ShapeFrom::Source);
  EXPECT_EQ(shapeFrom(info(OpId::TCOLMAX), true), ShapeFrom::Source);
  EXPECT_EQ(shapeFrom(info(OpId::TCMP), true), ShapeFrom::Source);
  EXPECT_EQ(shapeFrom(info(OpId::TSTORE), false), ShapeFrom::Source);
  EXPECT_EQ(shapeFrom(info(OpId::TPRINT), false), ShapeFrom::Source);
  EXPECT_EQ(shapeFrom(info(OpId::TLOAD), true), ShapeFrom::Destination);
  EXPECT_EQ(startTypeFrom(info(OpId::TADD)), StartTypeFrom::ShapeTile);
  EXPECT_EQ(startTypeFrom(info(OpId::TCVT)), StartTypeFrom::Source);
  EXPECT_EQ(startTypeFrom(info(OpId::TDEQUANT)), StartTypeFrom::Source);
  EXPECT_EQ(startTypeFrom(info(OpId::TMATMUL)), StartTypeFrom::Lhs);
}
} // namespace
} // namespace pto::isa
