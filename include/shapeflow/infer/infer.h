// Forward propagation : walks a graph in topological order from its Parameters,
// validates and infers every node with its op's rule, records what rules learn about symbols,
// and collects every independent error in one pass. Downstream of a failed node facts stay loose.
//
// One run owns what spans nodes: the symbol table it records into, and the memo of subgraph
// inferences (If branches, Loop and Scan bodies), so that the control-flow rules stay pure
// functions of their context.
#pragma once

#include "shapeflow/dim/interval.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/op.h"
#include "shapeflow/support/diagnostic.h"

#include <string>
#include <map>
#include <vector>

namespace sf {

/// An input's shape as the user gives it: `x=1,3,224,224`, `x=N,3,H,W`, `x=[1..8,3,?,?]`,
/// `s=[]` (a scalar); `dims` is the text after '='.
struct InputShape {
  std::string name;
  std::string dims;
};
/// A symbol's range as the user gives it: `N=1..64`, `N=8`, `N=0..`.
struct DimBound {
  std::string symbol;
  Interval range;
};

/// The elements of an integer input of rank <= 1 as the user gives them: `k=3`, `shape=1,N,64`,
/// `axes=[0,?{1..3}]`; `elements` is the text after '=' (each element a dim: number, symbol,
/// interval or expression).
struct InputValue {
  std::string name;
  std::string elements;
};

/// When inference runs the backward rules (ops/refine.h) as well: where a graph input's rank or
/// element type is unknown (Auto), never, or always.
enum class Backward { Auto, Off, Always };
/// The most rounds of forward and backward inference (each round fixes what the one before
/// found; real models need one or two).
inline constexpr int kMaxBackwardRounds = 4;

struct InferOptions {
  const OpRegistry *registry = nullptr; // defaultRegistry() when null
  int maxSubgraphDepth = 16;
  /// Applied by applyInputs() before inference: input shapes overriding the declared ones, and
  /// symbol ranges (`--input`, `--dim` on the command line).
  std::vector<InputShape> inputs;
  std::vector<DimBound> dims;
  /// Values of integer inputs (`--value`), applied after the shapes.
  std::vector<InputValue> values;
  Backward backward = Backward::Auto;
};

struct InferStats {
  size_t nodes = 0;
  size_t failed = 0;
  size_t withoutRule = 0;
  std::vector<std::string> opsWithoutRule; // op types, once each
  /// Subgraph bodies inferred (memo misses) and body or rule results reused from the memo.
  size_t bodyInferences = 0;
  size_t memoHits = 0;
};

/// `x=1,3,224,224` -> {x, "1,3,224,224"}; `N=1..64` -> {N, [1, 64]}. Errors quote the text.
Result<InputShape> parseInputShape(const std::string &spec);
Result<DimBound> parseDimBound(const std::string &spec);
Result<InputValue> parseInputValue(const std::string &spec);

/// Sets the symbol ranges, then the input shapes, then the input values of `options` on the
/// graph. An input that does not exist, a shape of another rank than the declared one, a value
/// for an input that is not an integer tensor of rank <= 1 or whose length disagrees with its
/// shape is an error naming it. A shape that contradicts a static dim the model declares is kept
/// (a "what if") and warned about in `diags`: runtimes reject such inputs.
Result<void> applyInputs(Graph &g, const InferOptions &options, Diagnostics *diags = nullptr);

/// The named symbols of the graph inputs' shapes, one per name, in order of first appearance
/// (in the graph's expression context). Inference resolves the inputs' facts: taken before it,
/// these are the symbols the model (or the user) declared.
std::vector<SymbolId> namedInputSymbols(const Graph &g);

/// Sizes of 0 in the data a model is run on: for every named symbol of an input's shape that
/// `shapes` (the inputs' actual shapes, by name) sets to 0 where the model's default says "at
/// least 1" and no range was given, the symbol's range widened to start at 0 (as `--dim SYM=0..`
/// does), before inference. Returns the symbols widened (an empty KV cache: `past`).
std::vector<std::string> admitEmptySizes(Graph &g, const std::map<std::string, Shape> &shapes);

/// Infers every outlet's fact in place, on the graph's own symbol table.
InferStats inferGraph(Graph &g, Diagnostics &diags, const InferOptions &options = {});

/// The facts node `id`'s rule (and value propagation) gives its outputs from its inputs' facts
/// as they are, without writing them or keeping what the rule learns of the symbols: for a
/// rewrite that adds a node to an inferred graph. The rule's error names the node.
Result<Facts> inferNodeFacts(Graph &g, uint32_t id, const OpRegistry *registry = nullptr);

} // namespace sf
