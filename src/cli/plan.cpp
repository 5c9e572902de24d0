// `shapeflow plan` (the static memory plan) and `shapeflow check-plan` (its verifier, from the
// plan's JSON alone).
#include "common.h"

#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/range_plans.h"

#include <algorithm>
#include <fstream>
#include <iostream>

namespace sf::cli {
namespace {

struct PlanArgs {
  ModelArgs model;
  int64_t align = 64;
  std::string order = "model";
  bool json = false, callerOwnedIO = false, verify = false;
  std::string svgPath;
  std::vector<std::string> at, reference;
  double maxRatio = 0; // > 0: plans per range (--max-ratio)
  size_t maxRanges = 8;
};

/// Prints the verifier's verdict on a plan's JSON; 0 when it holds, 1 when not, 2 when the JSON
/// is not a plan.
int reportCheck(const nlohmann::json &j, std::ostream &os) {
  auto check = lower::checkPlanJson(j);
  if (!check.ok()) return fail(check.error().message);
  os << "plan check: " << check->buffers << " buffers, " << check->pairs << " pairs live together checked";
  if (check->proved) os << " (" << check->proved << " proved apart for every binding)";
  os << ", at " << check->bindings << " binding" << (check->bindings == 1 ? "" : "s") << ": "
     << (check->ok() ? "valid" : "INVALID") << "\n";
  for (const std::string &p : check->problems) os << "  " << p << "\n";
  return check->ok() ? 0 : 1;
}

/// `--max-ratio`: plans per range of the sizes, each within the ratio of the lower bound at its
/// lower, middle and upper sizes where `--max-ranges` allows.
int runRangePlans(const PlanArgs &a, const lower::PlanOptions &options) {
  if (!a.at.empty() || !a.reference.empty() || !a.svgPath.empty())
    return fail("--max-ratio makes a plan per range and decides each one's placement itself: --at, --reference "
                "and --svg go with one plan, not with it");
  auto inferOptions = a.model.options();
  if (!inferOptions.ok()) return fail(inferOptions.error().message);
  auto plans = planByRanges(fileModel(a.model.path), *inferOptions, options, {a.maxRatio, a.maxRanges});
  if (!plans.ok()) return fail(plans.error().message);
  nlohmann::json j = rangePlansJson(*plans, a.model.path, a.maxRatio);
  int verdict = 0;
  if (a.verify)
    for (const auto &r : j["ranges"]) verdict = std::max(verdict, reportCheck(r["plan"], std::cerr));
  if (a.json) std::cout << j.dump(1) << "\n";
  else
    for (const std::string &l : rangePlansLines(*plans, a.maxRatio, a.maxRanges)) std::cout << l << "\n";
  return verdict;
}

int runPlan(const PlanArgs &a) {
  std::vector<Binding> bindings;
  for (const auto *specs : {&a.at, &a.reference})
    for (const std::string &spec : *specs) {
      auto b = parseBinding(spec);
      if (!b.ok()) return fail(b.error().message);
      bindings.push_back(*b);
    }
  Contract contract;
  auto m = loadForBindings(a.model, bindings, "--at/--reference", &contract);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  lower::PlanOptions options;
  options.align = a.align;
  options.callerOwnedIO = a.callerOwnedIO;
  options.order = a.order == "memory" ? lower::OrderPolicy::Memory : lower::OrderPolicy::Model;
  PlanReport report{a.model.path, &r.graph, nullptr, {}};
  auto reference = mergedBindings(a.reference);
  if (!reference.ok()) return fail("--reference: " + reference.error().message);
  auto at = mergedBindings(a.at);
  if (!at.ok()) return fail(at.error().message);
  options.reference = *reference;
  report.at = *at;
  if (auto known = checkNamesSymbols(r.graph, options.reference); !known.ok())
    return fail("--reference: " + known.error().message);
  if (auto known = checkNamesSymbols(r.graph, report.at); !known.ok()) return fail("--at: " + known.error().message);
  // The one rule of stats, plan and memory for the sizes numbers are shown at.
  if (options.reference.empty() || !report.at.empty()) {
    ShownAt shown = shownAt(contract, report.at);
    report.shown = shown.at;
    report.shownNote = shown.text();
  }
  if (a.maxRatio > 0) return runRangePlans(a, options);
  auto plan = lower::planMemory(r.graph, options);
  if (!plan.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "memory plan", plan.error().message);
  if (!plan.ok()) return fail(plan.error().message);
  report.plan = &*plan;
  std::string json = planJsonText(report, 1);
  if (a.json) std::cout << json << "\n";
  else
    for (const std::string &l : planLines(report)) std::cout << l << "\n";
  if (!a.svgPath.empty()) {
    std::ofstream out(a.svgPath);
    if (!(out << planSvg(report))) return fail("cannot write " + a.svgPath);
  }
  int verdict = a.verify ? reportCheck(nlohmann::json::parse(json), std::cerr) : 0;
  printErrors(r.diags);
  if (verdict) return verdict;
  return r.diags.hasErrors() ? 1 : 0;
}

} // namespace

Command addPlan(CLI::App &app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App *cmd = app.add_subcommand(
      "plan", "the static memory plan: offsets in one arena for every buffer, valid for every input size");
  args->model.add(cmd);
  cmd->add_option("--align", args->align, "alignment of every buffer, in bytes (64)");
  cmd->add_option("--order", args->order, "model | memory (an order with a lower peak)")
      ->check(CLI::IsMember({"model", "memory"}));
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--svg", args->svgPath, "draw the buffers in (step, address)");
  cmd->add_option("--at", args->at, "show a symbolic plan at SYM=V[,SYM=V...] (several --at are merged; default: the upper end of each "
                  "symbol's range where it is bounded, else its smallest size)");
  cmd->add_option("--reference", args->reference,
                  "decide a symbolic plan's placement at SYM=V[,SYM=V...] (default: upper bounds)");
  cmd->add_flag("--caller-owned-io", args->callerOwnedIO, "graph inputs and outputs outside the arena");
  cmd->add_flag("--verify", args->verify, "check the plan with the verifier (stderr)");
  cmd->add_option("--max-ratio", args->maxRatio,
                  "plan per range of the sizes, each within this ratio of the lower bound (1.05) at its lower, "
                  "middle and upper sizes")
      ->check(CLI::Range(1.0, 1e9));
  cmd->add_option("--max-ranges", args->maxRanges, "at most this many ranges with --max-ratio (8)")
      ->check(CLI::Range(1, 64));
  return {cmd, [args] { return runPlan(*args); }};
}

Command addCheckPlan(CLI::App &app) {
  auto path = std::make_shared<std::string>();
  CLI::App *cmd = app.add_subcommand("check-plan", "check a memory plan's JSON with the verifier alone");
  cmd->add_option("PLAN", *path, "a plan written by shapeflow plan --json")->required();
  return {cmd, [path]() -> int {
            std::ifstream in(*path);
            if (!in) return fail(*path + ": cannot open");
            auto j = nlohmann::json::parse(in, nullptr, false);
            if (j.is_discarded()) return fail(*path + ": not JSON");
            return reportCheck(j, std::cout);
          }};
}

} // namespace sf::cli
