// The `pto._pto` extension (pybind11): the drivers of python/Driver.h and python/Run.h with
// numpy buffers in and out. The package python/pto/__init__.py is the public API
// (docs/python.md); it passes buffers here as contiguous arrays with their element type named.
#include "isa/Describe.h"
#include "isa/OpAttrs.h"
#include "python/Driver.h"
#include "python/Run.h"
#include "ref/Interp.h"
#include "runtime/Npy.h"
#include "runtime/npu/Report.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <climits>
#include <cstring>

namespace py = pybind11;
using namespace pto;
using namespace pto::python;

namespace {

std::optional<isa::Arch> archOf(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  auto a = isa::parseArch(*text);
  if (!a) throw ToolError{"error: unknown arch '" + *text + "' (a2a3 or a5)"};
  return a;
}

isa::DType dtypeOf(const std::string& spelling) {
  auto t = isa::parseDType(spelling);
  if (!t)
    throw ToolError{"error: unknown element type '" + spelling + "' (pto.dtypes() lists them)"};
  return *t;
}

py::bytes bytesOf(const std::vector<uint8_t>& b) {
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

/// A host buffer from a C-contiguous array holding elements of `spelling` (for a packed 4-bit
/// type, two per byte) in the shape `shape` (in elements).
rt::Tensor tensorOf(const std::string& name, const py::buffer& array, const std::string& spelling,
                    const std::vector<int64_t>& shape) {
  const py::buffer_info info = array.request();
  rt::Tensor t;
  t.dtype = dtypeOf(spelling);
  t.shape = shape;
  const size_t have = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
  if (t.numel() < 0 || rt::Tensor::bytesFor(t.dtype, t.numel()) != have)
    throw ToolError{"pto-run: error: the array for %" + name + " holds " + std::to_string(have) +
                    " bytes, not " + std::to_string(t.numel()) + " elements of " + spelling};
  t.data.resize(have);
  if (have) std::memcpy(t.data.data(), info.ptr, have);
  return t;
}

/// A buffer after the run: its bytes as a 1-D numpy array of the .npy carrier type (the package
/// views and reshapes it as the caller's array was).
py::array arrayOf(const rt::Tensor& t) {
  const py::dtype dt(rt::npyDescr(t.dtype));
  const auto n = static_cast<py::ssize_t>(t.data.size() / static_cast<size_t>(dt.itemsize()));
  py::array out(dt, std::vector<py::ssize_t>{n});
  if (!t.data.empty()) std::memcpy(out.mutable_data(), t.data.data(), t.data.size());
  return out;
}

ScalarArg scalarOf(const std::string& name, const py::handle& v) {
  ScalarArg a;
  if (py::isinstance<py::float_>(v)) {
    a.isFloat = true;
    a.real = v.cast<double>();
    return a;
  }
  if (!py::isinstance<py::int_>(v))
    throw ToolError{"pto-run: error: parameter %" + name +
                    ": give a number or a numpy array, not " +
                    std::string(py::str(py::type::of(v).attr("__name__")))};
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) {
    a.integer = s;
    return a;
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (!PyErr_Occurred()) {
      a.integer = static_cast<obj::WideInt>(u);
      return a;
    }
    PyErr_Clear();
  }
  throw ToolError{"pto-run: error: parameter %" + name + ": " + std::string(py::str(v)) +
                  " does not fit in 64 bits"};
}

/// The request's arguments: buffers as name -> (array, dtype spelling, shape), scalars as
/// name -> number.
void fillArgs(RunRequest& req, const py::dict& buffers, const py::dict& scalars) {
  for (auto [k, v] : buffers) {
    const std::string name = k.cast<std::string>();
    auto spec = v.cast<py::tuple>();
    req.buffers[name] = tensorOf(name, spec[0].cast<py::buffer>(), spec[1].cast<std::string>(),
                                 spec[2].cast<std::vector<int64_t>>());
  }
  for (auto [k, v] : scalars) {
    const std::string name = k.cast<std::string>();
    req.scalars[name] = scalarOf(name, v);
  }
}

/// Ctrl-C while a run goes on: the Python signal handlers run on this (the main) thread.
bool pollSignals() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

/// Runs `run` with the GIL released; a KeyboardInterrupt (or another exception a signal handler
/// raised) stops it and is raised here, with no result.
template <typename F> RunOutcome interruptible(F&& run) {
  RunOutcome out;
  {
    py::gil_scoped_release release;
    out = run(InterruptPoll(pollSignals));
  }
  if (out.cancelled) {
    if (PyErr_Occurred()) throw py::error_already_set();
    throw ToolError{"pto-run: error: the run was cancelled"};
  }
  return out;
}

py::dict npuReport(const rt::Module& mod, const RunOutcome& out) {
  py::dict d;
  uint64_t cycles = 0;
  py::list blocks;
  std::array<uint64_t, 8> busy{}, ops{};
  for (const rt::NpuBlock& b : out.stats.npu) {
    cycles = std::max(cycles, b.cycles);
    blocks.append(b.cycles);
    for (unsigned p = 0; p < 8; ++p) {
      busy[p] += b.busy[p];
      ops[p] += b.ops[p];
    }
  }
  py::dict pipes;
  for (unsigned p = 0; p < 8; ++p) {
    if (!ops[p] && !busy[p]) continue;
    py::dict row;
    row["busy"] = busy[p];
    row["ops"] = ops[p];
    pipes[py::str(std::string(isa::spelling(static_cast<isa::Pipe>(p))))] = row;
  }
  d["cycles"] = cycles;
  d["block_cycles"] = blocks;
  d["pipes"] = pipes;
  d["summary"] = rt::npu::summary(mod, out.stats);
  d["ops"] = rt::npu::profile(mod, out.stats, 20);
  d["trace"] = rt::npu::chromeTrace(mod, out.stats);
  return d;
}

py::dict outcomeDict(const RunOutcome& out) {
  py::dict d, buffers;
  for (const auto& [name, t] : out.buffers)
    buffers[py::str(name)] =
        py::make_tuple(arrayOf(t), std::string(isa::spelling(t.dtype)), t.shape);
  d["kernel"] = out.kernel;
  d["buffers"] = buffers;
  d["output"] = out.output;
  d["warnings"] = out.warnings;
  d["tile_ops"] = out.stats.tileOps;
  d["scalar_ops"] = out.stats.scalarOps;
  d["seconds"] = out.stats.seconds;
  return d;
}

py::dict runImageBinding(const LoadedImage& img, const std::optional<std::string>& kernel,
                         const std::string& backend, uint32_t blocks, uint64_t seed,
                         unsigned threads, uint64_t maxInstructions, const std::string& autoArgs,
                         const py::dict& buffers, const py::dict& scalars) {
  RunRequest req;
  req.kernel = kernel.value_or("");
  if (backend != "cpu" && backend != "npu")
    throw ToolError{"pto-run: error: unknown backend '" + backend + "' (cpu or npu)"};
  if (blocks == 0) throw ToolError{"pto-run: error: blocks must be at least 1"};
  req.backend = backend == "npu" ? rt::Backend::Npu : rt::Backend::Cpu;
  req.blocks = blocks;
  req.seed = seed;
  req.threads = threads;
  req.maxInstructions = maxInstructions;
  if (autoArgs != "random" && autoArgs != "zeros")
    throw ToolError{"pto-run: error: auto_args is 'random' or 'zeros', not '" + autoArgs + "'"};
  req.autoArgs = autoArgs == "zeros" ? rt::AutoArgs::Zeros : rt::AutoArgs::Random;
  fillArgs(req, buffers, scalars);
  const bool npu = req.backend == rt::Backend::Npu;
  const rt::Module& mod = *img.module;
  RunOutcome out =
      interruptible([&](const InterruptPoll& poll) { return runImage(mod, std::move(req), poll); });
  py::dict d = outcomeDict(out);
  if (npu) d["npu"] = npuReport(mod, out);
  return d;
}

py::dict runSourceBinding(const std::shared_ptr<ParsedSource>& src,
                          const std::optional<std::string>& kernel, uint32_t blocks,
                          uint64_t maxInstructions, const py::dict& buffers,
                          const py::dict& scalars) {
  RunRequest req;
  req.kernel = kernel.value_or("");
  if (blocks == 0) throw ToolError{"pto-run: error: blocks must be at least 1"};
  req.blocks = blocks;
  req.maxInstructions = maxInstructions;
  fillArgs(req, buffers, scalars);
  RunOutcome out = interruptible(
      [&](const InterruptPoll& poll) { return runSource(*src, std::move(req), poll); });
  return outcomeDict(out);
}

py::list paramsOf(const LoadedImage& img, const std::string& kernel) {
  if (!img.module->params(kernel)) {
    std::string names;
    for (const auto& n : img.module->kernelNames())
      names += " @" + n;
    throw ToolError{"pto-run: error: no entry kernel @" + kernel + " (kernels:" + names + ")"};
  }
  py::list out;
  static const char* kKinds[] = {"ptr", "scalar", "tensor_view", "index"};
  for (const rt::ParamDescription& d : rt::describeParams(*img.module, kernel)) {
    const auto& p = *d.param;
    py::dict row;
    row["name"] = p.name;
    row["kind"] = kKinds[static_cast<int>(p.kind)];
    row["dtype"] = std::string(isa::spelling(p.dtype));
    row["type"] = d.type;
    row["shape"] = p.shape;
    row["extent"] = d.extentExpr.empty() ? py::object(py::none()) : py::str(d.extentExpr);
    row["extent_text"] = d.extent;
    row["index_values"] = d.indexValues;
    out.append(row);
  }
  return out;
}

std::string kindName(isa::RoleKind k) {
  const std::string_view suffix = isa::roleKindSuffix(k);
  return suffix.empty() ? "tile" : std::string(suffix.substr(1));
}

py::list dtypeNames(const isa::DTypeSet& set) {
  py::list out;
  for (unsigned i = 0; i < isa::kNumDTypes; ++i)
    if (set.contains(static_cast<isa::DType>(i)))
      out.append(std::string(isa::spelling(static_cast<isa::DType>(i))));
  return out;
}

py::dict opRecord(const isa::OpInfo& op) {
  py::dict d;
  d["name"] = std::string(op.mnemonic);
  d["pipe"] = std::string(isa::spelling(op.pipe));
  d["engine"] = std::string(isa::engineName(op.engine));
  d["signature"] = std::string(op.signature);
  d["type_rule"] = std::string(isa::ruleText(op.rule));
  py::dict dtypes;
  py::list archs;
  for (isa::Arch a : {isa::Arch::A2A3, isa::Arch::A5}) {
    dtypes[py::str(std::string(isa::spelling(a)))] =
        op.supports(a) ? dtypeNames(op.types(a)) : py::list();
    if (op.supports(a)) archs.append(std::string(isa::spelling(a)));
  }
  d["dtypes"] = dtypes;
  d["archs"] = archs;
  py::list roles;
  for (const isa::Role& r : op.roles) {
    py::dict role;
    role["name"] = std::string(r.name);
    role["kind"] = kindName(r.kind);
    role["output"] = r.isOutput;
    role["optional"] = r.optional;
    role["variadic"] = r.variadic;
    roles.append(role);
  }
  d["roles"] = roles;
  py::list flags;
  for (std::string_view f : isa::flagTexts(op.flags))
    flags.append(std::string(f));
  d["flags"] = flags;
  py::list attrs;
  for (const isa::OpAttr& a : isa::opAttrs()) {
    if (a.op != op.id) continue;
    py::dict attr;
    attr["key"] = std::string(a.key);
    attr["default"] =
        a.defaultValue.empty() ? py::object(py::none()) : py::str(std::string(a.defaultValue));
    attr["example"] = std::string(a.validValue);
    attr["reference_interpreter"] = a.ref == isa::AttrRef::Runs;
    attrs.append(attr);
  }
  d["attributes"] = attrs;
  return d;
}

py::list opsTable() {
  py::list out;
  for (const isa::OpInfo& op : isa::allOps())
    out.append(opRecord(op));
  return out;
}

py::list dtypesTable() {
  static const char* kKinds[] = {"float", "sint", "uint", "bool"};
  py::list out;
  for (unsigned i = 0; i < isa::kNumDTypes; ++i) {
    const isa::DTypeInfo& t = isa::info(static_cast<isa::DType>(i));
    py::dict d;
    d["name"] = std::string(t.spelling);
    d["bits"] = t.bits;
    d["kind"] = kKinds[static_cast<int>(t.kind)];
    d["cpp"] = std::string(t.cppName);
    d["npy"] = rt::npyDescr(t.id);
    out.append(d);
  }
  return out;
}

void bindObjects(py::module_& m) {
  py::class_<AssembledObject, std::shared_ptr<AssembledObject>>(m, "Object")
      .def("to_bytes", [](const AssembledObject& o) { return bytesOf(o.bytes); })
      .def_readonly("name", &AssembledObject::name)
      .def_readonly("warnings", &AssembledObject::warnings)
      .def_property_readonly("arch",
                             [](const AssembledObject& o) { return isa::spelling(o.object.arch); })
      .def_property_readonly("functions", [](const AssembledObject& o) {
        std::vector<std::string> names;
        for (const auto& f : o.object.functions)
          names.push_back(f.name);
        return names;
      });
  py::class_<LoadedImage, std::shared_ptr<LoadedImage>>(m, "Image")
      .def("to_bytes", [](const LoadedImage& i) { return bytesOf(i.bytes); })
      .def_readonly("warnings", &LoadedImage::warnings)
      .def_property_readonly("arch",
                             [](const LoadedImage& i) { return isa::spelling(i.module->arch()); })
      .def_property_readonly("kernels",
                             [](const LoadedImage& i) { return i.module->kernelNames(); })
      .def("params", &paramsOf)
      .def("run", &runImageBinding);
  py::class_<ParsedSource, std::shared_ptr<ParsedSource>>(m, "Source")
      .def_property_readonly("kernels",
                             [](const ParsedSource& s) { return ref::kernelNames(*s.module); })
      .def_property_readonly("arch", [](const ParsedSource& s) { return isa::spelling(s.arch); })
      .def("run", &runSourceBinding);
}

} // namespace

PYBIND11_MODULE(_pto, m) {
  m.doc() = "pto-toolchain: assemble, link and run PTO kernels (docs/python.md)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ToolError& e) {
      py::object cls = py::module_::import("pto._errors").attr("Error");
      PyErr_SetObject(cls.ptr(), cls(e.text).ptr());
    }
  });
  bindObjects(m);
  m.def(
      "assemble",
      [](const std::string& text, const std::string& filename,
         const std::optional<std::string>& arch) {
        return std::make_shared<AssembledObject>(assemble(text, filename, archOf(arch)));
      },
      py::arg("text"), py::arg("filename"), py::arg("arch"));
  m.def("read_source", [](const std::string& path, const std::string& tool) {
    return py::bytes(readSource(path, tool));
  });
  m.def(
      "link",
      [](const std::vector<std::shared_ptr<AssembledObject>>& objects,
         const std::optional<std::string>& arch, std::optional<bool> autoSync,
         const std::vector<std::string>& entries, bool allowRaces) {
        link::LinkOptions opts;
        opts.arch = archOf(arch);
        opts.sync = !autoSync   ? link::SyncMode::Auto
                    : *autoSync ? link::SyncMode::Insert
                                : link::SyncMode::Check;
        opts.entries = entries;
        opts.allowRaces = allowRaces;
        std::vector<const AssembledObject*> in;
        for (const auto& o : objects)
          in.push_back(o.get());
        return std::make_shared<LoadedImage>(linkObjects(in, opts));
      },
      py::arg("objects"), py::arg("arch"), py::arg("auto_sync"), py::arg("entries"),
      py::arg("allow_races"));
  m.def("load_image_bytes", [](const py::bytes& b, const std::string& name) {
    const std::string s = b;
    return std::make_shared<LoadedImage>(
        loadImageBytes(std::vector<uint8_t>(s.begin(), s.end()), name));
  });
  m.def("load_image_file",
        [](const std::string& path) { return std::make_shared<LoadedImage>(loadImageFile(path)); });
  m.def("parse_source", [](const std::string& text, const std::string& filename,
                           const std::optional<std::string>& arch) {
    return parseSource(text, filename, archOf(arch));
  });
  m.def("ops", &opsTable);
  m.def("dtypes", &dtypesTable);
}
