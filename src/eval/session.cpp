// A model made ready to run (eval/session.h).
#include "shapeflow/eval/session.h"

#include <chrono>

namespace sf::eval {

Result<std::unique_ptr<Session>> prepareSession(Graph inferred, const std::map<std::string, Value> &inputs,
                                                const SessionOptions &options) {
  auto s = std::make_unique<Session>();
  s->graph = std::move(inferred);
  ExprScope scope = s->graph.enter();
  if (options.fuse) {
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
