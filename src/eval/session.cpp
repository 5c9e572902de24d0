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

/// `g` inferred again with its tensor inputs at the sizes of `inputs`, then simplified; none
/// where inference at these sizes reports an error or an input is not given as a tensor.
std::optional<Graph> foldedForSizes(const Graph &g, const std::map<std::string, Value> &inputs,
                                    std::vector<rewrite::PassCount> &counts) {
  Graph h = g.clone();
  ExprScope scope = h.enter();
  for (OutletId o : h.inputs) {
    Outlet &in = h.outlet(o);
    auto it = inputs.find(in.name);
    if (it == inputs.end()) continue; // an optional input left out
    if (!it->second.isTensor()) return std::nullopt;
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
  std::vector<Fact> declared; // the inputs' facts before the fold
  bool rewritten = false;
  if (options.fuse) {
    const size_t before = opCount(s->graph);
    std::optional<Graph> folded;
    {
      ExprScope scope = s->graph.enter();
      folded = foldedForSizes(s->graph, inputs, folds);
    }
    if (folded) {
      for (OutletId o : s->graph.inputs) declared.push_back(s->graph.outlet(o).fact);
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
      } else {
        declared.clear();
      }
    }
  }
  ExprScope scope = s->graph.enter();
  if (options.fuse && !rewritten) {
    rewrite::PassContext ctx{s->graph, evalRegistry(), nullptr};
    auto passes = rewrite::executionPasses();
    SF_ASSIGN(s->rewrites, rewrite::runPasses(ctx, passes));
  }
  // The inputs' own facts come back once the rewrites are done: the run checks the data against
  // what the model admits (a size outside its range is an error, not a fold at that size).
  for (size_t i = 0; i < declared.size() && i < s->graph.inputs.size(); ++i)
    s->graph.outlet(s->graph.inputs[i]).fact = declared[i];
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
