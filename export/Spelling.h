// C++ spellings shared by the export (export/CppExport.h): numbers as C++ literals, the
// identifiers user names may take, the pto-isa names of types and enums, and the intrinsic of
// each op.
#pragma once

#include "isa/Isa.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace pto::cppexport::detail {

/// `0x1f`: addresses, offsets.
/// A 64-bit constant as C++ (the registers are uint64_t; negative values wrap as on the core).
std::string lit(int64_t v);

// ------------------------------------------------------------------ names

bool isIdentifier(std::string_view s);
/// Names a user-chosen identifier must not take: C++ keywords, the names the exported code
/// uses itself, pto-isa's types, and everything spelled like a macro or intrinsic (TADD,
/// PIPE_V, EVENT_ID0), which a local variable would shadow.
bool isReserved(std::string_view s);

/// Gives each entity a unique C++ identifier: its own name when usable, else a fallback.
class Names {
public:
  void reserve(const std::string& s) { used_.insert(s); }
  std::string take(std::string_view want, const std::string& fallback) {
    std::string base = isIdentifier(want) && !isReserved(want) ? std::string(want) : fallback;
    std::string name = base;
    for (unsigned i = 1; used_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

private:
  std::set<std::string> used_;
};

// ------------------------------------------------------------------ types and enums

std::string cppType(isa::DType t);
std::string tileType(isa::Loc l);
std::string blayout(isa::BLayout b);
/// The layout a tile is declared with in pto-isa C++: its own, except that a one-column
/// row-major tile is declared as the column vector it is stored as.
std::string exportedBLayout(isa::BLayout b, isa::SLayout s, int64_t rows, int64_t cols);
std::string slayout(isa::SLayout s);
std::string padValue(isa::PadValue p);
std::string compactMode(isa::CompactMode c);
std::string pipeName(isa::Pipe p);
/// The RoundMode / CmpMode whose B.DATR code is `code` (docs/encoding.md).
std::optional<isa::RoundMode> roundModeOfCode(unsigned code);
std::optional<isa::CmpMode> cmpModeOfCode(unsigned code);

// ------------------------------------------------------------------ op -> intrinsic

/// The pto-isa intrinsic of an op: its kSpellings row (export/Spelling.cpp; pto-isa's name,
/// usually the mnemonic upper-cased with '.' -> '_': tmatmul.acc -> TMATMUL_ACC, written out,
/// never derived), or the name or refusal intrinsicFor's switch gives. An empty name says why
/// the op has no C++ form: a refusal, or no spelling at all, which
/// OpRecord.EveryOpHasEveryLayer reports.
struct Intrinsic {
  std::string name;
  std::string why;
};

Intrinsic intrinsicFor(isa::OpId op);

} // namespace pto::cppexport::detail
