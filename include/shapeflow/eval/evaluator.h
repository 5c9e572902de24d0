// The kernels as the rewrite layer's Evaluator: what constant folding computes a node with.
#pragma once

#include "shapeflow/rewrite/rewrite.h"

namespace sf::eval {

/// Runs one node's kernel (evalRegistry) on constant inputs; an error when the op has no
/// kernel, the kernel refuses the inputs, or an output is not a tensor. At most `maxBytes`
/// bytes of outputs.
class KernelEvaluator : public rewrite::Evaluator {
public:
  explicit KernelEvaluator(int64_t maxBytes = int64_t(1) << 30) : maxBytes_(maxBytes) {}
  Result<std::vector<TensorPtr>> evaluate(const Graph &g, const Node &n,
                                          const std::vector<TensorPtr> &inputs) const override;

private:
  int64_t maxBytes_;
};

} // namespace sf::eval
