// The memory plan's verifier, apart from the planner: it reads a plan's JSON (README "Memory
// plan") and nothing else, not the model, not the planner's data structures; its library links
// only the dimension algebra and the JSON parser. It checks that every buffer is at least as
// large as its tensor and aligned, that every buffer ends at or below the peak, and that no two
// buffers live at the same step overlap in the arena, except those the plan says share memory
// (views and in-place writes). A concrete plan is checked exactly. A symbolic plan is checked for
// every binding of its symbols: each pair is proved apart where the bounds of the difference of
// the offset expressions show it, and every pair is also checked exactly at sampled bindings
// (the ranges' corners, their middle, and pseudo-random points).
#pragma once

#include "shapeflow/support/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sf::lower {

struct PlanCheck {
  size_t buffers = 0;
  size_t pairs = 0;      // pairs of buffers live at a common step that must not overlap
  size_t proved = 0;     // of them, proved apart for every binding by bounds
  size_t bindings = 0;   // bindings checked exactly
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

/// Checks a plan given as JSON. An error only when the JSON is not a plan.
Result<PlanCheck> checkPlanJson(const nlohmann::json &plan);

} // namespace sf::lower
