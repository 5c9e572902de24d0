// Graph editing keeps successors consistent (verify after every edit), verify finds broken
// invariants, topological order (DAGs, 200k-node chains, cycles named), deep copies.
#include "shapeflow/ir/graph.h"

#include "ir_test_util.h"

namespace sf {
namespace {

Fact f32(std::vector<Dimension> dims) { return Fact::known(ElementType::F32, PartialShape(dims)); }

std::vector<InletId> succ(const Graph &g, OutletId o) {
  std::vector<InletId> s(g.outlet(o).successors.begin(), g.outlet(o).successors.end());
  std::sort(s.begin(), s.end());
  return s;
}

class GraphTest : public ::testing::Test {
protected:
  void SetUp() override {
    x = GET(g.addParameter("x", f32({1, 3, 8, 8})));
    w = GET(g.addParameter("w", f32({4, 3, 3, 3})));
    conv = GET(g.addNode("Conv", "conv", {x, w}, 1, Attributes{{"pads", {1, 1, 1, 1}}}));
    relu = GET(g.addNode("Relu", "relu", {OutletId{conv, 0}}, 1));
    g.outputs.push_back(OutletId{relu, 0});
    CHECK_OK(g.verify());
  }
  Graph g;
  OutletId x, w;
  uint32_t conv = 0, relu = 0;
};

TEST_F(GraphTest, Build) {
  EXPECT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.inputs, (std::vector<OutletId>{x, w}));
  EXPECT_TRUE(g.nodes[x.node].isParameter());
  EXPECT_EQ(toString(g.fact(x)), "f32[1,3,8,8]");
  EXPECT_EQ(succ(g, x), (std::vector<InletId>{{conv, 0}}));
  EXPECT_EQ(succ(g, w), (std::vector<InletId>{{conv, 1}}));
  EXPECT_EQ(succ(g, {conv, 0}), (std::vector<InletId>{{relu, 0}}));
  EXPECT_EQ(g.findOutlet("conv"), (OutletId{conv, 0}));
  EXPECT_EQ(g.findOutlet("x"), x);
  EXPECT_FALSE(g.findOutlet("nothing"));
  EXPECT_FALSE(g.findOutlet(""));
  EXPECT_EQ(g.nodeLabel(conv), "'conv' (Conv)");
  EXPECT_EQ(g.liveNodeCount(), 4u);
  EXPECT_EQ(g.formalInputCount(), 2u);
}

// A rule or pass may hold a node's fact while it adds nodes (a rewrite that inserts a Cast, the
// importer wiring a node's inputs): nodes never move as the graph grows.
TEST_F(GraphTest, NodeAndOutletReferencesSurviveAddingNodes) {
  Node &convNode = g.nodes[conv];
  Outlet &convOut = g.outlet({conv, 0});
  Fact &xFact = g.fact(x);
  OutletId last{relu, 0};
  for (int i = 0; i < 5000; ++i)
    last = OutletId{GET(g.addNode("Neg", "neg" + std::to_string(i), {last}, 1)), 0};
  EXPECT_EQ(&g.nodes[conv], &convNode);
  EXPECT_EQ(&g.outlet({conv, 0}), &convOut);
  EXPECT_EQ(&g.fact(x), &xFact);
  xFact = f32({2, 3, 8, 8});
  EXPECT_EQ(toString(g.fact(x)), "f32[2,3,8,8]");
  EXPECT_EQ(convOut.name, "conv");
  CHECK_OK(g.verify());
  Graph copy = g.clone();
  EXPECT_EQ(copy.nodes.size(), g.nodes.size());
  EXPECT_NE(&copy.outlet({conv, 0}), &convOut);
  EXPECT_EQ(copy.outlet(last).name, "neg4999");
}

TEST_F(GraphTest, MultipleOutputsAndAbsentInputs) {
  uint32_t split = GET(g.addNode("Split", "split", {OutletId{relu, 0}}, 3));
  EXPECT_EQ(g.nodes[split].outputs[2].name, "split.2");
  EXPECT_EQ(g.findOutlet("split.1"), (OutletId{split, 1}));
  uint32_t resize =
      GET(g.addNode("Resize", "resize", {OutletId{split, 0}, OutletId::invalid(), OutletId{split, 2}},
                    std::vector<std::string>{"r"}));
  CHECK_OK(g.verify());
  EXPECT_FALSE(g.nodes[resize].inputs[1].valid());
  EXPECT_EQ(succ(g, {split, 2}), (std::vector<InletId>{{resize, 2}}));
  EXPECT_TRUE(g.outlet({split, 1}).successors.empty());
  uint32_t anon = GET(g.addNode("Shape", "", {OutletId{resize, 0}}, 1));
  EXPECT_EQ(g.nodes[anon].outputs[0].name, "");
  EXPECT_EQ(g.nodeLabel(anon), "#" + std::to_string(anon) + " (Shape)");
  CHECK_OK(g.verify());
}

TEST_F(GraphTest, AddErrors) {
  auto dup = g.addNode("Relu", "again", {x}, std::vector<std::string>{"relu"});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().message, "name 'relu' is already used by an output of 'relu' (Relu)");
  EXPECT_FALSE(g.addParameter("x", Fact{}).ok());
  EXPECT_FALSE(g.addNode("Add", "twice", {x}, std::vector<std::string>{"a", "a"}).ok());
  auto missing = g.addNode("Relu", "r2", {OutletId{99, 0}}, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "input 0 of new node 'r2': outlet 99:0 does not exist");
  EXPECT_FALSE(g.addNode("Relu", "r3", {OutletId{conv, 1}}, 1).ok());
  EXPECT_EQ(g.nodes.size(), 4u); // failed adds change nothing
  CHECK_OK(g.verify());
}

TEST_F(GraphTest, Constants) {
  OutletId c = GET(g.addConstant("shape", Tensor::fromInt64s({1, -1})));
  EXPECT_TRUE(g.nodes[c.node].isConstant());
  EXPECT_EQ(toString(g.fact(c)), "i64[2] = [1,-1]");
  EXPECT_TRUE(g.fact(c).constant);
  EXPECT_EQ(GET(g.nodes[c.node].attrs.getTensor("value")), g.fact(c).constant);
  uint32_t reshape = GET(g.addNode("Reshape", "flat", {OutletId{relu, 0}, c}, 1));
  EXPECT_EQ(succ(g, c), (std::vector<InletId>{{reshape, 1}}));
  CHECK_OK(g.verify());
  EXPECT_FALSE(g.addConstant("null", TensorPtr()).ok());
}

TEST_F(GraphTest, SetInput) {
  OutletId y{relu, 0};
  CHECK_OK(g.setInput({relu, 0}, x));
  CHECK_OK(g.verify());
  EXPECT_TRUE(g.outlet({conv, 0}).successors.empty());
  EXPECT_EQ(succ(g, x), (std::vector<InletId>{{conv, 0}, {relu, 0}}));
  CHECK_OK(g.setInput({conv, 1}, OutletId::invalid()));
  CHECK_OK(g.verify());
  EXPECT_TRUE(g.outlet(w).successors.empty());
  CHECK_OK(g.setInput({conv, 1}, w));
  CHECK_OK(g.verify());
  EXPECT_FALSE(g.setInput({relu, 5}, x).ok());
  EXPECT_FALSE(g.setInput({77, 0}, x).ok());
  EXPECT_FALSE(g.setInput({relu, 0}, OutletId{relu, 3}).ok());
  uint32_t slot = GET(g.addInput(relu, w));
  EXPECT_EQ(slot, 1u);
  EXPECT_EQ(g.nodes[relu].inputs.size(), 2u);
  CHECK_OK(g.verify());
  (void)y;
}

TEST_F(GraphTest, SameOutletTwice) {
  uint32_t add = GET(g.addNode("Add", "sum", {OutletId{relu, 0}, OutletId{relu, 0}}, 1));
  EXPECT_EQ(succ(g, {relu, 0}), (std::vector<InletId>{{add, 0}, {add, 1}}));
  CHECK_OK(g.setInput({add, 1}, x));
  EXPECT_EQ(succ(g, {relu, 0}), (std::vector<InletId>{{add, 0}}));
  CHECK_OK(g.verify());
}

TEST_F(GraphTest, ReplaceUsesAndRemove) {
  // Bypass the relu: its readers (here: the graph output) read the conv instead.
  uint32_t sig = GET(g.addNode("Sigmoid", "sig", {OutletId{relu, 0}}, 1));
  CHECK_OK(g.replaceUses({relu, 0}, {conv, 0}));
  CHECK_OK(g.verify());
  EXPECT_EQ(g.outputs, (std::vector<OutletId>{{conv, 0}}));
  EXPECT_EQ(g.nodes[sig].inputs[0], (OutletId{conv, 0}));
  EXPECT_TRUE(g.outlet({relu, 0}).successors.empty());
  CHECK_OK(g.removeNode(relu));
  CHECK_OK(g.verify());
  EXPECT_TRUE(g.nodes[relu].removed);
  EXPECT_FALSE(g.findOutlet("relu"));
  EXPECT_EQ(g.liveNodeCount(), 4u);
  EXPECT_EQ(succ(g, {conv, 0}), (std::vector<InletId>{{sig, 0}}));
  EXPECT_FALSE(g.contains({relu, 0}));
  EXPECT_FALSE(g.removeNode(relu).ok());
  // The name is free again.
  uint32_t again = GET(g.addNode("Relu", "relu", {OutletId{sig, 0}}, 1));
  EXPECT_EQ(g.findOutlet("relu"), (OutletId{again, 0}));
  CHECK_OK(g.verify());
  auto order = GET(g.topologicalOrder());
  EXPECT_EQ(std::count(order.begin(), order.end(), relu), 0);
  EXPECT_EQ(order.size(), 5u);
}

TEST_F(GraphTest, RemoveRefusals) {
  auto r = g.removeNode(conv);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot remove 'conv' (Conv): its output 0 is read by 'relu' (Relu)");
  r = g.removeNode(relu);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot remove 'relu' (Relu): its output 0 is a graph output");
  uint32_t dead = GET(g.addParameter("unused", Fact{})).node;
  r = g.removeNode(dead);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot remove 'unused' (Parameter): it is a graph input");
}

TEST_F(GraphTest, Compact) {
  uint32_t a = GET(g.addNode("Neg", "a", {x}, 1));
  uint32_t b = GET(g.addNode("Neg", "b", {OutletId{a, 0}}, 1));
  uint32_t c = GET(g.addNode("Neg", "c", {OutletId{b, 0}}, 1));
  g.outputs.push_back({c, 0});
  CHECK_OK(g.replaceUses({b, 0}, {a, 0}));
  CHECK_OK(g.removeNode(b));
  auto remap = g.compact();
  CHECK_OK(g.verify());
  EXPECT_EQ(remap[b], kNoNode);
  EXPECT_EQ(remap[c], c - 1);
  EXPECT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.findOutlet("c"), (OutletId{c - 1, 0}));
  EXPECT_EQ(g.nodes[c - 1].inputs[0], (OutletId{a, 0}));
  EXPECT_EQ(g.outputs.back(), (OutletId{c - 1, 0}));
}

TEST_F(GraphTest, RenameAndReindex) {
  CHECK_OK(g.renameOutlet({conv, 0}, "features"));
  EXPECT_FALSE(g.findOutlet("conv"));
  EXPECT_EQ(g.findOutlet("features"), (OutletId{conv, 0}));
  EXPECT_FALSE(g.renameOutlet({conv, 0}, "x").ok());
  // A direct edit is caught when the stale entry is looked up; new names need reindex().
  g.nodes[relu].outputs[0].name = "y";
  EXPECT_FALSE(g.findOutlet("relu"));
  g.reindex();
  EXPECT_EQ(g.findOutlet("y"), (OutletId{relu, 0}));
  CHECK_OK(g.verify());
}

TEST_F(GraphTest, VerifyFindsBrokenSuccessors) {
  g.nodes[relu].inputs[0] = x; // direct edit: successors not updated
  auto r = g.verify();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("successors of 'x' (output 0 of 'x' (Parameter))"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("successors of 'conv'"), std::string::npos);
}

TEST_F(GraphTest, VerifyFindsOtherProblems) {
  {
    Graph h = g;
    h.nodes[relu].inputs.push_back(OutletId{42, 0});
    EXPECT_NE(irtest::errorOf(h.verify()).find("'relu' (Relu) input 1 refers to a missing outlet 42:0"),
              std::string::npos);
  }
  {
    Graph h = g;
    h.nodes[relu].outputs[0].name = "conv";
    EXPECT_NE(irtest::errorOf(h.verify()).find("name 'conv' is used by 'conv' (Conv) and 'relu' (Relu)"),
              std::string::npos);
  }
  {
    Graph h = g;
    h.inputs.push_back({conv, 0});
    EXPECT_NE(irtest::errorOf(h.verify()).find("graph input 2 is 'conv' (Conv), not a Parameter"),
              std::string::npos);
  }
  {
    Graph h = g;
    h.inputs.pop_back();
    EXPECT_NE(irtest::errorOf(h.verify()).find("'w' (Parameter) is not listed as a graph input"),
              std::string::npos);
  }
  {
    Graph h = g;
    h.outputs.push_back({relu, 1});
    EXPECT_NE(irtest::errorOf(h.verify()).find("graph output 1 refers to a missing outlet"),
              std::string::npos);
  }
  {
    Graph h = g;
    h.nodes[x.node].attrs.set("captured", 0);
    EXPECT_NE(irtest::errorOf(h.verify()).find("is captured but the graph has no owner"),
              std::string::npos);
  }
}

TEST(Subgraphs, CapturedParameters) {
  Graph g;
  OutletId cond = GET(g.addParameter("cond", Fact::known(ElementType::Bool, PartialShape{})));
  OutletId x = GET(g.addParameter("x", f32({Dimension(2)})));
  auto thenG = std::make_shared<Graph>();
  thenG->name = "then";
  OutletId cx = GET(thenG->addCapturedParameter("x_in", f32({Dimension(2)}), 1));
  uint32_t neg = GET(thenG->addNode("Neg", "neg", {cx}, 1));
  thenG->outputs.push_back({neg, 0});
  auto elseG = std::make_shared<Graph>();
  elseG->name = "else";
  OutletId ex = GET(elseG->addCapturedParameter("x_in", f32({Dimension(2)}), 1));
  elseG->outputs.push_back(ex);
  uint32_t ifNode = GET(g.addNode("If", "if", {cond, x}, 1,
                                  Attributes{{"then_branch", thenG}, {"else_branch", elseG}}));
  g.outputs.push_back({ifNode, 0});
  CHECK_OK(g.verify());
  EXPECT_TRUE(thenG->nodes[cx.node].isCaptured());
  EXPECT_EQ(thenG->formalInputCount(), 0u);

  // A capture index past the owner's inputs is caught, with the path to the subgraph.
  thenG->nodes[cx.node].attrs.set("captured", 5);
  auto r = g.verify();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "in attribute 'then_branch' of 'if' (If): 'x_in' (Parameter) "
                               "captures input 5 of its owner, which has 2 inputs");
  thenG->nodes[cx.node].attrs.set("captured", 1);

  // clone() copies subgraphs; a plain copy shares them.
  Graph shallow = g;
  Graph deep = g.clone();
  auto sub = [](const Graph &h, uint32_t id) { return GET(h.nodes[id].attrs.getGraph("then_branch")); };
  EXPECT_EQ(sub(shallow, ifNode), thenG);
  EXPECT_NE(sub(deep, ifNode), thenG);
  sub(deep, ifNode)->name = "changed";
  EXPECT_EQ(thenG->name, "then");
  CHECK_OK(deep.verify());
}

TEST(TopologicalOrder, Dag) {
  Graph g;
  OutletId x = GET(g.addParameter("x", Fact{}));
  uint32_t a = GET(g.addNode("Relu", "a", {x}, 1));
  uint32_t b = GET(g.addNode("Neg", "b", {x}, 1));
  uint32_t c = GET(g.addNode("Add", "c", {OutletId{a, 0}, OutletId{b, 0}}, 1));
  auto order = GET(g.topologicalOrder());
  EXPECT_EQ(order, (std::vector<uint32_t>{x.node, a, b, c}));
  // A node reading a later node: the producer comes first.
  uint32_t d = GET(g.addNode("Neg", "d", {}, 1));
  uint32_t e = GET(g.addNode("Neg", "e", {}, 1));
  CHECK_OK(g.addInput(d, {e, 0}));
  CHECK_OK(g.addInput(e, {c, 0}));
  order = GET(g.topologicalOrder());
  std::vector<size_t> pos(g.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  EXPECT_EQ(order.size(), g.nodes.size());
  for (const Node &n : g.nodes)
    for (OutletId in : n.inputs) EXPECT_LT(pos[in.node], pos[n.id]);
  CHECK_OK(g.verify());
}

Graph chain(size_t n, bool reversed) {
  // reversed: node i reads node i + 1, so ids are as far from topological as they can be and
  // the walk has to go n deep.
  Graph g;
  g.nodes.reserve(n + 1);
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(GET(g.addNode("Neg", "n" + std::to_string(i), {}, 1)));
  OutletId x = GET(g.addParameter("x", Fact{}));
  for (size_t i = 0; i < n; ++i) {
    OutletId from = i == 0 ? x : OutletId{ids[i - 1], 0};
    size_t at = reversed ? n - 1 - i : i;
    if (reversed) from = i == 0 ? x : OutletId{ids[n - i], 0};
    CHECK_OK(g.addInput(ids[at], from));
  }
  return g;
}

TEST(TopologicalOrder, LongChains) {
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed ? "reversed" : "forward");
    const size_t n = 200000;
    Graph g = chain(n, reversed);
    CHECK_OK(g.verify());
    auto order = GET(g.topologicalOrder());
    ASSERT_EQ(order.size(), n + 1);
    std::vector<size_t> pos(g.nodes.size());
    for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
    for (const Node &node : g.nodes)
      for (OutletId in : node.inputs) ASSERT_LT(pos[in.node], pos[node.id]);
    if (!reversed) {
      EXPECT_EQ(order.back(), uint32_t(n - 1));
    } else {
      EXPECT_EQ(order.back(), 0u);
    }
  }
}

TEST(TopologicalOrder, CycleIsNamed) {
  Graph g;
  OutletId x = GET(g.addParameter("x", Fact{}));
  uint32_t a = GET(g.addNode("Add", "a", {x}, 1));
  uint32_t b = GET(g.addNode("Relu", "b", {OutletId{a, 0}}, 1));
  uint32_t c = GET(g.addNode("Neg", "c", {OutletId{b, 0}}, 1));
  GET(g.addNode("Neg", "after", {OutletId{c, 0}}, 1));
  CHECK_OK(g.addInput(a, {c, 0})); // a reads c: a -> b -> c -> a
  CHECK_OK(g.verify());            // cycles are structurally fine
  auto r = g.topologicalOrder();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cycle: a -> b -> c -> a");
}

TEST(TopologicalOrder, SelfLoopAndUnnamed) {
  Graph g;
  uint32_t a = GET(g.addNode("Identity", "", {}, 1));
  CHECK_OK(g.addInput(a, {a, 0}));
  EXPECT_EQ(irtest::errorOf(g.topologicalOrder()), "cycle: #0 (Identity) -> #0 (Identity)");
}

TEST(TopologicalOrder, LongCycle) {
  Graph g = chain(100000, true);
  // Close the loop: the first node of the chain (id n - 1 reads x) reads the last (id 0).
  CHECK_OK(g.setInput({99999, 0}, OutletId{0, 0}));
  auto r = g.topologicalOrder();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.substr(0, 7), "cycle: ");
  EXPECT_EQ(std::count(r.error().message.begin(), r.error().message.end(), '>'), 100000);
}

TEST(TopologicalOrder, MissingInput) {
  Graph g;
  uint32_t a = GET(g.addNode("Neg", "a", {}, 1));
  g.nodes[a].inputs.push_back({7, 0});
  EXPECT_EQ(irtest::errorOf(g.topologicalOrder()), "'a' (Neg) input 0 refers to a missing outlet");
}

} // namespace
} // namespace sf
