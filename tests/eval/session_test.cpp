// A model made ready to run (src/eval/session.cpp): what the inputs' sizes fix is folded before
// the run (shape computations become constants, the nodes only they read go), the outputs are
// those of the graph as written, the folded plan refuses data of other sizes, data outside what
// the model admits is still an error, and nothing is folded where inference at the fed sizes
// fails.
#include "shapeflow/eval/plan.h"
#include "shapeflow/eval/session.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sf::eval {
namespace {

// Reshape's target from the input's own dims (an exporter's Shape -> Gather -> Unsqueeze ->
// Concat chain), then a Relu.
const char *kShapeChain = R"(graph main(x: f32[N,S,8]) {
  sh = Shape(x)
  i0 = Constant() {value = i64[] 0}
  i1 = Constant() {value = i64[] 1}
  n = Gather(sh, i0) {axis = 0}
  s = Gather(sh, i1) {axis = 0}
  ax = Constant() {value = i64[1] [0]}
  n1 = Unsqueeze(n, ax)
  s1 = Unsqueeze(s, ax)
  h = Constant() {value = i64[2] [2, 4]}
  t = Concat(n1, s1, h) {axis = 0}
  y = Reshape(x, t)
  z = Relu(y)
  return z
})";

Graph inferred(const char *text, const InferOptions &options = {}) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  Graph graph = std::move(*g);
  EXPECT_TRUE(applyInputs(graph, options).ok());
  Diagnostics d;
  inferGraph(graph, d, options);
  EXPECT_FALSE(d.hasErrors());
  return graph;
}

std::map<std::string, Value> feed(const std::string &name, ElementType type, const Shape &shape) {
  return {{name, Value(std::make_shared<const Tensor>(*randomTensor(type, shape, 3)))}};
}

size_t opsOfType(const Graph &g, const std::string &op) {
  size_t n = 0;
  for (const Node &node : g.nodes) n += node.opType == op;
  return n;
}

TEST(Session, WhatTheInputsSizesFixIsFoldedAndTheOutputsStayTheSame) {
  const auto inputs = feed("x", ElementType::F32, {2, 3, 8});
  auto folded = prepareSession(inferred(kShapeChain), inputs);
  ASSERT_TRUE(folded.ok()) << folded.error().message;
  auto plain = prepareSession(inferred(kShapeChain), inputs, {.fuse = false});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  // Shape, the Gathers, Unsqueezes and Concat go: Reshape's target is a constant.
  EXPECT_EQ(8u, (*folded)->nodesBeforeFold);
  EXPECT_EQ(2u, (*folded)->nodesAfterFold);
  EXPECT_EQ(0u, opsOfType((*folded)->graph, "Shape"));
  EXPECT_EQ(0u, opsOfType((*folded)->graph, "Concat"));
  EXPECT_EQ(1u, opsOfType((*plain)->graph, "Shape"));
  auto a = run(*(*folded)->plan, inputs);
  auto b = run(*(*plain)->plan, inputs);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(1u, a->outputs.size());
  const Tensor &x = *a->outputs[0].tensor(), &y = *b->outputs[0].tensor();
  EXPECT_EQ((Shape{2, 3, 2, 4}), x.shape());
  EXPECT_TRUE(x == y);
  // What was folded holds at these sizes only: the folded plan refuses data of other sizes (the
  // plan as written runs them).
  const auto other = feed("x", ElementType::F32, {4, 3, 8});
  auto refused = run(*(*folded)->plan, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string::npos, refused.error().message.find("outside what the model admits")) << refused.error().message;
  EXPECT_TRUE(run(*(*plain)->plan, other).ok());
}

TEST(Session, DataOutsideWhatTheModelAdmitsIsStillAnError) {
  InferOptions o;
  o.dims = {DimBound{"N", {3, 4}}};
  const auto inputs = feed("x", ElementType::F32, {2, 3, 8});
  auto s = prepareSession(inferred(kShapeChain, o), inputs);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = run(*(*s)->plan, inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("outside what the model admits")) << r.error().message;
}

TEST(Session, NothingIsFoldedWhereInferenceAtTheFedSizesFails) {
  // N is one size for both inputs; fed 2 and 3 the Add cannot broadcast.
  const char *text = R"(graph main(a: f32[N], b: f32[N]) {
  c = Add(a, b)
  return c
})";
  std::map<std::string, Value> inputs = feed("a", ElementType::F32, {2});
  inputs.merge(feed("b", ElementType::F32, {3}));
  auto s = prepareSession(inferred(text), inputs);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(0u, (*s)->nodesAfterFold);
  auto r = run(*(*s)->plan, inputs);
  EXPECT_FALSE(r.ok());
}

} // namespace
} // namespace sf::eval
