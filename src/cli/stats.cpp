// `shapeflow stats`: per-node and per-model cost statistics.
#include "common.h"

#include "shapeflow/cost/stats.h"
#include "shapeflow/report/stats_report.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

namespace sf::cli {
namespace {

struct StatsArgs {
  ModelArgs model;
  bool json = false, csv = false;
  std::string svgPath, devicePath;
  std::vector<std::string> at;
  std::string sweep;
};

Result<Device> readDevice(const std::string &path) {
  std::ifstream in(path);
  if (!in) return errorf("{}: cannot open", path);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return errorf("{}: not JSON", path);
  auto d = parseDevice(j);
  if (!d.ok()) return errorf("{}: {}", path, d.error().message);
  return *d;
}

int runStats(const StatsArgs &a) {
  std::vector<Binding> bindings;
  for (const std::string &spec : a.at) {
    auto b = parseBinding(spec);
    if (!b.ok()) return fail(b.error().message);
    bindings.push_back(*b);
  }
  Contract contract;
  auto m = loadForBindings(a.model, bindings, "--at", &contract);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  std::optional<Device> device;
  if (!a.devicePath.empty()) {
    auto d = readDevice(a.devicePath);
    if (!d.ok()) return fail(d.error().message);
    device = *d;
  }
  StatsOptions options;
  options.device = device ? &*device : nullptr;
  auto stats = computeStats(r.graph, options);
  if (!stats.ok()) return fail(stats.error().message);
  StatsReport report{a.model.path, &r.graph, &*stats, device, {}, {}};
  ExprScope scope = r.graph.enter();
  auto at = mergedBindings(a.at);
  if (!at.ok()) return fail(at.error().message);
  report.at = *at;
  // Several --at: a row of totals each (the rankings stay at them merged).
  if (a.at.size() > 1) {
    for (const std::string &spec : a.at) {
      auto b = parseBinding(spec);
      if (!b.ok()) return fail(b.error().message);
      if (auto known = checkNamesSymbols(r.graph, *b); !known.ok()) return fail("--at: " + known.error().message);
      report.rows.push_back(*b);
    }
  }
  if (auto known = checkNamesSymbols(r.graph, report.at); !known.ok()) return fail("--at: " + known.error().message);
  // The one rule of stats, plan and memory for the sizes numbers are shown at.
  ShownAt shown = shownAt(contract, report.at);
  report.at = shown.at;
  report.atNote = shown.text();
  if (!a.sweep.empty() && !r.graph.symbols.find(a.sweep))
    return fail("--sweep: the model has no symbol '" + a.sweep + "'");
  report.sweep = a.sweep;
  if (a.json) std::cout << statsJsonText(report, 1) << "\n";
  else if (a.csv) printStatsCsv(report, std::cout);
  else printStatsText(report, std::cout);
  if (!a.svgPath.empty()) {
    std::ofstream out(a.svgPath);
    if (!(out << statsSvg(report))) return fail("cannot write " + a.svgPath);
  }
  printErrors(r.diags);
  return r.diags.hasErrors() ? 1 : 0;
}

} // namespace

Command addStats(CLI::App &app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App *cmd = app.add_subcommand(
      "stats", "per-node and per-model MACs, FLOPs, bytes and parameters, as expressions of the input sizes");
  args->model.add(cmd);
  auto *json = cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--csv", args->csv, "print one CSV row per node")->excludes(json);
  cmd->add_option("--svg", args->svgPath, "draw where the work goes into an SVG file");
  cmd->add_option("--device", args->devicePath,
                  "a device JSON (peak_flops, memory_bandwidth): roofline times per node");
  cmd->add_option("--at", args->at,
                  "where to evaluate symbolic counts for rankings and pictures: SYM=V[,SYM=V...] "
                  "(default: the upper end of each symbol's range where it is bounded, else its smallest size); several --at "
                  "are merged for those, and each is a row of "
                  "the totals' table");
  cmd->add_option("--sweep", args->sweep,
                  "the symbol the SVG's growth curve sweeps between its bounds (default: the first one the "
                  "total depends on that --at does not fix)");
  return {cmd, [args] { return runStats(*args); }};
}

} // namespace sf::cli
