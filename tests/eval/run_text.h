// Test helper: a text-form graph inferred and run by the executor, with typed tensor builders.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/rewrite/rewrite.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace sf::eval {

struct Ran {
  std::unique_ptr<Graph> graph;
  Result<RunResult> result = makeError("not run");
};

/// `rewritten`: through the executor's rewrites first (rewrite::executionPasses), as `shapeflow
/// run` runs a model.
template <class In = Tensor>
Ran runText(const char *text, std::map<std::string, In> inputs, RunOptions options = {}, bool rewritten = false) {
  Ran r;
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  if (!g.ok()) return r;
  r.graph = std::make_unique<Graph>(std::move(*g));
  Diagnostics d;
  inferGraph(*r.graph, d);
  if (rewritten) {
    rewrite::PassContext ctx{*r.graph, evalRegistry(), nullptr};
    auto passes = rewrite::executionPasses();
    auto counts = rewrite::runPasses(ctx, passes);
    EXPECT_TRUE(counts.ok()) << (counts.ok() ? "" : counts.error().message);
  }
  r.result = run(*r.graph, inputs, options);
  return r;
}

inline Tensor f32(Shape s, std::vector<double> v) { return *Tensor::fromDoubles(ElementType::F32, s, v); }
inline Tensor i64(Shape s, std::vector<int64_t> v) { return *Tensor::fromInt64s(s, v); }

inline std::vector<double> values(const Value &t) {
  return *t->toDoubles(size_t(t->elementCount()));
}

} // namespace sf::eval
