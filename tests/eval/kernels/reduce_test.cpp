// Tests of the reduction kernels (src/eval/kernels/reduce.cpp) where no axis is reduced: with
// noop_with_empty_axes and empty axes each element is reduced alone, which still maps it for the
// norms and logarithms (values from onnxruntime 1.30 on the same input: ReduceL1 and ReduceL2
// give |x|, ReduceSumSquare x*x, ReduceLogSum log x, the others x); before the opset where the
// axes became an input the attribute is not the op's and every axis is reduced.
#include "../run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sf::eval {
namespace {

const std::vector<double> kX = {-1.5, 2.0, 0.25, -3.0};

struct Case {
  const char *op;
  std::vector<double> expected;
};

Ran runReduce(const std::string &op, int opset, bool axesInput) {
  std::string text = fmt::format("opset {}\ngraph main(x: f32[2,2]) {{\n", opset);
  if (axesInput) text += "  e = Constant() {value = i64[0] []}\n";
  text += fmt::format("  y = {}(x{}) {{noop_with_empty_axes = 1}}\n  return y\n}}\n", op, axesInput ? ", e" : "");
  return runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({2, 2}, kX)}});
}

TEST(ReduceKernels, NoopWithEmptyAxesReducesEachElementAloneAsOnnxruntimeDoes) {
  const double nan = std::nan("");
  const std::vector<Case> cases = {
      {"ReduceL1", {1.5, 2.0, 0.25, 3.0}},
      {"ReduceL2", {1.5, 2.0, 0.25, 3.0}},
      {"ReduceSumSquare", {2.25, 4.0, 0.0625, 9.0}},
      {"ReduceLogSum", {nan, std::log(2.0), std::log(0.25), nan}},
      {"ReduceLogSumExp", kX},
      {"ReduceSum", kX},
      {"ReduceMean", kX},
      {"ReduceMax", kX},
      {"ReduceMin", kX},
      {"ReduceProd", kX},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.op);
    Ran r = runReduce(c.op, 18, true);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    const Value &y = r.result->outputs[0];
    EXPECT_EQ(y->shape(), (Shape{2, 2}));
    std::vector<double> got = values(y);
    ASSERT_EQ(got.size(), c.expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(c.expected[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
      else EXPECT_NEAR(got[i], c.expected[i], 1e-6) << i;
    }
  }
}

TEST(ReduceKernels, NoopBeforeTheAxesInputIsNotTheOpsAndEveryAxisIsReduced) {
  // ReduceL1 at opset 13 and ReduceSum at 11 (their axes still attributes): sum of |x| and of x.
  Ran l1 = runReduce("ReduceL1", 13, false);
  ASSERT_TRUE(l1.result.ok()) << l1.result.error().message;
  EXPECT_EQ(l1.result->outputs[0]->shape(), (Shape{1, 1}));
  EXPECT_NEAR(values(l1.result->outputs[0])[0], 6.75, 1e-6);
  Ran sum = runReduce("ReduceSum", 11, false);
  ASSERT_TRUE(sum.result.ok()) << sum.result.error().message;
  EXPECT_EQ(sum.result->outputs[0]->shape(), (Shape{1, 1}));
  EXPECT_NEAR(values(sum.result->outputs[0])[0], -2.25, 1e-6);
}

} // namespace
} // namespace sf::eval
