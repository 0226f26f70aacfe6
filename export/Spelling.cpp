// C++ spellings of the export (export/Spelling.h).
#include "export/Spelling.h"

#include "isa/Encoding.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace pto::cppexport::detail {

namespace enc = isa::enc;

std::string lit(int64_t v) {
  if (v >= 0 && v <= 0x7fffffff) return std::to_string(v);
  if (v >= 0) return std::to_string(v) + "ull";
  if (v == INT64_MIN) return "0x8000000000000000ull";
  return "static_cast<uint64_t>(" + std::to_string(v) + "ll)";
}

// ------------------------------------------------------------------ names

bool isIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool isReserved(std::string_view s) {
  static const std::set<std::string_view> words = {
      "alignas",      "alignof",   "and",      "asm",
      "auto",         "bool",      "break",    "case",
      "catch",        "char",      "class",    "const",
      "constexpr",    "continue",  "default",  "delete",
      "do",           "double",    "else",     "enum",
      "explicit",     "export",    "extern",   "false",
      "float",        "for",       "friend",   "goto",
      "if",           "inline",    "int",      "long",
      "mutable",      "namespace", "new",      "noexcept",
      "not",          "nullptr",   "operator", "or",
      "private",      "protected", "public",   "register",
      "return",       "short",     "signed",   "sizeof",
      "static",       "struct",    "switch",   "template",
      "this",         "throw",     "true",     "try",
      "typedef",      "typename",  "union",    "unsigned",
      "using",        "virtual",   "void",     "volatile",
      "while",        "xor",       "concept",  "requires",
      "co_await",     "co_return", "co_yield", "char8_t",
      "consteval",    "constinit", "decltype", "static_assert",
      "thread_local", "main",      "std",      "pto",
      "pto_export",   "pto_stack", "cond",     "zero",
      "GT",           "gm",        "Tile",     "GlobalTensor",
      "Shape",        "Stride",    "half",     "bfloat16_t",
      "event_t",      "pipe_t",    "int8_t",   "int16_t",
      "int32_t",      "int64_t",   "uint8_t",  "uint16_t",
      "uint32_t",     "uint64_t",  "size_t",   "blocks",
      "stream"};
  if (words.count(s)) return true;
  if (s.size() >= 2 && s[0] == '_' &&
      (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1]))))
    return true;
  bool macroLike = std::all_of(s.begin(), s.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
  if (macroLike) return true;
  for (unsigned g = 0; g < enc::kNumGprs; ++g)
    if (s == enc::gprName(g)) return true;
  return s.starts_with("pto_") || s.starts_with("L_");
}

// ------------------------------------------------------------------ types and enums

std::string cppType(isa::DType t) {
  return std::string(isa::info(t).cppName);
}

std::string tileType(isa::Loc l) {
  static const char* n[] = {"Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling"};
  return std::string("TileType::") + n[static_cast<unsigned>(l)];
}
std::string blayout(isa::BLayout b) {
  return b == isa::BLayout::RowMajor ? "BLayout::RowMajor" : "BLayout::ColMajor";
}
std::string exportedBLayout(isa::BLayout b, isa::SLayout s, int64_t rows, int64_t cols) {
  // pto-isa's Tile refuses a one-column ND tile (its row is under 32 bytes); the same bytes are
  // its DN column vector, the type pto-isa's row reductions and expansions use.
  if (b == isa::BLayout::RowMajor && s == isa::SLayout::NoneBox && cols == 1 && rows > 1)
    return blayout(isa::BLayout::ColMajor);
  return blayout(b);
}
std::string slayout(isa::SLayout s) {
  return s == isa::SLayout::NoneBox    ? "SLayout::NoneBox"
         : s == isa::SLayout::RowMajor ? "SLayout::RowMajor"
                                       : "SLayout::ColMajor";
}
std::string padValue(isa::PadValue p) {
  static const char* n[] = {"Null", "Zero", "Max", "Min"};
  return std::string("PadValue::") + n[static_cast<unsigned>(p)];
}
std::string compactMode(isa::CompactMode c) {
  static const char* n[] = {"Null", "Normal", "RowPlusOne"};
  return std::string("CompactMode::") + n[static_cast<unsigned>(c)];
}
std::string pipeName(isa::Pipe p) {
  return std::string(isa::spelling(p));
}

std::optional<isa::RoundMode> roundModeOfCode(unsigned code) {
  for (unsigned i = 0; i <= static_cast<unsigned>(isa::RoundMode::CAST_ODD); ++i)
    if (enc::rmodeCode(static_cast<isa::RoundMode>(i)) == code)
      return static_cast<isa::RoundMode>(i);
  return std::nullopt;
}
std::optional<isa::CmpMode> cmpModeOfCode(unsigned code) {
  for (unsigned i = 0; i <= static_cast<unsigned>(isa::CmpMode::GE); ++i)
    if (enc::cmodeCode(static_cast<isa::CmpMode>(i)) == code) return static_cast<isa::CmpMode>(i);
  return std::nullopt;
}

// ------------------------------------------------------------------ op -> intrinsic

/// The pto-isa intrinsic of every op the export spells by its own name (pto-isa's names are the
/// mnemonics upper-cased, '.' -> '_'), written out: an op missing here and in intrinsicFor's
/// switch has no export spelling, which OpRecord.EveryOpHasEveryLayer reports.
constexpr std::pair<isa::OpId, std::string_view> kSpellings[] = {
    {isa::OpId::TLOAD, "TLOAD"},
    {isa::OpId::TPREFETCH, "TPREFETCH"},
    {isa::OpId::TSTORE, "TSTORE"},
    {isa::OpId::MGATHER, "MGATHER"},
    {isa::OpId::MSCATTER, "MSCATTER"},
    {isa::OpId::TMOV, "TMOV"},
    {isa::OpId::TMOV_FP, "TMOV_FP"},
    {isa::OpId::TEXTRACT, "TEXTRACT"},
    {isa::OpId::TINSERT, "TINSERT"},
    {isa::OpId::TCONCATIDX, "TCONCAT"}, // pto-isa's five-operand overload
    {isa::OpId::TTRANS, "TTRANS"},
    {isa::OpId::TFILLPAD, "TFILLPAD"},
    {isa::OpId::TFILLPAD_INPLACE, "TFILLPAD_INPLACE"},
    {isa::OpId::TFILLPAD_EXPAND, "TFILLPAD_EXPAND"},
    {isa::OpId::TCONCAT, "TCONCAT"},
    {isa::OpId::TMATMUL, "TMATMUL"},
    {isa::OpId::TMATMUL_ACC, "TMATMUL_ACC"},
    {isa::OpId::TMATMUL_BIAS, "TMATMUL_BIAS"},
    {isa::OpId::TMATMUL_MX, "TMATMUL_MX"},
    {isa::OpId::TGEMV, "TGEMV"},
    {isa::OpId::TGEMV_ACC, "TGEMV_ACC"},
    {isa::OpId::TGEMV_BIAS, "TGEMV_BIAS"},
    {isa::OpId::TGEMV_MX, "TGEMV_MX"},
    {isa::OpId::TADD, "TADD"},
    {isa::OpId::TSUB, "TSUB"},
    {isa::OpId::TMUL, "TMUL"},
    {isa::OpId::TDIV, "TDIV"},
    {isa::OpId::TMAX, "TMAX"},
    {isa::OpId::TMIN, "TMIN"},
    {isa::OpId::TFMOD, "TFMOD"},
    {isa::OpId::TAND, "TAND"},
    {isa::OpId::TOR, "TOR"},
    {isa::OpId::TSHL, "TSHL"},
    {isa::OpId::TSHR, "TSHR"},
    {isa::OpId::TPARTADD, "TPARTADD"},
    {isa::OpId::TPARTMAX, "TPARTMAX"},
    {isa::OpId::TPARTARGMAX, "TPARTARGMAX"}, // operands in pto-isa's order (EmitTile.cpp)
    {isa::OpId::TPARTARGMIN, "TPARTARGMIN"},
    {isa::OpId::TPARTMIN, "TPARTMIN"},
    {isa::OpId::TPARTMUL, "TPARTMUL"},
    {isa::OpId::TREM, "TREM"},
    {isa::OpId::TXOR, "TXOR"},
    {isa::OpId::TPRELU, "TPRELU"},
    {isa::OpId::TCMP, "TCMP"},
    {isa::OpId::TSEL, "TSEL"},
    {isa::OpId::TADDS, "TADDS"},
    {isa::OpId::TSUBS, "TSUBS"},
    {isa::OpId::TMULS, "TMULS"},
    {isa::OpId::TDIVS, "TDIVS"},
    {isa::OpId::TMAXS, "TMAXS"},
    {isa::OpId::TMINS, "TMINS"},
    {isa::OpId::TFMODS, "TFMODS"},
    {isa::OpId::TREMS, "TREMS"},
    {isa::OpId::TANDS, "TANDS"},
    {isa::OpId::TORS, "TORS"},
    {isa::OpId::TSHLS, "TSHLS"},
    {isa::OpId::TSHRS, "TSHRS"},
    {isa::OpId::TXORS, "TXORS"},
    {isa::OpId::TLRELU, "TLRELU"},
    {isa::OpId::TCMPS, "TCMPS"},
    {isa::OpId::TSELS, "TSELS"},
    {isa::OpId::TEXPANDS, "TEXPANDS"},
    {isa::OpId::TAXPY, "TAXPY"},
    {isa::OpId::TADDC, "TADDC"},
    {isa::OpId::TSUBC, "TSUBC"},
    {isa::OpId::TADDSC, "TADDSC"},
    {isa::OpId::TSUBSC, "TSUBSC"},
    {isa::OpId::TABS, "TABS"},
    {isa::OpId::TNEG, "TNEG"},
    {isa::OpId::TEXP, "TEXP"},
    {isa::OpId::TLOG, "TLOG"},
    {isa::OpId::TSQRT, "TSQRT"},
    {isa::OpId::TRSQRT, "TRSQRT"},
    {isa::OpId::TRECIP, "TRECIP"},
    {isa::OpId::TRELU, "TRELU"},
    {isa::OpId::TNOT, "TNOT"},
    {isa::OpId::TCVT, "TCVT"},
    {isa::OpId::TROWSUM, "TROWSUM"},
    {isa::OpId::TROWMAX, "TROWMAX"},
    {isa::OpId::TROWMIN, "TROWMIN"},
    {isa::OpId::TROWPROD, "TROWPROD"},
    {isa::OpId::TROWARGMAX, "TROWARGMAX"},
    {isa::OpId::TROWARGMIN, "TROWARGMIN"},
    {isa::OpId::TCOLSUM, "TCOLSUM"},
    {isa::OpId::TCOLMAX, "TCOLMAX"},
    {isa::OpId::TCOLMIN, "TCOLMIN"},
    {isa::OpId::TCOLPROD, "TCOLPROD"},
    {isa::OpId::TCOLARGMAX, "TCOLARGMAX"},
    {isa::OpId::TCOLARGMIN, "TCOLARGMIN"},
    {isa::OpId::TROWEXPAND, "TROWEXPAND"},
    {isa::OpId::TCOLEXPAND, "TCOLEXPAND"},
    {isa::OpId::TROWEXPANDADD, "TROWEXPANDADD"},
    {isa::OpId::TROWEXPANDSUB, "TROWEXPANDSUB"},
    {isa::OpId::TROWEXPANDMUL, "TROWEXPANDMUL"},
    {isa::OpId::TROWEXPANDDIV, "TROWEXPANDDIV"},
    {isa::OpId::TROWEXPANDMAX, "TROWEXPANDMAX"},
    {isa::OpId::TROWEXPANDMIN, "TROWEXPANDMIN"},
    {isa::OpId::TROWEXPANDEXPDIF, "TROWEXPANDEXPDIF"},
    {isa::OpId::TCOLEXPANDADD, "TCOLEXPANDADD"},
    {isa::OpId::TCOLEXPANDSUB, "TCOLEXPANDSUB"},
    {isa::OpId::TCOLEXPANDMUL, "TCOLEXPANDMUL"},
    {isa::OpId::TCOLEXPANDDIV, "TCOLEXPANDDIV"},
    {isa::OpId::TCOLEXPANDMAX, "TCOLEXPANDMAX"},
    {isa::OpId::TCOLEXPANDMIN, "TCOLEXPANDMIN"},
    {isa::OpId::TCOLEXPANDEXPDIF, "TCOLEXPANDEXPDIF"},
    {isa::OpId::TGATHER, "TGATHER"},
    {isa::OpId::TGATHERB, "TGATHERB"},
    {isa::OpId::TSCATTER, "TSCATTER"},
    {isa::OpId::TSORT32, "TSORT32"},
    {isa::OpId::TMRGSORT, "TMRGSORT"},
    {isa::OpId::TCI, "TCI"},
    {isa::OpId::TDEQUANT, "TDEQUANT"},
    {isa::OpId::TPRINT, "TPRINT"},
};

Intrinsic intrinsicFor(isa::OpId op) {
  switch (op) {
  // pto-isa overloads TMATMUL_MX by argument count for the accumulate and bias forms.
  case isa::OpId::TMATMUL_MX_ACC:
  case isa::OpId::TMATMUL_MX_BIAS:
    return {"TMATMUL_MX", ""};
  case isa::OpId::TGEMV_MX_ACC: // the same overloading for TGEMV_MX
  case isa::OpId::TGEMV_MX_BIAS:
    return {"TGEMV_MX", ""};
  // The high-precision forms are their base op's intrinsic with the algorithm as its template
  // argument (EmitTile.cpp, precisionTemplate), as PTOAS's EmitC writes them.
  case isa::OpId::TSQRT_HP:
    return {"TSQRT", ""};
  case isa::OpId::TRSQRT_HP:
    return {"TRSQRT", ""};
  case isa::OpId::TRECIP_HP:
    return {"TRECIP", ""};
  case isa::OpId::TDIV_HP:
    return {"TDIV", ""};
  // pto-isa overloads TDIVS by operand order: TDIVS(dst, scalar, src) is scalar / src.
  case isa::OpId::TDIVS_SF:
    return {"TDIVS", ""};
  case isa::OpId::TRANDOM:
    return {"",
            "pto-isa's CPU simulator orders TRANDOM's words differently from the NPU, whose "
            "order the image's TRANDOM follows (docs/runtime.md), so an export could not agree"};
  case isa::OpId::TGET_SCALE_ADDR:
    return {"", "pto-isa's CPU simulator binds the scaling tile to the source tile's own address, "
                "where the NPU (and the image) bind it to that address >> 4"};
  case isa::OpId::TGATHER_CMP:
    return {"", "pto-isa's compare-form TGATHER takes a per-row threshold tile and its compare "
                "mode and first index as template arguments, where the image carries one scalar "
                "and the index in registers (B.IOR)"};
  case isa::OpId::TSETVAL:
    return {"SetValue", ""}; // a Tile member, as PTOAS prints it
  case isa::OpId::TGETVAL:
    return {"", "pto-isa's Tile::GetValue returns the element as a C++ value, and the export has "
                "no variable for a tile op's scalar result (B.IOR RegDst) to receive it"};
  case isa::OpId::TASSIGN:
    return {"TASSIGN", ""}; // pto-isa's TASSIGN(tile, addr), with a run-time addr
  case isa::OpId::PRINT:
    return {"", "PTOAS writes it as cce::printf, whose length modifiers must match the C++ type "
                "of the value, and the image holds the value as register bits and its format as "
                "written; the export does not rebuild one from the other"};
  case isa::OpId::TPACK:
    return {"", "pto-isa has no TPACK intrinsic"};
  case isa::OpId::TDEINTERLEAVE:
    return {"", "pto-isa's TDeInterleave takes its tiles as (dst1, dst0, src1, src0), an order the "
                "export's calls (the block's operands, dst0 first) do not follow"};
  case isa::OpId::TTRI:
    return {"", "pto-isa's TTRI takes its orientation as a template argument, and the image "
                "carries it in a register (B.IOR src1), not as a constant"};
  case isa::OpId::THISTOGRAM:
    return {
        "",
        "pto-isa's THISTOGRAM takes its byte as a template argument that the export does not map"};
  case isa::OpId::TPIPE_INIT:
  case isa::OpId::TPIPE_PUSH:
  case isa::OpId::TPIPE_POP:
  case isa::OpId::TPIPE_FREE:
  case isa::OpId::TPIPE_ALLOC:
  case isa::OpId::TPIPE_COMMIT:
  case isa::OpId::TPIPE_TAKE:
    return {"", "cross-core pipes are not exported: pto-isa's TPUSH/TPOP/TFREE take a TPipe whose "
                "template arguments (flag, direction, slot size and count) the export does not "
                "build from the image's configuration word"};
  case isa::OpId::TQUANT:
    return {"", "pto-isa's TQUANT takes its quantization type as a template argument and the "
                "offset by pointer"};
  default:
    break;
  }
  for (const auto& [id, name] : kSpellings)
    if (id == op) return {std::string(name), ""};
  return {"", "the export has no spelling for '" + std::string(isa::info(op).mnemonic) +
                  "' (export/Spelling.cpp, kSpellings)"};
}

} // namespace pto::cppexport::detail
