// The self-check (eval/check.h): it catches a fact that is wrong, and the inference passes it on
// every golden graph the executor can run (DESIGN.md's soundness property over the golden corpus).
#include "shapeflow/eval/check.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"

#include <gtest/gtest.h>


namespace sf::eval {
namespace {

std::unique_ptr<Graph> inferred(const std::string &text) {
  auto g = parseGraph(text);
  if (!g.ok()) return nullptr;
  auto out = std::make_unique<Graph>(std::move(*g));
  Diagnostics d;
  inferGraph(*out, d);
  return out;
}

TEST(Check, CatchesAWrongFact) {
  auto g = inferred("symbol N 1..8\ngraph main(x: f32[N,6]) {\n  y = Reshape(x, s)\n  s = Constant() {value = i64[2] [-1, 3]}\n  return y\n}\n");
  if (!g) g = inferred("symbol N 1..8\ngraph main(x: f32[N,6]) {\n  s = Constant() {value = i64[2] [-1, 3]}\n  y = Reshape(x, s)\n  return y\n}\n");
  ASSERT_TRUE(g);
  ExprScope scope = g->enter();
  auto good = checkInference(*g, {});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->mismatches(), 0u);
  EXPECT_GT(good->samples.size(), 1u);
  // Corrupt y's fact: [N, 3] instead of [2*N, 3].
  for (Node &n : g->nodes)
    if (n.opType == "Reshape") n.outputs[0].fact.shape[0] = g->fact(g->inputs[0]).shape[0];
  auto bad = checkInference(*g, {});
  ASSERT_TRUE(bad.ok());
  ASSERT_GT(bad->mismatches(), 0u);
  EXPECT_NE(bad->samples[0].mismatches[0].find("node 'y' (Reshape) output 0"), std::string::npos)
      << bad->samples[0].mismatches[0];
}

TEST(Check, GivenBindingsAreUsed) {
  auto g = inferred("graph main(x: f32[N,3]) {\n  y = Relu(x)\n  return y\n}\n");
  ASSERT_TRUE(g);
  CheckOptions o;
  o.bindings = {{{"N", 5}}, {{"N", 9}}};
  auto r = checkInference(*g, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->samples.size(), 2u);
  EXPECT_TRUE(r->samples[1].ran);
  EXPECT_EQ(r->samples[1].binding.at("N"), 9);
}

} // namespace
} // namespace sf::eval
