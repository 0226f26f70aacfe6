// FunctionEmitter (export/Emitter.h): the function's structure (branch targets and labels, tile
// names), its signature and prologue (registers, the scalar stack, tile declarations and
// TASSIGN), and the walk over its blocks with their control transfers. The blocks' contents are
// printed by EmitScalar.cpp and EmitTile.cpp.
#include "export/Emitter.h"
#include "export/Spelling.h"

#include "isa/Encoding.h"
#include "support/Escape.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>

namespace pto::cppexport::detail {

namespace enc = isa::enc;

namespace {

std::string paramType(const Param& p) {
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

uint64_t tileBytes(const TileDesc& d) {
  return (static_cast<uint64_t>(d.rows) * d.cols * isa::bitWidth(d.dtype) + 7) / 8;
}

} // namespace

std::variant<std::string, ExportError> FunctionEmitter::run() {
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

void FunctionEmitter::findTargets() {
  for (const Block& b : fc_.blocks)
    if (b.transfer == Transfer::Direct || b.transfer == Transfer::Cond) targets_.insert(b.target);
}

std::string FunctionEmitter::label(uint64_t off) const {
  return "L_" + support::hex0x(off - fn_.textOffset).substr(2);
}

void FunctionEmitter::nameTiles() {
  Names n;
  for (const std::string& f : names_.functions)
    n.reserve(f);
  for (const std::string& p : names_.params[fc_.function])
    n.reserve(p);
  for (size_t i = 0; i < fn_.tiles.size(); ++i)
    tileNames_.push_back(n.take(fn_.tiles[i].name, "tile" + std::to_string(i)));
}

ExportError FunctionEmitter::error(uint64_t off, const std::string& msg) const {
  std::string loc = sourceLocation(img_, fc_.function, off);
  return {(loc.empty() ? "" : loc + ": ") + "@" + fn_.name + "+" +
          support::hex0x(off - fn_.textOffset) + ": " + msg};
}

std::string FunctionEmitter::reg(uint8_t r) {
  used_.insert(r);
  read_.insert(r);
  return std::string(enc::gprName(r));
}

std::string FunctionEmitter::dst(uint8_t r) {
  used_.insert(r);
  return std::string(enc::gprName(r));
}

void FunctionEmitter::signature(std::ostream& out) const {
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

std::string FunctionEmitter::argBits(size_t i) const {
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

void FunctionEmitter::prologue(std::ostream& out) {
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
    out << "  " << (read_.count(static_cast<uint8_t>(r)) ? "" : "[[maybe_unused]] ") << "uint64_t "
        << enc::gprName(r) << " = ";
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
  // A block's unused B.IOR slots name `zero` too, so the register may be named and never read.
  if (used_.count(kZeroReg)) out << "  [[maybe_unused]] const uint64_t zero = 0;\n";
  if (usesCond_) out << "  bool cond = false;\n";
  if (kernel && (fn_.flags & kKernelVector))
    out << "#if !defined(__CPU_SIM)\n  set_mask_norm();\n  set_vector_mask(-1, -1);\n#endif\n";
  tiles(out);
}

void FunctionEmitter::tiles(std::ostream& out) const {
  for (size_t i = 0; i < fn_.tiles.size(); ++i) {
    if (!tileUsed_.count(static_cast<uint32_t>(i))) continue;
    const TileDesc& t = fn_.tiles[i];
    out << "  Tile<" << tileType(t.loc) << ", " << cppType(t.dtype) << ", " << t.rows << ", "
        << t.cols << ", " << exportedBLayout(t.blayout, t.slayout, t.rows, t.cols) << ", "
        << t.validRows << ", " << t.validCols << ", " << slayout(t.slayout) << ", " << t.fractal
        << ", " << padValue(t.pad);
    if (t.compact != isa::CompactMode::Null) out << ", " << compactMode(t.compact);
    out << "> " << tileNames_[i];
    // A dynamic valid shape starts at the physical one; each op sets it from its B.DIM.
    if (t.validRows == kDynamicDim && t.validCols == kDynamicDim)
      out << "(" << t.rows << ", " << t.cols << ")";
    else if (t.validRows == kDynamicDim)
      out << "(" << t.rows << ")";
    else if (t.validCols == kDynamicDim)
      out << "(" << t.cols << ")";
    out << ";";
    if (t.placement == kRuntimePlaced) // bound where the image's TASSIGN block runs
      out << " // placed at run time";
    else
      out << "\n  TASSIGN(" << tileNames_[i] << ", "
          << support::hex0x(static_cast<uint64_t>(t.placement)) << ");";
    if (t.aliasOf >= 0) out << " // a view of " << tileNames_[static_cast<size_t>(t.aliasOf)];
    out << "\n";
  }
  for (const Scratch& s : scratch_)
    out << "  " << s.type << " " << s.name << ";\n  TASSIGN(" << s.name << ", "
        << support::hex0x(s.address)
        << "); // scratch for pto-isa's tmp operand, above every tile of the function\n";
}

std::optional<std::string> FunctionEmitter::scratchLike(uint32_t like) {
  const TileDesc& t = fn_.tiles[like];
  const std::string type = "Tile<" + std::string(tileType(t.loc)) + ", " + cppType(t.dtype) + ", " +
                           std::to_string(t.rows) + ", " + std::to_string(t.cols) + ", " +
                           exportedBLayout(t.blayout, t.slayout, t.rows, t.cols) + ", " +
                           std::to_string(t.rows) + ", " + std::to_string(t.cols) + ", " +
                           slayout(t.slayout) + ", " + std::to_string(t.fractal) +
                           ", PadValue::Null>";
  for (const Scratch& s : scratch_)
    if (s.type == type) return s.name;
  const isa::BufferSpec& buf = isa::buffer(img_.arch, t.loc);
  uint64_t end = 0;
  for (const TileDesc& d : fn_.tiles)
    if (d.loc == t.loc && d.aliasOf < 0 && d.placement >= 0)
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

std::optional<ExportError> FunctionEmitter::block(size_t i) {
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

void FunctionEmitter::comment(const Block& b) {
  const uint64_t bend = blockEnd(b);
  for (const LineEntry& l : img_.lines)
    if (l.textOffset >= b.offset && l.textOffset < bend) {
      // Both names escaped: a control character or a backslash (a line splice) could end the
      // comment and make the rest of the name code.
      body_ << "  // " << support::cppCommentText(l.file) << ":" << l.line << ":" << l.col;
      if (!l.frontend.empty()) body_ << " (" << support::cppCommentText(l.frontend) << ")";
      body_ << "\n";
      return;
    }
}

uint64_t FunctionEmitter::blockEnd(const Block& b) const {
  auto it = std::upper_bound(fc_.blocks.begin(), fc_.blocks.end(), b.offset,
                             [](uint64_t o, const Block& x) { return o < x.offset; });
  return it == fc_.blocks.end() ? end_ : it->offset;
}

void FunctionEmitter::transfer(const Block& b) {
  switch (b.transfer) {
  case Transfer::Fall:
  case Transfer::Indirect: // refused by decodeFunction
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

} // namespace pto::cppexport::detail
