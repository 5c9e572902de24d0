// What `shapeflow stats` shows (and the Python module returns): the statistics of a model as
// JSON (README "Statistics"), CSV (one row per node), a terminal table with human units, and an
// SVG picture of where the work goes.
#pragma once

#include "shapeflow/cost/device.h"
#include "shapeflow/cost/stats.h"
#include "shapeflow/ir/graph.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sf {

struct StatsReport {
  std::string model;
  const Graph *graph = nullptr;
  const ModelStats *stats = nullptr;
  std::optional<Device> device;
  /// Where to evaluate symbolic counts for rankings, the intensity and the picture: values of
  /// symbols by name; a symbol not given takes the lower end of its range.
  std::map<std::string, int64_t> at;
  /// How `at` was chosen (`ShownAt::text`), printed with the counts; empty: `at` as given, the
  /// other symbols at the lower ends of their ranges.
  std::string atNote;
  /// Bindings to tabulate the totals at (`--at` given more than once): one row each, MACs,
  /// FLOPs, bytes moved and with a device the time (a decode step at several context lengths).
  std::vector<std::map<std::string, int64_t>> rows;
  /// The symbol the SVG's growth curve sweeps (empty: the first one the total depends on that
  /// `at` does not fix).
  std::string sweep;
};

/// The JSON (README "Statistics") as text, written as it goes (report/json_writer.h): what the
/// CLI prints (`indent` as JsonWriter's).
std::string statsJsonText(const StatsReport &r, int indent = 0);
/// The same as a document (parsed from that text).
nlohmann::json statsJson(const StatsReport &r);
void printStatsCsv(const StatsReport &r, std::ostream &os);
void printStatsText(const StatsReport &r, std::ostream &os);
/// An SVG document: work per op type, work per node along the graph (memory-bound nodes marked
/// when a device is given), and for a symbolic model the total's growth with one symbol
/// (StatsReport::sweep).
std::string statsSvg(const StatsReport &r);

/// The statistics as plain lines (golden files under tests/golden/stats, tests): one per node in
/// the order of ModelStats::nodes, then the per-op-type totals and the model's total.
///   `y (Conv): macs 432*N, flops 16*N (add 16*N), read 64*N + 1792, write 64*N, params 448 (1792 B)`
/// Counts print as numbers or expressions (an unknown count as `?`, a range as `?{lo..hi}`);
/// a body node adds `in PATH x RUNS`, a control-flow node its note after ` -- `.
std::vector<std::string> statsLines(const ModelStats &s);

/// A device from its JSON: {"name": str, "peak_flops": number (operations per second),
/// "memory_bandwidth": number (bytes per second), and optionally "cache_bytes": number,
/// "mac_rate": number (multiply-accumulates per second; default half the peak),
/// "peak_by_kind": {"special": number, ...} (operations per second of a kind; default the peak)}.
/// examples/devices/ has a few.
Result<Device> parseDevice(const nlohmann::json &j);

/// `4.11 GMAC`, `512 B`, `1.2 TB`: a count with a decimal SI prefix and a unit.
std::string humanCount(double v, const char *unit);
/// `850 ns`, `12.4 us`, `3.2 ms`, `1.05 s`.
std::string humanTime(double ns);

} // namespace sf
