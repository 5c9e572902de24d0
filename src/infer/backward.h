// One sweep of the backward rules (ops/refine.h) over an inferred graph: internal to the driver.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/op.h"

#include <vector>

namespace sf {

/// Runs every node's backward rule once, from the graph outputs towards the inputs (reverse
/// topological order), each rule seeing its outputs' facts as the later rules refined them and
/// the declared facts of the graph outputs; returns what that says of each graph input
/// (g.inputs order): its fact merged with everything its readers' rules learned.
std::vector<Fact> backwardSweep(const Graph &g, const OpRegistry &registry);

/// `after` says more than `before` of a graph input: a rank, an element type or a static dim
/// that `before` did not have.
bool refinesInput(const Fact &before, const Fact &after);

} // namespace sf
