// A model made ready to run once, then run as often as wanted: what `shapeflow run` and Python's
// Model.run both do, so that they cannot disagree. The inferred graph is rewritten for the
// executor (rewrite/: the fusions), its static memory plan laid out as an arena at the inputs'
// sizes (eval/arena.h), and prepared (eval/plan.h).
#pragma once

#include "shapeflow/eval/arena.h"
#include "shapeflow/eval/plan.h"
#include "shapeflow/rewrite/rewrite.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sf::eval {

struct SessionOptions {
  /// Rewrite the graph for the executor (rewrite::executionPasses), after folding what the
  /// inputs' sizes fix: the graph inferred again with the inputs at their sizes and simplified
  /// (rewrite::simplifyPasses: shape computations and constant subgraphs become constants, the
  /// nodes only they read go), so that a run does not compute at every call what depends on the
  /// sizes alone. The folded graph's inputs are those sizes: its plan refuses data of other
  /// sizes. The fold is skipped where the data is outside what the model admits (the run says
  /// so) or inference at these sizes reports an error.
  bool fuse = true;
  /// Lay out the memory plan as an arena at the inputs' sizes.
  bool arena = true;
};

struct Session {
  Graph graph;                              // as it runs (rewritten)
  std::vector<rewrite::PassCount> rewrites; // what the rewrites did (the fold's passes first)
  size_t nodesBeforeFold = 0, nodesAfterFold = 0; // ops before and after the fold (0: not folded)
  std::optional<ArenaLayout> arena;
  std::string noArena; // why there is no arena (asked for none, or the plan could not be laid out)
  double planMs = 0;   // time to plan and lay out the arena
  std::shared_ptr<const ExecPlan> plan;
};

/// Prepares an inferred graph to run on inputs of these sizes. The session does not move (the
/// plan refers to its graph and arena).
Result<std::unique_ptr<Session>> prepareSession(Graph inferred, const std::map<std::string, Value> &inputs,
                                                const SessionOptions &options = {});

} // namespace sf::eval
