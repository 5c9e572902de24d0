// Graph rewrites: passes that turn an inferred graph into an equivalent one (the executor's
// fusions; the simplifier's folds). A pass is a small function that finds its pattern through the
// ops' records and traits (never by op-type strings) and replaces it with explicit nodes, each an
// op with a record of its own (rule, cost, kernel), whose facts it infers from their inputs'.
// Passes run in a list until none changes anything. Work that needs kernels (folding constants)
// goes through an Evaluator the caller hands in, as kernels live in a layer above this one.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/ops/op.h"
#include "shapeflow/support/result.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace sf::rewrite {

/// Computes a node's outputs from constant inputs (the executor's kernels, given by the caller).
class Evaluator {
public:
  virtual ~Evaluator() = default;
  virtual Result<std::vector<TensorPtr>> evaluate(const Graph &g, const Node &n,
                                                  const std::vector<TensorPtr> &inputs) const = 0;
};

/// What a pass works on.
struct PassContext {
  Graph &graph;
  const OpRegistry &registry;
  const Evaluator *evaluator = nullptr;
  /// Constant folding makes tensors of at most this many bytes (or no larger than what the
  /// folded node reads): a ConstantOfShape of 1 GB is not written into the model.
  int64_t foldLimit = int64_t(1) << 20;
};

/// One rewrite: applied once over the graph, it returns how many places it rewrote.
struct Pass {
  std::string name;
  std::function<Result<size_t>(PassContext &)> apply;
};

/// How many places each pass rewrote, over all rounds.
struct PassCount {
  std::string name;
  size_t rewrites = 0;
};

/// Runs the passes in order, round after round, until a round rewrites nothing (at most
/// `maxRounds`); then drops the removed nodes (Graph::compact). The graph must be inferred.
Result<std::vector<PassCount>> runPasses(PassContext &ctx, std::span<const Pass> passes, int maxRounds = 8);

// ---- building blocks of passes ----

/// The record of a node (null for graph inputs, constants and ops without one).
const OpDef *recordOf(const PassContext &ctx, const Node &n);
/// Node `n`'s output 0 is read by exactly one input of one node and is not a graph output.
const Node *onlyReader(const Graph &g, const Node &n);
/// A name no outlet of `g` has, from `stem`.
std::string freshName(const Graph &g, const std::string &stem);
/// The one-element constant value of an outlet (a scalar or a [1] tensor).
std::optional<double> scalarConstant(const Graph &g, OutletId o);

/// Adds a node of op `domain.opType` (opset `opset`) reading `inputs`, infers its outputs from
/// its rule, makes it stand for `replaced` (every reader and graph output of `replaced` reads
/// its output 0 instead, which takes `replaced`'s name), and removes the nodes of `dead` (which
/// must then have no readers). Returns the new node's id.
Result<uint32_t> replaceWithNode(PassContext &ctx, std::string_view domain, std::string_view opType, int opset,
                                 std::vector<OutletId> inputs, Attributes attrs, OutletId replaced,
                                 std::span<const uint32_t> dead);

// ---- the executor's fusions (fuse.cpp) ----

/// BatchNormalization in inference of f32 X [N, C, H, W] with constant scale, B, mean and var
/// becomes a depthwise 1x1 Conv (weights scale / sqrt(var + epsilon), bias B - mean * weight):
/// the same multiply-add per element, which fuseConvActivation can then join to the Relu that
/// follows (a pre-activation block's BatchNormalization, Relu, Conv).
Result<size_t> batchNormAsConv(PassContext &ctx);
/// Conv (an op whose record takes an activation) whose output only a Relu reads, a HardSwish, a
/// Clip between constant bounds (ReLU6), or x * Sigmoid(x) (SiLU), becomes one FusedConv
/// (ops/fused.h); so does one whose output only an Add reads with another input of the same
/// shape (a residual connection: FusedConv's Z), with the Relu that alone reads the sum.
Result<size_t> fuseConvActivation(PassContext &ctx);
/// GELU as torch exports it, x (erf(x / sqrt 2) + 1) / 2 in f32, five ops each read only by the
/// next, becomes one Gelu (ONNX opset 20).
Result<size_t> fuseGelu(PassContext &ctx);
/// The passes the executor runs a graph through before it runs it.
std::vector<Pass> executionPasses();

// ---- the simplifier (simplify.cpp): a smaller equivalent graph that stays dynamic ----

/// An If whose condition the facts know is replaced by the nodes of the branch it takes.
Result<size_t> inlineKnownBranches(PassContext &ctx);
/// A node whose inputs are all constants becomes constants computed by the evaluator (none
/// without one), within `foldLimit`; never an op whose record is nondeterministic or has bodies.
Result<size_t> foldConstants(PassContext &ctx);
/// An output whose facts know every element (a shape computed from static dims) becomes a
/// constant.
Result<size_t> foldShapeValues(PassContext &ctx);
/// A computed shape input (OpTraits::shapeInput: Reshape's target, Expand's) whose elements
/// are known symbolically becomes a constant that keeps the output dynamic: 0 copies an input
/// dim, one -1 is inferred (Reshape), 1 keeps the input's dim (Expand); the node's rule must
/// give the same output from it.
Result<size_t> foldShapeInputs(PassContext &ctx);
/// A node that passes an input on unchanged (its record's passThrough: Identity, Cast to its
/// own type, Reshape to its own shape, ...) is removed; its readers read that input.
Result<size_t> removeNoOps(PassContext &ctx);
/// Identical constants (type, shape, elements) become one.
Result<size_t> mergeConstants(PassContext &ctx);
/// Nodes of the same op with the same inputs and attributes become one (not nondeterministic
/// ops, not ops with bodies).
Result<size_t> mergeNodes(PassContext &ctx);
/// Nodes and constants nothing reads are removed (graph inputs stay).
Result<size_t> removeDeadNodes(PassContext &ctx);
/// The simplifier's passes in the order they run, round after round.
std::vector<Pass> simplifyPasses();

} // namespace sf::rewrite
