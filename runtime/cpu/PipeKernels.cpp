// The cross-core pipe ops (TPIPE_INIT / PUSH / POP / FREE): the cluster of the block carries
// them out (runtime/Cluster.cpp); outside a cluster they cannot run.
#include "runtime/Cluster.h"
#include "runtime/cpu/KernelUtil.h"

namespace pto::rt::cpu {
namespace {

Cluster* clusterOf(Core& c, const TileInst& t) {
  if (!c.cluster)
    fail(c, std::string(t.name) + " runs only in a block of cube and vector cores (a cluster)");
  return c.cluster;
}
void kPipeInit(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->init(c, t);
}
void kPipePush(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->push(c, t);
}
void kPipePop(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->pop(c, t);
}
void kPipeFree(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->free(c, t);
}
void kPipeAlloc(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->alloc(c, t);
}
void kPipeCommit(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->commit(c, t);
}
void kPipeTake(Core& c, const TileInst& t) {
  if (Cluster* k = clusterOf(c, t)) k->take(c, t);
}

} // namespace

bool selectPipeKernel(TileInst& t, std::optional<std::string>& err) {
  switch (t.op) {
  case isa::OpId::TPIPE_INIT: // the configuration word is checked when it runs
    t.kernel = &kPipeInit;
    return true;
  case isa::OpId::TPIPE_PUSH:
    if (t.src0 < 0) err = "TPIPE_PUSH needs a source tile";
    t.kernel = &kPipePush;
    return true;
  case isa::OpId::TPIPE_POP:
    if (t.dst < 0) err = "TPIPE_POP needs a destination tile";
    t.kernel = &kPipePop;
    return true;
  case isa::OpId::TPIPE_FREE:
    t.kernel = &kPipeFree;
    return true;
  case isa::OpId::TPIPE_ALLOC:
    t.kernel = &kPipeAlloc;
    return true;
  case isa::OpId::TPIPE_COMMIT:
    t.kernel = &kPipeCommit;
    return true;
  case isa::OpId::TPIPE_TAKE:
    t.kernel = &kPipeTake;
    return true;
  default:
    return false;
  }
}

} // namespace pto::rt::cpu
