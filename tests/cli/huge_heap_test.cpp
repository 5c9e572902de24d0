// The huge-page heap hands out consecutive aligned pieces of its region and nothing past it.
#include "huge_heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace sf::cli {
namespace {

TEST(HugeHeap, PiecesAreAlignedConsecutiveAndInsideTheRegion) {
  uintptr_t next = 0x200000 + 24, end = 0x200000 + (1 << 20);
  auto a = carve(next, end, 1000, 8192);
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, uintptr_t(0x200000 + 8192));
  EXPECT_EQ(next, *a + 1000);
  auto b = carve(next, end, 16, 0); // alignment 0 is 1
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, *a + 1000);
  auto c = carve(next, end, 4096, 4096);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c % 4096, 0u);
  EXPECT_GE(*c, *b + 16);
}

TEST(HugeHeap, WhatDoesNotFitIsRefusedAndTheRegionKept) {
  uintptr_t next = 4096, end = 8192;
  EXPECT_FALSE(carve(next, end, 4097, 1));
  EXPECT_EQ(next, 4096u);
  EXPECT_FALSE(carve(next, end, 1, 3)); // not a power of 2
  EXPECT_FALSE(carve(next, end, 1, 16384)); // aligned past the end
  EXPECT_FALSE(carve(next, end, SIZE_MAX, 1)); // no wrap around
  EXPECT_EQ(next, 4096u);
  auto all = carve(next, end, 4096, 4096);
  ASSERT_TRUE(all);
  EXPECT_EQ(next, end);
  EXPECT_FALSE(carve(next, end, 1, 1));
  EXPECT_TRUE(carve(next, end, 0, 1));
}

} // namespace
} // namespace sf::cli
