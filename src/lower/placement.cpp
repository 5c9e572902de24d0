// The placement search of the static memory plan (lower/placement.h).
#include "placement.h"

#include "shapeflow/lower/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace sf::lower {

int64_t alignUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

std::vector<std::vector<size_t>> conflictsOf(const std::vector<Item> &items) {
  std::vector<size_t> byFirst(items.size());
  std::iota(byFirst.begin(), byFirst.end(), 0);
  std::sort(byFirst.begin(), byFirst.end(),
            [&](size_t a, size_t b) { return items[a].first < items[b].first; });
  std::vector<std::vector<size_t>> out(items.size());
  for (size_t a = 0; a < byFirst.size(); ++a)
    for (size_t b = a + 1; b < byFirst.size(); ++b) {
      size_t i = byFirst[a], j = byFirst[b];
      if (items[j].first > items[i].last) break;
      out[i].push_back(j);
      out[j].push_back(i);
    }
  return out;
}

namespace {

/// The start of the smallest gap among `busy` (sorted by start) that holds `size`, else the top
/// of them (aligned).
int64_t bestGapOrTop(const std::vector<std::pair<int64_t, int64_t>> &busy, int64_t size, int64_t align) {
  int64_t best = -1, bestGap = -1, cursor = 0;
  for (const auto &[b, e] : busy) {
    int64_t start = alignUp(cursor, align);
    if (b > start && b - start >= size && (bestGap < 0 || b - start < bestGap)) {
      best = start;
      bestGap = b - start;
    }
    cursor = std::max(cursor, e);
  }
  return best >= 0 ? best : alignUp(cursor, align);
}

/// Places slots in the given order, each into the smallest gap that holds it among the already
/// placed slots live at the same time (else on top of them); offsets at the reference.
std::vector<int64_t> placeInOrder(const std::vector<Item> &items, const std::vector<size_t> &order,
                                  int64_t align, const std::vector<std::vector<size_t>> &conflicts) {
  std::vector<int64_t> offset(items.size(), -1);
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t i : order) {
    busy.clear();
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) busy.push_back({offset[j], offset[j] + items[j].size});
    std::sort(busy.begin(), busy.end());
    offset[i] = bestGapOrTop(busy, items[i].size, align);
  }
  return offset;
}

/// The largest free run in [0, target) left by the intervals `busy` (sorted by start).
int64_t largestFree(const std::vector<std::pair<int64_t, int64_t>> &busy, int64_t target) {
  int64_t cursor = 0, largest = 0;
  for (const auto &[b, e] : busy) {
    if (b >= target) break;
    largest = std::max(largest, b - cursor);
    cursor = std::max(cursor, e);
  }
  return std::max(largest, target - cursor);
}

/// Both ends of every free gap under `target` among `busy` (sorted by start) that holds `size`
/// (the lower end aligned up, the upper aligned down).
std::vector<int64_t> gapEnds(const std::vector<std::pair<int64_t, int64_t>> &busy, int64_t size,
                             int64_t target, int64_t align) {
  std::vector<int64_t> ends;
  auto gap = [&](int64_t from, int64_t to) {
    int64_t lo = alignUp(from, align);
    if (to - lo < size) return;
    int64_t hi = (to - size) / align * align; // >= lo: both are multiples of align
    ends.push_back(lo);
    if (hi != lo) ends.push_back(hi);
  };
  int64_t cursor = 0;
  for (const auto &[b, e] : busy) {
    if (b > cursor) gap(cursor, std::min(b, target));
    cursor = std::max(cursor, e);
  }
  if (cursor < target) gap(cursor, target);
  return ends;
}

/// The step of `it`'s lifetime with the most bytes live.
size_t busiestStep(const Item &it, const std::vector<int64_t> &live) {
  size_t step = it.first;
  for (size_t t = it.first; t <= it.last && t < live.size(); ++t)
    if (live[t] > live[step]) step = t;
  return step;
}

/// `candidates` for a slot of `size`, ranked by the largest free run under `target` each leaves
/// among `atStep` (the placed slots live at the slot's busiest step, sorted), the lower first on
/// a tie.
std::vector<int64_t> rankedByRoom(const std::vector<int64_t> &candidates,
                                  const std::vector<std::pair<int64_t, int64_t>> &atStep, int64_t size,
                                  int64_t target) {
  std::vector<std::pair<int64_t, int64_t>> scored; // (-room, position)
  for (int64_t c : candidates) {
    auto with = atStep;
    with.insert(std::upper_bound(with.begin(), with.end(), std::pair{c, c + size}), {c, c + size});
    scored.push_back({-largestFree(with, target), c});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<int64_t> out;
  for (const auto &sc : scored) out.push_back(sc.second);
  return out;
}

/// Places slots in the given order under a target peak (the live-bytes lower bound), each at
/// either end of a free gap among the placed slots it lives with: of those positions, the one
/// that leaves the largest free run, under the target, at the busiest step of its lifetime (where
/// the slots not yet placed need room most), the lower on a tie. A slot with no room under the
/// target goes where placeInOrder would put it. Where long-lived slots (a residual stream) and
/// large temporaries alternate, placing each long-lived one at the bottom or the top as the
/// following temporaries need keeps them from stacking one above the other.
std::vector<int64_t> placeTwoEnded(const std::vector<Item> &items, const std::vector<size_t> &order,
                                   int64_t align, const std::vector<std::vector<size_t>> &conflicts,
                                   const std::vector<int64_t> &live, int64_t target, uint64_t &work) {
  std::vector<int64_t> offset(items.size(), -1);
  std::vector<std::pair<int64_t, int64_t>> busy, atStep;
  for (size_t i : order) {
    const Item &it = items[i];
    busy.clear();
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) busy.push_back({offset[j], offset[j] + items[j].size});
    std::sort(busy.begin(), busy.end());
    // The candidates: both ends of every gap under the target that holds the slot.
    const std::vector<int64_t> candidates = gapEnds(busy, it.size, target, align);
    work += conflicts[i].size() + 1;
    if (candidates.empty()) {
      offset[i] = bestGapOrTop(busy, it.size, align);
      continue;
    }
    // The busiest step of the slot's lifetime, and the placed slots live there.
    const size_t step = busiestStep(it, live);
    atStep.clear();
    for (size_t j : conflicts[i])
      if (offset[j] >= 0 && items[j].first <= step && step <= items[j].last)
        atStep.push_back({offset[j], offset[j] + items[j].size});
    std::sort(atStep.begin(), atStep.end());
    work += candidates.size() * (atStep.size() + 1) + (it.last - it.first + 1);
    offset[i] = rankedByRoom(candidates, atStep, it.size, target).front();
  }
  return offset;
}

int64_t peakOf(const std::vector<Item> &items, const std::vector<int64_t> &offset) {
  int64_t peak = 0;
  for (size_t i = 0; i < items.size(); ++i)
    peak = std::max(peak, offset[i] + items[i].size);
  return peak;
}

/// The slots in order of their offsets.
std::vector<size_t> byOffset(const std::vector<int64_t> &offsets) {
  std::vector<size_t> by(offsets.size());
  std::iota(by.begin(), by.end(), 0);
  std::stable_sort(by.begin(), by.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  return by;
}

/// Each slot's end at the binding of `sizes`, the slots kept in the order of `offsets`.
void endsInOrder(const std::vector<int64_t> &offsets, const std::vector<size_t> &by,
                 const std::vector<std::vector<size_t>> &conflicts, const std::vector<int64_t> &sizes,
                 std::vector<int64_t> &ends) {
  ends.assign(offsets.size(), 0);
  for (size_t i : by) {
    int64_t o = 0;
    for (size_t j : conflicts[i])
      if (offsets[j] < offsets[i]) o = std::max(o, ends[j]);
    ends[i] = o + sizes[i];
  }
}

} // namespace

std::vector<int64_t> peaksInOrder(const std::vector<int64_t> &offsets,
                                  const std::vector<std::vector<size_t>> &conflicts,
                                  const std::vector<std::vector<int64_t>> &sizes) {
  const std::vector<size_t> by = byOffset(offsets);
  std::vector<int64_t> peaks, ends;
  for (const auto &s : sizes) {
    endsInOrder(offsets, by, conflicts, s, ends);
    peaks.push_back(ends.empty() ? 0 : *std::max_element(ends.begin(), ends.end()));
  }
  return peaks;
}

namespace {

/// The bytes live at each of `steps` + 1 op positions, the slots at `sizes` (aligned).
std::vector<int64_t> liveAt(const std::vector<Item> &items, const std::vector<int64_t> &sizes,
                            size_t steps, int64_t align) {
  std::vector<int64_t> live(steps + 1, 0), delta(steps + 2, 0);
  for (size_t i = 0; i < items.size(); ++i) {
    delta[std::min(items[i].first, steps + 1)] += alignUp(sizes[i], align);
    delta[std::min(items[i].last + 1, steps + 1)] -= alignUp(sizes[i], align);
  }
  int64_t acc = 0;
  for (size_t t = 0; t <= steps; ++t) live[t] = acc += delta[t];
  return live;
}

/// What a bounded search for a placement under a capacity concluded.
enum class Found { Yes, No, GaveUp };

/// A backtracking search for offsets under `capacity`, at sizes `size` (multiples of the
/// alignment): the slots taken in order of first use (the larger first at one step), each tried
/// at both ends of every free gap under the capacity among the placed slots it lives with, the
/// position that leaves the largest free run at the busiest step of its lifetime first (as
/// placeTwoEnded chooses). A slot with no room sends the search back to the latest placed slot
/// among those that decided its positions (conflict-directed backjumping: the slots it lives
/// with, and those that decided the positions of the slots after them that failed), so that a
/// choice is undone near where it failed (a residual stream's slot at the bottom instead of the
/// top a few ops earlier) without trying every position of the slots placed in between. Not
/// every placement is reachable this way: a slot rests only on slots that started before it or
/// hangs from them, or from the capacity. Spends at most `budget` units of work (a slot or
/// position looked at).
struct BacktrackPlacer {
  const std::vector<Item> &items;
  const std::vector<int64_t> &size;
  const std::vector<std::vector<size_t>> &conflicts;
  const std::vector<int64_t> &live; // bytes live at each step (the busiest step of a lifetime)
  int64_t capacity, align;
  uint64_t budget, work = 0;
  std::vector<size_t> order;
  std::vector<int64_t> offset;

  BacktrackPlacer(const std::vector<Item> &it, const std::vector<int64_t> &sz,
                  const std::vector<std::vector<size_t>> &c, const std::vector<int64_t> &lv,
                  int64_t cap, int64_t al, uint64_t b)
      : items(it), size(sz), conflicts(c), live(lv), capacity(cap), align(al), budget(b),
        order(it.size()), offset(it.size(), -1) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (items[a].first != items[b].first) return items[a].first < items[b].first;
      return size[a] > size[b];
    });
  }

  /// The positions slot i may take, the most promising first.
  std::vector<int64_t> positions(size_t i) {
    std::vector<std::pair<int64_t, int64_t>> busy, atStep;
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) busy.push_back({offset[j], offset[j] + size[j]});
    std::sort(busy.begin(), busy.end());
    std::vector<int64_t> out = gapEnds(busy, size[i], capacity, align);
    work += busy.size() + 1;
    if (out.size() < 2) return out;
    const size_t step = busiestStep(items[i], live);
    for (size_t j : conflicts[i])
      if (offset[j] >= 0 && items[j].first <= step && step <= items[j].last)
        atStep.push_back({offset[j], offset[j] + size[j]});
    std::sort(atStep.begin(), atStep.end());
    work += out.size() * (atStep.size() + 1);
    return rankedByRoom(out, atStep, size[i], capacity);
  }

  /// Conflict-directed backjumping: when a slot has no position left, the search goes back to
  /// the latest placed slot among those that decided its positions (the slots it lives with,
  /// and those the slots after it that failed were decided by), not merely to the slot before.
  static constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> level;              // each placed slot's depth in `order`
  std::vector<std::vector<size_t>> cause; // the depths each depth's failures depend on

  Found search() {
    level.assign(items.size(), kNone);
    cause.assign(items.size() + 1, {});
    return at(0).first;
  }

  /// The search from depth k: the result and, on failure, the depth to go back to.
  std::pair<Found, size_t> at(size_t k) {
    if (k == order.size()) return {Found::Yes, kNone};
    if (++work > budget) return {Found::GaveUp, kNone};
    const size_t i = order[k];
    cause[k].clear();
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) cause[k].push_back(level[j]);
    level[i] = k;
    for (int64_t p : positions(i)) {
      offset[i] = p;
      auto [r, back] = at(k + 1);
      if (r != Found::No) return {r, back};
      if (back != k) {
        offset[i] = -1, level[i] = kNone;
        return {Found::No, back};
      }
      if (work > budget) return {Found::GaveUp, kNone};
    }
    offset[i] = -1, level[i] = kNone;
    if (cause[k].empty()) return {Found::No, kNone};
    const size_t back = *std::max_element(cause[k].begin(), cause[k].end());
    for (size_t d : cause[k])
      if (d != back) cause[back].push_back(d);
    std::sort(cause[back].begin(), cause[back].end());
    cause[back].erase(std::unique(cause[back].begin(), cause[back].end()), cause[back].end());
    return {Found::No, back};
  }
};

/// Offsets at the sizes `sizes` that keep the order of slots `by` (each slot on the highest end
/// of the slots it lives with that come before it in `by`).
std::vector<int64_t> offsetsInOrder(const std::vector<size_t> &by,
                                    const std::vector<std::vector<size_t>> &conflicts,
                                    const std::vector<int64_t> &sizes, int64_t align) {
  std::vector<int64_t> offset(sizes.size(), -1);
  for (size_t i : by) {
    int64_t o = 0;
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) o = std::max(o, offset[j] + alignUp(sizes[j], align));
    offset[i] = o;
  }
  return offset;
}

} // namespace

/// The work (placements times the slots and pairs each looks at) the searches after the first
/// orders may spend, whatever the machine's load: about 150 ms and 100 ms more on the 2-core
/// development machine (10 ns a unit) for the largest dev models (retinanet's 742 slots).
inline constexpr uint64_t kGreedyWork = 15'000'000;
inline constexpr uint64_t kNoiseWork = 9'000'000;
/// The work the backtracking search may spend at each binding it runs at, and the most slots it
/// runs on (it recurses once per slot).
inline constexpr uint64_t kBacktrackWork = 300'000;
inline constexpr size_t kBacktrackSlots = 4096;

namespace {

/// The orders the search starts from: TFLite's greedy by size and by breadth, and orders by
/// lifetime and area. Each is fast; none is best on every graph.
std::vector<std::vector<size_t>> startingOrders(const std::vector<Item> &items, size_t steps,
                                               const std::vector<std::vector<int64_t>> &alsoAt) {
  const size_t n = items.size();
  std::vector<size_t> base(n);
  std::iota(base.begin(), base.end(), 0);
  auto life = [&](size_t i) { return items[i].last - items[i].first + 1; };
  std::vector<std::vector<size_t>> orders;
  auto sorted = [&](auto less) {
    std::vector<size_t> o = base;
    std::stable_sort(o.begin(), o.end(), less);
    orders.push_back(std::move(o));
  };
  // By size, ties: the longer-lived first, then the shorter-lived first.
  sorted([&](size_t a, size_t b) {
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    return life(a) > life(b);
  });
  sorted([&](size_t a, size_t b) {
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    return items[a].first < items[b].first;
  });
  // By size at each other binding the placement is judged at.
  for (const auto &sizes : alsoAt)
    sorted([&](size_t a, size_t b) {
      if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
      return life(a) > life(b);
    });
  // By lifetime, then size; by area (size times lifetime).
  sorted([&](size_t a, size_t b) {
    if (life(a) != life(b)) return life(a) > life(b);
    return items[a].size > items[b].size;
  });
  sorted([&](size_t a, size_t b) {
    double x = double(items[a].size) * double(life(a)), y = double(items[b].size) * double(life(b));
    if (x != y) return x > y;
    return items[a].first < items[b].first;
  });
  // By breadth: the steps with the most live bytes first, each one's slots by size.
  std::vector<int64_t> live(steps + 1, 0);
  for (const Item &it : items)
    for (size_t t = it.first; t <= it.last && t < live.size(); ++t) live[t] += it.size;
  std::vector<size_t> stepOrder(live.size());
  std::iota(stepOrder.begin(), stepOrder.end(), 0);
  std::stable_sort(stepOrder.begin(), stepOrder.end(), [&](size_t a, size_t b) { return live[a] > live[b]; });
  std::vector<bool> taken(n, false);
  std::vector<size_t> o;
  for (size_t t : stepOrder) {
    std::vector<size_t> here;
    for (size_t i = 0; i < n; ++i)
      if (!taken[i] && items[i].first <= t && t <= items[i].last) here.push_back(i);
    std::stable_sort(here.begin(), here.end(), [&](size_t a, size_t b) { return items[a].size > items[b].size; });
    for (size_t i : here) taken[i] = true, o.push_back(i);
  }
  for (size_t i = 0; i < n; ++i)
    if (!taken[i]) o.push_back(i);
  orders.push_back(std::move(o));
  return orders;
}

/// How good a placement is: its worst peak over lower bound across the bindings it is judged at
/// (the reference alone for a concrete plan), then its peak at the reference.
struct Judgement {
  double worst = 0;
  int64_t peak = 0;
  bool operator<(const Judgement &o) const {
    return worst < o.worst || (worst == o.worst && peak < o.peak);
  }
};

double ratio(int64_t peak, int64_t bound) {
  if (bound > 0) return double(peak) / double(bound);
  return peak > 0 ? 1e18 : 1.0;
}

/// The search: the best placement so far, and the work spent. The search is bounded by work,
/// not time, so that the same model and options give the same plan on any machine however
/// loaded: a placement costs a look at every slot and at each pair of slots alive together (and
/// as much again for each other binding it is judged at).
struct Search {
  const std::vector<Item> &items;
  int64_t align;
  std::vector<std::vector<size_t>> conflicts;
  const std::vector<std::vector<int64_t>> &alsoAt;
  std::vector<int64_t> alsoBound; // the live-bytes lower bound at each of alsoAt
  std::vector<int64_t> refSizes; // the slots' sizes at the reference
  std::vector<int64_t> best;
  std::vector<size_t> bestOrder;
  Judgement bestJudged{-1, -1};
  int64_t bound = 0;
  uint64_t perPlacement = 0, work = 0;

  Search(const std::vector<Item> &i, int64_t a, const std::vector<std::vector<int64_t>> &also,
         size_t steps)
      : items(i), align(a), conflicts(conflictsOf(i)), alsoAt(also) {
    for (const Item &it : items) refSizes.push_back(it.size);
    perPlacement = items.size();
    for (const auto &c : conflicts) perPlacement += c.size();
    perPlacement *= 1 + alsoAt.size();
    for (const auto &sizes : alsoAt) {
      std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> lives;
      for (size_t k = 0; k < items.size(); ++k)
        lives.push_back({alignUp(sizes[k], align), {items[k].first, items[k].last}});
      alsoBound.push_back(liveLowerBound(lives, steps + 1));
    }
  }
  bool atBound() const { return bestJudged.worst >= 0 && bestJudged.worst <= 1.0; }
  bool spend(uint64_t budget) {
    if (work > budget) return false;
    work += perPlacement;
    return true;
  }
  /// The judgement of a placement; `worstEnds`, when given, receives each slot's end at the
  /// binding where the placement is worst.
  Judgement judge(const std::vector<int64_t> &off, std::vector<int64_t> *worstEnds = nullptr) const {
    Judgement j{ratio(peakOf(items, off), bound), peakOf(items, off)};
    if (worstEnds) {
      worstEnds->resize(items.size());
      for (size_t i = 0; i < items.size(); ++i) (*worstEnds)[i] = off[i] + items[i].size;
    }
    if (alsoAt.empty()) return j;
    const std::vector<size_t> by = byOffset(off);
    std::vector<int64_t> ends;
    for (size_t b = 0; b < alsoAt.size(); ++b) {
      endsInOrder(off, by, conflicts, alsoAt[b], ends);
      double r = ratio(ends.empty() ? 0 : *std::max_element(ends.begin(), ends.end()), alsoBound[b]);
      if (r > j.worst) {
        j.worst = r;
        if (worstEnds) *worstEnds = ends;
      }
    }
    return j;
  }
  /// Keeps a placement when it is the best so far.
  void keep(std::vector<int64_t> off, const std::vector<size_t> &order, Judgement j) {
    if (bestJudged.worst >= 0 && !(j < bestJudged)) return;
    bestJudged = j, best = std::move(off), bestOrder = order;
  }
  /// Places in `order`; keeps the placement when it is the best so far. Its offsets and
  /// judgement.
  std::pair<std::vector<int64_t>, Judgement> tryOrder(const std::vector<size_t> &order) {
    auto off = placeInOrder(items, order, align, conflicts);
    Judgement j = judge(off);
    keep(off, order, j);
    return {std::move(off), j};
  }
  /// The two-ended placement (placeTwoEnded) under the lower bound, in order of first use, of
  /// lifetime and of size. Kept when it is the best so far; the iterated greedy goes on from
  /// the best order whichever placement made it.
  void twoEnded(size_t steps) {
    if (atBound()) return;
    const std::vector<int64_t> live = liveAt(items, refSizes, steps, align);
    std::vector<size_t> base(items.size());
    std::iota(base.begin(), base.end(), 0);
    auto life = [&](size_t i) { return items[i].last - items[i].first; };
    std::vector<std::vector<size_t>> orders(3, base);
    std::stable_sort(orders[0].begin(), orders[0].end(), [&](size_t a, size_t b) {
      if (items[a].first != items[b].first) return items[a].first < items[b].first;
      return items[a].size > items[b].size;
    });
    std::stable_sort(orders[1].begin(), orders[1].end(), [&](size_t a, size_t b) {
      if (life(a) != life(b)) return life(a) > life(b);
      return items[a].size > items[b].size;
    });
    std::stable_sort(orders[2].begin(), orders[2].end(),
                     [&](size_t a, size_t b) { return items[a].size > items[b].size; });
    for (const auto &order : orders) {
      if (atBound() || work > kGreedyWork) return;
      auto off = placeTwoEnded(items, order, align, conflicts, live, bound, work);
      work += perPlacement - perPlacement / (1 + alsoAt.size()); // judging at the other bindings
      Judgement j = judge(off);
      keep(std::move(off), order, j);
    }
  }
  /// Iterated greedy: a slot that ends at the peak (at the binding where the placement is
  /// worst) goes earlier in the order, and the order is kept when the placement is not judged
  /// worse (so that the search drifts across equal plans).
  void iterate() {
    std::vector<size_t> order = bestOrder;
    std::vector<int64_t> cur = best, ends;
    Judgement curJudged = bestJudged;
    uint64_t pick = 0x9e3779b9;
    for (int round = 0; round < 4000 && !atBound(); ++round) {
      if (!spend(kGreedyWork)) break;
      judge(cur, &ends);
      int64_t peak = *std::max_element(ends.begin(), ends.end());
      std::vector<size_t> top;
      for (size_t i = 0; i < items.size(); ++i)
        if (ends[i] == peak) top.push_back(i);
      pick = pick * 6364136223846793005ull + 1442695040888963407ull;
      size_t b = top[(pick >> 33) % top.size()];
      size_t pos = size_t(std::find(order.begin(), order.end(), b) - order.begin());
      if (pos == 0) continue;
      std::vector<size_t> next = order;
      next.erase(next.begin() + long(pos));
      next.insert(next.begin() + long((pick >> 13) % pos), b); // somewhere earlier
      auto [off, j] = tryOrder(next);
      if (!(curJudged < j)) order = std::move(next), cur = std::move(off), curJudged = j;
    }
  }
  /// The backtracking search (BacktrackPlacer) at one binding (`at` 0: the reference, else
  /// alsoAt[at - 1]): under the lower bound there first, then halving the capacities between it
  /// and the best peak so far there. Each placement found is kept in its order of slots (offsets
  /// at the reference that keep it) when it is judged best.
  void backtrackAt(size_t at, size_t steps) {
    const std::vector<int64_t> &raw = at == 0 ? refSizes : alsoAt[at - 1];
    std::vector<int64_t> sizes(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) sizes[i] = alignUp(raw[i], align);
    int64_t lo = at == 0 ? bound : alsoBound[at - 1];
    int64_t hi = peaksInOrder(best, conflicts, {raw})[0] - 1;
    const std::vector<int64_t> live = liveAt(items, sizes, steps, align);
    uint64_t spent = 0;
    for (bool first = true; lo <= hi && spent < kBacktrackWork && !atBound(); first = false) {
      const int64_t cap = first ? lo : lo + (hi - lo) / 2;
      BacktrackPlacer p(items, sizes, conflicts, live, cap, align,
                        std::min<uint64_t>(kBacktrackWork - spent, kBacktrackWork / 4));
      Found r = p.search();
      spent += p.work, work += p.work;
      if (r != Found::Yes) {
        lo = cap + 1;
        continue;
      }
      auto off = offsetsInOrder(byOffset(p.offset), conflicts, refSizes, align);
      keep(off, bestOrder, judge(off));
      hi = peaksInOrder(off, conflicts, {raw})[0] - 1;
    }
  }
  /// The backtracking search at the reference, then at the binding where the best placement is
  /// judged worst when that is another.
  void backtrack(size_t steps) {
    if (atBound() || items.size() > kBacktrackSlots) return;
    backtrackAt(0, steps);
    if (atBound() || alsoAt.empty()) return;
    std::vector<int64_t> peaks = peaksInOrder(best, conflicts, alsoAt);
    size_t worst = 0;
    double worstRatio = ratio(peakOf(items, best), bound);
    for (size_t b = 0; b < peaks.size(); ++b)
      if (ratio(peaks[b], alsoBound[b]) > worstRatio)
        worst = b + 1, worstRatio = ratio(peaks[b], alsoBound[b]);
    if (worst > 0) backtrackAt(worst, steps);
  }
  /// More orders by size with reproducible noise, which breaks ties and near-ties differently
  /// each time (by the sizes at each binding the placement is judged at in turn).
  void perturb() {
    uint64_t state = 0x1234567;
    std::vector<size_t> base(items.size());
    std::iota(base.begin(), base.end(), 0);
    const int bindings = 1 + int(alsoAt.size());
    for (int round = 0; round < 256 && !atBound(); ++round) {
      if (!spend(kGreedyWork + kNoiseWork)) break;
      const int at = round % bindings, strength = round / bindings % 4 + 1;
      std::vector<double> key(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        double noise = double(state >> 11) / double(1ull << 53); // [0, 1)
        double size = double(at == 0 ? items[i].size : alsoAt[size_t(at - 1)][i]);
        key[i] = size * (1.0 + 0.25 * noise * double(strength) / 4.0);
      }
      std::vector<size_t> o = base;
      std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
      tryOrder(o);
    }
  }
};

} // namespace

std::vector<int64_t> placeGreedy(const std::vector<Item> &items, int64_t align, size_t steps,
                                 const std::vector<std::vector<int64_t>> &alsoAt) {
  Search search(items, align, alsoAt, steps);
  std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> lives;
  for (const Item &it : items) lives.push_back({alignUp(it.size, align), {it.first, it.last}});
  search.bound = liveLowerBound(lives, steps + 1);
  for (const auto &o : startingOrders(items, steps, alsoAt)) search.tryOrder(o);
  // Above the live-bytes lower bound, the searches.
  search.twoEnded(steps);
  search.iterate();
  search.perturb();
  search.backtrack(steps);
  return search.best;
}

} // namespace sf::lower
