// A run prepared once, then only run (as tract's SimplePlan): everything the executor decides
// about a graph that does not depend on the inputs' values (the order, each node's record and
// kernel, who reads each tensor and who reads its elements, which tensors stay in channel
// blocks between convolutions, each constant's aligned bytes, the arena's places) is decided by
// prepare(), once per graph and once per body of every node; the run loop (eval.h's run) walks
// the plan, counting readers down as they run.
#pragma once

#include "shapeflow/eval/eval.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace sf::eval {

struct ArenaLayout;

/// One node as the run loop walks it.
struct Step {
  uint32_t node = 0;
  NodeKind kind = NodeKind::Op;
  const OpDef *def = nullptr; // an op's record (with its kernel)
  std::string op;             // `Conv`, `com.microsoft.FusedMatMul`: for messages and the profile
  int64_t opset = 0;          // the node's, or the newest where the graph names none
  /// A graph input: the formal it takes (SIZE_MAX for a captured one), or the owner's input it
  /// is captured from (-1 for a formal).
  size_t formal = SIZE_MAX;
  int64_t captured = -1;
  /// A constant's tensor (or a graph input's default initializer), aligned for its element type.
  std::shared_ptr<const Tensor> constant;
  bool readsShapeOnly = false; // reads only its inputs' shapes (Shape, Size)
  bool checksRule = false;     // the op's rule checks its actual inputs and outputs (mode 2)
  bool runsBodies = false;     // the kernel runs bodies or reads sequences
  /// A 2-D convolution's input and output kept in a channel layout (a GlobalAveragePool's input;
  /// a binary op's full input and output, its other input a value per channel); a layout-free
  /// op whose output (and full-size inputs) are.
  Layout layoutIn = Layout::Plain, layoutOut = Layout::Plain;
  bool layoutFreeBlocked = false;
};

struct PrepareOptions {
  /// The ops and their kernels (default: evalRegistry()).
  const OpRegistry *registry = nullptr;
  /// Every tensor will be observed in the plain layout (no channel blocks).
  bool observed = false;
  /// The arena's places for the top graph (eval/arena.h), made for this graph; its order is the
  /// plan's.
  const ArenaLayout *arena = nullptr;
  /// The channels per block of the blocked layout: 16, 8, or 0 for the machine's (RunOptions).
  int channelBlock = 0;
};

class ExecPlan {
public:
  const Graph &graph() const { return *graph_; }
  const std::vector<Step> &steps() const { return steps_; }
  const OpRegistry &registry() const { return *registry_; }
  const ArenaLayout *arena() const { return arena_; }
  /// Outlets are numbered node by node: node n's output k is outlet(n) + k.
  size_t outlet(uint32_t node) const { return firstOutlet_[node]; }
  size_t outlet(OutletId o) const { return firstOutlet_[o.node] + o.slot; }
  size_t outletCount() const { return readers_.size(); }
  /// Per outlet: the nodes' inputs reading it; those reading its elements; it is a graph output.
  const std::vector<uint32_t> &readers() const { return readers_; }
  const std::vector<uint32_t> &dataReaders() const { return dataReaders_; }
  const std::vector<bool> &isOutput() const { return isOutput_; }
  /// Tensors kept in channel blocks.
  size_t blockedCount() const { return blockedCount_; }
  size_t channelsLastCount() const { return channelsLastCount_; }
  /// The plan of a body of one of the graph's nodes (prepared with it); null for another graph.
  const ExecPlan *body(const Graph &b) const {
    auto it = bodies_.find(&b);
    return it == bodies_.end() ? nullptr : it->second.get();
  }

private:
  friend Result<std::shared_ptr<const ExecPlan>> prepare(const Graph &, const PrepareOptions &);
  const Graph *graph_ = nullptr;
  const OpRegistry *registry_ = nullptr;
  const ArenaLayout *arena_ = nullptr;
  std::vector<Step> steps_;
  std::vector<size_t> firstOutlet_;
  std::vector<uint32_t> readers_, dataReaders_;
  std::vector<bool> isOutput_;
  size_t blockedCount_ = 0, channelsLastCount_ = 0;
  std::unordered_map<const Graph *, std::shared_ptr<const ExecPlan>> bodies_;
};

/// Prepares `g` (which must outlive the plan, as must the registry and the arena layout) to run.
/// A layout not made for this graph is an error saying why.
Result<std::shared_ptr<const ExecPlan>> prepare(const Graph &g, const PrepareOptions &options = {});

/// Runs a prepared graph on `inputs` (by graph input name, as eval.h's run). Its registry and
/// arena are the plan's; `options.registry` and `options.arena` are not read.
Result<RunResult> run(const ExecPlan &plan, const std::map<std::string, Value> &inputs,
                      const RunOptions &options = {});

} // namespace sf::eval
