// Facts (construction, printing, merge) and attributes (typed getters and their errors).
#include "shapeflow/dim/parse.h"
#include "shapeflow/ir/attribute.h"
#include "shapeflow/ir/fact.h"
#include "shapeflow/ir/graph.h"

#include "ir_test_util.h"

namespace sf {
namespace {

class FactTest : public ::testing::Test {
protected:
  PartialShape shape(std::string_view s) { return GET(parsePartialShape(s, table)); }
  Dimension dim(std::string_view s) { return GET(parseDimension(s, table)); }
  SymbolTable table;
};

TEST_F(FactTest, Printing) {
  EXPECT_EQ(toString(Fact{}), "?[...]");
  EXPECT_EQ(toString(Fact::known(ElementType::F32, shape("[N,3,224,224]"))), "f32[N,3,224,224]");
  EXPECT_EQ(toString(Fact::known(ElementType::F32, PartialShape::dynamic())), "f32[...]");
  EXPECT_EQ(toString(Fact::known(ElementType::Undefined, shape("[2,?]"))), "?[2,?]");
  EXPECT_EQ(toString(Fact::known(ElementType::Bool, PartialShape{})), "bool[]");
  Fact v = Fact::known(ElementType::I64, PartialShape{4});
  v.value = std::vector<Dimension>{dim("N"), 3, dim("H"), Dimension::constantValue(-1)};
  EXPECT_EQ(toString(v), "i64[4] = [N,3,H,-1]");
  Fact s = Fact::known(ElementType::I64, PartialShape{});
  s.value = std::vector<Dimension>{dim("(H - 1)//2 + 1")};
  EXPECT_EQ(toString(s), "i64[] = [(H - 1)//2 + 1]");
  EXPECT_TRUE(Fact{}.isUnknown());
  EXPECT_FALSE(v.isUnknown());
}

TEST_F(FactTest, FromTensor) {
  auto t = std::make_shared<const Tensor>(Tensor::fromInt64s({1, -1}));
  Fact f = Fact::fromTensor(t);
  EXPECT_EQ(f.type, ElementType::I64);
  EXPECT_EQ(f.shape, PartialShape({2}));
  EXPECT_EQ(f.constant, t);
  ASSERT_TRUE(f.value);
  EXPECT_EQ(toString(f), "i64[2] = [1,-1]");
  // Floats, rank 2, and tensors past the budget get no value.
  auto fl = std::make_shared<const Tensor>(GET(Tensor::scalar(ElementType::F32, 0.5)));
  EXPECT_FALSE(Fact::fromTensor(fl).value);
  auto m = std::make_shared<const Tensor>(GET(Tensor::fromInt64s({2, 1}, {1, 2})));
  EXPECT_FALSE(Fact::fromTensor(m).value);
  EXPECT_FALSE(Fact::fromTensor(t, 1).value);
  auto w = std::make_shared<const Tensor>(GET(Tensor::withoutData(ElementType::I64, {2})));
  EXPECT_FALSE(Fact::fromTensor(w).value);
  EXPECT_EQ(toString(Fact::fromTensor(w)), "i64[2]");
}

TEST_F(FactTest, Merge) {
  Fact a = Fact::known(ElementType::F32, shape("[N,?,?{1..8}]"));
  Fact b = Fact::known(ElementType::Undefined, shape("[?,3,?{4..16}]"));
  Fact m = GET(merge(a, b));
  EXPECT_EQ(m.type, ElementType::F32);
  EXPECT_EQ(toString(m), "f32[N,3,?{4..8}]");
  EXPECT_EQ(GET(merge(Fact{}, a)), a);
  EXPECT_EQ(GET(merge(a, Fact{})), a);

  auto r = merge(a, Fact::known(ElementType::I64, PartialShape::dynamic()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot merge f32[N,?,?{1..8}] with i64[...]: element types differ");
  r = merge(a, Fact::known(ElementType::F32, shape("[1,2]")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot merge f32[N,?,?{1..8}] with f32[1,2]: shapes are not compatible");
  r = merge(Fact::known(ElementType::F32, shape("[3]")), Fact::known(ElementType::F32, shape("[4]")));
  EXPECT_FALSE(r.ok());
}

TEST_F(FactTest, MergeValues) {
  Fact a = Fact::known(ElementType::I64, PartialShape{2});
  a.value = std::vector<Dimension>{dim("N"), Dimension::dynamic()};
  Fact b = Fact::known(ElementType::I64, PartialShape{2});
  b.value = std::vector<Dimension>{Dimension::dynamic(), 5};
  EXPECT_EQ(toString(GET(merge(a, b))), "i64[2] = [N,5]");
  Fact c = b;
  c.value = std::vector<Dimension>{1, 6};
  auto r = merge(b, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("value element 1 differs"), std::string::npos);
  Fact d = Fact::known(ElementType::I64, PartialShape::dynamic());
  d.value = std::vector<Dimension>{1};
  EXPECT_FALSE(merge(a, d).ok());
}

TEST_F(FactTest, MergeConstants) {
  auto t1 = std::make_shared<const Tensor>(Tensor::fromInt64s({1, 2}));
  auto t2 = std::make_shared<const Tensor>(Tensor::fromInt64s({1, 2}));
  auto t3 = std::make_shared<const Tensor>(Tensor::fromInt64s({1, 3}));
  EXPECT_TRUE(merge(Fact::fromTensor(t1), Fact::fromTensor(t2)).ok());
  auto r = merge(Fact::fromTensor(t1), Fact::fromTensor(t3));
  ASSERT_FALSE(r.ok());
  Fact k = GET(merge(Fact::fromTensor(t1), Fact{}));
  EXPECT_EQ(k.constant, t1);
}

TEST(Attributes, Getters) {
  Attributes a{{"axis", 1},
               {"pads", {1, 1, 2, 2}},
               {"alpha", 0.5},
               {"mode", "SAME_UPPER"},
               {"scales", std::vector<double>{1.0, 2.0}},
               {"names", std::vector<std::string>{"a", "b"}},
               {"value", Tensor::fromInt64s({3})},
               {"empty", std::vector<int64_t>{}}};
  EXPECT_EQ(a.size(), 8u);
  EXPECT_EQ(GET(a.getInt("axis")), 1);
  EXPECT_EQ(GET(a.getInt("missing", 7)), 7);
  EXPECT_EQ(GET(a.getInts("pads")), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(GET(a.getInts("nope", {4})), (std::vector<int64_t>{4}));
  EXPECT_EQ(GET(a.getFloat("alpha")), 0.5);
  EXPECT_EQ(GET(a.getFloat("axis")), 1.0); // ints read as floats
  EXPECT_EQ(GET(a.getFloat("beta", 2.0)), 2.0);
  EXPECT_EQ(GET(a.getFloats("scales")), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(GET(a.getFloats("pads")), (std::vector<double>{1, 1, 2, 2}));
  EXPECT_EQ(GET(a.getString("mode")), "SAME_UPPER");
  EXPECT_EQ(GET(a.getString("auto_pad", "NOTSET")), "NOTSET");
  EXPECT_EQ(GET(a.getStrings("names")), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(GET(a.getTensor("value"))->elementCount(), 1);
  // The text form's `[]` is an empty ints list; it reads as an empty list of any kind.
  EXPECT_TRUE(GET(a.getFloats("empty")).empty());
  EXPECT_TRUE(GET(a.getStrings("empty")).empty());
  EXPECT_TRUE(GET(a.getGraphs("empty")).empty());
  EXPECT_TRUE(a.has("mode"));
  EXPECT_FALSE(a.has("Mode"));
}

TEST(Attributes, Errors) {
  Attributes a{{"axis", 1}, {"mode", "x"}, {"pads", {1}}};
  EXPECT_EQ(irtest::errorOf(a.getInt("axes")), "attribute 'axes' is missing");
  EXPECT_EQ(irtest::errorOf(a.getInt("mode")), "attribute 'mode' is a string, expected an int");
  EXPECT_EQ(irtest::errorOf(a.getInt("mode", 0)), "attribute 'mode' is a string, expected an int");
  EXPECT_EQ(irtest::errorOf(a.getString("axis")), "attribute 'axis' is an int, expected a string");
  EXPECT_EQ(irtest::errorOf(a.getInts("axis")), "attribute 'axis' is an int, expected a list of ints");
  EXPECT_EQ(irtest::errorOf(a.getTensor("pads")), "attribute 'pads' is a list of ints, expected a tensor");
  EXPECT_EQ(irtest::errorOf(a.getGraph("axis")), "attribute 'axis' is an int, expected a graph");
  EXPECT_FALSE(a.getInt("pads").ok());
  EXPECT_FALSE(a.getFloats("mode").ok());
}

TEST(Attributes, OrderAndEdits) {
  Attributes a;
  a.set("b", 1);
  a.set("a", 2);
  a.set("b", 3); // replaced in place
  std::vector<std::string> names;
  for (const auto &[n, v] : a) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(GET(a.getInt("b")), 3);
  EXPECT_TRUE(a.erase("b"));
  EXPECT_FALSE(a.erase("b"));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(Attribute(true).kind(), AttributeKind::Int);
  EXPECT_EQ(Attribute(int64_t(1) << 40).kind(), AttributeKind::Int);
  EXPECT_EQ(Attribute(0.5f).kind(), AttributeKind::Float);
  EXPECT_EQ(Attribute(std::make_shared<Graph>()).kind(), AttributeKind::Graph);
  EXPECT_STREQ(toString(AttributeKind::Graphs), "graphs");
}

} // namespace
} // namespace sf
