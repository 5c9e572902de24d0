// A model made ready to run (eval/session.h).
#include "shapeflow/eval/session.h"

#include "shapeflow/eval/evaluator.h"
#include "shapeflow/infer/infer.h"

#include <chrono>

namespace sf::eval {
namespace {

size_t opCount(const Graph &g) {
  size_t n = 0;
  for (const Node &node : g.nodes)
    n += node.kind == NodeKind::Op && !node.isConstant();
  return n;
}

/// `t` is of the type and within the sizes `declared` allows.
bool admits(const Fact &declared, const Tensor &t) {
  if (declared.type != ElementType::Undefined && declared.type != t.type()) return false;
  if (!declared.shape.rankIsStatic()) return true;
  if (declared.shape.size() != t.shape().size()) return false;
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const Dimension &d = declared.shape[i];
    if (t.shape()[i] < d.minLength() || (d.hasUpperBound() && t.shape()[i] > d.maxLength())) return false;
  }
  return true;
}

/// `g` inferred again with its tensor inputs at the sizes of `inputs`, then simplified; its
/// inputs' facts are those sizes, so that the plan made from it refuses data of other sizes
/// (what was folded holds for these only). None where an input is not given as a tensor or is
/// outside what the model admits (the run then says so), or where inference at these sizes
/// reports an error.
std::optional<Graph> foldedForSizes(const Graph &g, const std::map<std::string, Value> &inputs,
                                    std::vector<rewrite::PassCount> &counts) {
  Graph h = g.clone();
  ExprScope scope = h.enter();
  for (OutletId o : h.inputs) {
    Outlet &in = h.outlet(o);
    auto it = inputs.find(in.name);
    if (it == inputs.end()) continue; // an optional input left out
    if (!it->second.isTensor() || !it->second.tensor() || !admits(in.fact, *it->second.tensor())) return std::nullopt;
    const Tensor &t = *it->second.tensor();
    in.fact = Fact::known(t.type(), PartialShape(t.shape()));
  }
  Diagnostics diags;
  inferGraph(h, diags);
  if (diags.hasErrors()) return std::nullopt;
  KernelEvaluator evaluator(int64_t(64) << 20);
  rewrite::PassContext ctx{h, evalRegistry(), &evaluator};
  auto passes = rewrite::simplifyPasses();
  auto done = rewrite::runPasses(ctx, passes, 16);
  if (!done.ok() || !h.verify().ok()) return std::nullopt;
  counts = std::move(*done);
  return h;
}

} // namespace

Result<std::unique_ptr<Session>> prepareSession(Graph inferred, const std::map<std::string, Value> &inputs,
                                                const SessionOptions &options) {
  auto s = std::make_unique<Session>();
  s->graph = std::move(inferred);
  std::vector<rewrite::PassCount> folds;
  bool rewritten = false;
  if (options.fuse) {
    const size_t before = opCount(s->graph);
    std::optional<Graph> folded;
    {
      ExprScope scope = s->graph.enter();
      folded = foldedForSizes(s->graph, inputs, folds);
    }
    if (folded) {
      // The executor's rewrites on the folded graph; where they fail there, the graph as it came.
      ExprScope scope = folded->enter();
      rewrite::PassContext ctx{*folded, evalRegistry(), nullptr};
      auto passes = rewrite::executionPasses();
      if (auto counts = rewrite::runPasses(ctx, passes); counts.ok()) {
        s->graph = std::move(*folded);
        s->nodesBeforeFold = before;
        s->nodesAfterFold = opCount(s->graph);
        s->rewrites = std::move(folds);
        s->rewrites.insert(s->rewrites.end(), counts->begin(), counts->end());
        rewritten = true;
      }
    }
  }
  ExprScope scope = s->graph.enter();
  if (options.fuse && !rewritten) {
    rewrite::PassContext ctx{s->graph, evalRegistry(), nullptr};
    auto passes = rewrite::executionPasses();
    SF_ASSIGN(s->rewrites, rewrite::runPasses(ctx, passes));
  }
  if (options.arena) {
    auto started = std::chrono::steady_clock::now();
    auto layout = planArena(s->graph, inputs);
    s->planMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (layout.ok()) s->arena = std::move(*layout);
    else s->noArena = layout.error().message;
  } else {
    s->noArena = "not asked for";
  }
  SF_ASSIGN(s->plan, prepare(s->graph, PrepareOptions{nullptr, false, s->arena ? &*s->arena : nullptr}));
  return s;
}

} // namespace sf::eval
