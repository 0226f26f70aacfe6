// The word builders of isa/Encoding.h: header words, block starts and stops, scalar constants.
// Public API only; the tables stay in isa/Encoding.cpp.
#include "isa/Encoding.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace pto::isa::enc {

Inst bDim(unsigned lb, unsigned gpr, uint32_t imm) {
  Inst in;
  in.form = lb == 0 ? FormId::B_DIM_LB0 : lb == 1 ? FormId::B_DIM_LB1 : FormId::B_DIM_LB2;
  in.put(Field::RegSrc, gpr);
  in.put(Field::uimm17, imm);
  return in;
}
Inst bIor(unsigned src0, unsigned src1, unsigned src2, unsigned dst) {
  Inst in;
  in.form = FormId::B_IOR;
  in.put(Field::RegSrc0, src0);
  in.put(Field::RegSrc1, src1);
  in.put(Field::RegSrc2, src2);
  in.put(Field::RegDst, dst);
  return in;
}
Inst bIot(unsigned tile0, std::optional<unsigned> tile1, bool last, unsigned peMode) {
  Inst in;
  in.form = tile1 ? FormId::B_IOT_S2 : FormId::B_IOT_S1;
  in.put(Field::SrcTile0, tile0);
  if (tile1) in.put(Field::SrcTile1, *tile1);
  in.put(Field::L, last);
  in.put(Field::PEMode, peMode);
  return in;
}
Inst bTbank(unsigned bank) {
  Inst in;
  in.form = FormId::B_TBANK;
  in.put(Field::Bank, bank);
  return in;
}
Inst bIotDst(std::optional<unsigned> tile0, std::optional<unsigned> tile1, unsigned hand,
             unsigned sizeCode, bool last, unsigned peMode) {
  Inst in;
  in.form = tile1 ? FormId::B_IOT_S2D : tile0 ? FormId::B_IOT_S1D : FormId::B_IOT_D;
  if (tile0) in.put(Field::SrcTile0, *tile0);
  if (tile1) in.put(Field::SrcTile1, *tile1);
  in.put(Field::DstTile, hand);
  in.put(Field::SizeCode, sizeCode);
  in.put(Field::L, last);
  in.put(Field::PEMode, peMode);
  return in;
}
Inst bDatr(const Datr& d) {
  Inst in;
  in.form = FormId::B_DATR;
  in.put(Field::Layout, d.layout);
  in.put(Field::DataType, d.dataType);
  in.put(Field::PadValueOrByteId, d.pad);
  in.put(Field::CMode, d.cmode);
  in.put(Field::RMode, d.rmode);
  in.put(Field::Sat, d.sat);
  in.put(Field::Canonicalize, d.canonicalize);
  return in;
}
Inst bFpatr(const fix::Attrs& a) {
  Inst in;
  in.form = FormId::B_FPATR;
  in.put(Field::PreQuantMode, static_cast<int64_t>(a.quant));
  in.put(Field::ReluMode, static_cast<int64_t>(a.relu));
  return in;
}
Inst bXatr(const fix::Attrs& a) {
  Inst in;
  in.form = FormId::B_XATR;
  in.put(Field::Atomic, static_cast<int64_t>(a.atomic));
  in.put(Field::StPhase, fix::stPhaseCode(a.phase));
  in.put(Field::AccToVec, static_cast<int64_t>(a.accToVec));
  return in;
}
std::optional<std::string> readFpatr(const Inst& in, fix::Attrs& a) {
  for (Field f : {Field::GroupNCode, Field::RowMaxEn, Field::GroupMaxEn, Field::RowMaxInit,
                  Field::MaxAbsEn, Field::TransA, Field::TransB})
    if (in.get(f).value_or(0) != 0)
      return "B.FPATR field " + std::string(name(f)) + " is not used by a TMOV/TSTORE block";
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
  in.put(Field::simm25, byteOffset / 2);
  return in;
}
Inst bstartCond(int64_t byteOffset) {
  Inst in;
  in.form = FormId::BSTART_COND;
  in.put(Field::simm25, byteOffset / 2);
  return in;
}
Result<Inst> make(FormId form, std::initializer_list<FieldValue> fields) {
  Inst in;
  in.form = form;
  for (const FieldValue& f : fields)
    if (!in.set(f.field, f.value))
      return Result<Inst>::failure(std::string(info(form).idName) + " has no field " +
                                   std::string(name(f.field.id)));
  return in;
}
Result<Inst> makeNamed(FormId form, std::span<const std::pair<std::string_view, int64_t>> fields) {
  Inst in;
  in.form = form;
  for (const auto& [n, v] : fields) {
    const std::optional<Field> f = fieldNamed(n);
    if (!f || !in.set(*f, v))
      return Result<Inst>::failure(std::string(info(form).idName) + " has no field " +
                                   std::string(n));
  }
  return in;
}
std::vector<Inst> materialize64(unsigned rd, uint64_t value, unsigned scratch) {
  auto mk = [](FormId f, std::initializer_list<FieldValue> fs) { return make(f, fs).value(); };
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
