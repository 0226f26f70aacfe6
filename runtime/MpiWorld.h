// Multi-device runs across processes (docs/multi-device.md, "Under mpirun"): each rank is a
// process mpirun started, its arguments in its part of one MPI-3 window, and everything a
// rank does to another's memory an MPI one-sided operation in a passive-target epoch
// (MPI_Win_lock_all): reads MPI_Get, writes MPI_Put, signals MPI_Accumulate / MPI_Fetch_and_op,
// each flushed before the op that made it ends. syncall, the deadlock check, atomic adds and the
// npu model's notify times use a small control window whose shared part lives on rank 0,
// guarded by a ticket lock taken and released with MPI_Fetch_and_op / MPI_Accumulate.
// Built only when CMake finds MPI (the library pto_runtime_mpi); the in-process world is
// LocalWorld (runtime/Comm.h).
#pragma once

#include "runtime/Comm.h"

#include <mpi.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace pto::rt {

class MpiWorld final : public World {
public:
  /// Starts MPI in a process mpirun started (MPI_Init_thread; the cores of a rank are threads,
  /// their MPI calls one at a time). nullptr and `error` set when MPI cannot run.
  static std::unique_ptr<MpiWorld> start(int* argc, char*** argv, std::string& error);
  ~MpiWorld() override;
  uint32_t rank() const { return me_; }

  /// Collective: the lowest rank for which `failed` is true, or ranks() when none is.
  uint32_t firstFailing(bool failed);
  /// Collective: the windows for a kernel with `params` arguments, run on `blocks` cores per
  /// rank.
  void open(size_t params, uint32_t blocks);
  /// Collective, once every rank's run has ended (or failed: then abort() first): the rank
  /// whose failure stopped the run (the first to abort), or nullopt. The arguments are back in
  /// the launch's buffers.
  std::optional<uint32_t> finish();
  /// Collective: every rank's `text`, written to rank 0's standard output in rank order (mpirun
  /// forwards the processes' own output in any order).
  void printInRankOrder(const std::string& text);

  /// Collective: every rank's arguments move into its part of the data window (copied back to
  /// the buffers by finish()).
  std::optional<std::string> join(uint32_t rank, std::vector<GmRegion>& regions,
                                  const Program* prog, uint32_t cores) override;
  void abort(uint32_t rank, const std::string& why) override;
  void coreDone() override;
  const std::vector<GmRegion>* regionsOf(uint32_t r) const override {
    return r < ranks() && joined_ ? &regions_[r] : nullptr;
  }
  bool notify(Core& c, uint64_t addr, int32_t value, unsigned mode) override;
  bool wait(Core& c, uint64_t addr, int32_t value, unsigned cmp, uint32_t at) override;
  bool test(Core& c, uint64_t addr, int32_t value, unsigned cmp, bool& holds) override;
  bool syncall(Core& c, uint32_t at) override;
  uint8_t* remote(Core& c, uint32_t rank, size_t region, uint64_t off, uint64_t bytes, bool write,
                  const GmRows* rows) override;
  bool finishRemote(Core& c) override;
  bool atomicsThroughWorld() const override { return true; }

private:
  MpiWorld(uint32_t me, uint32_t ranks) : World(ranks), me_(me), regions_(ranks) {}
  struct Header;
  struct WaitSlot;
  // Every helper below runs with mu_ held.
  void lockCtl();
  void unlockCtl();
  Header readHeader();
  void writeHeader(const Header& h);
  MPI_Aint dispOf(const GmPlace& p) const { return bases_[p.rank][p.region] + p.offset; }
  int32_t readSignal(const GmPlace& p);
  bool waitLoop(Core& c, const WaitSlot& slot, const std::function<bool(const Header&)>& holds);
  bool confirmDeadlock(Core& c, Header& h, uint64_t& confirmed, int32_t seen);
  std::string deadlockReport(const Header& h);
  void noteNotifyTime(const GmPlace& p, uint64_t time);
  uint64_t notifyTime(const GmPlace& p);
  void atomicAddRows(const RemoteStage& s);
  int64_t slotDisp(uint32_t rank, uint32_t block) const;

  uint32_t me_;
  std::mutex mu_; // one MPI call at a time (MPI_THREAD_SERIALIZED)
  MPI_Win data_ = MPI_WIN_NULL, ctl_ = MPI_WIN_NULL;
  int64_t* ctlBase_ = nullptr;
  size_t params_ = 0;
  uint32_t blocks_ = 1;
  int64_t regionTable_ = 0, timeTable_ = 0;
  std::vector<std::vector<GmRegion>> regions_;
  std::vector<std::vector<MPI_Aint>> bases_;
  struct Moved {
    uint8_t* buffer;
    const uint8_t* window;
    uint64_t size;
  };
  std::vector<Moved> moved_; // the launch's buffers and their copies in the window
  const Program* prog_ = nullptr;
  bool joined_ = false;
};

} // namespace pto::rt
