// The reader with its main graph's nodes left encoded (ReadOptions::deferNodes) and NodeDecoder:
// the same views as an eager read, the same errors word for word, the same limits, and views
// reused from one node to the next without anything left over.
#include "proto_writer.h"

#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>

using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

constexpr int32_t kFloat = 1;

std::string_view keep(const std::string &bytes) {
  static std::deque<std::string> kept;
  return kept.emplace_back(bytes);
}

/// Every node decoded, or the first error with the reader's label in front (as loadModelFile
/// reports it).
struct Deferred {
  std::optional<ModelView> model;
  std::vector<NodeView> nodes;
  std::string error;
};

Deferred readDeferred(std::string_view bytes, const ReadLimits &limits = {}) {
  Deferred d;
  auto m = readModelBuffer(bytes, limits, "m.onnx", ReadOptions{.deferNodes = true});
  if (!m.ok()) {
    d.error = m.error().message;
    return d;
  }
  d.model.emplace(std::move(*m));
  auto nodes = NodeDecoder(*d.model).decodeAll();
  if (nodes.ok()) d.nodes = std::move(*nodes);
  else d.error = "m.onnx: " + nodes.error().message;
  return d;
}

std::string eagerError(std::string_view bytes, const ReadLimits &limits = {}) {
  auto r = readModelBuffer(bytes, limits, "m.onnx");
  return r.ok() ? std::string("(no error)") : r.error().message;
}

void expectSameNode(const NodeView &a, const NodeView &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.opType, b.opType);
  EXPECT_EQ(a.domain, b.domain);
  EXPECT_EQ(a.overload, b.overload);
  EXPECT_EQ(std::vector<std::string_view>(a.inputs.begin(), a.inputs.end()),
            std::vector<std::string_view>(b.inputs.begin(), b.inputs.end()));
  EXPECT_EQ(std::vector<std::string_view>(a.outputs.begin(), a.outputs.end()),
            std::vector<std::string_view>(b.outputs.begin(), b.outputs.end()));
  ASSERT_EQ(a.attributes.size(), b.attributes.size());
  for (size_t i = 0; i < a.attributes.size(); ++i) {
    const AttributeView &x = a.attributes[i], &y = b.attributes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.i, y.i);
    EXPECT_EQ(x.f, y.f);
    EXPECT_EQ(x.s, y.s);
    EXPECT_EQ(x.ints, y.ints);
    EXPECT_EQ(x.extra().floats, y.extra().floats);
    EXPECT_EQ(x.extra().strings, y.extra().strings);
    EXPECT_EQ(x.extra().g != nullptr, y.extra().g != nullptr);
    if (x.extra().g && y.extra().g) {
      ASSERT_EQ(x.extra().g->nodes.size(), y.extra().g->nodes.size());
      for (size_t k = 0; k < x.extra().g->nodes.size(); ++k)
        expectSameNode(x.extra().g->nodes[k], y.extra().g->nodes[k]);
    }
  }
}

Proto branch(const std::string &name, const std::string &op) {
  return Proto().msg(1, node(op, {"x"}, {name + "_out"}, name + "_node")).str(2, name);
}

} // namespace

TEST(WireDeferred, SameViewsAsAnEagerRead) {
  Proto g;
  g.msg(1, node("Conv", {"x", "w", ""}, {"c"}, "conv", {attrInts("pads", {1, 1, 1, 1}, true)}));
  g.msg(1, node("If", {"cond"}, {"y"}, "if0",
                {attrGraph("then_branch", branch("then", "Relu")),
                 attrGraph("else_branch", branch("else", "Neg"))}));
  g.msg(1, node("Softmax", {"y"}, {"s", ""}, "", {attrInt("axis", -1)}).str(7, "ai.onnx"));
  g.str(2, "main");
  g.msg(5, rawTensor("w", kFloat, {1}, rawOf<float>({2})));
  std::string_view bytes = keep(model(g).bytes);
  auto eager = readModelBuffer(bytes);
  ASSERT_TRUE(eager.ok()) << eager.error().message;
  Deferred d = readDeferred(bytes);
  ASSERT_TRUE(d.error.empty()) << d.error;
  EXPECT_TRUE(d.model->graph.nodes.empty());
  ASSERT_EQ(3u, d.model->graph.encodedNodes.size());
  ASSERT_EQ(3u, d.nodes.size());
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    expectSameNode(eager->graph.nodes[i], d.nodes[i]);
  }
  // Everything else of the graph is read as before.
  EXPECT_EQ("main", d.model->graph.name);
  ASSERT_EQ(1u, d.model->graph.initializers.size());
  EXPECT_EQ("w", d.model->graph.initializers[0].name);
  // Subgraphs' nodes are read with the node that holds them, never left encoded.
  EXPECT_TRUE(d.nodes[1].attributes[0].extra().g->encodedNodes.empty());
  EXPECT_EQ("then_node", d.nodes[1].attributes[0].extra().g->nodes[0].name);
}

TEST(WireDeferred, AReusedViewKeepsNothingFromTheNodeBefore) {
  Proto g;
  g.msg(1, node("Op", {"a", "b", "c", "d", "e"}, {"p", "q"}, "big",
                {attrInts("ints", {1, 2, 3}), attrFloat("alpha", 0.5f),
                 attrGraph("body", branch("b", "Relu"))})
               .str(7, "custom")
               .str(8, "v2"));
  g.msg(1, node("Relu", {"x"}, {"y"}));
  g.str(2, "main");
  std::string_view bytes = keep(model(g).bytes);
  auto m = readModelBuffer(bytes, {}, "m.onnx", ReadOptions{.deferNodes = true});
  ASSERT_TRUE(m.ok()) << m.error().message;
  NodeDecoder decoder(*m);
  NodeView n;
  ASSERT_TRUE(decoder.decode(0, n).ok());
  EXPECT_EQ(5u, n.inputs.size());
  EXPECT_EQ("custom", n.domain);
  ASSERT_TRUE(decoder.decode(1, n).ok());
  EXPECT_EQ("Relu", n.opType);
  EXPECT_EQ("", n.name);
  EXPECT_EQ("", n.domain);
  EXPECT_EQ("", n.overload);
  ASSERT_EQ(1u, n.inputs.size());
  EXPECT_EQ("x", n.inputs[0]);
  ASSERT_EQ(1u, n.outputs.size());
  EXPECT_TRUE(n.attributes.empty());
  // Decoding again, in any order, gives the same node.
  ASSERT_TRUE(decoder.decode(0, n).ok());
  EXPECT_EQ("big", n.name);
  EXPECT_EQ(3u, n.attributes.size());
  EXPECT_FALSE(decoder.decode(2, n).ok()); // past the end: an error, not a read past the list
}

TEST(WireDeferred, ErrorsInsideNodesReadWordForWordAsAnEagerRead) {
  auto bad = [](const Proto &attr) {
    Proto g;
    for (int i = 0; i < 3; ++i)
      g.msg(1, node("Relu", {"x"}, {"x" + std::to_string(i)}, "r" + std::to_string(i)));
    g.msg(1, node("Conv", {"x"}, {"y"}, "conv1", {attr}));
    g.str(2, "main");
    return model(g);
  };
  const Proto cases[] = {
      attrInts("pads", {1, 1}).raw(std::string("\x42\x01\x80", 3)), // truncated packed ints
      Proto().str(1, "a").str(2, "xx"),                              // wrong wire type
      Proto().str(1, "a").varint(20, 99),                            // unknown attribute type
      attrGraph("g", Proto().msg(1, node("Op", {}, {"y"}, "inner", {Proto().str(1, "t").fixed64(3, 1)}))
                         .str(2, "sub")), // an error inside a subgraph's node
  };
  for (const Proto &attr : cases) {
    std::string_view bytes = keep(bad(attr).bytes);
    std::string eager = eagerError(bytes);
    ASSERT_NE("(no error)", eager);
    EXPECT_NE(std::string::npos, eager.find("node 3 'conv1' (Conv)")) << eager;
    Deferred d = readDeferred(bytes);
    EXPECT_EQ(eager, d.error);
    // The nodes before it decode on their own.
    NodeDecoder decoder(*d.model);
    NodeView n;
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(decoder.decode(i, n).ok()) << i;
  }
}

TEST(WireDeferred, ABadlyFramedNodeFailsTheReadItself) {
  Proto g = Proto().varint(1, 7).str(2, "main"); // a node field that is not a message
  std::string_view bytes = keep(model(g).bytes);
  std::string eager = eagerError(bytes);
  EXPECT_NE(std::string::npos, eager.find("expected length-delimited (a message)")) << eager;
  auto m = readModelBuffer(bytes, {}, "m.onnx", ReadOptions{.deferNodes = true});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(eager, m.error().message);
}

TEST(WireDeferred, TheNodeLimitCountsSubgraphNodesWhenTheyAreDecoded) {
  // 3 nodes in the main graph, one of them an If with 2 nodes in each branch: 7 in all.
  Proto two = Proto().msg(1, node("A", {}, {"a"})).msg(1, node("B", {}, {"b"})).str(2, "br");
  Proto g;
  g.msg(1, node("Relu", {"x"}, {"r"}));
  g.msg(1, node("If", {"c"}, {"y"}, "if0",
                {attrGraph("then_branch", two), attrGraph("else_branch", two)}));
  g.msg(1, node("Relu", {"y"}, {"z"}));
  g.str(2, "main");
  std::string_view bytes = keep(model(g).bytes);
  ReadLimits seven, six;
  seven.maxNodes = 7;
  six.maxNodes = 6;
  EXPECT_TRUE(readDeferred(bytes, seven).error.empty());
  std::string eager = eagerError(bytes, six);
  EXPECT_NE(std::string::npos, eager.find("more than 6 nodes")) << eager;
  Deferred d = readDeferred(bytes, six);
  EXPECT_NE(std::string::npos, d.error.find("more than 6 nodes")) << d.error;
  // The main graph alone over the limit: the read itself refuses it.
  ReadLimits two_;
  two_.maxNodes = 2;
  auto m = readModelBuffer(bytes, two_, "m.onnx", ReadOptions{.deferNodes = true});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string::npos, m.error().message.find("graph 'main': more than 2 nodes"));
}
