// A roofline estimate (a simulator's use of the statistics): the time an op
// takes on a device is the longer of its arithmetic at the device's peak rate and its memory
// traffic at the device's bandwidth; the op is compute- or memory-bound by which one that is.
// Times are expressions too (nanoseconds, rounded down).
#pragma once

#include "shapeflow/cost/stats.h"

#include <array>
#include <string>

namespace sf {

struct Device {
  std::string name;
  /// Peak arithmetic rate, operations per second (a MAC is 2 operations).
  double peakFlops = 0;
  /// Memory bandwidth, bytes per second.
  double bandwidth = 0;
  /// Last-level cache, bytes (informational: the report marks a node whose traffic fits it).
  double cacheBytes = 0;
  /// Rates of their own, when given (0: the peak): multiply-accumulates per second (a matrix
  /// unit's), and per kind of other arithmetic (transcendental functions are often slower).
  double macRate = 0;
  std::array<double, kFlopKinds> kindRate = {0, 0, 0, 0, 0, 0};
};

enum class Bound : uint8_t { Compute, Memory, Either };
/// `compute`, `memory`, `either` (it depends on the sizes).
const char *toString(Bound b);

struct Roofline {
  Dimension computeNs, memoryNs, timeNs; // timeNs = max(computeNs, memoryNs)
  Bound bound = Bound::Either;
  /// Operations (2 * macs + flops) per byte of traffic, at the counts' lower bounds (0 without
  /// traffic).
  double intensity = 0;
};

/// The estimate for counts (a node's, or the model's total).
Result<Roofline> roofline(const Counts &c, const Device &d);

} // namespace sf
