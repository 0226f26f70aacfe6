// Linked image -> pto-isa C++ (export/CppExport.h, docs/cpp-export.md). Everything printed comes
// from the image: the tile table (shapes, layouts, planned placements), the decoded blocks
// (obj/ImageCode.h), the parameter records and the line table. Iteration is always in table or
// address order, so the text is deterministic.
#include "export/CppExport.h"

#include "isa/Encoding.h"
#include "obj/ImageCode.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace pto::cppexport {

using namespace obj;

namespace {

namespace enc = isa::enc;
using namespace code;

std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

/// A 64-bit constant as C++ (the registers are uint64_t; negative values wrap as on the core).
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

/// Names a user-chosen identifier must not take: C++ keywords, the names the exported code
/// uses itself, pto-isa's types, and everything spelled like a macro or intrinsic (TADD,
/// PIPE_V, EVENT_ID0), which a local variable would shadow.
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

/// The pto-isa intrinsic of an op: the mnemonic upper-cased with '.' -> '_' (tmatmul.acc ->
/// TMATMUL_ACC), except for the few below. An empty name says why the op has no C++ form.
struct Intrinsic {
  std::string name;
  std::string why;
};

Intrinsic intrinsicFor(isa::OpId op) {
  switch (op) {
  // pto-isa overloads TMATMUL_MX by argument count for the accumulate and bias forms.
  case isa::OpId::TMATMUL_MX_ACC:
  case isa::OpId::TMATMUL_MX_BIAS:
    return {"TMATMUL_MX", ""};
  case isa::OpId::TRANDOM:
    return {"", "pto-isa's TRANDOM takes key and counter objects that the image does not describe"};
  case isa::OpId::TSETVAL:
    return {"SetValue", ""}; // a Tile member, as PTOAS prints it
  case isa::OpId::TPACK:
    return {"", "pto-isa has no TPACK intrinsic"};
  case isa::OpId::TTRI:
    return {"", "pto-isa's TTRI takes its orientation as a template argument that the image does "
                "not carry"};
  case isa::OpId::THISTOGRAM:
    return {
        "",
        "pto-isa's THISTOGRAM takes its byte as a template argument that the export does not map"};
  case isa::OpId::TQUANT:
    return {"", "pto-isa's TQUANT takes its quantization type as a template argument and the "
                "offset by pointer"};
  default:
    break;
  }
  std::string n(isa::info(op).mnemonic);
  for (char& c : n)
    c = c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return {n, ""};
}

// ------------------------------------------------------------------ per-function facts

/// Which registers hold stack addresses (derived from sp) at the start of each block: `must`
/// on every path, `may` on some path. A scalar load or store whose address is on the stack
/// becomes a frame access, any other one a GM access.
struct StackFlow {
  std::vector<uint32_t> must, may;
};

uint32_t stackStep(uint32_t mask, const ScalarOp& m) {
  auto bit = [](uint8_t r) { return 1u << r; };
  if (m.kind != ScalarKind::Alu && m.kind != ScalarKind::Load) return mask;
  if (m.rd == kZeroReg) return mask;
  bool derived = false;
  if (m.kind == ScalarKind::Alu && (m.op == AluOp::Add || m.op == AluOp::Sub))
    derived = (mask & bit(m.rs1)) || (m.op == AluOp::Add && !m.useImm && (mask & bit(m.rs2)));
  return derived ? (mask | bit(m.rd)) : (mask & ~bit(m.rd));
}

uint32_t blockStackOut(const Block& b, uint32_t in) {
  for (const ScalarInst& s : b.scalars)
    in = stackStep(in, s.op);
  if (b.kind == BlockKind::Control && b.control.result != kZeroReg) in &= ~(1u << b.control.result);
  if (b.transfer == Transfer::Call) in = 1u << kSpReg; // the callee may clobber every register
  return in;
}

StackFlow stackFlow(const FunctionCode& fc, uint64_t end) {
  const size_t n = fc.blocks.size();
  StackFlow f{std::vector<uint32_t>(n + 1, ~0u), std::vector<uint32_t>(n + 1, 0)};
  std::vector<bool> reached(n + 1, false);
  if (n == 0) return f;
  f.must[0] = f.may[0] = 1u << kSpReg;
  reached[0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (!reached[i]) continue;
      const Block& b = fc.blocks[i];
      uint32_t must = blockStackOut(b, f.must[i]), may = blockStackOut(b, f.may[i]);
      std::vector<size_t> succ;
      if (b.transfer != Transfer::Direct && b.transfer != Transfer::Ret) succ.push_back(i + 1);
      if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond)
        succ.push_back(*fc.blockAt(b.target, end));
      for (size_t s : succ) {
        uint32_t nm = reached[s] ? (f.must[s] & must) : must,
                 ny = reached[s] ? (f.may[s] | may) : may;
        if (!reached[s] || nm != f.must[s] || ny != f.may[s]) changed = true;
        reached[s] = true;
        f.must[s] = nm;
        f.may[s] = ny;
      }
    }
  }
  return f;
}

/// The stack a kernel needs: the deepest chain of frames through its calls.
std::variant<uint64_t, std::string> stackDepth(const Image& img,
                                               const std::vector<FunctionCode>& code, uint32_t fn,
                                               std::vector<int>& state,
                                               std::vector<uint64_t>& memo) {
  if (state[fn] == 2) return memo[fn];
  if (state[fn] == 1)
    return "@" + img.functions[fn].name +
           " is recursive, which a C++ export cannot give a bounded stack";
  state[fn] = 1;
  uint64_t deepest = 0;
  for (const Block& b : code[fn].blocks) {
    if (b.transfer != Transfer::Call) continue;
    auto d = stackDepth(img, code, *functionAt(img, b.target), state, memo);
    if (auto* e = std::get_if<std::string>(&d)) return *e;
    deepest = std::max(deepest, std::get<uint64_t>(d));
  }
  state[fn] = 2;
  memo[fn] = img.functions[fn].frameSize + deepest;
  return memo[fn];
}

// ------------------------------------------------------------------ the function emitter

struct FunctionNames {
  std::vector<std::string> functions; // C++ name of every image function
  std::vector<std::vector<std::string>> params;
};

class FunctionEmitter {
public:
  FunctionEmitter(const Image& img, const FunctionCode& fc, const FunctionNames& names,
                  uint64_t stackBytes)
      : img_(img), fc_(fc), fn_(img.functions[fc.function]), names_(names), stackBytes_(stackBytes),
        end_(fn_.textOffset + fn_.textSize), isKernel_(fn_.flags & kEntry) {}

  std::variant<std::string, ExportError> run() {
    flow_ = stackFlow(fc_, end_);
    findTargets();
    nameTiles();
    for (size_t i = 0; i < fc_.blocks.size(); ++i)
      if (auto e = block(i)) return *e;
    std::ostringstream out;
    signature(out);
    out << " {\n";
    prologue(out);
    out << body_.str();
    // Falling off the end returns (the runtime's rule); a block ending in RET already did.
    bool fallsOff = fc_.blocks.empty() || (fc_.blocks.back().transfer != Transfer::Ret &&
                                           fc_.blocks.back().transfer != Transfer::Direct);
    if (targets_.count(end_)) out << label(end_) << ":\n";
    if (fallsOff || targets_.count(end_)) out << (isKernel_ ? "  return;\n" : "  return a0;\n");
    out << "}\n";
    return out.str();
  }

private:
  // ---------------------------------------------------------------- structure
  void findTargets() {
    for (const Block& b : fc_.blocks)
      if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) targets_.insert(b.target);
  }

  std::string label(uint64_t off) const { return "L_" + hex(off - fn_.textOffset).substr(2); }

  void nameTiles() {
    Names n;
    for (const std::string& f : names_.functions)
      n.reserve(f);
    for (const std::string& p : names_.params[fc_.function])
      n.reserve(p);
    for (size_t i = 0; i < fn_.tiles.size(); ++i)
      tileNames_.push_back(n.take(fn_.tiles[i].name, "tile" + std::to_string(i)));
  }

  ExportError error(uint64_t off, const std::string& msg) const {
    std::string loc = sourceLocation(img_, fc_.function, off);
    return {(loc.empty() ? "" : loc + ": ") + "@" + fn_.name + "+" + hex(off - fn_.textOffset) +
            ": " + msg};
  }

  /// A register read; `dst` a register written (a register only written is declared
  /// [[maybe_unused]], so that -Wall stays quiet on the exported code).
  std::string reg(uint8_t r) {
    used_.insert(r);
    read_.insert(r);
    return std::string(enc::gprName(r));
  }
  std::string dst(uint8_t r) {
    used_.insert(r);
    return std::string(enc::gprName(r));
  }

  // ---------------------------------------------------------------- prologue
  void signature(std::ostream& out) const {
    const std::string& name = names_.functions[fc_.function];
    if (!isKernel_) {
      out << "static AICORE inline uint64_t " << name << "(";
      for (unsigned i = 0; i < 8; ++i)
        out << "uint64_t a" << i << ", ";
      out << "uint64_t sp)";
      return;
    }
    out << "__global__ AICORE void " << name << "(";
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const Param& p = fn_.params[i];
      out << (i ? ", " : "") << paramType(p) << " " << names_.params[fc_.function][i];
    }
    out << ")";
  }

  static std::string paramType(const Param& p) {
    switch (p.kind) {
    case ParamKind::Pointer:
    case ParamKind::TensorView:
      return "__gm__ " + cppType(p.dtype) + "*";
    case ParamKind::Index:
      return "int64_t";
    case ParamKind::Scalar:
      return cppType(p.dtype);
    }
    return "";
  }

  /// The register value of an incoming kernel argument (docs/abi.md: GM addresses, raw bits of
  /// scalars, sign-extended integers).
  std::string argBits(size_t i) const {
    const Param& p = fn_.params[i];
    const std::string& n = names_.params[fc_.function][i];
    switch (p.kind) {
    case ParamKind::Pointer:
    case ParamKind::TensorView:
      return "reinterpret_cast<uint64_t>(" + n + ")";
    case ParamKind::Index:
      return "static_cast<uint64_t>(" + n + ")";
    case ParamKind::Scalar:
      if (isa::info(p.dtype).kind == isa::DTypeKind::SInt)
        return "static_cast<uint64_t>(static_cast<int64_t>(" + n + "))";
      if (isa::isFloat(p.dtype)) return "pto_export::raw(" + n + ")";
      return "static_cast<uint64_t>(" + n + ")";
    }
    return "0";
  }

  void prologue(std::ostream& out) {
    const bool kernel = isKernel_;
    const size_t stackParams = kernel && fn_.params.size() > 8 ? fn_.params.size() - 8 : 0;
    if (kernel && stackBytes_ + 8 * stackParams > 0) {
      out << "  // The scalar stack (docs/abi.md): frames below the initial sp, stack arguments "
             "above it.\n";
      out << "  alignas(16) uint8_t pto_stack[" << stackBytes_ + 8 * stackParams << "] = {};\n";
      out << "  uint64_t sp = reinterpret_cast<uint64_t>(pto_stack) + " << stackBytes_ << ";\n";
      for (size_t i = 8; i < fn_.params.size(); ++i)
        out << "  pto_export::store<uint64_t>(sp + " << 8 * (i - 8) << ", " << argBits(i) << ");\n";
    } else if (kernel && used_.count(kSpReg)) {
      out << "  uint64_t sp = 0;\n";
    }
    for (unsigned r = 2; r < enc::kNumGprs; ++r) {
      bool arg = r - kA0Reg < 8;
      if (!used_.count(static_cast<uint8_t>(r))) continue;
      if (!kernel && arg) continue; // a helper receives a0..a7
      out << "  " << (read_.count(static_cast<uint8_t>(r)) ? "" : "[[maybe_unused]] ")
          << "uint64_t " << enc::gprName(r) << " = ";
      if (kernel && arg && r - kA0Reg < fn_.params.size())
        out << argBits(r - kA0Reg);
      else
        out << "0";
      out << ";\n";
    }
    if (!kernel) {
      for (unsigned i = 0; i < 8; ++i)
        out << "  (void)a" << i << ";\n";
      out << "  (void)sp;\n";
    }
    if (used_.count(kZeroReg)) out << "  const uint64_t zero = 0;\n";
    if (usesCond_) out << "  bool cond = false;\n";
    if (kernel && (fn_.flags & kKernelVector))
      out << "#if !defined(__CPU_SIM)\n  set_mask_norm();\n  set_vector_mask(-1, -1);\n#endif\n";
    tiles(out);
  }

  void tiles(std::ostream& out) const {
    for (size_t i = 0; i < fn_.tiles.size(); ++i) {
      if (!tileUsed_.count(static_cast<uint32_t>(i))) continue;
      const TileDesc& t = fn_.tiles[i];
      out << "  Tile<" << tileType(t.loc) << ", " << cppType(t.dtype) << ", " << t.rows << ", "
          << t.cols << ", " << blayout(t.blayout) << ", " << t.validRows << ", " << t.validCols
          << ", " << slayout(t.slayout) << ", " << t.fractal << ", " << padValue(t.pad);
      if (t.compact != isa::CompactMode::Null) out << ", " << compactMode(t.compact);
      out << "> " << tileNames_[i];
      // A dynamic valid shape starts at the physical one; each op sets it from its B.DIM.
      if (t.validRows == kDynamicDim && t.validCols == kDynamicDim)
        out << "(" << t.rows << ", " << t.cols << ")";
      else if (t.validRows == kDynamicDim)
        out << "(" << t.rows << ")";
      else if (t.validCols == kDynamicDim)
        out << "(" << t.cols << ")";
      out << ";\n  TASSIGN(" << tileNames_[i] << ", " << hex(static_cast<uint64_t>(t.placement))
          << ");";
      if (t.aliasOf >= 0) out << " // a view of " << tileNames_[static_cast<size_t>(t.aliasOf)];
      out << "\n";
    }
    for (const Scratch& s : scratch_)
      out << "  " << s.type << " " << s.name << ";\n  TASSIGN(" << s.name << ", " << hex(s.address)
          << "); // scratch for pto-isa's tmp operand, above every tile of the function\n";
  }

  /// A scratch tile like fn_.tiles[like] (its type and shape, static valid shape) for a tmp
  /// operand that pto-isa requires and the image does not name: placed in the vector buffer above
  /// every tile of the function (they are all live as far as the export knows).
  std::optional<std::string> scratchLike(uint32_t like) {
    const TileDesc& t = fn_.tiles[like];
    const std::string type = "Tile<" + std::string(tileType(t.loc)) + ", " + cppType(t.dtype) +
                             ", " + std::to_string(t.rows) + ", " + std::to_string(t.cols) + ", " +
                             blayout(t.blayout) + ", " + std::to_string(t.rows) + ", " +
                             std::to_string(t.cols) + ", " + slayout(t.slayout) + ", " +
                             std::to_string(t.fractal) + ", PadValue::Null>";
    for (const Scratch& s : scratch_)
      if (s.type == type) return s.name;
    const isa::BufferSpec& buf = isa::buffer(img_.arch, t.loc);
    uint64_t end = 0;
    for (const TileDesc& d : fn_.tiles)
      if (d.loc == t.loc && d.aliasOf < 0 && d.placement != kUnplaced)
        end = std::max<uint64_t>(end, static_cast<uint64_t>(d.placement) + tileBytes(d));
    for (const Scratch& s : scratch_)
      end = std::max(end, s.address + s.bytes);
    const uint64_t align = std::max<uint32_t>(buf.alignment, 32);
    end = (end + align - 1) / align * align;
    const uint64_t bytes = tileBytes(t);
    if (end + bytes > buf.capacity) return std::nullopt;
    scratch_.push_back({type, "pto_tmp" + std::to_string(scratch_.size()), end, bytes});
    return scratch_.back().name;
  }

  static uint64_t tileBytes(const TileDesc& d) {
    return (static_cast<uint64_t>(d.rows) * d.cols * isa::bitWidth(d.dtype) + 7) / 8;
  }

  // ---------------------------------------------------------------- blocks
  std::optional<ExportError> block(size_t i) {
    const Block& b = fc_.blocks[i];
    bool reachedByFall = i > 0 && fc_.blocks[i - 1].transfer != Transfer::Direct &&
                         fc_.blocks[i - 1].transfer != Transfer::Ret;
    if (targets_.count(b.offset)) body_ << label(b.offset) << ":\n";
    if (targets_.count(b.offset) || !reachedByFall ||
        (i > 0 && fc_.blocks[i - 1].transfer == Transfer::Call))
      known_.fill(std::nullopt);
    known_[kZeroReg] = 0;
    stackMust_ = flow_.must[i];
    stackMay_ = flow_.may[i];
    comment(b);
    if (b.transfer == Transfer::Cond) {
      usesCond_ = true;
      body_ << "  cond = false;\n";
    }
    std::optional<ExportError> e;
    switch (b.kind) {
    case BlockKind::Scalar:
      for (const ScalarInst& s : b.scalars)
        if ((e = scalar(s))) return e;
      break;
    case BlockKind::Tile:
      e = tile(b);
      break;
    case BlockKind::Control:
      e = control(b);
      break;
    }
    if (e) return e;
    transfer(b);
    return std::nullopt;
  }

  void comment(const Block& b) {
    const uint64_t bend = blockEnd(b);
    for (const LineEntry& l : img_.lines)
      if (l.textOffset >= b.offset && l.textOffset < bend) {
        body_ << "  // " << l.file << ":" << l.line << ":" << l.col << "\n";
        return;
      }
  }

  uint64_t blockEnd(const Block& b) const {
    auto it = std::upper_bound(fc_.blocks.begin(), fc_.blocks.end(), b.offset,
                               [](uint64_t o, const Block& x) { return o < x.offset; });
    return it == fc_.blocks.end() ? end_ : it->offset;
  }

  void transfer(const Block& b) {
    switch (b.transfer) {
    case Transfer::Fall:
      break;
    case Transfer::Direct:
      body_ << "  goto " << label(b.target) << ";\n";
      targets_.insert(b.target);
      break;
    case Transfer::Cond:
      body_ << "  if (cond) goto " << label(b.target) << ";\n";
      break;
    case Transfer::Ret:
      body_ << (isKernel_ ? "  return;\n" : "  return a0;\n");
      break;
    case Transfer::Call: {
      uint32_t callee = *functionAt(img_, b.target);
      body_ << "  " << dst(kA0Reg) << " = " << names_.functions[callee] << "(";
      for (unsigned r = 0; r < 8; ++r)
        body_ << reg(static_cast<uint8_t>(kA0Reg + r)) << ", ";
      body_ << reg(kSpReg) << ");\n";
      break;
    }
    }
  }

  // ---------------------------------------------------------------- scalar code
  std::string xform(const ScalarOp& m) {
    std::string r = reg(m.rs2);
    switch (m.rtype) {
    case RType::None:
      return r;
    case RType::SignWord:
      return "pto_export::sext32(" + r + ")";
    case RType::ZeroWord:
      return "(" + r + " & 0xffffffffull)";
    case RType::NegOrNot:
      return isLogical(m.op) && m.kind != ScalarKind::Load && m.kind != ScalarKind::Store
                 ? "~" + r
                 : "(0 - " + r + ")";
    }
    return r;
  }

  std::string operandB(const ScalarOp& m, bool shifted) {
    if (m.useImm) return lit(m.imm);
    std::string b = xform(m);
    if (shifted && m.shamt) b = "(" + b + " << " + std::to_string(m.shamt) + ")";
    return b;
  }

  static std::string aluExpr(AluOp op, const std::string& a, const std::string& b) {
    switch (op) {
    case AluOp::Add:
      return a + " + " + b;
    case AluOp::Sub:
      return a + " - " + b;
    case AluOp::And:
      return a + " & " + b;
    case AluOp::Or:
      return a + " | " + b;
    case AluOp::Xor:
      return a + " ^ " + b;
    case AluOp::AddW:
      return "pto_export::sext32(" + a + " + " + b + ")";
    case AluOp::SubW:
      return "pto_export::sext32(" + a + " - " + b + ")";
    case AluOp::Mul:
    case AluOp::MulU:
      return a + " * " + b;
    case AluOp::MulW:
      return "pto_export::sext32(" + a + " * " + b + ")";
    case AluOp::Div:
      return "pto_export::div(" + a + ", " + b + ")";
    case AluOp::DivU:
      return "pto_export::divu(" + a + ", " + b + ")";
    case AluOp::Rem:
      return "pto_export::rem(" + a + ", " + b + ")";
    case AluOp::RemU:
      return "pto_export::remu(" + a + ", " + b + ")";
    case AluOp::Min:
      return "pto_export::min(" + a + ", " + b + ")";
    case AluOp::Max:
      return "pto_export::max(" + a + ", " + b + ")";
    case AluOp::MinU:
      return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
    case AluOp::MaxU:
      return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    case AluOp::Sll:
      return a + " << " + shiftCount(b);
    case AluOp::Srl:
      return a + " >> " + shiftCount(b);
    case AluOp::Sra:
      return "pto_export::sra(" + a + ", " + b + ")";
    case AluOp::CmpEq:
      return "(" + a + " == " + b + ")";
    case AluOp::CmpNe:
      return "(" + a + " != " + b + ")";
    case AluOp::CmpLt:
      return "pto_export::lt(" + a + ", " + b + ")";
    case AluOp::CmpGe:
      return "!pto_export::lt(" + a + ", " + b + ")";
    case AluOp::CmpLtU:
      return "(" + a + " < " + b + ")";
    case AluOp::CmpGeU:
      return "(" + a + " >= " + b + ")";
    case AluOp::CmpAnd:
      return "((" + a + " & " + b + ") != 0)";
    case AluOp::CmpOr:
      return "((" + a + " | " + b + ") != 0)";
    case AluOp::Li:
      return b;
    }
    return b;
  }

  /// The core masks shift counts to 6 bits; constant counts are masked here.
  static std::string shiftCount(const std::string& b) {
    if (!b.empty() && std::all_of(b.begin(), b.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      return std::to_string(std::stoull(b) & 63);
    return "(" + b + " & 63)";
  }

  static bool isCompare(AluOp op) { return op >= AluOp::CmpEq && op <= AluOp::CmpOr; }

  /// The constant a register holds at this point of straight-line code, when known (it makes
  /// GlobalTensor strides static). Updated with the core's semantics.
  void track(const ScalarOp& m) {
    if (m.kind == ScalarKind::Setc || m.kind == ScalarKind::Store || m.rd == kZeroReg) return;
    std::optional<uint64_t> v;
    if (m.kind == ScalarKind::Alu && known_[m.rs1] &&
        (m.useImm || (known_[m.rs2] && m.rtype == RType::None && m.shamt == 0)))
      v = evaluate(m.op, *known_[m.rs1], m.useImm ? static_cast<uint64_t>(m.imm) : *known_[m.rs2]);
    known_[m.rd] = v;
  }

  /// The ops constants are built from (docs/encoding.md materialize64, address arithmetic).
  static std::optional<uint64_t> evaluate(AluOp op, uint64_t a, uint64_t b) {
    switch (op) {
    case AluOp::Add:
      return a + b;
    case AluOp::Sub:
      return a - b;
    case AluOp::And:
      return a & b;
    case AluOp::Or:
      return a | b;
    case AluOp::Xor:
      return a ^ b;
    case AluOp::Mul:
    case AluOp::MulU:
      return a * b;
    case AluOp::Sll:
      return a << (b & 63);
    case AluOp::Srl:
      return a >> (b & 63);
    case AluOp::Li:
      return b;
    default:
      return std::nullopt;
    }
  }

  std::string fpuExpr(const ScalarOp& m) {
    using F = isa::FpOp;
    const std::string t = std::to_string(m.fpSrc), code = std::to_string(m.fpDst), a = reg(m.rs1), b = reg(m.rs2);
    switch (m.fp) {
    case F::Cvt: return "pto_export::fcvt(" + t + ", " + code + ", " + a + ")";
    case F::CvtZ: return "pto_export::fcvtz(" + t + ", " + code + ", " + a + ")";
    case F::SCvtF: return "pto_export::cvtf(true, " + t + ", " + code + ", " + a + ")";
    case F::UCvtF: return "pto_export::cvtf(false, " + t + ", " + code + ", " + a + ")";
    default: return "pto_export::fpu(" + std::to_string(static_cast<int>(m.fp)) + ", " + t + ", " + a + ", " + b + ")";
    }
  }

  std::optional<ExportError> scalar(const ScalarInst& s) {
    const ScalarOp& m = s.op;
    std::string text = enc::format(s.inst);
    std::string stmt;
    switch (m.kind) {
    case ScalarKind::Alu:
      if (m.rd == kZeroReg) break;
      // addi zero, k is how constants are made: print the constant.
      if ((m.op == AluOp::Add || m.op == AluOp::Or) && m.rs1 == kZeroReg)
        stmt = dst(m.rd) + " = " + operandB(m, true) + ";";
      else
        stmt = dst(m.rd) + " = " + aluExpr(m.op, reg(m.rs1), operandB(m, true)) + ";";
      break;
    case ScalarKind::Setc: {
      usesCond_ = true;
      std::string e = aluExpr(m.op, reg(m.rs1), operandB(m, false));
      stmt = "cond = " + (isCompare(m.op) ? e : "(" + e + ") != 0") + ";";
      break;
    }
    case ScalarKind::Csel:
      if (m.rd != kZeroReg)
        stmt = dst(m.rd) + " = " + reg(m.rs3) + " != 0 ? " + reg(m.rs1) + " : " + xform(m) + ";";
      break;
    case ScalarKind::Fpu:
      if (m.rd != kZeroReg) stmt = dst(m.rd) + " = " + fpuExpr(m) + ";";
      break;
    case ScalarKind::Load:
    case ScalarKind::Store: {
      auto where = memory(m);
      if (!where)
        return error(s.offset,
                     "cannot tell whether '" + text + "' addresses the stack or GM on every path");
      std::string addr = reg(m.rs1) + " + " + operandB(m, m.kind == ScalarKind::Load);
      std::string type = memType(m);
      if (m.kind == ScalarKind::Load) {
        if (m.rd != kZeroReg)
          stmt = dst(m.rd) + " = pto_export::" + (*where ? "load" : "load_gm") + "<" + type + ">(" +
                 addr + ");";
      } else {
        stmt = std::string("pto_export::") + (*where ? "store" : "store_gm") + "<" + type + ">(" +
               addr + ", " + reg(m.rs3) + ");";
      }
      break;
    }
    }
    track(m);
    stackMust_ = stackStep(stackMust_, m);
    stackMay_ = stackStep(stackMay_, m);
    body_ << "  " << (stmt.empty() ? "/* discarded */" : stmt) << " // " << text << "\n";
    return std::nullopt;
  }

  /// true: the address is on the stack; false: in GM; nullopt: it depends on the path.
  std::optional<bool> memory(const ScalarOp& m) const {
    auto has = [](uint32_t mask, uint8_t r) { return (mask >> r) & 1u; };
    bool must = has(stackMust_, m.rs1) || (!m.useImm && has(stackMust_, m.rs2));
    bool may = has(stackMay_, m.rs1) || (!m.useImm && has(stackMay_, m.rs2));
    if (must) return true;
    if (!may) return false;
    return std::nullopt;
  }

  static std::string memType(const ScalarOp& m) {
    if (m.kind == ScalarKind::Store || !m.isSigned)
      return m.size == 8   ? "uint64_t"
             : m.size == 4 ? "uint32_t"
             : m.size == 2 ? "uint16_t"
                           : "uint8_t";
    return m.size == 8 ? "int64_t" : m.size == 4 ? "int32_t" : m.size == 2 ? "int16_t" : "int8_t";
  }

  // ---------------------------------------------------------------- control blocks
  std::string bound(const Bound& b, uint32_t dflt) {
    if (!b.present) return std::to_string(dflt);
    if (b.isConstant()) return std::to_string(b.imm & 0xFFFF);
    return "static_cast<unsigned>((" + reg(b.reg) + " + " + std::to_string(b.imm) + ") & 0xFFFF)";
  }

  std::optional<ExportError> control(const Block& b) {
    const ControlBlock& c = b.control;
    switch (c.ctl) {
    case enc::ExtCtl::SET_FLAG:
    case enc::ExtCtl::WAIT_FLAG: {
      std::string id = !c.event.present       ? "EVENT_ID0"
                       : c.event.isConstant() ? "EVENT_ID" + std::to_string(c.event.imm)
                                              : "static_cast<event_t>(" + reg(c.event.reg) + " + " +
                                                    std::to_string(c.event.imm) + ")";
      if (c.event.present && c.event.isConstant() && c.event.imm > 7)
        return error(b.offset, "event id " + std::to_string(c.event.imm) + " has no EVENT_ID name");
      body_ << "  " << (c.ctl == enc::ExtCtl::SET_FLAG ? "set_flag(" : "wait_flag(")
            << pipeName(c.pipeA) << ", " << pipeName(c.pipeB) << ", " << id << ");\n";
      return std::nullopt;
    }
    case enc::ExtCtl::PIPE_BARRIER:
      body_ << "  pipe_barrier(" << pipeName(c.pipeA) << ");\n";
      return std::nullopt;
    case enc::ExtCtl::GET_BLOCK_IDX:
    case enc::ExtCtl::GET_BLOCK_NUM:
    case enc::ExtCtl::GET_SUBBLOCK_IDX:
    case enc::ExtCtl::GET_SUBBLOCK_NUM: {
      const char* fnName = c.ctl == enc::ExtCtl::GET_BLOCK_IDX      ? "get_block_idx"
                           : c.ctl == enc::ExtCtl::GET_BLOCK_NUM    ? "get_block_num"
                           : c.ctl == enc::ExtCtl::GET_SUBBLOCK_IDX ? "get_subblockid"
                                                                    : "get_subblockdim";
      if (c.result != kZeroReg) {
        body_ << "  " << dst(c.result) << " = static_cast<uint64_t>(" << fnName << "());\n";
        known_[c.result] = std::nullopt;
        stackMust_ &= ~(1u << c.result);
        stackMay_ &= ~(1u << c.result);
      }
      return std::nullopt;
    }
    case enc::ExtCtl::None:
      break;
    }
    return error(b.offset, "unknown extension control block");
  }

  // ---------------------------------------------------------------- tile blocks
  struct TileArgs {
    std::vector<std::string> args;    // in intrinsic order
    std::vector<int> tileOfRole;      // operand index per role (-1: absent)
    std::vector<std::string> gmDecls; // GlobalTensor declarations before the call
  };

  /// Matches B.IOT operands to the op's tile roles (docs/linking.md, section 2).
  /// The operand index of each role (-1: absent), by isa::tileOperandRoles.
  static std::vector<int> matchTiles(const isa::OpInfo& oi, size_t n) {
    std::vector<int> at(oi.roles.size(), -1);
    const std::vector<int> roles = isa::tileOperandRoles(oi, n);
    for (size_t k = 0; k < n; ++k)
      if (roles[k] >= 0 && at[static_cast<size_t>(roles[k])] < 0) at[static_cast<size_t>(roles[k])] = static_cast<int>(k);
    return at;
  }

  /// The element type a scalar operand is read as: the op's source tile, else its destination.
  isa::DType scalarType(const isa::OpInfo& oi, const TileBlock& t,
                        const std::vector<int>& at) const {
    for (std::string_view want : {"src", "src0"})
      for (size_t r = 0; r < oi.roles.size(); ++r)
        if (oi.roles[r].name == want && at[r] >= 0)
          return fn_.tiles[t.tiles[static_cast<size_t>(at[r])]].dtype;
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (at[r] >= 0 && !oi.roles[r].isOutput)
        return fn_.tiles[t.tiles[static_cast<size_t>(at[r])]].dtype;
    return t.tiles.empty() ? t.startType : fn_.tiles[t.tiles[0]].dtype;
  }

  std::optional<std::string> globalTensor(const Block& b, isa::DType elem, std::string& decl) {
    const TileBlock& t = b.tile;
    if (!t.ior) return std::string("a GM operand without B.IOR");
    unsigned bits = isa::bitWidth(elem);
    if (bits < 8)
      return "GM tensors of " + std::string(isa::spelling(elem)) + " (sub-byte elements)";
    const unsigned bytes = bits / 8;
    const uint8_t addr = (*t.ior)[0], strideReg = (*t.ior)[1];
    std::string rows = bound(t.dim[1], 1), cols = bound(t.dim[0], 1);
    bool rowsDyn = t.dim[1].present && !t.dim[1].isConstant(),
         colsDyn = t.dim[0].present && !t.dim[0].isConstant();
    std::optional<uint64_t> stride = known_[strideReg];
    std::string shape = "Shape<1, 1, 1, " + (rowsDyn ? std::string("-1") : rows) + ", " +
                        (colsDyn ? std::string("-1") : cols) + ">";
    // The GM side of the B.DATR layout: ND, or DN (column-major: the stride is between columns).
    bool dn = false;
    if (t.datr && t.datr->layout != 0) {
      const bool load = t.op == isa::OpId::TLOAD || t.op == isa::OpId::TPREFETCH;
      const std::string_view name = isa::enc::layoutName(t.datr->layout);
      const std::string_view gm = load ? name.substr(0, name.find('2')) : name.substr(name.rfind('2') + 1);
      if (gm != "ND" && gm != "DN") return "GM layout " + std::string(name);
      dn = gm == "DN";
    }
    const std::string outer = stride ? std::to_string(*stride / bytes) : std::string("-1");
    std::string strideT = dn ? "Stride<1, 1, 1, 1, " + outer + ">" : "Stride<1, 1, 1, " + outer + ", 1>";
    std::string type = cppType(elem);
    decl = "    using GT = GlobalTensor<" + type + ", " + shape + ", " + strideT + (dn ? ", Layout::DN" : "") + ">;\n";
    decl += "    GT gm(reinterpret_cast<__gm__ " + type + "*>(" + reg(addr) + ")";
    if (rowsDyn || colsDyn || !stride) {
      std::vector<std::string> dyn;
      if (rowsDyn) dyn.push_back(rows);
      if (colsDyn) dyn.push_back(cols);
      decl += ", GT::Shape(";
      for (size_t i = 0; i < dyn.size(); ++i)
        decl += (i ? ", " : "") + dyn[i];
      decl += "), GT::Stride(";
      if (!stride)
        decl += "static_cast<int64_t>(" + reg(strideReg) + " / " + std::to_string(bytes) + ")";
      decl += ")";
    }
    decl += ");\n";
    return std::nullopt;
  }

  std::optional<ExportError> tile(const Block& b) {
    const TileBlock& t = b.tile;
    const isa::OpInfo& oi = isa::info(t.op);
    Intrinsic in = intrinsicFor(t.op);
    auto fail = [&](const std::string& why) {
      return error(b.offset, "'pto." + std::string(oi.mnemonic) + "' cannot be exported: " + why);
    };
    if (in.name.empty()) return fail(in.why);
    for (const isa::Role& r : oi.roles)
      if (r.variadic) return fail("variadic operands have no fixed pto-isa signature");
    std::vector<int> at = matchTiles(oi, t.tiles.size());
    for (uint32_t idx : t.tiles)
      tileUsed_.insert(idx);
    std::vector<std::string> args;
    std::string gmDecl;
    unsigned ior = 0;
    const std::array<uint8_t, 3> iorRegs = t.ior.value_or(std::array<uint8_t, 3>{0, 0, 0});
    auto addRole = [&](size_t r) -> std::optional<ExportError> {
      const isa::Role& role = oi.roles[r];
      switch (role.kind) {
      case isa::RoleKind::Tile:
        if (at[r] >= 0) {
          // pto-isa's TCOLSUM with a tmp also takes isBinary; without it, it sums in order.
          if (!(t.op == isa::OpId::TCOLSUM && role.name == "tmp"))
            args.push_back(tileNames_[t.tiles[static_cast<size_t>(at[r])]]);
        } else if (role.name == "tmp" && needsTmp(t, oi, at)) {
          // pto-isa declares these with a tmp tile only; the image has none, so a scratch tile
          // like the one pto-isa sizes it by (TGATHER: the indices; otherwise the source).
          int like = 0;
          for (std::string_view want : {"indices", "src", "src0"})
            for (size_t k = 0; k < oi.roles.size() && !like; ++k)
              if (oi.roles[k].name == want && at[k] >= 0) like = at[k];
          auto tmp = scratchLike(t.tiles[static_cast<size_t>(like)]);
          if (!tmp) return fail("no room in the vector buffer for the tmp tile pto-isa needs");
          args.push_back(*tmp);
        } else if (!role.optional) {
          return fail("its tile operand '" + std::string(role.name) + "' is missing");
        }
        return std::nullopt;
      case isa::RoleKind::View: {
        // A load's GM type is its destination's; a store's is its source's, or the type
        // B.DATR names when the store converts (acc f32 -> f16 through the fixpipe).
        isa::DType elem = t.tiles.empty() ? t.startType : fn_.tiles[t.tiles[0]].dtype;
        if (role.isOutput && t.datr) elem = enc::dtypeOfCode(t.datr->dataType).value_or(elem);
        if (auto e = globalTensor(b, elem, gmDecl)) return fail(*e);
        ior = 2;
        args.push_back("gm");
        return std::nullopt;
      }
      default: {
        if (ior >= 3) return fail("more than three scalar operands");
        uint8_t r0 = iorRegs[ior++];
        if (role.optional) {
          if (r0 == kZeroReg) return std::nullopt;
          return fail("the optional scalar operand '" + std::string(role.name) + "'");
        }
        args.push_back(scalarArg(role, r0, scalarType(oi, t, at)));
        return std::nullopt;
      }
      }
    };
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (oi.roles[r].isOutput)
        if (auto e = addRole(r)) return e;
    for (size_t r = 0; r < oi.roles.size(); ++r)
      if (!oi.roles[r].isOutput)
        if (auto e = addRole(r)) return e;
    auto extra = trailing(b, oi);
    if (auto* e = std::get_if<std::string>(&extra)) return fail(*e);
    for (const std::string& a : std::get<std::vector<std::string>>(extra))
      args.push_back(a);
    setValidShapes(b, oi, at);
    std::string call;
    if (t.op == isa::OpId::TSETVAL && args.size() < 3) return fail("it needs a tile, an offset and a value");
    if (t.op == isa::OpId::TSETVAL) {
      // dst.SetValue(offset, value): the destination is args[0].
      call = args[0] + ".SetValue(" + args[1] + ", " + args[2] + ")";
    } else {
      std::string targs = t.op == isa::OpId::TSQRT ? "<SqrtAlgorithm::DEFAULT>" : "";
      // pto-isa's TCI<TileData, T, descending>: nothing deduces the last two (ascending here).
      if (t.op == isa::OpId::TCI && !t.tiles.empty())
        targs = "<decltype(" + args[0] + "), " + cppType(fn_.tiles[t.tiles[0]].dtype) + ", 0>";
      call = in.name + targs + "(";
      for (size_t i = 0; i < args.size(); ++i)
        call += (i ? ", " : "") + args[i];
      call += ")";
    }
    if (gmDecl.empty())
      body_ << "  " << call << ";\n";
    else
      body_ << "  {\n" << gmDecl << "    " << call << ";\n  }\n";
    return std::nullopt;
  }

  /// Whether pto-isa declares the op with a tmp tile only (pto_instr.hpp).
  static bool needsTmp(const TileBlock& t, const isa::OpInfo& oi, const std::vector<int>& at) {
    using enum isa::OpId;
    switch (t.op) {
    case TGATHER: // the index form; the mask-pattern form has no tmp
      for (size_t k = 0; k < oi.roles.size(); ++k)
        if (oi.roles[k].name == "indices") return at[k] >= 0;
      return false;
    case TROWSUM:
    case TROWMAX:
    case TROWMIN:
    case TROWPROD:
    case TROWARGMAX:
    case TROWARGMIN:
    case TCOLARGMAX:
    case TCOLARGMIN:
    case TREM:
    case TXOR:
    case TPRELU:
    case TSEL:
    case TREMS:
    case TXORS:
    case TSELS:
      return true;
    default:
      return false;
    }
  }

  std::string scalarArg(const isa::Role& role, uint8_t r, isa::DType type) {
    static const std::set<std::string_view> counts = {"row",    "col",      "diagonal",
                                                      "offset", "blocklen", "pre"};
    if (role.kind == isa::RoleKind::IntScalar && counts.count(role.name))
      return "static_cast<int32_t>(" + reg(r) + ")";
    return "pto_export::bits<" + cppType(type) + ">(" + reg(r) + ")";
  }

  /// The attributes pto-isa takes after the operands: TCVT's rounding and saturation, the
  /// compare mode of TCMP/TCMPS.
  std::variant<std::vector<std::string>, std::string> trailing(const Block& b,
                                                               const isa::OpInfo& oi) {
    const TileBlock& t = b.tile;
    if (t.op == isa::OpId::TCVT) {
      if (!t.datr) return std::string("TCVT without B.DATR");
      auto rm = roundModeOfCode(t.datr->rmode);
      if (!rm)
        return "rounding mode " + std::string(enc::rmodeName(t.datr->rmode)) +
               " has no pto-isa RoundMode";
      return std::vector<std::string>{"RoundMode::" + std::string(isa::spelling(*rm)),
                                      std::string("SaturationMode::") +
                                          (t.datr->sat ? "ON" : "OFF")};
    }
    if (t.op == isa::OpId::TCMP || t.op == isa::OpId::TCMPS) {
      auto cm = cmpModeOfCode(t.datr ? t.datr->cmode : 0);
      if (!cm) return std::string("unknown compare mode");
      std::string s(isa::spelling(*cm));
      for (char& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return std::vector<std::string>{"CmpMode::" + s};
    }
    (void)oi;
    return std::vector<std::string>{};
  }

  /// Tiles with a dynamic valid shape take it from the block's B.DIM: the tile that gives the
  /// block its shape (docs/abi.md), and every operand of an op whose operands share it.
  void setValidShapes(const Block& b, const isa::OpInfo& oi, const std::vector<int>& at) {
    const TileBlock& t = b.tile;
    if (oi.rule == isa::TypeRule::Matmul || t.tiles.empty()) return;
    bool hasTileOut = false;
    for (size_t r = 0; r < oi.roles.size(); ++r)
      hasTileOut |= oi.roles[r].kind == isa::RoleKind::Tile && oi.roles[r].isOutput && at[r] >= 0;
    bool fromSource = (oi.flags & (isa::kRowReduce | isa::kColReduce)) || t.op == isa::OpId::TCMP ||
                      t.op == isa::OpId::TCMPS || !hasTileOut;
    std::set<uint32_t> shaped;
    size_t shapeOperand = fromSource && hasTileOut ? 1 : 0;
    if (shapeOperand < t.tiles.size()) shaped.insert(t.tiles[shapeOperand]);
    if (oi.flags & isa::kSameValid) shaped.insert(t.tiles.begin(), t.tiles.end());
    // A reduction's destination has the source's rows (TROW*) or columns (TCOL*) and one column
    // or row: pto-isa's later readers (TROWEXPAND*...) read it by its valid shape.
    const bool rowReduce = oi.flags & isa::kRowReduce, colReduce = oi.flags & isa::kColReduce;
    if ((rowReduce || colReduce) && hasTileOut && !shaped.count(t.tiles[0])) {
      const TileDesc& d = fn_.tiles[t.tiles[0]];
      const std::string& n = tileNames_[t.tiles[0]];
      const bool r = d.validRows == kDynamicDim, c = d.validCols == kDynamicDim;
      const std::string rows = rowReduce ? bound(t.dim[1], 1) : "1",
                        cols = rowReduce ? "1" : bound(t.dim[0], 1);
      if (r && c)
        body_ << "  " << n << ".SetValidShape(" << rows << ", " << cols << ");\n";
      else if (r)
        body_ << "  " << n << ".SetValidRow(" << rows << ");\n";
      else if (c)
        body_ << "  " << n << ".SetValidCol(" << cols << ");\n";
    }
    for (uint32_t idx : shaped) {
      const TileDesc& d = fn_.tiles[idx];
      bool r = d.validRows == kDynamicDim, c = d.validCols == kDynamicDim;
      if (!r && !c) continue;
      const std::string& n = tileNames_[idx];
      std::string rows = bound(t.dim[1], 1), cols = bound(t.dim[0], 1);
      if (r && c)
        body_ << "  " << n << ".SetValidShape(" << rows << ", " << cols << ");\n";
      else if (r)
        body_ << "  " << n << ".SetValidRow(" << rows << ");\n";
      else
        body_ << "  " << n << ".SetValidCol(" << cols << ");\n";
    }
  }

  const Image& img_;
  const FunctionCode& fc_;
  const Function& fn_;
  const FunctionNames& names_;
  uint64_t stackBytes_;
  uint64_t end_;
  bool isKernel_;
  StackFlow flow_;
  uint32_t stackMust_ = 0, stackMay_ = 0;
  std::array<std::optional<uint64_t>, 32> known_{};
  std::set<uint64_t> targets_;
  std::set<uint8_t> used_, read_;
  std::set<uint32_t> tileUsed_;
  struct Scratch {
    std::string type, name;
    uint64_t address = 0, bytes = 0;
  };
  std::vector<Scratch> scratch_;
  std::vector<std::string> tileNames_;
  bool usesCond_ = false;
  std::ostringstream body_;
};

// ------------------------------------------------------------------ the translation unit

const char* kHelpers =
    R"(// Scalar semantics of the PTO core (docs/encoding.md): 64-bit registers, wrapping arithmetic,
// division by zero defined, the word forms sign-extend.
namespace pto_export {
AICORE inline uint64_t sext32(uint64_t v) { return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))); }
AICORE inline bool lt(uint64_t a, uint64_t b) { return static_cast<int64_t>(a) < static_cast<int64_t>(b); }
AICORE inline uint64_t min(uint64_t a, uint64_t b) { return lt(a, b) ? a : b; }
AICORE inline uint64_t max(uint64_t a, uint64_t b) { return lt(b, a) ? a : b; }
AICORE inline uint64_t sra(uint64_t a, uint64_t b) { return static_cast<uint64_t>(static_cast<int64_t>(a) >> (b & 63)); }
AICORE inline uint64_t div(uint64_t a, uint64_t b) {
  if (b == 0) return ~uint64_t{0};
  if (a == 0x8000000000000000ull && b == ~uint64_t{0}) return a;
  return static_cast<uint64_t>(static_cast<int64_t>(a) / static_cast<int64_t>(b));
}
AICORE inline uint64_t rem(uint64_t a, uint64_t b) {
  if (b == 0) return a;
  if (a == 0x8000000000000000ull && b == ~uint64_t{0}) return 0;
  return static_cast<uint64_t>(static_cast<int64_t>(a) % static_cast<int64_t>(b));
}
AICORE inline uint64_t divu(uint64_t a, uint64_t b) { return b == 0 ? ~uint64_t{0} : a / b; }
AICORE inline uint64_t remu(uint64_t a, uint64_t b) { return b == 0 ? a : a % b; }
// Registers hold raw bits: scalar operands are reinterpreted as the element type they stand for.
template <typename T> AICORE inline T bits(uint64_t v) {
  T r;
  __builtin_memcpy(&r, &v, sizeof(T));
  return r;
}
template <typename T> AICORE inline uint64_t raw(T v) {
  uint64_t r = 0;
  __builtin_memcpy(&r, &v, sizeof(T));
  return r;
}
// The scalar stack (spill slots, event-id arrays, stack arguments) is a local array.
template <typename T> AICORE inline uint64_t load(uint64_t addr) {
  T v;
  __builtin_memcpy(&v, reinterpret_cast<const void*>(addr), sizeof(T));
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}
template <typename T> AICORE inline void store(uint64_t addr, uint64_t v) {
  T t = static_cast<T>(v);
  __builtin_memcpy(reinterpret_cast<void*>(addr), &t, sizeof(T));
}
// Scalar loads and stores of GM (pto.load_scalar / pto.store_scalar).
template <typename T> AICORE inline uint64_t load_gm(uint64_t addr) {
  return static_cast<uint64_t>(static_cast<int64_t>(*reinterpret_cast<__gm__ T*>(addr)));
}
template <typename T> AICORE inline void store_gm(uint64_t addr, uint64_t v) {
  *reinterpret_cast<__gm__ T*>(addr) = static_cast<T>(v);
}
// Scalar floating point, the FSU forms on raw register bits (docs/numerics.md, "Scalar floating
// point"): round to nearest even, canonical quiet NaNs, ordered compares, saturating fcvtz.
AICORE inline float f32(uint64_t v) { return bits<float>(v & 0xffffffffull); }
AICORE inline double f64(uint64_t v) { return bits<double>(v); }
AICORE inline uint64_t canon(float x) { return x != x ? 0x7fc00000ull : raw(x); }
AICORE inline uint64_t canon(double x) { return x != x ? 0x7ff8000000000000ull : raw(x); }
template <typename F> AICORE inline uint64_t fbin(int op, F x, F y) {
  const bool nx = x != x, ny = y != y;
  switch (op) {
  case 0: return canon(x + y);
  case 1: return canon(x - y);
  case 2: return canon(x * y);
  case 3: return canon(x / y);
  case 4: case 5: { // max, min
    if (nx || ny) return canon(nx ? y : x);
    if (x == y) return canon(((op == 5) == (__builtin_signbit(x) != 0)) ? x : y);
    return canon(((op == 4) == (x > y)) ? x : y);
  }
  case 7: return x == y;
  case 8: return !nx && !ny && x != y;
  case 9: return x < y;
  case 10: return x >= y;
  }
  return 0;
}
// op: 0 add 1 sub 2 mul 3 div 4 max 5 min 6 abs 7 eq 8 ne 9 lt 10 ge; t: 0 FP64, 1 FP32.
AICORE inline uint64_t fpu(int op, unsigned t, uint64_t a, uint64_t b) {
  if (op == 6) return t ? (a & 0x7fffffffull) : (a & 0x7fffffffffffffffull);
  return t ? fbin<float>(op, f32(a), f32(b)) : fbin<double>(op, f64(a), f64(b));
}
// A double rounded (nearest even) into a binary format of p significand bits, exponent bits eb.
AICORE inline uint64_t narrow(double v, int p, int eb) {
  const int bias = (1 << (eb - 1)) - 1, emin = 1 - bias;
  const uint64_t sign = __builtin_signbit(v) ? uint64_t{1} << (p + eb - 1) : 0;
  const uint64_t inf = uint64_t((1 << eb) - 1) << (p - 1);
  if (v != v) return inf | (uint64_t{1} << (p - 2));
  double m = v < 0 ? -v : v;
  if (m == 0) return sign;
  if (m > 1.7976931348623157e308) return sign | inf;
  int e = __builtin_ilogb(m);
  if (e < emin) e = emin;
  const double q = __builtin_nearbyint(__builtin_ldexp(m, p - 1 - e)); // significand, rounded
  const double r = __builtin_ldexp(q, e - (p - 1));
  if (__builtin_ilogb(r) > bias) return sign | inf;
  const int re = __builtin_ilogb(r);
  if (re < emin) return sign | uint64_t(__builtin_ldexp(r, p - 1 - emin)); // subnormal
  return sign | (uint64_t(re + bias) << (p - 1)) | (uint64_t(__builtin_ldexp(r, p - 1 - re)) & ((uint64_t{1} << (p - 1)) - 1));
}
// A double into DstType `code`: 0 FP64, 1 FP32, 4 FP16, 5 BF16.
AICORE inline uint64_t to_float(double v, unsigned code) {
  switch (code) {
  case 0: return canon(v);
  case 1: return canon(static_cast<float>(v));
  case 4: return narrow(v, 11, 5);
  case 5: return narrow(v, 8, 8);
  }
  return 0;
}
AICORE inline uint64_t fcvt(unsigned t, unsigned code, uint64_t a) {
  if (t && code == 1) return canon(f32(a));
  return to_float(t ? double(f32(a)) : f64(a), code);
}
AICORE inline uint64_t cvtf(bool sgn, unsigned t, unsigned code, uint64_t a) {
  if (sgn) {
    const int64_t i = t ? int64_t(int32_t(a)) : int64_t(a);
    return code == 1 ? raw(static_cast<float>(i)) : to_float(static_cast<double>(i), code);
  }
  const uint64_t u = t ? (a & 0xffffffffull) : a;
  return code == 1 ? raw(static_cast<float>(u)) : to_float(static_cast<double>(u), code);
}
// fcvtz: toward zero, saturating, NaN -> 0. code: 0 u64 1 u32 2 u16 3 u8, 8 i64 9 i32 10 i16 11 i8.
AICORE inline uint64_t fcvtz(unsigned t, unsigned code, uint64_t a) {
  const double v = t ? double(f32(a)) : f64(a);
  if (v != v) return 0;
  const bool sgn = code >= 8;
  const int w = 64 >> (code & 3);
  if (sgn) {
    const double hi = __builtin_ldexp(1.0, w - 1);
    if (v >= hi) return w == 64 ? 0x7fffffffffffffffull : (uint64_t{1} << (w - 1)) - 1;
    if (v <= -hi) return static_cast<uint64_t>(-(int64_t{1} << (w - 2)) * 2);
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  if (v <= -1.0) return 0;
  if (v >= __builtin_ldexp(1.0, w)) return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  return static_cast<uint64_t>(v);
}
} // namespace pto_export
)";

// The launch wrappers also compile in the host pass, where the device helpers are absent.
const char* kHostHelpers = R"(namespace pto_export_host {
template <typename T> inline T bits(uint64_t v) {
  T r;
  __builtin_memcpy(&r, &v, sizeof(T));
  return r;
}
} // namespace pto_export_host
)";

std::string entryList(const Image& img) {
  std::string s;
  for (const ImageEntry& e : img.entries)
    s += (s.empty() ? "@" : ", @") + img.functions[e.function].name;
  return s;
}

std::string kindGuard(uint32_t flags) {
  if (flags & kKernelVector) return "defined(__DAV_VEC__) || defined(__CPU_SIM)";
  if (flags & kKernelCube) return "defined(__DAV_CUBE__) || defined(__CPU_SIM)";
  return "defined(__CCE_AICORE__) || defined(__CPU_SIM)";
}

std::variant<FunctionNames, ExportError> nameFunctions(const Image& img) {
  FunctionNames fn;
  Names n;
  for (const ImageEntry& e : img.entries) {
    const std::string& name = img.functions[e.function].name;
    if (!isIdentifier(name) || isReserved(name))
      return ExportError{"@" + name + ": the kernel name is not a usable C++ identifier"};
    n.reserve(name);
  }
  fn.functions.resize(img.functions.size());
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    const Function& f = img.functions[i];
    fn.functions[i] = (f.flags & kEntry) ? f.name : n.take(f.name, "pto_fn" + std::to_string(i));
  }
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    Names p;
    for (const std::string& f : fn.functions)
      p.reserve(f);
    std::vector<std::string> ps;
    for (size_t k = 0; k < img.functions[i].params.size(); ++k)
      ps.push_back(p.take(img.functions[i].params[k].name, "arg" + std::to_string(k)));
    fn.params.push_back(std::move(ps));
  }
  return fn;
}

/// Every function decoded, checked for exportability as a whole (calls into kernels).
std::variant<std::vector<FunctionCode>, ExportError> decodeAll(const Image& img) {
  std::vector<FunctionCode> code;
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    auto fc = decodeFunction(img, i);
    if (auto* e = std::get_if<CodeError>(&fc)) {
      std::string loc = sourceLocation(img, e->function, e->offset);
      return ExportError{(loc.empty() ? "" : loc + ": ") + "@" + img.functions[i].name + "+" +
                         hex(e->offset - img.functions[i].textOffset) + ": " + e->message};
    }
    code.push_back(std::move(std::get<FunctionCode>(fc)));
    for (const Block& b : code.back().blocks)
      if (b.transfer == Transfer::Call &&
          (img.functions[*functionAt(img, b.target)].flags & kEntry))
        return ExportError{"@" + img.functions[i].name + " calls the exported kernel @" +
                           img.functions[*functionAt(img, b.target)].name +
                           ", which C++ cannot call as a function"};
  }
  return code;
}

void launcher(std::ostream& out, const Image& img, uint32_t f, const FunctionNames& names) {
  const Function& fn = img.functions[f];
  const std::string& name = names.functions[f];
  const auto& ps = names.params[f];
  auto signature = [&] {
    out << "void pto_launch_" << name << "(uint32_t blocks, void* stream";
    for (size_t i = 0; i < fn.params.size(); ++i)
      out << ", "
          << (fn.params[i].kind == ParamKind::Pointer || fn.params[i].kind == ParamKind::TensorView
                  ? "void* "
                  : "uint64_t ")
          << ps[i];
    out << ")";
  };
  auto args = [&] {
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const Param& p = fn.params[i];
      out << (i ? ", " : "");
      if (p.kind == ParamKind::Pointer || p.kind == ParamKind::TensorView)
        out << "static_cast<__gm__ " << cppType(p.dtype) << "*>(" << ps[i] << ")";
      else if (p.kind == ParamKind::Index)
        out << "static_cast<int64_t>(" << ps[i] << ")";
      else
        out << "pto_export_host::bits<" << cppType(p.dtype) << ">(" << ps[i] << ")";
    }
  };
  out << "// Launches @" << fn.name
      << " on `blocks` cores; scalar arguments are passed as raw bits.\n";
  out << "#if defined(__CPU_SIM)\n";
  signature();
  out << " {\n  pto::cpu_sim::KernelLaunchOptions options;\n  options.kernel_name = \"" << fn.name
      << "\";\n  options.explicit_block_count = blocks;\n  "
         "pto::cpu_sim::LaunchKernelMultiCore(options, stream, [&] { "
      << name << "(";
  args();
  out << "); });\n}\n#elif !defined(__CCE_AICORE__)\n";
  signature();
  out << " {\n  " << name << "<<<blocks, nullptr, stream>>>(";
  args();
  out << ");\n}\n#endif\n";
}

std::variant<uint64_t, ExportError> kernelStack(const Image& img,
                                                const std::vector<FunctionCode>& code, uint32_t f) {
  std::vector<int> state(img.functions.size(), 0);
  std::vector<uint64_t> memo(img.functions.size(), 0);
  auto d = stackDepth(img, code, f, state, memo);
  if (auto* e = std::get_if<std::string>(&d)) return ExportError{*e};
  return std::get<uint64_t>(d);
}

// ------------------------------------------------------------------ the host launcher

std::string npyDescr(isa::DType t) {
  switch (t) {
  case isa::DType::F32:
    return "<f4";
  case isa::DType::F64:
    return "<f8";
  case isa::DType::F16:
    return "<f2";
  case isa::DType::I8:
    return "|i1";
  case isa::DType::I16:
    return "<i2";
  case isa::DType::I32:
    return "<i4";
  case isa::DType::I64:
    return "<i8";
  case isa::DType::U8:
    return "|u1";
  case isa::DType::U16:
    return "<u2";
  case isa::DType::U32:
    return "<u4";
  case isa::DType::U64:
    return "<u8";
  case isa::DType::I1:
    return "|b1";
  default:
    break;
  }
  // The formats numpy lacks travel as raw bits, as with pto-run (docs/runtime.md).
  unsigned bits = isa::bitWidth(t);
  return bits == 16 ? "<u2" : bits == 32 ? "<u4" : bits == 64 ? "<u8" : "|u1";
}

/// How the host reads a scalar argument: 'f' float, 'h' half, 'b' bfloat16, 'd' double, 'i'
/// signed, 'u' unsigned, 'r' raw bits only.
char scalarClass(const Param& p) {
  if (p.kind == ParamKind::Index) return 'i';
  switch (p.dtype) {
  case isa::DType::F32:
    return 'f';
  case isa::DType::F16:
    return 'h';
  case isa::DType::BF16:
    return 'b';
  case isa::DType::F64:
    return 'd';
  default:
    break;
  }
  if (isa::isFloat(p.dtype)) return 'r';
  return isa::info(p.dtype).kind == isa::DTypeKind::SInt ? 'i' : 'u';
}

const char* kHostMain = R"HOST(
namespace {

struct Arg {
  std::vector<uint8_t> host; // buffers
  void* device = nullptr;
  uint64_t bits = 0;         // scalars
  bool given = false;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::exit(1);
}

uint16_t toHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    unsigned shift = static_cast<unsigned>(14 - exp);
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half; // may carry into inf: correct
  return static_cast<uint16_t>(sign | half);
}

uint64_t scalarBits(const Param& p, const std::string& text) {
  char* end = nullptr;
  if (text.rfind("0x", 0) == 0) {
    uint64_t v = std::strtoull(text.c_str() + 2, &end, 16);
    if (*end) die("'" + text + "' is not a hex number");
    return v;
  }
  if (p.cls == 'r') die(std::string("scalar %") + p.name + " takes raw bits (0x...)");
  if (p.cls == 'i' || p.cls == 'u') {
    long long v = std::strtoll(text.c_str(), &end, 0);
    if (text.empty() || *end) die("'" + text + "' is not an integer");
    return static_cast<uint64_t>(v);
  }
  double d = std::strtod(text.c_str(), &end);
  if (text.empty() || *end) die("'" + text + "' is not a number");
  uint64_t bits = 0;
  float f = static_cast<float>(d);
  uint32_t fb;
  std::memcpy(&fb, &f, 4);
  if (p.cls == 'd') std::memcpy(&bits, &d, 8);
  else if (p.cls == 'f') bits = fb;
  else if (p.cls == 'h') bits = toHalf(f);
  else bits = (fb + 0x7fffu + ((fb >> 16) & 1u)) >> 16; // bfloat16, round to nearest even
  return bits;
}

std::vector<uint8_t> readNpy(const std::string& path, const Param& p) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read '" + path + "'");
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0) die("'" + path + "' is not a .npy file");
  size_t hlen = file[6] == 1 ? file[8] | (file[9] << 8) : file[8] | (file[9] << 8) | (file[10] << 16) | (file[11] << 24);
  size_t start = file[6] == 1 ? 10 : 12;
  if (start + hlen > file.size()) die("'" + path + "' is truncated");
  std::string header(file.begin() + static_cast<long>(start), file.begin() + static_cast<long>(start + hlen));
  if (header.find(std::string("'descr': '") + p.descr + "'") == std::string::npos)
    die("'" + path + "' does not hold " + p.descr + " elements for %" + p.name);
  if (header.find("'fortran_order': True") != std::string::npos) die("'" + path + "' is in Fortran order");
  return std::vector<uint8_t>(file.begin() + static_cast<long>(start + hlen), file.end());
}

void writeNpy(const std::string& path, const Param& p, const std::vector<uint8_t>& data) {
  size_t count = data.size() / p.bytes;
  std::string shape = p.rank ? "(" : "(" + std::to_string(count) + ",";
  for (unsigned i = 0; i < p.rank; ++i) shape += std::to_string(p.shape[i]) + (p.rank == 1 ? "," : i + 1 < p.rank ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + p.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) die("cannot write '" + path + "'");
}

// aclError is an int, 0 on success; pto-isa's CPU stubs return plain ints.
void check(int e, const char* what) {
  if (e != 0) die(std::string(what) + " failed with ACL error " + std::to_string(e));
}

} // namespace

int main(int argc, char** argv) {
  std::string kernel;
  uint32_t blocks = 1;
  std::vector<std::pair<std::string, std::string>> args, outs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) die("usage: " + std::string(argv[0]) + " --kernel NAME [--blocks N] [--arg NAME=file.npy|NAME=VALUE]... [--out NAME=file.npy]...");
    std::string v = argv[++i];
    if (a == "--kernel") kernel = v;
    else if (a == "--blocks") blocks = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    else if (a == "--arg" || a == "--out") {
      size_t eq = v.find('=');
      if (eq == std::string::npos) die(a + " " + v + ": expected NAME=VALUE");
      (a == "--arg" ? args : outs).push_back({v.substr(0, eq), v.substr(eq + 1)});
    } else die("unknown option '" + a + "'");
  }
  const Kernel* k = nullptr;
  for (const Kernel& c : kKernels) if (kernel == c.name || (kernel.empty() && &c == &kKernels[0])) k = &c;
  if (!k) die("no kernel '" + kernel + "' in this image");
  if (blocks == 0) die("--blocks must be at least 1");
  std::vector<Arg> vals(k->params.size());
  auto find = [&](const std::string& name) {
    for (size_t i = 0; i < k->params.size(); ++i) if (name == k->params[i].name) return i;
    die("@" + std::string(k->name) + " has no parameter %" + name);
  };
  for (auto& [name, value] : args) {
    size_t i = find(name);
    const Param& p = k->params[i];
    if (p.buffer) vals[i].host = readNpy(value, p);
    else vals[i].bits = scalarBits(p, value);
    vals[i].given = true;
  }
  for (auto& [name, path] : outs) {
    size_t i = find(name);
    const Param& p = k->params[i];
    if (!p.buffer) die("--out " + name + ": %" + name + " is not a buffer");
    if (vals[i].given) continue;
    if (!p.rank) die("--out " + name + ": the size of %" + name + " is not static: give --arg " + name + "=file.npy");
    size_t n = p.bytes;
    for (unsigned d = 0; d < p.rank; ++d) n *= static_cast<size_t>(p.shape[d]);
    vals[i].host.assign(n, 0);
    vals[i].given = true;
  }
  for (size_t i = 0; i < vals.size(); ++i)
    if (!vals[i].given) die("parameter %" + std::string(k->params[i].name) + " needs --arg");
  if (std::getenv("PTO_CPU_SIM_NUM_CORES") == nullptr) setenv("PTO_CPU_SIM_NUM_CORES", std::to_string(blocks).c_str(), 1);
  check(aclInit(nullptr), "aclInit");
  check(aclrtSetDevice(0), "aclrtSetDevice");
  aclrtStream stream = nullptr;
  check(aclrtCreateStream(&stream), "aclrtCreateStream");
  for (size_t i = 0; i < vals.size(); ++i) {
    if (!k->params[i].buffer) continue;
    size_t n = vals[i].host.size() ? vals[i].host.size() : 1;
    check(aclrtMalloc(&vals[i].device, n, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    if (!vals[i].host.empty())
      check(aclrtMemcpy(vals[i].device, n, vals[i].host.data(), vals[i].host.size(), ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
  }
  k->launch(blocks, stream, vals);
  check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
  for (auto& [name, path] : outs) {
    size_t i = find(name);
    check(aclrtMemcpy(vals[i].host.data(), vals[i].host.size(), vals[i].device, vals[i].host.size(), ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy");
    writeNpy(path, k->params[i], vals[i].host);
  }
  for (Arg& a : vals) if (a.device) aclrtFree(a.device);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
)HOST";

void hostKernel(std::ostream& out, const Image& img, uint32_t f, const FunctionNames& names) {
  const Function& fn = img.functions[f];
  out << "  {\"" << fn.name << "\",\n   {";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param& p = fn.params[i];
    bool buffer = p.kind == ParamKind::Pointer || p.kind == ParamKind::TensorView;
    out << (i ? ",\n    " : "") << "{\"" << p.name << "\", " << (buffer ? "true" : "false")
        << ", \"" << npyDescr(p.kind == ParamKind::Index ? isa::DType::I64 : p.dtype) << "\", "
        << std::max(1u, isa::bitWidth(p.kind == ParamKind::Index ? isa::DType::I64 : p.dtype) / 8)
        << ", '" << scalarClass(p) << "', "
        << (p.kind == ParamKind::TensorView ? p.shape.size() : 0) << ", {";
    for (size_t d = 0; d < p.shape.size() && p.kind == ParamKind::TensorView; ++d)
      out << (d ? ", " : "") << p.shape[d];
    out << "}}";
  }
  out << "},\n   [](uint32_t blocks, aclrtStream stream, std::vector<Arg>& a) {\n     pto_launch_"
      << names.functions[f] << "(blocks, stream";
  for (size_t i = 0; i < fn.params.size(); ++i)
    out << ", a[" << i << "]."
        << (fn.params[i].kind == ParamKind::Pointer || fn.params[i].kind == ParamKind::TensorView
                ? "device"
                : "bits");
  out << ");\n   }}";
}

} // namespace

std::variant<std::string, ExportError> exportCpp(const obj::Image& img) {
  auto names = nameFunctions(img);
  if (auto* e = std::get_if<ExportError>(&names)) return *e;
  auto decoded = decodeAll(img);
  if (auto* e = std::get_if<ExportError>(&decoded)) return *e;
  const auto& code = std::get<std::vector<FunctionCode>>(decoded);
  const FunctionNames& fn = std::get<FunctionNames>(names);
  std::ostringstream out;
  out << "// pto-isa C++ of a linked PTO image (" << isa::profile(img.arch).name << ": "
      << entryList(img) << "), exported by pto-toolchain.\n"
      << "// Tile addresses and event ids are the ones pto-ld planned. Compile with the CANN "
         "compiler, or on a\n"
      << "// host with pto-isa's CPU simulator (-D__CPU_SIM): docs/cpp-export.md.\n"
      // <cstdint> first: pto-isa's headers use uint8_t... without including it themselves.
      << "#include <cstdint>\n#include <pto/pto-inst.hpp>\n\nusing namespace pto;\n\n"
      << "#if defined(__CCE_AICORE__) || defined(__CPU_SIM)\n"
      << kHelpers;
  // Helpers (non-exported functions) first: kernels call them.
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    if (img.functions[i].flags & kEntry) continue;
    auto text = FunctionEmitter(img, code[i], fn, 0).run();
    if (auto* e = std::get_if<ExportError>(&text)) return *e;
    out << "\n// @" << img.functions[i].name << " (helper, docs/abi.md calling convention)\n"
        << std::get<std::string>(text);
  }
  out << "#endif\n\n" << kHostHelpers;
  for (const ImageEntry& entry : img.entries) {
    const Function& f = img.functions[entry.function];
    auto stack = kernelStack(img, code, entry.function);
    if (auto* e = std::get_if<ExportError>(&stack)) return *e;
    auto text = FunctionEmitter(img, code[entry.function], fn, std::get<uint64_t>(stack)).run();
    if (auto* e = std::get_if<ExportError>(&text)) return *e;
    std::string body = std::get<std::string>(text);
    // The kernel kind guard encloses the body, so every compiler pass sees the declaration.
    size_t open = body.find(" {\n") + 3;
    out << "\n// @" << f.name << ": exported kernel\n"
        << body.substr(0, open) << "#if " << kindGuard(f.flags) << "\n"
        << body.substr(open, body.size() - open - 2) << "#endif\n}\n";
    launcher(out, img, entry.function, fn);
  }
  return out.str();
}

} // namespace pto::cppexport

namespace pto::cppexport {

std::string cppIntrinsic(isa::OpId op) {
  return intrinsicFor(op).name;
}

std::variant<std::string, ExportError> exportCppHost(const obj::Image& img) {
  auto names = nameFunctions(img);
  if (auto* e = std::get_if<ExportError>(&names)) return *e;
  const FunctionNames& fn = std::get<FunctionNames>(names);
  if (img.entries.empty()) return ExportError{"the image exports no kernel"};
  std::ostringstream out;
  out << "// Host launcher (ACL runtime) for a linked PTO image (" << isa::profile(img.arch).name
      << ": " << entryList(img) << "), exported by pto-toolchain.\n"
      << "// Link it with the object of the kernel translation unit (pto-ld --emit=cpp): "
         "docs/cpp-export.md.\n"
      << "//   ./launcher --kernel NAME [--blocks N] [--arg PARAM=file.npy|PARAM=VALUE]... [--out "
         "PARAM=file.npy]...\n"
      << "#include <cstdint>\n"
      << "#if defined(__CPU_SIM) // pto-isa's CPU simulator stubs the ACL runtime\n#include "
         "<pto/pto-inst.hpp>\n"
      << "#else\n#include <acl/acl.h>\n#endif\n\n#include <cstdio>\n#include "
         "<cstdlib>\n#include <cstring>\n"
      << "#include <fstream>\n#include <iterator>\n#include <string>\n#include <utility>\n#include "
         "<vector>\n\n";
  for (const ImageEntry& e : img.entries) {
    const Function& f = img.functions[e.function];
    out << "void pto_launch_" << fn.functions[e.function] << "(uint32_t blocks, void* stream";
    for (size_t i = 0; i < f.params.size(); ++i)
      out << ", "
          << (f.params[i].kind == ParamKind::Pointer || f.params[i].kind == ParamKind::TensorView
                  ? "void* "
                  : "uint64_t ")
          << fn.params[e.function][i];
    out << ");\n";
  }
  out << "\nnamespace {\n\nstruct Arg;\n"
      << "struct Param {\n  const char* name;\n  bool buffer;    // a GM buffer (.npy), else a "
         "scalar\n"
      << "  const char* descr;\n  unsigned bytes;  // per element\n  char cls;        // scalar "
         "syntax: f h b d i u r\n"
      << "  unsigned rank;   // tensor views: the static shape\n  long shape[5];\n};\n"
      << "struct Kernel {\n  const char* name;\n  std::vector<Param> params;\n"
      << "  void (*launch)(uint32_t, aclrtStream, std::vector<Arg>&);\n};\n\n} // namespace\n";
  std::ostringstream table;
  table << "\nnamespace {\nconst std::vector<Kernel> kKernels = {\n";
  for (size_t i = 0; i < img.entries.size(); ++i) {
    if (i) table << ",\n";
    hostKernel(table, img, img.entries[i].function, fn);
  }
  table << "};\n} // namespace\n";
  // Arg must be complete before the table's lambdas use it: the fixed part defines it first.
  std::string main = kHostMain;
  size_t cut = main.find("[[noreturn]]");
  out << main.substr(0, cut) << "} // namespace\n"
      << table.str() << "\nnamespace {\n\n"
      << main.substr(cut);
  return out.str();
}

} // namespace pto::cppexport
