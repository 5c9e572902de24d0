// A run's memory from the static memory plan (the lowering's last step): one arena of the
// plan's peak at the run's input sizes, every tensor the plan places at its offset, outputs the
// plan writes in place over a dying input at that input's bytes. The executor (eval/eval.h)
// takes the layout as it is and keeps its own account of which bytes are alive: an allocation
// that would land on a live tensor's bytes (a plan or kernel that disagrees with the run) goes
// to the heap instead and is counted, so a wrong plan costs memory, never a wrong result.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/lower/memory_plan.h"

#include <map>
#include <string>
#include <vector>

namespace sf::eval {

/// Where one output of a node goes in the arena.
struct Placement {
  int64_t offset = 0;
  int64_t bytes = 0;    // the tensor's own size at the binding
  bool inPlace = false; // over the bytes of an input that dies at this node
};

struct ArenaLayout {
  int64_t bytes = 0;              // the arena: the plan's peak at the binding
  std::vector<uint32_t> order;    // every node, in the order the plan was made for
  /// Per node id, per output index (empty: not in the arena).
  std::vector<std::vector<std::optional<Placement>>> places;
  std::map<std::string, int64_t> binding; // the named symbols' values it was evaluated at
  size_t tensors = 0;             // placements
};

/// The named symbols of the graph inputs' shapes at these inputs (an input dim that is a named
/// symbol takes the input's size there; two sizes for one symbol is an error naming both).
Result<std::map<std::string, int64_t>> bindInputs(const Graph &g, const std::map<std::string, Value> &inputs);

/// The plan's offsets and sizes at `binding` as a layout of `g`'s nodes. An error when the plan
/// does not evaluate there or names tensors `g` does not have.
Result<ArenaLayout> layoutAt(const Graph &g, const lower::MemoryPlan &plan,
                             const std::map<std::string, int64_t> &binding);

/// Plans `g`'s memory for these inputs (graph inputs and outputs the caller's, the model's
/// order) and lays it out at their sizes.
Result<ArenaLayout> planArena(const Graph &g, const std::map<std::string, Value> &inputs);

} // namespace sf::eval
