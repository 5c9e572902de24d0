// Shared by the rules that infer subgraphs or join alternative facts (control_flow.cpp,
// sequence.cpp): the hull of two facts (what is known of a value that is one or the other) and
// body inference memoized per distinct input facts.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/op.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sf {

struct SubgraphMemo;

/// The smallest dimension containing both: equal dims are kept, an expression both share keeps
/// its identity, anything else becomes the interval hull (never an intersection). Works on value
/// elements too (negative ends are kept).
Dimension hullDim(const Dimension &a, const Dimension &b);
/// Per-dim hull for equal ranks; a different or unknown rank gives an unknown rank.
PartialShape hullShape(const PartialShape &a, const PartialShape &b);
/// Hull of two facts of the same value: element types must agree when both are known (the error
/// names both: `f32[N] vs i64[N]`), an unknown type takes the other's; values join element by
/// element when both are known with the same length; constants survive only when equal.
Result<Fact> hullFacts(const Fact &a, const Fact &b);

/// Keeps one memo of body inferences for the outermost control-flow rule running on this thread
/// (nested rules, inferred inside it, share it), so that a body is inferred once per distinct input
/// facts and nested loops stay linear in their fixed-point rounds. Declare one at the top of
/// every rule that calls inferBody.
class SubgraphMemoScope {
public:
  explicit SubgraphMemoScope(InferContext &ctx);
  ~SubgraphMemoScope();
  SubgraphMemoScope(const SubgraphMemoScope &) = delete;
  SubgraphMemoScope &operator=(const SubgraphMemoScope &) = delete;

private:
  std::unique_ptr<SubgraphMemo> own_;
  SubgraphMemo *previous_ = nullptr;
};

/// ctx.inferSubgraph(body, formals) through the memo of the enclosing SubgraphMemoScope: the key
/// is the body, the formal facts and the facts of the outer values it captures. Checks that the
/// body returns `expectOutputs` outputs (when not SIZE_MAX).
Result<std::vector<Fact>> inferBody(InferContext &ctx, const Graph &body,
                                    const std::vector<Fact> &formals,
                                    size_t expectOutputs = SIZE_MAX);

/// `compute()` once per distinct input facts of the node whose subgraph is `body` (a body
/// identifies its node): a nested rule re-run by an enclosing fixed point returns the same facts,
/// fresh symbols included.
Result<std::vector<Fact>> memoizedRule(InferContext &ctx, const Graph &body,
                                       const std::function<Result<std::vector<Fact>>()> &compute);

/// The graph attribute `name`, with an error naming it when it is missing or not a graph.
Result<const Graph *> bodyAttr(InferContext &ctx, const std::string &name);

} // namespace sf
