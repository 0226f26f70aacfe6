// The tool chain in process (as TestSupport.h does it for the unit tests) and the comparison.
#include "tests/diff/Check.h"

#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"
#include "support/Text.h"

#include <cstdio>
#include <regex>
#include <sstream>
#include <variant>

namespace pto::diff {
namespace {

isa::DType dtypeOf(Ty t) {
  switch (t) {
  case Ty::I1:
    return isa::DType::I1;
  case Ty::I32:
    return isa::DType::I32;
  case Ty::I64:
    return isa::DType::I64;
  case Ty::Index:
    return isa::DType::I64;
  case Ty::F16:
    return isa::DType::F16;
  case Ty::BF16:
    return isa::DType::BF16;
  case Ty::F32:
    return isa::DType::F32;
  }
  return isa::DType::I32;
}

std::string firstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::string hex(uint64_t v, unsigned bits) {
  return "0x" + support::hexDigits(v, static_cast<int>(bits / 4));
}

// Equal bits, or both NaN for a float buffer (NaN payloads are not specified by the ops).
bool same(Ty t, uint64_t a, uint64_t b) {
  return a == b || (isFloat(t) && sem::isNaN(t, a) && sem::isNaN(t, b));
}

} // namespace

namespace {

// pto-as -> pto-ld --auto-sync -> loaded image; an error text instead when a stage refuses.
std::variant<rt::Module, std::string> compile(const std::string& text) {
  as::SourceFile src("gen.pto", text);
  std::ostringstream err;
  std::optional<obj::ObjectFile> o;
  {
    as::DiagEngine diags(src, err);
    auto m = as::parseModule(src, diags);
    if (m && !diags.failed()) {
      const isa::Arch arch = as::resolveArch(*m, std::nullopt);
      as::verifyModule(*m, arch, diags);
      if (!diags.failed()) o = as::lowerModule(*m, arch, diags);
    }
    if (diags.failed()) o.reset();
  }
  if (!o) return "pto-as: " + err.str();
  link::LinkOptions lo;
  lo.sync = link::SyncMode::Insert;
  link::LinkResult lr = link::link({{"gen.o", *o}}, lo);
  if (!lr.ok()) {
    std::string e = "pto-ld:";
    for (const auto& d : lr.diags)
      e += " " + d.text + "\n";
    return e;
  }
  auto bytes = obj::writeImage(*lr.image);
  if (bytes.index() != 0) return "image: " + std::get<1>(bytes);
  auto mod = rt::Module::load(std::get<0>(bytes), "gen.img");
  if (!mod) return "load: " + mod.error().message;
  return mod.value();
}

Outcome runModule(const rt::Module& mod, const Program& p, bool npu, uint64_t maxInstructions) {
  Outcome out;
  auto launch = mod.launch("k");
  if (!launch) {
    out.error = "launch: " + launch.error().message;
    return out;
  }
  std::vector<rt::Tensor> bufs(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    bufs[i] = makeTensor(b);
    if (auto st = launch->bind("#" + std::to_string(i), &bufs[i])) {
      out.error = "bind: " + st->message;
      return out;
    }
  }
  for (size_t i = 0; i < p.scalars.size(); ++i)
    if (auto st =
            launch->bindScalarBits("#" + std::to_string(p.buffers.size() + i),
                                   uint64_t(sem::sext(p.scalars[i].ty, p.scalars[i].value)))) {
      out.error = "bind: " + st->message;
      return out;
    }
  rt::RunOptions ro;
  ro.backend = npu ? rt::Backend::Npu : rt::Backend::Cpu;
  ro.threads = 1;
  ro.maxInstructions = maxInstructions;
  if (auto st = launch->run(ro)) {
    out.error = "run: " + st->message;
    return out;
  }
  for (size_t i = 0; i < bufs.size(); ++i)
    out.buffers.push_back(tensorBits(bufs[i], p.buffers[i]));
  return out;
}

} // namespace

rt::Tensor makeTensor(const Buffer& b) {
  rt::Tensor t = rt::Tensor::zeros(dtypeOf(b.elem), {int64_t(b.init.size())});
  for (size_t e = 0; e < b.init.size(); ++e)
    t.setBits(int64_t(e), b.init[e]);
  return t;
}

std::vector<uint64_t> tensorBits(const rt::Tensor& t, const Buffer& b) {
  std::vector<uint64_t> v(b.init.size());
  for (size_t e = 0; e < v.size(); ++e)
    v[e] = t.bitsAt(int64_t(e));
  return v;
}

Outcome runToolchain(const std::string& text, const Program& p, bool npu,
                     uint64_t maxInstructions) {
  auto m = compile(text);
  if (auto* e = std::get_if<std::string>(&m)) return Outcome{*e, {}};
  return runModule(std::get<rt::Module>(m), p, npu, maxInstructions);
}

std::string check(const Program& p, const EvalResult& expected, const CheckOptions& opts,
                  std::string* kind) {
  const std::string text = print(p);
  std::vector<std::pair<std::string, std::function<Outcome()>>> impls;
  // The tool chain compiles once; both backends run the same image.
  std::optional<std::variant<rt::Module, std::string>> image;
  const auto backend = [&](bool npu) {
    if (!image) image = compile(text);
    if (auto* e = std::get_if<std::string>(&*image)) return Outcome{*e, {}};
    return runModule(std::get<rt::Module>(*image), p, npu, opts.maxInstructions);
  };
  if (opts.cpu) impls.push_back({"cpu", [&] { return backend(false); }});
  if (opts.npu) impls.push_back({"npu", [&] { return backend(true); }});
  for (const Implementation& im : opts.extra)
    impls.push_back({im.name, [&] { return im.run(text, p); }});
  for (auto& [name, run] : impls) {
    const Outcome o = run();
    if (!o.error.empty()) {
      // The key: the implementation and the message without its source location.
      std::string msg = firstLine(o.error);
      const size_t at = msg.find("error:");
      msg = std::regex_replace(at == std::string::npos ? msg : msg.substr(at),
                               std::regex("gen\\.pto:[0-9:]+"), "L");
      if (kind) *kind = name + ":" + msg;
      return name + ": " + o.error + (o.error.back() == '\n' ? "" : "\n");
    }
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      const Ty t = p.buffers[b].elem;
      for (size_t e = 0; e < expected.buffers[b].size(); ++e) {
        const uint64_t want = expected.buffers[b][e], got = o.buffers[b][e];
        if (same(t, want, got)) continue;
        if (kind) *kind = name + ":mismatch";
        std::ostringstream m;
        m << name << ": buffer %b" << b << " (" << tyName(t) << "[" << p.buffers[b].init.size()
          << "]) element " << e << ": expected " << hex(want, bitWidth(t)) << ", got "
          << hex(got, bitWidth(t)) << "\n";
        m << "  expected %b" << b << ":";
        for (uint64_t x : expected.buffers[b])
          m << " " << hex(x, bitWidth(t));
        m << "\n  actual   %b" << b << ":";
        for (uint64_t x : o.buffers[b])
          m << " " << hex(x, bitWidth(t));
        m << "\n";
        return m.str();
      }
    }
  }
  return {};
}

} // namespace pto::diff
