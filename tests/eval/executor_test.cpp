// The executor (eval/eval.h): kernels on small text-form graphs against values computed by hand,
// tensors freed after their last reader, inputs the model's facts exclude, the memory budget,
// integer division by zero, and the mode-2 check catching a kernel that disagrees with its rule.
#include "shapeflow/eval/eval.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sf::eval {
namespace {

TEST(Executor, BroadcastArithmeticMatMulAndSoftmax) {
  Ran r = runText(R"(
graph main(x: f32[2,3], w: f32[3,2], b: f32[2]) {
  m = MatMul(x, w)
  a = Add(m, b)
  s = Softmax(a) {axis = -1}
  return a, s
}
)",
                  {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"w", f32({3, 2}, {1, 0, 0, 1, 1, 1})},
                   {"b", f32({2}, {10, 20})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  // x @ w = [[4, 5], [10, 11]]; + b = [[14, 25], [20, 31]].
  EXPECT_EQ(values(r.result->outputs[0]), (std::vector<double>{14, 25, 20, 31}));
  auto s = values(r.result->outputs[1]);
  EXPECT_NEAR(s[0], 1 / (1 + std::exp(11.0)), 1e-7);
  EXPECT_NEAR(s[0] + s[1], 1.0, 1e-6);
}

TEST(Executor, ConvWithPadsStridesAndGroups) {
  // A 3x3 input of ones, a 2x2 kernel of ones, pads 1, stride 2: the windows at the corners
  // see 1 element, so every output is 1; with two groups each output channel sees its own.
  Ran r = runText(R"(
graph main(x: f32[1,2,3,3], w: f32[2,1,2,2]) {
  y = Conv(x, w) {pads = [1, 1, 1, 1], strides = [2, 2], group = 2}
  return y
}
)",
                  {{"x", f32({1, 2, 3, 3}, std::vector<double>(18, 1))},
                   {"w", f32({2, 1, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->outputs[0]->shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values(r.result->outputs[0]), (std::vector<double>{1, 2, 2, 4, 2, 4, 4, 8}));
}

TEST(Executor, ShapeSubgraphReshapeAndSlice) {
  Ran r = runText(R"(
graph main(x: f32[N,6]) {
  s = Shape(x)
  c0 = Constant() {value = i64[] 0}
  n = Gather(s, c0) {axis = 0}
  k = Constant() {value = i64[1] [-1]}
  z = Constant() {value = i64[1] [0]}
  u = Unsqueeze(n, z)
  t = Concat(u, k) {axis = 0}
  y = Reshape(x, t)
  st = Constant() {value = i64[1] [1]}
  en = Constant() {value = i64[1] [100]}
  ax = Constant() {value = i64[1] [1]}
  sl = Slice(y, st, en, ax)
  return sl
}
)",
                  {{"x", f32({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->outputs[0]->shape(), (Shape{2, 5}));
  EXPECT_EQ(values(r.result->outputs[0]), (std::vector<double>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));
}

TEST(Executor, ReluAndClipKeepNanAndBoundTheRest) {
  // As ONNX writes them (max(0, x); min(max(x, lo), hi)) and onnxruntime computes them: a NaN
  // stays NaN, infinities are bounded like any value.
  const double nan = std::nan("");
  Ran r = runText(R"(
graph main(x: f32[5]) {
  lo = Constant() {value = f32[] 0}
  hi = Constant() {value = f32[] 6}
  y = Relu(x)
  z = Clip(x, lo, hi)
  return y, z
}
)", std::map<std::string, Tensor>{{"x", f32({5}, {nan, -INFINITY, INFINITY, -2, 7})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  auto y = values(r.result->outputs[0]), z = values(r.result->outputs[1]);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(z[0]));
  EXPECT_EQ((std::vector<double>(y.begin() + 1, y.end())), (std::vector<double>{0, INFINITY, 0, 7}));
  EXPECT_EQ((std::vector<double>(z.begin() + 1, z.end())), (std::vector<double>{0, 6, 0, 6}));
}

TEST(Executor, CastsToFourBitIntegersRoundHalvesAwayFromZeroAndWrap) {
  // As onnxruntime 1.30: the nearest integer, halves away from zero (2.5 is 3, -7.5 is -8), then
  // the low four bits (-1.75 is -2, 14 as a uint4). The kernel had truncated (0.75 was 0).
  const std::vector<double> x = {0.25, 0.75, -7.5, 5.5, 6.5, 1.25, 2.5, 3.5, -1.75, 4.5};
  const std::pair<int, std::vector<double>> cases[] = {
      {22, {0, 1, -8, 6, 7, 1, 3, 4, -2, 5}}, // int4
      {21, {0, 1, 8, 6, 7, 1, 3, 4, 14, 5}},  // uint4
  };
  for (const auto &[to, want] : cases) {
    std::string text = fmt::format("opset 21\ngraph main(x: f32[10]) {{\n  y = Cast(x) {{to = {}}}\n"
                                   "  z = Cast(y) {{to = 1}}\n  return z\n}}\n",
                                   to);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({10}, x)}});
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    EXPECT_EQ(values(r.result->outputs[0]), want) << "to " << to;
  }
}

TEST(Executor, NegAndAbsOfTheLowestIntegerWrap) {
  // ONNX's integers are two's complement: -(-2^63) is -2^63 (C++'s negation of it is undefined).
  const int64_t lowest = std::numeric_limits<int64_t>::lowest();
  Ran r = runText("graph main(x: i64[3]) {\n  n = Neg(x)\n  a = Abs(x)\n  return n, a\n}\n",
                  std::map<std::string, Tensor>{{"x", i64({3}, {lowest, -5, 7})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(*r.result->outputs[0]->toInt64s(3), (std::vector<int64_t>{lowest, 5, -7}));
  EXPECT_EQ(*r.result->outputs[1]->toInt64s(3), (std::vector<int64_t>{lowest, 5, 7}));
}

TEST(Executor, RunsOfBodiesPastTheirLimitAreAnError) {
  const char *text = R"(
opset 17
graph main(n: i64[], x: f32[2]) {
  t = Constant() {value = bool[] [1]}
  out = Loop(n, t, x) {
    body = graph body(it: i64[], c: bool[], acc: f32[2]) {
      next = Neg(acc)
      co = Identity(c)
      return co, next
    }
  }
  return out
}
)";
  std::map<std::string, Tensor> inputs{{"n", i64({}, {100})}, {"x", f32({2}, {1, -2})}};
  RunOptions options;
  options.maxBodyRuns = 100;
  Ran within = runText(text, inputs, options);
  ASSERT_TRUE(within.result.ok()) << within.result.error().message;
  EXPECT_EQ(values(within.result->outputs[0]), (std::vector<double>{1, -2}));
  options.maxBodyRuns = 99;
  Ran past = runText(text, inputs, options);
  ASSERT_FALSE(past.result.ok());
  EXPECT_NE(past.result.error().message.find("more than 99 runs of bodies"), std::string::npos)
      << past.result.error().message;
}

TEST(Executor, RangeOfNanOrInfiniteBoundsIsAnError) {
  // ceil((limit - start) / delta) is NaN or infinite: no number of elements (converting it to an
  // integer is undefined), an error naming the node, with and without the rule's check.
  const char *text = "graph main(s: f32[], l: f32[], d: f32[]) {\n  r = Range(s, l, d)\n  return r\n}\n";
  for (double limit : {double(NAN), double(INFINITY)})
    for (bool check : {true, false}) {
      RunOptions options;
      options.checkRules = check;
      Ran r = runText(text,
                      std::map<std::string, Tensor>{{"s", f32({}, {0})}, {"l", f32({}, {limit})}, {"d", f32({}, {1})}},
                      options);
      ASSERT_FALSE(r.result.ok()) << limit << " " << check;
      EXPECT_NE(r.result.error().message.find("node 'r' (Range)"), std::string::npos) << r.result.error().message;
    }
}

TEST(Executor, AReshapeTargetOfMoreThan2p63ElementsIsAnError) {
  Ran r = runText("graph main(x: f32[2], s: i64[3]) {\n  y = Reshape(x, s)\n  return y\n}\n",
                  std::map<std::string, Tensor>{{"x", f32({2}, {1, 2})},
                                                {"s", i64({3}, {int64_t(1) << 62, 5, -1})}},
                  RunOptions{.checkRules = false});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("node 'y' (Reshape)"), std::string::npos) << r.result.error().message;
}

// An empty tensor of many dims: the loops over the dims before and after an axis have nothing to
// visit (the eval fuzzer's ArgMax over a rank-192 empty tensor counted 2.6e10 empty iterations
// and never ended). Each kernel here returns at once with an empty output; ArgMax over an empty
// axis is an error, as in onnxruntime.
TEST(Executor, KernelsOverAnEmptyTensorOfManyDimsReturnAtOnce) {
  std::string dims;
  for (int i = 0; i < 14; ++i) dims += "7,";
  const std::string shape = dims + "2,0"; // 7^14 (6.8e11) before the axis, 2 along it, 0 after
  Shape s(14, 7);
  s.push_back(2);
  s.push_back(0);
  const Tensor x = f32(s, {});
  for (const char *op : {"y = ArgMax(x) {axis = 14}", "y = CumSum(x, ax)", "y = Softmax(x) {axis = 14}",
                         "y, yi = TopK(x, k) {axis = 14}", "y, z = Split(x) {axis = 14, num_outputs = 2}"}) {
    std::string text = fmt::format("graph main(x: f32[{}]) {{\n  ax = Constant() {{value = i64[] 14}}\n"
                                   "  k = Constant() {{value = i64[1] [1]}}\n  {}\n  return y\n}}\n",
                                   shape, op);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", x}});
    ASSERT_TRUE(r.result.ok()) << op << ": " << r.result.error().message;
    EXPECT_EQ(0, r.result->outputs[0].tensor()->elementCount()) << op;
  }
  Ran r = runText("graph main(x: f32[2,0,3]) {\n  y = ArgMax(x) {axis = 1}\n  return y\n}\n",
                  std::map<std::string, Tensor>{{"x", f32({2, 0, 3}, {})}}, RunOptions{.checkRules = false});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("is empty: there is no index to give"), std::string::npos)
      << r.result.error().message;
}

TEST(Executor, IntegerDivisionByZeroIsAnErrorNamingTheNode) {
  Ran r = runText("graph main(a: i64[2], b: i64[2]) {\n  q = Div(a, b)\n  return q\n}\n",
                  {{"a", i64({2}, {4, 5})}, {"b", i64({2}, {2, 0})}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("node 'q' (Div): integer division by zero"), std::string::npos)
      << r.result.error().message;
}

/// Index kernels given inputs that do not fit: errors naming the shapes, from the op's rule
/// (applied to the actual inputs before the kernel) and, with the rules not applied (a repeated
/// run), from the kernel itself, which must not read past them. Found by the arena's property
/// test, where the bytes read past the end differed between the heap and the arena.
TEST(Executor, IndexKernelsRefuseInputsThatDoNotFit) {
  auto fails = [](const char *text, std::map<std::string, Tensor> inputs, const std::string &says) {
    Ran r = runText(text, inputs);
    ASSERT_FALSE(r.result.ok()) << text;
    EXPECT_NE(r.result.error().message.find("node 'y'"), std::string::npos) << r.result.error().message;
    RunOptions unchecked;
    unchecked.checkRules = false;
    Ran k = runText(text, inputs, unchecked);
    ASSERT_FALSE(k.result.ok()) << text;
    EXPECT_NE(k.result.error().message.find(says), std::string::npos) << k.result.error().message;
  };
  std::vector<double> d64(64, 1.0), u24(24, 2.0);
  fails("opset 16\ngraph main(d: f32[4,4,4], i: i64[2,1], u: f32[2,4,3]) {\n  y = ScatterND(d, i, u)\n  return y\n}\n",
        {{"d", f32({4, 4, 4}, d64)}, {"i", i64({2, 1}, {0, 1})}, {"u", f32({2, 4, 3}, u24)}},
        "updates [2,4,3] are not indices [2,1] and data [4,4,4]'s [2,4,4]");
  fails("opset 10\ngraph main(x: f32[2,2], l: i64[2]) {\n  y = ReverseSequence(x, l)\n  return y\n}\n",
        {{"x", f32({2, 2}, {1, 2, 3, 4})}, {"l", i64({2}, {1, 5})}}, "a sequence length of 5 in 2 steps");
  fails("graph main(x: f32[2,2], i: i64[2,3]) {\n  y = GatherElements(x, i) {axis = 0}\n  return y\n}\n",
        {{"x", f32({2, 2}, {1, 2, 3, 4})}, {"i", i64({2, 3}, {0, 1, 1, 0, 0, 0})}},
        "indices [2,3] are longer than data [2,2] along axis 1");
  fails("graph main(x: f32[2,3], i: i64[3,1]) {\n  y = GatherND(x, i) {batch_dims = 1}\n  return y\n}\n",
        {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"i", i64({3, 1}, {0, 1, 2})}},
        "differ in batch dim 0");
  // A per-row zero point of the wrong length (fuzz_eval: read past its end).
  auto u8 = [](Shape sh, std::vector<double> v) { return *Tensor::fromDoubles(ElementType::U8, sh, v); };
  fails("opset 10\ngraph main(a: u8[2,3], b: u8[3,2], z: u8[5]) {\n  y = MatMulInteger(a, b, z)\n  return y\n}\n",
        {{"a", u8({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", u8({3, 2}, {1, 2, 3, 4, 5, 6})}, {"z", u8({5}, {1, 1, 1, 1, 1})}},
        "a_zero_point has 5 elements; it must have one, or one per index of axis 0 of [2,3]");
  // A per-channel zero point of the wrong length.
  fails("opset 10\ngraph main(x: u8[1,3,3,3], w: u8[2,3,1,1], z: u8[4]) {\n  y = ConvInteger(x, w, , z)\n  return y\n}\n",
        {{"x", u8({1, 3, 3, 3}, std::vector<double>(27, 1))}, {"w", u8({2, 3, 1, 1}, std::vector<double>(6, 1))},
         {"z", u8({4}, {1, 1, 1, 1})}},
        "w_zero_point has 4 elements; it must have one, or one per index of axis 0 of [2,3,1,1]");
}

/// Inputs fuzz_eval found kernels reading wrongly, each now an error naming the node or a
/// defined result, with the rules applied and without (a kernel must not depend on them).
TEST(Executor, KernelsGivenInputsTheyCannotReadStopOrSaturate) {
  for (bool rules : {true, false}) {
    SCOPED_TRACE(rules ? "rules applied" : "rules off");
    RunOptions o;
    o.checkRules = rules;
    // Add whose first input is absent.
    Ran add = runText("graph main(x: f32[2]) {\n  y = Add(, x)\n  return y\n}\n",
                      std::map<std::string, Tensor>{{"x", f32({2}, {1, 2})}}, o);
    ASSERT_FALSE(add.result.ok());
    EXPECT_NE(add.result.error().message.find("node 'y' (Add)"), std::string::npos) << add.result.error().message;
    // PRelu with an i64 X and an i32 slope.
    Ran pr = runText("graph main(x: i64[4], s: i32[1]) {\n  y = PRelu(x, s)\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", i64({4}, {-1, 2, -3, 4})},
                                                   {"s", *Tensor::fromInt64s({1}, {2}, ElementType::I32)}}, o);
    ASSERT_FALSE(pr.result.ok());
    EXPECT_NE(pr.result.error().message.find("node 'y' (PRelu)"), std::string::npos) << pr.result.error().message;
    // LayerNormalization whose Scale does not broadcast to the normalised shape.
    Ran ln = runText("graph main(x: f32[2,3], s: f32[2,3,1]) {\n  y = LayerNormalization(x, s)\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                                                   {"s", f32({2, 3, 1}, {1, 1, 1, 1, 1, 1})}}, o);
    ASSERT_FALSE(ln.result.ok());
    EXPECT_NE(ln.result.error().message.find("node 'y' (LayerNormalization)"), std::string::npos)
        << ln.result.error().message;
    // ReduceMax of an empty i64 row: the type's lowest value (ONNX), not -inf converted.
    Ran rm = runText("opset 18\ngraph main(x: i64[2,0]) {\n  k = Constant() {value = i64[1] [1]}\n"
                     "  y = ReduceMax(x, k) {keepdims = 0}\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", i64({2, 0}, {})}}, o);
    ASSERT_TRUE(rm.result.ok()) << rm.result.error().message;
    EXPECT_EQ(*rm.result->outputs[0]->toInt64s(2), (std::vector<int64_t>{INT64_MIN, INT64_MIN}));
    // Clip of i64 before opset 11: the default float bounds saturate to the type's range.
    Ran cl = runText("opset 6\ngraph main(x: i64[3]) {\n  y = Clip(x)\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", i64({3}, {-5, 0, 7})}}, o);
    if (cl.result.ok()) EXPECT_EQ(*cl.result->outputs[0]->toInt64s(3), (std::vector<int64_t>{-5, 0, 7}));
    // Resize of an empty axis to a longer one (sizes): nothing to sample from.
    Ran rs = runText("opset 13\ngraph main(x: f32[1,0]) {\n  sz = Constant() {value = i64[2] [1, 3]}\n"
                     "  y = Resize(x, , , sz)\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", f32({1, 0}, {})}}, o);
    ASSERT_FALSE(rs.result.ok());
    EXPECT_NE(rs.result.error().message.find("node 'y' (Resize)"), std::string::npos) << rs.result.error().message;
    // Scan whose scan_output_axes lists fewer entries than it has scan outputs (none here).
    Ran sc = runText("opset 18\ngraph main(init: f32[2], x: f32[3,2]) {\n"
                     "  final, ys = Scan(init, x) {\n    num_scan_inputs = 1, scan_output_axes = [],\n"
                     "    body = graph body(acc: f32[2], xi: f32[2]) {\n      n = Add(acc, xi)\n"
                     "      o = Identity(n)\n      return n, o\n    }\n  }\n  return final, ys\n}\n",
                     std::map<std::string, Tensor>{{"init", f32({2}, {1, 2})}, {"x", f32({3, 2}, {1, 2, 3, 4, 5, 6})}}, o);
    ASSERT_FALSE(sc.result.ok());
    EXPECT_NE(sc.result.error().message.find("(Scan)"), std::string::npos) << sc.result.error().message;
    // Pow of an empty base by an empty exponent.
    Ran pw = runText("graph main(x: f32[0], e: f32[0]) {\n  y = Pow(x, e)\n  return y\n}\n",
                     std::map<std::string, Tensor>{{"x", f32({0}, {})}, {"e", f32({0}, {})}}, o);
    ASSERT_TRUE(pw.result.ok()) << pw.result.error().message;
    EXPECT_EQ(pw.result->outputs[0]->elementCount(), 0);
  }
}

TEST(Executor, InputsTheModelExcludesAreErrors) {
  const char *g = "symbol N 1..4\ngraph main(x: f32[N,3]) {\n  y = Relu(x)\n  return y\n}\n";
  Ran wrongRank = runText(g, {{"x", f32({3}, {1, 2, 3})}});
  ASSERT_FALSE(wrongRank.result.ok());
  EXPECT_NE(wrongRank.result.error().message.find("input 'x' has shape [3]"), std::string::npos);
  Ran tooBig = runText(g, {{"x", f32({5, 3}, std::vector<double>(15, 0))}});
  ASSERT_FALSE(tooBig.result.ok());
  EXPECT_NE(tooBig.result.error().message.find("outside what the model admits"), std::string::npos)
      << tooBig.result.error().message;
  Ran wrongType = runText(g, {{"x", i64({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrongType.result.ok());
  EXPECT_NE(wrongType.result.error().message.find("is i64, the model declares f32"), std::string::npos);
  Ran missing = runText(g, {});
  ASSERT_FALSE(missing.result.ok());
  EXPECT_NE(missing.result.error().message.find("input 'x'"), std::string::npos);
  Ran extra = runText(g, {{"x", f32({1, 3}, {1, 2, 3})}, {"q", f32({1}, {1})}});
  ASSERT_FALSE(extra.result.ok());
  EXPECT_NE(extra.result.error().message.find("'q' is not an input"), std::string::npos);
}

TEST(Executor, TheMemoryBudgetIsAnErrorNotACrash) {
  RunOptions o;
  o.maxMemory = 1000;
  Ran r = runText("graph main(x: f32[100,10]) {\n  y = Exp(x)\n  return y\n}\n",
                  {{"x", f32({100, 10}, std::vector<double>(1000, 0))}}, o);
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("does not fit the memory budget"), std::string::npos)
      << r.result.error().message;
}

TEST(Executor, TensorsAreFreedAfterTheirLastReader) {
  // A chain of four 4 KB tensors: at most two (input and output of one step, plus the
  // caller's input) are alive at once.
  RunOptions o;
  Ran r = runText(R"(
graph main(x: f32[1024]) {
  a = Exp(x)
  b = Exp(a)
  c = Exp(b)
  d = Exp(c)
  return d
}
)",
                  {{"x", f32({1024}, std::vector<double>(1024, 0))}}, o);
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->nodesRun, 4u);
  EXPECT_LE(r.result->peakBytes, 2 * 4096);
}

TEST(Executor, AKernelThatDisagreesWithItsRuleIsAnError) {
  // A registry whose Relu kernel returns a tensor of the wrong shape: the executor compares it
  // with Relu's rule at the actual input and names the node.
  OpRegistry reg;
  registerAllOps(reg);
  registerKernels(reg);
  reg.findMutable("", "Relu")->kernel = [](EvalContext &ctx) -> Result<void> {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, {1}, {0}));
    return ctx.setOutput(0, std::move(t));
  };
  auto g = parseGraph("graph main(x: f32[3]) {\n  y = Relu(x)\n  return y\n}\n");
  ASSERT_TRUE(g.ok());
  Diagnostics d;
  inferGraph(*g, d);
  RunOptions o;
  o.registry = &reg;
  auto r = run(*g, {{"x", f32({3}, {1, -1, 2})}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("node 'y' (Relu): the kernel and the shape rule disagree: "
                                   "output 0 has shape [1] but the rule says f32[3]"),
            std::string::npos)
      << r.error().message;
}

TEST(Executor, AnOpWithoutAKernelIsNamed) {
  Ran r = runText("graph main(x: f32[2,3]) {\n  y: f32[2,3] = example.Frobnicate(x)\n  return y\n}\n",
                  {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("node 'y' (example.Frobnicate): no kernel for op 'example.Frobnicate'"),
            std::string::npos)
      << r.result.error().message;
}

} // namespace
} // namespace sf::eval
