// support/stable_vec.h: elements keep their addresses while the vector grows (across the
// geometric first chunks and the fixed ones after), indexing and iteration agree with a
// std::vector holding the same elements, and copies, moves and clear construct and destroy
// every element exactly once.
#include "shapeflow/support/stable_vec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace sf {
namespace {

TEST(StableVec, AddressesSurviveGrowthAcrossEveryChunkBoundary) {
  StableVec<std::string> v;
  std::vector<const std::string *> where;
  for (int i = 0; i < 1000; ++i) {
    v.push_back("element " + std::to_string(i) + " long enough to be on the heap");
    where.push_back(&v.back());
  }
  ASSERT_EQ(v.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(&v[size_t(i)], where[size_t(i)]) << i;
    EXPECT_EQ(v[size_t(i)], "element " + std::to_string(i) + " long enough to be on the heap");
  }
}

TEST(StableVec, IndexingAndIterationMatchAVectorAtEverySize) {
  // Sizes on both sides of every chunk boundary (8, 16, 32, 64, 128, then every 128).
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 127u, 128u, 129u, 255u, 256u, 257u,
                   1000u}) {
    StableVec<size_t> v;
    std::vector<size_t> ref;
    for (size_t i = 0; i < n; ++i) {
      v.emplace_back(i * 7 + 3);
      ref.push_back(i * 7 + 3);
    }
    ASSERT_EQ(v.size(), n);
    EXPECT_EQ(v.empty(), n == 0);
    EXPECT_TRUE(std::equal(v.begin(), v.end(), ref.begin(), ref.end())) << n;
    EXPECT_EQ(size_t(v.end() - v.begin()), n);
    const StableVec<size_t> &c = v;
    EXPECT_TRUE(std::equal(c.begin(), c.end(), ref.begin(), ref.end())) << n;
    if (n) {
      EXPECT_EQ(c.back(), ref.back());
    }
    // Random access through the iterator: std::lower_bound on the sorted elements.
    if (n > 2) {
      EXPECT_EQ(*std::lower_bound(v.begin(), v.end(), ref[n / 2]), ref[n / 2]);
    }
    size_t sum = 0;
    for (size_t x : v) sum += x;
    EXPECT_EQ(sum, std::accumulate(ref.begin(), ref.end(), size_t(0)));
  }
}

TEST(StableVec, CopiesAreDeepAndMovesTakeTheChunks) {
  StableVec<std::string> a;
  for (int i = 0; i < 300; ++i) a.push_back(std::to_string(i));
  StableVec<std::string> b = a;
  b[5] = "changed";
  EXPECT_EQ(a[5], "5");
  EXPECT_EQ(b.size(), 300u);
  const std::string *first = &a[0];
  StableVec<std::string> c = std::move(a);
  EXPECT_EQ(&c[0], first); // the chunks moved, not the elements
  EXPECT_TRUE(a.empty());
  a.push_back("usable after the move");
  EXPECT_EQ(a.size(), 1u);
  b = c;
  EXPECT_EQ(b[5], "5");
  c.clear();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(b.size(), 300u);
}

TEST(StableVec, EveryElementIsDestroyedOnce) {
  auto token = std::make_shared<int>(0);
  {
    StableVec<std::shared_ptr<int>> v;
    for (int i = 0; i < 517; ++i) v.push_back(token);
    EXPECT_EQ(token.use_count(), 518);
    StableVec<std::shared_ptr<int>> copy = v;
    EXPECT_EQ(token.use_count(), 1035);
    copy.clear();
    EXPECT_EQ(token.use_count(), 518);
    StableVec<std::shared_ptr<int>> moved;
    moved = std::move(v);
    EXPECT_EQ(token.use_count(), 518);
  }
  EXPECT_EQ(token.use_count(), 1);
}

// A copy that throws part way leaves no element alive and no chunk allocated (ASan would report
// the chunks; the count reports the elements).
struct Counted {
  static inline int live = 0, copiesLeft = 0;
  Counted() { ++live; }
  Counted(const Counted &) {
    if (copiesLeft-- == 0) throw std::runtime_error("copy refused");
    ++live;
  }
  ~Counted() { --live; }
};

TEST(StableVec, ACopyThatThrowsPartWayLeavesNothingBehind) {
  {
    StableVec<Counted> v;
    for (int i = 0; i < 300; ++i) v.emplace_back();
    ASSERT_EQ(Counted::live, 300);
    Counted::copiesLeft = 200; // the 201st copy throws, in the seventh chunk
    EXPECT_THROW({ StableVec<Counted> copy(v); }, std::runtime_error);
    EXPECT_EQ(Counted::live, 300);
  }
  EXPECT_EQ(Counted::live, 0);
}

} // namespace
} // namespace sf
