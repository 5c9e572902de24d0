// Backward rules (tract's InferenceOp: facts flow from an op's outputs and weights to its
// inputs). A record's `refine` slot reads what is known of a node's inputs and outputs and says
// what follows for its inputs: a Conv's weight fixes its input's rank and channels, a Concat's
// output the rank and other dims of every input, a Transpose's output its input's dims in the
// other order, an elementwise op's operands share their element type.
//
// Backward rules only refine: what they say is merged into what is known, and a contradiction is
// left for the forward rule to report (with the node, op and shapes). They never guess: a dim an
// input may take more than one size for (a broadcast operand's dim opposite a 768: 1 or 768)
// stays unknown. The driver runs them where the graph inputs' facts are incomplete (infer.h).
#pragma once

#include "shapeflow/ops/op.h"

namespace sf {

class RefineContext {
public:
  virtual ~RefineContext() = default;

  virtual size_t numInputs() const = 0;
  virtual bool hasInput(size_t i) const = 0;
  /// What is known of input i now (its forward fact, refined by the rules of later nodes).
  virtual const Fact &input(size_t i) const = 0;
  virtual size_t numOutputs() const = 0;
  virtual const Fact &output(size_t i) const = 0;
  virtual const Attributes &attrs() const = 0;
  virtual int64_t opset() const = 0;
  /// What the rule learned of input i, merged into what is known of it.
  virtual void refine(size_t i, const Fact &learned) = 0;
  /// The least rank input i (or output i) may have when its rank is unknown (0 when nothing is
  /// known): `Gather(Shape(x), 2)` says x has at least 3 dims before anything says how many.
  virtual int64_t minRank(size_t i) const = 0;
  virtual int64_t outputMinRank(size_t i) const = 0;
  virtual void refineMinRank(size_t i, int64_t rank) = 0;
  /// The most rank it may have (-1 when nothing is known): an operand broadcast onto a rank-3
  /// output has at most 3. Where the least and the most meet, the rank is known.
  virtual int64_t outputMaxRank(size_t i) const = 0;
  virtual void refineMaxRank(size_t i, int64_t rank) = 0;

  void refineType(size_t i, ElementType t);
  void refineShape(size_t i, PartialShape s);
  /// A known rank with every dim unknown.
  void refineRank(size_t i, int64_t rank);
  /// Integers from attribute `name` (older opsets) or from input `index` when its elements are
  /// known (newer); nullopt when neither tells.
  std::optional<std::vector<int64_t>> ints(const char *name, size_t index, bool useInput) const;
};

// ---- rules, by the relation they express ----

/// Input 0 has output 0's shape (elementwise unary ops, activations, normalisations, Dropout,
/// Identity); with `sameType`, its element type too (not Cast, IsNaN).
RefineFn refineSameShape(bool sameType = true);
/// Numpy broadcasting of every input onto output 0: an input of unknown rank whose siblings all
/// have a smaller rank has the output's rank; an input's dim opposite only 1s (or nothing) in the
/// siblings is the output's. `firstInput` skips a condition (Where); `typeFromOutput` when the
/// output's element type is the operands' (arithmetic, not comparisons); operands share a type
/// unless `mixedTypes` (Pow, BitShift's shift amount may differ).
RefineFn refineBroadcast(size_t firstInput = 0, bool typeFromOutput = true,
                         bool mixedTypes = false);
/// Conv / ConvTranspose: the input has the weight's rank, the output's batch size, and
/// `W[1] * group` channels (Conv) or `W[0]` (ConvTranspose); the weight's element type.
RefineFn refineConv(bool transposed);
/// Pools, LpPool, Global pools, InstanceNormalization, LRN: the input has the output's rank,
/// batch size and channels.
RefineFn refineChannelsFirst();
/// BatchNormalization: input 0 is the output's (shape and type) and has scale's channel count.
RefineFn refineBatchNorm();
/// MatMul: with a matrix operand and the output's rank known, the other operand's rank, batch
/// dims, rows or columns; K from the other operand. Operands share a type with the output.
RefineFn refineMatMul();
/// Gemm: both operands are matrices; M and N from the output, K from the other operand.
RefineFn refineGemm();
/// Gather: indices rank = output rank - data rank + 1 and their dims are the output's at axis;
/// or data's rank and its dims off the axis from the output and the indices.
RefineFn refineGather();
/// Concat: every input has the output's rank, type and dims off the axis.
RefineFn refineConcat();
/// Transpose: the input is the output with the permutation undone.
RefineFn refineTranspose();
/// Unsqueeze: the output without the inserted axes. Squeeze with known axes: the output with 1s
/// put back.
RefineFn refineUnsqueeze();
RefineFn refineSqueeze();
/// Reduce ops (axes an input since opset `axesInputSince`, 0: never) and ArgMax/ArgMin
/// (`argAxis`: one `axis` attribute, an integer output): with keepdims the output's rank and the
/// kept dims; without, the output's rank plus the reduced axes.
RefineFn refineReduce(size_t axesInputSince, bool argAxis = false);
/// Ops whose data input has output 0's rank (Slice, Pad, Tile, Resize, DepthToSpace, ...).
RefineFn refineSameRank(bool sameType = true);
/// Split: the input has the outputs' rank and type, their dims off the axis, and along it
/// their sum when every output's is known.
RefineFn refineSplit();
/// RNN, GRU, LSTM: X is [seq, batch, input] or [batch, seq, input] (rank 3 either way) with
/// W's input size and element type.
RefineFn refineRecurrent();
/// Shape: its output's length is the input's rank (at least its least length).
RefineFn refineShapeOf();
/// Input 0 has output 0's element type (Reshape, Flatten, Expand, ...).
RefineFn refineTypeOnly();

} // namespace sf
