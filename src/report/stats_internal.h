// Internals of the statistics report shared by its files (stats_report.cpp: JSON, CSV and the
// terminal table; stats_svg.cpp: the SVG picture). Not part of the public API.
#pragma once

#include "shapeflow/report/stats_report.h"

#include <optional>

namespace sf {
namespace stats_detail {

/// The value of `d` at the report's binding (symbols not given at the lower end of their
/// range); the lower bound when it has no expression.
std::optional<int64_t> valueAt(const StatsReport &r, const Dimension &d);

inline double asDouble(const std::optional<int64_t> &v) { return v ? double(*v) : 0.0; }

/// 2 * macs + flops: the operations the roofline counts.
Dimension workOf(const Counts &c);

/// read + written bytes.
Dimension trafficOf(const Counts &c);

} // namespace stats_detail
} // namespace sf
