// support/ThinVector.h against std::vector on random edit sequences, and support/Interned.h's
// handles (one per distinct text, across threads).
#include "support/Interned.h"
#include "support/ThinVector.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace pto;

namespace {

template <typename T> bool same(const support::ThinVector<T>& thin, const std::vector<T>& ref) {
  return thin.size() == ref.size() && thin.empty() == ref.empty() &&
         std::equal(thin.begin(), thin.end(), ref.begin(), ref.end());
}

} // namespace

TEST(ThinVector, FollowsStdVectorOnRandomEdits) {
  std::mt19937 rng(20261205);
  size_t checks = 0;
  for (int run = 0; run < 200; ++run) {
    support::ThinVector<std::string> thin;
    std::vector<std::string> ref;
    for (int step = 0; step < 60; ++step) {
      const std::string v = std::to_string(rng() % 1000);
      const size_t at = ref.empty() ? 0 : rng() % (ref.size() + 1);
      switch (rng() % 9) {
      case 0:
        thin.push_back(v), ref.push_back(v);
        break;
      case 1:
        thin.emplace_back(v), ref.emplace_back(v);
        break;
      case 2:
        thin.insert(thin.begin() + at, v), ref.insert(ref.begin() + at, v);
        break;
      case 3:
        if (at < ref.size()) thin.erase(thin.begin() + at), ref.erase(ref.begin() + at);
        break;
      case 4: {
        const size_t n = rng() % 4, to = std::min(ref.size(), at + n);
        thin.erase(thin.begin() + at, thin.begin() + to);
        ref.erase(ref.begin() + at, ref.begin() + to);
        break;
      }
      case 5:
        thin.resize(at, v), ref.resize(at, v);
        break;
      case 6:
        if (rng() % 8 == 0) thin.clear(), ref.clear();
        break;
      case 7: {
        support::ThinVector<std::string> copy = thin; // deep: editing the copy leaves thin
        copy.push_back("x");
        ASSERT_TRUE(same(thin, ref));
        thin = copy, ref.push_back("x");
        break;
      }
      default:
        if (!ref.empty()) thin.pop_back(), ref.pop_back();
      }
      ASSERT_TRUE(same(thin, ref)) << "run " << run << " step " << step;
      ++checks;
    }
  }
  EXPECT_EQ(checks, 200u * 60u);
}

TEST(ThinVector, EmptyCostsOnePointerAndComparesAsAVector) {
  static_assert(sizeof(support::ThinVector<int64_t>) == sizeof(void*));
  support::ThinVector<int64_t> a{1, 2, 3}, b;
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(b.begin(), b.end());
  b = std::vector<int64_t>{1, 2, 3};
  EXPECT_EQ(a, b);
  b = {};
  EXPECT_TRUE(b.empty());
  EXPECT_THROW(b.at(0), std::out_of_range);
}

TEST(InternedString, OneHandlePerTextAcrossThreads) {
  support::InternedString empty, none("");
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, none);
  EXPECT_EQ(empty.str(), "");
  std::vector<std::vector<const char*>> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i)
        seen[t].push_back(support::InternedString("name" + std::to_string(i % 50)).c_str());
    });
  for (std::thread& t : threads)
    t.join();
  for (size_t t = 1; t < seen.size(); ++t)
    EXPECT_EQ(seen[t], seen[0]); // the same texts, the same stored copies
  support::InternedString a("kernel.pto"), b(std::string("kernel") + ".pto"), c("other.pto");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.c_str(), b.c_str());
  EXPECT_NE(a, c);
  EXPECT_EQ(a + ":3", "kernel.pto:3");
  EXPECT_TRUE(a < c);
}
