// What `shapeflow plan` shows: the memory plan (lower/memory_plan.h) as JSON (README "Memory
// plan"), a terminal summary, and an SVG of buffers as rectangles in (step, address).
#pragma once

#include "shapeflow/lower/memory_plan.h"

#include <map>
#include <string>
#include <vector>

namespace sf {

struct PlanReport {
  std::string model;
  const Graph *graph = nullptr;
  const lower::MemoryPlan *plan = nullptr;
  /// Where to evaluate a symbolic plan for the summary and the picture (default: the plan's
  /// reference binding).
  std::map<std::string, int64_t> at;
  /// The text's and the picture's sizes (`shownAt`: `at`, then the rule for the others) and how
  /// they were chosen; empty: `at` over the plan's reference.
  std::map<std::string, int64_t> shown;
  std::string shownNote;
};

/// The plan's derived sizes (`_o3 = max(...)`) in an order where each is defined before an
/// expression among them uses it: indices into MemoryPlan::derived.
std::vector<size_t> definitionOrder(const lower::MemoryPlan &p);
/// The plan's JSON; with `at`, also the numbers there (`at`, `at_values`: peak, lower bound).
std::string planJsonText(const PlanReport &r, int indent = 0);
std::vector<std::string> planLines(const PlanReport &r);
std::string planSvg(const PlanReport &r);

} // namespace sf
