// The placement search of the static memory plan (lower/memory_plan.h): slots with sizes (at
// the reference binding) and lifetimes (op positions) placed at offsets in one arena by several
// greedy orders, an iterated greedy search and a backtracking search under the lower bound,
// bounded by work so that the same slots give the same offsets on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sf::lower {

int64_t alignUp(int64_t v, int64_t align);

/// A slot to place: size at the reference, lifetime in op positions.
struct Item {
  int64_t size = 0;
  size_t first = 0, last = 0;
};

/// For each slot, the slots live at a common step with it.
std::vector<std::vector<size_t>> conflictsOf(const std::vector<Item> &items);

/// The best offsets found for `items` (aligned to `align`) over `steps` op positions.
///
/// `alsoAt` holds the same slots' sizes at other bindings (one vector per binding, aligned): a
/// symbolic plan keeps the placement's order of slots at every binding (each slot above those it
/// lies on where the placement is decided), so a placement is then judged by its worst peak over
/// lower bound across the reference and those bindings, each computed with the order kept.
std::vector<int64_t> placeGreedy(const std::vector<Item> &items, int64_t align, size_t steps,
                                 const std::vector<std::vector<int64_t>> &alsoAt = {});

/// The peak at every binding of `sizes` (one vector per binding) of slots kept in the order of
/// `offsets` (decided at another binding): each slot above the largest end of the slots it
/// conflicts with that lie below it there.
std::vector<int64_t> peaksInOrder(const std::vector<int64_t> &offsets,
                                  const std::vector<std::vector<size_t>> &conflicts,
                                  const std::vector<std::vector<int64_t>> &sizes);

} // namespace sf::lower
