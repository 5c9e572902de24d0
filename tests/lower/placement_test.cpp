// The placement search (src/lower/placement.h) on slots taken from real models: the peak it
// finds against the live-bytes lower bound, and every pair of slots alive together apart.
#include "../../src/lower/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

using namespace sf::lower;

namespace {

std::vector<Item> readSlots(const std::string &path) {
  std::ifstream in(path);
  std::vector<Item> items;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Item it;
    s >> it.size >> it.first >> it.last;
    items.push_back(it);
  }
  return items;
}

int64_t liveBound(const std::vector<Item> &items, int64_t align) {
  size_t steps = 0;
  for (const Item &it : items) steps = std::max(steps, it.last + 1);
  std::vector<int64_t> live(steps + 1, 0);
  for (const Item &it : items)
    for (size_t t = it.first; t <= it.last; ++t) live[t] += alignUp(it.size, align);
  return *std::max_element(live.begin(), live.end());
}

} // namespace

TEST(Placement, AResidualStreamAlternatesEndsAndReachesTheLowerBound) {
  auto items = readSlots(std::string(SF_SOURCE_DIR_DEFAULT) + "/tests/lower/data/vit_b_16_slots.txt");
  ASSERT_EQ(539u, items.size());
  auto offsets = placeGreedy(items, 64, 1031);
  ASSERT_EQ(items.size(), offsets.size());
  int64_t peak = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(0, offsets[i] % 64);
    peak = std::max(peak, offsets[i] + items[i].size);
  }
  EXPECT_EQ(liveBound(items, 64), peak) << "1.111x before the two-ended placement";
  const auto conflicts = conflictsOf(items);
  for (size_t i = 0; i < items.size(); ++i)
    for (size_t j : conflicts[i])
      EXPECT_TRUE(offsets[i] + items[i].size <= offsets[j] || offsets[j] + items[j].size <= offsets[i])
          << "slots " << i << " and " << j << " overlap";
}
