// Per-op performance statistics : what one node computes, as counts that are
// expressions of the input symbols (Dimensions: an expression where known, always bounds).
// Each op's record has a `cost` slot (op.h), filled where the op is registered; the conventions
// every cost function follows are in docs/COSTS.md:
//  - one MAC is one multiply-accumulate (a*b + c) of the op's main product (MatMul, Conv,
//    attention, recurrent cells, ...); `macs` counts them;
//  - `flops` counts every other arithmetic operation, by kind; an elementwise op is one
//    operation per output element , a bias add one add per output element;
//  - data movement (Reshape, Transpose, Concat, Gather, ...) has no arithmetic: its traffic is
//    in the bytes the statistics layer (src/cost) computes from the facts, not here.
#pragma once

#include "shapeflow/dim/dimension.h"
#include "shapeflow/ir/attribute.h"
#include "shapeflow/ir/fact.h"
#include "shapeflow/support/result.h"

#include <array>
#include <functional>
#include <string_view>
#include <vector>

namespace sf {

/// Kinds of non-MAC arithmetic.
enum class FlopKind : uint8_t {
  Add,     // add, subtract, accumulate
  Mul,     // multiply, scale
  Div,     // divide, reciprocal, modulo
  Special, // exp, log, tanh, erf, sqrt, pow, trigonometric: a transcendental function
  Compare, // compare, min, max, select, relu, logical
  Other,   // conversions, rounding, random numbers, bit operations
};
inline constexpr size_t kFlopKinds = 6;
/// `add`, `mul`, `div`, `special`, `compare`, `other`.
const char *toString(FlopKind k);

struct OpCost {
  Dimension macs = Dimension(0);
  std::array<Dimension, kFlopKinds> flops = {Dimension(0), Dimension(0), Dimension(0),
                                             Dimension(0), Dimension(0), Dimension(0)};

  /// Adds `count` operations of a kind; checked (an overflow is an error, never a wrap).
  Result<void> add(FlopKind k, const Dimension &count);
  Result<void> addMacs(const Dimension &count);
  /// Every kind together.
  Result<Dimension> totalFlops() const;
};

/// What a cost function sees: the node's inferred input and output facts, attributes, opset.
class CostContext {
public:
  CostContext(std::vector<const Fact *> inputs, std::vector<const Fact *> outputs,
              const Attributes &attrs, int64_t opset)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)), attrs_(attrs), opset_(opset) {}

  size_t numInputs() const { return inputs_.size(); }
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i]; }
  /// An unknown fact when absent.
  const Fact &input(size_t i) const;
  size_t numOutputs() const { return outputs_.size(); }
  const Fact &output(size_t i) const;
  const Attributes &attrs() const { return attrs_; }
  int64_t opset() const { return opset_; }

private:
  std::vector<const Fact *> inputs_, outputs_;
  const Attributes &attrs_;
  int64_t opset_;
};

using CostFn = std::function<Result<OpCost>(const CostContext &)>;

// ---- helpers for cost functions ----
/// Elements of a fact: the product of its dims (symbolic), unknown when its rank is.
Dimension elementsOf(const Fact &f);
/// `a * b`, checked; unknown when either is.
Result<Dimension> times(const Dimension &a, const Dimension &b);
/// Product of `dims[from, to)`.
Result<Dimension> productOf(const PartialShape &s, size_t from, size_t to);

/// No arithmetic (data movement, views, shape queries).
Result<OpCost> costNone(const CostContext &);
/// `n` operations of kind `k` per element of output 0 (the elementwise convention).
CostFn costPerOutput(FlopKind k, int64_t n = 1);
/// `n` operations of kind `k` per element of input `index` (reductions, scans over the input).
CostFn costPerInput(FlopKind k, int64_t n = 1, size_t index = 0);
/// `n` MACs per element of output 0 (a lerp, a small dot product per element).
CostFn costMacsPerOutput(int64_t n);
/// Variadic elementwise (Sum, Max, ...): one operation of kind `k` per output element for each
/// input after the first, plus `extra` of kind `extraKind` per output element (Mean's divide).
CostFn costVariadic(FlopKind k, int64_t extra = 0, FlopKind extraKind = FlopKind::Div);
/// `cost` when input `index` is present (an optional bias), else nothing.
CostFn costIfInput(size_t index, CostFn cost);
/// Several costs added together.
CostFn costSum(std::vector<CostFn> parts);

} // namespace sf
