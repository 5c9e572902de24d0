// The pass driver (rounds to a fixed point, dead nodes dropped) and replaceWithNode (a node that
// stands for an outlet, inferred by its rule; refusals named).
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/rewrite/rewrite.h"

#include <gtest/gtest.h>

namespace sf::rewrite {
namespace {

Graph inferred(const char *text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  Diagnostics d;
  inferGraph(*g, d);
  return std::move(*g);
}

/// A pass that replaces one Relu(Relu(x)) by Relu(x) per application.
Result<size_t> dropDoubleRelu(PassContext &ctx) {
  Graph &g = ctx.graph;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &outer = g.nodes[id];
    const OpDef *def = recordOf(ctx, outer);
    if (!def || def->traits.pointwise != Pointwise::Relu || !g.contains(outer.inputs[0])) continue;
    const Node &inner = g.nodes[outer.inputs[0].node];
    const OpDef *idef = recordOf(ctx, inner);
    if (!idef || idef->traits.pointwise != Pointwise::Relu || onlyReader(g, inner) != &outer) continue;
    SF_TRY(replaceWithNode(ctx, "", "Relu", 14, {inner.inputs[0]}, {}, {outer.id, 0},
                           std::vector<uint32_t>{outer.id, inner.id}));
    return size_t(1);
  }
  return size_t(0);
}

TEST(Rewrite, PassesRunToAFixedPointAndDeadNodesGo) {
  Graph g = inferred("graph main(x: f32[N,4]) {\n  a = Relu(x)\n  b = Relu(a)\n  c = Relu(b)\n  d = Relu(c)\n"
                     "  return d\n}\n");
  PassContext ctx{g, defaultRegistry(), nullptr};
  std::vector<Pass> passes{{"drop-double-relu", dropDoubleRelu}};
  auto counts = runPasses(ctx, passes);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].rewrites, 3u);
  EXPECT_EQ(g.liveNodeCount(), 2u); // x and one Relu, renumbered
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_TRUE(g.verify().ok());
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outlet(g.outputs[0]).name, "d");
  EXPECT_EQ(toString(g.fact(g.outputs[0])), "f32[N,4]");
  // At most maxRounds rounds.
  Graph h = inferred("graph main(x: f32[N,4]) {\n  a = Relu(x)\n  b = Relu(a)\n  c = Relu(b)\n  return c\n}\n");
  PassContext hctx{h, defaultRegistry(), nullptr};
  auto once = runPasses(hctx, passes, 1);
  ASSERT_TRUE(once.ok());
  EXPECT_EQ((*once)[0].rewrites, 1u);
}

TEST(Rewrite, AReplacementItsRuleRefusesOrThatLeavesAReaderIsAnError) {
  Graph g = inferred("graph main(x: f32[N,4], y: f32[N,5], v: f32[4]) {\n  a = Relu(x)\n  b = Sigmoid(a)\n"
                     "  return b\n}\n");
  PassContext ctx{g, defaultRegistry(), nullptr};
  // Concat of ranks 2 and 1: the rule refuses, named.
  auto bad = replaceWithNode(ctx, "", "Concat", 13, {g.inputs[0], g.inputs[2]}, Attributes{{"axis", int64_t(0)}},
                             {3, 0}, std::vector<uint32_t>{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("(Concat)"), std::string::npos) << bad.error().message;
  // MatMul of [N,4] by [N,5] gives [4,5], not the [N,4] it would stand for; what its rule
  // learns (N == 4) is not kept.
  auto other = replaceWithNode(ctx, "", "MatMul", 13, {g.inputs[0], g.inputs[1]}, {}, {3, 0}, std::vector<uint32_t>{});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("where the outlet it replaces is f32[N,4]"), std::string::npos)
      << other.error().message;
  EXPECT_EQ(toString(g.fact(g.inputs[0])), "f32[N,4]");
  EXPECT_EQ(g.liveNodeCount(), 5u) << "a refused replacement leaves the graph as it was";
  // A "dead" node that is still read.
  Graph h = inferred("graph main(x: f32[N,4], y: f32[N,4]) {\n  a = Relu(x)\n  b = Add(a, y)\n  c = Sub(a, y)\n"
                     "  return b, c\n}\n");
  PassContext hctx{h, defaultRegistry(), nullptr};
  auto read = replaceWithNode(hctx, "", "Sub", 14, {h.inputs[0], h.inputs[1]}, {}, {2, 0},
                              std::vector<uint32_t>{2, 1});
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("is still read after the rewrite"), std::string::npos) << read.error().message;
}

} // namespace
} // namespace sf::rewrite
