// The reference interpreter of the Kernel IR (ref/) as one more implementation under test:
// pto-diff compares its buffers with the generator's evaluation like the backends'.
#include "tests/diff/Check.h"

#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "ref/Interp.h"

#include <sstream>

namespace pto::diff {

Implementation refInterpreter(uint64_t maxOps) {
  return {"ref", [maxOps](const std::string& text, const Program& p) {
            Outcome out;
            as::SourceFile src("gen.pto", text);
            std::ostringstream err;
            std::unique_ptr<ir::Module> m;
            isa::Arch arch = isa::Arch::A2A3;
            {
              as::DiagEngine diags(src, err);
              m = as::parseModule(src, diags);
              if (m && !diags.failed()) {
                arch = as::resolveArch(*m, std::nullopt);
                as::verifyModule(*m, arch, diags);
              }
              if (diags.failed()) m.reset();
            }
            if (!m) {
              out.error = "parse/verify: " + err.str();
              return out;
            }
            auto k = ref::Kernel::find(*m, arch, "k");
            if (!k) {
              out.error = "find: " + k.error().message;
              return out;
            }
            std::vector<rt::Tensor> bufs(p.buffers.size());
            for (size_t i = 0; i < p.buffers.size(); ++i) {
              bufs[i] = makeTensor(p.buffers[i]);
              if (auto st = k->bind("b" + std::to_string(i), &bufs[i])) {
                out.error = "bind: " + st->message;
                return out;
              }
            }
            for (size_t i = 0; i < p.scalars.size(); ++i)
              if (auto st =
                      k->bindScalarBits("v" + std::to_string(p.kernel().params[i]),
                                        uint64_t(sem::sext(p.scalars[i].ty, p.scalars[i].value)))) {
                out.error = "bind: " + st->message;
                return out;
              }
            ref::Options ro;
            ro.maxOps = maxOps;
            if (auto st = k->run(ro)) {
              out.error = "run: " + st->message;
              return out;
            }
            for (size_t i = 0; i < bufs.size(); ++i)
              out.buffers.push_back(tensorBits(bufs[i], p.buffers[i]));
            return out;
          }};
}

} // namespace pto::diff
