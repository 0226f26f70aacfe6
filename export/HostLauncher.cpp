// The host launcher (export/CppExport.h, docs/cpp-export.md): an ACL program that reads .npy
// inputs and scalar values, launches one kernel of the image through its pto_launch_<kernel>
// and writes the outputs as .npy. Its fixed part is export/prelude/host-arg.cpp.in and
// host-main.cpp.in, embedded at build time (export/Prelude.h); the kernel table between them
// comes from the image.
#include "export/CppExport.h"
#include "export/Emitter.h"
#include "export/Prelude.h"
#include "support/Escape.h"

#include <algorithm>
#include <sstream>

namespace pto::cppexport {
namespace detail {
namespace {

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

void hostKernel(std::ostream& out, const Image& img, uint32_t f, const FunctionNames& names) {
  const Function& fn = img.functions[f];
  out << "  {" << support::cppStringLiteral(fn.name) << ",\n   {";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param& p = fn.params[i];
    bool buffer = p.kind == ParamKind::Pointer || p.kind == ParamKind::TensorView;
    out << (i ? ",\n    " : "") << "{" << support::cppStringLiteral(p.name) << ", "
        << (buffer ? "true" : "false") << ", \""
        << npyDescr(p.kind == ParamKind::Index ? isa::DType::I64 : p.dtype) << "\", "
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
} // namespace detail

using namespace detail;

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
  out << "\nnamespace {\n\n"
      << hostArg() << "\n} // namespace\n"
      << table.str() << "\nnamespace {\n\n"
      << hostMain();
  return out.str();
}

} // namespace pto::cppexport
