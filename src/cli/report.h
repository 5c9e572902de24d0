// Printing inference results: a readable per-tensor listing, and the JSON contract that other
// tools parse (README "JSON output").
#pragma once

#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/support/diagnostic.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace sf::cli {

struct Report {
  std::string model;
  const Graph *graph = nullptr;
  const Diagnostics *diags = nullptr;
  InferStats stats;
};

nlohmann::json toJson(const Report &r);
void printText(const Report &r, std::ostream &os);
/// A dim as JSON: an integer, or {"expr", "min", "max"}.
nlohmann::json dimJson(const Dimension &d);

} // namespace sf::cli
