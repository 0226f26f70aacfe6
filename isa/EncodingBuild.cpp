// The word builders of isa/Encoding.h: header words, block starts and stops, scalar constants.
// Public API only; the tables stay in isa/Encoding.cpp.
#include "isa/Encoding.h"

#include <cstdint>

namespace pto::isa::enc {

Inst bDim(unsigned lb, unsigned gpr, uint32_t imm) {
  Inst in;
  in.form = lb == 0 ? FormId::B_DIM_LB0 : lb == 1 ? FormId::B_DIM_LB1 : FormId::B_DIM_LB2;
  in.set("RegSrc", gpr);
  in.set("uimm17", imm);
  return in;
}
Inst bIor(unsigned src0, unsigned src1, unsigned src2, unsigned dst) {
  Inst in;
  in.form = FormId::B_IOR;
  in.set("RegSrc0", src0);
  in.set("RegSrc1", src1);
  in.set("RegSrc2", src2);
  in.set("RegDst", dst);
  return in;
}
Inst bIot(unsigned tile0, std::optional<unsigned> tile1, bool last, unsigned peMode) {
  Inst in;
  in.form = tile1 ? FormId::B_IOT_S2 : FormId::B_IOT_S1;
  in.set("SrcTile0", tile0);
  if (tile1) in.set("SrcTile1", *tile1);
  in.set("L", last);
  in.set("PEMode", peMode);
  return in;
}
Inst bTbank(unsigned bank) {
  Inst in;
  in.form = FormId::B_TBANK;
  in.set("Bank", bank);
  return in;
}
Inst bIotDst(std::optional<unsigned> tile0, std::optional<unsigned> tile1, unsigned hand,
             unsigned sizeCode, bool last, unsigned peMode) {
  Inst in;
  in.form = tile1 ? FormId::B_IOT_S2D : tile0 ? FormId::B_IOT_S1D : FormId::B_IOT_D;
  if (tile0) in.set("SrcTile0", *tile0);
  if (tile1) in.set("SrcTile1", *tile1);
  in.set("DstTile", hand);
  in.set("SizeCode", sizeCode);
  in.set("L", last);
  in.set("PEMode", peMode);
  return in;
}
Inst bDatr(const Datr& d) {
  Inst in;
  in.form = FormId::B_DATR;
  in.set("Layout", d.layout);
  in.set("DataType", d.dataType);
  in.set("PadValueOrByteId", d.pad);
  in.set("CMode", d.cmode);
  in.set("RMode", d.rmode);
  in.set("Sat", d.sat);
  in.set("Canonicalize", d.canonicalize);
  return in;
}
Inst bFpatr(const fix::Attrs& a) {
  Inst in;
  in.form = FormId::B_FPATR;
  in.set("PreQuantMode", static_cast<int64_t>(a.quant));
  in.set("ReluMode", static_cast<int64_t>(a.relu));
  return in;
}
Inst bXatr(const fix::Attrs& a) {
  Inst in;
  in.form = FormId::B_XATR;
  in.set("Atomic", static_cast<int64_t>(a.atomic));
  in.set("StPhase", fix::stPhaseCode(a.phase));
  in.set("AccToVec", static_cast<int64_t>(a.accToVec));
  return in;
}
std::optional<std::string> readFpatr(const Inst& in, fix::Attrs& a) {
  for (const char* f :
       {"GroupNCode", "RowMaxEn", "GroupMaxEn", "RowMaxInit", "MaxAbsEn", "TransA", "TransB"})
    if (in.get(f).value_or(0) != 0)
      return "B.FPATR field " + std::string(f) + " is not used by a TMOV/TSTORE block";
  const auto q = fix::quantPreOfCode(static_cast<unsigned>(in.get("PreQuantMode").value_or(0)));
  if (!q)
    return "B.FPATR PreQuantMode " + std::to_string(in.get("PreQuantMode").value_or(0)) +
           " is not a mode pto-isa uses for TMOV/TSTORE";
  const int64_t relu = in.get("ReluMode").value_or(0);
  if (relu > 1)
    return "B.FPATR ReluMode " + std::to_string(relu) +
           " (scalar or vector leaky relu) is not a TMOV/TSTORE mode";
  a.quant = *q;
  a.relu = relu ? ReluPreMode::NormalRelu : ReluPreMode::NoRelu;
  return std::nullopt;
}
std::optional<std::string> readXatr(const Inst& in, fix::Attrs& a) {
  const auto phase = fix::stPhaseOfCode(static_cast<unsigned>(in.get("StPhase").value_or(0)));
  if (!phase) return "B.XATR StPhase 1 is reserved";
  a.atomic = in.get("Atomic").value_or(0) ? AtomicType::Add : AtomicType::None;
  a.phase = *phase;
  a.accToVec = static_cast<AccToVecMode>(in.get("AccToVec").value_or(0) & 3);
  return std::nullopt;
}
Inst bstop() {
  Inst in;
  in.form = FormId::BSTOP;
  return in;
}
Inst bstartDirect(int64_t byteOffset) {
  Inst in;
  in.form = FormId::BSTART_DIRECT;
  in.set("simm25", byteOffset / 2);
  return in;
}
Inst bstartCond(int64_t byteOffset) {
  Inst in;
  in.form = FormId::BSTART_COND;
  in.set("simm25", byteOffset / 2);
  return in;
}
Result<Inst> make(FormId form, std::initializer_list<std::pair<std::string_view, int64_t>> fields) {
  Inst in;
  in.form = form;
  for (const auto& [n, v] : fields)
    if (!in.set(n, v))
      return Result<Inst>::failure(std::string(info(form).idName) + " has no field " +
                                   std::string(n));
  return in;
}
std::vector<Inst> materialize64(unsigned rd, uint64_t value, unsigned scratch) {
  auto mk = [](FormId f, std::initializer_list<std::pair<std::string_view, int64_t>> fs) {
    return make(f, fs).value();
  };
  int64_t sv = static_cast<int64_t>(value);
  if (value < 4096) return {mk(FormId::S_ADDI, {{"SrcL", 0}, {"uimm12", sv}, {"RegDst", rd}})};
  if (sv >= INT32_MIN && sv <= INT32_MAX)
    return {mk(FormId::S_HL_LIS, {{"simm32", sv}, {"RegDst", rd}})};
  if (value <= UINT32_MAX) return {mk(FormId::S_HL_LIU, {{"uimm32", sv}, {"RegDst", rd}})};
  std::vector<Inst> out{
      mk(FormId::S_HL_LUI, {{"imm", static_cast<int64_t>(value >> 32)}, {"RegDst", rd}})};
  uint32_t lo = static_cast<uint32_t>(value);
  if (lo != 0) {
    out.push_back(mk(FormId::S_HL_LIU, {{"uimm32", lo}, {"RegDst", scratch}}));
    out.push_back(mk(FormId::S_OR, {{"SrcL", rd}, {"SrcR", scratch}, {"RegDst", rd}}));
  }
  return out;
}

} // namespace pto::isa::enc
