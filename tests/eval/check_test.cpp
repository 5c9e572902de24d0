// The self-check (eval/check.h): it catches a fact that is wrong, and the inference passes it on
// every golden graph the executor can run (the soundness property over the golden corpus).
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

const char *kMaskModel = R"(symbol B 1..
symbol S 1..
symbol P 0..
symbol L 1..
graph main(q: f32[B,4,S,16], k: f32[B,4,P,16], kn: f32[B,4,S,16], m: f32[B,1,1,L]) {
  kk = Concat(k, kn) {axis = 2}
  kt = Transpose(kk) {perm = [0, 1, 3, 2]}
  s = MatMul(q, kt)
  y = Add(s, m)
  return y
}
)";

TEST(Check, SamplesMeetTheModelsConditionsAndAllRun) {
  // The mask's length L must broadcast against P + S: drawn alone, most samples would stop at
  // the Add. Drawn from what inference learned, every one runs.
  auto g = inferred(kMaskModel);
  ASSERT_TRUE(g);
  CheckOptions o;
  o.samples = 5;
  auto r = checkInference(*g, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->requested, 5u);
  ASSERT_EQ(r->samples.size(), 5u);
  for (const auto &s : r->samples) EXPECT_TRUE(s.ran) << s.error;
  EXPECT_TRUE(r->passed());
}

TEST(Check, DrawnSizesWhoseInputsExceedTheBudgetAreHalvedUntilTheyFit) {
  // Four sizes drawn up to about 64 above their minimums make inputs of up to ~70^4 floats; with
  // a budget of 4 MB most would stop before running. Halved towards the minimums, each runs,
  // still within the ranges (N at least 2).
  auto g = inferred("symbol N 2..\ngraph main(x: f32[N,T,H,W]) {\n  y = Relu(x)\n  return y\n}\n");
  ASSERT_TRUE(g);
  CheckOptions o;
  o.samples = 4;
  o.maxMemory = 4 << 20;
  auto r = checkInference(*g, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 4u);
  for (const auto &s : r->samples) {
    EXPECT_TRUE(s.ran) << s.error;
    int64_t elements = 1;
    for (const auto &[name, v] : s.binding) elements *= v;
    EXPECT_LE(elements * 8, o.maxMemory);
    EXPECT_GE(s.binding.at("N"), 2);
  }
  EXPECT_TRUE(r->passed());
}

TEST(Check, FewerSamplesRunThanAskedIsAFailure) {
  auto g = inferred(kMaskModel);
  ASSERT_TRUE(g);
  CheckOptions o;
  o.bindings = {{{"B", 1}, {"S", 2}, {"P", 3}, {"L", 5}}, {{"B", 1}, {"S", 2}, {"P", 3}, {"L", 4}}};
  auto r = checkInference(*g, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->samples.size(), 2u);
  EXPECT_TRUE(r->samples[0].ran);
  EXPECT_FALSE(r->samples[1].ran);
  EXPECT_NE(r->samples[1].error.find("break a requirement"), std::string::npos) << r->samples[1].error;
  EXPECT_EQ(r->ran(), 1u);
  EXPECT_EQ(r->mismatches(), 0u);
  EXPECT_FALSE(r->passed()) << "one of two samples ran: not a pass";
  // A size the model does not have is an error, not a sample that checks nothing.
  o.bindings = {{{"T", 3}}};
  auto bad = checkInference(*g, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no size named 'T'"), std::string::npos) << bad.error().message;
}

} // namespace
} // namespace sf::eval
