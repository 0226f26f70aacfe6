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
  case OpId::TSTORE: return src && *src == Loc::Acc ? Pipe::FIX : Pipe::MTE3;
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
    if (arch != Arch::A5 || !dst) return Pipe::FIX;
    return *dst == Loc::Mat ? Pipe::MTE3 : Pipe::V;
  case OpId::TSCATTER: return arch == Arch::A5 ? Pipe::V : Pipe::S;
  default: return table;
  }
}

bool needsIntraPipeBarrier(Arch arch, Pipe p) {
  if (p == Pipe::S || p == Pipe::All) return false;
  if (arch == Arch::A5 && p == Pipe::V) return false;
  return true;
}

} // namespace pto::isa
