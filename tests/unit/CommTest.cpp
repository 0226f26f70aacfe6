// The multi-device world (runtime/Comm.h): peer addresses by rank tag, signals across threads,
// syncall, and the deadlock report. Expected values are worked by hand from the definitions in
// docs/multi-device.md.
#include "runtime/Comm.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace pto::rt {
namespace {

/// One rank's state for a test: a one-argument window of `words` i32 and a core bound to it.
struct Rank {
  std::vector<int32_t> words;
  std::vector<GmRegion> regions;
  Core core;
  Rank(World& w, uint32_t rank, size_t n) : words(n, 0) {
    regions.push_back({reinterpret_cast<uint8_t*>(words.data()), n * 4, isa::DType::I32, "sig"});
    core.gm = &regions;
    core.world = &w;
    core.rank = rank;
  }
  /// Argument 0's address in rank `r`'s window (tag r + 1), or the own one.
  static uint64_t addr(std::optional<uint32_t> r, uint64_t byte = 0) {
    const uint64_t own = (uint64_t{1} << kRegionShift) | byte;
    return r ? own + (uint64_t{*r} + 1) * kRankStride : own;
  }
};

/// Runs `body(r, core)` for each of `n` ranks of `w` on a thread of its own, after the rank joined
/// the world with one block and before it reports that block done; returns the ranks.
template <class Body>
std::vector<std::unique_ptr<Rank>> onEveryRank(World& w, uint32_t n, Body body) {
  std::vector<std::unique_ptr<Rank>> ranks;
  for (uint32_t r = 0; r < n; ++r)
    ranks.push_back(std::make_unique<Rank>(w, r, 1));
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      Core& c = ranks[r]->core;
      ASSERT_EQ(w.join(r, ranks[r]->regions, nullptr, 1), std::nullopt);
      body(r, c);
      w.coreDone();
    });
  for (auto& t : threads)
    t.join();
  return ranks;
}

TEST(Comm, RankTags) {
  EXPECT_EQ(rankTagOf(Rank::addr(std::nullopt)), std::nullopt);
  EXPECT_EQ(rankTagOf(Rank::addr(0)), 0u);
  EXPECT_EQ(rankTagOf(Rank::addr(5, 12)), 5u);
  EXPECT_EQ(rankTagOf(kPoisonRegion << kRegionShift), std::nullopt);
}

TEST(Comm, PeerAccessIsCheckedAgainstThePeersWindow) {
  World w(2);
  Rank r0(w, 0, 4), r1(w, 1, 2);
  std::thread t([&] { EXPECT_EQ(w.join(1, r1.regions, nullptr, 1), std::nullopt); });
  EXPECT_EQ(w.join(0, r0.regions, nullptr, 1), std::nullopt);
  t.join();
  // Rank 0 writes element 1 of rank 1's window.
  uint8_t* p = r0.core.translate(Rank::addr(1, 4), 4, "TSTORE", true);
  ASSERT_NE(p, nullptr);
  const int32_t v = 42;
  std::memcpy(p, &v, 4);
  EXPECT_EQ(r1.words[1], 42);
  // Element 2 is past the end of rank 1's 2-element window (rank 0's has 4).
  EXPECT_EQ(r0.core.translate(Rank::addr(1, 8), 4, "TSTORE", true), nullptr);
  EXPECT_NE(r0.core.error.find("in the window of rank 1"), std::string::npos) << r0.core.error;
  r0.core.error.clear();
  EXPECT_EQ(r0.core.translate(Rank::addr(2), 4, "TLOAD", false), nullptr);
  EXPECT_NE(r0.core.error.find("the run has 2 rank(s)"), std::string::npos) << r0.core.error;
}

TEST(Comm, AtomicAddNotifiesFromManyThreadsLoseNothing) {
  constexpr uint32_t kRanks = 4, kAdds = 2000;
  World w(kRanks);
  auto ranks = onEveryRank(w, kRanks, [&](uint32_t, Core& c) {
    for (uint32_t i = 0; i < kAdds; ++i) // every rank adds 1 to rank 0's signal
      ASSERT_TRUE(w.notify(c, Rank::addr(0), 1, 1));
    // then waits until all kRanks * kAdds adds arrived (ge = CmpMode 5)
    ASSERT_TRUE(w.wait(c, Rank::addr(0), static_cast<int32_t>(kRanks * kAdds), 5, 0)) << c.error;
  });
  EXPECT_EQ(ranks[0]->words[0], static_cast<int32_t>(kRanks * kAdds));
}

TEST(Comm, SyncallReleasesWhenAllArrived) {
  constexpr uint32_t kRanks = 3;
  World w(kRanks);
  onEveryRank(w, kRanks, [&](uint32_t r, Core& c) {
    ASSERT_TRUE(w.notify(c, Rank::addr(std::nullopt), 7, 0)); // set own signal
    ASSERT_TRUE(w.syncall(c, 0)) << c.error;
    // After the syncall every rank's signal is set: read the next rank's.
    bool holds = false;
    ASSERT_TRUE(w.test(c, Rank::addr((r + 1) % kRanks), 7, 0, holds));
    EXPECT_TRUE(holds);
  });
}

TEST(Comm, EveryRankWaitingIsADeadlockNamingEachWait) {
  constexpr uint32_t kRanks = 2;
  World w(kRanks);
  std::vector<std::string> errors(kRanks);
  onEveryRank(w, kRanks, [&](uint32_t r, Core& c) {
    EXPECT_FALSE(w.wait(c, Rank::addr(std::nullopt), 1, 0, 0)); // signal == 1: never
    errors[r] = c.error;
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 0 block 0: twait on %sig[0] of rank 0 eq 1 (it is 0)"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("rank 1 block 0: twait on %sig[0] of rank 1 eq 1 (it is 0)"),
              std::string::npos)
        << e;
  }
}

} // namespace
} // namespace pto::rt
