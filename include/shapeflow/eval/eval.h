// The reference executor (seed 004's EvalOp; seed 002's run-time shapes): runs a graph on input
// tensors, calling each op's kernel (the `kernel` slot of its record, filled by this layer) in a
// topological order and keeping each tensor until its last reader has run. After each kernel the
// op's own shape rule is applied to the actual input shapes and values (mode 2) and the outputs
// must agree with it (mode 1 where the rule leaves a size to the data): a disagreement is an error
// naming the node, a bug in the kernel or the rule.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/ops/op.h"
#include "shapeflow/support/result.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sf {

/// What a kernel sees: its node's input tensors (absent optional inputs are null), attributes,
/// opset; it sets every output.
class EvalContext {
public:
  EvalContext(const Node &node, std::vector<std::shared_ptr<const Tensor>> inputs, int64_t opset,
              int64_t *liveBytes, int64_t maxBytes)
      : node_(node), inputs_(std::move(inputs)), opset_(opset), outputs_(node.outputs.size()),
        liveBytes_(liveBytes), maxBytes_(maxBytes) {}

  size_t numInputs() const { return inputs_.size(); }
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i]; }
  /// Input i; requires hasInput(i).
  const Tensor &input(size_t i) const { return *inputs_[i]; }
  /// Input i as shared, for an output that views its bytes.
  const std::shared_ptr<const Tensor> &inputShared(size_t i) const { return inputs_[i]; }
  size_t numOutputs() const { return outputs_.size(); }
  const Attributes &attrs() const { return node_.attrs; }
  int64_t opset() const { return opset_; }
  const Node &node() const { return node_; }

  /// Zeroed bytes for an output of this type and shape, within the run's memory budget (an
  /// error naming the size otherwise).
  Result<std::vector<std::byte>> allocate(ElementType t, const Shape &shape);
  /// An error unless a tensor of this type and shape (and a double per element, for kernels that
  /// compute in double) fits the budget: for kernels that build their output another way, so that
  /// no size an input merely claims is allocated.
  Result<void> admit(ElementType t, const Shape &shape) const;
  Result<void> setOutput(size_t i, Tensor t);
  std::vector<std::shared_ptr<const Tensor>> &outputs() { return outputs_; }
  /// Bytes this kernel allocated (counted against the budget until the node's outputs die).
  int64_t allocated() const { return allocated_; }

  /// Runs one of the node's bodies (If branch, Loop or Scan body) with `formals` for its inputs;
  /// the values it captures from enclosing graphs are this node's inputs.
  using BodyRunner = std::function<Result<std::vector<std::shared_ptr<const Tensor>>>(
      const Graph &, const std::vector<std::shared_ptr<const Tensor>> &)>;
  void setBodyRunner(BodyRunner r) { bodyRunner_ = std::move(r); }
  Result<std::vector<std::shared_ptr<const Tensor>>>
  runBody(const Graph &body, const std::vector<std::shared_ptr<const Tensor>> &formals) const {
    if (!bodyRunner_) return makeError("bodies cannot be run here");
    return bodyRunner_(body, formals);
  }

private:
  const Node &node_;
  std::vector<std::shared_ptr<const Tensor>> inputs_;
  int64_t opset_;
  std::vector<std::shared_ptr<const Tensor>> outputs_;
  int64_t *liveBytes_;
  int64_t maxBytes_;
  int64_t allocated_ = 0;
  BodyRunner bodyRunner_;
};

namespace eval {

struct RunOptions {
  /// Bytes of tensors alive at once (0: half the machine's memory).
  int64_t maxMemory = 0;
  /// Called for every tensor a node produces, with the node and the output index.
  std::function<void(const Node &, size_t, const Tensor &)> observe;
  /// The ops and their kernels (default: evalRegistry()).
  const OpRegistry *registry = nullptr;
};

struct RunResult {
  std::vector<std::string> outputNames;
  std::vector<std::shared_ptr<const Tensor>> outputs;
  size_t nodesRun = 0;
  int64_t peakBytes = 0; // of the tensors the run allocated, alive at once
};

/// The registry of every op with its kernel where this layer has one.
const OpRegistry &evalRegistry();
/// Fills the kernel slot of the records in `r` this layer implements.
void registerKernels(OpRegistry &r);

/// Runs `g` on `inputs` (by graph input name; every input that is not a constant is required,
/// with the element type its fact says and a shape its fact admits).
Result<RunResult> run(const Graph &g, const std::map<std::string, Tensor> &inputs,
                      const RunOptions &options = {});

/// A tensor of `type` and `shape` with pseudo-random elements from `seed`: floats uniform in
/// [-1, 1), integers in [0, 10), bools either.
Result<Tensor> randomTensor(ElementType type, const Shape &shape, uint64_t seed);

} // namespace eval
} // namespace sf
