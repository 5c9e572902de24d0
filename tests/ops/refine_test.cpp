// Backward rules (ops/refine.h) called directly on facts: what each says of its inputs, and what
// it must leave unknown (a broadcast operand opposite a 16 may be 1 or 16). Whole graphs with the
// driver's rounds are golden files (tests/golden/backward/).
#include "shapeflow/dim/parse.h"
#include "shapeflow/ops/refine.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

/// Facts in, a rule run once, the inputs' facts out (merged with what the rule learned).
class FakeRefine final : public RefineContext {
public:
  std::vector<Fact> in, out;
  Attributes a;
  int64_t version = 17;
  size_t numInputs() const override { return in.size(); }
  bool hasInput(size_t i) const override { return i < in.size(); }
  const Fact &input(size_t i) const override { return in[i]; }
  size_t numOutputs() const override { return out.size(); }
  const Fact &output(size_t i) const override { return out[i]; }
  const Attributes &attrs() const override { return a; }
  int64_t opset() const override { return version; }
  void refine(size_t i, const Fact &learned) override {
    auto m = merge(in[i], learned);
    if (m.ok()) in[i] = *m;
  }
  std::vector<int64_t> least = std::vector<int64_t>(8, 0);
  int64_t minRank(size_t i) const override { return least[i]; }
  int64_t outputMinRank(size_t) const override { return 0; }
  void refineMinRank(size_t i, int64_t r) override { least[i] = std::max(least[i], r); }
  std::vector<int64_t> most = std::vector<int64_t>(8, -1);
  int64_t outputMaxRank(size_t) const override { return -1; }
  void refineMaxRank(size_t i, int64_t r) override { most[i] = most[i] < 0 ? r : std::min(most[i], r); }
};

SymbolTable table;

Fact fact(const char *type, const char *shape) {
  Fact f;
  f.type = std::string(type) == "f32" ? ElementType::F32
           : std::string(type) == "i64" ? ElementType::I64
                                        : ElementType::Undefined;
  auto s = parsePartialShape(shape, table);
  EXPECT_TRUE(s.ok()) << shape;
  if (s.ok()) f.shape = *s;
  return f;
}

std::string run(const RefineFn &rule, FakeRefine &ctx, size_t input = 0) {
  auto r = rule(ctx);
  EXPECT_TRUE(r.ok());
  return toString(ctx.in[input]);
}

TEST(Refine, BroadcastTakesTheOutputRankOnlyWhenTheOthersAreSmaller) {
  FakeRefine c;
  c.in = {fact("?", "[...]"), fact("f32", "[16]")};
  c.out = {fact("f32", "[2,5,16]")};
  // Rank 3 (the other operand has rank 1); dims opposite nothing are the output's, the one
  // opposite 16 may be 1 or 16.
  EXPECT_EQ(run(refineBroadcast(), c), "f32[2,5,?]");

  FakeRefine same;
  same.in = {fact("f32", "[...]"), fact("f32", "[2,5,16]")};
  same.out = {fact("f32", "[2,5,16]")};
  EXPECT_EQ(run(refineBroadcast(), same), "f32[...]"); // rank 0 to 3 all broadcast
}

TEST(Refine, ComparisonsShareTheOperandsTypeNotTheOutputs) {
  FakeRefine c;
  c.in = {fact("?", "[3]"), fact("?", "[3]")};
  c.out = {Fact::known(ElementType::Bool, PartialShape{Dimension(3)})};
  EXPECT_EQ(run(refineBroadcast(0, false), c), "?[3]");
}

TEST(Refine, ConvWeightFixesRankChannelsAndType) {
  FakeRefine c;
  c.in = {fact("?", "[...]"), fact("f32", "[16,3,3,3]")};
  c.out = {fact("f32", "[...]")};
  EXPECT_EQ(run(refineConv(false), c), "f32[?,3,?,?]");
  FakeRefine g;
  g.in = {fact("?", "[...]"), fact("f32", "[8,2,3,3]")};
  g.out = {fact("f32", "[...]")};
  g.a.set("group", int64_t(4));
  EXPECT_EQ(run(refineConv(false), g), "f32[?,8,?,?]");
}

TEST(Refine, GemmReadsTranspositions) {
  FakeRefine c;
  c.in = {fact("?", "[...]"), fact("f32", "[10,20]")};
  c.out = {fact("f32", "[7,10]")};
  c.a.set("transA", int64_t(1));
  c.a.set("transB", int64_t(1));
  EXPECT_EQ(run(refineGemm(), c), "f32[20,7]");
}

TEST(Refine, ReduceWithoutKeepdimsPutsTheAxesBack) {
  FakeRefine c;
  c.in = {fact("f32", "[...]")};
  c.out = {fact("f32", "[4,5]")};
  c.version = 13;
  c.a.set("keepdims", int64_t(0));
  c.a.set("axes", std::vector<int64_t>{1});
  EXPECT_EQ(run(refineReduce(18), c), "f32[4,?,5]");
  // Every axis reduced (no axes) without keepdims: the rank is not known.
  FakeRefine all;
  all.in = {fact("f32", "[...]")};
  all.out = {fact("f32", "[]")};
  all.a.set("keepdims", int64_t(0));
  EXPECT_EQ(run(refineReduce(18), all), "f32[...]");
}

TEST(Refine, SplitAddsTheOutputsAlongTheAxis) {
  FakeRefine c;
  c.in = {fact("?", "[...]")};
  c.out = {fact("f32", "[2,3]"), fact("f32", "[2,5]")};
  c.a.set("axis", int64_t(1));
  EXPECT_EQ(run(refineSplit(), c), "f32[2,8]");
}

TEST(Refine, GatherSplitsTheOutputBetweenDataAndIndices) {
  FakeRefine c;
  c.in = {fact("f32", "[100,16]"), fact("?", "[...]")};
  c.out = {fact("f32", "[2,7,16]")};
  EXPECT_EQ(run(refineGather(), c, 1), "?[2,7]");
}

TEST(Refine, KnownIndicesBoundTheDataAndAShapeItsInputsRank) {
  // Gather(Shape(x), 2): the shape has at least 3 entries...
  FakeRefine g;
  g.in = {fact("i64", "[?]"), Fact::fromTensor(std::make_shared<Tensor>(*Tensor::scalar(ElementType::I64, 2)))};
  g.out = {fact("i64", "[]")};
  EXPECT_EQ(run(refineGather(), g), "i64[?{3..}]");
  // ... so x has at least 3 dims ...
  FakeRefine s;
  s.in = {fact("f32", "[...]")};
  s.out = {g.in[0]};
  ASSERT_TRUE(refineShapeOf()(s).ok());
  EXPECT_EQ(s.least[0], 3);
  // ... and broadcast onto a rank-3 output (with a rank-3 operand), exactly 3.
  FakeRefine b;
  b.in = {fact("f32", "[...]"), fact("f32", "[3,1,1]")};
  b.out = {fact("f32", "[3,5,7]")};
  EXPECT_EQ(run(refineBroadcast(), b), "f32[...]");
  EXPECT_EQ(b.most[0], 3); // at most 3
  b.least[0] = 3;
  EXPECT_EQ(run(refineBroadcast(), b), "f32[?,5,7]");
}

TEST(Refine, SqueezeWithoutAxesSaysNothing) {
  FakeRefine c;
  c.in = {fact("f32", "[...]")};
  c.out = {fact("f32", "[3]")};
  c.version = 13;
  EXPECT_EQ(run(refineSqueeze(), c), "f32[...]");
}

} // namespace
} // namespace sf
