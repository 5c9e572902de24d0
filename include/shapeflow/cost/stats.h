// Per-node and whole-model performance statistics  from an inferred graph: every count
// an expression of the input symbols with its bounds (a Dimension), so that one run answers how
// cost grows with a size and what the worst case is. Op-specific arithmetic comes from each op's
// cost function (ops/cost.h); elements, bytes, parameters and memory traffic from the facts.
// Conventions: docs/COSTS.md.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/op.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace sf {

/// Counts that add up: per node, per op type, per model.
struct Counts {
  Dimension macs = Dimension(0);
  /// Every non-MAC operation, and by kind.
  Dimension flops = Dimension(0);
  std::array<Dimension, kFlopKinds> flopsByKind = {Dimension(0), Dimension(0), Dimension(0),
                                                   Dimension(0), Dimension(0), Dimension(0)};
  /// Memory traffic of the ops run alone: the bytes they read (inputs and parameters) and write.
  Dimension readBytes = Dimension(0);
  Dimension writeBytes = Dimension(0);
  /// With a device (StatsOptions::device): the roofline time in nanoseconds, a node's own and
  /// for a sum the sum of its nodes' (each bound by its own arithmetic or traffic), not the
  /// roofline of the summed counts.
  Dimension timeNs = Dimension(0);

  /// `this += o * times`, checked.
  Result<void> add(const Counts &o, const Dimension &times = Dimension(1));
};

struct NodeStats {
  std::string name;
  std::string op;   // domain-qualified outside the default domain: `com.microsoft.Attention`
  std::string path; // where the node is: "" in the main graph, `loop_1/body` inside a body
  /// Per run of the node's graph (a body node: per iteration).
  Counts counts;
  Dimension inElems = Dimension(0), outElems = Dimension(0);
  Dimension inBytes = Dimension(0), outBytes = Dimension(0);
  /// The initializers it reads.
  int64_t paramElems = 0, paramBytes = 0;
  /// How many times it runs per run of the model (a Loop body's trip count, 1 in the main graph).
  Dimension runs = Dimension(1);
  /// False when the op has no cost function or its counts could not be formed.
  bool modeled = true;
  /// For a control-flow node: how its bodies were counted (`the larger branch`, ...).
  std::string note;
};

struct OpTypeStats {
  size_t count = 0; // nodes, each counted once (a body node once, not per iteration)
  Counts counts;    // with every node's runs
};

struct ModelStats {
  std::vector<NodeStats> nodes; // in graph order, a body's nodes after their owner
  /// The whole model: every node times its runs; an If counts its larger branch.
  Counts total;
  /// The same with every count that is not an expression of named symbols (a size that depends
  /// on the data with no named bound, an op without a cost model) at its lower bound: what is
  /// known of a total that is not (a Mask R-CNN's mask pasting loop).
  Counts totalKnown;
  std::map<std::string, OpTypeStats> byOpType;
  /// Elements and bytes of the initializers the model's nodes read, each once: the float ones
  /// and the 8-bit integer ones (quantised weights); integer shape constants and indices are not
  /// parameters.
  int64_t params = 0, paramBytes = 0;
  std::vector<std::string> notes;
};

struct Device;
struct StatsOptions {
  const OpRegistry *registry = nullptr; // defaultRegistry() when null
  /// When given, every Counts carries its roofline time on this device (cost/device.h).
  const Device *device = nullptr;
};

/// Statistics of an inferred graph (inferGraph first: bodies hold their facts once settled).
Result<ModelStats> computeStats(const Graph &g, const StatsOptions &options = {});

/// Bytes of `f`'s elements (elements times the element size; unknown type: unknown bytes).
Dimension bytesOf(const Fact &f);

} // namespace sf
