// Closed integer intervals [lo, hi] with an open upper end (hi == kInf): the bounds every
// dimension and every symbolic expression carries.
#pragma once

#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace sf {

struct Interval {
  int64_t lo = 0;
  int64_t hi = kInf;

  static Interval point(int64_t v) { return {v, v}; }
  bool isPoint() const { return lo == hi; }
  /// An open lower end (-kInf) holds every value down to the int64 minimum, one below it.
  bool contains(int64_t v) const { return (lo <= v || lo == -kInf) && v <= hi; }
  bool contains(Interval o) const { return (lo <= o.lo || lo == -kInf) && o.hi <= hi; }
  bool empty() const { return lo > hi; }
  bool operator==(const Interval &) const = default;
  /// Intersection; may be empty (lo > hi).
  Interval intersect(Interval o) const { return {std::max(lo, o.lo), std::min(hi, o.hi)}; }
  Interval hull(Interval o) const { return {std::min(lo, o.lo), std::max(hi, o.hi)}; }
};

Interval add(Interval a, Interval b);
Interval neg(Interval a);
Interval mul(Interval a, Interval b);
Interval scale(Interval a, int64_t c);
/// floor(a / c) for a positive constant c.
Interval floorDiv(Interval a, int64_t c);
/// a mod c (Python sign convention) for a positive constant c.
Interval mod(Interval a, int64_t c);
Interval min(Interval a, Interval b);
Interval max(Interval a, Interval b);

std::string toString(Interval a);

} // namespace sf

SF_FORMAT_AS_STRING(sf::Interval, sf::toString(v));
