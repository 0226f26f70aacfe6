#include "isa/Pipes.h"

namespace pto::isa {

Pipe pipeOf(OpId op, std::optional<Loc> src, std::optional<Loc> dst, Arch arch) {
  const Pipe table = info(op).pipe;
  auto to = [&](std::initializer_list<Loc> locs) {
    if (!dst) return false;
    for (Loc l : locs)
      if (*dst == l) return true;
    return false;
  };
  switch (op) {
  case OpId::TSTORE:
  case OpId::TPIPE_PUSH: // a pushed acc tile leaves through the fixpipe, a vec tile through MTE3
    return src && *src == Loc::Acc ? Pipe::FIX : Pipe::MTE3;
  case OpId::TMOV:
    if (!src || !dst) return table;
    if (*src == Loc::Mat && to({Loc::Left, Loc::Right, Loc::Bias, Loc::Scaling})) return Pipe::MTE1;
    if (*src == Loc::Acc || (*src == Loc::Vec && *dst == Loc::Mat)) return Pipe::FIX;
    return Pipe::V;
  case OpId::TEXTRACT:
    if (!src || !dst) return table;
    if (*src == Loc::Mat && to({Loc::Left, Loc::Right, Loc::Bias, Loc::Scaling})) return Pipe::MTE1;
    if (*dst == Loc::Mat) return Pipe::FIX;
    return Pipe::V;
  case OpId::TINSERT:
    if (src && dst && *src == Loc::Vec && *dst == Loc::Vec) return Pipe::V; // a UB copy
    if (arch != Arch::A5 || !dst) return Pipe::FIX;
    return *dst == Loc::Mat ? Pipe::MTE3 : Pipe::V;
  case OpId::TSCATTER:
    return arch == Arch::A5 ? Pipe::V : Pipe::S;
  case OpId::TPIPE_POP: // A5 binds the tile to its slot from the scalar unit; A2/A3 loads it
    return arch == Arch::A5 ? Pipe::S : Pipe::MTE2;
  default:
    return table;
  }
}

namespace {
struct WindowPair {
  OpId op;
  Loc src, dst;
  bool a5Only;
};
// pto-isa's TExtract / TInsert per arch. Vec->vec (a UB copy of ND tiles) is on both: A2/A3 gained
// it in pto-isa's a2a3 TExtract.hpp / TInsert.hpp (2026), with its own rules (the verifier's
// checkWindowMove).
constexpr WindowPair kWindowPairs[] = {
    {OpId::TEXTRACT, Loc::Mat, Loc::Left, false},   {OpId::TEXTRACT, Loc::Mat, Loc::Right, false},
    {OpId::TEXTRACT, Loc::Mat, Loc::Scaling, true}, {OpId::TEXTRACT, Loc::Vec, Loc::Mat, true},
    {OpId::TEXTRACT, Loc::Vec, Loc::Vec, false},    {OpId::TINSERT, Loc::Acc, Loc::Mat, false},
    {OpId::TINSERT, Loc::Vec, Loc::Mat, true},      {OpId::TINSERT, Loc::Vec, Loc::Vec, false},
};
} // namespace

bool windowPairSupported(OpId op, Loc src, Loc dst, Arch arch) {
  for (const WindowPair& p : kWindowPairs)
    if (p.op == op && p.src == src && p.dst == dst && (!p.a5Only || arch == Arch::A5)) return true;
  return false;
}

std::string windowPairs(OpId op, Arch arch) {
  std::string out;
  for (const WindowPair& p : kWindowPairs) {
    if (p.op != op || (p.a5Only && arch != Arch::A5)) continue;
    if (!out.empty()) out += ", ";
    out += std::string(spelling(p.src)) + "->" + std::string(spelling(p.dst));
  }
  return out;
}

bool needsIntraPipeBarrier(Arch arch, Pipe p) {
  if (p == Pipe::S || p == Pipe::All) return false;
  if (arch == Arch::A5 && p == Pipe::V) return false;
  return true;
}

} // namespace pto::isa
