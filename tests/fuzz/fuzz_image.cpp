// libFuzzer target: arbitrary bytes as a linked image, as pto-run and pto-ld --emit=cpp /
// pto-objdump --cpp take it. Loading (validation + decoding into the runtime's program) must
// never crash; an image that loads must export to C++ or give an error, and each entry kernel
// must run to completion or a runtime error on both backends (the cpu backend and the npu
// model), never a crash, hang or leak. Every parameter gets data of its own type, as pto-run
// would bind it: a tensor_view a zeroed buffer of its element type and static shape, a pointer a
// zeroed buffer of its element type (4096 elements), a scalar zero; so bind() accepts them and
// the kernel really runs (under an instruction budget). The host launcher's text must hold every
// entry parameter's name as an escaped literal (issue 34: names went into it raw).
#include "export/CppExport.h"
#include "isa/Isa.h"
#include "obj/Image.h"
#include "runtime/Npy.h"
#include "runtime/Runtime.h"
#include "support/Escape.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {
constexpr uint64_t kMaxFuzzBuffer = 1 << 20; // bytes per parameter: larger shapes are skipped
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto img = pto::obj::readImage(data, size);
  auto* image = std::get_if<pto::obj::Image>(&img);
  if (!image) return 0;
  (void)pto::cppexport::exportCpp(*image);
  // The host launcher: every entry kernel's parameter names reach its C++ only as escaped string
  // literals of their own bytes (support/Escape.h), whatever bytes the names hold.
  auto host = pto::cppexport::exportCppHost(*image);
  if (const auto* text = std::get_if<std::string>(&host))
    for (const pto::obj::ImageEntry& e : image->entries)
      for (const pto::obj::Param& p : image->functions[e.function].params)
        if (text->find(pto::support::cppStringLiteral(p.name)) == std::string::npos)
          __builtin_trap();
  auto mod = pto::rt::Module::load(std::vector<uint8_t>(data, data + size), "fuzz.img");
  if (!mod) return 0;
  using Kind = pto::rt::Module::ParamInfo::Kind;
  for (const std::string& kernel : mod->kernelNames()) {
    for (pto::rt::Backend backend : {pto::rt::Backend::Cpu, pto::rt::Backend::Npu}) {
      auto launch = mod->launch(kernel);
      if (!launch) continue;
      std::vector<pto::rt::Tensor> buffers(launch->params().size());
      bool bound = true;
      for (size_t i = 0; i < buffers.size() && bound; ++i) {
        const auto& p = launch->params()[i];
        const std::string name = "#" + std::to_string(i);
        if (p.kind == Kind::Pointer || p.kind == Kind::TensorView) {
          std::vector<int64_t> shape =
              p.kind == Kind::TensorView ? p.shape : std::vector<int64_t>{4096};
          // Sized before allocating: a corrupt shape may ask for gigabytes (a fuzz-image OOM).
          uint64_t bits = pto::isa::bitWidth(p.dtype);
          for (int64_t d : shape) {
            if (d < 0 || (d > 0 && bits > kMaxFuzzBuffer * 8 / static_cast<uint64_t>(d))) {
              bits =
                  kMaxFuzzBuffer * 8 + 1; // negative or too large: no multiplication may overflow
              break;
            }
            bits *= static_cast<uint64_t>(d);
          }
          if (bits > kMaxFuzzBuffer * 8) {
            bound = false;
            break;
          }
          auto t = pto::rt::makeTensor(p.dtype, shape, "fuzz");
          if (!t || t->data.size() > kMaxFuzzBuffer) {
            bound = false;
            break;
          }
          buffers[i] = std::move(t.value());
          if (launch->bind(name, &buffers[i]))
            __builtin_trap(); // a buffer of the parameter's type and shape must bind
        } else if (launch->bindScalarBits(name, 0)) {
          __builtin_trap();
        }
      }
      if (!bound) continue;
      pto::rt::RunOptions opts;
      opts.backend = backend;
      opts.maxInstructions = 20000;
      opts.threads = 1;
      (void)launch->run(opts);
    }
  }
  return 0;
}
