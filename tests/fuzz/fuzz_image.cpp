// libFuzzer target: arbitrary bytes as a linked image, as pto-run and pto-ld --emit=cpp /
// pto-objdump --cpp take it. Loading (validation + decoding into the runtime's program) must
// never crash; an image that loads must export to C++ or give an error, and each entry kernel
// must run to completion or a runtime error on both backends (the cpu backend and the npu
// model), with zeroed buffers for its pointer parameters, zero scalars and an instruction
// budget, never a crash, hang or leak.
#include "obj/CppExport.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto img = pto::obj::readImage(data, size);
  auto* image = std::get_if<pto::obj::Image>(&img);
  if (!image) return 0;
  (void)pto::obj::exportCpp(*image);
  auto mod = pto::rt::Module::load(std::vector<uint8_t>(data, data + size), "fuzz.img");
  if (!mod) return 0;
  for (const std::string& kernel : mod->kernelNames()) {
    for (pto::rt::Backend backend : {pto::rt::Backend::Cpu, pto::rt::Backend::Npu}) {
      auto launch = mod->launch(kernel);
      if (!launch) continue;
      std::vector<pto::rt::Tensor> buffers(launch->params().size());
      for (size_t i = 0; i < buffers.size(); ++i) {
        const auto& p = launch->params()[i];
        const std::string name = "#" + std::to_string(i);
        if (p.kind == pto::rt::Module::ParamInfo::Kind::Pointer || p.kind == pto::rt::Module::ParamInfo::Kind::TensorView) {
          buffers[i] = pto::rt::Tensor::zeros(pto::isa::DType::U8, {4096});
          (void)launch->bind(name, &buffers[i]);
        } else {
          (void)launch->bindScalarBits(name, 0);
        }
      }
      pto::rt::RunOptions opts;
      opts.backend = backend;
      opts.maxInstructions = 20000;
      opts.threads = 1;
      (void)launch->run(opts);
    }
  }
  return 0;
}
