// A node seen through other inputs than its own: the rule of a standard op run for a contrib op
// whose tensors are laid out or listed differently (the QOperator ops' tensors without their
// scales, channels-last convolutions and normalisations).
#pragma once

#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/op.h"

#include <algorithm>
#include <vector>

namespace sf {

/// A node seen through some of its inputs (and facts given for them): what the float op's rule
/// sees of a quantized op. Everything else is the node's own context.
class InputView final : public InferContext {
public:
  /// `present[i]` false for an absent optional input (all present when empty).
  InputView(InferContext &base, Facts inputs, int64_t opset, std::vector<bool> present = {})
      : base_(base), inputs_(std::move(inputs)), present_(std::move(present)), opset_(opset) {
    present_.resize(inputs_.size(), true);
  }
  size_t numInputs() const override { return inputs_.size(); }
  bool hasInput(size_t i) const override { return i < inputs_.size() && present_[i]; }
  const Fact &input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : none_; }
  size_t numOutputs() const override { return base_.numOutputs(); }
  const Attributes &attrs() const override { return base_.attrs(); }
  int64_t opset() const override { return opset_; }
  const std::string &nodeName() const override { return base_.nodeName(); }
  SymbolTable &symbols() override { return base_.symbols(); }
  void warn(std::string message) override { base_.warn(std::move(message)); }
  void assume(std::string message) override { base_.assume(std::move(message)); }
  Result<Facts> inferBody(const Graph &body, const Facts &formals, size_t expect) override {
    return base_.inferBody(body, formals, expect);
  }
  Result<Facts> memoized(const Graph &body, const std::function<Result<Facts>()> &compute) override {
    return base_.memoized(body, compute);
  }
  void settle(const Graph &body, const Facts &formals) override { base_.settle(body, formals); }
  Result<Facts> inferBodyFinal(const Graph &body, const Facts &formals, size_t expect) override {
    return base_.inferBodyFinal(body, formals, expect);
  }
  Dimension freshDim(std::string_view stem, Interval range) override { return base_.freshDim(stem, range); }

private:
  InferContext &base_;
  Facts inputs_;
  std::vector<bool> present_;
  int64_t opset_;
  Fact none_;
};

/// Channels last ([N, spatial..., C]) as channels first ([N, C, spatial...]) and back.
inline PartialShape channelsFirst(const PartialShape &s) {
  if (!s.rankIsStatic() || s.size() < 3) return s;
  std::vector<Dimension> d = s.dims();
  std::rotate(d.begin() + 1, d.end() - 1, d.end());
  return PartialShape(std::move(d));
}
inline PartialShape channelsLast(const PartialShape &s) {
  if (!s.rankIsStatic() || s.size() < 3) return s;
  std::vector<Dimension> d = s.dims();
  std::rotate(d.begin() + 1, d.begin() + 2, d.end());
  return PartialShape(std::move(d));
}

} // namespace sf
