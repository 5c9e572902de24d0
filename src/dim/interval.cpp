// Interval arithmetic with saturation at the open ends: always sound, exact for monotone steps.
#include "shapeflow/dim/interval.h"

namespace sf {

Interval add(Interval a, Interval b) { return {satAdd(a.lo, b.lo), satAdd(a.hi, b.hi)}; }

Interval neg(Interval a) {
  auto n = [](int64_t v) { return v == kInf ? -kInf : v == -kInf ? kInf : -v; };
  return {n(a.hi), n(a.lo)};
}

Interval mul(Interval a, Interval b) {
  int64_t c[4] = {satMul(a.lo, b.lo), satMul(a.lo, b.hi), satMul(a.hi, b.lo), satMul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval scale(Interval a, int64_t c) { return mul(a, Interval::point(c)); }

static int64_t floorDivBound(int64_t v, int64_t c) {
  if (v == kInf || v == -kInf) return v;
  return floorDivUnchecked(v, c);
}

Interval floorDiv(Interval a, int64_t c) { return {floorDivBound(a.lo, c), floorDivBound(a.hi, c)}; }

Interval mod(Interval a, int64_t c) {
  if (a.lo != -kInf && a.hi != kInf && floorDivBound(a.lo, c) == floorDivBound(a.hi, c))
    return {*checkedMod(a.lo, c), *checkedMod(a.hi, c)};
  return {0, c - 1};
}

Interval min(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Interval max(Interval a, Interval b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }

std::string toString(Interval a) {
  std::string lo = a.lo == -kInf ? "-inf" : std::to_string(a.lo);
  std::string hi = a.hi == kInf ? "" : std::to_string(a.hi);
  return lo + ".." + hi;
}

} // namespace sf
