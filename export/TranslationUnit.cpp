// The kernel translation unit (export/CppExport.h, docs/cpp-export.md). Everything printed comes
// from the image: the tile table (shapes, layouts, planned placements), the decoded blocks
// (asm/mc/ImageCode.h), the parameter records and the line table. Iteration is always in table or
// address order, so the text is deterministic. The fixed text (the pto_export helpers) is
// export/prelude/, embedded at build time (export/Prelude.h).
#include "export/CppExport.h"
#include "export/Emitter.h"
#include "export/Prelude.h"
#include "export/Spelling.h"
#include "support/Escape.h"
#include "support/Text.h"

#include <sstream>

namespace pto::cppexport {
namespace detail {

std::string entryList(const Image& img) {
  std::string s;
  for (const ImageEntry& e : img.entries)
    s += (s.empty() ? "@" : ", @") + support::cppCommentText(img.functions[e.function].name);
  return s;
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

namespace {

std::string kindGuard(uint32_t flags) {
  if (flags & kKernelVector) return "defined(__DAV_VEC__) || defined(__CPU_SIM)";
  if (flags & kKernelCube) return "defined(__DAV_CUBE__) || defined(__CPU_SIM)";
  return "defined(__CCE_AICORE__) || defined(__CPU_SIM)";
}

/// Every function decoded, checked for exportability as a whole (calls into kernels).
std::variant<std::vector<FunctionCode>, ExportError> decodeAll(const Image& img) {
  std::vector<FunctionCode> code;
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    auto fc = decodeFunction(img, i);
    if (auto* e = std::get_if<CodeError>(&fc)) {
      std::string loc = sourceLocation(img, e->function, e->offset);
      return ExportError{(loc.empty() ? "" : loc + ": ") + "@" + img.functions[i].name + "+" +
                         support::hex0x(e->offset - img.functions[i].textOffset) + ": " +
                         e->message};
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
  out << "// Launches @" << support::cppCommentText(fn.name)
      << " on `blocks` cores; scalar arguments are passed as raw bits.\n";
  out << "#if defined(__CPU_SIM)\n";
  signature();
  out << " {\n  pto::cpu_sim::KernelLaunchOptions options;\n  options.kernel_name = "
      << support::cppStringLiteral(fn.name)
      << ";\n  options.explicit_block_count = blocks;\n  "
         "pto::cpu_sim::LaunchKernelMultiCore(options, stream, [&] { "
      << name << "(";
  args();
  out << "); });\n}\n#elif !defined(__CCE_AICORE__)\n";
  signature();
  out << " {\n  " << name << "<<<blocks, nullptr, stream>>>(";
  args();
  out << ");\n}\n#endif\n";
}

/// Whether a function uses a signal op (COMM_NOTIFY / WAIT / TEST): pto-isa declares
/// pto::comm's TNOTIFY, TWAIT and TTEST in a header of their own.
bool usesSignals(const std::vector<FunctionCode>& code) {
  for (const FunctionCode& f : code)
    for (const Block& b : f.blocks)
      if (b.kind == BlockKind::Control && (b.control.ctl == isa::enc::ExtCtl::COMM_NOTIFY ||
                                           b.control.ctl == isa::enc::ExtCtl::COMM_WAIT ||
                                           b.control.ctl == isa::enc::ExtCtl::COMM_TEST))
        return true;
  return false;
}

} // namespace
} // namespace detail

using namespace detail;

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
      << "#include <cstdint>\n#include <pto/pto-inst.hpp>\n"
      << (usesSignals(code) ? "#include <pto/comm/pto_comm_inst.hpp>\n" : "")
      << "\nusing namespace pto;\n\n"
      << "#if defined(__CCE_AICORE__) || defined(__CPU_SIM)\n"
      << deviceHelpers();
  // Helpers (non-exported functions) first: kernels call them.
  for (uint32_t i = 0; i < img.functions.size(); ++i) {
    if (img.functions[i].flags & kEntry) continue;
    auto text = FunctionEmitter(img, code[i], fn, 0).run();
    if (auto* e = std::get_if<ExportError>(&text)) return *e;
    out << "\n// @" << support::cppCommentText(img.functions[i].name)
        << " (helper, docs/abi.md calling convention)\n"
        << std::get<std::string>(text);
  }
  out << "#endif\n\n" << hostHelpers();
  for (const ImageEntry& entry : img.entries) {
    const Function& f = img.functions[entry.function];
    auto stack = kernelStack(img, code, entry.function);
    if (auto* e = std::get_if<ExportError>(&stack)) return *e;
    auto text = FunctionEmitter(img, code[entry.function], fn, std::get<uint64_t>(stack)).run();
    if (auto* e = std::get_if<ExportError>(&text)) return *e;
    std::string body = std::get<std::string>(text);
    // The kernel kind guard encloses the body, so every compiler pass sees the declaration.
    size_t open = body.find(" {\n") + 3;
    out << "\n// @" << support::cppCommentText(f.name) << ": exported kernel\n"
        << body.substr(0, open) << "#if " << kindGuard(f.flags) << "\n"
        << body.substr(open, body.size() - open - 2) << "#endif\n}\n";
    launcher(out, img, entry.function, fn);
  }
  return out.str();
}

std::string cppIntrinsic(isa::OpId op) {
  return intrinsicFor(op).name;
}

} // namespace pto::cppexport
