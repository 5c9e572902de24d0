// What a user says about the inputs (src/infer/inputs.cpp): the `--input`, `--dim` and `--value`
// syntax and
// how applyInputs puts it on a graph.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(InputOptions, ParseTheCommandLineSyntax) {
  auto s = parseInputShape("x=1,3,224,224");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "x");
  EXPECT_EQ(s->dims, "1,3,224,224");
  EXPECT_EQ(parseInputShape("x").error().message, "--input expects NAME=DIMS, got 'x'");
  EXPECT_EQ(parseInputShape("=3").error().message, "--input expects NAME=DIMS, got '=3'");

  auto d = parseDimBound("N=1..64");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->symbol, "N");
  EXPECT_EQ(d->range, (Interval{1, 64}));
  EXPECT_EQ(parseDimBound("N=8")->range, (Interval{8, 8}));
  EXPECT_EQ(parseDimBound("N=0..")->range, (Interval{0, kInf}));
  EXPECT_EQ(parseDimBound("N=..5")->range, (Interval{0, 5}));
  EXPECT_EQ(parseDimBound("N=a..5").error().message,
            "--dim expects SYM=LO..HI with integers, got 'N=a..5'");
  EXPECT_EQ(parseDimBound("N=5abc").error().message,
            "--dim expects SYM=LO..HI with integers, got 'N=5abc'");
  EXPECT_EQ(parseDimBound("N=9..3").error().message, "--dim N=9..3: empty or negative range");
}

Graph model() {
  auto g = parseGraph(R"(graph main(x: f32[N,3,H,W], s: i64[]) {
  y = Relu(x)
  return y
}
)");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

std::string inferred(Graph &g, const InferOptions &o) {
  auto applied = applyInputs(g, o);
  if (!applied.ok()) return "error: " + applied.error().message;
  Diagnostics d;
  inferGraph(g, d, o);
  auto lines = tensorLines(g);
  return lines.empty() ? "" : lines[0];
}

TEST(InputOptions, ShapesAndBoundsReachTheFacts) {
  Graph g = model();
  InferOptions o;
  o.inputs = {{"x", "2,3,?{1..8},W"}};
  o.dims = {{"W", {16, 32}}};
  EXPECT_EQ(inferred(g, o), "y: f32[2,3,?{1..8},W]");
  auto s = g.enter();
  auto w = g.symbols.find("W");
  ASSERT_TRUE(w);
  EXPECT_EQ(symbolInfo(g.symbols.resolveSymbol(*w)->sym).range, (Interval{16, 32}));
}

TEST(InputOptions, BadInputsAreErrorsNamingThem) {
  Graph g = model();
  InferOptions o;
  o.inputs = {{"q", "1"}};
  EXPECT_EQ(inferred(g, o), "error: --input q=1: the graph has no input 'q' (inputs: x s)");
  o.inputs = {{"x", "1,2"}};
  EXPECT_EQ(inferred(g, o), "error: --input x=1,2: input 'x' has rank 4 ([N,3,H,W])");
  o.inputs = {{"s", "[]"}};
  EXPECT_EQ(inferred(g, o), "y: f32[N,3,H,W]");
}

TEST(InputOptions, ARangeForASizeNoInputHasIsAnError) {
  Graph g = model();
  InferOptions o;
  o.dims = {{"Q", {1, 8}}};
  EXPECT_EQ(inferred(g, o), "error: a range is given for 'Q' (1..8), but no input of the model has a size "
                            "named 'Q' (the inputs' named sizes: N, H, W)");
  // A name an --input introduces is known.
  Graph h = model();
  o.inputs = {{"x", "N,3,Q,Q"}};
  EXPECT_EQ(inferred(h, o), "y: f32[N,3,Q,Q]");
  // A model whose input sizes are all fixed says so.
  auto f = parseGraph("graph main(x: f32[1,3,224,224]) {\n  y = Relu(x)\n  return y\n}\n");
  ASSERT_TRUE(f.ok());
  InferOptions fixed;
  fixed.dims = {{"H", {32, 512}}};
  EXPECT_EQ(inferred(*f, fixed), "error: a range is given for 'H' (32..512), but no input of the model has a "
                                 "size named 'H' (the inputs have no named sizes: x: f32[1,3,224,224])");
  // A size a declared type names inside the model (an op without a rule, its output declared
  // f32[N,16,P,Q]) takes a range: a plan asks for its bound.
  auto inside = parseGraph("graph main(x: f32[N,3,H,W]) {\n  t: f32[N,16,P,Q] = IE.Layer1(x)\n  y = Relu(t)\n  return y\n}\n");
  ASSERT_TRUE(inside.ok());
  InferOptions bounded;
  bounded.dims = {{"P", {1, 32}}};
  EXPECT_EQ(inferred(*inside, bounded).find("error: a range"), std::string::npos) << inferred(*inside, bounded);
}

Graph shapeModel() {
  auto g = parseGraph(R"(opset 17
graph main(x: f32[N,64], t: i64[2], k: i64[]) {
  y = Reshape(x, t)
  z = Add(k, k)
  return y, z
}
)");
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(*g);
}

TEST(InputOptions, ValuesOfIntegerInputsReachTheFacts) {
  Graph g = shapeModel();
  InferOptions o;
  o.values = {{"t", "N,8,8"}, {"k", "3"}};
  EXPECT_EQ(inferred(g, o), "error: --value t=N,8,8: 3 elements for input 't' (i64[2])");
  Graph h = shapeModel();
  o.values = {{"t", "[-1,16]"}, {"k", "3"}};
  auto lines = [&](Graph &m) {
    auto applied = applyInputs(m, o);
    EXPECT_TRUE(applied.ok()) << applied.error().message;
    Diagnostics d;
    inferGraph(m, d, o);
    return tensorLines(m);
  };
  auto l = lines(h);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0], "y: f32[4*N,16]");
  EXPECT_EQ(l[1], "z: i64[] = [6]");
  EXPECT_EQ(parseInputValue("t").error().message, "--value expects NAME=ELEMENTS, got 't'");
  Graph bad = shapeModel();
  o.values = {{"x", "1"}};
  EXPECT_EQ(inferred(bad, o), "error: --value x=1: input 'x' is f32[N,64], not an integer tensor");
}

} // namespace
} // namespace sf
