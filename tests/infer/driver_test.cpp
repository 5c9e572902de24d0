// The inference driver (src/infer/infer.cpp): nodes in any order, cycles, declared facts kept
// apart from inferred ones, ops without a rule, and the subgraph memo.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace sf {
namespace {

Graph parse(const std::string &text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? std::move(*g) : Graph();
}

struct Inferred {
  std::vector<std::string> lines; // tensor lines, then diagnostics
  InferStats stats;
};

Inferred infer(Graph &g, const InferOptions &options = {}) {
  Diagnostics diags;
  Inferred r;
  r.stats = inferGraph(g, diags, options);
  r.lines = tensorLines(g);
  for (auto &l : diagnosticLines(diags))
    r.lines.push_back(l);
  return r;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const auto &l : lines)
    s += l + "\n";
  return s;
}

TEST(Driver, NodesOutOfOrderGetTheSameFacts) {
  // The same graph written in order and with every node after its readers: the driver falls back
  // to a topological order at the first node that reads a later one.
  Graph inOrder = parse(R"(graph main(x: f32[N,3,H,W]) {
  a = Relu(x)
  s = Shape(a)
  f = Flatten(a) {axis = 1}
  return f, s
}
)");
  Graph reversed = parse(R"(graph main(x: f32[N,3,H,W]) {
  f = Flatten(a) {axis = 1}
  s = Shape(a)
  a = Relu(x)
  return f, s
}
)");
  auto lines = [](Graph &g) {
    auto v = infer(g).lines;
    std::sort(v.begin(), v.end());
    return v;
  };
  auto expected = lines(inOrder);
  EXPECT_EQ(joined(expected), "a: f32[N,3,H,W]\nf: f32[N,3*H*W]\ns: i64[4] = [N,3,H,W]\n");
  EXPECT_EQ(lines(reversed), expected);
}

TEST(Driver, CycleIsOneErrorNamingIt) {
  Graph g = parse(R"(graph main(x: f32[2]) {
  a = Add(x, b)
  b = Relu(a)
  return b
}
)");
  auto r = infer(g);
  ASSERT_FALSE(r.lines.empty());
  EXPECT_NE(joined(r.lines).find("error: cycle: "), std::string::npos) << joined(r.lines);
}

TEST(Driver, DeclaredFactsStayApartFromInferredOnes) {
  // The text form's `y: f32[5]` is what the graph declares; inference finds f32[3], warns, and
  // keeps both.
  Graph g = parse(R"(graph main(x: f32[3]) {
  y: f32[5] = Relu(x)
  z: f32[3] = Neg(y)
  return z
}
)");
  auto r = infer(g);
  EXPECT_EQ(joined(r.lines),
            "y: f32[3]\nz: f32[3]\n"
            "warning: node 'y' (Relu): output 0 ('y') is declared f32[5] in the model but inferred "
            "f32[3] (shape differs)\n");
  const Outlet &y = g.outlet(*g.findOutlet("y"));
  ASSERT_TRUE(y.declared);
  EXPECT_EQ(toString(*y.declared), "f32[5]");
  EXPECT_EQ(toString(y.fact), "f32[3]");
}

TEST(Driver, OpWithoutRuleTakesWhatTheModelDeclares) {
  Graph g = parse(R"(graph main(x: f32[N]) {
  y: f32[N,7] = custom.Mystery(x)
  u = custom.Mystery(x)
  z = Relu(y)
  return z, u
}
)");
  auto r = infer(g);
  EXPECT_EQ(joined(r.lines),
            "y: f32[N,7]\nu: ?[...]\nz: f32[N,7]\n"
            "warning: node 'y' (Mystery): no shape rule for op 'custom.Mystery': its outputs are "
            "left unknown (reported once per op type)\n");
  EXPECT_EQ(r.stats.withoutRule, 2u);
  EXPECT_EQ(r.stats.opsWithoutRule, std::vector<std::string>{"custom.Mystery"});
}

TEST(Driver, FailedNodeLeavesItsOutputsUnknownAndGoesOn) {
  Graph g = parse(R"(graph main(a: f32[2,3], b: f32[4,5], c: f32[7]) {
  m = MatMul(a, b)
  r = Relu(m)
  n = Neg(c)
  return r, n
}
)");
  auto r = infer(g);
  EXPECT_EQ(r.stats.failed, 1u);
  std::string text = joined(r.lines);
  EXPECT_NE(text.find("m: ?[...]\nr: ?[...]\nn: f32[7]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("error: node 'm' (MatMul): inner dimensions differ: 3 vs 4"),
            std::string::npos)
      << text;
}

// A Loop whose body holds another Loop: every round of the outer fixed point (its carried
// tensor grows by a Concat) infers the inner Loop again with the same facts (it reads only values
// captured from the main graph); the memo answers the repeats.
constexpr const char *kNestedLoops = R"(opset 17
graph main(x: f32[N,4], n: i64[], m: i64[]) {
  t = Constant() {value = bool[] [1]}
  init = Constant() {value = f32[0,4] []}
  out = Loop(n, t, init, x, m) {
    body = graph outer(i: i64[], c: bool[], acc: f32[?,4], xx: f32[N,4] {captured = 3}, mm: i64[] {captured = 4}) {
      tt = Constant() {value = bool[] [1]}
      inner = Loop(mm, tt, xx) {
        body = graph innerb(j: i64[], d: bool[], a: f32[?,4]) {
          r = Relu(a)
          dd = Identity(d)
          return dd, r
        }
      }
      next = Concat(acc, inner) {axis = 0}
      co = Identity(c)
      return co, next
    }
  }
  return out
}
)";

TEST(Driver, SubgraphMemoAnswersRepeatedBodies) {
  Graph g = parse(kNestedLoops);
  auto r = infer(g);
  EXPECT_EQ(joined(r.lines), "t: bool[] = [1]\ninit: f32[0,4]\nout: f32[?,4]\n");
  EXPECT_GT(r.stats.memoHits, 0u);
  // Every body inferred once per distinct facts: a handful, not rounds times rounds.
  EXPECT_LE(r.stats.bodyInferences, 6u);
}

TEST(Driver, MemoIsPerRunAndPerTopLevelNode) {
  // Two graphs with the same text are two runs: the second does as much work as the first.
  Graph a = parse(kNestedLoops), b = parse(kNestedLoops);
  auto ra = infer(a), rb = infer(b);
  EXPECT_EQ(ra.stats.bodyInferences, rb.stats.bodyInferences);
  EXPECT_EQ(ra.lines, rb.lines);
}

} // namespace
} // namespace sf

namespace sf {
namespace {

/// The fact of the outlet named `name` in graph attribute `attr` of the node that makes `owner`.
std::string bodyFact(const Graph &g, const std::string &owner, const std::string &attr,
                     const std::string &name) {
  const Node &n = g.nodes[g.findOutlet(owner)->node];
  auto body = n.attrs.getGraph(attr);
  if (!body.ok()) return "no body";
  auto o = (*body)->findOutlet(name);
  return o ? toString((*body)->fact(*o)) : "no outlet";
}

TEST(Driver, BodiesHoldTheFactsOfEveryRun) {
  // After inference the tensors inside bodies have facts: both branches of an If whose condition
  // is unknown, and a Loop body's covering facts (what every iteration satisfies).
  Graph g = parse(R"(opset 17
graph main(c: bool[], x: f32[N,4], n: i64[]) {
  y = If(c, x) {then_branch = graph t(a: f32[N,4] {captured = 1}) {
      r = Relu(a)
      return r
    }, else_branch = graph e(a: f32[N,4] {captured = 1}) {
      f = Flatten(a) {axis = 0}
      return f
    }}
  t = Constant() {value = bool[] true}
  init = Constant() {value = f32[0,4] []}
  out = Loop(n, t, init, x) {
    body = graph body(i: i64[], cc: bool[], acc: f32[?,4], xx: f32[N,4] {captured = 3}) {
      row = Relu(xx)
      next = Concat(acc, row) {axis = 0}
      co = Identity(cc)
      return co, next
    }
  }
  return y, out
}
)");
  infer(g);
  ExprScope scope = g.enter();
  EXPECT_EQ(bodyFact(g, "y", "then_branch", "r"), "f32[N,4]");
  EXPECT_EQ(bodyFact(g, "y", "else_branch", "f"), "f32[1,4*N]");
  EXPECT_EQ(bodyFact(g, "out", "body", "row"), "f32[N,4]");
  // The carried tensor grows by N rows a round: its covering fact has an unknown row count.
  EXPECT_EQ(bodyFact(g, "out", "body", "next"), "f32[?,4]");
}

} // namespace
} // namespace sf
